// SPDX-License-Identifier: GPL-2.0
/*
 * ktext_verify: for every online CPU, where are the kernel text and
 * read-only data (of the image and of every loaded module) mapped in the
 * page table that CPU itself uses, and are the bytes it sees those of the
 * original copy?
 *
 * Each CPU copies its own top-level table (from its CR3) in an IPI; the
 * walk below the top level is done in software from process context, via
 * the direct map. The report is in debugfs:
 *
 *   /sys/kernel/debug/ktext_verify/report   one row per (cpu, region)
 *   /sys/kernel/debug/ktext_verify/copies   distinct copies per page
 *   /sys/kernel/debug/ktext_verify/peek     8 bytes of text at an address
 *   /sys/kernel/debug/ktext_verify/alias_write  a store through the
 *                                        direct-map alias of this CPU's copy
 *   /sys/kernel/debug/ktext_verify/code     more code regions to check
 *   /sys/kernel/debug/ktext_verify/mm_pgd   the root in this CPU's CR3
 *                                        against the reader's mm->pgd
 *
 * Only symbols a stock kernel exports are used, so the module builds and
 * runs with and without a text replication series (6.1 and 6.12).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <asm/page.h>
#include <asm/pgtable.h>
#include <asm/processor-flags.h>
#include <asm/set_memory.h>
#include <asm/special_insns.h>

#define KTV_VERSION	5

static unsigned long stext;
module_param(stext, ulong, 0444);
MODULE_PARM_DESC(stext, "address of _stext (from /proc/kallsyms)");
static unsigned long etext;
module_param(etext, ulong, 0444);
MODULE_PARM_DESC(etext, "address of _etext");
static unsigned long srodata;
module_param(srodata, ulong, 0444);
MODULE_PARM_DESC(srodata, "address of __start_rodata");
static unsigned long erodata;
module_param(erodata, ulong, 0444);
MODULE_PARM_DESC(erodata, "address of __end_rodata");
static bool always_copy;
static unsigned long sdata, kend;
module_param(sdata, ulong, 0444);
MODULE_PARM_DESC(sdata, "address of _sdata (the highmap_alias test)");
module_param(kend, ulong, 0444);
MODULE_PARM_DESC(kend, "address of _end");

module_param(always_copy, bool, 0644);
MODULE_PARM_DESC(always_copy, "compare the bytes also of pages mapped to the original");
static int no_copy[MAX_NUMNODES];
static int nr_no_copy;
module_param_array(no_copy, int, &nr_no_copy, 0444);
MODULE_PARM_DESC(no_copy, "nodes booted without a copy of their own (fault injection)");

#define KTV_NAME_LEN	(MODULE_NAME_LEN + 16)

struct ktv_region {
	char name[KTV_NAME_LEN];
	unsigned long start;		/* first byte */
	unsigned long end;		/* one past the last byte */
	struct module *mod;		/* NULL: the kernel image */
	bool vm;			/* in vmalloc space (a code region) */
};

/*
 * Code in the module area outside the modules' text (BPF programs, kprobe
 * slots, ftrace trampolines), registered by writing "NAME ADDR SIZE" to
 * the debugfs file "code"; "clear" forgets them. The guest finds them in
 * /proc/kallsyms. Checked as module text is: vmalloc_to_pfn() is the
 * original, so a region freed since reads as unmapped.
 */
#define KTV_MAX_CODE	32

static struct ktv_code {
	char name[24];
	unsigned long start;
	unsigned long size;
} ktv_code[KTV_MAX_CODE];
static unsigned int ktv_ncode;
static DEFINE_MUTEX(ktv_code_lock);

struct ktv_row {
	unsigned long pages;
	unsigned long local;
	unsigned long remote;
	unsigned long unmapped;
	unsigned long mismatch;
};

struct ktv_result {
	int levels;
	int image_node;			/* the node of the image's first page */
	unsigned long *image_pages;	/* [nr_node_ids] image pages per node */
	unsigned int ncpus;
	unsigned int nregions;
	unsigned int nmods;
	int *cpu;			/* [ncpus] cpu ids */
	int *node;			/* [ncpus] cpu_to_node() */
	int *expect;			/* [ncpus] the node it should use */
	unsigned long *cr3;		/* [ncpus] raw CR3 */
	int *cr3_err;			/* [ncpus] copying the top level failed */
	u8 *pgd;			/* [ncpus][PAGE_SIZE] top-level tables */
	struct module **mods;		/* [nmods] references held */
	struct ktv_region *regions;	/* [nregions] */
	struct ktv_row *rows;		/* [ncpus][nregions] */
	unsigned long *hist;		/* [ncpus][nregions][nr_node_ids] */
	unsigned long *copies;		/* [nregions][ncpus + 1] */
	unsigned long *original;	/* [nregions] pages all CPUs map 1:1 */
	unsigned long *pfns;		/* [ncpus] scratch */
	u8 *buf;			/* [2][PAGE_SIZE] scratch */
};

static struct dentry *ktv_dir;

static bool ktv_has_copy(int nid)
{
	int i;

	if (!node_state(nid, N_MEMORY))
		return false;
	for (i = 0; i < nr_no_copy; i++) {
		if (no_copy[i] == nid)
			return false;
	}
	return true;
}

