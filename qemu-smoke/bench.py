#!/usr/bin/env python3
"""Summarise a 'make bench' run: results.md and PNG plots (gnuplot).

Reads OUT/<topology>/<kernel>/r<N>/ktap.log (the guest's bench suite: the
"# kbench:", "# ftrace:" and "# status:" diagnostics) and
OUT/<topology>/<kernel>/meter<N>/{locality.txt,ktap.log} (the locality
meter's report, and the meter guest's kbench lines "meter-phase P CASE
ops=N node=X cpu=C" that name the phase of each case and node). Kernels
are "base", "series" and "series-off". A benchmark ratio is taken per round
(kernel median / base median of the same round, the boots of a round made
one after the other) and the median of those ratios is reported with its
range over the rounds.

A run that lacks a kernel, a round, a meter boot, a case on a node or a
count of a case's phase is incomplete (missing()): bench.py names what is
missing and exits 1; with --partial it writes the tables anyway, with the
list at the top of results.md.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

from topology import Topology

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ("base", "series", "series-off")
# Published idle DRAM load latencies of 2-socket servers, in ns: (name,
# local, remote, source). The sources and the quotes are in
# results/model-sources.md.
LATENCIES = (
    ("Intel SPR 2S", 114, 194, "Mess results, 2 x Xeon Platinum 8480+, DDR5-4800, unloaded"),
    ("AMD 2S (provisional)", 122, 244, "AnandTech, Rome NPS1 local; remote 2.0 x local, a rough guide"),
)
CASES = ("fork1", "fork1024", "mmap", "mmap_lock", "openclose", "mount", "kill")
METER_CASES = CASES + ("getppid", "stat", "pipe", "forkexec", "pingpong", "migrate", "ftrace_on", "ftrace_off")
# Phases run from one CPU, not on every node (ktv_ftrace_phases).
ONE_NODE_CASES = ("ftrace_on", "ftrace_off")
# The meter's TLB model counters (tlb=on) that the TLB table shows per
# operation, summed over every vCPU in the case's phase.
TLB_KEYS = ("cr3_flush", "cr4_global_flush", "invlpg", "ipi", "itlb_walks", "stale_fetch")
# The counts of a case's phase that the tables read: the instruction
# line's; the rodata line's if the report has rodata= on; the cache
# model's if it has cache=on.
PHASE_KEYS = ("kernel_insns", "kernel_local", "kernel_remote")
RODATA_KEYS = ("ro_rodata_local", "ro_rodata_remote")
CACHE_KEYS = ("fetch_local", "fetch_remote", "rodata_local", "rodata_remote")


def diag_lines(path, tag):
    """The text after '# TAG: ' on each line of a KTAP log."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^\s*# " + tag + r": (.*)$", line.rstrip("\n"))
                if m:
                    out.append(m.group(1))
    except FileNotFoundError:
        pass
    return out


def kv(text):
    return dict(p.split("=", 1) for p in text.split() if "=" in p)


def meter_phases(fields):
    """(case, node) -> (kernel_insns, kernel_local, kernel_remote, ops,
    median per op) of the CPU that ran the case, in the case's phase, from
    phase_fields()."""
    return {k: (int(f["kernel_insns"]), int(f["kernel_local"]), int(f["kernel_remote"]), f["ops"],
                median_per_op(f))
            for k, f in fields.items() if "kernel_insns" in f}


def median_per_op(f):
    """Kernel instructions per operation from the median repetition (the
    phase's stretches, one per kbench repetition), or None."""
    st, reps = f.get("stretches"), f.get("reps")
    if not st or not reps or len(st) != reps:
        return None
    return statistics.median(st) / (f["ops"] / reps)


