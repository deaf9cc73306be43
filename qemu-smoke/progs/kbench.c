// SPDX-License-Identifier: GPL-2.0
/*
 * kbench: the seven microbenchmarks of the x86 kernel replication RFC's
 * cover letter, run pinned to the first CPU of every NUMA node.
 *
 *   fork1       one fork(), timed in the parent around the call
 *   fork1024    fork() 1024 times in a loop, the loop timed (children
 *               exit at once and are reaped after the loop)
 *   mmap        1024 times: mmap one anonymous page, munmap it
 *   mmap_lock   the same with MAP_LOCKED (which also faults the page in)
 *   openclose   1024 times: open /dev/null, close it
 *   mount       one mount of procfs on a directory in /tmp
 *   kill        SIGUSR1 to a child on the same CPU, waiting in
 *               sigsuspend(): from kill() in the parent to the handler
 *
 * and, only when named with -c, for the locality and cost measurements:
 *
 *   getppid     LOOP times getppid()
 *   stat        LOOP times stat("/dev/null")
 *   pipe        LOOP times pipe() and two close()
 *   forkexec    fork(), execve("/bin/true") in the child, its exit and
 *               the parent's waitpid(): one operation per run
 *   pingpong    LOOP round trips of one byte over two pipes with a child
 *               pinned to the first CPU of the next node with CPUs (two
 *               context switches on each CPU per round trip)
 *   migrate     LOOP times: move to the first CPU of the next node with
 *               CPUs and back (sched_setaffinity() twice, getppid() on
 *               each): a task that changes node at every operation
 *
 * Every case runs REPS times per node (-r, default 11) after one warm-up
 * run. One line per (case, node): median, quartiles, minimum and maximum,
 * in microseconds, as a tab-separated table headed by '# kbench'.
 * Usage: kbench [-r REPS] [-n LOOP] [-c CASE[,CASE...]] [-m PHASE [-C]]
 *
 * -m PHASE marks phases of the locality meter (meter-phase.h): PHASE
 * itself is kbench's own work (setup, warm-up runs, statistics, output:
 * "meter-phase PHASE kbench ops=0" after the table's header),
 * and each (node, case) gets the next number, PHASE+1, PHASE+2, ...: each
 * of its REPS runs (not the warm-up run) is a stretch of that phase, so
 * that the meter can also give each run's count (its "stretches" lines).
 * After each case's table line kbench prints
 *
 *   meter-phase P CASE ops=N node=NODE cpu=CPU reps=REPS
 *
 * N being the operations the REPS runs made (REPS * LOOP for the loops,
 * REPS for fork1, mount and kill), so that the kernel instructions per
 * operation are the meter's phase=P kernel_insns / N: "vcpu=CPU" for the
 * CPU that ran the case, or the phase's sum over all vCPUs. A phase counts
 * everything the kernel did meanwhile, untimed parts included (children
 * exiting and being reaped, mkdtemp() and umount() around mount, the
 * child and pipes of kill).
 *
 * -C (with -m): cold caches. Before each operation kbench runs the meter's
 * flush marker (meter_flush()), which empties the meter's cache model, as
 * the RFC's cold runs flushed the caches; the phase lines then end in
 * " cache=cold". Outside the meter the marker is a call to a "ret".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "meter-phase.h"

#define MAX_REPS 1000
#define MAX_NODES 64

static int loop = 1024;
static long page;
static int cold;

/* An operation begins: with -C, empty the meter's cache model first. */
static inline void op_start(void)
{
	if (cold)
		meter_flush();
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	fprintf(stderr, "kbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double b_fork1(void)
{
	double t0, t1;
	pid_t pid;

	op_start();
	t0 = now_us();
	pid = fork();
	t1 = now_us();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return t1 - t0;
}

static double b_forkloop(void)
{
	double t0, t1;
	int i, n = 0;
	pid_t pid;

	t0 = now_us();
	for (i = 0; i < loop; i++) {
		op_start();
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			n++;
	}
	t1 = now_us();
	if (n < loop)
		die("fork");
	while (n-- > 0)
		wait(NULL);
	return t1 - t0;
}

static double mmap_loop(int flags)
{
	double t0;
	void *p;
	int i;

	t0 = now_us();
	for (i = 0; i < loop; i++) {
		op_start();
		p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, page);
	}
	return now_us() - t0;
}

static double b_mmap(void)
{
	return mmap_loop(0);
}

static double b_mmap_lock(void)
{
	return mmap_loop(MAP_LOCKED);
}

static double b_openclose(void)
{
	double t0;
	int i, fd;

	t0 = now_us();
	for (i = 0; i < loop; i++) {
		op_start();
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			die("open /dev/null");
		close(fd);
	}
	return now_us() - t0;
}

static double b_mount(void)
{
	char dir[] = "/tmp/kbench.XXXXXX";
	double t0, t1;

	if (!mkdtemp(dir))
		die("mkdtemp");
	op_start();
	t0 = now_us();
	if (mount("proc", dir, "proc", 0, NULL))
		die("mount proc");
	t1 = now_us();
	umount(dir);
	rmdir(dir);
	return t1 - t0;
}

/* The syscall-heavy cases (-c only): LOOP calls each. */
static double b_getppid(void)
{
	double t0 = now_us();
	int i;

	for (i = 0; i < loop; i++) {
		op_start();
		getppid();
	}
	return now_us() - t0;
}

static double b_stat(void)
{
	struct stat st;
	double t0 = now_us();
	int i;

	for (i = 0; i < loop; i++) {
		op_start();
		if (stat("/dev/null", &st))
			die("stat /dev/null");
	}
	return now_us() - t0;
}

static double b_pipe(void)
{
	double t0 = now_us();
	int i, fd[2];

	for (i = 0; i < loop; i++) {
		op_start();
		if (pipe(fd))
			die("pipe");
		close(fd[0]);
		close(fd[1]);
	}
	return now_us() - t0;
}

/* fork, exec of /bin/true in the child, exit, and the parent's wait. */
static double b_forkexec(void)
{
	char *argv[] = { "true", NULL }, *envp[] = { NULL };
	double t0;
	int status;
	pid_t pid;

	op_start();
	t0 = now_us();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execve("/bin/true", argv, envp);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("fork+exec of /bin/true");
	return now_us() - t0;
}

static int sig_fd;

static void on_usr1(int sig)
{
	double t = now_us();

	(void)sig;
	if (write(sig_fd, &t, sizeof(t)) != sizeof(t))
		_exit(1);
}

static double b_kill(void)
{
	int ready[2], done[2];
	double t0, t1;
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(done))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_usr1 };
		sigset_t usr1, old;

		/* Blocked until sigsuspend(): the signal cannot come too early. */
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, &old);
		sig_fd = done[1];
		sigaction(SIGUSR1, &sa, NULL);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		sigsuspend(&old);
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1)
		die("child not ready");
	op_start();
	t0 = now_us();
	kill(pid, SIGUSR1);
	if (read(done[0], &t1, sizeof(t1)) != sizeof(t1))
		die("child did not answer");
	waitpid(pid, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
	return t1 - t0;
}

