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
# says which rows do not (the first three). A row that lacks one of the
# counters fails: an awk field that is missing would compare as 0.
ktv_rows_ok() { ktv_diag_run ktv_rows_awk "$@"; }
ktv_rows_awk() {
	awk -v bad=0 -v n=0 '
	/^cpu=.* region=/ {
		n++
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (!("pages" in f && "local" in f && "remote" in f && "unmapped" in f &&
		      "mismatch" in f && "expect" in f)) {
			bad++; if (bad <= 3) print "incomplete row: " $0; next
		}
		if (!('"$2"')) { bad++; if (bad <= 3) print "bad row: " $0 }
	}
	END { if (!n) print "no rows"; exit bad != 0 || !n }' "$1"
}

# ktv_summary FIELD: that field of the report's summary line.
ktv_summary() {
	awk -v k="$1" '/^summary / {
		for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] }
	}' "$KTV_REPORT"
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
		n++
		if (!("original" in f && "pages" in f && "max_copies" in f) ||
		    f["original"] != f["pages"] || f["max_copies"] > 1) {
			print "more than the original: " $0; bad++
		}
	}
	END { if (n < 1) print "no region matches " re; exit bad != 0 || n < 1 }' "$KTV_COPIES" || return 1
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

# One copy on a multi-node machine, the verifier's positive control: when
# the image lies on one node, the CPUs whose node is another see every page
# of kernel text and rodata as remote, and those of the image's node every
# page as local (at least one CPU must be off the image's node); when it
# crosses a node boundary, some CPU sees part of it as remote. On every
# row, what is remote is what the one copy has off the CPU's node.
ktv_baseline_remote() { ktv_diag_run ktv_baseline_remote_awk; }
ktv_baseline_remote_awk() {
	awk -v img="$(ktv_summary image_node)" -v span="$(ktv_summary image_span)" '
	/^cpu=.* region=kernel_(text|rodata) / {
		delete f
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		delete h
		k = split(f["nodes"], hn, ",")
		for (i = 1; i <= k; i++) { split(hn[i], nv, ":"); h[nv[1]] = nv[2] }
		ok = f["pages"] > 0 && f["remote"] == f["pages"] - h[f["expect"]]
		if (span == 1 && f["expect"] != img) {
			far++
			ok = ok && f["remote"] == f["pages"]
		} else if (span == 1)
			ok = ok && f["local"] == f["pages"]
		if (f["remote"] > 0) seen++
		if (!ok) { bad++; if (bad <= 3) print "not the one-copy baseline: " $0 }
		n++
	}
	END {
		if (img == "" || span == "") { print "no image_node/image_span in the summary"; exit 1 }
		if (span == 1 && !far) { print "no CPU off the image node " img; exit 1 }
		if (!seen) { print "no CPU sees any page remote"; exit 1 }
		printf "image on %d node(s); %d rows, %d of CPUs off its node, %d with remote pages\n", span, n, far, seen
		exit bad != 0 || !n
	}' "$KTV_REPORT"
}

# ktv_nearest N NODES: the node of NODES nearest to node N by the SLIT in
# sysfs, the lowest id on a tie (N itself when it is one of them).
ktv_nearest() {
	_with=" $2 " _best='' _bestd='' _i=0
	read -r _dists <"/sys/devices/system/node/node$1/distance"
	for _d in $_dists; do
		case "$_with" in
		*" $_i "*)
			if [ -z "$_bestd" ] || [ "$_d" -lt "$_bestd" ]; then _best=$_i _bestd=$_d; fi ;;
		esac
		_i=$((_i + 1))
	done
	echo "$_best"
}

# ktv_distance A B: the SLIT distance from node A to node B.
ktv_distance() {
	read -r _dl <"/sys/devices/system/node/node$1/distance"
	# shellcheck disable=SC2086 # one word per node
	set -- "$2" $_dl
	shift $(($1 + 1))
	echo "$1"
}

# ktv_share_distance: a node with CPUs uses the copy of a node at this SLIT
# distance or nearer instead of getting its own: kernel_replication_share=
# on the command line, else the revision's default (the fact ktv_share,
# given where the revision has the parameter: the feature share_distance);
# 10, no sharing, for a revision without it.
ktv_share_distance() {
	_sd=${ktv_share:-10}
	if [ -n "${ktv_share:-}" ]; then
		_sp=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^kernel_replication_share=//p' | tail -n 1)
		[ -z "$_sp" ] || _sd=$_sp
	fi
	echo "$_sd"
}

