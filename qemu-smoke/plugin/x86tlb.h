/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86tlb.h - tlb=on: what the x86-64 guest does to its TLBs, fed to the
 * TLB model (tlbmodel.h), and every kernel fetch and rodata read checked
 * against the page tables.
 *
 * Translation decodes the instructions that change what a TLB may keep:
 * MOV to CR3 and CR4, INVLPG, INVPCID, and WRMSR (the x2APIC ICR: an IPI).
 * Each gets a callback that runs before it, reads the registers it uses
 * (QEMU_PLUGIN_CB_R_REGS) and applies its effect to the vCPU's modelled
 * iTLB and dTLB. CR3 and CR4 are tracked from those writes (bit 63 of a
 * CR3 write is the no-flush bit, never stored) and checked against the
 * real registers at every write.
 *
 * Every kernel block that runs looks its page(s) up in the iTLB, and
 * every kernel read in rodata= (data=on) in the dTLB; the page tables are
 * walked from the tracked CR3 through guest memory (gpa_host()). A miss
 * is a modelled page walk, which fills the TLB. A hit whose frame differs
 * from the walk's is a stale translation: hardware would be allowed to
 * use the frame the TLB holds. The report lists each one (virtual page,
 * the TLB's frame and node, the page tables' frame and node, and whether
 * the two 4 KiB pages hold the same bytes: another node's copy, or not).
 *
 * The walk is also checked against QEMU's own translation: the host page
 * a block was translated from must be the one the walk gives
 * (qemu_mismatch: QEMU's TLB kept a translation the page tables no longer
 * give, or the walker or gpa_host() is wrong; both worth a look).
 *
 * Multi-threaded TCG (boot.py --meter): a vCPU's TLBs, tracked CR3 and
 * CR4 and counters are touched only by its own thread; the list of stale
 * translations and the blocks' pages are locked, the run-wide counters
 * atomic.
 */
#ifndef X86TLB_H
#define X86TLB_H

#include "tlbmodel.h"

enum tlb_ctr {
	TC_CR3_FLUSH,		/* CR3 writes that flushed (non-global) */
	TC_CR3_NOFLUSH,		/* CR3 writes with PCIDE and bit 63 */
	TC_CR4_GLOBAL,		/* CR4 writes that flushed globals too */
	TC_INVLPG,
	TC_INVPCID0, TC_INVPCID1, TC_INVPCID2, TC_INVPCID3,
	TC_IPI,			/* ICR writes: x2APIC WRMSR, xAPIC MMIO */
	TC_ITLB_WALK,		/* iTLB misses: modelled page walks */
	TC_DTLB_WALK,		/* dTLB misses on rodata= reads */
	TC_STALE_FETCH,		/* blocks run through a stale iTLB entry */
	TC_STALE_READ,		/* rodata= reads through a stale dTLB entry */
	TC_NO_WALK,		/* kernel pages the walk could not map */
	TC_QEMU_MISMATCH,	/* the walk's frame is not QEMU's */
	TC_NCTRS
};
_Static_assert(TC_NCTRS <= TLB_MAX_CTRS, "vcpu_stats.tlb[] too small");

static const char *const tlb_ctr_name[TC_NCTRS] = {
	"cr3_flush", "cr3_noflush", "cr4_global_flush", "invlpg",
	"invpcid0", "invpcid1", "invpcid2", "invpcid3", "ipi",
	"itlb_walks", "dtlb_walks", "stale_fetch", "stale_read",
	"no_walk", "qemu_mismatch",
};

static bool tlb_on;
static uint64_t tlb_entries = 4096, tlb_ways = 8;

struct vcpu_tlb {
	uint64_t cr3, cr4;	/* tracked from MOV to CR3/CR4 */
	struct tm_tlb itlb, dtlb;
};
static struct vcpu_tlb vtlb[MAX_VCPUS];
static uint64_t reg_mismatch;	/* tracked CR3/CR4 != the register */
static uint64_t resets;		/* ... because INIT reset the vCPU */
static uint64_t undecoded;	/* INVLPG/INVPCID operands not decoded */

#define CR4_LA57	(1ull << 12)
#define PTE_P		(1ull << 0)
#define PTE_PS		(1ull << 7)
#define PTE_G		(1ull << 8)
#define PTE_ADDR	0x000ffffffffff000ull
#define MSR_X2APIC_ICR	0x830
#define XAPIC_ICR	0xfee00300ull	/* the default APIC base + ICR low */

/* ---- registers ---- */

/* In ModRM order: rax rcx rdx rbx rsp rbp rsi rdi r8..r15. */
static const char *const gpr_name[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};
static struct qemu_plugin_register *reg_gpr[16], *reg_cr3, *reg_cr4;
static __thread GByteArray *regbuf;	/* per vCPU thread (MTTCG) */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

/* A vCPU starts: find the registers by name (the same on every vCPU). */
static void tlb_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	GArray *regs;
	unsigned int i, g;

	(void)id;
	(void)vcpu;
	pthread_mutex_lock(&reg_lock);
	if (reg_cr3) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	regs = qemu_plugin_get_registers();
	for (i = 0; regs && i < regs->len; i++) {
		const qemu_plugin_reg_descriptor *d =
			&((const qemu_plugin_reg_descriptor *)regs->data)[i];

		for (g = 0; g < 16; g++)
			if (!strcmp(d->name, gpr_name[g]))
				reg_gpr[g] = d->handle;
		if (!strcmp(d->name, "cr3"))
			reg_cr3 = d->handle;
		else if (!strcmp(d->name, "cr4"))
			reg_cr4 = d->handle;
	}
	/* regs is not freed: once per run, and freeing needs GLib's g_array_free. */
	if (!reg_cr3 || !reg_cr4 || !reg_gpr[15]) {
		fprintf(stderr, "locality: tlb=on: this QEMU does not expose cr3, cr4 and the GPRs to plugins: TLB model off\n");
		tlb_on = false;
	}
	pthread_mutex_unlock(&reg_lock);
}