def phase_fields(lines, ktap, cold=False):
    """(case, node) -> every field the meter printed for the CPU that ran
    the case in its phase: the instruction line's, the rodata line's
    (prefixed "ro_"), the cache model's (fetch_*, rodata_*), and "ops"."""
    cases = {}
    # kbench's lines, and the guest's own for the tracer's switches
    # ("# meter-phase P ftrace_on ...": ktv_ftrace_phases; the last of
    # the three repetitions is kept).
    own = []
    try:
        with open(ktap, encoding="utf-8", errors="replace") as f:
            own = [m.group(1) for m in (re.match(r"^\s*# (meter-phase \d+ ftrace_o\w+ .*)$", ln.rstrip("\n"))
                                        for ln in f) if m]
    except FileNotFoundError:
        pass
    for line in diag_lines(ktap, "kbench") + own:
        m = re.match(r"meter-phase (\d+) (\w+) ops=(\d+) node=(\d+) cpu=(\d+)(?: reps=(\d+))?( cache=cold)?",
                     line)
        if m and m.group(2) != "kbench" and bool(m.group(7)) == cold:
            cases[(m.group(2), int(m.group(4)))] = (int(m.group(1)), int(m.group(5)), int(m.group(3)),
                                                    int(m.group(6) or 0))
    vcpus, tlb = {}, {}
    for line in lines:
        words = line.split()
        if len(words) < 2 or not words[0].startswith("phase="):
            continue
        kind = words[1] if not words[1].startswith("vcpu=") else ""
        if kind == "tlb" and len(words) > 2 and words[2].startswith("vcpu="):
            f = kv(line)
            sums = tlb.setdefault(int(f["phase"]), {})
            for k in TLB_KEYS:
                sums["tlb_" + k] = sums.get("tlb_" + k, 0) + int(f.get(k, 0))
            continue
        if kind not in ("", "rodata", "cache", "stretches") or len(words) < 3 or \
                not words[2 if kind else 1].startswith("vcpu="):
            continue
        f = kv(line)
        row = vcpus.setdefault((int(f["phase"]), int(f["vcpu"])), {})
        if kind == "stretches":
            row["stretches"] = [int(x) for x in f["kernel_insns"].split(":") if x]
        elif kind == "rodata":
            row.update({"ro_" + k: v for k, v in f.items()})
        else:
            row.update(f)
    # A case whose phase has no counts stays, without them: missing()
    # names it.
    return {key: dict(vcpus.get((phase, cpu), {}), **tlb.get(phase, {}), ops=ops, reps=reps)
            for key, (phase, cpu, ops, reps) in cases.items() if ops}


def load(out):
    """runs[topo][kernel][round] = {"log": found, "kbench": {(case, node):
    median}, "ftrace": {...}, "status": [...]}; meters[topo][kernel] =
    report lines (of the first meter boot); phases[topo][kernel][run] =
    meter_phases(); fields[topo][kernel][run] = {"report": found,
    "rodata"/"cache": the report has them on, "hot"/"cold": phase_fields(),
    "memory", "status"} of every meter boot."""
    runs, meters, phases, fields = {}, {}, {}, {}
    for topo in sorted(os.listdir(out)):
        tdir = os.path.join(out, topo)
        if not os.path.isdir(tdir):
            continue
        for kernel in KERNELS:
            kdir = os.path.join(tdir, kernel)
            if not os.path.isdir(kdir):
                continue
            for rnd in sorted(os.listdir(kdir)):
                log = os.path.join(kdir, rnd, "ktap.log")
                if re.fullmatch(r"meter\d*", rnd):
                    try:
                        with open(os.path.join(kdir, rnd, "locality.txt"), encoding="utf-8") as f:
                            lines = f.read().splitlines()
                    except FileNotFoundError:
                        lines = None
                    head = kv(lines[0]) if lines and lines[0].startswith("locality ") else {}
                    hot = phase_fields(lines or [], log)
                    fields.setdefault(topo, {}).setdefault(kernel, {})[rnd] = {
                        "report": lines is not None,
                        "rodata": head.get("rodata", "off") != "off", "cache": head.get("cache") == "on",
                        "hot": hot, "cold": phase_fields(lines or [], log, True),
                        "memory": [kv(x) for x in diag_lines(log, "memory")],
                        "status": diag_lines(log, "status")}
                    if lines is None:
                        continue
                    meters.setdefault(topo, {}).setdefault(kernel, lines)
                    ph = meter_phases(hot)
                    if ph:
                        phases.setdefault(topo, {}).setdefault(kernel, {})[rnd] = ph
                    continue
                if not re.fullmatch(r"r\d+", rnd):
                    continue
                kb = {}
                for line in diag_lines(log, "kbench"):
                    f = line.split("\t")
                    if len(f) == 8 and f[0] in CASES:
                        kb[(f[0], int(f[1]))] = float(f[3])
                ft = diag_lines(log, "ftrace")
                runs.setdefault(topo, {}).setdefault(kernel, {})[int(rnd[1:])] = {
                    "log": os.path.isfile(log), "kbench": kb, "ftrace": kv(ft[0]) if ft else {},
                    "status": diag_lines(log, "status")}
    return runs, meters, phases, fields


def topo_nodes(topo, seen):
    """The nodes with CPUs of topologies/TOPO.topo, on each of which
    kbench runs every case; the nodes @seen in the run if the file is
    gone."""
    path = os.path.join(HERE, "topologies", f"{topo}.topo")
    if not os.path.isfile(path):
        return sorted(seen)
    return sorted({int(n) for n in Topology(path).cpunodes().split(":")})


