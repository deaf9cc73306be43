# shellcheck shell=sh
# Boots with replication allocations failing (the series' fault attribute,
# fail_kernel_replication=).
# - Every one failing (1,100,0,-1): the kernel runs from the original, says
#   so, and reports replication off. The verifier tests then check the
#   one-copy baseline (booted without ktv_expect).
# - Some failing, ktv_nocopy=N[,N] naming the nodes left without a copy:
#   those nodes say so and use the copy of their nearest node by the SLIT
#   (lowest id on a tie), computed here from sysfs, not taken from the
#   kernel; the verifier (told the same nodes) then checks that every CPU's
#   page tables map that node's memory.
# Skipped on every other boot.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KREPL_STATUS=/sys/kernel/debug/kernel_replication/status

dmesg_re() { dmesg | grep -Eq "$1"; }

krepl_dmesg() {
	dmesg | grep 'kernel_replication:' | while IFS= read -r l; do ktap_diag "${l#*] }"; done
}

if grep -q 'fail_kernel_replication=1,100,0,-1' /proc/cmdline; then
	krepl_dmesg
	# series-v5 says "copy" where v4 and older said "replica".
	ktap_check no_replica_message dmesg_re "no (replica|copy) could be (made|reserved), running without"
	ktap_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
elif [ -n "${ktv_nocopy:-}" ]; then
	krepl_dmesg
	ktap_check status_active grep -qx "active 1" "$KREPL_STATUS"
	for n in $(echo "$ktv_nocopy" | tr ',' ' '); do
		m=$(ktv_nearest_copy "$n")
		ktap_diag "node $n has no copy; nearest node with one: ${m:-none}"
		# Why it has none: no memory for the copy, the copy's direct
		# map could not be made read-only, or no memory for its tables.
		ktap_check "node${n}_no_copy_message" dmesg_re "node $n: (no memory for a .* (replica|copy), it will use another node's|the (replica|copy)'s direct map cannot be made read-only, no (replica|copy)|no memory for the (replica|copy)'s page tables)"
		# v4 and older print a line per node; v5 one line for all,
		# "copy used by each node (node:copy): 0:0 1:2 ...".
		ktap_check "node${n}_uses_node${m}" dmesg_re "node $n uses the (replica|copy) of node $m\$|copy used by each node \(node:copy\):.* $n:$m( |\$)"
		ktap_check "node${n}_status_node${m}" grep -q "^node=$n replica=$m " "$KREPL_STATUS"
	done
else
	ktap_skip degraded_boot "no allocation failure injected at boot"
fi
