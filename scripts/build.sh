#!/bin/bash
# Configure and build the work tree for BASE/REV with the CONFIG set of
# fragments, out of tree (O=) under the work area, with ccache.
# Then build the out-of-tree test modules against it.
. "$(dirname "$0")/lib.sh"
need make gcc ccache flex bison bc perl

[ -d "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"

# A CONFIG name is a set of fragments from qemu-smoke/configs/.
case "$CONFIG" in
smoke) frags="smoke repl-on" ;;
smoke-off) frags="smoke repl-off" ;;
debug) frags="smoke repl-on debug" ;;
*) die "unknown CONFIG '$CONFIG': known are smoke, smoke-off, debug" ;;
esac

files=()
for f in $frags; do
	files+=("$REPO/qemu-smoke/configs/$f.config")
done

mkdir -p "$BUILD"
stamp=$BUILD/.fragments.sha
want=$( (cat "${files[@]}"; git -C "$TREE" rev-parse HEAD) | sha256sum)
if [ ! -f "$BUILD/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	say "configuring $BUILD from: $frags"
	log=$BUILD/merge_config.log
	(cd "$TREE" && ARCH=x86_64 scripts/kconfig/merge_config.sh -n -O "$BUILD" "${files[@]}") >"$log" 2>&1 ||
		{ cat "$log" >&2; die "merge_config.sh failed"; }
	# merge_config.sh only warns about requests Kconfig did not honour.
	missed=$(grep -o 'Value requested for CONFIG_[A-Z0-9_]* not in final .config' "$log" |
		awk '{print $4}' || true)
	if [ "$REV" = base ]; then
		missed=$(printf '%s\n' "$missed" | grep -v '^CONFIG_KERNEL_REPLICATION$' || true)
	fi
	if [ -n "$missed" ]; then
		grep -A3 'Value requested' "$log" >&2 || true
		die "config fragments not honoured by Kconfig: $(echo "$missed" | tr '\n' ' ')"
	fi
	echo "$want" >"$stamp"
fi

export CCACHE_DIR=${CCACHE_DIR:-$WORK/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
kmake() {
	make -s -C "$TREE" O="$BUILD" ARCH=x86_64 CC="ccache gcc" -j"$(nproc)" "$@"
}
say "building bzImage and modules in $BUILD"
start=$(date +%s)
kmake bzImage modules

# Out-of-tree test modules: copied out of the repo so objects never land in it.
ext=$BUILD/ext
rm -rf "$ext"
mkdir -p "$ext"
cp -r "$REPO/qemu-smoke/verifier" "$ext/"
if [ -f "$ext/verifier/Kbuild" ]; then
	make -s -C "$BUILD" M="$ext/verifier" CC="ccache gcc" W=1 modules
fi
# Static test programs for the guest.
mkdir -p "$ext/progs"
for c in "$REPO"/qemu-smoke/progs/*.c; do
	[ -e "$c" ] || continue
	p=${c##*/}
	gcc -static -O2 -Wall -Wextra -Werror -o "$ext/progs/${p%.c}" "$c" ||
		die "building the guest program $p failed"
done
say "built in $(($(date +%s) - start)) s: $BUILD/arch/x86/boot/bzImage"
