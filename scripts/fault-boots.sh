#!/bin/bash
# Boot-time fault injection: the debug configuration of BASE/REV booted
# with the series' fault attribute failing replication allocations, every
# one of them, then only one node's copy. The guest tests assert the
# fallback (one copy, or the nearest node's copy) and that nothing leaked.
# Module-time failures are in the guest tests (tests/35-faults.sh).
# The rows are labelled BASE-REV-CONFIG-fault-NAME: qemu-smoke/expected-skips
# allows these boots fewer skips (16-degraded must run).
asked=${CONFIG:-}
export CONFIG=${CONFIG_FAULTS:-debug}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/expect.sh"
. "$(dirname "$0")/boot-lib.sh"
need python3 qemu-system-x86_64
[ "${asked:-$CONFIG}" = "$CONFIG" ] ||
	ignores_filter CONFIG "$asked" "the fault-injection boots use CONFIG_FAULTS ($CONFIG)"
ignores_filter TOPO "${TOPO:-}" "the fault-injection boots are 2node and three on 4node-near"

if [ "$REV" = base ]; then
	say "the base kernel has no replication: no fault-injection boots"
	exit 0
fi
if [ "${DRY_RUN:-0}" != 1 ]; then
	"$REPO/scripts/build.sh"
	"$REPO/scripts/initramfs.sh"
	check_build_config "$BUILD/.config"
	grep -qx 'CONFIG_FAIL_KERNEL_REPLICATION=y' "$BUILD/.config" ||
		die "$BASE $REV $CONFIG has no CONFIG_FAIL_KERNEL_REPLICATION=y: the fault-injection boots cannot run"
fi
rc=0
# copy_size SYSTEM.MAP: the bytes of one copy, as krepl_reserve_memory()
# computes them: text and rodata, each rounded up to 2 MiB.
copy_size() {
	local t et r er m=$((2 << 20))
	read -r t et r er < <(awk '$3 == "_text" { t = $1 } $3 == "_etext" { et = $1 }
		$3 == "__start_rodata" { r = $1 } $3 == "__end_rodata" { er = $1 }
		END { print t, et, r, er }' "$1")
	[ -n "$er" ] || return 1
	echo $((((16#$et - 16#$t + m - 1) / m + (16#$er - 16#$r + m - 1) / m) * m))
}
# fault_boot NAME TOPOLOGY PARAMS [boot.py options]
fault_boot() {
	TIMEOUT=${TIMEOUT:-1200} boot_guest "$2-$1" "$2" "$BASE-$REV-$CONFIG-fault-$1" "$3" "${@:4}"
}
# Every allocation failing: the kernel must come up with one copy, as a
# base kernel does, and say so. Booted without --expect-repl: the one-copy
# assertions apply.
fault_boot nocopy 2node "fail_kernel_replication=1,100,0,-1" || rc=1
# Only the first failing: the first copy reserved, that of the first node
# after the image's, is not made. nokaslr keeps the image on node 0, so
# that is node 1, which must use node 2's copy (SLIT 15), not the
# original; nodes 0, 2 and 3 stay local (tests/16-degraded.sh).
fault_boot partial 4node-near "nokaslr fail_kernel_replication=1,100,0,1 ktv_nocopy=1" \
	--expect-repl || rc=1
# Two failures after the copies were reserved (the attribute's space lets
# through the calls that ask for less than is left: each reservation and
# each read-only step asks for the copy's size S, a page table for a page
# or two), both of node 1, which must then use node 2's copy as above:
#  - protect: its copy is made read-only through the direct map, then the
#    step fails (injected after the change): the copy must be made
#    writable again before it is freed, which init_on_free=1 checks by
#    zeroing every freed page through the direct map;
#  - tables: all three copies read-only, its first page table fails: its
#    copy is given back at the end, writable again.
# The kernel must say why, in words of its own for each.
# A dry run may have no build: SIZE stands for the copy's size then.
if [ "${DRY_RUN:-0}" = 1 ] && [ ! -f "$BUILD/System.map" ]; then
	protect_space='3*SIZE+1' tables_space='6*SIZE+1'
else
	size=$(copy_size "$BUILD/System.map") || die "no copy size from $BUILD/System.map"
	protect_space=$((3 * size + 1)) tables_space=$((6 * size + 1))
	# A revision that allocates every node's tables before it makes the
	# copies (the feature table_pools: series-v5) asks, after the three
	# reservations, for each node's pool first: a PGD (8 KiB with PTI
	# built in, as every configuration here has it) and a page per pool
	# entry (3, and one per 2 MiB block of the copy), and with module
	# copies (part 2) the module area's PMD page and 4 spare PTE tables
	# (KREPL_MOD_SPARE_TABLES; the master has no PTE table above the
	# split before the first module loads). The first pool failing is
	# the tables case; protect fails after all three pools.
	inventory_args
	if has_feature table_pools; then
		mod=0
		if has_feature module_copies; then mod=5; fi
		pool=$((8192 + (3 + mod + size / (2 << 20)) * 4096))
		tables_space=$((3 * size + 1)) protect_space=$((3 * size + 3 * pool + 1))
	fi
fi
# fault_reason NAME MESSAGE: the console log of boot NAME has MESSAGE.
# fault_reason NAME REGEX: the boot NAME's log says why node 1 has no copy
# (an extended regular expression: series-v5 says "copy" where series-v4
# and older said "replica").
fault_reason() {
	[ "${DRY_RUN:-0}" != 1 ] || return 0
	local log=$WORK/results/$BASE-$REV-$CONFIG/4node-near-$1/console.log
	grep -qE "$2" "$log" || { say "$1: no message matching '$2' in $log"; return 1; }
}
# Past their failure, both boot as partial does (node 1 uses node 2's
# copy): they run the scripts that check that state and leaks, not the
# text writers again (30-patching and 32-code-copies took 270 s of each
# under the debug configuration).
degraded_only=ktv_only=10-boot,15-status,16-degraded,20-verifier,35-faults,90-kmemleak
fault_boot protect 4node-near \
	"nokaslr init_on_free=1 fail_kernel_replication=1,100,$protect_space,1 ktv_nocopy=1 $degraded_only" \
	--expect-repl || rc=1
fault_reason protect "node 1: the (replica|copy)'s direct map cannot be made read-only, no (replica|copy)" || rc=1
fault_boot tables 4node-near \
	"nokaslr init_on_free=1 fail_kernel_replication=1,100,$tables_space,1 ktv_nocopy=1 $degraded_only" \
	--expect-repl || rc=1
fault_reason tables "node 1: no memory for the (replica|copy)'s page tables" || rc=1
[ "${DRY_RUN:-0}" != 1 ] || say "$BASE $REV: 4 fault-injection boots listed, nothing built or booted (DRY_RUN)"
exit $rc
