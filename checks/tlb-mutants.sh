#!/bin/bash
# Show that the TLB check fails without the flushes the series relies on:
# for each mutant of REV, series-vN/tlb-mutants/NAME.patch (a change to
# the work tree that removes one flush; its header says which, and why the
# TLB model must see it), apply it to the work tree, build REV with CONFIG
# (default smoke) apart (BUILD_SUFFIX=-mutant-NAME: ccache makes it a few
# minutes), put the tree back, and boot the build under checks/tlb.sh,
# which must fail. A mutant that passes fails this script: the check
# cannot see that flush. Header lines of the patch:
#   # append: WORDS         boot with these kernel parameters (pti=off...)
#   # tlb-shape: E:W        the model with a smaller TLB (TLB_SHAPE)
# The unmutated build is checked first with the same parameters and
# shape (once per set): a mutant whose baseline fails too would show
# nothing, and fails this script. MUTANTS=NAME,... picks some.
. "$(dirname "$0")/../scripts/lib.sh"
no_dry_run
need git make gcc qemu-system-x86_64

dir=$SERIES_DIR/tlb-mutants
[ -d "$dir" ] || die "$REV has no TLB mutants ($dir)"
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV'"
tree_dirty && die "$TREE has changes: export or drop them first (a mutant is applied there)"

revert() { git -C "$TREE" checkout -q -- . && git -C "$TREE" clean -qfd; }
trap revert EXIT
failed=0 seen=0 baselines=' '
# baseline APPEND-WORDS: the unmutated build passes the check with them.
baseline() {
	local key=${1// /_}${TLB_SHAPE:+-tlb$TLB_SHAPE}
	case "$baselines" in *" $key=ok "*) return 0 ;; *" $key=fail "*) return 1 ;; esac
	if APPEND="${APPEND:-} $1" TLB_NAME="baseline${key:+-$key}" "$REPO/checks/tlb.sh"; then
		baselines="$baselines$key=ok "
		return 0
	fi
	baselines="$baselines$key=fail "
	return 1
}
for patch in "$dir"/*.patch; do
	[ -e "$patch" ] || die "no mutant in $dir"
	name=${patch##*/}
	name=${name%.patch}
	case ",${MUTANTS:-$name}," in *",$name,"*) ;; *) continue ;; esac
	seen=$((seen + 1))
	say "mutant $name: $(sed -n 's/^Subject: //p; s/^# //p' "$patch" | head -1)"
	git -C "$TREE" apply "$patch" || die "mutant $name does not apply to $TREE"
	BUILD_SUFFIX=-mutant-$name "$REPO/scripts/build.sh" || { revert; die "mutant $name: the build failed"; }
	revert
	BUILD_SUFFIX=-mutant-$name "$REPO/scripts/initramfs.sh" || die "mutant $name: no initramfs"
	append=$(sed -n 's/^# append: //p' "$patch" | head -1)
	shape=$(sed -n 's/^# tlb-shape: //p' "$patch" | head -1)
	if ! TLB_SHAPE=$shape baseline "$append"; then
		say "FAIL: mutant $name: $REV itself fails the TLB check with '${append:-no parameter}': the mutant would show nothing"
		failed=$((failed + 1))
		continue
	fi
	if BUILD_SUFFIX=-mutant-$name APPEND="${APPEND:-} $append" TLB_SHAPE=$shape "$REPO/checks/tlb.sh"; then
		say "FAIL: mutant $name passed the TLB check: the check does not see that flush"
		failed=$((failed + 1))
	else
		say "ok: mutant $name failed the TLB check, as it must"
	fi
done
[ "$seen" -gt 0 ] || die "MUTANTS='${MUTANTS:-}' names no mutant of $dir"
[ "$failed" = 0 ] || die "$failed of $seen mutant(s) passed the TLB check"
say "all $seen mutant(s) failed the TLB check"
