/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tlbmodel.h - what an x86-64 TLB is architecturally allowed to keep.
 *
 * One struct tm_tlb per vCPU and per kind (the caller keeps one for
 * instruction fetches, one for data reads): set-associative, true LRU in
 * a set, 4 KiB, 2 MiB and 1 GiB pages in one array. An entry is tagged
 * with its PCID and global bit (a global entry serves every PCID) and
 * leaves only by LRU eviction or by an invalidation that the Intel SDM
 * (vol. 3A, 4.10.4.1) says must remove it:
 *
 *  - MOV to CR3: with CR4.PCIDE=0 every non-global entry; with PCIDE=1
 *    the new PCID's non-global entries, none if bit 63 (no-flush) is set;
 *  - MOV to CR4: every entry, global ones too, if CR4.PGE changes or
 *    CR4.PCIDE goes from 1 to 0 (0 to 1 keeps them: every entry is PCID 0
 *    then). A change of CR4.PAE or CR4.SMEP 0 to 1 removes the current
 *    PCID's entries; not knowing that PCID, the model removes every
 *    non-global entry (a boot-time event);
 *  - INVLPG: the entries covering the address of the current PCID, and
 *    the global ones covering it whatever their PCID;
 *  - INVPCID types 0 (an address of a PCID, globals kept), 1 (a PCID,
 *    globals kept), 2 (all) and 3 (all but globals).
 *
 * It shows what the architecture allows hardware to keep in a TLB of
 * this shape, not what a given CPU does: a real CPU may drop any entry at
 * any time, has smaller, separate arrays per page size, and may cache a
 * large page as smaller entries. Left out: the paging-structure caches
 * (a miss is one page walk, whatever its length), speculative fills,
 * accessed and dirty bits, permission checks (SMEP, SMAP, protection
 * keys), VMX tags, and PTI beyond its CR3 writes: its user and kernel
 * halves are just two PCIDs here.
 *
 * A flush of a PCID or more is O(1): it bumps a generation, and an entry
 * is valid only while the generations it was stamped with are current.
 * INVLPG and INVPCID type 0 look at three sets. Generations are 64-bit,
 * so they never wrap and a stale stamp never comes back into date.
 *
 * Included by locality.c and tlbmodel-test.c; everything is static.
 */
#ifndef TLBMODEL_H
#define TLBMODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TM_PCIDS	4096
#define TM_PCID_MASK	(TM_PCIDS - 1)
#define TM_CR3_NOFLUSH	(1ULL << 63)
#define TM_CR4_PAE	(1ULL << 5)
#define TM_CR4_PGE	(1ULL << 7)
#define TM_CR4_PCIDE	(1ULL << 17)
#define TM_CR4_SMEP	(1ULL << 20)

/* Page sizes, smallest first: a lookup tries them in this order. */
static const unsigned int tm_shifts[] = { 12, 21, 30 };

struct tm_entry {
	uint64_t vpn;		/* virtual address >> shift */
	uint64_t frame;		/* physical base of the page */
	uint64_t use;		/* LRU stamp; 0: invalidated or never filled */
	uint64_t gen_all, gen_nonglobal, gen_pcid;	/* at fill */
	uint16_t pcid;
	uint8_t shift;		/* 12, 21 or 30 */
	bool global;
};

struct tm_tlb {
	uint64_t sets, ways;
	struct tm_entry *e;	/* sets * ways */
	uint64_t clock;
	uint64_t gen_all;	/* bumped: every entry goes */
	uint64_t gen_nonglobal;	/* bumped: every non-global entry goes */
	uint64_t gen_pcid[TM_PCIDS];	/* bumped: that PCID's non-global */
	/* Counters, for the caller to print. */
	uint64_t lookups, hits, misses;	/* a miss is a modelled page walk */
	uint64_t inserts, evictions;	/* evictions: valid entries replaced */
	uint64_t cr3_writes, cr3_noflush, cr3_flush;
	uint64_t cr4_global_flushes;	/* CR4 writes that dropped globals */
	uint64_t invlpg, invpcid[4];
	/* Flushes of every PCID: CR3 without PCIDE, CR4, INVPCID 2 and 3. */
	uint64_t flush_all_events;
};

