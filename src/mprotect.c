// SPDX-License-Identifier: MIT
/*
 * mprotect.c - mprotect(2) and pkey_mprotect(2) of managed memory (the
 * kernel's mm/mprotect.c, as far as uswap must know).
 *
 * A protection is the program's: uswap neither lifts nor adds one.  What
 * it must know is where pages are not plainly read-write (or are under a
 * protection key): reclaim may not touch such a page in place (a
 * PROT_NONE page would fault in the reclaimer, and the fault would not
 * be the program's), nor move it (UFFDIO_MOVE wants both ends writable
 * and alike).  Their folios are evicted write-protected in place and read
 * through /proc/self/mem, which reads any page without touching it
 * (vmscan.c, step 2b).  A page that comes back from swap is installed by
 * the kernel with its mapping's protection, so it comes back as it left.
 *
 * The change settles its range first (mmap.c settle_range(): no folio of
 * the regions it touches is being evicted or brought in), and is made in
 * the kernel and in vma.c's copy together, under op_lock held for
 * writing: reclaim never sees one without the other.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"
#include "vma.h"

struct prot_change {
	int prot;
	int pkey;	/* -1: unchanged, as mprotect(2) leaves it */
};

static void set_prot(struct vma_attr *a, const void *arg)
{
	const struct prot_change *c = arg;

	a->prot = (uint8_t)(c->prot & (PROT_READ | PROT_WRITE | PROT_EXEC));
	if (c->pkey >= 0)
		a->pkey = (int16_t)c->pkey;
}

static int change_protection(struct uswap_runtime *rt, void *addr, size_t len,
			     int prot, int pkey)
{
	uintptr_t s = (uintptr_t)addr, e;
	struct prot_change c = { .prot = prot, .pkey = pkey };
	unsigned i;
	int err;

	if (!rt || !len || (s & (PAGE_SIZE - 1)) ||
	    !uswap_is_managed(rt, addr, len))
		return prim_libc_result(prim_mprotect(addr, len, prot, pkey));
	e = s + ((len + PAGE_SIZE - 1) & PAGE_MASK);
	if (e < s) {
		errno = ENOMEM;
		return -1;
	}
	settle_range(rt, s, e);
	err = prim_mprotect(addr, len, prot, pkey);
	if (!err) {
		for (i = 0; i < rt->nr_regions; i++) {
			struct region *r = rt->regions[i];
			uintptr_t a = MAX(s, r->start), b = MIN(e, r->end);

			/*
			 * Not recorded (no memory for the copy): where it can
			 * move pages, reclaim learns it from the kernel's
			 * refusal (EINVAL) all the same.
			 */
			if (a < b && vma_update(&rt->vmas, a, b, set_prot, &c))
				uswap_log_once(&rt->logged_move,
					       "out of memory recording the protection of %p",
					       (void *)a);
		}
	}
	settle_done(rt);
	return prim_libc_result(err);
}

EXPORT int uswap_mprotect(struct uswap_runtime *rt, void *addr, size_t len,
			  int prot)
{
	return change_protection(rt, addr, len, prot, -1);
}

EXPORT int uswap_pkey_mprotect(struct uswap_runtime *rt, void *addr,
			       size_t len, int prot, int pkey)
{
	if (pkey < 0) {
		/* The kernel takes -1 as "no key change"; so do we. */
		return change_protection(rt, addr, len, prot, -1);
	}
	return change_protection(rt, addr, len, prot, pkey);
}
