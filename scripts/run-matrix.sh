#!/bin/bash
# run-matrix.sh MATRIX: build and boot the rows of qemu-smoke/matrix/MATRIX
# (or of the file MATRIX, when it has a slash) for BASE/REV, one configuration after the other: build it (and its
# initramfs), check its .config, boot its rows BOOT_JOBS at a time (one
# per host core), print one line per boot in the file's order. Exits
# non-zero if a build or a boot failed.
#
# Filters, the same for every matrix: TOPO (topology names) and CONFIG
# (configuration names), each a space-separated list, keep the rows that
# name them; a filter that keeps no row is an error, a word that keeps
# none is reported. REV=base skips smoke-off and smoke-nopti: the base
# kernel has no replication option.
# APPEND adds kernel parameters to every boot, TIMEOUT replaces the
# rows' limits. DRY_RUN=1 prints the boot commands and builds nothing.
# The file format is in qemu-smoke/matrix/README.md.
config_filter=${CONFIG:-}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/expect.sh"
. "$(dirname "$0")/boot-lib.sh"
need python3 qemu-system-x86_64
# Words such as ftrace_filter=krepl_* are kernel parameters, not patterns.
set -f

matrices() { find "$REPO/qemu-smoke/matrix" -type f ! -name '*.md' -printf '%f ' | tr ' ' '\n' | sort | tr '\n' ' '; }
[ $# = 1 ] || die "usage: run-matrix.sh MATRIX (one of: $(matrices), or a file's path)"
case "$1" in
*/*) matrix=$1 ;;
*) matrix=$REPO/qemu-smoke/matrix/$1 ;;
esac
[ -f "$matrix" ] || die "no matrix '$1' in qemu-smoke/matrix: known are $(matrices)"
topodir=$REPO/qemu-smoke/topologies
all_topos=$(find "$topodir" -name '*.topo' -printf '%f\n' | sed 's,\.topo$,,' | sort | tr '\n' ' ')
for t in ${TOPO:-}; do
	case " $all_topos " in *" $t "*) ;; *) die "unknown topology '$t': known are $all_topos" ;; esac
done
for c in $config_filter; do
	case " $KNOWN_CONFIGS " in *" $c "*) ;; *) die "unknown configuration '$c': known are $KNOWN_CONFIGS" ;; esac
done

# matrix_rows FILE CHAIN [CONFIG...]: the rows of FILE, comments dropped,
# only those of the CONFIGs named when any are. A row "include MATRIX
# [CONFIG...]" stands for the rows of the file MATRIX beside FILE, only
# those of its CONFIGs (and of the outer ones); CHAIN lists the files
# being read, so that a cycle is an error, not a crash.
matrix_rows() {
	local file chain=$2 c rest inc sub w got
	file=$(realpath "$1")
	shift 2
	case " $chain " in *" $file "*) die "$file: included in a cycle: $chain $file" ;; esac
	while read -r c rest; do
		case "$c" in '' | '#'*) continue ;; esac
		rest=${rest%%[[:space:]]#*}
		if [ "$c" != include ]; then
			if [ $# -gt 0 ]; then
				case " $* " in *" $c "*) ;; *) continue ;; esac
			fi
			printf '%s %s\n' "$c" "$rest"
			continue
		fi
		read -ra inc <<<"$rest"
		if [ ${#inc[@]} = 0 ] || [ ! -f "${file%/*}/${inc[0]}" ]; then
			die "$file: cannot include '$rest': no such matrix"
		fi
		sub=("${inc[@]:1}")
		for w in "${sub[@]}"; do
			case " $KNOWN_CONFIGS " in *" $w "*) ;; *) die "$file: include $rest: unknown configuration '$w'" ;; esac
		done
		# Both lists given: the configurations in both.
		if [ $# -gt 0 ] && [ ${#sub[@]} -gt 0 ]; then
			mapfile -t sub < <(printf '%s\n' "${sub[@]}" | grep -Fxf <(printf '%s\n' "$@") || true)
			[ ${#sub[@]} -gt 0 ] || continue
		elif [ $# -gt 0 ]; then
			sub=("$@")
		fi
		got=$(mktemp -p "$tmp")
		matrix_rows "${file%/*}/${inc[0]}" "$chain $file" "${sub[@]}" >"$got"
		# Each configuration the include names must keep a row.
		[ ${#inc[@]} = 1 ] || for w in "${sub[@]}"; do
			awk -v w="$w" '$1 == w { f = 1 } END { exit !f }' "$got" ||
				die "$file: include $rest: no row of '$w' in ${inc[0]}"
		done
		cat "$got"
	done <"$file"
}

# descendants PID...: the PIDs and all their children's, parents first.
# shellcheck disable=SC2317 # called from cleanup, the EXIT trap
descendants() {
	local p
	for p; do
		echo "$p"
		# shellcheck disable=SC2046 # one word per child
		# (the thread that forked: the main one, in bash and in boot.py;
		# no glob, under set -f)
		descendants $(cat "/proc/$p/task/$p/children" 2>/dev/null)
	done
}
# Killed or failed: no guest outlives the runner (boot.py's QEMU included).
# Only jobs still running: a finished job's PID may be another's by now.
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	local running pids
	running=$(jobs -pr)
	# shellcheck disable=SC2086 # one word per PID
	pids=$(descendants $running)
	# shellcheck disable=SC2086 # one word per PID
	[ -z "$pids" ] || kill $pids 2>/dev/null || true
	rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
rows=$tmp/rows
out=$tmp/out
mkdir "$out"

# Every row of the matrix, checked before anything is filtered or built,
# one line per boot: CONFIG TOPOLOGY NAME LABEL OPTIONS TIMEOUT EXPECT
# WORDS..., where NAME is the output folder's name and OPTIONS boot.py's
# options joined by commas (- for none).
matrix_rows "$matrix" "" >"$tmp/raw"
while read -r c topos suite expect limit label words; do
	[ -n "$label" ] || die "$matrix: short row for $c"
	case " $KNOWN_CONFIGS " in *" $c "*) ;; *) die "$matrix: unknown configuration '$c'" ;; esac
	case "$suite/$expect" in
	tests/auto | tests/off | tests/repl | protect/auto | protect/repl) ;;
	*) die "$matrix: row for $c: SUITE '$suite' with EXPECT '$expect' (SUITE tests or protect, EXPECT auto, off or repl)" ;;
	esac
	case "$limit" in '' | *[!0-9]*) die "$matrix: row for $c: TIMEOUT '$limit' is not a number of seconds" ;; esac
	[ "$topos" = '*' ] && topos=$all_topos
	words=${words#-}
	for t in ${topos//,/ }; do
		case " $all_topos " in *" $t "*) ;; *) die "$matrix: row for $c: unknown topology '$t'" ;; esac
		# The folder is TOPOLOGY[-SUITE][-LABEL without its CONFIG- prefix];
		# the report's label BASE-REV-CONFIG or BASE-REV-LABEL.
		name=$t flags=- w=$words
		if [ "$suite" != tests ]; then
			name=$name-$suite
			w="ktv_suite=$suite${words:+ $words}"
		fi
		[ "$suite" = protect ] && flags=--expect-faults
		if [ "$label" = = ]; then
			l=$BASE-$REV-$c
		else
			name=$name-${label#"$c"-}
			l=$BASE-$REV-$label
		fi
		echo "$c $t $name $l $flags $limit $expect $w"
	done
done <"$tmp/raw" >"$tmp/all"
dup=$(awk '{ print $1 "/" $3 }' "$tmp/all" | sort | uniq -d | tr '\n' ' ')
[ -z "$dup" ] || die "matrix $1: two boots write to one folder: $dup"
# Then the filters.
awk -v cf="$config_filter" -v tf="${TOPO:-}" '
	BEGIN { nc = split(cf, c, " "); for (i in c) C[c[i]] = 1
		nt = split(tf, t, " "); for (i in t) T[t[i]] = 1 }
	(!nc || ($1 in C)) && (!nt || ($2 in T))' "$tmp/all" >"$rows"
[ -s "$rows" ] || die "matrix $1 has no row for CONFIG='$config_filter' TOPO='${TOPO:-}'"
# A filter word that keeps nothing is a typo or a wrong matrix: say so.
for w in $config_filter; do
	awk -v w="$w" '$1 == w { f = 1 } END { exit !f }' "$rows" || say "CONFIG word '$w' keeps no row of matrix $1"
done
for w in ${TOPO:-}; do
	awk -v w="$w" '$2 == w { f = 1 } END { exit !f }' "$rows" || say "TOPO word '$w' keeps no row of matrix $1"
done
jobs_max=${BOOT_JOBS:-$(nproc)}
case "$jobs_max" in '' | 0 | *[!0-9]*) die "BOOT_JOBS='$jobs_max': a number of guests at a time, at least 1" ;; esac

# start_row N TOPOLOGY NAME LABEL OPTIONS TIMEOUT EXPECT [WORDS...]: one
# boot of $CONFIG, in the background, its report in $out/N.row and exit
# code in $out/N.rc. The first of a configuration prints the header.
start_row() {
	local n=$1 opts=()
	while [ "$(jobs -pr | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
	[ "$5" = - ] || IFS=, read -ra opts <<<"$5"
	# "off": the kernel as built and switched off by the row's words, if
	# any; else, where the configuration replicates, assert it.
	if [ "$7" = off ]; then
		opts+=(--as-built)
	elif expects_replication; then
		opts+=(--expect-repl)
	fi
	[ "$n" = "$first" ] && opts+=(--header)
	{
		rc=0
		TIMEOUT=${TIMEOUT:-$6} boot_guest "$3" "$2" "$4" "${*:8}" "${opts[@]}" \
			>"$out/$n.row" 2>&1 || rc=$?
		echo "$rc" >"$out/$n.rc"
	} &
}

rc=0
failed=()
n=0
mapfile -t configs < <(awk '!seen[$1]++ { print $1 }' "$rows")
for c in "${configs[@]}"; do
	CONFIG=$c
	BUILD=$WORK/build/$BASE-$REV-$CONFIG
	export CONFIG BUILD
	# The option's own variants mean nothing for the base kernel.
	if [ "$REV" = base ] && { [ "$c" = smoke-off ] || [ "$c" = smoke-nopti ]; }; then
		say "$c: skipped: the base kernel has no replication option to switch off"
		continue
	fi
	if [ "${DRY_RUN:-0}" != 1 ]; then
		if ! "$REPO/scripts/build.sh" || ! "$REPO/scripts/initramfs.sh"; then
			rc=1
			failed+=("$c (build)")
			continue
		fi
		# A wrong .config fails this configuration, not the matrix.
		if ! (check_build_config "$BUILD/.config"); then
			rc=1
			failed+=("$c (.config)")
			continue
		fi
	fi
	first=$((n + 1))
	while read -r row_config t name label flags limit expect words; do
		[ "$row_config" = "$c" ] || continue
		# "off" and "repl": only where the configuration replicates;
		# "off" rows assert the one-copy baseline.
		if [ "$expect" != auto ] && ! expects_replication; then continue; fi
		n=$((n + 1))
		# shellcheck disable=SC2086 # the row's words
		start_row "$n" "$t" "$name" "$label" "$flags" "$limit" "$expect" $words
	done <"$rows"
	wait
	for i in $(seq "$first" "$n"); do
		cat "$out/$i.row"
		if [ "$(cat "$out/$i.rc" 2>/dev/null)" != 0 ]; then
			rc=1
			failed+=("$c")
		fi
	done
done
if [ "$n" = 0 ] && [ "$rc" = 0 ]; then
	say "$BASE $REV: matrix $1: FAILED: no row left to boot for this revision (see above)"
	rc=1
elif [ "${DRY_RUN:-0}" = 1 ]; then
	say "$BASE $REV: matrix $1: $n boots listed, nothing built or booted (DRY_RUN)"
elif [ "$rc" = 0 ]; then
	say "$BASE $REV: matrix $1: every build and boot passed"
else
	say "$BASE $REV: matrix $1: FAILED: $(printf '%s\n' "${failed[@]}" | sort -u | tr '\n' ' ')(see the rows above)"
fi
exit $rc
