// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86tlb-test.c - tlb=on (x86tlb.h) through the meter's own callbacks.
 * Included by selftest.c after its stubs, block(), translate() and
 * expect(); test_x86tlb() is called from its main() after the first
 * translation (the node files are known: gpa_host() works).
 *
 *  a. decode() on encodings from GNU as (objdump -d of `as --64`);
 *  b. walk() over 4- and 5-level page tables built in the node memory;
 *  c. a stale translation end to end: two roots map one kernel page to a
 *     frame on node 0 and one on node 1 (global), blocks translated and
 *     run through the meter's callbacks, MOV to CR3/CR4, INVLPG, INVPCID
 *     and WRMSR decoded from the block bytes and run before the
 *     instruction as QEMU would, with the registers in fake_regs[];
 *  d. resync(): INIT (registers zero) against a missed write;
 *  e. print_tlb()'s lines.
 *
 * The main script installs the meter without tlb=on and its report must
 * stay as it is: tlb_on is set here and restored, the vCPUs' TLBs are
 * set up with tlb_setup() and the registers found with tlb_vcpu_init(),
 * as install and QEMU's vCPU init would, and xt_run() runs only the
 * callbacks of a block that tlb=on registered (tlb_fetch, tlb_op): the
 * instruction, cache and page counters of the script are not touched.
 * The counters land in phase XT_PHASE, which the script never marks or
 * counts in, so the report (tlb=off) does not show it.
 */

static int install(int argc, char **argv);	/* selftest.c, after this file */

/* Guest physical layout: node 0 at 0, node 1 at NODE_BYTES (host_hw()). */
#define XT_PML4A	0x4000ull	/* root A, node 0 */
#define XT_PDPTA	0x5000ull
#define XT_PDA		0x6000ull
#define XT_PTA		0x7000ull
#define XT_F0		0xd000ull	/* the kernel page through A: node 0 */
#define XT_PML5		0xe000ull	/* 5-level root whose last entry is A */
#define XT_OPSF		0xf000ull	/* the instructions below, both roots */
#define XT_PML4B	0x15000ull	/* root B, node 1 */
#define XT_PDPTB	0x16000ull
#define XT_PDB		0x17000ull
#define XT_PTB		0x19000ull
#define XT_F1		0x1a000ull	/* the kernel page through B: node 1 */

/* Kernel virtual pages: PML4 511, PDPT 510, PD 8, PT 0..3. */
#define XT_KVA		0xffffffff81000000ull	/* F0 (A) or F1 (B), global */
#define XT_OPS		(XT_KVA + 0x1000)	/* OPSF in both, global */
#define XT_HOLE		(XT_KVA + 0x2000)	/* not present */
#define XT_DATA		(XT_KVA + 0x3000)	/* F0 or F1, not global, XD */
#define XT_K2M		0xffffffff81200000ull	/* PD 9: 2 MiB, global */
#define XT_NOPD		0xffffffff81400000ull	/* PD 10: not present */
#define XT_K1G		0xffffffffc0000000ull	/* PDPT 511: 1 GiB, global */

#define XT_RW		(PTE_P | 2ull)
#define XT_XD		(1ull << 63)
#define XT_PAT_LARGE	(1ull << 12)	/* PAT of a 2 MiB/1 GiB entry */
#define XT_CR4		(TM_CR4_PAE | TM_CR4_PGE)	/* 0xa0 */
#define XT_V		3u		/* the vCPU (node 1) */
#define XT_PHASE	5u

static unsigned char *xt_host(uint64_t gpa)
{
	return gpa < NODE_BYTES ? mem[0] + gpa : mem[1] + (gpa - NODE_BYTES);
}

static void xt_pte(uint64_t table, unsigned int idx, uint64_t val)
{
	memcpy(xt_host(table) + idx * 8, &val, 8);
}

static void xt_reg(const char *name, uint64_t val)
{
	size_t i;

	for (i = 0; i < N_FAKE_REGS; i++)
		if (!strcmp(fake_reg_names[i], name))
			fake_regs[i] = val;
}

/* A kernel block of one instruction of @size bytes at @va, bytes at @host. */
static struct qemu_plugin_tb *xt_block(uint64_t va, unsigned char *host, size_t size)
{
	struct qemu_plugin_tb *tb = block(va, host, 1);

	tb->insn[0].size = size;
	return translate(tb);
}

/*
 * Run what tlb=on registered for @tb, in run()'s order: the block's
 * tlb_fetch, then each instruction's tlb_op (before the instruction).
 */
static void xt_run(struct qemu_plugin_tb *tb, unsigned int vcpu)
{
	size_t i;
	int c;

	for (c = 0; c < tb->ncb; c++)
		if (tb->cb[c].cb == tlb_fetch)
			tb->cb[c].cb(vcpu, tb->cb[c].udata);
	for (i = 0; i < tb->n; i++)
		if (tb->insn[i].exec_cb == tlb_op)
			tb->insn[i].exec_cb(vcpu, tb->insn[i].exec_udata);
}

/* The tlb_fetch callbacks registered for @tb. */
static uint64_t xt_fetches(const struct qemu_plugin_tb *tb)
{
	uint64_t n = 0;
	int c;

	for (c = 0; c < tb->ncb; c++)
		n += tb->cb[c].cb == tlb_fetch;
	return n;
}

static uint64_t xt_snap[TC_NCTRS];

static void xt_mark(void)
{
	memcpy(xt_snap, stats[XT_PHASE][XT_V].tlb, sizeof(xt_snap));
}

/* Counter @c of vCPU XT_V since xt_mark(). */
static uint64_t xt_d(enum tlb_ctr c)
{
	return stats[XT_PHASE][XT_V].tlb[c] - xt_snap[c];
}

static const struct stale *xt_stale(bool fetch, uint64_t va, uint64_t tf, uint64_t pf)
{
	const struct stale *s;
	unsigned int b;

	for (b = 0; b < STALE_BUCKETS; b++)
		for (s = stales[b]; s; s = s->next)
			if (s->fetch == fetch && s->page == va >> 12 && s->tlb_frame == tf &&
			    s->pt_frame == pf)
				return s;
	return NULL;
}

