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

	# A fork whose node PGD allocation fails still runs. Where a worker
	# builds node PGDs (ktv_pgd_worker=1), a fork allocates nothing of
	# replication's in the task: the KUnit case backoff_per_mm covers
	# a failed build there.
	if [ "${ktv_pgd_worker:-0}" != 1 ]; then
		echo 1 >"$FAIL/times"
		echo 100 >"$FAIL/probability"
		ktap_check mm_pgd_fault_process_runs failnext fork
		ktap_check mm_pgd_fault_was_injected [ "$(cat "$FAIL/times")" = 0 ]
		echo 0 >"$FAIL/probability"
	fi
	echo N >"$FAIL/task-filter"
}

ktv_faults

# A text writer that runs on a node from another node's window: its mm has
# no PGD for that node (every replication allocation fails), so the CPU
# runs mm->pgd, whose window maps the other node's copy. Each poke loads
# poking_mm, which has a PGD for every node, and then the writer's mm
# again. Those loads must not flush the TLB: one switch of the function
# tracer pokes every call site three times, and a flush per poke is a
# global flush per poke (review of series-v4, B1). Counted by the series'
# status (window_flushes) around an enable and a disable of the function
# tracer by a shell that runs foreign: at most one flush per 100 call
# sites passes. Only where the host says ktv_lazy=1 (the revision binds
# each mm to a node lazily and counts window flushes: its feature
# lazy_pgds), with replication on 2 or more nodes. Run after the code-copy
# tests: code memory allocated meanwhile (an ftrace trampoline) gets no copy.
TRACE=/sys/kernel/tracing

# The writer, run as "sh FILE CPU" on a CPU of one node: it moves itself to
# CPU (another node's), waits there, then switches the tracer.
cat >/tmp/fw.sh <<'END'
. /lib/ktv.sh
taskset -p -c "$1" $$ >/dev/null
sleep 1
f0=$(ktv_krepl_stat window_flushes) l0=$(ktv_krepl_stat foreign_loads)
x0=$(ktv_krepl_stat mm_pgd_failures)
echo function >/sys/kernel/tracing/current_tracer
echo nop >/sys/kernel/tracing/current_tracer
f1=$(ktv_krepl_stat window_flushes) l1=$(ktv_krepl_stat foreign_loads)
x1=$(ktv_krepl_stat mm_pgd_failures)
echo "$((f1 - f0)) $((l1 - l0)) $((x1 - x0))"
END

foreign_writer() {
	ktv_node_cpus >/tmp/fw.nodecpus
	read -r _na _ca </tmp/fw.nodecpus
	_ra=$(ktv_nearest_copy "$_na")
	_cb=
	while read -r _n _c; do
		if [ "$(ktv_nearest_copy "$_n")" != "$_ra" ]; then
			_cb=$_c
			break
		fi
	done </tmp/fw.nodecpus
	if [ -z "$_cb" ]; then
		ktap_skip foreign_writer_flushes_few "the nodes with CPUs use one copy: no window is foreign"
		return
	fi
	[ -e "$TRACE/current_tracer" ] || mount -t tracefs tracefs "$TRACE" 2>/dev/null
	if [ ! -d "$FAIL" ] || [ ! -w "$TRACE/current_tracer" ]; then
		ktap_fail foreign_writer_flushes_few "no $FAIL or no $TRACE/current_tracer"
		return
	fi
	_sites=$(wc -l <"$TRACE/available_filter_functions")
	# Every replication allocation fails, the workers' builds included.
	echo N >"$FAIL/task-filter"
	echo 0 >"$FAIL/space"
	echo 1 >"$FAIL/interval"
	echo 0 >"$FAIL/verbose"
	echo -1 >"$FAIL/times"
	echo 100 >"$FAIL/probability"
	_got=$(taskset -c "$_ca" sh /tmp/fw.sh "$_cb")
	echo 0 >"$FAIL/probability"
	read -r _flushes _foreign _failed <<-END
		$_got
	END
	ktap_diag "cpu $_ca then $_cb, $_sites call sites: window flushes $_flushes, foreign loads $_foreign, failed builds $_failed"
	# The writer ran foreign: loads of a foreign window, failed builds.
	ktap_check foreign_writer_flushes_few sh -c \
		"[ '${_foreign:-0}' -gt 0 ] && [ '${_failed:-0}' -gt 0 ] && [ '${_flushes:-x}' -le $((_sites / 100)) ]"
}

if [ "${ktv_expect:-0}" = 1 ] && [ "${ktv_nodes:-1}" -ge 2 ] && [ "${ktv_lazy:-0}" = 1 ]; then
	foreign_writer
fi
