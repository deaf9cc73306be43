# shellcheck shell=sh
# The series' debugfs status and log, checked against what the guest's own
# topology (sysfs) says it should be:
# - replication kernel (ktv_expect=1): active on a multi-node machine; one
#   node keeps the original, every other node that is the nearest memory
#   of a node with CPUs (and not booted without a copy, ktv_nocopy) has its
#   own copy, every other node names its nearest node with one; the W+X
#   check ran on every copy's tables.
# - rodata=off: the copies would never be made, so nothing is reserved and
#   the module area is not split.
# - the option built in but kernel_replication=off, or off by default
#   (KERNEL_REPLICATION_DEFAULT_ON=n, no parameter: nothing reserved, the
#   module area not split), or every allocation failing
#   (fail_kernel_replication=): the status says inactive.
# - a crash kernel (elfcorehdr=): nothing reserved, a log line says why.
# - the option compiled out: no status file, no log line.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KREPL_DIR=/sys/kernel/debug/kernel_replication
KREPL_STATUS=$KREPL_DIR/status
# status_check NAME COMMAND...: a check of the debugfs status file, made
# only where the kernel has one (a revision with the feature "status": the
# inventory then requires NAME, so a missing file still fails).
status_check() {
	if [ -e "$KREPL_STATUS" ]; then ktap_check "$@"; fi
}

# Every online node's line names the node it should use: the image's node
# says "original", a node with a copy of its own says so, the others name
# their nearest node with a copy. Exactly one node keeps the original.
status_nodes_ok() {
	_bad=0
	_orig=$(grep -c '^node=[0-9]* replica=[0-9]* original' "$KREPL_STATUS")
	[ "$_orig" = 1 ] || { ktap_diag "$_orig nodes keep the original, want 1"; _bad=1; }
	_img=$(sed -n 's/^node=\([0-9]*\) replica=[0-9]* original.*/\1/p' "$KREPL_STATUS")
	for _n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
		_m=$(ktv_nearest_copy "$_n")
		if [ "$_n" = "$_img" ]; then
			_want="^node=$_n replica=$_n original"
		elif [ "$_m" = "$_n" ]; then
			_want="^node=$_n replica=$_n copy="
		else
			_want="^node=$_n replica=$_m shared"
		fi
		if ! grep -q "$_want" "$KREPL_STATUS"; then
			ktap_diag "node $_n: want '$_want', have '$(grep "^node=$_n " "$KREPL_STATUS")'"
			_bad=1
		fi
	done
	return $_bad
}

# The number of copies the topology asks for: one on every node that is
# the nearest memory of a node with CPUs, but the image's, less the nodes
# booted without one (ktv_copy_nodes).
want_copies() { echo $(($(ktv_copy_nodes | wc -w) - 1)); }

# The module area is not split for copies: the status says so, or (a
# revision that replicates no module) has no line for it.
module_area_whole() {
	! grep -q '^module_area_replicated ' "$KREPL_STATUS" ||
		grep -qx "module_area_replicated 0x0-0x0" "$KREPL_STATUS"
}

