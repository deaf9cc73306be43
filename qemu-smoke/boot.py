#!/usr/bin/env python3
"""Boot a kernel on one QEMU topology and report what happened.

The guest's /init prints KTAP on the second serial port; the kernel console
is the first. This script builds the QEMU command line from a topology file,
enforces a hard timeout, scans the console for splats, parses the KTAP and
prints one report row. Exit status: 0 all passed, 1 a test failed, 2 the
guest panicked, printed a splat, hung or was cut short, 3 bad input.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

SPLATS = [
    "BUG:", "WARNING:", "Oops", "general protection fault", "KASAN:",
    "UBSAN:", "Kernel panic", "Call Trace:", "possible circular locking",
    "possible recursive locking", "inconsistent lock state",
    "Found insecure W+X mapping", "Checked W+X mappings: FAILED",
    "unreferenced object",
]
DONE_MARK = "# ktv: tests done"
RESULT = re.compile(r"^(ok|not ok) (\d+) (\S+)(.*)$")


class Topology:
    """A topology file: cpus N / node ID cpus=A-B [mem=SIZE] / dist A B V / paging 4|5 /
    append KERNEL-PARAMETERS."""

    def __init__(self, path):
        self.name = os.path.basename(path).removesuffix(".topo")
        self.cpus, self.levels, self.nodes, self.dists, self.append = 0, 4, [], [], []
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
                        self.nodes.append((int(args[0]), opts["cpus"], opts.get("mem")))
                    elif key == "append":
                        self.append += args
                    elif key == "dist":
                        self.dists.append(tuple(int(a) for a in args[:3]))
                    else:
                        raise ValueError(key)
                except (ValueError, IndexError, KeyError, AssertionError) as err:
                    raise SystemExit(f"{path}:{lineno}: bad line ({err}): {line.strip()}")
        if not self.cpus or not self.nodes:
            raise SystemExit(f"{path}: needs a 'cpus' line and at least one 'node' line")

    def qemu_args(self, backend, workdir):
        cpu = "max" if self.levels == 5 else "max,la57=off"
        mem = sum(parse_size(m) for _, _, m in self.nodes if m)
        # One socket per node: the kernel warns when a package spans nodes.
        nodes = len(self.nodes)
        if self.cpus % nodes:
            raise SystemExit(f"{self.name}: {self.cpus} CPUs do not split into {nodes} nodes")
        smp = f"{self.cpus},sockets={nodes},cores={self.cpus // nodes},threads=1"
        args = ["-cpu", cpu, "-smp", smp, "-m", f"{mem}M"]
        for nid, cpus, size in self.nodes:
            node = f"node,nodeid={nid},cpus={cpus}"
            if size:
                obj = f"memory-backend-{backend},id=m{nid},size={parse_size(size)}M"
                if backend == "file":
                    obj += f",mem-path={workdir}/node{nid}.mem,share=on"
                args += ["-object", obj]
                node += f",memdev=m{nid}"
            args += ["-numa", node]
        for src, dst, val in self.dists:
            args += ["-numa", f"dist,src={src},dst={dst},val={val}"]
        return args


    def cpunodes(self):
        """The node of each vCPU, as the locality meter wants it: 0:0:1:1."""
        node_of = {}
        for nid, cpus, _ in self.nodes:
            for part in cpus.split(","):
                lo, _, hi = part.partition("-")
                for cpu in range(int(lo), int(hi or lo) + 1):
                    node_of[cpu] = nid
        return ":".join(str(node_of.get(c, 0)) for c in range(self.cpus))

    def homes(self):
        """For each node, the nearest node with memory (itself if it has some)."""
        dist = {(a, b): v for a, b, v in self.dists}
        mem = [nid for nid, _, size in self.nodes if size]
        def distance(a, b):
            return 10 if a == b else dist.get((a, b), dist.get((b, a), 20))
        ids = sorted(nid for nid, _, _ in self.nodes)
        return ":".join(str(min(mem, key=lambda m, n=n: (distance(n, m), m))) for n in ids)


def parse_size(text):
    """'512M' or '1G' -> MiB."""
    m = re.fullmatch(r"(\d+)([MG])", text)
    if not m:
        raise SystemExit(f"bad memory size {text!r}: use e.g. 512M or 1G")
    return int(m.group(1)) * (1024 if m.group(2) == "G" else 1)


FAULT_BEGIN = "ktv: expect-fault begin "
FAULT_END = "ktv: expect-fault end "


def first_splat(console, expect_faults=False):
    """The first splat line and the lines after it. With expect_faults, the
    lines between the guest's expect-fault markers (a fault provoked on
    purpose, checked by the guest test itself) do not count."""
    lines = console.splitlines()
    inside = False
    for i, line in enumerate(lines):
        if expect_faults and FAULT_BEGIN in line:
            inside = True
        elif expect_faults and FAULT_END in line:
            inside = False
        elif not inside and any(s in line for s in SPLATS):
            return i, lines[i:i + 25]
    return None, []


def parse_ktap(text):
    """Count top-level and subtest results of the guest's KTAP output."""
    counts = {"pass": 0, "fail": 0, "skip": 0}
    failed = []
    suite = None
    for raw in text.splitlines():
        line = raw.rstrip()
        m = re.match(r"^    # Subtest: (\S+)", line)
        if m:
            suite = m.group(1)
            continue
        m = RESULT.match(line.strip())
        if not m:
            continue
        status, _, name, rest = m.groups()
        if not line.startswith("    "):
            # A top-level result summarises its subtests; it only counts
            # when it fails without a failed subtest (a script that died).
            if status == "not ok" and not any(f.startswith(f"{name}.") for f in failed):
                counts["fail"] += 1
                failed.append(name)
            continue
        if "# SKIP" in rest:
            counts["skip"] += 1
        elif status == "ok":
            counts["pass"] += 1
        else:
            counts["fail"] += 1
            failed.append(f"{suite}.{name}")
    return counts, failed


