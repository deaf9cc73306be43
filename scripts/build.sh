#!/bin/bash
# Configure and build the work tree for BASE/REV with the CONFIG set of
# fragments, out of tree (O=) under the work area, with ccache.
# Then build the out-of-tree test modules against it.
. "$(dirname "$0")/lib.sh"
no_dry_run
need make gcc ccache flex bison bc perl

[ -e "$TREE/.git" ] || die "no work tree $TREE: run 'make tree REV=$REV BASE=$BASE'"

configure_build

start=$(date +%s)
if [ "$CONFIG" = distro ]; then
	# Debian's configuration has some 4000 modules; the guests load only
	# the out-of-tree test modules, which need vmlinux's symbol versions.
	say "building bzImage in $BUILD (Debian's modules are not built)"
	kmake bzImage modules_prepare
	cp "$BUILD/vmlinux.symvers" "$BUILD/Module.symvers"
else
	say "building bzImage and modules in $BUILD"
	kmake bzImage modules
fi

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
# What was built, for the records of the boots (boot_guest copies it).
{
	echo "revision: $BASE $REV"
	echo "kernel commit: $(git -C "$TREE" rev-parse HEAD)"
	echo "configuration: $CONFIG"
	echo "built: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "harness commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$BUILD/provenance"
say "built in $(($(date +%s) - start)) s: $BUILD/arch/x86/boot/bzImage"