# ktv_copy_nodes: the nodes that hold a copy of the kernel, the original
# included: the image's node (the status file's "original" line) and, for
# every node with CPUs in node order, its nearest node with memory, unless
# a node already counted is within ktv_share_distance of it; a node with
# memory and no CPU nearest to it (a CXL expander) has none. Nodes in
# ktv_nocopy (booted without a copy) have none either. Computed from sysfs,
# not taken from the series.
ktv_copy_nodes() {
	_mem=$(ktv_expand "$(cat /sys/devices/system/node/has_memory)")
	_share=$(ktv_share_distance)
	_copies=$(sed -n 's/^node=\([0-9]*\) replica=[0-9]* original.*/\1/p' \
		/sys/kernel/debug/kernel_replication/status 2>/dev/null)
	for _c in $(ktv_expand "$(cat /sys/devices/system/node/has_cpu)"); do
		_near=$(ktv_nearest "$_c" "$_copies")
		if [ -n "$_near" ] && [ "$(ktv_distance "$_c" "$_near")" -le "$_share" ]; then
			continue
		fi
		_copies="$_copies $(ktv_nearest "$_c" "$_mem")"
	done
	for _n in $_copies; do echo "$_n"; done | sort -un | while read -r _n; do
		case ",${ktv_nocopy:-}," in *",$_n,"*) ;; *) echo "$_n" ;; esac
	done | tr '\n' ' '
}

# ktv_nearest_copy N: the node whose copy node N should use: N itself when
# it holds one, else the nearest node that does.
ktv_nearest_copy() { ktv_nearest "$1" "$(ktv_copy_nodes)"; }

ktv_check_is() {
	_got=$(cat "$KTV_DBG/ktv_target/check" 2>&1)
	ktap_diag "check: $_got"
	[ "$_got" = "$1" ]
}

# ktv_node_cpus: "NODE CPU" for each online node that has CPUs, CPU its first.
ktv_node_cpus() {
	for _n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
		_c=$(ktv_expand "$(cat "/sys/devices/system/node/node$_n/cpulist")" | awk '{ print $1 }')
		[ -z "$_c" ] || echo "$_n $_c"
	done
}

# ktv_check_on_every_node EXPECTED: run the target's patched code on the
# first online CPU of every node (so every node's copy of it runs), each
# must give EXPECTED.
ktv_check_on_every_node() {
	_bad=0
	ktv_node_cpus >/tmp/ktv.nodecpus
	while read -r _n _c; do
		_got=$(taskset -c "$_c" cat "$KTV_DBG/ktv_target/check" 2>&1)
		ktap_diag "check on cpu $_c (node $_n): $_got"
		[ "$_got" = "$1" ] || _bad=1
	done </tmp/ktv.nodecpus
	return $_bad
}

# ktv_text_bytes ADDR: the 8 bytes of kernel text at ADDR (0x...), in hex,
# as the reading CPU sees them (the verifier's peek file); "?" if unreadable.
ktv_text_bytes() {
	{ echo "$1" >"$KTV_DBG/ktext_verify/peek" && cat "$KTV_DBG/ktext_verify/peek"; } 2>/dev/null ||
		echo "?"
}

# ktv_run_on_every_node CMD...: run CMD pinned to the first CPU of each
# online node, so that every node's copy of the code it reaches runs.
ktv_run_on_every_node() {
	for _c in $(ktv_node_cpus | awk '{ print $2 }'); do
		taskset -c "$_c" "$@" >/dev/null
	done
}

# The number of nodes that have CPUs.
ktv_node_count() { ktv_node_cpus | wc -l; }

# ktv_krepl_stat NAME: the value of NAME in the series' debugfs status.
ktv_krepl_stat() { sed -n "s/^$1 //p" /sys/kernel/debug/kernel_replication/status; }

# ktv_is_count VALUE: VALUE is a count (digits only): a status counter
# that is missing or empty is not 0.
ktv_is_count() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
}

# ktv_krepl_trim: free every node PGD that no CPU runs (the series'
# debugfs trim, as its shrinker does); nothing on a kernel without it.
ktv_krepl_trim() {
	[ ! -e /sys/kernel/debug/kernel_replication/trim ] ||
		echo 1 >/sys/kernel/debug/kernel_replication/trim
}

