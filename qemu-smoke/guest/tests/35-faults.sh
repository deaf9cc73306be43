# shellcheck shell=sh
# Allocation failure while a module is replicated: with the series' fault
# attribute (/sys/kernel/debug/fail_kernel_replication) failing the next
# replication allocation, a module still loads and works, the kernel says
# it is not replicated on every node, and the verifier sees every page
# mapped and byte-identical (one node runs part of it from the original).
# Reloaded without the fault, the module is local everywhere again.
# Then a new mm whose per-node PGD cannot be allocated: the process runs
# on every CPU from mm->pgd. The failures are aimed at one process with the
# attribute's task filter, through failnext: the shell's own forks and
# execs would take them first.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

FAIL=$KTV_DBG/fail_kernel_replication

ktv_faults() {
	if [ "${ktv_expect:-0}" != 1 ] || [ "${ktv_nodes:-1}" -lt 2 ]; then
		ktap_skip module_copy_fault "no replication on this kernel or topology"
		return
	fi
	if [ "${ktv_modules:-1}" = 0 ]; then
		ktap_skip module_copy_fault "modules are not replicated on this kernel"
		return
	fi
	# Every option-on configuration has the fault attribute.
	if [ ! -d "$FAIL" ]; then
		ktap_fail module_copy_fault "no $FAIL (CONFIG_FAIL_KERNEL_REPLICATION)"
		return
	fi
	if ! ktv_load; then
		ktap_fail verifier_loaded "insmod failed"
		return
	fi
	rmmod ktv_target
	echo 0 >"$FAIL/space"
	echo Y >"$FAIL/task-filter"
	echo 1 >"$FAIL/interval"
	echo 100 >"$FAIL/probability"
	echo 1 >"$FAIL/verbose"
	echo 1 >"$FAIL/times"
	_msgs0=$(dmesg | grep -c 'not replicated on every node')
	# Either the copy fails (the module loads, partly unreplicated) or the
	# mapping of the module's memory does (insmod fails with ENOMEM).
	if failnext insmod "$KTV_MODS/ktv_target.ko"; then
		ktap_check fault_was_injected [ "$(cat "$FAIL/times")" = 0 ]
		if echo 3 >"$KTV_DBG/ktv_target/flip"; then
			ktap_check module_works_unreplicated ktv_check_on_every_node "key=1 call=b table_sum=1314225"
		else
			ktap_fail module_works_unreplicated "writing flip failed"
		fi
		ktap_check degraded_message [ "$(dmesg | grep -c 'not replicated on every node')" -gt "$_msgs0" ]
		if ktv_read_report; then
			ktap_check module_mapped_identical ktv_rows_ok "$KTV_REPORT" \
				'f["mismatch"] == 0 && f["unmapped"] == 0'
			# shellcheck disable=SC2016 # awk's own fields
			ktap_check module_partly_remote ktv_diag_run awk '
				/^cpu=.* region=mod:ktv_target:/ { for (i = 1; i <= NF; i++) if ($i ~ /^remote=[1-9]/) n++ }
				END { exit !n }' "$KTV_REPORT"
			# The failure hit a text page: rodata is copied all the
			# same (complete_formation() once skipped it).
			ktap_check module_rodata_still_copied ktv_rows_ok "$KTV_REPORT" \
				'f["region"] != "mod:ktv_target:rodata" || f["remote"] == 0'
		else
			ktap_fail module_mapped_identical "$(cat /tmp/ktv.err)"
		fi
	else
		ktap_diag "insmod failed with the fault injected (the ENOMEM path)"
		ktap_check fault_was_injected [ "$(cat "$FAIL/times")" = 0 ]
		ktap_check module_loads_after_fault insmod "$KTV_MODS/ktv_target.ko"
	fi
	echo 0 >"$FAIL/probability"
	if rmmod ktv_target && insmod "$KTV_MODS/ktv_target.ko"; then
		ktv_recheck reload_without_fault
	else
		ktap_fail identical_after_reload_without_fault "reload failed"
	fi
	rmmod ktext_verify
	rmmod ktv_target

	echo 1 >"$FAIL/times"
	echo 100 >"$FAIL/probability"
	ktap_check mm_pgd_fault_process_runs failnext fork
	ktap_check mm_pgd_fault_was_injected [ "$(cat "$FAIL/times")" = 0 ]
	echo 0 >"$FAIL/probability"
	echo N >"$FAIL/task-filter"
}

ktv_faults
