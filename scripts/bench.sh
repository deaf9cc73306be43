#!/bin/bash
# 'make bench': the base kernel and revision REV side by side. Builds both
# (smoke configuration), then for BENCH_ROUNDS rounds boots, in an order
# that rotates every round, the base kernel, REV and REV with
# kernel_replication=off on each of BENCH_TOPOS, running the guest's bench
# suite (kbench on every node, ftrace switch time, replica memory). Then
# each kernel on each of BENCH_METER_TOPOS under the locality meter,
# BENCH_METER_RUNS times, with the meter guest (ktv_suite=meter): it marks
# a meter phase per kbench case and node after boot, so that bench.py
# reports kernel instructions per operation and the steady state's remote
# fractions. Results: $WORK/results/bench/<stamp>/ with results.md and PNG
# plots (bench.py).
#   BENCH_PARTS   which parts to run [timed meter]
#   BENCH_OUT     an existing results directory to add the parts to (for
#                 example the meter part after a timed-only run) [new one]
#   BENCH_TOPOS   topologies [1node 2node 4node] (TOPO, when set, for both lists); on 1node only the ftrace time
#   BENCH_ROUNDS  rounds of alternating boots [5]: bench.py bootstraps the
#                 rounds for the confidence intervals
#   BENCH_REPS    kbench repetitions per case and node [11]
#   BENCH_LOOP    kbench loop count (fork1024, mmap, openclose) [1024]
#   BENCH_METER_TOPOS  topologies under the meter [1node 2node 4node 8node]
#   BENCH_METER_RUNS   meter boots per kernel and topology [2]: the second
#                      shows how repeatable the instruction counts are
#   BENCH_METER_CASES  kbench cases under the meter [the RFC's seven,
#                      getppid, stat, pipe, forkexec]
#   BENCH_METER_REPS, BENCH_METER_LOOP  kbench -r and -n under the meter [10, 32]
#   BENCH_METER_PROBES=1  under the meter, every getppid() also runs a BPF
#                 program on an ftrace-based kprobe and an optimised kprobe
#                 (guest ktv_probes=1) [0]
#   APPEND        kernel parameters for every boot of every kernel, e.g.
#                 pti=off (recorded in meta.txt)
#   BENCH_CACHE   cache model shapes for the meter, e.g. l2=1024:16,llc=4096:16
#                 [one Sapphire Rapids core: l1i=32:8 l1d=48:12 l2=2048:16
#                 llc=1920:15 per vCPU]
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/boot-lib.sh"
need python3 gnuplot qemu-system-x86_64 make gcc
no_dry_run

[ "$CONFIG" = smoke ] ||
	ignores_filter CONFIG "$CONFIG" "bench compares the base kernel and REV, both built with smoke"
[ "$REV" != base ] || die "REV=base: name a revision to compare with the base kernel (REV=v1)"
topos=${TOPO:-${BENCH_TOPOS:-1node 2node 4node}}
rounds=${BENCH_ROUNDS:-5}
parts=${BENCH_PARTS:-timed meter}
reps=${BENCH_REPS:-11}
loop=${BENCH_LOOP:-1024}
meter_topos=${TOPO:-${BENCH_METER_TOPOS:-1node 2node 4node 8node}}
meter_runs=${BENCH_METER_RUNS:-2}
meter_cases=${BENCH_METER_CASES:-fork1,fork1024,mmap,mmap_lock,openclose,mount,kill,getppid,stat,pipe,forkexec,pingpong,migrate}
for p in $parts; do
	case "$p" in timed | meter) ;; *) die "unknown part '$p' in BENCH_PARTS (timed, meter)" ;; esac
done
for t in $topos $meter_topos; do
	[ -f "$REPO/qemu-smoke/topologies/$t.topo" ] || die "unknown topology '$t' in BENCH_TOPOS or BENCH_METER_TOPOS"
done

# The two kernels, built with the smoke configuration.
rev=$REV
for r in base "$rev"; do
	REV=$r "$REPO/scripts/tree.sh"
	REV=$r CONFIG=smoke "$REPO/scripts/build.sh"
	REV=$r CONFIG=smoke "$REPO/scripts/initramfs.sh"
done
base_build=$WORK/build/$BASE-base-smoke
rev_build=$WORK/build/$BASE-$rev-smoke

plugin_dir=$WORK/plugin
make -s -C "$REPO/qemu-smoke/plugin" O="$plugin_dir" || die "building the locality meter failed"

if [ -n "${BENCH_OUT:-}" ]; then
	out=$BENCH_OUT
	[ -d "$out" ] || die "BENCH_OUT=$out: no such results directory"
else
	out=$WORK/results/bench/$(date +%Y%m%d-%H%M%S)-$BASE-$rev
	mkdir -p "$out"