def missing(runs, fields):
    """What a complete run has and this one lacks, one line each: each
    kernel in each round and meter boot that the topology has; in a round
    on more than one node (scripts/bench.sh runs only the function tracer
    on one), each of CASES on each node with CPUs; in a meter boot, its
    report, and each case that any meter boot ran (hot, and cold) on each
    node with CPUs, with the counts of its phase (PHASE_KEYS, and
    RODATA_KEYS and CACHE_KEYS if the report has them on)."""
    out = []
    for topo in sorted(runs):
        seen = {n for k in runs[topo].values() for r in k.values() for _, n in r["kbench"]}
        nodes = topo_nodes(topo, seen)
        want = {(c, n) for c in CASES for n in nodes} if len(nodes) > 1 else set()
        for rnd in sorted({r for k in runs[topo].values() for r in k}):
            for kernel in KERNELS:
                run = runs[topo].get(kernel, {}).get(rnd)
                where = f"{topo}/{kernel}/r{rnd}"
                if not run or not run["log"]:
                    out.append(f"{where}: no ktap.log")
                    continue
                out += [f"{where}: no kbench {c} on node {n}" for c, n in sorted(want - set(run["kbench"]))]
    cases = {mode: sorted({c for t in fields.values() for k in t.values() for r in k.values()
                           for c, _ in r[mode] if c in METER_CASES}) for mode in ("hot", "cold")}
    if fields and not cases["hot"]:
        out.append("meter: no boot has a kbench meter-phase line")
    for topo in sorted(fields):
        seen = {n for k in fields[topo].values() for r in k.values() for _, n in r["hot"]}
        nodes = topo_nodes(topo, seen)
        for rnd in sorted({r for k in fields[topo].values() for r in k}):
            for kernel in KERNELS:
                run = fields[topo].get(kernel, {}).get(rnd)
                where = f"{topo}/{kernel}/{rnd}"
                if not run or not run["report"]:
                    out.append(f"{where}: no locality.txt")
                    continue
                keys = PHASE_KEYS + (RODATA_KEYS if run["rodata"] else ()) + (CACHE_KEYS if run["cache"] else ())
                for mode in ("hot", "cold"):
                    for c in cases[mode]:
                        # The tracer's switches run from one CPU only.
                        on = nodes if c not in ONE_NODE_CASES else \
                            [n for (c2, n) in run[mode] if c2 == c][:1] or nodes[:1]
                        for n in on:
                            f = run[mode].get((c, n))
                            if f is None:
                                out.append(f"{where}: no {mode} meter-phase line of {c} on node {n}")
                                continue
                            lack = [k for k in keys if k not in f]
                            if lack:
                                out.append(f"{where}: {c} on node {n} ({mode}): no {' '.join(lack)} in its phase")
    return out


def per_op(ph, case):
    """Kernel instructions per operation of @case: the mean over its nodes
    of the median repetition's, where the meter kept each repetition apart;
    else all its instructions over all its operations."""
    vals = [v for (c, _), v in ph.items() if c == case]
    if vals and all(v[4] is not None for v in vals):
        return statistics.mean(v[4] for v in vals)
    ins = sum(v[0] for v in vals)
    ops = sum(v[3] for v in vals)
    return ins / ops if ops else None


