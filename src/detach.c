// SPDX-License-Identifier: MIT
/*
 * detach.c - a process leaves its tree for good (uswap_runtime_detach).
 *
 * A process whose credentials are about to change (a server's worker
 * dropping root: setuid, setgroups, capset; preload/creds.c) must not
 * keep anything of the tree's: with the swap devices' descriptors, the
 * shared slot and checksum maps, the budget and the encryption key, a
 * worker that becomes another user could read what the rest of the tree
 * swaps out after it, or plant pages the others read back.  So before
 * the change:
 *
 *  1. the runtime's threads stop (runtime_quiesce): nothing serves a
 *     fault or evicts from here on;
 *  2. every folio that is not resident is read in, from the pool or its
 *     device, and installed where it was with UFFDIO_COPY, which also
 *     wakes any of the program's threads waiting for it; a folio that
 *     cannot be read is poisoned (SIGBUS where it is touched, as a
 *     failed read is elsewhere);
 *  3. the regions leave userfaultfd (the write-protection goes with
 *     them, waking whoever waited on it); never-touched pages now fill
 *     with zeros on their own, as they would have;
 *  4. the rest is destroy without the unmapping (runtime_release): the
 *     member leaves the budget with its slots, every descriptor of the
 *     runtime is closed, the shared maps unmapped, the key wiped.
 *
 * The memory stays where it was, ordinary anonymous memory of the
 * process's own; the runtime is left defunct (its few pages are not
 * freed: a thread of the program that was already inside one of the
 * library's calls finds it so).  Detaching is made while the program's
 * other threads keep running: they may fault on swapped pages (they wait
 * for step 2) or call into the library (they wait for op_lock, then find
 * the runtime defunct and the memory unmanaged).
 */
#include <errno.h>
#include <string.h>

#include "base.h"
#include "fdtable.h"
#include "log.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"

/*
 * Read folio i of r in and install it.  Returns the pages read in, or
 * -EIO when it could not be read (the folio is poisoned then).  op_lock
 * held for writing, threads stopped.
 */
static long read_in_folio(struct uswap_runtime *rt, struct region *r,
			  uint32_t i)
{
	uint32_t fl = atomic_load(&r->folios[i].flags), page;
	unsigned pooled;
	uintptr_t addr;
	size_t len;
	int err;

	if (folio_state(fl) != FOLIO_SWAPPED &&
	    folio_state(fl) != FOLIO_ZAPPING)
		return 0;	/* resident, or never touched */
	folio_range(r, i, &addr, &len, &page);
	err = swap_read_entries(rt, rt->fork_zctx, NULL, &r->swp[page],
				(unsigned)(len >> PAGE_SHIFT), rt->thread_bufs,
				&pooled);
	if (!err)
		err = prim_uffd_copy(rt->uffd, addr, rt->thread_bufs, len,
				     false, NULL);
	if (!err || err == -EEXIST)
		return (long)(len >> PAGE_SHIFT);
	uswap_log("leaving the tree: the memory at %p (%zu bytes) cannot be read in (%s): it raises SIGBUS where it is touched",
		  (void *)addr, len, strerror(-err));
	if (prim_uffd_poison(rt->uffd, addr, len))
		prim_uffd_wake(rt->uffd, addr, len);
	return -EIO;
}

EXPORT int uswap_runtime_detach(struct uswap_runtime *rt)
{
	uint64_t pages = 0;
	unsigned n;
	uint32_t i;
	int ret = 0;

	if (!rt || rt->defunct)
		return 0;
	/* What is read in comes from uswap's own files, or nowhere. */
	fd_check_all();
	runtime_quiesce(rt);
	pthread_rwlock_wrlock(&rt->op_lock);
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];

		for (i = 0; i < r->nr_folios; i++) {
			long got = read_in_folio(rt, r, i);

			if (got < 0)
				ret = (int)got;
			else
				pages += (uint64_t)got;
		}
	}
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];

		prim_uffd_unregister(rt->uffd, r->start, r->end - r->start);
	}
	pthread_rwlock_unlock(&rt->op_lock);
	if (rt->opt.flags & USWAP_OPT_VERBOSE)
		uswap_log("this process leaves its tree (%llu swapped pages read in) and runs without uswap",
			  (unsigned long long)pages);
	pthread_rwlock_wrlock(&rt->op_lock);
	rt->defunct = true;	/* what waits for the lock finds it so */
	pthread_rwlock_unlock(&rt->op_lock);
	runtime_release(rt, false);
	return ret;
}
