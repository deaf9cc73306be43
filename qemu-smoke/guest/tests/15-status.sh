# shellcheck shell=sh
# The series' debugfs status: replication is active on a replication
# kernel, and every online node names the replica it uses.

KREPL_STATUS=/sys/kernel/debug/kernel_replication/status

if [ "${ktv_expect:-0}" != 1 ]; then
	ktap_skip replication_status "base kernel: no replication"
elif [ ! -r "$KREPL_STATUS" ]; then
	ktap_fail replication_status "no $KREPL_STATUS"
else
	while IFS= read -r l; do ktap_diag "status: $l"; done <"$KREPL_STATUS"
	want=1
	[ "${ktv_nodes:-1}" -gt 1 ] || want=0
	ktap_check replication_active_if_numa grep -qx "active $want" "$KREPL_STATUS"
	status_nodes_ok() {
		for n in $(tr ',' '\n' </sys/devices/system/node/online |
			awk -F- '{ for (i = $1; i <= (NF == 2 ? $2 : $1); i++) print i }'); do
			grep -q "^node=$n replica=" "$KREPL_STATUS" || return 1
		done
	}
	ktap_check every_node_has_a_replica status_nodes_ok
	# The W+X check ran on the original tables (kernel, and user with
	# PTI) and once more on each copy's.
	copies=$(grep -c ' copy=' "$KREPL_STATUS")
	passes=$(dmesg | grep -c 'Checked W+X mappings: passed')
	want=$((copies + 1))
	if dmesg | grep -q 'page tables isolation: enabled'; then want=$((want + 1)); fi
	ktap_diag "W+X checks passed: $passes, node copies: $copies"
	ktap_check wx_checked_on_every_copy [ "$passes" -eq "$want" ]
fi
