#!/bin/bash
# 'make stress': the guest's stress suite (ktv_suite=stress) on
# STRESS_TOPOS with CONFIG (default debug: KASAN, lockdep, kmemleak), each
# boot followed in the guest by the verifier's byte-compare and a kmemleak
# scan. Counts: STRESS_MODS (module load/unload cycles, 1000), STRESS_FTRACE
# (function tracer on/off, 100), STRESS_KPROBES (1000), STRESS_FLIPS (static
# key flips, 10000), STRESS_BPF (BPF JIT load/unload, 1000), STRESS_HOTPLUG
# (offline/online cycles of every CPU but 0, 20).
export CONFIG=${CONFIG_STRESS:-debug}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/expect.sh"
need python3 qemu-system-x86_64

"$REPO/scripts/build.sh"
"$REPO/scripts/initramfs.sh"
# A full run takes over an hour: boot a snapshot, so that rebuilding the
# same build directory meanwhile changes neither the run nor its record.
snap=$WORK/results/stress-$BASE-$REV-$CONFIG/kernel
mkdir -p "$snap"
cp "$BUILD/arch/x86/boot/bzImage" "$BUILD/initramfs.cpio.gz" "$BUILD/.config" "$snap/"
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
for t in ${STRESS_TOPOS:-2node 4node}; do
	out=$WORK/results/stress-$BASE-$REV-$CONFIG/$t
	python3 "$REPO/qemu-smoke/boot.py" "${header[@]}" "${expect[@]}" \
		--kernel "$snap/bzImage" --initrd "$snap/initramfs.cpio.gz" \
		--topo "$REPO/qemu-smoke/topologies/$t.topo" --out "$out" \
		--timeout "${TIMEOUT:-3600}" --append "$append ${APPEND:-}" \
		--label "$BASE-$REV-$CONFIG" || rc=1
	header=()
	grep -E '# [a-z_]+: [0-9]+ in|kmemleak:|after stress' "$out/ktap.log" | sed 's/^ *# /    /' || true
done
exit $rc