static uint64_t read_reg(struct qemu_plugin_register *r)
{
	uint64_t v = 0;
	int n;

	if (!regbuf)
		regbuf = g_byte_array_new();
	g_byte_array_set_size(regbuf, 0);
	n = qemu_plugin_read_register(r, regbuf);
	if (n > 0)
		memcpy(&v, regbuf->data, n < 8 ? (size_t)n : 8);	/* x86: little endian */
	return v;
}

/* ---- page walks ---- */

struct walk {
	uint64_t frame;		/* guest physical base of the page */
	unsigned int shift;	/* 12, 21 or 30 */
	bool global;
};

static bool read_pte(uint64_t table, unsigned int idx, uint64_t *pte)
{
	const uint64_t *p = gpa_host((table & PTE_ADDR) + idx * 8ull);

	if (!p)
		return false;
	*pte = __atomic_load_n(p, __ATOMIC_RELAXED);
	return true;
}

/* Walk @va from @cr3 (4 or 5 levels as @cr4 says): false if unmapped. */
static bool walk(uint64_t cr3, uint64_t cr4, uint64_t va, struct walk *w)
{
	unsigned int shift = cr4 & CR4_LA57 ? 48 : 39;
	uint64_t table = cr3, pte = 0;

	for (;; shift -= 9) {
		if (!read_pte(table, (va >> shift) & 511, &pte) || !(pte & PTE_P))
			return false;
		if (shift == 12 || ((shift == 21 || shift == 30) && (pte & PTE_PS)))
			break;
		table = pte;
	}
	w->shift = shift;
	w->frame = pte & PTE_ADDR & ~((1ull << shift) - 1);
	w->global = (pte & PTE_G) && (cr4 & TM_CR4_PGE);
	return true;
}