def meter_tables(phases, fields):
    """Markdown: kernel instructions per operation, and the steady state."""
    md = ["## Kernel instructions per operation (locality meter, phases)", "",
          "Counted by the meter in each kbench case's phase on the CPU that ran it: "
          "for each node, the repetition with the median count (each repetition is a "
          "stretch of the phase, so a tick, an RCU callback or a kworker that lands in "
          "one does not move it) divided by its operations, then the mean over the nodes "
          "(reports without stretches: all instructions over all operations). Not a time: "
          "TCG does not model memory latency. spread: the largest difference between the "
          "meter boots of one kernel, in percent of their mean.", "",
          "| topology | case | base insns/op | series/base | series-off/base | spread % |",
          "|---|---|---|---|---|---|"]
    rows = []
    for topo in sorted(phases, key=lambda t: (len(t), t)):
        for case in METER_CASES:
            vals = {k: [v for v in (per_op(ph, case) for ph in phases[topo].get(k, {}).values())
                        if v is not None] for k in KERNELS}
            if not vals["base"]:
                continue
            mean = {k: statistics.mean(v) for k, v in vals.items() if v}
            spread = max((max(v) - min(v)) / statistics.mean(v) * 100 for v in vals.values() if v)

            def ratio(k):
                return f"{mean[k] / mean['base']:.4f}" if k in mean else "-"
            md.append(f"| {topo} | {case} | {mean['base']:.0f} | {ratio('series')} "
                      f"| {ratio('series-off')} | {spread:.2f} |")
            rows.append((f"{topo}:{case}", mean.get("series", float("nan")) / mean["base"],
                         mean.get("series-off", float("nan")) / mean["base"]))
    md += ["", "## Steady state: remote kernel instruction fetches during kbench", "",
           "Per node, the kbench phases of that node's CPU (after boot, the copies made): "
           "kernel instructions fetched from another node's memory, as a fraction of "
           "those fetched from node memory; and the kernel's data reads of its rodata "
           "(rodata= range from System.map) likewise; mean over the meter boots.", "",
           "| topology | kernel | node | insn remote fraction | rodata read remote fraction |",
           "|---|---|---|---|---|"]
    for topo in sorted(phases, key=lambda t: (len(t), t)):
        for kernel in KERNELS:
            fracs, rofracs = {}, {}
            for ph in phases[topo].get(kernel, {}).values():
                for node in sorted({n for (_, n) in ph}):
                    loc = sum(v[1] for (_, n), v in ph.items() if n == node)
                    rem = sum(v[2] for (_, n), v in ph.items() if n == node)
                    if loc + rem:
                        fracs.setdefault(node, []).append(rem / (loc + rem))
            for run in fields.get(topo, {}).get(kernel, {}).values():
                hot = run["hot"]
                for node in sorted({n for (_, n) in hot}):
                    ro = [f for (_, n), f in hot.items() if n == node]
                    if not all(k in f for f in ro for k in RODATA_KEYS):
                        continue  # not measured, or missing(): never read as 0
                    loc = sum(int(f["ro_rodata_local"]) for f in ro)
                    rem = sum(int(f["ro_rodata_remote"]) for f in ro)
                    if loc + rem:
                        rofracs.setdefault(node, []).append(rem / (loc + rem))
            for node, f in sorted(fracs.items()):
                ro = f"{statistics.mean(rofracs[node]):.5f}" if node in rofracs else "-"
                md.append(f"| {topo} | {kernel} | {node} | {statistics.mean(f):.5f} | {ro} |")
    md.append("")
    return md, rows


def model_per_op(run, mode, case):
    """Kernel instruction lines and rodata reads that reached memory, per
    operation of @case over all its nodes: (local, remote), or None."""
    rows = [f for (c, _), f in run[mode].items() if c == case and "fetch_local" in f]
    ops = sum(f["ops"] for f in rows)
    if not ops:
        return None
    loc = sum(int(f["fetch_local"]) + int(f["rodata_local"]) for f in rows)
    rem = sum(int(f["fetch_remote"]) + int(f["rodata_remote"]) for f in rows)
    return loc / ops, rem / ops


def model_tables(fields):
    """Markdown: the cache model's memory accesses and modelled stall time."""
    lat = "; ".join(f"{n}: local {lo} ns, remote {re_} ns" for n, lo, re_, _ in LATENCIES)
    md = ["## Modelled kernel-text memory stalls (a model, not a measurement)", "",
          "The meter's cache model (qemu-smoke/plugin/README.md: per-vCPU L1i, L1d and L2, one "
          "LLC per node shared by its vCPUs, sizes of one Sapphire Rapids core) counts the kernel "
          "instruction lines and rodata reads of each kbench case that missed every cache, by the "
          "node that served them; hot: caches as the case left them, cold: emptied before each "
          "operation. lines/op: those misses per operation, local+remote, over all nodes' runs. "
          f"Stall ns/op = local x local latency + remote x remote latency ({lat}; sources in "
          "model-sources.md; the cache shapes are Intel's for both columns). Only the CPU that "
          "ran the case is counted (work it caused elsewhere, IPIs, RCU callbacks and "
          "workqueues on other CPUs, is not; timer ticks on that CPU, which TCG's slowness makes "
          "more frequent per operation, are). Each node's LLC is 1.875 MiB per vCPU of the node, "
          "a few MiB, not a socket's 105 MiB: as if the other cores were busy. Lines/op are "
          "summed over every node's runs, the image's node (where the series changes nothing) "
          "included. Left out: prefetchers, the out-of-order window that hides part of every "
          "miss, the branch predictor and micro-op cache, TLB misses and page walks, coherence "
          "(a line in the other node's LLC counts as a remote memory read), interconnect "
          "queueing and bandwidth, L2 and LLC hit latency (0 ns here), and every stall that is "
          "not kernel text or rodata. The cold flush empties every level of every CPU, more "
          "than a real cold run does.", "",
          "| topology | case | caches | base lines/op (local+remote) | series lines/op | "
          + " | ".join(f"{n} base ns | {n} series ns | {n} series/base" for n, _, _, _ in LATENCIES)
          + " |", "|---|---|---|---|---|" + "---|---|---|" * len(LATENCIES)]
    plot = []
    for topo in sorted(fields, key=lambda t: (len(t), t)):
        for mode in ("hot", "cold"):
            for case in METER_CASES:
                per = {}
                for k in ("base", "series"):
                    vals = [v for v in (model_per_op(r, mode, case)
                                        for r in fields[topo].get(k, {}).values()) if v]
                    if vals:
                        per[k] = (statistics.mean(v[0] for v in vals), statistics.mean(v[1] for v in vals))
                if len(per) < 2:
                    continue
                cells = []
                for _, lo, re_, _ in LATENCIES:
                    b = per["base"][0] * lo + per["base"][1] * re_
                    sr = per["series"][0] * lo + per["series"][1] * re_
                    cells.append(f"{b:.1f} | {sr:.1f} | {sr / b:.3f}" if b else f"{b:.1f} | {sr:.1f} | -")
                md.append(f"| {topo} | {case} | {mode} | {per['base'][0]:.2f}+{per['base'][1]:.2f} "
                          f"| {per['series'][0]:.2f}+{per['series'][1]:.2f} | " + " | ".join(cells) + " |")
                if LATENCIES and mode == "cold":
                    lo, re_ = LATENCIES[0][1], LATENCIES[0][2]
                    plot.append((f"{topo}:{case}", per["base"][0] * lo + per["base"][1] * re_,
                                 per["series"][0] * lo + per["series"][1] * re_))
    md.append("")
    return md, plot


