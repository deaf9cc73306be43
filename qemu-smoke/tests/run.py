#!/usr/bin/env python3
"""Run the harness's unit tests (test_*.py here: recorded guest logs, no
QEMU) and end with 'N passed, N failed'; exit status 1 if any failed."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class Counting(unittest.TextTestResult):
    """Counts the tests that passed (a failed subTest fails its test)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main():
    sys.dont_write_bytecode = True
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(stream=sys.stdout, resultclass=Counting, verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{result.passed} passed, {failed} failed")
    return 1 if failed or not result.passed else 0


if __name__ == "__main__":
    sys.exit(main())
