# shellcheck shell=sh
# Runtime text patching reaches every copy: after the function tracer is
# switched on and off, a kprobe is armed and removed, BPF programs are
# JIT-compiled and a module is reloaded, every CPU's view of kernel and module text and rodata is
# byte-identical to the original (and local, on a replication kernel).

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KTV_TRACE=/sys/kernel/tracing

# ktv_changed COUNT BEFORE AFTER: something was enabled (COUNT > 0) and the
# text bytes changed (and were readable).
ktv_changed() { [ "$1" -gt 0 ] && [ "$2" != "?" ] && [ "$3" != "?" ] && [ "$2" != "$3" ]; }
# ktv_restored COUNT BEFORE AFTER: nothing left enabled, the bytes as before.
ktv_restored() { [ "$1" = 0 ] && [ "$2" != "?" ] && [ "$2" = "$3" ]; }

ktv_patching() {
	ktv_load_tested || return
	_warn0=$(ktv_warnings)
	mount -t tracefs tracefs "$KTV_TRACE" 2>/dev/null

	# Every configuration has the function tracer and kprobe events: a
	# missing one fails (an unexpected skip would hide a broken tracefs).
	ktap_check tracefs_mounted [ -r "$KTV_TRACE/available_tracers" ]

	# The first bytes of vfs_read: a call to __fentry__ (a NOP until the
	# tracer patches it), then the kprobe's int3 or jump.
	_va=$(ktv_sym vfs_read)
	_before=$(ktv_text_bytes "$_va")
	ktap_diag "vfs_read at $_va: $_before"

	_t0=$(date +%s)
	if echo function >"$KTV_TRACE/current_tracer" &&
		[ "$(cat "$KTV_TRACE/current_tracer")" = function ]; then
		_t1=$(date +%s)
		_n=$(wc -l <"$KTV_TRACE/enabled_functions")
		ktap_diag "function tracer on $_n functions: on in $((_t1 - _t0)) s"
		_on=$(ktv_text_bytes "$_va")
		ktap_diag "vfs_read with the tracer on: $_on"
		ktap_check ftrace_enabled ktv_changed "$_n" "$_before" "$_on"
		ktv_run_on_every_node cat /proc/version
		ktv_recheck ftrace_on
	else
		ktap_fail ftrace_enabled "the function tracer could not be set"
	fi
	_t0=$(date +%s)
	if echo nop >"$KTV_TRACE/current_tracer"; then
		ktap_diag "function tracer off in $(($(date +%s) - _t0)) s"
		ktap_check ftrace_disabled ktv_restored "$(wc -l <"$KTV_TRACE/enabled_functions")" \
			"$_before" "$(ktv_text_bytes "$_va")"
	else
		ktap_fail ftrace_disabled "the nop tracer could not be set"
	fi
	ktv_recheck ftrace_off

	if echo 'p:ktvprobe vfs_read' >>"$KTV_TRACE/kprobe_events" &&
		echo 1 >"$KTV_TRACE/events/kprobes/ktvprobe/enable"; then
		# An optimised probe is rewritten into a jump later, by a worker:
		# wait for it, so that both text pokes are behind the recheck.
		ktv_wait_optimized vfs_read
		grep vfs_read "$KTV_DBG/kprobes/list" | while IFS= read -r l; do ktap_diag "kprobes: $l"; done
		_armed=$(ktv_text_bytes "$_va")
		ktap_diag "vfs_read with the probe armed: $_armed"
		ktap_check kprobe_armed ktv_changed "$(grep -c vfs_read "$KTV_DBG/kprobes/list")" \
			"$_before" "$_armed"
		ktv_run_on_every_node cat /proc/version
		_hits=$(awk '$1 == "ktvprobe" { print $2 }' "$KTV_TRACE/kprobe_profile")
		ktap_diag "kprobe hits: ${_hits:-none}"
		ktap_check kprobe_hit [ "${_hits:-0}" -ge "$(ktv_node_count)" ]
		ktv_recheck kprobe_armed
	else
		ktap_fail kprobe_armed "the kprobe could not be set or enabled"
	fi
	echo 0 >"$KTV_TRACE/events/kprobes/ktvprobe/enable"
	if echo '-:ktvprobe' >>"$KTV_TRACE/kprobe_events"; then
		ktap_check kprobe_removed ktv_restored 0 "$_before" "$(ktv_text_bytes "$_va")"
	else
		ktap_fail kprobe_removed "the kprobe could not be removed"
	fi
	ktv_recheck kprobe_removed

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
	ktv_no_new_warnings "$_warn0"
}

ktv_patching
