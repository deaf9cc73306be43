#!/bin/bash
# The assertions of the checks on hand-made inputs, in seconds and without
# a boot: each must pass on its good input and fail on each bad one.
#  - checks/meter.sh --assert on checks/fixtures/meter/TOPO-*.txt:
#    TOPO-good*.txt must pass, TOPO-bad-*.txt must fail (TOPO names
#    qemu-smoke/topologies/TOPO.topo).
#  - checks/meter.sh --steady on checks/fixtures/meter-steady/*/.
#  - checks/tlb.sh --assert on checks/fixtures/tlb/*: good* must pass,
#    bad-* must fail.
#  - checks/node-arrays.sh --diff on checks/fixtures/node-arrays/*.diff:
#    good-*.diff must pass, bad-*.diff must fail.
#  - checks/cr3-consumers.sh --tree on made-up trees.
#  - checks/variants.sh --judge on checks/fixtures/variants/CONFIG.good-*
#    (must pass) and CONFIG.bad-* (must fail), --guard on a made-up kbuild.
#  - checks/results-provenance.sh on the made-up repositories
#    checks/fixtures/results/*/: good*/ must pass, bad-*/ must fail.
#  - series-lint.sh on the made-up revision v0 (checks/fixtures/made-up-rev),
#    and on v8, a revision in two parts: markers, posting rules; the
#    work trees of its parts (tree.sh, export.sh, status.sh).
#  - the boot matrices: scripts/run-matrix.sh DRY_RUN=1 on each
#    qemu-smoke/matrix file (the made-up revision v0 in a SERIES root of
#    its own, an empty WORK: no guest facts) must
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
# kernel that replicates, compared with one that does not, with expect:
# its bounds, in the format of a revision's series-vN/expect.
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
	[ -f "$f/base.txt" ] && base=("$f/base.txt" "$f/base.ktap" "$f/expect")
	expect "$want" "meter steady $name" "$REPO/checks/meter.sh" --steady \
		"$REPO/qemu-smoke/topologies/${name%%-*}.topo" "$f/report.txt" "$f/ktap.log" "${base[@]}"
done
# tlb.sh --assert on checks/fixtures/tlb/good* (must pass) and bad-*
# (must fail): reports of the meter's TLB model, NAME.txt alone or NAME/
# with report.txt, System.map and expect (a revision's known ranges).
tlbs=("$REPO"/checks/fixtures/tlb/[gb]*)
[ ${#tlbs[@]} -gt 0 ] || die "no fixture in checks/fixtures/tlb/"
for f in "${tlbs[@]}"; do
	name=${f##*/}
	case "$name" in
	good*) want=pass ;;
	bad-*) want=fail ;;
	*) die "checks/fixtures/tlb/$name: name it good* or bad-WHY" ;;
	esac
	args=("$f")
	[ ! -d "$f" ] || args=("$f/report.txt" "$f/System.map" "$f/expect")
	expect "$want" "tlb $name" "$REPO/checks/tlb.sh" --assert "${args[@]}"
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
# A CR3 value built from ->pgd, and any load_cr3(), are uses too: each tree
# has the audited file as well, so that it fails on the use alone, not on
# finding nothing (the pattern before build_cr3/load_cr3 passed all three).
# load_cr3()'s definition and a comment naming it are not uses.
i=0
for use in 'build_cr3(next->pgd, new_asid, lam)' 'load_cr3(mm->pgd)' 'load_cr3(x)'; do
	i=$((i + 1)) t=$fake/use-$i
	mkdir -p "$t" && cp -r "$fake/good/arch" "$t/" && mkdir -p "$t/arch/x86/mm"
	printf 'void f(struct mm_struct *mm, struct mm_struct *next, pgd_t *x)\n{\n\t%s;\n}\n' "$use" >"$t/arch/x86/mm/y.c"
	expect fail "cr3-consumers unaudited $use" "$REPO/checks/cr3-consumers.sh" --tree "$t"