static uint16_t cur_pcid(const struct vcpu_tlb *t)
{
	return t->cr4 & TM_CR4_PCIDE ? t->cr3 & TM_PCID_MASK : 0;
}

/* ---- stale translations ---- */

struct stale {
	struct stale *next;
	bool fetch;
	uint64_t page;		/* virtual, 4 KiB */
	uint64_t tlb_frame, pt_frame;	/* guest physical, 4 KiB */
	int tlb_node, pt_node;
	bool same_bytes;
	int cpu_node;		/* the node of the vCPUs that used it */
	unsigned int vcpu, phase;	/* the first */
	uint64_t count;
};
#define STALE_BUCKETS	4096u
static struct stale *stales[STALE_BUCKETS];
static uint64_t n_stales;
static pthread_mutex_t stale_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_stale(unsigned int vcpu, bool fetch, uint64_t va,
		       const struct tm_entry *e, const struct walk *w)
{
	uint64_t in = va & ((1ull << e->shift) - 1) & ~0xfffull;
	uint64_t tf = e->frame + in;
	uint64_t pf = w->frame + (va & ((1ull << w->shift) - 1) & ~0xfffull);
	unsigned int b = (unsigned int)((va >> 12) ^ tf >> 12) % STALE_BUCKETS;
	int cn = cpu_node[vcpu];
	struct stale *s;
	void *th, *ph;

	pthread_mutex_lock(&stale_lock);
	for (s = stales[b]; s; s = s->next)
		if (s->fetch == fetch && s->page == va >> 12 && s->tlb_frame == tf &&
		    s->pt_frame == pf && s->cpu_node == cn) {
			s->count++;
			pthread_mutex_unlock(&stale_lock);
			return;
		}
	s = calloc(1, sizeof(*s));
	if (!s) {
		pthread_mutex_unlock(&stale_lock);
		return;
	}
	th = gpa_host(tf);
	ph = gpa_host(pf);
	*s = (struct stale){ stales[b], fetch, va >> 12, tf, pf,
			     th ? node_of(th) : COL_OTHER, ph ? node_of(ph) : COL_OTHER,
			     th && ph && !memcmp(th, ph, 4096), cn, vcpu, phase_now, 1 };
	stales[b] = s;
	n_stales++;
	pthread_mutex_unlock(&stale_lock);
}

/*
 * Look @va up in @tlb, walk it, and compare: a stale hit is noted, a miss
 * filled. Returns the walk's frame host address (NULL: unmapped).
 */
static void *tlb_check(unsigned int vcpu, struct tm_tlb *tlb, bool fetch,
		       uint64_t va)
{
	struct vcpu_tlb *t = &vtlb[vcpu];
	struct vcpu_stats *s = &stats[phase_now][vcpu];
	uint16_t pcid = cur_pcid(t);
	struct tm_entry e;
	struct walk w;
	bool hit = tm_lookup(tlb, pcid, va, &e);

	if (!walk(t->cr3, t->cr4, va, &w)) {
		s->tlb[TC_NO_WALK]++;
		return NULL;
	}
	if (!hit) {
		s->tlb[fetch ? TC_ITLB_WALK : TC_DTLB_WALK]++;
		tm_insert(tlb, pcid, va, w.shift, w.frame, w.global);
	} else if (e.frame + (va & ((1ull << e.shift) - 1) & ~0xfffull) !=
		   w.frame + (va & ((1ull << w.shift) - 1) & ~0xfffull)) {
		s->tlb[fetch ? TC_STALE_FETCH : TC_STALE_READ]++;
		note_stale(vcpu, fetch, va, &e, &w);
	}
	return gpa_host(w.frame + (va & ((1ull << w.shift) - 1)));
}

/*
 * A kernel block's pages, interned by (first page, host of it, last page,
 * host of it): what a block runs from is QEMU's translation, the walk's
 * must agree.
 */
struct tb_pages {
	struct tb_pages *next;
	uint64_t va[2];
	uintptr_t host[2];	/* page-aligned */
};
#define TBP_BUCKETS	65536u
static struct tb_pages *tbp[TBP_BUCKETS];

