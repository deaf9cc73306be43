# shellcheck shell=sh
# ktext_verify: what each CPU's own page table maps the kernel text and
# rodata (of the image and of the modules ktv_target and ktext_verify) to,
# and whether the bytes are those of the original. With replication every
# CPU must see its node's copy; on the base kernel every CPU sees the one
# original copy.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

# A page of kernel data in a 2 MiB block that every node's tables map with
# an entry of their own, made uncached through the direct map: its high-map
# alias is uncached in every CPU's tables (review of v2, A2). Before the
# change the alias must be a 2 MiB entry on every CPU, or the test tested
# nothing.
highmap_alias_ok() {
	if ! cat "$KTV_DBG/ktext_verify/highmap_alias" >/tmp/ktv.highmap 2>/tmp/ktv.err; then
		ktap_diag "highmap_alias: $(cat /tmp/ktv.err)"
		return 1
	fi
	while IFS= read -r _l; do ktap_diag "highmap_alias: $_l"; done </tmp/ktv.highmap
	grep -q '^found=1 ' /tmp/ktv.highmap &&
		[ "$(grep -c '^cpu=' /tmp/ktv.highmap)" = "${ktv_cpus:-?}" ] &&
		[ "$(grep -c ' before=2m:' /tmp/ktv.highmap)" = "${ktv_cpus:-?}" ] &&
		! grep -q ' ok=0$' /tmp/ktv.highmap
}

ktv_main() {
	_warn0=$(ktv_warnings)
	if ! insmod "$KTV_MODS/ktv_target.ko"; then
		ktap_fail ktv_target_loaded "insmod ktv_target.ko failed"
		ktv_dmesg_tail
		return
	fi
	ktap_ok ktv_target_loaded

	if ! ktv_load_verifier; then
		ktap_fail verifier_loaded "insmod ktext_verify.ko failed"
		ktv_dmesg_tail
		rmmod ktv_target
		return
	fi
	ktap_ok verifier_loaded

	_t0=$(date +%s)
	if ! ktv_read_report || ! ktv_read_copies; then
		ktap_fail report_read "$(cat /tmp/ktv.err)"
		ktv_dmesg_tail
		rmmod ktext_verify
		rmmod ktv_target
		return
	fi
	ktap_diag "$(head -n 1 "$KTV_REPORT") (read in $(($(date +%s) - _t0)) s)"
	grep '^summary ' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "$l"; done
	if [ "$(ktv_summary image_span)" != 1 ]; then
		ktap_diag "the original image lies on $(ktv_summary image_span) nodes (node:pages): $(ktv_summary image_nodes)"
	fi
	grep ' cr3=' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "$l"; done
	grep ' region=' "$KTV_REPORT" | sed 's/ region=/ /' |
		while IFS= read -r l; do ktap_diag "$l"; done
	grep '^region=kernel' "$KTV_COPIES" | while IFS= read -r l; do ktap_diag "$l"; done

	ktap_check verifier_rows ktv_rows_present "$KTV_REPORT"
	ktap_check all_mapped ktv_rows_ok "$KTV_REPORT" 'f["unmapped"] == 0'
	# The node each CPU should use, which the verifier computes from the
	# kernel's SLIT, is the one the topology file gives (ktv_homes=, the
	# nearest node with memory of each node), unless nodes were booted
	# without a copy (16-degraded checks those).
	# Nodes that share a copy within kernel_replication_share= use the
	# nearest copy, not their own nearest memory: where that changes a
	# node's home, the homes are the guest's (ktv_nearest_copy), and the
	# host's cross-check of the SLIT is left to the rows without sharing.
	_homes=${ktv_homes:-}
	if [ "${ktv_expect:-0}" = 1 ] && [ -n "$_homes" ] && [ "$(ktv_share_distance)" -gt 10 ]; then
		_shared=$(for _n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
			ktv_nearest_copy "$_n"
		done | tr '\n' ':')
		_shared=${_shared%:}
		if [ "$_shared" != "$_homes" ]; then
			ktap_diag "homes with sharing within distance $(ktv_share_distance): $_shared (the topology's nearest memory: $_homes)"
			_homes=$_shared
		fi
	fi
	if [ -z "${ktv_nocopy:-}" ]; then
		# shellcheck disable=SC2016 # awk's own fields
		ktap_check expected_nodes_as_in_topology ktv_diag_run awk -v homes="$_homes" '
			BEGIN { n = split(homes, h, ":") }
			/^cpu=.* region=/ {
				delete f
				for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
				rows++
				if (!(f["node"] + 1 in h) || h[f["node"] + 1] != f["expect"]) {
					bad++; if (bad <= 3) print "expect is not the home " h[f["node"] + 1] ": " $0
				}
			}
			END { if (!n) print "no ktv_homes="; exit bad || !rows || !n }' "$KTV_REPORT"
	fi
	# ktv_span=N (the topology's command line): the image is placed
	# across a node boundary on purpose; the topology must still do that.
	if [ -n "${ktv_span:-}" ]; then
		ktap_check image_across_nodes_as_in_topology [ "$(ktv_summary image_span)" = "$ktv_span" ]
	fi
	if [ "${ktv_expect:-0}" = 1 ]; then
		ktap_check copies_identical ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0'
		ktap_check text_local_on_every_cpu ktv_rows_ok "$KTV_REPORT" "$KTV_LOCAL"
		if [ "${ktv_modules:-1}" = 0 ]; then
			ktap_check modules_one_shared_copy ktv_single_copy '^mod:'
		fi
	else
		# One copy: the bytes are compared with themselves, which only
		# shows that every page can be read.
		ktap_check all_readable ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0'
		ktap_check baseline_single_copy ktv_single_copy
		if [ "${ktv_nodes:-1}" -gt 1 ]; then
			ktap_check baseline_remote_off_the_image_node ktv_baseline_remote
		fi
	fi

	_t0=$(date +%s)
	_f0=$(cat "$KTV_DBG/ktv_target/flip")
	if echo 1000 >"$KTV_DBG/ktv_target/flip"; then
		ktap_diag "1000 flips in $(($(date +%s) - _t0)) s"
		ktap_check flips_counted [ "$(($(cat "$KTV_DBG/ktv_target/flip") - _f0))" = 1000 ]
		ktap_check check_after_flips ktv_check_on_every_node "key=0 call=a table_sum=1314225"
	else
		ktap_fail check_after_flips "writing flip failed"
	fi
	ktv_recheck flips
	# An odd number of flips leaves the other branch and call patched in.
	if echo 1 >"$KTV_DBG/ktv_target/flip"; then
		ktap_check check_after_odd_flip ktv_check_on_every_node "key=1 call=b table_sum=1314225"
		ktv_recheck odd_flip
	else
		ktap_fail check_after_odd_flip "writing flip failed"
	fi

	ktap_check highmap_alias_follows_cpa highmap_alias_ok

	ktap_check rmmod_clean sh -c 'rmmod ktext_verify && rmmod ktv_target'
	ktv_no_new_warnings "$_warn0"
}

ktv_main
