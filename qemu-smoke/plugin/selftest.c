// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * selftest.c - drive the locality meter without QEMU.
 *
 * Includes locality.c and provides the few QEMU 10 plugin API functions
 * it calls: "translating" a block calls the meter's translation callback
 * with a fake block, "executing" it calls the callbacks the meter
 * registered, in QEMU's order (the block's callbacks first, then each
 * instruction's exec and memory callbacks). Node memory is two files,
 * node0.mem and node1.mem, mapped as boot.py's file backend maps them, so
 * the meter finds them in /proc/self/maps as it does in QEMU.
 *
 *   selftest DIR REPORT
 *
 * plays a two-node, four-vCPU run with phase markers and data=on,
 * rodata=..., cache=on, checks the meter's counters against the numbers
 * the script implies (and the cache model's LRU and line splitting on
 * their own), and writes the meter's report to REPORT (checks/meter.sh
 * --assert qemu-smoke/topologies/2node.topo REPORT must pass on it).
 * Exits 0 when every check passed. Built by 'make -C qemu-smoke/plugin
 * selftest'; run by checks/fixtures-test.sh.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "locality.c"

#define MAX_TB_INSNS	8
#define NODE_BYTES	65536

struct qemu_plugin_insn {
	uint64_t vaddr;
	void *haddr;
	qemu_plugin_vcpu_udata_cb_t exec_cb;
	void *exec_udata;
	qemu_plugin_vcpu_mem_cb_t mem_cb, store_cb;	/* for loads, stores */
	void *mem_udata, *store_udata;
	size_t size;		/* bytes (0: one) */
	bool writes;		/* the instruction writes data_vaddr ... */
	bool reads;		/* the instruction reads data_vaddr ... */
	uint64_t data_vaddr;
	void *data_host;	/* ... at this host address (NULL: unresolved) */
};

struct qemu_plugin_tb {
	size_t n;
	struct qemu_plugin_insn insn[MAX_TB_INSNS];
	int ncb;
	struct {
		qemu_plugin_vcpu_udata_cb_t cb;
		void *udata;
	} cb[NCLASSES];
};

static qemu_plugin_vcpu_tb_trans_cb_t trans_cb;
static qemu_plugin_udata_cb_t exit_cb;
static void *exit_udata;
/* The access being executed: RAM at guest physical phys, or unresolved. */
struct qemu_plugin_hwaddr {
	bool ram;
	uint64_t phys;
};
static struct qemu_plugin_hwaddr fake_hw;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb)
{
	(void)id;
	trans_cb = cb;
}

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata)
{
	(void)id;
	exit_cb = cb;
	exit_udata = userdata;
}

void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata)
{
	(void)flags;
	tb->cb[tb->ncb].cb = cb;
	tb->cb[tb->ncb++].udata = userdata;
}

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata)
{
	(void)flags;
	insn->exec_cb = cb;
	insn->exec_udata = userdata;
}

void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags,
				      enum qemu_plugin_mem_rw rw,
				      void *userdata)
{
	(void)flags;
	if (rw & QEMU_PLUGIN_MEM_R) {
		insn->mem_cb = cb;
		insn->mem_udata = userdata;
	}
	if (rw & QEMU_PLUGIN_MEM_W) {
		insn->store_cb = cb;
		insn->store_udata = userdata;
	}
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb)
{
	return tb->n;
}

struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx)
{
	return (struct qemu_plugin_insn *)&tb->insn[idx];
}

uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn)
{
	return insn->vaddr;
}

void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn)
{
	return insn->haddr;
}

size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn)
{
	return insn->size ? insn->size : 1;
}


struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info,
						  uint64_t vaddr)
{
	(void)info;
	(void)vaddr;
	return fake_hw.ram ? &fake_hw : NULL;
}

bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr)
{
	return !haddr->ram;
}

uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr)
{
	return haddr->phys;
}

/*
 * tlb=on: the registers the meter reads, by name; a handle is its index
 * plus one. The test sets fake_regs[] before "executing" an instruction.
 */
static const char *const fake_reg_names[] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cr3", "cr4",
};
#define N_FAKE_REGS	(sizeof(fake_reg_names) / sizeof(fake_reg_names[0]))
static uint64_t fake_regs[N_FAKE_REGS];
static qemu_plugin_reg_descriptor fake_descs[N_FAKE_REGS];
static GArray fake_reg_array;
static qemu_plugin_vcpu_simple_cb_t init_cb;
static unsigned char fake_vmem[4096];	/* what read_memory_vaddr reads */

