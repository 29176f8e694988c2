// SPDX-License-Identifier: MIT
/*
 * fork_share.c - memory shared by fork, charged once (docs/fork-charge.md).
 *
 * The kernel copies no page at fork: parent and child map the same pages
 * until one of them writes, and a memory cgroup charges each page once.
 * uswap sees only its own process's mappings, so it charges the pages a
 * fork shares to the tree, in the budget's `shared`, instead of to a
 * member, and asks the kernel who still maps a page (bit 56 of
 * /proc/self/pagemap, PM_MMAP_EXCLUSIVE: mapped by this process only,
 * readable without privileges) whenever one of them lets go of it:
 *
 *  - at fork, the parent write-protects its resident folios and marks
 *    them F_SHARED; their pages move from its member's charge to `shared`;
 *    the child inherits the marks, protects the same folios on its own
 *    userfaultfd, and is charged nothing for them;
 *  - a write to an F_SHARED folio (the write-protect fault, memory.c):
 *    its pages that another process still maps are about to be copied, so
 *    the writer is charged the folio; those it maps alone already stay
 *    where they are, and leave `shared` (their charge is the writer's now);
 *  - eviction (vmscan.c), munmap and MADV_DONTNEED (region.c) of an
 *    F_SHARED folio: its pages mapped by this process only are freed with
 *    it, and leave `shared`; the others are still someone else's.
 *
 * Two processes evicting the same shared folio at once would each see the
 * other still mapping it, and neither would release it: the look and the
 * zap of a batch with shared victims are made under the tree's
 * share_lock.  What is left errs on the side of counting too much: two
 * processes writing one shared page at the same moment are both charged
 * (one finds the copy made when it writes), a process killed holding the
 * last mapping of a shared page leaves it in `shared` until the tree ends,
 * and a folio whose pages are not all there is counted as the pages that
 * are.  Demoted folios are not shared this way: a child is charged for
 * them on their tier, as before.  Without /proc/self/pagemap or
 * write-protection a child is charged everything its parent holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "fdtable.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"

#define PM_PRESENT	(1ull << 63)
#define PM_EXCLUSIVE	(1ull << 56)	/* PM_MMAP_EXCLUSIVE */
#define PM_CHUNK	64u

/* (Re)open this process's pagemap: a descriptor from before a fork reads
   the parent's. */
void fork_share_open(struct uswap_runtime *rt)
{
	if (rt->pagemap_fd >= 0)
		prim_fd_close(rt->pagemap_fd);
	rt->pagemap_fd = fd_install(prim_open("/proc/self/pagemap",
					      O_RDONLY | O_CLOEXEC, 0),
				    FD_PAGEMAP);
}

void fork_share_close(struct uswap_runtime *rt)
{
	if (rt->pagemap_fd >= 0)
		prim_fd_close(rt->pagemap_fd);
	rt->pagemap_fd = -1;
}

/*
 * How many of the nr pages from addr are present and mapped by this
 * process only.  0 when pagemap cannot say (the safe side: nothing is
 * released).
 */
unsigned share_exclusive(struct uswap_runtime *rt, uintptr_t addr, unsigned nr)
{
	uint64_t pm[PM_CHUNK];
	unsigned done = 0, excl = 0, k;

	while (rt->pagemap_fd >= 0 && done < nr) {
		unsigned n = MIN(nr - done, PM_CHUNK);
		off_t off = (off_t)(((addr >> PAGE_SHIFT) + done) * sizeof(pm[0]));
		ssize_t got = prim_pread(rt->pagemap_fd, pm, n * sizeof(pm[0]),
					 off);

		if (got != (ssize_t)(n * sizeof(pm[0])))
			break;
		for (k = 0; k < n; k++)
			excl += (pm[k] & (PM_PRESENT | PM_EXCLUSIVE)) ==
				(PM_PRESENT | PM_EXCLUSIVE);
		done += n;
	}
	return excl;
}

static bool can_share(const struct uswap_runtime *rt)
{
	return rt->pagemap_fd >= 0 && rt->have_wp;
}

