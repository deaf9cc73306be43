# ktext-repl: per-NUMA-node kernel text replication, kept as patch series.
# 'make help' lists the targets. Variables (command line or environment):
#   REV=v1|v2|...|base  revision (default: the newest series-vN)
#   BASE=6.12|6.1       kernel base (default 6.12; 6.1 is the backport)
#   WORK=DIR            work area outside the repo (default ~/.cache/ktext-repl)
#   CONFIG=NAME...      configuration(s), as scripts/lib.sh's config_fragments
#                       names them: the one to build (default smoke); for the
#                       matrix targets (smoke, check, debug, distro, variants)
#                       a filter over the rows of their matrix
#   TOPO=NAME...        topology (topologies) of qemu-smoke/topologies/: a
#                       filter over the rows of the matrix (default: all)
#   DRY_RUN=1           smoke, debug, distro, variants: print the boot
#                       commands; nothing is built or booted (make check
#                       refuses it)
#   APPEND="..."        extra kernel parameters for the guests
#   TIMEOUT=S           hard limit per guest boot (default: each matrix row's
#                       or script's own)
#   BOOT_JOBS=N         guests booted at a time by the matrix targets (nproc)
#   MTTCG=1             multi-threaded TCG for every guest (the meter's boots
#                       always are: qemu-smoke/plugin/README.md); slower on 2 cores
#   TLB_TOPO, TLB_NAME, TLB_SUITES  make tlb's topology, run name and guest scripts
#   MUTANTS=NAME,...    checks/mutants.sh, tlb-mutants.sh: which of REV's mutants
#   JOBS=N              make -j for kernel builds (default: nproc)
#   PATCH_AUTHOR="Name <mail>"  identity of the patches (default: a role)
#   SENDER="Name <mail>"  prep/send: the sender, stamped as From: and
#                         Signed-off-by: on the b4 branch (default:
#                         PATCH_AUTHOR if set to a person, else git's user)
# A target whose boots are fixed (stress, bench, meter, selftest, the fault
# boots) says which of TOPO and CONFIG it does not honour.

SHELL := /bin/bash
S := scripts

.PHONY: help deps tree export status build bisect initramfs smoke debug distro variants buildbot stress selftest meter bench tlb tlb-mutants mutants check prep send

help:
	@echo "Targets:"
	@echo "  deps       install missing Debian packages (apt, --no-install-recommends)"
	@echo "  tree       unpack the base and apply REV's series in the work tree"
	@echo "  export     write the work tree's commits back into REV's series directory"
	@echo "  status     every work tree: clean or dirty, commits not exported"
	@echo "  build      configure (CONFIG fragments) and build bzImage, modules, test modules"
	@echo "  distro     Debian's amd64 configuration with the option: build, 2node and cpuless boots"
	@echo "  variants   smoke-4level and smoke-hyperv built whole and booted (check only compiles them)"
	@echo "  buildbot   the build robots' checks of the touched files against the base: clang W=1"
	@echo "             (option on, off), i386 (the option must stay off), htmldocs, kernel-doc"
	@echo "  bisect     build every patch of REV on its own (CONFIG, default smoke)"
	@echo "  initramfs  guest initramfs (usr/gen_init_cpio, busybox, tests, modules)"
	@echo "  smoke      the main job: deps, tree, build, boot REV on the topology matrix"
	@echo "             (the boots of smoke, check, debug, distro, variants: qemu-smoke/matrix/)"
	@echo "  debug      the debug configuration (KASAN, lockdep, kmemleak...) on its matrix,"
	@echo "             then boots with replication allocations failing (fault-boots.sh)"
	@echo "  stress     text writers in loops under load on every node, then verify and kmemleak;"
	@echo "             then the fault-injection boots"
	@echo "  selftest   the harness under bad input: broken guests must be reported"
	@echo "  meter      build the TCG locality meter, prove it counts on the base kernel"
	@echo "             (METER=off: on REV built with the option off)"
	@echo "  bench      base kernel against REV: kbench, ftrace, memory, meter; table and plots"
	@echo "  tlb        REV on 2node under the meter's TLB model: fails on a stale translation"
	@echo "  tlb-mutants REV's mutants without a flush (series-vN/tlb-mutants): each must fail make tlb"
	@echo "  mutants     REV's mutants, one fix undone each (series-vN/mutants): each must fail its check"
	@echo "  check      CI's tests, one kernel build (REV with the smoke configuration): static"
	@echo "             checks, the check matrix (smoke rows), self-test, fault boots, meter"
	@echo "             (kernel_replication=off as the baseline), TLB check; then the newest"
	@echo "             revision if it is work in progress (scripts/check-newest.sh)"
	@echo "  prep       b4 prep of REV in its work tree with cover-letters/REV"
	@echo "  send       b4 send -o: write REV's messages for lore (offline)"
	@echo "Variables: REV BASE WORK CONFIG TOPO DRY_RUN APPEND TIMEOUT BOOT_JOBS JOBS PATCH_AUTHOR SENDER (see Makefile)"

deps:
	@$(S)/deps.sh

tree: deps
	@$(S)/tree.sh

export:
	@$(S)/export.sh

status:
	@$(S)/status.sh

build: tree
	@$(S)/build.sh

