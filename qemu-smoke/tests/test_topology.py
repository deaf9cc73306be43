"""topology on the real topology files: what boot.py builds QEMU and the guest from."""

import glob
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.dirname(HERE)
sys.path.insert(0, SMOKE)

import topology  # noqa: E402


class Topology(unittest.TestCase):
    """What boot.py tells the guest about the topology (ktv_memnodes, ktv_slit, ktv_homes)."""

    def topo(self, name):
        return topology.Topology(os.path.join(SMOKE, "topologies", f"{name}.topo"))

    def test_memoryless(self):
        t = self.topo("memoryless")
        self.assertEqual((t.memnodes(), t.slit(), t.homes()), ("0,1", "10.20.30/20.10.15/30.15.10", "0:1:1"))

    def test_asymmetric(self):
        self.assertEqual(self.topo("asym-slit").slit(), "10.20/40.10")

    def test_dimm(self):
        """QEMU's device memory region (from 4 GiB) reaches past the DIMM at
        768 GiB; a DIMM of a node with boot memory adds no -numa node."""
        t = self.topo("memhotplug")
        self.assertEqual((t.ids(), t.memnodes(), t.dimm_param()), ([0, 1], "0,1", "0:0xc000000000:256"))
        args = t.qemu_args("ram", "/tmp")
        mem = args[args.index("-m") + 1]
        self.assertEqual(mem, "1024M,slots=1,maxmem=784640M")
        maxmem = int(mem.split("maxmem=")[1].rstrip("M"))
        self.assertGreaterEqual(4096 + maxmem - 1024, 768 * 1024 + 256)
        self.assertEqual(sum(a.startswith("node,") for a in args), 2)
        self.assertIn("pc-dimm,id=dimm0,memdev=d0,node=0,addr=0xc000000000", args)

    def test_no_dimm(self):
        self.assertEqual(self.topo("2node").qemu_args("ram", "/tmp")[5], "1024M")

    def test_no_dist_lines(self):
        t = self.topo("1node")
        self.assertEqual((t.memnodes(), t.slit(), t.homes()), ("0", "10", "0"))

    def test_bad_file_is_bad_input(self):
        """A wrong topology is bad input (TopologyError, boot.py exit 3), not a test failure."""
        for text in ("cpus 4\n", "cpus 4\nnode 0 cpus=0-3 mem=1G\ndimm 0 1X 0x1000\n", "cpus 4\nwhat 1\n"):
            with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
                f.write(text)
                f.flush()
                with self.assertRaises(topology.TopologyError):
                    topology.Topology(f.name)

    def test_every_topology_file_builds(self):
        """Each .topo file parses and gives QEMU options, so that a typo fails here, not at boot."""
        files = glob.glob(os.path.join(SMOKE, "topologies", "*.topo"))
        self.assertGreater(len(files), 5)
        for path in files:
            with self.subTest(topology=os.path.basename(path)):
                t = topology.Topology(path)
                self.assertIn("-smp", t.qemu_args("ram", "/tmp"))
                self.assertEqual(len(t.homes().split(":")), len(t.ids()))

    def test_node_key_typo(self):
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write("cpus 2\nnode 0 cpu=0-1 mem=512M\n")
            f.flush()
            with self.assertRaises(topology.TopologyError):
                topology.Topology(f.name)

    def test_cpus_that_do_not_split(self):
        with tempfile.NamedTemporaryFile("w", suffix=".topo") as f:
            f.write("cpus 3\nnode 0 cpus=0-1 mem=512M\nnode 1 cpus=2 mem=512M\n")
            f.flush()
            with self.assertRaises(topology.TopologyError):
                topology.Topology(f.name).qemu_args("ram", "/tmp")


if __name__ == "__main__":
    unittest.main()
