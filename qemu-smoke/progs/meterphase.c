// SPDX-License-Identifier: GPL-2.0
/*
 * meterphase: mark a phase of the locality meter (qemu-smoke/plugin).
 *
 *   meterphase P     phase P (1..254, METER_PHASE_MAX) begins now
 *
 * Maps the marker page (meter-phase.h) and calls slot P: under the meter,
 * every instruction from then on, on every vCPU, counts in phase P until
 * the next marker. Outside the meter it does nothing visible. Prints
 * nothing on success; exits 2 on a bad argument and 1 if the page cannot
 * be mapped. Static, for the guest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meter-phase.h"

int main(int argc, char **argv)
{
	char *end;
	long p;

	if (argc != 2) {
		fprintf(stderr, "usage: meterphase P (P = 1..%d)\n", METER_PHASE_MAX);
		return 2;
	}
	errno = 0;
	p = strtol(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || p < 1 || p > METER_PHASE_MAX) {
		fprintf(stderr, "meterphase: bad phase '%s': want a number 1..%d\n",
			argv[1], METER_PHASE_MAX);
		return 2;
	}
	if (meter_phase_map()) {
		fprintf(stderr, "meterphase: mapping the marker page at %#lx: %s\n",
			METER_PHASE_PAGE, strerror(errno));
		return 1;
	}
	meter_phase((unsigned int)p);
	return 0;
}
