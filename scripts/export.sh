#!/bin/bash
# Write the work tree's commits (base..HEAD) into the revision's series
# directory: format-patch files with base-commit:, the series file in order,
# stale patch files removed, and the base file (package, version, base
# commit) written.
. "$(dirname "$0")/lib.sh"
need git

[ -d "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
[ -n "$SERIES_DIR" ] || die "REV=base has no series directory; create series-vN first (see CONTRIBUTING.md)"
tree_on_branch
if tree_dirty; then
	die "$TREE has uncommitted changes; commit them (git -C $TREE commit) before exporting"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fmt_patch "$tmp"

find "$SERIES_DIR" -maxdepth 1 -name '*.patch' -delete
: >"$tmp/series"
for f in "$tmp"/*.patch; do
	[ -e "$f" ] || continue
	cp "$f" "$SERIES_DIR/"
	printf '%s\n' "${f##*/}" >>"$tmp/series"
done
cp "$tmp/series" "$SERIES_DIR/series"
printf 'linux-source-%s %s %s\n' "$BASE" \
	"$(dpkg-query -W -f='${Version}' "linux-source-$BASE" 2>/dev/null || echo unknown)" \
	"$(git -C "$TREE" rev-parse base)" >"$SERIES_DIR/base"
say "exported $(wc -l <"$SERIES_DIR/series") patch(es) to ${SERIES_DIR#"$REPO"/}"
