#!/bin/bash
# Prove that the locality meter counts: build the TCG plugin, boot a kernel
# that does not replicate (the base, or REV with the option off: see the
# Makefile) under it on one node and on two nodes, and assert its reports
# (see meter_assert). A guest that fails its tests fails the check. A
# measurement, asserted; not a benchmark (that is 'make bench').
#
#   meter-check.sh --assert TOPOLOGY.topo locality.txt
# only asserts a report (no build, no boot): checks/fixtures-test.sh runs
# it on the good and bad reports in checks/fixtures/meter/. A report with
# phases (the guest marked one: phase= lines) is also held to
# meter_assert_phases, here and after a boot.
. "$(dirname "$0")/lib.sh"

# meter_assert TOPOLOGY REPORT: print what is wrong with the meter's
# REPORT (qemu-smoke/plugin/README.md) of a boot on TOPOLOGY; fail if any.
#  - complete (header, one vcpu= line per CPU, end), and one nodeN.mem
#    mapping per node with memory: with none, every fetch is "other" and
#    nothing could be remote;
#  - every vCPU fetches kernel code from node memory, and less than a
#    tenth as much from no node (kernel_other, i.e. ROM or unmapped);
#  - the image node, the memory node kernel code is fetched from most,
#    is node 0 (booted with nokaslr, the image is at 64M,
#    CONFIG_PHYSICAL_START): a meter that swapped the nodes would name
#    another;
#  - its vCPUs fetch kernel code locally, remotely less than 10% of it
#    (on one node: never). What they fetch remotely is what the kernel
#    allocates on the other node: modules, BPF JIT, trampolines. Measured
#    on 2026-12-05 with the guest test suite (it loads modules and 200
#    BPF programs from any CPU): 2.2-2.5% (0-0.18% with kbench only,
#    bench-results/v1), against 97% on the far node: 10% is four times
#    the worst measured, and far from anything a meter that mixed up
#    fetches would show;
#  - every other vCPU fetches more kernel code remotely than locally
#    (measured: 96-100% remote).
meter_assert() {
	local nodes cpus f
	for f; do [ -f "$f" ] || die "meter_assert: no $f"; done
	read -r nodes cpus < <(awk '{ sub(/#.*/, "") } $1 == "node" && /mem=/ { n++ }
		$1 == "cpus" { c = $2 } END { print n + 0, c + 0 }' "$1")
	if [ "$nodes" = 0 ] || [ "$cpus" = 0 ]; then die "$1: no node with memory or no cpus line"; fi
	awk -v nodes="$nodes" -v cpus="$cpus" '
	function fields(  i, kv) {
		split("", f)
		for (i = 1; i <= NF; i++)
			if (split($i, kv, "=") == 2)
				f[kv[1]] = kv[2]
	}
	function fail(msg) { print "  " msg; bad = 1 }
	$1 == "locality" { fields(); header = 1; ranges = f["mapped_ranges"] }
	$1 ~ /^vcpu=/ {
		fields(); v = f["vcpu"]; lines++
		if (!(("home" in f) && ("kernel_local" in f) && ("kernel_remote" in f) && ("kernel_other" in f)))
			fail("vcpu " v ": incomplete line: " $0)
		home[v] = f["home"]; loc[v] = f["kernel_local"]; rem[v] = f["kernel_remote"]; oth[v] = f["kernel_other"]
	}
	$1 == "matrix" { fields(); if (f["mem"] != "other") mem[f["mem"]] += f["kernel_insns"] }
	$1 == "end" { end = 1 }
	END {
		if (!header || !end)
			fail("incomplete report: " (header ? "" : "no header line ") (end ? "" : "no end line"))
		if (ranges != nodes)
			fail("mapped_ranges=" ranges ", want " nodes ": the meter does not see every node memory file")
		if (lines != cpus)
			fail(lines + 0 " vcpu line(s), want " cpus)
		top = ""
		for (m in mem)
			if (top == "" || mem[m] > mem[top])
				top = m
		image = "0"
		if (top == "" || mem[top] == 0)
			fail("no kernel code fetched from node memory (matrix lines)")
		else if (top != image)
			fail("kernel code fetched mostly from node " top "; the image (nokaslr: at 64M) is on node 0")
		far = 0
		for (v = 0; v < cpus; v++) {
			if (!(v in loc))
				continue
			all = loc[v] + rem[v]
			if (all == 0)
				fail("vcpu " v ": no kernel code fetched from node memory")
			else if (oth[v] * 10 >= all)
				fail("vcpu " v ": kernel_other=" oth[v] " not under a tenth of the " all " fetches from node memory")
			if (home[v] != image) {
				far++
				if (rem[v] <= loc[v])
					fail("vcpu " v " (home " home[v] ", image on node " image "): kernel_remote=" rem[v] " not above kernel_local=" loc[v])
			} else if (loc[v] == 0 || rem[v] * 10 >= all || (nodes == 1 && rem[v] != 0)) {
				fail("vcpu " v " (on the image node " image "): kernel_local=" loc[v] " kernel_remote=" rem[v] ": want local > 0, remote " (nodes == 1 ? "0" : "under 10%"))
			}
		}
		if (nodes > 1 && !far)
			fail("no vCPU off the image node " image ": nothing can be remote")
		exit bad
	}' "$2"
}

# meter_assert_phases TOPOLOGY REPORT: print what is wrong with the
# phases of the meter's REPORT (the phase=P lines, qemu-smoke/plugin/
# README.md) of a boot on TOPOLOGY; fail if any.
#  - phase 0, the boot, is there; every phase has one vcpu line per CPU
#    and as many lines as the totals; a phase after 0 was marked (marks >
#    0), and the header's phase_marks is the sum of the phases' marks;
#  - the phases add up to the totals: for every total line (vcpu=, node=,
#    vmatrix, matrix, data, rodata) and each of its counters, the sum of
#    the same line over the phases; no phase line without a total line;
#  - a phase's vcpu and node lines say kernel_insns = kernel_local +
#    kernel_remote + kernel_other, and its "phase=P marks=" line the sum
#    of its vcpu lines' kernel_insns;
#  - a phase after the boot counted kernel instructions (the guest marked
#    phases to measure the kernel in them).
meter_assert_phases() {
	local cpus f
	for f; do [ -f "$f" ] || die "meter_assert_phases: no $f"; done
	cpus=$(awk '{ sub(/#.*/, "") } $1 == "cpus" { c = $2 } END { print c + 0 }' "$1")
	[ "$cpus" != 0 ] || die "$1: no cpus line"
	awk -v cpus="$cpus" '
	function fail(msg) { if (++fails <= 20) print "  " msg; bad = 1 }
	# Split the fields from $first on: id = the words and the fields that
	# say whose counts these are ("vcpu=0 node=0 home=0", "data matrix
	# from=1 mem=other"); c[key] = each counter (not remote_frac).
	function parse(first,  i, kv) {
		id = ""
		split("", c)
		for (i = first; i <= NF; i++) {
			if (split($i, kv, "=") != 2)
				id = id " " $i
			else if (kv[1] ~ /^(vcpu|node|home|vcpus|from|mem)$/)
				id = id " " $i
			else if (kv[1] != "remote_frac")
				c[kv[1]] = kv[2] + 0
		}
		id = substr(id, 2)
	}
	$1 == "locality" {
		for (i = 2; i <= NF; i++)
			if ($i ~ /^phase_marks=/) { header_marks = substr($i, 13) + 0; has_marks = 1 }
		next
	}
	$1 == "end" { next }
	$1 !~ /^phase=/ {
		parse(1)
		total[id] = 1
		total_lines++
		for (k in c)
			tot[id, k] = c[k]
		next
	}
	{
		p = substr($1, 7) + 0
		if (!(p in phases))
			nphases++
		phases[p] = 1
		if ($2 ~ /^marks=/) {
			parse(2)
			summary[p] = 1
			marks[p] = c["marks"]
			sum_marks += c["marks"]
			summary_kernel[p] = c["kernel_insns"]
			next
		}
		parse(2)
		lines[p]++
		if (!(id in in_phases)) {
			in_phases[id] = 1
			ids[++nids] = id
		}
		for (k in c)
			if (k != "kernel_insns" || id ~ /^(vmatrix|matrix) /)
				sum[id, k] += c[k]
		if (id ~ /^(vcpu|node)=/) {
			if (!("kernel_insns" in c))
				fail("phase " p " " id ": no kernel_insns")
			else if (c["kernel_insns"] != c["kernel_local"] + c["kernel_remote"] + c["kernel_other"])
				fail("phase " p " " id ": kernel_insns=" c["kernel_insns"] " is not kernel_local + kernel_remote + kernel_other")
		}
		if (id ~ /^vcpu=/) {
			vcpu_lines[p]++
			vcpu_kernel[p] += c["kernel_insns"]
		}
	}
	END {
		if (!nphases) {
			fail("no phase lines")
			exit bad
		}
		if (!(0 in phases))
			fail("no phase 0 (the boot, from reset to the first marker)")
		later = 0
		for (p in phases) {
			if (!(p in summary))
				fail("phase " p ": no phase=" p " marks= line")
			else if (summary_kernel[p] != vcpu_kernel[p])
				fail("phase " p ": kernel_insns=" summary_kernel[p] " but its vcpu lines sum to " vcpu_kernel[p])
			if (p + 0 > 0 && (p in summary) && marks[p] == 0)
				fail("phase " p " counted, but was never marked")
			if (vcpu_lines[p] != cpus)
				fail("phase " p ": " vcpu_lines[p] + 0 " vcpu line(s), want " cpus)
			else if (lines[p] != total_lines)
				fail("phase " p ": " lines[p] + 0 " lines, the totals have " total_lines)
			if (p + 0 > 0 && vcpu_kernel[p] > 0)
				later = 1
		}
		if (!has_marks)
			fail("no phase_marks= in the header")
		else if (header_marks != sum_marks)
			fail("header phase_marks=" header_marks ", the phases were marked " sum_marks " times")
		if (!later)
			fail("no phase after the boot counted kernel instructions")
		for (i = 1; i <= nids; i++)
			if (!(ids[i] in total))
				fail("phase lines [" ids[i] "] have no total line")
		for (key in tot) {
			split(key, kk, SUBSEP)
			if (!(kk[1] in in_phases))
				fail("total line [" kk[1] "] is in no phase")
			else if (sum[key] != tot[key])
				fail("[" kk[1] "] " kk[2] ": the phases sum to " sum[key] + 0 ", the total is " tot[key])
		}
		exit bad
	}' "$2"
}

# The report's assertions: meter_assert, and meter_assert_phases if the
# guest marked phases.
meter_assert_all() {
	local rc=0
	meter_assert "$1" "$2" || rc=1
	if grep -q '^phase=' "$2"; then
		meter_assert_phases "$1" "$2" || rc=1
	fi
	return $rc
}

if [ "${1:-}" = --assert ]; then
	[ $# = 3 ] || die "usage: ${0##*/} [--assert TOPOLOGY.topo locality.txt]"
	meter_assert_all "$2" "$3"
	exit
fi

need make gcc qemu-system-x86_64 python3
plugin_dir=$WORK/plugin
make -s -C "$REPO/qemu-smoke/plugin" O="$plugin_dir" || die "building the locality meter failed"
kernel=$BUILD/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no $kernel: run 'make build REV=$REV'"
out=$WORK/results/meter-$BASE-$REV-$CONFIG
rc=0
for topo in 1node 2node; do
	topo_file=$REPO/qemu-smoke/topologies/$topo.topo
	# nokaslr: the image at 64M, on node 0, whole. With KASLR it can
	# straddle the node boundary (a few percent of boots), and then the
	# image node's vCPUs rightly fetch part of it remotely.
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$kernel" --initrd "$BUILD/initramfs.cpio.gz" \
		--topo "$topo_file" --out "$out/$topo" --append "nokaslr ${APPEND:-}" \
		--meter "$plugin_dir/locality.so" --timeout "${TIMEOUT:-300}" \
		--label "meter $BASE-$REV" ||
		{ say "$topo: the guest under the meter failed (logs in $out/$topo)"; rc=1; }
	report=$out/$topo/locality.txt
	if [ ! -f "$report" ]; then
		say "$topo: no meter report $report"
		rc=1
		continue
	fi
	awk -v t="$topo" '/^vcpu=/ { printf "  %s: %s %s %s %s %s %s\n", t, $1, $2, $4, $5, $6, $NF }' "$report" >&2
	meter_assert_all "$topo_file" "$report" >&2 || { say "$topo: the meter report is wrong (above): $report"; rc=1; }
done
[ "$rc" = 0 ] && say "the locality meter counts (reports in $out)"
exit $rc