GByteArray *g_byte_array_new(void)
{
	return calloc(1, sizeof(GByteArray));
}

GByteArray *g_byte_array_set_size(GByteArray *array, unsigned int length)
{
	if (length > array->len) {
		array->data = realloc(array->data, length);
		if (!array->data)
			abort();
	}
	array->len = length;
	return array;
}

GArray *qemu_plugin_get_registers(void)
{
	size_t i;

	for (i = 0; i < N_FAKE_REGS; i++)
		fake_descs[i] = (qemu_plugin_reg_descriptor){
			(struct qemu_plugin_register *)(i + 1), fake_reg_names[i], NULL };
	fake_reg_array = (GArray){ (char *)fake_descs, N_FAKE_REGS };
	return &fake_reg_array;
}

int qemu_plugin_read_register(struct qemu_plugin_register *handle, GByteArray *buf)
{
	size_t i = (uintptr_t)handle - 1, at = buf->len;

	if (i >= N_FAKE_REGS)
		return -1;
	g_byte_array_set_size(buf, at + 8);
	memcpy(buf->data + at, &fake_regs[i], 8);
	return 8;
}

bool qemu_plugin_read_memory_vaddr(uint64_t addr, GByteArray *data, size_t len)
{
	addr &= 4095;
	if (addr + len > sizeof(fake_vmem))
		return false;
	g_byte_array_set_size(data, (unsigned int)len);
	memcpy(data->data, fake_vmem + addr, len);
	return true;
}

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
				       qemu_plugin_vcpu_simple_cb_t cb)
{
	(void)id;
	init_cb = cb;
}

size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest,
			     size_t len)
{
	size_t n = qemu_plugin_insn_size(insn);

	n = n < len ? n : len;
	if (insn->haddr)
		memcpy(dest, insn->haddr, n);
	return insn->haddr ? n : 0;
}

bool qemu_plugin_bool_parse(const char *name, const char *val, bool *ret)
{
	(void)name;
	if (!strcmp(val, "on") || !strcmp(val, "true") || !strcmp(val, "yes")) {
		*ret = true;
		return true;
	}
	if (!strcmp(val, "off") || !strcmp(val, "false") || !strcmp(val, "no")) {
		*ret = false;
		return true;
	}
	return false;
}

/* ---- the script ---- */

#define KTEXT		0xffffffff81000000ull	/* image text, node 0 */
#define KMOD		0xffffffffa0000000ull	/* module text, node 1 */
#define RODATA		0xffffffff82000000ull	/* rodata=RODATA-RODATA_END */
#define RODATA_END	0xffffffff82800000ull
#define DIRECT		0xffff888000001000ull	/* a direct-map address */
#define UTEXT		0x401000ull

static unsigned char *mem[2];	/* node 0 and node 1 memory */
static int checks, failures;

/* A block of n instructions at vaddr whose bytes are at host (or NULL). */
static struct qemu_plugin_tb *block(uint64_t vaddr, unsigned char *host, size_t n)
{
	struct qemu_plugin_tb *tb = calloc(1, sizeof(*tb));
	size_t i;

	if (!tb || n > MAX_TB_INSNS)
		abort();
	tb->n = n;
	for (i = 0; i < n; i++) {
		tb->insn[i].vaddr = vaddr + i;
		tb->insn[i].haddr = host ? host + i : NULL;
	}
	return tb;
}

static struct qemu_plugin_tb *translate(struct qemu_plugin_tb *tb)
{
	trans_cb(1, tb);
	return tb;
}

/*
 * What QEMU records of an access to @host: its guest physical address,
 * q35's layout of two nodes of NODE_BYTES (node 0 at 0, node 1 after it).
 */
static struct qemu_plugin_hwaddr host_hw(const unsigned char *host)
{
	int n;

	for (n = 0; host && n < 2; n++)
		if (host >= mem[n] && host < mem[n] + NODE_BYTES)
			return (struct qemu_plugin_hwaddr){ true, n * NODE_BYTES + (uint64_t)(host - mem[n]) };
	return (struct qemu_plugin_hwaddr){ false, 0 };
}

