#!/bin/bash
# The TLB check (make tlb, which builds REV first): boot REV (CONFIG,
# default smoke) on 2node (TLB_TOPO; APPEND adds kernel parameters, e.g.
# pti=off, with TLB_NAME=pti-off to keep the run apart) under the meter
# with its TLB model (tlb=on: qemu-smoke/plugin/README.md; data=on and
# rodata= so that the kernel's rodata reads are checked too), running the
# guest's tests (TLB_SUITES: the scripts, default those that patch text,
# load and free modules and BPF, and where the revision has lazy node
# PGDs the one that builds them and runs foreign windows), and fail on
# any stale translation: a kernel instruction fetch or rodata read whose
# page an x86 TLB was allowed to keep mapped to a frame the page tables no
# longer give. Also fail when the model could not follow the guest (a
# register write it missed, an operand it could not decode, a kernel block
# its page walk could not map, or a walk that QEMU's own translation
# contradicts), or when it saw nothing (no iTLB fill on a vCPU).
#
#   tlb.sh --assert locality.txt [System.map expect]
# only judges a report (no build, no boot): checks/fixtures-test.sh runs it
# on checks/fixtures/tlb/good*, which must pass, and bad-*, which must
# fail (a .txt report, or a directory with report.txt, System.map and
# expect).
#
# What the model shows is what the architecture allows hardware to do,
# not what a given CPU does.
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/../scripts/boot-lib.sh"
. "$(dirname "$0")/../scripts/expect.sh"