static struct tb_pages *tb_pages_of(uint64_t va0, uintptr_t h0, uint64_t va1,
				    uintptr_t h1)
{
	unsigned int b = (unsigned int)((va0 >> 12) * 31 + (h0 >> 12)) % TBP_BUCKETS;
	struct tb_pages *p;

	for (p = tbp[b]; p; p = p->next)
		if (p->va[0] == va0 && p->host[0] == h0 && p->va[1] == va1 &&
		    p->host[1] == h1)
			return p;
	p = malloc(sizeof(*p));
	if (!p)
		return NULL;
	*p = (struct tb_pages){ tbp[b], { va0, va1 }, { h0, h1 } };
	tbp[b] = p;
	return p;
}

static void tlb_fetch(unsigned int vcpu, void *udata)
{
	const struct tb_pages *p = udata;
	int i;

	if (vcpu >= MAX_VCPUS)
		return;
	for (i = 0; i < 2; i++) {
		uintptr_t h;

		if (i && p->va[1] == p->va[0])
			break;
		h = (uintptr_t)tlb_check(vcpu, &vtlb[vcpu].itlb, true, p->va[i]);
		if (h && p->host[i] && (h & ~0xfffull) != p->host[i])
			stats[phase_now][vcpu].tlb[TC_QEMU_MISMATCH]++;
	}
}

/* A kernel read of rodata= (from mem_access()). */
static void tlb_read(unsigned int vcpu, uint64_t va)
{
	if (tlb_on && vcpu < MAX_VCPUS)
		tlb_check(vcpu, &vtlb[vcpu].dtlb, false, va);
}

/* ---- the instructions that change what the TLBs may keep ---- */

enum tlb_op { OP_NONE, OP_CR3, OP_CR4, OP_INVLPG, OP_INVPCID, OP_WRMSR };

/*
 * A decoded instruction, packed into the callback's userdata: op (3 bits),
 * reg (4: the GPR written to CR3/CR4, or INVPCID's type register), and
 * for a memory operand base (5: 16 = none), index (5: 16 = none), scale
 * (2) and a 32-bit displacement.
 */
#define U_OP(u)		((unsigned int)((u) & 7))
#define U_REG(u)	((unsigned int)((u) >> 3 & 15))
#define U_BASE(u)	((unsigned int)((u) >> 7 & 31))
#define U_INDEX(u)	((unsigned int)((u) >> 12 & 31))
#define U_SCALE(u)	((unsigned int)((u) >> 17 & 3))
#define U_DISP(u)	((int32_t)(uint32_t)((u) >> 32))
#define NOREG		16u

static uint64_t pack(unsigned int op, unsigned int reg, unsigned int base,
		     unsigned int index, unsigned int scale, int32_t disp)
{
	return op | (uint64_t)reg << 3 | (uint64_t)base << 7 |
	       (uint64_t)index << 12 | (uint64_t)scale << 17 |
	       (uint64_t)(uint32_t)disp << 32;
}

/*
 * The memory operand of a ModRM byte at @p (64-bit addressing): packs it
 * and returns the bytes used after the ModRM byte, or -1 (RIP-relative and
 * anything unexpected: counted as undecoded).
 */
