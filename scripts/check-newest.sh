#!/bin/bash
# make check's last step: when the newest revision of BASE is not the
# default one (it is work in progress: series-vN/WIP), check it too, so
# that work in progress cannot rot between hand runs: the series checks
# (checks/run-all.sh --newest: lint, node arrays, CR3 consumers,
# checkpatch, sparse/W=1, kernel-doc; coccicheck and variants only with
# make check REV=vN, for the time budget) and the boots of
# qemu-smoke/matrix/newest (the smoke build on 2node, tests and
# protection), then the TLB check on that build (checks/tlb.sh). Nothing
# to do when the default revision is the newest.
asked_topo=${TOPO:-} asked_config=${CONFIG:-}
. "$(dirname "$0")/lib.sh"

new=$(newest_rev_any)
if [ "$new" = "$REV" ]; then
	say "$BASE $REV is the newest revision: checked already"
	exit 0
fi
say "$BASE $new: the newest revision (work in progress), after the default $REV"
rc=0
if [ "${DRY_RUN:-0}" != 1 ]; then
	REV=$new "$REPO/checks/run-all.sh" --newest || rc=1
fi
ignores_filter TOPO "$asked_topo" "the newest revision boots the rows of qemu-smoke/matrix/newest"
ignores_filter CONFIG "$asked_config" "the newest revision boots the rows of qemu-smoke/matrix/newest"
REV=$new TOPO='' CONFIG='' "$REPO/scripts/run-matrix.sh" newest || rc=1
# The TLB model on the smoke build the matrix just booted.
[ "${DRY_RUN:-0}" = 1 ] || REV=$new CONFIG=smoke "$REPO/checks/tlb.sh" || rc=1
exit $rc
