#!/bin/bash
# Make the guest initramfs for the built kernel with the kernel's own
# usr/gen_init_cpio: static busybox, /init, the KTAP library, the guest
# tests and the out-of-tree test modules built against this kernel.
. "$(dirname "$0")/lib.sh"
no_dry_run
need gzip

gen=$BUILD/usr/gen_init_cpio
[ -x "$gen" ] || die "no $gen: run 'make build' first"
busybox=/bin/busybox
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' ||
	die "the guest needs a static busybox: install busybox-static ('make deps')"

# With FUZZ_TOOLS=1 ('make stress'): Debian's stress-ng and trinity, with
# the shared libraries they need (from their ELF headers: nothing is run
# on the host) and the dynamic loader.
fuzz_tools() {
	local -A seen=()
	local todo=() f lib d bin interp
	echo "dir /lib64 0755 0 0"
	echo "dir /lib/x86_64-linux-gnu 0755 0 0"
	for bin in stress-ng trinity; do
		f=$(command -v "$bin") || die "FUZZ_TOOLS=1: no $bin (make stress installs it)"
		echo "file /bin/$bin $f 0755 0 0"
		todo+=("$f")
	done
	interp=$(readelf -l "${todo[0]}" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
	echo "file $interp $(readlink -f "$interp") 0755 0 0"
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[ -z "${seen[$lib]:-}" ] || continue
			seen[$lib]=1
			for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu ''; do
				[ -n "$d" ] || die "FUZZ_TOOLS=1: $lib, needed by $f, not found"
				[ -e "$d/$lib" ] || continue
				echo "file /lib/x86_64-linux-gnu/$lib $(readlink -f "$d/$lib") 0755 0 0"
				todo+=("$(readlink -f "$d/$lib")")
				break
			done
		done
	done
}

guest=$REPO/qemu-smoke/guest
list=$BUILD/initramfs.list
{
	for d in /bin /sbin /dev /proc /sys /tmp /lib /lib/modules /lib/modules/test /tests /bench /protect /stress /meter /selftest; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/ttyS1 0600 0 0 c 4 65"
	echo "file /bin/busybox $busybox 0755 0 0"
	for a in $("$busybox" --list); do
		if [ "$a" != busybox ]; then echo "slink /bin/$a busybox 0777 0 0"; fi
	done
	echo "file /init $guest/init 0755 0 0"
	for l in "$guest"/lib/*.sh; do
		echo "file /lib/${l##*/} $l 0644 0 0"
	done
	echo "file /selftest/ktv-fail.sh $guest/selftest/ktv-fail.sh 0644 0 0"
	for t in "$guest"/tests/*.sh; do
		echo "file /tests/${t##*/} $t 0644 0 0"
	done
	for t in "$guest"/bench/*.sh "$guest"/protect/*.sh "$guest"/stress/*.sh "$guest"/meter/*.sh; do
		d=${t%/*}
		if [ -e "$t" ]; then echo "file /${d##*/}/${t##*/} $t 0644 0 0"; fi
	done
	for m in "$BUILD"/ext/*/*.ko; do
		if [ -e "$m" ]; then echo "file /lib/modules/test/${m##*/} $m 0644 0 0"; fi
	done
	for p in "$BUILD"/ext/progs/*; do
		if [ -x "$p" ]; then echo "file /bin/${p##*/} $p 0755 0 0"; fi
	done
	if [ "${FUZZ_TOOLS:-}" = 1 ]; then fuzz_tools; fi
} >"$list"
"$gen" "$list" | gzip -1 >"$BUILD/initramfs.cpio.gz"
say "initramfs: $BUILD/initramfs.cpio.gz ($(du -h "$BUILD/initramfs.cpio.gz" | cut -f1))"