# Published measurements on real hardware, to read beside the model (from
# results/model-sources.md section 4, which quotes the mails).
PUBLISHED = [
    "## Published measurements on real hardware (for comparison; not ours)", "",
    "| system | benchmark | result | source |", "|---|---|---|---|",
    "| IA64, 6-node Itanium2 900 MHz, 1.5 MB L3 (Steiner/Luck, 2006) | microbenchmarks on node 3, "
    "cold caches (flushed each iteration) | null 9.2%, fork+exit 20.1%, open/close 29.7%, getpid 8.6%, "
    "time 34.6%, gettimeofday 33.3% better | <20060420135315.GA28021@sgi.com> |",
    "| same | hot caches | null 0, fork+exit 6.2%, open/close 3.8%, getpid 0, time 0.9%, gettimeofday 0.5% "
    "| same |",
    "| x86 RFC, Xeon E5-2690, 2 nodes x 12 cores (Kuzin, 2023) | syscall loops (the kbench cases) | "
    "hot 0.4-10.8%; cold 0.4-42.7% (fork-1 42.7%, kill 26.1%); sign and units not stated, no variance "
    "| <20231228131056.602411-1-artem.kuzin@huawei.com> |",
    "| same tests on AMD EPYC 7713, 2 x 64 cores (Garg, 2024) | % over 6.5-rc5 | hot -13.0 to +3.3; "
    "cold -54.2 to +4.6 | <9cbb1c1e-9dd6-478b-b75d-e6c9f3d6c8f7@amd.com> |", ""]


def tlb_table(fields):
    """Markdown: the TLB model's flushes, IPIs and walks per operation."""
    md = ["## TLB events per operation (the meter's TLB model; a model, not a measurement)", "",
          "Counted by the meter's TLB model (tlb=on, qemu-smoke/plugin/README.md) on every vCPU "
          "during each kbench case's hot phase, divided by the case's operations, summed over "
          "the nodes' runs, mean over the meter boots: CR3 writes that flush (QEMU's TCG has no "
          "PCID, so every CR3 write drops the non-global entries), CR4 writes that drop the "
          "global ones too, INVLPGs, IPIs (ICR writes), modelled iTLB misses (page walks) and "
          "blocks fetched through a stale iTLB entry. walk ns/op: the modelled iTLB misses "
          f"at 4 memory reads each at {LATENCIES[0][0]}'s local latency ({LATENCIES[0][1]} ns), "
          "an upper bound that the cache model does not yet refine (page-table lines are not "
          "in it), to add to the stall ns/op above. The model shows what the architecture "
          "allows a TLB to keep, not what a given CPU does.", "",
          "| topology | case | kernel | " + " | ".join(f"{k}/op" for k in TLB_KEYS) + " | walk ns/op |",
          "|---|---|---|" + "---|" * (len(TLB_KEYS) + 1)]
    for topo in sorted(fields, key=lambda t: (len(t), t)):
        for case in METER_CASES:
            for kernel in KERNELS:
                vals = {k: [] for k in TLB_KEYS}
                for run in fields[topo].get(kernel, {}).values():
                    rows = [f for (c, _), f in run["hot"].items() if c == case and "tlb_cr3_flush" in f]
                    ops = sum(f["ops"] for f in rows)
                    if not ops:
                        continue
                    for k in TLB_KEYS:
                        vals[k].append(sum(f["tlb_" + k] for f in rows) / ops)
                if not vals[TLB_KEYS[0]]:
                    continue
                walk_ns = statistics.mean(vals["itlb_walks"]) * 4 * LATENCIES[0][1]
                md.append(f"| {topo} | {case} | {kernel} | "
                          + " | ".join(f"{statistics.mean(vals[k]):.2f}" for k in TLB_KEYS)
                          + f" | {walk_ns:.0f} |")
    md.append("")
    return md if len(md) > 5 else []


