// SPDX-License-Identifier: GPL-2.0
/*
 * pgdrace [-z] N MS: N times, fork a child whose two threads race for MS
 * milliseconds: one maps, touches and unmaps (or mremaps) memory in
 * otherwise empty 512 GiB slots of the address space, so that top-level
 * entries are populated and cleared (free_pgd_range() under the mmap read
 * lock), and writes LDT entries (map_ldt_struct()); the other hops from
 * CPU to CPU, so that the kernel builds the process a PGD per node while
 * those entries change. The child then reads the series' verify_mm file:
 * every node PGD must equal mm->pgd but for the window, and there must be
 * one at least (a "node=" line): a child that got none raced with nothing.
 * -z: a child without a node PGD passes (a topology whose CPUs all use
 * one replica, where no node PGD is ever built). Prints the last report
 * and a summary line; exits 0 when every child's PGDs matched (and each
 * had one). Static, for the guest; run it with build_min_ns at 0.
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

#define VERIFY "/sys/kernel/debug/kernel_replication/verify_mm"
#define SLOT (512UL << 30)	/* what one top-level entry maps (4-level) */


/*
 * A verify_mm line is bad if any "...differ=N" has N > 0 (node PGDs
 * against mm->pgd, kernel halves against swapper_pg_dir) or it says
 * window_ok=0.
 */
static int verify_line_bad(const char *l)
{
	const char *p = l;

	while ((p = strstr(p, "differ=")) != NULL) {
		p += strlen("differ=");
		if (strtoul(p, NULL, 10) != 0)
			return 1;
	}
	return strstr(l, "window_ok=0") != NULL;
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
 * Child I of N: the race, then its verify_mm report, printed for the
 * last child and for a child that fails.
 */
static int child(double ms, int allow_none, int i, int n_children)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char buf[4096], lines[4096];
	pthread_t t;
	cpu_set_t set;
	double end;
	long cpu = 0;
	ssize_t n;
	int fd, rc, bad = 0, node_pgds = 0;

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
	fd = open(VERIFY, O_RDONLY);
	if (fd < 0) {
		perror(VERIFY);
		return CHILD_ERROR;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return CHILD_ERROR;
	buf[n] = 0;
	memcpy(lines, buf, n + 1);
	for (char *l = strtok(lines, "\n"); l; l = strtok(NULL, "\n")) {
		bad |= verify_line_bad(l);
		/* A node PGD's line; "mm node=" and "kernel node=" are not. */
		node_pgds += !strncmp(l, "node=", strlen("node="));
	}
	rc = bad ? CHILD_DIFFER : !node_pgds && !allow_none ? CHILD_NO_NODE_PGD : CHILD_OK;
	if (i == n_children - 1 || rc != CHILD_OK) {
		printf("child %d of %d, verify_mm:\n%s", i + 1, n_children, buf);
		if (rc == CHILD_NO_NODE_PGD)
			printf("no node PGD (no node= line)\n");
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
