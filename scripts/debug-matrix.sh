#!/bin/bash
# The debug configuration (KASAN, DEBUG_VM, lockdep, DEBUG_PAGEALLOC,
# kmemleak on top of the smoke configuration) of BASE/REV, built and booted
# with the guest tests on DEBUG_TOPOS. Slower than the smoke matrix: KASAN
# under TCG. With the series' fault attribute, one more boot in which
# every replication allocation fails.
export CONFIG=debug
. "$(dirname "$0")/lib.sh"

"$REPO/scripts/build.sh"
"$REPO/scripts/initramfs.sh"
rc=0
for t in ${DEBUG_TOPOS:-2node 4node memoryless la57}; do
	TOPO=$t TIMEOUT=${TIMEOUT:-400} "$REPO/scripts/smoke.sh" || rc=1
done
# Every replication allocation failing at boot (the series' fault
# attribute): the kernel must come up with one copy, as a base kernel does,
# and say so. Booted without --expect-repl: the one-copy assertions apply.
if grep -q '^CONFIG_FAIL_KERNEL_REPLICATION=y' "$BUILD/.config"; then
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$BUILD/arch/x86/boot/bzImage" \
		--initrd "$BUILD/initramfs.cpio.gz" --topo "$REPO/qemu-smoke/topologies/2node.topo" \
		--out "$WORK/results/$BASE-$REV-$CONFIG/2node-nocopy" --timeout "${TIMEOUT:-400}" \
		--append "fail_kernel_replication=1,100,0,-1 ${APPEND:-}" \
		--label "$BASE-$REV-nocopy" || rc=1
fi
exit $rc
