# shellcheck shell=sh
# 'make stress' guest (ktv_suite=stress): every runtime text writer and
# permission changer, many times, while fork/exec load runs pinned on a
# CPU of every node; then the verifier's byte-compare of every copy (0
# mismatches) and, where the kernel has kmemleak, a scan (0 leaks).
# Counts come from the command line (ktv_mods, ktv_ftrace, ktv_kprobes,
# ktv_flips, ktv_bpf, ktv_hotplug); each step reports its time.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

TRACE=/sys/kernel/tracing
KMEMLEAK=/sys/kernel/debug/kmemleak

uptime_s() { cut -d' ' -f1 /proc/uptime; }
# step NAME COUNT CMD...: run CMD COUNT times; ok when every run succeeds.
step() {
	_name=$1 _count=$2 _i=0 _bad=0
	shift 2
	_t0=$(uptime_s)
	while [ "$_i" -lt "$_count" ]; do
		"$@" || _bad=$((_bad + 1))
		_i=$((_i + 1))
	done
	ktap_diag "$_name: $_count in $(awk -v a="$_t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }') s, $_bad failed"
	if [ "$_bad" = 0 ]; then ktap_ok "$_name"; else ktap_fail "$_name" "$_bad of $_count failed"; fi
}

mod_cycle() {
	insmod "$KTV_MODS/ktv_target.ko" && echo 1 >"$KTV_DBG/ktv_target/flip" && rmmod ktv_target
}
ftrace_cycle() { echo function >"$TRACE/current_tracer" && echo nop >"$TRACE/current_tracer"; }
kprobe_cycle() {
	echo 'p:ktvstress vfs_read' >>"$TRACE/kprobe_events" &&
		echo 1 >"$TRACE/events/kprobes/ktvstress/enable" &&
		echo 0 >"$TRACE/events/kprobes/ktvstress/enable" &&
		echo '-:ktvstress' >>"$TRACE/kprobe_events"
}
hotplug_cycle() {
	for _c in $_hot_cpus; do
		echo 0 >"/sys/devices/system/cpu/cpu$_c/online" &&
			echo 1 >"/sys/devices/system/cpu/cpu$_c/online" || return 1
	done
}

# Background load: fork/exec bursts pinned to the first CPU of each node.
# Not a pure busy loop: under single-threaded TCG a vCPU that never idles
# only yields to the others on QEMU's 100 ms round-robin kick, so every
# cross-CPU sync of text patching would wait that long (10000 static key
# flips did not finish in 10 minutes). 20 exec per burst, 10 ms pause.
_load_pids=
for cpu in $(ktv_node_cpus | awk '{ print $2 }'); do
	# shellcheck disable=SC2016 # expanded by the inner shell
	taskset -c "$cpu" sh -c 'while :; do i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i + 1)); done; usleep 10000; done' &
	_load_pids="$_load_pids $!"
done
ktap_diag "fork/exec load on the first CPU of every node:$_load_pids"

mount -t tracefs tracefs "$TRACE" 2>/dev/null
step module_load_unload "${ktv_mods:-1000}" mod_cycle
step ftrace_on_off "${ktv_ftrace:-100}" ftrace_cycle
step kprobe_register_unregister "${ktv_kprobes:-1000}" kprobe_cycle
insmod "$KTV_MODS/ktv_target.ko"
ktap_diag "the next two steps are one command each: ${ktv_flips:-10000} flips, ${ktv_bpf:-1000} BPF programs"
_f0=$(cat "$KTV_DBG/ktv_target/flip")
step static_key_flips 1 sh -c "echo ${ktv_flips:-10000} >$KTV_DBG/ktv_target/flip"
# The write returns early when interrupted: count the flips it made, and
# run the patched code on every node (an even count: the initial state).
_flips=$(($(cat "$KTV_DBG/ktv_target/flip") - _f0))
ktap_diag "flips made: $_flips of ${ktv_flips:-10000}"
ktap_check static_key_flips_counted [ "$_flips" = "${ktv_flips:-10000}" ]
_want="key=$((_flips % 2)) call=$([ $((_flips % 2)) = 0 ] && echo a || echo b) table_sum=1314225"
ktap_check check_after_flips ktv_check_on_every_node "$_want"
step bpf_jit_load_unload 1 bpfload "${ktv_bpf:-1000}"
# Every CPU but CPU 0, so that each node loses and regains CPUs.
_hot_cpus=$(ktv_expand "$(cat /sys/devices/system/cpu/online)" | tr ' ' '\n' | grep -v '^0$' | tr '\n' ' ')
step cpu_offline_online "${ktv_hotplug:-20}" hotplug_cycle

for p in $_load_pids; do kill "$p"; done
wait

# ktv_target is loaded (after the flips): the verifier checks it too.
if ktv_load_verifier; then
	ktv_recheck stress
else
	ktap_fail identical_after_stress "the verifier did not load"
fi
rmmod ktext_verify
rmmod ktv_target

if [ -w "$KMEMLEAK" ]; then
	n=$(ktv_kmemleak_scan)
	ktap_diag "kmemleak: ${n:-no scan (disabled, or the scan failed)} suspected leak(s)"
	ktap_check no_leaks_after_stress [ "$n" = 0 ]
else
	ktap_skip no_leaks_after_stress "no kmemleak in this kernel"
fi