done
mkdir -p "$fake/good/arch/x86/include/asm"
printf '/* load_cr3() is serializing */\nstatic inline void load_cr3(pgd_t *pgdir)\n{\n\twrite_cr3(__sme_pa(pgdir));\n}\n' \
	>"$fake/good/arch/x86/include/asm/processor.h"
expect pass "cr3-consumers: load_cr3's definition and comments are no use" \
	"$REPO/checks/cr3-consumers.sh" --tree "$fake/good"
# variants.sh's verdict on made-up file states (checks/fixtures/variants/
# CONFIG.good-* must pass, CONFIG.bad-* fail): the check before it passed
# every bad-* but bad-one-error and bad-none-built, e.g. smoke-hyperv
# without arch/x86/hyperv/mmu.c.
states=("$REPO"/checks/fixtures/variants/*)
[ ${#states[@]} -gt 0 ] || die "no fixture in checks/fixtures/variants/"
for f in "${states[@]}"; do
	name=${f##*/}
	case "$name" in
	*.good-*) want=pass ;;
	*.bad-*) want=fail ;;
	*) die "checks/fixtures/variants/$name: name it CONFIG.good-WHAT or CONFIG.bad-WHY" ;;
	esac
	expect "$want" "variants $name" "$REPO/checks/variants.sh" --judge "${name%%.*}" <"$f"
