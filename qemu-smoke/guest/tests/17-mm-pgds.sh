# shellcheck shell=sh
# The cost of per-node PGDs per process, counted by the series' status
# file (mm_pgd_builds, mm_pgd_pages):
# - a process that runs on one node has no node PGD: 0 builds, 0 pages,
#   for fork+exec+exit and for long-lived processes, on every node;
# - a process that runs on several nodes gets one PGD per further replica
#   node it ran on (and none for a node whose replica it had), holds them
#   while it uses them and gives them back when it exits;
# - one that no longer runs there loses them while it lives: at once with
#   the debugfs trim (as under memory pressure), within two periods of the
#   trimming work otherwise (where the revision trims: series-v5 keeps them
#   for the life of the mm, has neither knob, and those two tests skip).
# Each part runs in a shell pinned to one CPU, which reads the counters
# itself: nothing else forks or migrates meanwhile. The host says whether
# the revision builds node PGDs per mm and counts them (ktv_node_pgds=1,
# its feature node_pgds); elsewhere (series-v3 and older build every
# node's PGD at fork) the part skips.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KREPL_STATUS=/sys/kernel/debug/kernel_replication/status
KTV_MM_PGD=$KTV_DBG/ktext_verify/mm_pgd

# The harness's own verifier (qemu-smoke/verifier), for its mm_pgd: each
# CPU's root against the reader's mm->pgd. Loaded here where the node PGD
# tests run, unless something loaded it already, and removed at the end
# (20-verifier loads it again).
KTV_BORROWED=0
if [ "${ktv_expect:-0}" = 1 ] && [ "${ktv_nodes:-1}" -ge 2 ] &&
	[ "${ktv_node_pgds:-0}" = 1 ]; then
	ktv_verifier_borrow
fi

# pgds_held_ok BUILDS PAGES: PAGES is BUILDS PGDs of one page each, or of
# two (a kernel built with page table isolation allocates the user half
# whether or not PTI is on).
pgds_held_ok() {
	[ "$1" -gt 0 ] && { [ "$2" = "$1" ] || [ "$2" = "$(($1 * 2))" ]; }
}

# The counting part, run pinned as "sh FILE MODE CPU...": every CPU runs a
# process of its own first (ktv_settle: an idle CPU keeps the last mm it
# ran, lazy TLB, and its PGDs) and every idle node PGD is trimmed (where
# the kernel can), then with MODE "one" 50 fork+exec+exit and
# 20 sleepers, then wander spins 20 ms on each CPU given and holds. Prints
# the deltas of mm_pgd_builds and mm_pgd_pages while it holds, of
# mm_pgd_pages after trimming while it still holds (MODE "trim": debugfs
# trim; "age": waits up to 10 s for the trimming work; else nothing), and
# of mm_pgd_pages once everything is gone and settled.
cat >/tmp/mm-pgds.sh <<'END'
. /lib/ktv.sh
mode=$1
shift
ktv_settle
# From what no living process holds: another process's PGDs freed by the
# trims below would count against this one's.
ktv_krepl_trim
b0=$(ktv_krepl_stat mm_pgd_builds) p0=$(ktv_krepl_stat mm_pgd_pages)
f0=$(ktv_krepl_stat foreign_loads) x0=$(ktv_krepl_stat mm_pgd_failures)
r0=$(ktv_krepl_stat build_requests)
if [ "$mode" = one ]; then
	i=0
	while [ $i -lt 50 ]; do /bin/true; i=$((i + 1)); done
	i=0
	while [ $i -lt 20 ]; do sleep 2 & i=$((i + 1)); done
