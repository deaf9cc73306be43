#!/bin/bash
# The assertions of the checks on hand-made inputs, in seconds and without
# a boot: each must pass on its good input and fail on each bad one.
#  - checks/meter.sh --assert on checks/fixtures/meter/TOPO-*.txt:
#    TOPO-good*.txt must pass, TOPO-bad-*.txt must fail (TOPO names
#    qemu-smoke/topologies/TOPO.topo).
#  - checks/meter.sh --steady on checks/fixtures/meter-steady/*/.
#  - checks/node-arrays.sh --diff on checks/fixtures/node-arrays/*.diff:
#    good-*.diff must pass, bad-*.diff must fail.
#  - checks/cr3-consumers.sh --tree on two made-up trees.
#  - checks/results-provenance.sh on the made-up repositories
#    checks/fixtures/results/*/: good*/ must pass, bad-*/ must fail.
#  - the boot matrices: scripts/run-matrix.sh DRY_RUN=1 on each
#    qemu-smoke/matrix file (REV=v3, an empty WORK: no guest facts) must
#    list exactly the boots of checks/fixtures/matrix/NAME.boots, and
#    scripts/fault-boots.sh those of checks/fixtures/fault-boots.boots; a
#    filter that keeps no row and each checks/fixtures/matrix-bad/ file
#    must fail; the guest facts of two made-up builds
#    (checks/fixtures/facts/) must be those of facts/boots.
#  - the meter itself without QEMU: qemu-smoke/plugin/selftest.c plays a
#    two-node run with phase markers and checks the counters, and the
#    report it writes must pass checks/meter.sh --assert.
# (coccicheck.sh runs its own positive control on checks/fixtures/*.c.)
. "$(dirname "$0")/../scripts/lib.sh"
need make gcc

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
expect() { # pass|fail NAME COMMAND...
	local want=$1 name=$2 got=pass out
	shift 2
	out=$("$@" 2>&1) || got=fail
	if [ "$got" = "$want" ]; then
		echo "ok: $name: ${got}ed, as it should$(printf '%s\n' "$out" | sed -n '1{/./s/^ */: /p}')"
		passed=$((passed + 1))
	else
		echo "FAIL: $name: ${got}ed, it should ${want}"
		[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/    /'
		failed=$((failed + 1))
	fi
}

shopt -s nullglob
reports=("$REPO"/checks/fixtures/meter/*.txt)
[ ${#reports[@]} -gt 0 ] || die "no meter fixture in checks/fixtures/meter/"
for f in "${reports[@]}"; do
	name=${f##*/}
	case "$name" in
	*-good*.txt) want=pass ;;
	*-bad-*.txt) want=fail ;;
	*) die "checks/fixtures/meter/$name: name it TOPO-good*.txt or TOPO-bad-WHY.txt" ;;
	esac
	topo=$REPO/qemu-smoke/topologies/${name%%-*}.topo
	[ -f "$topo" ] || die "checks/fixtures/meter/$name: no topology ${topo#"$REPO"/}"
	expect "$want" "meter $name" "$REPO/checks/meter.sh" --assert "$topo" "$f"
done
# meter.sh --steady on checks/fixtures/meter-steady/TOPO-good*/ and
# TOPO-bad-*/: report.txt and ktap.log, and base.txt and base.ktap for a
# kernel that replicates, compared with one that does not; max_remote, if
# there, is the STEADY_MAX_REMOTE of the check.
steady=("$REPO"/checks/fixtures/meter-steady/*/)
[ ${#steady[@]} -gt 0 ] || die "no fixture in checks/fixtures/meter-steady/"
for f in "${steady[@]}"; do
	f=${f%/}
	name=${f##*/}
	case "$name" in
	*-good*) want=pass ;;
	*-bad-*) want=fail ;;
	*) die "checks/fixtures/meter-steady/$name: name it TOPO-good* or TOPO-bad-WHY" ;;
	esac
	base=()
	[ -f "$f/base.txt" ] && base=("$f/base.txt" "$f/base.ktap")
	# max_remote: the fixture's STEADY_MAX_REMOTE.
	max=
	[ -f "$f/max_remote" ] && read -r max <"$f/max_remote"
	STEADY_MAX_REMOTE=$max expect "$want" "meter steady $name" "$REPO/checks/meter.sh" --steady \
		"$REPO/qemu-smoke/topologies/${name%%-*}.topo" "$f/report.txt" "$f/ktap.log" "${base[@]}"
done
diffs=("$REPO"/checks/fixtures/node-arrays/*.diff)
[ ${#diffs[@]} -gt 0 ] || die "no node-arrays fixture in checks/fixtures/node-arrays/"
for f in "${diffs[@]}"; do
	name=${f##*/}
	case "$name" in
	good-*.diff) want=pass ;;
	bad-*.diff) want=fail ;;
	*) die "checks/fixtures/node-arrays/$name: name it good-*.diff or bad-*.diff" ;;
	esac
	expect "$want" "node-arrays $name" "$REPO/checks/node-arrays.sh" --diff "$f"
done
# cr3-consumers.sh: an unaudited use of ->pgd as an address space fails,
# an audited one with its guard passes.
fake=$tmp/cr3
mkdir -p "$fake/bad/arch/x86/kvm" "$fake/good/arch/x86/hyperv"
printf 'u64 f(struct mm_struct *mm) { return __pa(mm->pgd); }\n' >"$fake/bad/arch/x86/kvm/x.c"
printf 'u64 f(struct mm_struct *mm) { return mm_has_node_pgds(mm) ? 0 : virt_to_phys(mm->pgd); }\n' \
	>"$fake/good/arch/x86/hyperv/mmu.c"