done
# Its kbuild guards: Hyper-V's directory under $(subst m,y,$(CONFIG_HYPERV)).
kb=$tmp/kbuild
mkdir -p "$kb/arch/x86/hyperv"
# shellcheck disable=SC2016 # kbuild's $(...), not the shell's
printf 'obj-y += mm/\nobj-$(subst m,y,$(CONFIG_HYPERV)) += hyperv/\n' >"$kb/arch/x86/Kbuild"
printf 'obj-y\t\t:= hv_init.o \\\n\t\tmmu.o nested.o\n' >"$kb/arch/x86/hyperv/Makefile"
printf 'CONFIG_HYPERVISOR_GUEST=y\n' >"$kb/off.config"
printf 'CONFIG_HYPERV=m\n' >"$kb/on.config"
guard_is() { # WANT DOTCONFIG
	local got
	got=$("$REPO/checks/variants.sh" --guard "$kb" "$kb/$2" arch/x86/hyperv/mmu.c) || return
	[ "${got%% *}" = "$1" ] || { echo "got '$got', want '$1 ...'"; return 1; }
}
expect pass "variants: mmu.c genuinely off without CONFIG_HYPERV" guard_is unset off.config
expect pass "variants: mmu.c built with CONFIG_HYPERV=m" guard_is set on.config
# A SERIES root of the made-up revision v0 (checks/fixtures/made-up-rev):
# every top-level entry of the repository linked in but the real
# revisions. The dry runs below list v0's boots, not those of v3 or of
# whichever revision is the default, so that a new revision (v5) leaves
# the recorded boots as they are while a change to a matrix, the runner
# or boot-lib.sh still shows. (Replacing REV's name in the output instead
# would still read a real revision's series directory, which can change.)
made_up_root() { # DIR
	local e
	mkdir -p "$1"
	for e in "$REPO"/*; do
		case "${e##*/}" in series-v* | cover-letters | backports) ;; *) ln -s "$e" "$1/" ;; esac
	done
	cp -r "$REPO/checks/fixtures/made-up-rev/." "$1/"
}
root=$tmp/root mrev=v0
made_up_root "$root"
# series-lint on v0: its subjects use upstream's prefixes, "x86/mm:" and
# the x86 BPF JIT's "bpf, x86:" (which the lint refused before); a
# subject without a prefix, or "bpf,x86:", must fail.
lint_subject() { # SUBJECT: v0 with patch 2's subject replaced
	local r
	r=$(mktemp -d -p "$tmp")
	made_up_root "$r"
	sed -i "s/^Subject: \[PATCH 2\/2\] .*/Subject: [PATCH 2\/2] $1/" "$r"/series-$mrev/0002-*.patch
	REV=$mrev WORK=$tmp/work "$r/checks/series-lint.sh"
}
expect pass "series-lint: upstream prefixes (bpf, x86:)" env REV=$mrev WORK="$tmp/work" "$root/checks/series-lint.sh"
expect fail "series-lint: no prefix" lint_subject "a made-up change without a prefix"
expect fail "series-lint: bpf,x86: without a space" lint_subject "bpf,x86: a made-up change"
# The made-up revision v8, in two parts (made-up-rev/series-v8/README):
# series-lint with the part markers and the posting rules, strictly (v8
# has no WIP file), on the whole revision and on part 1; each fault below
# must fail, and a WIP file must turn a posting rule into a warning.
lint8() { # REV SED-SCRIPT FILE...: series-lint on v8 with FILEs edited
	local r rev=$1 script=$2 f
	shift 2
	r=$(mktemp -d -p "$tmp")
	made_up_root "$r"
	for f; do sed -i -e "$script" "$r/$f"; done
	REV=$rev WORK=$tmp/work "$r/checks/series-lint.sh"
}
lint8_wip() { # SED-SCRIPT FILE: as lint8 v8, with a WIP file; passes
	# only when the run warns
	local r out
	r=$(mktemp -d -p "$tmp")
	made_up_root "$r"
	sed -i -e "$1" "$r/$2"
	touch "$r/series-v8/WIP"
	out=$(REV=v8 WORK=$tmp/work "$r/checks/series-lint.sh") || return
	printf '%s\n' "$out" | grep -q ': warning: .*posting rule'
}
p2=series-v8/0002-x86-mm-use-the-made-up-helper.patch
p3=series-v8/0003-x86-mm-document-the-made-up-helper.patch
expect pass "series-lint v8: two parts, posting rules" lint8 v8 '' series-v8/series
expect pass "series-lint v8.1: part 1 alone" lint8 v8.1 '' series-v8/series
expect fail "series-lint v8: parts numbered 1, 3" lint8 v8 's/^# part 2:/# part 3:/' series-v8/series
expect fail "series-lint v8: a malformed marker" lint8 v8 's/^# part 2: /# Part two /' series-v8/series
expect fail "series-lint v8: an empty part" lint8 v8 '/^# part 2:/d; /^0003-/a # part 2: nothing' series-v8/series
lint8_no_expect1() {
	local r
	r=$(mktemp -d -p "$tmp")
	made_up_root "$r"
	rm "$r/series-v8/expect.1"
	REV=v8 WORK=$tmp/work "$r/checks/series-lint.sh"
}
expect fail "series-lint v8: no expect.1" lint8_no_expect1
expect fail "series-lint v8: a results/ path in a changelog" lint8 v8 's|^so that the second part|so that results/ and the second part|' "$p2"
expect fail "series-lint v8: a speedup" lint8 v8 's|^so that the second part|so that it runs 1.3x faster and the second part|' "$p2"
expect fail "series-lint v8: instructions not said to be counted in an emulator" lint8 v8 's|^so that the second part|so that 2% fewer instructions run and the second part|' "$p2"
expect fail "series-lint v8: history above ---" lint8 v8 's|^can take when|v7: can take when|' "$p3"
expect fail "series-lint v8: BUG_ON added" lint8 v8 's|^+/\* three \*/|+BUG_ON(1); /* three */|' "$p3"
expect fail "series-lint v8: a cover without Limits" lint8 v8 's/^Limits$/Bounds/' cover-letters/v8.1
expect fail "series-lint v8.2: a cover without a range-diff" lint8 v8.2 's/range-diff/comparison/' cover-letters/v8.2
expect pass "series-lint v8 WIP: a posting rule only warns" lint8_wip 's|^so that the second part|so that results/ and the second part|' "$p2"
# The work trees of a revision in parts (make-v8-tree.sh makes v8's tree,
# whose export is series-v8 byte for byte).
parts_root=$tmp/parts-root parts_work=$tmp/parts-work
made_up_root "$parts_root"
"$REPO/checks/fixtures/made-up-rev/make-v8-tree.sh" "$parts_work/trees/6.12-v8"
in_parts() { # REV SCRIPT [ARGS...]: a workflow script on the v8 trees
	local rev=$1 script=$2
	shift 2
	REV=$rev WORK=$parts_work "$parts_root/scripts/$script" "$@"
}
v8_part1_tip() { # make tree REV=v8.1 makes a tree at part 1's patch
	in_parts v8 tree.sh && in_parts v8.1 tree.sh || return
	[ "$(git -C "$parts_work/trees/6.12-v8.1" rev-parse HEAD)" = \
		"$(git -C "$parts_work/trees/6.12-v8" rev-parse work~2)" ]
}
v8_status() { # make status names the part's tree and counts nothing
	local out
	out=$(in_parts v8 status.sh) || return
	printf '%s\n' "$out" | grep -Eq '^6\.12-v8\.1 +clean +0 +.*\(parts 1 to 1 of 6\.12-v8\)$'
}
v8_new_patch() { # a new patch at the end joins part 2; part 2's tree follows
	local t=$parts_work/trees/6.12-v8
	printf '/* four */\n' >>"$t/arch/x86/mm/made_up.c"
	git -C "$t" commit -q -a -s -m "x86/mm: a fourth made-up change" \
		-m "Made after the export, so that it has no part of its own yet and must join the part of the patch before it."
	in_parts v8 export.sh || return
	tail -n 1 "$parts_root/series-v8/series" | grep -qx '0004-x86-mm-a-fourth-made-up-change.patch' || return
	grep -c '^# part ' "$parts_root/series-v8/series" | grep -qx 2 || return
	in_parts v8.2 tree.sh || return
	[ "$(git -C "$parts_work/trees/6.12-v8.2" rev-list --count base..HEAD)" = 4 ]
}
v8_part_commit() { # a commit made in a part's tree is refused, not lost
	local t=$parts_work/trees/6.12-v8.1 rc=0
	printf '/* lost? */\n' >>"$t/arch/x86/mm/made_up.c"
	git -C "$t" commit -q -a -m "x86/mm: made in a part's tree" || return
	in_parts v8.1 tree.sh || rc=1
	git -C "$t" checkout -q --detach HEAD~1
	[ "$rc" = 1 ]
}
v8_empty_part() { # an export that would empty part 1 writes nothing
	local t=$parts_work/trees/6.12-v8 before rc=0
	before=$(cat "$parts_root/series-v8/series")
	git -C "$t" branch -q keep
	git -C "$t" reset -q --hard base
	git -C "$t" cherry-pick -q keep~2..keep >/dev/null 2>&1 || rc=2
	in_parts v8 export.sh || rc=1
	git -C "$t" reset -q --hard keep
	git -C "$t" branch -q -D keep
	[ "$rc" = 1 ] && [ "$(cat "$parts_root/series-v8/series")" = "$before" ]
}
v8_first_export() { # a series file with only its first marker: the patches join part 1
	local r=$tmp/first-root w=$tmp/first-work
	made_up_root "$r"
	printf '# part 1: x86/mm: the first part\n' >"$r/series-v8/series"
	rm "$r"/series-v8/*.patch
	"$REPO/checks/fixtures/made-up-rev/make-v8-tree.sh" "$w/trees/6.12-v8"
	REV=v8 WORK=$w "$r/scripts/export.sh" || return
	[ "$(head -n 1 "$r/series-v8/series")" = "# part 1: x86/mm: the first part" ] &&
		[ "$(grep -c '^0' "$r/series-v8/series")" = 3 ]
}
expect pass "export: the first patches join the first part" v8_first_export
v8_new_part() { # a marker at the end of the series file starts a part
	local r=$tmp/np-root w=$tmp/np-work t
	made_up_root "$r"
	t=$w/trees/6.12-v8
	"$REPO/checks/fixtures/made-up-rev/make-v8-tree.sh" "$t"
	printf '# part 3: x86/mm: a third part\n' >>"$r/series-v8/series"
	printf '/* five */\n' >>"$t/arch/x86/mm/made_up.c"
	git -C "$t" commit -q -a -s -m "x86/mm: the first patch of part three" \
		-m "A patch made after a marker that ends the series file, which must start the part."
	REV=v8 WORK=$w "$r/scripts/export.sh" || return
	[ "$(tail -n 2 "$r/series-v8/series" | head -n 1)" = "# part 3: x86/mm: a third part" ] &&
		[ "$(grep -c '^# part ' "$r/series-v8/series")" = 3 ]
}
expect pass "export: a marker at the end starts a part" v8_new_part
v8_subject_case() { # a subject whose case changed keeps its part
	local r=$tmp/case-root w=$tmp/case-work t
	made_up_root "$r"
	t=$w/trees/6.12-v8
	"$REPO/checks/fixtures/made-up-rev/make-v8-tree.sh" "$t"
	git -C "$t" commit -q --amend -m "x86/mm: Document the made-up helper" \
		-m "$(git -C "$t" log -1 --format=%b)"
	REV=v8 WORK=$w "$r/scripts/export.sh" || return
	[ "$(sed -n 3p "$r/series-v8/series")" = "# part 2: x86/mm: a made-up user" ] &&
		[ "$(tail -n 1 "$r/series-v8/series")" = "0003-x86-mm-Document-the-made-up-helper.patch" ]
}
expect pass "export: a subject whose case changed keeps its part" v8_subject_case
expect pass "tree: the tree of part 1 is at its last patch" v8_part1_tip
expect pass "status: a part's tree" v8_status
expect fail "export: refused for a part" in_parts v8.1 export.sh
expect fail "tree: no part 3" in_parts v8.3 tree.sh
expect pass "export: a new patch joins the part before it" v8_new_patch
expect pass "tree: a commit in a part's tree is refused" v8_part_commit
expect pass "export: a part left empty is refused" v8_empty_part
# The sender's identity (scripts/identity.sh): refused when it is the
# role's, .invalid or not "Name <mail>", or missing (HOME without a git
# identity); then stamped on v8's commits as From: and Signed-off-by:.
sender_is() { # SENDER PATCH_AUTHOR: print sender_identity's answer
	HOME=$tmp/no-home SENDER=$1 PATCH_AUTHOR=$2 bash -c \
		'die() { echo "$*" >&2; exit 1; }; . "$1/scripts/identity.sh"; sender_identity' - "$REPO"
}
role='Kernel Text Replication Maintainers <ktext-repl@example.invalid>'
expect pass "sender: SENDER" sender_is "Test Sender <t@example.org>" "$role"
expect pass "sender: PATCH_AUTHOR set to a person" sender_is "" "Test Sender <t@example.org>"
expect fail "sender: none (the role, no git identity)" sender_is "" "$role"
expect fail "sender: the role" sender_is "$role" "$role"
expect fail "sender: an .invalid address" sender_is "Test Sender <t@x.invalid>" "$role"
expect fail "sender: not Name <mail>" sender_is "t@example.org" "$role"
stamped() { # v8's tree stamped: author, committer, Signed-off-by; trees kept
	local t=$tmp/stamp who="Test Sender <t@example.org>" c
	"$REPO/checks/fixtures/made-up-rev/make-v8-tree.sh" "$t"
	git -C "$t" branch -q b4 work
	bash -c '. "$1/scripts/identity.sh"; stamp_identity "$2" base b4 "$3"' - "$REPO" "$t" "$who" || return
	[ "$(git -C "$t" rev-list --count base..b4)" = 3 ] || return
	[ "$(git -C "$t" rev-parse 'b4^{tree}')" = "$(git -C "$t" rev-parse 'work^{tree}')" ] || return
	for c in $(git -C "$t" rev-list base..b4); do
		[ "$(git -C "$t" log -1 --format='%an <%ae>|%cn <%ce>' "$c")" = "$who|$who" ] || return
		[ "$(git -C "$t" log -1 --format=%B "$c" | grep -c '^Signed-off-by: ')" = 1 ] || return
		git -C "$t" log -1 --format=%B "$c" | grep -qxF "Signed-off-by: $who" || return
	done
	! git -C "$t" log --format=%B base..b4 | grep -q example.invalid
}
expect pass "identity: stamped on the b4 branch" stamped
# The boot matrices, as their runner lists them: any change to a matrix or
# to the runner that changes a boot shows here. To accept one, regenerate
# every recorded listing: REGENERATE=1 checks/fixtures-test.sh
matrix_boots() { # NAME: the boots of qemu-smoke/matrix/NAME, one per line
	WORK=$tmp/work REV=$mrev DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$root/scripts/run-matrix.sh" "$1" 2>/dev/null |
		sed -e "s|$root|REPO|g" -e "s|$REPO|REPO|g" -e "s|$tmp/work|WORK|g"
}
# same FILE COMMAND...: FILE holds what COMMAND prints; with
# REGENERATE=1, write it instead (after a change meant to change a boot:
# say why in the commit).
same() {
	local f=$1
	shift
	if [ "${REGENERATE:-0}" = 1 ]; then "$@" >"$f"; fi
	diff -u "$f" <("$@")
}
matrix_same() { # NAME
	same "$REPO/checks/fixtures/matrix/$1.boots" matrix_boots "$1"
}
for m in "$REPO"/checks/fixtures/matrix/*.boots; do
	m=${m##*/}
	expect pass "matrix ${m%.boots}: the recorded boots" matrix_same "${m%.boots}"
