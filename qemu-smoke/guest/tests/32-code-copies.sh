# shellcheck shell=sh
# Code in the module area that only text_poke() writes once it is
# read-only: BPF programs (held loaded), kprobe instruction slots (a probe
# on a function ftrace does not trace) and ftrace trampolines (the
# function tracer on one function). The verifier checks each of their
# pages, found in /proc/kallsyms, as it checks module text: on a
# replication kernel that copies them (its status file counts
# copy_failures) every CPU must map a copy on its own node with the
# original's bytes; on any other kernel (earlier revisions, the 6.1
# backport, the base kernel), one copy that every CPU shares.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KTV_TRACE=/sys/kernel/tracing
KTV_CODE=$KTV_DBG/ktext_verify/code

# code_register TAG NAME: register the page of every symbol of module
# [TAG] in /proc/kallsyms with the verifier, as NAME0, NAME1...; prints
# how many pages.
code_register() {
	awk -v m="[$1]" '$4 == m { print substr($1, 1, length($1) - 3) "000" }' /proc/kallsyms |
		sort -u >"/tmp/code.$2"
	_i=0
	while read -r _a; do
		echo "$2$_i 0x$_a 0x1000" >"$KTV_CODE" || break
		_i=$((_i + 1))
	done <"/tmp/code.$2"
	echo "$_i"
}

# wait_for FILE TEXT: up to 5 s for TEXT to appear in FILE.
wait_for() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		[ $_i -lt 50 ] || return 1
		usleep 100000
		_i=$((_i + 1))
	done
}

# code_rows_ok NAME: the rows of code:NAME* pass the local/identical test
# of a kernel that copies them, or the shared-copy test of any other.
code_rows_ok() {
	grep -E "^cpu=.* region=code:$1[0-9]+ " "$KTV_REPORT" >/tmp/code.rows
	if [ "$KTV_CODE_COPIED" = 1 ]; then
		ktv_rows_ok /tmp/code.rows 'f["mismatch"] == 0 && f["unmapped"] == 0 && f["remote"] == 0'
	else
		ktv_rows_ok /tmp/code.rows 'f["mismatch"] == 0 && f["unmapped"] == 0' &&
			ktv_single_copy "^code:$1"
	fi
}

# The tests' names say what they assert: "_copied" (a copy per node) or
# "_one_copy" (one copy that every CPU shares).
KTV_CODE_COPIED=0 KTV_WANT=one_copy
if [ "${ktv_expect:-0}" = 1 ] && [ -n "$(ktv_krepl_stat copy_failures 2>/dev/null)" ]; then
	KTV_CODE_COPIED=1 KTV_WANT=copied
fi

