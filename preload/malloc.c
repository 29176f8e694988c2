// SPDX-License-Identifier: MIT
/*
 * malloc.c - the malloc family of libuswap_preload.so: large blocks become
 * managed memory.
 *
 * glibc's malloc maps its large blocks with its internal __mmap, which the
 * mmap() of preload.c never sees.  So the preload library interposes the
 * malloc family too, and splits the requests by size:
 *
 *   size >= --min-region   a block of its own: uswap_mmap() of the
 *                          process's runtime (page-rounded, MAP_NORESERVE),
 *                          uswap_munmap() on free, uswap_mremap() with
 *                          MREMAP_MAYMOVE on realloc, so that swapped-out
 *                          contents move without being read;
 *   smaller                the program's own allocator, found with
 *                          dlsym(RTLD_NEXT): glibc, or jemalloc when the
 *                          program is linked with it.
 *
 * Recognising blocks.  free() and malloc_usable_size() receive pointers of
 * both allocators and must never read memory that belongs to the other
 * one, so nothing is stored in front of a block.  Our blocks are kept in
 * a table instead: an open-addressing hash of their addresses (linear
 * probing, deletion by backward shift), in memory mapped with the raw
 * system call.  A block always starts on a page boundary, so a pointer
 * that does not is answered without the table's lock.
 *
 * Bootstrap.  dlsym() itself may call calloc() before the real functions
 * are known: while they are looked up, requests are served from uswap's
 * own memory (the library's slab, src/slab.c), whose blocks free() and
 * realloc() recognise and never pass to the program's allocator.
 *
 * uswap's own allocations.  uswap must neither allocate a managed block
 * for itself, nor re-enter the program's allocator, which may be its
 * caller (jemalloc's first mmap creates the runtime while jemalloc holds
 * its init lock), may be locked (its fork handlers), or may keep its heap
 * in managed memory that a fork child cannot read before its fault
 * threads run.  So a thread marked as uswap's (slab_self(): uswap's
 * threads always; any thread creating the runtime, mapping or unmapping
 * a block, or in the runtime's fork handlers) is served from the slab:
 * what the C library allocates for uswap there (a new thread's DTV, a
 * FILE) too.  Only when the slab is full does it get the program's.
 *
 * Failure.  When there is no runtime (it could not start), or uswap
 * cannot map a block, the request goes to the program's allocator: the
 * program gets unmanaged memory rather than none.  Only a realloc that
 * cannot move a block fails, with ENOMEM, keeping the block.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uswap.h"
#include "options.h"	/* OPTIONS_MIN_REGION_DEFAULT */
#include "slab.h"


#define EXPORT		__attribute__((visibility("default")))
#define BLOCK_PAGE	4096ul
#define MIN_ALIGN	16ul

struct uswap_runtime *preload_runtime(void);	/* preload.c */

/* The program's allocator, resolved once (real_resolve). */
static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
} real;
/*
 * real's state.  One thread moves it from UNKNOWN to RESOLVING and fills
 * real; meanwhile every request (dlsym's own, another thread's) is served
 * from the slab.
 */
enum { REAL_UNKNOWN, REAL_RESOLVING, REAL_READY, REAL_MISSING };
static int real_state;

/* Smallest managed block; SIZE_MAX (nothing managed) until malloc_init(). */
static size_t large_min = SIZE_MAX;

/*
 * The table of our blocks.  block_lock protects blocks, blocks_shift and
 * nr_blocks (written under it; nr_blocks is also read without it, to skip
 * the lock while there are no blocks).  It nests inside nothing and
 * nothing nests inside it: uswap is never called with it held.
 */
struct block {
	uintptr_t addr;		/* 0: an empty slot */
	size_t len;		/* bytes mapped, a multiple of the page */
};
static struct block *blocks;
static unsigned blocks_shift;	/* capacity is 1 << blocks_shift, or 0 */
static size_t nr_blocks;	/* entries, plus slots reserved (block_take) */
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t page_round(size_t n)
{
	return (n + BLOCK_PAGE - 1) & ~(BLOCK_PAGE - 1);
}

static bool power_of_2(size_t n)
{
	return n && !(n & (n - 1));
}

/* ---- the program's allocator ---- */

