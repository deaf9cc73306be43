// SPDX-License-Identifier: GPL-2.0
/*
 * wander [-w] MS CPU...: run on each CPU in turn, spinning MS milliseconds
 * of its own CPU time on each, so that the process counts as having run
 * there (a kernel with per-node PGDs builds one for a node only for a
 * task that has run for a while). With -w, then print "ready" and wait
 * for the end of standard input, still alive: the caller can count what
 * the process holds. Exits 0, or 1 with a message when a CPU cannot be
 * reached. Static, for the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int hold = argc > 1 && !strcmp(argv[1], "-w");
	cpu_set_t set;
	double ms;

	if (argc < 3 + hold) {
		fprintf(stderr, "usage: wander [-w] MS CPU...\n");
		return 1;
	}
	ms = atof(argv[1 + hold]);
	for (int i = 2 + hold; i < argc; i++) {
		int cpu = atoi(argv[i]);
		double until;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "wander: cpu %d: %s\n", cpu, strerror(errno));
			return 1;
		}
		until = cpu_ms() + ms;
		while (cpu_ms() < until)
			;
		if (sched_getcpu() != cpu) {
			fprintf(stderr, "wander: not on cpu %d\n", cpu);
			return 1;
		}
		/* For the caller's diagnostics: where, and for how long. */
		printf("cpu%d:%.0fms ", cpu, cpu_ms());
	}
	if (hold) {
		char buf[64];

		printf("\nready\n");
		fflush(stdout);
		while (fread(buf, 1, sizeof(buf), stdin) > 0)
			;
	}
	return 0;
}