expect fail "cr3-consumers unaudited" "$REPO/checks/cr3-consumers.sh" --tree "$fake/bad"
expect pass "cr3-consumers audited" "$REPO/checks/cr3-consumers.sh" --tree "$fake/good"
# The boot matrices, as their runner lists them: any change to a matrix or
# to the runner that changes a boot shows here. To accept one, regenerate:
#   matrix_boots NAME >checks/fixtures/matrix/NAME.boots
matrix_boots() { # NAME: the boots of qemu-smoke/matrix/NAME, one per line
	WORK=$tmp/work REV=v3 DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$REPO/scripts/run-matrix.sh" "$1" 2>/dev/null |
		sed -e "s|$REPO|REPO|g" -e "s|$tmp/work|WORK|g"
}
matrix_same() { # NAME
	diff -u "$REPO/checks/fixtures/matrix/$1.boots" <(matrix_boots "$1")
}
for m in "$REPO"/checks/fixtures/matrix/*.boots; do
	m=${m##*/}
	expect pass "matrix ${m%.boots}: the recorded boots" matrix_same "${m%.boots}"
done
# The fault-injection boots, listed the same way (with no build, SIZE
# stands for the size of a copy).
fault_boots() {
	WORK=$tmp/work REV=v3 DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$REPO/scripts/fault-boots.sh" 2>/dev/null |
		sed -e "s|$REPO|REPO|g" -e "s|$tmp/work|WORK|g"
}
expect pass "fault boots: the recorded boots" \
	diff -u "$REPO/checks/fixtures/fault-boots.boots" <(fault_boots)
# The guest facts come from the build's .config: two made-up builds
# (checks/fixtures/facts/*.config) under a matrix of their own. A build
# that is off by default gets kernel_replication=on where a boot expects
# replication.
facts_boots() {
	local c
	for c in smoke distro; do
		mkdir -p "$tmp/facts/build/6.12-v3-$c"
		cp "$REPO/checks/fixtures/facts/$c.config" "$tmp/facts/build/6.12-v3-$c/.config"
	done
	WORK=$tmp/facts REV=v3 DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$REPO/scripts/run-matrix.sh" "$REPO/checks/fixtures/facts/matrix" 2>/dev/null |
		sed -e "s|$REPO|REPO|g" -e "s|$tmp/facts|WORK|g"
}
expect pass "guest facts from made-up builds" \
	diff -u "$REPO/checks/fixtures/facts/boots" <(facts_boots)
# Matrices with a wrong row must fail before anything is built.
for m in "$REPO"/checks/fixtures/matrix-bad/*; do
	expect fail "bad matrix ${m##*/}" env WORK="$tmp/work" REV=v3 DRY_RUN=1 CONFIG= TOPO= \
		"$REPO/scripts/run-matrix.sh" "$m"
done
# An include inside an include keeps to the outer list of configurations.
nested_include() {
	local boots
	boots=$(WORK=$tmp/work REV=v3 DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$REPO/scripts/run-matrix.sh" "$REPO/checks/fixtures/matrix-nested" 2>&1) || return
	grep -q -- '--label 6.12-v3-smoke ' <<<"$boots" || { echo "no smoke boot"; return 1; }
	! grep -e smoke-off -e debug <<<"$boots" || { echo "boots beyond the outer list (above)"; return 1; }
}
expect pass "matrix include of an include" nested_include
expect fail "matrix filter that keeps no row" env WORK="$tmp/work" REV=v3 DRY_RUN=1 CONFIG= TOPO=8node \
	"$REPO/scripts/run-matrix.sh" debug
expect fail "matrix filter of an unknown topology" env WORK="$tmp/work" REV=v3 DRY_RUN=1 CONFIG= TOPO=nosuch \
	"$REPO/scripts/run-matrix.sh" smoke
# results-provenance.sh on made-up repositories (README.md and results/).
roots=("$REPO"/checks/fixtures/results/*/)
[ ${#roots[@]} -gt 0 ] || die "no fixture in checks/fixtures/results/"
for r in "${roots[@]}"; do
	r=${r%/}
	name=${r##*/}
	case "$name" in
	good*) want=pass ;;
	bad-*) want=fail ;;
	*) die "checks/fixtures/results/$name: name it good* or bad-WHY" ;;
	esac
	expect "$want" "results-provenance $name" "$REPO/checks/results-provenance.sh" "$r"
done
# The meter's self-test: its output on success is its summary line; the
# arguments it makes the meter refuse print to $tmp/selftest.err.
meter_selftest() {
	make -s -C "$REPO/qemu-smoke/plugin" O="$tmp/plugin" selftest || return
	mkdir -p "$tmp/nodes"
	"$tmp/plugin/selftest" "$tmp/nodes" "$tmp/selftest.txt" 2>"$tmp/selftest.err" ||
		{ cat "$tmp/selftest.err"; return 1; }
	"$REPO/checks/meter.sh" --assert "$REPO/qemu-smoke/topologies/2node.topo" "$tmp/selftest.txt"
}
expect pass "meter selftest" meter_selftest
echo "fixtures: $passed passed, $failed failed"
[ "$failed" = 0 ]
