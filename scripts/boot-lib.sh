# shellcheck shell=bash
# Booting a built kernel in QEMU: the one place that turns a build and a
# row of a matrix into a qemu-smoke/boot.py command. Sourced after lib.sh.
#
#   guest_facts                 the ktv_* words the guest needs about $BUILD
#   boot_guest NAME TOPO LABEL WORDS [boot.py options...]
#                               (writes OUT/provenance beside the logs)
#
# The guest parameters are listed in qemu-smoke/guest/PARAMETERS.md.

# inventory_args: set INV_ARGS to boot.py's options that give the row's
# inventory (qemu-smoke/expected-tests) its facts: the revision and
# configuration of the kernel in $BUILD, from its build record (build.sh;
# not REV and CONFIG: bench and the meter boot builds of other revisions
# and configurations), its .config, and the revision's series-vN/expect.
inventory_args() {
	local rec=$BUILD/provenance kbase='' rev='' config root
	read -r kbase rev < <(sed -n 's/^revision: //p' "$rec" 2>/dev/null) || true
	config=$(sed -n 's/^configuration: //p' "$rec" 2>/dev/null || true)
	if [ -z "$rev" ] || [ -z "$config" ]; then
		die "$rec: no 'revision:' or 'configuration:' line: rebuild with 'make build'"
	fi
	INV_ARGS=(--base "$kbase" --rev "$rev" --config "$config" --kconfig "$BUILD/.config")
	INV_EXPECT=
	[ "$rev" != base ] || return 0
	root=$REPO
	[ "$kbase" = 6.12 ] || root=$REPO/backports/$kbase
	# vN.P, the tip of parts 1 to P of vN: series-vN/expect.P.
	INV_EXPECT=$root/series-${rev%%.*}/expect
	case "$rev" in *.*) INV_EXPECT=$INV_EXPECT.${rev#*.} ;; esac
	[ -f "$INV_EXPECT" ] ||
		die "no $INV_EXPECT: every revision says what it must show (qemu-smoke/matrix/README.md)"
	INV_ARGS+=(--series-expect "$INV_EXPECT")
}

# has_feature NAME: the revision's series-vN/expect (INV_EXPECT, set by
# inventory_args) declares the feature NAME.
has_feature() { declares "${INV_EXPECT:-}" "$1"; }

# guest_facts: what the guest suites must know about the kernel in $BUILD,
# read from the build itself (its .config), not from the configuration's
# name: where the image lies without KASLR (10-boot), whether the
# activation test is built in (15-status), whether page table isolation
# is (ktv_pti=0: no PTI assertions), for a revision without module
# copies that module text is not replicated (ktv_modules=0), for one
# without a status file that it has none (ktv_status=0), for a revision that does not
# replicate the image yet that it boots with kernel_replication=off, and,
# from the revision's
# series-vN/expect after inventory_args, whether it builds node PGDs per
# mm (ktv_node_pgds=1), and then whether page_owner is built in (booted
# with page_owner=on: ktv_page_owner=1, the second count of node PGD
# pages).
guest_facts() {
	local cfg=$BUILD/.config words=() start
	start=$(sed -n 's/^CONFIG_PHYSICAL_START=//p' "$cfg" 2>/dev/null || true)
	if [ -n "$start" ]; then words+=("ktv_phys_start=$start"); fi
	if grep -qsx 'CONFIG_KERNEL_REPLICATION_ACTIVATION_TEST=y' "$cfg"; then
		words+=(ktv_activation_test=1)
	fi
	if [ -f "$cfg" ] && ! grep -qsxE 'CONFIG_(MITIGATION_)?PAGE_TABLE_ISOLATION=y' "$cfg"; then
		words+=(ktv_pti=0)
	fi
	# Module text is replicated only by a revision with module_copies
	# (not the 6.1 backport, not series-v5 before its part 3).
	if [ -n "${INV_EXPECT:-}" ] && ! has_feature module_copies; then
		words+=(ktv_modules=0)
	fi
	# A revision that replicates without a debugfs status file yet
	# (series-v5 before its status patch): 15-status leaves it out.
	if [ -n "${INV_EXPECT:-}" ] && has_feature image && ! has_feature status; then
		words+=(ktv_status=0)
	fi
	# A revision that builds the option but does not replicate the image
	# yet (series-vN/expect without "image": a revision being rebuilt
	# bottom-up) boots as the option-off baseline it must still be.
	if [ -n "${INV_EXPECT:-}" ] && ! has_feature image &&
		grep -qsx 'CONFIG_KERNEL_REPLICATION=y' "$cfg"; then
		words+=(kernel_replication=off)
	fi
	# Each mm bound to a node lazily, foreign elsewhere until its node PGD
	# is built, with window flushes counted (35-faults).
	if has_feature lazy_pgds; then words+=(ktv_lazy=1); fi
	# A worker, not the task, builds node PGDs: a fork allocates none.
	if has_feature pgd_worker; then words+=(ktv_pgd_worker=1); fi
	# kernel_replication_share=: the kernel's default distance within
	# which a node with CPUs shares a copy (15-status's count of copies).
	if has_feature share_distance; then words+=(ktv_share=12); fi
	# The W+X check of user page tables walks every node's user window.
	if has_feature node_user_wx; then words+=(ktv_user_wx=1); fi
	if has_feature node_pgds; then
		words+=(ktv_node_pgds=1)
		# page_owner=on: a v3 debug row did not finish 30-patching within
		# 400 s with it (the tracer's allocations), 393 s for all without
		# (a stack saved per allocation): only where node PGDs are counted.
		if grep -qsx 'CONFIG_PAGE_OWNER=y' "$cfg"; then words+=(page_owner=on ktv_page_owner=1); fi
	fi
	echo "${words[*]}"
}