/*
 * The node a CPU of node @nid should take its copy from: its own, else the
 * nearest node with one by the SLIT, the lowest id on a tie.
 */
static int ktv_expected_node(int nid)
{
	int n, best = NUMA_NO_NODE, bestd = INT_MAX;

	if (nid >= 0 && ktv_has_copy(nid))
		return nid;
	for_each_node_state(n, N_MEMORY) {
		int d = nid >= 0 ? node_distance(nid, n) : 0;

		if (ktv_has_copy(n) && d < bestd) {
			best = n;
			bestd = d;
		}
	}
	return best;
}

static int ktv_pfn_node(unsigned long pfn)
{
	if (!pfn_valid(pfn))
		return NUMA_NO_NODE;
	return pfn_to_nid(pfn);
}

/* Entry @idx of the table at physical address @table. */
static bool ktv_read_entry(phys_addr_t table, unsigned long idx, u64 *val)
{
	const u64 *p;

	if (!pfn_valid(PHYS_PFN(table)))
		return false;
	p = (const u64 *)__va(table) + idx;
	return !copy_from_kernel_nofault(val, p, sizeof(*val));
}

/*
 * The entry that maps @addr in the tables whose top level is the copy
 * @pgd, with @levels paging levels, and the shift of the size it maps
 * (PUD, PMD or PAGE_SHIFT). False when @addr is not mapped.
 */
static bool ktv_leaf(const u8 *pgd, int levels, unsigned long addr, u64 *leaf,
		     unsigned int *shift)
{
	u64 val = ((const u64 *)pgd)[pgd_index(addr)];

	if (levels == 5) {
		if (!(val & _PAGE_PRESENT))
			return false;
		if (!ktv_read_entry(val & PTE_PFN_MASK, p4d_index(addr), &val))
			return false;
	}
	/* val is the P4D entry (the PGD entry with 4 levels). */
	if (!(val & _PAGE_PRESENT))
		return false;
	if (!ktv_read_entry(val & PTE_PFN_MASK, pud_index(addr), &val))
		return false;
	if (!(val & _PAGE_PRESENT))
		return false;
	if (pud_leaf(__pud(val))) {
		*leaf = val;
		*shift = PUD_SHIFT;
		return true;
	}
	if (!ktv_read_entry(val & PTE_PFN_MASK, pmd_index(addr), &val))
		return false;
	if (!(val & _PAGE_PRESENT))
		return false;
	if (pmd_leaf(__pmd(val))) {
		*leaf = val;
		*shift = PMD_SHIFT;
		return true;
	}
	if (!ktv_read_entry(val & PTE_PFN_MASK, pte_index(addr), &val))
		return false;
	if (!(val & _PAGE_PRESENT))
		return false;
	*leaf = val;
	*shift = PAGE_SHIFT;
	return true;
}

/*
 * The physical address @addr maps to in the tables whose top level is the
 * copy @pgd, with @levels paging levels. False when it is not mapped.
 */
static bool ktv_walk(const u8 *pgd, int levels, unsigned long addr,
		     phys_addr_t *phys)
{
	unsigned int shift;
	u64 val;

	if (!ktv_leaf(pgd, levels, addr, &val, &shift))
		return false;
	if (shift == PUD_SHIFT)
		*phys = PFN_PHYS(pud_pfn(__pud(val))) + (addr & ~PUD_MASK);
	else if (shift == PMD_SHIFT)
		*phys = PFN_PHYS(pmd_pfn(__pmd(val))) + (addr & ~PMD_MASK);
	else
		*phys = PFN_PHYS(pte_pfn(__pte(val))) + (addr & ~PAGE_MASK);
	return true;
}

/* The page the kernel's own tables map @addr of region @r to, or 0. */
static unsigned long ktv_ref_pfn(const struct ktv_region *r, unsigned long addr)
{
	if (!r->mod && !r->vm)	/* __pa_symbol() of the image */
		return PHYS_PFN(addr - __START_KERNEL_map + phys_base);
	return vmalloc_to_pfn((const void *)addr);
}

/* Bytes [off, off + len) of pages @pfn and @ref are the same. */
static bool ktv_same_bytes(struct ktv_result *res, unsigned long pfn,
			   unsigned long ref, unsigned int off, unsigned int len)
{
	u8 *a = res->buf, *b = res->buf + PAGE_SIZE;

	if (pfn == ref && !READ_ONCE(always_copy))
		return true;
	if (!ref || !pfn_valid(pfn) || !pfn_valid(ref))
		return false;
	if (copy_from_kernel_nofault(a, (u8 *)__va(PFN_PHYS(pfn)) + off, len) ||
	    copy_from_kernel_nofault(b, (u8 *)__va(PFN_PHYS(ref)) + off, len))
		return false;
	return !memcmp(a, b, len);
}

struct ktv_grab {
	unsigned long cr3;
	void *dst;
	int err;
};

/* On the CPU itself: its CR3 and a copy of the top-level table. */
static void ktv_grab_pgd(void *data)
{
	struct ktv_grab *g = data;

	g->cr3 = __read_cr3();
	g->err = copy_from_kernel_nofault(g->dst, __va(g->cr3 & CR3_ADDR_MASK),
					  PAGE_SIZE);
}

