#!/usr/bin/env python3
"""Boot a kernel on one QEMU topology and report what happened.

The guest's /init prints KTAP on the second serial port; the kernel console
is the first. This script builds the QEMU command line from a topology file,
enforces a hard timeout, and prints one report row with the verdict that
guestlog.judge gives on the two logs: splats, KTAP results, the plan, skips
not in the allow-list (--allow-skips). Exit status: 0 all passed, 1 a test
failed (or the plan, the skips or the passes were wrong, or the tests
reported are not those of the row's inventory: --rev, --kconfig and
expected-tests, inventory.py), 2 the guest
panicked, printed a splat, hung or was cut short, 3 bad input.
"""

import argparse
import os
import shlex
import subprocess
import sys
import time

from guestlog import SkipRules, judge, stale_int3
from inventory import Inventory, facts_for
from topology import Topology, TopologyError

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_SKIPS = os.path.join(HERE, "expected-skips")
EXPECTED_TESTS = os.path.join(HERE, "expected-tests")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--topo", required=True, help="topology file")
    ap.add_argument("--out", required=True, help="directory for logs and results")
    ap.add_argument("--timeout", type=int, default=180, help="seconds before the guest counts as hung")
    ap.add_argument("--append", default="", help="extra kernel command line")
    ap.add_argument("--label", default="", help="kernel label for the report row")
    ap.add_argument("--expect-repl", action="store_true",
                    help="the kernel replicates: the guest asserts locality")
    ap.add_argument("--meter", default="",
                    help="locality meter plugin (.so): file-backed nodes, report in OUT/locality.txt")
    ap.add_argument("--meter-args", default="",
                    help="more arguments for the meter, comma-separated (data=on,cache=on,...)")
    ap.add_argument("--icount", action="store_true",
                    help="virtual time from the instruction count (-icount shift=0,sleep=off): "
                         "timer ticks come every so many guest instructions, whatever the host's "
                         "speed, so that the meter's counts per operation repeat")
    ap.add_argument("--mttcg", action="store_true",
                    help="multi-threaded TCG: one host thread per vCPU (always, with --meter)")
    ap.add_argument("--expect-faults", action="store_true",
                    help="the guest provokes faults on purpose: no oops=panic, and one oops "
                         "between each pair of its expect-fault markers is the test's, not the "
                         "report's; the row's topology is then TOPO/prot")
    ap.add_argument("--allow-skips", default=EXPECTED_SKIPS, metavar="FILE",
                    help="the skips a row may have, by label, topology and SUITE.TEST; "
                         "any other skip fails the row (default: %(default)s)")
    ap.add_argument("--base", default="6.12", help="kernel base of the build (the inventory's base)")
    ap.add_argument("--rev", help="revision of the build, vN or base: the row must report "
                    "the tests --inventory lists for it (required unless --no-inventory)")
    ap.add_argument("--config", default="", help="configuration name of the build")
    ap.add_argument("--kconfig", help="the build's .config (the inventory's y(SYMBOL))")
    ap.add_argument("--series-expect", default="",
                    help="the revision's series-vN/expect (its features); none for base")
    ap.add_argument("--inventory", default=EXPECTED_TESTS, metavar="FILE",
                    help="the tests each row must report (default: %(default)s)")
    ap.add_argument("--no-inventory", action="store_true",
                    help="do not check which tests the row reported (a guest booted by hand)")
    ap.add_argument("--rejudge", action="store_true",
                    help="boot nothing: judge the logs already in --out again, with the "
                         "options of their boot (OUT/boot.args) and today's allow-list and "
                         "inventory (after a change to either)")
    ap.add_argument("--header", action="store_true", help="print the table header first")
    opts = ap.parse_args(argv)
    if opts.rejudge:
        args = read(os.path.join(opts.out, "boot.args"))
        if not args:
            ap.error(f"--rejudge: no {opts.out}/boot.args (booted before boot.py kept it)")
        opts = ap.parse_args(shlex.split(args) + (["--header"] if opts.header else []))
        opts.rejudge = True
    return opts


def kernel_cmdline(topo, opts):
    """The guest kernel's command line: the console, the protections, and
    the topology as the guest tests check it (ktv_* become /init's environment)."""
    cmdline = ["console=ttyS0,115200", "pti=on", "panic=-1",
               *([] if opts.expect_faults else ["oops=panic"]), "loglevel=7",
               f"ktv_nodes={len(topo.nodes)}", f"ktv_cpus={topo.cpus}",
               f"ktv_levels={topo.levels}",
               f"ktv_memnodes={topo.memnodes()}", f"ktv_slit={topo.slit()}",
               f"ktv_homes={topo.homes()}"]
    if topo.dimms:
        cmdline.append(f"ktv_dimms={topo.dimm_param()}")
    if opts.expect_repl:
        cmdline.append("ktv_expect=1")
    return cmdline + topo.append + shlex.split(opts.append)


