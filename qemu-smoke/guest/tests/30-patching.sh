# shellcheck shell=sh
# Runtime text patching reaches every copy: after the function tracer is
# switched on and off, kprobes on the kernel image are armed and removed
# (an ftrace-based one, an int3 one and an optimised one, a jump), BPF
# programs are JIT-compiled and a module is reloaded, every CPU's view of
# kernel and module text and rodata is byte-identical to the original
# (and local, on a replication kernel). Each kprobe must fire on a CPU of
# every node.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KTV_TRACE=/sys/kernel/tracing

# ktv_changed COUNT BEFORE AFTER: something was enabled (COUNT > 0) and the
# text bytes changed (and were readable).
ktv_changed() { [ "$1" -gt 0 ] && [ "$2" != "?" ] && [ "$3" != "?" ] && [ "$2" != "$3" ]; }
# ktv_restored COUNT BEFORE AFTER: nothing left enabled, the bytes as before.
ktv_restored() { [ "$1" = 0 ] && [ "$2" != "?" ] && [ "$2" = "$3" ]; }

KP_OPT=/proc/sys/debug/kprobes-optimization

# kp_line SITE: the kprobes list's line of the probe at SITE (FUNC+0xOFF).
kp_line() { grep -F " $1 " "$KTV_DBG/kprobes/list"; }

# kp_place NAME FUNC: create the (disabled) kprobe event NAME at the first
# offset of FUNC past its ftrace call (ktv_probe_point; from +1 without
# ftrace's addresses) that kprobes take (an instruction boundary they can
# probe: EILSEQ or EINVAL otherwise) and that is not an ftrace hook; print
# it as FUNC+0xOFF, as the kprobes list shows it. Fails when no offset in
# 32 bytes will do.
kp_place() {
	echo "-:$1" >>"$KTV_TRACE/kprobe_events" 2>/dev/null
	_kp_o=$(ktv_probe_point "$2") && _kp_o=${_kp_o##*+} || _kp_o=1
	_kp_end=$((_kp_o + 32))
	while [ "$_kp_o" -lt "$_kp_end" ]; do
		if echo "p:$1 $2+$_kp_o" >>"$KTV_TRACE/kprobe_events" 2>/dev/null; then
			_kp_s=$(printf '%s+0x%x' "$2" "$_kp_o")
			case $(kp_line "$_kp_s") in
			*FTRACE*) echo "-:$1" >>"$KTV_TRACE/kprobe_events" ;;
			?*) echo "$_kp_s" && return 0 ;;
			*) echo "-:$1" >>"$KTV_TRACE/kprobe_events" ;;
			esac
		fi
		_kp_o=$((_kp_o + 1))
	done
	return 1
}

# kp_int3 LINE BEFORE ARMED: the probe's list LINE says it is armed and
# neither an ftrace hook nor optimised, and its first byte became int3.
kp_int3() {
	case $1 in *FTRACE* | *OPTIMIZED* | *DISABLED*) return 1 ;; esac
	case $3 in cc*) ;; *) return 1 ;; esac
	[ "$2" != "?" ] && [ "$2" != "$3" ]
}

# kp_jump LINE BEFORE ARMED: the probe is [OPTIMIZED] and its first byte
# became a jump (0xe9, to its detour buffer).
kp_jump() {
	case $1 in *OPTIMIZED*) ;; *) return 1 ;; esac
	case $3 in e9*) ;; *) return 1 ;; esac
	[ "$2" != "?" ] && [ "$2" != "$3" ]
}

# kp_wait_gone SITE BEFORE ADDR SECS: up to SECS for the probe at SITE to
# leave the kprobes list and the bytes at ADDR to be BEFORE again (an
# optimised probe is unoptimised by the optimizer's work, later).
kp_wait_gone() {
	_kg_i=0
	while [ -n "$(kp_line "$1")" ] || [ "$(ktv_text_bytes "$3")" != "$2" ]; do
		if [ $_kg_i -ge $(($4 * 10)) ]; then
			ktap_diag "after ${4} s: $(kp_line "$1") bytes $(ktv_text_bytes "$3"), before $2"
			return 1
		fi
		usleep 100000
		_kg_i=$((_kg_i + 1))
	done
	[ "$2" != "?" ]
}

