/* SPDX-License-Identifier: MIT */
/*
 * swap_io.h - swap device I/O contexts (io_uring or pread/pwrite), the
 * checks of what is read back (crc32c, or the AEAD of a device that
 * encrypts: crypt.h), and the discard of freed clusters.  page_io.c
 * defines the I/O side (swap_seal.c seals the writes to a device that
 * encrypts), swap_file.c the checks and the system calls of discard;
 * swapfile.c defines the discard queue, because parking a cluster while
 * it is discarded is a move between its lists.
 */
#ifndef USWAP_SWAP_IO_H
#define USWAP_SWAP_IO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "swap.h"

struct iovec;

/* --- page_io.c: I/O contexts --- */

/*
 * One I/O context per thread that does swap I/O (the reclaimer, the pool's
 * writeback thread, each fault thread): an io_uring instance, or nothing in
 * fallback mode.  A context is used by one thread at a time and belongs to
 * the process that created it (after fork the child must not use it).
 */
struct swap_io;

#define SWAP_IO_DEPTH_DEFAULT	32u
#define SWAP_IO_DEPTH_MAX	4096u

/*
 * Create a context with room for depth I/Os in flight (0: the default;
 * at most SWAP_IO_DEPTH_MAX).  Uses io_uring when the kernel allows it, else
 * falls back to pread/pwrite silently (one log line per process).  Setting
 * USWAP_NO_IO_URING=1 in the environment forces the fallback (tests, and
 * users who want to compare).  NULL only when out of memory.
 */
struct swap_io *swap_io_create(unsigned depth);
void swap_io_destroy(struct swap_io *io);
/* Is io_uring in use?  false for NULL (a NULL context does plain I/O). */
bool swap_io_uring(const struct swap_io *io);
/*
 * Testing: cap every single read or write the context issues at max_bytes
 * (0: no cap), so that each longer request is completed the way a short
 * transfer is, from where the last one stopped.
 */
void swap_io_set_max_bytes(struct swap_io *io, size_t max_bytes);

struct swap_io_req {
	struct swap_info *si;
	uint32_t offset;		/* first slot */
	const struct iovec *iov;
	int iovcnt;
	size_t len;			/* bytes in iov */
	int result;			/* out: 0 or -errno */
};

/*
 * Write every request of reqs.  A request to a device that encrypts
 * (si->crypt) must have whole slots; what reaches the device is sealed
 * copies (the context's bounce buffer; without a context, slot by slot),
 * and the caller's buffers are only read.  io_uring: all of them are queued and
 * submitted at once (up to the context's depth; more are queued as earlier
 * ones complete) and every completion is reaped before returning; a short
 * write is resubmitted for the rest.  Fallback (or io NULL): one pwritev
 * after another.  Each request gets its own result: 0; -EINVAL if it lies
 * outside the device or len is not the sum of iov; -EIO if a write made no
 * progress; else the error of the write that failed (a short write whose
 * resubmission fails returns that failure).  Returns 0 when all succeeded,
 * else the first request's error in reqs order.  Bytes of a failed request
 * may have reached the device in part.
 */
int swap_io_write_batch(struct swap_io *io, struct swap_io_req *reqs,
			unsigned n);
/*
 * The same, calling during(arg) once while the writes are in flight
 * (io_uring: after the first submission, before waiting; without a ring:
 * before the first write), so that work on the same buffers (checksums)
 * overlaps the device's instead of adding to it.
 */
int swap_io_write_batch_during(struct swap_io *io, struct swap_io_req *reqs,
			       unsigned n, void (*during)(void *), void *arg);
/* The same for reads (iov names the buffers); end of file is -EIO. */
int swap_io_read_batch(struct swap_io *io, struct swap_io_req *reqs,
		       unsigned n);
/*
 * Read len bytes from slot offset into buf, with the caller's own context
 * (a fault thread's: never queued behind another thread's writes).  A short
 * read is resubmitted for the rest; end of file is -EIO.  0 or -errno.
 */
int swap_io_read(struct swap_io *io, struct swap_info *si, uint32_t offset,
		 void *buf, size_t len);

/* --- swap_file.c: slot checksums --- */

/*
 * Integrity.  Each slot written to a device with a file carries the
 * crc32c of its 4 KiB in si->csum (allocated by swapon.c; NULL when off,
 * --verify off).  Whoever writes a slot records its checksum once the
 * write has completed, computed from the buffer it wrote, which cannot
 * change meanwhile (reclaim: the write-protected folio, checksummed while
 * the write is in flight; the pool's writeback: its own buffer), and
 * before the slot is published to readers.  Every read
 * from a device is checked before its data is used; a mismatch is never
 * returned as data: the fault path makes the program's access raise
 * SIGBUS there (memory.c), as the kernel does for a memory error.
 *
 * The compressed pool keeps its own crc32c per object (zswap.c), whatever
 * --verify says.
 */

/* Record the checksums of the whole slots in iov, written from slot offset. */
void swap_csum_record(struct swap_info *si, uint32_t offset,
		      const struct iovec *iov, int iovcnt);
