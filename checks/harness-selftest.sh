#!/bin/bash
# The harness under bad input: boot the built kernel (BASE/REV/CONFIG) on
# the 1-node topology with a guest broken on purpose (ktv_inject=, see the
# guest's /init) and check that boot.py reports each failure as such, with
# an excerpt, and exits non-zero within its timeout:
#   panic  PANIC and the panic excerpt     warn  SPLAT and the WARNING
#   hang   HUNG after the timeout          cut   CUT SHORT and the last lines
#   fail   FAIL naming the failed test, then the wrong plan (/init printed
#          the plan of the whole suite, then ran two scripts)
# The verdicts that need no QEMU (skips, plans, fault windows) are the unit
# tests' (qemu-smoke/tests/run.py, on recorded logs).
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/../scripts/boot-lib.sh"
need python3 qemu-system-x86_64
no_dry_run

kernel=$BUILD/arch/x86/boot/bzImage
initrd=$BUILD/initramfs.cpio.gz
if [ ! -f "$kernel" ] || [ ! -f "$initrd" ]; then
	die "no kernel or initramfs in $BUILD: run 'make initramfs'"
fi
ignores_filter TOPO "${TOPO:-}" "the self-test boots its broken guests on 1node"
out=$WORK/results/selftest-$BASE-$REV-$CONFIG
hang_timeout=30

# case: injection, expected verdict prefix, expected text in the report
cases=(
	"panic|PANIC|Kernel panic - not syncing: sysrq triggered crash"
	"warn|SPLAT|WARNING:"
	"hang|HUNG|last console lines:"
	"cut|CUT SHORT|last console lines:"
	"fail|FAIL: ktv-fail.injected_failure; plan 1..|but 2 top-level results"
)
failed=0
printf '%-6s %-10s %-6s %s\n' CASE EXIT TIME RESULT
for c in "${cases[@]}"; do
	IFS='|' read -r inject verdict text <<<"$c"
	timeout=120
	[ "$inject" != hang ] || timeout=$hang_timeout
	t0=$(date +%s)
	rc=0
	report=$(TIMEOUT=$timeout boot_guest "$inject" 1node "inject-$inject" "ktv_inject=$inject" \
		--out "$out/$inject") || rc=$?
	took=$(($(date +%s) - t0))
	row=$(head -n 1 <<<"$report")
	result=ok
	if [ "$rc" = 0 ]; then
		result="WRONG: exit 0"
	elif ! grep -qF "  $verdict" <<<"$row"; then
		result="WRONG: verdict is not '$verdict': $row"
	elif ! grep -qF -- "$text" <<<"$report"; then
		result="WRONG: the report lacks '$text'"
	elif [ "$took" -gt $((timeout + 30)) ]; then
		result="WRONG: took ${took} s, limit ${timeout} s"
	fi
	printf '%-6s %-10s %5ss %s\n' "$inject" "$rc" "$took" "$result"
	if [ "$result" != ok ]; then
		printf '%s\n' "$report" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "harness self-test: $((${#cases[@]} - failed)) of ${#cases[@]} broken guests reported correctly"
[ "$failed" = 0 ]
