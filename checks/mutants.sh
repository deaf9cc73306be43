#!/bin/bash
# Show that each fix of REV has a test that fails without it: for each
# mutant, series-vN/mutants/NAME.patch (a change to the work tree that
# undoes one fix), apply it, build REV with CONFIG (default smoke) apart
# (BUILD_SUFFIX=-mutant-NAME: ccache makes it a few minutes), put the tree
# back, and run the mutant's check, which must fail, for the reason the
# mutant names. A mutant that passes fails this script. MUTANTS=NAME,...
# picks some; MUTANT_DIR=tlb-mutants runs series-vN/tlb-mutants
# (checks/tlb-mutants.sh).
#
# Header lines of a mutant, before its diff:
#   # undoes: TEXT            what the mutant takes back (printed)
#   # check: tlb              checks/tlb.sh must fail (no header: the
#                             caller's MUTANT_CHECK, tlb for tlb-mutants)
#   # check: boot TOPO        the mutant boots the guest suites on
#                             qemu-smoke/topologies/TOPO.topo: the row must
#                             fail, and each must-fail test be "not ok"
#   # check: static           checks/sparse-w1.sh on the mutant tree must fail
#   # must-fail: SUITE.TEST   (boot) a subtest that must be reported not ok
#   # verdict: WORD           (boot) QEMU's verdict (qemu.verdict) must
#                             start with WORD (HUNG), when the mutant
#                             stops the suite
#   # append: WORDS           boot with these kernel parameters
#   # tlb-shape: E:W          (tlb) the model with a smaller TLB
#   # tlb-topo: TOPO          (tlb) on qemu-smoke/topologies/TOPO.topo
#                             (default: the TLB check's, 2node)
# For tlb, the unmutated build is checked first with the same parameters
# and shape (once per set): a mutant whose baseline fails too would show
# nothing, and fails this script. A boot mutant's baseline is make smoke's.
. "$(dirname "$0")/../scripts/lib.sh"
. "$REPO/scripts/boot-lib.sh"
. "$REPO/scripts/expect.sh"
no_dry_run
need git make gcc qemu-system-x86_64

kind=${MUTANT_DIR:-mutants}
dir=$SERIES_DIR/$kind
[ -d "$dir" ] || die "$REV has no mutants in $dir"
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV'"
tree_dirty && die "$TREE has changes: export or drop them first (a mutant is applied there)"

revert() { git -C "$TREE" checkout -q -- . && git -C "$TREE" clean -qfd; }
trap revert EXIT
failed=0 seen=0 baselines=' '

# header PATCH KEY: the value of the mutant's '# KEY: ' lines, one a line.
header() { sed -n "/^diff /q; s/^# $2: //p" "$1"; }

# tlb_baseline APPEND-WORDS: the unmutated build passes the check with them.
tlb_baseline() {
	local key=${1// /_}${TLB_SHAPE:+-tlb$TLB_SHAPE}${TLB_TOPO:+-$TLB_TOPO}
	case "$baselines" in *" $key=ok "*) return 0 ;; *" $key=fail "*) return 1 ;; esac
	if APPEND="${APPEND:-} $1" TLB_NAME="baseline${key:+-$key}" "$REPO/checks/tlb.sh"; then
		baselines="$baselines$key=ok "
		return 0
	fi
	baselines="$baselines$key=fail "
	return 1
}

# not_ok KTAP SUITE.TEST: the boot's KTAP log reports the subtest not ok.
not_ok() {
	awk -v suite="${2%%.*}" -v test="${2#*.}" '
		{ sub(/\r$/, "") }
		/^    # Subtest: / { cur = $3 }
		cur == suite && $1 == "not" && $2 == "ok" && $4 == test { found = 1 }
		END { exit !found }' "$1"
}

