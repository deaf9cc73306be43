#!/bin/bash
# 'make stress': the guest's stress suite (ktv_suite=stress) on
# TOPO (else STRESS_TOPOS, 2node 4node) with CONFIG_STRESS (default debug:
# KASAN, lockdep, kmemleak; CONFIG is not honoured here), each
# boot followed in the guest by the verifier's byte-compare and a kmemleak
# scan. Counts: STRESS_MODS (module load/unload cycles, 1000), STRESS_FTRACE
# (function tracer on/off, 100), STRESS_KPROBES (1000), STRESS_FLIPS (static
# key flips, 10000), STRESS_BPF (BPF JIT load/unload, 1000), STRESS_HOTPLUG
# (offline/online cycles of every CPU but 0, 20). On STRESS_FUZZ_TOPOS
# (4node), first STRESS_FUZZ seconds (1800) of stress-ng and trinity on
# every node at once, with a migrator (guest/stress/05-fuzz.sh): Debian's
# packages, installed here and put in the guest's initramfs, never run on
# the host.
asked=${CONFIG:-}
export CONFIG=${CONFIG_STRESS:-debug}
. "$(dirname "$0")/lib.sh"
# The configuration is CONFIG_STRESS: say so if CONFIG was set.
[ "${asked:-$CONFIG}" = "$CONFIG" ] ||
	ignores_filter CONFIG "$asked" "the stress boots use CONFIG_STRESS ($CONFIG)"
. "$(dirname "$0")/expect.sh"
. "$(dirname "$0")/boot-lib.sh"
need python3 qemu-system-x86_64
no_dry_run
set -f
topos=${TOPO:-${STRESS_TOPOS:-2node 4node}}
for t in $topos; do
	[ -f "$REPO/qemu-smoke/topologies/$t.topo" ] || die "unknown topology '$t' in TOPO or STRESS_TOPOS"
done

DEPS_FUZZ=1 "$REPO/scripts/deps.sh"
"$REPO/scripts/build.sh"
FUZZ_TOOLS=1 "$REPO/scripts/initramfs.sh"
# A full run takes over an hour: boot a snapshot, so that rebuilding the
# same build directory meanwhile changes neither the run nor its record.
snap=$WORK/results/stress-$BASE-$REV-$CONFIG/kernel
mkdir -p "$snap"
cp "$BUILD/arch/x86/boot/bzImage" "$BUILD/initramfs.cpio.gz" "$BUILD/.config" "$BUILD/provenance" "$snap/"
append="ktv_suite=stress ktv_mods=${STRESS_MODS:-1000} ktv_ftrace=${STRESS_FTRACE:-100}"
append="$append ktv_kprobes=${STRESS_KPROBES:-1000} ktv_flips=${STRESS_FLIPS:-10000}"
append="$append ktv_bpf=${STRESS_BPF:-1000} ktv_hotplug=${STRESS_HOTPLUG:-20}"
check_build_config "$snap/.config"
expect=()
if expects_replication; then
	expect=(--expect-repl)
fi
rc=0
header=(--header)
fuzz=${STRESS_FUZZ:-1800}
for t in $topos; do
	out=$WORK/results/stress-$BASE-$REV-$CONFIG/$t
	secs=0 label=$BASE-$REV-$CONFIG
	case " ${STRESS_FUZZ_TOPOS:-4node} " in *" $t "*) secs=$fuzz ;; esac
	# A row that fuzzes says so in its label: there 05-fuzz may not skip
	# (qemu-smoke/expected-skips).
	[ "$secs" = 0 ] || label=$label-fuzz
	BUILD=$snap TIMEOUT=$((${TIMEOUT:-3600} + secs)) boot_guest "$t" "$t" "$label" \
		"$append ktv_fuzz_secs=$secs" "${header[@]}" "${expect[@]}" \
		--kernel "$snap/bzImage" --initrd "$snap/initramfs.cpio.gz" --out "$out" || rc=1
	header=()
	grep -E '# [a-z_]+: [0-9]+ in|kmemleak:|after stress|fuzzing|while fuzzing|pgdrace:' "$out/ktap.log" | sed 's/^ *# /    /' || true
done
exit $rc
