#!/bin/bash
# Write the work tree's commits (base..HEAD) into the revision's series
# directory: format-patch files with base-commit:, the series file in order,
# stale patch files removed, and the base file (package, version, base
# commit) written.
. "$(dirname "$0")/lib.sh"
need git

[ -z "$PART" ] || die "REV=$REV is a part of $REV_BASE: export REV=$REV_BASE"
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
[ -n "$SERIES_DIR" ] || die "REV=base has no series directory; create series-vN first (see CONTRIBUTING.md)"
tree_on_branch
if tree_dirty; then
	die "$TREE has uncommitted changes; commit them (git -C $TREE commit) before exporting"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fmt_patch "$tmp"

# The new series file. A revision in parts keeps its "# part N: TITLE"
# markers: a patch stays in the part it was in (known by its file name
# without the number, in any case), and a new one joins the part of the patch before
# it (the first patch, the first part). To start a part, end the series
# file with its marker: the new patches at the end go there. To move a
# boundary, edit the marker in the series file, then
# 'git -C TREE reset --hard base && make tree'.
parts_of=$tmp/parts
awk '/^# part [0-9]+: / { p = $0; next } /^(#|$)/ { next } { sub(/^[0-9]+-/, ""); if (p != "") print tolower($0) "\t" p }' \
	"$SERIES_DIR/series" >"$parts_of"
: >"$tmp/series"
# A marker that ends the old series file with no patch after it starts a
# new part: the new patches after the last known one go there.
tail_marker=$(awk '/^# part [0-9]+: / { m = $0; next } /^(#|$)/ { next } { m = "" } END { print m }' "$SERIES_DIR/series")
known=$(wc -l <"$parts_of") seen=0
part=
for f in "$tmp"/*.patch; do
	[ -e "$f" ] || continue
	name=${f##*/}
	m=$(awk -F'\t' -v s="${name#*-}" '$1 == tolower(s) { print $2; exit }' "$parts_of")
	if [ -n "$m" ]; then
		seen=$((seen + 1))
	elif [ -n "$tail_marker" ] && [ "$seen" = "$known" ]; then
		m=$tail_marker
	elif [ -z "$part" ]; then
		m=$(grep -m 1 '^# part [0-9]*: ' "$SERIES_DIR/series" || true)
	fi
	if [ -n "$m" ] && [ "$m" != "$part" ]; then
		printf '%s\n' "$m" >>"$tmp/series"
		part=$m
	fi
	printf '%s\n' "$name" >>"$tmp/series"
done
# Every part that had patches still has some, and the parts are in order.
# (A series file that lists no patch yet has its first part.)
want_parts=$(cut -f2 "$parts_of" | uniq | sed 's/: .*//')
[ -s "$parts_of" ] || want_parts=$(grep -m 1 '^# part [0-9]*: ' "$SERIES_DIR/series" | sed 's/: .*//' || true)
if [ -n "$tail_marker" ] && [ -s "$parts_of" ] && grep -q "^${tail_marker%%:*}:" "$tmp/series"; then
	want_parts=$(printf '%s\n%s\n' "$want_parts" "${tail_marker%%:*}")
fi
have_parts=$(grep '^# part ' "$tmp/series" | sed 's/: .*//' || true)
if [ "$want_parts" != "$have_parts" ]; then
	die "the tree's commits would change the parts of ${SERIES_DIR#"$REPO"/}/series from ($(echo "$want_parts" | tr '\n' ' ')) to ($(echo "$have_parts" | tr '\n' ' ')): a part would be empty or out of order; nothing was written"
fi
find "$SERIES_DIR" -maxdepth 1 -name '*.patch' -delete
for f in "$tmp"/*.patch; do
	[ -e "$f" ] || continue
	cp "$f" "$SERIES_DIR/"
done
cp "$tmp/series" "$SERIES_DIR/series"
if [ -n "$part" ]; then
	sizes=$(series_parts | while read -r n _; do printf '%s:%s ' "$n" "$(part_patches "$n" | wc -l)"; done)
	say "patches per part (part:count): $sizes"
fi
printf 'linux-source-%s %s %s\n' "$BASE" \
	"$(dpkg-query -W -f='${Version}' "linux-source-$BASE" 2>/dev/null || echo unknown)" \
	"$(git -C "$TREE" rev-parse base)" >"$SERIES_DIR/base"
say "exported $(series_patches | wc -l) patch(es) to ${SERIES_DIR#"$REPO"/}"
