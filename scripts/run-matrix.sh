#!/bin/bash
# run-matrix.sh MATRIX: build and boot the rows of qemu-smoke/matrix/MATRIX
# for BASE/REV, one configuration after the other: build it (and its
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

matrices() { find "$REPO/qemu-smoke/matrix" -type f ! -name '*.md' -printf '%f ' | tr ' ' '\n' | sort | tr '\n' ' '; }
[ $# = 1 ] || die "usage: run-matrix.sh MATRIX (one of: $(matrices))"
matrix=$REPO/qemu-smoke/matrix/$1
[ -f "$matrix" ] || die "no matrix '$1' in qemu-smoke/matrix: known are $(matrices)"
topodir=$REPO/qemu-smoke/topologies
all_topos=$(find "$topodir" -name '*.topo' -printf '%f\n' | sed 's,\.topo$,,' | sort | tr '\n' ' ')
for t in ${TOPO:-}; do
	case " $all_topos " in *" $t "*) ;; *) die "unknown topology '$t': known are $all_topos" ;; esac
done

# The rows, filtered, as "CONFIG TOPO SUITE EXPECT TIMEOUT LABEL WORDS...".
rows=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$rows" "$out"' EXIT
while read -r c topos suite expect limit label words; do
	case "$c" in '' | '#'*) continue ;; esac
	[ -n "$label" ] || die "$matrix: short row for $c"
	case "$suite/$expect" in
	tests/auto | tests/off | tests/repl | protect/auto | protect/repl) ;;
	*) die "$matrix: row for $c: SUITE '$suite' with EXPECT '$expect' (SUITE tests or protect, EXPECT auto, off or repl)" ;;
	esac
	if [ -n "$config_filter" ]; then
		case " $config_filter " in *" $c "*) ;; *) continue ;; esac
	fi
	[ "$topos" = '*' ] && topos=$all_topos
	for t in ${topos//,/ }; do
		if [ -n "${TOPO:-}" ]; then
			case " $TOPO " in *" $t "*) ;; *) continue ;; esac
		fi
		echo "$c $t $suite $expect $limit $label ${words#-}"
	done
done <"$matrix" >"$rows"
[ -s "$rows" ] || die "matrix $1 has no row for CONFIG='$config_filter' TOPO='${TOPO:-}'"
# A filter word that keeps nothing is a typo or a wrong matrix: say so.
for w in $config_filter; do
	awk -v w="$w" '$1 == w { f = 1 } END { exit !f }' "$rows" || say "CONFIG word '$w' keeps no row of matrix $1"
done
for w in ${TOPO:-}; do
	awk -v w="$w" '$2 == w { f = 1 } END { exit !f }' "$rows" || say "TOPO word '$w' keeps no row of matrix $1"
done

# start_row N CONFIG TOPO SUITE EXPECT TIMEOUT LABEL [WORDS...]: one boot,
# in the background, its report in $out/N.row and exit code in $out/N.rc.
start_row() {
	local n=$1 suite=$4 expect=$5 label=$7 name=$3 words=("${@:8}") opts=()
	while [ "$(jobs -pr | wc -l)" -ge "${BOOT_JOBS:-$(nproc)}" ]; do wait -n || true; done
	if [ "$suite" != tests ]; then
		name=$name-$suite
		words=("ktv_suite=$suite" "${words[@]}")
	fi
	[ "$suite" = protect ] && opts+=(--expect-faults)
	if [ "$expect" != off ] && expects_replication; then opts+=(--expect-repl); fi
	if [ "$label" = = ]; then
		label=$BASE-$REV-$CONFIG
	else
		name=$name-${label#"$CONFIG"-}
		label=$BASE-$REV-$label
	fi
	[ "$n" = "$first" ] && opts+=(--header)
	{
		rc=0
		TIMEOUT=${TIMEOUT:-$6} boot_guest "$name" "$3" "$label" "${words[*]}" "${opts[@]}" \
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
	while read -r rc_ t suite expect limit label words; do
		[ "$rc_" = "$c" ] || continue
		# "off" and "repl": only where the configuration replicates.
		if [ "$expect" != auto ] && ! expects_replication; then continue; fi
		n=$((n + 1))
		# shellcheck disable=SC2086 # the row's words
		start_row "$n" "$c" "$t" "$suite" "$expect" "$limit" "$label" $words
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
if [ "$rc" = 0 ]; then
	say "$BASE $REV: matrix $1: every build and boot passed"
else
	say "$BASE $REV: matrix $1: FAILED: $(printf '%s\n' "${failed[@]}" | sort -u | tr '\n' ' ')(see the rows above)"
fi
exit $rc