/* a. The decoder. */
static void xt_decode(void)
{
	/*
	 * Bytes from `as --64` and objdump -d (cr11, which as refuses: objdump
	 * -D -b binary -m i386:x86-64); the operand fields as packed.
	 */
	const struct {
		const char *what;
		uint8_t b[8];
		size_t n;
		uint64_t want;
	} c[] = {
		{ "mov %rax,%cr3", { 0x0f, 0x22, 0xd8 }, 3,
		  pack(OP_CR3, 0, 0, 0, 0, 0) },
		{ "mov %rdi,%cr3", { 0x0f, 0x22, 0xdf }, 3,
		  pack(OP_CR3, 7, 0, 0, 0, 0) },
		{ "mov %r8,%cr3", { 0x41, 0x0f, 0x22, 0xd8 }, 4,
		  pack(OP_CR3, 8, 0, 0, 0, 0) },
		{ "mov %rcx,%cr4", { 0x0f, 0x22, 0xe1 }, 3,
		  pack(OP_CR4, 1, 0, 0, 0, 0) },
		{ "mov %r15,%cr4", { 0x41, 0x0f, 0x22, 0xe7 }, 4,
		  pack(OP_CR4, 15, 0, 0, 0, 0) },
		{ "mov %rax,%cr0", { 0x0f, 0x22, 0xc0 }, 3, 0 },
		{ "mov %rax,%cr8", { 0x44, 0x0f, 0x22, 0xc0 }, 4, 0 },
		{ "mov %rax,%cr11 (REX.R: no CR3)", { 0x44, 0x0f, 0x22, 0xd8 }, 4, 0 },
		{ "mov %cr3,%rax", { 0x0f, 0x20, 0xd8 }, 3, 0 },
		{ "invlpg (%rdi)", { 0x0f, 0x01, 0x3f }, 3,
		  pack(OP_INVLPG, 0, 7, NOREG, 0, 0) },
		{ "invlpg 0x10(%rax,%rbx,8)", { 0x0f, 0x01, 0x7c, 0xd8, 0x10 }, 5,
		  pack(OP_INVLPG, 0, 0, 3, 3, 16) },
		{ "invlpg (%r12)", { 0x41, 0x0f, 0x01, 0x3c, 0x24 }, 5,
		  pack(OP_INVLPG, 0, 12, NOREG, 0, 0) },
		{ "invlpg 0x0(%r13)", { 0x41, 0x0f, 0x01, 0x7d, 0x00 }, 5,
		  pack(OP_INVLPG, 0, 13, NOREG, 0, 0) },
		{ "invlpg 0x80(%rax)", { 0x0f, 0x01, 0xb8, 0x80, 0, 0, 0 }, 7,
		  pack(OP_INVLPG, 0, 0, NOREG, 0, 0x80) },
		{ "invlpg -0x8(%r9,%r10,2)", { 0x43, 0x0f, 0x01, 0x7c, 0x51, 0xf8 }, 6,
		  pack(OP_INVLPG, 0, 9, 10, 1, -8) },
		{ "invlpg 0x0(,%rbx,4)", { 0x0f, 0x01, 0x3c, 0x9d, 0, 0, 0, 0 }, 8,
		  pack(OP_INVLPG, 0, NOREG, 3, 2, 0) },
		{ "swapgs", { 0x0f, 0x01, 0xf8 }, 3, 0 },
		{ "rdtscp", { 0x0f, 0x01, 0xf9 }, 3, 0 },
		{ "invpcid (%rax),%rcx", { 0x66, 0x0f, 0x38, 0x82, 0x08 }, 5,
		  pack(OP_INVPCID, 1, 0, NOREG, 0, 0) },
		{ "invpcid (%rsp),%rax", { 0x66, 0x0f, 0x38, 0x82, 0x04, 0x24 }, 6,
		  pack(OP_INVPCID, 0, 4, NOREG, 0, 0) },
		{ "invpcid (%r8),%r9", { 0x66, 0x45, 0x0f, 0x38, 0x82, 0x08 }, 6,
		  pack(OP_INVPCID, 9, 8, NOREG, 0, 0) },
		{ "0f 38 82 without 66", { 0x0f, 0x38, 0x82, 0x08 }, 4, 0 },
		{ "wrmsr", { 0x0f, 0x30 }, 2, OP_WRMSR },
		{ "nop", { 0x90 }, 1, 0 },
	};
	static const uint8_t riprel[] = { 0x0f, 0x01, 0x3d, 0x78, 0x56, 0x34, 0x12 };
	static const uint8_t nosib[] = { 0x0f, 0x01, 0x7c };	/* cut before the SIB */
	static const uint8_t nodisp[] = { 0x0f, 0x01, 0x78 };	/* cut before disp8 */
	static const uint8_t regpcid[] = { 0x66, 0x0f, 0x38, 0x82, 0xc8 };	/* #UD */
	static const uint8_t sibdisp[] = { 0x0f, 0x01, 0x3c, 0x9d, 0x20, 0, 0, 0 };
	uint64_t u0 = undecoded, u;
	char what[96];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(what, sizeof(what), "x86tlb: decode %s", c[i].what);
		expect(what, decode(c[i].b, c[i].n), c[i].want);
	}
	expect("x86tlb: nothing undecoded yet", undecoded - u0, 0);
	expect("x86tlb: decode invlpg RIP-relative", decode(riprel, sizeof(riprel)), 0);
	expect("x86tlb: ... counted undecoded", undecoded - u0, 1);
	expect("x86tlb: decode invlpg cut before its SIB", decode(nosib, sizeof(nosib)), 0);
	expect("x86tlb: decode invlpg cut before its disp8", decode(nodisp, sizeof(nodisp)), 0);
	expect("x86tlb: decode invpcid of a register", decode(regpcid, sizeof(regpcid)), 0);
	expect("x86tlb: ... all counted undecoded", undecoded - u0, 4);

	/* The packing round trip, and an operand's address from the registers. */
	u = pack(OP_INVLPG, 0, 9, 10, 1, -8);
	expect("x86tlb: U_OP", U_OP(u), OP_INVLPG);
	expect("x86tlb: U_BASE", U_BASE(u), 9);
	expect("x86tlb: U_INDEX", U_INDEX(u), 10);
	expect("x86tlb: U_SCALE", U_SCALE(u), 1);
	expect("x86tlb: U_DISP", (uint64_t)(int64_t)U_DISP(u), (uint64_t)-8);
	xt_reg("r9", 0xffff888000100000ull);
	xt_reg("r10", 0x10);
	expect("x86tlb: -8(%r9,%r10,2)", effective_addr(u), 0xffff888000100018ull);
	xt_reg("rbx", 0x400);
	expect("x86tlb: 0x20(,%rbx,4)", effective_addr(decode(sibdisp, sizeof(sibdisp))), 0x1020);
	xt_reg("r9", 0);
	xt_reg("r10", 0);
	xt_reg("rbx", 0);
}