def memory_table(fields):
    """Markdown: memory per process and replica bytes per node."""
    md = ["## Memory", "",
          "Per process, around N sleeping children (mean over the meter boots): the "
          "PageTables of /proc/meminfo, which on x86 counts the tables below the PGD only "
          "(PGDs, the per-node ones too, are allocated outside the page table accounting), "
          "and, where the guest reported it, MemFree, which counts everything, give or take "
          "the per-CPU page lists. Node PGDs: what the series allocates per process by "
          "design, one PGD (8 KiB with PTI) per node with a copy other than the image's "
          "(v1-v3: every process; v4 on, whose status has mm_binds: none for a process "
          "that runs on one node, one per further node it runs on, so \"0 to\" the "
          "eager figure), and, from v4 on, what its debugfs mm_pgd_pages counted across "
          "the children (not pinned: the scheduler moves some). "
          "Replica bytes: the series' debugfs status, per node with a copy: copy + page "
          "tables.", "",
          "| topology | PageTables bytes/process base / series / off | MemFree bytes/process "
          "base / series / off | node PGD bytes/process (series) | series replicas "
          "(node: copy + tables) |", "|---|---|---|---|---|"]
    for topo in sorted(fields, key=lambda t: (len(t), t)):
        cols = []
        for key in ("bytes_per_process", "total_bytes_per_process"):
            per = []
            for k in KERNELS:
                vals = [int(m[key]) for r in fields[topo].get(k, {}).values()
                        for m in r["memory"] if key in m]
                per.append(f"{statistics.mean(vals):.0f}" if vals else "-")
            cols.append(" / ".join(per))
        reps = []
        runs = fields[topo].get("series", {})
        for line in runs[min(runs)]["status"] if runs else []:
            f = kv(line)
            if line.startswith("node=") and "copy_bytes" in f:
                reps.append(f"{f['node']}: {int(f['copy_bytes']) // 1024} KiB + {int(f['table_bytes']) // 1024} KiB")
        counted = [int(m["node_pgd_bytes_per_process"]) for r in runs.values()
                   for m in r["memory"] if "node_pgd_bytes_per_process" in m]
        lazy = any(line.startswith("mm_binds ") for r in runs.values() for line in r["status"])
        if lazy:
            # v4 on: none for a process on one node, one per further node it ran on.
            pgd = f"0 to {8192 * len(reps)}" + (f" (counted: {statistics.mean(counted):.0f})"
                                               if counted else "")
        else:
            pgd = f"{8192 * len(reps)}" + (f" (counted: {statistics.mean(counted):.0f})"
                                          if counted else "")
        md.append(f"| {topo} | {cols[0]} | {cols[1]} | {pgd} | {'; '.join(reps) or '-'} |")
    md.append("")
    return md


