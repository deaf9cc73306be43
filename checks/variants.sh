#!/bin/bash
# The .c files the series touches, compiled (not linked, not booted) under
# configurations that 'make check' does not build in full: VARIANTS, by
# default the option compiled out (smoke-off) and on without page table
# isolation (smoke-nopti), which 'make smoke' builds and boots, with
# 4-level paging only (smoke-4level) and as a Hyper-V guest (smoke-hyperv:
# the series changes its TLB flush).
# A whole kernel costs ten minutes on two cores; this costs one per variant
# and catches what breaks the series under a configuration (a helper that
# only exists with PTI, a variable unused without 5-level paging).
#
# Each touched file is one of: built; a build error (FAIL); not built
# because the configuration leaves it out (its kbuild guard, the CONFIG_
# symbol of its obj- line or of its directory's, is not set: reported, and
# fine); not built although its guard is set (FAIL: kbuild's dry run was
# misread). A variant fails on any warning, any build error, when it builds
# none of the touched files, and when it does not build a file it exists
# for (variant_needs), touched by the series or not: smoke-hyperv that
# leaves out arch/x86/hyperv/mmu.c checks nothing it is for.
#
#   variants.sh                          the check (REV's work tree)
#   variants.sh --judge CONFIG <STATES   the verdict alone, on made-up file
#                                        states (the fixtures' way; see judge)
#   variants.sh --guard TREE DOTCONFIG FILE.c
#                                        what kbuild_guard says of FILE.c
. "$(dirname "$0")/../scripts/lib.sh"

# variant_needs CONFIG: the files CONFIG exists to build, one per line.
# Every configuration but smoke-off turns the option on: it must build
# kernel_replication.c.
variant_needs() {
	case "$1" in
	smoke-off) ;;
	*) echo arch/x86/mm/kernel_replication.c ;;
	esac
	case "$1" in
	smoke-hyperv) echo arch/x86/hyperv/mmu.c ;;
	esac
}

