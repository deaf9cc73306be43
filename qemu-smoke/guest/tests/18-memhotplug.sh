# shellcheck shell=sh
# Memory added at run time (the topology's DIMM, ktv_dimms=NODE:ADDR:MIB,
# added through memory/probe and onlined movable, to the node x86 gives
# it: the topology says which). With 4-level paging,
# the DIMM at 768 GiB needs a new top-level entry of the direct map: it
# must reach every mm's PGD (sync_global_pgds()), their node PGDs, and
# each node's kernel PGD. A holder process (wander) runs on every CPU
# before the memory comes, until one of its CPUs runs a node PGD of its mm,
# and waits; after, on every CPU, it reads the harness verifier's mm_pgd
# (its own mm: the root in CR3 against mm->pgd) and writes pages of the
# DIMM's node from its own mm. Then memtouch, a new process, writes and
# reads back pages of the node from every CPU, which has the kernel clear
# them through the direct map from each CPU's page tables, and checks that
# some lay in the new memory (ZONE_MOVABLE, where movable allocations of
# the node go first). The memory goes offline
# again at the end, so that the suites after this one see the boot nodes.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KREPL=/sys/kernel/debug/kernel_replication
MEM=/sys/devices/system/memory
KTV_MM_PGD=$KTV_DBG/ktext_verify/mm_pgd

# blocks_of ADDR MIB BLOCKSIZE: the memory block numbers that cover it.
blocks_of() {
	_b=$(($1 / $3))
	while [ $((_b * $3)) -lt $(($1 + ($2 << 20))) ]; do
		echo "$_b"
		_b=$((_b + 1))
	done
}

if [ -z "${ktv_dimms:-}" ]; then
	ktap_skip memory_hotplug "the topology has no DIMM to add"
elif [ ! -w "$MEM/probe" ]; then
	ktap_fail memory_hotplug "no $MEM/probe: the kernel lacks CONFIG_MEMORY_HOTPLUG or CONFIG_ARCH_MEMORY_PROBE"