# ktv_cpu_replicas: how many copies the nodes with CPUs use between them
# (each node its nearest copy, ktv_nearest_copy): with 2 or more, a
# process that runs on every node needs node PGDs (one per copy but the
# one of the node it starts on); with 1, nothing ever builds one.
ktv_cpu_replicas() {
	ktv_node_cpus | while read -r _n _c; do ktv_nearest_copy "$_n"; done | sort -u | wc -l
}

# KTV_PGD_ALLOC: the series' function that allocates the pages of an mm's
# node PGDs (series-v4, patch 26 on: krepl_mm_build_pgd()), as it appears
# in page_owner's allocation stacks.
KTV_PGD_ALLOC=krepl_mm_build_pgd

# ktv_owner_pgd_pages: the pages allocated now (2^order per allocation)
# whose allocation stack holds KTV_PGD_ALLOC, by page_owner
# (/sys/kernel/debug/page_owner, booted with page_owner=on): the page
# allocator's own record, not the series' counter. Fails (prints nothing)
# when page_owner cannot be read, whole, or lists no page at all. Read by
# cat: page_owner gives a record per read() and fails one that does not
# fit in the reader's buffer (ENOMEM); cat's 4 KiB fits any.
ktv_owner_pgd_pages() {
	[ -r "$KTV_DBG/page_owner" ] || return 1
	{ cat "$KTV_DBG/page_owner" || echo "ktv: cat failed"; } | awk -v fn="$KTV_PGD_ALLOC" '
	function end_record() {
		if (hit) { p = 1; for (i = 0; i < order; i++) p *= 2; pages += p }
		hit = 0
	}
	/^Page allocated via order / {
		end_record()
		n++
		order = $5
		sub(/,.*/, "", order)
		order += 0
		next
	}
	# A stack line: " krepl_mm_build_pgd+0x1d3/0x4f0" (or a .constprop.0 clone).
	$1 ~ ("^" fn "(\\.[a-z]+\\.[0-9]+)*\\+0x") { hit = 1 }
	/^ktv: cat failed$/ { failed = 1 }
	END { end_record(); if (!n || failed) exit 1; print pages + 0 }'
}

# ktv_pgd_pages_owned LABEL: the series' mm_pgd_pages against
# ktv_owner_pgd_pages, read while the counter holds still (the same before
# and after page_owner's scan; up to 3 tries): true when they are equal.
# Prints one line for the diagnostics. Run it pinned to one CPU (taskset):
# a process that stays on one node builds no node PGD, so the scan's own
# processes change neither.
ktv_pgd_pages_owned() {
	_po_try=0
	while :; do
		_po_c0=$(ktv_krepl_stat mm_pgd_pages)
		if ! _po_o=$(ktv_owner_pgd_pages); then
			echo "$1: page_owner cannot be read ($KTV_DBG/page_owner; booted with page_owner=on?)"
			return 1
		fi
		_po_c1=$(ktv_krepl_stat mm_pgd_pages)
		if ! ktv_is_count "$_po_c0" || ! ktv_is_count "$_po_c1"; then
			echo "$1: no mm_pgd_pages count in the status file ('$_po_c0')"
			return 1
		fi
		[ "$_po_c0" != "$_po_c1" ] || break
		_po_try=$((_po_try + 1))
		if [ $_po_try -ge 3 ]; then
			echo "$1: mm_pgd_pages changed during each of 3 page_owner scans (last $_po_c0 -> $_po_c1)"
			return 1
		fi
	done
	echo "$1: mm_pgd_pages $_po_c0, page_owner $_po_o pages allocated by $KTV_PGD_ALLOC()"
	[ "$_po_o" = "$_po_c0" ]
}

# ktv_settle: run a process on every online CPU. An idle CPU keeps the
# last mm it ran (lazy TLB), and its reference, until it runs another:
# after this, no exited process's mm (nor its node PGDs) is still held.
ktv_settle() {
	for _c in $(ktv_expand "$(cat /sys/devices/system/cpu/online)"); do
		taskset -c "$_c" /bin/true
	done
}

