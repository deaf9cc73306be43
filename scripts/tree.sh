#!/bin/bash
# Make the work tree for BASE/REV: the pristine Debian source committed and
# tagged "base", with the revision's series applied by git am.
# An existing tree is reused when it already holds the series, reset and
# re-applied when it is clean and fully exported, and never touched otherwise.
. "$(dirname "$0")/lib.sh"
need git tar xz
if [ "${DRY_RUN:-0}" = 1 ]; then
	say "DRY_RUN: the work tree $TREE is left as it is"
	exit 0
fi

# REV=vN.P: the tip of parts 1 to P is a detached work tree of vN's tree
# (git worktree), made or moved after vN's tree is made or checked.
if [ -n "$PART" ]; then
	REV=$REV_BASE "$0" || exit
	tip=$(part_tip "$PART")
	[ -n "$tip" ] || die "$MAIN_TREE holds fewer patches than parts 1 to $PART"
	if [ ! -e "$TREE" ]; then
		git -C "$MAIN_TREE" worktree prune
		git -C "$MAIN_TREE" worktree add -q --detach "$TREE" "$tip" ||
			die "cannot add the work tree $TREE"
		say "$TREE: parts 1 to $PART of $REV_BASE ($(git -C "$TREE" rev-list --count base..HEAD) patch(es))"
		exit 0
	fi
	[ "$(git -C "$TREE" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" = "$MAIN_TREE/.git" ] ||
		die "$TREE exists but is not a work tree of $MAIN_TREE; move it away"
	if tree_dirty; then
		die "$TREE has uncommitted changes or new files; a part's tree is a checkout of $MAIN_TREE: make changes there, then 'git -C $TREE reset --hard && git -C $TREE clean -fdx'"
	fi
	n=$(unexported_count)
	[ "$n" = 0 ] ||
		die "$TREE holds $n commit(s) that $MAIN_TREE's branch does not: cherry-pick them there ('git -C $MAIN_TREE cherry-pick ...'), then run this again"
	git -C "$TREE" checkout -q --detach "$tip"
	say "$TREE is at parts 1 to $PART of $REV_BASE ($(git -C "$TREE" rev-list --count base..HEAD) patch(es))"
	exit 0
fi

export GIT_AUTHOR_NAME=$IMPORT_IDENT_NAME GIT_AUTHOR_EMAIL=$IMPORT_IDENT_EMAIL \
	GIT_COMMITTER_NAME=$IMPORT_IDENT_NAME GIT_COMMITTER_EMAIL=$IMPORT_IDENT_EMAIL

import_base() {
	local tmp top
	[ -f "$TARBALL" ] || die "$TARBALL is missing: run 'make deps BASE=$BASE'"
	say "unpacking $TARBALL into $TREE"
	tmp=$TREE.unpack
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -C "$tmp" -xf "$TARBALL"
	top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d)
	[ -f "$top/Makefile" ] || die "unexpected layout in $TARBALL"
	mv "$top" "$TREE"
	rmdir "$tmp"
	git -C "$TREE" init -q -b work
	git -C "$TREE" config core.autocrlf false
	git -C "$TREE" config gc.auto 0
	say "committing the pristine tree (takes a minute)"
	git -C "$TREE" add -A -f .
	GIT_AUTHOR_DATE=$IMPORT_DATE GIT_COMMITTER_DATE=$IMPORT_DATE \
		git -C "$TREE" commit -q -m "linux-source-$BASE $(dpkg-query -W -f='${Version}' "linux-source-$BASE" 2>/dev/null || echo unknown)"
	git -C "$TREE" tag base
}

apply_series() {
	local p n=0 want have
	if [ -n "$SERIES_DIR" ] && [ -f "$SERIES_DIR/base" ]; then
		read -r _ want _ <"$SERIES_DIR/base"
		have=$(dpkg-query -W -f='${Version}' "linux-source-$BASE" 2>/dev/null || true)
		[ "$want" = "$have" ] ||
			say "warning: ${SERIES_DIR#"$REPO"/} was made on linux-source-$BASE $want, this is $have"
	fi
	while read -r p; do
		n=$((n + 1))
		if ! git -C "$TREE" am -q --keep-cr "$p" >"$TREE.am.log" 2>&1; then
			git -C "$TREE" am --abort >/dev/null 2>&1 || true
			git -C "$TREE" reset -q --hard base
			printf '%s: error: patch %d does not apply: %s\n' "${0##*/}" "$n" "${p#"$REPO"/}" >&2
			grep -E 'error:|Patch failed|patch does not apply' "$TREE.am.log" >&2 || cat "$TREE.am.log" >&2
			die "tree reset to the pristine base; fix the patch and run 'make tree' again"
		fi
	done < <(series_patches)
	rm -f "$TREE.am.log"
	say "applied $n patch(es) of ${REV} to $TREE"
}

# Commits made in the tree carry the configured identity.
set_author() {
	git -C "$TREE" config user.name "${PATCH_AUTHOR% <*}"
	git -C "$TREE" config user.email "$(printf '%s' "$PATCH_AUTHOR" | sed 's/.*<\(.*\)>.*/\1/')"
}

if [ ! -d "$TREE/.git" ]; then
	[ ! -e "$TREE" ] || die "$TREE exists but is not a git work tree; move it away"
	mkdir -p "$(dirname "$TREE")"
	import_base
	set_author
	apply_series
	exit 0
fi
set_author

git -C "$TREE" rev-parse -q --verify base >/dev/null ||
	die "$TREE has no 'base' tag; it was not made by 'make tree'"
tree_on_branch
if tree_dirty; then
	die "$TREE has uncommitted changes or new files ($(git -C "$TREE" status --porcelain --untracked-files=all --ignored | head -n 3 | tr '\n' ' ')); commit them (new files need 'git add -f': Debian's .gitignore ignores everything) and 'make export', or discard them with 'git -C $TREE reset --hard && git -C $TREE clean -fdx'"
fi
n=$(unexported_count)
if [ "$n" != 0 ]; then
	if [ -z "$SERIES_DIR" ]; then
		die "$TREE (REV=base) has $n commit(s) on top of the base; start a revision (see CONTRIBUTING.md) or drop them with 'git -C $TREE reset --hard base'"
	fi
	die "$TREE has $n commit(s) that differ from ${SERIES_DIR#"$REPO"/} (not exported, or the series files were changed since); run 'make export REV=$REV' to keep the tree's version, or 'git -C $TREE reset --hard base' to take the series' version"
fi
# Everything in the tree is in the series directory. Same patch count too?
have=$(git -C "$TREE" rev-list --count base..HEAD)
want=$(series_patches | wc -l)
if [ "$have" = "$want" ]; then
	say "$TREE is up to date ($have patch(es) of $REV)"
	exit 0
fi
say "$TREE holds $have of $want patch(es); re-applying $REV"
git -C "$TREE" reset -q --hard base
apply_series
