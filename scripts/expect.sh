# shellcheck shell=bash
# What the guest tests expect of a build, decided from REV and CONFIG, not
# from the build's .config: a renamed option or a missed dependency must
# fail here, not quietly turn the option-on rows into option-off rows.
# Sourced after lib.sh by the scripts that boot a build (run-matrix.sh,
# stress.sh, fault-boots.sh).

# expects_replication: BASE/REV/CONFIG has the replication option on: a
# revision of the series (not the base) whose expect file declares the
# feature "image" (the kernel image is replicated: a partial revision, or
# the tip of a preparatory part, does not), in an option-on configuration.
expects_replication() {
	[ "$REV" != base ] || return 1
	rev_declares image || return 1
	case "$CONFIG" in
	smoke | smoke-nopti | smoke-4level | smoke-hyperv | debug | distro) return 0 ;;
	*) return 1 ;;
	esac
}

# series_defines SYMBOL: a patch of REV's series adds 'config SYMBOL'.
series_defines() {
	local patches
	mapfile -t patches < <(series_patches)
	[ ${#patches[@]} -gt 0 ] && grep -qx "+config $1" "${patches[@]}"
}

# expects_fault_injection: the build must have the series' fault attribute
# (CONFIG_FAIL_KERNEL_REPLICATION): the option is on, the configuration is
# debug or one of its fragments asks for the attribute, and the series
# defines it.
expects_fault_injection() {
	local frags
	expects_replication || return 1
	mapfile -t frags < <(config_fragments)
	[ ${#frags[@]} -gt 0 ] || return 1
	[ "$CONFIG" = debug ] || grep -qx 'CONFIG_FAIL_KERNEL_REPLICATION=y' "${frags[@]}" || return 1
	series_defines FAIL_KERNEL_REPLICATION
}

# check_build_config DOTCONFIG: die unless the .config of the build is what
# BASE/REV/CONFIG must be.
check_build_config() {
	local cfg=$1 what="$BASE $REV $CONFIG ($1)"
	[ -f "$cfg" ] || die "no $cfg: run 'make build REV=$REV BASE=$BASE CONFIG=$CONFIG'"
	if expects_replication; then
		grep -qx 'CONFIG_KERNEL_REPLICATION=y' "$cfg" ||
			die "$what: CONFIG_KERNEL_REPLICATION=y is missing, so the option-on rows would run without replication (option renamed? a dependency not met? see $BUILD/merge_config.log)"
	elif [ "$CONFIG" = smoke-off ] && grep -qx 'CONFIG_KERNEL_REPLICATION=y' "$cfg"; then
		die "$what: CONFIG_KERNEL_REPLICATION=y in the option-off configuration"
	fi
	if expects_fault_injection; then
		grep -qx 'CONFIG_FAIL_KERNEL_REPLICATION=y' "$cfg" ||
			die "$what: CONFIG_FAIL_KERNEL_REPLICATION=y is missing, so 35-faults and the fault-injection boots cannot run (see $BUILD/merge_config.log)"
	fi
}
