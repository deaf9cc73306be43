"""bench.py ('make bench's summary) on a small made-up run: a case, a node,
a kernel, a report or a count missing from it fails the summary, and a
missing rodata count never reads as 0."""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.dirname(HERE)
sys.path.insert(0, SMOKE)

import bench  # noqa: E402

KERNELS = ("base", "series", "series-off")
CASES = ("fork1", "fork1024", "mmap", "mmap_lock", "openclose", "mount", "kill")
# 2node.topo: node 0 has CPUs 0-1, node 1 CPUs 2-3; kbench runs on the
# first CPU of each node.
NODES = ((0, 0), (1, 2))


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def timed_log(kernel):
    """A timed round's KTAP log: kbench's table, as 10-kbench.sh prints it."""
    lines = ["KTAP version 1", "# kbench: # kbench reps=11 loop=1024 unit=us",
             "# kbench: case\tnode\tcpu\tmedian\tq1\tq3\tmin\tmax"]
    us = 100.0 if kernel == "base" else 99.0
    for node, cpu in NODES:
        for case in CASES:
            lines.append(f"# kbench: {case}\t{node}\t{cpu}\t{us}\t{us}\t{us}\t{us}\t{us}")
    return lines + ["# ftrace: functions=50000 on_ms=120 off_ms=80", "ok 1 kbench"]


def meter_files(kernel):
    """A meter boot: the guest's meter-phase lines (openclose on each node)
    and the report's phase lines for them, with rodata= on."""
    remote = {"base": 9700, "series-off": 9700, "series": 0}[kernel]
    ktap = ["KTAP version 1", "# kbench: meter-phase 2 kbench ops=0"]
    report = ["locality version=3 nodes=2 vcpus=4 data=on mapped_ranges=2 cpunodes_src=arg "
              "cpunodes=0:0:1:1 homes_src=arg homes=0:1 rodata=ffffffff84800000-ffffffff849b5000 cache=off",
              "node=0 home=0 vcpus=2 kernel_local=1000000 kernel_remote=0 remote_frac=0.0000",
              f"node=1 home=1 vcpus=2 kernel_local={1000000 - remote * 100} kernel_remote={remote * 100} "
              f"remote_frac={remote / 10000:.4f}"]
    for phase, (node, cpu) in enumerate(NODES, 3):
        rem = remote if node else 0
        ktap.append(f"# kbench: meter-phase {phase} openclose ops=320 node={node} cpu={cpu} reps=10")
        report += [f"phase={phase} vcpu={cpu} node={node} home={node} kernel_local={10000 - rem} "
                   f"kernel_remote={rem} kernel_other=0 kernel_insns=10000",
                   f"phase={phase} rodata vcpu={cpu} node={node} home={node} rodata_local={100 - rem // 100} "
                   f"rodata_remote={rem // 100} rodata_other=0 rodata_io=0"]
    return ktap + ["ok 1 kbench_phases"], report + ["end"]


class Bench(unittest.TestCase):
    """bench.py OUT on a complete run, and on runs with one thing missing."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="bench-test-")
        self.addCleanup(shutil.rmtree, self.out)
        for kernel in KERNELS:
            write(self.path(kernel, "r1", "ktap.log"), timed_log(kernel))
            ktap, report = meter_files(kernel)
            write(self.path(kernel, "meter1", "ktap.log"), ktap)
            write(self.path(kernel, "meter1", "locality.txt"), report)

    def path(self, kernel, run, name):
        return os.path.join(self.out, "2node", kernel, run, name)

    def drop(self, kernel, run, name, text):
        """Remove the lines that contain @text from a file of the run."""
        path = self.path(kernel, run, name)
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f.read().splitlines() if text not in line]
        write(path, lines)

    def summarise(self, *args):
        """bench.py OUT ARGS: (exit status, stderr), plots left out."""
        err = io.StringIO()
        with mock.patch.object(sys, "argv", ["bench.py", self.out, *args]), \
                mock.patch.object(bench, "gnuplot", lambda *a, **k: None), \
                contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                rc = bench.main()
            except SystemExit as e:
                rc = e.code
        return rc, err.getvalue()

    def results(self):
        with open(os.path.join(self.out, "results.md"), encoding="utf-8") as f:
            return f.read()

    def test_complete_run(self):
        self.assertEqual(self.summarise(), (0, ""))
        md = self.results()
        self.assertIn("| openclose | 1 | 100.0 | 99.0 |", md)
        self.assertIn("| 2node | series | 1 | 0.00000 | 0.00000 |", md)
        self.assertIn("| 2node | base | 1 | 0.97000 | 0.97000 |", md)

    def test_node_missing_from_a_round(self):
        self.drop("series", "r1", "ktap.log", "\t1\t2\t")
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/series/r1: no kbench fork1 on node 1", err)
        self.assertIn("2node/series/r1: no kbench kill on node 1", err)

    def test_case_missing_from_a_round(self):
        self.drop("base", "r1", "ktap.log", "mount\t0\t")
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/base/r1: no kbench mount on node 0", err)

    def test_kernel_missing_from_a_round(self):
        shutil.rmtree(os.path.dirname(self.path("series-off", "r1", "ktap.log")))
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/series-off/r1: no ktap.log", err)

    def test_node_missing_from_a_meter_boot(self):
        """kbench -m skips a node whose cpulist it cannot read, and says nothing."""
        self.drop("series", "meter1", "ktap.log", "node=1")
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/series/meter1: no hot meter-phase line of openclose on node 1", err)

    def test_meter_report_missing(self):
        os.remove(self.path("base", "meter1", "locality.txt"))
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/base/meter1: no locality.txt", err)

    def test_phase_counts_missing(self):
        self.drop("series-off", "meter1", "locality.txt", "phase=4 vcpu=2")
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/series-off/meter1: openclose on node 1 (hot): no kernel_insns kernel_local "
                      "kernel_remote in its phase", err)

    def test_missing_rodata_remote_is_not_0(self):
        """The base's node 1 rodata line without rodata_remote: not "0.00000 remote"."""
        path = self.path("base", "meter1", "locality.txt")
        with open(path, encoding="utf-8") as f:
            text = f.read().replace("rodata_local=3 rodata_remote=97 ", "rodata_local=3 ")
        write(path, text.splitlines())
        rc, err = self.summarise()
        self.assertEqual(rc, 1)
        self.assertIn("2node/base/meter1: openclose on node 1 (hot): no ro_rodata_remote in its phase", err)
        # --partial: the tables anyway, marked, and that node's rodata fraction "-", not 0.
        rc, _ = self.summarise("--partial")
        self.assertEqual(rc, 1)
        md = self.results()
        self.assertIn("**INCOMPLETE**", md.split("## ")[0])
        self.assertIn("| 2node | base | 1 | 0.97000 | - |", md)


if __name__ == "__main__":
    unittest.main()
