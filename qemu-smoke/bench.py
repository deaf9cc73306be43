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
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

KERNELS = ("base", "series", "series-off")
CASES = ("fork1", "fork1024", "mmap", "mmap_lock", "openclose", "mount", "kill")
METER_CASES = CASES + ("getppid", "stat", "pipe", "forkexec")


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


def meter_phases(lines, ktap):
    """(case, node) -> (kernel_insns, kernel_local, kernel_remote, ops) of
    the CPU that ran the case, in the case's phase."""
    cases = {}
    for line in diag_lines(ktap, "kbench"):
        m = re.match(r"meter-phase (\d+) (\w+) ops=(\d+) node=(\d+) cpu=(\d+)", line)
        if m and m.group(2) != "kbench":
            cases[(m.group(2), int(m.group(4)))] = (int(m.group(1)), int(m.group(5)), int(m.group(3)))
    vcpus = {}
    for line in lines:
        words = line.split()
        if len(words) > 1 and words[0].startswith("phase=") and words[1].startswith("vcpu="):
            f = kv(line)
            vcpus[(int(f["phase"]), int(f["vcpu"]))] = f
    res = {}
    for key, (phase, cpu, ops) in cases.items():
        f = vcpus.get((phase, cpu))
        if f and ops:
            res[key] = (int(f["kernel_insns"]), int(f["kernel_local"]), int(f["kernel_remote"]), ops)
    return res


def load(out):
    """runs[topo][kernel][round] = {"kbench": {(case, node): median},
    "ftrace": {...}, "status": [...]}; meters[topo][kernel] = report lines
    (of the first meter boot); phases[topo][kernel][run] = meter_phases()."""
    runs, meters, phases = {}, {}, {}
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
                        continue
                    meters.setdefault(topo, {}).setdefault(kernel, lines)
                    ph = meter_phases(lines, log)
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
                    "kbench": kb, "ftrace": kv(ft[0]) if ft else {},
                    "status": diag_lines(log, "status")}
    return runs, meters, phases


def per_op(ph, case):
    """Kernel instructions per operation of @case, over all its nodes."""
    ins = sum(v[0] for (c, _), v in ph.items() if c == case)
    ops = sum(v[3] for (c, _), v in ph.items() if c == case)
    return ins / ops if ops else None


def meter_tables(phases):
    """Markdown: kernel instructions per operation, and the steady state."""
    md = ["## Kernel instructions per operation (locality meter, phases)", "",
          "Counted by the meter in each kbench case's phase on the CPU that ran it, "
          "summed over the nodes, divided by the operations. Not a time: TCG does not "
          "model memory latency. spread: the largest difference between the meter "
          "boots of one kernel, in percent of their mean.", "",
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
           "those fetched from node memory; mean over the meter boots.", "",
           "| topology | kernel | node | remote fraction |", "|---|---|---|---|"]
    for topo in sorted(phases, key=lambda t: (len(t), t)):
        for kernel in KERNELS:
            fracs = {}
            for ph in phases[topo].get(kernel, {}).values():
                for node in sorted({n for (_, n) in ph}):
                    loc = sum(v[1] for (_, n), v in ph.items() if n == node)
                    rem = sum(v[2] for (_, n), v in ph.items() if n == node)
                    if loc + rem:
                        fracs.setdefault(node, []).append(rem / (loc + rem))
            for node, f in sorted(fracs.items()):
                md.append(f"| {topo} | {kernel} | {node} | {statistics.mean(f):.5f} |")
    md.append("")
    return md, rows


def ratio_stats(runs, topo, kernel, case, node):
    """Median and range of kernel/base over the rounds that have both."""
    ratios = []
    for rnd, res in runs[topo].get(kernel, {}).items():
        base = runs[topo].get("base", {}).get(rnd, {}).get("kbench", {}).get((case, node))
        val = res["kbench"].get((case, node))
        if base and val:
            ratios.append(val / base)
    if not ratios:
        return None
    return statistics.median(ratios), min(ratios), max(ratios), len(ratios)


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
    opts = ap.parse_args()
    runs, meters, phases = load(opts.out)
    if not runs and not phases:
        print(f"bench.py: no bench results under {opts.out}", file=sys.stderr)
        return 1

    md = [f"# Benchmarks: base kernel against {opts.rev} (QEMU TCG)", "",
          "Ratios are kernel/base per round (boots of a round run back to back, "
          "in a rotating order), median over the rounds [min-max]. Below 1 is faster "
          "than base. Times are the medians of kbench's per-boot medians, in us.", ""]
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
                    return "-" if r is None else f"{r[0]:.3f} [{r[1]:.3f}-{r[2]:.3f}]"
                md.append(f"| {case} | {node} | {b:.1f} | {'-' if s is None else f'{s:.1f}'} "
                          f"| {fmt(rs)} | {fmt(ro)} |")
                ratio_rows.append((f"{topo}:{case}:n{node}", rs[0] if rs else float("nan"),
                                   ro[0] if ro else float("nan")))
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

    meter_md, insn_rows = meter_tables(phases)
    md += meter_md
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
        for label, rs, ro in ratio_rows:
            f.write(f'"{label}" {rs} {ro}\n')
    with open(os.path.join(opts.out, "locality.dat"), "w", encoding="utf-8") as f:
        for topo, kernel, node, frac in loc_rows:
            f.write(f'"{topo}:{kernel}:n{node}" {frac if frac != "na" else "nan"}\n')
    common = ("set terminal pngcairo size 1400,600\nset style data histograms\n"
              "set style fill solid 0.8 border -1\nset xtics rotate by -60 font ',8'\n"
              "set grid ytics\n")
    if ratio_rows:
        gnuplot(common + "set output 'ratios.png'\nset title 'kbench: kernel / base (median of per-round ratios)'\n"
                "set yrange [0:*]\nplot 'ratios.dat' using 2:xtic(1) title 'series/base', "
                "'' using 3 title 'series-off/base', 1 notitle lc rgb 'black'\n", opts.out)
        md.append("![benchmark ratios](ratios.png)")
    if insn_rows:
        with open(os.path.join(opts.out, "insns.dat"), "w", encoding="utf-8") as f:
            for label, rs, ro in insn_rows:
                f.write(f'"{label}" {rs} {ro}\n')
        gnuplot(common + "set output 'insns.png'\nset title 'kernel instructions per operation: kernel / base'\n"
                "set yrange [0.9:*]\nplot 'insns.dat' using 2:xtic(1) title 'series/base', "
                "'' using 3 title 'series-off/base', 1 notitle lc rgb 'black'\n", opts.out)
        md.append("![instruction ratios](insns.png)")
    if loc_rows:
        gnuplot(common + "set output 'locality.png'\nset title 'remote fraction of kernel instruction fetches, per node'\n"
                "set yrange [0:1.05]\nplot 'locality.dat' using 2:xtic(1) title 'remote fraction'\n", opts.out)
        md.append("![remote fraction](locality.png)")
    with open(os.path.join(opts.out, "results.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
