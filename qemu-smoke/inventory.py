"""The tests a boot row must report: qemu-smoke/expected-tests.

Each line of that file names one SUITE.TEST that a guest script prints and
the condition under which it must print it, a Python expression over the
row's facts (what the host knows before booting: the revision and the
features its series-vN/expect declares, the build's .config, the
topology, the row's kernel parameters). judge() (guestlog.py) fails a row
that misses a name the inventory wants, or reports one it does not.

  Facts(...)                  the facts of one row
  Inventory(text)             the parsed file (every expression checked)
  Inventory.expected(facts)   the set of SUITE.TEST names the row must report
  read_expect(path)           a revision's series-vN/expect as a dict
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# The names an expression may use. Everything else is an error when the
# file is read, so that a typo cannot make a condition always false.
FACT_NAMES = {"base", "rev", "config", "label", "suite", "built", "default_off", "repl", "nodes",
              "cpunodes", "memnodes", "dimms", "pti", "pti_built", "y", "arg",
              "True", "False", "None"}
# The features a series-vN/expect may declare (qemu-smoke/matrix/README.md).
FEATURES = {"image", "status", "module_copies", "kunit", "node_pgds", "user_window", "code_copies", "jit_limit",
            "lazy_pgds", "far_copy", "share_distance", "table_pools", "node_user_wx",
            "pgd_worker"}
SUITES = {"tests", "protect", "stress", "bench", "meter", "selftest"}
ALLOWED_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not,
                 ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
                 ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.Name, ast.Load,
                 ast.Constant, ast.Call, ast.Tuple)
NAME = re.compile(r"^[0-9A-Za-z_-]+\.[0-9A-Za-z_{}-]+$")


def read_expect(path):
    """series-vN/expect: {KEY: [VALUE, ...]}; {} without a path."""
    out = {}
    if not path:
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                out[words[0]] = words[1:]
    return out


def read_kconfig(text):
    """CONFIG_X=value lines of a .config: {X: value}; "n" for the lines
    '# CONFIG_X is not set' (a symbol that exists and is off)."""
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(r"# CONFIG_(\w+) is not set", line)
        if m:
            out[m.group(1)] = "n"
        elif line.startswith("CONFIG_") and "=" in line:
            key, _, value = line[len("CONFIG_"):].partition("=")
            out[key] = value
    return out


def parse_words(cmdline):
    """Kernel parameters as the kernel reads them: {word: value}, the last
    one winning, "" for a word without '='."""
    out = {}
    for word in cmdline.split():
        key, eq, value = word.partition("=")
        out[key] = value if eq else ""
    return out


@dataclass
class Facts:
    """What the host knows of a row before it boots."""
    base: str
    rev: int                      # 0: the base kernel, without the series
    config: str
    label: str
    repl: bool                    # the row asserts replication (ktv_expect=1)
    nodes: int
    cpunode_ids: list             # the nodes with CPUs
    memnodes: int
    dimms: bool
    kconfig: dict = field(default_factory=dict)
    words: dict = field(default_factory=dict)
    features: set = field(default_factory=set)

    @property
    def suite(self):
        return self.words.get("ktv_suite") or "tests"

    def namespace(self):
        pti_built = self.y("PAGE_TABLE_ISOLATION") or self.y("MITIGATION_PAGE_TABLE_ISOLATION")
        ns = {"base": self.base, "rev": self.rev, "config": self.config, "label": self.label,
              "suite": self.suite, "built": self.y("KERNEL_REPLICATION"), "repl": self.repl,
              # replicates only when asked (Debian's configuration); v1,
              # v2 and 6.1 have no such option: they replicate by default
              "default_off": self.y("KERNEL_REPLICATION")
              and self.kconfig.get("KERNEL_REPLICATION_DEFAULT_ON") == "n",
              "nodes": self.nodes, "cpunodes": len(self.cpunode_ids),
              "memnodes": self.memnodes, "dimms": self.dimms, "pti_built": pti_built,
              "pti": pti_built and self.words.get("pti") != "off",
              "y": self.y, "arg": self.words.get, "True": True, "False": False, "None": None}
        ns.update({f: f in self.features for f in FEATURES})
        return ns

    def y(self, symbol):
        return self.kconfig.get(symbol) in ("y", "m")


def rev_number(rev):
    """'v4' -> 4, 'v5.2' (parts 1 to 2 of v5) -> 5, 'base' -> 0."""
    if rev == "base":
        return 0
    m = re.fullmatch(r"v(\d+)(\.\d+)?", rev)
    if not m:
        raise ValueError(f"bad revision '{rev}': want vN, vN.P or base")
    return int(m.group(1))


def facts_for(*, base, rev, config, label, topo, cmdline, expect_repl, kconfig_text,
              expect_file):
    """The Facts of a row, from boot.py's inputs."""
    expect = read_expect(expect_file)
    features = set(expect.get("features", []))
    unknown = features - FEATURES
    if unknown:
        raise ValueError(f"{expect_file}: unknown features: {' '.join(sorted(unknown))}")
    cpunode_ids = sorted({int(n) for n in topo.cpunodes().split(":")}) if topo.cpus else []
    return Facts(base=base, rev=rev_number(rev), config=config, label=label,
                 repl=expect_repl, nodes=len(topo.nodes), cpunode_ids=cpunode_ids,
                 memnodes=len([m for m in topo.memnodes().split(",") if m]),
                 dimms=bool(topo.dimms), kconfig=read_kconfig(kconfig_text),
                 words=parse_words(cmdline), features=features)


