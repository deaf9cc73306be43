#!/bin/bash
# Boot the built kernel for BASE/REV/CONFIG on every topology of the matrix
# (or on TOPO only, or on the list TOPOS), print one row per topology, exit
# non-zero on any failure. Without TOPO, also the protection suite on
# PROTECT_TOPOS (faults provoked on purpose on every node) and, for the
# smoke configuration of a revision, one 2node boot with
# kernel_replication=off (the option built in, off at boot: the guest
# asserts the one-copy baseline) and one with rodata=off (nothing stays
# reserved). For the distro configuration (replication off by default,
# kernel_replication=on in APPEND), one 2node boot without the parameter.
# APPEND adds kernel parameters; TIMEOUT is the hard limit per boot (s).
# boot.py fails a row on a skip that qemu-smoke/expected-skips does not list.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/expect.sh"
need qemu-system-x86_64 python3

kernel=$BUILD/arch/x86/boot/bzImage
initrd=$BUILD/initramfs.cpio.gz
[ -f "$kernel" ] || die "no $kernel: run 'make build REV=$REV BASE=$BASE CONFIG=$CONFIG'"
[ -f "$initrd" ] || die "no $initrd: run 'make initramfs'"

topodir=$REPO/qemu-smoke/topologies
topos=()
for name in ${TOPO:-${TOPOS:-}}; do
	[ -f "$topodir/$name.topo" ] ||
		die "unknown topology '$name': known are $(find "$topodir" -name '*.topo' -printf '%f\n' | sed 's,\.topo$,,' | sort | tr '\n' ' ')"
	topos+=("$topodir/$name.topo")
done
[ ${#topos[@]} -gt 0 ] || topos=("$topodir"/*.topo)

# Whether the guests assert replication follows from REV and CONFIG; the
# build's .config must agree.
check_build_config "$BUILD/.config"
expect=()
if expects_replication; then
	expect=(--expect-repl)
fi
label=$BASE-$REV-$CONFIG
results=$WORK/results/$label
boot() { # NAME boot.py-options...
	local name=$1
	shift
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$kernel" --initrd "$initrd" \
		--out "$results/$name" --timeout "${TIMEOUT:-150}" "$@"
}
# The guests run BOOT_JOBS at a time (default: one per host core; each
# single-threaded TCG guest keeps one core busy); their rows are printed
# in the matrix's order once all have finished.
rows=$(mktemp -d)
trap 'rm -rf "$rows"' EXIT
n=0
header=(--header)
start_boot() { # NAME boot.py-options...
	while [ "$(jobs -pr | wc -l)" -ge "${BOOT_JOBS:-$(nproc)}" ]; do wait -n || true; done
	n=$((n + 1))
	{
		rc=0
		boot "$1" "${header[@]}" "${@:2}" >"$rows/$n.row" 2>&1 || rc=$?
		echo "$rc" >"$rows/$n.rc"
	} &
	header=()
}
for t in "${topos[@]}"; do
	name=${t##*/}
	name=${name%.topo}
	start_boot "$name" "${expect[@]}" --label "$label" --topo "$t" --append "${APPEND:-}"
done
if [ -z "${TOPO:-}" ]; then
	# Protection on every node: provoked faults (LKDTM, direct-map alias
	# stores), on the multi-node topologies of PROTECT_TOPOS.
	for name in ${PROTECT_TOPOS-2node memoryless}; do
		start_boot "$name-protect" "${expect[@]}" --label "$label" --expect-faults \
			--topo "$topodir/$name.topo" --append "ktv_suite=protect ${APPEND:-}"
	done
	# The option-on kernel switched off at boot: one copy, as the base
	# kernel has (so no --expect-repl).
	# And with rodata=off, which never reaches mark_rodata_ro(): nothing
	# may stay reserved (pti=off: with PTI, the base kernel's W+X check of
	# the user tables warns about rodata=off itself). And with pti=off,
	# where the freed init memory stays in the high map: the aliases there
	# must follow permission changes on every node (20-verifier).
	if [ "$CONFIG" = smoke ] && expects_replication; then
		start_boot 2node-replication-off --label "$BASE-$REV-replication-off" \
			--topo "$topodir/2node.topo" --append "kernel_replication=off ${APPEND:-}"
		start_boot 2node-rodata-off --label "$BASE-$REV-rodata-off" \
			--topo "$topodir/2node.topo" --append "rodata=off pti=off ${APPEND:-}"
		start_boot 2node-pti-off "${expect[@]}" --label "$label-pti-off" \
			--topo "$topodir/2node.topo" --append "pti=off ${APPEND:-}"
	fi
	if [ "$CONFIG" = distro ]; then
		start_boot 2node-default-off --label "$BASE-$REV-default-off" \
			--topo "$topodir/2node.topo" --append "${APPEND/kernel_replication=on/}"
	fi
fi
wait
rc=0
for i in $(seq 1 "$n"); do
	cat "$rows/$i.row"
	[ "$(cat "$rows/$i.rc" 2>/dev/null)" = 0 ] || rc=1
done
exit $rc
