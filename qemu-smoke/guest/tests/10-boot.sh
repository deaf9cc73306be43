# shellcheck shell=sh
# The guest is the machine the topology describes, with the protections on.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

nodes=$(cat /sys/devices/system/node/online)
ktap_diag "nodes online: $nodes, with memory: $(cat /sys/devices/system/node/has_memory)," \
	"cpus online: $(cat /sys/devices/system/cpu/online)"

count_range() {
	# "0-2,4" -> 4
	echo "$1" | tr ',' '\n' | awk -F- '{ n += (NF == 2) ? $2 - $1 + 1 : 1 } END { print n }'
}
ktap_check nodes_as_in_topology [ "$(count_range "$nodes")" = "${ktv_nodes:-?}" ]
ktap_check cpus_as_in_topology [ "$(count_range "$(cat /sys/devices/system/cpu/online)")" = "${ktv_cpus:-?}" ]

# TCG's CPU is not Meltdown-affected, so sysfs says "Not affected" even
# with pti=on; the kernel log says whether the isolation is on.
# ktv_pti=0: a kernel built without it (the smoke-nopti configuration).
# ptdump's current_user file exists only when PTI is compiled in.
PTDUMP_USER=/sys/kernel/debug/page_tables/current_user
if [ "${ktv_pti:-1}" = 0 ]; then
	ktap_check pti_compiled_out sh -c "! dmesg | grep -q 'page tables isolation: enabled' && [ ! -e $PTDUMP_USER ]"
elif grep -qw pti=off /proc/cmdline; then
	# The last pti= wins: a row that appends pti=off to boot.py's pti=on.
	ktap_check pti_off_as_asked sh -c "! dmesg | grep -q 'page tables isolation: enabled' && [ -e $PTDUMP_USER ]"
else
	ktap_check pti_enabled sh -c "dmesg | grep -qF 'Kernel/User page tables isolation: enabled' && [ -e $PTDUMP_USER ]"
fi

# KASLR: the image is not at both default addresses when it is on (both at
# the default by chance: about 1 in 250000).
stext=$(awk '$3 == "_stext" { print $1 }' /proc/kallsyms)
phys=$(awk -F'[- :]+' '/Kernel code/ { print $2; exit }' /proc/iomem)
ktap_diag "_stext at 0x$stext, kernel code at physical 0x$phys"
# The defaults: the build's CONFIG_PHYSICAL_START (ktv_phys_start, set by
# the host from the .config; smoke.config's 64 MiB if absent).
start=$((${ktv_phys_start:-0x4000000}))
want_stext=$(printf 'ffffffff%08x' $((0x80000000 + start)))
want_phys=$(printf '%08x' "$start")
kaslr_moved() { [ "$stext" != "$want_stext" ] || [ "$phys" != "$want_phys" ]; }
# nokaslr (the partial fault-injection boot): the image at both defaults.
if grep -qw nokaslr /proc/cmdline; then
	kaslr_default() { ! kaslr_moved; }
	ktap_check kaslr_off_as_asked kaslr_default
else
	ktap_check kaslr_active kaslr_moved
fi

if grep -qw la57 /proc/cpuinfo; then levels=5; else levels=4; fi
ktap_diag "paging levels: $levels"
ktap_check paging_as_in_topology [ "$levels" = "${ktv_levels:-?}" ]

# rodata=off: mark_rodata_ro() does not run, nor the W+X check after it.
if grep -qw rodata=off /proc/cmdline; then
	ktap_check no_wx_check_with_rodata_off sh -c '! dmesg | grep -q "Checked W+X mappings"'
else
	ktap_check no_wx_pages dmesg_has "Checked W+X mappings: passed, no W+X pages found"
fi

# The image costs no more than its layout: mark_rodata_ro() gives back the
# whole pages between text and rodata and between rodata and data, and
# rodata ends on the page after its last symbol (v2 padded it to 2 MiB,
# and the padding was never freed). Addresses are differences of 64-bit
# kallsyms values, so shell arithmetic, not awk's doubles.
page_up() { echo $((($1 + 4095) & ~4095)); }
gap_freed() { # NAME START END: the "(NAME) memory: NK" line matches END - page_up(START)
	_k=$((($3 - $(page_up "$2")) / 1024))
	_line=$(dmesg | grep -o "Freeing unused kernel image ($1) memory: [0-9]*K")
	ktap_diag "$1: ${_k}K between the symbols; log: ${_line:-no line}"
	# debug_pagealloc keeps freed init memory unmapped instead
	# (free_init_pages()): "debug: unmapping init [mem START-END]".
	if dmesg | grep -q 'debug: unmapping init'; then
		[ "$_k" -eq 0 ] && return 0
		_range=$(printf '0x%x-0x%x' "$(page_up "$2")" $(($3 - 1)))
		ktap_diag "$1: debug_pagealloc, want 'unmapping init [mem $_range]'"
		dmesg | grep -qF "debug: unmapping init [mem $_range]"
		return
	fi
	if [ "$_k" -gt 0 ]; then
		[ "$_line" = "Freeing unused kernel image ($1) memory: ${_k}K" ]
	else
		[ -z "$_line" ]
	fi
}
if grep -qw rodata=off /proc/cmdline; then
	ktap_skip image_gaps_freed "rodata=off: mark_rodata_ro() frees no gap"
else
	gaps_freed() {
		gap_freed "text/rodata gap" "$(ktv_sym _etext)" "$(ktv_sym __start_rodata)" &&
			gap_freed "rodata/data gap" "$(ktv_sym __end_rodata)" "$(ktv_sym _sdata)"
	}
	ktap_check image_gaps_freed gaps_freed
fi
rodata_tail() {
	_end=$(ktv_sym __end_rodata | sed 's/^0x//')
	_last=$(awk -v e="$_end" '($1 "") < (e "") && ($1 "") > (b "") { b = $1 } END { print b }' /proc/kallsyms)
	ktap_diag "last symbol before __end_rodata at 0x$_last, __end_rodata at 0x$_end"
	[ -n "$_last" ] && [ $((0x$_end - 0x$_last)) -lt 4096 ]
}
ktap_check rodata_not_padded rodata_tail

# The NUMA view the series and the verifier read (which nodes have memory,
# the SLIT) is the one the topology file describes: boot.py passes both
# (ktv_memnodes=0,1 and ktv_slit=10.20/20.10, a row per node).
memnodes() { ktv_expand "$(cat /sys/devices/system/node/has_memory)" | tr -s ' ' ',' | sed 's/,$//'; }
slit() {
	for _n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
		tr -s ' ' '.' <"/sys/devices/system/node/node$_n/distance"
	done | awk '{ printf "%s%s", (NR > 1 ? "/" : ""), $0 }'
}
ktap_diag "memory nodes: $(memnodes), SLIT: $(slit)"
for _n in $(ktv_expand "$(cat /sys/devices/system/node/online)"); do
	ktap_diag "node $_n: $(awk '/MemTotal|MemFree/ { printf "%s %s kB ", $3, $4 }' "/sys/devices/system/node/node$_n/meminfo")"
done
ktap_check memory_nodes_as_in_topology [ "$(memnodes)" = "${ktv_memnodes:-?}" ]
ktap_check slit_as_in_topology [ "$(slit)" = "${ktv_slit:-?}" ]