/*
 * A struct module of a loaded module lives in the module's memory; the
 * list head, the kernel's static "modules", does not. (Not with
 * is_vmalloc_or_module_addr(): 6.1 does not export it.)
 */
static bool ktv_is_module(const struct list_head *pos)
{
	const void *mod = list_entry(pos, struct module, list);
	unsigned long addr = (unsigned long)mod;

	return (addr >= MODULES_VADDR && addr < MODULES_END) ||
	       is_vmalloc_addr(mod);
}

/* Live modules, THIS_MODULE first, each with a reference taken. */
static unsigned int ktv_get_modules(struct module **mods, unsigned int max)
{
	struct list_head *pos;
	unsigned int n = 0;

	if (max && try_module_get(THIS_MODULE))
		mods[n++] = THIS_MODULE;
	rcu_read_lock();
	/* The list head is the one entry that is not a module. */
	list_for_each_rcu(pos, &THIS_MODULE->list) {
		struct module *mod = list_entry(pos, struct module, list);

		if (n >= max)
			break;
		if (!ktv_is_module(pos) || READ_ONCE(mod->state) != MODULE_STATE_LIVE)
			continue;
		if (try_module_get(mod))
			mods[n++] = mod;
	}
	rcu_read_unlock();
	return n;
}

static unsigned int ktv_count_modules(void)
{
	struct list_head *pos;
	unsigned int n = 1;

	rcu_read_lock();
	list_for_each_rcu(pos, &THIS_MODULE->list)
		n += ktv_is_module(pos);
	rcu_read_unlock();
	return n;
}

static void ktv_set_region(struct ktv_region *r, const char *name,
			   struct module *mod, unsigned long start,
			   unsigned long size)
{
	if (mod)
		snprintf(r->name, sizeof(r->name), "mod:%s:%s", mod->name, name);
	else
		snprintf(r->name, sizeof(r->name), "kernel_%s", name);
	r->mod = mod;
	r->vm = false;
	r->start = start;
	r->end = start ? start + size : 0;
}

static void ktv_module_regions(struct ktv_region *r, struct module *mod)
{
#if KERNEL_VERSION(6, 4, 0) <= LINUX_VERSION_CODE
	ktv_set_region(&r[0], "text", mod,
		       (unsigned long)mod->mem[MOD_TEXT].base,
		       mod->mem[MOD_TEXT].size);
	/* MOD_RO_AFTER_INIT is data written during init: not rodata. */
	ktv_set_region(&r[1], "rodata", mod,
		       (unsigned long)mod->mem[MOD_RODATA].base,
		       mod->mem[MOD_RODATA].size);
#else
	unsigned long base = (unsigned long)mod->core_layout.base;

	ktv_set_region(&r[0], "text", mod, base, mod->core_layout.text_size);
	ktv_set_region(&r[1], "rodata", mod, base + mod->core_layout.text_size,
		       mod->core_layout.ro_size - mod->core_layout.text_size);
#endif
}

static void ktv_free(struct ktv_result *res)
{
	unsigned int i;

	if (!res)
		return;
	for (i = 0; i < res->nmods; i++)
		module_put(res->mods[i]);
	kvfree(res->cpu);
	kvfree(res->node);
	kvfree(res->expect);
	kvfree(res->cr3);
	kvfree(res->cr3_err);
	kvfree(res->pgd);
	kvfree(res->mods);
	kvfree(res->regions);
	kvfree(res->rows);
	kvfree(res->hist);
	kvfree(res->copies);
	kvfree(res->original);
	kvfree(res->pfns);
	kvfree(res->buf);
	kvfree(res->image_pages);
	kfree(res);
}

/* Grab every online CPU's top-level table. */
static int ktv_grab_cpus(struct ktv_result *res)
{
	unsigned int i, max = num_possible_cpus();
	int cpu, ret = 0;

	res->cpu = kvcalloc(max, sizeof(*res->cpu), GFP_KERNEL);
	res->node = kvcalloc(max, sizeof(*res->node), GFP_KERNEL);
	res->expect = kvcalloc(max, sizeof(*res->expect), GFP_KERNEL);
	res->cr3 = kvcalloc(max, sizeof(*res->cr3), GFP_KERNEL);
	res->cr3_err = kvcalloc(max, sizeof(*res->cr3_err), GFP_KERNEL);
	res->pgd = kvmalloc_array(max, PAGE_SIZE, GFP_KERNEL);
	if (!res->cpu || !res->node || !res->expect || !res->cr3 ||
	    !res->cr3_err || !res->pgd)
		return -ENOMEM;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct ktv_grab g = { .dst = res->pgd + res->ncpus * PAGE_SIZE };

		if (res->ncpus >= max)
			break;
		i = res->ncpus;
		ret = smp_call_function_single(cpu, ktv_grab_pgd, &g, 1);
		if (ret)
			break;
		res->cpu[i] = cpu;
		res->node[i] = cpu_to_node(cpu);
		res->expect[i] = ktv_expected_node(res->node[i]);
		res->cr3[i] = g.cr3;
		res->cr3_err[i] = g.err;
		if (g.err)	/* nothing is mapped through it */
			memset(g.dst, 0, PAGE_SIZE);
		res->ncpus++;
	}
	cpus_read_unlock();
	return ret;
}

