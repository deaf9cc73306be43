#!/bin/bash
# step.sh NAME CMD [ARG...]: run one step of make check, then say how long
# it took and how long the check has run, so that the tail of a run that
# fails or is stopped by CI's time limit shows where the time went.
# step.sh --summary: every step of this check, one line each.
# CHECK_START (seconds since the epoch) is set by the Makefile's check target.
set -uo pipefail
start=${CHECK_START:-$(date +%s)}
log=${TMPDIR:-/tmp}/ktext-check-steps.$start
if [ "${1:-}" = --summary ]; then
	echo "make check: the steps (wall clock; the machine's 'nproc': $(nproc))"
	cat "$log" 2>/dev/null
	exit 0
fi
[ $# -ge 2 ] || { echo "usage: step.sh NAME CMD [ARG...] | --summary" >&2; exit 2; }
name=$1
shift
t0=$(date +%s)
rc=0
"$@" || rc=$?
t1=$(date +%s)
line=$(printf 'step %-12s %5d s  rc %d  (make check at %d s)' \
	"$name" $((t1 - t0)) "$rc" $((t1 - start)))
echo "$line" | tee -a "$log"
exit "$rc"
