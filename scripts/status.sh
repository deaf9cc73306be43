#!/bin/bash
# One line per work tree: clean or dirty, and commits not exported (for
# a part's tree: commits its main tree's branch lacks).
. "$(dirname "$0")/lib.sh"

shopt -s nullglob
trees=("$WORK"/trees/*/)
[ ${#trees[@]} -gt 0 ] || { echo "no work trees under $WORK/trees"; exit 0; }
printf '%-16s %-6s %-7s %s\n' TREE STATE UNEXP PATH
for dir in "${trees[@]}"; do
	dir=${dir%/}
	name=${dir##*/}
	# Each tree's own BASE and REV, from its directory name.
	(
		export BASE=${name%%-*} REV=${name#*-}
		# shellcheck source=lib.sh
		. "$REPO/scripts/lib.sh" 2>/dev/null
		state=clean
		tree_dirty && state=DIRTY
		note=
		if [ -n "$PART" ]; then
			note=" (parts 1 to $PART of $BASE-$REV_BASE"
			[ "$(git -C "$dir" rev-parse HEAD)" = "$(part_tip "$PART" 2>/dev/null)" ] ||
				note="$note, not at their tip: make tree REV=$REV"
			note="$note)"
		fi
		printf '%-16s %-6s %-7s %s\n' "$name" "$state" "$(unexported_count)" "$dir$note"
	) || printf '%-16s %-6s %-7s %s\n' "$name" "?" "?" "$dir (unknown base or revision)"
done
