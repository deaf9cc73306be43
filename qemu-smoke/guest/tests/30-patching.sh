# shellcheck shell=sh
# Runtime text patching reaches every copy: after the function tracer is
# switched on and off, a kprobe is armed and removed, BPF programs are
# JIT-compiled and a module is reloaded, every CPU's view of kernel and module text and rodata is
# byte-identical to the original (and local, on a replication kernel).

# shellcheck source=../ktv.sh
. /lib/ktv.sh

KTV_TRACE=/sys/kernel/tracing

ktv_patching() {
	if ! ktv_load; then
		ktap_fail verifier_loaded "insmod failed"
		ktv_dmesg_tail
		return
	fi
	ktap_ok verifier_loaded
	_warn0=$(dmesg | grep -cE 'WARNING:|BUG:|Oops')
	mount -t tracefs tracefs "$KTV_TRACE" 2>/dev/null

	if grep -qw function "$KTV_TRACE/available_tracers" 2>/dev/null; then
		_t0=$(date +%s)
		echo function >"$KTV_TRACE/current_tracer"
		_t1=$(date +%s)
		ktap_diag "function tracer on all $(wc -l <"$KTV_TRACE/available_filter_functions") functions: on in $((_t1 - _t0)) s"
		ktv_recheck ftrace_on
		_t0=$(date +%s)
		echo nop >"$KTV_TRACE/current_tracer"
		ktap_diag "function tracer off in $(($(date +%s) - _t0)) s"
		ktv_recheck ftrace_off
	else
		ktap_skip identical_after_ftrace "no function tracer"
	fi

	if [ -w "$KTV_TRACE/kprobe_events" ]; then
		echo 'p:ktvprobe vfs_read' >>"$KTV_TRACE/kprobe_events" &&
			echo 1 >"$KTV_TRACE/events/kprobes/ktvprobe/enable"
		cat /proc/version >/dev/null
		ktv_recheck kprobe_armed
		echo 0 >"$KTV_TRACE/events/kprobes/ktvprobe/enable"
		echo '-:ktvprobe' >>"$KTV_TRACE/kprobe_events"
		ktv_recheck kprobe_removed
	else
		ktap_skip identical_after_kprobe "no kprobe events"
	fi

	if command -v bpfload >/dev/null; then
		_t0=$(date +%s)
		if ktv_diag_run bpfload 200; then
			ktap_diag "200 BPF JIT loads in $(($(date +%s) - _t0)) s"
			ktv_recheck bpf_jit
		else
			ktap_fail identical_after_bpf_jit "bpfload failed"
		fi
	else
		ktap_skip identical_after_bpf_jit "no bpfload in the initramfs"
	fi

	if rmmod ktv_target && insmod "$KTV_MODS/ktv_target.ko" && echo 3 >"$KTV_DBG/ktv_target/flip"; then
		ktv_recheck module_reload
	else
		ktap_fail identical_after_module_reload "reloading ktv_target failed"
	fi

	ktap_check rmmod_clean sh -c 'rmmod ktext_verify && rmmod ktv_target'
	_warn1=$(dmesg | grep -cE 'WARNING:|BUG:|Oops')
	ktap_check no_kernel_warnings [ "$_warn1" = "$_warn0" ]
}

ktv_patching
