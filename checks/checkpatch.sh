#!/bin/bash
# Run the kernel's checkpatch.pl --strict on every patch of the series.
# Passes only with no error, warning or check, except for the message types
# in checks/checkpatch-ignore (each with its reason).
. "$(dirname "$0")/../scripts/lib.sh"
need perl

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
cp=$TREE/scripts/checkpatch.pl
[ -x "$cp" ] || die "no $cp: run 'make tree REV=$REV BASE=$BASE'"

# checks/checkpatch-ignore: "TYPE  # reason" per line.
ignore_file=$REPO/checks/checkpatch-ignore
ignore=
n=0
while IFS= read -r line; do
	n=$((n + 1))
	case "$line" in '' | '#'*) continue ;; esac
	type=$(printf '%s' "${line%%#*}" | tr -d '[:space:]')
	reason=
	case "$line" in *'#'*) reason=$(printf '%s' "${line#*#}" | tr -d '[:space:]') ;; esac
	printf '%s' "$type" | grep -Eq '^[A-Z][A-Z0-9_]*$' ||
		die "${ignore_file#"$REPO"/}:$n: '$type' is not a checkpatch message type"
	[ -n "$reason" ] || die "${ignore_file#"$REPO"/}:$n: $type has no reason ('$type  # why')"
	ignore=${ignore:+$ignore,}$type
done <"$ignore_file"

args=(--strict --show-types --color=never)
[ -z "$ignore" ] || args+=(--ignore "$ignore")
[ -z "$ignore" ] || echo "checkpatch: ignoring $ignore (see ${ignore_file#"$REPO"/})"

# checkpatch runs scripts/spdxcheck.py ("#!/usr/bin/env python3"), which
# needs ply and GitPython: Debian's python3-ply and python3-git, for
# Debian's python3, put first in PATH (a pyenv python3 has neither, and
# the SPDX check would then be skipped without a word).
export PATH=/usr/bin:$PATH
python3 -c 'import ply, git' 2>/dev/null ||
	die "python3 cannot import ply and git: the SPDX license check would not run (run 'make deps')"

errors=0 warnings=0 checks=0 bad=0 count=0 checked=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
while read -r p; do
	count=$((count + 1))
	name=${p##*/}
	[ -f "$p" ] || { echo "$name: MISSING (listed in series)"; bad=$((bad + 1)); continue; }
	# checkpatch exits non-zero on findings; its counts are read below.
	(cd "$TREE" && scripts/checkpatch.pl "${args[@]}" "$p") >"$out" 2>"$err" || true
	read -r e w c < <(sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) checks.*/\1 \2 \3/p' "$out")
	if [ -z "${e:-}" ]; then
		echo "$name: checkpatch.pl did not finish:"
		cat "$out" "$err" | sed 's/^/    /'
		bad=$((bad + 1))
		continue
	fi
	checked=$((checked + 1))
	errors=$((errors + e)) warnings=$((warnings + w)) checks=$((checks + c))
	if [ $((e + w + c)) = 0 ]; then
		echo "$name: ok"
	else
		echo "$name: $e error(s), $w warning(s), $c check(s)"
		# The messages, without the summary that starts at "total:".
		sed -e '/^total: /,$d' -e '/^$/d' -e 's/^/    /' "$out"
		bad=$((bad + 1))
	fi
done < <(if [ -n "$PART" ]; then part_patches "$PART"; else series_patches; fi)

# Every patch must have been checked: counted apart from series_patches,
# the entries of the series file and the patch files of the directory.
# REV=vN.P checks part P's patches: the entries after its marker.
listed=$(awk -v p="${PART:-}" '/^# part [0-9]+: / { in_p = (p == "" || $3 == p ":"); next }
	/^[[:space:]]*(#|$)/ { next } p == "" || in_p { n++ } END { print n + 0 }' "$SERIES_DIR/series")
on_disk=$(find "$SERIES_DIR" -maxdepth 1 -name '*.patch' | wc -l)
[ -z "$PART" ] || on_disk=$listed
echo "checkpatch: $checked of $count patch(es) checked, $bad with findings: $errors error(s), $warnings warning(s), $checks check(s)"
if [ "$checked" = 0 ] || [ "$checked" != "$listed" ] || [ "$checked" != "$on_disk" ]; then
	echo "checkpatch: FAIL: checked $checked patch(es), the series file lists $listed, ${SERIES_DIR#"$REPO"/} has $on_disk patch file(s)"
	exit 1
fi
[ "$bad" = 0 ]