/* b. Page tables in the node memory, and walks of them. */
static void xt_tables(void)
{
	static const uint64_t pages[] = { XT_PML4A, XT_PDPTA, XT_PDA, XT_PTA, XT_F0,
					  XT_PML5, XT_OPSF, XT_PML4B, XT_PDPTB, XT_PDB,
					  XT_PTB, XT_F1 };
	size_t i;

	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		memset(xt_host(pages[i]), 0, 4096);
	xt_pte(XT_PML4A, 511, XT_PDPTA | XT_RW);
	xt_pte(XT_PDPTA, 510, XT_PDA | XT_RW);
	xt_pte(XT_PDPTA, 511, 0x80000000ull | PTE_PS | PTE_G | XT_RW);
	xt_pte(XT_PDA, 8, XT_PTA | XT_RW);
	xt_pte(XT_PDA, 9, 0x40000000ull | XT_PAT_LARGE | PTE_PS | PTE_G | XT_RW);
	xt_pte(XT_PTA, 0, XT_F0 | PTE_G | XT_RW);
	xt_pte(XT_PTA, 1, XT_OPSF | PTE_G | PTE_P);
	xt_pte(XT_PTA, 2, XT_F1 | PTE_G | (XT_RW & ~PTE_P));	/* not present */
	xt_pte(XT_PTA, 3, XT_F0 | XT_XD | XT_RW);
	xt_pte(XT_PML5, 511, XT_PML4A | XT_RW);
	xt_pte(XT_PML4B, 511, XT_PDPTB | XT_RW);
	xt_pte(XT_PDPTB, 510, XT_PDB | XT_RW);
	xt_pte(XT_PDB, 8, XT_PTB | XT_RW);
	xt_pte(XT_PTB, 0, XT_F1 | PTE_G | XT_RW);
	xt_pte(XT_PTB, 1, XT_OPSF | PTE_G | PTE_P);
	xt_pte(XT_PTB, 3, XT_F1 | XT_XD | XT_RW);
}

static void xt_walks(void)
{
	struct walk w;

	expect("x86tlb: gpa_host of node 1's frame", gpa_host(XT_F1) == xt_host(XT_F1), 1);
	expect("x86tlb: gpa_host past the RAM", gpa_host(2 * NODE_BYTES) == NULL, 1);

	memset(&w, 0, sizeof(w));
	expect("x86tlb: walk A, kernel page", walk(XT_PML4A, XT_CR4, XT_KVA + 0x123, &w), 1);
	expect("x86tlb: its frame", w.frame, XT_F0);
	expect("x86tlb: its size", w.shift, 12);
	expect("x86tlb: global with CR4.PGE", w.global, 1);
	walk(XT_PML4A, TM_CR4_PAE, XT_KVA, &w);
	expect("x86tlb: not global without CR4.PGE", w.global, 0);
	expect("x86tlb: walk B, kernel page", walk(XT_PML4B, XT_CR4, XT_KVA, &w), 1);
	expect("x86tlb: its frame (node 1)", w.frame, XT_F1);
	expect("x86tlb: which is node 1's memory", node_of(gpa_host(w.frame)), 1);
	expect("x86tlb: global too", w.global, 1);
	expect("x86tlb: walk B with CR3's PCID and flag bits",
	       walk(XT_PML4B | 0x18 | 5, XT_CR4, XT_KVA, &w) && w.frame == XT_F1, 1);
	expect("x86tlb: a PTE without G", walk(XT_PML4A, XT_CR4, XT_DATA, &w) && !w.global, 1);
	expect("x86tlb: its frame without XD", w.frame, XT_F0);
	expect("x86tlb: a PTE not present", walk(XT_PML4A, XT_CR4, XT_HOLE, &w), 0);
	expect("x86tlb: a PDE not present", walk(XT_PML4A, XT_CR4, XT_NOPD, &w), 0);
	expect("x86tlb: a PML4E not present", walk(XT_PML4A, XT_CR4, 0xffff888000000000ull, &w), 0);
	expect("x86tlb: a root outside the RAM", walk(0x100000, XT_CR4, XT_KVA, &w), 0);
	expect("x86tlb: walk A, 2 MiB page", walk(XT_PML4A, XT_CR4, XT_K2M + 0x12345, &w), 1);
	expect("x86tlb: its frame (PAT bit not in it)", w.frame, 0x40000000);
	expect("x86tlb: its size", w.shift, 21);
	expect("x86tlb: global", w.global, 1);
	expect("x86tlb: walk A, 1 GiB page", walk(XT_PML4A, XT_CR4, XT_K1G + 0x1234567, &w), 1);
	expect("x86tlb: its frame", w.frame, 0x80000000);
	expect("x86tlb: its size", w.shift, 30);
	memset(&w, 0, sizeof(w));
	expect("x86tlb: walk 5-level (CR4.LA57)",
	       walk(XT_PML5, XT_CR4 | CR4_LA57, XT_KVA + 0x5, &w), 1);
	expect("x86tlb: its frame", w.frame, XT_F0);
	expect("x86tlb: its size", w.shift, 12);
	expect("x86tlb: global", w.global, 1);
	expect("x86tlb: 5-level, 2 MiB page",
	       walk(XT_PML5, XT_CR4 | CR4_LA57, XT_K2M, &w) && w.frame == 0x40000000 &&
	       w.shift == 21, 1);
	/* Root A read as a PML5: A[511] is taken for a PML4, whose [511] is
	 * the 1 GiB entry, taken for a PDPT at 2 GiB: outside the RAM. */
	expect("x86tlb: a 4-level root with CR4.LA57",
	       walk(XT_PML4A, XT_CR4 | CR4_LA57, XT_KVA, &w), 0);
	expect("x86tlb: a 5-level root without CR4.LA57",
	       walk(XT_PML5, XT_CR4, XT_KVA, &w), 0);
}

