// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tlbmodel-test.c - tlbmodel.h on its own. Included by selftest.c after
 * its expect(); test_tlbmodel() is called from its main().
 *
 * Generations and counters are 64-bit, so their wraparound is not tested:
 * a run would need 2^64 flushes to bring a stale stamp back.
 */
#include "tlbmodel.h"

#define TT_A	0x400000ULL		/* 4 KiB page number 0x400: set 0 */
#define TT_C	(TT_A + 0x1000)		/* the next page: set 1 */
#define TT_D	(TT_A + 0x3000)		/* set 3 */
#define TT_K	0xffffffff81000000ULL	/* a 2 MiB page of kernel text */

/* The frame @pcid gets for @va, or 0 on a miss. */
static uint64_t tt_frame(struct tm_tlb *t, uint16_t pcid, uint64_t va)
{
	struct tm_entry e;

	return tm_lookup(t, pcid, va, &e) ? e.frame : 0;
}

/* INVPCID's entry set: PCID 1 at A and C, PCID 2 at A, a global at D. */
static void tt_fill(struct tm_tlb *t)
{
	tm_reset(t);
	tm_insert(t, 1, TT_A, 12, 0x1000, false);
	tm_insert(t, 1, TT_C, 12, 0x2000, false);
	tm_insert(t, 2, TT_A, 12, 0x3000, false);
	tm_insert(t, 1, TT_D, 12, 0x4000, true);
}

/* Which of tt_fill()'s entries are left: bits 0 to 3 in that order. */
static uint64_t tt_kept(struct tm_tlb *t)
{
	return tm_lookup(t, 1, TT_A, NULL) | tm_lookup(t, 1, TT_C, NULL) << 1 |
	       tm_lookup(t, 2, TT_A, NULL) << 2 | tm_lookup(t, 5, TT_D, NULL) << 3;
}