bisect: tree
	@$(S)/bisect-build.sh

initramfs: build
	@$(S)/initramfs.sh

smoke: tree
	@$(S)/run-matrix.sh smoke

debug: tree
	@$(S)/run-matrix.sh debug
	@$(S)/fault-boots.sh

# Debian's own configuration (linux-config-BASE) with the option on: build,
# then the verifier and protection suites on 2node and cpuless. Not in CI
# (its MAXSMP kernel took 84 min to build on two shared cores:
# results/timings.md).
distro: tree
	@DEPS_DISTRO=1 $(S)/deps.sh
	@$(S)/run-matrix.sh distro

# The configurations make check only compiles (checks/variants.sh), whole.
variants: tree
	@$(S)/run-matrix.sh variants

# What the kernel's build robots would report on the files the series
# touches (checks/buildbot.sh). Not in CI: 8-13 min more than make check's
# budget allows (results/timings.md).
buildbot: tree
	@DEPS_BUILDBOT=1 $(S)/deps.sh
	@checks/buildbot.sh

stress: tree
	@$(S)/stress.sh
	@$(S)/fault-boots.sh

selftest: build
	@$(S)/initramfs.sh
	@checks/harness-selftest.sh

# The meter's assertions are about a kernel without replication (remote
# fetches on the node without the image): the base kernel; with
# METER=off, REV built with the option off; with METER=runtime-off (make
# check: no second build), REV's smoke build booted with
# kernel_replication=off. METER=off and runtime-off also boot REV built
# with CONFIG=$${METER_SERIES:-smoke}, which replicates, and compare their
# steady states: that build must exist.
meter: deps
ifeq ($(METER),off)
	@CONFIG=smoke-off $(S)/build.sh
	@CONFIG=smoke-off $(S)/initramfs.sh
	@CONFIG_ASKED="$${CONFIG:-}" CONFIG=smoke-off METER_SERIES=$${METER_SERIES:-smoke} checks/meter.sh
else ifeq ($(METER),runtime-off)
	@CONFIG=smoke $(S)/build.sh
	@CONFIG=smoke $(S)/initramfs.sh
	@CONFIG_ASKED="$${CONFIG:-}" CONFIG=smoke METER_OFF_WORDS=kernel_replication=off METER_SERIES=smoke checks/meter.sh
else
	@REV=base $(S)/tree.sh
	@REV=base CONFIG=smoke $(S)/build.sh
	@REV=base CONFIG=smoke $(S)/initramfs.sh
	@CONFIG_ASKED="$${CONFIG:-}" REV=base CONFIG=smoke checks/meter.sh
endif

bench: deps
	@$(S)/bench.sh

# The TLB check: REV on 2node under the meter's TLB model (tlb=on), which
# fails on any stale translation (checks/tlb.sh).
tlb: tree
	@$(S)/build.sh
	@$(S)/initramfs.sh
	@checks/tlb.sh

# Each of REV's TLB mutants (series-vN/tlb-mutants/: one flush removed),
# built apart and booted under the TLB check, which must fail.
tlb-mutants: tree
	@$(S)/build.sh
	@$(S)/initramfs.sh
	@checks/tlb-mutants.sh

# Each of REV's mutants (series-vN/mutants/: one fix undone) must fail its
# check (checks/mutants.sh: a boot row, the TLB model or the static checks).
mutants: tree
	@$(S)/build.sh
	@$(S)/initramfs.sh
	@checks/mutants.sh

# make check under DRY_RUN=1 would run no static check, self-test or
# meter, build and boot nothing, and exit 0: a CI that inherits DRY_RUN
# would pass having checked nothing. Refused before anything runs (deps
# included); the boots it lists are those of the two commands named.
ifeq ($(DRY_RUN),1)
ifneq ($(filter check,$(MAKECMDGOALS)),)
$(error make check: DRY_RUN=1 is refused: it would check nothing and pass. To list its boots: DRY_RUN=1 scripts/run-matrix.sh check; DRY_RUN=1 scripts/fault-boots.sh)
endif
endif

# The self-test and the meter of make check boot the smoke build.
check: export CHECK_START := $(shell date +%s)
check: deps
	@case " $${CONFIG:-smoke} " in *" smoke "*) ;; *) echo "make check: CONFIG='$$CONFIG' leaves out smoke, which the self-test and the meter boot: add it, or run make smoke/debug for the rows alone" >&2; exit 1 ;; esac
	@$(S)/step.sh static checks/run-all.sh
	@$(S)/step.sh tree $(MAKE) --no-print-directory tree
	@$(S)/step.sh matrix $(S)/run-matrix.sh check
	@CONFIG=smoke $(S)/step.sh selftest checks/harness-selftest.sh
	@CONFIG_FAULTS=smoke $(S)/step.sh fault-boots $(S)/fault-boots.sh
	@$(S)/step.sh meter $(MAKE) --no-print-directory meter METER=runtime-off
	@CONFIG=smoke $(S)/step.sh tlb checks/tlb.sh
	@$(S)/step.sh newest $(S)/check-newest.sh
	@$(S)/step.sh --summary

prep: deps
	@$(S)/b4.sh prep

send: prep
	@$(S)/b4.sh send
