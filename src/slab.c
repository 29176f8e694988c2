// SPDX-License-Identifier: MIT
/*
 * slab.c - uswap's own memory for small objects (the kernel's kmalloc
 * caches, as far as uswap needs them).
 *
 * uswap runs inside someone else's process, and its state must never
 * live in memory it manages (DESIGN.md): a fork child starts its fault
 * threads from a fork handler, and anything it touched on the way in the
 * program's managed, swapped-out memory would wait for a fault thread
 * that does not exist yet.  The program's allocator may keep its heap
 * there (jemalloc, tcmalloc and mimalloc map their extents with mmap,
 * which the preload library manages), and it may be locked at that
 * moment (its own fork handlers).  So what uswap allocates, and what the
 * C library allocates on its behalf (a thread's DTV in pthread_create, a
 * FILE in fopen, a message catalogue in strerror), comes from here: the
 * preload's malloc family serves a thread marked with slab_self_enter()
 * from the slab, and uswap's threads are marked for their whole life.
 *
 * One reservation of SLAB_SPACE bytes, mapped MAP_NORESERVE with the raw
 * system call on first use (so that free() tells a slab block from any
 * other pointer with one range check), cut by a bump pointer into blocks
 * of power-of-two sizes from 16 bytes to 2 MiB.  A freed block goes on
 * its size's free list, for the next block of that size; nothing goes
 * back to the kernel.  Each object has a header in front of it, inside
 * its block: its size class and its offset in the block (an alignment
 * above 16 bytes moves it up).
 *
 * slab_lock protects the free lists.  It nests inside every other lock
 * and nothing is taken under it.  Around fork it is held: its handlers
 * are registered just before the runtime's (runtime.c), so that its
 * prepare runs after the runtime's (which allocates here) and its child
 * handler before.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base.h"
#include "prim.h"
#include "slab.h"

#define SLAB_SPACE	(64ul << 20)
#define SLAB_MIN_SHIFT	4
#define SLAB_MAX_SHIFT	21
#define SLAB_CLASSES	(SLAB_MAX_SHIFT - SLAB_MIN_SHIFT + 1)
#define SLAB_MAGIC	0x736c6162u	/* "slab" */

struct slab_hdr {
	uint32_t magic;
	uint32_t cls;		/* block size 1 << (cls + SLAB_MIN_SHIFT) */
	uint32_t offset;	/* of the object in its block */
	uint32_t size;		/* asked for */
};

static char *_Atomic slab_base;		/* the reservation, once mapped */
static _Atomic size_t slab_top;		/* bytes of it cut into blocks */
static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static void *free_list[SLAB_CLASSES];	/* under slab_lock; linked through
					   each block's first word */
static _Atomic bool atfork_done;
static __thread unsigned self_depth __attribute__((tls_model("initial-exec")));

void slab_self_enter(void)
{
	self_depth++;
}

void slab_self_leave(void)
{
	assert(self_depth > 0);
	self_depth--;
}

bool slab_self(void)
{
	return self_depth != 0;
}

static char *slab_space(void)
{
	char *base = atomic_load_explicit(&slab_base, memory_order_acquire);
	char *p, *none = NULL;

	if (likely(base))
		return base;
	p = prim_alloc(SLAB_SPACE);
	if (!p)
		return NULL;
	if (!atomic_compare_exchange_strong(&slab_base, &none, p)) {
		prim_free(p, SLAB_SPACE);	/* another thread's won */
		return none;
	}
	return p;
}

bool slab_owns(const void *p)
{
	const char *base = atomic_load_explicit(&slab_base,
						memory_order_relaxed);

	return base && (const char *)p >= base &&
	       (const char *)p < base + SLAB_SPACE;
}

/* A new block of class cls from the reservation, or NULL when it is full. */
static char *block_cut(char *base, unsigned cls)
{
	size_t bsize = (size_t)1 << (cls + SLAB_MIN_SHIFT);
	size_t align = MIN(bsize, PAGE_SIZE);
	size_t old = atomic_load(&slab_top), start;

	do {
		start = (old + align - 1) & ~(align - 1);
		if (start > SLAB_SPACE || bsize > SLAB_SPACE - start)
			return NULL;
	} while (!atomic_compare_exchange_weak(&slab_top, &old, start + bsize));
	return base + start;
}

