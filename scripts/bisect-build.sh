#!/bin/bash
# Build every patch of REV on its own (bisectability): check out each commit
# of base..HEAD in turn, configure it with CONFIG's fragments and build
# bzImage and modules in the usual build directory, incrementally. A patch
# that does not build, or that adds compiler warnings, fails the run. The
# tree goes back to its branch at the end, also when interrupted.
# Prints one row per patch; the per-patch logs are in $BUILD/bisect/.
# BISECT_OBJECTS=1 builds, for each patch, only the objects of the .c files
# the series touches up to it (and prepare), not bzImage: it catches what
# does not compile or warns in those files, not a link failure or a
# header change that breaks a file the series does not touch. A series
# that changes headers included everywhere (asm/mmu.h, mmu_context.h)
# rebuilds most of the kernel at each such patch in the full mode.
. "$(dirname "$0")/lib.sh"
need git make gcc ccache

[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
[ -n "$SERIES_DIR" ] || die "REV=base has no patches to build one by one"
if tree_dirty; then
	die "$TREE has uncommitted changes; commit or export them first"
fi
# REV=vN.P builds part P's patches, in the detached tree of parts 1 to P.
from=base
if [ -n "$PART" ]; then
	branch=$(git -C "$TREE" rev-parse HEAD)
	[ "$PART" = 1 ] || from=$(part_tip $((PART - 1)))
else
	tree_on_branch
	branch=$(git -C "$TREE" symbolic-ref --short HEAD)
fi
trap 'git -C "$TREE" checkout -q "$branch"' EXIT

mapfile -t commits < <(git -C "$TREE" rev-list --reverse "$from"..HEAD)
[ ${#commits[@]} -gt 0 ] || die "$TREE has no commits on top of base"
logs=$BUILD/bisect
mkdir -p "$logs"
# Trees (with the fragments) that built cleanly before: a rewritten series
# only rebuilds the commits whose tree changed.
done_list=$logs/ok-trees
touch "$done_list"
frag_sum=$(config_fragments | xargs cat | sha256sum | cut -c1-16)
mode=full
build_step() { configure_build && kmake bzImage modules; }
if [ "${BISECT_OBJECTS:-}" = 1 ]; then
	mode=objects
	build_step() {
		local srcs objs
		configure_build && kmake prepare || return 1
		mapfile -t srcs < <(touched_sources)
		[ ${#srcs[@]} -gt 0 ] || return 0
		mapfile -t objs < <(configured_objects "$TREE" "$BUILD" "${srcs[@]}")
		[ ${#objs[@]} -eq 0 ] || kmake "${objs[@]}"
	}
fi

printf '%-3s %-60s %6s %8s  %s\n' N PATCH TIME WARNINGS RESULT
failed=0 n=0
for c in "${commits[@]}"; do
	n=$((n + 1))
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	key="$(git -C "$TREE" rev-parse "$c^{tree}") $frag_sum $mode"
	if grep -qxF "$key" "$done_list"; then
		printf '%-3s %-60.60s %6s %8s  %s\n' "$n" "$subject" - 0 "ok (this tree built before)"
		continue
	fi
	git -C "$TREE" checkout -q --detach "$c"
	log=$logs/$(printf '%02d' "$n").log
	t0=$(date +%s)
	result=ok
	if ! build_step >"$log" 2>&1; then
		result="FAIL (build)"
	fi
	warnings=$(grep -c 'warning:' "$log" || true)
	if [ "$result" = ok ] && [ "$warnings" != 0 ]; then
		result="FAIL (warnings)"
	fi
	printf '%-3s %-60.60s %5ss %8s  %s\n' "$n" "$subject" "$(($(date +%s) - t0))" "$warnings" "$result"
	if [ "$result" = ok ]; then
		echo "$key" >>"$done_list"
	else
		failed=$((failed + 1))
		grep -m5 -E 'error:|warning:' "$log" | sed 's/^/    /' || tail -n 5 "$log" | sed 's/^/    /'
		echo "    log: $log"
	fi
done
echo "bisect-build of $BASE $REV ($CONFIG, $mode): $((n - failed)) of $n patches build cleanly"
[ "$failed" = 0 ]
