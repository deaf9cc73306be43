#!/bin/bash
# Every measured result says where it came from (issue 20). For each entry
# of results/ (results/*/README.md and results/*.md but results/README.md):
# its first 15 lines must hold the five provenance lines ('- revision:',
# '- kernel commit:', '- configuration:', '- date:', '- machine:', each
# with a value), and
# results/README.md, the index, must link to it. A folder of results/
# without a README.md fails too. README.md may link only results files
# that exist. Prints one line per failure, then the counts.
# Usage: checks/results-provenance.sh [ROOT]   (ROOT: a repository, default
# this one; checks/fixtures/results/*/ are small made-up ones).
set -euo pipefail

root=${1:-$(dirname "$0")/..}
[ -d "$root/results" ] || { echo "results-provenance: no $root/results/" >&2; exit 1; }
index=$root/results/README.md
fields=("- revision:" "- kernel commit:" "- configuration:" "- date:" "- machine:")

# The link targets of a markdown file, one per line, without an anchor.
links() {
	grep -o '](\([^)]*\))' "$1" | sed -e 's/^](//' -e 's/)$//' -e 's/#.*//' || true
}

# The entries the index links to: folder names and .md file names.
indexed=
if [ -f "$index" ]; then
	indexed=$(links "$index" | sed -e 's|^\./||' -e 's|README\.md$||' -e 's|/$||')
fi

entries=0 failed=0
check() { # PATH KEY: the entry's file (relative to ROOT) and its name in the index
	local file=$1 key=$2 f top bad=0
	entries=$((entries + 1))
	if [ ! -f "$root/$file" ]; then
		echo "$file: missing"
		failed=$((failed + 1))
		return
	fi
	top=$(head -n 15 "$root/$file")
	for f in "${fields[@]}"; do
		if ! grep -q -- "^$f [^ ]" <<<"$top"; then
			echo "$file: no '$f' line with a value in its first 15 lines"
			bad=1
		fi
	done
	if ! grep -qxF -- "$key" <<<"$indexed"; then
		echo "$file: not linked from results/README.md"
		bad=1
	fi
	failed=$((failed + bad))
}

shopt -s nullglob
for d in "$root"/results/*/; do
	d=${d%/}
	check "results/${d##*/}/README.md" "${d##*/}"
done
for f in "$root"/results/*.md; do
	[ "${f##*/}" = README.md ] && continue
	check "results/${f##*/}" "${f##*/}"
done

dead=0
if [ -f "$root/README.md" ]; then
	while read -r target; do
		[ -n "$target" ] || continue
		if [ ! -e "$root/$target" ]; then
			echo "README.md: links $target, which does not exist"
			dead=$((dead + 1))
		fi
	done < <(links "$root/README.md" | sed 's|^\./||' | grep '^results/' || true)
fi

summary="$entries entries, $failed failed"
[ "$dead" = 0 ] || summary="$summary; README.md: $dead dead link(s)"
echo "results-provenance: $summary"
[ "$failed" = 0 ] && [ "$dead" = 0 ]