/* The same into out[], one per slot, for a caller that records them later. */
void swap_csum_compute(const struct iovec *iov, int iovcnt, uint32_t *out);
/*
 * Check nr slots from offset, read into buf.  0, or -EBADMSG at the first
 * slot that differs (logged once per device: path, slot, the checksum
 * recorded and the one found).  0 when checksums are off.
 */
int swap_csum_verify(struct swap_info *si, uint32_t offset, const void *buf,
		     uint32_t nr);
/* Bytes of si's checksum array (one uint32_t per slot). */
static inline size_t swap_csum_bytes(const struct swap_info *si)
{
	return (size_t)si->nr_slots * sizeof(uint32_t);
}

/*
 * Check nr slots from offset, just read into buf, before their data is
 * used: on a device that encrypts, authenticate and decrypt each in place
 * (crypt.c; --verify does not matter there: the tag is the check); then
 * the crc32c where one is kept.  0, or -EBADMSG at the first slot that
 * fails (logged once per device with its path and the slot).  The fault
 * path calls this after every device read (memory.c).
 */
int swap_slots_check(struct swap_info *si, uint32_t offset, void *buf,
		     uint32_t nr);

/*
 * This process's counts of page_io events (a child after fork starts
 * from zero), summed over its runtimes: vmstat.c reports them.
 */
enum swap_io_stat {
	SWAP_IO_SHORT,		/* transfers that came back short and were
				   resubmitted for the rest (swap_io_short) */
	SWAP_IO_SEALED,		/* slots encrypted for a device (swap_encrypt) */
	SWAP_IO_NR_STATS
};
uint64_t swap_io_stat(enum swap_io_stat item);

/* Messages said once per device (si->logged, shared by the tree). */
#define SWAP_LOGGED_READ	(1u << 0)	/* a read failed */
#define SWAP_LOGGED_CSUM	(1u << 1)	/* a slot failed its checksum */
#define SWAP_LOGGED_POOL	(1u << 2)	/* a pool object did */
#define SWAP_LOGGED_NOSPACE	(1u << 3)	/* no room on the file system */
#define SWAP_LOGGED_AUTH	(1u << 4)	/* a slot failed authentication */

/* True the first time bit is asked for on si. */
static inline bool swap_log_first(struct swap_info *si, unsigned bit)
{
	return !(atomic_fetch_or(&si->logged, bit) & bit);
}

/* --- discard of freed clusters --- */

/*
 * A device's discard state (si->discard).  When discard is on, a cluster
 * whose last slot is freed is parked instead of going back to FREE: it is
 * put on CURRENT, owned by no allocating context, so that no allocation can
 * reach it, and its index is queued.  swap_discard_run() then discards it
 * without si->lock, and only afterwards, under the lock, marks it
 * unprovisioned and puts it on FREE (swapfile.c explains why this order
 * cannot destroy data).
 *
 * queue, head, nr and off are protected by si->lock.  pending mirrors nr
 * for a lock-free check; the counters are read without a lock.
 */
struct swap_discard {
	/* The system call: hole punch or BLKDISCARD; 0 or -errno. */
	int (*punch)(struct swap_info *si, uint32_t cluster);
	uint32_t *queue;		/* ring of nr_clusters cluster indices */
	uint32_t head, nr;
	bool off;			/* not supported: stop parking */
	/*
	 * Lazy (a file that grows with the free space): a freed cluster
	 * goes back to FREE as it is, reused at once without a system
	 * call, and swap_discard_run() parks and discards the free clusters
	 * that still hold space, when the reclaimer is idle.
	 */
	bool lazy;
	bool blkdev;			/* BLKDISCARD, not fallocate */
	bool logged;
	_Atomic uint32_t pending;	/* == nr */
	_Atomic uint64_t discards;	/* clusters discarded */
	_Atomic uint64_t failed;	/* discards that failed */
	size_t alloc_len;
};

/*
 * swap_file.c: turn discard on for si (fd open, swap_info_init done), before
 * the device is shared between threads.  0, -EBADF without a file,
 * -EOPNOTSUPP for a file that is neither regular nor a block device,
 * -ENOMEM.
 */
int swap_discard_enable(struct swap_info *si);
/*
 * Turn it off and free its state, without taking si->lock and without a
 * system call: only when no other thread uses si (device teardown, or a
 * child after fork, whose copy of si->lock may be held).  Clusters still
 * parked stay on CURRENT, undiscarded.  swap_file_close() calls it.
 */
void swap_discard_disable(struct swap_info *si);
/* Clusters discarded so far (0 when discard is off). */
uint64_t swap_discard_count(const struct swap_info *si);

/*
 * swapfile.c: discard every parked cluster and return it to FREE; with a
 * lazy discard, park a batch of the free clusters that hold space first.
 * Called
 * without si->lock (it takes it around each cluster, never across the
 * system call).  swap_slot_alloc() discards a few parked clusters before
 * each allocation, and all of them before it gives up with -ENOSPC; an
 * idle reclaimer should call this so that space comes back without
 * waiting for allocations.  Cheap when nothing is parked or to trim.
 */
void swap_discard_run(struct swap_info *si);

#endif /* USWAP_SWAP_IO_H */
