// SPDX-License-Identifier: GPL-2.0
/*
 * bpfload N [hold]: load and unload a tiny BPF program N times, so that
 * the BPF JIT writes N programs into executable memory. Prints how many
 * loads succeeded and exits non-zero if any failed. With "hold", keeps the
 * N programs loaded after printing, until a signal ends it. Static, for
 * the guest.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? strtol(argv[1], NULL, 0) : 1, ok = 0;
	int hold = argc > 2 && !strcmp(argv[2], "hold");

	for (i = 0; i < n; i++) {
		int fd = prog_load();

		if (fd < 0) {
			fprintf(stderr, "bpfload: load %ld: %s\n", i, strerror(errno));
			break;
		}
		if (!hold)
			close(fd);
		ok++;
	}
	printf("bpfload: %ld of %ld loads%s\n", ok, n, hold ? ", held" : "");
	fflush(stdout);
	if (hold && ok == n)
		pause();
	return ok == n ? 0 : 1;
}
