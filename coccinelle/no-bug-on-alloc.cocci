// SPDX-License-Identifier: GPL-2.0-only
/// Do not BUG_ON()/BUG() when an allocation fails: an allocation failure is
/// a path a real system can reach. Handle it: degrade (fewer or no replicas,
/// say so in the log) or return -ENOMEM.
///
/// Flags BUG_ON() and "if (...) BUG();" that test the result of an
/// allocator (kmalloc, kzalloc, vmalloc, alloc_pages, memblock_alloc*,
/// __get_free_pages, pgd_alloc, kmem_cache_alloc, ...) for NULL or an
/// error pointer, directly or through the variable it was assigned to.
//
// Confidence: High
// Keywords: BUG_ON, BUG, allocation
// Options: --no-includes --include-headers

virtual report

@initialize:python@
@@
import re
# Allocators: names ending in "alloc" or with an "alloc_" word, and the
# page and duplication helpers that do not say "alloc".
alloc_re = re.compile(r'^(\w*_)?[a-z]*alloc(_\w+)?$'
		      r'|^(__)?get_free_pages?$|^get_zeroed_page$'
		      r'|^kstrn?dup(_const)?$|^kmemdup(_nul)?$')

def is_alloc(name):
	return alloc_re.match(name) is not None

// BUG_ON(!kmalloc(...)), BUG_ON(!(p = kmalloc(...))), if (!kmalloc(...)) BUG();
@direct depends on report@
identifier alloc : script:python() { is_alloc(alloc) };
position p;
@@
(
BUG_ON@p(\(!<+...alloc(...)...+>\|<+...alloc(...)...+> == NULL\|NULL == <+...alloc(...)...+>\|
          IS_ERR(<+...alloc(...)...+>)\|IS_ERR_OR_NULL(<+...alloc(...)...+>)\));
|
if (\(!<+...alloc(...)...+>\|<+...alloc(...)...+> == NULL\|NULL == <+...alloc(...)...+>\|
      IS_ERR(<+...alloc(...)...+>)\|IS_ERR_OR_NULL(<+...alloc(...)...+>)\))
(
  BUG@p();
|
  { ... BUG@p(); ... }
)
)

// p = kmalloc(...); ... BUG_ON(!p); and the same with a declaration.
@assigned depends on report@
identifier alloc : script:python() { is_alloc(alloc) };
expression E;
identifier x;
type T;
position p;
@@
(
E = <+...alloc(...)...+>;
|
T x = <+...alloc(...)...+>;
)
... when != E
    when != x
(
BUG_ON@p(\(!E\|E == NULL\|NULL == E\|IS_ERR(E)\|IS_ERR_OR_NULL(E)\|
          !x\|x == NULL\|NULL == x\|IS_ERR(x)\|IS_ERR_OR_NULL(x)\));
|
if (\(!E\|E == NULL\|NULL == E\|IS_ERR(E)\|IS_ERR_OR_NULL(E)\|
      !x\|x == NULL\|NULL == x\|IS_ERR(x)\|IS_ERR_OR_NULL(x)\))
(
  BUG@p();
|
  { ... BUG@p(); ... }
)
)

@script:python depends on report@
p << direct.p;
alloc << direct.alloc;
@@
coccilib.report.print_report(p[0], "BUG on failure of %s(): handle the error (degrade or return -ENOMEM), do not crash" % alloc)

@script:python depends on report@
p << assigned.p;
alloc << assigned.alloc;
@@
coccilib.report.print_report(p[0], "BUG on failure of %s(): handle the error (degrade or return -ENOMEM), do not crash" % alloc)
