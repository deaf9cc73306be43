"""The host-to-guest contract (guest/PARAMETERS.md) against the code: every
ktv_* word the host sets or the guest reads has a row, every row is read by
the guest, and every row not set by hand is set by the host."""

import glob
import os
import re
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.dirname(HERE)
REPO = os.path.dirname(SMOKE)


def text(paths):
    out = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            out.append(f.read())
    return "\n".join(out)


def table():
    """{name: set-by cell} of PARAMETERS.md's table."""
    rows = {}
    with open(os.path.join(SMOKE, "guest", "PARAMETERS.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\| `(ktv_[a-z0-9_]+)` \|", line)
            if m:
                rows[m.group(1)] = line.split(" | ")[3]
    return rows


def host_set():
    paths = (glob.glob(os.path.join(REPO, "scripts", "*.sh"))
             + glob.glob(os.path.join(REPO, "checks", "*.sh"))
             + glob.glob(os.path.join(SMOKE, "topologies", "*.topo"))
             + [p for p in glob.glob(os.path.join(SMOKE, "matrix", "*")) if not p.endswith(".md")]
             + [os.path.join(SMOKE, "boot.py")])
    return set(re.findall(r"\b(ktv_[a-z0-9_]+)=", text(paths)))


def guest_read():
    paths = [p for p in glob.glob(os.path.join(SMOKE, "guest", "**"), recursive=True)
             if os.path.isfile(p) and not p.endswith(".md")]
    return set(re.findall(r"\$\{?(ktv_[a-z0-9_]+)", text(paths)))


class Contract(unittest.TestCase):
    def setUp(self):
        self.rows, self.host, self.guest = table(), host_set(), guest_read()

    def test_table_is_not_empty(self):
        self.assertGreater(len(self.rows), 20)

    def test_every_host_word_has_a_row(self):
        self.assertEqual(sorted(self.host - set(self.rows)), [])

    def test_every_guest_variable_has_a_row(self):
        self.assertEqual(sorted(self.guest - set(self.rows)), [])

    def test_every_row_is_read_by_the_guest(self):
        self.assertEqual(sorted(set(self.rows) - self.guest), [])

    def test_every_row_is_set_by_the_host_or_by_hand(self):
        by_hand = {n for n, cell in self.rows.items() if "by hand" in cell}
        self.assertEqual(sorted(set(self.rows) - by_hand - self.host), [])


if __name__ == "__main__":
    unittest.main()
