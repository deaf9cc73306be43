#!/bin/bash
# Lint the series of REV as files: the base file, patch numbering and the
# series file, each patch's subject, changelog, Signed-off-by and
# base-commit:, and the revision's cover letter.
. "$(dirname "$0")/../scripts/lib.sh"
need git

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
problems=0
bad() { # WHERE MESSAGE
	echo "$1: $2"
	problems=$((problems + 1))
}
rel() { printf '%s' "${1#"$REPO"/}"; }

# The base file: "linux-source-X VERSION COMMIT", the commit the tree's.
want=
if [ ! -f "$SERIES_DIR/base" ]; then
	bad "$(rel "$SERIES_DIR")" "no base file (make export writes it)"
else
	read -r pkg ver id _ <"$SERIES_DIR/base" || true
	if [ "${pkg:-}" != "linux-source-$BASE" ] || [ -z "${ver:-}" ] ||
		! printf '%s' "${id:-}" | grep -Eq '^[0-9a-f]{40}$'; then
		bad "$(rel "$SERIES_DIR/base")" "expected 'linux-source-$BASE VERSION COMMIT', got '$(head -n 1 "$SERIES_DIR/base")'"
	fi
	want=${id:-}
fi
if [ -d "$TREE/.git" ]; then
	tree_base=$(git -C "$TREE" rev-parse base)
	[ -z "$want" ] || [ "$want" = "$tree_base" ] ||
		bad "$(rel "$SERIES_DIR/base")" "base commit $want is not the tree's base $tree_base"
	want=$tree_base
fi

# Patch files 0001.. contiguous, listed in order by the series file.
mapfile -t present < <(find "$SERIES_DIR" -maxdepth 1 -name '*.patch' -printf '%f\n' | sort)
mapfile -t listed < <(series_patches | sed 's|.*/||')
total=${#present[@]}
[ "$total" -gt 0 ] || bad "$(rel "$SERIES_DIR")" "no patch files"
for k in $(seq 1 "$total"); do
	f=${present[k - 1]}
	case "$f" in "$(printf '%04d' "$k")"-?*.patch) ;;
	*) bad "$f" "expected patch number $(printf '%04d' "$k"): patch files are not numbered 0001.. contiguously" ;;
	esac
done
if [ "${present[*]}" != "${listed[*]}" ]; then
	for f in "${listed[@]}"; do
		[ -f "$SERIES_DIR/$f" ] || bad "$(rel "$SERIES_DIR/series")" "lists $f, which does not exist"
	done
	for f in "${present[@]}"; do
		printf '%s\n' "${listed[@]}" | grep -qxF "$f" || bad "$(rel "$SERIES_DIR/series")" "does not list $f"
	done
	[ "$problems" != 0 ] || bad "$(rel "$SERIES_DIR/series")" "lists the patches out of order"
fi

# The mail headers of a patch, folded lines joined, RFC 2047 words decoded.
headers() {
	awk '/^$/ { exit } /^[ \t]/ { h = h $0; next } { if (h != "") print h; h = $0 } END { if (h != "") print h }' "$1" |
		python3 -c 'import sys
from email.header import decode_header, make_header
for line in sys.stdin:
    line = line.rstrip("\n")
    print(str(make_header(decode_header(line))) if "=?" in line else line)'
}
# The changelog: after the headers, up to the "---" line.
changelog() { awk 'body && /^---$/ { exit } body { print } /^$/ { body = 1 }' "$1"; }
trailer='^[A-Z][A-Za-z0-9-]*: '

