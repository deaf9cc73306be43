#!/bin/bash
# The static checks, as 'make check' runs them before the smoke matrix:
# ShellCheck and py_compile on the harness, then the series checks of REV
# (in its work tree, made or refreshed by scripts/tree.sh). Prints a summary
# table and fails if any check failed.
. "$(dirname "$0")/../scripts/lib.sh"
need shellcheck python3

cd "$REPO"
shopt -s nullglob
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

names=() results=() times=()
step() { # NAME COMMAND...
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	echo "== $name"
	"$@" || rc=$?
	names+=("$name")
	times+=("$(($(date +%s) - t0)) s")
	if [ "$rc" = 0 ]; then results+=(pass); else results+=("FAIL (exit $rc)"); fi
}

host_sh=(scripts/*.sh checks/*.sh)
[ ! -f .ci/run ] || host_sh+=(.ci/run)
guest_sh=(qemu-smoke/guest/init qemu-smoke/guest/*.sh qemu-smoke/guest/*/*.sh)
py=(qemu-smoke/*.py)
step shellcheck shellcheck "${host_sh[@]}"
# Guest scripts source guest paths (/lib/ktap.sh, /tests/*): not on the host.
step shellcheck-guest shellcheck -s sh -e SC1090,SC1091 "${guest_sh[@]}"
# The bytecode goes to a scratch directory, not into the repository.
[ ${#py[@]} -eq 0 ] || step py_compile env PYTHONPYCACHEPREFIX="$tmp" python3 -m py_compile "${py[@]}"

if [ "$REV" != base ]; then
	step tree "$REPO/scripts/tree.sh"
fi
for c in series-lint checkpatch coccicheck sparse-w1 variants; do
	step "$c" "$REPO/checks/$c.sh"
done

echo
echo "static checks of $BASE $REV:"
printf '  %-16s %-16s %s\n' CHECK RESULT TIME
failed=0
for i in "${!names[@]}"; do
	printf '  %-16s %-16s %s\n' "${names[i]}" "${results[i]}" "${times[i]}"
	[ "${results[i]}" = pass ] || failed=$((failed + 1))
done
echo "checks: $((${#names[@]} - failed)) passed, $failed failed"
[ "$failed" = 0 ]
