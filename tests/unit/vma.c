// SPDX-License-Identifier: MIT
/*
 * vma.c - the segments of managed memory's attributes (src/vma.c) against
 * a page-by-page model: random protections, locks, pins, forgets and
 * moves over 256 pages, after each of which every page's attributes,
 * vma_flags() of random ranges and the unevictable page counts must
 * agree with the model, and the segments must be sorted, disjoint,
 * never default and never mergeable.
 */
#include <stdbool.h>
#include <sys/mman.h>

#include "base.h"
#include "vma.h"
#include "testlib.h"

#define NPAGES	256u
#define BASE	((uintptr_t)1 << 30)
#define RW	(PROT_READ | PROT_WRITE)

static struct vma_attr model[NPAGES];
static struct vma_map map;

static uintptr_t addr(unsigned p)
{
	return BASE + ((uintptr_t)p << PAGE_SHIFT);
}

static void set_prot(struct vma_attr *a, const void *arg)
{
	a->prot = (uint8_t)*(const int *)arg;
}

static void set_lock(struct vma_attr *a, const void *arg)
{
	a->lock = *(const uint8_t *)arg;
}

static void add_pin(struct vma_attr *a, const void *arg)
{
	int d = *(const int *)arg;

	if (d < 0 && a->pins == 0)
		return;
	a->pins += (uint32_t)d;
}

static bool is_default(const struct vma_attr *a)
{
	return a->prot == RW && !a->pkey && !a->lock && !a->pins;
}

static bool same(const struct vma_attr *a, const struct vma_attr *b)
{
	return a->prot == b->prot && a->pkey == b->pkey && a->lock == b->lock &&
	       a->pins == b->pins;
}

static void check(unsigned step, uint64_t *rng)
{
	const struct vma_seg *seg;
	unsigned n, k, p, q;
	uint64_t added, total, want_total = 0, want_added = 0;

	seg = vma_segments(&map, &n);
	for (k = 0; k < n; k++) {
		if (seg[k].start >= seg[k].end || (k && seg[k].start < seg[k - 1].end))
			t_fail("step %u: segment %u out of order", step, k);
		if (is_default(&seg[k].a))
			t_fail("step %u: segment %u holds the default", step, k);
		if (k && seg[k].start == seg[k - 1].end && same(&seg[k].a, &seg[k - 1].a))
			t_fail("step %u: segments %u and %u should be one", step, k - 1, k);
	}
	for (p = 0; p < NPAGES; p++) {
		struct vma_attr a = { .prot = RW };
		unsigned want = 0, got;

		for (k = 0; k < n; k++)
			if (seg[k].start <= addr(p) && addr(p) < seg[k].end)
				a = seg[k].a;
		if (!same(&a, &model[p]))
			t_fail("step %u: page %u: prot %u lock %u pins %u, model prot %u lock %u pins %u",
			       step, p, a.prot, a.lock, a.pins, model[p].prot,
			       model[p].lock, model[p].pins);
		want_total += model[p].lock || model[p].pins;
		(void)want;
		got = vma_flags(&map, addr(p), addr(p + 1));
		want = (model[p].prot != RW ? VMA_PROTECTED : 0) |
		       (model[p].lock ? VMA_LOCKED : 0) |
		       (model[p].pins ? VMA_PINNED : 0) |
		       (model[p].lock == VMA_LOCK_ONFAULT ? VMA_ONFAULT : 0);
		if (got != want)
			t_fail("step %u: vma_flags of page %u: %#x, want %#x", step,
			       p, got, want);
	}
	p = (unsigned)(t_rand(rng) % NPAGES);
	q = p + 1 + (unsigned)(t_rand(rng) % (NPAGES - p));
	for (k = p; k < q; k++)
		want_added += !model[k].lock && !model[k].pins;
	vma_unevictable_pages(&map, addr(p), addr(q), &added, &total);
	if (total != want_total || added != want_added)
		t_fail("step %u: unevictable %llu (want %llu), [%u, %u) adds %llu (want %llu)",
		       step, (unsigned long long)total, (unsigned long long)want_total,
		       p, q, (unsigned long long)added, (unsigned long long)want_added);
}

int main(void)
{
	uint64_t rng = 12345;
	unsigned step, p, q, k;

	for (p = 0; p < NPAGES; p++)
		model[p].prot = RW;
	for (step = 0; step < 20000; step++) {
		unsigned op = (unsigned)(t_rand(&rng) % 100);

		p = (unsigned)(t_rand(&rng) % NPAGES);
		q = p + 1 + (unsigned)(t_rand(&rng) % (NPAGES - p > 32 ? 32 : NPAGES - p));
		if (op < 30) {
			static const int prots[] = { PROT_NONE, PROT_READ, RW, RW };
			int prot = prots[t_rand(&rng) % 4];

			if (vma_update(&map, addr(p), addr(q), set_prot, &prot))
				t_fail("vma_update: out of memory");
			for (k = p; k < q; k++)
				model[k].prot = (uint8_t)prot;
		} else if (op < 55) {
			uint8_t lock = (uint8_t)(t_rand(&rng) % 3);

			if (vma_update(&map, addr(p), addr(q), set_lock, &lock))
				t_fail("vma_update: out of memory");
			for (k = p; k < q; k++)
				model[k].lock = lock;
		} else if (op < 80) {
			int d = t_rand(&rng) & 1 ? 1 : -1;

			if (vma_update(&map, addr(p), addr(q), add_pin, &d))
				t_fail("vma_update: out of memory");
			for (k = p; k < q; k++)
				if (d > 0 || model[k].pins)
					model[k].pins += (uint32_t)d;
		} else if (op < 90) {
			vma_forget(&map, addr(p), addr(q));
			for (k = p; k < q; k++)
				model[k] = (struct vma_attr){ .prot = RW };
		} else if (op < 95) {
			vma_clear_locks(&map);
			for (k = 0; k < NPAGES; k++)
				model[k].lock = model[k].pins = 0;
		} else {
			/* A range moves in place and shrinks or grows (mremap). */
			unsigned len = q - p, nlen = 1 + (unsigned)(t_rand(&rng) %
						(NPAGES - p));
			struct vma_attr tail = model[q - 1];

			vma_move(&map, addr(p), (size_t)len << PAGE_SHIFT, addr(p),
				 (size_t)nlen << PAGE_SHIFT);
			for (k = p + nlen; k < q; k++)
				model[k] = (struct vma_attr){ .prot = RW };
			for (k = q; k < p + nlen; k++)
				model[k] = tail;
		}
		check(step, &rng);
	}
	vma_map_destroy(&map);
	printf("vma: 20000 random steps agree with the page model\n");
	return 0;
}
