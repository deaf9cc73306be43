#!/bin/bash
# The main job for one revision: build each kernel configuration of the
# revision and boot it on the topology matrix. The base kernel has no
# replication option, so it is built once; a revision is built with the
# option on (smoke), off (smoke-off), and on without page table isolation
# (smoke-nopti). CONFIGS overrides the list: 'make check' leaves out
# smoke-nopti, whose touched files checks/variants.sh compiles instead.
# smoke-nopti boots on NOPTI_TOPOS only (the topologies whose page tables
# differ most: two nodes, five levels, a memoryless node), plus the
# protection boots.
. "$(dirname "$0")/lib.sh"

if [ "$REV" = base ]; then
	CONFIGS=smoke
elif [ -z "${CONFIGS:-}" ]; then
	CONFIGS="smoke smoke-off smoke-nopti"
fi
rc=0
failed=()
for c in $CONFIGS; do
	topos=${TOPOS:-}
	[ "$c" = smoke-nopti ] && topos=${NOPTI_TOPOS:-2node la57 memoryless}
	if CONFIG=$c "$REPO/scripts/build.sh" && CONFIG=$c "$REPO/scripts/initramfs.sh" &&
		CONFIG=$c TOPOS=$topos "$REPO/scripts/smoke.sh"; then
		:
	else
		rc=1
		failed+=("$c")
	fi
done
if [ "$rc" = 0 ]; then
	say "$BASE $REV: all of [$CONFIGS] built and booted on the matrix"
else
	say "$BASE $REV: FAILED: ${failed[*]} (see the rows above)"
fi
exit $rc
