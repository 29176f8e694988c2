/* SPDX-License-Identifier: MIT */
/*
 * vma.h - what the kernel's VMAs say about managed memory (vma.c), for
 * reclaim, mprotect.c and mlock.c; the runtime holds one struct vma_map.
 */
#ifndef USWAP_VMA_H
#define USWAP_VMA_H

#include <stddef.h>
#include <stdint.h>

/*
 * What the kernel's VMAs say about managed memory that reclaim must know
 * (vma.c): segments whose attributes differ from a fresh managed mapping
 * (read-write, key 0, not locked, not pinned), sorted.  Changed under
 * op_lock held for writing, read under op_lock.
 */
struct vma_attr {
	uint8_t prot;		/* PROT_* */
	uint8_t lock;		/* 0, VMA_LOCK_ALL or VMA_LOCK_ONFAULT */
	int16_t pkey;		/* protection key, 0 by default */
	uint32_t pins;		/* io_uring buffer registrations over it */
};

struct vma_seg {
	uintptr_t start, end;
	struct vma_attr a;
};

struct vma_map {
	struct vma_seg *seg;
	unsigned nr, cap;
	size_t map_len;
};

#define VMA_PROTECTED	(1u << 0)	/* not read-write, or under a key */
#define VMA_LOCKED	(1u << 1)
#define VMA_PINNED	(1u << 2)
#define VMA_ONFAULT	(1u << 3)	/* locked as pages fault in */

/* vma_attr.lock */
#define VMA_LOCK_ALL		1	/* mlock: every page in */
#define VMA_LOCK_ONFAULT	2	/* MLOCK_ONFAULT, MCL_ONFAULT */

/* vma.c: the attributes of managed memory (struct vma_map). */
int vma_update(struct vma_map *m, uintptr_t start, uintptr_t end,
	       void (*fn)(struct vma_attr *, const void *), const void *arg);
void vma_forget(struct vma_map *m, uintptr_t start, uintptr_t end);
void vma_move(struct vma_map *m, uintptr_t old, size_t old_len, uintptr_t new,
	      size_t new_len);
unsigned vma_flags(const struct vma_map *m, uintptr_t start, uintptr_t end);
void vma_unevictable_pages(const struct vma_map *m, uintptr_t start,
			   uintptr_t end, uint64_t *added, uint64_t *total);
void vma_clear_locks(struct vma_map *m);
const struct vma_seg *vma_segments(const struct vma_map *m, unsigned *nr);
void vma_map_destroy(struct vma_map *m);

#endif /* USWAP_VMA_H */
