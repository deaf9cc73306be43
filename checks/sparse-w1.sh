#!/bin/bash
# sparse (make C=2) and gcc W=1 (with -Wdeclaration-after-statement) on
# the .c files the series touches, built
# in the series tree and in the pristine base, both with the smoke
# configuration, each tree's objects in one kbuild run. Fails on warnings
# the series adds: the diagnostics of all the objects are compared as one
# multiset, without line numbers and build paths, so moved code does not
# count as new. A file new in the series has no base: all its warnings are
# new, and so is each further instance of a header warning it brings.
# Headers are not compiled alone: they are covered only through the touched
# .c files that include them.
. "$(dirname "$0")/../scripts/lib.sh"
need git make gcc ccache sparse flex bison bc perl

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
tree_dirty && say "warning: $TREE has uncommitted changes: they are checked too, but are not in the series"
[ "$(unexported_count)" = 0 ] ||
	say "warning: $TREE holds commits that are not in ${SERIES_DIR#"$REPO"/}; checking the tree's"

frags=("$REPO/qemu-smoke/configs/smoke.config" "$REPO/qemu-smoke/configs/repl-on.config")
base_id=$(git -C "$TREE" rev-parse base)
new_obj=$WORK/build/$BASE-$REV-check
old_obj=$WORK/build/$BASE-base-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t files < <(touched_sources)
mapfile -t headers < <(git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.h')
if [ ${#headers[@]} -gt 0 ]; then
	echo "note: ${#headers[@]} touched header(s) checked only through the .c files below: ${headers[*]}"
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "sparse-w1: pass: the series touches no x86_64 .c file, nothing to build"
	exit 0
fi

# A clean tree at the base commit: the REV=base work tree when it is one,
# else a worktree of the series tree's base tag, kept under $WORK/check.
at_base() {
	[ "$(git -C "$1" rev-parse -q --verify HEAD 2>/dev/null)" = "$base_id" ] &&
		[ -z "$(git -C "$1" status --porcelain --untracked-files=normal)" ]
}
base_tree=$WORK/trees/$BASE-base
if ! at_base "$base_tree"; then
	base_tree=$WORK/check/$BASE-base
	if ! at_base "$base_tree"; then
		say "making the base worktree $base_tree"
		rm -rf "$base_tree"
		git -C "$TREE" worktree prune
		mkdir -p "$(dirname "$base_tree")"
		git -C "$TREE" worktree add -q --detach "$base_tree" base
	fi
fi

# Configure OBJ for SRC with the smoke fragments (when they or the tree
# changed) and make prepare.
configure() { # SRC OBJ
	local src=$1 obj=$2 want
	mkdir -p "$obj"
	want=$( (cat "${frags[@]}"; git -C "$src" rev-parse HEAD) | sha256sum)
	if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.fragments.sha" 2>/dev/null)" != "$want" ]; then
		(cd "$src" && ARCH=x86_64 scripts/kconfig/merge_config.sh -n -O "$obj" "${frags[@]}") \
			>"$obj/merge_config.log" 2>&1 ||
			{ cat "$obj/merge_config.log" >&2; die "merge_config.sh failed for $obj"; }
		echo "$want" >"$obj/.fragments.sha"
	fi
	obj_make "$src" "$obj" prepare >"$obj/prepare.log" 2>&1 ||
		{ tail -n 30 "$obj/prepare.log" >&2; die "make prepare failed in $obj"; }
}

# check SRC OBJ OUT OBJECT...: build the objects with C=2 W=1; OUT gets
# their diagnostics as "original<TAB>normalised" lines (no build paths, no
# line or column numbers), OUT.unbuilt the objects that did not build.
check() {
	local src=$1 obj=$2 out=$3
	shift 3
	# -Wdeclaration-after-statement: x86 style, which W=1 leaves out
	# (the review of v4, B14).
	compile_objects "$src" "$obj" "$out.log" C=2 W=1 \
		KCFLAGS=-Wdeclaration-after-statement -- "$@" >"$out.unbuilt"
	# Headers are not -Wdeclaration-after-statement clean (page-flags.h):
	# that rule is checked in .c files only.
	grep -E ': (warning|error): ' "$out.log" |
		grep -Ev '\.h:[0-9]+(:[0-9]+)?: warning: (mixing declarations and code|ISO C90 forbids mixed declarations and code)' |
		sed -e "s|$src/||g" -e "s|$obj/||g" -e 's|^\./||' >"$out.orig" || true
	sed -E 's/([^ :]+\.[A-Za-z]+):[0-9]+(:[0-9]+)?/\1/g' "$out.orig" | paste "$out.orig" - >"$out"
}

start=$(date +%s)
say "configuring and preparing $new_obj and $old_obj"
configure "$TREE" "$new_obj"
configure "$base_tree" "$old_obj"

mapfile -t objs < <(configured_objects "$TREE" "$new_obj" "${files[@]}")
old_objs=()
for f in "${files[@]}"; do
	o=${f%.c}.o
	if ! printf '%s\n' "${objs[@]}" | grep -qxF "$o"; then
		echo "$f: skipped (not built by the smoke configuration)"
	elif git -C "$TREE" cat-file -e "base:$f" 2>/dev/null; then
		old_objs+=("$o")
	fi
done
# The series changes C code: building none of it is a failure, not a pass
# (a change in kbuild's output would otherwise skip every file).
if [ ${#objs[@]} -eq 0 ]; then
	echo "sparse-w1: FAIL: the series touches ${#files[@]} .c file(s) and the smoke configuration builds none of them (or configured_objects in scripts/lib.sh no longer recognises kbuild's 'make -n' output)"
	exit 1
fi

check "$TREE" "$new_obj" "$tmp/new" "${objs[@]}"
: >"$tmp/old"
if [ ${#old_objs[@]} -gt 0 ]; then
	check "$base_tree" "$old_obj" "$tmp/old" "${old_objs[@]}"
fi
broken=$(wc -l <"$tmp/new.unbuilt")

# Multiset difference on the normalised text; print the originals.
awk -F '\t' 'FILENAME == ARGV[1] { seen[$2]++; next } seen[$2] > 0 { seen[$2]--; next } { print $1 }' \
	"$tmp/old" "$tmp/new" >"$tmp/added"
for o in "${objs[@]}"; do
	f=${o%.o}.c
	n=$(cut -f2 "$tmp/new" | grep -c "^$f:" || true)
	b=$(cut -f2 "$tmp/old" | grep -c "^$f:" || true)
	if grep -qxF "$o" "$tmp/new.unbuilt"; then
		echo "$f: BUILD ERROR"
	elif printf '%s\n' "${old_objs[@]}" | grep -qxF "$o"; then
		echo "$f: $n warning(s) in the file, base $b"
	else
		echo "$f: $n warning(s) in the file, new file"
	fi
done
other=$(cut -f2 "$tmp/new" | grep -cvF -f <(printf '%s:\n' "${files[@]}") || true)
echo "elsewhere (headers): $other warning(s)"
added=$(wc -l <"$tmp/added")
if [ "$broken" != 0 ]; then
	grep -E ': (fatal )?error: ' "$tmp/new.log" | head -n 20 | sed 's/^/    /'
fi
if [ "$added" != 0 ]; then
	echo "new warnings:"
	sed 's/^/    /' "$tmp/added"
fi
echo "sparse-w1: ${#objs[@]} file(s), $added new warning(s), $broken build error(s), $(($(date +%s) - start)) s"
[ "$added" = 0 ] && [ "$broken" = 0 ]
