#!/bin/bash
# The debug configuration (KASAN, DEBUG_VM, lockdep, DEBUG_PAGEALLOC,
# kmemleak on top of the smoke configuration) of BASE/REV, built and booted
# with the guest tests on DEBUG_TOPOS. Slower than the smoke matrix: KASAN
# under TCG. The boots with replication allocations failing are
# fault-boots.sh ('make debug' and 'make stress' run it after this).
export CONFIG=debug
. "$(dirname "$0")/lib.sh"

"$REPO/scripts/build.sh"
"$REPO/scripts/initramfs.sh"
# No protection boots here: the smoke matrix has them.
TOPOS=${DEBUG_TOPOS:-2node 4node memoryless la57} PROTECT_TOPOS='' \
	TIMEOUT=${TIMEOUT:-400} exec "$REPO/scripts/smoke.sh"