# ktv_wait_optimized WHAT [SECS]: wait up to SECS (default 30) for the
# kprobe whose line in the kprobes list holds WHAT (e.g. "vfs_read+0x5")
# to be [OPTIMIZED]: rewritten into a jump by the kprobe optimizer (a
# delayed work, 5 jiffies, then an RCU-tasks grace period: slow under
# TCG). Fails, saying why, on a timeout, when the kernel has no optimised
# kprobes or debug.kprobes-optimization is 0, when no probe matches, and
# when the probe is an ftrace hook (never a jump).
ktv_wait_optimized() {
	if [ ! -e /proc/sys/debug/kprobes-optimization ]; then
		ktap_diag "no /proc/sys/debug/kprobes-optimization: no optimised kprobes (CONFIG_OPTPROBES)"
		return 1
	fi
	if [ "$(cat /proc/sys/debug/kprobes-optimization)" != 1 ]; then
		ktap_diag "debug.kprobes-optimization is $(cat /proc/sys/debug/kprobes-optimization), not 1"
		return 1
	fi
	_wo_end=$((${2:-30} * 10))
	_wo_i=0
	while :; do
		_wo_l=$(grep -F "$1" "$KTV_DBG/kprobes/list")
		case $_wo_l in
		'') ktap_diag "no kprobe on $1 in the kprobes list" && return 1 ;;
		*FTRACE*) ktap_diag "the kprobe on $1 is an ftrace hook, never a jump: $_wo_l" && return 1 ;;
		*OPTIMIZED*)
			# The flag is set when the probe is queued for the
			# optimizer, which writes the jump (0xe9) some jiffies
			# later: wait for the jump itself, where the verifier can
			# read the bytes (the meter suite does not load it).
			_wo_b=$(ktv_text_bytes "0x${_wo_l%% *}")
			case $_wo_b in
			e9*) return 0 ;;
			'?')
				ktap_diag "the kprobe on $1 is flagged optimised; its bytes cannot be read through the verifier's peek: waiting 1 s for the optimizer"
				sleep 1
				return 0
				;;
			esac
			;;
		esac
		[ $_wo_i -lt "$_wo_end" ] || break
		usleep 100000
		_wo_i=$((_wo_i + 1))
	done
	ktap_diag "the kprobe on $1 was not optimised within ${2:-30} s: $_wo_l"
	return 1
}

# ktv_probe_point [MOD:]FUNC: [MOD:]FUNC+OFFSET just past FUNC's call to
# __fentry__ (5 bytes, at the address ftrace lists; tracefs mounted): an
# instruction boundary, where a kprobe is not an ftrace hook but needs an
# instruction slot. Only the low 32 bits of the addresses are subtracted
# (sh arithmetic is signed).
ktv_probe_point() {
	_fn=${1#*:}
	_f=$(awk -v f="$_fn" '$2 == f { print $1; exit }' /sys/kernel/tracing/available_filter_functions_addrs)
	_a=$(awk -v f="$_fn" '$3 == f { print $1; exit }' /proc/kallsyms)
	[ -n "$_f" ] && [ -n "$_a" ] || return 1
	_f=${_f#ffffffff} _a=${_a#ffffffff}
	echo "$1+$((0x$_f - 0x$_a + 5))"
}

# ktv_warnings: how many WARNING/BUG/Oops lines the kernel log holds.
ktv_warnings() { dmesg | grep -cE 'WARNING:|BUG:|Oops'; }

# ktv_no_new_warnings COUNT: test no_kernel_warnings, ok when the kernel
# log still holds COUNT such lines (ktv_warnings before the suite ran);
# else fail and show the last three.
ktv_no_new_warnings() {
	_w=$(ktv_warnings)
	if [ "$_w" = "$1" ]; then
		ktap_ok no_kernel_warnings
	else
		ktap_fail no_kernel_warnings "$((_w - $1)) new WARNING/BUG/Oops lines"
		dmesg | grep -E 'WARNING:|BUG:|Oops' | tail -n 3 | while IFS= read -r l; do ktap_diag "dmesg: $l"; done
	fi
}

# ktv_load: insmod the target module and the verifier; false if either fails.
# always_copy: compare the bytes even of pages mapped to the original, so
# that the read path is tested on the base kernel too.
ktv_load() {
	insmod "$KTV_MODS/ktv_target.ko" && ktv_load_verifier
}
# ktv_load_tested: ktv_load as the suite's test verifier_loaded (on
# failure with the kernel log's tail); false if it failed.
ktv_load_tested() {
	if ! ktv_load; then
		ktap_fail verifier_loaded "insmod failed"
		ktv_dmesg_tail
		return 1
	fi
	ktap_ok verifier_loaded
}

# always_copy: compare the bytes even of pages mapped to the original, so
# that the read path is tested on the base kernel too. ktv_nocopy=N[,N]
# (command line): nodes booted without a copy (fault injection), whose
# CPUs the verifier then expects on the nearest node that has one.
ktv_load_verifier() {
	# The verifier expects a copy on every node with memory but those it
	# is told have none: those booted without one (ktv_nocopy), and on a
	# replicating kernel every node with memory that ktv_copy_nodes does
	# not count (no CPU nearest to it, or sharing a copy within
	# ktv_share_distance).
	_nc=${ktv_nocopy:-}
	if [ "${ktv_expect:-0}" = 1 ]; then
		_cn=" $(ktv_copy_nodes) "
		for _m in $(ktv_expand "$(cat /sys/devices/system/node/has_memory)"); do
			case "$_cn" in *" $_m "*) ;; *) _nc=${_nc:+$_nc,}$_m ;; esac
		done
	fi
	insmod "$KTV_MODS/ktext_verify.ko" stext="$(ktv_sym _stext)" \
		etext="$(ktv_sym _etext)" srodata="$(ktv_sym __start_rodata)" \
		erodata="$(ktv_sym __end_rodata)" sdata="$(ktv_sym _sdata)" \
		kend="$(ktv_sym _end)" always_copy=1 \
		${_nc:+no_copy="$_nc"}
}

