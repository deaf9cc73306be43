#!/bin/bash
# Boot-time fault injection: the debug configuration of BASE/REV booted
# with the series' fault attribute failing replication allocations, every
# one of them, then only one node's copy. The guest tests assert the
# fallback (one copy, or the nearest node's copy) and that nothing leaked.
# Module-time failures are in the guest tests (tests/35-faults.sh).
# The rows are labelled BASE-REV-CONFIG-fault-NAME: qemu-smoke/expected-skips
# allows these boots fewer skips (16-degraded must run).
export CONFIG=${CONFIG_FAULTS:-debug}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/expect.sh"
need python3 qemu-system-x86_64

if [ "$REV" = base ]; then
	say "the base kernel has no replication: no fault-injection boots"
	exit 0
fi
"$REPO/scripts/build.sh"
"$REPO/scripts/initramfs.sh"
check_build_config "$BUILD/.config"
grep -qx 'CONFIG_FAIL_KERNEL_REPLICATION=y' "$BUILD/.config" ||
	die "$BASE $REV $CONFIG has no CONFIG_FAIL_KERNEL_REPLICATION=y: the fault-injection boots cannot run"
rc=0
# fault_boot NAME TOPOLOGY PARAMS [boot.py options]
fault_boot() {
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$BUILD/arch/x86/boot/bzImage" \
		--initrd "$BUILD/initramfs.cpio.gz" --topo "$REPO/qemu-smoke/topologies/$2.topo" \
		--out "$WORK/results/$BASE-$REV-$CONFIG/$2-$1" --timeout "${TIMEOUT:-400}" \
		--append "$3 ${APPEND:-}" --label "$BASE-$REV-$CONFIG-fault-$1" "${@:4}"
}
# Every allocation failing: the kernel must come up with one copy, as a
# base kernel does, and say so. Booted without --expect-repl: the one-copy
# assertions apply.
fault_boot nocopy 2node "fail_kernel_replication=1,100,0,-1" || rc=1
# Only the first failing: the first copy reserved, that of the first node
# after the image's, is not made. nokaslr keeps the image on node 0, so
# that is node 1, which must use node 2's copy (SLIT 15), not the
# original; nodes 0, 2 and 3 stay local (tests/16-degraded.sh).
fault_boot partial 4node-near "nokaslr fail_kernel_replication=1,100,0,1 ktv_nocopy=1" \
	--expect-repl || rc=1
exit $rc
