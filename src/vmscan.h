/* SPDX-License-Identifier: MIT */
/*
 * vmscan.h - the reclaimer's state, shared by vmscan.c (which folios go,
 * and the eviction protocol around them) and pageout.c (storing them).
 */
#ifndef USWAP_VMSCAN_H
#define USWAP_VMSCAN_H

#include <sys/uio.h>

#include "base.h"
#include "demote.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "zswap.h"
#include "swap_io.h"

#define BATCH_PAGES	512u	/* one 2 MiB cluster per batch */
#define MAX_VICTIMS	512u

/* How a victim's contents were captured (step 2 of vmscan.c's protocol). */
enum capture {
	CAPTURE_IN_PLACE,	/* read where they are, write-protected */
	CAPTURE_MOVED,		/* in the staging area: its pages moved
				   there (F_MOVED), but for `inplace` of
				   them, shared with another process, left
				   write-protected in place and copied */
	CAPTURE_COPIED,		/* copied into the staging area through
				   /proc/self/mem, write-protected in place */
};

/* What the staging area holds, per page (reclaimer.stage[]). */
#define STAGE_EMPTY	0
#define STAGE_MOVED	1	/* the page itself, moved from the region */
#define STAGE_COPIED	2	/* a copy; the page is in the region */
#define STAGE_HOLE	3	/* none: the region has none there either */

struct victim {
	struct region *r;
	uint32_t folio;
	uint32_t nr_pages;
	uint32_t page;		/* first page index in r */
	uintptr_t addr;
	uintptr_t src;		/* where its contents are read from: addr,
				   the staging area or the bounce buffer */
	swp_entry_t *ents;	/* its pages' new slots (in the reclaimer's
				   ents[]), NULL when it has none */
	uint32_t pooled;	/* pages the compressed pool took */
	uint32_t fl;		/* its flags when isolated (its budget) */
	unsigned vmflags;	/* vma_flags() of its range when isolated */
	uint32_t excl;		/* shared by fork: pages nobody else maps
				   (fork_share.c), looked at before the zap */
	enum capture how;
	uint32_t inplace;	/* CAPTURE_MOVED: pages left in place */
	unsigned zap_first, zap_n;	/* its ranges in the zap's iov[] */
	bool skip;		/* not stored: aborted, refused or not
				   captured; it stays resident */
	bool busy;		/* refused: a page of it is pinned */
	bool clean;
	bool written;
};

/* A batch holds BATCH_PAGES pages, plus the folio that passed it. */
#define MAX_BATCH_PAGES	(BATCH_PAGES + MAX_FOLIO_PAGES)

struct reclaimer {
	struct uswap_runtime *rt;
	struct swap_pick pick;		/* device choice */
	unsigned cursor;		/* next region to scan */
	struct victim victims[MAX_VICTIMS];
	struct zswap_job jobs[MAX_BATCH_PAGES];
	struct zswap_ctx *zc;		/* compression, with a pool */
	struct iovec iov[MAX_BATCH_PAGES];
	char *staging;		/* MAX_BATCH_PAGES pages of uswap's own: where
				   victims' pages are moved (registered, for
				   write-protect faults only, with the
				   runtime's userfaultfd, when it can move)
				   or copied */
	bool can_move;		/* UFFDIO_MOVE into staging works */
	unsigned mlockall_gen;	/* the runtime's when staging was last
				   unlocked and emptied */
	unsigned staged;	/* pages of it used by this batch */
	uint8_t stage[MAX_BATCH_PAGES];	/* STAGE_* of each page of it */
	int mem_fd;		/* /proc/self/mem: pages read without being
				   touched (a PROT_NONE page), or -1 */
	char *scratch;		/* MAX_FOLIO_PAGES pages: reads that only pin */
	uint64_t pm[MAX_FOLIO_PAGES];	/* pagemap of a victim being moved */
	uint64_t pm_to[MAX_FOLIO_PAGES];	/* ... and of where it goes */
	int zap_err[MAX_BATCH_PAGES];	/* the zap's result, per range */
	swp_entry_t ents[MAX_BATCH_PAGES];	/* the victims' new slots */
	struct swap_io *io;		/* io_uring, or plain I/O */
	struct swap_io_req reqs[MAX_BATCH_PAGES];
	uint32_t crc[MAX_BATCH_PAGES];	/* the runs' checksums, in reqs order */
	unsigned req_victims[MAX_BATCH_PAGES][2];	/* first, last victim */
	unsigned nr_reqs;
	void *pages[MAX_VICTIMS];	/* move_pages: where victims live */
	int nodes[MAX_VICTIMS];
	uint32_t arm[MAX_VICTIMS];
	struct demote_folio demote[MAX_VICTIMS];
	int tier;		/* the slower node being reclaimed, or -1 */
	bool in_flight;		/* the last scan found nothing to start,
				   only folios in flight: a region being
				   changed (mmap.c settle_range()), or all
				   this process charges being faulted in */
};

/*
 * pageout.c: store victims[0..nv) (step 3 of the protocol in vmscan.c):
 * slots first, before the victims are captured (alloc_victims(); one
 * without room has ents NULL and is left alone), then the pool and the
 * devices (write_victims()).  A victim that is stored has `written` set
 * and its slots in ents; one with a failed write has ents NULL and stays
 * resident.  Each returns -ENOSPC when some victim found no room.
 */
int alloc_victims(struct reclaimer *rc, unsigned nv);
int write_victims(struct reclaimer *rc, unsigned nv);

/*
 * pageout.c: step 2 of the protocol, capture_victims(): each victim's
 * contents moved into the staging area, copied there, or left in place
 * (victim.how, victim.src); one that cannot be captured is given up
 * (skip).  Without locks.  Then, under op_lock (read): move_back() puts a
 * moved victim's pages (the staging area's from page `first`) back where
 * they were; staging_empty() empties the staging area for the next batch
 * (all of it, and unlocked, after the program's mlockall()).
 */
void capture_victims(struct reclaimer *rc, unsigned nv);
void move_back(struct reclaimer *rc, struct victim *v, unsigned first);
void staging_empty(struct reclaimer *rc, bool all);
/* Pagemap entries of v's pages [k, nr) into rc->pm + k.  false: unknown. */
bool victim_pagemap(struct reclaimer *rc, struct victim *v, uint32_t k);

#define PM_PRESENT	(1ull << 63)
#define PM_EXCLUSIVE	(1ull << 56)	/* mapped by this process only */
#define PM_MINE		(PM_PRESENT | PM_EXCLUSIVE)

#endif /* USWAP_VMSCAN_H */