static void test_tlbmodel(void)
{
	struct tm_tlb t, s;
	struct tm_entry e;

	expect("tlb: entries that do not split into ways", tm_init(&t, 10, 4), (uint64_t)-1);
	expect("tlb: no ways", tm_init(&t, 64, 0), (uint64_t)-1);
	expect("tlb: 64 entries, 8 ways", tm_init(&t, 64, 8), 0);	/* 8 sets */
	expect("tlb: an 8 KiB page", tm_insert(&t, 1, TT_A, 13, 0, false), (uint64_t)-1);

	/* 1. PCID tags. */
	tm_insert(&t, 1, TT_A, 12, 0x1000, false);
	expect("tlb: PCID 1's entry under PCID 1", tt_frame(&t, 1, TT_A + 0x123), 0x1000);
	expect("tlb: PCID 1's entry under PCID 2", tm_lookup(&t, 2, TT_A, NULL), 0);
	expect("tlb: hits", t.hits, 1);
	expect("tlb: misses", t.misses, 1);

	/* 2. CR3 without PCIDE: every non-global entry goes. */
	tm_insert(&t, 3, TT_C, 12, 0x2000, false);
	tm_insert(&t, 0, TT_D, 12, 0x3000, true);
	expect("tlb: CR3 without PCIDE flushes", tm_mov_cr3(&t, 0x5000, false), 1);
	expect("tlb: PCID 1 entry after it", tm_lookup(&t, 1, TT_A, NULL), 0);
	expect("tlb: PCID 3 entry after it", tm_lookup(&t, 3, TT_C, NULL), 0);
	expect("tlb: global entry after it", tt_frame(&t, 0, TT_D), 0x3000);

	/* 3. CR3 with PCIDE: the new PCID's entries, unless bit 63. */
	tm_insert(&t, 1, TT_A, 12, 0x1000, false);
	tm_insert(&t, 2, TT_A, 12, 0x2000, false);
	tm_insert(&t, 2, TT_C, 12, 0x4000, false);
	expect("tlb: CR3 with no-flush", tm_mov_cr3(&t, TM_CR3_NOFLUSH | 0x5000 | 2, true), 0);
	expect("tlb: PCID 2 after no-flush", tt_frame(&t, 2, TT_A), 0x2000);
	expect("tlb: PCID 2's other page after no-flush", tt_frame(&t, 2, TT_C), 0x4000);
	expect("tlb: CR3 of PCID 2", tm_mov_cr3(&t, 0x5000 | 2, true), 1);
	expect("tlb: PCID 2 after its flush", tm_lookup(&t, 2, TT_A, NULL), 0);
	expect("tlb: PCID 2's other page after it", tm_lookup(&t, 2, TT_C, NULL), 0);
	expect("tlb: PCID 1 after PCID 2's flush", tt_frame(&t, 1, TT_A), 0x1000);
	expect("tlb: global after PCID 2's flush", tt_frame(&t, 2, TT_D), 0x3000);
	expect("tlb: CR3 writes", t.cr3_writes * 100 + t.cr3_noflush * 10 + t.cr3_flush, 312);

	/* 4. Global entries: any PCID, CR3 writes; CR4.PGE and PCIDE 1->0. */
	tm_insert(&t, 1, TT_K, 21, 0x1000000, true);
	expect("tlb: global of PCID 1 under PCID 7", tt_frame(&t, 7, TT_K), 0x1000000);
	tm_mov_cr3(&t, 0x5000, false);
	tm_mov_cr3(&t, 0x5000 | 1, true);
	tm_mov_cr3(&t, 0x5000 | 7, true);
	expect("tlb: global after CR3 writes", tt_frame(&t, 7, TT_K), 0x1000000);
	expect("tlb: CR4.OSXSAVE set", tm_mov_cr4(&t, 0x220ea0, 0x260ea0), 0);
	expect("tlb: global after it", tt_frame(&t, 1, TT_K), 0x1000000);
	expect("tlb: CR4.SMEP 0->1", tm_mov_cr4(&t, 0x0200a0, 0x1200a0), 0);
	expect("tlb: global after it", tt_frame(&t, 1, TT_K), 0x1000000);
	expect("tlb: CR4.PGE 1->0", tm_mov_cr4(&t, 0x0200a0, 0x020020), 1);
	expect("tlb: global after it", tm_lookup(&t, 1, TT_K, NULL), 0);
	tm_insert(&t, 1, TT_K, 21, 0x1000000, true);
	expect("tlb: CR4.PCIDE 0->1", tm_mov_cr4(&t, 0x0000a0, 0x0200a0), 0);
	expect("tlb: global after it", tt_frame(&t, 1, TT_K), 0x1000000);
	expect("tlb: CR4.PCIDE 1->0", tm_mov_cr4(&t, 0x0200a0, 0x0000a0), 1);
	expect("tlb: global after it", tm_lookup(&t, 1, TT_K, NULL), 0);
	expect("tlb: CR4 global flushes", t.cr4_global_flushes, 2);

	/* 5. INVLPG: the current PCID's entry and globals, at every size. */
	tm_reset(&t);
	tm_insert(&t, 1, TT_A, 12, 0x1000, false);
	tm_insert(&t, 2, TT_A, 12, 0x2000, false);
	tm_insert(&t, 1, TT_C, 12, 0x3000, false);
	tm_insert(&t, 2, TT_D, 12, 0x4000, true);
	expect("tlb: INVLPG A of PCID 1", tm_invlpg(&t, 1, TT_A + 0x10), 1);
	expect("tlb: PCID 1 at A after it", tm_lookup(&t, 1, TT_A, NULL), 0);
	expect("tlb: PCID 2 at A after it", tt_frame(&t, 2, TT_A), 0x2000);
	expect("tlb: PCID 1 at C after it", tt_frame(&t, 1, TT_C), 0x3000);
	expect("tlb: INVLPG D of PCID 1", tm_invlpg(&t, 1, TT_D), 1);
	expect("tlb: PCID 2's global at D after it", tm_lookup(&t, 2, TT_D, NULL), 0);
	tm_insert(&t, 1, TT_K, 21, 0x1000000, false);
	tm_insert(&t, 1, 0x40000000, 30, 0x40000000, false);
	expect("tlb: INVLPG inside a 2 MiB page", tm_invlpg(&t, 1, TT_K + 0x1ab000), 1);
	expect("tlb: the 2 MiB page after it", tm_lookup(&t, 1, TT_K, NULL), 0);
	expect("tlb: INVLPG inside a 1 GiB page", tm_invlpg(&t, 1, 0x7ffff000), 1);
	expect("tlb: the 1 GiB page after it", tm_lookup(&t, 1, 0x40000000, NULL), 0);

	/* 6. INVPCID: A1 C1 A2 Dg in bits 0 to 3. */
	tt_fill(&t);
	expect("tlb: all four", tt_kept(&t), 0xf);
	expect("tlb: INVPCID 0", tm_invpcid(&t, 0, 1, TT_A), 0);
	expect("tlb: kept by INVPCID 0 of PCID 1 at A", tt_kept(&t), 0xe);
	tm_invpcid(&t, 0, 1, TT_D);
	expect("tlb: kept by INVPCID 0 of a global page", tt_kept(&t), 0xe);
	tt_fill(&t);
	expect("tlb: INVPCID 1", tm_invpcid(&t, 1, 1, 0), 0);
	expect("tlb: kept by INVPCID 1 of PCID 1", tt_kept(&t), 0xc);
	tt_fill(&t);
	expect("tlb: INVPCID 2", tm_invpcid(&t, 2, 0, 0), 0);
	expect("tlb: kept by INVPCID 2", tt_kept(&t), 0);
	tt_fill(&t);
	expect("tlb: INVPCID 3", tm_invpcid(&t, 3, 0, 0), 0);
	expect("tlb: kept by INVPCID 3", tt_kept(&t), 0x8);
	expect("tlb: INVPCID 4", tm_invpcid(&t, 4, 0, 0), (uint64_t)-1);
	expect("tlb: INVPCID counts", t.invpcid[0] * 1000 + t.invpcid[1] * 100 +
	       t.invpcid[2] * 10 + t.invpcid[3], 2111);

	/* 8. Page sizes: a 2 MiB entry covers its 2 MiB only. */
	tm_insert(&t, 1, TT_K, 21, 0x1000000, false);
	expect("tlb: last 4 KiB of a 2 MiB page", tm_lookup(&t, 1, TT_K + 0x1ff000, &e), 1);
	expect("tlb: its size", e.shift, 21);
	expect("tlb: the next 2 MiB", tm_lookup(&t, 1, TT_K + 0x200000, NULL), 0);
	expect("tlb: no evictions so far", t.evictions, 0);
	free(t.e);

	/* 7. LRU: 8 entries, 2 ways, so pages 0, 4 and 8 share set 0. */
	tm_init(&s, 8, 2);
	tm_insert(&s, 0, 0x0000, 12, 0x10000, false);
	tm_insert(&s, 0, 0x4000, 12, 0x20000, false);
	tm_lookup(&s, 0, 0x0000, NULL);
	tm_insert(&s, 0, 0x8000, 12, 0x30000, false);	/* evicts page 4 */
	expect("tlb: one eviction", s.evictions, 1);
	expect("tlb: the least recently used page", tm_lookup(&s, 0, 0x4000, NULL), 0);
	expect("tlb: the most recently used page", tt_frame(&s, 0, 0x0000), 0x10000);
	expect("tlb: the new page", tt_frame(&s, 0, 0x8000), 0x30000);
	tm_invlpg(&s, 0, 0x0000);
	tm_insert(&s, 0, 0x4000, 12, 0x20000, false);	/* takes page 0's way */
	expect("tlb: a free way before an eviction", s.evictions, 1);

	/* 10. The same key again: a new frame, not a second way. */
	tm_insert(&s, 0, 0x8000, 12, 0x40000, false);
	expect("tlb: the refilled page", tt_frame(&s, 0, 0x8000), 0x40000);
	expect("tlb: its neighbour", tt_frame(&s, 0, 0x4000), 0x20000);
	expect("tlb: no eviction for a refill", s.evictions, 1);
	expect("tlb: inserts", s.inserts, 5);
	tm_reset(&s);
	expect("tlb: nothing after a reset", tm_lookup(&s, 0, 0x4000, NULL), 0);
	free(s.e);
}
