#!/bin/bash
# sparse (make C=2) and gcc W=1 on the .c files the series touches, built
# one object at a time in the series tree and in the pristine base, both
# with the smoke configuration. Fails on warnings the series adds: warnings
# are compared per file without line numbers and build paths, so moved code
# does not count as new. A file new in the series has no base: all its
# warnings are new. Headers are not compiled alone: they are covered only
# through the touched .c files that include them.
. "$(dirname "$0")/../scripts/lib.sh"
need git make gcc ccache sparse flex bison bc perl

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -d "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
tree_dirty && say "warning: $TREE has uncommitted changes; they are not checked"
[ "$(unexported_count)" = 0 ] ||
	say "warning: $TREE holds commits that are not in ${SERIES_DIR#"$REPO"/}; checking the tree's"

export CCACHE_DIR=${CCACHE_DIR:-$WORK/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
frags=("$REPO/qemu-smoke/configs/smoke.config" "$REPO/qemu-smoke/configs/repl-on.config")
base_id=$(git -C "$TREE" rev-parse base)
new_obj=$WORK/build/$BASE-$REV-check
old_obj=$WORK/build/$BASE-base-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The .c files the series touches and that still exist; headers are named.
mapfile -t files < <(git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.c')
mapfile -t headers < <(git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.h')
if [ ${#headers[@]} -gt 0 ]; then
	echo "note: ${#headers[@]} touched header(s) checked only through the .c files below: ${headers[*]}"
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "sparse-w1: the series touches no .c file, nothing to build"
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

kmake() { # SRC OBJ make-args...
	local src=$1 obj=$2
	shift 2
	make -s -C "$src" O="$obj" ARCH=x86_64 CC="ccache gcc" -j"$(nproc)" "$@"
}

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
	kmake "$src" "$obj" prepare >"$obj/prepare.log" 2>&1 ||
		{ tail -n 30 "$obj/prepare.log" >&2; die "make prepare failed in $obj"; }
}

# Build one object with C=2 W=1 and keep its diagnostics as lines of
# "original<TAB>normalised" (no build paths, no line or column numbers).
# Prints the build status: built, error, or unbuilt (not in this config:
# kbuild compiles any single object asked for, so ask a dry run of its
# directory whether the configuration builds it).
check_one() { # SRC OBJ FILE OUT
	local src=$1 obj=$2 f=$3 out=$4 o=${3%.c}.o rc=0
	rm -f "$obj/$o"
	kmake "$src" "$obj" -n "${f%/*}/" >"$out.dry" 2>&1 || true
	if ! grep -qF -- "-c -o $o " "$out.dry"; then
		: >"$out"
		echo unbuilt
		return
	fi
	kmake "$src" "$obj" C=2 W=1 "$o" >"$out.log" 2>&1 || rc=$?
	grep -E ': (warning|error): ' "$out.log" |
		sed -e "s|$src/||g" -e "s|$obj/||g" -e 's|^\./||' >"$out.orig" || true
	sed -E 's/([^ :]+\.[A-Za-z]+):[0-9]+(:[0-9]+)?/\1/g' "$out.orig" | paste "$out.orig" - >"$out"
	if [ -f "$obj/$o" ]; then
		echo built
	elif [ "$rc" != 0 ]; then
		echo error
	else
		echo unbuilt
	fi
}

start=$(date +%s)
say "configuring and preparing $new_obj and $old_obj"
configure "$TREE" "$new_obj"
configure "$base_tree" "$old_obj"

fail=0 added=0 broken=0 i=0
for f in "${files[@]}"; do
	i=$((i + 1))
	case "$f" in
	arch/x86/*) ;;
	arch/* | tools/* | scripts/* | usr/* | Documentation/*)
		echo "$f: skipped (not an x86_64 kernel source)"
		continue
		;;
	esac
	new=$tmp/$i.new old=$tmp/$i.old
	status=$(check_one "$TREE" "$new_obj" "$f" "$new")
	case "$status" in
	unbuilt)
		echo "$f: skipped (not built by the smoke configuration)"
		continue
		;;
	error)
		echo "$f: BUILD ERROR"
		grep -E 'error' "$new.log" | head -n 20 | sed 's/^/    /'
		broken=$((broken + 1))
		fail=1
		continue
		;;
	esac
	if git -C "$TREE" cat-file -e "base:$f" 2>/dev/null; then
		ostatus=$(check_one "$base_tree" "$old_obj" "$f" "$old")
		[ "$ostatus" = built ] || : >"$old"
		what="base $(wc -l <"$old")"
		[ "$ostatus" = built ] || what="base not built: $ostatus"
	else
		: >"$old"
		what="new file"
	fi
	# Multiset difference on the normalised text; print the originals.
	awk -F '\t' 'FILENAME == ARGV[1] { seen[$2]++; next } seen[$2] > 0 { seen[$2]--; next } { print $1 }' \
		"$old" "$new" >"$tmp/$i.added"
	n=$(wc -l <"$tmp/$i.added")
	if [ "$n" = 0 ]; then
		echo "$f: ok ($(wc -l <"$new") warning(s), $what)"
	else
		echo "$f: $n new warning(s) ($(wc -l <"$new") warning(s), $what)"
		sed 's/^/    /' "$tmp/$i.added"
		added=$((added + n))
		fail=1
	fi
done
echo "sparse-w1: ${#files[@]} file(s), $added new warning(s), $broken build error(s), $(($(date +%s) - start)) s"
[ "$fail" = 0 ]
