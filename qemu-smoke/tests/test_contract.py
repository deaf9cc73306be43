"""The host-to-guest contract (guest/PARAMETERS.md) against the code, comments
left out: every ktv_* word the host sets or the guest reads has a row, every
row is read by the guest, every row not set by hand is set by the host, the
Read-by cell names every guest file that reads it, and the Default cell
gives every default the guest writes as ${ktv_x:-D}."""

import glob
import os
import re
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SMOKE = os.path.dirname(HERE)
REPO = os.path.dirname(SMOKE)
GUEST = os.path.join(SMOKE, "guest")


def code(path):
    """The file without its comment lines (shell and Python)."""
    with open(path, encoding="utf-8") as f:
        return "\n".join(line for line in f if not line.lstrip().startswith("#"))


def table():
    """{name: (default cell, set-by cell, read-by cell)} of PARAMETERS.md's table."""
    rows = {}
    with open(os.path.join(GUEST, "PARAMETERS.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\| `(ktv_[a-z0-9_]+)` \|", line)
            if m:
                cells = line.split(" | ")
                rows[m.group(1)] = (cells[2], cells[3], cells[4])
    return rows


def host_set():
    paths = (glob.glob(os.path.join(REPO, "scripts", "*.sh"))
             + glob.glob(os.path.join(REPO, "checks", "*.sh"))
             + glob.glob(os.path.join(SMOKE, "topologies", "*.topo"))
             + [p for p in glob.glob(os.path.join(SMOKE, "matrix", "*")) if not p.endswith(".md")]
             + glob.glob(os.path.join(SMOKE, "*.py"))
             + [os.path.join(REPO, "Makefile"), os.path.join(REPO, ".ci", "run")])
    found = set()
    for p in paths:
        if os.path.isfile(p):
            found |= set(re.findall(r"\b(ktv_[a-z0-9_]+)=", code(p)))
    return found


def guest_files():
    return {os.path.relpath(p, GUEST): code(p)
            for p in glob.glob(os.path.join(GUEST, "**"), recursive=True)
            if os.path.isfile(p) and not p.endswith(".md")}


def guest_read():
    """{name: set of guest files that read $name}"""
    readers = {}
    for rel, text in guest_files().items():
        for name in set(re.findall(r"\$\{?(ktv_[a-z0-9_]+)", text)):
            readers.setdefault(name, set()).add(rel)
    return readers


class Contract(unittest.TestCase):
    def setUp(self):
        self.rows, self.host, self.readers = table(), host_set(), guest_read()

    def test_table_is_not_empty(self):
        self.assertGreater(len(self.rows), 20)

    def test_every_host_word_has_a_row(self):
        self.assertEqual(sorted(self.host - set(self.rows)), [])

    def test_every_guest_variable_has_a_row(self):
        self.assertEqual(sorted(set(self.readers) - set(self.rows)), [])

    def test_every_row_is_read_by_the_guest(self):
        self.assertEqual(sorted(set(self.rows) - set(self.readers)), [])

    def test_every_row_is_set_by_the_host_or_by_hand(self):
        by_hand = {n for n, (_, setby, _) in self.rows.items() if "by hand" in setby}
        self.assertEqual(sorted(set(self.rows) - by_hand - self.host), [])

    def test_read_by_names_every_reader(self):
        missing = [f"{n}: {r}" for n, files in sorted(self.readers.items()) for r in sorted(files)
                   if n in self.rows and r not in self.rows[n][2]
                   and os.path.basename(r) not in self.rows[n][2]]
        self.assertEqual(missing, [])

    def test_default_cell_gives_the_guests_defaults(self):
        wrong = []
        for text in guest_files().values():
            for name, default in re.findall(r"\$\{(ktv_[a-z0-9_]+):-([^}$]*)\}", text):
                if default and name in self.rows and f"`{default}`" not in self.rows[name][0]:
                    wrong.append(f"{name}: {default}")
        self.assertEqual(sorted(set(wrong)), [])


if __name__ == "__main__":
    unittest.main()
