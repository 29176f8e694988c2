// SPDX-License-Identifier: MIT
/*
 * mlock.c - locked and pinned managed memory (the kernel's mm/mlock.c and
 * its unevictable LRU).
 *
 * The kernel never reclaims a page that is mlock'ed or pinned for I/O:
 * it would fail to drop a locked one (MADV_DONTNEED refuses a VM_LOCKED
 * range), and the device would go on writing into a pinned one after it
 * left.  uswap learns of locks through mlock(2), mlock2(2), munlock(2),
 * mlockall(2), munlockall(2), MAP_LOCKED, and of pins through io_uring
 * buffer registration (the preload library interposes them all), and
 * keeps such folios off its LRU lists (F_UNEVICTABLE): never evicted,
 * still charged, counted as nr_unevictable (and, locked, as nr_mlock), as
 * the kernel's /proc/vmstat counts them.  Pins it does not see are the
 * kernel's to refuse (UFFDIO_MOVE: EBUSY, vmscan.c).
 *
 * Locking brings every page of the range in (unless MLOCK_ONFAULT), so a
 * lock that would leave locked and pinned memory larger than the budget
 * could only overrun it: such a lock fails at once, with ENOMEM as one
 * past RLIMIT_MEMLOCK (EAGAIN for a locked mmap, as the kernel's), and
 * brings nothing in.  One that fits is marked first, under a settled
 * range, and then made by the kernel, whose population of the range
 * faults through uswap's fault threads: each folio charged as it comes,
 * reclaim making room from what may be evicted, never waiting on itself.
 *
 * The kernel does not let a fork child inherit locks, MCL_FUTURE or pins:
 * neither does uswap (mlock_fork_child()).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base.h"
#include "lockdep.h"
#include "log.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"
#include "vma.h"

#ifndef MCL_ONFAULT
#define MCL_ONFAULT	4
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	1
#endif

static void set_lock(struct vma_attr *a, const void *arg)
{
	a->lock = *(const uint8_t *)arg;
}

static void add_pins(struct vma_attr *a, const void *arg)
{
	int d = *(const int *)arg;

	if (d < 0 && a->pins < (uint32_t)-d)
		a->pins = 0;
	else
		a->pins += (uint32_t)d;
}

/*
 * Take folios of [start, end) on or off the LRU as their locks and pins
 * say.  Only resident folios: one coming in later is marked as it comes
 * (memory.c).  Caller holds op_lock for writing, the range settled.
 */
void unevictable_update(struct uswap_runtime *rt, uintptr_t start,
			uintptr_t end)
{
	unsigned n;

	lock_assert_held_write(&rt->op_lock);
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uintptr_t a = MAX(start, r->start), b = MIN(end, r->end);
		uint32_t first, last, i;

		if (a >= b)
			continue;
		region_folios_in(r, a, b, &first, &last);
		pthread_mutex_lock(&r->lru_lock);
		for (i = first; i < last; i++) {
			struct folio *f = &r->folios[i];
			uint32_t fl = atomic_load(&f->flags), page;
			uintptr_t fa;
			size_t len;
			bool want;

			if (folio_state(fl) != FOLIO_RESIDENT)
				continue;
			folio_range(r, i, &fa, &len, &page);
			want = folio_unevictable(rt, fa, len);
			if (want && !(fl & F_UNEVICTABLE)) {
				if (fl & F_LRU)
					lru_del(r, i);
				atomic_fetch_or(&f->flags, F_UNEVICTABLE);
			} else if (!want && (fl & F_UNEVICTABLE)) {
				atomic_fetch_and(&f->flags, ~F_UNEVICTABLE);
				lru_add(r, i, false);
			}
		}
		pthread_mutex_unlock(&r->lru_lock);
	}
}

/*
 * What locking (or pinning) the managed parts of [start, end) would add
 * to the memory that cannot be evicted, and what cannot now, in pages;
 * *fresh: nothing of it is locked yet.  op_lock held.
 */
