#!/bin/bash
# The .c files the series touches, compiled (not linked, not booted) under
# configurations that 'make check' does not build in full: VARIANTS, by
# default the option on without page table isolation (smoke-nopti, which
# 'make smoke' builds and boots), with 4-level paging only (smoke-4level)
# and as a Hyper-V guest (smoke-hyperv: the series changes its TLB flush). A whole kernel costs ten minutes on two cores; this costs
# one per variant and catches what breaks the series under a configuration
# (a helper that only exists with PTI, a variable unused without 5-level
# paging). Fails on any warning or error, or an object not built.
. "$(dirname "$0")/../scripts/lib.sh"
need git make gcc ccache flex bison bc perl

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -d "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
# Without the base tag touched_sources would list nothing, and pass.
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag: run 'make tree REV=$REV BASE=$BASE'"
mapfile -t files < <(touched_sources)
if [ ${#files[@]} -eq 0 ]; then
	echo "variants: pass: the series touches no x86_64 .c file, nothing to build"
	exit 0
fi

fail=0
for CONFIG in ${VARIANTS:-smoke-nopti smoke-4level smoke-hyperv}; do
	t0=$(date +%s)
	BUILD=$WORK/build/$BASE-$REV-$CONFIG
	configure_build
	kmake prepare >"$BUILD/prepare.log" 2>&1 ||
		{ tail -n 30 "$BUILD/prepare.log" >&2; die "make prepare failed in $BUILD"; }
	mapfile -t objs < <(configured_objects "$TREE" "$BUILD" "${files[@]}")
	# Building none of the touched files is a failure, not a pass: see
	# sparse-w1.sh.
	if [ ${#objs[@]} -eq 0 ]; then
		echo "$CONFIG: FAIL: the configuration builds none of the ${#files[@]} touched .c file(s) (or configured_objects in scripts/lib.sh no longer recognises kbuild's 'make -n' output)"
		fail=1
		continue
	fi
	log=$BUILD/variants.log
	mapfile -t unbuilt < <(compile_objects "$TREE" "$BUILD" "$log" -- "${objs[@]}")
	diags=$(grep -cE ': (warning|error): ' "$log" || true)
	if [ "$diags" = 0 ] && [ ${#unbuilt[@]} -eq 0 ]; then
		echo "$CONFIG: ${#objs[@]} of ${#files[@]} touched files built, no warning, $(($(date +%s) - t0)) s"
	else
		echo "$CONFIG: $diags warning(s)/error(s), not built: ${unbuilt[*]:-none} (log: $log)"
		grep -E ': (warning|error): ' "$log" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
done
[ "$fail" = 0 ]
