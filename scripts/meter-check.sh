#!/bin/bash
# Prove that the locality meter counts: build the TCG plugin, boot the base
# kernel under it on one node and on two nodes. One node: no remote kernel
# fetch. Two nodes: the vCPUs of the node without the kernel image fetch
# most kernel instructions remotely. A measurement, asserted; not a
# benchmark (that is 'make bench').
. "$(dirname "$0")/lib.sh"
need make gcc qemu-system-x86_64 python3

plugin_dir=$WORK/plugin
make -s -C "$REPO/qemu-smoke/plugin" O="$plugin_dir" || die "building the locality meter failed"
kernel=$BUILD/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no $kernel: run 'make build REV=$REV'"
out=$WORK/results/meter-$BASE-$REV-$CONFIG
rc=0
for topo in 1node 2node; do
	python3 "$REPO/qemu-smoke/boot.py" --kernel "$kernel" --initrd "$BUILD/initramfs.cpio.gz" \
		--topo "$REPO/qemu-smoke/topologies/$topo.topo" --out "$out/$topo" \
		--meter "$plugin_dir/locality.so" --timeout "${TIMEOUT:-300}" \
		--label "meter $BASE-$REV" >/dev/null || say "warning: the $topo guest under the meter did not pass its tests"
	report=$out/$topo/locality.txt
	if ! grep -qsx end "$report"; then
		say "$topo: no complete meter report in $report"
		rc=1
		continue
	fi
	grep '^vcpu=' "$report" | awk -v t="$topo" '{ printf "  %s: %s %s %s %s\n", t, $1, $2, $5, $NF }' >&2
	if [ "$topo" = 1node ]; then
		# Every kernel fetch is local: remote is 0 on every vCPU.
		awk '/^vcpu=/ { for (i = 1; i <= NF; i++) if ($i ~ /^kernel_remote=/ && $i != "kernel_remote=0") bad = 1 }
			END { exit bad }' "$report" || { say "1node: remote kernel fetches on a single node"; rc=1; }
	else
		# Some vCPU fetches more kernel instructions remotely than locally.
		awk '/^vcpu=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			if (f["kernel_remote"] > f["kernel_local"]) found = 1 }
			END { exit !found }' "$report" || { say "2node: no vCPU fetches kernel text remotely"; rc=1; }
	fi
done
[ "$rc" = 0 ] && say "the locality meter counts (reports in $out)"
exit $rc
