#!/bin/bash
# Coccinelle on the .c files the series touches: the kernel's report-mode
# scripts (scripts/coccinelle/) and ours (coccinelle/), run as
# 'make coccicheck MODE=report' runs them (each script's Options:), with
# spatch directly on the files. A report that the same script also gives on
# the base version of the file (compared without line numbers) is not new;
# the check fails on new reports. Headers are not checked.
#
# It fails too when it checked less than it should: a script of ours that
# has no positive control or does not pass it (below), or that did not
# run; a kernel script that failed or timed out and is not in
# checks/coccicheck-known-failures.
. "$(dirname "$0")/../scripts/lib.sh"
need git spatch

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

# Positive control: each script of ours, coccinelle/NAME.cocci, run as
# below on its fixture checks/fixtures/NAME.c, must report exactly the
# lines marked "/* expect-report */".
ours=("$REPO"/coccinelle/*.cocci)
[ -f "${ours[0]}" ] || die "no script in coccinelle/: ours must run"
for cocci in "${ours[@]}"; do
	name=${cocci##*/}
	fixture=$REPO/checks/fixtures/${name%.cocci}.c
	[ -f "$fixture" ] || die "coccinelle/$name has no positive control ${fixture#"$REPO"/}"
	grep -q 'virtual[[:space:]]*report' "$cocci" || die "coccinelle/$name has no report mode"
	want=$(grep -nF '/* expect-report */' "$fixture" | cut -d: -f1 | paste -sd' ')
	[ -n "$want" ] || die "${fixture#"$REPO"/} marks no line /* expect-report */"
	run "$tmp/control" "${fixture%/*}" "$cocci" "${fixture##*/}" ||
		{ tail -n 5 "$tmp/control.err" >&2; die "coccinelle/$name: spatch failed on ${fixture#"$REPO"/}"; }
	got=$(cut -f1 "$tmp/control" | cut -d: -f2 | sort -nu | paste -sd' ')
	[ "$got" = "$want" ] ||
		die "coccinelle/$name: positive control failed: ${fixture#"$REPO"/} wants reports on lines $want, got ${got:-none}"
	echo "coccinelle/$name: positive control ok (reports on lines $want of ${fixture#"$REPO"/})"
done

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
# Without the base tag the file list below would be empty, and pass.
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag: run 'make tree REV=$REV BASE=$BASE'"
[ "$(unexported_count)" = 0 ] ||
	say "warning: $TREE holds commits that are not in ${SERIES_DIR#"$REPO"/}; checking the tree's"

mapfile -t files < <(git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.c')
if [ ${#files[@]} -eq 0 ]; then
	echo "coccicheck: pass: the series touches no .c file, nothing to check"
	exit 0
fi

# The series' and the base's version of each file, at the same relative
# path, so that both runs see the same names and the same (no) neighbours.
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
)
[ ${#scripts[@]} -gt 0 ] || die "no report-mode script in $TREE/scripts/coccinelle"
scripts+=("${ours[@]}")
version=$(spatch --version | awk 'NR == 1 { print $3 }')

# checks/coccicheck-known-failures: "scripts/coccinelle/X.cocci  # reason"
# per line, the kernel's scripts that fail or time out with this spatch.
known_file=$REPO/checks/coccicheck-known-failures
declare -A known=()
while IFS= read -r line; do
	case "$line" in '' | '#'*) continue ;; esac
	path=$(printf '%s' "${line%%#*}" | tr -d '[:space:]')
	case "$line" in *'#'*[![:space:]]*) ;; *) die "${known_file#"$REPO"/}: $path has no reason ('$path  # why')" ;; esac
	known[$path]=$(printf '%s' "${line#*#}" | sed 's/^[[:space:]]*//')
done <"$known_file"

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
	case "$cocci" in "$REPO"/*) mine=1 ;; *) mine= ;; esac
	if [ -f "$tmp/$i.skip" ]; then
		echo "$name: $(cat "$tmp/$i.skip")${mine:+: FAIL, ours must run}"
		skipped=$((skipped + 1))
		[ -z "$mine" ] || errors=$((errors + 1))
		continue
	fi
	# Ours must run; a kernel script may fail only if it is listed.
	if [ -f "$tmp/$i.failed" ] && [ -z "$mine" ] && [ -n "${known[$name]+x}" ]; then
		echo "$name: spatch failed, a known failure: ${known[$name]}"
		continue
	elif [ -f "$tmp/$i.failed" ]; then
		why="not in ${known_file#"$REPO"/}"
		[ -z "$mine" ] || why="ours must run"
		echo "$name: FAIL: spatch failed or timed out ($why):"
		tail -n 5 "$tmp/$i.new.err" | sed 's/^/    /'
		errors=$((errors + 1))
		continue
	elif [ -n "${known[$name]+x}" ]; then
		echo "$name: ran, though listed in ${known_file#"$REPO"/}: remove it there"
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
echo "coccicheck: ${#scripts[@]} script(s) (${#ours[@]} ours, $skipped skipped) on ${#files[@]} file(s): $new_total new report(s), $errors failed script(s) (ours or not known to fail), $(($(date +%s) - start)) s"
[ "$new_total" = 0 ] && [ "$errors" = 0 ]
