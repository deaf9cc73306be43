# shellcheck shell=sh
# 'make bench' guest: the RFC's microbenchmarks on every node (kbench), the
# time to switch the function tracer on and off for all functions, and the
# memory the series' debugfs status reports (ktv_bench=ftrace: no kbench). Numbers go out as KTAP
# diagnostics ("# kbench: ...", "# ftrace: ...", "# status: ..."), which
# scripts/bench.sh collects; the results only say whether each step ran.

TRACE=/sys/kernel/tracing
STATUS=/sys/kernel/debug/kernel_replication/status

# Hundredths of a second since boot.
uptime_cs() { awk '{ split($1, t, "."); print t[1] * 100 + t[2] }' /proc/uptime; }

if [ "${ktv_bench:-all}" = ftrace ]; then
	ktap_skip kbench "ktv_bench=ftrace"
elif kbench -r "${ktv_reps:-11}" -n "${ktv_loop:-1024}" >/tmp/kbench.out 2>&1; then
	while IFS= read -r l; do ktap_diag "kbench: $l"; done </tmp/kbench.out
	ktap_ok kbench
else
	while IFS= read -r l; do ktap_diag "$l"; done </tmp/kbench.out
	ktap_fail kbench "kbench failed"
fi

mount -t tracefs tracefs "$TRACE" 2>/dev/null
if grep -qw function "$TRACE/available_tracers" 2>/dev/null; then
	_t0=$(uptime_cs)
	echo function >"$TRACE/current_tracer"
	_t1=$(uptime_cs)
	_on=$(cat "$TRACE/current_tracer") _n=$(wc -l <"$TRACE/enabled_functions")
	echo nop >"$TRACE/current_tracer"
	_t2=$(uptime_cs)
	ktap_diag "ftrace: functions=$_n on_ms=$(((_t1 - _t0) * 10)) off_ms=$(((_t2 - _t1) * 10))"
	# A timing is only one of a tracer that was on, and then off.
	_off=$(wc -l <"$TRACE/enabled_functions")
	ktap_check ftrace_timing test "$_on" = function -a "$_n" -gt 0 -a "$_off" = 0
else
	ktap_skip ftrace_timing "no function tracer"
fi

if [ -r "$STATUS" ]; then
	while IFS= read -r l; do ktap_diag "status: $l"; done <"$STATUS"
	ktap_ok replication_status
else
	ktap_skip replication_status "no $STATUS"
fi