# kp_hits_on_every_node EVENT CMD...: run CMD (one that read()s: busybox
# cat uses sendfile(), which never calls vfs_read) on the first CPU of every
# node with CPUs, from an emptied trace; each time that CPU's trace must
# hold a hit of the kprobe event EVENT by CMD's own process (its pid): the
# probe fired in the copy of the text that node runs. The trace is read
# with tracing off: the reader's own reads would hit a probe on vfs_read
# and keep adding to the buffer it reads.
kp_hits_on_every_node() {
	_kh_ev=$1
	shift
	_kh_bad=0
	ktv_node_cpus >/tmp/patch.nodecpus
	while read -r _kh_n _kh_c; do
		: >"$KTV_TRACE/trace"
		echo 1 >"$KTV_TRACE/tracing_on"
		# shellcheck disable=SC2016 # $$: the pid that execs CMD
		_kh_pid=$(taskset -c "$_kh_c" sh -c 'echo $$; exec "$@" >/dev/null' sh "$@" </dev/null)
		echo 0 >"$KTV_TRACE/tracing_on"
		_kh_h=$(grep -cE -- "-$_kh_pid +\[[0-9]+\] .* $_kh_ev: " "$KTV_TRACE/per_cpu/cpu$_kh_c/trace")
		ktap_diag "$_kh_ev: ${_kh_h:-no} hit(s) by $* (pid $_kh_pid) on cpu $_kh_c (node $_kh_n)"
		if [ "${_kh_h:-0}" -eq 0 ]; then
			_kh_bad=1
			grep -v '^#' "$KTV_TRACE/per_cpu/cpu$_kh_c/trace" | head -n 3 |
				while IFS= read -r l; do ktap_diag "cpu$_kh_c trace: $l"; done
		fi
	done </tmp/patch.nodecpus
	echo 1 >"$KTV_TRACE/tracing_on"
	return $_kh_bad
}

# An int3 kprobe on the kernel image: past vfs_read's ftrace call (an
# instruction that kprobes take), with kprobe optimisation off meanwhile
# so that it stays an int3 (0xcc) written into every copy.
kp_int3_probe() {
	_kopt0=$(cat "$KP_OPT" 2>/dev/null)
	[ -z "$_kopt0" ] || echo 0 >"$KP_OPT"
	if _ks=$(kp_place ktvint3 vfs_read); then
		_kaddr=0x$(kp_line "$_ks" | awk '{ print $1 }')
		_kb=$(ktv_text_bytes "$_kaddr")
		if echo 1 >"$KTV_TRACE/events/kprobes/ktvint3/enable"; then
			_kl=$(kp_line "$_ks")
			_ka=$(ktv_text_bytes "$_kaddr")
			ktap_diag "kprobes: $_kl"
			ktap_diag "$_ks at $_kaddr: $_kb, with the int3 probe armed: $_ka"
			ktap_check int3_kprobe_armed kp_int3 "$_kl" "$_kb" "$_ka"
			ktap_check int3_kprobe_hit_on_every_node kp_hits_on_every_node ktvint3 head -n 1 /proc/version
		else
			ktap_fail int3_kprobe_armed "the kprobe at $_ks could not be enabled"
			ktap_fail int3_kprobe_hit_on_every_node "no int3 kprobe"
		fi
		ktv_recheck int3_kprobe
		echo 0 >"$KTV_TRACE/events/kprobes/ktvint3/enable"
		if echo '-:ktvint3' >>"$KTV_TRACE/kprobe_events"; then
			ktap_check int3_kprobe_removed kp_wait_gone "$_ks" "$_kb" "$_kaddr" 5
		else
			ktap_fail int3_kprobe_removed "the kprobe at $_ks could not be removed"
		fi
	else
		ktap_fail int3_kprobe_armed "no offset of vfs_read past its ftrace call takes a kprobe"
		tail -n 3 "$KTV_TRACE/error_log" | while IFS= read -r l; do ktap_diag "error_log: $l"; done
		ktap_fail int3_kprobe_hit_on_every_node "no int3 kprobe"
		ktv_recheck int3_kprobe
		ktap_fail int3_kprobe_removed "no int3 kprobe"
	fi
	ktv_recheck int3_kprobe_removed
	[ -z "$_kopt0" ] || echo "$_kopt0" >"$KP_OPT"
}