static int modrm_mem(const uint8_t *p, size_t left, unsigned int rex,
		     unsigned int *base, unsigned int *index,
		     unsigned int *scale, int32_t *disp)
{
	unsigned int mod = p[0] >> 6, rm = p[0] & 7;
	size_t used = 1;

	*base = (rm | (rex & 1) << 3);
	*index = NOREG;
	*scale = 0;
	*disp = 0;
	if (mod == 3)
		return -1;
	if (rm == 4) {
		uint8_t sib;

		if (left < 2)
			return -1;
		sib = p[1];
		used++;
		*scale = sib >> 6;
		*index = (sib >> 3 & 7) | (rex & 2) << 2;
		if (*index == 4)
			*index = NOREG;
		*base = (sib & 7) | (rex & 1) << 3;
		if ((sib & 7) == 5 && mod == 0) {
			*base = NOREG;
			mod = 2;	/* disp32 */
		}
	} else if (rm == 5 && mod == 0) {
		return -1;	/* RIP-relative */
	}
	if (mod == 1) {
		if (left < used + 1)
			return -1;
		*disp = (int8_t)p[used];
		used++;
	} else if (mod == 2) {
		if (left < used + 4)
			return -1;
		memcpy(disp, p + used, 4);
		used += 4;
	}
	return (int)used;
}

/* What @insn is to the TLB model, packed; 0: nothing. */
static uint64_t decode(const uint8_t *b, size_t n)
{
	unsigned int rex = 0, base, index, scale;
	bool opsize = false;
	int32_t disp;
	size_t i = 0;

	for (; i < n; i++) {
		if (b[i] == 0x66)
			opsize = true;
		else if (b[i] != 0xf0 && b[i] != 0xf2 && b[i] != 0xf3 &&
			 b[i] != 0x2e && b[i] != 0x36 && b[i] != 0x3e &&
			 b[i] != 0x26 && b[i] != 0x64 && b[i] != 0x65 && b[i] != 0x67)
			break;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)
		rex = b[i++] & 15;
	if (i + 1 >= n || b[i] != 0x0f)
		return 0;
	i++;
	if (b[i] == 0x30)
		return OP_WRMSR;
	/* MOV to CRn: the SDM says the mod field is ignored (always a register). */
	if (b[i] == 0x22 && i + 1 < n) {
		unsigned int cr = (b[i + 1] >> 3 & 7) | (rex & 4) << 1;
		unsigned int src = (b[i + 1] & 7) | (rex & 1) << 3;

		if (cr == 3 || cr == 4)
			return pack(cr == 3 ? OP_CR3 : OP_CR4, src, 0, 0, 0, 0);
		return 0;
	}
	if (b[i] == 0x01 && i + 1 < n && (b[i + 1] >> 6) != 3 &&
	    (b[i + 1] >> 3 & 7) == 7) {
		if (modrm_mem(b + i + 1, n - i - 1, rex, &base, &index, &scale, &disp) < 0) {
			__atomic_fetch_add(&undecoded, 1, __ATOMIC_RELAXED);
			return 0;
		}
		return pack(OP_INVLPG, 0, base, index, scale, disp);
	}
	if (opsize && b[i] == 0x38 && i + 2 < n && b[i + 1] == 0x82) {
		unsigned int type = (b[i + 2] >> 3 & 7) | (rex & 4) << 1;

		if (modrm_mem(b + i + 2, n - i - 2, rex, &base, &index, &scale, &disp) < 0) {
			__atomic_fetch_add(&undecoded, 1, __ATOMIC_RELAXED);
			return 0;
		}
		return pack(OP_INVPCID, type, base, index, scale, disp);
	}
	return 0;
}

static uint64_t effective_addr(uint64_t u)
{
	uint64_t a = (uint64_t)(int64_t)U_DISP(u);

	if (U_BASE(u) != NOREG)
		a += read_reg(reg_gpr[U_BASE(u)]);
	if (U_INDEX(u) != NOREG)
		a += read_reg(reg_gpr[U_INDEX(u)]) << U_SCALE(u);
	return a;
}

static void both(unsigned int vcpu, int (*fn)(struct tm_tlb *, void *), void *arg)
{
	fn(&vtlb[vcpu].itlb, arg);
	fn(&vtlb[vcpu].dtlb, arg);
}

struct op_args {
	uint64_t a, b, c;
	bool flushed;
};

static int do_cr3(struct tm_tlb *t, void *p)
{
	struct op_args *o = p;

	o->flushed = tm_mov_cr3(t, o->a, o->b);
	return 0;
}

