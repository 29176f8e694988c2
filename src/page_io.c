// SPDX-License-Identifier: MIT
/*
 * page_io.c - swap I/O (the kernel's page_io.c): reads and batched writes
 * of slots, through io_uring or pread/pwrite, and the sealing of what goes
 * to an encrypting device.  The device's file (creation, space, discard)
 * and the checks of what a slot holds are in swap_file.c.
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
 * Encryption at rest (--encrypt on; crypt.c has the key and the AEAD).  A
 * device with si->crypt never sees a plaintext byte, and its callers see
 * no difference but swap_slots_check() after a read:
 *
 *   - a batch write (reclaim) cannot encrypt the program's pages where
 *     they are: they are the program's, mapped, only write-protected.  So
 *     a sealed batch is cut into rounds of at most SEAL_BOUNCE_BYTES, each
 *     request into pieces that fit; each piece is a sub-request over the
 *     context's bounce buffer, sealed just before it is queued, and with
 *     io_uring submitted at once, so that the device writes one piece
 *     while the next is sealed.  The results go back to the caller's
 *     requests (the first error of a request's pieces).  The bounce buffer
 *     (4 MiB, a reclaim batch) is made with the context, at thread start,
 *     when this process has a sealing device (crypt_dev_count()); a
 *     context that only reads never touches it (MAP_NORESERVE: address
 *     space only).  Without a context (or without its buffer) a sealed
 *     batch goes slot by slot through a page on the stack: slow, correct,
 *     allocation-free;
 *   - the pool's writeback (swap_write) seals in place: its buffer is its
 *     own scratch copy, and one write of the whole run follows;
 *   - a slot's tag and nonce counter are recorded when it is sealed,
 *     before its write: the slot is the writer's alone (freshly allocated,
 *     or held by the pool entry being written back) until the writer
 *     publishes it after the write completed, and a slot whose write
 *     failed is never read from the device (reclaim frees it; the pool
 *     keeps its entry and writes it again later).  swapon.c keeps no
 *     crc32c on an encrypting device: the tag checks the same bytes;
 *   - reads stay zero-copy: swap_slots_check() authenticates and decrypts
 *     every slot in place, then checks the crc32c if there is one.  A slot
 *     that fails is -EBADMSG, as a checksum mismatch: the fault path never
 *     installs it (SIGBUS there), logged once per device.
 *
 * Counters (swap_io_stat()): transfers that came back short and were
 * resubmitted, and pages sealed.  They are this process's (a child after
 * fork starts from zero), summed over its runtimes, and read into the
 * vmstat counters swap_io_short and swap_encrypt (vmstat.c).
 *
 * Injected faults (tests, prim.c): a transfer to or from a device named in
 * USWAP_INJECT completes with EIO, ENOSPC, a short count or a flipped
 * byte, in both modes, at the one place both reap a transfer's result
 * (io_result), so that every path above sees what a failing device gives.
 */
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "crypt.h"
#include "internal.h"
#include "swap_io.h"

#ifndef IORING_SETUP_SUBMIT_ALL
#define IORING_SETUP_SUBMIT_ALL		(1U << 7)
#endif
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN	(1U << 8)
#endif

#define OP_NONE		UINT32_MAX
#define IO_RETRIES	16	/* -EAGAIN / -EINTR of one transfer in a row */

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

static bool logged_fallback, logged_ring;

/* --- this process's counters --- */

static struct {
	_Atomic pid_t pid;		/* whose they are */
	_Atomic uint64_t v[SWAP_IO_NR_STATS];
} io_stats;

/* Counts of the parent's, in a child after fork, are not the child's. */
static void io_stat_add(enum swap_io_stat item, uint64_t n)
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
static bool req_begin(struct swap_io_req *req)
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
		io_stat_add(SWAP_IO_SHORT, 1);	/* resubmitted for the rest */
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

static int first_error(const struct swap_io_req *reqs, unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (reqs[k].result)
			return reqs[k].result;
	return 0;
}

/* --- fallback: one system call after another --- */

static void seal_sub(struct swap_io *io, const struct swap_io_req *sub);