/* INVPCID's descriptor where qemu_plugin_read_memory_vaddr() reads it. */
static void xt_desc(uint64_t at, uint64_t pcid, uint64_t va)
{
	memcpy(fake_vmem + (at & 4095), &pcid, 8);
	memcpy(fake_vmem + (at & 4095) + 8, &va, 8);
}

/* c. The stale scenario, and every decoded instruction's effect. */
static void xt_stale_run(void)
{
	/* The instructions, at these offsets of the OPS page. */
	static const struct {
		unsigned int off;
		uint8_t b[8];
		size_t n;
	} ops[] = {
		{ 0x10, { 0x0f, 0x22, 0xd8 }, 3 },			/* mov %rax,%cr3 */
		{ 0x20, { 0x0f, 0x22, 0xe1 }, 3 },			/* mov %rcx,%cr4 */
		{ 0x30, { 0x0f, 0x01, 0x3f }, 3 },			/* invlpg (%rdi) */
		{ 0x40, { 0x0f, 0x30 }, 2 },				/* wrmsr */
		{ 0x50, { 0x66, 0x0f, 0x38, 0x82, 0x08 }, 5 },		/* invpcid (%rax),%rcx */
	};
	struct qemu_plugin_tb *op[5], *blka, *blkb, *user, *cross, *two, *twobad;
	unsigned char *f0 = xt_host(XT_F0), *f1 = xt_host(XT_F1), *opsf = xt_host(XT_OPSF);
	struct vcpu_tlb *t = &vtlb[XT_V];
	const struct stale *s;
	const struct tb_pages *p;
	uint64_t n0 = n_stales, u0;
	size_t i;
	int c;

	for (i = 0; i < 4096; i++)
		f0[i] = (unsigned char)(i * 7 + 1);
	f0[0x100] = f0[0x101] = f0[0x102] = f0[0x103] = 0x90;
	memcpy(f1, f0, 4096);
	memset(opsf, 0x90, 4096);
	for (i = 0; i < 5; i++) {
		memcpy(opsf + ops[i].off, ops[i].b, ops[i].n);
		op[i] = xt_block(XT_OPS + ops[i].off, opsf + ops[i].off, ops[i].n);
	}
	expect("x86tlb: translated mov to cr3's callback", op[0]->insn[0].exec_cb == tlb_op, 1);
	expect("x86tlb: its userdata", (uintptr_t)op[0]->insn[0].exec_udata,
	       pack(OP_CR3, 0, 0, 0, 0, 0));
	expect("x86tlb: translated mov to cr4's", (uintptr_t)op[1]->insn[0].exec_udata,
	       pack(OP_CR4, 1, 0, 0, 0, 0));
	expect("x86tlb: translated invlpg's", (uintptr_t)op[2]->insn[0].exec_udata,
	       pack(OP_INVLPG, 0, 7, NOREG, 0, 0));
	expect("x86tlb: translated wrmsr's", (uintptr_t)op[3]->insn[0].exec_udata, OP_WRMSR);
	expect("x86tlb: translated invpcid's", (uintptr_t)op[4]->insn[0].exec_udata,
	       pack(OP_INVPCID, 1, 0, NOREG, 0, 0));

	/* The same kernel page as QEMU translates it from either frame. */
	blka = translate(block(XT_KVA + 0x100, f0 + 0x100, 4));
	blkb = translate(block(XT_KVA + 0x100, f1 + 0x100, 4));
	expect("x86tlb: no callback on a nop", blka->insn[0].exec_cb == NULL, 1);
	user = block(0x401000, opsf + 0x10, 1);
	user->insn[0].size = 3;
	translate(user);
	expect("x86tlb: a user block: decoded", user->insn[0].exec_cb == tlb_op, 1);
	expect("x86tlb: ... but no fetch check", xt_fetches(user), 0);
	expect("x86tlb: a kernel block: one fetch check", xt_fetches(blka), 1);

	/* Root A loaded, CR4.PGE: the kernel page fills the iTLB from F0. */
	xt_reg("cr3", XT_PML4A);
	xt_reg("cr4", XT_CR4);
	t->cr3 = XT_PML4A;
	t->cr4 = XT_CR4;
	tm_reset(&t->itlb);
	tm_reset(&t->dtlb);
	xt_mark();
	xt_run(blka, XT_V);
	expect("x86tlb: first fetch walks", xt_d(TC_ITLB_WALK), 1);
	xt_run(blka, XT_V);
	expect("x86tlb: second fetch hits", xt_d(TC_ITLB_WALK), 1);
	expect("x86tlb: QEMU's frame is the walk's", xt_d(TC_QEMU_MISMATCH), 0);
	tlb_read(XT_V, XT_KVA + 0x80);		/* global, F0 */
	tlb_read(XT_V, XT_DATA + 0x80);		/* not global, F0 */
	expect("x86tlb: two dTLB walks", xt_d(TC_DTLB_WALK), 2);
	tlb_read(XT_V, XT_DATA + 0x88);
	tlb_read(XT_V, XT_HOLE);
	expect("x86tlb: a dTLB hit, and a page the walk cannot map",
	       xt_d(TC_DTLB_WALK) * 10 + xt_d(TC_NO_WALK), 21);
	expect("x86tlb: no stale yet", xt_d(TC_STALE_FETCH) + xt_d(TC_STALE_READ), 0);

	/* MOV to CR3 of root B, without PCIDE: globals stay. */
	xt_mark();
	xt_reg("rax", XT_PML4B);
	xt_run(op[0], XT_V);
	expect("x86tlb: mov to cr3 flushed", xt_d(TC_CR3_FLUSH), 1);
	expect("x86tlb: tracked CR3", t->cr3, XT_PML4B);
	expect("x86tlb: no reg_mismatch", reg_mismatch, 0);
	xt_reg("cr3", XT_PML4B);
	xt_mark();
	xt_run(blkb, XT_V);		/* QEMU translates from F1 now */
	expect("x86tlb: stale fetch through A's global entry", xt_d(TC_STALE_FETCH), 1);
	expect("x86tlb: no walk for it", xt_d(TC_ITLB_WALK), 0);
	expect("x86tlb: QEMU's frame is the walk's (F1)", xt_d(TC_QEMU_MISMATCH), 0);
	expect("x86tlb: one stale translation", n_stales - n0, 1);
	s = xt_stale(true, XT_KVA, XT_F0, XT_F1);
	expect("x86tlb: recorded (KVA, F0, F1)", s != NULL, 1);
	if (s) {
		expect("x86tlb: its tlb_node", (uint64_t)s->tlb_node, 0);
		expect("x86tlb: its pt_node", (uint64_t)s->pt_node, 1);
		expect("x86tlb: same bytes", s->same_bytes, 1);
		expect("x86tlb: first vCPU", s->vcpu, XT_V);
		expect("x86tlb: first phase", s->phase, XT_PHASE);
	}
	xt_run(blkb, XT_V);
	xt_run(blka, XT_V);		/* a block QEMU kept from F0 */
	expect("x86tlb: stale fetches", xt_d(TC_STALE_FETCH), 3);
	expect("x86tlb: the F0 block's host is not the walk's", xt_d(TC_QEMU_MISMATCH), 1);
	expect("x86tlb: still one stale translation", n_stales - n0, 1);
	expect("x86tlb: counted three times", s ? s->count : 0, 3);
	tlb_read(XT_V, XT_KVA + 0x40);
	expect("x86tlb: stale read through the global dTLB entry", xt_d(TC_STALE_READ), 1);
	tlb_read(XT_V, XT_DATA);
	expect("x86tlb: the non-global entry went with CR3",
	       xt_d(TC_STALE_READ) * 10 + xt_d(TC_DTLB_WALK), 11);
	expect("x86tlb: a read stale translation", xt_stale(false, XT_KVA, XT_F0, XT_F1) != NULL, 1);
	expect("x86tlb: two stale translations", n_stales - n0, 2);

	/* MOV to CR4 clearing PGE flushes the globals; setting it again too. */
	xt_mark();
	xt_reg("rcx", TM_CR4_PAE);
	xt_run(op[1], XT_V);
	expect("x86tlb: cr4 PGE 1->0 flushed globals", xt_d(TC_CR4_GLOBAL), 1);
	expect("x86tlb: tracked CR4", t->cr4, TM_CR4_PAE);
	expect("x86tlb: kernel page gone", tm_lookup(&t->itlb, 0, XT_KVA, NULL), 0);
	xt_reg("cr4", TM_CR4_PAE);
	xt_reg("rcx", XT_CR4);
	xt_run(op[1], XT_V);
	xt_reg("cr4", XT_CR4);
	expect("x86tlb: cr4 PGE 0->1 flushed too", xt_d(TC_CR4_GLOBAL), 2);
	xt_mark();
	xt_run(blkb, XT_V);
	expect("x86tlb: after it a walk", xt_d(TC_ITLB_WALK), 1);
	expect("x86tlb: and nothing stale", xt_d(TC_STALE_FETCH), 0);

	/* Back to A with F0 changed: the pair (F1, F0) holds other bytes. */
	f0[0xfff] ^= 0xff;
	xt_reg("rax", XT_PML4A);
	xt_run(op[0], XT_V);
	xt_reg("cr3", XT_PML4A);
	xt_mark();
	xt_run(blka, XT_V);
	expect("x86tlb: stale fetch through B's global entry", xt_d(TC_STALE_FETCH), 1);
	s = xt_stale(true, XT_KVA, XT_F1, XT_F0);
	expect("x86tlb: recorded (KVA, F1, F0)", s != NULL, 1);
	if (s) {
		expect("x86tlb: its tlb_node", (uint64_t)s->tlb_node, 1);
		expect("x86tlb: its pt_node", (uint64_t)s->pt_node, 0);
		expect("x86tlb: other bytes", s->same_bytes, 0);
	}
	expect("x86tlb: three stale translations", n_stales - n0, 3);

	/* INVLPG of the page drops the global entry. */
	xt_mark();
	xt_reg("rdi", XT_KVA + 0x234);
	xt_run(op[2], XT_V);
	expect("x86tlb: invlpg counted", xt_d(TC_INVLPG), 1);
	expect("x86tlb: kernel page gone after invlpg", tm_lookup(&t->itlb, 0, XT_KVA, NULL), 0);
	xt_run(blka, XT_V);
	expect("x86tlb: after invlpg a walk, nothing stale",
	       xt_d(TC_ITLB_WALK) * 10 + xt_d(TC_STALE_FETCH), 10);
	xt_reg("rdi", XT_K2M);		/* another page: the kernel page stays */
	xt_run(op[2], XT_V);
	xt_run(blka, XT_V);
	expect("x86tlb: invlpg of another page keeps it", xt_d(TC_ITLB_WALK), 1);

	/* WRMSR: an IPI when ECX is the x2APIC ICR (0x830). */
	xt_mark();
	xt_reg("rcx", 0x830);
	xt_run(op[3], XT_V);
	xt_reg("rcx", 0xdead00000830ull);	/* ECX only */
	xt_run(op[3], XT_V);
	xt_reg("rcx", 0x6e0);			/* TSC deadline */
	xt_run(op[3], XT_V);
	expect("x86tlb: IPIs", xt_d(TC_IPI), 2);

	/* PCIDE: CR3 bit 63 is never stored; PCIDs are kept apart. */
	xt_mark();
	xt_reg("rcx", XT_CR4 | TM_CR4_PCIDE);
	xt_run(op[1], XT_V);
	xt_reg("cr4", XT_CR4 | TM_CR4_PCIDE);
	expect("x86tlb: cr4 PCIDE 0->1 keeps globals", xt_d(TC_CR4_GLOBAL), 0);
	xt_reg("rax", XT_PML4A | 1 | TM_CR3_NOFLUSH);
	xt_run(op[0], XT_V);
	expect("x86tlb: cr3 with bit 63 under PCIDE", xt_d(TC_CR3_NOFLUSH) * 10 + xt_d(TC_CR3_FLUSH), 10);
	expect("x86tlb: tracked CR3 without bit 63", t->cr3, XT_PML4A | 1);
	xt_reg("cr3", XT_PML4A | 1);
	xt_run(blka, XT_V);
	expect("x86tlb: the global entry serves PCID 1", xt_d(TC_ITLB_WALK), 0);
	tlb_read(XT_V, XT_DATA);
	xt_reg("rax", XT_PML4A | 2 | TM_CR3_NOFLUSH);
	xt_run(op[0], XT_V);
	xt_reg("cr3", XT_PML4A | 2);
	tlb_read(XT_V, XT_DATA);
	expect("x86tlb: PCID 1's and PCID 2's own walks", xt_d(TC_DTLB_WALK), 2);
	xt_reg("rax", XT_PML4A | 1 | TM_CR3_NOFLUSH);
	xt_run(op[0], XT_V);
	xt_reg("cr3", XT_PML4A | 1);
	tlb_read(XT_V, XT_DATA);
	expect("x86tlb: PCID 1's entry kept by no-flush", xt_d(TC_DTLB_WALK), 2);
	/* INVLPG drops the current PCID's entry (PCID 1, not global). */
	xt_reg("rdi", XT_DATA + 0x8);
	xt_run(op[2], XT_V);
	tlb_read(XT_V, XT_DATA);
	expect("x86tlb: invlpg under PCID 1 dropped PCID 1's entry", xt_d(TC_DTLB_WALK), 3);
	xt_mark();
	/* INVPCID: the type in RCX, the descriptor (PCID, address) at (RAX). */
	xt_reg("rax", 0xffff888000000100ull);
	xt_desc(0x100, 1, XT_DATA + 0x10);
	xt_reg("rcx", 0);
	xt_run(op[4], XT_V);
	tlb_read(XT_V, XT_DATA);
	expect("x86tlb: INVPCID 0 of (PCID 1, the page) dropped it", xt_d(TC_DTLB_WALK), 1);
	xt_desc(0x100, 2, XT_DATA);
	xt_run(op[4], XT_V);
	tlb_read(XT_V, XT_DATA);
	expect("x86tlb: INVPCID 0 of PCID 2 did not", xt_d(TC_DTLB_WALK), 1);
	xt_reg("rcx", 1);
	xt_desc(0x100, 1, 0);
	xt_run(op[4], XT_V);
	tlb_read(XT_V, XT_DATA);
	xt_run(blka, XT_V);
	expect("x86tlb: INVPCID 1 of PCID 1: its entry, not the global",
	       xt_d(TC_DTLB_WALK) * 10 + xt_d(TC_ITLB_WALK), 20);
	xt_reg("rcx", 3);
	xt_run(op[4], XT_V);
	xt_run(blka, XT_V);
	expect("x86tlb: INVPCID 3 keeps the global", xt_d(TC_ITLB_WALK), 0);
	xt_reg("rcx", 2);
	xt_run(op[4], XT_V);
	xt_run(blka, XT_V);
	expect("x86tlb: INVPCID 2 drops it", xt_d(TC_ITLB_WALK), 1);
	expect("x86tlb: INVPCID counts",
	       xt_d(TC_INVPCID0) * 1000 + xt_d(TC_INVPCID1) * 100 + xt_d(TC_INVPCID2) * 10 +
	       xt_d(TC_INVPCID3), 2111);
	u0 = undecoded;
	xt_reg("rcx", 4);
	xt_run(op[4], XT_V);
	xt_reg("rax", 0xffff888000000ff8ull);	/* the descriptor crosses the page */
	xt_reg("rcx", 2);
	xt_run(op[4], XT_V);
	expect("x86tlb: INVPCID type 4 and an unreadable descriptor: undecoded",
	       undecoded - u0, 2);
	expect("x86tlb: ... and not counted",
	       xt_d(TC_INVPCID0) * 1000 + xt_d(TC_INVPCID1) * 100 + xt_d(TC_INVPCID2) * 10 +
	       xt_d(TC_INVPCID3), 2111);
	/* CR4.PCIDE 1->0 flushes everything. */
	xt_mark();
	xt_reg("rcx", XT_CR4);
	xt_run(op[1], XT_V);
	xt_reg("cr4", XT_CR4);
	xt_run(blka, XT_V);
	expect("x86tlb: cr4 PCIDE 1->0", xt_d(TC_CR4_GLOBAL) * 10 + xt_d(TC_ITLB_WALK), 11);
	xt_reg("rax", XT_PML4A);
	xt_run(op[0], XT_V);
	xt_reg("cr3", XT_PML4A);

	/*
	 * A block across two pages: both are checked. The last instruction
	 * straddling from the first: the second page's host is unknown.
	 * Starting on the second: its host must be the walk's.
	 */
	tm_reset(&t->itlb);
	cross = block(XT_KVA + 0xffe, f0 + 0xffe, 2);
	cross->insn[1].size = 3;
	translate(cross);
	p = NULL;
	for (c = 0; c < cross->ncb; c++)
		if (cross->cb[c].cb == tlb_fetch)
			p = cross->cb[c].udata;
	expect("x86tlb: straddling block's pages", p &&
	       p->va[0] == XT_KVA && p->va[1] == XT_OPS && p->host[0] == (uintptr_t)f0 &&
	       p->host[1] == 0, 1);
	xt_mark();
	xt_run(cross, XT_V);
	expect("x86tlb: two walks for it", xt_d(TC_ITLB_WALK), 2);
	two = block(XT_KVA + 0xfff, f0 + 0xfff, 2);
	two->insn[1].haddr = opsf;
	translate(two);
	twobad = block(XT_KVA + 0xfff, f0 + 0xfff, 2);
	twobad->insn[1].haddr = f1;		/* not what the walk gives */
	translate(twobad);
	xt_run(two, XT_V);
	expect("x86tlb: second page's host matches", xt_d(TC_QEMU_MISMATCH), 0);
	xt_run(twobad, XT_V);
	expect("x86tlb: second page's host does not", xt_d(TC_QEMU_MISMATCH), 1);
	expect("x86tlb: all hits", xt_d(TC_ITLB_WALK), 2);
	expect("x86tlb: no stale through it all", xt_d(TC_STALE_FETCH), 0);
}