# boot_guest NAME TOPO LABEL WORDS [boot.py options...]: boot the bzImage
# and initramfs of $BUILD on qemu-smoke/topologies/TOPO.topo. LABEL is the
# row's first column, which qemu-smoke/expected-skips matches; WORDS are
# the row's own kernel parameters (and kernel_replication=on for a build
# that is off by default, unless the option --as-built is given: the
# kernel as a distribution ships it), followed on the command line by the
# guest facts and then the user's APPEND. Logs
# go to $WORK/results/$BASE-$REV-$CONFIG/NAME; the limit is TIMEOUT
# seconds (150). Options given after WORDS come last and win: --kernel,
# --initrd, --out, --timeout to override, --expect-repl, --expect-faults,
# --header. With DRY_RUN=1, print the command instead of running it.
boot_guest() {
	local name=$1 topo=$2 label=$3 row=$4 cmdline opts=() o as_built=0
	for o in "${@:5}"; do
		if [ "$o" = --as-built ]; then as_built=1; else opts+=("$o"); fi
	done
	# A build that replicates only when asked (Debian's configuration:
	# CONFIG_KERNEL_REPLICATION_DEFAULT_ON off) is asked, unless the row
	# says kernel_replication= itself or boots the kernel as built.
	if [ "$as_built" = 0 ] &&
		grep -qsx '# CONFIG_KERNEL_REPLICATION_DEFAULT_ON is not set' "$BUILD/.config"; then
		case " $row " in *" kernel_replication="*) ;; *) row="$row kernel_replication=on" ;; esac
	fi
	local INV_ARGS=(--no-inventory) INV_EXPECT='' # a dry run before the build: no facts yet
	if [ "${DRY_RUN:-0}" != 1 ] || [ -f "$BUILD/provenance" ]; then
		inventory_args
	fi
	read -ra cmdline <<<"$row $(guest_facts) ${APPEND:-}"
	# MTTCG=1: multi-threaded TCG (one host thread per vCPU) for every row.
	[ "${MTTCG:-0}" != 1 ] || opts+=(--mttcg)
	local cmd=(python3 "$REPO/qemu-smoke/boot.py"
		--kernel "$BUILD/arch/x86/boot/bzImage" --initrd "$BUILD/initramfs.cpio.gz"
		--topo "$REPO/qemu-smoke/topologies/$topo.topo"
		--out "$WORK/results/$BASE-$REV-$CONFIG/$name" --timeout "${TIMEOUT:-150}"
		--label "$label" --append "${cmdline[*]}" "${INV_ARGS[@]}"
		"${opts[@]}")
	if [ "${DRY_RUN:-0}" = 1 ]; then
		printf '%q ' "${cmd[@]}"
		echo
		return 0
	fi
	write_provenance "$topo" "${cmd[@]}"
	"${cmd[@]}"
}

# write_provenance TOPO BOOT.PY-COMMAND...: beside the boot's logs (its
# last --out), what booted: the build's record (build.sh), the boot's
# date, topology and command line, and the machine.
write_provenance() {
	local topo=$1 dir='' append='' prev='' a
	shift
	for a; do
		case "$prev" in --out) dir=$a ;; --append) append=$a ;; esac
		prev=$a
	done
	mkdir -p "$dir"
	{
		cat "$BUILD/provenance" 2>/dev/null || echo "build: no record in $BUILD/provenance"
		echo "booted: $(date -u +%Y-%m-%dT%H:%MZ)"
		echo "topology: $topo"
		echo "words: $append"
		echo "machine: $(nproc) cpus, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo), $(qemu-system-x86_64 --version | head -1), TCG"
	} >"$dir/provenance"
}
