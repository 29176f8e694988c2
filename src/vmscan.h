/* SPDX-License-Identifier: MIT */
/*
 * vmscan.h - the reclaimer's state, shared by vmscan.c (which folios go,
 * and the eviction protocol around them) and pageout.c (storing them).
 */
#ifndef USWAP_VMSCAN_H
#define USWAP_VMSCAN_H

#include <sys/uio.h>

#include "internal.h"
#include "swap_io.h"

#define BATCH_PAGES	512u	/* one 2 MiB cluster per batch */
#define MAX_VICTIMS	512u

struct victim {
	struct region *r;
	uint32_t folio;
	uint32_t nr_pages;
	uint32_t page;		/* first page index in r */
	uintptr_t addr;
	swp_entry_t *ents;	/* its pages' new slots (in the reclaimer's
				   ents[]), NULL when it has none */
	uint32_t pooled;	/* pages the compressed pool took */
	uint32_t fl;		/* its flags when isolated (its budget) */
	uint32_t excl;		/* shared by fork: pages nobody else maps
				   (fork_share.c), looked at before the zap */
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
	char *bounce;		/* MAX_BATCH_PAGES pages: copies of the pages
				   shared by fork that go to a device */
	unsigned bounced;	/* pages of it used by this batch */
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
 * pageout.c: store victims[0..nv) (step 2 of the protocol in vmscan.c):
 * slots, the pool, the devices.  A victim that is stored has `written`
 * set and its slots in ents; one without room or with a failed write has
 * ents NULL and stays resident.  -ENOSPC when some victim found no room.
 */
int write_victims(struct reclaimer *rc, unsigned nv);

#endif /* USWAP_VMSCAN_H */
