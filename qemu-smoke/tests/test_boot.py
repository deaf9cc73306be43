"""boot.py without QEMU: the kernel command line it gives the guest (the
host side of guest/PARAMETERS.md), the QEMU command, and bad input."""

import argparse
import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.dirname(HERE)
sys.path.insert(0, SMOKE)

import boot  # noqa: E402
from topology import Topology  # noqa: E402


def topo(name):
    return Topology(os.path.join(SMOKE, "topologies", f"{name}.topo"))


def opts(**kw):
    base = {"expect_faults": False, "expect_repl": False, "append": "", "mttcg": False,
            "meter": "", "meter_args": "", "icount": False, "kernel": "K", "initrd": "I",
            "out": "/tmp/out"}
    base.update(kw)
    return argparse.Namespace(**base)


class KernelCmdline(unittest.TestCase):
    def test_two_nodes_replicating(self):
        line = boot.kernel_cmdline(topo("2node"), opts(expect_repl=True, append="ktv_only=10-boot"))
        self.assertEqual(line, ["console=ttyS0,115200", "pti=on", "panic=-1", "oops=panic",
                                "loglevel=7", "ktv_nodes=2", "ktv_cpus=4", "ktv_levels=4",
                                "ktv_memnodes=0,1", "ktv_slit=10.20/20.10", "ktv_homes=0:1",
                                "ktv_expect=1", "ktv_only=10-boot"])

    def test_provoked_faults_do_not_panic(self):
        line = boot.kernel_cmdline(topo("2node"), opts(expect_faults=True))
        self.assertNotIn("oops=panic", line)
        self.assertNotIn("ktv_expect=1", line)

    def test_topology_append_before_the_users(self):
        """The topology's append line comes before --append, so the user's words win."""
        line = boot.kernel_cmdline(topo("straddle"), opts(append="kaslr ktv_span=1"))
        self.assertEqual(line[-4:], ["nokaslr", "ktv_span=2", "kaslr", "ktv_span=1"])

    def test_dimms_and_five_levels(self):
        self.assertIn("ktv_dimms=0:0xc000000000:256", boot.kernel_cmdline(topo("memhotplug"), opts()))
        self.assertIn("ktv_levels=5", boot.kernel_cmdline(topo("la57"), opts()))

    def test_memoryless_homes(self):
        line = boot.kernel_cmdline(topo("memoryless"), opts())
        self.assertIn("ktv_homes=0:1:1", line)
        self.assertIn("ktv_memnodes=0,1", line)


class QemuCommand(unittest.TestCase):
    def test_single_threaded_tcg_by_default(self):
        q = boot.qemu_command(topo("2node"), opts(), "c.log", "k.log")
        self.assertEqual(q[q.index("-accel") + 1], "tcg,thread=single")
        self.assertNotIn("-plugin", q)
        self.assertEqual(q[q.index("-serial") + 1], "file:c.log")

    def test_meter_backs_nodes_with_files(self):
        q = boot.qemu_command(topo("2node"), opts(meter="/p/locality.so", meter_args="data=on",
                                                  icount=True), "c", "k")
        plugin = q[q.index("-plugin") + 1]
        self.assertTrue(plugin.startswith("/p/locality.so,cpunodes=0:0:1:1,homes=0:1,out=/tmp/out/"))
        self.assertTrue(plugin.endswith(",data=on"))
        self.assertTrue(any("memory-backend-file" in a for a in q), q)
        self.assertIn("-icount", q)


class BadInput(unittest.TestCase):
    def run_main(self, *argv):
        err = io.StringIO()
        with mock.patch.object(sys, "argv", ["boot.py", *argv]), contextlib.redirect_stderr(err):
            return boot.main(), err.getvalue()

    def test_missing_kernel(self):
        rc, err = self.run_main("--kernel", "/nonexistent", "--initrd", __file__,
                                "--topo", __file__, "--out", "/tmp/x", "--no-inventory")
        self.assertEqual(rc, 3)
        self.assertIn("no such file: /nonexistent", err)

    def test_inventory_facts_required(self):
        rc, err = self.run_main("--kernel", __file__, "--initrd", __file__,
                                "--topo", __file__, "--out", "/tmp/x")
        self.assertEqual(rc, 3)
        self.assertIn("--rev and --kconfig are required (or --no-inventory)", err)

    def test_bad_topology_exits_3(self):
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as t:
            t.write("cpus 2\nnode 0 cpus=0-1 mem=512M\nbogus 1\n")
            t.flush()
            rc, err = self.run_main("--kernel", __file__, "--initrd", __file__,
                                    "--topo", t.name, "--out", "/tmp/x", "--no-inventory")
        self.assertEqual(rc, 3)
        self.assertIn("bad line", err)


