/* SPDX-License-Identifier: MIT */
/*
 * slot_use.h - white-box counts for the fork tests (tests/e2e/fork*.c):
 * the slots in use on a runtime's devices, and the slots its regions
 * name.  op_lock is taken for writing: fault threads and the reclaimer
 * change swp[] under it held for reading.
 */
#ifndef USWAP_TEST_SLOT_USE_H
#define USWAP_TEST_SLOT_USE_H

#include <pthread.h>
#include <stdint.h>

#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"

static inline void t_slot_use(struct uswap_runtime *rt, uint64_t *inuse,
			      uint64_t *named)
{
	unsigned k, n;
	uint32_t p;

	*inuse = *named = 0;
	pthread_rwlock_wrlock(&rt->op_lock);
	for (k = 0; k < rt->nr_swap; k++) {
		prim_mutex_lock(&rt->swap[k].lock);
		*inuse += swap_inuse_slots(&rt->swap[k]);
		pthread_mutex_unlock(&rt->swap[k].lock);
	}
	for (n = 0; n < rt->nr_regions; n++)
		for (p = 0; p < rt->regions[n]->nr_pages; p++)
			*named += rt->regions[n]->swp[p] != 0;
	pthread_rwlock_unlock(&rt->op_lock);
}

#endif /* USWAP_TEST_SLOT_USE_H */
