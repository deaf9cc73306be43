#!/bin/bash
# Boot the built kernel for BASE/REV/CONFIG on every topology of the matrix
# (or on TOPO only, or on the list TOPOS), print one row per topology, exit
# non-zero on any failure. Without TOPO, also the protection suite on
# PROTECT_TOPOS (faults provoked on purpose on every node).
# APPEND adds kernel parameters; TIMEOUT is the hard limit per boot (s).
. "$(dirname "$0")/lib.sh"
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

expect=()
if grep -q '^CONFIG_KERNEL_REPLICATION=y' "$BUILD/.config"; then
	expect=(--expect-repl)
fi
results=$WORK/results/$BASE-$REV-$CONFIG
header=(--header)
rc=0
for t in "${topos[@]}"; do
	name=${t##*/}
	name=${name%.topo}
	python3 "$REPO/qemu-smoke/boot.py" "${header[@]}" "${expect[@]}" \
		--kernel "$kernel" --initrd "$initrd" --topo "$t" \
		--out "$results/$name" --timeout "${TIMEOUT:-150}" \
		--append "${APPEND:-}" --label "$BASE-$REV-$CONFIG" || rc=1
	header=()
done
# Protection on every node: provoked faults (LKDTM, direct-map alias
# stores), on the multi-node topologies of PROTECT_TOPOS.
if [ -z "${TOPO:-}" ]; then
	for name in ${PROTECT_TOPOS-2node memoryless}; do
		python3 "$REPO/qemu-smoke/boot.py" "${expect[@]}" --expect-faults \
			--kernel "$kernel" --initrd "$initrd" --topo "$topodir/$name.topo" \
			--out "$results/$name-protect" --timeout "${TIMEOUT:-150}" \
			--append "ktv_suite=protect ${APPEND:-}" --label "$BASE-$REV-$CONFIG" || rc=1
	done
fi
exit $rc
