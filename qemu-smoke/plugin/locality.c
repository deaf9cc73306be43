// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * locality.c - QEMU 10 TCG plugin: NUMA locality meter for guest text.
 *
 * Attributes every executed guest instruction to (vCPU, mode, node of the
 * guest memory holding the instruction bytes) and prints, at exit, how many
 * kernel instructions each vCPU fetched from its own node and from others.
 * See README.md in this directory for arguments and the output format.
 *
 * How a node is found: the smoke harness (boot.py --meter) backs
 * guest node N with a shared file mapping of <out>/nodeN.mem. At the first
 * translation the plugin reads /proc/self/maps and records the host ranges
 * of those files. qemu_plugin_insn_haddr() gives the host address of an
 * instruction's bytes, so the node is a range lookup, done once per
 * translation. Bytes outside every node file (ROM, NULL haddr) are "other".
 *
 * Mode: the top bit of the guest virtual address (x86_64 kernel half,
 * both 4- and 5-level paging). Code running identity-mapped at a low
 * address (BIOS, setup, the decompressor) therefore counts as "user".
 *
 * Cost: per translated block the instructions are bucketed by (mode, node)
 * and one exec callback per bucket (almost always one) adds the bucket's
 * count to the executing vCPU's row. The bucket is packed into the
 * callback's userdata pointer, so nothing is allocated per block (with
 * cache=on, a block's instruction lines are allocated once per distinct
 * list of lines and shared by every translation that has the same).
 *
 * Optional data=on: a read callback on every kernel-mode instruction
 * attributes kernel data reads by node. qemu_plugin_hwaddr_phys_addr()
 * gives the guest physical address of a RAM access (QEMU 10; 7.2 gave a
 * RAMBlock-relative offset), which the plugin turns into a host address
 * with q35's memory layout (gpa_host()). With rodata=START-END, the
 * kernel reads of virtual addresses in [START, END) are also counted apart.
 *
 * Phases: the guest marks a
 * phase by executing user-mode code in a marker page at a fixed virtual
 * address (PHASE_PAGE): the instruction at offset 16 * P means "phase P
 * begins now" (qemu-smoke/progs/meter-phase.h puts a "ret" there). Phase 0
 * runs from reset to the first marker. Every counter is kept per phase;
 * the report prints the totals (the sum over the phases) and, if the guest
 * marked any phase, each phase that counted anything.
 *
 * Optional cache=on (with data=on): a cache model (cachemodel.h) of a
 * per-vCPU L1i, L1d and L2 and one last-level cache per node, shared by
 * that node's vCPUs. Every instruction line a block fetches (at block
 * entry) and every data access goes through it, user mode included, so
 * that user work evicts kernel lines as it would; what is counted is
 * where kernel instruction fetches and kernel reads of rodata= were
 * served from, and for those that reached memory, from which node. The
 * last slot of the marker page (FLUSH_SLOT) empties every cache of the
 * model without changing the phase: the guest's "cold cache" runs
 * execute it before each operation. A model of where lines come from,
 * not of time: see README.md for what it leaves out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachemodel.h"
#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS	64
#define MAX_NODES	16
#define MAX_RANGES	64
#define COL_OTHER	MAX_NODES		/* memory in no node file */
#define NCOLS		(MAX_NODES + 1)

enum { MODE_USER, MODE_KERNEL, NMODES };

#define NCLASSES	(NMODES * NCOLS)	/* class = mode * NCOLS + col */
#define CLASS_BITS	8
#define CLASS_MASK	((1u << CLASS_BITS) - 1)

/*
 * The marker page: a user virtual address far below the stack and the
 * mmap base (ASLR moves those at most 1 TiB below 0x7fffffffffff with
 * the default vm.mmap_rnd_bits=28; this is 1.6 TiB below). Slot P is the
 * instruction at byte 16 * P; slot 0 and addresses between slots mark
 * nothing. The page has 256 slots: 1..254 are phases, 255 (FLUSH_SLOT)
 * empties the cache model. 254 phases cover kbench's eleven cases on
 * eight nodes, hot and cold, at about 1 KiB per vCPU and phase (16 MiB
 * of .bss with 64 vCPUs, touched only as phases are used).
 */
#define PHASE_PAGE	0x7e5700000000ull
#define PHASE_PAGE_SIZE	4096u
#define PHASE_SLOT	16u
#define MAX_PHASES	255
#define FLUSH_SLOT	255
#define TLB_MAX_CTRS	16

struct vcpu_stats {
	uint64_t insns[NMODES][NCOLS];
	uint64_t reads[NCOLS];		/* kernel-mode data reads */
	uint64_t reads_io;		/* ... from MMIO or unresolved */
	uint64_t rodata[NCOLS];		/* the reads[] of rodata= addresses */
	uint64_t rodata_io;		/* ... and of reads_io */
	/* cache=on: kernel instruction line fetches and rodata= reads ... */
	uint64_t kfetch[CM_NLEVELS];	/* ... by the level that served them */
	uint64_t kfetch_mem[NCOLS];	/* ... those from memory, by node */
	uint64_t krodata[CM_NLEVELS];
	uint64_t krodata_mem[NCOLS];
	uint64_t tlb[TLB_MAX_CTRS];	/* tlb=on: enum tlb_ctr (x86tlb.h) */
} __attribute__((aligned(64)));

struct range {
	uintptr_t start, end;
	int node;
};

static struct vcpu_stats stats[MAX_PHASES][MAX_VCPUS];
/*
 * The phase every vCPU counts in: one global, set by whichever vCPU runs a
 * marker. Under multi-threaded TCG (boot.py --meter) another vCPU sees the
 * new phase from its next block: see README.md, Phases.
 */
static unsigned int phase_now;
static uint64_t phase_marks[MAX_PHASES];	/* markers run, by phase */
static uint64_t flush_marks;		/* FLUSH_SLOT markers run */

/*
 * Stretches: a phase marked again and again (kbench marks each repetition
 * of a case) keeps, per vCPU, the kernel instructions of each stretch
 * apart, the first MAX_STRETCHES of them, so that a reader can take the
 * median over the repetitions: a timer tick, an RCU callback or a
 * kworker that lands in one repetition then does not move the result.
 */