/* Resident on the fast tier: what a fork shares. */
static bool shareable(uint32_t fl)
{
	return folio_state(fl) == FOLIO_RESIDENT && !(fl & F_DEMOTED);
}

/*
 * Write-protect folios [first, last) of r, which are resident; with
 * `mark`, mark them F_SHARED too.  Returns the pages newly marked, or
 * -errno when the protection failed (nothing is marked then).
 */
static long protect_run(struct uswap_runtime *rt, struct region *r,
			uint32_t first, uint32_t last, bool mark)
{
	uintptr_t s, a;
	size_t len;
	uint32_t i, p;
	long marked = 0;
	int err;

	if (first == last)
		return 0;
	folio_range(r, first, &s, &len, &p);
	folio_range(r, last - 1, &a, &len, &p);
	err = prim_uffd_wp(rt->uffd, s, a + len - s, true, false);
	if (err || !mark)
		return err;
	for (i = first; i < last; i++) {
		uint32_t fl = atomic_fetch_or(&r->folios[i].flags, F_SHARED);

		folio_range(r, i, &a, &len, &p);
		if (!(fl & F_SHARED))
			marked += (long)(len >> PAGE_SHIFT);
	}
	return marked;
}

/*
 * Write-protect every resident folio (in the parent: and mark it shared;
 * in the child: those marked shared), run by run.  Returns the pages newly
 * marked, or -errno.
 */
static long protect_resident(struct uswap_runtime *rt, bool parent)
{
	long total = 0, n;
	unsigned k;

	for (k = 0; k < rt->nr_regions; k++) {
		struct region *r = rt->regions[k];
		uint32_t i, first = 0;

		/* Fork advice: the child will not map these (runtime.c). */
		if (parent && (r->vm_flags & (R_DONTFORK | R_WIPEONFORK)))
			continue;
		for (i = 0; i <= r->nr_folios; i++) {
			uint32_t fl = i < r->nr_folios ?
				      atomic_load(&r->folios[i].flags) : 0;
			bool in = i < r->nr_folios && shareable(fl) &&
				  (parent || (fl & F_SHARED));

			if (in)
				continue;
			n = protect_run(rt, r, first, i, parent);
			if (n < 0) {
				if (!parent)
					return n;
				/* Not protected: these stay the parent's, and
				   the child is charged for them too. */
				uswap_log_once(&rt->logged_share,
					       "fork: cannot write-protect memory shared with the child (%s): both are charged for it",
					       strerror((int)-n));
			} else {
				total += n;
			}
			first = i + 1;
		}
	}
	return total;
}

/*
 * In the parent, before fork (op_lock held for writing, nothing in
 * flight): share the resident folios with the child to come.  Their pages
 * leave this process's charge for the tree's `shared`.
 */
void fork_share_parent(struct uswap_runtime *rt)
{
	long marked;

	if (!can_share(rt))
		return;
	marked = protect_resident(rt, true);
	if (marked > 0)
		memcg_share(rt, (uint64_t)marked);
}

/*
 * In the child, once its regions are registered on its own userfaultfd:
 * the protection of the shared folios did not survive fork.  Without it
 * the child's writes would be copies nobody is charged for, so a failure
 * is the child's runtime's failure.
 */
int fork_share_child(struct uswap_runtime *rt)
{
	long err;

	fork_share_open(rt);
	if (!rt->have_wp)
		return 0;
	err = protect_resident(rt, false);
	return err < 0 ? (int)err : 0;
}

/*
 * A resident F_SHARED folio of nr pages at addr leaves this process
 * (eviction, munmap): its pages that nobody else maps are freed with it.
 * Returns them, uncharged.
 */
unsigned share_release(struct uswap_runtime *rt, uintptr_t addr, unsigned nr)
{
	unsigned excl = share_exclusive(rt, addr, nr);

	memcg_share_drop(rt, nr, excl);
	return excl;
}

