#!/bin/bash
# Show that the TLB check fails without the flushes the series relies on:
# each mutant of REV in series-vN/tlb-mutants/NAME.patch removes one flush
# (its header says which, and why the TLB model must see it) and must fail
# checks/tlb.sh. checks/mutants.sh does the work (header lines '# append:'
# and '# tlb-shape:' there); MUTANTS=NAME,... picks some.
MUTANT_DIR=tlb-mutants MUTANT_CHECK=tlb exec "$(dirname "$0")/mutants.sh" "$@"