/* A TLB of @entries entries, @ways ways: 0, or -1 on an impossible shape. */
static int tm_init(struct tm_tlb *t, uint64_t entries, uint64_t ways)
{
	memset(t, 0, sizeof(*t));
	if (!ways || !entries || entries % ways)
		return -1;
	t->ways = ways;
	t->sets = entries / ways;
	t->e = calloc(entries, sizeof(*t->e));
	return t->e ? 0 : -1;
}

static bool tm_valid(const struct tm_tlb *t, const struct tm_entry *e)
{
	if (!e->use || e->gen_all != t->gen_all)
		return false;
	return e->global || (e->gen_nonglobal == t->gen_nonglobal &&
			     e->gen_pcid == t->gen_pcid[e->pcid]);
}

/* The first way of the set that holds page number @vpn (any size). */
static struct tm_entry *tm_set(struct tm_tlb *t, uint64_t vpn)
{
	return &t->e[vpn % t->sets * t->ways];
}

/* Is @e valid and for page number @vpn of size 1 << @shift? */
static bool tm_is(const struct tm_tlb *t, const struct tm_entry *e,
		  unsigned int shift, uint64_t vpn)
{
	return tm_valid(t, e) && e->shift == shift && e->vpn == vpn;
}

/*
 * A valid entry covering @va that @pcid may use (its own or a global
 * one): true on a hit, with a copy of the entry in @out if not NULL.
 * When several match (the architecture allows that after a page-table
 * change without invalidation), the first found, smallest page first.
 */
static bool tm_lookup(struct tm_tlb *t, uint16_t pcid, uint64_t va,
		      struct tm_entry *out)
{
	struct tm_entry *e, *set;
	uint64_t vpn;
	unsigned int s;

	pcid &= TM_PCID_MASK;
	t->lookups++;
	for (s = 0; s < 3; s++) {
		vpn = va >> tm_shifts[s];
		set = tm_set(t, vpn);
		for (e = set; e < set + t->ways; e++) {
			if (!tm_is(t, e, tm_shifts[s], vpn) ||
			    !(e->global || e->pcid == pcid))
				continue;
			e->use = ++t->clock;
			if (out)
				*out = *e;
			t->hits++;
			return true;
		}
	}
	t->misses++;
	return false;
}

/*
 * Fill after a page walk: the page of size 1 << @shift (12, 21 or 30)
 * holding @va maps @frame; @global is the walk's G bit and CR4.PGE
 * together. It replaces a valid entry of the same key (global, or
 * non-global of @pcid; size; page), else takes an invalid way, else
 * evicts the least recently used one. 0, or -1 on a bad @shift.
 */
static int tm_insert(struct tm_tlb *t, uint16_t pcid, uint64_t va,
		     unsigned int shift, uint64_t frame, bool global)
{
	struct tm_entry *e, *set, *victim = NULL;
	uint64_t vpn = va >> shift;
	bool same = false;

	if (shift != 12 && shift != 21 && shift != 30)
		return -1;
	pcid &= TM_PCID_MASK;
	set = tm_set(t, vpn);
	for (e = set; e < set + t->ways && !same; e++) {
		if (!tm_valid(t, e)) {
			if (!victim || tm_valid(t, victim))
				victim = e;
		} else if (tm_is(t, e, shift, vpn) && e->global == global &&
			   (global || e->pcid == pcid)) {
			victim = e;
			same = true;
		} else if (!victim ||
			   (tm_valid(t, victim) && e->use < victim->use)) {
			victim = e;
		}
	}
	if (!same && tm_valid(t, victim))
		t->evictions++;
	t->inserts++;
	*victim = (struct tm_entry){
		.vpn = vpn, .frame = frame, .use = ++t->clock,
		.gen_all = t->gen_all, .gen_nonglobal = t->gen_nonglobal,
		.gen_pcid = t->gen_pcid[pcid], .pcid = pcid, .shift = shift,
		.global = global,
	};
	return 0;
}

