#!/bin/bash
# One line per work tree: clean or dirty, and commits not exported.
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
		printf '%-16s %-6s %-7s %s\n' "$name" "$state" "$(unexported_count)" "$dir"
	) || printf '%-16s %-6s %-7s %s\n' "$name" "?" "?" "$dir (unknown base or revision)"
done
