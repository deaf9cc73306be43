#!/bin/bash
# The kernel's build robots' coverage, restricted to what the series
# touches: the checks a 0-day or KernelCI report would bring us, run here
# before we post. Each part is compared with the pristine base built the
# same way and fails on what the series adds (warnings compared as a
# multiset, without line numbers, build paths and objtool offsets, as
# checks/sparse-w1.sh does: moved code is not new; a file new in the
# series has no base, so all its warnings are new):
#
#   clang-smoke      the touched .c files compiled with LLVM (clang, ld.lld,
#   clang-smoke-off  llvm-ar...: LLVM=$BUILDBOT_LLVM, default 1) and W=1,
#                    under the smoke and smoke-off configurations
#   i386             ARCH=i386: i386_defconfig with the option requested
#                    (and NUMA, with what it needs on 32-bit): the option
#                    must end up not set (the series selects
#                    ARCH_SUPPORTS_KERNEL_REPLICATION on X86_64 only), and
#                    the touched .c files the configuration builds are
#                    compiled with W=1, gcc; the others are listed as not built
#   htmldocs         make htmldocs, SPHINXDIRS= the Documentation/ directories
#                    of the .rst files the series adds or changes
#   kernel-doc       scripts/kernel-doc -none -Wall on every touched .c/.h
#                    that has kernel-doc comments
#
# Build directories: $WORK/build/$BASE-$REV-buildbot-PART (the series) and
# ...-PART-base (the base). The base sources are those of sparse-w1.sh (the
# REV=base work tree when it is at the base commit, else the worktree
# $WORK/check/$BASE-base, made here when missing); both trees are only read.
#
#   buildbot.sh                  every part (BUILDBOT_PARTS), a summary table
#   buildbot.sh --part PART      one part
. "$(dirname "$0")/../scripts/lib.sh"

ALL_PARTS="clang-smoke clang-smoke-off i386 htmldocs kernel-doc"
BUILDBOT_PARTS=${BUILDBOT_PARTS:-$ALL_PARTS}
BUILDBOT_LLVM=${BUILDBOT_LLVM:-1}
JOBS=${JOBS:-2}
# Documentation/conf.py and the sphinx extensions are Python: no
# __pycache__ in the (shared, read-only here) source trees.
export PYTHONDONTWRITEBYTECODE=1

# The kbuild of lib.sh's configured_objects and compile_objects, with the
# architecture and compiler of the part (kb_args), at low priority.
kb_args=(ARCH=x86_64 "CC=ccache gcc")
obj_make() {
	local src=$1 obj=$2
	shift 2
	nice -n "${BUILDBOT_NICE:-10}" make -s -C "$src" O="$obj" "${kb_args[@]}" -j"$JOBS" "$@"
}

# The clang of LLVM=: 1 (the unversioned tools), -14 (a suffix) or a
# directory ending in /.
llvm_cc() {
	case "$BUILDBOT_LLVM" in
	1) echo clang ;;
	-*) echo "clang$BUILDBOT_LLVM" ;;
	*/) echo "${BUILDBOT_LLVM}clang" ;;
	*) die "BUILDBOT_LLVM='$BUILDBOT_LLVM': expected 1, -NN or a directory ending in /" ;;
	esac
}

base_id=
base_tree=
# A clean tree at the base commit (read without taking git's index lock).
at_base() {
	[ "$(git -C "$1" rev-parse -q --verify HEAD 2>/dev/null)" = "$base_id" ] &&
		[ -z "$(GIT_OPTIONAL_LOCKS=0 git -C "$1" status --porcelain --untracked-files=normal)" ]
}
find_base_tree() {
	base_id=$(git -C "$TREE" rev-parse base)
	base_tree=$WORK/trees/$BASE-base
	at_base "$base_tree" && return 0
	base_tree=$WORK/check/$BASE-base
	at_base "$base_tree" && return 0
	# sparse-w1.sh's worktree: made when missing, never removed here
	# (sparse-w1.sh remakes it).
	[ ! -e "$base_tree" ] ||
		die "$base_tree is not a clean tree at the base commit: run checks/sparse-w1.sh (it remakes it)"
	say "making the base worktree $base_tree"
	git -C "$TREE" worktree prune
	mkdir -p "$(dirname "$base_tree")"
	git -C "$TREE" worktree add -q --detach "$base_tree" base
}

