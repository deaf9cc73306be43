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

#include "touch.h"

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
