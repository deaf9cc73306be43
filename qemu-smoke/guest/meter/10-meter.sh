# shellcheck shell=sh
# The locality meter's guest (ktv_suite=meter: checks/meter.sh and
# 'make bench'): phase 1 of the meter begins here, once the kernel has
# booted (the steady state); kbench -m 2 then gives each (node, case) a
# phase of its own, the cases of ktv_cases (default openclose), and prints
# which phase is which ("meter-phase P CASE ops=N node=N cpu=N"), which go
# out as KTAP diagnostics (with ktv_probes=1, probes and a BPF program
# first, see below). With ktv_cold=1 the cases (or those of
# ktv_cold_cases) run again in phases of their own with the meter's
# caches emptied before each operation (kbench -C; lines ending in
# " cache=cold"). Then, for bench.py's memory
# table, the memory per process (PageTables and MemFree around 128
# sleeping children) and the replication status, if the kernel has one. The meter
# counts; this only marks.

STATUS=/sys/kernel/debug/kernel_replication/status
TRACE=/sys/kernel/tracing

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

# ktv_probes=1: code outside the image and the modules runs at every
# getppid(): a BPF program attached to a kprobe on __x64_sys_getppid (an
# ftrace-based kprobe: its ftrace trampoline, then the JIT-compiled
# program) and a kprobe past the ftrace call of __task_pid_nr_ns, which
# must be optimised before kbench starts (its detour buffer, a kprobe
# instruction slot; probe_optimized fails otherwise).
if [ "${ktv_probes:-0}" = 1 ]; then
	mount -t tracefs tracefs "$TRACE" 2>/dev/null
	bpfload 1 attach __x64_sys_getppid >/tmp/meter.bpf 2>&1 &
	_i=0
	while ! grep -q attached /tmp/meter.bpf && [ $_i -lt 50 ]; do
		usleep 100000
		_i=$((_i + 1))
	done
	_pp=$(ktv_probe_point __task_pid_nr_ns)
	if grep -q attached /tmp/meter.bpf && [ -n "$_pp" ] &&
		echo "p:ktvmeter $_pp" >>"$TRACE/kprobe_events" &&
		echo 1 >"$TRACE/events/kprobes/ktvmeter/enable"; then
		ktap_ok probes_armed
		# Measured from its detour buffer, not its instruction slot:
		# kbench must not start before the optimizer has run.
		ktap_check probe_optimized ktv_wait_optimized "$(printf ' __task_pid_nr_ns+0x%x ' "${_pp##*+}")"
		while IFS= read -r l; do ktap_diag "kprobes: $l"; done <"$KTV_DBG/kprobes/list"
	else
		ktap_fail probes_armed "$(cat /tmp/meter.bpf) probe point '${_pp:-}'"
		ktap_fail probe_optimized "no probe armed"
	fi
fi

# kbench_phases NAME FIRST-PHASE [kbench options]: one kbench run.
kbench_phases() {
	_name=$1 _first=$2
	shift 2
	if kbench -r "${ktv_reps:-3}" -n "${ktv_loop:-256}" -c "${ktv_cases:-openclose}" \
		-m "$_first" "$@" >/tmp/kbench.out 2>&1; then
		while IFS= read -r l; do ktap_diag "kbench: $l"; done </tmp/kbench.out
		ktap_ok "$_name"
	else
		while IFS= read -r l; do ktap_diag "$l"; done </tmp/kbench.out
		ktap_fail "$_name" "kbench failed"
		return 1
	fi
}

ktap_check meter_phase_marked meterphase 1
if kbench_phases kbench_phases 2 && [ "${ktv_cold:-0}" = 1 ]; then
	# The cold runs take the phases after the last one the hot runs used.
	last=$(sed -n 's/^meter-phase \([0-9]*\) .*/\1/p' /tmp/kbench.out | tail -n 1)
	kbench_phases kbench_phases_cold "$((last + 1))" -C -c "${ktv_cold_cases:-${ktv_cases:-openclose}}"
elif [ "${ktv_cold:-0}" = 1 ]; then
	ktap_skip kbench_phases_cold "the hot runs failed: their phases are unknown"
fi

# ktv_ftrace_phases=1: the function tracer switched on and off for every
# function, three times, each switch a phase of its own (the kernel
# instructions it costs, all vCPUs together: with replication, the cost
# of writing every copy), after one warm-up cycle (the first switch
# allocates the ring buffer). Run from CPU ktv_ftrace_cpu (default 0;
# "last": the highest-numbered CPU, on the last node: a writer on another
# node than the image's), in phases after the last one kbench used; a
# marker after "echo nop" ends the off phase.
if [ "${ktv_ftrace_phases:-0}" = 1 ]; then
	mount -t tracefs tracefs "$TRACE" 2>/dev/null
	fcpu=${ktv_ftrace_cpu:-0}
	[ "$fcpu" != last ] || fcpu=$(($(nproc) - 1))
	fnode=0
	for _d in /sys/devices/system/cpu/cpu"$fcpu"/node*; do
		[ -e "$_d" ] && fnode=${_d##*node}
	done
	p=$(sed -n 's/^meter-phase \([0-9]*\) .*/\1/p' /tmp/kbench.out | tail -n 1)
	p=$((${p:-1} + 1))
	n=$(wc -l <"$TRACE/available_filter_functions")
	ok=0
	if taskset -c "$fcpu" sh -c "echo function >$TRACE/current_tracer && echo nop >$TRACE/current_tracer"; then
		ok=1
		for _ in 1 2 3; do
			taskset -c "$fcpu" sh -c "meterphase $p && echo function >$TRACE/current_tracer &&
				meterphase $((p + 1)) && echo nop >$TRACE/current_tracer && meterphase $((p + 2))" || ok=0
			ktap_diag "meter-phase $p ftrace_on ops=$n node=$fnode cpu=$fcpu reps=1"
			ktap_diag "meter-phase $((p + 1)) ftrace_off ops=$n node=$fnode cpu=$fcpu reps=1"
			p=$((p + 2))
		done
	fi
	if [ "$ok" = 1 ]; then
		ktap_ok ftrace_phases
	else
		ktap_fail ftrace_phases "the function tracer could not be switched"
	fi
fi

# Memory per process: ktv_ptprocs (128) sleeping children. PageTables counts the tables
# below the PGD only (x86 allocates PGDs, the per-node ones too, outside
# the page table accounting); MemFree counts everything, PGDs included,
# give or take the per-CPU page lists.
if [ "${ktv_ptbytes:-0}" = 1 ]; then
	meminfo_kib() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
	n=0 pids=
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	# The series' own count of node PGD pages, where it has one.
	pgd_pages() { awk '$1 == "mm_pgd_pages" { print $2 }' "$STATUS" 2>/dev/null; }
	pt0=$(meminfo_kib PageTables) free0=$(meminfo_kib MemFree) pgd0=$(pgd_pages)
	procs=${ktv_ptprocs:-128}
	while [ "$n" -lt "$procs" ]; do
		sleep 600 &
		pids="$pids $!"
		n=$((n + 1))
	done
	sleep 2
	pt1=$(meminfo_kib PageTables) free1=$(meminfo_kib MemFree) pgd1=$(pgd_pages)
	# shellcheck disable=SC2086 # a list of PIDs
	kill $pids
	wait 2>/dev/null
	ktap_diag "memory: processes=$procs pagetables_kib_before=$pt0 pagetables_kib_after=$pt1 bytes_per_process=$(((pt1 - pt0) * 1024 / procs)) memfree_kib_before=$free0 memfree_kib_after=$free1 total_bytes_per_process=$(((free0 - free1) * 1024 / procs))"
	if [ -n "$pgd0" ] && [ -n "$pgd1" ]; then
		ktap_diag "memory: processes=$procs mm_pgd_pages_before=$pgd0 mm_pgd_pages_after=$pgd1 node_pgd_bytes_per_process=$(((pgd1 - pgd0) * 4096 / procs))"
	fi
	ktap_ok pagetable_bytes
fi
if [ -r "$STATUS" ]; then
	while IFS= read -r l; do ktap_diag "status: $l"; done <"$STATUS"
fi
