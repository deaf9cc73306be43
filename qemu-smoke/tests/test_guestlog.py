"""guestlog on recorded guest logs, without QEMU.

The logs in data/ have the guest's KTAP format (guest/init, guest/lib/ktap.sh)
and the kernel's console messages; each case names the file it reads.
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.dirname(HERE)
sys.path.insert(0, SMOKE)

from guestlog import SkipRules, judge, parse_ktap, scan_console, stale_int3  # noqa: E402


def data(name):
    with open(os.path.join(HERE, "data", name), encoding="utf-8") as f:
        return f.read()


with open(os.path.join(SMOKE, "expected-skips"), encoding="utf-8") as _f:
    RULES = SkipRules(_f.read())


def verdict(console, ktap, label="6.12-v3-smoke", topo="2node", **kw):
    return judge(data(console), data(ktap), label=label, topo=topo, rules=RULES, **kw)


class ParseKtap(unittest.TestCase):
    def test_counts_names_plan(self):
        k = parse_ktap(data("smoke-2node.ktap"))
        self.assertEqual(k.counts, {"pass": 56, "fail": 0, "skip": 2})
        self.assertEqual(k.skipped, ["16-degraded.degraded_boot", "90-kmemleak.no_leaks"])
        self.assertEqual((k.plan, k.results), (7, 7))

    def test_failed_subtest_named_once(self):
        k = parse_ktap(data("inject-fail.ktap"))
        self.assertEqual(k.failed, ["ktv-fail.injected_failure"])
        self.assertEqual(k.counts["fail"], 1)
        self.assertEqual((k.plan, k.results), (7, 2))

    def test_script_that_died(self):
        k = parse_ktap("KTAP version 1\n1..1\n    # Subtest: 20-verifier\n"
                       "    # 20-verifier reported no results\nnot ok 1 20-verifier\n")
        self.assertEqual(k.failed, ["20-verifier"])

    def test_subtest_plan(self):
        k = parse_ktap("1..1\n    # Subtest: a\n    1..2\n    ok 1 x\nok 1 a\n")
        self.assertEqual(k.errors, ["a: plan 1..2 but 1 results"])
        k = parse_ktap("1..1\n    # Subtest: a\n    1..1\n    ok 1 x\nok 1 a\n")
        self.assertEqual(k.errors, [])


class ScanConsole(unittest.TestCase):
    def test_clean(self):
        self.assertIsNone(scan_console(data("smoke-2node.console")))

    def test_provoked_faults_accepted(self):
        self.assertIsNone(scan_console(data("protect-2node.console"), expect_faults=True))

    def test_markers_ignored_without_expect_faults(self):
        s = scan_console(data("protect-2node.console"))
        self.assertEqual(s.verdict, "SPLAT")
        self.assertIn("BUG: unable to handle page fault", s.excerpt[0])

    def test_kasan_in_window(self):
        s = scan_console(data("protect-kasan.console"), expect_faults=True)
        self.assertEqual(s.verdict, "SPLAT in expect-fault window node0_WRITE_RO")
        self.assertIn("BUG: KASAN: slab-out-of-bounds", s.excerpt[0])

    def test_second_oops_in_window(self):
        s = scan_console(data("protect-second-oops.console"), expect_faults=True)
        self.assertEqual(s.verdict, "SPLAT in expect-fault window node0_WRITE_RO")
        self.assertIn("BUG: kernel NULL pointer dereference", s.excerpt[0])

    def test_second_die_header_in_oops(self):
        console = ("ktv: expect-fault begin t\nBUG: unable to handle page fault for address: 1\n"
                   "Oops: Oops: 0003 [#1] SMP PTI\nOops: Oops: 0000 [#2] SMP PTI\n"
                   "---[ end trace 0000000000000000 ]---\nktv: expect-fault end t\n")
        s = scan_console(console, expect_faults=True)
        self.assertEqual(s.verdict, "SPLAT: a second oops in expect-fault window t")

    def test_warning_inside_the_oops(self):
        console = ("ktv: expect-fault begin t\nOops: 0003 [#1] PREEMPT SMP PTI\nCall Trace:\n"
                   "WARNING: CPU: 0 PID: 1 at kernel/exit.c:886 do_exit+0x8b/0xb10\n"
                   "---[ end trace 0000000000000000 ]---\nktv: expect-fault end t\n")
        s = scan_console(console, expect_faults=True)
        self.assertEqual(s.verdict, "SPLAT in expect-fault window t")
        self.assertIn("WARNING:", s.excerpt[0])

    def test_begin_without_end(self):
        s = scan_console(data("protect-unbalanced.console"), expect_faults=True)
        self.assertEqual(s.verdict, "BAD MARKERS: expect-fault begin node1_alias_text without an end")

    def test_end_without_begin(self):
        s = scan_console("[ 1.0] ktv: expect-fault end t\n", expect_faults=True)
        self.assertEqual(s.verdict, "BAD MARKERS: expect-fault end t without a begin")

    def test_begin_inside_window(self):
        console = "ktv: expect-fault begin a\nktv: expect-fault begin b\nktv: expect-fault end b\n"
        s = scan_console(console, expect_faults=True)
        self.assertEqual(s.verdict, "BAD MARKERS: expect-fault begin b inside window a")

    def test_splat_after_window(self):
        console = data("protect-2node.console") + "[    5.0] WARNING: CPU: 1 PID: 9 at mm/x.c:1 f\n"
        s = scan_console(console, expect_faults=True)
        self.assertEqual(s.verdict, "SPLAT")

    def test_kmemleak_disabled(self):
        s = scan_console(data("kmemleak-off.console"))
        self.assertIn("kmemleak: Memory pool empty", s.excerpt[0])


class Judge(unittest.TestCase):
    def test_clean_pass(self):
        self.assertEqual(verdict("smoke-2node.console", "smoke-2node.ktap").verdict, "ok")

    def test_panic(self):
        self.assertEqual(verdict("panic.console", "panic.ktap", topo="1node").verdict, "PANIC")

    def test_hang(self):
        j = verdict("stopped.console", "stopped.ktap", qemu_verdict="HUNG: no power-off within 30 s")
        self.assertEqual(j.verdict, "HUNG: no power-off within 30 s")

    def test_cut_short(self):
        j = verdict("stopped.console", "stopped.ktap")
        self.assertTrue(j.verdict.startswith("CUT SHORT"), j.verdict)

    def test_no_tests(self):
        j = judge("", "KTAP version 1\n1..0\n# ktv: tests done\n", label="x", topo="2node", rules=RULES)
        self.assertTrue(j.verdict.startswith("NO TESTS"), j.verdict)

    def test_provoked_faults_accepted(self):
        j = verdict("protect-2node.console", "protect-2node.ktap", topo="2node/prot",
                    expect_faults=True)
        self.assertEqual(j.verdict, "ok")

    def test_kasan_in_window_rejected(self):
        j = verdict("protect-kasan.console", "protect-2node.ktap", topo="2node/prot",
                    expect_faults=True)
        self.assertEqual(j.verdict, "SPLAT in expect-fault window node0_WRITE_RO")

    def test_unbalanced_marker(self):
        j = verdict("protect-unbalanced.console", "protect-2node.ktap", topo="2node/prot",
                    expect_faults=True)
        self.assertTrue(j.verdict.startswith("BAD MARKERS"), j.verdict)

    def test_unexpected_skip(self):
        j = verdict("smoke-2node.console", "unexpected-skip.ktap")
        self.assertEqual(j.verdict, "FAIL: unexpected skip: 30-patching.identical_after_bpf_jit")
        self.assertEqual(j.unexpected_skips, ["30-patching.identical_after_bpf_jit"])

    def test_allowed_skip(self):
        j = verdict("smoke-2node.console", "smoke-2node-6.1.ktap", label="6.1-v1-smoke")
        self.assertEqual(j.verdict, "ok")
        j = verdict("smoke-2node.console", "smoke-2node-6.1.ktap", label="6.12-v3-smoke")
        self.assertEqual(j.verdict, "FAIL: unexpected skip: 35-faults.module_copy_fault")

    def test_skip_unexpected_on_a_fault_boot(self):
        j = verdict("smoke-2node.console", "smoke-2node.ktap", label="6.12-v3-debug-fault-partial")
        self.assertEqual(j.verdict, "FAIL: unexpected skip: 16-degraded.degraded_boot, "
                                    "90-kmemleak.no_leaks")

    def test_all_skip(self):
        j = verdict("smoke-2node.console", "all-skip.ktap")
        self.assertEqual(j.verdict, "FAIL: all 2 tests skipped")

    def test_all_skip_protect_without_lkdtm(self):
        j = verdict("protect-2node.console", "protect-no-lkdtm.ktap", topo="2node/prot",
                    expect_faults=True)
        self.assertEqual(j.verdict, "FAIL: unexpected skip: 10-protect.lkdtm; all 1 tests skipped")

    def test_no_pass(self):
        j = judge("", "1..1\n    # Subtest: a\n    not ok 1 x\nnot ok 1 a\n# ktv: tests done\n",
                  label="x", topo="2node", rules=RULES)
        self.assertEqual(j.verdict, "FAIL: a.x; no test passed")

    def test_plan_mismatch(self):
        # ktv_inject=fail: the failed test first, as harness-selftest.sh expects.
        j = verdict("smoke-2node.console", "inject-fail.ktap", label="inject-fail", topo="1node")
        self.assertEqual(j.verdict, "FAIL: ktv-fail.injected_failure; plan 1..7 but 2 top-level results")

    def test_no_plan(self):
        ktap = "".join(l for l in data("smoke-2node.ktap").splitlines(True) if l != "1..7\n")
        j = judge(data("smoke-2node.console"), ktap, label="6.12-v3-smoke", topo="2node", rules=RULES)
        self.assertEqual(j.verdict, "FAIL: no plan line (1..N)")

    def test_kmemleak_disabled(self):
        # The guest's scan "passed"; the console says kmemleak was off.
        j = verdict("kmemleak-off.console", "debug-2node.ktap", label="6.12-v3-debug")
        self.assertEqual(j.verdict, "SPLAT")


class ExpectedSkips(unittest.TestCase):
    """The allow-list file against what each kind of boot may skip."""

    CASES = [  # label, topology, test, allowed
        ("6.12-v3-smoke", "2node", "16-degraded.degraded_boot", True),
        ("6.12-v3-debug", "la57", "16-degraded.degraded_boot", True),
        ("6.12-v3-debug-fault-nocopy", "2node", "16-degraded.degraded_boot", False),
        ("6.12-v3-smoke", "2node", "35-faults.module_copy_fault", False),
        ("6.12-v3-smoke-nopti", "memoryless", "35-faults.module_copy_fault", False),
        ("6.12-v3-debug", "2node", "35-faults.module_copy_fault", False),
        ("6.12-v3-smoke", "1node", "35-faults.module_copy_fault", True),
        ("6.12-v3-smoke-off", "4node", "35-faults.module_copy_fault", True),
        ("6.12-v3-replication-off", "2node", "35-faults.module_copy_fault", True),
        ("6.12-base-smoke", "2node", "35-faults.module_copy_fault", True),
        ("6.1-v1-smoke", "2node", "35-faults.module_copy_fault", True),
        ("6.1-v1-debug", "2node", "35-faults.module_copy_fault", True),
        ("6.12-v3-debug-fault-nocopy", "2node", "35-faults.module_copy_fault", True),
        ("6.12-v3-debug-fault-partial", "4node-near", "35-faults.module_copy_fault", False),
        ("meter 6.12-base", "2node", "35-faults.module_copy_fault", True),
        ("6.12-v3-smoke", "2node", "90-kmemleak.no_leaks", True),
        ("6.12-v3-replication-off", "2node", "90-kmemleak.no_leaks", True),
        ("6.12-v3-debug", "2node", "90-kmemleak.no_leaks", False),
        ("6.1-v1-debug", "2node", "90-kmemleak.no_leaks", False),
        ("6.12-v3-debug-fault-nocopy", "2node", "90-kmemleak.no_leaks", False),
        ("6.12-v3-smoke", "2node", "30-patching.identical_after_bpf_jit", False),
        ("6.12-v3-smoke", "2node", "15-status.replication_status", False),
        ("6.12-v3-smoke", "2node", "20-verifier.text_local_on_every_cpu", False),
        ("6.12-v3-smoke", "2node/prot", "10-protect.lkdtm", False),
        ("6.12-v3-debug", "2node", "10-stress.no_leaks_after_stress", False),
        ("6.12-v3-smoke", "2node", "10-stress.no_leaks_after_stress", True),
        ("series", "1node", "10-kbench.kbench", True),
        ("series", "2node", "10-kbench.kbench", False),
        ("base", "2node", "10-kbench.replication_status", True),
        ("series-off", "2node", "10-kbench.replication_status", False),
        ("series", "2node", "10-kbench.ftrace_timing", False),
        # series-v4's labels: the JIT limit's sysctl is there (CONFIG_NET)
        # on the distro rows only; 05-fuzz skips only where nothing fuzzes.
        ("6.12-v4-smoke", "2node", "32-code-copies.jit_limit_pins_as_one_copy", True),
        ("6.12-v4-debug", "4node", "32-code-copies.jit_limit_pins_as_one_copy", True),
        ("6.12-v4-distro", "2node", "32-code-copies.jit_limit_pins_as_one_copy", False),
        ("6.12-v4-distro-default-off", "2node", "32-code-copies.jit_limit_pins_as_one_copy",
         False),
        ("6.12-v4-debug", "2node", "05-fuzz.fuzz", True),
        ("6.12-v4-debug-fuzz", "4node", "05-fuzz.fuzz", False),
        ("6.12-v4-smoke-fuzz", "2node", "05-fuzz.fuzz", False),
        ("6.12-v4-smoke", "4node", "17-mm-pgds.node_pgds", False),
        ("6.12-v4-distro-default-off", "2node", "17-mm-pgds.node_pgds", True),
        ("6.12-v4-debug-fault-partial", "4node-near", "40-kunit.kunit_krepl_kunit_highmap_alias",
         True),
        ("6.12-v4-smoke", "2node", "40-kunit.kunit_krepl_kunit_user_window", False),
        ("6.12-v4-smoke-pti-off", "2node", "40-kunit.kunit_krepl_kunit_user_window", True),
    ]

    def test_cases(self):
        for label, topo, test, allowed in self.CASES:
            with self.subTest(label=label, topo=topo, test=test):
                self.assertEqual(RULES.allows(label, topo, test), allowed)

    def test_reason_required(self):
        with self.assertRaises(ValueError):
            SkipRules("* * 16-degraded.degraded_boot\n")
        with self.assertRaises(ValueError):
            SkipRules("* 16-degraded.degraded_boot  # two words\n")


class RecordedRuns(unittest.TestCase):
    """Real logs: series-v2 booted with the v3 harness on 'straddle' (the
    image across a node boundary), whose node-0 CPUs run 1024 pages of
    the kernel from node 1: every locality test must fail."""

    def test_v2_straddle_fails_locality(self):
        j = verdict("real-v2-straddle.console", "real-v2-straddle.ktap",
                    label="6.12-v2-smoke", topo="straddle")
        self.assertTrue(j.verdict.startswith("FAIL"), j.verdict)
        for name in ("20-verifier.text_local_on_every_cpu", "30-patching.local_after_ftrace_on",
                     "30-patching.local_after_module_reload"):
            self.assertIn(name, j.verdict)
        self.assertNotIn("image_across_nodes_as_in_topology", j.verdict)

    def test_v2_activation_loses_mappings(self):
        """series-v2 with v3's boot-time activation test applied on top, on
        4 nodes: mappings made while the copies were made are missing on
        some node (review A1), and v2's padded rodata and stale high-map
        alias fail too."""
        j = verdict("real-v2-acttest-4node.console", "real-v2-acttest-4node.ktap",
                    label="6.12-v2-smoke", topo="4node")
        self.assertTrue(j.verdict.startswith("FAIL"), j.verdict)
        for name in ("15-status.activation_keeps_every_mapping", "10-boot.rodata_not_padded",
                     "20-verifier.highmap_alias_follows_cpa"):
            self.assertIn(name, j.verdict)

    def test_v3_2node_ok(self):
        j = verdict("real-v3-2node.console", "real-v3-2node.ktap", label="6.12-v3-smoke")
        self.assertEqual(j.verdict, "ok")
        self.assertEqual(j.ktap.skipped, ["16-degraded.degraded_boot", "90-kmemleak.no_leaks"])

    def test_v3_protect_real_oopses_accepted(self):
        j = verdict("real-v3-2node-prot.console", "real-v3-2node-prot.ktap",
                    label="6.12-v3-smoke", topo="2node/prot", expect_faults=True)
        self.assertEqual(j.verdict, "ok")

    def test_v3_protect_real_oopses_outside_windows(self):
        # Without the markers' meaning, the same console is a splat.
        j = verdict("real-v3-2node-prot.console", "real-v3-2node-prot.ktap",
                    label="6.12-v3-smoke", topo="2node/prot")
        self.assertTrue(j.verdict.startswith("SPLAT"), j.verdict)

    def test_v3_protect_kasan_inside_a_real_window(self):
        console = data("real-v3-2node-prot.console").splitlines()
        at = next(i for i, line in enumerate(console) if "Oops" in line)
        console.insert(at + 1, "[   9.9] BUG: KASAN: slab-out-of-bounds in krepl_copy+0x1/0x2")
        j = judge("\n".join(console), data("real-v3-2node-prot.ktap"), label="6.12-v3-smoke",
                  topo="2node/prot", rules=RULES, expect_faults=True)
        self.assertTrue(j.verdict.startswith("SPLAT in expect-fault window"), j.verdict)


class StaleInt3(unittest.TestCase):
    """QEMU's multi-threaded TCG running an int3 that memory no longer holds
    (guestlog.INT3_OOPS); the console is series-v5's under the meter, 2node."""
    REAL = "real-v5-mttcg-stale-int3.console"

    def test_recorded_boot_is_stale_int3(self):
        self.assertTrue(stale_int3(data(self.REAL)))

    def test_int3_left_in_memory_is_the_kernels(self):
        console = data(self.REAL).replace("90 0f <1f> 44", "90 cc <1f> 44")
        self.assertFalse(stale_int3(console))

    def test_another_splat_is_not_forgiven(self):
        console = data(self.REAL).replace("Oops: int3: 0000 [#2]",
                                          "WARNING: CPU: 2 at kernel/x.c:1 f+0x1/0x2\n"
                                          "Oops: int3: 0000 [#2]")
        self.assertFalse(stale_int3(console))

    def test_other_oops_and_clean_consoles(self):
        self.assertFalse(stale_int3(data("protect-2node.console")))
        self.assertFalse(stale_int3(data("smoke-2node.console")))
        self.assertFalse(stale_int3(data(self.REAL).replace("Code: ", "Cod: ")))


if __name__ == "__main__":
    unittest.main()
