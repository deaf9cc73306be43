# shellcheck shell=sh
# Protection on every node (ktv_suite=protect, booted by boot.py with
# --expect-faults): pinned to the first CPU of each node, LKDTM's WRITE_RO,
# WRITE_RO_AFTER_INIT, WRITE_KERN, EXEC_RODATA and EXEC_DATA, and a store
# through the direct-map alias of the CPU's own copy of text and of rodata
# (ktext_verify's alias_write), must each oops with the right page fault.
# Each provoked fault is bracketed by expect-fault markers in the kernel
# log; boot.py counts any other splat.

# shellcheck source=../ktv.sh
. /lib/ktv.sh

LKDTM=$KTV_DBG/provoke-crash/DIRECT
ALIAS=$KTV_DBG/ktext_verify/alias_write

# expect_fault NAME WANT CPU CMD: run CMD (as "sh -c") pinned to CPU,
# between the markers; ok when the kernel log between them holds WANT.
expect_fault() {
	_name=$1 _want=$2 _cpu=$3
	echo "ktv: expect-fault begin $_name" >/dev/kmsg
	taskset -c "$_cpu" sh -c "$4" >/dev/null 2>&1
	_rc=$?
	echo "ktv: expect-fault end $_name" >/dev/kmsg
	dmesg | awk -v b="ktv: expect-fault begin $_name" -v e="ktv: expect-fault end $_name" '
		index($0, b) { on = 1; next } index($0, e) { on = 0 } on' >/tmp/fault.log
	if grep -qF "$_want" /tmp/fault.log && grep -q 'Oops' /tmp/fault.log; then
		ktap_ok "$_name"
	else
		ktap_fail "$_name" "no '$_want' oops (exit $_rc)"
		tail -n 6 /tmp/fault.log | while IFS= read -r l; do ktap_diag "log: $l"; done
	fi
}

# The smoke configuration panics on oops (CONFIG_PANIC_ON_OOPS): here an
# oops is the expected outcome, and the test goes on after it.
echo 0 >/proc/sys/kernel/panic_on_oops

if [ ! -w "$LKDTM" ]; then
	ktap_skip lkdtm "no $LKDTM"
elif ! ktv_load; then
	ktap_fail verifier_loaded "insmod failed"
else
	for n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
		cpus=$(cat "/sys/devices/system/node/node$n/cpulist")
		[ -n "$cpus" ] || continue
		cpu=${cpus%%[-,]*}
		w="supervisor write access in kernel mode"
		x="supervisor instruction fetch in kernel mode"
		expect_fault "node${n}_WRITE_RO" "$w" "$cpu" "echo WRITE_RO >$LKDTM"
		expect_fault "node${n}_WRITE_RO_AFTER_INIT" "$w" "$cpu" "echo WRITE_RO_AFTER_INIT >$LKDTM"
		expect_fault "node${n}_WRITE_KERN" "$w" "$cpu" "echo WRITE_KERN >$LKDTM"
		expect_fault "node${n}_EXEC_RODATA" "$x" "$cpu" "echo EXEC_RODATA >$LKDTM"
		expect_fault "node${n}_EXEC_DATA" "$x" "$cpu" "echo EXEC_DATA >$LKDTM"
		expect_fault "node${n}_alias_text" "$w" "$cpu" "echo text >$ALIAS"
		expect_fault "node${n}_alias_rodata" "$w" "$cpu" "echo rodata >$ALIAS"
	done
	# Which node's copy each alias store hit: the verifier says.
	dmesg | grep 'alias write:' | while IFS= read -r l; do ktap_diag "${l#*] }"; done
fi