static void lock_cost(struct uswap_runtime *rt, uintptr_t start, uintptr_t end,
		      uint64_t *added, uint64_t *total, bool *fresh)
{
	uint64_t add;
	unsigned n;

	*added = 0;
	*fresh = true;
	vma_unevictable_pages(&rt->vmas, 0, 0, &add, total);
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uintptr_t a = MAX(start, r->start), b = MIN(end, r->end);

		if (a >= b)
			continue;
		vma_unevictable_pages(&rt->vmas, a, b, &add, total);
		*added += add;
		if (vma_flags(&rt->vmas, a, b) & VMA_LOCKED)
			*fresh = false;
	}
}

/* Would locking `added` pages more pass the budget?  op_lock held. */
static bool lock_too_large(struct uswap_runtime *rt, uint64_t added,
			   uint64_t total)
{
	return added && total + added > rt->memcg->max;
}

/* Mark the managed parts of [start, end) locked or not.  op_lock (write). */
static int lock_regions(struct uswap_runtime *rt, uintptr_t start,
			uintptr_t end, uint8_t lock)
{
	unsigned n;
	int err = 0;

	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uintptr_t a = MAX(start, r->start), b = MIN(end, r->end);

		if (a < b && vma_update(&rt->vmas, a, b, set_lock, &lock))
			err = -ENOMEM;
	}
	unevictable_update(rt, start, end);
	return err;
}

/* Settle [start, end) and mark it unlocked (a lock failed, or ended). */
static void unlock_range(struct uswap_runtime *rt, uintptr_t start,
			 uintptr_t end)
{
	settle_range(rt, start, end);
	lock_regions(rt, start, end, 0);
	settle_done(rt);
}

EXPORT int uswap_mlock2(struct uswap_runtime *rt, const void *addr, size_t len,
			unsigned int flags)
{
	uintptr_t s = (uintptr_t)addr & PAGE_MASK;
	uintptr_t e = ((uintptr_t)addr + len + PAGE_SIZE - 1) & PAGE_MASK;
	uint64_t added, total;
	bool fresh;
	int err;

	if (!rt || !len || e < s || !uswap_is_managed(rt, addr, len))
		return prim_libc_result(prim_mlock2(addr, len, flags));
	settle_range(rt, s, e);
	lock_cost(rt, s, e, &added, &total, &fresh);
	if (lock_too_large(rt, added, total)) {
		settle_done(rt);
		errno = ENOMEM;
		return -1;
	}
	err = lock_regions(rt, s, e, flags & MLOCK_ONFAULT ? VMA_LOCK_ONFAULT :
			   VMA_LOCK_ALL);
	settle_done(rt);
	if (err) {
		if (fresh)
			unlock_range(rt, s, e);
		errno = -err;
		return -1;
	}
	/* The kernel brings the range in now, through the fault threads. */
	err = prim_mlock2(addr, len, flags);
	if (err) {
		if (fresh)
			unlock_range(rt, s, e);
		errno = -err;
		return -1;
	}
	return 0;
}

EXPORT int uswap_munlock(struct uswap_runtime *rt, const void *addr, size_t len)
{
	uintptr_t s = (uintptr_t)addr & PAGE_MASK;
	uintptr_t e = ((uintptr_t)addr + len + PAGE_SIZE - 1) & PAGE_MASK;
	int err;

	if (!rt || !len || e < s || !uswap_is_managed(rt, addr, len))
		return prim_libc_result(prim_munlock(addr, len));
	/* The kernel first: reclaim must not find the range locked there. */
	err = prim_munlock(addr, len);
	if (!err)
		unlock_range(rt, s, e);
	return prim_libc_result(err);
}

/* mlock2 [s, e) but uswap's own mappings, errors ignored (below). */
static void lock_but_own(uintptr_t s, uintptr_t e, void *arg)
{
	uintptr_t os, oe;

	(void)arg;
	while (s < e) {
		if (!prim_own_next(s, e, &os, &oe)) {
			(void)prim_mlock2((void *)s, e - s, 0);
			return;
		}
		if (os > s)
			(void)prim_mlock2((void *)s, os - s, 0);
		s = oe;
	}
}