#define MAX_STRETCHES	16
struct stretches {
	uint32_t n;		/* stretches ended, kept or not */
	uint64_t insns[MAX_STRETCHES];
};
static struct stretches stretch[MAX_PHASES][MAX_VCPUS];
static uint64_t stretch_base[MAX_VCPUS];	/* kernel insns at its start */
static int cpu_node[MAX_VCPUS];
static int n_vcpus;
static bool cpunodes_given;
static int home[MAX_NODES];	/* memory node that counts as local, by node */
static bool homes_given;
static bool data_on;
static bool rodata_on;
static uint64_t rodata_start, rodata_end;	/* kernel virtual, [start, end) */
static const char *out_path;

/*
 * The cache model: KiB and ways of each level. Defaults: one core of a
 * 2-socket Intel Xeon Platinum 8480+ (Sapphire Rapids); the last-level
 * cache of a node is llc KiB per vCPU of that node (the LLC slice of one
 * core, times the cores modelled), as if every core of the socket were
 * as busy as ours. Sources: results/model-sources.md.
 */
struct cm_shape {
	const char *name;
	uint64_t kib, ways;
};

enum { SHAPE_L1I, SHAPE_L1D, SHAPE_L2, SHAPE_LLC, CM_NSHAPES };
static struct cm_shape shapes[CM_NSHAPES] = {
	{ "l1i", 32, 8 }, { "l1d", 48, 12 }, { "l2", 2048, 16 }, { "llc", 1920, 15 },
};
static bool cache_on;
static struct cm_cache l1i[MAX_VCPUS], l1d[MAX_VCPUS], l2[MAX_VCPUS];
static struct cm_cache llc[MAX_NODES];
static pthread_mutex_t llc_lock[MAX_NODES];	/* the vCPUs of a node share its LLC */
static bool cache_ready;

/*
 * pages=on: after boot (phase 1 on), the kernel instructions each vCPU
 * fetched from a node other than its home, by virtual page and memory
 * node: what stays remote, and where it is. Counters are interned by
 * (page, node), and each block's share of one by (counter, count).
 */
static bool pages_on;
struct page_ctr {
	struct page_ctr *next;
	uint64_t page;		/* virtual address >> 12 */
	int col;
	uint64_t remote;	/* instructions fetched remotely, phase >= 1 */
};
struct tb_page {
	struct tb_page *next;
	struct page_ctr *pc;
	uint64_t n;		/* the block's instructions on that page */
};
#define PAGE_BUCKETS	16384u
static struct page_ctr *page_ctrs[PAGE_BUCKETS];
static struct tb_page *tb_pages[PAGE_BUCKETS];
static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;

/* The instruction lines of a translated block, for the cache model. */
struct tb_lines {
	bool kernel;
	unsigned int n;
	struct {
		uint64_t line;
		int col;
	} l[];
};

static struct range ranges[MAX_RANGES];
static int n_ranges;
static int max_mem_node = -1;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* Record the host mappings of every nodeN.mem file QEMU has mapped. */
static void parse_maps(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f) {
		fprintf(stderr, "locality: /proc/self/maps: %s\n", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		const char *path, *base;
		int pos = 0, node, tail = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &pos) < 2 ||
		    !pos)
			continue;
		path = line + pos;
		base = strrchr(path, '/');
		if (!base || sscanf(base, "/node%d.mem%n", &node, &tail) != 1 || !tail)
			continue;
		if (base[tail] != '\n' && base[tail] != ' ' && base[tail] != '\0')
			continue;
		if (node < 0 || node >= MAX_NODES || n_ranges == MAX_RANGES) {
			fprintf(stderr, "locality: ignoring mapping of %s", path);
			continue;
		}
		ranges[n_ranges++] = (struct range){ start, end, node };
		if (node > max_mem_node)
			max_mem_node = node;
	}
	fclose(f);
	if (!n_ranges)
		fprintf(stderr, "locality: no nodeN.mem mapping found: boot with boot.py --meter; all fetches count as other\n");
}

/*
 * Guest physical memory as q35 lays it out (QEMU 10, hw/i386/pc_q35.c and
 * hw/core/numa.c): the node memory backends follow one another, in node
 * order, in one RAM region; its first below_4g bytes appear at guest
 * physical 0 and the rest at 4 GiB. below_4g is 2 GiB when there is
 * 2.75 GiB of RAM or more, else all of it. DIMMs (dimmN.mem) are not
 * mapped here: their accesses count as "other".
 */
struct gmem {
	uintptr_t host;
	uint64_t off, size;	/* in the RAM region */
};
static struct gmem gmem[MAX_NODES];
static int n_gmem;
static uint64_t ram_size, below_4g;

#define GIB	(1ull << 30)

static void layout_gpa(void)
{
	int n, i;

	for (n = 0; n < MAX_NODES; n++) {
		uintptr_t lo = UINTPTR_MAX, hi = 0;

		for (i = 0; i < n_ranges; i++) {
			if (ranges[i].node != n)
				continue;
			lo = ranges[i].start < lo ? ranges[i].start : lo;
			hi = ranges[i].end > hi ? ranges[i].end : hi;
		}
		if (!hi)
			continue;
		gmem[n_gmem++] = (struct gmem){ lo, ram_size, hi - lo };
		ram_size += hi - lo;
	}
	below_4g = ram_size >= 0xb0000000ull ? 2 * GIB : ram_size;
}

/* The host address of guest physical @gpa in a node file, or NULL. */
static void *gpa_host(uint64_t gpa)
{
	uint64_t off;
	int i;

	if (gpa < below_4g)
		off = gpa;
	else if (gpa >= 4 * GIB && gpa - 4 * GIB < ram_size - below_4g)
		off = gpa - 4 * GIB + below_4g;
	else
		return NULL;
	for (i = 0; i < n_gmem; i++)
		if (off - gmem[i].off < gmem[i].size)
			return (void *)(gmem[i].host + (off - gmem[i].off));
	return NULL;
}

static int node_of(const void *host)
{
	uintptr_t h = (uintptr_t)host;
	int i;

	if (!host)
		return COL_OTHER;
	for (i = 0; i < n_ranges; i++)
		if (h >= ranges[i].start && h < ranges[i].end)
			return ranges[i].node;
	return COL_OTHER;
}

#include "x86tlb.h"

/* boot.py's layout, unless cpunodes= said: CPUs split evenly over the nodes. */
static void guess_cpunodes(void)
{
	int v, mem_nodes = max_mem_node + 1 > 0 ? max_mem_node + 1 : 1;

	if (cpunodes_given)
		return;
	for (v = 0; v < n_vcpus; v++)
		cpu_node[v] = v * mem_nodes / n_vcpus;
}