# An optimised kprobe (optprobe) on the kernel image: past the ftrace call
# of __task_pid_nr_ns (optimised in every recorded run), else of vfs_read.
# It is an int3 first; the kprobe optimizer then writes a jump to a detour
# buffer (a kprobe instruction slot) into every copy. Not optimised in
# time is a failure, as is a jump left behind after the probe is removed
# (the optimizer takes the jump out later, too).
kp_optprobe() {
	_ks=''
	_kopt=$(cat "$KP_OPT" 2>/dev/null)
	if [ "$_kopt" = 1 ]; then
		for _kf in __task_pid_nr_ns vfs_read; do
			if ! _kps=$(kp_place ktvopt "$_kf"); then
				ktap_diag "no offset of $_kf past its ftrace call takes a kprobe"
				continue
			fi
			_kaddr=0x$(kp_line "$_kps" | awk '{ print $1 }')
			_kb=$(ktv_text_bytes "$_kaddr")
			if echo 1 >"$KTV_TRACE/events/kprobes/ktvopt/enable" &&
				ktv_wait_optimized " $_kps " 30; then
				_ks=$_kps
				break
			fi
			echo 0 >"$KTV_TRACE/events/kprobes/ktvopt/enable"
			echo '-:ktvopt' >>"$KTV_TRACE/kprobe_events"
			kp_wait_gone "$_kps" "$_kb" "$_kaddr" 30 || ktap_diag "the kprobe at $_kps is not gone"
		done
	fi
	if [ -n "$_ks" ]; then
		_kl=$(kp_line "$_ks")
		_ka=$(ktv_text_bytes "$_kaddr")
		ktap_diag "kprobes: $_kl"
		ktap_diag "$_ks at $_kaddr: $_kb, optimised: $_ka"
		ktap_check optprobe_optimized kp_jump "$_kl" "$_kb" "$_ka"
		case $_ks in
		__task_pid_nr_ns+*)
			# /proc/PID/stat: the parent's, group's and session's ids.
			ktap_check optprobe_hit_on_every_node kp_hits_on_every_node ktvopt cat /proc/self/stat ;;
		*)
			ktap_check optprobe_hit_on_every_node kp_hits_on_every_node ktvopt head -n 1 /proc/version ;;
		esac
	elif [ "$_kopt" != 1 ]; then
		ktap_fail optprobe_optimized "debug.kprobes-optimization is '$_kopt', not 1"
		ktap_fail optprobe_hit_on_every_node "no optimised kprobe"
	else
		ktap_fail optprobe_optimized "no kprobe on __task_pid_nr_ns or vfs_read was optimised"
		ktap_fail optprobe_hit_on_every_node "no optimised kprobe"
	fi
	ktv_recheck optprobe
	if [ -z "$_ks" ]; then
		ktap_fail optprobe_removed "no optimised kprobe"
	elif echo 0 >"$KTV_TRACE/events/kprobes/ktvopt/enable" &&
		echo '-:ktvopt' >>"$KTV_TRACE/kprobe_events"; then
		ktap_check optprobe_removed kp_wait_gone "$_ks" "$_kb" "$_kaddr" 30
	else
		ktap_fail optprobe_removed "the kprobe at $_ks could not be removed"
	fi
	ktv_recheck optprobe_removed
}

ktv_patching() {
	ktv_load_tested || return
	_warn0=$(ktv_warnings)
	mount -t tracefs tracefs "$KTV_TRACE" 2>/dev/null

	# Every configuration has the function tracer and kprobe events: a
	# missing one fails (an unexpected skip would hide a broken tracefs).
	ktap_check tracefs_mounted [ -r "$KTV_TRACE/available_tracers" ]

	# The first bytes of vfs_read: a call to __fentry__ (a NOP until the
	# tracer patches it, then a call to the kprobe's ftrace trampoline).
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

	# A kprobe on vfs_read+0, the ftrace call site: an ftrace-based
	# kprobe ([FTRACE]), which never becomes a jump; the int3 and
	# optimised kprobes on the image follow.
	if echo 'p:ktvprobe vfs_read' >>"$KTV_TRACE/kprobe_events" &&
		echo 1 >"$KTV_TRACE/events/kprobes/ktvprobe/enable"; then
		grep vfs_read "$KTV_DBG/kprobes/list" | while IFS= read -r l; do ktap_diag "kprobes: $l"; done
		_armed=$(ktv_text_bytes "$_va")
		ktap_diag "vfs_read with the probe armed: $_armed"
		ktap_check kprobe_armed ktv_changed "$(grep -c vfs_read "$KTV_DBG/kprobes/list")" \
			"$_before" "$_armed"
		ktap_check kprobe_hit_on_every_node kp_hits_on_every_node ktvprobe head -n 1 /proc/version
		ktv_recheck kprobe_armed
	else
		ktap_fail kprobe_armed "the kprobe could not be set or enabled"
		ktap_fail kprobe_hit_on_every_node "no kprobe"
	fi
	echo 0 >"$KTV_TRACE/events/kprobes/ktvprobe/enable"
	if echo '-:ktvprobe' >>"$KTV_TRACE/kprobe_events"; then
		ktap_check kprobe_removed ktv_restored 0 "$_before" "$(ktv_text_bytes "$_va")"
	else
		ktap_fail kprobe_removed "the kprobe could not be removed"
	fi
	ktv_recheck kprobe_removed

	kp_int3_probe
	kp_optprobe

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