/*
 * The kernel's part of mlockall(MCL_CURRENT ...), without uswap's own
 * memory (prim_map_own: slot maps sized for the largest device, the
 * pool's tables; the kernel would bring in every page of them).  The
 * kernel locks every mapping on fault, which brings nothing in; uswap's
 * own are unlocked again; unless the program asked for MCL_ONFAULT, the
 * rest is then locked in full, mapping by mapping (mlock2, which brings
 * it in: a managed region through the fault threads), and MCL_FUTURE set
 * last as the program gave it.  What cannot be brought in (PROT_NONE,
 * I/O memory) is passed over, as the kernel's own mlockall passes it.
 */
static int mlockall_current(int flags)
{
	int err = prim_mlockall(flags | MCL_ONFAULT);

	if (err)
		return err;
	prim_own_munlock();
	if (flags & MCL_ONFAULT)
		return 0;
	err = prim_maps_each(lock_but_own, NULL);
	if (!err && (flags & MCL_FUTURE))
		err = prim_mlockall(MCL_FUTURE);
	return err;
}

EXPORT int uswap_mlockall(struct uswap_runtime *rt, int flags)
{
	bool fresh = true, current = flags & MCL_CURRENT;
	uint64_t added, total;
	int err = 0;

	if (!rt)
		return prim_libc_result(prim_mlockall(flags));
	if (current) {
		settle_range(rt, 0, UINTPTR_MAX);
		lock_cost(rt, 0, UINTPTR_MAX, &added, &total, &fresh);
		if (lock_too_large(rt, added, total)) {
			settle_done(rt);
			errno = ENOMEM;
			return -1;
		}
		err = lock_regions(rt, 0, UINTPTR_MAX, flags & MCL_ONFAULT ?
				   VMA_LOCK_ONFAULT : VMA_LOCK_ALL);
		settle_done(rt);
	}
	/* Before the kernel's: uswap's new mappings must not be locked. */
	prim_own_future(flags & MCL_FUTURE);
	if (!err)
		err = current ? mlockall_current(flags) : prim_mlockall(flags);
	if (err) {
		prim_own_future(rt->mcl);
		if (current && fresh)
			unlock_range(rt, 0, UINTPTR_MAX);
		errno = -err;
		return -1;
	}
	if (current)
		atomic_fetch_add(&rt->mlockall_gen, 1);
	/* As the kernel: each call sets, or clears, what the future gets. */
	pthread_rwlock_wrlock(&rt->op_lock);
	rt->mcl = flags & MCL_FUTURE ? flags & (MCL_FUTURE | MCL_ONFAULT) : 0;
	pthread_rwlock_unlock(&rt->op_lock);
	return 0;
}

EXPORT int uswap_munlockall(struct uswap_runtime *rt)
{
	int err;

	if (!rt)
		return prim_libc_result(prim_munlockall());
	err = prim_munlockall();
	if (!err) {
		prim_own_future(false);
		settle_range(rt, 0, UINTPTR_MAX);
		rt->mcl = 0;
		lock_regions(rt, 0, UINTPTR_MAX, 0);
		settle_done(rt);
	}
	return prim_libc_result(err);
}

/*
 * For uswap_mmap: may a locked mapping of len bytes be made?  0, or
 * -EAGAIN when it would leave locked and pinned memory past the budget
 * (as the kernel's mmap past RLIMIT_MEMLOCK).
 */
int mlock_future_check(struct uswap_runtime *rt, size_t len)
{
	uint64_t added, total;

	pthread_rwlock_rdlock(&rt->op_lock);
	vma_unevictable_pages(&rt->vmas, 0, 0, &added, &total);
	pthread_rwlock_unlock(&rt->op_lock);
	return total + (len >> PAGE_SHIFT) > rt->memcg->max ? -EAGAIN : 0;
}

/*
 * The new region [start, start+len) is locked (MAP_LOCKED, MCL_FUTURE),
 * and/or the kernel populated it before uswap could register it (then its
 * pages are there, charged by the caller already: its folios are
 * RESIDENT, on the LRU unless locked).  Caller holds op_lock for writing.
 */