/*
 * At the first translation: the node files, the vCPUs' nodes, and each
 * node's last-level cache (llc KiB per vCPU of the node). A cache that
 * cannot be allocated turns the model off, with a message.
 */
static void setup(void)
{
	int v, n;

	parse_maps();
	layout_gpa();
	guess_cpunodes();
	for (n = 0; n < MAX_NODES; n++)
		pthread_mutex_init(&llc_lock[n], NULL);
	if (!cache_on)
		return;
	for (n = 0; n < MAX_NODES; n++) {
		uint64_t cnt = 0;

		for (v = 0; v < n_vcpus; v++)
			cnt += cpu_node[v] == n;
		if (cnt && cm_init(&llc[n], shapes[SHAPE_LLC].kib * cnt,
				   shapes[SHAPE_LLC].ways)) {
			fprintf(stderr, "locality: no memory for node %d's last-level cache: cache model off\n", n);
			return;
		}
	}
	cache_ready = true;
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata;

	if (vcpu < MAX_VCPUS)
		(&stats[phase_now][vcpu].insns[0][0])[v & CLASS_MASK] += v >> CLASS_BITS;
}

/* Kernel instructions of @vcpu in @phase so far, from every memory column. */
static uint64_t kernel_insns(unsigned int phase, int vcpu)
{
	uint64_t sum = 0;
	int c;

	for (c = 0; c < NCOLS; c++)
		sum += stats[phase][vcpu].insns[MODE_KERNEL][c];
	return sum;
}

/* The current stretch of phase_now ends: keep each vCPU's count. */
static void end_stretch(void)
{
	int v;

	for (v = 0; v < n_vcpus; v++) {
		struct stretches *st = &stretch[phase_now][v];

		if (st->n < MAX_STRETCHES)
			st->insns[st->n] = kernel_insns(phase_now, v) - stretch_base[v];
		st->n++;
	}
}

/*
 * One access through @vcpu's L1 @l1 (instruction or data), its L2 and its
 * node's last-level cache, in that order; every level that missed is
 * filled. The node's vCPUs share the LLC and, under multi-threaded TCG
 * (the harness's with the meter: see README.md), run at once: the LLC is
 * locked.
 */
static enum cm_level cache_lookup(struct cm_cache *l1, unsigned int vcpu, uint64_t line)
{
	int node = cpu_node[vcpu];
	enum cm_level lvl;

	if (cm_access(l1, line))
		return CM_L1;
	if (cm_access(&l2[vcpu], line))
		return CM_L2;
	pthread_mutex_lock(&llc_lock[node]);
	lvl = cm_access(&llc[node], line) ? CM_LLC : CM_MEM;
	pthread_mutex_unlock(&llc_lock[node]);
	return lvl;
}

/* Empty every cache of the model. */
static void cache_flush_all(void)
{
	int i;

	for (i = 0; i < n_vcpus; i++) {
		cm_flush(&l1i[i]);
		cm_flush(&l1d[i]);
		cm_flush(&l2[i]);
	}
	for (i = 0; i < MAX_NODES; i++)
		if (llc[i].tag)
			cm_flush(&llc[i]);
}

/* A marker runs: udata is its slot. Its own instruction counted already. */
static void phase_mark(unsigned int vcpu, void *udata)
{
	uintptr_t slot = (uintptr_t)udata;

	(void)vcpu;
	if (slot == FLUSH_SLOT) {
		__atomic_fetch_add(&flush_marks, 1, __ATOMIC_RELAXED);
		if (cache_ready)
			cache_flush_all();
		for (slot = 0; tlb_on && slot < (uintptr_t)n_vcpus; slot++) {
			tm_reset(&vtlb[slot].itlb);	/* cold TLBs too */
			tm_reset(&vtlb[slot].dtlb);
		}
		return;
	}
	end_stretch();
	phase_now = (unsigned int)slot;
	__atomic_fetch_add(&phase_marks[slot], 1, __ATOMIC_RELAXED);
	for (slot = 0; slot < (uintptr_t)n_vcpus; slot++)
		stretch_base[slot] = kernel_insns(phase_now, (int)slot);
}

/* A block runs: its instruction lines go through the vCPU's caches. */
static void cache_fetch(unsigned int vcpu, void *udata)
{
	const struct tb_lines *t = udata;
	struct vcpu_stats *s;
	unsigned int i;

	if (vcpu >= MAX_VCPUS || !cache_ready)
		return;
	s = &stats[phase_now][vcpu];
	for (i = 0; i < t->n; i++) {
		enum cm_level lvl = cache_lookup(&l1i[vcpu], vcpu, t->l[i].line);

		if (!t->kernel)
			continue;
		s->kfetch[lvl]++;
		if (lvl == CM_MEM)
			s->kfetch_mem[t->l[i].col]++;
	}
}

/*
 * A data access. udata: the instruction's mode, plus MEM_STORE for the
 * callback registered for stores (an atomic read-modify-write calls both).
 * data=on counts kernel loads by node; cache=on sends every access
 * through the vCPU's data caches and counts where kernel loads of
 * rodata= were served from.
 */
#define MEM_STORE	2u

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
		       uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	bool read = (uintptr_t)udata == MODE_KERNEL;
	bool rodata = read && rodata_on && vaddr >= rodata_start && vaddr < rodata_end;
	bool ram = hw && !qemu_plugin_hwaddr_is_io(hw);
	void *host = ram ? gpa_host(qemu_plugin_hwaddr_phys_addr(hw)) : NULL;
	struct vcpu_stats *s;
	enum cm_level lvl;
	int col;

	if (vcpu >= MAX_VCPUS)
		return;
	s = &stats[phase_now][vcpu];
	if (tlb_on && hw && !ram && (uintptr_t)udata & MEM_STORE &&
	    qemu_plugin_hwaddr_phys_addr(hw) == XAPIC_ICR)
		s->tlb[TC_IPI]++;
	col = host ? node_of(host) : COL_OTHER;
	if (read && !ram) {
		s->reads_io++;
		s->rodata_io += rodata;
	} else if (read) {
		s->reads[col]++;
		s->rodata[col] += rodata;
	}
	if (rodata)
		tlb_read(vcpu, vaddr);
	if (!cache_ready || !host)
		return;
	lvl = cache_lookup(&l1d[vcpu], vcpu, (uintptr_t)host >> CM_LINE_SHIFT);
	if (rodata) {
		s->krodata[lvl]++;
		if (lvl == CM_MEM)
			s->krodata_mem[col]++;
	}
}

