#!/bin/bash
# The CR3 consumers of mm->pgd in REV's work tree against the audited list
# checks/cr3-consumers (review of v2, A5: Hyper-V's flush named mm->pgd
# while other nodes' CPUs ran the mm with their own PGD). With --tree DIR,
# checks DIR instead (the fixtures' way).
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
	[ -d "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
	dir=$TREE
fi
[ -d "$dir/arch/x86" ] || die "$dir has no arch/x86"
# The series' own files know what they do.
own='arch/x86/mm/kernel_replication.c'
mapfile -t hits < <(cd "$dir" && grep -rlE --include='*.[ch]' \
	'(__pa|virt_to_phys|__sme_pa)\([^()]*->pgd\)' arch/x86 | grep -vxF "$own" | sort)
[ ${#hits[@]} -gt 0 ] || die "no use of ->pgd as an address space found in $dir/arch/x86: the pattern no longer matches"
bad=0
for f in "${hits[@]}"; do
	guard=$(awk -v f="$f" '!/^#/ && $1 == f { print $2; exit }' "$list")
	if [ -z "$guard" ]; then
		echo "$f: names ->pgd as an address space and is not audited in checks/cr3-consumers"
		bad=1
	elif [ "$guard" != - ] && ! grep -qw "$guard" "$dir/$f"; then
		echo "$f: audited on condition of $guard, which it does not use"
		bad=1
	fi
done
[ "$bad" = 0 ] && echo "cr3-consumers: ${#hits[@]} file(s), every one audited"
[ "$bad" = 0 ]