code_main() {
	ktap_diag "copies expected: $KTV_CODE_COPIED"
	ktv_load_tested || return
	_warn0=$(ktv_warnings)
	mount -t tracefs tracefs "$KTV_TRACE" 2>/dev/null

	# Emptied here, not by the child's redirection: a "held" of an
	# earlier run (ktv_repeat) must not count.
	: >/tmp/code.bpf
	bpfload 8 hold >>/tmp/code.bpf 2>&1 &
	_bpf=$!
	if wait_for /tmp/code.bpf held; then
		ktap_ok bpf_programs_held
	else
		ktap_fail bpf_programs_held "$(cat /tmp/code.bpf)"
	fi
	_pp=$(ktv_probe_point ktv_target:ktv_probe_me)
	ktap_diag "probe point: ${_pp:-none}"
	_kp=1
	if [ ! -e "$KTV_TRACE/available_filter_functions_addrs" ]; then
		# Before 6.5 ftrace lists no addresses: no known instruction
		# boundary past the ftrace call to probe.
		_kp=0
		ktap_skip kprobe_armed "no available_filter_functions_addrs (before 6.5)"
		ktap_skip kprobe_optimized "no available_filter_functions_addrs (before 6.5)"
	elif [ -n "$_pp" ] && echo "p:ktvslot $_pp" >>"$KTV_TRACE/kprobe_events" &&
		echo 1 >"$KTV_TRACE/events/kprobes/ktvslot/enable"; then
		ktap_ok kprobe_armed
		# Optimised: its detour buffer, a kprobe instruction slot, holds
		# the copied instructions and the jump back (optimised in every
		# recorded run). Not in time fails: the pages below would then be
		# compared before the optimizer has written them.
		ktap_check kprobe_optimized ktv_wait_optimized "$(printf ' ktv_probe_me+0x%x ' "${_pp##*+}")"
		grep ktv_probe_me "$KTV_DBG/kprobes/list" | while IFS= read -r l; do ktap_diag "kprobes: $l"; done
	else
		ktap_fail kprobe_armed "the kprobe on ktv_probe_me could not be set or enabled"
		ktap_fail kprobe_optimized "no kprobe on ktv_probe_me"
		ktap_diag "kallsyms: $(grep -F ktv_probe_me /proc/kallsyms | tr '\n' ' ')"
		tail -n 3 "$KTV_TRACE/error_log" | while IFS= read -r l; do ktap_diag "error_log: $l"; done
	fi
	if echo ktv_call_a >"$KTV_TRACE/set_ftrace_filter" &&
		echo function >"$KTV_TRACE/current_tracer"; then
		ktap_ok function_tracer_on
	else
		ktap_fail function_tracer_on "the function tracer could not be set on ktv_call_a"
	fi
	# Run each: the probe and the traced function from every node.
	ktv_run_on_every_node cat "$KTV_DBG/ktv_target/check"

	for _k in bpf:bpf __builtin__kprobes:kprobe __builtin__ftrace:ftrace; do
		ktap_diag "${_k#*:}: $(code_register "${_k%%:*}" "${_k#*:}") pages"
	done
	while IFS= read -r l; do ktap_diag "code: $l"; done <"$KTV_CODE"
	if ! ktv_read_report || ! ktv_read_copies; then
		ktap_fail report_read "$(cat /tmp/ktv.err)"
	else
		grep 'region=code:' "$KTV_REPORT" | sed 's/ region=/ /' |
			while IFS= read -r l; do ktap_diag "$l"; done
		grep '^region=code:' "$KTV_COPIES" | while IFS= read -r l; do ktap_diag "$l"; done
		ktap_check "bpf_programs_$KTV_WANT" code_rows_ok bpf
		if [ "$_kp" = 1 ]; then
			ktap_check "kprobe_slots_$KTV_WANT" code_rows_ok kprobe
		else
			ktap_skip "kprobe_slots_$KTV_WANT" "no kprobe armed"
		fi
		ktap_check "ftrace_trampolines_$KTV_WANT" code_rows_ok ftrace
	fi
	if [ -e /sys/kernel/debug/kernel_replication/status ]; then
		ktap_diag "copy_failures $(ktv_krepl_stat copy_failures)"
	fi

	echo nop >"$KTV_TRACE/current_tracer"
	echo >"$KTV_TRACE/set_ftrace_filter"
	if [ -e "$KTV_TRACE/events/kprobes/ktvslot/enable" ]; then
		echo 0 >"$KTV_TRACE/events/kprobes/ktvslot/enable"
		echo '-:ktvslot' >>"$KTV_TRACE/kprobe_events"
	fi
	kill "$_bpf"
	wait "$_bpf" 2>/dev/null
	echo clear >"$KTV_CODE"
	ktap_check rmmod_clean sh -c 'rmmod ktext_verify && rmmod ktv_target'
	ktv_no_new_warnings "$_warn0"
}

# Unprivileged JIT code (classic BPF: socket filters, seccomp) may be
# loaded while all JIT code stays below bpf_jit_limit. On a kernel that
# copies JIT code per node, bpf_jit_limit times the copies each page gets
# must be what bpf_jit_limit alone is without replication: half of the
# module area, which is the size of the replicated part (to 2 MiB, its
# alignment, and a page of rounding per copy). So unprivileged programs
# neither pin more memory than without replication nor fill more than
# half of the replicated part, and the limit is not needlessly lower.
jit_limit_ok() {
	_lim=$(cat /proc/sys/net/core/bpf_jit_limit) || return 1
	_area=$(ktv_krepl_stat module_area_replicated)
	_copies=$(grep -c -E '^node=[0-9]+ replica=[0-9]+ (copy=|original)' "$KREPL_STATUS")
	case $_area in 0x*-0x*) ;; *) ktap_diag "no module_area_replicated line" && return 1 ;; esac
	_size=$((${_area#*-} - ${_area%-*}))
	_slack=$((2 * 1048576 + _copies * 4096))
	ktap_diag "bpf_jit_limit $_lim, $_copies copies, replicated part $_area ($((_size >> 20)) MiB)"
	[ "$_size" -gt 0 ] && [ "$_copies" -gt 1 ] &&
		[ $((_lim * _copies)) -le $((_size + _slack)) ] &&
		[ $((_lim * _copies)) -ge $((_size - _slack)) ]
}

code_main
KREPL_STATUS=/sys/kernel/debug/kernel_replication/status
if [ "$KTV_CODE_COPIED" = 1 ] && [ ! -e /proc/sys/net/core/bpf_jit_limit ]; then
	# The smoke configuration has no networking: KUnit's
	# krepl_kunit_jit_limit checks the same from inside.
	ktap_skip jit_limit_pins_as_one_copy "no net.core.bpf_jit_limit sysctl (CONFIG_NET off)"
elif [ "$KTV_CODE_COPIED" = 1 ]; then
	ktap_check jit_limit_pins_as_one_copy jit_limit_ok
else
	# Nothing to bound: the row's inventory (qemu-smoke/expected-tests)
	# wants the test only where the revision copies JIT code and replicates.
	ktap_diag "JIT code is not copied per node on this kernel: bpf_jit_limit not checked"
fi
