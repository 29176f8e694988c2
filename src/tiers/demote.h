/* SPDX-License-Identifier: MIT */
/*
 * demote.h - demotion to slower nodes and promotion back (demote.c): the
 * runtime's side of the tiers; and the parsers of --tier-max and
 * --demotion, which the option table uses without a runtime.
 */
#ifndef USWAP_DEMOTE_H
#define USWAP_DEMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory_tiers.h"

struct region;
struct uswap_runtime;

/* demote.c: demotion to slower nodes, promotion back. */
struct demote_folio {
	uintptr_t addr;
	uint32_t nr_pages;
	int from;		/* the node its memory is on, or -1 */
	int to;			/* set: where it went, or -1 */
};
int tiering_setup(struct uswap_runtime *rt);
void tiering_destroy(struct uswap_runtime *rt);
uint64_t tiering_inflight(struct uswap_runtime *rt, int node);
void demote_folios(struct uswap_runtime *rt, struct demote_folio *df,
		   unsigned n, bool direct);
void demote_finish(struct uswap_runtime *rt, struct region *r, uint32_t i,
		   int to, unsigned nr, uint32_t fl_before);
void promote_scan(struct uswap_runtime *rt);
int tier_max_parse(const char *spec, uint64_t max[MEM_MAX_NODES],
		   uint64_t *nodes, char *err, size_t errlen);
int demotion_option_check(const char *spec, char *err, size_t errlen);

#endif /* USWAP_DEMOTE_H */