static void run_sync_one(struct swap_io *io, struct swap_io_req *req,
			 size_t max, bool write)
{
	struct io_op op;
	ssize_t res;

	if (!req_begin(req))
		return;
	if (io && io->sealing)
		seal_sub(io, req);
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

static int run_sync(struct swap_io *io, struct swap_io_req *reqs, unsigned n,
		    bool write)
{
	const size_t max = io ? io->max_bytes : SIZE_MAX;
	unsigned k;

	for (k = 0; k < n; k++)
		run_sync_one(io, &reqs[k], max, write);
	return first_error(reqs, n);
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
static int run_uring(struct swap_io *io, struct swap_io_req *reqs, unsigned n,
		     bool write, void (*during)(void *), void *arg)
{
	unsigned next = 0, inflight = 0;
	struct io_op *op;
	int ret;

	io->write = write;
	while (next < n || inflight) {
		while (next < n && (op = op_get(io))) {
			struct swap_io_req *req = &reqs[next++];

			if (!req_begin(req)) {
				op_put(io, op);
				continue;
			}
			if (io->sealing)
				seal_sub(io, req);
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
	return first_error(reqs, n);
}

/* --- sealing: encryption at rest --- */

/* A request's bytes, slot by slot, across its iovec elements. */
struct iov_cursor {
	const struct iovec *iov;
	int idx;
	size_t skip;			/* bytes of iov[idx] behind us */
};

static void cursor_init(struct iov_cursor *c, const struct iovec *iov,
			int cnt, size_t pos)
{
	c->iov = iov;
	c->idx = 0;
	while (c->idx < cnt && pos >= iov[c->idx].iov_len)
		pos -= iov[c->idx++].iov_len;
	c->skip = pos;
}

/*
 * The next slot's 4 KiB: where it lies, when one element holds it whole,
 * else gathered into tmp.  The request has whole slots (seal_begin), so
 * the elements never run out.
 */
static const void *cursor_slot(struct iov_cursor *c, void *tmp)
{
	const struct iovec *v = &c->iov[c->idx];
	size_t got = 0;

	while (c->skip == v->iov_len) {		/* past empty elements */
		v = &c->iov[++c->idx];
		c->skip = 0;
	}
	if (v->iov_len - c->skip >= SWAP_SLOT_SIZE) {
		c->skip += SWAP_SLOT_SIZE;
		return (const char *)v->iov_base + c->skip - SWAP_SLOT_SIZE;
	}
	while (got < SWAP_SLOT_SIZE) {
		size_t take;

		v = &c->iov[c->idx];
		take = MIN(v->iov_len - c->skip, SWAP_SLOT_SIZE - got);
		memcpy((char *)tmp + got, (const char *)v->iov_base + c->skip,
		       take);
		got += take;
		c->skip += take;
		if (c->skip == v->iov_len) {
			c->idx++;
			c->skip = 0;
		}
	}
	return tmp;
}

/* req_begin() for a request of a sealed batch: whole slots only. */
static bool seal_begin(struct swap_io_req *req)
{
	if (!req_begin(req))
		return false;
	if (req->si->crypt && (req->len & (SWAP_SLOT_SIZE - 1))) {
		req->result = -EINVAL;
		return false;
	}
	return true;
}

/*
 * Seal sub-request sub of the round (a piece of one of the caller's
 * requests) into its part of the bounce buffer; a piece of a device that
 * does not encrypt is left as it is.  The caller's pages are only read:
 * they stay the program's (write-protected while they are evicted).
 */
static void seal_sub(struct swap_io *io, const struct swap_io_req *sub)
{
	const struct seal_piece *pc = &io->seal->piece[sub - io->seal->sub];
	const struct swap_io_req *req = &io->caller[pc->req];
	const uint32_t nr = (uint32_t)(sub->len >> SWAP_SLOT_SHIFT);
	struct swap_crypt *sc = sub->si->crypt;
	char *dst = sub->iov[0].iov_base;
	struct iov_cursor cur;
	uint64_t seq;
	uint32_t k;

	if (!pc->sealed)
		return;
	cursor_init(&cur, req->iov, req->iovcnt,
		    (size_t)pc->from << SWAP_SLOT_SHIFT);
	seq = crypt_seq_reserve(sc, nr);
	program_memory_read_begin();
	for (k = 0; k < nr; k++, dst += SWAP_SLOT_SIZE)
		crypt_seal_slot(sc, sub->offset + k, seq + k, dst,
				cursor_slot(&cur, dst));
	program_memory_read_end();
	io_stat_add(SWAP_IO_SEALED, nr);
}

/*
 * The next round of a sealed batch, from slot *rs of request *ri on: as
 * many pieces as the bounce buffer holds, as sub-requests over it (a
 * device that does not encrypt gets its request as it is).  Requests
 * that need no I/O get their result here; so do the rest of a request one
 * of whose pieces failed in an earlier round.  Returns the sub-requests.
 */
static unsigned seal_round(struct swap_io *io, struct swap_io_req *reqs,
			   unsigned n, unsigned *ri, uint32_t *rs)
{
	struct seal_bufs *b = io->seal;
	size_t used = 0;
	unsigned nb = 0;

	while (*ri < n && nb < SEAL_SUBS) {
		struct swap_io_req *req = &reqs[*ri];
		uint32_t take;

		if ((*rs == 0 && !seal_begin(req)) || req->result) {
			(*ri)++;
			*rs = 0;
			continue;
		}
		b->piece[nb] = (struct seal_piece){
			.req = *ri, .from = *rs, .sealed = req->si->crypt != NULL,
		};
		if (!req->si->crypt) {
			b->sub[nb++] = *req;
			(*ri)++;
			continue;
		}
		take = MIN((uint32_t)(req->len >> SWAP_SLOT_SHIFT) - *rs,
			   (uint32_t)((SEAL_BOUNCE_BYTES - used) >> SWAP_SLOT_SHIFT));
		if (!take)
			break;		/* the buffer is full */
		b->sub_iov[nb] = (struct iovec){
			.iov_base = b->bounce + used,
			.iov_len = (size_t)take << SWAP_SLOT_SHIFT,
		};
		b->sub[nb] = (struct swap_io_req){
			.si = req->si, .offset = req->offset + *rs,
			.iov = &b->sub_iov[nb], .iovcnt = 1,
			.len = b->sub_iov[nb].iov_len,
		};
		used += b->sub_iov[nb].iov_len;
		nb++;
		*rs += take;
		if (*rs == req->len >> SWAP_SLOT_SHIFT) {
			(*ri)++;
			*rs = 0;
		}
	}
	return nb;
}

/* Each request gets the first error of its pieces. */
static void seal_results(struct swap_io *io, struct swap_io_req *reqs,
			 unsigned nb)
{
	unsigned k;

	for (k = 0; k < nb; k++) {
		struct swap_io_req *req = &reqs[io->seal->piece[k].req];

		if (io->seal->sub[k].result && !req->result)
			req->result = io->seal->sub[k].result;
	}
}

/* Seal and write a request slot by slot through page (no bounce buffer). */
static void write_slots_sealed(struct swap_io_req *req, char *page)
{
	struct swap_crypt *sc = req->si->crypt;
	const uint32_t nr = (uint32_t)(req->len >> SWAP_SLOT_SHIFT);
	struct iovec v = { .iov_base = page, .iov_len = SWAP_SLOT_SIZE };
	const uint64_t seq = crypt_seq_reserve(sc, nr);
	struct iov_cursor cur;
	uint32_t k;

	cursor_init(&cur, req->iov, req->iovcnt, 0);
	for (k = 0; k < nr && !req->result; k++) {
		struct swap_io_req one = {
			.si = req->si, .offset = req->offset + k, .iov = &v,
			.iovcnt = 1, .len = SWAP_SLOT_SIZE,
		};

		program_memory_read_begin();
		crypt_seal_slot(sc, one.offset, seq + k, page,
				cursor_slot(&cur, page));
		program_memory_read_end();
		run_sync_one(NULL, &one, SIZE_MAX, true);
		req->result = one.result;
	}
	io_stat_add(SWAP_IO_SEALED, k);
}

/* A sealed batch without a context (or its bounce buffer): slowly. */
static int write_sealed_slowly(struct swap_io_req *reqs, unsigned n,
			       void (*during)(void *), void *arg)
{
	char page[SWAP_SLOT_SIZE] __attribute__((aligned(SWAP_SLOT_SIZE)));
	unsigned k;

	if (during)
		during(arg);
	for (k = 0; k < n; k++) {
		if (!seal_begin(&reqs[k]))
			continue;
		if (reqs[k].si->crypt)
			write_slots_sealed(&reqs[k], page);
		else
			run_sync_one(NULL, &reqs[k], SIZE_MAX, true);
	}
	return first_error(reqs, n);
}

/* A batch with a request to a device that encrypts: round by round. */
static int write_sealed(struct swap_io *io, struct swap_io_req *reqs,
			unsigned n, void (*during)(void *), void *arg)
{
	unsigned ri = 0, nb;
	uint32_t rs = 0;

	if (!io || !io->seal)
		return write_sealed_slowly(reqs, n, during, arg);
	io->caller = reqs;
	while ((nb = seal_round(io, reqs, n, &ri, &rs))) {
		io->sealing = true;
		if (io->uring) {
			run_uring(io, io->seal->sub, nb, true, during, arg);
		} else {
			if (during)
				during(arg);
			run_sync(io, io->seal->sub, nb, true);
		}
		io->sealing = false;
		during = NULL;
		seal_results(io, reqs, nb);
	}
	io->caller = NULL;
	if (during)
		during(arg);
	return first_error(reqs, n);
}

static bool batch_sealed(const struct swap_io_req *reqs, unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (reqs[k].si && reqs[k].si->crypt)
			return true;
	return false;
}

/*
 * The pool's writeback: seal its buffer where it is, whole slots from
 * offset (the caller checked the range).  0 or -EINVAL.
 */
static int seal_in_place(struct swap_info *si, uint32_t offset,
			 const struct iovec *iov, int iovcnt, size_t len)
{
	struct swap_crypt *sc = si->crypt;
	uint64_t seq;
	int i;

	for (i = 0; i < iovcnt; i++)
		if (iov[i].iov_len & (SWAP_SLOT_SIZE - 1))
			return -EINVAL;
	seq = crypt_seq_reserve(sc, (uint32_t)(len >> SWAP_SLOT_SHIFT));
	for (i = 0; i < iovcnt; i++) {
		char *p = iov[i].iov_base, *end = p + iov[i].iov_len;

		for (; p < end; p += SWAP_SLOT_SIZE)
			crypt_seal_slot(sc, offset++, seq++, p, p);
	}
	io_stat_add(SWAP_IO_SEALED, len >> SWAP_SLOT_SHIFT);
	return 0;
}

/* --- the interface --- */

static bool uring_forbidden(void)
{
	const char *s = getenv("USWAP_NO_IO_URING");

	return s && *s && strcmp(s, "0") != 0;
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
	if (io->have_ring)
		io_uring_queue_exit(&io->ring);
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
	if (batch_sealed(reqs, n))
		return write_sealed(io, reqs, n, during, arg);
	if (io && io->uring)
		return run_uring(io, reqs, n, true, during, arg);
	if (during)
		during(arg);	/* no overlap without a ring */
	return run_sync(io, reqs, n, true);
}

int swap_io_read_batch(struct swap_io *io, struct swap_io_req *reqs,
		       unsigned n)
{
	if (io && io->uring)
		return run_uring(io, reqs, n, false, NULL, NULL);
	return run_sync(io, reqs, n, false);
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
	if (!req_begin(&req))
		return req.result;
	if (si->csum)		/* of the plaintext, before it is sealed */
		swap_csum_record(si, offset, iov, iovcnt);
	err = seal_in_place(si, offset, iov, iovcnt, len);
	return err ? err : run_sync(NULL, &req, 1, true);
}

int swap_read(struct swap_info *si, uint32_t offset, void *buf, size_t len)
{
	return swap_io_read(NULL, si, offset, buf, len);
}

