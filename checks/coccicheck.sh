#!/bin/bash
# Coccinelle on the .c files the series touches: the kernel's report-mode
# scripts (scripts/coccinelle/) and ours (coccinelle/), run as
# 'make coccicheck MODE=report' runs them (each script's Options:), with
# spatch directly on the files. A report that the same script also gives on
# the base version of the file (compared without line numbers) is not new;
# the check fails on new reports. Headers are not checked.
. "$(dirname "$0")/../scripts/lib.sh"
need git spatch

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -d "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
[ "$(unexported_count)" = 0 ] ||
	say "warning: $TREE holds commits that are not in ${SERIES_DIR#"$REPO"/}; checking the tree's"

mapfile -t files < <(git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.c')
if [ ${#files[@]} -eq 0 ]; then
	echo "coccicheck: the series touches no .c file, nothing to check"
	exit 0
fi

# The series' and the base's version of each file, at the same relative
# path, so that both runs see the same names and the same (no) neighbours.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
old_files=()
for f in "${files[@]}"; do
	mkdir -p "$tmp/new/${f%/*}" "$tmp/old/${f%/*}"
	git -C "$TREE" show "HEAD:$f" >"$tmp/new/$f"
	if git -C "$TREE" show "base:$f" >"$tmp/old/$f" 2>/dev/null; then
		old_files+=("$f")
	else
		rm -f "$tmp/old/$f"
	fi
done

mapfile -t scripts < <(
	grep -l 'virtual[[:space:]]*report' -r --include='*.cocci' "$TREE/scripts/coccinelle" | sort
	grep -l 'virtual[[:space:]]*report' "$REPO"/coccinelle/*.cocci 2>/dev/null | sort
)
version=$(spatch --version | awk 'NR == 1 { print $3 }')

# Run one script on files under DIR, as "report-mode spatch" with the
# script's Options:, into OUT: the reports as "original<TAB>normalised"
# (no line or column numbers). OUT.err has spatch's errors; fails with it.
run() { # OUT DIR SCRIPT FILE...
	local out=$1 dir=$2 cocci=$3 opts
	shift 3
	opts=$(sed -n 's/^\/\/[[:space:]]*Options:\(.*\)/\1/p' "$cocci" | head -n 1)
	# shellcheck disable=SC2086 # opts is a list of options, as in coccicheck
	(cd "$dir" && timeout 300 spatch -D report --very-quiet --no-show-diff $opts \
		--cocci-file "$cocci" "$@") >"$out.raw" 2>"$out.err" || return 1
	grep -E '^[^ :]+:[0-9]+' "$out.raw" |
		sed -E 'h; s/^([^ :]+):[0-9]+(:[0-9]+(-[0-9]+)?)?/\1/; s/line [0-9]+/line N/g; x; G; s/\n/\t/' \
			>"$out" || true
}

# A script that needs OCaml at run time cannot run without a compiler.
have_ocaml=
if command -v ocamlopt >/dev/null 2>&1 || command -v ocamlopt.opt >/dev/null 2>&1; then
	have_ocaml=1
fi

# First pass: every script on the series' files, $(nproc) at a time.
start=$(date +%s)
jobs=$(nproc)
i=0
for cocci in "${scripts[@]}"; do
	i=$((i + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	req=$(sed -n 's/^\/\/[[:space:]]*Requires:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$cocci" | head -n 1)
	if [ -n "$req" ] && ! printf '%s\n%s\n' "$req" "$version" | sort -CV; then
		echo "skipped (needs spatch $req, have $version)" >"$tmp/$i.skip"
	elif [ -z "$have_ocaml" ] && grep -Eq '^@[^@]*(script|initialize|finalize):ocaml' "$cocci"; then
		echo "skipped (has OCaml script rules: no OCaml compiler)" >"$tmp/$i.skip"
	else
		{ run "$tmp/$i.new" "$tmp/new" "$cocci" "${files[@]}" || touch "$tmp/$i.failed"; } &
	fi
done
wait

# Second pass, in order: the base run of each script that reported.
new_total=0 errors=0 skipped=0 i=0
for cocci in "${scripts[@]}"; do
	i=$((i + 1))
	name=${cocci#"$TREE"/}
	name=${name#"$REPO"/}
	if [ -f "$tmp/$i.skip" ]; then
		echo "$name: $(cat "$tmp/$i.skip")"
		skipped=$((skipped + 1))
		continue
	fi
	if [ -f "$tmp/$i.failed" ]; then
		echo "$name: spatch failed:"
		tail -n 5 "$tmp/$i.new.err" | sed 's/^/    /'
		# A kernel script this spatch cannot run is noted; ours must run.
		case "$cocci" in "$REPO"/*) errors=$((errors + 1)) ;; esac
		continue
	fi
	[ -s "$tmp/$i.new" ] || continue
	: >"$tmp/$i.old"
	if [ ${#old_files[@]} -gt 0 ] && ! run "$tmp/$i.old" "$tmp/old" "$cocci" "${old_files[@]}"; then
		echo "$name: spatch failed on the base files; all its reports count as new"
		: >"$tmp/$i.old"
	fi
	awk -F '\t' 'FILENAME == ARGV[1] { seen[$2]++; next } seen[$2] > 0 { seen[$2]--; next } { print $1 }' \
		"$tmp/$i.old" "$tmp/$i.new" | sort -t: -k1,1 -k2,2n >"$tmp/$i.added"
	n=$(wc -l <"$tmp/$i.added")
	if [ "$n" = 0 ]; then
		echo "$name: $(wc -l <"$tmp/$i.new") report(s), all also on the base"
		continue
	fi
	echo "$name: $n new report(s)"
	sed 's/^/    /' "$tmp/$i.added"
	new_total=$((new_total + n))
done
echo "coccicheck: ${#scripts[@]} script(s) ($skipped skipped) on ${#files[@]} file(s): $new_total new report(s), $errors failed script(s) of ours, $(($(date +%s) - start)) s"
[ "$new_total" = 0 ] && [ "$errors" = 0 ]
