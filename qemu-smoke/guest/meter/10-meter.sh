# shellcheck shell=sh
# The locality meter's guest (ktv_suite=meter, scripts/meter-check.sh):
# phase 1 of the meter begins here, once the kernel has booted (the steady
# state); kbench -m 2 then gives each (node, case) a phase of its own, the
# cases of ktv_cases (default openclose), and prints which phase is which
# ("meter-phase P CASE ops=N node=N cpu=N"), which go out as KTAP
# diagnostics for meter-check.sh. The meter counts; this only marks.

ktap_check meter_phase_marked meterphase 1
if kbench -r "${ktv_reps:-3}" -n "${ktv_loop:-256}" -c "${ktv_cases:-openclose}" -m 2 \
	>/tmp/kbench.out 2>&1; then
	while IFS= read -r l; do ktap_diag "kbench: $l"; done </tmp/kbench.out
	ktap_ok kbench_phases
else
	while IFS= read -r l; do ktap_diag "$l"; done </tmp/kbench.out
	ktap_fail kbench_phases "kbench failed"
fi