fi
mkfifo /tmp/mm-pgds.fifo
# The last run's "ready" must not count: the child truncates the output
# only after the FIFO's open, which returns when this shell opens it too,
# so this shell could find the old "ready" before wander has even started.
: >/tmp/mm-pgds.out
wander -w -v 20 "$@" </tmp/mm-pgds.fifo >>/tmp/mm-pgds.out &
exec 3>/tmp/mm-pgds.fifo
until grep -q ready /tmp/mm-pgds.out; do sleep 0.1; done
b1=$(ktv_krepl_stat mm_pgd_builds) p1=$(ktv_krepl_stat mm_pgd_pages)
f1=$(ktv_krepl_stat foreign_loads) r1=$(ktv_krepl_stat build_requests)
case $mode in
trim) ktv_krepl_trim ;;
age)
	i=0
	while [ $i -lt 100 ] && [ "$(ktv_krepl_stat mm_pgd_pages)" != "$p0" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	;;
esac
p2=$(ktv_krepl_stat mm_pgd_pages)
exec 3>&-
wait
rm -f /tmp/mm-pgds.fifo
ktv_settle
# Last, for the diagnostics only: foreign loads and failed builds meanwhile.
echo "$((b1 - b0)) $((p1 - p0)) $((p2 - p0)) $(($(ktv_krepl_stat mm_pgd_pages) - p0))" \
	"foreign=$(($(ktv_krepl_stat foreign_loads) - f0)) failed=$(($(ktv_krepl_stat mm_pgd_failures) - x0))" \
	"builds=$(($(ktv_krepl_stat mm_pgd_builds) - b0))" \
	"(by ready: foreign=$((f1 - f0)) requests: $r0 -> $r1; wander: $(tr '\n' ' ' </tmp/mm-pgds.out))"
END

one_node_ok() { # NODE CPU
	_got=$(taskset -c "$2" sh /tmp/mm-pgds.sh one "$2")
	ktap_diag "node $1 (cpu $2): builds, pages while alive (twice), pages after: $_got (want 0 0 0 0)"
	[ "${_got%% foreign=*}" = "0 0 0 0" ]
}

if [ "${ktv_expect:-0}" != 1 ] || [ "${ktv_nodes:-1}" -lt 2 ]; then
	ktap_skip node_pgds "no replication on this kernel or topology"
elif [ "${ktv_node_pgds:-0}" != 1 ]; then
	ktap_skip node_pgds "ktv_node_pgds=0: the revision does not build node PGDs per mm, or cannot count them yet"
elif ! grep -q '^mm_pgd_pages ' "$KREPL_STATUS" 2>/dev/null; then
	ktap_fail node_pgds "ktv_node_pgds=1 but no mm_pgd_pages in the status file"
else
	ktv_node_cpus >/tmp/mm-pgds.nodecpus
	_bad=0
	while read -r _n _c; do
		one_node_ok "$_n" "$_c" || _bad=1
	done </tmp/mm-pgds.nodecpus
	ktap_check one_node_processes_have_no_node_pgds [ "$_bad" = 0 ]

	# One CPU of every node with CPUs; the PGDs a process that visits them
	# all needs: one per replica besides the one of the node it starts on.
	_cpus=$(awk '{ print $2 }' /tmp/mm-pgds.nodecpus | tr '\n' ' ')
	_first=${_cpus%% *}
	_replicas=$(while read -r _n _c; do ktv_nearest_copy "$_n"; done </tmp/mm-pgds.nodecpus |
		sort -u | wc -l)
	_want=$((_replicas - 1))
	# shellcheck disable=SC2086 # one CPU a word
	_got=$(taskset -c "$_first" sh /tmp/mm-pgds.sh trim $_cpus $_cpus)
	ktap_diag "cpus $_cpus twice over ($_replicas replicas): builds, pages while alive, after the debugfs trim, after exit: $_got"
	read -r _builds _held _trimmed _after _ <<-END
		$_got
	END
	ktap_check wandering_process_builds_one_pgd_per_further_replica [ "${_builds:-x}" = "$_want" ]
	# A wanderer that built nothing (a rare failure): which replica each
	# node and each CPU uses, as the status file says, for the report.
	if [ "${_builds:-x}" != "$_want" ]; then
		grep -E '^(master|node=|cpu_replicas)' "$KREPL_STATUS" | while IFS= read -r l; do ktap_diag "status: $l"; done
	fi
	ktap_check wandering_process_holds_them pgds_held_ok "$_builds" "$_held"
	if [ -e /sys/kernel/debug/kernel_replication/trim ]; then
		ktap_check idle_process_loses_them_to_trim [ "${_trimmed:-x}" = 0 ]
	else
		ktap_skip idle_process_loses_them_to_trim "no debugfs trim: the revision keeps node PGDs for the life of the mm"
	fi
	ktap_check node_pgds_freed_at_exit [ "${_after:-x}" = 0 ]

	# The trimming work at a period of 200 ms: a node PGD unused for one
	# period and not running at the end of the next is freed.
	if [ -e /sys/kernel/debug/kernel_replication/trim_ms ]; then
		_ms=$(cat /sys/kernel/debug/kernel_replication/trim_ms)
		echo 200 >/sys/kernel/debug/kernel_replication/trim_ms
		# shellcheck disable=SC2086 # one CPU a word
		_got=$(taskset -c "$_first" sh /tmp/mm-pgds.sh age $_cpus)
		echo "$_ms" >/sys/kernel/debug/kernel_replication/trim_ms
		ktap_diag "trim_ms=200, cpus $_cpus: builds, pages while alive, after up to 10 s idle, after exit: $_got"
		read -r _builds _held _aged _after _ <<-END
			$_got
		END
		ktap_check idle_process_loses_them_in_time [ "${_builds:-x}/${_aged:-x}" = "$_want/0" ]
		if [ "${_builds:-x}" != "$_want" ]; then
			grep -E '^(master|node=|cpu_replicas|mm_binds|foreign_loads)' "$KREPL_STATUS" |
				while IFS= read -r l; do ktap_diag "status: $l"; done
		fi
	else
		ktap_skip idle_process_loses_them_in_time "no debugfs trim_ms: the revision keeps node PGDs for the life of the mm"
	fi
fi

# The series' count of node PGD pages (mm_pgd_pages) against the page
# allocator's own record of them (page_owner: the pages allocated now
# whose allocation stack holds the series' allocator, KTV_PGD_ALLOC), with
# everything settled and trimmed, while a wanderer holds a node PGD per
# further copy, and once it is gone: a page that the series stops counting
# but never frees, or frees without counting it, shows here (kmemleak does
# not track the page allocator). ktv_page_owner=1 (from the host: the
# build has CONFIG_PAGE_OWNER and boots with page_owner=on) and
# ktv_node_pgds=1 (the revision's node PGDs are built by KTV_PGD_ALLOC).
# Run pinned, as the counting part above.
cat >/tmp/mm-pgds-owner.sh <<'END'
. /lib/ktv.sh
bad=0
ktv_settle
ktv_krepl_trim
ktv_pgd_pages_owned "settled and trimmed" || bad=1
mkfifo /tmp/mm-pgds-owner.fifo
: >/tmp/mm-pgds-owner.out
wander -w 20 "$@" </tmp/mm-pgds-owner.fifo >>/tmp/mm-pgds-owner.out &
exec 3>/tmp/mm-pgds-owner.fifo
until grep -q ready /tmp/mm-pgds-owner.out; do sleep 0.1; done
ktv_pgd_pages_owned "a wanderer holds its node PGDs" || bad=1
held=$(ktv_krepl_stat mm_pgd_pages)
if ! ktv_is_count "$held" || [ "$held" -eq 0 ]; then
	echo "no node PGD pages while the wanderer holds its node PGDs ('$held')"
	bad=1
fi
exec 3>&-
wait
rm -f /tmp/mm-pgds-owner.fifo
ktv_settle
ktv_krepl_trim
ktv_pgd_pages_owned "the wanderer gone, settled and trimmed" || bad=1
exit $bad
END

# Only where the host says both (the row's inventory wants the test there
# and nowhere else).
if [ "${ktv_page_owner:-0}" != 1 ] || [ "${ktv_node_pgds:-0}" != 1 ] ||
	[ "${ktv_expect:-0}" != 1 ] || [ "${ktv_nodes:-1}" -lt 2 ]; then
	ktap_diag "page_owner count not compared: ktv_page_owner=${ktv_page_owner:-0} ktv_node_pgds=${ktv_node_pgds:-0} ktv_expect=${ktv_expect:-0} ktv_nodes=${ktv_nodes:-1}"
elif [ "$(ktv_cpu_replicas)" -lt 2 ]; then
	ktap_skip node_pgd_pages_match_page_owner "the nodes with CPUs use one copy: no node PGD is ever built"
else
	_cpus=$(ktv_node_cpus | awk '{ print $2 }' | tr '\n' ' ')
	# shellcheck disable=SC2086 # one CPU a word
	_got=$(taskset -c "${_cpus%% *}" sh /tmp/mm-pgds-owner.sh $_cpus)
	_rc=$?
	printf '%s\n' "$_got" | while IFS= read -r l; do ktap_diag "page_owner: $l"; done
	ktap_check node_pgd_pages_match_page_owner [ "$_rc" = 0 ]
fi

# Node PGDs built while top-level entries change: pgdrace's children hop
# over every CPU while they map and unmap memory in empty 512 GiB slots and
# write their LDT; each then visits every CPU and reads the verifier's
# mm_pgd there (the harness's check, not the series' word on itself): the
# root in CR3 must equal mm->pgd but for the window, and one CPU at least
# must run a node PGD (own=0; pgdrace waits up to 0.5 s for it: series-v5
# builds in a worker). Series-v4's build_min_ns=0, where the revision has
# the knob: a build at every first visit of a node, so at least one build
# per child. Where the CPUs' nodes share one copy nothing is built
# (pgdrace -z). With 5-level paging those slots are below one top-level
# entry: the race is then only with the LDT's. ktv_node_pgds=1 (the host
# says the revision builds node PGDs per mm): a missing mm_pgd (the
# verifier did not load) fails these tests instead of leaving them out.
KREPL_MIN_NS=/sys/kernel/debug/kernel_replication/build_min_ns
_races=0
if [ "${ktv_expect:-0}" = 1 ] && [ "${ktv_nodes:-1}" -ge 2 ] && [ "${ktv_node_pgds:-0}" = 1 ]; then
	if [ -r "$KTV_MM_PGD" ]; then
		_races=1
		_z=
		[ "$(ktv_cpu_replicas)" -ge 2 ] || _z=-z
	else
		for _t in node_pgds_equal_after_races node_pgds_built_during_races node_pgds_equal_across_cpu_hotplug; do
			ktap_fail "$_t" "ktv_node_pgds=1 but no $KTV_MM_PGD (the verifier ktext_verify.ko did not load)"
		done
	fi
fi
# min_ns_zero, min_ns_restore: build_min_ns at 0 and back, where it exists.
_min=
[ ! -e "$KREPL_MIN_NS" ] || _min=$(cat "$KREPL_MIN_NS")
min_ns_zero() { [ -z "$_min" ] || echo 0 >"$KREPL_MIN_NS"; }
min_ns_restore() { [ -z "$_min" ] || echo "$_min" >"$KREPL_MIN_NS"; }
if [ "$_races" = 1 ]; then
	min_ns_zero
	_b0=$(ktv_krepl_stat mm_pgd_builds)
	pgdrace ${_z:+"$_z"} 20 200 >/tmp/pgdrace.out 2>&1
	_rc=$?
	_b1=$(ktv_krepl_stat mm_pgd_builds)
	min_ns_restore
	while IFS= read -r l; do ktap_diag "$l"; done </tmp/pgdrace.out
	ktap_check node_pgds_equal_after_races [ "$_rc" = 0 ]
	if [ -n "$_z" ]; then
		ktap_skip node_pgds_built_during_races "the nodes with CPUs use one copy: no node PGD is ever built"
	elif ! ktv_is_count "$_b0" || ! ktv_is_count "$_b1"; then
		ktap_fail node_pgds_built_during_races "no mm_pgd_builds count in the status file ('$_b0', '$_b1')"
	else
		ktap_diag "node PGDs built meanwhile: $((_b1 - _b0)) (at least one per child: 20)"
		ktap_check node_pgds_built_during_races [ $((_b1 - _b0)) -ge 20 ]
	fi
fi

# The same while CPUs go offline and online (every CPU but 0, 3 rounds):
# bring-up sets the CPU's replica again (krepl_init_secondary()), a dying
# CPU leaves the mms it ran, and the builds' IPIs skip offline CPUs.
# pgdrace's passes leave out a CPU that is offline at the moment.
if [ "$_races" = 1 ]; then
	_hot=$(ktv_expand "$(cat /sys/devices/system/cpu/online)" | tr ' ' '\n' | grep -v '^0$' | tr '\n' ' ')
	min_ns_zero
	pgdrace ${_z:+"$_z"} 10 300 >/tmp/pgdrace-hot.out 2>&1 &
	_pid=$!
	_bad=0
	for _r in 1 2 3; do
		for _c in $_hot; do
			echo 0 >"/sys/devices/system/cpu/cpu$_c/online" || _bad=1
			echo 1 >"/sys/devices/system/cpu/cpu$_c/online" || _bad=1
		done
	done
	wait "$_pid"
	_rc=$?
	min_ns_restore
	ktap_diag "cpus $_hot offline and online 3 times; $(tail -n 1 /tmp/pgdrace-hot.out)"
	[ "$_rc" = 0 ] || grep -v '^pgdrace:' /tmp/pgdrace-hot.out | while IFS= read -r l; do ktap_diag "$l"; done
	ktap_check node_pgds_equal_across_cpu_hotplug [ "$_rc$_bad" = 00 ]
fi
ktv_verifier_return
