# shellcheck shell=sh
# Memory added at run time (the topology's DIMM, ktv_dimms=NODE:ADDR:MIB,
# added through memory/probe and onlined movable, to the node x86 gives
# it: the topology says which). With 4-level paging,
# the DIMM at 768 GiB needs a new top-level entry of the direct map: it
# must reach every mm's PGD (sync_global_pgds()), their node PGDs, and
# each node's kernel PGD. A shell that built node PGDs on every node
# before the memory came reads verify_mm before and after (its own mm:
# the shell's builtin read); then memtouch writes and reads back pages of
# the node from every CPU, which has the kernel clear them through the
# direct map from each CPU's page tables, and checks that some lay in the
# new memory (ZONE_MOVABLE, where movable allocations of the node go
# first). The memory goes offline
# again at the end, so that the suites after this one see the boot nodes.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KREPL=/sys/kernel/debug/kernel_replication
MEM=/sys/devices/system/memory

# The holder, run as "sh FILE CPU...": visits each CPU (builtins only, so
# that the work is this shell's and its mm gets a node PGD there), prints
# verify_mm, says ready, waits for a line on the fifo, prints it again.
cat >/tmp/memhp-holder.sh <<'END'
for c in "$@"; do
	taskset -pc "$c" $$ >/dev/null
	i=0
	while [ $i -lt 3000 ]; do i=$((i + 1)); done
done
while IFS= read -r l; do echo "before $l"; done </sys/kernel/debug/kernel_replication/verify_mm
echo ready
read -r _ </tmp/memhp.go
while IFS= read -r l; do echo "after $l"; done </sys/kernel/debug/kernel_replication/verify_mm
END

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
	_verify=0
	if [ "${ktv_expect:-0}" = 1 ] && [ -r "$KREPL/verify_mm" ] &&
		grep -q kernel_entries "$KREPL/verify_mm"; then
		_verify=1
	fi
	# Node PGDs kept while the memory comes: no trimming meanwhile.
	[ ! -e "$KREPL/trim_ms" ] || { _ms=$(cat "$KREPL/trim_ms"); echo 0 >"$KREPL/trim_ms"; }
	if [ "$_verify" = 1 ]; then
		rm -f /tmp/memhp.go /tmp/memhp.out
		mkfifo /tmp/memhp.go
		# shellcheck disable=SC2086 # one CPU a word
		sh /tmp/memhp-holder.sh $_cpus >/tmp/memhp.out 2>&1 &
		_holder=$!
		_i=0
		while ! grep -q '^ready' /tmp/memhp.out && [ $_i -lt 300 ]; do
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

	if [ "$_verify" = 1 ]; then
		echo go >/tmp/memhp.go
		wait "$_holder"
		while IFS= read -r l; do ktap_diag "$l"; done </tmp/memhp.out
		_e0=$(sed -n 's/^before mm .*kernel_entries=\([0-9]*\).*/\1/p' /tmp/memhp.out)
		_e1=$(sed -n 's/^after mm .*kernel_entries=\([0-9]*\).*/\1/p' /tmp/memhp.out)
		# Every PGD that verify_mm looks at: none differs, every window right.
		_wrong=$(grep '^after' /tmp/memhp.out | grep -cE 'differ=[1-9]|window_ok=0')
		_nodes=$(grep -c '^after node=' /tmp/memhp.out)
		ktap_diag "kernel-half entries of the holder's mm->pgd: $_e0 before, $_e1 after; its node PGDs: $_nodes"
		# The holder visited every node: a PGD for every replica but one.
		_replicas=$(ktv_node_cpus | while read -r _n _c; do ktv_nearest_copy "$_n"; done | sort -u | wc -l)
		# The topology puts the DIMM where its direct map needs one new
		# top-level entry (memhotplug.topo): it must have reached mm->pgd.
		ktap_check hotplug_entry_reaches_every_pgd \
			[ "$_wrong/$_nodes/$((${_e1:-0} - ${_e0:-0}))" = "0/$((_replicas - 1))/1" ]
	fi
	[ ! -e "$KREPL/trim_ms" ] || echo "$_ms" >"$KREPL/trim_ms"

	# shellcheck disable=SC2086 # one CPU a word
	memtouch "${_on:-$_node}" 64 "$_addr-$(printf '0x%x' $((_addr + (_mib << 20))))" $_cpus \
		>/tmp/memtouch.out 2>&1
	_rc=$?
	while IFS= read -r l; do ktap_diag "memtouch: $l"; done </tmp/memtouch.out
	ktap_check new_memory_used_from_every_cpu [ "$_rc" = 0 ]

	for _b in $(blocks_of "$_addr" "$_mib" "$_bs"); do
		echo offline >"$MEM/memory$_b/state" || ktap_diag "memory$_b: could not go offline"
	done
fi
