#!/bin/bash
# No static array sized by MAX_NUMNODES in the code the series adds, but in
# __initdata: Debian builds with MAXSMP (1024 nodes), where each int per
# node is 4 KiB of image that every machine pays for (review of v2, B5).
# Size such data by nr_node_ids at run time instead.
# Reads the lines the series of REV adds (its work tree, base..HEAD), or,
# with --diff FILE, a unified diff (the fixtures' way).
. "$(dirname "$0")/../scripts/lib.sh"
need git

if [ "${1:-}" = --diff ]; then
	[ -f "${2:-}" ] || die "usage: $0 [--diff FILE]"
	diff=$(cat "$2")
else
	if [ -z "$SERIES_DIR" ]; then
		echo "REV=base: no series, nothing to check"
		exit 0
	fi
	[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
	diff=$(git -C "$TREE" diff base..HEAD -- '*.c' '*.h')
fi
[ -n "$diff" ] || die "empty diff: nothing the series adds to check"
hits=$(printf '%s\n' "$diff" | awk '
	/^\+\+\+ / { file = substr($2, 3); next }
	/^\+/ && /(\[ *MAX_NUMNODES *\]|DECLARE_BITMAP\([^,]*, *MAX_NUMNODES *\))/ && !/__initdata/ {
		print file ": " substr($0, 2)
	}')
if [ -n "$hits" ]; then
	printf '%s\n' "$hits"
	echo "node-arrays: $(printf '%s\n' "$hits" | wc -l) static MAX_NUMNODES array(s) outside __initdata"
	exit 1
fi
echo "node-arrays: no static MAX_NUMNODES array outside __initdata"