void mlock_new_region(struct uswap_runtime *rt, uintptr_t start, size_t len,
		      bool locked, bool populated)
{
	struct region *r = region_find_locked(rt, start);
	uint8_t lock = rt->mcl & MCL_ONFAULT ? VMA_LOCK_ONFAULT : VMA_LOCK_ALL;
	uint32_t i;

	lock_assert_held_write(&rt->op_lock);
	if (!r)
		return;
	if (locked && vma_update(&rt->vmas, start, start + len, set_lock, &lock))
		uswap_log_once(&rt->logged_move,
			       "out of memory recording the lock of %p", (void *)start);
	if (!populated)
		return;
	pthread_mutex_lock(&r->lru_lock);
	for (i = 0; i < r->nr_folios; i++) {
		uintptr_t a;
		size_t flen;
		uint32_t page;

		folio_range(r, i, &a, &flen, &page);
		atomic_store(&r->folios[i].flags, FOLIO_RESIDENT |
			     (folio_unevictable(rt, a, flen) ? F_UNEVICTABLE : 0));
		lru_add(r, i, false);
	}
	pthread_mutex_unlock(&r->lru_lock);
}

/* ---- pins: io_uring fixed buffers ---- */

static int pins_reserve(struct uswap_runtime *rt, unsigned more)
{
	return prim_array_grow((void **)&rt->pins, &rt->pins_len, &rt->cap_pins,
			       rt->nr_pins, more, sizeof(*rt->pins));
}

EXPORT int uswap_pin(struct uswap_runtime *rt, int ring_fd,
		     const struct iovec *iov, unsigned nr)
{
	uint64_t added = 0, total = 0, add;
	const int one = 1;
	unsigned k, n, used = 0;
	bool fresh;
	int err = 0;

	if (!rt || !iov || !nr)
		return 1;
	settle_range(rt, 0, UINTPTR_MAX);
	for (k = 0; ring_fd >= 0 && k < rt->nr_pins; k++)
		if (rt->pins[k].owner == ring_fd) {
			err = 1;	/* the kernel refuses a second set */
			goto out;
		}
	for (k = 0; k < nr; k++) {
		uintptr_t s = (uintptr_t)iov[k].iov_base & PAGE_MASK;
		uintptr_t e = ((uintptr_t)iov[k].iov_base + iov[k].iov_len +
			       PAGE_SIZE - 1) & PAGE_MASK;

		lock_cost(rt, s, e, &add, &total, &fresh);
		added += add;
	}
	if (lock_too_large(rt, added, total)) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < nr && !err; k++) {
		uintptr_t s = (uintptr_t)iov[k].iov_base & PAGE_MASK;
		uintptr_t e = ((uintptr_t)iov[k].iov_base + iov[k].iov_len +
			       PAGE_SIZE - 1) & PAGE_MASK;

		for (n = 0; n < rt->nr_regions && !err; n++) {
			struct region *r = rt->regions[n];
			uintptr_t a = MAX(s, r->start), b = MIN(e, r->end);

			if (a >= b)
				continue;
			err = pins_reserve(rt, 1);
			if (!err)
				err = vma_update(&rt->vmas, a, b, add_pins, &one);
			if (err)
				break;
			rt->pins[rt->nr_pins++] = (struct pin){ ring_fd, a, b };
			used++;
		}
		unevictable_update(rt, s, e);
	}
	if (err) {
		/* Undo this call's pins: the caller does not register. */
		const int minus = -1;

		while (used--) {
			struct pin *p = &rt->pins[--rt->nr_pins];

			vma_update(&rt->vmas, p->start, p->end, add_pins, &minus);
			unevictable_update(rt, p->start, p->end);
		}
	}
out:
	settle_done(rt);
	return err;
}

/* Drop the pins of ring_fd (all, or those in [start, end)).  op_lock (write). */
static void unpin_locked(struct uswap_runtime *rt, int ring_fd, bool any_owner,
			 uintptr_t start, uintptr_t end)
{
	const int minus = -1;
	unsigned k = 0, n = 0;

	lock_assert_held_write(&rt->op_lock);
	for (k = 0; k < rt->nr_pins; k++) {
		struct pin *p = &rt->pins[k];

		if ((any_owner || p->owner == ring_fd) &&
		    p->start >= start && p->end <= end) {
			vma_update(&rt->vmas, p->start, p->end, add_pins, &minus);
			unevictable_update(rt, p->start, p->end);
			continue;
		}
		rt->pins[n++] = *p;
	}
	rt->nr_pins = n;
}