# boot_check NAME PATCH TOPO: the mutant's row fails, as the mutant says.
boot_check() {
	local name=$1 patch=$2 topo=$3 out verdict t want ok=1 opts=()
	BUILD=$WORK/build/$BASE-$REV-$CONFIG-mutant-$name
	out=$WORK/results/$BASE-$REV-$CONFIG/mutant-$name-$topo
	# As the matrix boots REV: the mutant must fail where REV passes.
	! expects_replication || opts+=(--expect-repl)
	if TIMEOUT=${TIMEOUT:-240} APPEND="${APPEND:-} $(header "$patch" append)" \
		boot_guest "mutant-$name-$topo" "$topo" "$BASE-$REV-$CONFIG" "" \
		--out "$out" "${opts[@]}"; then
		say "FAIL: mutant $name passed its $topo row: no test sees what it undoes"
		return 1
	fi
	verdict=$(cat "$out/qemu.verdict" 2>/dev/null || true)
	want=$(header "$patch" verdict)
	case "$verdict" in
	"$want"*) ;;
	*)
		say "FAIL: mutant $name: QEMU's verdict '${verdict:-none}', not $want"
		ok=0
		;;
	esac
	while read -r t; do
		[ -n "$t" ] || continue
		if not_ok "$out/ktap.log" "$t"; then
			say "mutant $name: $t not ok, as it must be"
		else
			say "FAIL: mutant $name: $t is not reported not ok ($out/ktap.log)"
			ok=0
		fi
	done < <(header "$patch" must-fail)
	[ "$ok" = 1 ]
}

for patch in "$dir"/*.patch; do
	[ -e "$patch" ] || die "no mutant in $dir"
	name=${patch##*/}
	name=${name%.patch}
	case ",${MUTANTS:-$name}," in *",$name,"*) ;; *) continue ;; esac
	seen=$((seen + 1))
	check=$(header "$patch" check | head -1)
	check=${check:-${MUTANT_CHECK:-}}
	what=$(header "$patch" undoes | head -1)
	[ -n "$what" ] || what=$(sed -n '/^diff /q; s/^# //p' "$patch" | head -1)
	say "mutant $name: $what"
	[ -n "$check" ] || die "mutant $name: no '# check:' line"
	git -C "$TREE" apply "$patch" || die "mutant $name does not apply to $TREE"
	if [ "$check" = static ]; then
		if "$REPO/checks/sparse-w1.sh"; then
			say "FAIL: mutant $name passed checks/sparse-w1.sh"
			failed=$((failed + 1))
		else
			say "ok: mutant $name failed checks/sparse-w1.sh, as it must"
		fi
		revert
		continue
	fi
	BUILD_SUFFIX=-mutant-$name "$REPO/scripts/build.sh" || { revert; die "mutant $name: the build failed"; }
	revert
	BUILD_SUFFIX=-mutant-$name "$REPO/scripts/initramfs.sh" || die "mutant $name: no initramfs"
	case "$check" in
	tlb)
		append=$(header "$patch" append | head -1)
		shape=$(header "$patch" tlb-shape | head -1)
		topo=$(header "$patch" tlb-topo | head -1)
		if ! TLB_TOPO=$topo TLB_SHAPE=$shape tlb_baseline "$append"; then
			say "FAIL: mutant $name: $REV itself fails the TLB check with '${append:-no parameter}': the mutant would show nothing"
			failed=$((failed + 1))
		elif BUILD_SUFFIX=-mutant-$name APPEND="${APPEND:-} $append" TLB_TOPO=$topo TLB_SHAPE=$shape \
			"$REPO/checks/tlb.sh"; then
			say "FAIL: mutant $name passed the TLB check: the check does not see that flush"
			failed=$((failed + 1))
		else
			say "ok: mutant $name failed the TLB check, as it must"
		fi
		;;
	boot\ *)
		if boot_check "$name" "$patch" "${check#boot }"; then
			say "ok: mutant $name failed its row, as it must"
		else
			failed=$((failed + 1))
		fi
		;;
	*) die "mutant $name: unknown check '$check' (tlb, boot TOPO, static)" ;;
	esac
done
[ "$seen" -gt 0 ] || die "MUTANTS='${MUTANTS:-}' names no mutant of $dir"
[ "$failed" = 0 ] || die "$failed of $seen mutant(s) were not caught"
say "all $seen mutant(s) were caught"