/*
 * Drop the entries covering @va, at every size, of @pcid (non-global
 * ones only if @keep_global) and, unless @keep_global, the global ones
 * whatever their PCID. The number dropped.
 */
static unsigned int tm_drop_page(struct tm_tlb *t, uint16_t pcid,
				 uint64_t va, bool keep_global)
{
	struct tm_entry *e, *set;
	unsigned int s, n = 0;
	uint64_t vpn;

	pcid &= TM_PCID_MASK;
	for (s = 0; s < 3; s++) {
		vpn = va >> tm_shifts[s];
		set = tm_set(t, vpn);
		for (e = set; e < set + t->ways; e++) {
			if (!tm_is(t, e, tm_shifts[s], vpn) ||
			    (e->global ? keep_global : e->pcid != pcid))
				continue;
			e->use = 0;
			n++;
		}
	}
	return n;
}

/* Every non-global entry of every PCID goes. */
static void tm_flush_nonglobal(struct tm_tlb *t)
{
	t->gen_nonglobal++;
	t->flush_all_events++;
}

/* Every entry goes, global ones too. */
static void tm_flush_all(struct tm_tlb *t)
{
	t->gen_all++;
	t->flush_all_events++;
}

/* MOV to CR3 of @cr3 (bit 63 as written) with CR4.PCIDE @pcide: flushed? */
static bool tm_mov_cr3(struct tm_tlb *t, uint64_t cr3, bool pcide)
{
	t->cr3_writes++;
	if (pcide && (cr3 & TM_CR3_NOFLUSH)) {
		t->cr3_noflush++;
		return false;
	}
	t->cr3_flush++;
	if (pcide)
		t->gen_pcid[cr3 & TM_PCID_MASK]++;
	else
		tm_flush_nonglobal(t);
	return true;
}

/* MOV to CR4 from @old to @cr4: true if global entries were dropped. */
static bool tm_mov_cr4(struct tm_tlb *t, uint64_t old, uint64_t cr4)
{
	uint64_t changed = old ^ cr4;

	if ((changed & TM_CR4_PGE) ||
	    ((old & TM_CR4_PCIDE) && !(cr4 & TM_CR4_PCIDE))) {
		t->cr4_global_flushes++;
		tm_flush_all(t);
		return true;
	}
	if ((changed & TM_CR4_PAE) || ((changed & cr4) & TM_CR4_SMEP))
		tm_flush_nonglobal(t);
	return false;
}

/* INVLPG @va with current PCID @pcid: the number of entries dropped. */
static unsigned int tm_invlpg(struct tm_tlb *t, uint16_t pcid, uint64_t va)
{
	t->invlpg++;
	return tm_drop_page(t, pcid, va, false);
}

/* INVPCID of @type with descriptor (@pcid, @va): 0, or -1 on a bad type. */
static int tm_invpcid(struct tm_tlb *t, uint64_t type, uint16_t pcid,
		      uint64_t va)
{
	switch (type) {
	case 0:		/* individual address, globals kept */
		tm_drop_page(t, pcid, va, true);
		break;
	case 1:		/* single context, globals kept */
		t->gen_pcid[pcid & TM_PCID_MASK]++;
		break;
	case 2:		/* all contexts, globals too */
		tm_flush_all(t);
		break;
	case 3:		/* all contexts, globals kept */
		tm_flush_nonglobal(t);
		break;
	default:
		return -1;
	}
	t->invpcid[type]++;
	return 0;
}

/* Forget every entry (the meter's cold-cache marker); counters stay. */
static void tm_reset(struct tm_tlb *t)
{
	t->gen_all++;
}

#endif /* TLBMODEL_H */