done
# The fault-injection boots, listed the same way (with no build, SIZE
# stands for the size of a copy).
fault_boots() {
	WORK=$tmp/work REV=$mrev DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$root/scripts/fault-boots.sh" 2>/dev/null |
		sed -e "s|$root|REPO|g" -e "s|$REPO|REPO|g" -e "s|$tmp/work|WORK|g"
}
expect pass "fault boots: the recorded boots" \
	same "$REPO/checks/fixtures/fault-boots.boots" fault_boots
# The guest facts come from the build's .config: two made-up builds
# (checks/fixtures/facts/*.config) under a matrix of their own. A build
# that is off by default gets kernel_replication=on where a boot expects
# replication.
facts_boots() {
	local c
	for c in smoke distro; do
		mkdir -p "$tmp/facts/build/6.12-$mrev-$c"
		cp "$REPO/checks/fixtures/facts/$c.config" "$tmp/facts/build/6.12-$mrev-$c/.config"
		printf 'revision: 6.12 %s\nconfiguration: %s\n' "$mrev" "$c" \
			>"$tmp/facts/build/6.12-$mrev-$c/provenance"
	done
	WORK=$tmp/facts REV=$mrev DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$root/scripts/run-matrix.sh" "$REPO/checks/fixtures/facts/matrix" 2>/dev/null |
		sed -e "s|$root|REPO|g" -e "s|$REPO|REPO|g" -e "s|$tmp/facts|WORK|g"
}
expect pass "guest facts from made-up builds" \
	same "$REPO/checks/fixtures/facts/boots" facts_boots
