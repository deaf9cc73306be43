# shellcheck shell=bash
# Common definitions for the workflow scripts. Sourced, never run.
#
# Inputs (environment, all optional):
#   BASE   kernel base: 6.12 (primary) or 6.1 (backport)          [6.12]
#   REV    series revision: v1, v2, ... or "base" (pristine)      [newest]
#   WORK   work area outside the repo                             [~/.cache/ktext-repl]
#   CONFIG config name: a fragment set in qemu-smoke/configs/     [smoke]

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${WORK:-$HOME/.cache/ktext-repl}
BASE=${BASE:-6.12}
CONFIG=${CONFIG:-smoke}
KNOWN_BASES="6.12 6.1"
# The configurations config_fragments knows.
KNOWN_CONFIGS="smoke smoke-off smoke-nopti smoke-4level smoke-hyperv debug distro"

# The identity of the pristine import commit is fixed, so that the base
# commit (and every series' base-commit: line) is the same on every machine.
IMPORT_IDENT_NAME="linux-source import"
IMPORT_IDENT_EMAIL="import@linux-source.invalid"
IMPORT_DATE="2000-01-01T00:00:00Z"
export IMPORT_IDENT_NAME IMPORT_IDENT_EMAIL IMPORT_DATE

die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }
say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }

case " $KNOWN_BASES " in
*" $BASE "*) ;;
*) die "unknown BASE '$BASE': known bases are: $KNOWN_BASES" ;;
esac

# Where the revisions of this base live.
if [ "$BASE" = 6.12 ]; then
	SERIES_ROOT=$REPO
else
	SERIES_ROOT=$REPO/backports/$BASE
fi
COVER_DIR=$SERIES_ROOT/cover-letters
TARBALL=/usr/src/linux-source-$BASE.tar.xz
export TARBALL

# Revisions that exist for this base, oldest first. A revision whose
# directory holds a WIP file is work in progress: it can be named with
# REV=, but it is not the default until the WIP file is removed.
list_revs() {
	local d
	for d in "$SERIES_ROOT"/series-v*; do
		if [ -f "$d/series" ]; then printf '%s\n' "${d##*/series-}"; fi
	done | sort -V
}
newest_rev() {
	local r
	for r in $(list_revs | sort -rV); do
		if [ ! -e "$SERIES_ROOT/series-$r/WIP" ]; then echo "$r"; return; fi
	done
	echo base
}

# The newest revision of this base, work in progress or not: what make
# check tests after the default one (scripts/check-newest.sh).
newest_rev_any() {
	local r
	r=$(list_revs | tail -n 1)
	echo "${r:-base}"
}

if [ -z "${REV:-}" ]; then
	REV=$(newest_rev)
fi
# A revision may be posted as several series ("parts"), marked in its
# series file by "# part N: TITLE" lines (CONTRIBUTING.md). REV=vN names
# the whole revision; REV=vN.P names its parts 1 to P, whose tip is a
# detached work tree of vN's (scripts/tree.sh).
PART=
case "$REV" in
base) SERIES_DIR='' REV_BASE=base ;;
v[0-9]*)
	printf '%s' "$REV" | grep -Eq '^v[0-9]+(\.[0-9]+)?$' ||
		die "bad REV '$REV': expected v1, v2, ..., vN.P (parts 1 to P of vN) or base"
	REV_BASE=${REV%%.*}
	[ "$REV_BASE" = "$REV" ] || PART=${REV#*.}
	SERIES_DIR=$SERIES_ROOT/series-$REV_BASE
	[ -f "$SERIES_DIR/series" ] ||
		die "no revision '$REV_BASE' for base $BASE (no $SERIES_DIR/series); known: $(list_revs | tr '\n' ' ')base"
	if [ -n "$PART" ] && ! grep -Eq "^# part $PART: " "$SERIES_DIR/series"; then
		die "REV=$REV: ${SERIES_DIR#"$REPO"/}/series has no part $PART (its parts: $(sed -n 's/^# part \([0-9]*\): .*/\1/p' "$SERIES_DIR/series" | tr '\n' ' '))"
	fi
	;;
*) die "bad REV '$REV': expected v1, v2, ..., vN.P (parts 1 to P of vN) or base" ;;
esac

