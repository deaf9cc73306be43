# shellcheck shell=sh
# 'make stress' guest, before 10-stress.sh (whose verifier and kmemleak
# checks then cover this too): ktv_fuzz_secs seconds (0 or unset: skip)
# of fuzzing the per-process page tables' lifecycle. On every node at
# once, pinned to its CPUs: stress-ng's fork, exec, mmap, vm and clone
# stressors, and trinity limited to the calls that make, change and end
# address spaces. Meanwhile a migrator moves their processes from node to
# node every 0.2 s, and the trimming work runs every 0.5 s (where the
# revision trims: series-v4's trim_ms; series-v5 keeps node PGDs for the
# life of the mm), so that node PGDs are bound, built, trimmed and freed
# all the time. Then: no oops, WARN or KASAN report; stress-ng and trinity
# exited as they do when all went well, and did work; node PGDs were built
# and (where the revision trims) trimmed meanwhile (ktv_node_pgds=1: the
# revision builds them per mm, lazily); the node PGD pages back to their
# count before (none leaked), by the series' counter and
# (ktv_page_owner=1) by page_owner; fresh processes' node PGDs equal
# mm->pgd after races (pgdrace, on the harness verifier's mm_pgd). Never
# run these tools on the host.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

# trinity's children never make exit, fork, vfork, clone or brk (marked
# "avoid" in its tables, even when named): its own forks, execve's and
# stress-ng's cover those.
TRINITY_CALLS="mmap munmap mremap mprotect madvise brk clone fork vfork execve exit modify_ldt"

# stress_ng_status RC: stress-ng's exit status RC is acceptable: 0 (every
# stressor passed) or 3 (a stressor could not get the memory or processes
# it asked for, ENOMEM or EAGAIN, beside trinity on a small node: the
# environment, not the kernel; the bogo-ops test still wants work done).
# Not 1 (bad options, or the harness itself failed), 2 (a stressor
# failed: the vm stressor's data check, a fork or clone that failed), 4
# (a stressor not implemented: it never ran), 5 (a stressor killed by a
# signal: SIGSEGV or SIGBUS under page-table changes is what this looks
# for), 6 (a stressor exited early), 7 (metrics untrustworthy), nor 128+N
# (stress-ng itself killed by signal N).
stress_ng_status() { [ "$1" = 0 ] || [ "$1" = 3 ]; }

# stress_ng_ops LOG: the bogo ops of all stressors in a stress-ng
# --metrics-brief log ("stress-ng: metrc: [PID] fork  229  1800.04 ...";
# "info:" before 0.15), 0 when it has none.
stress_ng_ops() {
	awk '$1 == "stress-ng:" && $3 ~ /^\[[0-9]+\]$/ && $4 ~ /^(fork|exec|mmap|vm|clone)$/ &&
		$5 ~ /^[0-9]+$/ { n += $5 } END { print n + 0 }' "$1"
}

# migrate SECS: every 0.2 s for SECS seconds, move each stress-ng and
# trinity process to the CPUs of another node (round-robin, offset by the
# pid: reproducible, and the processes spread over the nodes).
migrate() {
	_end=$(($(cut -d. -f1 /proc/uptime) + $1))
	_n=$(wc -l </tmp/fuzz.nodecpus)
	_k=0
	while [ "$(cut -d. -f1 /proc/uptime)" -lt "$_end" ]; do
		_k=$((_k + 1))
		for _p in $(pidof stress-ng trinity); do
			_cpus=$(sed -n "$(((_k + _p) % _n + 1))p" /tmp/fuzz.nodecpus)
			taskset -pc "$_cpus" "$_p" >/dev/null 2>&1
		done
		usleep 200000
	done
}

_secs=${ktv_fuzz_secs:-0}
if [ "$_secs" = 0 ]; then
	ktap_skip fuzz "ktv_fuzz_secs is 0"
elif ! command -v stress-ng >/dev/null || ! command -v trinity >/dev/null; then
	ktap_fail fuzz "stress-ng or trinity missing from the initramfs (make stress puts them in)"
