# shellcheck shell=sh
# The series' KUnit suite (CONFIG_KERNEL_REPLICATION_KUNIT_TEST), run once
# the system is up, through KUnit's debugfs: at boot it ran before
# replication started and skipped. Each case becomes one test here, with
# the suite's verdict: ok, not ok, or skip with its reason.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KUNIT_DIR=/sys/kernel/debug/kunit/kernel_replication

if [ ! -d "$KUNIT_DIR" ]; then
	ktap_skip kunit_suite "no $KUNIT_DIR: the suite is not built in"
elif ! echo 1 >"$KUNIT_DIR/run" 2>/tmp/kunit.err; then
	ktap_fail kunit_run "writing $KUNIT_DIR/run failed: $(cat /tmp/kunit.err)"
else
	cat "$KUNIT_DIR/results" >/tmp/kunit.results
	while IFS= read -r l; do ktap_diag "kunit: $l"; done </tmp/kunit.results
	# The cases, one indentation level below the suite:
	# "    ok 1 name", "    not ok 2 name", "    ok 3 name # SKIP why".
	awk '/^    (not ok|ok) [0-9]+ / {
		not = $1 == "not"
		i = index($0, "# SKIP")
		print (not ? "not ok" : "ok") "|" (not ? $4 : $3) "|" (i ? "SKIP" substr($0, i + 6) : "")
	}' /tmp/kunit.results >/tmp/kunit.cases
	if [ ! -s /tmp/kunit.cases ]; then
		ktap_fail kunit_cases "no case in $KUNIT_DIR/results"
	fi
	while IFS='|' read -r verdict name rest; do
		case "$verdict|$rest" in
		"ok|SKIP"*) ktap_skip "kunit_$name" "${rest#SKIP }" ;;
		"ok|"*) ktap_ok "kunit_$name" ;;
		*) ktap_fail "kunit_$name" "the suite says not ok" ;;
		esac
	done </tmp/kunit.cases
fi
