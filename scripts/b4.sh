#!/bin/bash
# b4.sh prep|send: hand the revision to b4 in its work tree, offline.
#   prep: branch b4/<BASE>-<REV> at the tree's HEAD, enrolled with b4 against
#         the base tag, cover letter from cover-letters/ (branch description).
#   send: 'b4 send -o OUT' writes the messages, ready for lore, into OUT
#         (default $WORK/outgoing/<BASE>-<REV>). Nothing is sent.
# The b4 branch carries the sender's identity (scripts/identity.sh): From:
# and Signed-off-by: of SENDER, PATCH_AUTHOR or git's user; never the
# role identity of the series files, which prep refuses to send as.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/identity.sh"
need git b4

action=${1:-}
case "$action" in prep | send) ;; *) die "usage: b4.sh prep|send" ;; esac
[ -n "$SERIES_DIR" ] || die "REV=base: no series to prepare; pick REV=v1, v2, ..."
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
cover=$COVER_DIR/$REV
[ -f "$cover" ] || die "no cover letter $cover for $REV"

branch=b4/$BASE-$REV
g() { git -C "$TREE" "$@"; }
who=$(sender_identity)
# b4 writes From: from the tree's user identity: the sender's while b4
# runs, the role's again afterwards.
role_name=$(g config user.name || true) role_mail=$(g config user.email || true)
as_sender() {
	g config user.name "${who% <*}"
	g config user.email "$(printf '%s' "$who" | sed 's/.*<\(.*\)>.*/\1/')"
}
as_role() {
	g config user.name "$role_name"
	g config user.email "$role_mail"
}

if [ "$action" = prep ]; then
	tree_dirty && die "$TREE has uncommitted changes; commit and 'make export' first"
	n=$(unexported_count)
	[ "$n" = 0 ] || die "$TREE has $n commit(s) not in ${SERIES_DIR#"$REPO"/}: 'make export' first"
	POSTING=1 "$REPO/checks/series-lint.sh" >&2 ||
		die "series-lint with the posting rules failed: fix the changelogs and the cover first"
	head=$(g rev-parse HEAD)
	g branch -f "$branch" "$head"
	stamp_identity "$TREE" base "$branch" "$who"
	g config "branch.$branch.ktext-source" "$head"
	g config "branch.$branch.b4-prep-cover-strategy" branch-description
	# b4 takes the fork point from base-branch; the base tag is ours.
	rev=${REV#v}
	g config "branch.$branch.b4-tracking" \
		"{\"series\": {\"revision\": $rev, \"change-id\": \"ktext-repl-$BASE\", \"base-branch\": \"base\", \"prefixes\": [$PREFIXES_JSON]}}"
	g config "branch.$branch.description" "$(cat "$cover")"
	# Addressed as a maintainer expects: To and Cc from the tree's
	# scripts/get_maintainer.pl on the series (b4's auto-to-cc, into the
	# cover letter); SEND_TO/SEND_CC only add to them when set.
	g config --unset-all b4.send-series-to || true
	g config --unset-all b4.send-series-cc || true
	[ -z "${SEND_TO:-}" ] || g config b4.send-series-to "$SEND_TO"
	[ -z "${SEND_CC:-}" ] || g config b4.send-series-cc "$SEND_CC"
	# b4 0.12 asks a web endpoint unless an SMTP server is configured;
	# with -o it never connects to it.
	g config sendemail.smtpserver /bin/false
	cur=$(g symbolic-ref --short HEAD)
	g checkout -q "$branch"
	as_sender
	rc=0
	(cd "$TREE" && b4 prep --auto-to-cc) >&2 || rc=$?
	as_role
	g checkout -q "$cur"
	[ "$rc" = 0 ] || die "b4 prep --auto-to-cc failed (scripts/get_maintainer.pl in $TREE)"
	say "prepared $branch in $TREE ($(g rev-list --count base.."$branch") patches as $who, cover from ${cover#"$REPO"/}), addressed to:"
	g config "branch.$branch.description" | grep -E '^(To|Cc): ' >&2 ||
		die "the cover letter of $branch has no To:/Cc: after b4 prep --auto-to-cc"
	exit 0
fi

g rev-parse -q --verify "refs/heads/$branch" >/dev/null || die "no branch $branch: run 'make prep REV=$REV' first"
[ "$(g config "branch.$branch.ktext-source" || true)" = "$(g rev-parse HEAD)" ] ||
	die "$branch was not prepared from the tree's HEAD: run 'make prep REV=$REV' again"
[ "$(g log -1 --format='%an <%ae>' "$branch")" = "$who" ] ||
	die "$branch was prepared as $(g log -1 --format='%an <%ae>' "$branch"), not as $who: run 'make prep REV=$REV' again"
out=${OUT:-$WORK/outgoing/$BASE-$REV}
rm -rf "$out"
cur=$(g symbolic-ref --short HEAD)
g checkout -q "$branch"
as_sender
rc=0
(cd "$TREE" && b4 send -o "$out" --no-sign) || rc=$?
as_role
g checkout -q "$cur"
[ "$rc" = 0 ] || die "b4 send failed"
# b4 0.12 takes the base as "<fork point>~1", which does not resolve when
# the fork point is our pristine import, a root commit: it then writes the
# unresolved "<id>~1". Put the real base commit in.
real=$(g rev-parse base)
sed -i "s/^base-commit: [0-9a-f]*~1\$/base-commit: $real/" "$out"/*.eml
grep -q "^base-commit: $real\$" "$out"/0000-*.eml ||
	die "the cover letter in $out lacks 'base-commit: $real'"
# Every message is the sender's, every patch signed off by the sender,
# and nothing names the role's address.
n=0
for m in "$out"/*.eml; do
	hdr=$(sed '/^$/q' "$m")
	printf '%s\n' "$hdr" | grep -qxF "From: $who" || die "$m: its From: is not $who"
	case "${m##*/}" in
	0000-*) ;;
	*) grep -qxF "Signed-off-by: $who" "$m" || die "$m: no 'Signed-off-by: $who'" ;;
	esac
	n=$((n + 1))
done
[ "$n" = $(($(g rev-list --count base.."$branch") + 1)) ] ||
	die "$out holds $n messages, not the cover and $(g rev-list --count base.."$branch") patches"
if grep -n 'example\.invalid' "$out"/*.eml | sed "s|^$out/||" | head -n 5 | grep . >&2; then
	die "the messages name the role's example.invalid address (above: a Cc from a MAINTAINERS entry of the series, or a trailer): nothing may go out with it"
fi
say "messages for lore in $out, from $who:"
ls "$out" >&2
