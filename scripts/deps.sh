#!/bin/bash
# Install the Debian packages the workflow needs, with apt, when missing.
# Without root, print the apt command instead and fail.
. "$(dirname "$0")/lib.sh"

pkgs=(linux-source-"$BASE" gcc libc6-dev make bc flex bison libelf-dev libssl-dev dwarves
	cpio xz-utils kmod qemu-system-x86 busybox-static sparse coccinelle b4
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

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "${DRY_RUN:-0}" = 1 ]; then
	say "DRY_RUN: would install: ${missing[*]}"
	exit 0
fi

cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
if [ "$(id -u)" != 0 ]; then
	say "missing packages: ${missing[*]}"
	die "not root: install them with: sudo apt-get update && sudo ${cmd[*]}"
fi
say "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q || die "apt-get update failed"
"${cmd[@]}" || die "apt-get install failed for: ${missing[*]}"