fi
say "results in $out"
# Where the numbers come from: bench.py prints this at the top of results.md.
for p in $parts; do
	{
		echo "part=$p revision=$rev date=$(date -u +%Y-%m-%dT%H:%MZ)"
		echo "part=$p series_commit=$(git -C "$WORK/trees/$BASE-$rev" rev-parse HEAD) base_commit=$(git -C "$WORK/trees/$BASE-base" rev-parse HEAD)"
		echo "part=$p repo_commit=$(git -C "$REPO" rev-parse --short HEAD) kernel=$(make -s -C "$rev_build" kernelversion 2>/dev/null)"
		echo "part=$p append=${APPEND:-}"
		echo "part=$p machine=$(nproc) cpus, $(awk '/MemTotal/ {printf "%d GiB", $2 / 1048576}' /proc/meminfo), $(qemu-system-x86_64 --version | head -1), TCG $([ "$p" = meter ] && echo multi-threaded || echo single-threaded)"
	} >>"$out/meta.txt"
done
# boot KERNEL-NAME TOPO DIR APPEND [boot.py options...]
boot() {
	local name=$1 topo=$2 dir=$3 build=$base_build append=$4
	shift 4
	case "$name" in
	base) ;;
	series) build=$rev_build ;;
	series-off) build=$rev_build append="$append kernel_replication=off" ;;
	esac
	BUILD=$build TIMEOUT=${TIMEOUT:-900} boot_guest "$name" "$topo" "$name" "$append" \
		--out "$dir" "$@"
}

kernels=(base series series-off)
failed=0
case " $parts " in *" timed "*) ;; *) rounds=0 ;; esac
case " $parts " in *" meter "*) ;; *) meter_runs=0 ;; esac
for r in $(seq 1 "$rounds"); do
	for t in $topos; do
		for i in 0 1 2; do
			k=${kernels[(i + r) % 3]}
			# One node: only the function tracer's switch time.
			extra="ktv_reps=$reps"
			[ "$t" != 1node ] || extra="ktv_bench=ftrace"
			boot "$k" "$t" "$out/$t/$k/r$r" "ktv_suite=bench ktv_loop=$loop $extra" ||
				failed=$((failed + 1))
		done
	done
done
# Under the meter: kernel instructions per operation, the steady state,
# and the cache model (qemu-smoke/plugin/README.md): each case hot, then
# cold (ktv_cold=1: the model's caches emptied before each operation),
# with the kernel's reads of its own rodata (from System.map: nokaslr puts
# the image where System.map says, on node 0 as the meter check assumes).
# Then the page table bytes per process (ktv_ptbytes=1). The meter runs
# under multi-threaded TCG (boot.py: QEMU 10.0's single-threaded TCG
# hands plugins the wrong vCPU), which rules out --icount: timer ticks
# (about 12000 kernel instructions each) land where the host's timing puts
# them, so the counts per operation move a little from run to run (two
# runs, and the spread of the repetitions, show by how much). 10 repetitions of 32
# loops: fork1024 (forks per phase: 320) dominates the time; it has no
# cold run, fork1 is the same operation. Each repetition is a stretch of
# its case's phase, and bench.py takes the median repetition. norandmaps:
# without it the user address layout, and so the page tables a fork
# copies, changes from boot to boot (fork1 by 2%, with it 0.2%).
# rodata_range BUILD: "START-END" of the image's rodata, for the meter.
rodata_range() {
	awk '$3 == "__start_rodata" { s = $1 } $3 == "__end_rodata" { e = $1 }
		END { if (s && e) print s "-" e }' "$1/System.map"
}
meter_args="data=on,cache=on,tlb=on${BENCH_CACHE:+,$BENCH_CACHE}"
for m in $(seq 1 "$meter_runs"); do
	for t in $meter_topos; do
		for k in "${kernels[@]}"; do
			build=$rev_build
			[ "$k" != base ] || build=$base_build
			range=$(rodata_range "$build")
			[ -n "$range" ] || die "no __start_rodata/__end_rodata in $build/System.map"
			boot "$k" "$t" "$out/$t/$k/meter$m" \
				"nokaslr norandmaps ktv_suite=meter ktv_cases=$meter_cases ktv_reps=${BENCH_METER_REPS:-10} ktv_loop=${BENCH_METER_LOOP:-32} ktv_cold=1 ktv_cold_cases=${meter_cases/fork1024,/} ktv_ptbytes=1 ktv_ptprocs=1024 ktv_probes=${BENCH_METER_PROBES:-0} ktv_ftrace_phases=1 ktv_ftrace_cpu=last" \
				--meter "$plugin_dir/locality.so" --meter-args "$meter_args,rodata=$range" ||
				failed=$((failed + 1))
		done
	done
done

# bench.py fails on a missing case or node (a failed boot leaves some):
# say first which boots failed, then what is missing.
[ "$failed" = 0 ] || say "$failed guest boot(s) failed (rows above); their numbers are missing"
python3 "$REPO/qemu-smoke/bench.py" "$out" --rev "$rev" || die "bench.py failed on $out"
[ "$failed" = 0 ] || die "$failed guest boot(s) failed"
say "results: $out/results.md"