static void run(struct qemu_plugin_tb *tb, unsigned int vcpu, int times)
{
	size_t i;
	int c;

	while (times-- > 0) {
		for (c = 0; c < tb->ncb; c++)
			tb->cb[c].cb(vcpu, tb->cb[c].udata);
		for (i = 0; i < tb->n; i++) {
			struct qemu_plugin_insn *insn = &tb->insn[i];

			if (insn->exec_cb)
				insn->exec_cb(vcpu, insn->exec_udata);
			fake_hw = host_hw(insn->data_host);
			if (insn->reads && insn->mem_cb)
				insn->mem_cb(vcpu, 0, insn->data_vaddr, insn->mem_udata);
			if (insn->writes && insn->store_cb)
				insn->store_cb(vcpu, 0, insn->data_vaddr, insn->store_udata);
		}
	}
}

/* Execute the one-instruction marker block at byte OFFSET of the page. */
static void mark(unsigned int vcpu, unsigned int offset)
{
	static struct qemu_plugin_tb *tbs[PHASE_PAGE_SIZE];

	if (!tbs[offset])
		tbs[offset] = translate(block(PHASE_PAGE + offset, mem[1] + 0x2000 + offset, 1));
	run(tbs[offset], vcpu, 1);
}

static void expect(const char *what, uint64_t got, uint64_t want)
{
	checks++;
	if (got == want)
		return;
	fprintf(stderr, "selftest: %s: %" PRIu64 ", want %" PRIu64 "\n", what, got, want);
	failures++;
}

#include "tlbmodel-test.c"
#include "x86tlb-test.c"

static int install(int argc, char **argv)
{
	qemu_info_t info = { .target_name = "x86_64", .system_emulation = true };

	info.system.smp_vcpus = 4;
	info.system.max_vcpus = 4;
	return qemu_plugin_install(1, &info, argc, argv);
}

static void map_nodes(const char *dir)
{
	char path[4096];
	int n, fd;

	for (n = 0; n < 2; n++) {
		snprintf(path, sizeof(path), "%s/node%d.mem", dir, n);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, NODE_BYTES)) {
			perror(path);
			exit(2);
		}
		mem[n] = mmap(NULL, NODE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem[n] == MAP_FAILED) {
			perror("mmap");
			exit(2);
		}
		close(fd);
	}
}

/* pages=on: the remote instructions counted for (@vaddr's page, @col). */
static uint64_t page_remote(uint64_t vaddr, int col)
{
	struct page_ctr *pc;
	unsigned int b;

	for (b = 0; b < PAGE_BUCKETS; b++)
		for (pc = page_ctrs[b]; pc; pc = pc->next)
			if (pc->page == vaddr >> 12 && pc->col == col)
				return pc->remote;
	return 0;
}

/* cachemodel.h and tb_lines_of() on their own. */
static void test_cachemodel(void)
{
	struct qemu_plugin_tb *tb;
	struct tb_lines *t;
	struct cm_cache c;

	expect("a shape whose lines do not split into ways", cm_init(&c, 1, 3), (uint64_t)-1);
	expect("1 KiB, 2 ways", cm_init(&c, 1, 2), 0);	/* 16 lines, 8 sets */
	expect("line 0 cold", cm_access(&c, 0), 0);
	expect("line 8 cold", cm_access(&c, 8), 0);
	expect("line 0 again", cm_access(&c, 0), 1);
	expect("line 16 cold", cm_access(&c, 16), 0);	/* evicts 8 */
	expect("line 0 kept", cm_access(&c, 0), 1);
	expect("line 8 evicted", cm_access(&c, 8), 0);	/* evicts 16 */
	expect("line 16 evicted", cm_access(&c, 16), 0);	/* evicts 0 */
	expect("line 1 other set", cm_access(&c, 1), 0);
	cm_flush(&c);
	expect("line 16 after a flush", cm_access(&c, 16), 0);
	expect("line 16 refilled", cm_access(&c, 16), 1);
	free(c.tag);
	free(c.stamp);

	/* Eight one-byte instructions from byte 0x3c of a line: two lines. */
	tb = block(KTEXT, mem[0] + 0x23c, 8);
	t = tb_lines_of(tb, 8);
	expect("lines of a block across a line", t ? t->n : 0, 2);
	expect("its first line", t ? t->l[0].line : 0, (uintptr_t)(mem[0] + 0x200) >> 6);
	expect("kernel block", t ? t->kernel : 0, 1);
	free(t);
	/* One 70-byte instruction at byte 0x30: two lines. */
	tb->n = 1;
	tb->insn[0].haddr = mem[1] + 0x30;
	tb->insn[0].size = 70;
	t = tb_lines_of(tb, 1);
	expect("lines of one long instruction", t ? t->n : 0, 2);
	expect("their node", t ? t->l[1].col : 9, 1);
	free(t);
	tb->insn[0].haddr = NULL;
	expect("a block without RAM has no lines", tb_lines_of(tb, 1) == NULL, 1);
	free(tb);
}

