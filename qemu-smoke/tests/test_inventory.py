"""inventory.py: the tests a row must report, and judge() failing a row
that misses one or reports one the inventory does not list."""

import os
import unittest

from guestlog import SkipRules, judge
from inventory import Facts, Inventory, facts_for, read_expect, rev_number

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def data(name):
    with open(os.path.join(HERE, "data", name), encoding="utf-8") as f:
        return f.read()


def facts(**kw):
    base = dict(base="6.12", rev=3, config="smoke", label="6.12-v3-smoke", repl=True, nodes=2,
                cpunode_ids=[0, 1], memnodes=2, dimms=False,
                kconfig={"KERNEL_REPLICATION": "y", "MITIGATION_PAGE_TABLE_ISOLATION": "y"},
                words={}, features={"module_copies", "kunit"})
    base.update(kw)
    return Facts(**base)


SMALL = """
[tests]
10-boot.nodes_as_in_topology   True
10-boot.pti_enabled            pti
20-verifier.text_local         repl and nodes > 1   # a comment
17-mm-pgds.node_pgds           node_pgds
[protect]
10-protect.node{n}_WRITE_RO    True
[selftest]
ktv-fail.injected_failure      True
"""


class Parse(unittest.TestCase):
    def test_unknown_fact(self):
        with self.assertRaisesRegex(ValueError, "unknown fact 'nodez'"):
            Inventory("[tests]\n10-boot.x  nodez > 1\n")

    def test_only_y_and_arg_may_be_called(self):
        with self.assertRaisesRegex(ValueError, "only y"):
            Inventory("[tests]\n10-boot.x  len(config) > 1\n")

    def test_no_attributes(self):
        with self.assertRaisesRegex(ValueError, "Attribute not allowed"):
            Inventory("[tests]\n10-boot.x  config.upper\n")

    def test_unknown_suite(self):
        with self.assertRaisesRegex(ValueError, "unknown suite"):
            Inventory("[testz]\n10-boot.x  True\n")

    def test_no_condition(self):
        with self.assertRaisesRegex(ValueError, "want 'SCRIPT.TEST EXPRESSION'"):
            Inventory("[tests]\n10-boot.x\n")

    def test_rev_number(self):
        self.assertEqual((rev_number("v4"), rev_number("base")), (4, 0))
        self.assertEqual(rev_number("v5.2"), 5)
        with self.assertRaises(ValueError):
            rev_number("4")


class Expected(unittest.TestCase):
    inv = Inventory(SMALL)

    def test_conditions(self):
        self.assertEqual(self.inv.expected(facts()),
                         {"10-boot.nodes_as_in_topology", "10-boot.pti_enabled",
                          "20-verifier.text_local"})
        self.assertEqual(self.inv.expected(facts(repl=False, words={"pti": "off"})),
                         {"10-boot.nodes_as_in_topology"})
        self.assertIn("17-mm-pgds.node_pgds",
                      self.inv.expected(facts(rev=4, features={"node_pgds"})))

    def test_nodes_with_cpus(self):
        got = self.inv.expected(facts(words={"ktv_suite": "protect"}, cpunode_ids=[0, 2]))
        self.assertEqual(got, {"10-protect.node0_WRITE_RO", "10-protect.node2_WRITE_RO"})

    def test_only(self):
        got = self.inv.expected(facts(words={"ktv_only": "20-verifier"}))
        self.assertEqual(got, {"20-verifier.text_local"})
        # A name of no script of the suite: init runs it whole.
        got = self.inv.expected(facts(words={"ktv_suite": "protect", "ktv_only": "20-verifier"}))
        self.assertEqual(got, {"10-protect.node0_WRITE_RO", "10-protect.node1_WRITE_RO"})

    def test_inject_fail(self):
        got = self.inv.expected(facts(words={"ktv_inject": "fail"}))
        self.assertEqual(got, {"10-boot.nodes_as_in_topology", "10-boot.pti_enabled",
                               "ktv-fail.injected_failure"})


class Judge(unittest.TestCase):
    ktap = ("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: 10-boot\n"
            "    ok 1 nodes_as_in_topology\n    ok 2 pti_enabled\nok 1 10-boot\n"
            "# ktv: tests done\n")
    rules = SkipRules("")

    def test_all_there(self):
        j = judge("", self.ktap, label="x", topo="2node", rules=self.rules,
                  expected={"10-boot.nodes_as_in_topology", "10-boot.pti_enabled"})
        self.assertEqual(j.verdict, "ok")

    def test_missing(self):
        j = judge("", self.ktap, label="x", topo="2node", rules=self.rules,
                  expected={"10-boot.nodes_as_in_topology", "10-boot.pti_enabled",
                            "10-boot.kaslr_active"})
        self.assertEqual(j.verdict, "FAIL: missing 1 of the inventory's tests: 10-boot.kaslr_active")

    def test_unlisted(self):
        j = judge("", self.ktap, label="x", topo="2node", rules=self.rules,
                  expected={"10-boot.nodes_as_in_topology"})
        self.assertEqual(j.verdict, "FAIL: 1 tests not in the inventory: 10-boot.pti_enabled")

    def test_without_inventory(self):
        j = judge("", self.ktap, label="x", topo="2node", rules=self.rules)
        self.assertEqual(j.verdict, "ok")