/* d. resync(): the registers win; INIT (both zero) is a reset. */
static void xt_resync(void)
{
	struct vcpu_tlb *t = &vtlb[2];
	uint64_t r0 = resets, m0 = reg_mismatch;

	t->cr3 = XT_PML4A;
	t->cr4 = XT_CR4;
	tm_insert(&t->itlb, 0, XT_KVA, 12, XT_F0, true);
	xt_reg("cr3", 0);
	xt_reg("cr4", 0);
	xt_reg("rcx", 0);
	tlb_op(2, (void *)(uintptr_t)pack(OP_WRMSR, 0, 0, 0, 0, 0));
	expect("x86tlb: INIT is a reset", resets - r0, 1);
	expect("x86tlb: ... not a mismatch", reg_mismatch - m0, 0);
	expect("x86tlb: tracked CR3/CR4 after it", t->cr3 + t->cr4, 0);
	expect("x86tlb: TLB empty after it", tm_lookup(&t->itlb, 0, XT_KVA, NULL), 0);

	t->cr3 = XT_PML4A;
	t->cr4 = XT_CR4;
	tm_insert(&t->itlb, 0, XT_KVA, 12, XT_F0, true);
	xt_reg("cr3", XT_PML4B);
	xt_reg("cr4", XT_CR4);
	tlb_op(2, (void *)(uintptr_t)pack(OP_WRMSR, 0, 0, 0, 0, 0));
	expect("x86tlb: a missed CR3 write is a mismatch", reg_mismatch - m0, 1);
	expect("x86tlb: ... not a reset", resets - r0, 1);
	expect("x86tlb: the register wins", t->cr3, XT_PML4B);
	expect("x86tlb: the TLB keeps its entry", tm_lookup(&t->itlb, 0, XT_KVA, NULL), 1);
	xt_reg("cr4", TM_CR4_PAE);
	tlb_op(2, (void *)(uintptr_t)pack(OP_WRMSR, 0, 0, 0, 0, 0));
	expect("x86tlb: a missed CR4 write too", reg_mismatch - m0, 2);
	tlb_op(2, (void *)(uintptr_t)pack(OP_WRMSR, 0, 0, 0, 0, 0));
	expect("x86tlb: the same registers: nothing", (reg_mismatch - m0) * 10 + resets - r0, 21);
	xt_reg("cr3", 0);		/* CR3 0 but CR4 not: no INIT */
	tlb_op(2, (void *)(uintptr_t)pack(OP_WRMSR, 0, 0, 0, 0, 0));
	expect("x86tlb: CR3 zero alone is a mismatch", (reg_mismatch - m0) * 10 + resets - r0, 31);
	expect("x86tlb: ... and the TLB keeps its entry", tm_lookup(&t->itlb, 0, XT_KVA, NULL), 1);
	tlb_on = false;
	xt_reg("cr3", 0);
	xt_reg("cr4", 0);
	tlb_op(2, (void *)(uintptr_t)pack(OP_WRMSR, 0, 0, 0, 0, 0));
	expect("x86tlb: tlb=off: tlb_op does nothing", resets - r0, 1);
	tlb_on = true;
}

