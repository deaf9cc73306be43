#!/usr/bin/env python3
"""Boot a kernel on one QEMU topology and report what happened.

The guest's /init prints KTAP on the second serial port; the kernel console
is the first. This script builds the QEMU command line from a topology file,
enforces a hard timeout, and prints one report row with the verdict that
guestlog.judge gives on the two logs: splats, KTAP results, the plan, skips
not in the allow-list (--allow-skips). Exit status: 0 all passed, 1 a test
failed (or the plan, the skips or the passes were wrong), 2 the guest
panicked, printed a splat, hung or was cut short, 3 bad input.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

from guestlog import SkipRules, judge

EXPECTED_SKIPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected-skips")


class Topology:
    """A topology file: cpus N / node ID [cpus=A-B] [mem=SIZE] / dist A B V /
    paging 4|5 / append KERNEL-PARAMETERS / dimm NODE SIZE ADDR. A node
    without cpus= has memory only. A dimm is a pc-dimm at guest physical
    ADDR that the guest adds itself (memory/probe): its node, if no node
    line names it, has nothing at boot and is not counted in ktv_nodes."""

    def __init__(self, path):
        self.name = os.path.basename(path).removesuffix(".topo")
        self.cpus, self.levels, self.nodes, self.dists, self.append = 0, 4, [], [], []
        self.dimms = []
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                words = line.split("#", 1)[0].split()
                if not words:
                    continue
                key, args = words[0], words[1:]
                try:
                    if key == "cpus":
                        self.cpus = int(args[0])
                    elif key == "paging":
                        self.levels = int(args[0])
                        assert self.levels in (4, 5)
                    elif key == "node":
                        opts = dict(a.split("=", 1) for a in args[1:])
                        self.nodes.append((int(args[0]), opts.get("cpus"), opts.get("mem")))
                    elif key == "append":
                        self.append += args
                    elif key == "dist":
                        self.dists.append(tuple(int(a) for a in args[:3]))
                    elif key == "dimm":
                        self.dimms.append((int(args[0]), parse_size(args[1]), int(args[2], 0)))
                    else:
                        raise ValueError(key)
                except (ValueError, IndexError, KeyError, AssertionError) as err:
                    raise SystemExit(f"{path}:{lineno}: bad line ({err}): {line.strip()}")
        if not self.cpus or not self.nodes:
            raise SystemExit(f"{path}: needs a 'cpus' line and at least one 'node' line")

    def qemu_args(self, backend, workdir):
        cpu = "max" if self.levels == 5 else "max,la57=off"
        mem = sum(parse_size(m) for _, _, m in self.nodes if m)
        # One socket per node with CPUs: the kernel warns when a package
        # spans nodes.
        nodes = sum(1 for _, cpus, _ in self.nodes if cpus)
        if not nodes or self.cpus % nodes:
            raise SystemExit(f"{self.name}: {self.cpus} CPUs do not split into {nodes} nodes")
        smp = f"{self.cpus},sockets={nodes},cores={self.cpus // nodes},threads=1"
        args = ["-cpu", cpu, "-smp", smp, "-m", self.memory_arg(mem)]
        for nid, cpus, size in self.nodes:
            node = f"node,nodeid={nid}" + (f",cpus={cpus}" if cpus else "")
            if size:
                obj = f"memory-backend-{backend},id=m{nid},size={parse_size(size)}M"
                if backend == "file":
                    obj += f",mem-path={workdir}/node{nid}.mem,share=on"
                args += ["-object", obj]
                node += f",memdev=m{nid}"
            args += ["-numa", node]
        for nid in sorted({n for n, _, _ in self.dimms} - set(self.ids())):
            args += ["-numa", f"node,nodeid={nid}"]
        for src, dst, val in self.dists:
            args += ["-numa", f"dist,src={src},dst={dst},val={val}"]
        for i, (nid, size, addr) in enumerate(self.dimms):
            obj = f"memory-backend-{backend},id=d{i},size={size}M"
            if backend == "file":
                obj += f",mem-path={workdir}/dimm{i}.mem,share=on"
            args += ["-object", obj,
                     "-device", f"pc-dimm,id=dimm{i},memdev=d{i},node={nid},addr={addr:#x}"]
        return args

    def memory_arg(self, mem):
        """-m: the boot memory, and with DIMMs a slot each and a maxmem that
        makes QEMU's device memory region (from 4 GiB on, boot memory all
        below it) reach the highest DIMM, plus 1 GiB of alignment per slot."""
        if not self.dimms:
            return f"{mem}M"
        if mem > 2048:
            raise SystemExit(f"{self.name}: DIMMs need the boot memory below 2 GiB")
        end = max(addr // 2**20 + size for _, size, addr in self.dimms)
        maxmem = mem + max(end - 4096, 0) + 1024 * len(self.dimms)
        return f"{mem}M,slots={len(self.dimms)},maxmem={maxmem}M"

    def dimm_param(self):
        """ktv_dimms: NODE:ADDR:MIB of each DIMM, comma-separated."""
        return ",".join(f"{nid}:{addr:#x}:{size}" for nid, size, addr in self.dimms)


    def cpunodes(self):
        """The node of each vCPU, as the locality meter wants it: 0:0:1:1."""
        node_of = {}
        for nid, cpus, _ in self.nodes:
            for part in cpus.split(",") if cpus else []:
                lo, _, hi = part.partition("-")
                for cpu in range(int(lo), int(hi or lo) + 1):
                    node_of[cpu] = nid
        return ":".join(str(node_of.get(c, 0)) for c in range(self.cpus))

    def distance(self, a, b):
        """The SLIT distance from node a to node b, as QEMU builds it: the
        dist line for (a, b), else the one for (b, a), else 10 or 20."""
        dist = {(x, y): v for x, y, v in self.dists}
        return 10 if a == b else dist.get((a, b), dist.get((b, a), 20))

    def ids(self):
        return sorted(nid for nid, _, _ in self.nodes)

    def homes(self):
        """For each node, the nearest node with memory (itself if it has some)."""
        mem = [nid for nid, _, size in self.nodes if size]
        return ":".join(str(min(mem, key=lambda m, n=n: (self.distance(n, m), m)))
                        for n in self.ids())

    def memnodes(self):
        """The nodes with memory, as the guest prints has_memory: 0,1."""
        return ",".join(str(nid) for nid, _, size in sorted(self.nodes) if size)

    def slit(self):
        """The distance table, a row per node: 10.20/20.10."""
        return "/".join(".".join(str(self.distance(a, b)) for b in self.ids())
                        for a in self.ids())


def parse_size(text):
    """'512M' or '1G' -> MiB."""
    m = re.fullmatch(r"(\d+)([MG])", text)
    if not m:
        raise SystemExit(f"bad memory size {text!r}: use e.g. 512M or 1G")
    return int(m.group(1)) * (1024 if m.group(2) == "G" else 1)


def parse_args():
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
    ap.add_argument("--backend", choices=("ram", "file"), default="ram")
    ap.add_argument("--plugin", default="", help="QEMU TCG plugin argument (-plugin)")
    ap.add_argument("--meter", default="",
                    help="locality meter plugin (.so): file-backed nodes, report in OUT/locality.txt")
    ap.add_argument("--meter-args", default="",
                    help="more arguments for the meter, comma-separated (data=on,cache=on,...)")
    ap.add_argument("--icount", action="store_true",
                    help="virtual time from the instruction count (-icount shift=0,sleep=off): "
                         "timer ticks come every so many guest instructions, whatever the host's "
                         "speed, so that the meter's counts per operation repeat")
    ap.add_argument("--mttcg", action="store_true",
                    help="multi-threaded TCG (unsafe for kernels that patch text)")
    ap.add_argument("--expect-faults", action="store_true",
                    help="the guest provokes faults on purpose: no oops=panic, and one oops "
                         "between each pair of its expect-fault markers is the test's, not the "
                         "report's; the row's topology is then TOPO/prot")
    ap.add_argument("--allow-skips", default=EXPECTED_SKIPS, metavar="FILE",
                    help="the skips a row may have, by label, topology and SUITE.TEST; "
                         "any other skip fails the row (default: %(default)s)")
    ap.add_argument("--header", action="store_true", help="print the table header first")
    return ap.parse_args()


def kernel_cmdline(topo, opts):
    """The guest kernel's command line: the console, the protections, and
    the topology as the guest tests check it (ktv_* become /init's environment)."""
    cmdline = ["console=ttyS0,115200", "pti=on", "panic=-1",
               *([] if opts.expect_faults else ["oops=panic"]), "loglevel=7",
               f"ktv_nodes={len(topo.nodes)}", f"ktv_cpus={topo.cpus}",
               f"ktv_levels={topo.levels}", f"ktv_topo={topo.name}",
               f"ktv_memnodes={topo.memnodes()}", f"ktv_slit={topo.slit()}",
               f"ktv_homes={topo.homes()}"]
    if topo.dimms:
        cmdline.append(f"ktv_dimms={topo.dimm_param()}")
    if opts.expect_repl:
        cmdline.append("ktv_expect=1")
    return cmdline + topo.append + shlex.split(opts.append)


def qemu_command(topo, opts, console_log, ktap_log):
    accel = "tcg,thread=multi" if opts.mttcg else "tcg,thread=single"
    backend = "file" if opts.meter else opts.backend
    qemu = ["qemu-system-x86_64", "-machine", "q35", "-accel", accel,
            *topo.qemu_args(backend, opts.out),
            "-kernel", opts.kernel, "-initrd", opts.initrd,
            "-append", " ".join(kernel_cmdline(topo, opts)),
            "-nodefaults", "-display", "none", "-no-reboot",
            "-serial", f"file:{console_log}", "-serial", f"file:{ktap_log}"]
    if opts.icount:
        qemu += ["-icount", "shift=0,sleep=off"]
    if opts.plugin:
        qemu += ["-plugin", opts.plugin]
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


def main():
    opts = parse_args()
    for f in (opts.kernel, opts.initrd, opts.topo):
        if not os.path.isfile(f):
            print(f"boot.py: error: no such file: {f}", file=sys.stderr)
            return 3
    if not os.path.exists(opts.allow_skips):
        print(f"boot.py: error: no allow-list of skips: {opts.allow_skips}", file=sys.stderr)
        return 3
    try:
        rules = SkipRules(read(opts.allow_skips), opts.allow_skips)
    except ValueError as err:
        print(f"boot.py: error: {err}", file=sys.stderr)
        return 3
    topo = Topology(opts.topo)
    os.makedirs(opts.out, exist_ok=True)
    console_log = os.path.join(opts.out, "console.log")
    ktap_log = os.path.join(opts.out, "ktap.log")
    for f in (console_log, ktap_log):
        if os.path.exists(f):
            os.unlink(f)
    qemu = qemu_command(topo, opts, console_log, ktap_log)
    with open(os.path.join(opts.out, "qemu.cmd"), "w", encoding="utf-8") as f:
        f.write(shlex.join(qemu) + "\n")

    start = time.monotonic()
    try:
        qemu_verdict = run_qemu(qemu, opts.timeout)
    except FileNotFoundError:
        print("boot.py: error: qemu-system-x86_64 not found: run 'make deps'", file=sys.stderr)
        return 3
    seconds = time.monotonic() - start

    console = read(console_log)
    topo_name = topo.name + ("/prot" if opts.expect_faults else "")
    j = judge(console, read(ktap_log), label=opts.label, topo=topo_name, rules=rules,
              expect_faults=opts.expect_faults, qemu_verdict=qemu_verdict)
    counts, verdict = j.ktap.counts, j.verdict
    row = {"kernel": opts.label, "topology": topo_name, "nodes": len(topo.nodes),
           "cpus": topo.cpus, "seconds": round(seconds, 1), **counts, "verdict": verdict,
           "failed": j.ktap.failed, "unexpected_skips": j.unexpected_skips}
    with open(os.path.join(opts.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(row, f)
    if opts.header:
        print(f"{'kernel':<24} {'topology':<15} {'nodes':>5} {'cpus':>4} {'boot s':>6} "
              f"{'pass':>4} {'fail':>4} {'skip':>4}  verdict")
    print(f"{opts.label:<24} {topo_name:<15} {row['nodes']:>5} {row['cpus']:>4} "
          f"{row['seconds']:>6} {counts['pass']:>4} {counts['fail']:>4} {counts['skip']:>4}  {verdict}")
    if verdict == "ok":
        return 0
    if j.splat:
        print(f"    first splat (console line {j.splat.line + 1}):")
        print("\n".join("    | " + line for line in j.splat.excerpt))
    elif verdict.startswith(("HUNG", "CUT SHORT", "QEMU", "NO TESTS")):
        print("    last console lines:")
        print("\n".join("    | " + line for line in console.splitlines()[-15:]))
    print(f"    logs: {opts.out}")
    return 1 if verdict.startswith("FAIL") else 2


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