EXPORT void uswap_unpin(struct uswap_runtime *rt, int ring_fd)
{
	unsigned k;

	if (!rt)
		return;
	pthread_rwlock_rdlock(&rt->op_lock);
	for (k = 0; k < rt->nr_pins && rt->pins[k].owner != ring_fd; k++)
		;
	pthread_rwlock_unlock(&rt->op_lock);
	if (k == rt->nr_pins)
		return;
	settle_range(rt, 0, UINTPTR_MAX);
	unpin_locked(rt, ring_fd, false, 0, UINTPTR_MAX);
	settle_done(rt);
}

/*
 * [start, end) leaves management (munmap): its attributes and the pins
 * inside it go (a pin across its edge stays: the ring keeps the rest).
 * op_lock (write).
 */
void mlock_forget(struct uswap_runtime *rt, uintptr_t start, uintptr_t end)
{
	unsigned k, n = 0;

	lock_assert_held_write(&rt->op_lock);
	for (k = 0; k < rt->nr_pins; k++)
		if (rt->pins[k].start < start || rt->pins[k].end > end)
			rt->pins[n++] = rt->pins[k];
	rt->nr_pins = n;
	vma_forget(&rt->vmas, start, end);
}

/*
 * In a fork child, before its threads start: the kernel gave it none of
 * its parent's locks, MCL_FUTURE or pins (a pinned page stays the
 * parent's; the child has a copy).  Its folios go back on the LRU.
 */
void mlock_fork_child(struct uswap_runtime *rt)
{
	prim_own_future(false);
	rt->mcl = 0;
	rt->nr_pins = 0;
	vma_clear_locks(&rt->vmas);
	unevictable_update(rt, 0, UINTPTR_MAX);
}

void mlock_destroy(struct uswap_runtime *rt)
{
	vma_map_destroy(&rt->vmas);
	prim_free(rt->pins, rt->pins_len);
	rt->pins = NULL;
	rt->nr_pins = rt->cap_pins = 0;
}

/*
 * nr_unevictable: resident pages of folios kept off the LRU; nr_mlock: of
 * them, those of folios with a locked page.  Walks only the folios under
 * locks and pins.
 */
void mlock_counts(struct uswap_runtime *rt, uint64_t *unevictable,
		  uint64_t *mlocked)
{
	const struct vma_seg *seg;
	unsigned n, k, ri;

	*unevictable = *mlocked = 0;
	pthread_rwlock_rdlock(&rt->op_lock);
	seg = vma_segments(&rt->vmas, &n);
	for (ri = 0; ri < rt->nr_regions; ri++) {
		struct region *r = rt->regions[ri];
		uint32_t done = 0, done_m = 0;	/* folios counted, +1 */

		for (k = 0; k < n; k++) {
			uintptr_t a = MAX(seg[k].start, r->start);
			uintptr_t b = MIN(seg[k].end, r->end);
			uint32_t first, last, i;

			if (a >= b || (!seg[k].a.lock && !seg[k].a.pins))
				continue;
			region_folios_in(r, a, b, &first, &last);
			for (i = first; i < last; i++) {
				uint32_t fl = atomic_load(&r->folios[i].flags), page;
				uintptr_t fa;
				size_t len;

				if (folio_state(fl) != FOLIO_RESIDENT ||
				    !(fl & F_UNEVICTABLE))
					continue;
				folio_range(r, i, &fa, &len, &page);
				if (i + 1 > done) {
					*unevictable += len >> PAGE_SHIFT;
					done = i + 1;
				}
				if (seg[k].a.lock && i + 1 > done_m) {
					*mlocked += len >> PAGE_SHIFT;
					done_m = i + 1;
				}
			}
		}
	}
	pthread_rwlock_unlock(&rt->op_lock);
}