# tlb_assert REPORT [SYSTEM_MAP EXPECT]: print what is wrong with REPORT;
# fail if anything is. EXPECT (a revision's series-vN/expect) may list
#   tlb_allow_local START_SYMBOL END_SYMBOL REASON...
# ranges where a CPU may keep its own node's copy of a page while its page
# tables give another node's copy with the same bytes: a known property
# of that revision, named in its expect file with the reason. Those are
# printed as known, not failed. SYSTEM_MAP resolves the symbols (the boot
# must be nokaslr). A stale translation to other bytes, or to another
# node's frame than the CPU's own, always fails: the first is wrong code,
# the second remote fetches that no flush ends.
tlb_assert() {
	local report=$1 map=${2:-} expect=${3:-} ranges=''
	[ -f "$report" ] || die "tlb_assert: no $report"
	if [ -n "$expect" ]; then
		[ -f "$map" ] || die "tlb_assert: no System.map $map"
		[ -f "$expect" ] || die "tlb_assert: no expect file $expect"
		ranges=$(awk 'NR == FNR { if ($1 == "tlb_allow_local") want[$2] = want[$3] = 1; next }
			($3 in want) { addr[$3] = $1 }
			END { for (s in want) if (!(s in addr)) { print "tlb_assert: " s ": not in System.map" > "/dev/stderr"; exit 1 } }' \
			"$expect" "$map") || return 1
		ranges=$(awk 'NR == FNR { a[$3] = $1; next }
			$1 == "tlb_allow_local" { r = ""; for (i = 4; i <= NF; i++) r = r " " $i
				print a[$2], a[$3], $2 "-" $3 ":" r }' "$map" "$expect")
	fi
	RANGES=$ranges awk '
	# What is wrong first, then the stale translations (listed).
	function bad(msg) { errs++; msgs[errs] = FILENAME ": " msg }
	function field(name,   i) {
		for (i = 1; i <= NF; i++)
			if (index($i, name "=") == 1)
				return substr($i, length(name) + 2)
		return ""
	}
	# Hex string (no 0x) to a comparable fixed-width string.
	function key(h) { sub(/^0x/, "", h); h = tolower(h); while (length(h) < 16) h = "0" h; return h }
	BEGIN {
		n = split(ENVIRON["RANGES"], lines, "\n")
		for (i = 1; i <= n; i++) {
			if (lines[i] == "") continue
			split(lines[i], f, " ")
			nr++; lo[nr] = key(f[1]); hi[nr] = key(f[2])
			why[nr] = substr(lines[i], index(lines[i], f[3]))
		}
	}
	/^locality / {
		header = 1
		if (field("tlb") != "on") bad("the meter ran without tlb=on")
		rodata = field("rodata") != "off"
	}
	/^tlb vcpu=/ {
		vcpus++
		v = field("vcpu")
		if (field("itlb_walks") + 0 == 0) bad("vCPU " v ": no iTLB fill: the model saw no kernel fetch")
		if (field("no_walk") + 0) bad("vCPU " v ": " field("no_walk") " kernel block(s) the page walk could not map")
		if (field("qemu_mismatch") + 0) bad("vCPU " v ": " field("qemu_mismatch") " walk(s) that QEMU'"'"'s translation contradicts")
		flushes += field("cr3_flush") + field("cr4_global_flush")
		dwalks += field("dtlb_walks")
	}
	/^tlb entries=/ {
		summary = 1
		if (field("reg_mismatch") + 0) bad(field("reg_mismatch") " CR3/CR4 write(s) the model missed")
		if (field("undecoded") + 0) bad(field("undecoded") " INVLPG/INVPCID operand(s) not decoded")
		total = field("stale_translations") + 0
	}
	/^stale kind=/ {
		listed++
		va = key(field("vaddr"))
		for (i = 1; i <= nr; i++)
			if (field("content") == "same" && field("cpu_node") != "" &&
			    field("tlb_node") == field("cpu_node") && va >= lo[i] && va < hi[i]) break
		if (i <= nr) { listing[listed] = "  known (" why[i] "): " $0; next }
		unknown++
		listing[listed] = "  " $0
	}
	/^end$/ { end = 1 }
	END {
		if (!header) bad("no meter header")
		if (!summary) bad("no TLB summary line: not a tlb=on report, or cut short")
		if (!vcpus) bad("no tlb vcpu= line")
		if (vcpus && !flushes) bad("no CR3 or CR4 flush counted on any vCPU")
		if (vcpus && rodata && !dwalks) bad("rodata= was given, and no rodata read went through the dTLB model")
		if (!end) bad("the report has no end line: cut short")
		if (total > listed) unknown += total - listed
		if (unknown) bad(unknown " stale translation(s): an x86 TLB may keep each page listed mapped to a frame the page tables no longer give")
		for (i = 1; i <= errs; i++) print msgs[i]
		for (i = 1; i <= listed; i++) print listing[i]
		exit errs > 0
	}' "$report"
}

if [ "${1:-}" = --assert ]; then
	[ $# = 2 ] || [ $# = 4 ] || die "usage: tlb.sh --assert locality.txt [System.map expect]"
	shift
	tlb_assert "$@"
	exit
fi
[ $# = 0 ] || die "usage: tlb.sh [--assert locality.txt [System.map expect]]"

no_dry_run
need make gcc python3 qemu-system-x86_64
[ -f "$BUILD/initramfs.cpio.gz" ] || die "no build of $REV with $CONFIG: make tlb builds it"
plugin_dir="$WORK/plugin"
make -s -C "$REPO/qemu-smoke/plugin" O="$plugin_dir" || die "building the meter failed"
topo=${TLB_TOPO:-2node}
name=tlb-$topo${TLB_NAME:+-$TLB_NAME}${BUILD_SUFFIX:-}
out="$WORK/results/$BASE-$REV-$CONFIG/$name"
# The text writers, code memory, and with lazy node PGDs their builds
# and foreign windows (17-mm-pgds).
suites=10-boot,30-patching,32-code-copies
INV_EXPECT=$EXPECT_FILE
! has_feature node_pgds || suites=10-boot,17-mm-pgds,30-patching,32-code-copies
suites=${TLB_SUITES:-$suites}
# As the matrices do: where the configuration replicates, the guest
# asserts that it does.
# The kernel's reads of its rodata go through the model's dTLB too: the
# range from System.map (the boot is nokaslr).
range=$(awk '$3 == "__start_rodata" { s = $1 } $3 == "__end_rodata" { e = $1 }
	END { if (s && e) print s "-" e }' "$BUILD/System.map")
[ -n "$range" ] || die "no __start_rodata/__end_rodata in $BUILD/System.map"
# TLB_SHAPE=ENTRIES:WAYS: a smaller model TLB (default 4096:8). Hardware
# may drop an entry at any time; a small TLB refills often, which shows
# translations filled at the wrong moment (a mutant's missing flush).
opts=(--meter "$plugin_dir/locality.so"
	--meter-args "tlb=on,data=on,rodata=$range${TLB_SHAPE:+,tlb_shape=$TLB_SHAPE}")
! expects_replication || opts+=(--expect-repl)
# The label names the revision, for qemu-smoke/expected-skips' rules.
TIMEOUT=${TLB_TIMEOUT:-900} boot_guest "$name" "$topo" "$BASE-$REV-$CONFIG-tlb" \
	"nokaslr ktv_only=$suites" \
	"${opts[@]}" ||
	die "the guest failed under the TLB model: $out"
expect=()
[ "$REV" = base ] || expect=("$BUILD/System.map" "$EXPECT_FILE")
tlb_assert "$out/locality.txt" "${expect[@]}" || die "stale or unfollowed translations: $out/locality.txt"
say "no stale translation outside the revision's known ones: $out/locality.txt"