def qemu_command(topo, opts, console_log, ktap_log):
    # With --meter, multi-threaded TCG: QEMU 10.0's single-threaded TCG
    # gives a plugin callback the vCPU that translated the block, not the
    # one running it (accel/tcg/plugin-gen.c, gen_cpu_index(): a constant
    # unless CF_PARALLEL), which would put one vCPU's counts on another.
    accel = "tcg,thread=multi" if opts.mttcg or opts.meter else "tcg,thread=single"
    # The meter finds a fetch's node from the host address of its bytes:
    # each node's memory is a file of its own then.
    backend = "file" if opts.meter else "ram"
    qemu = ["qemu-system-x86_64", "-machine", "q35", "-accel", accel,
            *topo.qemu_args(backend, opts.out),
            "-kernel", opts.kernel, "-initrd", opts.initrd,
            "-append", " ".join(kernel_cmdline(topo, opts)),
            "-nodefaults", "-display", "none", "-no-reboot",
            "-serial", f"file:{console_log}", "-serial", f"file:{ktap_log}"]
    if opts.icount:
        qemu += ["-icount", "shift=0,sleep=off"]
    if opts.meter:
        qemu += ["-plugin", f"{opts.meter},cpunodes={topo.cpunodes()},homes={topo.homes()},"
                 f"out={os.path.join(opts.out, 'locality.txt')}"
                 + (f",{opts.meter_args}" if opts.meter_args else "")]
    return qemu