static int ktv_find_regions(struct ktv_result *res)
{
	unsigned int i, max = ktv_count_modules() + 8;

	res->mods = kvcalloc(max, sizeof(*res->mods), GFP_KERNEL);
	res->regions = kvcalloc(2 + 2 * max + KTV_MAX_CODE, sizeof(*res->regions),
				GFP_KERNEL);
	if (!res->mods || !res->regions)
		return -ENOMEM;
	res->nmods = ktv_get_modules(res->mods, max);

	ktv_set_region(&res->regions[0], "text", NULL, stext, etext - stext);
	res->image_node = ktv_pfn_node(ktv_ref_pfn(&res->regions[0], stext));
	ktv_set_region(&res->regions[1], "rodata", NULL, srodata,
		       erodata - srodata);
	res->nregions = 2;
	for (i = 0; i < res->nmods; i++) {
		ktv_module_regions(&res->regions[res->nregions], res->mods[i]);
		res->nregions += 2;
	}
	mutex_lock(&ktv_code_lock);
	for (i = 0; i < ktv_ncode; i++) {
		struct ktv_region *r = &res->regions[res->nregions++];

		snprintf(r->name, sizeof(r->name), "code:%.23s", ktv_code[i].name);
		r->mod = NULL;
		r->vm = true;
		r->start = ktv_code[i].start;
		r->end = r->start + ktv_code[i].size;
	}
	mutex_unlock(&ktv_code_lock);
	return 0;
}

static void ktv_check_page(struct ktv_result *res, unsigned int r,
			   unsigned long page)
{
	const struct ktv_region *reg = &res->regions[r];
	unsigned long lo = max(reg->start, page);
	unsigned long hi = min(reg->end, page + PAGE_SIZE);
	unsigned long ref = ktv_ref_pfn(reg, page);
	unsigned int c, k, ncopies = 0;
	bool original = true;

	for (c = 0; c < res->ncpus; c++) {
		struct ktv_row *row = &res->rows[c * res->nregions + r];
		unsigned long pfn;
		phys_addr_t phys;
		int nid;

		row->pages++;
		if (!ktv_walk(res->pgd + c * PAGE_SIZE, res->levels, page,
			      &phys)) {
			row->unmapped++;
			original = false;
			continue;
		}
		pfn = PHYS_PFN(phys);
		if (pfn != ref)
			original = false;
		nid = ktv_pfn_node(pfn);
		/*
		 * Local only when the node is known and is the CPU's own (or
		 * its nearest with memory). A page of the original image on
		 * the next node, when the image crosses a node boundary, is
		 * remote like any other.
		 */
		if (nid >= 0 && nid == res->expect[c])
			row->local++;
		else
			row->remote++;
		if (nid >= 0 && nid < nr_node_ids)
			res->hist[(c * res->nregions + r) * nr_node_ids + nid]++;
		if (!ktv_same_bytes(res, pfn, ref, lo & ~PAGE_MASK, hi - lo))
			row->mismatch++;

		for (k = 0; k < ncopies; k++)
			if (res->pfns[k] == pfn)
				break;
		if (k == ncopies)
			res->pfns[ncopies++] = pfn;
	}
	res->copies[r * (res->ncpus + 1) + ncopies]++;
	res->original[r] += original;
	/* Where the original kernel image lies, whoever maps it. */
	if (!reg->mod) {
		int inid = ktv_pfn_node(ref);

		if (inid >= 0 && inid < nr_node_ids)
			res->image_pages[inid]++;
	}
}

/* A fresh check of every region on every online CPU. */
static struct ktv_result *ktv_check(void)
{
	struct ktv_result *res;
	unsigned int r, n;
	int ret;

	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!res)
		return ERR_PTR(-ENOMEM);
	res->levels = pgtable_l5_enabled() ? 5 : 4;

	ret = ktv_grab_cpus(res);
	if (!ret)
		ret = ktv_find_regions(res);
	if (ret)
		goto fail;

	n = res->ncpus * res->nregions;
	ret = -ENOMEM;
	res->rows = kvcalloc(n, sizeof(*res->rows), GFP_KERNEL);
	res->hist = kvcalloc(array_size(n, nr_node_ids), sizeof(*res->hist),
			     GFP_KERNEL);
	res->copies = kvcalloc(array_size(res->nregions, res->ncpus + 1),
			       sizeof(*res->copies), GFP_KERNEL);
	res->original = kvcalloc(res->nregions, sizeof(*res->original),
				 GFP_KERNEL);
	res->pfns = kvcalloc(res->ncpus + 1, sizeof(*res->pfns), GFP_KERNEL);
	res->image_pages = kvcalloc(nr_node_ids, sizeof(*res->image_pages),
				    GFP_KERNEL);
	res->buf = kvmalloc(2 * PAGE_SIZE, GFP_KERNEL);
	if (!res->rows || !res->hist || !res->copies || !res->original ||
	    !res->pfns || !res->buf || !res->image_pages)
		goto fail;

	for (r = 0; r < res->nregions; r++) {
		const struct ktv_region *reg = &res->regions[r];
		unsigned long page;

		if (!reg->start || reg->end <= reg->start)
			continue;
		for (page = reg->start & PAGE_MASK; page < reg->end;
		     page += PAGE_SIZE) {
			ktv_check_page(res, r, page);
			cond_resched();
		}
	}
	return res;
