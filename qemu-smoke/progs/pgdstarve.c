// SPDX-License-Identifier: GPL-2.0
/*
 * pgdstarve N CPU_A CPU_X: can a process that moves to CPU_X still get a
 * node PGD while N other processes were switched in there foreign and
 * went back to sleep in the kernel without returning to user mode?
 *
 * Each of N holders, started on CPU_A (so its mm is bound to CPU_A's
 * node), forks a child that sleeps until killed and one that exits once
 * released, and waits in waitpid() for the first. Moved to CPU_X while it
 * sleeps, it is woken there when the second child exits: a switch-in from
 * another node's window, and back to sleep in the kernel, as the child it
 * waits for is still there. Then this process moves to CPU_X, runs 20 ms
 * there, and reads verify_mm: a "node=R" line for CPU_X's replica node R
 * means its node PGD was built. Exits 0 if so, 1 if not, 2 on errors.
 * Start it on CPU_A (taskset), so that its own mm is bound there too.
 * Static, for the guest; needs the series' debugfs verify_mm.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define VERIFY "/sys/kernel/debug/kernel_replication/verify_mm"

static int pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

static void spin_ms(double ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

/* A holder: a sleeper to wait for, a child that exits once @go closes. */
static void holder(int go)
{
	pid_t sleeper = fork(), waker;
	char c;

	if (sleeper == 0) {
		close(go);
		pause();
		_exit(0);
	}
	waker = fork();
	if (waker == 0) {
		while (read(go, &c, 1) > 0)
			;
		_exit(0);
	}
	close(go);
	waitpid(sleeper, NULL, 0);
	waitpid(waker, NULL, 0);
	_exit(0);
}

int main(int argc, char **argv)
{
	int n, cpu_a, cpu_x, go[2], built = 0;
	pid_t *holders;
	char line[256];
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: pgdstarve N CPU_A CPU_X\n");
		return 2;
	}
	n = atoi(argv[1]);
	cpu_a = atoi(argv[2]);
	cpu_x = atoi(argv[3]);
	holders = calloc(n, sizeof(*holders));
	/* A process group of its own: SIGTERM to it ends the helpers only. */
	if (!holders || n < 1 || pipe(go) || pin(0, cpu_a) || setpgid(0, 0)) {
		perror("pgdstarve: setup");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		holders[i] = fork();
		if (holders[i] == 0) {
			close(go[1]);
			holder(go[0]);
		}
	}
	close(go[0]);
	/* All asleep in waitpid(), then woken on CPU_X only. */
	usleep(300000);
	for (int i = 0; i < n; i++)
		pin(holders[i], cpu_x);
	close(go[1]);
	usleep(300000);

	/* Now this process runs on CPU_X: does it get a PGD there? */
	if (pin(0, cpu_x)) {
		perror("pgdstarve: cpu_x");
		return 2;
	}
	spin_ms(20);
	usleep(10000);
	spin_ms(5);
	f = fopen(VERIFY, "r");
	if (!f) {
		perror(VERIFY);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		printf("  %s", line);
		built += !strncmp(line, "node=", 5);
	}
	fclose(f);

	/* The sleepers are the holders' children: end them by the group. */
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGTERM);
	for (int i = 0; i < n; i++)
		waitpid(holders[i], NULL, 0);
	printf("pgdstarve: %d holders asleep on cpu %d, this process's node PGDs: %d\n",
	       n, cpu_x, built);
	return built ? 0 : 1;
}