def run_qemu(qemu, timeout):
    """Run the guest: None when it powered off, else why not."""
    try:
        proc = subprocess.run(qemu, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"HUNG: no power-off within {timeout} s"
    if proc.returncode:
        return f"QEMU exited {proc.returncode}: {proc.stderr.strip()[-300:]}"
    return None


def check_inputs(opts):
    """The allow-list of skips, the topology and the set of tests the row
    must report (None with --no-inventory), or None after saying what is
    wrong."""
    files = [opts.topo] + ([] if opts.rejudge else [opts.kernel, opts.initrd])
    if not opts.no_inventory and not (opts.rev and opts.kconfig):
        print("boot.py: error: --rev and --kconfig are required (or --no-inventory)",
              file=sys.stderr)
        return None
    if opts.icount and (opts.meter or opts.mttcg):
        print("boot.py: error: --icount needs single-threaded TCG, and --meter runs multi-threaded "
              "(QEMU 10.0 gives plugins the wrong vCPU otherwise): drop --icount",
              file=sys.stderr)
        return None
    if not opts.no_inventory:
        files += [opts.kconfig, opts.inventory] + ([opts.series_expect] if opts.series_expect else [])
    for f in files:
        if not os.path.isfile(f):
            print(f"boot.py: error: no such file: {f}", file=sys.stderr)
            return None
    if not os.path.exists(opts.allow_skips):
        print(f"boot.py: error: no allow-list of skips: {opts.allow_skips}", file=sys.stderr)
        return None
    try:
        rules, topo = SkipRules(read(opts.allow_skips), opts.allow_skips), Topology(opts.topo)
        expected = None
        if not opts.no_inventory:
            if opts.rev != "base" and not opts.series_expect:
                raise ValueError(f"--rev {opts.rev} needs --series-expect (its features)")
            facts = facts_for(base=opts.base, rev=opts.rev, config=opts.config,
                              label=opts.label, topo=topo,
                              cmdline=" ".join(kernel_cmdline(topo, opts)),
                              expect_repl=opts.expect_repl, kconfig_text=read(opts.kconfig),
                              expect_file=opts.series_expect)
            expected = Inventory(read(opts.inventory), opts.inventory).expected(facts)
            if not expected:
                raise ValueError(f"{opts.inventory} lists no test for this row")
        return rules, topo, expected
    except ValueError as err:  # TopologyError too
        print(f"boot.py: error: {err}", file=sys.stderr)
        return None


def boot(topo, opts):
    """Run the guest, its logs in opts.out: (console log, KTAP log, QEMU's verdict, seconds)."""
    os.makedirs(opts.out, exist_ok=True)
    console_log = os.path.join(opts.out, "console.log")
    ktap_log = os.path.join(opts.out, "ktap.log")
    for f in (console_log, ktap_log):
        if os.path.exists(f):
            os.unlink(f)
    qemu = qemu_command(topo, opts, console_log, ktap_log)
    with open(os.path.join(opts.out, "qemu.cmd"), "w", encoding="utf-8") as f:
        f.write(shlex.join(qemu) + "\n")
    with open(os.path.join(opts.out, "boot.args"), "w", encoding="utf-8") as f:
        f.write(shlex.join(a for a in sys.argv[1:] if a != "--header") + "\n")
    start = time.monotonic()
    qemu_verdict = run_qemu(qemu, opts.timeout)
    seconds = time.monotonic() - start
    with open(os.path.join(opts.out, "seconds"), "w", encoding="utf-8") as f:
        f.write(f"{seconds:.1f}\n")
    with open(os.path.join(opts.out, "qemu.verdict"), "w", encoding="utf-8") as f:
        f.write(qemu_verdict or "")
    return read(console_log), read(ktap_log), qemu_verdict, seconds


def boot_again(topo, opts):
    """Keep the logs of a boot that multi-threaded TCG broke with a stale
    translation of patched code (guestlog.INT3_OOPS) in OUT/stale-int3,
    say so, and boot once more: what the second boot shows is the row's."""
    kept = os.path.join(opts.out, "stale-int3")
    os.makedirs(kept, exist_ok=True)
    for f in ("console.log", "ktap.log", "locality.txt", "seconds"):
        if os.path.exists(os.path.join(opts.out, f)):
            os.replace(os.path.join(opts.out, f), os.path.join(kept, f))
    print(f"    note: multi-threaded TCG ran an int3 that memory no longer held (QEMU's stale "
          f"translation of patched code, not the kernel's text): booting once more; "
          f"the first boot's logs: {kept}")
    return boot(topo, opts)


def report(opts, topo_name, topo, seconds, j, console):
    """Print the row (and what explains a failed one); return the exit status."""
    counts, verdict = j.ktap.counts, j.verdict
    if opts.header:
        print(f"{'kernel':<24} {'topology':<15} {'nodes':>5} {'cpus':>4} {'boot s':>6} "
              f"{'pass':>4} {'fail':>4} {'skip':>4}  verdict")
    print(f"{opts.label:<24} {topo_name:<15} {len(topo.nodes):>5} {topo.cpus:>4} "
          f"{seconds:>6.1f} {counts['pass']:>4} {counts['fail']:>4} {counts['skip']:>4}  {verdict}")
    if verdict == "ok":
        return 0
    if j.splat:
        print(f"    first splat (console line {j.splat.line + 1}):")
        print("\n".join("    | " + line for line in j.splat.excerpt))
        print(f"    splat: {j.splat.excerpt[0].strip()}")
    elif verdict.startswith(("HUNG", "CUT SHORT", "QEMU", "NO TESTS")):
        print("    last console lines:")
        print("\n".join("    | " + line for line in console.splitlines()[-15:]))
    print(f"    logs: {opts.out}")
    return 1 if verdict.startswith("FAIL") else 2


def main():
    opts = parse_args()
    inputs = check_inputs(opts)
    if inputs is None:
        return 3
    rules, topo, expected = inputs
    try:
        if opts.rejudge:
            console, ktap, seconds = (read(os.path.join(opts.out, f))
                                      for f in ("console.log", "ktap.log", "seconds"))
            qemu_verdict, seconds = read(os.path.join(opts.out, "qemu.verdict")) or None, \
                float(seconds or 0)
        else:
            console, ktap, qemu_verdict, seconds = boot(topo, opts)
            if (opts.meter or opts.mttcg) and not qemu_verdict and stale_int3(console):
                console, ktap, qemu_verdict, seconds = boot_again(topo, opts)
    except FileNotFoundError:
        print("boot.py: error: qemu-system-x86_64 not found: run 'make deps'", file=sys.stderr)
        return 3
    except TopologyError as err:
        print(f"boot.py: error: {err}", file=sys.stderr)
        return 3
    topo_name = topo.name + ("/prot" if opts.expect_faults else "")
    j = judge(console, ktap, label=opts.label, topo=topo_name, rules=rules,
              expect_faults=opts.expect_faults, qemu_verdict=qemu_verdict, expected=expected)
    return report(opts, topo_name, topo, seconds, j, console)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
