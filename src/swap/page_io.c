// SPDX-License-Identifier: MIT
/*
 * page_io.c - swap I/O (the kernel's page_io.c): reads and batched writes
 * of slots, through io_uring or pread/pwrite.  The sealing of what goes to
 * an encrypting device is in swap_seal.c; the device's file (creation,
 * space, discard) and the checks of what a slot holds are in swap_file.c.
 *
 * I/O is O_DIRECT where the file system allows it (the page cache would
 * only hold a second copy of what was just evicted); its buffers are
 * always page-aligned (the program's own pages, or prim_alloc'd buffers).
 *
 * I/O contexts.  Every thread that does swap I/O owns a struct swap_io:
 * an io_uring instance, or nothing when io_uring cannot be used (a kernel
 * without it, kernel.io_uring_disabled, a seccomp filter, the memlock limit
 * of kernels before 5.12) or when USWAP_NO_IO_URING=1 asks for pread and
 * pwrite.  The two modes give the same results; a NULL context is plain
 * pread/pwrite (swap_write() and swap_read(), and a child after fork, which
 * must not touch its parent's rings: they are shared memory).  Creating a
 * context belongs to thread start (getenv, a log line); its I/O allocates
 * nothing: io_uring_queue_init mmaps the rings (raw system calls in liburing
 * 2.3, no malloc) and the rest comes from prim_alloc.
 *
 * Writes go in batches: the reclaimer evicts a cluster's worth of folios
 * at once, as a few runs of contiguous slots; all of them are queued and
 * submitted with one io_uring_enter, and the thread then reaps every
 * completion before returning (the caller's pages must stay put until
 * their copy is safe).  A batch longer than the ring's depth is fed into
 * it as earlier writes complete.
 *
 * Reads before writes.  A fault thread reads with its own context, never
 * with the reclaimer's: a read is never queued in a ring behind a batch of
 * writes, and waits only for itself (the device may still be busy with the
 * writes, which no queue in user space can change).
 *
 * Short transfers.  Each request in flight has an op: where its next
 * transfer starts (iovec element and bytes into it).  A transfer that
 * comes back short is followed by one for the rest, from that point; it
 * goes as a writev of the remaining elements when it starts on an element
 * boundary, and as one element (a copy of the iovec, adjusted, kept in the
 * op) when it starts inside one.  A transfer that moves nothing is -EIO:
 * for a read, the end of the file.  The same code serves both modes, and
 * a test cap on the transfer size (swap_io_set_max_bytes) runs every
 * request through it.
 *
 * Encryption at rest (--encrypt on).  A batch with a request to a device
 * that encrypts goes to swap_seal.c, which cuts it into rounds over the
 * context's bounce buffer (made here, with the context) and runs each
 * round through this file; both modes seal each sub-request just before
 * it is queued (swap_seal_sub()).  swap_write() has its buffer sealed in
 * place (swap_seal_in_place()) before its one write.
 *
 * Counters (swap_io_stat()): transfers that came back short and were
 * resubmitted, and pages sealed (swap_seal.c).  They are this process's
 * (a child after fork starts from zero), summed over its runtimes, and
 * read into the vmstat counters swap_io_short and swap_encrypt (vmstat.c).
 *
 * Remote devices (swap_remote.c): their requests in a batch are run there,
 * before the others, at the two places a batch runs (swap_io_run_sync(),
 * swap_io_run_uring()), after sealing in a sealed round.
 *
 * Injected faults (tests, prim.c): a transfer to or from a device named in
 * USWAP_INJECT completes with EIO, ENOSPC, a short count or a flipped
 * byte, in both modes, at the one place both reap a transfer's result
 * (io_result), so that every path above sees what a failing device gives.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "crypt.h"
#include "base.h"
#include "fdtable.h"
#include "log.h"
#include "prim.h"
#include "swap.h"
#include "slab.h"
#include "page_io.h"
#include "swap_io.h"
#include "swap_remote.h"

#ifndef IORING_SETUP_SUBMIT_ALL
#define IORING_SETUP_SUBMIT_ALL		(1U << 7)
#endif
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN	(1U << 8)
#endif

#define IO_RETRIES	16	/* -EAGAIN / -EINTR of one transfer in a row */

static bool logged_fallback, logged_ring;

/* --- this process's counters --- */

static struct {
	_Atomic pid_t pid;		/* whose they are */
	_Atomic uint64_t v[SWAP_IO_NR_STATS];
} io_stats;