def median_ci(values):
    """A distribution-free confidence interval for the median of @values:
    the order statistics x(k) and x(n+1-k) for the largest k whose coverage
    1 - 2 P(Binomial(n, 1/2) < k) is at least 95%, else (k = 1) the range
    and its lower coverage. Returns (low, high, coverage). A percentile
    bootstrap of the median gives the same range for 5 rounds, with a
    coverage it does not state."""
    n, v = len(values), sorted(values)
    if n < 2:
        return None

    def coverage(k):
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = max([k for k in range(1, n // 2 + 1) if coverage(k) >= 0.95] or [1])
    return v[k - 1], v[n - k], coverage(k)


def ratio_stats(runs, topo, kernel, case, node):
    """Median of kernel/base over the rounds that have both, the ends of
    its confidence interval (median_ci(); the one value with one round),
    the rounds and the interval's coverage."""
    ratios = []
    for rnd, res in sorted(runs[topo].get(kernel, {}).items()):
        base = runs[topo].get("base", {}).get(rnd, {}).get("kbench", {}).get((case, node))
        val = res["kbench"].get((case, node))
        if base and val:
            ratios.append(val / base)
    if not ratios:
        return None
    ci = median_ci(ratios) or (ratios[0], ratios[0], 0)
    return statistics.median(ratios), ci[0], ci[1], len(ratios), ci[2]


def median_of(runs, topo, kernel, case, node):
    vals = [r["kbench"][(case, node)] for r in runs[topo].get(kernel, {}).values()
            if (case, node) in r["kbench"]]
    return statistics.median(vals) if vals else None


def meter_nodes(lines):
    """node -> (kernel_local, kernel_remote, remote_frac) from a report."""
    nodes = {}
    for line in lines:
        if line.startswith("node="):
            f = kv(line)
            nodes[int(f["node"])] = (int(f["kernel_local"]), int(f["kernel_remote"]),
                                     f["remote_frac"])
    return nodes


def gnuplot(script, cwd):
    subprocess.run(["gnuplot"], input=script, text=True, cwd=cwd, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the bench results directory")
    ap.add_argument("--rev", default="series", help="revision name for the report")
    ap.add_argument("--partial", action="store_true",
                    help="write the tables of an incomplete run anyway, with what is missing at the "
                    "top of results.md (the exit status stays 1)")
    opts = ap.parse_args()
    runs, meters, phases, fields = load(opts.out)
    if not runs and not fields:
        print(f"bench.py: no bench results under {opts.out}", file=sys.stderr)
        return 1
    lacking = missing(runs, fields)
    if lacking:
        print(f"bench.py: {opts.out} is incomplete, missing:", *lacking, sep="\n  ", file=sys.stderr)
        if not opts.partial:
            return 1

    md = [f"# Benchmarks: base kernel against {opts.rev} (QEMU TCG)", ""]
    if lacking:
        md += ["**INCOMPLETE** (bench.py --partial): these numbers lack", "",
               *(f"- {x}" for x in lacking), ""]
    try:
        with open(os.path.join(opts.out, "meta.txt"), encoding="utf-8") as f:
            md += ["Where these numbers come from (meta.txt):", "", "```", *f.read().splitlines(), "```", ""]
    except FileNotFoundError:
        md += ["(no meta.txt: revision, commits, date and machine unknown)", ""]
    md += ["## Wall clock (TCG: noise for questions of a few percent)", "",
           "Ratios are kernel/base per round (boots of a round run back to back, "
           "in a rotating order): the median over the rounds [a distribution-free "
           "confidence interval for it: order statistics of the rounds, with the "
           "coverage it has (5 rounds: the range, 93.8%; 6 or more reach 95%)]. An "
           "interval that contains 1 shows no difference. Below 1 is faster than "
           "base. Times are the medians of kbench's per-boot medians, in us.", ""]
    ratio_rows = []  # for the plot: label, series ratio, off ratio
    for topo in sorted(runs):
        nodes = sorted({n for k in runs[topo].values() for r in k.values()
                        for (_, n) in r["kbench"]})
        md += [f"## {topo}", "",
               "| case | node | base us | series us | series/base | series-off/base |",
               "|---|---|---|---|---|---|"]
        for case in CASES:
            for node in nodes:
                b = median_of(runs, topo, "base", case, node)
                s = median_of(runs, topo, "series", case, node)
                rs = ratio_stats(runs, topo, "series", case, node)
                ro = ratio_stats(runs, topo, "series-off", case, node)
                if b is None:
                    continue

                def fmt(r):
                    return "-" if r is None else f"{r[0]:.3f} [{r[1]:.3f}-{r[2]:.3f}] n={r[3]} {r[4]:.1%}"
                md.append(f"| {case} | {node} | {b:.1f} | {'-' if s is None else f'{s:.1f}'} "
                          f"| {fmt(rs)} | {fmt(ro)} |")
                ratio_rows.append((f"{topo}:{case}:n{node}", *(rs[:3] if rs else (float("nan"),) * 3),
                                   *(ro[:3] if ro else (float("nan"),) * 3)))
        md.append("")

    md += ["## Function tracer on all functions", "",
           "| topology | kernel | functions | on ms (median) | off ms (median) |", "|---|---|---|---|---|"]
    for topo in sorted(runs):
        for kernel in KERNELS:
            fts = [r["ftrace"] for r in runs[topo].get(kernel, {}).values() if r["ftrace"]]
            if not fts:
                continue
            on = statistics.median(int(f["on_ms"]) for f in fts)
            off = statistics.median(int(f["off_ms"]) for f in fts)
            md.append(f"| {topo} | {kernel} | {fts[0].get('functions', '?')} | {on:g} | {off:g} |")
    md.append("")

    md += ["## Replica memory (series, debugfs status)", "",
           "| topology | node | replica | copy bytes | table bytes | module pages |",
           "|---|---|---|---|---|---|"]
    for topo in sorted(runs):
        rounds = runs[topo].get("series", {})
        if not rounds:
            continue
        for line in rounds[min(rounds)]["status"]:
            if line.startswith("node=") and "copy_bytes=" in line:
                f = kv(line)
                md.append(f"| {topo} | {f['node']} | {f['replica']} | {f['copy_bytes']} "
                          f"| {f['table_bytes']} | {f['module_pages']} |")
    md.append("")

    meter_md, insn_rows = meter_tables(phases, fields)
    md += meter_md
    model_md, model_rows = model_tables(fields)
    md += model_md
    md += tlb_table(fields)
    if fields:
        md += PUBLISHED
    md += memory_table(fields)
    md += ["## Locality meter: kernel instructions fetched remotely, whole boot", "",
           "| topology | kernel | node | local | remote | remote fraction |", "|---|---|---|---|---|---|"]
    loc_rows = []
    for topo in sorted(meters):
        for kernel in KERNELS:
            for node, (loc, rem, frac) in sorted(meter_nodes(meters[topo].get(kernel, [])).items()):
                md.append(f"| {topo} | {kernel} | {node} | {loc} | {rem} | {frac} |")
                loc_rows.append((topo, kernel, node, frac))
    md.append("")

    with open(os.path.join(opts.out, "ratios.dat"), "w", encoding="utf-8") as f:
        for label, *vals in ratio_rows:
            f.write(f'"{label}" ' + " ".join(str(v) for v in vals) + "\n")
    with open(os.path.join(opts.out, "locality.dat"), "w", encoding="utf-8") as f:
        for topo, kernel, node, frac in loc_rows:
            f.write(f'"{topo}:{kernel}:n{node}" {frac if frac != "na" else "nan"}\n')
    common = ("set terminal pngcairo size 1400,600\nset style data histograms\n"
              "set style fill solid 0.8 border -1\nset xtics rotate by -60 font ',8'\n"
              "set grid ytics\n")
    if any(math.isfinite(r[1]) or math.isfinite(r[4]) for r in ratio_rows):
        gnuplot(common.replace("set style data histograms\n", "set style data histograms\n"
                                       "set style histogram errorbars gap 1 lw 1\n")
                + "set output 'ratios.png'\nset title 'kbench wall clock: kernel / base, median "
                "of per-round ratios with its order-statistic interval'\n"
                "set yrange [0:*]\nplot 'ratios.dat' using 2:3:4:xtic(1) title 'series/base', "
                "'' using 5:6:7 title 'series-off/base', 1 notitle lc rgb 'black'\n", opts.out)
        md.append("![benchmark ratios](ratios.png)")
    insn_rows = [r for r in insn_rows if any(math.isfinite(v) for v in r[1:])]
    if insn_rows:
        with open(os.path.join(opts.out, "insns.dat"), "w", encoding="utf-8") as f:
            for label, rs, ro in insn_rows:
                f.write(f'"{label}" {rs} {ro}\n')
        gnuplot(common + "set output 'insns.png'\nset title 'kernel instructions per operation: kernel / base'\n"
                "set yrange [0.9:*]\nplot 'insns.dat' using 2:xtic(1) title 'series/base', "
                "'' using 3 title 'series-off/base', 1 notitle lc rgb 'black'\n", opts.out)
        md.append("![instruction ratios](insns.png)")
    if model_rows:
        with open(os.path.join(opts.out, "model.dat"), "w", encoding="utf-8") as f:
            for label, b, sr in model_rows:
                f.write(f'"{label}" {b} {sr}\n')
        gnuplot(common + "set output 'model.png'\nset title 'modelled kernel text+rodata memory "
                f"stall per operation, cold caches, {LATENCIES[0][0]} latencies (ns, a model)'\n"
                "set yrange [0:*]\nplot 'model.dat' using 2:xtic(1) title 'base', "
                "'' using 3 title 'series'\n", opts.out)
        md.append("![modelled stall](model.png)")
    if loc_rows:
        gnuplot(common + "set output 'locality.png'\nset title 'remote fraction of kernel instruction fetches, per node'\n"
                "set yrange [0:1.05]\nplot 'locality.dat' using 2:xtic(1) title 'remote fraction'\n", opts.out)
        md.append("![remote fraction](locality.png)")
    with open(os.path.join(opts.out, "results.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 1 if lacking else 0


if __name__ == "__main__":
    sys.exit(main())