class StaleInt3Retry(unittest.TestCase):
    """Under multi-threaded TCG a boot that QEMU broke with a stale
    translation of patched code (guestlog.stale_int3) is booted once more;
    its logs are kept; single-threaded, or a second time, it fails."""
    ktap = ("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: 10-boot\n"
            "    ok 1 nodes_as_in_topology\nok 1 10-boot\n# ktv: tests done\n")

    def boot_with(self, consoles, *extra):
        with open(os.path.join(HERE, "data", "real-v5-mttcg-stale-int3.console"),
                  encoding="utf-8") as f:
            stale = f.read()
        runs = []

        def fake_qemu(qemu, _timeout):
            console, ktap = (f.split(":", 1)[1] for f in qemu if f.startswith("file:"))
            text = stale if consoles[len(runs)] == "stale" else "[ 1.0] fine\n"
            runs.append(text)
            for path, body in ((console, text), (ktap, self.ktap)):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(body)
            return None

        with tempfile.TemporaryDirectory() as out:
            argv = ["boot.py", "--kernel", __file__, "--initrd", __file__, "--topo",
                    os.path.join(SMOKE, "topologies", "2node.topo"), "--out", out,
                    "--no-inventory", *extra]
            stdout = io.StringIO()
            with mock.patch.object(sys, "argv", argv), mock.patch.object(boot, "run_qemu", fake_qemu), \
                    contextlib.redirect_stdout(stdout):
                rc = boot.main()
            kept = os.path.exists(os.path.join(out, "stale-int3", "console.log"))
        return rc, len(runs), kept, stdout.getvalue()

    def test_booted_again_under_mttcg(self):
        rc, runs, kept, out = self.boot_with(["stale", "clean"], "--mttcg")
        self.assertEqual((rc, runs, kept), (0, 2, True), out)
        self.assertIn("stale translation of patched code", out)

    def test_not_again_single_threaded(self):
        rc, runs, _, out = self.boot_with(["stale", "clean"])
        self.assertEqual((rc, runs), (2, 1), out)
        self.assertIn("splat: [  189.203182] Oops: int3: 0000 [#1] SMP PTI", out)

    def test_twice_fails(self):
        rc, runs, _, out = self.boot_with(["stale", "stale"], "--mttcg")
        self.assertEqual((rc, runs), (2, 2), out)


class Rejudge(unittest.TestCase):
    """--rejudge: the logs of a boot judged again with the options it was
    booted with (OUT/boot.args) and today's inventory."""
    ktap = ("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: 10-boot\n"
            "    ok 1 nodes_as_in_topology\nok 1 10-boot\n# ktv: tests done\n")

    def rejudge(self, inventory):
        with tempfile.TemporaryDirectory() as out:
            files = {"ktap.log": self.ktap, "console.log": "", "seconds": "1.0\n",
                     "qemu.verdict": "", "kconfig": "CONFIG_KERNEL_REPLICATION=y\n",
                     "inventory": inventory}
            for name, text in files.items():
                with open(os.path.join(out, name), "w", encoding="utf-8") as f:
                    f.write(text)
            with open(os.path.join(out, "boot.args"), "w", encoding="utf-8") as f:
                f.write(f"--kernel /gone --initrd /gone --topo {SMOKE}/topologies/1node.topo "
                        f"--out {out} --label l --rev base --kconfig {out}/kconfig "
                        f"--inventory {out}/inventory\n")
            stdout = io.StringIO()
            with mock.patch.object(sys, "argv", ["boot.py", "--rejudge", "--kernel", "x",
                                                 "--initrd", "x", "--topo", "x", "--out", out]), \
                    contextlib.redirect_stdout(stdout):
                return boot.main(), stdout.getvalue()

    def test_same_inventory_ok(self):
        rc, row = self.rejudge("[tests]\n10-boot.nodes_as_in_topology True\n")
        self.assertEqual(rc, 0, row)

    def test_a_test_added_to_the_inventory(self):
        rc, row = self.rejudge("[tests]\n10-boot.nodes_as_in_topology True\n"
                               "10-boot.cpus_as_in_topology True\n")
        self.assertEqual(rc, 1)
        self.assertIn("missing 1 of the inventory's tests: 10-boot.cpus_as_in_topology", row)


if __name__ == "__main__":
    unittest.main()