static int do_cr4(struct tm_tlb *t, void *p)
{
	struct op_args *o = p;

	o->flushed = tm_mov_cr4(t, o->a, o->b);
	return 0;
}

static int do_invlpg(struct tm_tlb *t, void *p)
{
	struct op_args *o = p;

	tm_invlpg(t, (uint16_t)o->a, o->b);
	return 0;
}

static int do_invpcid(struct tm_tlb *t, void *p)
{
	struct op_args *o = p;

	return tm_invpcid(t, o->a, (uint16_t)o->b, o->c);
}

/*
 * The tracked CR3 and CR4 against the registers, before each decoded
 * instruction: INIT (a CPU brought up again) zeroes both and empties the
 * TLBs without an instruction the plugin sees; anything else that differs
 * is a write the decoder missed (reg_mismatch, which must stay 0). Either
 * way the registers win.
 */
static void resync(struct vcpu_tlb *t)
{
	uint64_t cr3 = read_reg(reg_cr3), cr4 = read_reg(reg_cr4);

	if (cr3 == t->cr3 && cr4 == t->cr4)
		return;
	if (!cr3 && !cr4) {
		__atomic_fetch_add(&resets, 1, __ATOMIC_RELAXED);
		tm_reset(&t->itlb);
		tm_reset(&t->dtlb);
	} else {
		__atomic_fetch_add(&reg_mismatch, 1, __ATOMIC_RELAXED);
	}
	t->cr3 = cr3;
	t->cr4 = cr4;
}

/* Before a decoded instruction runs: its effect on the vCPU's TLBs. */
static void tlb_op(unsigned int vcpu, void *udata)
{
	uint64_t u = (uintptr_t)udata;
	struct vcpu_tlb *t;
	uint64_t *ctr;
	struct op_args o = { 0 };
	static __thread GByteArray *desc;	/* per vCPU thread, kept */

	if (vcpu >= MAX_VCPUS || !tlb_on)
		return;
	t = &vtlb[vcpu];
	ctr = stats[phase_now][vcpu].tlb;
	resync(t);
	switch (U_OP(u)) {
	case OP_CR3:
		o.a = read_reg(reg_gpr[U_REG(u)]);
		o.b = !!(t->cr4 & TM_CR4_PCIDE);
		both(vcpu, do_cr3, &o);
		ctr[o.flushed ? TC_CR3_FLUSH : TC_CR3_NOFLUSH]++;
		t->cr3 = o.a & ~TM_CR3_NOFLUSH;
		break;
	case OP_CR4:
		o.a = t->cr4;
		o.b = read_reg(reg_gpr[U_REG(u)]);
		both(vcpu, do_cr4, &o);
		ctr[TC_CR4_GLOBAL] += o.flushed;
		t->cr4 = o.b;
		break;
	case OP_INVLPG:
		o.a = cur_pcid(t);
		o.b = effective_addr(u);
		both(vcpu, do_invlpg, &o);
		ctr[TC_INVLPG]++;
		break;
	case OP_INVPCID:
		o.a = read_reg(reg_gpr[U_REG(u)]);
		if (!desc)
			desc = g_byte_array_new();
		if (!qemu_plugin_read_memory_vaddr(effective_addr(u), desc, 16)) {
			__atomic_fetch_add(&undecoded, 1, __ATOMIC_RELAXED);
			break;
		}
		memcpy(&o.b, desc->data, 8);
		memcpy(&o.c, desc->data + 8, 8);
		if (o.a > 3) {
			__atomic_fetch_add(&undecoded, 1, __ATOMIC_RELAXED);
			break;
		}
		both(vcpu, do_invpcid, &o);
		ctr[TC_INVPCID0 + o.a]++;
		break;
	case OP_WRMSR:
		if ((read_reg(reg_gpr[1]) & 0xffffffff) == MSR_X2APIC_ICR)
			ctr[TC_IPI]++;
		break;
	}
}

