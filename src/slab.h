/* SPDX-License-Identifier: MIT */
/*
 * slab.h - uswap's own memory for small objects (slab.c), and the mark of
 * a thread whose allocations are uswap's own.  Included by the preload
 * library's malloc family too (preload/malloc.c), which serves a marked
 * thread from here.
 */
#ifndef USWAP_SLAB_H
#define USWAP_SLAB_H

#include <stdbool.h>
#include <stddef.h>

/*
 * size bytes aligned to align (a power of two; 0: 16), zeroed, from
 * memory uswap maps for itself and never manages.  NULL when full.
 */
void *slab_alloc(size_t size, size_t align);
void slab_free(void *p);
/* realloc of a slab block: NULL (p kept) when full; size 0 frees p. */
void *slab_realloc(void *p, size_t size);
/* Is p a block of the slab?  Cheap: one range check. */
bool slab_owns(const void *p);
size_t slab_usable_size(const void *p);
/* The slab's fork handlers; registered before the runtime's (runtime.c). */
void slab_atfork_register(void);

/*
 * The calling thread's allocations are uswap's own while it is marked:
 * uswap's threads for their whole life, and every thread while it runs
 * uswap's code that may allocate where the program's allocator must not
 * be used (creating a runtime, fork handlers, starting threads).  Marks
 * nest.  Only the preload library acts on them: there the malloc family
 * serves a marked thread from the slab.
 */
void slab_self_enter(void);
void slab_self_leave(void);
bool slab_self(void);

#endif /* USWAP_SLAB_H */