/*
 * Line lists are interned: QEMU cannot free a callback's userdata, and
 * blocks are translated again and again (code buffer flushes), so each
 * distinct list is kept once, in a hash table, for the whole run.
 */
#define INTERN_BUCKETS	65536u
struct intern {
	struct intern *next;
	struct tb_lines *t;
};
static struct intern *interned[INTERN_BUCKETS];
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

/* @t, or an equal list kept before (then @t is freed). */
static struct tb_lines *intern_lines(struct tb_lines *t)
{
	uint64_t h = 14695981039346656037ull ^ t->kernel;
	struct intern *e;
	unsigned int i, b;

	for (i = 0; i < t->n; i++)
		h = (h ^ t->l[i].line) * 1099511628211ull;
	b = (unsigned int)(h % INTERN_BUCKETS);
	pthread_mutex_lock(&intern_lock);
	for (e = interned[b]; e; e = e->next) {
		if (e->t->n == t->n && e->t->kernel == t->kernel &&
		    !memcmp(e->t->l, t->l, t->n * sizeof(t->l[0]))) {
			pthread_mutex_unlock(&intern_lock);
			free(t);
			return e->t;
		}
	}
	e = malloc(sizeof(*e));
	if (e) {
		e->t = t;
		e->next = interned[b];
		interned[b] = e;
	}
	pthread_mutex_unlock(&intern_lock);
	return t;
}

/*
 * The distinct instruction lines of @tb, in order (NULL if none). An
 * instruction that runs into the next page counts the lines of its first
 * page only: the host address of the next guest page is not known here.
 */
static struct tb_lines *tb_lines_of(struct qemu_plugin_tb *tb, size_t n)
{
	struct tb_lines *t = calloc(1, sizeof(*t) + 2 * n * sizeof(t->l[0]));
	size_t i;

	if (!t)
		return NULL;
	t->n = 0;
	t->kernel = n && qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0)) >> 63;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uintptr_t h = (uintptr_t)qemu_plugin_insn_haddr(insn);
		size_t size = qemu_plugin_insn_size(insn);
		uint64_t first = h >> CM_LINE_SHIFT;
		uint64_t last = (h + (size ? size - 1 : 0)) >> CM_LINE_SHIFT;
		uint64_t line;

		if (!h)
			continue;	/* not RAM: not modelled */
		if ((h & (PHASE_PAGE_SIZE - 1)) + size > PHASE_PAGE_SIZE)
			last = (h | (PHASE_PAGE_SIZE - 1)) >> CM_LINE_SHIFT;
		for (line = first; line <= last; line++) {
			if (t->n && t->l[t->n - 1].line == line)
				continue;
			t->l[t->n].line = line;
			t->l[t->n++].col = node_of((void *)(line << CM_LINE_SHIFT));
		}
	}
	if (!t->n) {
		free(t);
		return NULL;
	}
	return intern_lines(t);
}

/* A block's instructions on a page run: count them if remote, after boot. */
static void page_exec(unsigned int vcpu, void *udata)
{
	struct tb_page *tp = udata;

	if (!phase_now || vcpu >= MAX_VCPUS || tp->pc->col == COL_OTHER ||
	    tp->pc->col == home[cpu_node[vcpu]])
		return;
	__atomic_fetch_add(&tp->pc->remote, tp->n, __ATOMIC_RELAXED);
}

/* The interned share of @n instructions on (@page, @col). */
static struct tb_page *tb_page_of(uint64_t page, int col, uint64_t n)
{
	unsigned int b = (unsigned int)((page * 31 + (uint64_t)col) % PAGE_BUCKETS);
	struct page_ctr *pc;
	struct tb_page *tp;

	pthread_mutex_lock(&page_lock);
	for (pc = page_ctrs[b]; pc; pc = pc->next)
		if (pc->page == page && pc->col == col)
			break;
	if (!pc) {
		pc = calloc(1, sizeof(*pc));
		if (!pc)
			goto out;
		pc->page = page;
		pc->col = col;
		pc->next = page_ctrs[b];
		page_ctrs[b] = pc;
	}
	b = (unsigned int)(((uintptr_t)pc / 64 * 31 + n) % PAGE_BUCKETS);
	for (tp = tb_pages[b]; tp; tp = tp->next)
		if (tp->pc == pc && tp->n == n)
			goto out;
	tp = malloc(sizeof(*tp));
	if (tp) {
		tp->pc = pc;
		tp->n = n;
		tp->next = tb_pages[b];
		tb_pages[b] = tp;
	}
out:
	pthread_mutex_unlock(&page_lock);
	return pc ? tp : NULL;
}

/* pages=on: one callback per (page, node) run of a kernel block. */
static void register_pages(struct qemu_plugin_tb *tb, size_t n)
{
	uint64_t page = 0, cnt = 0;
	int col = -1;
	size_t i;

	for (i = 0; i <= n; i++) {
		struct qemu_plugin_insn *insn = i < n ? qemu_plugin_tb_get_insn(tb, i) : NULL;
		uint64_t vaddr = insn ? qemu_plugin_insn_vaddr(insn) : 0;
		int c = insn ? node_of(qemu_plugin_insn_haddr(insn)) : -1;

		if (insn && !(vaddr >> 63))
			return;		/* a user block */
		if (cnt && (!insn || vaddr >> 12 != page || c != col)) {
			struct tb_page *tp = tb_page_of(page, col, cnt);

			if (tp)
				qemu_plugin_register_vcpu_tb_exec_cb(tb, page_exec,
								     QEMU_PLUGIN_CB_NO_REGS, tp);
			cnt = 0;
		}
		if (!insn)
			break;
		if (!cnt) {
			page = vaddr >> 12;
			col = c;
		}
		cnt++;
	}
}

static int cmp_remote(const void *a, const void *b)
{
	const struct page_ctr *x = *(struct page_ctr *const *)a;
	const struct page_ctr *y = *(struct page_ctr *const *)b;

	return (x->remote < y->remote) - (x->remote > y->remote);
}

/*
 * "remote_pages pages=N insns=N", then "remote_page vaddr=0x... mem=M
 * insns=N" for the PAGES_TOP pages with most, most first.
 */