void *slab_alloc(size_t size, size_t align)
{
	struct slab_hdr *h;
	size_t need;
	unsigned cls = 0;
	char *base = slab_space(), *block, *obj;

	if (!base)
		return NULL;
	if (align < sizeof(*h))
		align = sizeof(*h);
	need = size + sizeof(*h) + (align > sizeof(*h) ? align : 0);
	if (size > UINT32_MAX || need > ((size_t)1 << SLAB_MAX_SHIFT))
		return NULL;
	while (((size_t)1 << (cls + SLAB_MIN_SHIFT)) < need)
		cls++;
	pthread_mutex_lock(&slab_lock);
	block = free_list[cls];
	if (block)
		free_list[cls] = *(void **)block;
	pthread_mutex_unlock(&slab_lock);
	if (block)
		memset(block, 0, sizeof(void *));
	else if (!(block = block_cut(base, cls)))
		return NULL;
	obj = (char *)(((uintptr_t)block + sizeof(*h) + align - 1) &
		       ~(uintptr_t)(align - 1));
	h = (struct slab_hdr *)obj - 1;
	h->magic = SLAB_MAGIC;
	h->cls = cls;
	h->offset = (uint32_t)(obj - block);
	h->size = (uint32_t)size;
	memset(obj, 0, size);	/* a reused block: zeros, as calloc wants */
	return obj;
}

/*
 * p's header, or NULL if p is no live object of the slab (freed twice, or
 * not one it handed out): the program's mistake is not made worse.
 */
static struct slab_hdr *slab_hdr(const void *p)
{
	struct slab_hdr *h = (struct slab_hdr *)p - 1;

	if (((uintptr_t)p & (sizeof(*h) - 1)) || !slab_owns(p) ||
	    !slab_owns(h) || h->magic != SLAB_MAGIC || h->cls >= SLAB_CLASSES)
		return NULL;
	return h;
}

void slab_free(void *p)
{
	struct slab_hdr *h = p ? slab_hdr(p) : NULL;
	char *block;
	unsigned cls;

	if (!h)
		return;
	cls = h->cls;
	block = (char *)p - h->offset;
	h->magic = 0;
	pthread_mutex_lock(&slab_lock);
	*(void **)block = free_list[cls];
	free_list[cls] = block;
	pthread_mutex_unlock(&slab_lock);
}

size_t slab_usable_size(const void *p)
{
	const struct slab_hdr *h = slab_hdr(p);

	return h ? ((size_t)1 << (h->cls + SLAB_MIN_SHIFT)) - h->offset : 0;
}

void *slab_realloc(void *p, size_t size)
{
	struct slab_hdr *h;
	void *q;

	if (!p)
		return slab_alloc(size, 0);
	if (!size) {
		slab_free(p);
		return NULL;
	}
	h = slab_hdr(p);
	if (!h)
		return NULL;
	if (size <= slab_usable_size(p)) {
		if (size > h->size)
			memset((char *)p + h->size, 0, size - h->size);
		h->size = (uint32_t)size;
		return p;
	}
	q = slab_alloc(size, 0);
	if (!q)
		return NULL;
	memcpy(q, p, h->size);
	slab_free(p);
	return q;
}

static void slab_fork_prepare(void)
{
	pthread_mutex_lock(&slab_lock);
}

static void slab_fork_parent(void)
{
	pthread_mutex_unlock(&slab_lock);
}

static void slab_fork_child(void)
{
	pthread_mutex_init(&slab_lock, NULL);
}

/* Called by runtime.c before it registers its own (once). */
void slab_atfork_register(void)
{
	if (atomic_exchange(&atfork_done, true))
		return;
	/* glibc may allocate to record them: from here. */
	slab_self_enter();
	pthread_atfork(slab_fork_prepare, slab_fork_parent, slab_fork_child);
	slab_self_leave();
}
