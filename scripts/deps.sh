#!/bin/bash
# Install the Debian packages the workflow needs, with apt, when missing.
# Without root, print the apt command instead and fail.
. "$(dirname "$0")/lib.sh"

pkgs=(linux-source-"$BASE" gcc libc6-dev make bc flex bison libelf-dev libssl-dev dwarves
	cpio xz-utils kmod busybox-static sparse coccinelle b4
	ccache git python3 python3-ply python3-git shellcheck gnuplot-nox)
if [ "${DEPS_DISTRO:-}" = 1 ]; then pkgs+=(linux-config-"$BASE"); fi
# make stress fuzzes inside the guest with them (never on the host).
if [ "${DEPS_FUZZ:-}" = 1 ]; then pkgs+=(stress-ng trinity); fi
# checks/buildbot.sh: LLVM (unversioned clang, ld.lld, llvm-ar...) and
# Sphinx (its dependencies bring alabaster, 6.12's default docs theme).
if [ "${DEPS_BUILDBOT:-}" = 1 ]; then pkgs+=(clang lld llvm python3-sphinx); fi
if [ "${DEPS_ALL_BASES:-}" = 1 ]; then
	for b in $KNOWN_BASES; do pkgs+=(linux-source-"$b"); done
fi

# QEMU 10 from Debian 12's backports suite (bookworm's own is 7.2): its
# plugin API reads registers and guest memory, which the meter's TLB
# model needs (qemu-smoke/plugin/README.md), and 7.2 does not load the
# meter. Installed from the suite with -t, Debian's documented way
# (https://backports.debian.org/Instructions/).
QEMU_MIN=1:10.0
QEMU_SUITE=bookworm-backports
BACKPORTS_LIST=/etc/apt/sources.list.d/ktext-repl-backports.sources

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

qemu_ok() {
	local v
	installed qemu-system-x86 || return 1
	v=$(dpkg-query -W -f='${Version}' qemu-system-x86)
	dpkg --compare-versions "$v" ge "$QEMU_MIN"
}

missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
need_qemu=0
qemu_ok || need_qemu=1
[ ${#missing[@]} -gt 0 ] || [ "$need_qemu" = 1 ] || exit 0
if [ "${DRY_RUN:-0}" = 1 ]; then
	say "DRY_RUN: would install: ${missing[*]}"
	[ "$need_qemu" = 0 ] || say "DRY_RUN: would install qemu-system-x86 >= $QEMU_MIN from $QEMU_SUITE"
	exit 0
fi

cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
qcmd=(apt-get install -y --no-install-recommends -t "$QEMU_SUITE" qemu-system-x86)
if [ "$(id -u)" != 0 ]; then
	[ ${#missing[@]} = 0 ] || say "missing packages: ${missing[*]}"
	[ "$need_qemu" = 0 ] || say "qemu-system-x86 >= $QEMU_MIN is missing: it comes from $QEMU_SUITE"
	die "not root: enable $QEMU_SUITE (https://backports.debian.org/Instructions/), then: sudo apt-get update && sudo ${cmd[*]} && sudo ${qcmd[*]}"
fi
export DEBIAN_FRONTEND=noninteractive
if [ "$need_qemu" = 1 ] && ! grep -rqs "$QEMU_SUITE" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	say "enabling $QEMU_SUITE in $BACKPORTS_LIST"
	printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
		"Suites: $QEMU_SUITE" 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >"$BACKPORTS_LIST" ||
		die "cannot write $BACKPORTS_LIST"
fi
apt-get update -q || die "apt-get update failed"
if [ ${#missing[@]} -gt 0 ]; then
	say "installing: ${missing[*]}"
	"${cmd[@]}" || die "apt-get install failed for: ${missing[*]}"
fi
if [ "$need_qemu" = 1 ]; then
	say "installing qemu-system-x86 from $QEMU_SUITE"
	"${qcmd[@]}" || die "apt-get install -t $QEMU_SUITE failed for qemu-system-x86"
	qemu_ok || die "qemu-system-x86 is $(dpkg-query -W -f='${Version}' qemu-system-x86), want >= $QEMU_MIN"
fi
