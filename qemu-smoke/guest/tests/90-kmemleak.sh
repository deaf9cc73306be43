# shellcheck shell=sh
# On a kernel with kmemleak (the debug configuration): after every other
# test, a scan finds no leaked object. Skipped where kmemleak is absent.

KMEMLEAK=/sys/kernel/debug/kmemleak

if [ ! -w "$KMEMLEAK" ]; then
	ktap_skip no_leaks "no kmemleak"
else
	# Two scans: an object must look unreferenced twice to be reported.
	echo scan >"$KMEMLEAK"
	sleep 1
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >/tmp/kmemleak.txt
	n=$(grep -c 'unreferenced object' /tmp/kmemleak.txt)
	if [ "$n" = 0 ]; then
		ktap_ok no_leaks
	else
		head -n 20 /tmp/kmemleak.txt | while IFS= read -r l; do ktap_diag "kmemleak: $l"; done
		ktap_fail no_leaks "$n suspected leak(s)"
	fi
fi