fail:
	ktv_free(res);
	return ERR_PTR(ret);
}

static int ktv_report_show(struct seq_file *m, void *v)
{
	struct ktv_result *res = m->private;
	struct ktv_row sum = { 0 };
	unsigned int c, r, span;
	char sep;
	int nid;

	seq_printf(m, "ktext_verify version=%d pgtable_levels=%d nr_node_ids=%u\n",
		   KTV_VERSION, res->levels, nr_node_ids);
	for (c = 0; c < res->ncpus; c++) {
		phys_addr_t pgd = res->cr3[c] & CR3_ADDR_MASK;

		seq_printf(m, "cpu=%d cr3=0x%lx pgd_node=%d%s\n", res->cpu[c],
			   res->cr3[c], ktv_pfn_node(PHYS_PFN(pgd)),
			   res->cr3_err[c] ? " unreadable" : "");
		for (r = 0; r < res->nregions; r++) {
			const struct ktv_row *row = &res->rows[c * res->nregions + r];
			const unsigned long *h =
				&res->hist[(c * res->nregions + r) * nr_node_ids];

			sep = '=';

			seq_printf(m, "cpu=%d node=%d expect=%d region=%s pages=%lu local=%lu remote=%lu unmapped=%lu mismatch=%lu nodes",
				   res->cpu[c], res->node[c], res->expect[c],
				   res->regions[r].name, row->pages, row->local,
				   row->remote, row->unmapped, row->mismatch);
			for_each_online_node(nid) {
				seq_printf(m, "%c%d:%lu", sep, nid, h[nid]);
				sep = ',';
			}
			seq_putc(m, '\n');
			sum.pages += row->pages;
			sum.local += row->local;
			sum.remote += row->remote;
			sum.unmapped += row->unmapped;
			sum.mismatch += row->mismatch;
		}
	}
	/*
	 * image_span: the number of nodes the original kernel text and
	 * rodata lie on (more than one: the image crosses a node boundary);
	 * image_nodes: how many of their pages are on each.
	 */
	span = 0;
	for_each_online_node(nid)
		span += !!res->image_pages[nid];
	seq_printf(m, "summary cpus=%u regions=%u pages=%lu local=%lu remote=%lu unmapped=%lu mismatch=%lu image_node=%d image_span=%u image_nodes",
		   res->ncpus, res->nregions, sum.pages, sum.local, sum.remote,
		   sum.unmapped, sum.mismatch, res->image_node, span);
	sep = '=';
	for_each_online_node(nid) {
		if (!res->image_pages[nid])
			continue;
		seq_printf(m, "%c%d:%lu", sep, nid, res->image_pages[nid]);
		sep = ',';
	}
	seq_putc(m, '\n');
	return 0;
}

static int ktv_copies_show(struct seq_file *m, void *v)
{
	struct ktv_result *res = m->private;
	unsigned int r, k;

	seq_printf(m, "ktext_verify version=%d cpus=%u regions=%u\n",
		   KTV_VERSION, res->ncpus, res->nregions);
	for (r = 0; r < res->nregions; r++) {
		const unsigned long *h = &res->copies[r * (res->ncpus + 1)];
		unsigned long pages = 0;
		unsigned int lo = res->ncpus + 1, hi = 0;
		char sep = '=';

		for (k = 0; k <= res->ncpus; k++) {
			pages += h[k];
			if (h[k]) {
				lo = min(lo, k);
				hi = max(hi, k);
			}
		}
		if (!pages)
			lo = 0;
		/*
		 * original: pages every CPU maps to the kernel's own page;
		 * hist: distinct physical copies -> pages with that many.
		 */
		seq_printf(m, "region=%s pages=%lu original=%lu min_copies=%u max_copies=%u hist",
			   res->regions[r].name, pages, res->original[r], lo, hi);
		for (k = 0; k <= res->ncpus; k++) {
			if (!h[k])
				continue;
			seq_printf(m, "%c%u:%lu", sep, k, h[k]);
			sep = ',';
		}
		seq_puts(m, sep == '=' ? "=\n" : "\n");
	}
	return 0;
}

static int ktv_open(struct file *file, int (*show)(struct seq_file *, void *))
{
	struct ktv_result *res = ktv_check();
	int ret;

	if (IS_ERR(res))
		return PTR_ERR(res);
	ret = single_open(file, show, res);
	if (ret)
		ktv_free(res);
	return ret;
}

static int ktv_report_open(struct inode *inode, struct file *file)
{
	return ktv_open(file, ktv_report_show);
}

static int ktv_copies_open(struct inode *inode, struct file *file)
{
	return ktv_open(file, ktv_copies_show);
}

static int ktv_release(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	ktv_free(m->private);
	return single_release(inode, file);
}

static const struct file_operations ktv_report_fops = {
	.owner		= THIS_MODULE,
	.open		= ktv_report_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= ktv_release,
};