/*
 * The next definition of name after this library; an optional one (the
 * aligned variants, malloc_usable_size) only from the object that defines
 * malloc: jemalloc has no pvalloc, and glibc's would hand out a block of
 * glibc's heap that jemalloc's free cannot take.  Without it the fallbacks
 * below go through the allocator's memalign or posix_memalign.
 */
static void *real_lookup(const char *name, const void *malloc_base)
{
	void *f = dlsym(RTLD_NEXT, name);
	Dl_info info;

	if (!f || !malloc_base)
		return f;
	if (!dladdr(f, &info) || info.dli_fbase != malloc_base)
		return NULL;
	return f;
}

#define RESOLVE(name, base)					\
	do {							\
		void *f = real_lookup(#name, base);		\
								\
		memcpy(&real.name, &f, sizeof(f));		\
	} while (0)

/*
 * Look up the program's allocator.  Returns false while it is being
 * looked up (by this thread, dlsym allocating, or by another), or when
 * malloc, calloc, realloc or free cannot be found: the caller uses the
 * slab.
 */
static bool real_resolve(void)
{
	int state = __atomic_load_n(&real_state, __ATOMIC_ACQUIRE);
	const void *base = NULL;
	Dl_info info;
	void *m;

	if (__builtin_expect(state == REAL_READY, 1))
		return true;
	if (state != REAL_UNKNOWN ||
	    !__atomic_compare_exchange_n(&real_state, &state, REAL_RESOLVING,
					 false, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE))
		return false;
	RESOLVE(malloc, NULL);
	RESOLVE(calloc, NULL);
	RESOLVE(realloc, NULL);
	RESOLVE(free, NULL);
	memcpy(&m, &real.malloc, sizeof(m));
	if (m && dladdr(m, &info))
		base = info.dli_fbase;
	RESOLVE(posix_memalign, base);
	RESOLVE(aligned_alloc, base);
	RESOLVE(memalign, base);
	RESOLVE(valloc, base);
	RESOLVE(pvalloc, base);
	RESOLVE(malloc_usable_size, base);
	state = real.malloc && real.calloc && real.realloc && real.free ?
		REAL_READY : REAL_MISSING;
	__atomic_store_n(&real_state, state, __ATOMIC_RELEASE);
	return state == REAL_READY;
}

/* An aligned block of the program's allocator, by whatever it offers. */
static void *real_memalign(size_t align, size_t size)
{
	void *p;
	int err;

	if (real.memalign)
		return real.memalign(align, size);
	if (!real.posix_memalign) {
		errno = ENOMEM;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	err = real.posix_memalign(&p, align, size);
	if (err) {
		errno = err;
		return NULL;
	}
	return p;
}

/* ---- the table of blocks ---- */

static void *raw_mmap(void *addr, size_t len, int prot, int flags)
{
	return (void *)syscall(SYS_mmap, addr, len, prot,
			       flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void raw_munmap(void *addr, size_t len)
{
	syscall(SYS_munmap, addr, len);
}

static size_t block_hash(uintptr_t addr, unsigned shift)
{
	return (size_t)(((addr >> 12) * 0x9E3779B97F4A7C15ull) >> (64 - shift));
}

/* Slot of addr, or of the empty slot where it would go.  Lock held. */
static size_t block_slot_locked(uintptr_t addr)
{
	size_t mask = ((size_t)1 << blocks_shift) - 1;
	size_t i = block_hash(addr, blocks_shift);

	while (blocks[i].addr && blocks[i].addr != addr)
		i = (i + 1) & mask;
	return i;
}

/* Double the table (or create it).  0 or -ENOMEM.  Lock held. */
static int block_grow_locked(void)
{
	unsigned old_shift = blocks_shift, shift = old_shift ? old_shift + 1 : 8;
	size_t old_cap = old_shift ? (size_t)1 << old_shift : 0, i;
	struct block *old = blocks, *tab;

	tab = raw_mmap(NULL, sizeof(*tab) << shift, PROT_READ | PROT_WRITE, 0);
	if (tab == MAP_FAILED)
		return -ENOMEM;
	blocks = tab;
	blocks_shift = shift;
	for (i = 0; i < old_cap; i++)
		if (old[i].addr)
			blocks[block_slot_locked(old[i].addr)] = old[i];
	if (old)
		raw_munmap(old, sizeof(*old) << old_shift);
	return 0;
}

/*
 * Enter [addr, addr+len).  reserved: into the slot that block_take(keep)
 * kept, which cannot fail.  0 or -ENOMEM.
 */
static int block_add(uintptr_t addr, size_t len, bool reserved)
{
	size_t cap;
	int err = 0;

	pthread_mutex_lock(&block_lock);
	/* At most half full: probe sequences stay short. */
	cap = blocks_shift ? (size_t)1 << blocks_shift : 0;
	if (!reserved && (nr_blocks + 1) * 2 > cap)
		err = block_grow_locked();
	if (!err) {
		blocks[block_slot_locked(addr)] = (struct block){ addr, len };
		if (!reserved)
			__atomic_store_n(&nr_blocks, nr_blocks + 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&block_lock);
	return err;
}

/* Could p be one of our blocks?  Decided without the lock. */
static bool block_maybe(const void *p)
{
	return !((uintptr_t)p & (BLOCK_PAGE - 1)) &&
	       __atomic_load_n(&nr_blocks, __ATOMIC_RELAXED);
}

/* Is p one of our blocks?  Then *len is its length. */
static bool block_find(const void *p, size_t *len)
{
	size_t i;
	bool found;

	if (!block_maybe(p))
		return false;
	pthread_mutex_lock(&block_lock);
	i = block_slot_locked((uintptr_t)p);
	found = blocks[i].addr;
	if (found)
		*len = blocks[i].len;
	pthread_mutex_unlock(&block_lock);
	return found;
}

/*
 * Remove block p from the table, if it is one, and set *len.  keep: its
 * slot stays counted, for one block_add(..., true) (realloc moving it).
 */
static bool block_take(void *p, size_t *len, bool keep)
{
	size_t mask, i, j, k;

	if (!block_maybe(p))
		return false;
	pthread_mutex_lock(&block_lock);
	i = block_slot_locked((uintptr_t)p);
	if (!blocks[i].addr) {
		pthread_mutex_unlock(&block_lock);
		return false;
	}
	*len = blocks[i].len;
	if (!keep)
		__atomic_store_n(&nr_blocks, nr_blocks - 1, __ATOMIC_RELAXED);
	/*
	 * Backward shift: move later entries of the probe run into the hole
	 * unless their home slot lies cyclically in (hole, entry].
	 */
	mask = ((size_t)1 << blocks_shift) - 1;
	for (;;) {
		blocks[i].addr = 0;
		for (j = i;;) {
			j = (j + 1) & mask;
			if (!blocks[j].addr)
				goto out;
			k = block_hash(blocks[j].addr, blocks_shift);
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		blocks[i] = blocks[j];
		i = j;
	}
out:
	pthread_mutex_unlock(&block_lock);
	return true;
}

/* ---- managed blocks ---- */

/*
 * Map len bytes (page multiple) aligned to align (a power of two above the
 * page): reserve len + align - page bytes, put the managed mapping over
 * the aligned part of the reservation, and return the rest.
 */
static void *map_aligned(struct uswap_runtime *rt, size_t len, size_t align)
{
	size_t span = len + align - BLOCK_PAGE;
	uintptr_t base, start;
	void *p;

	if (span < len)
		return MAP_FAILED;
	p = raw_mmap(NULL, span, PROT_NONE, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	base = (uintptr_t)p;
	start = (base + align - 1) & ~(uintptr_t)(align - 1);
	p = uswap_mmap(rt, (void *)start, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
		       -1, 0);
	if (p == MAP_FAILED) {
		raw_munmap((void *)base, span);
		return MAP_FAILED;
	}
	if (start > base)
		raw_munmap((void *)base, start - base);
	if (base + span > start + len)
		raw_munmap((void *)(start + len), base + span - (start + len));
	return p;
}

/*
 * Serve size bytes aligned to align (a power of two, or 0) from a managed
 * block.  Returns false when it cannot (no runtime, or no memory): the
 * caller asks the program's allocator instead.
 */
static bool managed_alloc(size_t size, size_t align, void **out)
{
	size_t len = page_round(size);
	struct uswap_runtime *rt;
	int saved = errno;
	void *p = MAP_FAILED;

	if (len < size)
		return false;
	slab_self_enter();
	rt = preload_runtime();
	if (rt && align <= BLOCK_PAGE)
		p = uswap_mmap(rt, NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	else if (rt)
		p = map_aligned(rt, len, align);
	if (p != MAP_FAILED && block_add((uintptr_t)p, len, false)) {
		uswap_munmap(rt, p, len);
		p = MAP_FAILED;
	}
	slab_self_leave();
	errno = saved;
	if (p == MAP_FAILED)
		return false;
	*out = p;
	return true;
}

/* Unmap block p of len bytes, already taken from the table. */
static void block_unmap(void *p, size_t len)
{
	int saved = errno;

	slab_self_enter();
	uswap_munmap(preload_runtime(), p, len);
	slab_self_leave();
	errno = saved;
}

/*
 * Mark this thread as inside uswap, for a caller outside this file that
 * enters uswap where the program's allocator may be busy: preload.c
 * around the creation of the runtime (from the program's first mmap,
 * which may come from inside its allocator).  Nests.
 */
void preload_uswap_enter(void);
void preload_uswap_enter(void)
{
	slab_self_enter();
}

void preload_uswap_leave(void);
void preload_uswap_leave(void)
{
	slab_self_leave();
}

static bool is_large(size_t size)
{
	return size >= __atomic_load_n(&large_min, __ATOMIC_RELAXED) &&
	       !slab_self();
}

/* ---- the interface ---- */

/*
 * Requests that the program's allocator must not see: those made before
 * it is known (dlsym allocating), and uswap's own (slab_self()).  Both
 * come from the slab; returns true with *out set (NULL with ENOMEM if the
 * slab is full before the allocator is known), or false: the caller
 * serves the request.  A full slab sends uswap's own requests to the
 * program's allocator.
 */
static bool early_alloc(size_t align, size_t size, void **out)
{
	if (__builtin_expect(!real_resolve(), 0)) {
		*out = slab_alloc(size, align);
		if (!*out)
			errno = ENOMEM;
		return true;
	}
	if (__builtin_expect(slab_self(), 0)) {
		*out = slab_alloc(size, align);
		return *out != NULL;
	}
	return false;
}

EXPORT void *malloc(size_t size)
{
	void *p;

	if (early_alloc(MIN_ALIGN, size, &p))
		return p;
	if (is_large(size) && managed_alloc(size, 0, &p))
		return p;
	return real.malloc(size);
}

/* A fresh managed block reads as zeros: nothing to clear. */
EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (early_alloc(MIN_ALIGN, total, &p))
		return p;
	if (is_large(total) && managed_alloc(total, 0, &p))
		return p;
	return real.calloc(n, size);
}

EXPORT void free(void *p)
{
	size_t len;

	if (!p)
		return;
	if (slab_owns(p)) {
		slab_free(p);
		return;
	}
	if (block_take(p, &len, false)) {
		block_unmap(p, len);
		return;
	}
	if (real_resolve())
		real.free(p);
}

/* realloc of a block of the slab: there, or where malloc() says if full. */
static void *slab_block_realloc(void *p, size_t size)
{
	size_t old = slab_usable_size(p);
	void *q = slab_realloc(p, size);

	if (q || !size)
		return q;
	q = malloc(size);
	if (q) {
		memcpy(q, p, old < size ? old : size);
		slab_free(p);
	}
	return q;
}

/*
 * realloc of our block p of len bytes.  Large to large moves the mapping
 * (swapped-out contents are not read); large to small copies into the
 * program's allocator.  On failure p is kept and NULL returned.
 */
static void *block_realloc(void *p, size_t len, size_t size)
{
	size_t new_len = page_round(size);
	void *q;

	if (!size) {		/* glibc's realloc(p, 0): free(p) */
		free(p);
		return NULL;
	}
	if (!is_large(size)) {
		q = malloc(size);
		if (q) {
			memcpy(q, p, size);
			free(p);
		}
		return q;
	}
	if (new_len < size) {
		errno = ENOMEM;
		return NULL;
	}
	if (new_len == len)
		return p;
	block_take(p, &len, true);
	slab_self_enter();
	q = uswap_mremap(preload_runtime(), p, len, new_len, MREMAP_MAYMOVE,
			 NULL);
	slab_self_leave();
	if (q == MAP_FAILED) {
		block_add((uintptr_t)p, len, true);
		errno = ENOMEM;
		return NULL;
	}
	block_add((uintptr_t)q, new_len, true);
	return q;
}

/* realloc of the program allocator's p to a large size: into a block. */
static void *foreign_realloc(void *p, size_t size)
{
	size_t old;
	void *q;

	if (!real.malloc_usable_size || !managed_alloc(size, 0, &q))
		return real.realloc(p, size);
	old = real.malloc_usable_size(p);
	memcpy(q, p, old < size ? old : size);
	real.free(p);
	return q;
}

EXPORT void *realloc(void *p, size_t size)
{
	size_t len;

	if (!p)
		return malloc(size);
	if (slab_owns(p))
		return slab_block_realloc(p, size);
	if (block_find(p, &len))
		return block_realloc(p, len, size);
	if (!real_resolve()) {
		errno = ENOMEM;
		return NULL;
	}
	if (is_large(size))
		return foreign_realloc(p, size);
	return real.realloc(p, size);
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!power_of_2(align) || align % sizeof(void *))
		return EINVAL;
	if (early_alloc(align, size, &p) ||
	    (is_large(size) && managed_alloc(size, align, &p))) {
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (real.posix_memalign)
		return real.posix_memalign(out, align, size);
	p = real_memalign(align, size);
	if (!p)
		return errno;
	*out = p;
	return 0;
}

/* C11 wants a power of two (glibc 2.38 checks it too). */
EXPORT void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (!power_of_2(align)) {
		errno = EINVAL;
		return NULL;
	}
	if (early_alloc(align, size, &p))
		return p;
	if (is_large(size) && managed_alloc(size, align, &p))
		return p;
	if (real.aligned_alloc)
		return real.aligned_alloc(align, size);
	return real_memalign(align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
	size_t a = align;
	void *p;

	/* As glibc: an alignment that is no power of two is rounded up. */
	if (a > ((size_t)-1 >> 1) + 1) {
		errno = EINVAL;
		return NULL;
	}
	while (!power_of_2(a))
		a = a ? (a | (a - 1)) + 1 : 1;
	if (early_alloc(a, size, &p))
		return p;
	if (is_large(size) && managed_alloc(size, a, &p))
		return p;
	return real_memalign(align, size);
}

EXPORT void *valloc(size_t size)
{
	void *p;

	if (early_alloc(BLOCK_PAGE, size, &p))
		return p;
	if (is_large(size) && managed_alloc(size, BLOCK_PAGE, &p))
		return p;
	if (real.valloc)
		return real.valloc(size);
	return real_memalign(BLOCK_PAGE, size);
}

EXPORT void *pvalloc(size_t size)
{
	size_t len = size ? page_round(size) : BLOCK_PAGE;
	void *p;

	if (len < size) {
		errno = ENOMEM;
		return NULL;
	}
	if (early_alloc(BLOCK_PAGE, len, &p))
		return p;
	if (is_large(len) && managed_alloc(len, BLOCK_PAGE, &p))
		return p;
	if (real.pvalloc)
		return real.pvalloc(size);
	return real_memalign(BLOCK_PAGE, len);
}

EXPORT size_t malloc_usable_size(void *p)
{
	size_t len;

	if (!p)
		return 0;
	if (slab_owns(p))
		return slab_usable_size(p);
	if (block_find(p, &len))
		return len;
	if (real_resolve() && real.malloc_usable_size)
		return real.malloc_usable_size(p);
	return 0;
}

/* ---- start-up and fork ---- */

/* A forked child must not inherit block_lock held by another thread. */
static void block_atfork_prepare(void)
{
	pthread_mutex_lock(&block_lock);
}

static void block_atfork_release(void)
{
	pthread_mutex_unlock(&block_lock);
}

/*
 * Before preload.c's constructor (priority): find the program's allocator
 * and the threshold, USWAP_MIN_REGION as the runtime reads it (a bad value
 * leaves the default; the runtime then refuses to start, and with no
 * runtime every request goes to the program's allocator).  Until this
 * has run nothing is managed: the C library may allocate before the
 * environment is readable.
 */
__attribute__((constructor(101))) static void malloc_init(void)
{
	const char *s = getenv("USWAP_MIN_REGION");
	uint64_t v = OPTIONS_MIN_REGION_DEFAULT;

	real_resolve();
	pthread_atfork(block_atfork_prepare, block_atfork_release,
		       block_atfork_release);
	if (s && *s && uswap_size_parse(s, &v))
		v = OPTIONS_MIN_REGION_DEFAULT;
	if (v < BLOCK_PAGE)
		v = BLOCK_PAGE;
	__atomic_store_n(&large_min, (size_t)v, __ATOMIC_RELAXED);
}