/* The first CPU of the next node with CPUs, for pingpong and migrate. */
static int partner_cpu;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static double b_pingpong(void)
{
	int to[2], from[2], i;
	double t0, t1;
	pid_t pid;
	char c = 'p';

	if (pipe(to) || pipe(from))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(to[1]);	/* else the reads below never see the end */
		close(from[0]);
		pin(partner_cpu);
		while (read(to[0], &c, 1) == 1)
			if (write(from[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(to[0]);
	close(from[1]);
	/* The first round trip waits for the child to move: untimed. */
	if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
		die("pingpong: no answer");
	t0 = now_us();
	for (i = 0; i < loop; i++) {
		op_start();
		if (write(to[1], &c, 1) != 1 || read(from[0], &c, 1) != 1)
			die("pingpong: no answer");
	}
	t1 = now_us();
	close(to[1]);
	close(from[0]);
	waitpid(pid, NULL, 0);
	return t1 - t0;
}

static double b_migrate(void)
{
	double t0 = now_us();
	int i, home = sched_getcpu();

	for (i = 0; i < loop; i++) {
		op_start();
		pin(partner_cpu);
		getppid();
		pin(home);
		getppid();
	}
	return now_us() - t0;
}

static const struct bench {
	const char *name;
	double (*run)(void);
	int loops;		/* a run makes LOOP operations, else one */
	int extra;		/* not one of the RFC's: only with -c */
} benches[] = {
	{ "fork1", b_fork1, 0, 0 },
	{ "fork1024", b_forkloop, 1, 0 },
	{ "mmap", b_mmap, 1, 0 },
	{ "mmap_lock", b_mmap_lock, 1, 0 },
	{ "openclose", b_openclose, 1, 0 },
	{ "mount", b_mount, 0, 0 },
	{ "kill", b_kill, 0, 0 },
	{ "getppid", b_getppid, 1, 1 },
	{ "stat", b_stat, 1, 1 },
	{ "pipe", b_pipe, 1, 1 },
	{ "forkexec", b_forkexec, 0, 1 },
	{ "pingpong", b_pingpong, 1, 1 },
	{ "migrate", b_migrate, 1, 1 },
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Linear interpolation between the order statistics of a sorted array. */
static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* The first CPU of node N, from sysfs; -1 for a node without CPUs. */
static int node_first_cpu(int node)
{
	char path[64];
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	f = fopen(path, "r");
	if (!f)
		return -2;
	if (fscanf(f, "%d", &cpu) != 1)
		cpu = -1;
	fclose(f);
	return cpu;
}

/* The first CPU of the next node after @node that has CPUs (wrapping). */
static int next_node_cpu(int node)
{
	int n, cpu;

	for (n = 1; n <= MAX_NODES; n++) {
		cpu = node_first_cpu((node + n) % MAX_NODES);
		if (cpu >= 0)
			return cpu;
	}
	return -1;
}

static int selected(const char *list, const struct bench *b)
{
	const char *name = b->name, *p = list;
	size_t len = strlen(name);

	if (!list)
		return !b->extra;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return 1;
		p += len;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static double v[MAX_REPS];
	const char *only = NULL;
	int reps = 11, opt, node, cpu, i, phase = 0, next = 0;
	size_t b;

	while ((opt = getopt(argc, argv, "r:n:c:m:C")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'n':
			loop = atoi(optarg);
			break;
		case 'c':
			only = optarg;
			break;
		case 'C':
			cold = 1;
			break;
		case 'm':
			phase = atoi(optarg);
			if (phase < 1 || phase >= METER_PHASE_MAX) {
				fprintf(stderr, "kbench: -m must be 1..%d\n", METER_PHASE_MAX - 1);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: kbench [-r REPS] [-n LOOP] [-c CASE,...] [-m PHASE [-C]]\n");
			return 2;
		}
	}
	if (cold && !phase) {
		fprintf(stderr, "kbench: -C flushes the meter's caches: it needs -m\n");
		return 2;
	}
	if (reps < 1 || reps > MAX_REPS || loop < 1) {
		fprintf(stderr, "kbench: -r must be 1..%d, -n at least 1\n", MAX_REPS);
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	if (phase) {
		if (meter_phase_map())
			die("mapping the meter's marker page");
		meter_phase(phase);
		next = phase + 1;
	}

	printf("# kbench reps=%d loop=%d unit=us\n", reps, loop);
	printf("case\tnode\tcpu\tmedian\tq1\tq3\tmin\tmax\n");
	if (phase)
		printf("meter-phase %d kbench ops=0\n", phase);
	for (node = 0; node < MAX_NODES; node++) {
		cpu = node_first_cpu(node);
		if (cpu == -2)
			continue;	/* no such node */
		if (cpu < 0)
			continue;	/* a node without CPUs runs nothing */
		pin(cpu);
		partner_cpu = next_node_cpu(node);	/* itself on one node */
		for (b = 0; b < sizeof(benches) / sizeof(benches[0]); b++) {
			if (!selected(only, &benches[b]))
				continue;
			benches[b].run();	/* warm-up */
			if (phase) {
				if (next > METER_PHASE_MAX) {
					fprintf(stderr, "kbench: more than %d meter phases: start -m lower, or select fewer cases with -c\n",
						METER_PHASE_MAX);
					return 1;
				}
			}
			/* Each repetition a stretch of the case's phase. */
			for (i = 0; i < reps; i++) {
				if (phase)
					meter_phase(next);
				v[i] = benches[b].run();
				if (phase)
					meter_phase(phase);
			}
			qsort(v, reps, sizeof(v[0]), cmp_double);
			printf("%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n",
			       benches[b].name, node, cpu, quantile(v, reps, 0.5),
			       quantile(v, reps, 0.25), quantile(v, reps, 0.75),
			       v[0], v[reps - 1]);
			if (phase)
				printf("meter-phase %d %s ops=%ld node=%d cpu=%d reps=%d%s\n",
				       next++, benches[b].name,
				       (long)reps * (benches[b].loops ? loop : 1), node, cpu,
				       reps, cold ? " cache=cold" : "");
			fflush(stdout);
		}
	}
	return 0;
}
