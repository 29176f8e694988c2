/* SPDX-License-Identifier: MIT */
/*
 * debug_check.c - the debug build's consistency checks of a runtime's
 * state, run where their conditions hold (make debug; lockdep.h has the
 * lock assertions).
 *
 * The checkers exist for the unit tests: swap_info_validate() recounts a
 * device's clusters from its slot map and walks its lists,
 * swap_avail_validate() the per-node device lists, zs_validate() the
 * pool's spans, handles and page allocator.  Here they run in a live
 * runtime:
 *   - debug_check_swap(): the devices and their lists, at the end of a
 *     reclaim batch (vmscan.c), after a munmap (mmap.c) and in a fork
 *     child once it has its slots (runtime.c).  swap_info_validate() takes
 *     every lock of the device, so the caller holds none of them.  The
 *     devices are shared by the process tree, and a member killed holding
 *     a cluster lock may have left a count off by a folio (prim.c,
 *     prim_mutex_lock()): accepted there, so the devices are checked only
 *     while this process is the tree's one live member and no member was
 *     ever reaped.
 *   - debug_check_pool(): the compressed pool, once the runtime's threads
 *     are stopped (runtime.c), with the writeback thread's wb_mutex held so
 *     that no compaction runs: zs_validate() wants a quiescent pool.
 * A check that fails logs what failed, where, and aborts.
 */
#ifdef USWAP_DEBUG

#include <stdlib.h>

#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "runtime.h"
#include "swap.h"
#include "swapdev.h"
#include "zsmalloc.h"
#include "zswap_pool.h"

static void __attribute__((noreturn)) check_failed(const char *where,
						   const char *what)
{
	uswap_log("debug check at %s: %s", where, what);
	abort();
}

void debug_check_swap(struct uswap_runtime *rt, const char *where)
{
	struct memcg *mc = rt->memcg;
	unsigned k;

	if (mc && (atomic_load(&mc->nr_live) > 1 ||
		   atomic_load(&mc->reaped.processes)))
		return;
	for (k = 0; k < rt->nr_swap; k++) {
		lock_assert_not_held(&rt->swap[k].lock);
		if (rt->swap[k].swap_map && swap_info_validate(&rt->swap[k]))
			check_failed(where, "a swap device's slot map, clusters or lists");
	}
	if (rt->avail && swap_avail_validate(rt->avail))
		check_failed(where, "the per-node lists of swap devices");
}

void debug_check_pool(struct uswap_runtime *rt, const char *where)
{
	struct zswap *zs = rt->zswap;
	const char *err;

	if (!zs)
		return;
	pthread_mutex_lock(&zs->wb_mutex);
	err = zs_validate(zs->pool);
	pthread_mutex_unlock(&zs->wb_mutex);
	if (err)
		check_failed(where, err);
}

#endif /* USWAP_DEBUG */