/* Does @buf hold @line as a whole line? */
static bool xt_line(const char *buf, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = buf; (p = strstr(p, line)); p++)
		if ((p == buf || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* e. The report's tlb lines. */
#define XT_TOP	"stale kind=fetch vaddr=0xffffffff81000000 tlb_frame=0xd000 tlb_node=0 "
static void xt_print(void)
{
	static char buf[1 << 16];
	const struct vcpu_stats *row = &stats[XT_PHASE][XT_V];
	char want[512], *p;
	struct tm_entry e = { .frame = 0x40000000, .shift = 21 };
	struct walk w = { .frame = XT_F0, .shift = 12 };
	uint64_t n, i;
	FILE *f;

	/* A 2 MiB entry against a 4 KiB walk: the 4 KiB frames compared. */
	note_stale(1, false, XT_K2M + 0x5123, &e, &w);
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	if (!f)
		abort();
	print_tlb(f);
	print_tlb_counts(f, "phase=5 ", stats[XT_PHASE], nodes_total());
	fclose(f);

	snprintf(want, sizeof(want), "tlb entries=4096 ways=8 resets=%" PRIu64
		 " reg_mismatch=%" PRIu64 " undecoded=%" PRIu64 " stale_translations=%" PRIu64,
		 resets, reg_mismatch, undecoded, n_stales);
	expect("x86tlb: print_tlb's first line", strncmp(buf, want, strlen(want)) == 0 &&
	       buf[strlen(want)] == '\n', 1);
	expect("x86tlb: the stale fetch, same bytes", xt_line(buf,
	       "stale kind=fetch vaddr=0xffffffff81000000 tlb_frame=0xd000 tlb_node=0"
	       " pt_frame=0x1a000 pt_node=1 cpu_node=1 content=same first_vcpu=3 first_phase=5 count=3"), 1);
	expect("x86tlb: the most counted first", strncmp(strchr(buf, '\n') + 1,
	       XT_TOP, strlen(XT_TOP)) == 0, 1);
	expect("x86tlb: the stale fetch, other bytes", xt_line(buf,
	       "stale kind=fetch vaddr=0xffffffff81000000 tlb_frame=0x1a000 tlb_node=1"
	       " pt_frame=0xd000 pt_node=0 cpu_node=1 content=other first_vcpu=3 first_phase=5 count=1"), 1);
	expect("x86tlb: the stale read", xt_line(buf,
	       "stale kind=read vaddr=0xffffffff81000000 tlb_frame=0xd000 tlb_node=0"
	       " pt_frame=0x1a000 pt_node=1 cpu_node=1 content=same first_vcpu=3 first_phase=5 count=1"), 1);
	expect("x86tlb: a 2 MiB entry's 4 KiB frame, outside the node files", xt_line(buf,
	       "stale kind=read vaddr=0xffffffff81205000 tlb_frame=0x40005000 tlb_node=other"
	       " pt_frame=0xd000 pt_node=0 cpu_node=0 content=other first_vcpu=1 first_phase=5 count=1"), 1);
	snprintf(want, sizeof(want), "phase=5 tlb vcpu=3 node=1 cr3_flush=%" PRIu64
		 " cr3_noflush=%" PRIu64 " cr4_global_flush=%" PRIu64 " invlpg=%" PRIu64
		 " invpcid0=%" PRIu64 " invpcid1=%" PRIu64 " invpcid2=%" PRIu64
		 " invpcid3=%" PRIu64 " ipi=%" PRIu64 " itlb_walks=%" PRIu64
		 " dtlb_walks=%" PRIu64 " stale_fetch=%" PRIu64 " stale_read=%" PRIu64
		 " no_walk=%" PRIu64 " qemu_mismatch=%" PRIu64,
		 row->tlb[0], row->tlb[1], row->tlb[2], row->tlb[3], row->tlb[4],
		 row->tlb[5], row->tlb[6], row->tlb[7], row->tlb[8], row->tlb[9],
		 row->tlb[10], row->tlb[11], row->tlb[12], row->tlb[13], row->tlb[14]);
	expect("x86tlb: the vCPU's tlb line", xt_line(buf, want), 1);
	expect("x86tlb: its stale_fetch", row->tlb[TC_STALE_FETCH], 3 + 1);
	expect("x86tlb: the node's tlb line",
	       strstr(buf, "\nphase=5 tlb node=1 vcpus=2 cr3_flush=") != NULL, 1);

	/* At most 64 stale lines, the most counted first. */
	for (i = 0; i < 70; i++) {
		struct tm_entry e2 = { .frame = XT_F0, .shift = 12 };
		struct walk w2 = { .frame = XT_F1, .shift = 12 };

		note_stale(0, true, 0xffffffff90000000ull + (i << 12), &e2, &w2);
	}
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	if (!f)
		abort();
	print_tlb(f);
	fclose(f);
	for (n = 0, p = buf; (p = strstr(p, "\nstale kind=")); p++)
		n++;
	expect("x86tlb: 64 stale lines at most", n, 64);
	expect("x86tlb: the most counted still first", strncmp(strchr(buf, '\n') + 1,
	       XT_TOP, strlen(XT_TOP)) == 0, 1);
}

/*
 * Arguments install must refuse. It sets home[] to the identity before
 * it parses anything: kept and put back. It refuses before registering
 * anything or changing the TLB shape.
 */
static void xt_args(void)
{
	char *shape_ways[] = { "tlb_shape=10:3" };
	char *shape_zero[] = { "tlb_shape=0:0" };
	char *shape_tail[] = { "tlb_shape=4096:8x" };
	char *not_bool[] = { "tlb=maybe" };
	int saved[MAX_NODES];

	memcpy(saved, home, sizeof(saved));
	expect("x86tlb: install with tlb_shape ENTRIES not a multiple of WAYS",
	       install(1, shape_ways) == -1, 1);
	expect("x86tlb: install with tlb_shape 0:0", install(1, shape_zero) == -1, 1);
	expect("x86tlb: install with tlb_shape and junk", install(1, shape_tail) == -1, 1);
	expect("x86tlb: install with tlb=maybe", install(1, not_bool) == -1, 1);
	expect("x86tlb: the shape kept", tlb_entries * 100 + tlb_ways, 4096 * 100 + 8);
	expect("x86tlb: tlb=on kept", tlb_on, 1);
	memcpy(home, saved, sizeof(saved));
}

static void test_x86tlb(void)
{
	bool was_on = tlb_on;
	unsigned int was_phase = phase_now;

	pthread_once(&setup_once, setup);	/* gpa_host() needs it */
	tlb_on = true;
	phase_now = XT_PHASE;
	expect("x86tlb: tlb_setup", tlb_setup(), 0);
	tlb_vcpu_init(1, 0);
	expect("x86tlb: registers found", reg_cr3 && reg_cr4 && reg_gpr[15] && tlb_on, 1);
	expect("x86tlb: rsp by name", read_reg(reg_gpr[4]), 0);
	xt_reg("rsp", 0x1234);
	expect("x86tlb: rsp read", read_reg(reg_gpr[4]), 0x1234);
	xt_reg("rsp", 0);

	xt_args();
	xt_decode();
	xt_tables();
	xt_walks();
	xt_stale_run();
	xt_resync();
	xt_print();

	phase_now = was_phase;
	tlb_on = was_on;
	memset(fake_regs, 0, sizeof(fake_regs));
}