int main(int argc, char **argv)
{
	char out_arg[4200];
	char *bad_rodata[] = { "data=on", "rodata=ffffffff82000000" };
	char *bad_order[] = { "data=on", "rodata=ffffffff82800000-ffffffff82000000" };
	char *rodata_no_data[] = { "rodata=ffffffff82000000-ffffffff82800000" };
	char *cache_no_data[] = { "data=off", "cache=on" };
	char *bad_shape[] = { "data=on", "cache=on", "l2=1000:3" };
	char *args[] = { "cpunodes=0:0:1:1", "homes=0:1", "data=on",
			 "rodata=ffffffff82000000-ffffffff82800000", "cache=on",
			 "l1d=32:8", "pages=on", out_arg };
	struct qemu_plugin_tb *ktext, *kread, *kmod, *bios, *user, *kstore;
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: selftest DIR REPORT\n");
		return 2;
	}
	map_nodes(argv[1]);
	snprintf(out_arg, sizeof(out_arg), "out=%s", argv[2]);

	/* Arguments the meter must refuse. */
	expect("install with rodata= and data=off", install(1, rodata_no_data) == -1, 1);
	expect("install with rodata=START only", install(2, bad_rodata) == -1, 1);
	expect("install with rodata END < START", install(2, bad_order) == -1, 1);
	rodata_on = false;	/* set by the refused installs above */
	expect("install with cache=on and data=off", install(2, cache_no_data) == -1, 1);
	expect("install with a bad cache shape", install(3, bad_shape) == -1, 1);
	expect("install", install(8, args), 0);
	expect("l1d shape from its argument", shapes[SHAPE_L1D].kib * 100 + shapes[SHAPE_L1D].ways, 3208);

	ktext = translate(block(KTEXT, mem[0] + 0x100, 8));
	kmod = translate(block(KMOD, mem[1] + 0x100, 5));
	bios = translate(block(0xfff0, NULL, 3));
	user = translate(block(UTEXT, mem[1] + 0x4000, 6));
	/*
	 * Five kernel reads: rodata on node 0, rodata on node 1, the direct
	 * map on node 0, rodata unresolved (I/O), and the first byte past
	 * the rodata range (node 0, not rodata).
	 */
	kread = block(KTEXT + 0x1000, mem[0] + 0x1000, 5);
	for (i = 0; i < 5; i++)
		kread->insn[i].reads = true;
	kread->insn[0].data_vaddr = RODATA + 0x100;
	kread->insn[0].data_host = mem[0] + 0x8000;
	kread->insn[1].data_vaddr = RODATA + 0x200;
	kread->insn[1].data_host = mem[1] + 0x8000;
	kread->insn[2].data_vaddr = DIRECT;
	kread->insn[2].data_host = mem[0] + 0x9000;
	kread->insn[3].data_vaddr = RODATA + 0x300;
	kread->insn[3].data_host = NULL;
	kread->insn[4].data_vaddr = RODATA_END;
	kread->insn[4].data_host = mem[0] + 0xa000;
	translate(kread);
	test_cachemodel();	/* after the first translation: the nodes are known */
	test_tlbmodel();
	test_x86tlb();

	/* Phase 0, the boot: node 1's vCPUs run the image remotely. */
	run(bios, 0, 1000);
	run(ktext, 0, 10000);
	run(kread, 0, 10);
	run(ktext, 1, 5000);
	run(ktext, 2, 8000);
	run(kmod, 2, 100);
	run(ktext, 3, 7000);

	mark(0, 16 * 1);		/* phase 1 */
	run(user, 0, 100);
	mark(0, 16 * 2);		/* phase 2 */
	run(ktext, 0, 200);
	run(kread, 0, 50);
	run(kmod, 0, 10);
	run(user, 0, 10);
	run(ktext, 2, 30);
	mark(0, 0);			/* slot 0: not a marker */
	mark(0, 16 * 3 + 8);		/* not at a slot: not a marker */
	mark(2, 16 * 1);		/* phase 1 again */
	run(ktext, 1, 7);
	mark(3, 16 * 254);		/* the last phase */
	run(ktext, 3, 3);

	expect("phase now", phase_now, 254);
	expect("marks of phase 0", phase_marks[0], 0);
	expect("marks of phase 1", phase_marks[1], 2);
	expect("marks of phase 2", phase_marks[2], 1);
	expect("marks of phase 3", phase_marks[3], 0);
	expect("marks of the last phase", phase_marks[254], 1);

	expect("phase 0 vcpu 0 kernel node 0", stats[0][0].insns[MODE_KERNEL][0], 10000 * 8 + 10 * 5);
	expect("phase 0 vcpu 0 user other", stats[0][0].insns[MODE_USER][COL_OTHER], 3000);
	expect("phase 0 vcpu 2 kernel node 1", stats[0][2].insns[MODE_KERNEL][1], 500);
	expect("phase 0 vcpu 3 kernel node 0", stats[0][3].insns[MODE_KERNEL][0], 56000);
	/* A marker's own instruction counts in the phase before it. */
	expect("phase 0 vcpu 0 user node 1", stats[0][0].insns[MODE_USER][1], 1);
	expect("phase 1 vcpu 0 user node 1", stats[1][0].insns[MODE_USER][1], 600 + 1);
	expect("phase 1 vcpu 0 kernel", stats[1][0].insns[MODE_KERNEL][0], 0);
	expect("phase 1 vcpu 1 kernel node 0", stats[1][1].insns[MODE_KERNEL][0], 56);
	expect("phase 2 vcpu 0 kernel node 0", stats[2][0].insns[MODE_KERNEL][0], 200 * 8 + 50 * 5);
	expect("phase 2 vcpu 0 kernel node 1", stats[2][0].insns[MODE_KERNEL][1], 50);
	/* Two non-markers and phase 1's marker on vCPU 2 ran in phase 2. */
	expect("phase 2 vcpu 0 user node 1", stats[2][0].insns[MODE_USER][1], 60 + 2);
	expect("phase 2 vcpu 2 user node 1", stats[2][2].insns[MODE_USER][1], 1);
	expect("phase 2 vcpu 2 kernel node 0", stats[2][2].insns[MODE_KERNEL][0], 240);
	expect("phase 2 vcpu 1 kernel", stats[2][1].insns[MODE_KERNEL][0], 0);
	expect("last phase vcpu 3 kernel node 0", stats[254][3].insns[MODE_KERNEL][0], 24);
	expect("last phase vcpu 3 user node 1", stats[254][3].insns[MODE_USER][1], 0);
	expect("phase 1 vcpu 3 user node 1", stats[1][3].insns[MODE_USER][1], 1);

	expect("phase 0 vcpu 0 reads node 0", stats[0][0].reads[0], 10 * 3);
	expect("phase 2 vcpu 0 reads node 0", stats[2][0].reads[0], 50 * 3);
	expect("phase 2 vcpu 0 reads node 1", stats[2][0].reads[1], 50);
	expect("phase 2 vcpu 0 reads io", stats[2][0].reads_io, 50);
	expect("phase 2 vcpu 0 rodata node 0", stats[2][0].rodata[0], 50);
	expect("phase 2 vcpu 0 rodata node 1", stats[2][0].rodata[1], 50);
	expect("phase 2 vcpu 0 rodata io", stats[2][0].rodata_io, 50);
	expect("phase 1 vcpu 0 reads", stats[1][0].reads[0] + stats[1][0].reads_io, 0);

	/*
	 * The cache model. Phase 0: vCPU 0 fetched ktext's and kread's line
	 * from memory once each (node 0, local), then from L1; vCPU 1 (node 0)
	 * found ktext in node 0's LLC; vCPU 2 (node 1) fetched it from node 0
	 * (remote) and kmod's from node 1; vCPU 3 found ktext in node 1's LLC.
	 * User blocks go through the caches uncounted; bios has no RAM line.
	 */
	expect("phase 0 vcpu 0 fetch l1", stats[0][0].kfetch[CM_L1], 9999 + 9);
	expect("phase 0 vcpu 0 fetch mem", stats[0][0].kfetch[CM_MEM], 2);
	expect("phase 0 vcpu 0 fetch mem node 0", stats[0][0].kfetch_mem[0], 2);
	expect("phase 0 vcpu 1 fetch llc", stats[0][1].kfetch[CM_LLC], 1);
	expect("phase 0 vcpu 1 fetch mem", stats[0][1].kfetch[CM_MEM], 0);
	expect("phase 0 vcpu 2 fetch mem node 0", stats[0][2].kfetch_mem[0], 1);
	expect("phase 0 vcpu 2 fetch mem node 1", stats[0][2].kfetch_mem[1], 1);
	expect("phase 0 vcpu 3 fetch llc", stats[0][3].kfetch[CM_LLC], 1);
	expect("phase 0 vcpu 0 user fetches uncounted",
	       stats[1][0].kfetch[CM_L1] + stats[1][0].kfetch[CM_MEM], 0);
	/* rodata reads: node 0's and node 1's line once from memory each. */
	expect("phase 0 vcpu 0 rodata l1", stats[0][0].krodata[CM_L1], 18);
	expect("phase 0 vcpu 0 rodata mem node 0", stats[0][0].krodata_mem[0], 1);
	expect("phase 0 vcpu 0 rodata mem node 1", stats[0][0].krodata_mem[1], 1);
	/* Phase 2: all hits in L1 but kmod's line, which only node 1 had. */
	expect("phase 2 vcpu 0 fetch l1", stats[2][0].kfetch[CM_L1], 250 + 9);
	expect("phase 2 vcpu 0 fetch mem node 1", stats[2][0].kfetch_mem[1], 1);
	expect("phase 2 vcpu 0 fetch mem", stats[2][0].kfetch[CM_MEM], 1);
	expect("phase 2 vcpu 0 rodata l1", stats[2][0].krodata[CM_L1], 100);
	expect("phase 2 vcpu 0 rodata from memory", stats[2][0].krodata[CM_MEM], 0);
	/* The flush marker empties every cache and keeps the phase. */
	mark(0, 16 * FLUSH_SLOT);
	run(ktext, 3, 2);
	expect("flush marks", flush_marks, 1);
	expect("phase after a flush", phase_now, 254);
	expect("last phase vcpu 3 fetch l1", stats[254][3].kfetch[CM_L1], 3 + 1);
	expect("last phase vcpu 3 fetch mem node 0", stats[254][3].kfetch_mem[0], 1);

	/*
	 * A store to a rodata line, then a load of it: the store is no read,
	 * and it brought the line into L1d (write-allocate). An atomic
	 * read-modify-write, both: one read.
	 */
	kstore = block(KTEXT + 0x3000, mem[0] + 0x3000, 3);
	kstore->insn[0].writes = true;
	kstore->insn[1].reads = true;
	kstore->insn[2].reads = kstore->insn[2].writes = true;
	for (i = 0; i < 3; i++) {
		kstore->insn[i].data_vaddr = RODATA + 0x400 + 0x1000 * i;
		kstore->insn[i].data_host = mem[0] + 0xb000 + 0x1000 * (i == 2);
	}
	translate(kstore);
	run(kstore, 1, 1);
	expect("loads of the store block", stats[254][1].reads[0], 2);
	expect("rodata loads of the store block", stats[254][1].rodata[0], 2);
	expect("the load after the store hit L1", stats[254][1].krodata[CM_L1], 1);
	expect("the atomic's load reached memory", stats[254][1].krodata[CM_MEM], 1);

	/*
	 * pages=on, after boot only: ktext from node 0 on node 1's vCPUs
	 * (phase 2: vCPU 2, 30 runs; the last phase: vCPU 3, 3 + 2 runs, of
	 * 8 instructions), kmod from node 1 on vCPU 0 (phase 2, 10 runs of
	 * 5). The boot's remote runs and local runs do not count.
	 */
	expect("remote ktext page", page_remote(KTEXT, 0), (30 + 3 + 2) * 8);
	expect("remote kmod page", page_remote(KMOD, 1), 10 * 5);
	expect("local kread page", page_remote(KTEXT + 0x1000, 0), 0);
	/* Phase 1 was left twice: vCPU 1 ran nothing, then ktext 7 times. */
	expect("phase 1 stretches", stretch[1][1].n, 2);
	expect("phase 1 vcpu 1 first stretch", stretch[1][1].insns[0], 0);
	expect("phase 1 vcpu 1 second stretch", stretch[1][1].insns[1], 7 * 8);
	expect("phase 2 vcpu 2 stretch", stretch[2][2].insns[0], 30 * 8);

	exit_cb(1, exit_udata);
	if (failures) {
		fprintf(stderr, "selftest: %d of %d checks failed\n", failures, checks);
		return 1;
	}
	printf("selftest: %d checks of the meter passed\n", checks);
	return 0;
}