/* At translation: decode @insn, and register its callback if it matters. */
static void tlb_insn(struct qemu_plugin_insn *insn)
{
	uint8_t b[16];
	size_t n = qemu_plugin_insn_data(insn, b, sizeof(b));
	uint64_t u = decode(b, n);

	if (u)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, tlb_op, QEMU_PLUGIN_CB_R_REGS,
						       (void *)(uintptr_t)u);
}

/* At translation of a kernel block: check its pages each time it runs. */
static void tlb_block(struct qemu_plugin_tb *tb, size_t n)
{
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
	struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
	uint64_t va0 = qemu_plugin_insn_vaddr(first) & ~0xfffull;
	uint64_t va1 = (qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last) - 1) &
		       ~0xfffull;
	uintptr_t h0 = (uintptr_t)qemu_plugin_insn_haddr(first) & ~0xfffull;
	uintptr_t h1 = (uintptr_t)qemu_plugin_insn_haddr(last) & ~0xfffull;
	struct tb_pages *p;

	if (va1 != va0 && (qemu_plugin_insn_vaddr(last) & ~0xfffull) == va0)
		h1 = 0;		/* the last instruction straddles: host unknown */
	pthread_mutex_lock(&page_lock);
	p = tb_pages_of(va0, h0, va1, h1);
	pthread_mutex_unlock(&page_lock);
	if (p)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tlb_fetch, QEMU_PLUGIN_CB_NO_REGS, p);
}

static int tlb_setup(void)
{
	int v;

	for (v = 0; v < n_vcpus; v++)
		if (tm_init(&vtlb[v].itlb, tlb_entries, tlb_ways) ||
		    tm_init(&vtlb[v].dtlb, tlb_entries, tlb_ways)) {
			fprintf(stderr, "locality: bad TLB shape or no memory for vCPU %d's TLBs\n", v);
			return -1;
		}
	return 0;
}

/* A node column as the report names it: its number, or "other". */
static void node_name(char *buf, size_t len, int col)
{
	if (col == COL_OTHER)
		snprintf(buf, len, "other");
	else
		snprintf(buf, len, "%d", col);
}

static int cmp_stale(const void *a, const void *b)
{
	const struct stale *x = *(const struct stale *const *)a;
	const struct stale *y = *(const struct stale *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The report's tlb lines: the model's shape, then every stale translation. */
static void print_tlb(FILE *f)
{
	struct stale **all = calloc(n_stales + 1, sizeof(*all));
	uint64_t i = 0, k;
	unsigned int b;
	struct stale *s;

	fprintf(f, "tlb entries=%" PRIu64 " ways=%" PRIu64 " resets=%" PRIu64
		" reg_mismatch=%" PRIu64 " undecoded=%" PRIu64
		" stale_translations=%" PRIu64 "\n",
		tlb_entries, tlb_ways, resets, reg_mismatch, undecoded, n_stales);
	if (!all)
		return;
	for (b = 0; b < STALE_BUCKETS; b++)
		for (s = stales[b]; s; s = s->next)
			all[i++] = s;
	qsort(all, i, sizeof(*all), cmp_stale);
	for (k = 0; k < i && k < 64; k++) {
		char tn[16], pn[16];

		s = all[k];
		node_name(tn, sizeof(tn), s->tlb_node);
		node_name(pn, sizeof(pn), s->pt_node);
		fprintf(f, "stale kind=%s vaddr=0x%" PRIx64 " tlb_frame=0x%" PRIx64
			" tlb_node=%s pt_frame=0x%" PRIx64 " pt_node=%s cpu_node=%d content=%s"
			" first_vcpu=%u first_phase=%u count=%" PRIu64 "\n",
			s->fetch ? "fetch" : "read", s->page << 12, s->tlb_frame,
			tn, s->pt_frame, pn, s->cpu_node,
			s->same_bytes ? "same" : "other", s->vcpu, s->phase, s->count);
	}
	free(all);
}

#endif /* X86TLB_H */
