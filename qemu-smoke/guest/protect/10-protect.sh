# shellcheck shell=sh
# Protection on every node (ktv_suite=protect, booted by boot.py with
# --expect-faults): pinned to the first CPU of each node, LKDTM's WRITE_RO,
# WRITE_RO_AFTER_INIT, WRITE_KERN, EXEC_RODATA and EXEC_DATA, and a store
# through the direct-map alias of the CPU's own copy of text and of rodata
# (ktext_verify's alias_write), and through that of the CPU's own copy of
# a JITed BPF program, must each oops with the right page fault.
# Each provoked fault is bracketed by expect-fault markers in the kernel
# log; boot.py counts any other splat.

# shellcheck source=../lib/ktv.sh
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
	# The oops must be the pinned CPU's ("CPU: N UID: ..." in its header).
	if grep -qF "$_want" /tmp/fault.log && grep -q 'Oops' /tmp/fault.log &&
		grep -q "CPU: $_cpu " /tmp/fault.log; then
		ktap_ok "$_name"
	else
		ktap_fail "$_name" "no '$_want' oops on CPU $_cpu (exit $_rc)"
		tail -n 6 /tmp/fault.log | while IFS= read -r l; do ktap_diag "log: $l"; done
	fi
}

# alias_node_ok NAME CPU NODE: the alias store of test NAME (logged by the
# verifier between its markers) hit the copy that CPU should use: that of
# its nearest node with a copy on a replication kernel, the original's
# node otherwise (when the image lies on one node).
alias_node_ok() {
	_line=$(dmesg | awk -v b="ktv: expect-fault begin $1" -v e="ktv: expect-fault end $1" '
		index($0, b) { on = 1; next } index($0, e) { on = 0 } on && /alias write: cpu /')
	_hit=$(echo "$_line" | sed -n 's/.*alias write: cpu \([0-9]*\) .* is phys [0-9a-fx]* (node \([0-9-]*\)).*/\1 \2/p')
	if [ "${ktv_expect:-0}" = 1 ]; then
		_want="$2 $(ktv_nearest_copy "$3")"
	elif [ "$KTV_SPAN" = 1 ]; then
		_want="$2 $KTV_IMAGE_NODE"
	else
		ktap_diag "$1: the image lies on $KTV_SPAN nodes, the node of the store is not checked"
		_want="$2 ${_hit#* }"
	fi
	ktap_diag "$1: cpu and node of the store: '$_hit', want '$_want'"
	[ -n "$_hit" ] && [ "$_hit" = "$_want" ]
}

# The smoke configuration panics on oops (CONFIG_PANIC_ON_OOPS): here an
# oops is the expected outcome, and the test goes on after it.
echo 0 >/proc/sys/kernel/panic_on_oops

if [ ! -w "$LKDTM" ]; then
	ktap_skip lkdtm "no $LKDTM"
elif ! ktv_load; then
	ktap_fail verifier_loaded "insmod failed"
elif ! ktv_read_report; then
	ktap_fail report_read "$(cat /tmp/ktv.err)"
else
	KTV_SPAN=$(ktv_summary image_span)
	KTV_IMAGE_NODE=$(ktv_summary image_node)
	# A BPF program, held loaded: its page is registered as code.
	bpfload 1 hold >/tmp/bpf.hold 2>&1 &
	_bpf=$!
	sleep 1
	_prog=$(awk '$4 == "[bpf]" { print $1; exit }' /proc/kallsyms)
	if [ -n "$_prog" ] && echo "bpf 0x$_prog 0x1" >"$KTV_DBG/ktext_verify/code"; then
		ktap_diag "BPF program at 0x$_prog"
	else
		ktap_diag "no BPF program: $(cat /tmp/bpf.hold)"
	fi
	for nc in $(ktv_node_cpus | tr ' ' :); do
		n=${nc%:*} cpu=${nc#*:}
		w="supervisor write access in kernel mode"
		x="supervisor instruction fetch in kernel mode"
		expect_fault "node${n}_WRITE_RO" "$w" "$cpu" "echo WRITE_RO >$LKDTM"
		expect_fault "node${n}_WRITE_RO_AFTER_INIT" "$w" "$cpu" "echo WRITE_RO_AFTER_INIT >$LKDTM"
		expect_fault "node${n}_WRITE_KERN" "$w" "$cpu" "echo WRITE_KERN >$LKDTM"
		expect_fault "node${n}_EXEC_RODATA" "$x" "$cpu" "echo EXEC_RODATA >$LKDTM"
		expect_fault "node${n}_EXEC_DATA" "$x" "$cpu" "echo EXEC_DATA >$LKDTM"
		expect_fault "node${n}_alias_text" "$w" "$cpu" "echo text >$ALIAS"
		ktap_check "node${n}_alias_text_hit_own_copy" alias_node_ok "node${n}_alias_text" "$cpu" "$n"
		expect_fault "node${n}_alias_rodata" "$w" "$cpu" "echo rodata >$ALIAS"
		ktap_check "node${n}_alias_rodata_hit_own_copy" alias_node_ok "node${n}_alias_rodata" "$cpu" "$n"
		expect_fault "node${n}_alias_bpf" "$w" "$cpu" "echo $_prog >$ALIAS"
		# One copy (a kernel that does not copy BPF programs): the
		# program's page is wherever the allocator put it.
		if [ "${ktv_expect:-0}" = 1 ] && [ -n "$(ktv_krepl_stat copy_failures)" ]; then
			ktap_check "node${n}_alias_bpf_hit_own_copy" alias_node_ok "node${n}_alias_bpf" "$cpu" "$n"
		fi
	done
	kill "$_bpf"
fi
