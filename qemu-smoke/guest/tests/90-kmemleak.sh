# shellcheck shell=sh
# On a kernel with kmemleak (the debug configuration): after every other
# test, a scan finds no leaked object. Skipped where kmemleak is absent.

# shellcheck source=../lib/ktv.sh
. /lib/ktv.sh

KMEMLEAK=/sys/kernel/debug/kmemleak

if [ ! -w "$KMEMLEAK" ]; then
	ktap_skip no_leaks "no kmemleak"
else
	n=$(ktv_kmemleak_scan)
	if [ "$n" = 0 ]; then
		ktap_ok no_leaks
	elif [ -z "$n" ]; then
		ktap_fail no_leaks "kmemleak could not scan (disabled itself, or the scan failed)"
	else
		head -n 20 /tmp/kmemleak.txt | while IFS= read -r l; do ktap_diag "kmemleak: $l"; done
		ktap_fail no_leaks "$n suspected leak(s)"
	fi
fi