# What the revision (or its parts 1 to P) must show: series-vN/expect, or
# series-vN/expect.P for a part's tip.
EXPECT_FILE=
if [ -n "$SERIES_DIR" ]; then
	EXPECT_FILE=$SERIES_DIR/expect${PART:+.$PART}
fi
# declares FILE FEATURE: the expect file FILE (empty: none) lists FEATURE
# on its features line (qemu-smoke/matrix/README.md).
declares() {
	[ -n "$1" ] &&
		awk -v f="$2" '$1 == "features" { for (i = 2; i <= NF; i++) if ($i == f) found = 1 }
			END { exit !found }' "$1"
}
# rev_declares FEATURE: REV's expect file does; never for the base.
rev_declares() { declares "$EXPECT_FILE" "$1"; }

# The one identity the patches carry: a role, replaced by whoever sends.
PATCH_AUTHOR=${PATCH_AUTHOR:-Kernel Text Replication Maintainers <ktext-repl@example.invalid>}
# Extra addresses for b4 (To/Cc come from get_maintainer.pl; see
# scripts/b4.sh), and the subject prefix (RFC for now).
SEND_TO=${SEND_TO:-}
SEND_CC=${SEND_CC:-}
PREFIXES_JSON=${PREFIXES_JSON:-\"RFC\"}

TREE=$WORK/trees/$BASE-$REV
# The tree that holds the whole revision: TREE itself, or for REV=vN.P
# the tree of vN, whose detached work tree TREE is.
MAIN_TREE=$WORK/trees/$BASE-$REV_BASE
# BUILD_SUFFIX: a build of the same tree and configuration kept apart
# (checks/tlb-mutants.sh: a mutant, built and booted beside the real one).
BUILD=$WORK/build/$BASE-$REV-$CONFIG${BUILD_SUFFIX:-}
export REPO WORK BASE REV CONFIG SERIES_DIR COVER_DIR TREE BUILD PATCH_AUTHOR
export REV_BASE PART EXPECT_FILE MAIN_TREE

# ignores_filter NAME VALUE WHAT: for a target whose boots are fixed, say
# that the filter NAME (TOPO, CONFIG), which the matrix targets honour, was
# given as VALUE and is not honoured here, and what the target boots
# instead (WHAT). Silent when VALUE is empty.
ignores_filter() {
	if [ -n "$2" ]; then say "$1=$2 is not honoured here: $3"; fi
}

# no_dry_run: for a target whose boots read each other's results (stress,
# bench, meter, selftest), DRY_RUN=1 cannot list them: refuse it. build.sh
# and initramfs.sh refuse it too, so that nothing is built under DRY_RUN.
no_dry_run() {
	[ "${DRY_RUN:-0}" != 1 ] ||
		die "DRY_RUN=1: nothing is built or booted under it, and only the matrix targets and the fault boots can list their boots"
}

# series_patches: the series' patches, in order, as paths: all of them,
# or for REV=vN.P those of parts 1 to P. part_patches N: those of part N.
patches_of() { # ONLY UPTO: part ONLY's (if not empty), else parts up to UPTO
	local p part=0
	[ -n "$SERIES_DIR" ] || return 0
	while read -r p; do
		case "$p" in
		'# part '[0-9]*:*)
			part=${p#\# part }
			part=${part%%:*}
			continue
			;;
		'' | '#'*) continue ;;
		esac
		if [ -n "$1" ]; then
			[ "$part" = "$1" ] || continue
		elif [ -n "$2" ] && [ "$part" -gt "$2" ]; then
			continue
		fi
		printf '%s\n' "$SERIES_DIR/$p"
	done <"$SERIES_DIR/series"
}
series_patches() { patches_of '' "$PART"; }
part_patches() { patches_of "$1" ''; }

# series_parts: "N TITLE" for each part marker of the series file, in
# order; nothing for a revision posted as one series.
series_parts() {
	[ -n "$SERIES_DIR" ] || return 0
	sed -n 's/^# part \([0-9][0-9]*\): *\(.*\)$/\1 \2/p' "$SERIES_DIR/series"
}

# cover_file [N]: the cover letter of part N of a revision in parts
# (cover-letters/vN.N), or of the whole revision.
cover_file() {
	if [ -n "${1:-}" ]; then
		printf '%s\n' "$COVER_DIR/$REV_BASE.$1"
	else
		printf '%s\n' "$COVER_DIR/$REV"
	fi
}

