# shellcheck shell=sh
# ktext_verify: what each CPU's own page table maps the kernel text and
# rodata (of the image and of the modules ktv_target and ktext_verify) to,
# and whether the bytes are those of the original. With replication every
# CPU must see its node's copy; on the base kernel every CPU sees the one
# original copy.

# shellcheck source=../ktv.sh
. /lib/ktv.sh

ktv_main() {
	_warn0=$(dmesg | grep -cE 'WARNING:|BUG:|Oops')
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
	awk '/^summary / {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["spanned"] > 0)
			printf "the image crosses a node boundary: CPUs of its node %d map %d page(s) of the original on another node\n", f["image_node"], f["spanned"]
	}' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "$l"; done
	grep ' cr3=' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "$l"; done
	grep ' region=' "$KTV_REPORT" | sed 's/ region=/ /' |
		while IFS= read -r l; do ktap_diag "$l"; done
	grep '^region=kernel' "$KTV_COPIES" | while IFS= read -r l; do ktap_diag "$l"; done

	ktap_check verifier_rows ktv_rows_present "$KTV_REPORT"
	ktap_check all_mapped ktv_rows_ok "$KTV_REPORT" 'f["unmapped"] == 0'
	ktap_check copies_identical ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0'
	if [ "${ktv_expect:-0}" = 1 ]; then
		ktap_check text_local_on_every_cpu ktv_rows_ok "$KTV_REPORT" "$KTV_LOCAL"
		if [ "${ktv_modules:-1}" = 0 ]; then
			ktap_check modules_one_shared_copy ktv_single_copy '^mod:'
		fi
	else
		ktap_skip text_local_on_every_cpu "base kernel: no replication"
		ktap_check baseline_single_copy ktv_single_copy
		if [ "${ktv_nodes:-1}" -gt 1 ]; then ktv_diag_remote; fi
	fi

	_t0=$(date +%s)
	if echo 1000 >"$KTV_DBG/ktv_target/flip"; then
		ktap_diag "1000 flips in $(($(date +%s) - _t0)) s"
		ktap_check check_after_flips ktv_check_is "key=0 call=a table_sum=1314225"
	else
		ktap_fail check_after_flips "writing flip failed"
	fi
	if ktv_read_report; then
		grep '^summary ' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "after flips: $l"; done
		ktap_check copies_identical_after_flips ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0'
	else
		ktap_fail copies_identical_after_flips "$(cat /tmp/ktv.err)"
	fi
	# An odd number of flips leaves the other branch and call patched in.
	if echo 1 >"$KTV_DBG/ktv_target/flip" && ktv_read_report; then
		ktap_check check_after_odd_flip ktv_check_is "key=1 call=b table_sum=1314225"
		ktap_check copies_identical_after_odd_flip ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0'
	else
		ktap_fail check_after_odd_flip "flip or report failed"
	fi

	ktap_check rmmod_clean sh -c 'rmmod ktext_verify && rmmod ktv_target'
	_warn1=$(dmesg | grep -cE 'WARNING:|BUG:|Oops')
	if [ "$_warn1" = "$_warn0" ]; then
		ktap_ok no_kernel_warnings
	else
		ktap_fail no_kernel_warnings "$((_warn1 - _warn0)) new WARNING/BUG/Oops lines"
		dmesg | grep -E 'WARNING:|BUG:|Oops' | tail -n 3 | while IFS= read -r l; do ktap_diag "dmesg: $l"; done
	fi
}

ktv_main
