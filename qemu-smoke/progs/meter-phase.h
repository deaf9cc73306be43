/* SPDX-License-Identifier: GPL-2.0 */
/*
 * meter-phase.h: mark a phase of the locality meter from the guest.
 *
 * The meter (qemu-smoke/plugin/locality.c) cannot read guest registers, so
 * a phase is marked by executing user-mode code at a fixed address: in the
 * page at METER_PHASE_PAGE, the instruction at byte 16 * P means "phase P
 * begins now". Phase 0 is everything before the first marker: the boot.
 * The page has 255 slots after slot 0: 1..254 (METER_PHASE_MAX) are
 * phases, and the last, METER_PHASE_FLUSH, empties the meter's cache
 * model (cache=on) without changing the phase. The page holds a "ret"
 * (0xc3) in every byte, so a call to any slot returns at once; outside
 * the meter it is just a call.
 *
 * Included by the static guest programs (meterphase, kbench): each is one
 * .c file built alone (scripts/build.sh), and this file is found next to
 * it. The page and the slots must agree with PHASE_PAGE, MAX_PHASES and
 * FLUSH_SLOT in locality.c.
 */
#ifndef METER_PHASE_H
#define METER_PHASE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define METER_PHASE_PAGE	0x7e5700000000ul
#define METER_PHASE_PAGE_SIZE	4096
#define METER_PHASE_SLOT	16
#define METER_PHASE_MAX		254	/* the meter's MAX_PHASES - 1 */
#define METER_PHASE_FLUSH	255	/* the meter's FLUSH_SLOT */

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/*
 * Map the marker page in this process: 0 on success, else -1 with errno
 * set (EEXIST: something else is mapped there). Written, then made
 * read-only and executable.
 */
static inline int meter_phase_map(void)
{
	void *want = (void *)METER_PHASE_PAGE;
	void *page = mmap(want, METER_PHASE_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (page == MAP_FAILED)
		return -1;
	if (page != want) {
		/* A kernel before 4.17 took the address as a hint only. */
		munmap(page, METER_PHASE_PAGE_SIZE);
		errno = EEXIST;
		return -1;
	}
	memset(page, 0xc3, METER_PHASE_PAGE_SIZE);	/* ret */
	return mprotect(page, METER_PHASE_PAGE_SIZE, PROT_READ | PROT_EXEC);
}

/* Phase @p (1..METER_PHASE_MAX) begins: call its slot (map the page first). */
static inline void meter_phase(unsigned int p)
{
	void (*slot)(void) = (void (*)(void))(METER_PHASE_PAGE + METER_PHASE_SLOT * p);

	slot();
}

/* Empty the meter's cache model (a cold-cache operation follows). */
static inline void meter_flush(void)
{
	void (*slot)(void) = (void (*)(void))(METER_PHASE_PAGE +
					      METER_PHASE_SLOT * METER_PHASE_FLUSH);

	slot();
}

#endif /* METER_PHASE_H */