@dataclass
class Rule:
    suite: str
    name: str
    code: object
    source: str


class Inventory:
    """The parsed expected-tests: [SUITE] sections of 'SUITE.TEST EXPR' lines."""

    def __init__(self, text, source="expected-tests"):
        self.rules = []
        suite = None
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.split(" #", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            where = f"{source}:{lineno}"
            if line.startswith("["):
                suite = line.strip("[]")
                if suite not in SUITES:
                    raise ValueError(f"{where}: unknown suite [{suite}]")
                continue
            name, _, expr = line.partition(" ")
            if suite is None:
                raise ValueError(f"{where}: a test before any [SUITE] line")
            if not NAME.match(name) or not expr.strip():
                raise ValueError(f"{where}: want 'SCRIPT.TEST EXPRESSION', got: {raw.strip()}")
            self.rules.append(Rule(suite, name, compile_condition(expr.strip(), where), where))

    def expected(self, facts):
        """The SUITE.TEST names the row must report: the rules of its suite
        whose condition holds, {n} replaced by each node with CPUs; with
        ktv_only (init runs only those scripts, if any is in the suite),
        only theirs; with ktv_inject=fail, the two scripts init runs."""
        ns = facts.namespace()
        suite = facts.suite
        only = set(filter(None, (facts.words.get("ktv_only") or "").split(",")))
        inject = facts.words.get("ktv_inject")
        names = set()
        for r in self.rules:
            if inject == "fail":
                if not (r.suite == "selftest" or r.name.startswith("10-boot.")
                        and r.suite == "tests"):
                    continue
            elif r.suite != suite:
                continue
            if not eval(r.code, {"__builtins__": {}}, ns):  # pylint: disable=eval-used
                continue
            if "{n}" in r.name:
                names.update(r.name.replace("{n}", str(n)) for n in facts.cpunode_ids)
            else:
                names.add(r.name)
        scripts = {n.split(".", 1)[0] for n in names}
        if only & scripts:
            names = {n for n in names if n.split(".", 1)[0] in only}
        return names


def compile_condition(expr, where):
    """Compile EXPR, allowing only comparisons, boolean operators, the
    facts, the features and calls of y() and arg()."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as err:
        raise ValueError(f"{where}: bad condition '{expr}': {err.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, ALLOWED_NODES):
            raise ValueError(f"{where}: '{expr}': {type(node).__name__} not allowed")
        if isinstance(node, ast.Name) and node.id not in FACT_NAMES | FEATURES:
            raise ValueError(f"{where}: '{expr}': unknown fact '{node.id}'")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in ("y", "arg")
                                               and len(node.args) == 1 and not node.keywords):
            raise ValueError(f"{where}: '{expr}': only y(SYMBOL) and arg(WORD) may be called")
    return compile(tree, where, "eval")