static const struct file_operations ktv_copies_fops = {
	.owner		= THIS_MODULE,
	.open		= ktv_copies_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= ktv_release,
};

/* Is @addr in a registered code region? */
static bool ktv_is_code(unsigned long addr)
{
	bool found = false;
	unsigned int i;

	mutex_lock(&ktv_code_lock);
	for (i = 0; i < ktv_ncode; i++)
		found |= addr >= ktv_code[i].start &&
			 addr - ktv_code[i].start < ktv_code[i].size;
	mutex_unlock(&ktv_code_lock);
	return found;
}

/*
 * Writing "text" or "rodata" (or the hex address of a registered code
 * region, "code") to alias_write stores one byte, unchanged,
 * through the direct-map alias of the page that this CPU's own tables map
 * at schedule() (text), at hex_asc (rodata) or there: the alias of this CPU's
 * copy. The alias is read-only, so the store must fault, and the writing
 * task dies in the oops. If the store does not fault, the write fails with
 * EPERM. Pin the writer to the CPU to test.
 */
static ssize_t ktv_alias_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct ktv_grab g = { };
	unsigned long addr;
	phys_addr_t phys;
	const char *what;
	char buf[24];
	bool mapped;
	u8 *alias;
	int cpu;

	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sysfs_streq(buf, "text")) {
		addr = (unsigned long)schedule;
		what = "text";
	} else if (sysfs_streq(buf, "rodata")) {
		addr = (unsigned long)hex_asc;
		what = "rodata";
	} else if (!kstrtoul(strim(buf), 16, &addr) && ktv_is_code(addr)) {
		what = "code";
	} else {
		return -EINVAL;
	}

	g.dst = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!g.dst)
		return -ENOMEM;
	cpu = get_cpu();
	ktv_grab_pgd(&g);
	put_cpu();
	mapped = !g.err && ktv_walk(g.dst, pgtable_l5_enabled() ? 5 : 4, addr, &phys);
	kfree(g.dst);
	if (!mapped)
		return -ENXIO;

	alias = __va(phys);
	pr_info("alias write: cpu %d (node %d): %s at %px is phys %pa (node %d), direct map %px\n",
		cpu, cpu_to_node(cpu), what, (void *)addr,
		&phys, ktv_pfn_node(PHYS_PFN(phys)), alias);
	WRITE_ONCE(*alias, READ_ONCE(*alias));
	pr_err("alias write: the store through %px did not fault\n", alias);
	return -EPERM;
}

static const struct file_operations ktv_alias_fops = {
	.owner		= THIS_MODULE,
	.write		= ktv_alias_write,
	.llseek		= noop_llseek,
};

static ssize_t ktv_code_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	unsigned long start, size;
	char buf[80], name[24];
	int ret = count;

	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	mutex_lock(&ktv_code_lock);
	if (sysfs_streq(buf, "clear")) {
		ktv_ncode = 0;
	} else if (sscanf(buf, "%23s %lx %lx", name, &start, &size) != 3 ||
		   !size || size > SZ_16M || start + size < start ||
		   start < MODULES_VADDR || start + size > MODULES_END) {
		ret = -EINVAL;
	} else if (ktv_ncode >= KTV_MAX_CODE) {
		ret = -ENOSPC;
	} else {
		strscpy(ktv_code[ktv_ncode].name, name,
			sizeof(ktv_code[ktv_ncode].name));
		ktv_code[ktv_ncode].start = start;
		ktv_code[ktv_ncode].size = size;
		ktv_ncode++;
	}
	mutex_unlock(&ktv_code_lock);
	return ret;
}

static int ktv_code_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&ktv_code_lock);
	for (i = 0; i < ktv_ncode; i++)
		seq_printf(m, "%s 0x%lx 0x%lx\n", ktv_code[i].name,
			   ktv_code[i].start, ktv_code[i].size);
	mutex_unlock(&ktv_code_lock);
	return 0;
}

static int ktv_code_open(struct inode *inode, struct file *file)
{
	return single_open(file, ktv_code_show, NULL);
}

static const struct file_operations ktv_code_fops = {
	.owner		= THIS_MODULE,
	.open		= ktv_code_open,
	.read		= seq_read,
	.write		= ktv_code_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static bool ktv_in(unsigned long addr, unsigned long start, unsigned long end)
{
	return addr >= start && addr < end;
}

/*
 * peek: write the address of kernel text (hex), read the 8 bytes there as
 * the reading CPU sees them: whether a tracer or a probe patched them.
 */
static unsigned long ktv_peek_addr;

static ssize_t ktv_peek_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	unsigned long addr;
	int ret;

	ret = kstrtoul_from_user(ubuf, count, 16, &addr);
	if (ret)
		return ret;
	if (!ktv_in(addr, stext, etext - 8))
		return -EINVAL;
	WRITE_ONCE(ktv_peek_addr, addr);
	return count;
}

static ssize_t ktv_peek_read(struct file *file, char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	unsigned long addr = READ_ONCE(ktv_peek_addr);
	char buf[32];
	u8 bytes[8];

	if (!addr)
		return -ENXIO;
	if (copy_from_kernel_nofault(bytes, (void *)addr, sizeof(bytes)))
		return -EFAULT;
	snprintf(buf, sizeof(buf), "%8phN\n", bytes);
	return simple_read_from_buffer(ubuf, count, ppos, buf, strlen(buf));
}

