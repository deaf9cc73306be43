// SPDX-License-Identifier: GPL-2.0
/*
 * bpfload N [hold | attach FUNC]: load and unload a tiny BPF program N
 * times, so that the BPF JIT writes N programs into executable memory.
 * Prints how many loads succeeded and exits non-zero if any failed. With
 * "hold", keeps the N programs loaded after printing, until a signal ends
 * it; with "attach FUNC", also attaches the last one to a kprobe on kernel
 * function FUNC (perf's kprobe PMU), so that it runs at every call of FUNC
 * on every CPU. Static, for the guest.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int prog_load(void)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	/* A kprobe program: loadable without CONFIG_NET, never attached. */
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (unsigned long)"GPL";
	return syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

/* Attach program @prog to a kprobe on @func; the perf event's fd or -1. */
static int prog_attach(int prog, const char *func)
{
	struct perf_event_attr attr;
	FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
	int type, fd;

	if (!f || fscanf(f, "%d", &type) != 1) {
		fprintf(stderr, "bpfload: no kprobe PMU\n");
		return -1;
	}
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config1 = (unsigned long)func;	/* kprobe_func */
	attr.sample_period = 1;
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		fprintf(stderr, "bpfload: attaching to %s: %s\n", func, strerror(errno));
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? strtol(argv[1], NULL, 0) : 1, ok = 0;
	const char *func = argc > 3 && !strcmp(argv[2], "attach") ? argv[3] : NULL;
	int hold = func || (argc > 2 && !strcmp(argv[2], "hold"));
	int fd = -1;

	for (i = 0; i < n; i++) {
		fd = prog_load();

		if (fd < 0) {
			fprintf(stderr, "bpfload: load %ld: %s\n", i, strerror(errno));
			break;
		}
		if (!hold)
			close(fd);
		ok++;
	}
	if (func && ok == n && prog_attach(fd, func) < 0)
		return 1;
	printf("bpfload: %ld of %ld loads%s%s\n", ok, n, hold ? ", held" : "",
	       func ? ", the last attached" : "");
	fflush(stdout);
	if (hold && ok == n)
		pause();
	return ok == n ? 0 : 1;
}