#define PAGES_TOP	40
static void print_pages(FILE *f)
{
	struct page_ctr **all = NULL, *pc;
	size_t cnt = 0, cap = 0, i;
	uint64_t total = 0;
	unsigned int b;

	for (b = 0; b < PAGE_BUCKETS; b++) {
		for (pc = page_ctrs[b]; pc; pc = pc->next) {
			if (!pc->remote)
				continue;
			if (cnt == cap) {
				struct page_ctr **n = realloc(all, (cap = cap ? 2 * cap : 256) * sizeof(*all));

				if (!n)
					break;
				all = n;
			}
			all[cnt++] = pc;
			total += pc->remote;
		}
	}
	if (cnt)
		qsort(all, cnt, sizeof(*all), cmp_remote);
	fprintf(f, "remote_pages pages=%zu insns=%" PRIu64 "\n", cnt, total);
	for (i = 0; i < cnt && i < PAGES_TOP; i++) {
		fprintf(f, "remote_page vaddr=0x%" PRIx64 " mem=", all[i]->page << 12);
		if (all[i]->col == COL_OTHER)
			fprintf(f, "other");
		else
			fprintf(f, "%d", all[i]->col);
		fprintf(f, " insns=%" PRIu64 "\n", all[i]->remote);
	}
	free(all);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint32_t count[NCLASSES] = { 0 };
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	int c;

	(void)id;
	pthread_once(&setup_once, setup);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
		int mode = vaddr >> 63 ? MODE_KERNEL : MODE_USER;
		uint64_t off = vaddr - PHASE_PAGE;	/* the page is user mode */

		count[mode * NCOLS + node_of(qemu_plugin_insn_haddr(insn))]++;
		if (tlb_on)
			tlb_insn(insn);
		if (off < PHASE_PAGE_SIZE && off && off % PHASE_SLOT == 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, phase_mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)(off / PHASE_SLOT));
		if (cache_ready || (data_on && mode == MODE_KERNEL))
			qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
							 QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_R,
							 (void *)(uintptr_t)mode);
		if (cache_ready || (tlb_on && mode == MODE_KERNEL))
			qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
							 QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_W,
							 (void *)(uintptr_t)(mode | MEM_STORE));
	}
	if (pages_on)
		register_pages(tb, n);
	if (tlb_on && n && qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0)) >> 63)
		tlb_block(tb, n);
	if (cache_ready) {
		struct tb_lines *t = tb_lines_of(tb, n);

		if (t)
			qemu_plugin_register_vcpu_tb_exec_cb(tb, cache_fetch,
							     QEMU_PLUGIN_CB_NO_REGS, t);
	}
	for (c = 0; c < NCLASSES; c++) {
		uintptr_t v = ((uintptr_t)count[c] << CLASS_BITS) | (uintptr_t)c;

		if (count[c])
			qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec,
							     QEMU_PLUGIN_CB_NO_REGS,
							     (void *)v);
	}
}

static int nodes_total(void)
{
	int i, max = max_mem_node;

	for (i = 0; i < n_vcpus; i++)
		if (cpu_node[i] > max)
			max = cpu_node[i];
	return max + 1 > 0 ? max + 1 : 1;
}

/* "0.1234", or "na" when nothing was fetched from node memory at all. */
static const char *frac(uint64_t remote, uint64_t local)
{
	static char buf[16];

	if (!(remote + local))
		return "na";
	snprintf(buf, sizeof(buf), "%.4f", (double)remote / (double)(remote + local));
	return buf;
}

/* Sums of one row of a vCPU on @node: local (its home), remote, other. */
static void split(const uint64_t *row, int node, uint64_t *loc, uint64_t *rem,
		  uint64_t *oth)
{
	int m;

	for (m = 0; m < MAX_NODES; m++) {
		if (m == home[node])
			*loc += row[m];
		else
			*rem += row[m];
	}
	*oth += row[COL_OTHER];
}

/* What a line counts: instructions, kernel data reads, or rodata reads. */
enum kind { K_INSNS, K_DATA, K_RODATA };

/*
 * One line for the vCPUs @members (all on @node) of @rows: LEAD WHO and
 * the counts. K_INSNS: "kernel_local=N ... user_other=N" (with @phase,
 * also "kernel_insns=N"); K_DATA: "data WHO kernel_local=N ...
 * kernel_io=N"; K_RODATA: "rodata WHO rodata_local=N ... rodata_io=N".
 * Then "remote_frac=F".
 */
static void print_line(FILE *f, const char *lead, const char *who,
		       const struct vcpu_stats *rows, const int *members,
		       int cnt, int node, enum kind kind, bool phase)
{
	uint64_t kl = 0, kr = 0, ko = 0, ul = 0, ur = 0, uo = 0, io = 0;
	const char *key = kind == K_RODATA ? "rodata" : "kernel";
	int i;

	for (i = 0; i < cnt; i++) {
		const struct vcpu_stats *s = &rows[members[i]];

		if (kind == K_INSNS) {
			split(s->insns[MODE_KERNEL], node, &kl, &kr, &ko);
			split(s->insns[MODE_USER], node, &ul, &ur, &uo);
		} else if (kind == K_DATA) {
			split(s->reads, node, &kl, &kr, &ko);
			io += s->reads_io;
		} else {
			split(s->rodata, node, &kl, &kr, &ko);
			io += s->rodata_io;
		}
	}
	fprintf(f, "%s%s%s %s_local=%" PRIu64 " %s_remote=%" PRIu64
		" %s_other=%" PRIu64, lead,
		kind == K_DATA ? "data " : kind == K_RODATA ? "rodata " : "",
		who, key, kl, key, kr, key, ko);
	if (kind == K_INSNS) {
		fprintf(f, " user_local=%" PRIu64 " user_remote=%" PRIu64
			" user_other=%" PRIu64, ul, ur, uo);
		if (phase)
			fprintf(f, " kernel_insns=%" PRIu64, kl + kr + ko);
	} else {
		fprintf(f, " %s_io=%" PRIu64, key, io);
	}
	fprintf(f, " remote_frac=%s\n", frac(kr, kl));
}

/* A line per vCPU, then a line per node with vCPUs (their sum). */
static void print_lines(FILE *f, const char *lead, const struct vcpu_stats *rows,
			int nodes, enum kind kind, bool phase)
{
	char who[64];
	int v, n;

	for (v = 0; v < n_vcpus; v++) {
		snprintf(who, sizeof(who), "vcpu=%d node=%d home=%d", v,
			 cpu_node[v], home[cpu_node[v]]);
		print_line(f, lead, who, rows, &v, 1, cpu_node[v], kind, phase);
	}
	for (n = 0; n < nodes; n++) {
		int members[MAX_VCPUS], cnt = 0;

		for (v = 0; v < n_vcpus; v++)
			if (cpu_node[v] == n)
				members[cnt++] = v;
		if (!cnt)
			continue;
		snprintf(who, sizeof(who), "node=%d home=%d vcpus=%d", n, home[n], cnt);
		print_line(f, lead, who, rows, members, cnt, n, kind, phase);
	}
}

