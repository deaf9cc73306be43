/* SPDX-License-Identifier: GPL-2.0 */
/*
 * touch(): map MB of anonymous memory bound to a node, write and read back
 * every page, and count where the pages are; for memtouch and wander -t.
 * Set lo and hi, the physical range to count, first.
 */
#ifndef KTV_TOUCH_H
#define KTV_TOUCH_H

#include <stdint.h>
#include <stdio.h>
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

/*
 * On this CPU: 0 when every page read back right, lay on @node, and some
 * in [lo, hi); else 1, or -1 when the memory could not be had.
 */
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

#endif
