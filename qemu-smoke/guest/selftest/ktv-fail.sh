# shellcheck shell=sh
# A test that fails, run in place of the suite with ktv_inject=fail (the
# harness's own test): boot.py must report FAIL and name it.
ktap_fail injected_failure "ktv_inject=fail"