/* " mem=M" for memory column @col: its node, or "other". */
static void print_mem(FILE *f, int col)
{
	if (col == COL_OTHER)
		fprintf(f, " mem=other");
	else
		fprintf(f, " mem=%d", col);
}

/*
 * "LEAD NAME from=F mem=M kernel_insns=N" (or kernel_reads=N): for each
 * node F with vCPUs and each memory column M, the kernel instructions (or
 * data reads, or rodata reads) of F's vCPUs.
 */
static void print_node_matrix(FILE *f, const char *lead, const struct vcpu_stats *rows,
			      int nodes, enum kind kind)
{
	const char *name = kind == K_INSNS ? "matrix" :
			   kind == K_DATA ? "data matrix" : "rodata matrix";
	int n, m, v;

	for (n = 0; n < nodes; n++) {
		bool any = false;

		for (v = 0; v < n_vcpus; v++)
			any |= cpu_node[v] == n;
		if (!any)
			continue;
		for (m = 0; m <= nodes; m++) {
			int col = m == nodes ? COL_OTHER : m;
			uint64_t sum = 0;

			for (v = 0; v < n_vcpus; v++) {
				if (cpu_node[v] != n)
					continue;
				sum += kind == K_INSNS ? rows[v].insns[MODE_KERNEL][col] :
				       kind == K_DATA ? rows[v].reads[col] : rows[v].rodata[col];
			}
			fprintf(f, "%s%s from=%d", lead, name, n);
			print_mem(f, col);
			fprintf(f, " %s=%" PRIu64 "\n",
				kind == K_INSNS ? "kernel_insns" : "kernel_reads", sum);
		}
	}
}

/* " NAME_l1=N NAME_l2=N NAME_llc=N NAME_local=N NAME_remote=N NAME_other=N" */
static void print_levels(FILE *f, const char *name, const uint64_t *lvl,
			 const uint64_t *mem, int node)
{
	uint64_t loc = 0, rem = 0, oth = 0;

	split(mem, node, &loc, &rem, &oth);
	fprintf(f, " %s_l1=%" PRIu64 " %s_l2=%" PRIu64 " %s_llc=%" PRIu64
		" %s_local=%" PRIu64 " %s_remote=%" PRIu64 " %s_other=%" PRIu64,
		name, lvl[CM_L1], name, lvl[CM_L2], name, lvl[CM_LLC],
		name, loc, name, rem, name, oth);
}

/*
 * The cache model, a line per vCPU and per node with vCPUs: "LEAD cache
 * WHO fetch_l1=N ... fetch_other=N rodata_l1=N ... rodata_other=N", the
 * kernel's instruction line fetches and rodata= reads by where they were
 * served from (local and remote: memory of the vCPU's home node or not).
 */
static void print_cache(FILE *f, const char *lead, const struct vcpu_stats *rows,
			int nodes)
{
	int v, n, c, l;

	for (v = 0; v < n_vcpus + nodes; v++) {
		struct vcpu_stats sum = { 0 };
		int node = v < n_vcpus ? cpu_node[v] : v - n_vcpus, cnt = 0, i;

		for (i = 0; i < n_vcpus; i++) {
			if (v < n_vcpus ? i != v : cpu_node[i] != node)
				continue;
			cnt++;
			for (l = 0; l < CM_NLEVELS; l++) {
				sum.kfetch[l] += rows[i].kfetch[l];
				sum.krodata[l] += rows[i].krodata[l];
			}
			for (c = 0; c < NCOLS; c++) {
				sum.kfetch_mem[c] += rows[i].kfetch_mem[c];
				sum.krodata_mem[c] += rows[i].krodata_mem[c];
			}
		}
		if (!cnt)
			continue;
		n = home[node];
		if (v < n_vcpus)
			fprintf(f, "%scache vcpu=%d node=%d home=%d", lead, v, node, n);
		else
			fprintf(f, "%scache node=%d home=%d vcpus=%d", lead, node, n, cnt);
		print_levels(f, "fetch", sum.kfetch, sum.kfetch_mem, node);
		print_levels(f, "rodata", sum.krodata, sum.krodata_mem, node);
		fprintf(f, "\n");
	}
}

/* tlb=on: the TLB counters of each vCPU, then of each node. */
static void print_tlb_counts(FILE *f, const char *lead, const struct vcpu_stats *rows,
			     int nodes)
{
	int v, i, c;

	for (v = 0; v < n_vcpus + nodes; v++) {
		uint64_t sum[TC_NCTRS] = { 0 };
		int node = v < n_vcpus ? cpu_node[v] : v - n_vcpus, cnt = 0;

		for (i = 0; i < n_vcpus; i++) {
			if (v < n_vcpus ? i != v : cpu_node[i] != node)
				continue;
			cnt++;
			for (c = 0; c < TC_NCTRS; c++)
				sum[c] += rows[i].tlb[c];
		}
		if (!cnt)
			continue;
		if (v < n_vcpus)
			fprintf(f, "%stlb vcpu=%d node=%d", lead, v, node);
		else
			fprintf(f, "%stlb node=%d vcpus=%d", lead, node, cnt);
		for (c = 0; c < TC_NCTRS; c++)
			fprintf(f, " %s=%" PRIu64, tlb_ctr_name[c], sum[c]);
		fprintf(f, "\n");
	}
}

/*
 * Every count of @rows (one vcpu_stats per vCPU), each line led by @lead:
 * "" for the totals, "phase=P " for phase P (@phase: with kernel_insns=).
 */
