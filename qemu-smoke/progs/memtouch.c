// SPDX-License-Identifier: GPL-2.0
/*
 * memtouch NODE MB LO-HI CPU...: on each CPU in turn, map MB MiB of
 * anonymous memory bound to NODE (mbind MPOL_BIND), write every page (the
 * kernel zeroes each one first, through the direct map, from this
 * process's page tables on that CPU), read it back, check with
 * get_mempolicy() that the page is on NODE, count the pages whose
 * physical address (/proc/self/pagemap, as root) is in [LO, HI), and
 * unmap it. Prints one line per CPU; exits 0 when every page was on NODE,
 * read back right and at least one lay in [LO, HI) on every CPU, else 1.
 * For the memory hotplug test: [LO, HI) is the hot-added memory, in
 * ZONE_MOVABLE, where movable allocations on NODE go first. Static.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_BIND		2
#define MPOL_F_NODE		(1 << 0)
#define MPOL_F_ADDR		(1 << 1)

static long long lo, hi;

/* Is the page at @addr in [lo, hi)? -1: pagemap unreadable or no PFN. */
static int in_range(int pagemap, void *addr, long page)
{
	uint64_t e;

	if (pread(pagemap, &e, sizeof(e), (uintptr_t)addr / page * sizeof(e)) != sizeof(e) ||
	    !(e & (1ULL << 63)) || !(e & ((1ULL << 55) - 1)))
		return -1;
	e = (e & ((1ULL << 55) - 1)) * page;
	return e >= (uint64_t)lo && e < (uint64_t)hi;
}

static int touch(int node, size_t bytes)
{
	unsigned long mask[16] = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	size_t off, bad = 0, elsewhere = 0, inside = 0, unknown = 0;
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	char *p;

	mask[node / 64] = 1UL << (node % 64);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	if (syscall(SYS_mbind, p, bytes, MPOL_BIND, mask, 1024, 0)) {
		perror("mbind");
		munmap(p, bytes);
		return -1;
	}
	for (off = 0; off < bytes; off += page)
		p[off] = (char)(off / page) | 1;
	for (off = 0; off < bytes; off += page) {
		int where = -1;

		bad += p[off] != ((char)(off / page) | 1);
		if (syscall(SYS_get_mempolicy, &where, NULL, 0, p + off,
			    MPOL_F_NODE | MPOL_F_ADDR) || where != node)
			elsewhere++;
		switch (in_range(pagemap, p + off, page)) {
		case 1:
			inside++;
			break;
		case -1:
			unknown++;
			break;
		}
	}
	munmap(p, bytes);
	if (pagemap >= 0)
		close(pagemap);
	printf("node %d: %zu pages, %zu read back wrong, %zu elsewhere, %zu in the range, %zu unknown\n",
	       node, bytes / page, bad, elsewhere, inside, unknown);
	return bad || elsewhere || !inside ? 1 : 0;
}

int main(int argc, char **argv)
{
	int node, rc = 0;
	size_t bytes;

	if (argc < 5) {
		fprintf(stderr, "usage: memtouch NODE MB LO-HI CPU...\n");
		return 1;
	}
	node = atoi(argv[1]);
	bytes = (size_t)atoi(argv[2]) << 20;
	if (node < 0 || node >= 1024 || !bytes ||
	    sscanf(argv[3], "%lli-%lli", &lo, &hi) != 2 || lo >= hi) {
		fprintf(stderr, "memtouch: bad node, size or range\n");
		return 1;
	}
	for (int i = 4; i < argc; i++) {
		int cpu = atoi(argv[i]);
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "memtouch: cpu %d: cannot run there\n", cpu);
			rc = 1;
			continue;
		}
		printf("cpu %d: ", cpu);
		fflush(stdout);
		if (touch(node, bytes))
			rc = 1;
	}
	return rc;
}
