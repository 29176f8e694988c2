// SPDX-License-Identifier: MIT
/*
 * workingset.c - refault detection (the kernel's mm/workingset.c).
 *
 * A runtime-wide clock, nonresident_age, advances by the pages of every
 * eviction and every activation.  An evicted folio keeps the clock's value
 * as its shadow entry (in its struct folio, which stays while it is
 * swapped).  When it faults back, the refault distance - how far the clock
 * has moved since - is the number of pages that left the inactive list
 * while it was out: had the inactive list been that much longer, the folio
 * would have stayed.  The inactive list can grow only at the active list's
 * expense, so a folio whose distance is within the active list's size is
 * part of the working set and goes straight onto the active list
 * (workingset_activate_anon); one that was active before eviction is
 * counted as restored (workingset_restore_anon).
 *
 * The clock is 32 bits in the shadow and wraps; distances are computed
 * modulo 2^32 pages (16 TiB), far beyond any refault worth detecting.
 */
#include "lockdep.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"


/* Record the eviction of a folio of nr pages.  Caller holds op_lock. */
void workingset_eviction(struct uswap_runtime *rt, struct region *r,
			 struct folio *f, unsigned nr_pages)
{
	uint64_t age = atomic_fetch_add(&rt->nonresident_age, nr_pages);

	lock_assert_held(&rt->op_lock);
	(void)r;
	SHADOW(f) = (uint32_t)age;
}

/* Activations age the clock too: they shrink the inactive list. */
void workingset_activation(struct uswap_runtime *rt, unsigned nr_pages)
{
	atomic_fetch_add(&rt->nonresident_age, nr_pages);
}

/*
 * A swapped folio faults back.  Returns true when it should be activated.
 * Caller holds op_lock for reading (the active size is a runtime-wide
 * counter, read without a lock as the kernel reads its lruvec counters).
 */
bool workingset_refault(struct uswap_runtime *rt, struct region *r,
			struct folio *f, unsigned nr_pages)
{
	uint32_t now = (uint32_t)atomic_load(&rt->nonresident_age);
	uint32_t distance = now - SHADOW(f);
	uint32_t fl = atomic_load(&f->flags);

	lock_assert_held_read(&rt->op_lock);
	(void)r;
	count_event(rt, USWAP_WORKINGSET_REFAULT, nr_pages);
	if (distance > atomic_load(&rt->active_pages))
		return false;
	count_event(rt, USWAP_WORKINGSET_ACTIVATE, nr_pages);
	workingset_activation(rt, nr_pages);
	if (fl & F_WORKINGSET)
		count_event(rt, USWAP_WORKINGSET_RESTORE, nr_pages);
	return true;
}
