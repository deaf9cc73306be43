#!/bin/bash
# Lint the series of REV as files: the base file, patch numbering and the
# series file with its part markers, each patch's subject, changelog,
# Signed-off-by and base-commit:, no BUG_ON added, and the revision's
# cover letters. From v5 on, the posting rules too (changelogs and covers
# as a maintainer reads them): errors, or warnings while the revision has
# a WIP file and POSTING is not 1 (make send sets it).
# REV=vN.P checks part P's patches and cover only.
. "$(dirname "$0")/../scripts/lib.sh"
need git

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
problems=0 warnings=0
bad() { # WHERE MESSAGE
	echo "$1: $2"
	problems=$((problems + 1))
}
revnum=${REV_BASE#v}
strict=1
if [ -e "$SERIES_DIR/WIP" ] && [ "${POSTING:-0}" != 1 ]; then strict=0; fi
# posting WHERE MESSAGE: a posting rule broken (from v5 on).
posting() {
	if [ "$strict" = 1 ]; then
		bad "$1" "$2 (posting rule)"
	else
		echo "$1: warning: $2 (posting rule; an error once the WIP file is gone)"
		warnings=$((warnings + 1))
	fi
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
if [ -e "$TREE/.git" ]; then
	tree_base=$(git -C "$TREE" rev-parse base)
	[ -z "$want" ] || [ "$want" = "$tree_base" ] ||
		bad "$(rel "$SERIES_DIR/base")" "base commit $want is not the tree's base $tree_base"
	want=$tree_base
fi

# Patch files 0001.. contiguous, listed in order by the series file.
mapfile -t present < <(find "$SERIES_DIR" -maxdepth 1 -name '*.patch' -printf '%f\n' | sort)
mapfile -t listed < <(patches_of '' '' | sed 's|.*/||')
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

# Part markers: "# part N: TITLE", numbered 1, 2, ... in order, before
# the first patch, none of them empty; each part but the last has the
# expect file of its tip (series-vN/expect.N; the last one's is expect).
mapfile -t parts < <(series_parts)
if [ ${#parts[@]} -gt 0 ]; then
	sf=$(rel "$SERIES_DIR/series")
	grep -v '^[[:space:]]*$' "$SERIES_DIR/series" | head -n 1 | grep -Eq '^# part 1: ' ||
		bad "$sf" "a revision in parts starts with '# part 1: TITLE'"
	k=0
	for line in "${parts[@]}"; do
		k=$((k + 1))
		n=${line%% *} title=${line#* }
		[ "$n" = "$k" ] || bad "$sf" "part $n is the ${k}th marker: parts are numbered 1, 2, ... in order"
		if [ "$title" = "$line" ] || [ -z "$title" ]; then bad "$sf" "part $n has no title"; fi
		[ -n "$(part_patches "$n")" ] || bad "$sf" "part $n has no patches"
		if [ "$k" -lt ${#parts[@]} ] && [ ! -f "$SERIES_DIR/expect.$n" ]; then
			bad "$(rel "$SERIES_DIR")" "no expect.$n: what the tip of parts 1 to $n must show"
		fi
	done
	grep -E '^#' "$SERIES_DIR/series" | grep -Ev '^# part [0-9]+: ' | grep -Ei '^# *part' |
		while read -r line; do echo "$sf: malformed part marker '$line' (want '# part N: TITLE')"; done |
		grep . && bad "$sf" "malformed part markers"
fi
# The patches this run checks: part P's for REV=vN.P, else all.
mapfile -t mine < <(if [ -n "$PART" ]; then part_patches "$PART"; else patches_of '' ''; fi | sed 's|.*/||')

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

# The posting rules' patterns, for the text above "---" (changelogs) and
# for covers: no pointer into this repository or its trackers, no dates,
# no version history, no speedups.
internal='review-v[0-9]|issue [0-9]|results/|series-v[0-9]|qemu-smoke|checks/|example\.invalid|lore\.kernel\.org/all/\?q=|20[0-9]{2}-[01][0-9]-[0-3][0-9]|This patch'
history='^(v[0-9]+:|changes since|changes in v[0-9])'
speed='speedup|speed-up|faster|(^|[^A-Za-z0-9.])[0-9]+(\.[0-9]+)?x([^A-Za-z0-9]|$)'
# posting_text WHERE: the posting rules on the text on stdin.
posting_text() {
	local text hits
	# The role identity of the series files is replaced when sent.
	text=$(cat)
	text=${text//"$PATCH_AUTHOR"/}
	hits=$(printf '%s\n' "$text" | grep -Eio "$internal" | sort -u | tr '\n' ' ' || true)
	[ -z "$hits" ] || posting "$1" "names what reviewers cannot see or should not read there: $hits"
	hits=$(printf '%s\n' "$text" | grep -Ei "$speed" | head -n 2 || true)
	[ -z "$hits" ] || posting "$1" "a figure given as a speedup ('$(echo "$hits" | head -n 1)'): say what was counted"
	# A paragraph with instruction or cycle counts says where they come from.
	printf '%s\n' "$text" | awk 'BEGIN { RS = "" }
		tolower($0) ~ /[0-9][0-9.,]*[%k]? *(more |fewer )?(kernel )?(instructions|cycles)|(instructions|cycles) (per|of|for) / &&
		tolower($0) !~ /emulat|modell?ed/ { print; exit }' |
		grep -q . && posting "$1" "a paragraph counts instructions or cycles without saying they are counted in an emulator or modelled"
	return 0
}

for k in $(seq 1 "$total"); do
	f=${present[k - 1]}
	p=$SERIES_DIR/$f
	printf '%s\n' "${mine[@]}" | grep -qxF "$f" || continue
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
	# No BUG_ON: a reachable path degrades, with a message.
	if grep -Eq '^\+.*\b(BUG_ON|BUG)\(' "$p"; then
		bad "$f" "adds BUG_ON() or BUG(): degrade to fewer copies with a message instead"
	fi
	if [ "$revnum" -ge 5 ]; then
		[ ${#summary} -le 75 ] || posting "$f" "subject is ${#summary} characters, more than 75"
		printf '%s\n' "$log" | grep -Eiq "$history" &&
			posting "$f" "version history above '---': it goes below, with the diffstat"
		posting_text "$f" < <(printf "%s\n" "$summary" "$log")
	fi
	[ "$problems" != "$before" ] || echo "$f: ok"
done

# The cover letters: a subject line, a blank line, the body; from v2 on a
# "Changes since v<N-1>" section. A revision in parts has one per part
# (cover-letters/vN.P). From v5 on, each has the sections a maintainer
# looks for, and its "Changes since" section summarises the range-diff.
check_cover() { # FILE
	local cover=$1 first before=$problems sec
	if [ ! -f "$cover" ]; then
		bad "$(rel "$cover")" "no cover letter"
		return
	fi
	first=$(head -n 1 "$cover")
	case "$first" in
	'' | '[PATCH'* | 'Subject:'*) bad "$(rel "$cover")" "line 1 must be the subject (without [PATCH 0/N]), got '$first'" ;;
	esac
	[ -z "$(sed -n 2p "$cover")" ] || bad "$(rel "$cover")" "line 2 must be empty (subject, blank line, body)"
	if [ "$revnum" -ge 2 ] && ! grep -Eiq "^[#*[:space:]-]*changes since v$((revnum - 1))\b" "$cover"; then
		bad "$(rel "$cover")" "no 'Changes since v$((revnum - 1))' section"
	fi
	if [ "$revnum" -ge 5 ]; then
		for sec in Motivation Design Cost Limits Testing; do
			grep -Eq "^[#*[:space:]-]*$sec\b" "$cover" || posting "$(rel "$cover")" "no '$sec' section"
		done
		grep -qi 'range-diff' "$cover" || posting "$(rel "$cover")" "the 'Changes since' section has no range-diff summary"
		# The history is the cover's business; the other rules hold.
		posting_text "$(rel "$cover")" < <(sed -n "3,\$p" "$cover")
	fi
	[ "$problems" != "$before" ] || echo "$(rel "$cover"): ok"
}
if [ -n "$PART" ]; then
	check_cover "$(cover_file "$PART")"
elif [ ${#parts[@]} -gt 0 ]; then
	for line in "${parts[@]}"; do check_cover "$(cover_file "${line%% *}")"; done
else
	check_cover "$(cover_file)"
fi
[ "$revnum" -ge 5 ] || echo "posting rules: not applied to $REV_BASE (they apply from v5 on)"
echo "series-lint: $REV, ${#mine[@]} of $total patch(es), $problems problem(s), $warnings warning(s)"
[ "$problems" = 0 ]