if [ "${ktv_expect:-0}" = 1 ]; then
	if [ "${ktv_status:-1}" = 0 ]; then
		ktap_diag "the revision has no status file yet (ktv_status=0): its checks are left out"
		# Then only the log says whether the copies were made.
		_made="kernel_replication: kernel text and rodata replicated"
		if [ "${ktv_nodes:-1}" -gt 1 ]; then
			ktap_check replicated_in_log dmesg_has "$_made"
		else
			ktap_check replicated_in_log sh -c "! dmesg | grep -q '$_made'"
		fi
	elif [ ! -r "$KREPL_STATUS" ]; then
		ktap_fail replication_status "no $KREPL_STATUS"
	else
		while IFS= read -r l; do ktap_diag "status: $l"; done <"$KREPL_STATUS"
		want=1
		[ "${ktv_nodes:-1}" -gt 1 ] || want=0
		ktap_check replication_active_if_numa grep -qx "active $want" "$KREPL_STATUS"
		if [ "$want" = 1 ]; then
			ktap_check every_node_uses_its_nearest_copy status_nodes_ok
			copies=$(grep -c ' copy=' "$KREPL_STATUS")
			ktap_diag "copies: $copies, the topology asks for $(want_copies)"
			ktap_check copies_as_in_topology [ "$copies" = "$(want_copies)" ]
			# With PTI (a revision whose status says user_window=):
			# every copy's node has a user window of its own.
			if grep -q ' copy=.* user_window=' "$KREPL_STATUS" &&
				[ "${ktv_pti:-1}" = 1 ] && ! grep -qw 'pti=off' /proc/cmdline; then
				ktap_check user_window_on_every_copy \
					sh -c "! grep ' copy=' '$KREPL_STATUS' | grep -qv ' user_window=1'"
			fi
		fi
		# The activation test (CONFIG_KERNEL_REPLICATION_ACTIVATION_TEST):
		# code memory allocated and changed while the copies were made is
		# mapped on every node as on the master.
		# ktv_activation_test=1: the build has it (scripts/lib.sh).
		if [ "${ktv_activation_test:-0}" = 1 ]; then
			activation_ok() {
				_l=$(dmesg | grep -o 'kernel_replication_test: .*' | tail -n 1)
				ktap_diag "${_l:-no line from kernel_replication_test}"
				if [ "$want" = 1 ]; then
					echo "$_l" | grep -Eq ' [1-9][0-9]* of them before activation, 0 mappings not as on the master$'
				else
					echo "$_l" | grep -q 'replication not active: nothing to check$'
				fi
			}
			ktap_check activation_keeps_every_mapping activation_ok
		fi
		# The W+X check ran on the original tables (kernel, and user with
		# PTI) and once more on each copy's (kernel; user too, with PTI,
		# where the revision walks the nodes' user windows: ktv_user_wx).
		passes=$(dmesg | grep -c 'Checked W+X mappings: passed')
		copies=0
		[ "${ktv_nodes:-1}" -gt 1 ] && copies=$(want_copies)
		want=$((1 + copies))
		if dmesg | grep -q 'page tables isolation: enabled'; then
			want=$((want + 1))
			[ "${ktv_user_wx:-0}" = 0 ] || want=$((want + copies))
		fi
		ktap_diag "W+X checks passed: $passes, want $want"
		ktap_check wx_checked_on_every_copy [ "$passes" -eq "$want" ]
	fi
elif grep -q 'elfcorehdr=' /proc/cmdline; then
	# A crash kernel (is_kdump_kernel()): nothing reserved, whatever
	# kernel_replication= says, so that crash memory is not spent on it.
	status_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
	ktap_check kdump_message dmesg_has "kernel_replication: not in a crash kernel"
	ktap_check no_copy_reserved sh -c '! dmesg | grep -q "kernel_replication: reserved"'
elif grep -qw 'rodata=off' /proc/cmdline; then
	if [ -e "$KREPL_STATUS" ]; then
		while IFS= read -r l; do ktap_diag "status: $l"; done <"$KREPL_STATUS"
	fi
	status_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
	ktap_check rodata_off_message dmesg_has "kernel_replication: not with rodata=off"
	ktap_check no_copy_reserved sh -c '! dmesg | grep -q "kernel_replication: reserved"'
	status_check module_area_not_split module_area_whole
elif grep -qw 'kernel_replication=off' /proc/cmdline; then
	status_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
	ktap_check disabled_message dmesg_has "kernel_replication: disabled on the command line"
	ktap_check no_copy_reserved sh -c '! dmesg | grep -q "kernel_replication: reserved"'
elif dmesg_has "kernel_replication: off by default"; then
	# Built in, off by default (KERNEL_REPLICATION_DEFAULT_ON=n), and no
	# kernel_replication= on the command line.
	status_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
	ktap_check no_copy_reserved sh -c '! dmesg | grep -q "kernel_replication: reserved"'
	status_check module_area_not_split module_area_whole
elif grep -q 'fail_kernel_replication=' /proc/cmdline; then
	# Every replication allocation failed (16-degraded checks the log).
	status_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
else
	ktap_check no_status_file [ ! -e "$KREPL_DIR" ]
	ktap_check no_replication_log sh -c '! dmesg | grep -q "kernel_replication:"'
fi
