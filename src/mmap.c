// SPDX-License-Identifier: MIT
/*
 * mmap.c - the mmap(2) family over managed memory (the kernel's mmap.c,
 * mremap.c and madvise.c, as far as they touch swap state).
 *
 * A structural change (unmap, move, discard) takes op_lock for writing,
 * waits until no folio of its range is in flight (an eviction or a load
 * owned by another thread outside the lock, or a victim whose pages the
 * reclaimer still reads after a write aborted its eviction), marks the
 * range busy so that reclaim leaves it alone meanwhile, and then changes
 * the kernel mapping and the tables together, so that no thread ever sees
 * one without the other.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"
#include "vma.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK	18
#define MADV_KEEPONFORK	19
#endif
#ifndef MADV_COLD
#define MADV_COLD	20
#define MADV_PAGEOUT	21
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102
#endif

static bool range_in_flight(struct region *r, uintptr_t start, uintptr_t end)
{
	uint32_t first, last, i;

	region_folios_in(r, start, end, &first, &last);
	for (i = first; i < last; i++) {
		uint32_t fl = atomic_load(&r->folios[i].flags);
		unsigned s = folio_state(fl);

		if (s == FOLIO_EVICTING || s == FOLIO_LOADING ||
		    (fl & F_STORING))
			return true;
	}
	return false;
}

/*
 * Take op_lock for writing with no folio in flight in any region that
 * overlaps [start, end).  Returns with the lock held.
 */
void settle_range(struct uswap_runtime *rt, uintptr_t start,
			 uintptr_t end)
{
	for (;;) {
		bool busy = false;
		unsigned i;

		pthread_rwlock_wrlock(&rt->op_lock);
		for (i = 0; i < rt->nr_regions; i++) {
			struct region *r = rt->regions[i];
			uintptr_t s = MAX(start, r->start), e = MIN(end, r->end);

			if (s >= e)
				continue;
			r->busy_start = s;
			r->busy_end = e;
			/*
			 * The whole region: a change rebuilds its tables, and
			 * an owner of an in-flight folio holds the old ones.
			 */
			if (range_in_flight(r, r->start, r->end))
				busy = true;
		}
		if (!busy)
			return;
		pthread_rwlock_unlock(&rt->op_lock);
		usleep(50);
	}
}

void settle_done(struct uswap_runtime *rt)
{
	unsigned i;

	for (i = 0; i < rt->nr_regions; i++)
		rt->regions[i]->busy_start = rt->regions[i]->busy_end = 0;
	pthread_rwlock_unlock(&rt->op_lock);
}

static int page_align_range(void *addr, size_t len, uintptr_t *s, uintptr_t *e)
{
	uintptr_t a = (uintptr_t)addr;

	if (a & (PAGE_SIZE - 1))
		return -EINVAL;
	*s = a;
	*e = a + ((len + PAGE_SIZE - 1) & PAGE_MASK);
	return *e < *s ? -EINVAL : 0;
}

EXPORT int uswap_is_managed(struct uswap_runtime *rt, const void *addr,
			    size_t len)
{
	uintptr_t s = (uintptr_t)addr, e = s + len;
	unsigned lo = 0, hi, i;
	int found;

	pthread_rwlock_rdlock(&rt->op_lock);
	/* The first region ending after s (the table is sorted): it or none. */
	hi = rt->nr_regions;
	while (lo < hi) {
		i = (lo + hi) / 2;
		if (rt->regions[i]->end <= s)
			lo = i + 1;
		else
			hi = i;
	}
	found = lo < rt->nr_regions && rt->regions[lo]->start < e;
	pthread_rwlock_unlock(&rt->op_lock);
	return found;
}