# part_tip N: the commit of part N's last patch in MAIN_TREE (by position:
# the tree holds the series, which tree.sh checks before using this).
part_tip() {
	local k
	k=$(patches_of '' "$1" | wc -l)
	[ "$k" -gt 0 ] || die "part $1 of $REV_BASE has no patches"
	git -C "$MAIN_TREE" rev-list --reverse base..work | sed -n "${k}p"
}

# format-patch options shared by export and the "is it exported?" check.
# No signature, zero commit ids: the files do not depend on the machine.
fmt_patch() {
	[ -z "$PART" ] || die "REV=$REV is a part of $REV_BASE: export, send and compare REV=$REV_BASE"
	git -C "$TREE" format-patch --quiet --zero-commit --no-signature \
		--base=base -o "$1" base..HEAD
}

# Count the work tree's commits whose patch is not in the series directory.
# Prints the count; 0 means the series directory holds exactly the tree.
# A part's tree (REV=vN.P) has no commits of its own: count those it holds
# that the main tree's branch does not (made there, they would be lost).
unexported_count() {
	local tmp n=0 f
	if [ -n "$PART" ]; then
		git -C "$TREE" rev-list --count HEAD --not work
		return
	fi
	tmp=$(mktemp -d)
	fmt_patch "$tmp"
	for f in "$tmp"/*.patch; do
		[ -e "$f" ] || continue
		if [ -z "$SERIES_DIR" ] || ! cmp -s "$f" "$SERIES_DIR/${f##*/}"; then
			n=$((n + 1))
		fi
	done
	rm -rf "$tmp"
	echo "$n"
}

# A tree left on a detached HEAD (an interrupted bisect-build.sh) must not
# be exported or reset: base..HEAD would then miss the later patches.
# A part's tree is always detached: work in the main tree.
tree_on_branch() {
	[ -z "$PART" ] ||
		die "$TREE is the tip of parts 1 to $PART of $REV_BASE, a detached work tree of $MAIN_TREE: commit, export and bisect there (REV=$REV_BASE)"
	git -C "$TREE" symbolic-ref -q HEAD >/dev/null ||
		die "$TREE is on a detached HEAD (an interrupted 'make bisect'?): git -C $TREE checkout work"
}

# Debian's linux-source .gitignore ignores everything ("/*"), so a new file
# in the tree is "ignored", not "untracked": count those too.
tree_dirty() {
	[ -n "$(git -C "$TREE" status --porcelain --untracked-files=all --ignored)" ]
}

need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			die "missing tool '$t': run 'make deps' (or apt-get install the package that has it)"
	done
}

# Write $BUILD/.config from the fragments CONFIG names, merged onto
# allnoconfig by the kernel's merge_config.sh; skipped when neither the
# fragments nor the tree's HEAD changed. Fails when Kconfig drops a request.
# The fragment files of CONFIG, one path per line.
# distro starts from Debian's own configuration of BASE (linux-config-BASE,
# flavour amd64), decompressed into the work area; the other configurations
# are merged onto allnoconfig.
debian_config() {
	local xz=/usr/src/linux-config-$BASE/config.amd64_none_amd64.xz
	local out=$WORK/distro/config.amd64_none_amd64-$BASE
	[ -f "$xz" ] || die "no $xz: install linux-config-$BASE (make deps DEPS_DISTRO=1)"
	mkdir -p "$WORK/distro"
	[ "$out" -nt "$xz" ] || xz -dc "$xz" >"$out" || die "cannot decompress $xz"
	printf '%s\n' "$out"
}
config_fragments() {
	local f frags
	case "$CONFIG" in
	smoke) frags="smoke repl-on" ;;
	smoke-off) frags="smoke repl-off" ;;
	smoke-nopti) frags="smoke repl-on nopti" ;;
	smoke-4level) frags="smoke repl-on 4level" ;;
	smoke-hyperv) frags="smoke repl-on hyperv" ;;
	debug) frags="smoke repl-on debug" ;;
	distro)
		debian_config
		frags="repl-on distro"
		;;
	*) die "unknown CONFIG '$CONFIG': known are $KNOWN_CONFIGS" ;;
	esac
	for f in $frags; do
		printf '%s\n' "$REPO/qemu-smoke/configs/$f.config"
	done
}

