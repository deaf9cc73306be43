// SPDX-License-Identifier: GPL-2.0
/*
 * wander [-w] [-v] [-p] [-t NODE:MB:LO-HI] MS CPU...: run on each CPU in
 * turn, spinning MS milliseconds of its own CPU time on each, so that the
 * process counts as having run there (a kernel with per-node PGDs builds
 * one for a node only for a task that has run there, series-v4 only for
 * one that has run for a while). With -v, after each CPU also print the
 * harness verifier's mm_pgd line there (ktext_verify.ko, where loaded: the
 * root in that CPU's CR3 against this process's mm->pgd) and the
 * foreign_loads and mm_pgd_builds counters of the series' status file.
 * With -p, then pass over the CPUs again, reading mm_pgd on each, until a
 * line says own=0 (a node PGD of this process is loaded there; series-v5
 * builds it in a worker, some time after the first run on the node): up
 * to 50 passes, 10 ms apart; prints the last pass's lines as "before
 * LINE". With -w, then print "ready" and wait for the end of standard
 * input, still alive: the caller can count what the process holds, or
 * change the machine meanwhile. With -t, last, on each CPU in turn: print
 * "after LINE" (mm_pgd there), then map MB MiB of anonymous memory bound
 * to NODE, write every page (the kernel zeroes each one through the direct
 * map of the root this process has loaded on that CPU: with -w, a root
 * built before the wait), read it back, check that it is on NODE and count
 * the pages whose physical address (/proc/self/pagemap, as root) is in
 * [LO, HI); one line per CPU. Exits 0; 1 with a message when a CPU cannot
 * be reached, mm_pgd cannot be read (-p, -t), or a CPU's pages of -t were
 * read back wrong, off NODE or none in [LO, HI). Static, for the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "touch.h"

#define KREPL "/sys/kernel/debug/kernel_replication/"
#define MM_PGD "/sys/kernel/debug/ktext_verify/mm_pgd"
#define PASSES 50
#define PASS_GAP_US 10000

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

/* mm_pgd's line on this CPU into LINE, without its newline; false if none. */
static int mm_pgd(char *line, size_t size)
{
	FILE *f = fopen(MM_PGD, "r");
	int ok;

	if (!f)
		return 0;
	ok = fgets(line, size, f) != NULL;
	fclose(f);
	if (ok)
		line[strcspn(line, "\n")] = 0;
	return ok;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int go_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "wander: cpu %d: %s\n", cpu, strerror(errno));
		return 0;
	}
	return 1;
}

/* -p: passes over the CPUs until one runs a node PGD; false on an error. */
static int wait_node_pgd(int ncpus, char **cpus)
{
	char lines[8192], line[256];
	int p, own0 = 0;

	for (p = 1; p <= PASSES && !own0; p++) {
		size_t used = 0;

		if (p > 1)
			usleep(PASS_GAP_US);
		lines[0] = 0;
		for (int i = 0; i < ncpus; i++) {
			if (!go_to(atoi(cpus[i])))
				return 0;
			if (!mm_pgd(line, sizeof(line))) {
				fprintf(stderr, "wander: cannot read %s\n", MM_PGD);
				return 0;
			}
			own0 |= strstr(line, " own=0") != NULL;
			used += snprintf(lines + used, sizeof(lines) - used, "before %s\n", line);
			if (used >= sizeof(lines))
				used = sizeof(lines) - 1;
		}
	}
	printf("%s", lines);
	printf("node PGD %s after %d pass(es)\n", own0 ? "loaded" : "never loaded", p - 1);
	return 1;
}

int main(int argc, char **argv)
{
	int hold = 0, verbose = 0, wait_pgd = 0, a = 1, node = -1, mb = 0, rc = 0;
	const char *spec = NULL;
	double ms;

	for (; a < argc && argv[a][0] == '-'; a++) {
		hold |= !strcmp(argv[a], "-w");
		verbose |= !strcmp(argv[a], "-v");
		wait_pgd |= !strcmp(argv[a], "-p");
		if (!strcmp(argv[a], "-t") && a + 1 < argc)
			spec = argv[++a];
	}
	if (argc < a + 2 || (spec && (sscanf(spec, "%d:%d:%lli-%lli", &node, &mb, &lo, &hi) != 4 ||
				      node < 0 || node >= 1024 || mb <= 0 || lo >= hi))) {
		fprintf(stderr, "usage: wander [-w] [-v] [-p] [-t NODE:MB:LO-HI] MS CPU...\n");
		return 1;
	}
	ms = atof(argv[a]);
	for (int i = a + 1; i < argc; i++) {
		int cpu = atoi(argv[i]);
		double until;

		if (!go_to(cpu))
			return 1;
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
			char line[256];

			if (mm_pgd(line, sizeof(line)))
				printf("[%s] ", line);
			show(KREPL "status", "foreign_loads");
			show(KREPL "status", "mm_pgd_builds");
		}
	}
	printf("\n");
	if (wait_pgd && !wait_node_pgd(argc - a - 1, argv + a + 1))
		return 1;
	if (hold) {
		char buf[64];

		printf("ready\n");
		fflush(stdout);
		while (fread(buf, 1, sizeof(buf), stdin) > 0)
			;
	}
	for (int i = a + 1; spec && i < argc; i++) {
		int cpu = atoi(argv[i]);
		char line[256];

		if (!go_to(cpu))
			return 1;
		if (!mm_pgd(line, sizeof(line))) {
			fprintf(stderr, "wander: cannot read %s\n", MM_PGD);
			return 1;
		}
		printf("after %s\n", line);
		printf("cpu %d: ", cpu);
		fflush(stdout);
		rc |= touch(node, (size_t)mb << 20);
	}
	return rc;
}
