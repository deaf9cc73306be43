# shellcheck shell=sh
# Helpers for the guest tests that use the ktext_verify module: loading it,
# reading its report and asserting on its rows. Sourced after ktap.sh.

KTV_MODS=/lib/modules/test
KTV_DBG=/sys/kernel/debug
KTV_REPORT=/tmp/ktv.report
KTV_COPIES=/tmp/ktv.copies
KTV_REGIONS="kernel_text kernel_rodata mod:ktv_target:text mod:ktv_target:rodata
mod:ktext_verify:text mod:ktext_verify:rodata"

ktv_sym() { awk -v s="$1" '$3 == s { print "0x" $1; exit }' /proc/kallsyms; }

ktv_dmesg_tail() {
	dmesg | tail -n 8 | while IFS= read -r l; do ktap_diag "dmesg: $l"; done
}

# "0-2,4" -> "0 1 2 4"
ktv_expand() {
	echo "$1" | tr ',' '\n' |
		awk -F- '{ e = (NF == 2) ? $2 : $1; for (i = $1; i <= e; i++) printf "%d ", i }'
}

# ktv_diag_run CMD...: run CMD, its output as diagnostics, its status.
ktv_diag_run() {
	_out=$("$@")
	_rc=$?
	[ -z "$_out" ] || printf '%s\n' "$_out" | while IFS= read -r l; do ktap_diag "$l"; done
	return $_rc
}

# ktv_rows_ok FILE AWK-CONDITION: every row (cpu x region) satisfies it;
# says which rows do not (the first three).
ktv_rows_ok() { ktv_diag_run ktv_rows_awk "$@"; }
ktv_rows_awk() {
	awk -v bad=0 -v n=0 '
	/^cpu=.* region=/ {
		n++
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (!('"$2"')) { bad++; if (bad <= 3) print "bad row: " $0 }
	}
	END { if (!n) print "no rows"; exit bad != 0 || !n }' "$1"
}

# Every online CPU has a row with pages > 0 for every region we expect.
ktv_rows_present() {
	_ok=0
	for c in $(ktv_expand "$(cat /sys/devices/system/cpu/online)"); do
		for r in $KTV_REGIONS; do
			if ! grep -q "^cpu=$c .* region=$r pages=[1-9]" "$1"; then
				ktap_diag "no row for cpu=$c region=$r"
				_ok=1
			fi
		done
	done
	grep -q '^summary ' "$1" || { ktap_diag "no summary line"; _ok=1; }
	return $_ok
}

# What "local" means for a row on a replication kernel. ktv_modules=0 on
# the command line (the 6.1 backport replicates the kernel image only):
# module rows are exempt, and checked instead to be one copy that every
# CPU shares (ktv_single_copy '^mod:').
KTV_LOCAL='f["remote"] == 0'
if [ "${ktv_modules:-1}" = 0 ]; then
	KTV_LOCAL='f["remote"] == 0 || f["region"] ~ /^mod:/'
fi

ktv_read_report() {
	cat "$KTV_DBG/ktext_verify/report" >"$KTV_REPORT" 2>/tmp/ktv.err &&
		grep -q '^summary ' "$KTV_REPORT"
}

ktv_read_copies() {
	cat "$KTV_DBG/ktext_verify/copies" >"$KTV_COPIES" 2>/tmp/ktv.err
}

# Base kernel: for each region (matching REGEX, default all), every CPU
# maps every page to the kernel's own page (one copy), so all CPUs have the
# same node histogram.
ktv_single_copy() { ktv_diag_run ktv_single_copy_awk "${1:-.}"; }
ktv_single_copy_awk() {
	awk -v re="$1" '/^region=/ {
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["region"] !~ re) next
		if (f["original"] != f["pages"] || f["max_copies"] > 1) {
			print "more than the original: " $0; bad++
		}
	}
	END { exit bad != 0 }' "$KTV_COPIES" || return 1
	awk -v re="$1" '/^cpu=.* region=/ {
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		r = f["region"]
		if (r !~ re) next
		if (!(r in h)) { h[r] = f["nodes"]; next }
		if (h[r] != f["nodes"]) { print "differs: " $0; bad++ }
	}
	END { exit bad != 0 }' "$KTV_REPORT"
}

# Multi-node base kernel: the CPUs whose node is not the one that holds the
# image see all of the kernel text as remote.
ktv_diag_remote() {
	awk '/^cpu=.* region=kernel_(text|rodata) / {
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["remote"] == f["pages"] && f["pages"] > 0) all[f["region"]] = all[f["region"]] " " f["cpu"]
	}
	END { for (r in all) printf "%s remote=all on cpus%s\n", r, all[r] }' "$KTV_REPORT" |
		while IFS= read -r l; do ktap_diag "$l"; done
}

ktv_check_is() {
	_got=$(cat "$KTV_DBG/ktv_target/check" 2>&1)
	ktap_diag "check: $_got"
	[ "$_got" = "$1" ]
}

# ktv_load: insmod the target module and the verifier; false if either fails.
# always_copy: compare the bytes even of pages mapped to the original, so
# that the read path is tested on the base kernel too.
ktv_load() {
	insmod "$KTV_MODS/ktv_target.ko" && ktv_load_verifier
}
# always_copy: compare the bytes even of pages mapped to the original, so
# that the read path is tested on the base kernel too. ktv_nocopy=N[,N]
# (command line): nodes booted without a copy (fault injection), whose
# CPUs the verifier then expects on the nearest node that has one.
ktv_load_verifier() {
	insmod "$KTV_MODS/ktext_verify.ko" stext="$(ktv_sym _stext)" \
		etext="$(ktv_sym _etext)" srodata="$(ktv_sym __start_rodata)" \
		erodata="$(ktv_sym __end_rodata)" always_copy=1 \
		${ktv_nocopy:+no_copy="$ktv_nocopy"}
}

# ktv_kmemleak_scan: scan twice (an object must look unreferenced twice to
# be reported), keep the report in /tmp/kmemleak.txt, print its leak count.
ktv_kmemleak_scan() {
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >/tmp/kmemleak.txt
	grep -c 'unreferenced object' /tmp/kmemleak.txt
}

# ktv_recheck WHAT: after WHAT, every copy is identical and, on a
# replication kernel, every page local.
ktv_recheck() {
	if ! ktv_read_report; then
		ktap_fail "identical_after_$1" "$(cat /tmp/ktv.err)"
		return
	fi
	grep '^summary ' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "after $1: $l"; done
	ktap_check "identical_after_$1" ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0 && f["unmapped"] == 0'
	if [ "${ktv_expect:-0}" = 1 ]; then
		ktap_check "local_after_$1" ktv_rows_ok "$KTV_REPORT" "$KTV_LOCAL"
	fi
}
