#!/bin/bash
# The CR3 consumers of mm->pgd, and the CR3 loads, in REV's work tree
# against the audited list checks/cr3-consumers (review of v2, A5:
# Hyper-V's flush named mm->pgd while other nodes' CPUs ran the mm with
# their own PGD). With --tree DIR, checks DIR instead (the fixtures' way).
. "$(dirname "$0")/../scripts/lib.sh"
need git grep

list=$REPO/checks/cr3-consumers
if [ "${1:-}" = --tree ]; then
	dir=${2:?usage: $0 [--tree DIR]}
else
	if [ -z "$SERIES_DIR" ]; then
		echo "REV=base: no series, nothing to check"
		exit 0
	fi
	# The audit is of a kernel whose CPUs run other PGDs than mm->pgd.
	if ! rev_declares image; then
		echo "$REV: ${EXPECT_FILE#"$REPO"/} does not declare the feature image (no replication yet): nothing to audit"
		exit 0
	fi
	[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
	dir=$TREE
fi
[ -d "$dir/arch/x86" ] || die "$dir has no arch/x86"
# The series' own files know what they do.
own='arch/x86/mm/kernel_replication.c'
# A ->pgd as an address space: its physical address (__pa(mm->pgd)), a CR3
# value built from it (build_cr3(next->pgd, ...), the argument on the same
# line), and any CR3 load through load_cr3(x), whatever x is: a CPU that
# loads mm->pgd or swapper_pg_dir instead of its node's PGD runs the other
# node's copy. Comment lines and load_cr3()'s own definition are not uses.
# Not seen: a ->pgd read into a local first, an argument on a later line.
pattern='(__pa|virt_to_phys|__sme_pa)\([^()]*->pgd\)'
pattern+='|(^|[^_[:alnum:]])build_cr3(_noflush)?\([^;]*->pgd([^_[:alnum:]]|$)'
pattern+='|(^|[^_[:alnum:]])load_cr3\('
mapfile -t lines < <(cd "$dir" && grep -rnE --include='*.[ch]' "$pattern" arch/x86 |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//)|void[[:space:]]+load_cr3\(' |
	awk -F: -v own="$own" '$1 != own')
mapfile -t hits < <(printf '%s\n' "${lines[@]}" | cut -d: -f1 | sed '/^$/d' | sort -u)
[ ${#hits[@]} -gt 0 ] || die "no use of ->pgd as an address space found in $dir/arch/x86: the pattern no longer matches"
bad=0
for f in "${hits[@]}"; do
	guard=$(awk -v f="$f" '!/^#/ && $1 == f { print $2; exit }' "$list")
	if [ -z "$guard" ]; then
		echo "$f: names ->pgd as an address space or loads CR3, and is not audited in checks/cr3-consumers:"
		printf '%s\n' "${lines[@]}" | awk -F: -v f="$f" '$1 == f' | cut -c1-160 | sed 's/^/    /'
		bad=1
	elif [ "$guard" != - ] && ! grep -qw "$guard" "$dir/$f"; then
		echo "$f: audited on condition of $guard, which it does not use"
		bad=1
	fi
done
[ "$bad" = 0 ] && echo "cr3-consumers: ${#hits[@]} file(s), every one audited"
[ "$bad" = 0 ]