static const struct file_operations ktv_peek_fops = {
	.owner		= THIS_MODULE,
	.write		= ktv_peek_write,
	.read		= ktv_peek_read,
	.llseek		= default_llseek,
};

/*
 * mm_pgd: read by a user process, the page-table root that the CPU serving
 * the read has in CR3 against the reading task's own mm->pgd, as a tester
 * sees them (no struct of a replication series is read). One line:
 *
 *   cpu=C node=N own=0|1 pgd_node=P differ=D first=I kernel_entries=K
 *
 * own=1: CR3 holds mm->pgd itself; own=0: another root (with per-node
 * PGDs, the mm's PGD for this CPU's node). differ: how many top-level
 * entries differ between the loaded root and mm->pgd, over every entry but
 * the one that maps __START_KERNEL_map (the window, per node by design);
 * with page table isolation the user copies (the page after each root, the
 * second half of the 8 KiB PGD) are compared the same way and counted too.
 * first: the index of the first entry that differs, PTRS_PER_PGD + i for
 * entry i of the user copy; -1 when none does. pgd_node: the node of the
 * loaded root's page. kernel_entries: the populated entries of the kernel
 * half of mm->pgd (a new top-level entry, as memory hotplug can add, shows
 * there). CR3 is read and both roots copied with preemption and interrupts
 * off: CR3 cannot change meanwhile. Other threads of the reader that
 * change top-level entries meanwhile can make the copies differ for a
 * moment: read when they are done. Pin the reader to the CPU to check.
 */
static int ktv_mm_pgd_show(struct seq_file *m, void *v)
{
	const unsigned int win = pgd_index(__START_KERNEL_map);
	unsigned int i, n, halves, differ = 0, kentries = 0;
	struct mm_struct *mm = current->mm;
	const u64 *loaded, *own;
	unsigned long flags;
	phys_addr_t root;
	long first = -1;
	int cpu, ret;
	u8 *buf;

	if (!mm)
		return -EINVAL;
	halves = boot_cpu_has(X86_FEATURE_PTI) ? 2 : 1;
	n = halves * PTRS_PER_PGD;
	buf = kvmalloc_array(2 * halves, PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	loaded = (const u64 *)buf;
	own = (const u64 *)(buf + halves * PAGE_SIZE);

	cpu = get_cpu();
	local_irq_save(flags);
	root = __read_cr3() & CR3_ADDR_MASK;
	ret = -EFAULT;
	if (pfn_valid(PHYS_PFN(root)) &&
	    (halves == 1 || pfn_valid(PHYS_PFN(root) + 1)) &&
	    !copy_from_kernel_nofault(buf, __va(root), halves * PAGE_SIZE) &&
	    !copy_from_kernel_nofault(buf + halves * PAGE_SIZE, mm->pgd,
				      halves * PAGE_SIZE))
		ret = 0;
	local_irq_restore(flags);
	put_cpu();
	if (ret) {
		pr_warn("mm_pgd: cpu %d: cannot read the root at %pa in CR3 or mm->pgd\n",
			cpu, &root);
		goto out;
	}

	for (i = 0; i < n; i++) {
		if (i % PTRS_PER_PGD == win || loaded[i] == own[i])
			continue;
		if (first < 0)
			first = i;
		differ++;
	}
	/* Not pgd_none(): with the P4D folded at run time, it is 0. */
	for (i = PTRS_PER_PGD / 2; i < PTRS_PER_PGD; i++)
		kentries += !!(own[i] & _PAGE_PRESENT);
	seq_printf(m, "cpu=%d node=%d own=%d pgd_node=%d differ=%u first=%ld kernel_entries=%u\n",
		   cpu, cpu_to_node(cpu), root == __pa(mm->pgd),
		   ktv_pfn_node(PHYS_PFN(root)), differ, first, kentries);
out:
	kvfree(buf);
	return ret;
}

DEFINE_SHOW_ATTRIBUTE(ktv_mm_pgd);

/*
 * highmap_alias: a page of the kernel image is mapped twice, in the direct
 * map and in the kernel's high map. Made uncached through the direct map
 * (set_memory_uc()), its high-map alias must become uncached too, in the
 * tables of every CPU: a cacheable alias of an uncached page is the
 * memory-type aliasing that CPA's alias processing exists to prevent, and
 * the same processing keeps the high map of a read-only page read-only.
 * The page is the first of a 2 MiB block of data or bss that the kernel's
 * own tables map with one 2 MiB entry, which every node's tables hold a
 * copy of: the case the alias processing must reach on every node. Kernel
 * data is only made slower for a moment. One line per online CPU:
 * "cpu=C node=N before=E after=E ok=0|1", E the leaf entry's size and cache
 * bits, or "none".
 */
#define KTV_CACHE_BITS	(_PAGE_PWT | _PAGE_PCD)

struct ktv_line {
	char buf[96];
	int len;
};

static __printf(2, 3) void ktv_add(struct ktv_line *l, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	l->len += vscnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, args);
	va_end(args);
}

