// SPDX-License-Identifier: GPL-2.0
/*
 * failnext: make the next replication allocations of this process fail,
 * through the fault attribute's task filter (/proc/self/make-it-fail), in
 * a process that does nothing else the attribute could see first (a shell
 * would fork and exec, and each new mm asks it once):
 *
 *   failnext insmod FILE   load the module FILE (finit_module)
 *   failnext fork          fork a child that runs on every online CPU in
 *                          turn (5 ms of CPU time each) and exits 0 if it
 *                          could (its mm is the one the failure is meant
 *                          for: the PGD of a node it moves to)
 *
 * The caller sets the attribute (task-filter, probability, times) first.
 * Exits 0 on success, 1 with a message otherwise. Static, for the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "failnext: %s: %s\n", what, strerror(errno));
	return 1;
}

/*
 * Spin @ms milliseconds of this thread's CPU time: a kernel that builds
 * a node PGD only for a task that has run for a while must see one.
 */
static void spin_ms(double ms)
{
	struct timespec ts;
	double now, until = -1;

	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
		if (until < 0)
			until = now + ms;
	} while (now < until);
}

/* Run on each online CPU in turn: the mm is loaded on every node. */
static int every_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	int ran = 0;
	cpu_set_t set;

	for (long cpu = 0; cpu < n && cpu < CPU_SETSIZE; cpu++) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			continue;	/* offline */
		if (sched_getcpu() != cpu)
			return 2;
		spin_ms(5);
		ran++;
	}
	return ran ? 0 : 3;
}

int main(int argc, char **argv)
{
	int fd, status;
	pid_t pid;

	if (argc < 2)
		goto usage;
	fd = open("/proc/self/make-it-fail", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		return fail("/proc/self/make-it-fail");
	close(fd);

	if (!strcmp(argv[1], "insmod") && argc == 3) {
		fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail(argv[2]);
		if (syscall(SYS_finit_module, fd, "", 0))
			return fail("finit_module");
		return 0;
	}
	if (!strcmp(argv[1], "fork") && argc == 2) {
		pid = fork();
		if (pid < 0)
			return fail("fork");
		if (!pid)
			_exit(every_cpu());
		if (waitpid(pid, &status, 0) != pid)
			return fail("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "failnext: the child ended with status %#x\n", status);
			return 1;
		}
		return 0;
	}
usage:
	fprintf(stderr, "usage: failnext insmod FILE | failnext fork\n");
	return 1;
}
