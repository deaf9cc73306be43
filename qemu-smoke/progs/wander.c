// SPDX-License-Identifier: GPL-2.0
/*
 * wander [-w] [-v] MS CPU...: run on each CPU in turn, spinning MS
 * milliseconds of its own CPU time on each, so that the process counts as
 * having run there (a kernel with per-node PGDs builds one for a node only
 * for a task that has run for a while). With -w, then print "ready" and
 * wait for the end of standard input, still alive: the caller can count
 * what the process holds. With -v, after each CPU also print what the
 * series' debugfs says of this process's mm (verify_mm's window and node
 * PGD lines) and the foreign_loads and mm_pgd_builds counters of its status
 * file. Exits 0, or 1 with a
 * message when a CPU cannot be reached. Static, for the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KREPL "/sys/kernel/debug/kernel_replication/"

/* Print the lines of FILE that start with PREFIX, without their newlines. */
static void show(const char *file, const char *prefix)
{
	char line[256];
	FILE *f = fopen(file, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, prefix, strlen(prefix))) {
			line[strcspn(line, "\n")] = 0;
			printf("[%s] ", line);
		}
	}
	fclose(f);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int hold = 0, verbose = 0, a = 1;
	cpu_set_t set;
	double ms;

	for (; a < argc && argv[a][0] == '-'; a++) {
		hold |= !strcmp(argv[a], "-w");
		verbose |= !strcmp(argv[a], "-v");
	}
	if (argc < a + 2) {
		fprintf(stderr, "usage: wander [-w] [-v] MS CPU...\n");
		return 1;
	}
	ms = atof(argv[a]);
	for (int i = a + 1; i < argc; i++) {
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
		if (verbose) {
			show(KREPL "verify_mm", "window");
			show(KREPL "verify_mm", "node=");
			show(KREPL "status", "foreign_loads");
			show(KREPL "status", "mm_pgd_builds");
		}
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
