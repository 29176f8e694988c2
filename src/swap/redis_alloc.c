// SPDX-License-Identifier: MIT
/*
 * redis_alloc.c - the memory hiredis allocates, from uswap's own.
 *
 * hiredis (Debian's libhiredis.a, bundled into every uswap library by the
 * Makefile) calls malloc, calloc, realloc, free and strdup.  In a program
 * under uswap those would be the program's allocator, whose heap is
 * memory uswap manages: a fault thread reading a swapped page back could
 * then fault on its own connection's buffer, which only it can bring
 * back.  So the Makefile renames those five calls in hiredis's objects to
 * the rs_hi_* functions here: small blocks come from the slab (slab.h),
 * large ones (a batch's pipelined commands or replies) from mappings of
 * their own, all of it memory uswap never manages.
 *
 * A large block has a header in front of it with the length of its
 * mapping; slab_owns() tells the two kinds apart.
 */
#include <string.h>

#include "base.h"
#include "prim.h"
#include "slab.h"

#define LARGE_MIN	(64u << 10)	/* from here on: a mapping of its own */
#define LARGE_HDR	16u		/* keeps the block 16-byte aligned */

void *rs_hi_malloc(size_t n);
void *rs_hi_calloc(size_t nmemb, size_t size);
void *rs_hi_realloc(void *p, size_t n);
void rs_hi_free(void *p);
char *rs_hi_strdup(const char *s);

static size_t large_len(const void *p)
{
	return *(const size_t *)((const char *)p - LARGE_HDR);
}

void *rs_hi_malloc(size_t n)
{
	size_t len;
	char *m;

	if (n < LARGE_MIN)
		return slab_alloc(n ? n : 1, 0);
	if (n > SIZE_MAX - LARGE_HDR - PAGE_SIZE)
		return NULL;
	len = (n + LARGE_HDR + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
	m = prim_alloc(len);
	if (!m)
		return NULL;
	*(size_t *)m = len;
	return m + LARGE_HDR;
}

void *rs_hi_calloc(size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	return rs_hi_malloc(nmemb * size);	/* both kinds come zeroed */
}

void rs_hi_free(void *p)
{
	if (!p)
		return;
	if (slab_owns(p))
		slab_free(p);
	else
		prim_free((char *)p - LARGE_HDR, large_len(p));
}

void *rs_hi_realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (!p)
		return rs_hi_malloc(n);
	have = slab_owns(p) ? slab_usable_size(p) : large_len(p) - LARGE_HDR;
	if (n <= have && (n >= LARGE_MIN || slab_owns(p)))
		return p;
	q = rs_hi_malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, MIN(have, n));
	rs_hi_free(p);
	return q;
}

char *rs_hi_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = rs_hi_malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}
