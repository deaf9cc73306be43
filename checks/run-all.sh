#!/bin/bash
# The static checks, as 'make check' runs them before the smoke matrix:
# ShellCheck, py_compile and the fixture tests on the harness, then the
# series checks of REV (in its work tree, made or refreshed by
# scripts/tree.sh). Prints a summary table and fails if any check failed.
# --series-only: only the series checks. --newest: those but coccicheck
# and variants (8-9 min on series-v4): make check's run of the newest
# revision (scripts/check-newest.sh), within its time budget; make check
# REV=vN runs them all.
. "$(dirname "$0")/../scripts/lib.sh"
need shellcheck python3

cd "$REPO"
shopt -s nullglob
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

series_only=0 series=(series-lint node-arrays cr3-consumers checkpatch coccicheck sparse-w1 variants)
case "${1:-}" in
--series-only) series_only=1 ;;
--newest) series_only=1 series=(series-lint node-arrays cr3-consumers checkpatch sparse-w1) ;;
'') ;;
*) die "usage: $0 [--series-only | --newest]" ;;
esac

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

harness_checks() {
	host_sh=(scripts/*.sh checks/*.sh)
	[ ! -f .ci/run ] || host_sh+=(.ci/run)
	guest_sh=(qemu-smoke/guest/init qemu-smoke/guest/*/*.sh)
	py=(qemu-smoke/*.py qemu-smoke/tests/*.py)
	step shellcheck shellcheck "${host_sh[@]}"
	# Guest scripts source guest paths (/lib/ktap.sh, /tests/*): not on the host.
	step shellcheck-guest shellcheck -s sh -e SC1090,SC1091 "${guest_sh[@]}"
	# The bytecode goes to a scratch directory, not into the repository. The
	# harness has Python files: finding none fails the step, it does not skip it.
	py_compile() {
		[ ${#py[@]} -gt 0 ] || { echo "py_compile: no qemu-smoke/*.py found"; return 1; }
		env PYTHONPYCACHEPREFIX="$tmp" python3 -m py_compile "${py[@]}" &&
			echo "py_compile: ${#py[@]} file(s)"
	}
	step py_compile py_compile
	# The checks' own assertions on good and bad hand-made inputs.
	step fixtures "$REPO/checks/fixtures-test.sh"
	# boot.py's parsers on recorded console and KTAP logs (a second, no QEMU).
	step harness-unit python3 "$REPO/qemu-smoke/tests/run.py"
	# Every results entry with its provenance, indexed, linked (no build).
	step results-provenance bash checks/results-provenance.sh
}
[ "$series_only" = 1 ] || harness_checks

if [ "$REV" != base ]; then
	step tree "$REPO/scripts/tree.sh"
fi
for c in "${series[@]}"; do
	step "$c" "$REPO/checks/$c.sh"
done
# The build robots' kernel-doc -Wall on the touched files, against the
# base (seconds); the rest of checks/buildbot.sh is make buildbot.
step kernel-doc "$REPO/checks/buildbot.sh" --part kernel-doc

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