# ktv_verifier_borrow: load the verifier unless something loaded it
# already, and say in KTV_BORROWED whether this caller did (1: it must
# ktv_verifier_return when done, so that the next suite loads its own). A
# failed load leaves a diagnostic and KTV_BORROWED=0; the caller's check
# of the file it needs then fails.
ktv_verifier_borrow() {
	KTV_BORROWED=0
	[ ! -d /sys/module/ktext_verify ] || return 0
	if ktv_load_verifier; then
		KTV_BORROWED=1
	else
		ktap_diag "insmod ktext_verify.ko failed"
		ktv_dmesg_tail
	fi
}

ktv_verifier_return() {
	[ "${KTV_BORROWED:-0}" = 0 ] || rmmod ktext_verify
	KTV_BORROWED=0
}

# ktv_kmemleak_scan: scan twice (an object must look unreferenced twice to
# be reported), keep the report in /tmp/kmemleak.txt, print its leak count.
# Fails (prints nothing) when kmemleak cannot scan: it registers its debugfs
# file even when it disabled itself, and a scan then fails with EBUSY.
ktv_kmemleak_scan() {
	if dmesg | grep -q 'kmemleak: Kernel memory leak detector disabled'; then
		ktap_diag "kmemleak disabled itself: $(dmesg | grep 'kmemleak:' | tail -n 2 | tr '\n' ' ')"
		return 1
	fi
	echo scan >/sys/kernel/debug/kmemleak || return 1
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak || return 1
	cat /sys/kernel/debug/kmemleak >/tmp/kmemleak.txt || return 1
	grep -c 'unreferenced object' /tmp/kmemleak.txt
}

# ktv_recheck WHAT: after WHAT, on a replication kernel every copy is
# identical to the original and every page local; without replication,
# every page is still mapped and readable, and there is still one copy.
ktv_recheck() {
	if ! ktv_read_report; then
		ktap_fail "identical_after_$1" "$(cat /tmp/ktv.err)"
		return
	fi
	grep '^summary ' "$KTV_REPORT" | while IFS= read -r l; do ktap_diag "after $1: $l"; done
	if [ "${ktv_expect:-0}" = 1 ]; then
		ktap_check "identical_after_$1" ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0 && f["unmapped"] == 0'
		ktap_check "local_after_$1" ktv_rows_ok "$KTV_REPORT" "$KTV_LOCAL"
	else
		ktap_check "readable_after_$1" ktv_rows_ok "$KTV_REPORT" 'f["mismatch"] == 0 && f["unmapped"] == 0'
		if ktv_read_copies; then
			ktap_check "one_copy_after_$1" ktv_single_copy
		else
			ktap_fail "one_copy_after_$1" "$(cat /tmp/ktv.err)"
		fi
	fi
}