for k in $(seq 1 "$total"); do
	f=${present[k - 1]}
	p=$SERIES_DIR/$f
	before=$problems
	head -n 1 "$p" | grep -Eq '^From 0{40} Mon Sep 17 00:00:00 2001$' ||
		bad "$f" "not a 'format-patch --zero-commit' file (first line: $(head -n 1 "$p"))"
	hdr=$(headers "$p")
	from=$(printf '%s\n' "$hdr" | sed -n 's/^From: //p' | head -n 1)
	subject=$(printf '%s\n' "$hdr" | sed -n 's/^Subject: //p' | head -n 1)
	[ -n "$from" ] || bad "$f" "no From: header"
	re='^\[([A-Z]+ )*PATCH( v[0-9]+)?( ([0-9]+)/([0-9]+))?\] (.*)$'
	if [[ "$subject" =~ $re ]]; then
		num=${BASH_REMATCH[4]} of=${BASH_REMATCH[5]} summary=${BASH_REMATCH[6]}
		if [ -n "$num" ]; then
			if [ "$((10#$num))" != "$k" ] || [ "$((10#$of))" != "$total" ]; then
				bad "$f" "subject says patch $num/$of, it is patch $k of $total"
			fi
		elif [ "$total" != 1 ]; then
			bad "$f" "subject has no N/M number in a series of $total"
		fi
		# Each level of the prefix is a word or, as upstream writes several
		# subsystems at once, words joined by ", ": "bpf, x86:" is the
		# x86 BPF JIT's (commits 14c0427b8a09, f2038c293030, 1d5f82d9dd47).
		w='[A-Za-z0-9_/.-]+'
		printf '%s' "$summary" | grep -Eq "^$w(, $w)*(: $w(, $w)*)*: [^ ]" ||
			bad "$f" "subject '$summary' has no subsystem prefix ('x86/mm: ...', 'mm: ...', 'bpf, x86: ...')"
	else
		bad "$f" "subject '$subject' is not '[PATCH N/M] subsystem: summary'"
	fi
	# The last paragraph of the changelog is the trailers.
	log=$(changelog "$p")
	trailers=$(printf '%s\n' "$log" | awk 'NF == 0 { t = ""; next } { t = t $0 "\n" } END { printf "%s", t }')
	if printf '%s' "$trailers" | grep -Evq "$trailer"; then
		bad "$f" "the changelog does not end with trailers (Signed-off-by: ...)"
		trailers=
	fi
	body=$(($(printf '%s\n' "$log" | grep -c '[^[:space:]]' || true) - $(printf '%s' "$trailers" | grep -c . || true)))
	[ "$body" -ge 3 ] || bad "$f" "changelog has $body line(s): at least 3 that say why"
	printf '%s' "$trailers" | grep -qxF "Signed-off-by: $from" ||
		bad "$f" "no 'Signed-off-by: $from' (the From: author)"
	# format-patch --base writes base-commit: into the first message only.
	bc=$(sed -n 's/^base-commit: //p' "$p")
	if [ "$k" = 1 ] && [ -z "$bc" ]; then
		bad "$f" "no base-commit: line (format-patch --base=base)"
	elif [ -n "$bc" ] && [ -n "$want" ] && [ "$bc" != "$want" ]; then
		bad "$f" "base-commit: $bc is not the base $want"
	fi
	[ "$problems" != "$before" ] || echo "$f: ok"
done

# The cover letter: a subject line, a blank line, the body; from v2 on a
# "Changes since v<N-1>" section.
cover=$COVER_DIR/$REV
if [ ! -f "$cover" ]; then
	bad "$(rel "$cover")" "no cover letter for $REV"
else
	before=$problems
	first=$(head -n 1 "$cover")
	case "$first" in
	'' | '[PATCH'* | 'Subject:'*) bad "$(rel "$cover")" "line 1 must be the subject (without [PATCH 0/N]), got '$first'" ;;
	esac
	[ -z "$(sed -n 2p "$cover")" ] || bad "$(rel "$cover")" "line 2 must be empty (subject, blank line, body)"
	n=${REV#v}
	if [ "$n" -ge 2 ] && ! grep -Eiq "^[#*[:space:]-]*changes since v$((n - 1))\b" "$cover"; then
		bad "$(rel "$cover")" "no 'Changes since v$((n - 1))' section"
	fi
	[ "$problems" != "$before" ] || echo "$(rel "$cover"): ok"
fi
echo "series-lint: $REV, $total patch(es), $problems problem(s)"
[ "$problems" = 0 ]