else
	IFS=: read -r _node _addr _mib <<-END
		${ktv_dimms%%,*}
	END
	_bs=$((0x$(cat "$MEM/block_size_bytes")))
	_cpus=$(ktv_expand "$(cat /sys/devices/system/cpu/online)")
	_range=$_addr-$(printf '0x%x' $((_addr + (_mib << 20))))
	# The holder's check needs the harness's verifier (its mm_pgd),
	# loaded here unless something loaded it already, and node PGDs per
	# mm (ktv_node_pgds=1, from the host): there, a missing mm_pgd fails
	# the test instead of leaving it out.
	_verify=0
	if [ "${ktv_expect:-0}" = 1 ] && [ "${ktv_node_pgds:-0}" = 1 ]; then
		ktv_verifier_borrow
		_verify=missing
		[ ! -r "$KTV_MM_PGD" ] || _verify=1
	fi
	# Node PGDs kept while the memory comes: no trimming meanwhile (where
	# the revision trims).
	[ ! -e "$KREPL/trim_ms" ] || { _ms=$(cat "$KREPL/trim_ms"); echo 0 >"$KREPL/trim_ms"; }
	if [ "$_verify" = 1 ]; then
		# The holder: 20 ms on every CPU, then passes over them until
		# one runs a node PGD (-p), "ready"; then, at the end of its
		# input, mm_pgd and 16 MiB of the DIMM's node on every CPU (-t).
		rm -f /tmp/memhp.go /tmp/memhp.out
		mkfifo /tmp/memhp.go
		: >/tmp/memhp.out
		# shellcheck disable=SC2086 # one CPU a word
		wander -w -p -t "$_node:16:$_range" 20 $_cpus </tmp/memhp.go >>/tmp/memhp.out 2>&1 &
		_holder=$!
		# Its input: open until the memory is there (the holder's open
		# of the FIFO returns only now).
		exec 3>/tmp/memhp.go
		_i=0
		while ! grep -q '^ready' /tmp/memhp.out && kill -0 "$_holder" 2>/dev/null &&
			[ $_i -lt 300 ]; do
			sleep 0.1
			_i=$((_i + 1))
		done
	fi

	_bad=0
	for _b in $(blocks_of "$_addr" "$_mib" "$_bs"); do
		printf '0x%x\n' $((_b * _bs)) >"$MEM/probe" || _bad=1
		echo online_movable >"$MEM/memory$_b/state" || _bad=1
	done
	_first=$(blocks_of "$_addr" "$_mib" "$_bs" | head -n 1)
	_on=
	for _l in "$MEM/memory$_first"/node*; do
		[ -e "$_l" ] && _on=${_l##*node}
	done
	_total=$(sed -n 's/.*MemTotal: *\([0-9]*\) kB/\1/p' "/sys/devices/system/node/node${_on:-$_node}/meminfo" 2>/dev/null)
	ktap_diag "DIMM $_mib MiB at $_addr, blocks of $_bs bytes: node ${_on:-none} (topology: $_node), MemTotal ${_total:-0} kB"
	[ "${_total:-0}" -gt 0 ] || _bad=1
	ktap_check memory_added [ "$_bad/${_on:-x}" = "0/$_node" ]

	# What it catches: a top-level entry that the hot-add writes into
	# every mm->pgd but not into a node PGD of an mm made before. On the
	# CPUs that run that PGD, its root then differs from mm->pgd (mm_pgd
	# differ > 0 in an "after" line), and the kernel, running the holder
	# there, cannot reach the new memory through its direct map: the
	# holder's writes oops (it dies) or fail. It also fails when it would
	# test nothing: no CPU ran a node PGD of the holder before the memory
	# came and after (no own=0 line, where the CPUs' nodes use two copies
	# or more), or the hot-add made no new top-level entry (the kernel
	# half of mm->pgd not one entry more: kernel_entries), or a CPU is
	# missing.
	if [ "$_verify" = 1 ]; then
		exec 3>&-
		wait "$_holder"
		_hrc=$?
		while IFS= read -r l; do ktap_diag "$l"; done </tmp/memhp.out
		_e0=$(sed -n 's/^before .* kernel_entries=\([0-9]*\).*/\1/p' /tmp/memhp.out | head -n 1)
		_e1=$(sed -n 's/^after .* kernel_entries=\([0-9]*\).*/\1/p' /tmp/memhp.out | head -n 1)
		_after=$(grep -c '^after cpu=' /tmp/memhp.out)
		_wrong=$(grep '^after cpu=' /tmp/memhp.out | grep -cv ' differ=0 ')
		_own0=$(grep -c '^before cpu=.* own=0 ' /tmp/memhp.out)/$(grep -c '^after cpu=.* own=0 ' /tmp/memhp.out)
		_ncpus=$(echo "$_cpus" | wc -w)
		ktap_diag "kernel-half entries of the holder's mm->pgd: ${_e0:-?} before, ${_e1:-?} after; CPUs on a node PGD before/after: $_own0; roots unlike mm->pgd after: $_wrong of $_after; holder's exit status $_hrc"
		# With one copy for every node with CPUs no node PGD is built.
		_pgd=ok
		if [ "$(ktv_cpu_replicas)" -ge 2 ]; then
			case $_own0 in 0/* | */0) _pgd=none ;; esac
		fi
		ktap_check hotplug_entry_reaches_every_pgd \
			[ "$_after/$_wrong/$_hrc/$_pgd/$((${_e1:-0} - ${_e0:-0}))" = "$_ncpus/0/0/ok/1" ]
	elif [ "$_verify" = missing ]; then
		ktap_fail hotplug_entry_reaches_every_pgd "ktv_node_pgds=1 but no $KTV_MM_PGD (the verifier ktext_verify.ko did not load)"
	fi
	[ ! -e "$KREPL/trim_ms" ] || echo "$_ms" >"$KREPL/trim_ms"

	# shellcheck disable=SC2086 # one CPU a word
	memtouch "${_on:-$_node}" 64 "$_range" $_cpus >/tmp/memtouch.out 2>&1
	_rc=$?
	while IFS= read -r l; do ktap_diag "memtouch: $l"; done </tmp/memtouch.out
	ktap_check new_memory_used_from_every_cpu [ "$_rc" = 0 ]

	for _b in $(blocks_of "$_addr" "$_mib" "$_bs"); do
		echo offline >"$MEM/memory$_b/state" || ktap_diag "memory$_b: could not go offline"
	done
	ktv_verifier_return
fi
