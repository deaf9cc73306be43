# shellcheck shell=sh
# Booted with every replication allocation failing
# (fail_kernel_replication=1,100,0,-1, the series' fault attribute): the
# kernel runs from the original, says so, and reports replication off.
# The verifier tests then check the one-copy baseline (booted without
# ktv_expect). Skipped on every other boot.

KREPL_STATUS=/sys/kernel/debug/kernel_replication/status

if ! grep -q 'fail_kernel_replication=1,100,0,-1' /proc/cmdline; then
	ktap_skip degraded_boot "no allocation failure injected at boot"
else
	dmesg | grep 'kernel_replication:' | while IFS= read -r l; do ktap_diag "${l#*] }"; done
	ktap_check no_replica_message dmesg_has "no replica could be made, running without"
	ktap_check status_inactive grep -qx "active 0" "$KREPL_STATUS"
fi
