/* SPDX-License-Identifier: MIT */
/*
 * page_io.h - the inside of a swap I/O context, for page_io.c (which runs
 * its reads and writes) and swap_seal.c (which seals the writes of a batch
 * to an encrypting device and runs them through it) only.  Everyone else
 * sees struct swap_io as swap_io.h declares it: opaque.
 *
 * A context belongs to one thread at a time (swap_io.h), so nothing here
 * is locked; the counters (swap_io_stat_add) are atomic, per process.
 */
#ifndef USWAP_PAGE_IO_H
#define USWAP_PAGE_IO_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "swap_io.h"

#define OP_NONE		UINT32_MAX	/* the end of the free ops */

#define SEAL_BOUNCE_BYTES	(2u * SWAP_CLUSTER_BYTES)	/* a reclaim batch */
#define SEAL_SUBS		(SEAL_BOUNCE_BYTES / SWAP_SLOT_SIZE)

/*
 * One request in flight: where its next transfer starts.  part holds the
 * first element of a transfer that starts inside one (or is capped).
 */
struct io_op {
	struct swap_io_req *req;
	int idx;			/* iov element the next transfer starts in */
	size_t skip;			/* bytes of that element done */
	size_t done;			/* bytes of the request done */
	unsigned retries;
	uint32_t next_free;
	struct iovec part;
};

/*
 * Where sub-request k of a sealed round comes from: request req of the
 * caller's batch, from its slot `from` on (sealed), or all of it as it is
 * (a device that does not encrypt).
 */
struct seal_piece {
	unsigned req;
	uint32_t from;
	bool sealed;
};

/* A sealed batch's rounds: SEAL_SUBS of each, over the bounce buffer. */
struct seal_bufs {
	char bounce[SEAL_BOUNCE_BYTES];	/* first: page-aligned */
	struct swap_io_req sub[SEAL_SUBS];
	struct iovec sub_iov[SEAL_SUBS];
	struct seal_piece piece[SEAL_SUBS];
};

struct swap_io {
	bool uring;			/* I/O goes through the ring */
	bool have_ring;			/* ring set up (to tear down) */
	bool write;			/* direction of the batch being run */
	bool sealing;			/* running a sealed round (seal->sub) */
	unsigned depth;			/* ops[] entries (the SQ ring size) */
	size_t max_bytes;		/* transfer cap; SIZE_MAX for none */
	size_t alloc_len;
	uint32_t free_op;		/* head of the free ops, or OP_NONE */
	struct seal_bufs *seal;		/* with a sealing device, else NULL */
	struct swap_io_req *caller;	/* the sealed batch's own requests */
	struct io_uring ring;
	struct io_op ops[];
};

/* --- page_io.c: requests and how they run --- */

/* Count n events of item (swap_io_stat()), for this process. */
void swap_io_stat_add(enum swap_io_stat item, uint64_t n);
/*
 * Check a request and set its result for one that needs no I/O.  Returns
 * true when it needs I/O.
 */
bool swap_io_req_begin(struct swap_io_req *req);
/* The first error of reqs[0..n), in reqs order, or 0. */
int swap_io_first_error(const struct swap_io_req *reqs, unsigned n);
/*
 * Run one request with pread/pwritev, each transfer at most max bytes,
 * sealing it first when io->sealing (io may be NULL); its result is in
 * req->result.
 */
void swap_io_run_sync_one(struct swap_io *io, struct swap_io_req *req,
			  size_t max, bool write);
/* Run a batch one request after another; swap_io_first_error() of it. */
int swap_io_run_sync(struct swap_io *io, struct swap_io_req *reqs,
		     unsigned n, bool write);
/*
 * Run a batch through io's ring (io->uring), calling during(arg) once while
 * the first transfers are in flight; swap_io_first_error() of it.
 */
int swap_io_run_uring(struct swap_io *io, struct swap_io_req *reqs,
		      unsigned n, bool write, void (*during)(void *),
		      void *arg);

/* --- swap_seal.c: sealing what goes to a device that encrypts --- */

/*
 * Seal sub-request sub of io's sealed round into the bounce buffer, just
 * before it is queued (io->sealing is set).
 */
void swap_seal_sub(struct swap_io *io, const struct swap_io_req *sub);
/* Does a request of reqs[0..n) go to a device that encrypts? */
bool swap_seal_needed(const struct swap_io_req *reqs, unsigned n);
/*
 * swap_io_write_batch_during() of a batch for which swap_seal_needed():
 * only sealed copies reach an encrypting device.
 */
int swap_seal_write_batch(struct swap_io *io, struct swap_io_req *reqs,
			  unsigned n, void (*during)(void *), void *arg);
/*
 * The pool's writeback: seal its buffer where it is, whole slots from
 * offset (the caller checked the range).  0 or -EINVAL.
 */
int swap_seal_in_place(struct swap_info *si, uint32_t offset,
		       const struct iovec *iov, int iovcnt, size_t len);

#endif /* USWAP_PAGE_IO_H */