class RecordedRun(unittest.TestCase):
    """The audit's two edited logs (test-audit-2, 2.2), on a real run of
    series-v3 on 2node (make check, 2026-12-07, this inventory): with every
    locality and byte-identity result deleted, or every node-1 result of
    the protection suite, the verdict was ok; now each deleted name is
    missing."""

    inv = Inventory(open(os.path.join(ROOT, "qemu-smoke", "expected-tests"),
                         encoding="utf-8").read())
    rules = SkipRules(open(os.path.join(ROOT, "qemu-smoke", "expected-skips"),
                           encoding="utf-8").read())

    def row(self, stem, suite_words):
        class Topo:  # the 2node topology's facts
            nodes = [(0, "0-1", 1), (1, "2-3", 1)]
            cpus = 4
            dimms = []

            @staticmethod
            def cpunodes():
                return "0:0:1:1"

            @staticmethod
            def memnodes():
                return "0,1"
        f = facts_for(base="6.12", rev="v3", config="smoke", label="6.12-v3-smoke", topo=Topo,
                      cmdline="pti=on ktv_expect=1 ktv_activation_test=1 " + suite_words,
                      expect_repl=True, kconfig_text=data("real-v3-smoke.config"),
                      expect_file=os.path.join(ROOT, "series-v3", "expect"))
        return self.inv.expected(f), data(f"{stem}.console"), data(f"{stem}.ktap")

    def judge(self, stem, words, drop=None, prot=False):
        expected, console, ktap = self.row(stem, words)
        if drop:
            ktap = "\n".join(line for line in ktap.splitlines() if not drop(line))
        return judge(console, ktap, label="6.12-v3-smoke", topo="2node" + ("/prot" if prot else ""),
                     rules=self.rules, expect_faults=prot, expected=expected)

    def test_recorded_run_ok(self):
        self.assertEqual(self.judge("real-v3-2node-inv", "").verdict, "ok")
        self.assertEqual(self.judge("real-v3-2node-prot-inv", "ktv_suite=protect",
                                    prot=True).verdict, "ok")

    def test_locality_and_identity_results_deleted(self):
        pattern = ("text_local_on_every_cpu", "local_after_", "identical_after_",
                   "copies_identical")
        j = self.judge("real-v3-2node-inv", "",
                       drop=lambda line: line.startswith("    ") and any(p in line for p in pattern))
        self.assertTrue(j.verdict.startswith("FAIL: missing"), j.verdict)
        self.assertIn("20-verifier.text_local_on_every_cpu", j.missing)
        self.assertIn("30-patching.identical_after_optprobe", j.missing)
        self.assertGreaterEqual(len(j.missing), 20)
        self.assertTrue(all(any(p in m for p in pattern) for m in j.missing), j.missing)

    def test_node1_protection_results_deleted(self):
        j = self.judge("real-v3-2node-prot-inv", "ktv_suite=protect", prot=True,
                       drop=lambda line: " node1_" in line)
        self.assertTrue(j.verdict.startswith("FAIL: missing"), j.verdict)
        self.assertTrue(j.missing and all(m.startswith("10-protect.node1_") for m in j.missing),
                        j.missing)
        self.assertIn("10-protect.node1_WRITE_RO", j.missing)


class Files(unittest.TestCase):
    """The repository's own inventory and revisions' expectations."""

    def test_expected_tests_parses(self):
        with open(os.path.join(ROOT, "qemu-smoke", "expected-tests"),
                  encoding="utf-8") as f:
            self.assertTrue(Inventory(f.read()).rules)

    def test_every_revision_has_its_expectations(self):
        for root in (ROOT, os.path.join(ROOT, "backports", "6.1")):
            for d in sorted(os.listdir(root)):
                if d.startswith("series-v"):
                    files = [f for f in os.listdir(os.path.join(root, d))
                             if f == "expect" or f.startswith("expect.")]
                    self.assertIn("expect", files)
                    for name in files:
                        with self.subTest(revision=os.path.join(root, d, name)):
                            e = read_expect(os.path.join(root, d, name))
                            self.assertIn("features", e)
                            # The meter's bounds, for a revision that replicates.
                            if "image" in e["features"]:
                                for key in ("meter_far_max_remote", "meter_image_max_remote"):
                                    self.assertLess(float(e[key][0]), 0.05)

    def test_facts_for(self):
        class Topo:  # pylint: disable=too-few-public-methods
            nodes = [(0, "0-1", 512), (1, "", 512)]
            cpus = 2
            dimms = []

            @staticmethod
            def cpunodes():
                return "0:0"

            @staticmethod
            def memnodes():
                return "0,1"
        f = facts_for(base="6.12", rev="v4", config="smoke", label="l", topo=Topo,
                      cmdline="pti=on ktv_suite=protect pti=off", expect_repl=True,
                      kconfig_text="CONFIG_KERNEL_REPLICATION=y\n# CONFIG_NET is not set\n",
                      expect_file=os.path.join(ROOT, "series-v4", "expect"))
        ns = f.namespace()
        self.assertEqual((ns["rev"], ns["cpunodes"], ns["memnodes"], ns["suite"], ns["pti"]),
                         (4, 1, 2, "protect", False))
        self.assertTrue(ns["built"] and ns["node_pgds"] and not ns["y"]("NET"))


if __name__ == "__main__":
    unittest.main()