/*
 * Folios [i, j) of r (at most MAX_FOLIO_PAGES pages from a0, whose
 * pagemap entries are pm): those shared and now mapped by this process
 * alone become its own, and lose the protection that was only there for
 * sharing (armed and clean folios keep theirs).  Returns the pages made
 * its own.  Caller holds op_lock for reading.
 */
static uint64_t sweep_folios(struct uswap_runtime *rt, struct region *r,
			     uint32_t i, uint32_t j, uintptr_t a0,
			     const uint64_t *pm)
{
	uintptr_t run_start = 0, run_end = 0, a;
	uint64_t moved = 0;
	uint32_t k, p, first;
	size_t len;

	lock_assert_held_read(&rt->op_lock);
	pthread_mutex_lock(&r->lru_lock);
	for (k = i; k <= j; k++) {
		uint32_t fl = k < j ? atomic_load(&r->folios[k].flags) : 0;
		bool mine = k < j && folio_state(fl) == FOLIO_RESIDENT &&
			    (fl & F_SHARED);

		if (mine) {
			folio_range(r, k, &a, &len, &first);
			for (p = 0; mine && p < (len >> PAGE_SHIFT); p++)
				mine = (pm[((a - a0) >> PAGE_SHIFT) + p] &
					(PM_PRESENT | PM_EXCLUSIVE)) ==
				       (PM_PRESENT | PM_EXCLUSIVE);
		}
		if (mine && atomic_compare_exchange_strong(&r->folios[k].flags,
						&fl, fl & ~F_SHARED)) {
			moved += len >> PAGE_SHIFT;
			if (!(fl & (F_ARMED | F_CLEAN))) {
				if (run_end != a) {
					if (run_end)
						prim_uffd_wp(rt->uffd, run_start,
							     run_end - run_start,
							     false, false);
					run_start = a;
				}
				run_end = a + len;
				continue;
			}
		}
		if (run_end)
			prim_uffd_wp(rt->uffd, run_start, run_end - run_start,
				     false, false);
		run_start = run_end = 0;
	}
	pthread_mutex_unlock(&r->lru_lock);
	return moved;
}

/*
 * A write found a shared folio that this process alone maps: its sharers
 * have let go (exec'd, exited, written their copies).  The other shared
 * folios it maps alone are its own too: make them so in one pass over
 * pagemap, rather than one write-protect fault each (a round trip through
 * a fault thread, where the kernel's own fault after a fork is cheap).
 * At most every 100 ms.  Caller holds no lock.
 */
void share_sweep(struct uswap_runtime *rt)
{
	uint64_t pm[MAX_FOLIO_PAGES], moved = 0, now = prim_now_us();
	uint64_t last = atomic_load(&rt->share_swept_us);
	unsigned n;

	lock_assert_none_held();
	if (now - last < 100000 ||
	    !atomic_compare_exchange_strong(&rt->share_swept_us, &last, now))
		return;
	pthread_rwlock_rdlock(&rt->op_lock);
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];
		uint32_t i = 0, j, p;

		while (i < r->nr_folios) {
			uintptr_t a0, a;
			size_t len, got;
			bool any = false;

			folio_range(r, i, &a0, &len, &p);
			for (j = i; j < r->nr_folios; j++) {
				folio_range(r, j, &a, &len, &p);
				if (a + len - a0 > ((size_t)MAX_FOLIO_PAGES << PAGE_SHIFT))
					break;
				any |= (atomic_load(&r->folios[j].flags) &
					F_SHARED) != 0;
			}
			if (any) {
				folio_range(r, j - 1, &a, &len, &p);
				got = (size_t)((a + len - a0) >> PAGE_SHIFT) * sizeof(pm[0]);
				if (prim_pread(rt->pagemap_fd, pm, got,
					  (off_t)((a0 >> PAGE_SHIFT) * sizeof(pm[0]))) != (ssize_t)got)
					goto out;
				moved += sweep_folios(rt, r, i, j, a0, pm);
			}
			i = j;
		}
	}
out:
	pthread_rwlock_unlock(&rt->op_lock);
	memcg_unshare_to_own(rt, moved);
}
