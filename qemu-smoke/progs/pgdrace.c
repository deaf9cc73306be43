// SPDX-License-Identifier: GPL-2.0
/*
 * pgdrace [-z] N MS: N times, fork a child whose two threads race for MS
 * milliseconds: one maps, touches and unmaps (or mremaps) memory in
 * otherwise empty 512 GiB slots of the address space, so that top-level
 * entries are populated and cleared (free_pgd_range() under the mmap read
 * lock), and writes LDT entries (map_ldt_struct()); the other hops from
 * CPU to CPU, so that the kernel builds the process a PGD per node while
 * those entries change. The child then visits every online CPU and reads
 * there the harness verifier's mm_pgd (ktext_verify.ko, loaded by the
 * caller): the root in that CPU's CR3 against the child's mm->pgd. Every
 * root must equal mm->pgd but for the window (no line with differ > 0),
 * and one CPU at least must run a node PGD (a line with own=0): a child
 * that got none raced with nothing. Node PGDs may be built after the
 * first run on a node (series-v5: by a worker), so the pass over the CPUs
 * is repeated, 10 ms apart, up to 50 times until a line says own=0.
 * -z: a child without a node PGD passes, after one pass (a topology whose
 * CPUs all use one replica, where no node PGD is ever built). Prints the
 * last child's lines (and a failing child's) and a summary line; exits 0
 * when every child's roots matched (and each had a node PGD). Static, for
 * the guest; on series-v4 run it with build_min_ns at 0.
 */
#define _GNU_SOURCE
#include <asm/ldt.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MM_PGD "/sys/kernel/debug/ktext_verify/mm_pgd"
#define SLOT (512UL << 30)	/* what one top-level entry maps (4-level) */
#define PASSES 50		/* over every CPU, until a node PGD shows */
#define PASS_GAP_US 10000

/*
 * The number after "KEY=" in mm_pgd's line L, or -1 when L has no KEY.
 * An mm_pgd line is bad if differ > 0, or if it has no differ at all.
 */
static long field(const char *l, const char *key)
{
	const char *p = strstr(l, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static volatile int stop;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Populate and clear top-level entries; write the LDT now and then. */
static void *mapper(void *arg)
{
	unsigned long i = 0;

	(void)arg;
	while (!stop) {
		char *want = (char *)((100 + i % 8) * SLOT);
		char *p = mmap(want, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED)
			continue;
		p[0] = 1;
		if (i % 3 == 0) {
			char *q = mremap(p, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
					 (char *)((110 + i % 8) * SLOT));

			if (q != MAP_FAILED)
				p = q;
		}
		munmap(p, 4096);
		if (i % 16 == 0) {
			struct user_desc d = {
				.entry_number = i / 16 % 8, .base_addr = 0,
				.limit = 0xfff, .seg_32bit = 1, .useable = 1,
			};

			syscall(SYS_modify_ldt, 1, &d, sizeof(d));
		}
		i++;
	}
	return NULL;
}

/* A child's exit status: its PGDs matched, differ, it failed, it had none. */
enum { CHILD_OK, CHILD_DIFFER, CHILD_ERROR, CHILD_NO_NODE_PGD };

/*
 * One pass: read mm_pgd on every online CPU (a CPU that cannot be had,
 * offline now, is left out), its lines appended to OUT (SIZE bytes). Sets
 * *BAD when a line has differ > 0 (or none), *NODE_PGD when one says
 * own=0. False when the file cannot be read.
 */
static int pass(char *out, size_t size, int *bad, int *node_pgd)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t used = 0;
	int seen = 0;

	out[0] = 0;
	for (long cpu = 0; cpu < ncpu && cpu < CPU_SETSIZE; cpu++) {
		char line[256];
		cpu_set_t set;
		ssize_t n;
		int fd;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			continue;
		fd = open(MM_PGD, O_RDONLY);
		if (fd < 0) {
			perror(MM_PGD);
			return 0;
		}
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
		if (n <= 0) {
			fprintf(stderr, "%s on cpu %ld: %s\n", MM_PGD, cpu,
				n ? strerror(errno) : "empty");
			return 0;
		}
		line[n] = 0;
		if (line[n - 1] != '\n' && n < (ssize_t)sizeof(line) - 1)
			strcat(line, "\n");
		*bad |= field(line, " differ=") != 0;
		*node_pgd |= strstr(line, " own=0") != NULL;
		used += snprintf(out + used, size - used, "%s", line);
		if (used >= size)
			used = size - 1;
		seen++;
	}
	return seen > 0;
}

/*
 * Child I of N: the race, then the passes over the CPUs; the last pass's
 * lines printed for the last child and for a child that fails.
 */
static int child(double ms, int allow_none, int i, int n_children)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char lines[8192];
	pthread_t t;
	cpu_set_t set;
	double end;
	long cpu = 0;
	int rc, p, bad = 0, node_pgd = 0;

	if (pthread_create(&t, NULL, mapper, NULL))
		return CHILD_ERROR;
	end = now_ms() + ms;
	while (now_ms() < end) {
		CPU_ZERO(&set);
		CPU_SET(cpu++ % ncpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	stop = 1;
	pthread_join(t, NULL);
	for (p = 1; p <= PASSES; p++) {
		if (!pass(lines, sizeof(lines), &bad, &node_pgd))
			return CHILD_ERROR;
		if (bad || node_pgd || allow_none)
			break;
		usleep(PASS_GAP_US);
	}
	if (p > PASSES)
		p = PASSES;
	rc = bad ? CHILD_DIFFER : !node_pgd && !allow_none ? CHILD_NO_NODE_PGD : CHILD_OK;
	if (i == n_children - 1 || rc != CHILD_OK) {
		printf("child %d of %d, mm_pgd on every CPU (pass %d):\n%s", i + 1,
		       n_children, p, lines);
		if (rc == CHILD_NO_NODE_PGD)
			printf("no node PGD (no own=0 line in %d passes)\n", p);
	}
	return rc;
}

int main(int argc, char **argv)
{
	int n, fails = 0, errors = 0, none = 0, allow_none = 0;
	double ms;

	if (argc > 1 && !strcmp(argv[1], "-z")) {
		allow_none = 1;
		argc--;
		argv++;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: pgdrace [-z] N MS\n");
		return 2;
	}
	n = atoi(argv[1]);
	ms = atof(argv[2]);
	for (int i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (!pid) {
			int rc = child(ms, allow_none, i, n);

			fflush(stdout);
			_exit(rc);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			errors++;
		else if (WEXITSTATUS(status) == CHILD_DIFFER)
			fails++;
		else if (WEXITSTATUS(status) == CHILD_NO_NODE_PGD)
			none++;
		else if (WEXITSTATUS(status))
			errors++;
	}
	printf("pgdrace: %d children, %d with node PGDs that differ, %d without a node PGD%s, %d errors\n",
	       n, fails, none, allow_none ? " (allowed)" : "", errors);
	return fails || none || errors;
}
