/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cachemodel.h - set-associative LRU caches for the locality meter's model.
 *
 * A model, not a simulator of any real part: physically tagged (the host
 * address of a guest line stands for its physical address, so each node's
 * copy of the kernel is its own line), true LRU, write-allocate, no
 * prefetcher, no coherence traffic, no inclusion policy (a miss fills
 * every level it passed through; nothing is back-invalidated). A flush is
 * O(1): it moves the cache's validity horizon past every stamp.
 *
 * Included by locality.c (and so by selftest.c); everything is static.
 */
#ifndef CACHEMODEL_H
#define CACHEMODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define CM_LINE_SHIFT	6	/* 64-byte lines */

struct cm_cache {
	uint64_t sets, ways;
	uint64_t *tag;		/* sets * ways line numbers */
	uint64_t *stamp;	/* last use; valid only if > horizon */
	uint64_t clock, horizon;
};

/* A cache of @kib KiB and @ways ways: 0, or -1 if the shape is impossible. */
static int cm_init(struct cm_cache *c, uint64_t kib, uint64_t ways)
{
	uint64_t lines = kib * 1024 >> CM_LINE_SHIFT;

	if (!ways || !lines || lines % ways)
		return -1;
	c->ways = ways;
	c->sets = lines / ways;
	c->tag = calloc(lines, sizeof(*c->tag));
	c->stamp = calloc(lines, sizeof(*c->stamp));
	c->clock = c->horizon = 0;
	return c->tag && c->stamp ? 0 : -1;
}

/*
 * Look @line (an address >> CM_LINE_SHIFT) up: true on a hit. A miss
 * replaces the least recently used (or an invalid) way of its set.
 */
static bool cm_access(struct cm_cache *c, uint64_t line)
{
	uint64_t base = line % c->sets * c->ways, w, victim = base;

	c->clock++;
	for (w = base; w < base + c->ways; w++) {
		if (c->stamp[w] > c->horizon && c->tag[w] == line) {
			c->stamp[w] = c->clock;
			return true;
		}
		if (c->stamp[w] < c->stamp[victim])
			victim = w;
	}
	c->tag[victim] = line;
	c->stamp[victim] = c->clock;
	return false;
}

/* Forget everything: every stamp so far is at or below the horizon. */
static void cm_flush(struct cm_cache *c)
{
	c->horizon = c->clock;
}

/* Where an access was served from. */
enum cm_level { CM_L1, CM_L2, CM_LLC, CM_MEM, CM_NLEVELS };

#endif /* CACHEMODEL_H */