static void print_counts(FILE *f, const char *lead, const struct vcpu_stats *rows,
			 int nodes, bool phase)
{
	int v, m;

	print_lines(f, lead, rows, nodes, K_INSNS, phase);
	/* Per vCPU and per memory node, then per vCPU node and memory node. */
	for (v = 0; v < n_vcpus; v++) {
		for (m = 0; m <= nodes; m++) {
			int col = m == nodes ? COL_OTHER : m;

			fprintf(f, "%svmatrix vcpu=%d", lead, v);
			print_mem(f, col);
			fprintf(f, " kernel_insns=%" PRIu64 " user_insns=%" PRIu64 "\n",
				rows[v].insns[MODE_KERNEL][col],
				rows[v].insns[MODE_USER][col]);
		}
	}
	print_node_matrix(f, lead, rows, nodes, K_INSNS);
	if (data_on) {
		print_lines(f, lead, rows, nodes, K_DATA, phase);
		print_node_matrix(f, lead, rows, nodes, K_DATA);
	}
	if (rodata_on) {
		print_lines(f, lead, rows, nodes, K_RODATA, phase);
		print_node_matrix(f, lead, rows, nodes, K_RODATA);
	}
	if (cache_ready)
		print_cache(f, lead, rows, nodes);
	if (tlb_on)
		print_tlb_counts(f, lead, rows, nodes);
}

static void add_stats(struct vcpu_stats *dst, const struct vcpu_stats *src)
{
	int c, m;

	for (c = 0; c < NCOLS; c++) {
		for (m = 0; m < NMODES; m++)
			dst->insns[m][c] += src->insns[m][c];
		dst->reads[c] += src->reads[c];
		dst->rodata[c] += src->rodata[c];
	}
	dst->reads_io += src->reads_io;
	dst->rodata_io += src->rodata_io;
	for (c = 0; c < CM_NLEVELS; c++) {
		dst->kfetch[c] += src->kfetch[c];
		dst->krodata[c] += src->krodata[c];
	}
	for (c = 0; c < NCOLS; c++) {
		dst->kfetch_mem[c] += src->kfetch_mem[c];
		dst->krodata_mem[c] += src->krodata_mem[c];
	}
	for (c = 0; c < TLB_MAX_CTRS; c++)
		dst->tlb[c] += src->tlb[c];
}

/* Instructions of @mode in @s, from every memory column. */
static uint64_t insns_of(const struct vcpu_stats *s, int mode)
{
	uint64_t sum = 0;
	int c;

	for (c = 0; c < NCOLS; c++)
		sum += s->insns[mode][c];
	return sum;
}

/*
 * "phase=P stretches vcpu=V n=N kernel_insns=A:B:..." for each vCPU of a
 * phase that was marked more than once: its kernel instructions in each
 * stretch, the first MAX_STRETCHES of the n.
 */
static void print_stretches(FILE *f, int p)
{
	int v;
	uint32_t i;

	if (phase_marks[p] < 2)
		return;
	for (v = 0; v < n_vcpus; v++) {
		const struct stretches *st = &stretch[p][v];

		fprintf(f, "phase=%d stretches vcpu=%d n=%" PRIu32 " kernel_insns=", p, v, st->n);
		for (i = 0; i < st->n && i < MAX_STRETCHES; i++)
			fprintf(f, "%s%" PRIu64, i ? ":" : "", st->insns[i]);
		fprintf(f, "\n");
	}
}

static void report(FILE *f)
{
	static struct vcpu_stats total[MAX_VCPUS];
	uint64_t marks = 0;
	int nodes = nodes_total();
	int v, n, p;
	char lead[32];

	end_stretch();		/* the one under way */
	for (p = 0; p < MAX_PHASES; p++) {
		marks += phase_marks[p];
		for (v = 0; v < n_vcpus; v++)
			add_stats(&total[v], &stats[p][v]);
	}

	fprintf(f, "locality version=3 nodes=%d vcpus=%d data=%s mapped_ranges=%d cpunodes_src=%s cpunodes=",
		nodes, n_vcpus, data_on ? "on" : "off", n_ranges,
		cpunodes_given ? "arg" : "guess");
	for (v = 0; v < n_vcpus; v++)
		fprintf(f, "%s%d", v ? ":" : "", cpu_node[v]);
	fprintf(f, " homes_src=%s homes=", homes_given ? "arg" : "self");
	for (n = 0; n < nodes; n++)
		fprintf(f, "%s%d", n ? ":" : "", home[n]);
	fprintf(f, " phase_page=0x%llx max_phases=%d phase_marks=%" PRIu64
		" flush_marks=%" PRIu64, PHASE_PAGE, MAX_PHASES - 1, marks,
		flush_marks);
	if (rodata_on)
		fprintf(f, " rodata=%" PRIx64 "-%" PRIx64, rodata_start, rodata_end);
	else
		fprintf(f, " rodata=off");
	fprintf(f, " cache=%s tlb=%s", cache_ready ? "on" : "off", tlb_on ? "on" : "off");
	for (v = 0; cache_ready && v < CM_NSHAPES; v++)
		fprintf(f, " cache_%s=%" PRIu64 ":%" PRIu64 "%s", shapes[v].name,
			shapes[v].kib, shapes[v].ways,
			v == SHAPE_LLC ? "/vcpu" : "");
	fprintf(f, "\n");

	print_counts(f, "", total, nodes, false);

	/* Phases, if the guest marked any: those that were marked or counted. */
	for (p = 0; marks && p < MAX_PHASES; p++) {
		struct vcpu_stats sum = { 0 };
		uint64_t kernel, user, reads;

		for (v = 0; v < n_vcpus; v++)
			add_stats(&sum, &stats[p][v]);
		kernel = insns_of(&sum, MODE_KERNEL);
		user = insns_of(&sum, MODE_USER);
		reads = sum.reads_io;
		for (n = 0; n < NCOLS; n++)
			reads += sum.reads[n];
		if (!phase_marks[p] && !kernel && !user && !reads)
			continue;
		fprintf(f, "phase=%d marks=%" PRIu64 " kernel_insns=%" PRIu64
			" user_insns=%" PRIu64 "\n", p, phase_marks[p], kernel, user);
		snprintf(lead, sizeof(lead), "phase=%d ", p);
		print_counts(f, lead, stats[p], nodes, true);
		print_stretches(f, p);
	}
	if (pages_on)
		print_pages(f);
	if (tlb_on)
		print_tlb(f);
	fprintf(f, "end\n");
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	FILE *f;

	(void)id;
	(void)udata;
	pthread_once(&setup_once, setup);
	/* Not qemu_plugin_outs(): QEMU prints that only with "-d plugin". */
	f = out_path ? fopen(out_path, "w") : stderr;
	if (!f) {
		fprintf(stderr, "locality: %s: %s\n", out_path, strerror(errno));
		return;
	}
	report(f);
	if (f == stderr)
		fflush(f);
	else
		fclose(f);
}

