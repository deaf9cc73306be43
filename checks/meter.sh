#!/bin/bash
# Prove that the locality meter counts: build the TCG plugin, boot a kernel
# that does not replicate (the base, or REV with the option off: see the
# Makefile) under it on one node and on two nodes with the meter guest
# (ktv_suite=meter: it marks the meter's phases after boot and runs one
# kbench case per node), and assert its reports (meter_assert, the phases:
# meter_assert_phases, the steady state: meter_steady). With
# METER_SERIES=CONFIG, also REV built with CONFIG, which replicates, on
# two nodes: its steady state must be more local. A guest that fails its
# tests fails the check. A measurement, asserted; not a benchmark (that
# is 'make bench').
#
#   meter.sh --assert TOPOLOGY.topo locality.txt
#   meter.sh --steady TOPOLOGY.topo locality.txt ktap.log [BASE... EXPECT]
# only assert a report (no build, no boot): checks/fixtures-test.sh runs
# them on the good and bad inputs in checks/fixtures/meter/ and
# checks/fixtures/meter-steady/ (whose series cases give their bounds in
# an expect file, as a revision's series-vN/expect does). A report with
# phases (the guest marked one: phase= lines) is also held to
# meter_assert_phases, here and after a boot.
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/../scripts/boot-lib.sh"

