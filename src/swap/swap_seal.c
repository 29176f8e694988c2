// SPDX-License-Identifier: MIT
/*
 * swap_seal.c - encryption at rest of what uswap writes to a swap device
 * (--encrypt on): the sealing of a batch's writes, and of the pool's
 * writeback, on their way to a device that encrypts, through the I/O of
 * page_io.c.  crypt.c has the key and the AEAD; swap_file.c opens what is
 * read back (swap_slots_check()).  The kernel has no such layer in mm/: it
 * leaves swap encryption to the block layer below it (dm-crypt under the
 * swap device); uswap writes to files from user space, so it seals each
 * slot itself, on the way out.
 *
 * A device with si->crypt never sees a plaintext byte, and its callers see
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
 *     (4 MiB, a reclaim batch) is made with the context, at thread start
 *     (swap_io_create(), page_io.c), when this process has a sealing
 *     device (crypt_dev_count()); a context that only reads never
 *     touches it (MAP_NORESERVE: address space only).  Without a context
 *     (or without its buffer) a sealed batch goes slot by slot through a
 *     page on the stack: slow, correct, allocation-free;
 *   - swap_write() (one write without a context; the tests' device
 *     writes) seals in place: its buffer is the caller's scratch copy, and
 *     one write of the whole run follows.  The pool's writeback goes
 *     through the batch path above with its thread's context;
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
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "crypt.h"
#include "base.h"
#include "swap.h"
#include "page_io.h"
#include "swap_io.h"

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

/* swap_io_req_begin() for a request of a sealed batch: whole slots only. */
static bool seal_begin(struct swap_io_req *req)
{
	if (!swap_io_req_begin(req))
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
void swap_seal_sub(struct swap_io *io, const struct swap_io_req *sub)
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
	swap_io_stat_add(SWAP_IO_SEALED, nr);
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
		swap_io_run_sync_one(NULL, &one, SIZE_MAX, true);
		req->result = one.result;
	}
	swap_io_stat_add(SWAP_IO_SEALED, k);
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
			swap_io_run_sync_one(NULL, &reqs[k], SIZE_MAX, true);
	}
	return swap_io_first_error(reqs, n);
}

/* A batch with a request to a device that encrypts: round by round. */
int swap_seal_write_batch(struct swap_io *io, struct swap_io_req *reqs,
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
			swap_io_run_uring(io, io->seal->sub, nb, true, during,
					  arg);
		} else {
			if (during)
				during(arg);
			swap_io_run_sync(io, io->seal->sub, nb, true);
		}
		io->sealing = false;
		during = NULL;
		seal_results(io, reqs, nb);
	}
	io->caller = NULL;
	if (during)
		during(arg);
	return swap_io_first_error(reqs, n);
}

bool swap_seal_needed(const struct swap_io_req *reqs, unsigned n)
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
int swap_seal_in_place(struct swap_info *si, uint32_t offset,
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
	swap_io_stat_add(SWAP_IO_SEALED, len >> SWAP_SLOT_SHIFT);
	return 0;
}