/* Counts of the parent's, in a child after fork, are not the child's. */
void swap_io_stat_add(enum swap_io_stat item, uint64_t n)
{
	const pid_t me = getpid();
	pid_t owner = atomic_load(&io_stats.pid);
	unsigned k;

	if (unlikely(owner != me) &&
	    atomic_compare_exchange_strong(&io_stats.pid, &owner, me))
		for (k = 0; k < SWAP_IO_NR_STATS; k++)
			atomic_store(&io_stats.v[k], 0);
	atomic_fetch_add_explicit(&io_stats.v[item], n, memory_order_relaxed);
}

uint64_t swap_io_stat(enum swap_io_stat item)
{
	if (atomic_load(&io_stats.pid) != getpid())
		return 0;
	return atomic_load_explicit(&io_stats.v[item], memory_order_relaxed);
}

/* --- requests and transfers, common to both modes --- */

static off_t req_pos(const struct swap_io_req *req)
{
	return ((off_t)req->offset << SWAP_SLOT_SHIFT);
}

/*
 * Check a request and set its result for one that needs no I/O.  Returns
 * true when it needs I/O.
 */
bool swap_io_req_begin(struct swap_io_req *req)
{
	const struct swap_info *si = req->si;
	uint64_t end;
	size_t sum = 0;
	int i;

	req->result = -EINVAL;
	if (!si || req->iovcnt < 0 || (req->iovcnt && !req->iov))
		return false;
	for (i = 0; i < req->iovcnt; i++)
		sum += req->iov[i].iov_len;
	end = ((uint64_t)req->offset << SWAP_SLOT_SHIFT) + req->len;
	if (sum != req->len || req->offset > si->nr_slots ||
	    end > ((uint64_t)si->nr_slots << SWAP_SLOT_SHIFT))
		return false;
	req->result = 0;
	return req->len != 0;
}

/* n more bytes of op's request are done: move its position. */
static void op_advance(struct io_op *op, size_t n)
{
	const struct swap_io_req *req = op->req;

	op->done += n;
	n += op->skip;
	while (op->idx < req->iovcnt && n >= req->iov[op->idx].iov_len) {
		n -= req->iov[op->idx].iov_len;
		op->idx++;
	}
	assert(n == 0 || op->idx < req->iovcnt);
	op->skip = n;
}

static void op_start(struct io_op *op, struct swap_io_req *req)
{
	op->req = req;
	op->idx = 0;
	op->skip = 0;
	op->done = 0;
	op->retries = 0;
	op_advance(op, 0);	/* past empty leading elements */
}

/*
 * The next transfer of op: *cnt elements from the returned array, at most
 * max bytes and IOV_MAX elements (at most one element when single).
 */
static const struct iovec *op_next(struct io_op *op, size_t max, bool single,
				   int *cnt)
{
	const struct swap_io_req *req = op->req;
	const struct iovec *v = &req->iov[op->idx];
	size_t bytes = v->iov_len;
	int n;

	if (op->skip || bytes > max) {
		op->part.iov_base = (char *)v->iov_base + op->skip;
		op->part.iov_len = MIN(v->iov_len - op->skip, max);
		*cnt = 1;
		return &op->part;
	}
	for (n = 1; !single && op->idx + n < req->iovcnt && n < IOV_MAX; n++) {
		if (v[n].iov_len > max - bytes)
			break;
		bytes += v[n].iov_len;
	}
	*cnt = n;
	return v;
}

/*
 * A transfer of op ended with res (bytes or -errno).  Returns true when
 * the request is finished (its result set), false when it needs another
 * transfer.
 */
static bool op_complete(struct io_op *op, ssize_t res)
{
	struct swap_io_req *req = op->req;

	if ((res == -EAGAIN || res == -EINTR) && ++op->retries <= IO_RETRIES)
		return false;
	if (res <= 0) {
		req->result = res < 0 ? (int)res : -EIO;
		return true;
	}
	op->retries = 0;
	op_advance(op, (size_t)res);
	if (op->done < req->len) {
		/* resubmitted for the rest */
		swap_io_stat_add(SWAP_IO_SHORT, 1);
		return false;
	}
	req->result = 0;
	return true;
}

/*
 * The result of a transfer of op, with the faults tests inject (prim.c):
 * EIO or ENOSPC instead of success, half of a transfer of several pages
 * (whole pages, so that an O_DIRECT resubmission stays aligned), or a
 * read whose first byte came back flipped.  One branch when none are.
 */