# merge_config SRC OBJ ARCH ALLNO FILE...: OBJ/.config from the fragments
# (on allnoconfig with ALLNO=-n, else on alldefconfig), remade when they or
# SRC's HEAD changed. Kconfig evaluates the compiler: kb_args's LLVM= is
# passed on. Then make prepare.
merge_config() {
	local src=$1 obj=$2 arch=$3 allno=$4 want llvm=
	shift 4
	mkdir -p "$obj"
	want=$( (cat "$@"; printf '%s\n' "${kb_args[@]}"; git -C "$src" rev-parse HEAD) | sha256sum)
	if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.fragments.sha" 2>/dev/null)" != "$want" ]; then
		printf '%s\n' "${kb_args[@]}" | grep -q '^LLVM=' &&
			llvm=$(printf '%s\n' "${kb_args[@]}" | sed -n 's/^LLVM=//p')
		# shellcheck disable=SC2086 # $allno: no argument at all when empty
		(cd "$src" && env ARCH="$arch" ${llvm:+LLVM="$llvm"} scripts/kconfig/merge_config.sh $allno -O "$obj" "$@") \
			>"$obj/merge_config.log" 2>&1 ||
			{ cat "$obj/merge_config.log" >&2; die "merge_config.sh failed for $obj"; }
		echo "$want" >"$obj/.fragments.sha"
	fi
	obj_make "$src" "$obj" prepare >"$obj/prepare.log" 2>&1 ||
		{ tail -n 30 "$obj/prepare.log" >&2; die "make prepare failed in $obj"; }
}

# normalise IN OUT SRC OBJ: the diagnostics of IN as "original<TAB>normalised"
# lines: no build paths, no line or column numbers (of any PATH:LINE: sphinx
# names a document without its .rst), no objtool offsets.
normalise() {
	local in=$1 out=$2 src=$3 obj=$4
	sed -e "s|$src/||g" -e "s|$obj/||g" -e 's|^\./||' "$in" >"$out.orig"
	sed -E -e 's/([^ :]+):[0-9]+(:[0-9]+)?/\1/g' -e 's/\+0x[0-9a-f]+(\/0x[0-9a-f]+)?//g' \
		"$out.orig" | paste "$out.orig" - >"$out"
}

# added OLD NEW: the lines of NEW (original text) whose normalised text is
# not in OLD, as a multiset.
added() {
	awk -F '\t' 'FILENAME == ARGV[1] { seen[$2]++; next } seen[$2] > 0 { seen[$2]--; next } { print $1 }' "$1" "$2"
}

# per_file FILE OLD NEW: one line on FILE's diagnostics, series and base.
per_file() {
	local f=$1 n b
	n=$(cut -f2 "$3" | grep -c "^$f:" || true)
	b=$(cut -f2 "$2" | grep -c "^$f:" || true)
	if git -C "$TREE" cat-file -e "base:$f" 2>/dev/null; then
		echo "    $f: $n warning(s), base $b"
	else
		echo "    $f: $n warning(s), new file"
	fi
}

