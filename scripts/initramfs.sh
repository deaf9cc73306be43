#!/bin/bash
# Make the guest initramfs for the built kernel with the kernel's own
# usr/gen_init_cpio: static busybox, /init, the KTAP library, the guest
# tests and the out-of-tree test modules built against this kernel.
. "$(dirname "$0")/lib.sh"
need gzip

gen=$BUILD/usr/gen_init_cpio
[ -x "$gen" ] || die "no $gen: run 'make build' first"
busybox=/bin/busybox
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' ||
	die "the guest needs a static busybox: install busybox-static ('make deps')"

guest=$REPO/qemu-smoke/guest
list=$BUILD/initramfs.list
{
	for d in /bin /sbin /dev /proc /sys /tmp /lib /lib/modules /lib/modules/test /tests /bench /protect /stress /meter; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/ttyS1 0600 0 0 c 4 65"
	echo "file /bin/busybox $busybox 0755 0 0"
	for a in $("$busybox" --list); do
		if [ "$a" != busybox ]; then echo "slink /bin/$a busybox 0777 0 0"; fi
	done
	echo "file /init $guest/init 0755 0 0"
	echo "file /lib/ktap.sh $guest/ktap.sh 0644 0 0"
	echo "file /lib/ktv.sh $guest/ktv.sh 0644 0 0"
	echo "file /lib/ktv-fail.sh $guest/ktv-fail.sh 0644 0 0"
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
} >"$list"
"$gen" "$list" | gzip -1 >"$BUILD/initramfs.cpio.gz"
say "initramfs: $BUILD/initramfs.cpio.gz ($(du -h "$BUILD/initramfs.cpio.gz" | cut -f1))"