static ssize_t io_result(const struct io_op *op, bool write, ssize_t res)
{
	const int fd = op->req->si->fd;

	if (likely(!atomic_load_explicit(&prim_inject_armed,
					 memory_order_relaxed)) || res <= 0)
		return res;
	if (prim_inject(write ? INJECT_WRITE_EIO : INJECT_READ_EIO, fd))
		return -EIO;
	if (write && prim_inject(INJECT_ENOSPC, fd))
		return -ENOSPC;
	if (res > (ssize_t)PAGE_SIZE &&
	    prim_inject(write ? INJECT_SHORT_WRITE : INJECT_SHORT_READ, fd))
		return MAX((res / 2) & (ssize_t)PAGE_MASK, (ssize_t)PAGE_SIZE);
	if (!write && prim_inject(INJECT_CORRUPT, fd)) {
		/* The transfer started at element idx, skip bytes in. */
		char *p = (char *)op->req->iov[op->idx].iov_base + op->skip;

		*p ^= 0x5a;
	}
	return res;
}

int swap_io_first_error(const struct swap_io_req *reqs, unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (reqs[k].result)
			return reqs[k].result;
	return 0;
}

/* --- fallback: one system call after another --- */

void swap_io_run_sync_one(struct swap_io *io, struct swap_io_req *req,
			  size_t max, bool write)
{
	struct io_op op;
	ssize_t res;

	if (!swap_io_req_begin(req))
		return;
	if (io && io->sealing)
		swap_seal_sub(io, req);
	op_start(&op, req);
	do {
		const int fd = req->si->fd;
		const off_t pos = req_pos(req) + (off_t)op.done;
		const struct iovec *v;
		int cnt;

		/* No preadv in prim.c: reads go one element at a time. */
		v = op_next(&op, max, !write, &cnt);
		if (write)
			res = prim_pwritev(fd, v, cnt, pos);
		else
			res = prim_pread(fd, v->iov_base, v->iov_len, pos);
		res = io_result(&op, write, res);
	} while (!op_complete(&op, res));
}

/*
 * The requests of reqs to remote devices go to swap_remote.c (sealed
 * first, in a sealed round), all of them at once, before the others.
 */
static void run_remote(struct swap_io *io, struct swap_io_req *reqs,
		       unsigned n, bool write)
{
	unsigned k;

	if (io && io->sealing)
		for (k = 0; k < n; k++)
			if (swap_remote_is(reqs[k].si) && reqs[k].len)
				swap_seal_sub(io, &reqs[k]);
	swap_remote_run(io, reqs, n, write);
}

int swap_io_run_sync(struct swap_io *io, struct swap_io_req *reqs, unsigned n,
		     bool write)
{
	const size_t max = io ? io->max_bytes : SIZE_MAX;
	const bool remote = swap_remote_any(reqs, n);
	unsigned k;

	if (unlikely(remote))
		run_remote(io, reqs, n, write);
	for (k = 0; k < n; k++)
		if (!remote || !swap_remote_is(reqs[k].si))
			swap_io_run_sync_one(io, &reqs[k], max, write);
	return swap_io_first_error(reqs, n);
}

/* --- io_uring --- */

static struct io_op *op_get(struct swap_io *io)
{
	struct io_op *op;

	if (io->free_op == OP_NONE)
		return NULL;
	op = &io->ops[io->free_op];
	io->free_op = op->next_free;
	return op;
}

static void op_put(struct swap_io *io, struct io_op *op)
{
	op->req = NULL;
	op->next_free = io->free_op;
	io->free_op = (uint32_t)(op - io->ops);
}

/*
 * Queue op's next transfer.  Never runs out of SQEs: at most depth ops are
 * in flight, each with at most one SQE, and an op is requeued only after
 * its previous SQE was consumed.
 */
static void op_queue(struct swap_io *io, struct io_op *op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
	const struct swap_io_req *req = op->req;
	const off_t pos = req_pos(req) + (off_t)op->done;
	const struct iovec *v;
	int cnt;

	assert(sqe);
	v = op_next(op, io->max_bytes, false, &cnt);
	if (io->write)
		io_uring_prep_writev(sqe, req->si->fd, v, (unsigned)cnt,
				     (uint64_t)pos);
	else
		io_uring_prep_readv(sqe, req->si->fd, v, (unsigned)cnt,
				    (uint64_t)pos);
	io_uring_sqe_set_data64(sqe, (uint64_t)(op - io->ops));
}

/* Errors of io_uring_enter that go away by trying again. */
static bool enter_transient(int err)
{
	return err == -EINTR || err == -EAGAIN || err == -EBUSY ||
	       err == -ENOMEM;
}

static void pause_briefly(void)
{
	const struct timespec ts = { .tv_nsec = 100000 };

	nanosleep(&ts, NULL);
}