# kbuild_guard TREE DOTCONFIG FILE.c: does the configuration build FILE, by
# the obj- lines of its directory's Kbuild or Makefile and of each parent's
# (up to arch/x86 or the top directory)? Prints one of
#   set                   every level has a guard that is set (or obj-y)
#   unset CONFIG_X...     a level whose every guard is unset: genuinely off
#   unknown WHY           a guard under ifeq/ifdef, or none found
kbuild_guard() {
	local tree=$1 cfg=$2 dir=${3%/*} target m sym cond lvl unknown=
	target=${3##*/}
	target=${target%.c}.o
	while :; do
		m=$tree/$dir/Kbuild
		[ -f "$m" ] || m=$tree/$dir/Makefile
		lvl=none
		local unset_syms=()
		while read -r sym cond; do
			if [ "$sym" = y ] || grep -qE "^$sym=[ym]\$" "$cfg" 2>/dev/null; then
				if [ "$cond" = 0 ]; then lvl='set'; break; fi
				lvl=cond
			elif [ "$lvl" = none ]; then
				lvl='unset'
			fi
			unset_syms+=("$sym")
		done < <(awk -v t="$target" '
			/\\$/ { line = line substr($0, 1, length($0) - 1) " "; next }
			{ l = line $0; line = "" }
			l ~ /^[[:space:]]*(ifeq|ifneq|ifdef|ifndef)([[:space:](]|$)/ { depth++; next }
			l ~ /^[[:space:]]*endif/ { depth--; next }
			match(l, /^[[:space:]]*(obj|lib)-[^=]*=/) {
				lhs = substr(l, RSTART, RLENGTH); rhs = substr(l, RSTART + RLENGTH)
				n = split(rhs, w, /[[:space:]]+/)
				for (i = 1; i <= n; i++) if (w[i] == t) {
					if (lhs ~ /^[[:space:]]*(obj|lib)-y[[:space:]]*[:+]?=$/) sym = "y"
					else if (match(lhs, /CONFIG_[A-Za-z0-9_]+/)) sym = substr(lhs, RSTART, RLENGTH)
					else sym = "?"
					print sym, (depth > 0)
				}
			}' "$m" 2>/dev/null)
		case "$lvl" in
		set) ;;
		unset)
			if printf '%s\n' "${unset_syms[@]}" | grep -qvE '^CONFIG_'; then
				unknown="${unknown:+$unknown; }$target in ${m#"$tree"/}: an obj- line without one CONFIG_ symbol"
			else
				echo "unset ${unset_syms[*]} (${m#"$tree"/}: $target)"
				return 0
			fi
			;;
		cond) unknown="${unknown:+$unknown; }$target in ${m#"$tree"/}: under ifeq/ifdef" ;;
		none) unknown="${unknown:+$unknown; }no obj- line for $target in ${m#"$tree"/}" ;;
		esac
		if [ "$dir" = arch/x86 ] || [ "$dir" = "${dir%/*}" ]; then break; fi
		target=${dir##*/}/
		dir=${dir%/*}
	done
	if [ -n "$unknown" ]; then echo "unknown $unknown"; else echo set; fi
}

# judge CONFIG: the verdict on one variant from the states of its files on
# stdin, one line each, "KIND FILE STATE [WHY...]": KIND touched (by the
# series) or needed (variant_needs, not touched); STATE built, error (did
# not compile), off (not built: its guard is unset, or unresolved), missed
# (not built although its guard is set) or absent (not in the tree). Prints
# a line per file and a summary; fails as the header says.
judge() {
	local config=$1 kind f state why needs built=0 touched=0 off=0 seen='' bad=() lines=()
	needs=$(variant_needs "$config")
	is_needed() { printf '%s\n' "$needs" | grep -qxF "$1"; }
	while read -r kind f state why; do
		[ -n "$kind" ] || continue
		seen+="$f"$'\n'
		if [ "$kind" = touched ]; then touched=$((touched + 1)); fi
		case "$state" in
		built)
			if [ "$kind" = touched ]; then built=$((built + 1)); fi
			lines+=("$f: built${why:+ ($why)}")
			;;
		error)
			lines+=("$f: FAIL: $config builds it, and it does not compile")
			bad+=("$f")
			;;
		missed)
			lines+=("$f: FAIL: not built, yet its kbuild guard is set ($why): scripts/lib.sh's configured_objects misread kbuild's dry run?")
			bad+=("$f")
			;;
		off)
			off=$((off + 1))
			if is_needed "$f"; then
				lines+=("$f: FAIL: not built by $config, which exists to build it ($why)")
				bad+=("$f")
			else
				lines+=("$f: not built by $config ($why)")
			fi
			;;
		absent)
			lines+=("$f: FAIL: not in the tree, and $config exists to build it")
			bad+=("$f")
			;;
		*)
			lines+=("$f: FAIL: unknown state '$state'")
			bad+=("$f")
			;;
		esac
	done
	while read -r f; do
		[ -n "$f" ] || continue
		printf '%s' "$seen" | grep -qxF "$f" && continue
		lines+=("$f: FAIL: $config exists to build it, and it was not looked at")
		bad+=("$f")
	done <<<"$needs"
	# The verdict first, then a line per file.
	if [ "$built" = 0 ]; then
		echo "$config: FAIL: the configuration builds none of the $touched touched .c file(s)"
		bad+=(none)
	elif [ ${#bad[@]} = 0 ]; then
		echo "$config: $built of $touched touched file(s) built, $off left out by the configuration"
	else
		echo "$config: FAIL: ${bad[*]} ($built of $touched touched file(s) built)"
	fi
	printf '    %s\n' "${lines[@]}"
	[ ${#bad[@]} = 0 ]
}

case "${1:-}" in
--judge)
	[ $# = 2 ] || die "usage: $0 --judge CONFIG <STATES"
	judge "$2"
	exit
	;;
--guard)
	[ $# = 4 ] || die "usage: $0 --guard TREE DOTCONFIG FILE.c"
	kbuild_guard "$2" "$3" "$4"
	exit
	;;
'') ;;
*) die "usage: $0 [--judge CONFIG | --guard TREE DOTCONFIG FILE.c]" ;;
esac

need git make gcc ccache flex bison bc perl

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
# Without the base tag touched_sources would list nothing, and pass.
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag: run 'make tree REV=$REV BASE=$BASE'"
mapfile -t files < <(touched_sources)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ${#files[@]} -eq 0 ]; then
	echo "variants: pass: the series touches no x86_64 .c file, nothing to build"
	exit 0
fi

fail=0
for CONFIG in ${VARIANTS:-smoke-off smoke-nopti smoke-4level smoke-hyperv}; do
	t0=$(date +%s)
	BUILD=$WORK/build/$BASE-$REV-$CONFIG
	configure_build
	kmake prepare >"$BUILD/prepare.log" 2>&1 ||
		{ tail -n 30 "$BUILD/prepare.log" >&2; die "make prepare failed in $BUILD"; }
	# The touched files, then those the variant exists for that the
	# series does not touch (compiled too: the series' headers reach them).
	kinds=() paths=()
	for f in "${files[@]}"; do kinds+=(touched) paths+=("$f"); done
	while read -r f; do
		printf '%s\n' "${files[@]}" | grep -qxF "$f" && continue
		kinds+=(needed) paths+=("$f")
	done < <(variant_needs "$CONFIG")
	present=()
	for f in "${paths[@]}"; do [ ! -f "$TREE/$f" ] || present+=("$f"); done
	mapfile -t objs < <(configured_objects "$TREE" "$BUILD" "${present[@]}")
	log=$BUILD/variants.log
	: >"$log"
	unbuilt=()
	if [ ${#objs[@]} -gt 0 ]; then
		mapfile -t unbuilt < <(compile_objects "$TREE" "$BUILD" "$log" -- "${objs[@]}")
	fi
	diags=$(grep -cE ': (warning|error): ' "$log" || true)
	states=$tmp/$CONFIG.states
	for i in "${!paths[@]}"; do
		f=${paths[i]} o=${paths[i]%.c}.o
		if [ ! -f "$TREE/$f" ]; then
			state=absent why=
		elif printf '%s\n' "${objs[@]}" | grep -qxF "$o"; then
			state=built why=
			printf '%s\n' "${unbuilt[@]}" | grep -qxF "$o" && state=error
		else
			read -r g why < <(kbuild_guard "$TREE" "$BUILD/.config" "$f")
			case "$g" in
			set) state=missed why="every kbuild level of it is set in $BUILD/.config" ;;
			unset) state=off why="$why is not set" ;;
			*) state=off why="its kbuild guard not resolved: $why" ;;
			esac
		fi
		echo "${kinds[i]} $f $state $why"
	done >"$states"
	judge "$CONFIG" <"$states" || fail=1
	if [ "$diags" != 0 ]; then
		echo "$CONFIG: FAIL: $diags warning(s)/error(s) (log: $log)"
		grep -E ': (warning|error): ' "$log" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
	echo "$CONFIG: $(($(date +%s) - t0)) s"
done
[ "$fail" = 0 ]
