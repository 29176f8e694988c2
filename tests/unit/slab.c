// SPDX-License-Identifier: MIT
/*
 * slab.c - uswap's own small-object memory (src/slab.c) against a simple
 * model: random allocations, frees and reallocs of sizes up to 64 KiB and
 * alignments up to a page, from several threads at once; every object is
 * zeroed when handed out, keeps its bytes until freed (and across a
 * realloc, up to the smaller size), is aligned as asked, is the slab's
 * (slab_owns), and never overlaps another live object; a freed block is
 * used again; a pointer that is no live object is ignored by free.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "slab.h"
#include "testlib.h"

#define THREADS		4
#define SLOTS		512
#define ROUNDS		40000

struct obj {
	unsigned char *p;
	size_t size;
	unsigned char tag;
};

static size_t pick_size(uint64_t *s)
{
	switch (t_rand(s) % 8) {
	case 0:
		return t_rand(s) % (64 << 10);
	case 1:
	case 2:
		return t_rand(s) % 4096;
	default:
		return t_rand(s) % 256;
	}
}

static void check_obj(const struct obj *o, unsigned id)
{
	size_t k;

	for (k = 0; k < o->size; k++)
		if (o->p[k] != o->tag)
			t_fail("object %u: byte %zu of %zu changed", id, k, o->size);
}

static void *worker(void *arg)
{
	uint64_t s = (uintptr_t)arg * 77 + 1;
	struct obj objs[SLOTS] = { { 0 } };
	unsigned r, i;

	for (r = 0; r < ROUNDS; r++) {
		struct obj *o = &objs[t_rand(&s) % SLOTS];
		unsigned op = t_rand(&s) % 3;

		if (o->p)
			check_obj(o, (unsigned)(o - objs));
		if (o->p && op == 0) {
			slab_free(o->p);
			o->p = NULL;
		} else if (o->p && op == 1) {
			size_t size = pick_size(&s), k;
			unsigned char *q = slab_realloc(o->p, size);

			if (!q && size)
				t_fail("slab_realloc of %zu bytes failed", size);
			if (!size) {
				o->p = NULL;
				continue;
			}
			for (k = 0; k < (size < o->size ? size : o->size); k++)
				if (q[k] != o->tag)
					t_fail("realloc lost byte %zu", k);
			o->p = q;
			o->size = size;
			memset(o->p, o->tag, o->size);
		} else if (!o->p) {
			size_t align = (size_t)16 << (t_rand(&s) % 9), k;

			o->size = pick_size(&s);
			o->p = slab_alloc(o->size, align);
			if (!o->p)
				t_fail("slab_alloc of %zu bytes failed", o->size);
			if ((uintptr_t)o->p & (align - 1))
				t_fail("%p is not aligned to %zu", (void *)o->p, align);
			if (!slab_owns(o->p) || slab_usable_size(o->p) < o->size)
				t_fail("not the slab's, or too small");
			for (k = 0; k < o->size; k++)
				if (o->p[k])
					t_fail("a new object is not zeroed (byte %zu)", k);
			o->tag = (unsigned char)(t_rand(&s) | 1);
			memset(o->p, o->tag, o->size);
		}
	}
	for (i = 0; i < SLOTS; i++)
		if (objs[i].p) {
			check_obj(&objs[i], i);
			slab_free(objs[i].p);
		}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	unsigned char *a, *b, stack_byte = 0;
	unsigned k;

	/* A freed block is used again, and free ignores what is no object. */
	a = slab_alloc(100, 0);
	slab_free(a);
	slab_free(a);			/* twice: ignored */
	b = slab_alloc(100, 0);
	if (a != b)
		t_fail("a freed block was not used again");
	slab_free(b + 1);		/* inside an object: ignored */
	if (slab_owns(&stack_byte))
		t_fail("the stack is the slab's");
	if (slab_alloc((size_t)4 << 20, 0))
		t_fail("4 MiB from the slab");
	slab_free(b);

	for (k = 0; k < THREADS; k++)
		pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)k);
	for (k = 0; k < THREADS; k++)
		pthread_join(th[k], NULL);
	printf("slab: %u threads x %u rounds\n", THREADS, ROUNDS);
	return 0;
}