# meter_assert TOPOLOGY REPORT: print what is wrong with the meter's
# REPORT (qemu-smoke/plugin/README.md) of a boot on TOPOLOGY; fail if any.
#  - complete (header, one vcpu= line per CPU, end), and one nodeN.mem
#    mapping per node with memory: with none, every fetch is "other" and
#    nothing could be remote;
#  - every vCPU fetches kernel code from node memory, and under 1% as
#    much from no node (kernel_other, i.e. ROM or unmapped). Measured: 0
#    on every recorded report (checks/fixtures/meter/*-good*.txt, the 19
#    of results/runs-v4-*/); the fixture of a meter blind to node 1's
#    memory (2node-bad-one-mapping.txt) has 0.18-2.8%;
#  - the image node, the memory node kernel code is fetched from most,
#    is node 0 (booted with nokaslr, the image is at 64M,
#    CONFIG_PHYSICAL_START): a meter that swapped the nodes would name
#    another;
#  - its vCPUs fetch kernel code locally, remotely under 1% of it (on
#    one node: never). What they fetch remotely is what the kernel
#    allocates on the other node: modules, BPF JIT, trampolines. Measured
#    with the meter guest that this script boots (kbench only): 0.17-0.18%
#    (checks/fixtures/meter/2node-good*.txt; results/bench-v1: 0-0.18%;
#    results/runs-v4-*/, kernels that replicate: at most 0.05%), against
#    96-100% on the far node: 1% is five times the worst measured. (The
#    full guest test suite, which loads modules and 200 BPF programs from
#    any CPU and is not booted here, measured 2.2-2.5% on 2026-12-05.)
#  - every other vCPU fetches more kernel code remotely than locally
#    (measured: 96-100% remote).
# topo_counts TOPOLOGY: set nodes and cpus (the caller's locals) to the
# nodes with memory and the CPUs of a .topo file; dies if either is 0.
topo_counts() {
	[ -f "$1" ] || die "no topology $1"
	read -r nodes cpus < <(awk '{ sub(/#.*/, "") } $1 == "node" && /mem=/ { n++ }
		$1 == "cpus" { c = $2 } END { print n + 0, c + 0 }' "$1")
	if [ "$nodes" = 0 ] || [ "$cpus" = 0 ]; then die "$1: no node with memory or no cpus line"; fi
}

meter_assert() {
	local nodes cpus f
	for f; do [ -f "$f" ] || die "meter_assert: no $f"; done
	topo_counts "$1"
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
			else if (oth[v] * 100 >= all)
				fail("vcpu " v ": kernel_other=" oth[v] " not under 1% of the " all " fetches from node memory")
			if (home[v] != image) {
				far++
				if (rem[v] <= loc[v])
					fail("vcpu " v " (home " home[v] ", image on node " image "): kernel_remote=" rem[v] " not above kernel_local=" loc[v])
			} else if (loc[v] == 0 || rem[v] * 100 >= all || (nodes == 1 && rem[v] != 0)) {
				fail("vcpu " v " (on the image node " image "): kernel_local=" loc[v] " kernel_remote=" rem[v] ": want local > 0, remote " (nodes == 1 ? "0" : "under 1%"))
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
	local nodes cpus f
	for f; do [ -f "$f" ] || die "meter_assert_phases: no $f"; done
	topo_counts "$1"
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
	# pages=on: totals of the phases after boot only, in no phase line;
	# the stretches of a phase: its own counts again, split.
	$1 ~ /^remote_pages?$/ || $2 == "stretches" { next }
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

# steady_bounds EXPECT: set far_max and image_max (the caller's) to
# EXPECT's meter_far_max_remote and meter_image_max_remote lines: the
# largest fraction of its kernel instruction fetches a CPU may take from
# another node's memory in the steady state, off the image node and on
# it. EXPECT is a revision's series-vN/expect (qemu-smoke/matrix/
# README.md: one KEY VALUE a line, # comments), or a fixture's file in
# that format. Dies if the file or a line is missing, repeated or not a
# fraction from 0 to 1.
steady_bounds() {
	local key n val
	[ -f "$1" ] || die "no $1: a revision gives the bounds of its steady state there (meter_far_max_remote, meter_image_max_remote: qemu-smoke/matrix/README.md)"
	for key in meter_far_max_remote meter_image_max_remote; do
		read -r n val < <(awk -v k="$key" '{ sub(/#.*/, "") } $1 == k { n++; v = $2 } END { print n + 0, v }' "$1")
		[ "$n" = 1 ] || die "$1: $n '$key' line(s), want one: '$key FRACTION'"
		[[ $val =~ ^(0(\.[0-9]+)?|1(\.0*)?|\.[0-9]+)$ ]] || die "$1: $key '$val' is not a fraction from 0 to 1"
		case "$key" in
		meter_far_max_remote) far_max=$val ;;
		*) image_max=$val ;;
		esac
	done
}

# cpu_nodes TOPOLOGY: the nodes with CPUs of a .topo file, as
# qemu-smoke/topology.py reads it: kbench -m runs its cases on each.
cpu_nodes() {
	python3 - "$REPO/qemu-smoke" "$1" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from topology import Topology
print(*sorted({int(n) for n in Topology(sys.argv[2]).cpunodes().split(":")}))
EOF
}

# meter_steady TOPOLOGY REPORT KTAP [BASE_REPORT BASE_KTAP EXPECT]: the
# steady state, from the kbench phases that the meter guest
# (ktv_suite=meter) marked after boot: KTAP's "meter-phase P CASE ops=N
# node=X cpu=C" lines name each case's phase and CPU. Prints, per case,
# the kernel instructions per operation and the remote fraction of that
# CPU in that phase; fails if
#  - a case that ran on one node did not run on every node with CPUs in
#    TOPOLOGY (kbench -m skips a node whose cpulist it cannot read, and
#    says nothing), or ran on a node without;
#  - a case's phase counted no kernel instruction, or none from node
#    memory, on its CPU;
#  - on one node, anything was fetched remotely;
#  - without BASE_REPORT (a kernel that does not replicate): on the image
#    node (0, nokaslr), 10% or more was fetched remotely (measured in the
#    steady state: 0.0000, results/bench-v4-at-42 base and series-off; a
#    meter that swapped the nodes shows 1.0); a CPU off the image node
#    fetched less remotely than locally (measured: 1.0000);
#  - with BASE_REPORT (this kernel replicates; BASE_* are the same guest on
#    a kernel that does not), bounded by EXPECT (steady_bounds): the image
#    node's remote fraction is above meter_image_max_remote; a CPU off the
#    image node has no case in the base run, a remote fraction above
#    meter_far_max_remote, or one not below the base's for the same case
#    and node.
meter_steady() {
	local nodes cpus want far_max='' image_max=''
	topo_counts "$1"
	want=$(cpu_nodes "$1") || die "$1: qemu-smoke/topology.py cannot read it"
	[ -n "$want" ] || die "$1: no node with CPUs"
	[ $# = 3 ] || steady_bounds "$6"
	awk -v nodes="$nodes" -v want="$want" -v want_base="$([ $# = 6 ] && echo 1 || echo 0)" \
		-v fmax="$far_max" -v imax="$image_max" -v bounds="${6:-}" '
	function fields(first,  i, kv) {
		split("", f)
		for (i = first; i <= NF; i++)
			if (split($i, kv, "=") == 2)
				f[kv[1]] = kv[2]
	}
	function fail(msg) { print "  " msg; bad = 1 }
	# The serial console ends lines with CR.
	{ sub(/\r$/, "") }
	# KTAP files: the cases, hot runs only (the cold-cache runs of
	# kbench -C, "cache=cold", repeat them in phases of their own);
	# report files: the phase vcpu lines.
	(FILENAME == ARGV[1] || FILENAME == ARGV[3]) && / cache=cold/ { next }
	FILENAME == ARGV[1] || FILENAME == ARGV[3] {
		if (match($0, /meter-phase [0-9]+ [a-z0-9_]+ ops=[0-9]+ node=[0-9]+ cpu=[0-9]+/)) {
			split(substr($0, RSTART, RLENGTH), w, " ")
			fields(1)
			k = (FILENAME == ARGV[1]) ? "run" : "base"
			phase[k, w[3], f["node"]] = w[2]
			cpu[k, w[3], f["node"]] = f["cpu"]
			ops[k, w[3], f["node"]] = f["ops"]
			if (k == "run")
				cases[w[3] SUBSEP f["node"]] = 1
		}
		next
	}
	$1 ~ /^phase=/ && $2 ~ /^vcpu=/ {
		k = (FILENAME == ARGV[2]) ? "run" : "base"
		fields(1)
		ins[k, f["phase"], f["vcpu"]] = f["kernel_insns"]
		rem[k, f["phase"], f["vcpu"]] = f["kernel_remote"]
		loc[k, f["phase"], f["vcpu"]] = f["kernel_local"]
	}
	END {
		n = 0
		nw = split(want, wn, " ")
		for (j = 1; j <= nw; j++)
			has_cpus[wn[j]] = 1
		for (cn in cases) {
			split(cn, x, SUBSEP)
			c = x[1]; node = x[2]; n++
			names[c] = 1
			p = phase["run", c, node]; v = cpu["run", c, node]
			i = ins["run", p, v] + 0; r = rem["run", p, v] + 0; l = loc["run", p, v] + 0
			frac = (r + l) ? r / (r + l) : 0
			line = sprintf("%s node %s: cpu %s phase %s: %.0f kernel insns/op, remote %.4f", c, node, v, p, ops["run", c, node] ? i / ops["run", c, node] : 0, frac)
			if (want_base && (("base", c, node) in phase)) {
				bp = phase["base", c, node]; bv = cpu["base", c, node]
				br = rem["base", bp, bv] + 0; bl = loc["base", bp, bv] + 0
				bfrac = (br + bl) ? br / (br + bl) : 0
				line = line sprintf(" (base %.0f insns/op, remote %.4f)", ops["base", c, node] ? ins["base", bp, bv] / ops["base", c, node] : 0, bfrac)
			}
			print "  " line
			if (!(node in has_cpus))
				fail(c " node " node ": the topology has no CPU on node " node)
			else if (i == 0 || r + l == 0)
				fail(c " node " node ": no kernel instruction counted from node memory on cpu " v " in phase " p)
			else if (nodes == 1 && r != 0)
				fail(c ": " r " kernel instructions fetched remotely on one node")
			else if (node == 0 && want_base && frac > imax + 0)
				fail(c " on the image node: remote fraction " frac " above meter_image_max_remote=" imax " (" bounds ")")
			else if (node == 0 && frac >= 0.1)
				fail(c " on the image node: remote fraction " frac ", want under 0.1")
			else if (node != 0 && !want_base && r <= l)
				fail(c " node " node " (no replication): kernel_remote=" r " not above kernel_local=" l)
			else if (node != 0 && want_base && !(("base", c, node) in phase))
				fail(c " node " node ": not in the base run")
			else if (node != 0 && want_base && frac > fmax + 0)
				fail(c " node " node ": remote fraction " frac " above meter_far_max_remote=" fmax " (" bounds ")")
			else if (node != 0 && want_base && frac >= bfrac)
				fail(c " node " node ": remote fraction " frac " not below the base kernel'"'"'s " bfrac)
		}
		# Every case on every node with CPUs.
		for (c in names)
			for (j = 1; j <= nw; j++)
				if (!((c SUBSEP wn[j]) in cases))
					fail(c " node " wn[j] ": no meter-phase line in the guest log, but the topology has CPUs on node " wn[j])
		if (!n)
			fail("no meter-phase lines of kbench in the guest log")
		exit bad
	}' "$3" "$2" "${5:-/dev/null}" "${4:-/dev/null}"
}

if [ "${1:-}" = --assert ]; then
	[ $# = 3 ] || die "usage: ${0##*/} [--assert TOPOLOGY.topo locality.txt]"
	meter_assert_all "$2" "$3"
	exit
fi
if [ "${1:-}" = --steady ]; then
	[ $# = 4 ] || [ $# = 7 ] ||
		die "usage: ${0##*/} --steady TOPOLOGY.topo locality.txt ktap.log [BASE-locality.txt BASE-ktap.log EXPECT]"
	shift
	meter_steady "$@"
	exit
fi

need make gcc qemu-system-x86_64 python3
no_dry_run
# METER_SERIES: the bounds of the series' steady state are the revision's
# (series-vN/expect), not what its kernel prints; read them before any
# boot.
if [ -n "${METER_SERIES:-}" ]; then
	[ -n "$SERIES_DIR" ] ||
		die "REV=base: METER_SERIES=$METER_SERIES boots REV with replication against REV without; base has none (name a revision: REV=v3)"
	steady_bounds "$EXPECT_FILE"
	say "the steady state of $REV: remote at most $far_max off the image node, $image_max on it (${EXPECT_FILE#"$REPO"/})"
fi
plugin_dir=$WORK/plugin
make -s -C "$REPO/qemu-smoke/plugin" O="$plugin_dir" || die "building the locality meter failed"
kernel=$BUILD/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no $kernel: run 'make build REV=$REV'"
# METER_OFF_WORDS: kernel parameters that make the baseline boots not
# replicate (make meter METER=runtime-off: kernel_replication=off on the
# very build that METER_SERIES then boots replicating), kept apart in
# their own results folder.
out=$WORK/results/meter-$BASE-$REV-$CONFIG${METER_OFF_WORDS:+-runtime-off}
rc=0
# meter_boot BUILD OUT TOPOLOGY [WORDS]: boot BUILD's kernel and
# initramfs on TOPOLOGY (with the kernel parameters WORDS) under the meter with the meter guest (ktv_suite=meter: phase 1
# after boot, then a kbench phase per node), report in OUT/locality.txt.
# nokaslr: the image at 64M, on node 0, whole. With KASLR it can straddle
# the node boundary (a few percent of boots), and then the image node's
# vCPUs rightly fetch part of it remotely.
meter_boot() {
	BUILD=$1 TIMEOUT=${TIMEOUT:-300} boot_guest "$3" "$3" "meter ${1##*/}" \
		"nokaslr ktv_suite=meter${4:+ $4}" --out "$2" --meter "$plugin_dir/locality.so" ||
		{ say "$3: the guest under the meter failed (logs in $2)"; return 1; }
	[ -f "$2/locality.txt" ] || { say "$3: no meter report $2/locality.txt"; return 1; }
	awk -v t="$3" '/^vcpu=/ { printf "  %s: %s %s %s %s %s %s\n", t, $1, $2, $4, $5, $6, $NF }' \
		"$2/locality.txt" >&2
}
ignores_filter TOPO "${TOPO:-}" "the meter's assertions are made on 1node and 2node"
# The Makefile's meter recipes choose the configuration (smoke-off, or the
# base kernel's smoke) and pass the user's CONFIG as CONFIG_ASKED.
[ "${CONFIG_ASKED:-$CONFIG}" = "$CONFIG" ] ||
	ignores_filter CONFIG "$CONFIG_ASKED" "the meter boots $CONFIG${METER_SERIES:+ and $METER_SERIES}"
for topo in 1node 2node; do
	topo_file=$REPO/qemu-smoke/topologies/$topo.topo
	meter_boot "$BUILD" "$out/$topo" "$topo" "${METER_OFF_WORDS:-}" || { rc=1; continue; }
	report=$out/$topo/locality.txt
	meter_assert_all "$topo_file" "$report" >&2 || { say "$topo: the meter report is wrong (above): $report"; rc=1; }
	meter_steady "$topo_file" "$report" "$out/$topo/ktap.log" >&2 ||
		{ say "$topo: the steady state is wrong (above)"; rc=1; }
done
# METER_SERIES=CONFIG: REV built with CONFIG replicates (make check: smoke,
# built for the smoke matrix). Its steady state on 2 nodes must fetch less
# kernel code remotely than the kernel above, and no more than REV's
# series-vN/expect allows (meter_steady).
if [ -n "${METER_SERIES:-}" ] && [ "$rc" = 0 ]; then
	series=$WORK/build/$BASE-$REV-$METER_SERIES
	[ -f "$series/initramfs.cpio.gz" ] || die "no $series/initramfs.cpio.gz: run 'make build initramfs CONFIG=$METER_SERIES'"
	sout=$WORK/results/meter-$BASE-$REV-$METER_SERIES/2node
	topo_file=$REPO/qemu-smoke/topologies/2node.topo
	if meter_boot "$series" "$sout" 2node; then
		meter_assert_phases "$topo_file" "$sout/locality.txt" >&2 || rc=1
		meter_steady "$topo_file" "$sout/locality.txt" "$sout/ktap.log" \
			"$out/2node/locality.txt" "$out/2node/ktap.log" "$EXPECT_FILE" >&2 ||
			{ say "2node: the steady state of $REV with replication is wrong (above)"; rc=1; }
	else
		rc=1
	fi
fi
[ "$rc" = 0 ] && say "the locality meter counts (reports in $out)"
exit $rc