def main():
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
    ap.add_argument("--mttcg", action="store_true",
                    help="multi-threaded TCG (unsafe for kernels that patch text)")
    ap.add_argument("--expect-faults", action="store_true",
                    help="the guest provokes faults on purpose: no oops=panic, and splats "
                         "between its expect-fault markers are the test's, not the report's")
    ap.add_argument("--header", action="store_true", help="print the table header first")
    opts = ap.parse_args()

    for f in (opts.kernel, opts.initrd, opts.topo):
        if not os.path.isfile(f):
            print(f"boot.py: error: no such file: {f}", file=sys.stderr)
            return 3
    topo = Topology(opts.topo)
    os.makedirs(opts.out, exist_ok=True)
    console_log = os.path.join(opts.out, "console.log")
    ktap_log = os.path.join(opts.out, "ktap.log")
    for f in (console_log, ktap_log):
        if os.path.exists(f):
            os.unlink(f)

    cmdline = ["console=ttyS0,115200", "pti=on", "panic=-1",
               *([] if opts.expect_faults else ["oops=panic"]), "loglevel=7", f"ktv_nodes={len(topo.nodes)}", f"ktv_cpus={topo.cpus}",
               f"ktv_levels={topo.levels}", f"ktv_topo={topo.name}"]
    if opts.expect_repl:
        cmdline.append("ktv_expect=1")
    cmdline += topo.append + shlex.split(opts.append)
    if opts.meter:
        opts.backend = "file"
    accel = "tcg,thread=multi" if opts.mttcg else "tcg,thread=single"
    qemu = ["qemu-system-x86_64", "-machine", "q35", "-accel", accel,
            *topo.qemu_args(opts.backend, opts.out),
            "-kernel", opts.kernel, "-initrd", opts.initrd,
            "-append", " ".join(cmdline),
            "-nodefaults", "-display", "none", "-no-reboot",
            "-serial", f"file:{console_log}", "-serial", f"file:{ktap_log}"]
    if opts.plugin:
        qemu += ["-plugin", opts.plugin]
    if opts.meter:
        qemu += ["-plugin", f"{opts.meter},cpunodes={topo.cpunodes()},homes={topo.homes()},"
                 f"out={os.path.join(opts.out, 'locality.txt')}"]
    with open(os.path.join(opts.out, "qemu.cmd"), "w", encoding="utf-8") as f:
        f.write(shlex.join(qemu) + "\n")

    start = time.monotonic()
    verdict = None
    try:
        proc = subprocess.run(qemu, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=opts.timeout, check=False)
        qemu_err = proc.stderr.strip()
        if proc.returncode:
            verdict = f"QEMU exited {proc.returncode}: {qemu_err[-300:]}"
    except subprocess.TimeoutExpired:
        verdict = f"HUNG: no power-off within {opts.timeout} s"
    except FileNotFoundError:
        print("boot.py: error: qemu-system-x86_64 not found: run 'make deps'", file=sys.stderr)
        return 3
    seconds = time.monotonic() - start

    console = read(console_log)
    ktap = read(ktap_log)
    counts, failed = parse_ktap(ktap)
    splat_at, excerpt = first_splat(console, opts.expect_faults)
    if verdict is None:
        if "Kernel panic" in console:
            verdict = "PANIC"
        elif splat_at is not None:
            verdict = "SPLAT"
        elif DONE_MARK not in ktap:
            verdict = "CUT SHORT: the guest stopped before its tests finished"
        elif not sum(counts.values()):
            verdict = "NO TESTS: the guest ran no test"
        elif counts["fail"]:
            verdict = "FAIL: " + ", ".join(failed)
        else:
            verdict = "ok"

    ok = verdict == "ok"
    topo_name = topo.name + ("/prot" if opts.expect_faults else "")
    row = {"kernel": opts.label, "topology": topo_name, "nodes": len(topo.nodes),
           "cpus": topo.cpus, "seconds": round(seconds, 1), **counts, "verdict": verdict}
    with open(os.path.join(opts.out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(row, f)
    if opts.header:
        print(f"{'kernel':<16} {'topology':<11} {'nodes':>5} {'cpus':>4} {'boot s':>6} "
              f"{'pass':>4} {'fail':>4} {'skip':>4}  verdict")
    print(f"{opts.label:<16} {topo_name:<11} {row['nodes']:>5} {row['cpus']:>4} "
          f"{row['seconds']:>6} {counts['pass']:>4} {counts['fail']:>4} {counts['skip']:>4}  {verdict}")
    if not ok:
        if excerpt:
            print("    first splat (console line %d):" % (splat_at + 1))
            print("\n".join("    | " + line for line in excerpt))
        elif verdict.startswith(("HUNG", "CUT SHORT", "QEMU", "NO TESTS")):
            print("    last console lines:")
            print("\n".join("    | " + line for line in console.splitlines()[-15:]))
        print(f"    logs: {opts.out}")
    if ok:
        return 0
    return 1 if verdict.startswith("FAIL") else 2


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