else
	# "CPULIST" of each online node with CPUs.
	for _n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
		_l=$(cat "/sys/devices/system/node/node$_n/cpulist")
		[ -z "$_l" ] || echo "$_l"
	done >/tmp/fuzz.nodecpus
	# This shell runs the migrator: unpinned, the scheduler moves it
	# between nodes under the load, and it gets node PGDs of its own
	# during the run, which the count below would take for a leak. Not
	# $$: the suite runs in a subshell of /init, and $$ is /init's pid;
	# /proc/self read by the shell itself (a builtin) is this process.
	read -r _self _ </proc/self/stat
	taskset -pc "$(head -n 1 /tmp/fuzz.nodecpus)" "$_self" >/dev/null
	# Count from what no living process holds: every node PGD that no
	# CPU runs is freed by the trim (where the kernel has it), before and
	# after, so that what a long-lived process (pid 1, this shell) built
	# does not pass for a leak.
	ktv_settle
	ktv_krepl_trim
	_p0=$(ktv_krepl_stat mm_pgd_pages)
	_b0=$(ktv_krepl_stat mm_pgd_builds)
	# page_owner's count of the same pages (this shell is pinned to one
	# node: its scan's processes build nothing).
	_own=0
	if [ "${ktv_page_owner:-0}" = 1 ] && [ "${ktv_node_pgds:-0}" = 1 ]; then
		_l=$(ktv_pgd_pages_owned "before fuzzing") || _own=1
		ktap_diag "page_owner: $_l"
	fi
	_d0=$(dmesg | grep -cE 'BUG:|WARNING:|KASAN|general protection|Oops')
	_calls=
	for _c in $TRINITY_CALLS; do _calls="$_calls -c $_c"; done
	# trinity's file list: these victims (-V). Its fd providers: only
	# cheap ones. By default its first is bpf, whose preallocated maps
	# take minutes on a debug kernel under TCG, and "timeout" hit it
	# there in every run so far: trinity then blames the empty file list
	# it had not made yet. Its socket provider never gives up on a kernel
	# without CONFIG_NET. --clowntown skips its 10 s root countdown.
	mkdir -p /tmp/fuzz/victims && cd /tmp/fuzz || exit 1
	for _v in 1 2 3 4; do dd if=/dev/zero of="/tmp/fuzz/victims/f$_v" bs=4096 count=4 2>/dev/null; done
	_i=0
	_sng_pids='' _trin_pids=''
	while read -r _cpus; do
		taskset -c "$_cpus" stress-ng --fork 1 --exec 1 --mmap 1 --mmap-bytes 8M \
			--vm 1 --vm-bytes 16M --clone 1 --timeout "${_secs}s" --metrics-brief \
			>"/tmp/fuzz/stress-ng.$_i.log" 2>&1 &
		_sng_pids="$_sng_pids $!"
		# shellcheck disable=SC2086 # one -c NAME per call
		taskset -c "$_cpus" timeout -s INT -k 60 "$_secs" trinity --dangerous --clowntown \
			-q -l off -C 2 -a 64 -s "$((_i + 1))" --enable-fds=pseudo,testfile,memfd \
			-V /tmp/fuzz/victims --ftrace-dump-file="/tmp/fuzz/trace.$_i.txt" $_calls \
			>"/tmp/fuzz/trinity.$_i.log" 2>&1 &
		_trin_pids="$_trin_pids $!"
		_i=$((_i + 1))
	done </tmp/fuzz.nodecpus
	ktap_diag "fuzzing for $_secs s on $_i node(s): stress-ng fork/exec/mmap/vm/clone, trinity: $TRINITY_CALLS"
	# Trimming races with builds, switches and exits too: every 0.5 s.
	_tms=/sys/kernel/debug/kernel_replication/trim_ms
	[ ! -e "$_tms" ] || { _ms=$(cat "$_tms"); echo 500 >"$_tms"; }
	_t0=$(ktv_krepl_stat mm_pgd_trims)
	migrate "$_secs"
	# Each one's exit status, in node order (busybox timeout execs
	# trinity: its status is trinity's; 0 after the SIGINT at the end).
	_sng_rcs='' _trin_rcs=''
	for _p in $_sng_pids; do
		wait "$_p"
		_sng_rcs="$_sng_rcs $?"
	done
	for _p in $_trin_pids; do
		wait "$_p"
		_trin_rcs="$_trin_rcs $?"
	done
	wait
	_t1=$(ktv_krepl_stat mm_pgd_trims)
	[ ! -e "$_tms" ] || echo "$_ms" >"$_tms"
	ktap_diag "node PGDs trimmed while fuzzing: mm_pgd_trims '$_t0' -> '$_t1'"
	ktap_diag "exit statuses, one per node: stress-ng$_sng_rcs; trinity$_trin_rcs"
	# Anything trinity left behind (its children get its signal, but be sure).
	pkill -9 trinity 2>/dev/null
	pkill -9 stress-ng 2>/dev/null
	sleep 1
	cd / || exit 1
	for _f in /tmp/fuzz/stress-ng.*.log; do
		tail -n 8 "$_f" | while IFS= read -r l; do ktap_diag "${_f##*/}: $l"; done
	done
	for _f in /tmp/fuzz/trinity.*.log; do
		grep -E 'Added|nftw|fd providers|Error during|Bailing|Ran |No files' "$_f" |
			while IFS= read -r l; do ktap_diag "${_f##*/}: $l"; done
	done
	# An mm may outlive its last task a little (an mmput_async() work, a
	# lazy CPU): settle and look again, up to 10 times, then show what
	# is left.
	_try=0
	while :; do
		ktv_settle
		ktv_krepl_trim
		_p1=$(ktv_krepl_stat mm_pgd_pages)
		if [ "$_p1" = "$_p0" ] || [ "$_try" -ge 10 ]; then break; fi
		_try=$((_try + 1))
		sleep 1
	done
	[ "$_p1" = "$_p0" ] || ps -o pid,stat,comm | while IFS= read -r l; do ktap_diag "left: $l"; done
	_b1=$(ktv_krepl_stat mm_pgd_builds)
	ktap_diag "node PGDs built while fuzzing: mm_pgd_builds '$_b0' -> '$_b1'; pages held before '$_p0', after '$_p1'"
	if [ "${ktv_page_owner:-0}" = 1 ] && [ "${ktv_node_pgds:-0}" = 1 ]; then
		_l=$(ktv_pgd_pages_owned "after fuzzing") || _own=1
		ktap_diag "page_owner: $_l"
	fi
	# trinity's last line: "[main] Ran N syscalls. Successes: ..."
	_calls_made=$(cat /tmp/fuzz/trinity.*.log | awk '/Ran [0-9]+ syscalls/ { for (i = 1; i < NF; i++) if ($i == "Ran") n += $(i + 1) } END { print n + 0 }')
	ktap_diag "trinity made $_calls_made calls"
	ktap_check fuzz_trinity_made_calls [ "$_calls_made" -gt 0 ]
	_bad=0
	for _rc in $_trin_rcs; do [ "$_rc" = 0 ] || _bad=1; done
	ktap_check fuzz_trinity_exit_ok [ "$_bad/${_trin_rcs:+y}" = 0/y ]
	_bad=0
	for _rc in $_sng_rcs; do stress_ng_status "$_rc" || _bad=1; done
	ktap_check fuzz_stress_ng_exit_ok [ "$_bad/${_sng_rcs:+y}" = 0/y ]
	# Every node's stress-ng did some work.
	_bad=0 _ops='' _logs=0
	for _f in /tmp/fuzz/stress-ng.*.log; do
		[ -e "$_f" ] || continue
		_n=$(stress_ng_ops "$_f")
		_ops="$_ops $_n"
		_logs=$((_logs + 1))
		[ "$_n" -gt 0 ] || _bad=1
	done
	ktap_diag "stress-ng bogo ops, one per node:$_ops"
	ktap_check fuzz_stress_ng_ran [ "$_bad/$_logs" = "0/$_i" ]
	ktap_check fuzz_no_oops_warn_or_kasan [ "$(dmesg | grep -cE 'BUG:|WARNING:|KASAN|general protection|Oops')" = "$_d0" ]
	# The series' own counts, where the revision keeps them (ktv_node_pgds=1
	# from the host; the row's inventory, qemu-smoke/expected-tests, wants
	# these tests there and nowhere else). Counts, or fail: two missing
	# counters must not compare equal.
	if [ "${ktv_node_pgds:-0}" = 1 ]; then
		if ktv_is_count "$_p0" && ktv_is_count "$_p1"; then
			ktap_check fuzz_node_pgds_all_freed [ "$_p1" = "$_p0" ]
		else
			ktap_fail fuzz_node_pgds_all_freed "no mm_pgd_pages count in the status file (before '$_p0', after '$_p1')"
		fi
		if ktv_is_count "$_b0" && ktv_is_count "$_b1"; then
			ktap_check fuzz_node_pgds_built [ $((_b1 - _b0)) -gt 0 ]
		else
			ktap_fail fuzz_node_pgds_built "no mm_pgd_builds count in the status file ('$_b0', '$_b1')"
		fi
		if [ ! -e "$_tms" ]; then
			ktap_skip fuzz_node_pgds_trimmed "no debugfs trim_ms: the revision keeps node PGDs for the life of the mm"
		elif ktv_is_count "$_t0" && ktv_is_count "$_t1"; then
			ktap_check fuzz_node_pgds_trimmed [ $((_t1 - _t0)) -gt 0 ]
		else
			ktap_fail fuzz_node_pgds_trimmed "no mm_pgd_trims count in the status file ('$_t0', '$_t1')"
		fi
		# page_owner's count, where the build has it (ktv_page_owner=1).
		if [ "${ktv_page_owner:-0}" = 1 ]; then
			ktap_check fuzz_node_pgd_pages_match_page_owner [ "$_own" = 0 ]
		fi
	else
		ktap_diag "ktv_node_pgds is not 1: the revision has no per-mm node PGDs: no count, trim or pgdrace to check"
	fi
	# pgdrace: every child must have a node PGD, unless the nodes with
	# CPUs share one copy (nothing is ever built there). A revision with
	# per-mm node PGDs; it reads the harness verifier's mm_pgd on every CPU
	# (loaded here unless something loaded it already, removed after:
	# 10-stress loads it again), and a missing mm_pgd fails the test.
	# Series-v4's build_min_ns at 0 meanwhile, where the revision has it.
	[ "${ktv_node_pgds:-0}" = 1 ] || exit 0
	ktv_verifier_borrow
	if [ ! -r "$KTV_DBG/ktext_verify/mm_pgd" ]; then
		ktap_fail fuzz_then_node_pgds_equal "ktv_node_pgds=1 but no $KTV_DBG/ktext_verify/mm_pgd (the verifier ktext_verify.ko did not load)"
		exit 0
	fi
	_z=
	[ "$(ktv_cpu_replicas)" -ge 2 ] || _z=-z
	_mns=/sys/kernel/debug/kernel_replication/build_min_ns
	_min=
	[ ! -e "$_mns" ] || { _min=$(cat "$_mns"); echo 0 >"$_mns"; }
	pgdrace ${_z:+"$_z"} 10 200 >/tmp/fuzz/pgdrace.out 2>&1
	_rc=$?
	[ -z "$_min" ] || echo "$_min" >"$_mns"
	ktv_verifier_return
	if [ "$_rc" = 0 ]; then
		ktap_diag "$(tail -n 1 /tmp/fuzz/pgdrace.out)"
	else
		while IFS= read -r l; do ktap_diag "$l"; done </tmp/fuzz/pgdrace.out
	fi
	ktap_check fuzz_then_node_pgds_equal [ "$_rc" = 0 ]
fi
