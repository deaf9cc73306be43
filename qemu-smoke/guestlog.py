"""Judge what a guest left behind: its KTAP results and its kernel console.

boot.py runs the guest in QEMU; everything that turns the two logs into the
row's verdict is here, without QEMU and without I/O (but for reading the
allow-list), so that tests/ can run it on recorded logs:

  parse_ktap(text)                    results, plan and skips of the KTAP output
  scan_console(text, expect_faults)   the first splat, or a broken fault window
  SkipRules(text)                     the skips a row may have (expected-skips)
  judge(console, ktap, ...)           the verdict (with expected=: the names the row
                                      must report, inventory.py)
  stale_int3(console)                 whether the console's oopses are all QEMU's
                                      stale translations of patched code
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

SPLATS = [
    "BUG:", "WARNING:", "Oops", "general protection fault", "KASAN:",
    "UBSAN:", "Kernel panic", "Call Trace:", "possible circular locking",
    "possible recursive locking", "inconsistent lock state",
    "Found insecure W+X mapping", "Checked W+X mappings: FAILED",
    "unreferenced object",
    # kmemleak turned itself off (mm/kmemleak.c): its scans then find
    # nothing, and a leak check that passes proves nothing.
    "kmemleak: Kernel memory leak detector disabled",
    "kmemleak: Memory pool empty",
    "kmemleak: Cannot allocate a kmemleak_object",
    "kmemleak: Kmemleak disabled without freeing",
]
DONE_MARK = "# ktv: tests done"
FAULT_BEGIN = "ktv: expect-fault begin "
FAULT_END = "ktv: expect-fault end "
RESULT = re.compile(r"^(ok|not ok) (\d+) (\S+)(.*)$")
PLAN = re.compile(r"^1\.\.(\d+)$")
SUBTEST = re.compile(r"^    # Subtest: (\S+)")

# The provoked fault: die()'s header line, "Oops: 0003 [#1] ..." (6.1),
# "Oops: Oops: 0003 [#1] ..." (6.12), "general protection fault, ...: 0000
# [#1]" (6.1); the lines that announce it; the line that ends it.
DIE_HEADER = re.compile(r": [0-9a-f]{4} \[#\d+\]")
FAULT_HEADERS = ("BUG: unable to handle page fault", "BUG: kernel NULL pointer dereference",
                 "general protection fault", "kernel tried to execute NX-protected page")
END_TRACE = "---[ end trace"
EXCERPT = 25

# QEMU's multi-threaded TCG can keep running a block it translated from
# code that another vCPU was patching, after the patch: the guest's
# memory holds the new bytes, and the vCPU still executes the int3 that
# text_poke_bp() wrote for the time of the patch, when no int3 handler
# knows it any more. die() then prints "Oops: int3: ..." and its Code:
# line, read from memory through the CPU's own page tables, shows no int3
# before RIP. Seen under QEMU 7.2 (the base kernel, 8 of 12 boots that
# switched ftrace on) and under 10.0 (once: series-v5, ftrace off,
# 2node under the meter). A kernel that left an int3 in a copy shows it
# in the Code: line, and is not taken for this.
INT3_OOPS = "Oops: int3: "
CODE_AT_RIP = re.compile(r"Code: (?:[0-9a-f]{2} )*([0-9a-f]{2}) <[0-9a-f]{2}>")
INT3_CONSEQUENCES = ("Call Trace:", "Kernel panic - not syncing: Fatal exception")


@dataclass
class Ktap:
    """The guest's KTAP output: subtest counts, names (SUITE.TEST) of the
    failed and skipped subtests and of every subtest reported, the
    top-level plan and result count."""
    counts: dict = field(default_factory=lambda: {"pass": 0, "fail": 0, "skip": 0})
    failed: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    reported: list = field(default_factory=list)
    plan: int | None = None
    results: int = 0
    errors: list = field(default_factory=list)


def parse_ktap(text):
    """Count the subtest results of the guest's KTAP output (a top-level
    result only counts when it fails without a failed subtest: a script
    that died). Subtest plans, where a script prints one, are checked."""
    k = Ktap()
    suite, sub_plan, sub_results = None, None, 0
    for raw in text.splitlines():
        line = raw.rstrip()
        m = SUBTEST.match(line)
        if m:
            suite, sub_plan, sub_results = m.group(1), None, 0
            continue
        nested = line.startswith("    ")
        m = PLAN.match(line.strip())
        if m:
            if nested:
                sub_plan = int(m.group(1))
            elif k.plan is None:
                k.plan = int(m.group(1))
            continue
        m = RESULT.match(line.strip())
        if not m:
            continue
        status, _, name, rest = m.groups()
        if not nested:
            k.results += 1
            if sub_plan is not None and sub_plan != sub_results:
                k.errors.append(f"{name}: plan 1..{sub_plan} but {sub_results} results")
            sub_plan = None
            if status == "not ok" and not any(f.startswith(f"{name}.") for f in k.failed):
                k.counts["fail"] += 1
                k.failed.append(name)
            continue
        sub_results += 1
        k.reported.append(f"{suite}.{name}")
        if "# SKIP" in rest:
            k.counts["skip"] += 1
            k.skipped.append(f"{suite}.{name}")
        elif status == "ok":
            k.counts["pass"] += 1
        else:
            k.counts["fail"] += 1
            k.failed.append(f"{suite}.{name}")
    return k


@dataclass
class Splat:
    """A console problem: its line (0-based), the verdict it gives, the lines to show."""
    line: int
    verdict: str
    excerpt: list


def is_splat(line):
    return any(s in line for s in SPLATS)


def scan_console(console, expect_faults=False):
    """The first splat of the console, or None. With expect_faults, the
    guest's expect-fault markers bracket a fault it provokes on purpose
    (and checks itself): in each window, one oops (its announcing lines,
    die()'s header and call trace up to its end-trace line) is allowed, and
    any other splat, a second oops included, counts. A window that is not
    closed, or an end without a begin, counts too."""
    lines = console.splitlines()
    found = []

    def splat(i, verdict):
        found.append(Splat(i, verdict, lines[i:i + EXCERPT]))

    window = None  # (name, line of its begin)
    oopses, in_oops = 0, False
    for i, line in enumerate(lines):
        if expect_faults and FAULT_BEGIN in line:
            name = line.split(FAULT_BEGIN, 1)[1].strip()
            if window:
                splat(i, f"BAD MARKERS: expect-fault begin {name} inside window {window[0]}")
            window, oopses, in_oops = (name, i), 0, False
        elif expect_faults and FAULT_END in line:
            name = line.split(FAULT_END, 1)[1].strip()
            if not window:
                splat(i, f"BAD MARKERS: expect-fault end {name} without a begin")
            elif name != window[0]:
                splat(i, f"BAD MARKERS: expect-fault end {name} in window {window[0]}")
            window = None
        elif window is None:
            if is_splat(line):
                splat(i, "SPLAT")
        elif DIE_HEADER.search(line):
            oopses += 1
            in_oops = True
            if oopses > 1:
                splat(i, f"SPLAT: a second oops in expect-fault window {window[0]}")
        elif END_TRACE in line and in_oops:
            in_oops = False
        elif any(h in line for h in FAULT_HEADERS) and (in_oops or not oopses):
            in_oops = True
        elif in_oops and "Call Trace:" in line:
            pass
        elif is_splat(line):
            splat(i, f"SPLAT in expect-fault window {window[0]}")
    if window:
        splat(window[1], f"BAD MARKERS: expect-fault begin {window[0]} without an end")
    return min(found, key=lambda s: s.line) if found else None


def glob_match(text, pattern):
    """fnmatch, where a pattern that starts with ! matches what the rest does not."""
    if pattern.startswith("!"):
        return not fnmatch.fnmatchcase(text, pattern[1:])
    return fnmatch.fnmatchcase(text, pattern)


class SkipRules:
    """The expected skips, one rule a line:
    LABEL-GLOB TOPOLOGY-GLOB SUITE.TEST  # reason (see expected-skips)."""

    def __init__(self, text, source="expected-skips"):
        self.rules = []
        for lineno, line in enumerate(text.splitlines(), 1):
            rule, _, reason = line.partition("#")
            words = rule.split()
            if not words:
                continue
            if len(words) != 3 or "." not in words[2] or not reason.strip():
                raise ValueError(f"{source}:{lineno}: want 'LABEL-GLOB TOPOLOGY-GLOB "
                                 f"SUITE.TEST  # reason', got: {line.strip()}")
            self.rules.append(tuple(words))

    def allows(self, label, topo, test):
        return any(glob_match(label, lg) and glob_match(topo, tg) and fnmatch.fnmatchcase(test, t)
                   for lg, tg, t in self.rules)

    def unexpected(self, label, topo, skipped):
        return [t for t in skipped if not self.allows(label, topo, t)]


def stale_int3(console):
    """Whether the console's splats are only int3 oopses whose Code: line
    shows memory without the int3 (and what follows from them): QEMU's
    stale translation of patched code, not the kernel's text (see
    INT3_OOPS)."""
    lines = console.splitlines()
    headers = [i for i, line in enumerate(lines) if INT3_OOPS in line]
    if not headers:
        return False
    for line in lines:
        if is_splat(line) and INT3_OOPS not in line and \
                not any(c in line for c in INT3_CONSEQUENCES):
            return False
    for i in headers:
        code = next((m for m in map(CODE_AT_RIP.search, lines[i + 1:]) if m), None)
        if code is None or code.group(1) == "cc":
            return False
    return True


@dataclass
class Judgement:
    verdict: str
    ktap: Ktap
    splat: Splat | None
    unexpected_skips: list
    missing: list = field(default_factory=list)
    unlisted: list = field(default_factory=list)


def names_list(names, most=12):
    """Sorted names, comma-separated, at most MOST of them."""
    names = sorted(names)
    more = f" (and {len(names) - most} more)" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def judge(console, ktap_text, *, label, topo, rules, expect_faults=False, qemu_verdict=None,
          expected=None):
    """The row's verdict: qemu_verdict (QEMU failed or timed out), PANIC,
    SPLAT (or BAD MARKERS), CUT SHORT (no done marker), NO TESTS, FAIL: the
    reasons (failed tests, a wrong plan, unexpected skips, no pass, and,
    with EXPECTED (the set of SUITE.TEST names of the row's inventory), a
    name missing from the results or one the inventory does not list), or
    ok."""
    k = parse_ktap(ktap_text)
    missing = sorted(set(expected) - set(k.reported)) if expected is not None else []
    unlisted = sorted(set(k.reported) - set(expected)) if expected is not None else []
    splat = scan_console(console, expect_faults)
    unexpected = rules.unexpected(label, topo, k.skipped)
    if qemu_verdict:
        verdict = qemu_verdict
    elif "Kernel panic" in console:
        verdict = "PANIC"
    elif splat:
        verdict = splat.verdict
    elif DONE_MARK not in ktap_text:
        verdict = "CUT SHORT: the guest stopped before its tests finished"
    elif not sum(k.counts.values()):
        verdict = "NO TESTS: the guest ran no test"
    else:
        reasons = [", ".join(k.failed)] if k.failed else []
        if k.plan is None:
            reasons.append("no plan line (1..N)")
        elif k.plan != k.results:
            reasons.append(f"plan 1..{k.plan} but {k.results} top-level results")
        reasons += k.errors
        if unexpected:
            reasons.append("unexpected skip: " + ", ".join(unexpected))
        if missing:
            reasons.append(f"missing {len(missing)} of the inventory's tests: "
                           + names_list(missing))
        if unlisted:
            reasons.append(f"{len(unlisted)} tests not in the inventory: "
                           + names_list(unlisted))
        if not k.counts["pass"]:
            if k.counts["skip"] and not k.counts["fail"]:
                reasons.append(f"all {k.counts['skip']} tests skipped")
            else:
                reasons.append("no test passed")
        verdict = "FAIL: " + "; ".join(reasons) if reasons else "ok"
    return Judgement(verdict, k, splat, unexpected, missing, unlisted)