/*
 * The ring failed in a way that trying again will not fix (its file
 * descriptor closed under us, or a kernel bug): fail what is left of the
 * batch and use plain I/O from now on.
 */
static void ring_failed(struct swap_io *io, int err, struct swap_io_req *reqs,
			unsigned next, unsigned n)
{
	unsigned k;

	uswap_log_once(&logged_ring, "io_uring_enter failed: %s; swap I/O "
		       "falls back to pread/pwrite", strerror(-err));
	io->uring = false;
	for (k = 0; k < io->depth; k++)
		if (io->ops[k].req)
			io->ops[k].req->result = err;
	for (k = next; k < n; k++)
		reqs[k].result = err;
}

/* Reap every completion there is; returns how many requests finished. */
static unsigned reap(struct swap_io *io)
{
	struct io_uring_cqe *cqe;
	unsigned finished = 0;

	while (io_uring_peek_cqe(&io->ring, &cqe) == 0) {
		struct io_op *op = &io->ops[io_uring_cqe_get_data64(cqe)];
		const ssize_t res = io_result(op, io->write, cqe->res);

		io_uring_cqe_seen(&io->ring, cqe);
		if (op_complete(op, res)) {
			op_put(io, op);
			finished++;
		} else {
			op_queue(io, op);
		}
	}
	return finished;
}

/*
 * Run a batch through the ring.  during(arg), when given, is called once
 * while the first transfers are in flight (submitted, not yet waited for),
 * or at the end when none were needed.
 */
int swap_io_run_uring(struct swap_io *io, struct swap_io_req *reqs, unsigned n,
		      bool write, void (*during)(void *), void *arg)
{
	const bool remote = swap_remote_any(reqs, n);
	unsigned next = 0, inflight = 0;
	struct io_op *op;
	int ret;

	if (unlikely(remote))
		run_remote(io, reqs, n, write);
	io->write = write;
	while (next < n || inflight) {
		while (next < n && (op = op_get(io))) {
			struct swap_io_req *req = &reqs[next++];

			if (unlikely(remote) && swap_remote_is(req->si)) {
				op_put(io, op);
				continue;
			}
			if (!swap_io_req_begin(req)) {
				op_put(io, op);
				continue;
			}
			if (io->sealing)
				swap_seal_sub(io, req);
			op_start(op, req);
			op_queue(io, op);
			inflight++;
			if (io->sealing)	/* written while the next is sealed */
				io_uring_submit(&io->ring);
		}
		if (!inflight)
			break;
		if (during) {
			ret = io_uring_submit(&io->ring);
			if (ret < 0 && !enter_transient(ret)) {
				ring_failed(io, ret, reqs, next, n);
				break;
			}
			during(arg);
			during = NULL;
		}
		ret = io_uring_submit_and_wait(&io->ring, 1);
		if (ret < 0 && !enter_transient(ret)) {
			ring_failed(io, ret, reqs, next, n);
			break;
		}
		if (ret < 0 && ret != -EINTR)
			pause_briefly();
		inflight -= reap(io);
	}
	if (during)
		during(arg);
	return swap_io_first_error(reqs, n);
}

/* --- the interface --- */

/*
 * USWAP_NO_IO_URING.  uswap's own threads and a fork child's handlers (they
 * run as uswap, slab_self()) use the value read last: the environment may
 * by then be in memory uswap manages (redis moves it to its heap to set its
 * process title), and a fork child reading it before any fault thread of
 * its own runs would wait for ever.  The program's threads (a runtime's
 * setup, a test) read it anew.
 */
static bool uring_forbidden(void)
{
	static _Atomic int forbidden = -1;
	int f = atomic_load(&forbidden);

	if (f < 0 || !slab_self()) {
		const char *s = getenv("USWAP_NO_IO_URING");

		f = s && *s && strcmp(s, "0") != 0;
		atomic_store(&forbidden, f);
	}
	return f;
}

static int ring_init(struct swap_io *io, unsigned entries)
{
	struct io_uring_params p;
	int err;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN;
	err = io_uring_queue_init_params(entries, &io->ring, &p);
	if (err == -EINVAL) {		/* before 5.19: no such flags */
		memset(&p, 0, sizeof(p));
		err = io_uring_queue_init_params(entries, &io->ring, &p);
	}
	if (!err)	/* out of the program's reach (fdtable.c) */
		io->ring.ring_fd = io->ring.enter_ring_fd =
			fd_install_tagged(io->ring.ring_fd, FD_RING, io);
	return err;
}

struct swap_io *swap_io_create(unsigned depth)
{
	unsigned entries = 1, k;
	struct swap_io *io;
	size_t len;
	int err;