# Matrices with a wrong row must fail before anything is built.
for m in "$REPO"/checks/fixtures/matrix-bad/*; do
	expect fail "bad matrix ${m##*/}" env WORK="$tmp/work" REV=$mrev DRY_RUN=1 CONFIG= TOPO= \
		"$root/scripts/run-matrix.sh" "$m"
done
# An include inside an include keeps to the outer list of configurations.
nested_include() {
	local boots
	boots=$(WORK=$tmp/work REV=$mrev DRY_RUN=1 TOPO='' CONFIG='' APPEND='' \
		"$root/scripts/run-matrix.sh" "$REPO/checks/fixtures/matrix-nested" 2>&1) || return
	grep -q -- "--label 6.12-$mrev-smoke " <<<"$boots" || { echo "no smoke boot"; return 1; }
	! grep -e smoke-off -e debug <<<"$boots" || { echo "boots beyond the outer list (above)"; return 1; }
}
expect pass "matrix include of an include" nested_include
expect fail "matrix filter that keeps no row" env WORK="$tmp/work" REV=$mrev DRY_RUN=1 CONFIG= TOPO=8node \
	"$root/scripts/run-matrix.sh" debug
expect fail "matrix filter of an unknown topology" env WORK="$tmp/work" REV=$mrev DRY_RUN=1 CONFIG= TOPO=nosuch \
	"$root/scripts/run-matrix.sh" smoke
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
