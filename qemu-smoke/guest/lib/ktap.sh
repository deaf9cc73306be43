# shellcheck shell=sh
# KTAP helpers for the guest test scripts (busybox sh). /init sources this
# file, then runs each /tests/*.sh as one KTAP subtest. Results are printed
# on the console and on the results port (KTAP_OUT, the second serial port),
# which the host parses.

KTAP_OUT=${KTAP_OUT:-/dev/ttyS1}
KTAP_DIR=${KTAP_DIR:-/tmp/ktap}

_ktap_emit() {
	printf '%s\n' "$*" >/dev/console
	printf '%s\n' "$*" >>"$KTAP_OUT"
}

# Each result line is also appended to $KTAP_DIR/results, which /init reads
# to compute the subtest's own result.
_ktap_result() {
	_ktap_n=$(($(wc -l <"$KTAP_DIR/results") + 1))
	echo "$1" >>"$KTAP_DIR/results"
	_ktap_emit "    $2 $_ktap_n $3"
}

ktap_ok() { _ktap_result ok ok "$1"; }
ktap_fail() {
	[ -z "${2:-}" ] || ktap_diag "$1: $2"
	_ktap_result fail "not ok" "$1"
}
ktap_skip() { _ktap_result skip ok "$1 # SKIP ${2:-}"; }
ktap_diag() { _ktap_emit "    # $*"; }

# ktap_check NAME CMD...: ok when CMD succeeds.
ktap_check() {
	_ktap_name=$1
	shift
	if "$@"; then ktap_ok "$_ktap_name"; else ktap_fail "$_ktap_name" "failed: $*"; fi
}

# dmesg_has TEXT: the kernel log holds TEXT.
dmesg_has() { dmesg | grep -qF "$1"; }