EXPORT int uswap_region_create(struct uswap_runtime *rt, size_t len,
			       void **addrp)
{
	void *p = uswap_mmap(rt, NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (!uswap_is_managed(rt, p, len)) {
		prim_munmap(p, len);
		return -EINVAL;
	}
	*addrp = p;
	return 0;
}

static bool wants_managing(struct uswap_runtime *rt, size_t len, int prot,
			   int flags, int fd)
{
	if (len < rt->opt.min_region || len == 0)
		return false;
	if ((flags & MAP_TYPE) != MAP_PRIVATE || !(flags & MAP_ANONYMOUS))
		return false;
	if (flags & (MAP_GROWSDOWN | MAP_STACK | MAP_HUGETLB))
		return false;
	if ((prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE))
		return false;
	(void)fd;
	return true;
}

/*
 * Remove [s, e) from every region overlapping it, then (kernel_unmap) from
 * the address space.  op_lock held (write).  The kernel unmaps only after
 * every table change: a cut region's new tables are mapped meanwhile, and
 * must not land in a hole of the range, which would then unmap them.
 */
static int unmap_managed_locked(struct uswap_runtime *rt, uintptr_t s,
				uintptr_t e, bool kernel_unmap)
{
	unsigned i = 0;
	int err = 0;

	lock_assert_held_write(&rt->op_lock);
	/* Who else maps a page shared by fork, and the unmap, at once. */
	if (kernel_unmap)
		memcg_share_lock(rt->memcg);
	while (i < rt->nr_regions) {
		struct region *r = rt->regions[i];
		uintptr_t a = MAX(s, r->start), b = MIN(e, r->end);

		if (a >= b) {
			i++;
			continue;
		}
		region_drop_range(r, a, b, true);
		mlock_forget(rt, a, b);
		err = region_cut(rt, r, a, b);
		if (err)
			break;
		i = 0;	/* the table changed: rescan */
	}
	if (kernel_unmap) {
		prim_munmap((void *)s, e - s);
		memcg_share_unlock(rt->memcg);
		/* Threads that faulted on it retry and see no mapping. */
		prim_uffd_wake(rt->uffd, s, e - s);
	}
	return err;
}

EXPORT void *uswap_mmap(struct uswap_runtime *rt, void *addr, size_t len,
			int prot, int flags, int fd, long offset)
{
	bool managed = rt && wants_managing(rt, len, prot, flags, fd);
	bool locked = false, populate = false, fixed_over;
	size_t plen = (len + PAGE_SIZE - 1) & PAGE_MASK;
	int mcl = rt ? atomic_load(&rt->mcl) : 0;
	void *p;
	int err = 0;

	fixed_over = rt && (flags & MAP_FIXED) &&
		     !((uintptr_t)addr & (PAGE_SIZE - 1)) && len &&
		     uswap_is_managed(rt, addr, plen);
	if (!managed && !fixed_over)
		return prim_mmap(addr, len, prot, flags, fd, offset);
	if (managed) {
		/*
		 * Locked (MAP_LOCKED, or mlockall(MCL_FUTURE) before): within
		 * what the budget can hold, or EAGAIN as the kernel's past its
		 * limit.  The kernel populates a locked (or MAP_POPULATE)
		 * mapping before uswap can register it: its pages are charged
		 * first, as the fault path would charge them.
		 */
		locked = (flags & MAP_LOCKED) || (mcl & MCL_FUTURE);
		populate = (locked && !(mcl & MCL_ONFAULT)) ||
			   (flags & (MAP_POPULATE | MAP_NONBLOCK)) == MAP_POPULATE;
		if (locked && (err = mlock_future_check(rt, plen))) {
			errno = -err;
			return MAP_FAILED;
		}
		if (populate)
			memcg_charge(rt, (unsigned)(plen >> PAGE_SHIFT));
	}
	if (fixed_over) {
		/*
		 * MAP_FIXED replaces whatever was there: managed memory under
		 * it leaves the tables first (whatever the new mapping is),
		 * and the kernel replaces its pages in the same call that maps
		 * the new ones.  (Unmapping first would open a window in which
		 * another thread's mmap could be given the range, and
		 * MAP_FIXED would then take it from that thread.)
		 */
		settle_range(rt, (uintptr_t)addr, (uintptr_t)addr + plen);
		unmap_managed_locked(rt, (uintptr_t)addr, (uintptr_t)addr + plen,
				     false);
	} else {
		settle_range(rt, 0, 0);
	}
	if (rt->defunct) {
		/* The process left its tree meanwhile (detach.c). */
		settle_done(rt);
		if (populate)
			memcg_uncharge(rt, plen >> PAGE_SHIFT);
		return prim_mmap(addr, len, prot, flags, fd, offset);
	}
	p = prim_mmap(addr, managed ? plen : len, prot, flags, fd, offset);
	if (p == MAP_FAILED) {
		err = errno;
		if (flags & MAP_FIXED)	/* what may be left there is unmanaged */
			prim_uffd_unregister(rt->uffd, (uintptr_t)addr, plen);
		settle_done(rt);
		if (populate)
			memcg_uncharge(rt, plen >> PAGE_SHIFT);
		errno = err;
		return MAP_FAILED;
	}
	if (managed) {
		err = region_add(rt, (uintptr_t)p, plen);
		if (!err && (locked || populate))
			mlock_new_region(rt, (uintptr_t)p, plen, locked, populate);
	}
	settle_done(rt);
	if (err) {
		/* Cannot manage it: the program still gets its memory. */
		uswap_log("cannot manage a mapping of %zu bytes: %s; left unmanaged",
			  plen, strerror(-err));
		if (populate)
			memcg_uncharge(rt, plen >> PAGE_SHIFT);
	}
	return p;
}

EXPORT int uswap_munmap(struct uswap_runtime *rt, void *addr, size_t len)
{
	uintptr_t s, e;
	int err;

	if (!rt || !uswap_is_managed(rt, addr, len))
		return prim_munmap(addr, len) ? -1 : 0;
	if (page_align_range(addr, len, &s, &e)) {
		errno = EINVAL;
		return -1;
	}
	settle_range(rt, s, e);
	/*
	 * One munmap of the whole range, managed parts and not: the moment it
	 * returns, another thread's mmap may be given those addresses, and a
	 * second munmap of the range would take them from it (as it did to
	 * the statistics buffer of a process exiting while its program
	 * unmapped memory).
	 */
	err = unmap_managed_locked(rt, s, e, true);
	settle_done(rt);
	debug_check_swap(rt, "munmap");
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

/*
 * A resident folio that lost part of its pages to MADV_DONTNEED gets them
 * back as zeros at once: reclaim reads whole folios (pwritev, compression)
 * and must never fault on a hole, since the fault would wait for a fault
 * thread that may itself wait for reclaim.  Only the folios at the ends of
 * [a, b) can be partial.  op_lock held (write).
 */
static void refill_partial(struct uswap_runtime *rt, struct region *r,
			   uintptr_t a, uintptr_t b)
{
	uint32_t ends[2] = { folio_index(r, a), folio_index(r, b - 1) }, page;
	unsigned k;

	for (k = 0; k < 2; k++) {
		struct folio *f = &r->folios[ends[k]];
		uint32_t fl = atomic_load(&f->flags);
		uintptr_t fs, s, e;
		size_t flen;

		if (k && ends[1] == ends[0])
			break;
		if (folio_state(fl) != FOLIO_RESIDENT)
			continue;
		folio_range(r, ends[k], &fs, &flen, &page);
		s = MAX(a, fs);
		e = MIN(b, fs + flen);
		if (s < e)
			prim_uffd_copy(rt->uffd, s, rt->zero_buf, e - s,
				       rt->have_wp && (fl & F_ARMED), NULL);
	}
}

/*
 * The flags of a mapping, fl (R_*), after advice that the kernel keeps in
 * its VMA's flags: true and *nf set, or false for any other advice.
 * MADV_HUGEPAGE and MADV_NOHUGEPAGE are there too, changing nothing:
 * managed memory stays MADV_NOHUGEPAGE.
 */
static bool advice_vma_flags(unsigned fl, int advice, unsigned *nf)
{
	switch (advice) {
	case MADV_NORMAL:
		*nf = fl & ~(R_SEQ_READ | R_RAND_READ);
		return true;
	case MADV_RANDOM:
		*nf = (fl & ~R_SEQ_READ) | R_RAND_READ;
		return true;
	case MADV_SEQUENTIAL:
		*nf = (fl & ~R_RAND_READ) | R_SEQ_READ;
		return true;
	case MADV_DONTFORK:
		*nf = fl | R_DONTFORK;
		return true;
	case MADV_DOFORK:
		*nf = fl & ~R_DONTFORK;
		return true;
	case MADV_WIPEONFORK:
		*nf = fl | R_WIPEONFORK;
		return true;
	case MADV_KEEPONFORK:
		*nf = fl & ~R_WIPEONFORK;
		return true;
	case MADV_DONTDUMP:
		*nf = fl | R_DONTDUMP;
		return true;
	case MADV_DODUMP:
		*nf = fl & ~R_DONTDUMP;
		return true;
	case MADV_MERGEABLE:
		*nf = fl | R_MERGEABLE;
		return true;
	case MADV_UNMERGEABLE:
		*nf = fl & ~R_MERGEABLE;
		return true;
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
		*nf = fl;
		return true;
	}
	return false;
}

/*
 * advice on [a, b), a part of region r that the caller settled, holding
 * op_lock for writing.  0 or -errno (the kernel's).
 */
static int madvise_managed(struct uswap_runtime *rt, struct region *r,
			   uintptr_t a, uintptr_t b, int advice)
{
	unsigned nf;
	int err;

	if (advice == MADV_GUARD_INSTALL)
		return -EINVAL;
	if (advice == MADV_COLD || advice == MADV_PAGEOUT) {
		/*
		 * uswap's LRU, not the kernel's: the kernel would try to
		 * page out memory that is uswap's to swap.  The kernel is
		 * asked MADV_COLD for its verdict (it refuses both on
		 * locked memory alike), which only reorders its own lists.
		 */
		err = prim_madvise((void *)a, b - a, MADV_COLD);
		if (!err)
			lru_hint_range(rt, r, a, b, advice == MADV_PAGEOUT);
		return err;
	}
	/* userfaultfd installs small pages; khugepaged stays away. */
	if (advice == MADV_HUGEPAGE || advice == MADV_NOHUGEPAGE)
		return 0;
	advice_vma_flags(r->vm_flags, advice, &nf);
	if (nf == r->vm_flags)	/* the kernel changes (and splits) nothing */
		return prim_madvise((void *)a, b - a, advice);
	/*
	 * The kernel splits its VMA where the advice ends inside one, and a
	 * folio must not span two VMAs (one UFFDIO_COPY installs it): the
	 * region splits there too, first (the kernel's call cannot be undone,
	 * a split can fail).
	 */
	err = region_isolate(rt, a, b, &r);
	if (!err)
		err = prim_madvise((void *)a, b - a, advice);
	if (!err)
		r->vm_flags = nf;
	return err;
}

/*
 * Advice other than a discard on a range with managed memory.  Advice
 * that the kernel keeps in its VMAs' flags, and MADV_COLD and
 * MADV_PAGEOUT, go piece by piece in address order, as the kernel walks
 * its VMAs: managed pieces through madvise_managed(), the others to the
 * kernel; the first error stops the walk, a hole in the range only makes
 * it end with ENOMEM.  So uswap's tables change exactly where the
 * kernel's advice took.  MADV_GUARD_INSTALL is refused on managed memory
 * (EINVAL): a guard page would drop a page behind uswap's back, and
 * reclaim, reading a victim's pages, would fault on it.  Anything else is
 * the kernel's alone: on private anonymous memory it refuses MADV_REMOVE
 * (and nothing is dropped), and MADV_POPULATE_READ/WRITE fault the pages
 * in through the fault threads, charged as any fault.
 */
static int madvise_other(struct uswap_runtime *rt, void *addr, size_t len,
			 int advice)
{
	uintptr_t s, e, cur;
	int err = 0, hole = 0;
	unsigned nf;

	if (!advice_vma_flags(0, advice, &nf) && advice != MADV_COLD &&
	    advice != MADV_PAGEOUT && advice != MADV_GUARD_INSTALL)
		return prim_madvise(addr, len, advice) ? -1 : 0;
	if (page_align_range(addr, len, &s, &e)) {
		errno = EINVAL;
		return -1;
	}
	settle_range(rt, s, e);
	for (cur = s; cur < e && !err;) {
		struct region *r = region_next_locked(rt, cur);
		uintptr_t end;

		if (r && r->start <= cur) {
			end = MIN(e, r->end);
			err = madvise_managed(rt, r, cur, end, advice);
		} else {
			end = r && r->start < e ? r->start : e;
			err = prim_madvise((void *)cur, end - cur, advice);
			if (err == -ENOMEM) {
				hole = err;
				err = 0;
			}
		}
		cur = end;
	}
	settle_done(rt);
	if (!err)
		err = hole;
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

EXPORT int uswap_madvise(struct uswap_runtime *rt, void *addr, size_t len,
			 int advice)
{
	uintptr_t s, e;
	unsigned i;
	int err;

	if (!rt || !uswap_is_managed(rt, addr, len))
		return prim_madvise(addr, len, advice) ? -1 : 0;
	if (advice != MADV_DONTNEED && advice != MADV_FREE)
		return madvise_other(rt, addr, len, advice);
	if (page_align_range(addr, len, &s, &e)) {
		errno = EINVAL;
		return -1;
	}
	settle_range(rt, s, e);
	/* The kernel refuses to drop locked pages: so does uswap, first. */
	if (vma_flags(&rt->vmas, s, e) & VMA_LOCKED) {
		settle_done(rt);
		errno = EINVAL;
		return -1;
	}
	/*
	 * MADV_FREE's pages may read back old data or zeros; uswap makes
	 * them zeros at once, as MADV_DONTNEED.
	 */
	memcg_share_lock(rt->memcg);
	for (i = 0; i < rt->nr_regions; i++) {
		struct region *r = rt->regions[i];
		uintptr_t a = MAX(s, r->start), b = MIN(e, r->end);

		if (a < b)
			region_drop_range(r, a, b, false);
	}
	err = prim_madvise(addr, len, MADV_DONTNEED);
	memcg_share_unlock(rt->memcg);
	for (i = 0; i < rt->nr_regions; i++) {
		struct region *r = rt->regions[i];
		uintptr_t a = MAX(s, r->start), b = MIN(e, r->end);

		if (a < b)
			refill_partial(rt, r, a, b);
	}
	settle_done(rt);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

/*
 * mremap of managed memory.  The kernel moves present pages and drops the
 * userfaultfd registration of a moved mapping, so uswap moves the tables
 * with it and registers the new range before anyone can use it (the caller
 * does not know the new address until this returns).  MREMAP_DONTUNMAP of
 * managed memory is refused with EINVAL.
 */
EXPORT void *uswap_mremap(struct uswap_runtime *rt, void *old_addr,
			  size_t old_len, size_t new_len, int flags,
			  void *new_addr)
{
	uintptr_t s = (uintptr_t)old_addr, e;
	unsigned lock;
	struct region *r;
	void *p;
	int err;

	if (!rt || !uswap_is_managed(rt, old_addr, old_len))
		return prim_mremap(old_addr, old_len, new_len, flags, new_addr);
	if (page_align_range(old_addr, old_len, &s, &e) || new_len == 0 ||
	    (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED)) ||
	    ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE))) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	new_len = (new_len + PAGE_SIZE - 1) & PAGE_MASK;
	settle_range(rt, s, e);
	r = region_find_locked(rt, s);
	if (!r || r->start != s || r->end != e) {
		/*
		 * Only whole regions move; make a part a region of its own
		 * by cutting it free first.
		 */
		if (!r || e > r->end || s < r->start) {
			settle_done(rt);
			errno = EINVAL;
			return MAP_FAILED;
		}
	}
	/*
	 * A locked mapping that grows: the kernel would bring the new part
	 * in at the end of mremap, through the fault threads, which wait for
	 * the op_lock held here.  It is unlocked for the move and locked
	 * again after (within the budget, else EAGAIN as the kernel's).
	 */
	lock = vma_flags(&rt->vmas, s, e) & (VMA_LOCKED | VMA_ONFAULT);
	if ((lock & VMA_LOCKED) && new_len > e - s) {
		err = mlock_future_check(rt, new_len - (e - s));
		if (err)
			goto err_unlock;
		prim_mlock(old_addr, e - s, false, 0);
	} else {
		lock = 0;
	}
	if (new_len < e - s) {
		/* Shrink: the tail goes as munmap would. */
		err = unmap_managed_locked(rt, s + new_len, e, false);
		if (err)
			goto err_relock;
	}
	p = prim_mremap(old_addr, old_len, new_len, flags, new_addr);
	if (p == MAP_FAILED) {
		err = -errno;
		goto err_relock;
	}
	r = region_find_locked(rt, s);
	if (r && (new_len > e - s || (uintptr_t)p != s)) {
		if (r->start != s) {
			/* A part of a region moved: cut it out, then move. */
			uswap_log("mremap of part of a managed region at %p is not supported",
				  old_addr);
			err = -EINVAL;
			goto err_unlock;
		}
		err = region_move(rt, r, (uintptr_t)p, new_len);
		vma_move(&rt->vmas, s, e - s, (uintptr_t)p, new_len);
		if (err) {
			uswap_log("mremap: cannot move region state: %s",
				  strerror(-err));
			goto err_unlock;
		}
	}
	settle_done(rt);
	if (lock)
		prim_mlock(p, new_len, true, lock & VMA_ONFAULT);
	return p;

err_relock:
	if (lock)
		prim_mlock(old_addr, e - s, true, lock & VMA_ONFAULT);
err_unlock:
	settle_done(rt);
	errno = -err;
	return MAP_FAILED;
}