# compile_part NAME ARCH ALLNO FRAGMENT...: configure the series and the
# base build directories, compile the touched .c files the configuration
# builds (W=1), compare.
compile_part() {
	local name=$1 arch=$2 allno=$3 new_obj old_obj tmp f o objs old_objs broken n_added
	shift 3
	new_obj=$WORK/build/$BASE-$REV-buildbot-$name
	old_obj=$new_obj-base
	tmp=$new_obj/buildbot
	say "configuring and preparing $new_obj and $old_obj"
	merge_config "$TREE" "$new_obj" "$arch" "$allno" "$@"
	merge_config "$base_tree" "$old_obj" "$arch" "$allno" "$@"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	assert_config "$name" "$new_obj/.config" || return 1

	mapfile -t objs < <(configured_objects "$TREE" "$new_obj" "${files[@]}")
	old_objs=()
	for f in "${files[@]}"; do
		o=${f%.c}.o
		if ! printf '%s\n' "${objs[@]}" | grep -qxF "$o"; then
			echo "    $f: not built by this configuration"
		elif git -C "$TREE" cat-file -e "base:$f" 2>/dev/null; then
			old_objs+=("$o")
		fi
	done
	if [ ${#objs[@]} -eq 0 ]; then
		echo "$name: FAIL: the configuration builds none of the ${#files[@]} touched .c file(s)"
		return 1
	fi
	compile_objects "$TREE" "$new_obj" "$tmp/new.log" W=1 -- "${objs[@]}" >"$tmp/new.unbuilt"
	: >"$tmp/old.log"
	if [ ${#old_objs[@]} -gt 0 ]; then
		compile_objects "$base_tree" "$old_obj" "$tmp/old.log" W=1 -- "${old_objs[@]}" >"$tmp/old.unbuilt"
	fi
	for o in new old; do
		grep -E ': (fatal )?(warning|error): ' "$tmp/$o.log" >"$tmp/$o.diag" || true
	done
	normalise "$tmp/new.diag" "$tmp/new" "$TREE" "$new_obj"
	normalise "$tmp/old.diag" "$tmp/old" "$base_tree" "$old_obj"
	added "$tmp/old" "$tmp/new" >"$tmp/added"
	for o in "${objs[@]}"; do
		f=${o%.o}.c
		if grep -qxF "$o" "$tmp/new.unbuilt"; then
			echo "    $f: BUILD ERROR"
		else
			per_file "$f" "$tmp/old" "$tmp/new"
		fi
	done
	echo "    elsewhere (headers): $(cut -f2 "$tmp/new" | grep -cvF -f <(printf '%s:\n' "${files[@]}") || true) warning(s)"
	broken=$(wc -l <"$tmp/new.unbuilt")
	n_added=$(wc -l <"$tmp/added")
	if [ "$broken" != 0 ]; then
		grep -E ': (fatal )?error: ' "$tmp/new.log" | head -n 20 | sed 's/^/    /'
	fi
	if [ "$n_added" != 0 ]; then
		echo "  new warnings:"
		sed 's/^/    /' "$tmp/added"
	fi
	echo "$name: ${#objs[@]} file(s) built, $n_added new warning(s), $broken build error(s) (logs: $tmp)"
	[ "$n_added" = 0 ] && [ "$broken" = 0 ]
}

# assert_config NAME DOTCONFIG: the option as the part wants it.
assert_config() {
	local cfg=$2
	case "$1" in
	clang-smoke)
		grep -qx 'CONFIG_KERNEL_REPLICATION=y' "$cfg" ||
			{ echo "$1: FAIL: CONFIG_KERNEL_REPLICATION is not y in $cfg"; return 1; }
		grep -qx 'CONFIG_CC_IS_CLANG=y' "$cfg" ||
			{ echo "$1: FAIL: $cfg is not a clang configuration"; return 1; }
		echo "    CONFIG_KERNEL_REPLICATION=y, $(sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' "$cfg")"
		;;
	clang-smoke-off)
		! grep -q '^CONFIG_KERNEL_REPLICATION=' "$cfg" ||
			{ echo "$1: FAIL: CONFIG_KERNEL_REPLICATION is set in $cfg"; return 1; }
		grep -qx 'CONFIG_CC_IS_CLANG=y' "$cfg" ||
			{ echo "$1: FAIL: $cfg is not a clang configuration"; return 1; }
		echo "    CONFIG_KERNEL_REPLICATION not set, $(sed -n 's/^CONFIG_CC_VERSION_TEXT=//p' "$cfg")"
		;;
	i386)
		# The series must define the option, or its absence proves nothing.
		grep -rqsx --include='Kconfig*' 'config KERNEL_REPLICATION' "$TREE" ||
			{ echo "$1: FAIL: no Kconfig of $TREE defines KERNEL_REPLICATION"; return 1; }
		grep -qx 'CONFIG_X86_32=y' "$cfg" ||
			{ echo "$1: FAIL: $cfg is not an i386 configuration"; return 1; }
		if grep -qE '^CONFIG_(ARCH_SUPPORTS_)?KERNEL_REPLICATION=' "$cfg"; then
			echo "$1: FAIL: requested on i386, the option was selected: $(grep -E '^CONFIG_(ARCH_SUPPORTS_)?KERNEL_REPLICATION=' "$cfg" | tr '\n' ' ')"
			return 1
		fi
		echo "    requested, CONFIG_KERNEL_REPLICATION not set (CONFIG_NUMA=$(sed -n 's/^CONFIG_NUMA=//p' "$cfg"))"
		;;
	esac
}

part_clang() { # smoke | smoke-off
	local frags
	kb_args=(ARCH=x86_64 "LLVM=$BUILDBOT_LLVM" "CC=ccache $(llvm_cc)")
	command -v "$(llvm_cc)" >/dev/null || die "no $(llvm_cc): run 'make deps DEPS_BUILDBOT=1'"
	mapfile -t frags < <(CONFIG=$1 config_fragments)
	compile_part "clang-$1" x86_64 -n "${frags[@]}"
}

part_i386() {
	local frag=$WORK/build/$BASE-$REV-buildbot-i386/buildbot-request.config
	kb_args=(ARCH=i386 "CC=ccache gcc")
	mkdir -p "${frag%/*}"
	# The option, and NUMA with what it needs on 32-bit: the strongest
	# request; Kconfig must still leave the option out.
	printf '%s\n' CONFIG_KERNEL_REPLICATION=y CONFIG_HIGHMEM64G=y CONFIG_X86_BIGSMP=y CONFIG_NUMA=y >"$frag"
	compile_part i386 i386 '' "$TREE/arch/x86/configs/i386_defconfig" "$frag"
}

# The first-level Documentation/ directories (SPHINXDIRS) of the .rst
# files the series adds or changes.
doc_dirs() {
	git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- 'Documentation/*.rst' |
		sed -E 's|^Documentation/||; s|/.*||; s|^[^/]*\.rst$|.|' | sort -u
}

part_htmldocs() {
	local dirs new_obj old_obj tmp n_added f other
	command -v sphinx-build >/dev/null || die "no sphinx-build: run 'make deps DEPS_BUILDBOT=1'"
	mapfile -t dirs < <(doc_dirs)
	other=$(git -C "$TREE" diff --name-only base..HEAD -- Documentation | grep -v '\.rst$' | tr '\n' ' ' || true)
	if [ -n "$other" ]; then echo "    not built by sphinx here (not .rst): $other"; fi
	if [ ${#dirs[@]} -eq 0 ]; then
		echo "htmldocs: pass: the series changes no .rst file"
		return 0
	fi
	new_obj=$WORK/build/$BASE-$REV-buildbot-htmldocs
	old_obj=$new_obj-base
	tmp=$new_obj/buildbot
	rm -rf "$tmp"
	mkdir -p "$tmp" "$old_obj"
	echo "    SPHINXDIRS=${dirs[*]} ($(sphinx-build --version 2>&1))"
	docs() { # SRC OBJ LOG
		# The netlink specs' .rst are generated into the source tree (not
		# in Debian's linux-source): pointed at a file of OBJ instead.
		touch "$2/ynl-index.skipped"
		nice -n "${BUILDBOT_NICE:-10}" make -s -C "$1" O="$2" -j"$JOBS" htmldocs \
			SPHINXDIRS="${dirs[*]}" YNL_INDEX="$2/ynl-index.skipped" YNL_RST_FILES= >"$3" 2>&1
	}
	docs "$TREE" "$new_obj" "$tmp/new.log" || { tail -n 30 "$tmp/new.log"; echo "htmldocs: FAIL: make htmldocs failed in the series tree"; return 1; }
	docs "$base_tree" "$old_obj" "$tmp/old.log" || { tail -n 30 "$tmp/old.log"; echo "htmldocs: FAIL: make htmldocs failed in the base tree"; return 1; }
	for f in new old; do
		grep -E '(WARNING|ERROR|CRITICAL|SEVERE)|: (warning|error): ' "$tmp/$f.log" >"$tmp/$f.diag" || true
	done
	normalise "$tmp/new.diag" "$tmp/new" "$TREE" "$new_obj"
	normalise "$tmp/old.diag" "$tmp/old" "$base_tree" "$old_obj"
	added "$tmp/old" "$tmp/new" >"$tmp/added"
	n_added=$(wc -l <"$tmp/added")
	if [ "$n_added" != 0 ]; then
		echo "  new warnings:"
		sed 's/^/    /' "$tmp/added"
	fi
	echo "htmldocs: $(wc -l <"$tmp/new") warning(s), base $(wc -l <"$tmp/old"), $n_added new (logs: $tmp)"
	[ "$n_added" = 0 ]
}

part_kernel_doc() {
	local tmp f n=0 n_added
	tmp=$(mktemp -d)
	: >"$tmp/new.diag"
	: >"$tmp/old.diag"
	while read -r f; do
		grep -q '/\*\*' "$TREE/$f" || continue
		n=$((n + 1))
		(cd "$TREE" && scripts/kernel-doc -none -Wall "$f") >>"$tmp/new.diag" 2>&1 || true
		if git -C "$TREE" cat-file -e "base:$f" 2>/dev/null; then
			(cd "$base_tree" && scripts/kernel-doc -none -Wall "$f") >>"$tmp/old.diag" 2>&1 || true
		fi
	done < <(git -C "$TREE" diff --name-only --diff-filter=d base..HEAD -- '*.c' '*.h')
	normalise "$tmp/new.diag" "$tmp/new" "$TREE" "$TREE"
	normalise "$tmp/old.diag" "$tmp/old" "$base_tree" "$base_tree"
	added "$tmp/old" "$tmp/new" >"$tmp/added"
	n_added=$(wc -l <"$tmp/added")
	if [ "$n_added" != 0 ]; then
		echo "  new warnings:"
		sed 's/^/    /' "$tmp/added"
	fi
	echo "kernel-doc: $n file(s) with kernel-doc comments, $(wc -l <"$tmp/new") warning(s), base $(wc -l <"$tmp/old"), $n_added new"
	rm -rf "$tmp"
	[ "$n_added" = 0 ]
}

if [ -z "$SERIES_DIR" ]; then
	echo "REV=base: no series, nothing to check"
	exit 0
fi
[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag: run 'make tree REV=$REV BASE=$BASE'"

case "${1:-}" in
--part)
	[ $# = 2 ] || die "usage: $0 [--part PART]"
	need git make gcc ccache flex bison bc perl
	find_base_tree
	mapfile -t files < <(touched_sources)
	case "$2" in
	clang-smoke) part_clang smoke ;;
	clang-smoke-off) part_clang smoke-off ;;
	i386) part_i386 ;;
	htmldocs) part_htmldocs ;;
	kernel-doc) part_kernel_doc ;;
	*) die "unknown part '$2': known are $ALL_PARTS" ;;
	esac
	exit
	;;
'') ;;
*) die "usage: $0 [--part PART]" ;;
esac

tree_dirty && say "warning: $TREE has uncommitted changes: they are checked too, but are not in the series"
[ "$(unexported_count)" = 0 ] ||
	say "warning: $TREE holds commits that are not in ${SERIES_DIR#"$REPO"/}; checking the tree's"
names=() results=() times=()
for p in $BUILDBOT_PARTS; do
	t0=$(date +%s)
	echo "== buildbot $p"
	rc=0
	"$0" --part "$p" || rc=$?
	names+=("$p")
	times+=("$(($(date +%s) - t0)) s")
	if [ "$rc" = 0 ]; then results+=(pass); else results+=("FAIL (exit $rc)"); fi
done
echo
echo "buildbot checks of $BASE $REV:"
printf '  %-16s %-16s %s\n' CHECK RESULT TIME
failed=0
for i in "${!names[@]}"; do
	printf '  %-16s %-16s %s\n' "${names[i]}" "${results[i]}" "${times[i]}"
	[ "${results[i]}" = pass ] || failed=$((failed + 1))
done
echo "buildbot: $((${#names[@]} - failed)) passed, $failed failed"
[ "$failed" = 0 ]