/* Append @alias's entry in @pgd to @l; true when it is mapped uncached. */
static bool ktv_alias_entry(struct ktv_line *l, void *pgd, unsigned long alias)
{
	unsigned int shift;
	u64 val;

	if (!ktv_leaf(pgd, pgtable_l5_enabled() ? 5 : 4, alias, &val, &shift)) {
		ktv_add(l, "none");
		return false;
	}
	ktv_add(l, "%s:%s%s", shift == PAGE_SHIFT ? "4k" : shift == PMD_SHIFT ? "2m" : "1g",
		val & _PAGE_PCD ? "pcd" : "-", val & _PAGE_PWT ? "pwt" : "-");
	return val & KTV_CACHE_BITS;
}

static int ktv_grab_on(int cpu, struct ktv_grab *g)
{
	int ret = smp_call_function_single(cpu, ktv_grab_pgd, g, 1);

	return ret ?: g->err;
}

/* The first 2 MiB block of data or bss that the kernel maps with one entry. */
static unsigned long ktv_data_leaf(void)
{
	unsigned long a;
	unsigned int level;

	for (a = ALIGN(sdata, PMD_SIZE); a + PMD_SIZE <= kend; a += PMD_SIZE) {
		if (lookup_address(a, &level) && level == PG_LEVEL_2M)
			return a;
	}
	return 0;
}

static int ktv_highmap_alias_show(struct seq_file *m, void *v)
{
	unsigned long alias = ktv_data_leaf(), direct;
	struct ktv_line *lines;
	int cpu, ret = 0;
	void *pgd;

	if (!alias) {
		seq_puts(m, "found=0\n");
		return 0;
	}
	direct = (unsigned long)__va(alias - __START_KERNEL_map + phys_base);
	seq_printf(m, "found=1 alias=%px direct=%px\n", (void *)alias, (void *)direct);
	lines = kcalloc(nr_cpu_ids, sizeof(*lines), GFP_KERNEL);
	pgd = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!lines || !pgd) {
		ret = -ENOMEM;
		goto out;
	}
	/* Before: each CPU's entry, read now, lower levels included. */
	for_each_online_cpu(cpu) {
		struct ktv_grab g = { .dst = pgd };

		if (ktv_grab_on(cpu, &g)) {
			ret = -EIO;
			goto out;
		}
		ktv_add(&lines[cpu], "cpu=%d node=%d before=", cpu, cpu_to_node(cpu));
		ktv_alias_entry(&lines[cpu], pgd, alias);
	}
	ret = set_memory_uc(direct, 1);
	if (ret)
		goto out;
	for_each_online_cpu(cpu) {
		struct ktv_grab g = { .dst = pgd };
		bool uc;

		if (ktv_grab_on(cpu, &g)) {
			ret = -EIO;
			break;
		}
		ktv_add(&lines[cpu], " after=");
		uc = ktv_alias_entry(&lines[cpu], pgd, alias);
		seq_printf(m, "%s ok=%d\n", lines[cpu].buf, uc);
	}
	set_memory_wb(direct, 1);
out:
	kfree(lines);
	kfree(pgd);
	return ret;
}

DEFINE_SHOW_ATTRIBUTE(ktv_highmap_alias);

static int __init ktv_init(void)
{
	/* Sanity: a text and a rodata symbol the kernel exports. */
	if (!stext || !etext || !srodata || !erodata || stext >= etext ||
	    srodata >= erodata || etext > srodata || stext < __START_KERNEL_map ||
	    !ktv_in((unsigned long)schedule, stext, etext) ||
	    !ktv_in((unsigned long)hex_asc, srodata, erodata)) {
		pr_err("stext, etext, srodata, erodata missing or wrong (stext=%lx etext=%lx srodata=%lx erodata=%lx)\n",
		       stext, etext, srodata, erodata);
		return -EINVAL;
	}

	ktv_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(ktv_dir))
		return PTR_ERR(ktv_dir);
	debugfs_create_file("report", 0400, ktv_dir, NULL, &ktv_report_fops);
	debugfs_create_file("copies", 0400, ktv_dir, NULL, &ktv_copies_fops);
	debugfs_create_file("alias_write", 0200, ktv_dir, NULL, &ktv_alias_fops);
	debugfs_create_file("peek", 0600, ktv_dir, NULL, &ktv_peek_fops);
	debugfs_create_file("code", 0600, ktv_dir, NULL, &ktv_code_fops);
	debugfs_create_file("highmap_alias", 0400, ktv_dir, NULL,
			    &ktv_highmap_alias_fops);
	debugfs_create_file("mm_pgd", 0400, ktv_dir, NULL, &ktv_mm_pgd_fops);
	pr_info("text %lu KiB, rodata %lu KiB, %d-level paging, %u nodes\n",
		(etext - stext) >> 10, (erodata - srodata) >> 10,
		pgtable_l5_enabled() ? 5 : 4, nr_node_ids);
	return 0;
}

static void __exit ktv_exit(void)
{
	debugfs_remove_recursive(ktv_dir);
}

module_init(ktv_init);
module_exit(ktv_exit);
MODULE_DESCRIPTION("Verify per-CPU mappings and bytes of kernel text and rodata");
MODULE_LICENSE("GPL");