	if (depth == 0)
		depth = SWAP_IO_DEPTH_DEFAULT;
	depth = MIN(depth, SWAP_IO_DEPTH_MAX);
	while (entries < depth)
		entries <<= 1;
	len = sizeof(*io) + (size_t)entries * sizeof(io->ops[0]);
	io = prim_alloc(len);
	if (!io)
		return NULL;
	if (crypt_dev_count()) {
		io->seal = prim_alloc(sizeof(*io->seal));
		if (!io->seal) {
			prim_free(io, len);
			return NULL;
		}
	}
	io->alloc_len = len;
	io->max_bytes = SIZE_MAX;
	io->depth = entries;
	if (uring_forbidden())
		return io;
	err = ring_init(io, entries);
	if (err) {
		uswap_log_once(&logged_fallback, "io_uring unavailable (%s): "
			       "swap I/O uses pread/pwrite", strerror(-err));
		return io;
	}
	io->uring = true;
	io->have_ring = true;
	io->depth = MIN(entries, io->ring.sq.ring_entries);
	io->free_op = OP_NONE;
	for (k = io->depth; k-- > 0;) {
		io->ops[k].next_free = io->free_op;
		io->free_op = k;
	}
	return io;
}

void swap_io_destroy(struct swap_io *io)
{
	if (!io)
		return;
	if (io->have_ring) {
		/* liburing closes ring_fd: the number in this thread's table. */
		io->ring.ring_fd = io->ring.enter_ring_fd =
			fd_release_tagged(io->ring.ring_fd, io);
		io_uring_queue_exit(&io->ring);
	}
	prim_free(io->seal, sizeof(*io->seal));
	prim_free(io, io->alloc_len);
}

bool swap_io_uring(const struct swap_io *io)
{
	return io && io->uring;
}

void swap_io_set_max_bytes(struct swap_io *io, size_t max_bytes)
{
	assert(io);
	io->max_bytes = max_bytes ? max_bytes : SIZE_MAX;
}

int swap_io_write_batch(struct swap_io *io, struct swap_io_req *reqs,
			unsigned n)
{
	return swap_io_write_batch_during(io, reqs, n, NULL, NULL);
}

int swap_io_write_batch_during(struct swap_io *io, struct swap_io_req *reqs,
			       unsigned n, void (*during)(void *), void *arg)
{
	if (swap_seal_needed(reqs, n))
		return swap_seal_write_batch(io, reqs, n, during, arg);
	if (io && io->uring)
		return swap_io_run_uring(io, reqs, n, true, during, arg);
	if (during)
		during(arg);	/* no overlap without a ring */
	return swap_io_run_sync(io, reqs, n, true);
}

int swap_io_read_batch(struct swap_io *io, struct swap_io_req *reqs,
		       unsigned n)
{
	if (io && io->uring)
		return swap_io_run_uring(io, reqs, n, false, NULL, NULL);
	return swap_io_run_sync(io, reqs, n, false);
}

int swap_io_read(struct swap_io *io, struct swap_info *si, uint32_t offset,
		 void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct swap_io_req req = {
		.si = si, .offset = offset, .iov = &iov, .iovcnt = 1,
		.len = len,
	};

	return swap_io_read_batch(io, &req, 1);
}

/*
 * Write len bytes from iov at slot offset, without a context, and record
 * their checksums once written (the pool's writeback: its buffer is its
 * own, stable until this returns).  On a device that encrypts, the buffer
 * is sealed in place first (whole slots), and one write follows: it holds
 * ciphertext when this returns.
 */
int swap_write(struct swap_info *si, uint32_t offset, const struct iovec *iov,
	       int iovcnt, size_t len)
{
	struct swap_io_req req = {
		.si = si, .offset = offset, .iov = iov, .iovcnt = iovcnt,
		.len = len,
	};
	int err;

	if (!si->crypt) {
		err = swap_io_write_batch(NULL, &req, 1);
		if (!err)
			swap_csum_record(si, offset, iov, iovcnt);
		return err;
	}
	if (!swap_io_req_begin(&req))
		return req.result;
	if (si->csum)		/* of the plaintext, before it is sealed */
		swap_csum_record(si, offset, iov, iovcnt);
	err = swap_seal_in_place(si, offset, iov, iovcnt, len);
	return err ? err : swap_io_run_sync(NULL, &req, 1, true);
}

int swap_read(struct swap_info *si, uint32_t offset, void *buf, size_t len)
{
	return swap_io_read(NULL, si, offset, buf, len);
}