configure_build() {
	local files stamp want log missed allno=-n ours
	mapfile -t files < <(config_fragments)
	[ ${#files[@]} -gt 0 ] || exit 1
	# Our fragments, whose every request Kconfig must honour. distro's
	# first file is Debian's own configuration, the base of the merge
	# instead of allnoconfig, with values for another compiler and for
	# the debug info distro.config turns off: not checked.
	ours=("${files[@]}")
	if [ "$CONFIG" = distro ]; then
		allno=
		ours=("${files[@]:1}")
	fi
	mkdir -p "$BUILD"
	stamp=$BUILD/.fragments.sha
	want=$( (cat "${files[@]}"; git -C "$TREE" rev-parse HEAD) | sha256sum)
	if [ -f "$BUILD/.config" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		return 0
	fi
	say "configuring $BUILD from: ${files[*]##*/}"
	log=$BUILD/merge_config.log
	# shellcheck disable=SC2086 # $allno: no argument at all when empty
	(cd "$TREE" && ARCH=x86_64 scripts/kconfig/merge_config.sh $allno -O "$BUILD" "${files[@]}") >"$log" 2>&1 ||
		{ cat "$log" >&2; die "merge_config.sh failed"; }
	# merge_config.sh only warns about requests Kconfig did not honour.
	missed=$(grep -o 'Value requested for CONFIG_[A-Z0-9_]* not in final .config' "$log" |
		awk '{print $4}' || true)
	# A symbol no Kconfig file of this tree defines is one the series (or
	# a later patch of it) adds: the base, and an early commit under
	# bisect-build, cannot have it.
	missed=$(for sym in $missed; do
		if grep -rqsx --include='Kconfig*' "config ${sym#CONFIG_}" "$TREE" &&
			grep -qE "^(# )?${sym}[= ]" "${ours[@]}"; then
			echo "$sym"
		fi
	done)
	if [ -n "$missed" ]; then
		grep -A3 'Value requested' "$log" >&2 || true
		die "config fragments not honoured by Kconfig: $(echo "$missed" | tr '\n' ' ')"
	fi
	echo "$want" >"$stamp"
}

export CCACHE_DIR=${CCACHE_DIR:-$WORK/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
kmake() { obj_make "$TREE" "$BUILD" "$@"; }

# The .c files of x86_64 kernel sources the series touches and that still
# exist at HEAD, one per line.
touched_sources() {
	local f
	git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.c' |
		while read -r f; do
			case "$f" in
			arch/x86/*) echo "$f" ;;
			arch/* | tools/* | scripts/* | usr/* | Documentation/*) ;;
			*) echo "$f" ;;
			esac
		done
}

# obj_make SRC OBJ make-args...: kbuild of the tree SRC, output in OBJ.
obj_make() {
	local src=$1 obj=$2
	shift 2
	make -s -C "$src" O="$obj" ARCH=x86_64 CC="ccache gcc" -j"${JOBS:-$(nproc)}" "$@"
}

# configured_objects SRC OBJ FILE.c...: print the objects (FILE.o) of those
# the configuration in OBJ builds. Kbuild compiles any object it is asked
# for by name, so a dry run of their directories tells which it would
# build; the objects are removed first, so the dry run lists every one.
configured_objects() {
	local src=$1 obj=$2 f dry
	shift 2
	dry=$(mktemp)
	for f; do rm -f "$obj/${f%.c}.o"; done
	# -j1: in parallel, the sub-makes of the directories print into one
	# file at once, and a compile line cut by another's output is missed
	# (kernel_replication.o under smoke-hyperv, once, on a fresh build).
	# shellcheck disable=SC2046 # one word per directory
	obj_make "$src" "$obj" -n -j1 $(printf '%s\n' "$@" | sed 's|[^/]*$||' | sort -u) >"$dry" 2>&1 || true
	for f; do
		if grep -qF -- "-c -o ${f%.c}.o " "$dry"; then echo "${f%.c}.o"; fi
	done
	rm -f "$dry"
}

# compile_objects SRC OBJ LOG [make-args...] -- OBJECT...: build the
# objects in one kbuild run that keeps going past errors; the output goes
# to LOG. Prints the objects that were not built.
compile_objects() {
	local src=$1 obj=$2 log=$3 o args=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	for o; do rm -f "$obj/$o"; done
	obj_make "$src" "$obj" -k "${args[@]}" "$@" >"$log" 2>&1 || true
	for o; do [ -f "$obj/$o" ] || echo "$o"; done
}
