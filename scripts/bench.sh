#!/bin/bash
# 'make bench': the base kernel and revision REV side by side. Builds both
# (smoke configuration), then for BENCH_ROUNDS rounds boots, in an order
# that rotates every round, the base kernel, REV and REV with
# kernel_replication=off on each of BENCH_TOPOS, running the guest's bench
# suite (kbench on every node, ftrace switch time, replica memory). Then
# one boot of each kernel and topology under the locality meter. Results:
# $WORK/results/bench/<stamp>/ with results.md and PNG plots (bench.py).
#   BENCH_TOPOS   topologies [1node 2node 4node]; on 1node only the ftrace time
#   BENCH_ROUNDS  rounds of alternating boots [3]
#   BENCH_REPS    kbench repetitions per case and node [11]
#   BENCH_LOOP    kbench loop count (fork1024, mmap, openclose) [1024]
. "$(dirname "$0")/lib.sh"
need python3 gnuplot qemu-system-x86_64 make gcc

[ "$REV" != base ] || die "REV=base: name a revision to compare with the base kernel (REV=v1)"
topos=${BENCH_TOPOS:-1node 2node 4node}
rounds=${BENCH_ROUNDS:-3}
reps=${BENCH_REPS:-11}
loop=${BENCH_LOOP:-1024}
for t in $topos; do
	[ -f "$REPO/qemu-smoke/topologies/$t.topo" ] || die "unknown topology '$t' in BENCH_TOPOS"
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

out=$WORK/results/bench/$(date +%Y%m%d-%H%M%S)-$BASE-$rev
mkdir -p "$out"
say "results in $out"
common="ktv_suite=bench ktv_loop=$loop"

# boot KERNEL-NAME TOPO DIR EXTRA-APPEND [boot.py options...]
boot() {
	local name=$1 topo=$2 dir=$3 build=$base_build append="$common $4"
	shift 4
	case "$name" in
	base) ;;
	series) build=$rev_build ;;
	series-off) build=$rev_build append="$append kernel_replication=off" ;;
	esac
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$build/arch/x86/boot/bzImage" \
		--initrd "$build/initramfs.cpio.gz" --topo "$REPO/qemu-smoke/topologies/$topo.topo" \
		--out "$dir" --timeout "${TIMEOUT:-900}" --append "$append" \
		--label "$name" "$@"
}

kernels=(base series series-off)
failed=0
for r in $(seq 1 "$rounds"); do
	for t in $topos; do
		for i in 0 1 2; do
			k=${kernels[(i + r) % 3]}
			# One node: only the function tracer's switch time.
			extra="ktv_reps=$reps"
			[ "$t" != 1node ] || extra="ktv_bench=ftrace"
			boot "$k" "$t" "$out/$t/$k/r$r" "$extra" || failed=$((failed + 1))
		done
	done
done
# The meter once per kernel and multi-node topology, with a short kbench run.
for t in $topos; do
	[ "$t" != 1node ] || continue
	for k in "${kernels[@]}"; do
		boot "$k" "$t" "$out/$t/$k/meter" "ktv_reps=1" \
			--meter "$plugin_dir/locality.so" || failed=$((failed + 1))
	done
done

python3 "$REPO/qemu-smoke/bench.py" "$out" --rev "$rev" || die "bench.py failed on $out"
[ "$failed" = 0 ] || die "$failed guest boot(s) failed (rows above); their numbers are missing"
say "results: $out/results.md"