/*
 * A list of node numbers, "0:0:1:1" (',' also accepted, as QEMU's ",,"
 * escape of a comma). Returns the number of entries or -1.
 */
static int parse_nodes(const char *s, int *dst, int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long node = strtol(s, &end, 10);

		if (end == s || node < 0 || node >= MAX_NODES || n == max)
			return -1;
		dst[n++] = (int)node;
		s = end;
		if (*s == ':' || *s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/* "START-END", kernel virtual addresses in hex ("0x" optional), START < END. */
static bool parse_range(const char *s, uint64_t *start, uint64_t *end)
{
	char *p, *q;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*start = strtoull(s, &p, 16);
	if (*p != '-' || p[1] == '\0' || p[1] == '-')
		return false;
	*end = strtoull(p + 1, &q, 16);
	return !errno && !*q && *start < *end;
}

/*
 * "l1i=KIB:WAYS" (and l1d, l2, llc): 1 if @arg names a cache level and
 * its shape is good, -1 (with a message) if the shape is bad, 0 if @arg
 * names no level.
 */
static int parse_shape(const char *arg, const char *val)
{
	struct cm_cache probe;
	unsigned long long kib, ways;
	int i, pos = 0;

	for (i = 0; i < CM_NSHAPES; i++) {
		size_t len = strlen(shapes[i].name);

		if (strncmp(arg, shapes[i].name, len) || arg[len] != '=')
			continue;
		if (sscanf(val, "%llu:%llu%n", &kib, &ways, &pos) != 2 || val[pos] ||
		    cm_init(&probe, kib, ways)) {
			fprintf(stderr, "locality: bad cache shape '%s' (want KIB:WAYS, KIB * 16 a multiple of WAYS)\n", arg);
			return -1;
		}
		free(probe.tag);
		free(probe.stamp);
		shapes[i].kib = kib;
		shapes[i].ways = ways;
		return 1;
	}
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i, shape, given = 0;

	if (!info->system_emulation) {
		fprintf(stderr, "locality: needs system emulation\n");
		return -1;
	}
	n_vcpus = info->system.smp_vcpus;
	if (n_vcpus > MAX_VCPUS) {
		fprintf(stderr, "locality: %d vCPUs, only the first %d are counted\n",
			n_vcpus, MAX_VCPUS);
		n_vcpus = MAX_VCPUS;
	}
	for (i = 0; i < MAX_NODES; i++)
		home[i] = i;
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = strchr(arg, '=');

		if (!val) {
			fprintf(stderr, "locality: bad argument '%s' (want key=value)\n", arg);
			return -1;
		}
		val++;
		if (!strncmp(arg, "cpunodes=", 9)) {
			given = parse_nodes(val, cpu_node, MAX_VCPUS);
			if (given < 0) {
				fprintf(stderr, "locality: bad cpunodes '%s' (want e.g. 0:0:1:1)\n", val);
				return -1;
			}
			cpunodes_given = true;
		} else if (!strncmp(arg, "homes=", 6)) {
			if (parse_nodes(val, home, MAX_NODES) < 0) {
				fprintf(stderr, "locality: bad homes '%s' (want e.g. 0:1:1)\n", val);
				return -1;
			}
			homes_given = true;
		} else if (!strncmp(arg, "out=", 4)) {
			out_path = val;
		} else if (!strncmp(arg, "rodata=", 7)) {
			if (!parse_range(val, &rodata_start, &rodata_end)) {
				fprintf(stderr, "locality: bad rodata '%s' (want START-END in hex, e.g. ffffffff82000000-ffffffff82a00000)\n", val);
				return -1;
			}
			rodata_on = true;
		} else if (!strncmp(arg, "pages=", 6)) {
			if (!qemu_plugin_bool_parse("pages", val, &pages_on)) {
				fprintf(stderr, "locality: bad boolean '%s'\n", arg);
				return -1;
			}
		} else if (!strncmp(arg, "cache=", 6)) {
			if (!qemu_plugin_bool_parse("cache", val, &cache_on)) {
				fprintf(stderr, "locality: bad boolean '%s'\n", arg);
				return -1;
			}
		} else if ((shape = parse_shape(arg, val))) {
			if (shape < 0)
				return -1;
		} else if (!strncmp(arg, "tlb=", 4)) {
			if (!qemu_plugin_bool_parse("tlb", val, &tlb_on)) {
				fprintf(stderr, "locality: bad boolean '%s'\n", arg);
				return -1;
			}
		} else if (!strncmp(arg, "tlb_shape=", 10)) {
			unsigned long long e, w;
			int pos = 0;

			if (sscanf(val, "%llu:%llu%n", &e, &w, &pos) != 2 || val[pos] ||
			    !w || !e || e % w) {
				fprintf(stderr, "locality: bad tlb_shape '%s' (want ENTRIES:WAYS, ENTRIES a multiple of WAYS)\n", val);
				return -1;
			}
			tlb_entries = e;
			tlb_ways = w;
		} else if (!strncmp(arg, "data=", 5)) {
			if (!qemu_plugin_bool_parse("data", val, &data_on)) {
				fprintf(stderr, "locality: bad boolean '%s'\n", arg);
				return -1;
			}
		} else {
			fprintf(stderr, "locality: unknown argument '%s'\n", arg);
			return -1;
		}
	}
	if (cpunodes_given && given != n_vcpus) {
		fprintf(stderr, "locality: cpunodes names %d vCPUs, the guest has %d\n",
			given, n_vcpus);
		return -1;
	}
	if (rodata_on && !data_on) {
		fprintf(stderr, "locality: rodata= counts data reads: it needs data=on\n");
		return -1;
	}
	if (cache_on && !data_on) {
		fprintf(stderr, "locality: cache=on models data accesses too: it needs data=on\n");
		return -1;
	}
	for (i = 0; cache_on && i < n_vcpus; i++) {
		if (cm_init(&l1i[i], shapes[SHAPE_L1I].kib, shapes[SHAPE_L1I].ways) ||
		    cm_init(&l1d[i], shapes[SHAPE_L1D].kib, shapes[SHAPE_L1D].ways) ||
		    cm_init(&l2[i], shapes[SHAPE_L2].kib, shapes[SHAPE_L2].ways)) {
			fprintf(stderr, "locality: no memory for vCPU %d's caches\n", i);
			return -1;
		}
	}
	if (tlb_on && tlb_setup())
		return -1;
	if (tlb_on)
		qemu_plugin_register_vcpu_init_cb(id, tlb_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
