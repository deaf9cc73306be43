#!/bin/bash
# The debug configuration (KASAN, DEBUG_VM, lockdep, DEBUG_PAGEALLOC,
# kmemleak on top of the smoke configuration) of BASE/REV, built and booted
# with the guest tests on DEBUG_TOPOS. Slower than the smoke matrix: KASAN
# under TCG. With the series' fault attribute, two more boots: every
# replication allocation failing, and only one node's copy failing.
export CONFIG=debug
. "$(dirname "$0")/lib.sh"

"$REPO/scripts/build.sh"
"$REPO/scripts/initramfs.sh"
rc=0
for t in ${DEBUG_TOPOS:-2node 4node memoryless la57}; do
	TOPO=$t TIMEOUT=${TIMEOUT:-400} "$REPO/scripts/smoke.sh" || rc=1
done
# Boots with the series' fault attribute failing replication allocations.
# fault_boot NAME TOPOLOGY PARAMS [boot.py options]
fault_boot() {
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$BUILD/arch/x86/boot/bzImage" \
		--initrd "$BUILD/initramfs.cpio.gz" --topo "$REPO/qemu-smoke/topologies/$2.topo" \
		--out "$WORK/results/$BASE-$REV-$CONFIG/$2-$1" --timeout "${TIMEOUT:-400}" \
		--append "$3 ${APPEND:-}" --label "$BASE-$REV-$1" "${@:4}"
}
if grep -q '^CONFIG_FAIL_KERNEL_REPLICATION=y' "$BUILD/.config"; then
	# Every allocation failing: the kernel must come up with one copy, as
	# a base kernel does, and say so. Booted without --expect-repl: the
	# one-copy assertions apply.
	fault_boot nocopy 2node "fail_kernel_replication=1,100,0,-1" || rc=1
	# Only the first failing: the first copy reserved, that of the first
	# node after the image's, is not made. nokaslr keeps the image on node
	# 0, so that is node 1, which must use node 2's copy (SLIT 15), not the
	# original; nodes 0, 2 and 3 stay local (tests/16-degraded.sh).
	fault_boot partial 4node-near "nokaslr fail_kernel_replication=1,100,0,1 ktv_nocopy=1" \
		--expect-repl || rc=1
fi
exit $rc
