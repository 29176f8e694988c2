// SPDX-License-Identifier: MIT
/*
 * Description: swap device I/O (src/swap/page_io.c) and discard of freed
 * clusters (src/swap/swapfile.c), on a real swap file in a temporary directory.
 *
 *  - batched writes of every run of a 64 MiB device (random offsets,
 *    1..512 slots, each run split into random iovecs, batches of 1..64)
 *    through io_uring (depth 64, and depth 4 so that batches overflow the
 *    ring), through the forced fallback (USWAP_NO_IO_URING=1), without a
 *    context, and with transfers capped at a few pages (every request then
 *    completes through the short-transfer path); every byte read back, by
 *    single reads and by read batches, also across modes;
 *  - errors come back per request and nothing crashes: a run outside the
 *    device, len not matching iov, a closed descriptor, a read-only one,
 *    reads past the end of the file, a write cut short by RLIMIT_FSIZE
 *    (the bytes before the limit are written, the request fails);
 *  - discard: freed clusters are parked until swap_discard_run() (or the
 *    next allocation) punches them (st_blocks, SEEK_DATA), come back
 *    unprovisioned, are provisioned and used again and read back right;
 *    a context's own cluster is parked only when released; a failing
 *    discard leaves the cluster provisioned; EOPNOTSUPP turns parking off;
 *    an allocation discards only a few of many parked clusters;
 *  - lazy discard (the file that grows): freed clusters are reused as they
 *    are, and swap_discard_run() punches the free ones that hold space;
 *  - two threads allocating, writing, verifying and freeing while a third
 *    runs the discard queue: no write is ever destroyed by a discard.
 *
 * Usage: page_io [--seed N] [CASE...] (tests/unit/unitlib.h); exits 0 pass,
 * 1 fail, 77 skip.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "unitlib.h"
#include "swap.h"
#include "swap_io.h"

#define DEV_BYTES	(64u << 20)
#define MAX_RUN		512u
#define MAX_PIECES	8u
#define MAX_BATCH	64u

static uint64_t seed;		/* t_seed at the start of each case */
static char dir[] = "/tmp/uswap-page-io-XXXXXX";

/* --- helpers --- */

static void *xalloc(size_t len)
{
	void *p = aligned_alloc(T_PAGE, (len + T_PAGE - 1) & ~(size_t)(T_PAGE - 1));

	if (!p)
		t_fail("out of memory");
	return p;
}

static void dev_open(struct swap_info *si, uint64_t bytes)
{
	int err = swap_info_init(si, 0, bytes);

	if (err)
		t_fail("swap_info_init: %d", err);
	err = swap_file_create(si, dir, bytes);
	if (err)
		t_fail("swap_file_create in %s: %s", dir, strerror(-err));
}

static void dev_close(struct swap_info *si)
{
	if (swap_info_validate(si))
		t_fail("slot map invalid");
	swap_file_close(si);
	swap_info_destroy(si);
}

/* A context; forced to the fallback when fallback is set. */
static struct swap_io *io_new(unsigned depth, bool fallback)
{
	struct swap_io *io;

	if (fallback)
		setenv("USWAP_NO_IO_URING", "1", 1);
	io = swap_io_create(depth);
	unsetenv("USWAP_NO_IO_URING");
	if (!io)
		t_fail("swap_io_create(%u)", depth);
	if (fallback && swap_io_uring(io))
		t_fail("USWAP_NO_IO_URING=1 did not force the fallback");
	return io;
}

/* Contents of slot s in round v, into p. */
static void fill_slots(char *p, uint32_t slot, uint32_t nr, uint64_t v)
{
	uint32_t k;

	for (k = 0; k < nr; k++)
		t_fill(p + (size_t)k * T_PAGE, slot + k, v);
}

static void check_slots(const char *p, uint32_t slot, uint32_t nr, uint64_t v,
			const char *what)
{
	uint32_t k;

	for (k = 0; k < nr; k++)
		if (t_check(p + (size_t)k * T_PAGE, slot + k, v))
			t_fail("%s: slot %u (run at %u, %u slots) does not read "
			       "back as round %" PRIu64, what, slot + k, slot,
			       nr, v);
}

/* Split [base, base + nr pages) into 1..MAX_PIECES iovecs; returns count. */
static int split_iov(struct iovec *iov, char *base, uint32_t nr)
{
	uint32_t left = nr;
	int n = 0;

	while (left) {
		uint32_t take = left;

		if (n + 1 < (int)MAX_PIECES && left > 1 && t_rand(&seed) % 3)
			take = 1 + (uint32_t)(t_rand(&seed) % left);
		iov[n].iov_base = base;
		iov[n].iov_len = (size_t)take * T_PAGE;
		base += (size_t)take * T_PAGE;
		left -= take;
		n++;
	}
	return n;
}

/* --- round trips --- */

struct run {
	uint32_t off, nr;
};

static unsigned make_runs(struct run *runs, uint32_t nr_slots)
{
	uint32_t at = 0;
	unsigned n = 0, k;

	for (;;) {
		uint32_t gap = (uint32_t)(t_rand(&seed) % 4);
		uint32_t len = 1 + (uint32_t)(t_rand(&seed) % MAX_RUN);

		if (at + gap + len > nr_slots)
			break;
		runs[n].off = at + gap;
		runs[n].nr = len;
		at += gap + len;
		n++;
	}
	for (k = n; k > 1; k--) {	/* random order */
		unsigned j = (unsigned)(t_rand(&seed) % k);
		struct run t = runs[k - 1];

		runs[k - 1] = runs[j];
		runs[j] = t;
	}
	return n;
}

/*
 * Write every run (contents of round v, staged in data at the run's slot)
 * in batches through wio, then read each back through rio.
 */
static void round_trip(struct swap_info *si, struct swap_io *wio,
		       struct swap_io *rio, char *data, char *rbuf, uint64_t v,
		       const char *what)
{
	static struct run runs[DEV_BYTES / T_PAGE];
	static struct iovec iov[MAX_BATCH * MAX_PIECES];
	struct swap_io_req reqs[MAX_BATCH];
	unsigned nr_runs = make_runs(runs, si->nr_slots), k, b, n;
	int err;

	for (k = 0; k < nr_runs; k++)
		fill_slots(data + (size_t)runs[k].off * T_PAGE, runs[k].off,
			   runs[k].nr, v);
	for (k = 0; k < nr_runs; k += n) {
		unsigned used = 0;

		n = 1 + (unsigned)(t_rand(&seed) % MAX_BATCH);
		if (n > nr_runs - k)
			n = nr_runs - k;
		for (b = 0; b < n; b++) {
			const struct run *r = &runs[k + b];
			int cnt = split_iov(&iov[used],
					    data + (size_t)r->off * T_PAGE, r->nr);

			reqs[b] = (struct swap_io_req){
				.si = si, .offset = r->off, .iov = &iov[used],
				.iovcnt = cnt, .len = (size_t)r->nr * T_PAGE,
				.result = 12345,
			};
			used += (unsigned)cnt;
		}
		err = swap_io_write_batch(wio, reqs, n);
		for (b = 0; b < n; b++)
			if (reqs[b].result)
				t_fail("%s: write of run %u+%u: %d", what,
				       reqs[b].offset, (unsigned)(reqs[b].len / T_PAGE),
				       reqs[b].result);
		if (err)
			t_fail("%s: batch returned %d with every request done", what,
			       err);
	}

	/* Back: half the runs by single reads, half in batches of pieces. */
	for (k = 0; k < nr_runs; k++) {
		const struct run *r = &runs[k];

		memset(rbuf, 0xa5, (size_t)r->nr * T_PAGE);
		if (k & 1) {
			err = swap_io_read(rio, si, r->off, rbuf,
					   (size_t)r->nr * T_PAGE);
		} else {
			int cnt = split_iov(iov, rbuf, r->nr);

			reqs[0] = (struct swap_io_req){
				.si = si, .offset = r->off, .iov = iov,
				.iovcnt = cnt, .len = (size_t)r->nr * T_PAGE,
			};
			err = swap_io_read_batch(rio, reqs, 1);
		}
		if (err)
			t_fail("%s: read of run %u+%u: %d", what, r->off, r->nr,
			       err);
		check_slots(rbuf, r->off, r->nr, v, what);
	}
}

static void test_round_trips(void)
{
	struct swap_io *uring = io_new(64, false), *small = io_new(4, false);
	struct swap_io *fb = io_new(64, true), *capped = io_new(16, false);
	struct swap_io *capped_fb = io_new(16, true);
	char *data = xalloc(DEV_BYTES), *rbuf = xalloc(MAX_RUN * T_PAGE);
	struct swap_info si;
	uint64_t v = 0;

	dev_open(&si, DEV_BYTES);
	if (!swap_io_uring(uring))
		fprintf(stderr, "NOTE: io_uring unavailable here: only the "
			"fallback is exercised\n");
	fprintf(stderr, "swap file: %s\n", si.direct ? "O_DIRECT" : "buffered");
	swap_io_set_max_bytes(capped, 3 * T_PAGE);
	swap_io_set_max_bytes(capped_fb, 5 * T_PAGE);

	round_trip(&si, uring, uring, data, rbuf, ++v, "io_uring");
	round_trip(&si, uring, uring, data, rbuf, ++v, "io_uring again");
	round_trip(&si, small, fb, data, rbuf, ++v, "io_uring depth 4, fallback reads");
	round_trip(&si, fb, fb, data, rbuf, ++v, "fallback");
	round_trip(&si, fb, uring, data, rbuf, ++v, "fallback, io_uring reads");
	round_trip(&si, NULL, NULL, data, rbuf, ++v, "no context");
	round_trip(&si, capped, capped, data, rbuf, ++v, "io_uring, capped transfers");
	round_trip(&si, capped_fb, capped_fb, data, rbuf, ++v,
		   "fallback, capped transfers");

	dev_close(&si);
	swap_io_destroy(uring);
	swap_io_destroy(small);
	swap_io_destroy(fb);
	swap_io_destroy(capped);
	swap_io_destroy(capped_fb);
	swap_io_destroy(NULL);
	free(data);
	free(rbuf);
}

/* --- errors --- */

/* One write of nr slots at off from buf: its result. */
static int write_one(struct swap_io *io, struct swap_info *si, uint32_t off,
		     void *buf, uint32_t nr)
{
	struct iovec iov = { buf, (size_t)nr * T_PAGE };
	struct swap_io_req req = {
		.si = si, .offset = off, .iov = &iov, .iovcnt = 1,
		.len = iov.iov_len, .result = 12345,
	};
	int err = swap_io_write_batch(io, &req, 1);

	if (err != req.result)
		t_fail("batch of one returned %d, its request %d", err,
		       req.result);
	return req.result;
}

static void test_errors_with(struct swap_io *io, const char *what)
{
	struct swap_info si, bad;
	char *buf = xalloc(16 * T_PAGE);
	struct iovec iov[2] = {
		{ buf, 4 * T_PAGE }, { buf + 4 * T_PAGE, 4 * T_PAGE },
	};
	struct swap_io_req reqs[4];
	struct rlimit old, lim;
	int fd, err;

	dev_open(&si, 4u << 20);	/* 1024 slots */
	fill_slots(buf, 1000, 16, 7);

	/* Outside the device, or len not matching iov: -EINVAL, others done. */
	reqs[0] = (struct swap_io_req){ &si, 1020, iov, 2, 8 * T_PAGE, 1 };
	reqs[1] = (struct swap_io_req){ &si, 10, iov, 2, 8 * T_PAGE, 1 };
	reqs[2] = (struct swap_io_req){ &si, 5000, iov, 1, 4 * T_PAGE, 1 };
	reqs[3] = (struct swap_io_req){ &si, 20, iov, 2, 7 * T_PAGE, 1 };
	err = swap_io_write_batch(io, reqs, 4);
	if (err != -EINVAL || reqs[0].result != -EINVAL || reqs[1].result ||
	    reqs[2].result != -EINVAL || reqs[3].result != -EINVAL)
		t_fail("%s: bad requests: %d (%d %d %d %d)", what, err,
		       reqs[0].result, reqs[1].result, reqs[2].result,
		       reqs[3].result);
	if (swap_io_read(io, &si, 1023, buf, 2 * T_PAGE) != -EINVAL)
		t_fail("%s: read past the device", what);
	/* An empty request is done at once. */
	reqs[0] = (struct swap_io_req){ &si, 3, iov, 0, 0, 1 };
	if (swap_io_write_batch(io, reqs, 1) || reqs[0].result)
		t_fail("%s: empty request: %d", what, reqs[0].result);

	/* A closed descriptor: -EBADF, for reads and writes. */
	bad = si;
	fd = dup(si.fd);
	close(fd);
	bad.fd = fd;
	if ((err = write_one(io, &bad, 0, buf, 4)) != -EBADF)
		t_fail("%s: write to a closed fd: %d", what, err);
	if ((err = swap_io_read(io, &bad, 0, buf, T_PAGE)) != -EBADF)
		t_fail("%s: read from a closed fd: %d", what, err);

	/* A read-only descriptor: the write fails, the read works. */
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", si.fd);
		bad.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (bad.fd < 0)
			t_fail("reopen %s read-only: %s", path, strerror(errno));
		if ((err = write_one(io, &bad, 0, buf, 4)) != -EBADF)
			t_fail("%s: write to a read-only fd: %d", what, err);
		if ((err = swap_io_read(io, &bad, 0, buf, T_PAGE)))
			t_fail("%s: read from a read-only fd: %d", what, err);
		close(bad.fd);
	}

	/* The end of the file: a read past it, or across it, is -EIO. */
	if (ftruncate(si.fd, 2u << 20))
		t_fail("ftruncate: %s", strerror(errno));
	if ((err = swap_io_read(io, &si, 600, buf, T_PAGE)) != -EIO)
		t_fail("%s: read past the end of the file: %d", what, err);
	if ((err = swap_io_read(io, &si, 510, buf, 4 * T_PAGE)) != -EIO)
		t_fail("%s: read across the end of the file: %d", what, err);
	if (ftruncate(si.fd, 4u << 20))
		t_fail("ftruncate: %s", strerror(errno));

	/*
	 * RLIMIT_FSIZE at slot 256: a write of slots 252..259 is cut short
	 * at the limit, its rest fails with EFBIG; the first half is there.
	 */
	fill_slots(buf, 252, 8, 9);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 256u * T_PAGE;
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &lim))
		t_fail("setrlimit: %s", strerror(errno));
	reqs[0] = (struct swap_io_req){ &si, 252, iov, 2, 8 * T_PAGE, 1 };
	reqs[1] = (struct swap_io_req){ &si, 100, iov, 1, 4 * T_PAGE, 1 };
	err = swap_io_write_batch(io, reqs, 2);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	if (err != -EFBIG || reqs[0].result != -EFBIG || reqs[1].result)
		t_fail("%s: write across RLIMIT_FSIZE: %d (%d %d)", what, err,
		       reqs[0].result, reqs[1].result);
	memset(buf + 8 * T_PAGE, 0, 8 * T_PAGE);
	if (swap_io_read(io, &si, 252, buf + 8 * T_PAGE, 4 * T_PAGE))
		t_fail("%s: read back below RLIMIT_FSIZE", what);
	check_slots(buf + 8 * T_PAGE, 252, 4, 9, what);

	dev_close(&si);
	free(buf);
}

static void test_errors(void)
{
	struct swap_io *uring = io_new(8, false), *fb = io_new(8, true);
	struct swap_io *capped = io_new(8, false);

	swap_io_set_max_bytes(capped, 2 * T_PAGE);
	test_errors_with(uring, "io_uring");
	test_errors_with(fb, "fallback");
	test_errors_with(capped, "io_uring, capped");
	test_errors_with(NULL, "no context");
	swap_io_destroy(uring);
	swap_io_destroy(fb);
	swap_io_destroy(capped);

	/* Depth is clamped and rounded; 0 is the default. */
	uring = io_new(0, false);
	swap_io_destroy(uring);
	uring = io_new(1u << 30, false);
	swap_io_destroy(uring);
}

/* --- discard --- */

static uint64_t blocks_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		t_fail("fstat: %s", strerror(errno));
	return (uint64_t)st.st_blocks * 512;
}

/* Bytes allocated in cluster c, by SEEK_DATA/SEEK_HOLE. */
static uint64_t data_in_cluster(int fd, uint32_t c)
{
	off_t start = (off_t)c * SWAP_CLUSTER_BYTES, end = start + SWAP_CLUSTER_BYTES;
	off_t at = start, d, h;
	uint64_t bytes = 0;

	while (at < end) {
		d = lseek(fd, at, SEEK_DATA);
		if (d < 0 || d >= end)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || h > end)
			h = end;
		bytes += (uint64_t)(h - d);
		at = h;
	}
	return bytes;
}

static int punch_fails(struct swap_info *si, uint32_t cluster)
{
	(void)si;
	(void)cluster;
	return -EIO;
}

static int punch_unsupported(struct swap_info *si, uint32_t cluster)
{
	(void)si;
	(void)cluster;
	return -EOPNOTSUPP;
}

/* Can this file system punch holes?  Probe on a scratch file. */
static bool can_punch(void)
{
	char path[sizeof(dir) + 16];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/probe", dir);
	fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	unlink(path);
	ok = ftruncate(fd, 1 << 20) == 0 &&
	     fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
		       4096) == 0;
	close(fd);
	return ok;
}

/* Allocate a whole cluster and fill it with round v; returns its index. */
static uint32_t fill_cluster(struct swap_info *si, struct swap_alloc_ctx *ctx,
			     struct swap_io *io, char *buf, uint64_t v)
{
	uint32_t off;
	int err = swap_slot_alloc(si, ctx, SWAP_MAX_ORDER, &off);

	if (err)
		t_fail("alloc of a cluster: %d", err);
	fill_slots(buf, off, SWAP_CLUSTER_SLOTS, v);
	if ((err = write_one(io, si, off, buf, SWAP_CLUSTER_SLOTS)))
		t_fail("write of cluster at %u: %d", off, err);
	return off >> SWAP_CLUSTER_SHIFT;
}

static void verify_cluster(struct swap_info *si, struct swap_io *io,
			   uint32_t c, char *buf, uint64_t v)
{
	uint32_t off = c << SWAP_CLUSTER_SHIFT;

	if (swap_io_read(io, si, off, buf, SWAP_CLUSTER_BYTES))
		t_fail("read of cluster %u", c);
	check_slots(buf, off, SWAP_CLUSTER_SLOTS, v, "discard");
}

static void test_discard(void)
{
	struct swap_io *io = io_new(16, false);
	char *buf = xalloc(SWAP_CLUSTER_BYTES);
	struct swap_alloc_ctx ctx;
	struct swap_info si;
	uint64_t before, after;
	uint32_t c[4], k, off, again;
	int err;

	if (!can_punch()) {
		t_skip_case("no hole punching in /tmp");
		swap_io_destroy(io);
		free(buf);
		return;
	}
	dev_open(&si, 16u << 20);	/* 8 clusters */
	if (swap_discard_count(&si) != 0)
		t_fail("discards before discard is on");
	if ((err = swap_discard_enable(&si)))
		t_fail("swap_discard_enable: %d", err);
	swap_alloc_ctx_init(&ctx);

	for (k = 0; k < 4; k++)
		c[k] = fill_cluster(&si, &ctx, io, buf, 100 + k);
	for (k = 0; k < 4; k++)
		if (data_in_cluster(si.fd, c[k]) != SWAP_CLUSTER_BYTES)
			t_fail("cluster %u not allocated after writing", c[k]);
	before = blocks_of(si.fd);

	/* Freed: parked, nothing punched yet, nothing allocatable there. */
	swap_slot_free(&si, c[0] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_slot_free(&si, c[1] << SWAP_CLUSTER_SHIFT, 100);
	swap_slot_free(&si, (c[1] << SWAP_CLUSTER_SHIFT) + 100,
		       SWAP_CLUSTER_SLOTS - 100);
	if (swap_info_validate(&si))
		t_fail("slot map invalid with parked clusters");
	if (si.clusters[c[0]].list != CLUSTER_CURRENT ||
	    si.clusters[c[1]].list != CLUSTER_CURRENT ||
	    si.discard->nr != 2 || swap_discard_count(&si) != 0)
		t_fail("freed clusters not parked");
	if (data_in_cluster(si.fd, c[0]) != SWAP_CLUSTER_BYTES)
		t_fail("cluster punched before swap_discard_run");

	swap_discard_run(&si);
	after = blocks_of(si.fd);
	if (swap_discard_count(&si) != 2 || si.discard->nr != 0)
		t_fail("discards: %" PRIu64, swap_discard_count(&si));
	if (data_in_cluster(si.fd, c[0]) || data_in_cluster(si.fd, c[1]))
		t_fail("freed clusters still hold data after discard");
	if (before - after < 2ull * SWAP_CLUSTER_BYTES)
		t_fail("st_blocks went from %" PRIu64 " to %" PRIu64 " bytes",
		       before, after);
	if (data_in_cluster(si.fd, c[2]) != SWAP_CLUSTER_BYTES)
		t_fail("a used cluster lost its blocks");
	if (si.clusters[c[0]].list != CLUSTER_FREE || si.clusters[c[0]].provisioned ||
	    si.clusters[c[1]].provisioned)
		t_fail("discarded clusters not free and unprovisioned");
	verify_cluster(&si, io, c[2], buf, 102);
	verify_cluster(&si, io, c[3], buf, 103);

	/* Used again: provisioned again, written, read back. */
	again = fill_cluster(&si, &ctx, io, buf, 200);
	if (again != c[0] && again != c[1])
		t_fail("a discarded cluster was not reused first (got %u)", again);
	if (!si.clusters[again].provisioned)
		t_fail("reused cluster not provisioned again");
	verify_cluster(&si, io, again, buf, 200);
	if (blocks_of(si.fd) < after + SWAP_CLUSTER_BYTES)
		t_fail("reused cluster has no blocks");

	/* The next allocation runs the queue itself. */
	swap_slot_free(&si, c[2] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	if ((err = swap_slot_alloc(&si, &ctx, 0, &off)))
		t_fail("alloc: %d", err);
	if (swap_discard_count(&si) != 3 || si.discard->nr)
		t_fail("allocation did not run the discard queue");
	verify_cluster(&si, io, c[3], buf, 103);

	/* A context's own cluster is parked only when the context lets go. */
	swap_slot_free(&si, off, 1);
	if (si.clusters[off >> SWAP_CLUSTER_SHIFT].list != CLUSTER_CURRENT ||
	    si.discard->nr)
		t_fail("owned empty cluster parked");
	swap_alloc_ctx_release(&si, &ctx);
	if (si.discard->nr != 1)
		t_fail("released empty cluster not parked");
	swap_discard_run(&si);
	if (swap_discard_count(&si) != 4)
		t_fail("released cluster not discarded");

	/* A failing discard: back on FREE, still provisioned. */
	si.discard->punch = punch_fails;
	swap_slot_free(&si, again << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_discard_run(&si);
	if (si.discard->failed != 1 || si.clusters[again].list != CLUSTER_FREE ||
	    !si.clusters[again].provisioned || swap_discard_count(&si) != 4)
		t_fail("failed discard");

	/* Not supported: parking stops. */
	si.discard->punch = punch_unsupported;
	c[0] = fill_cluster(&si, &ctx, io, buf, 300);
	swap_slot_free(&si, c[0] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_discard_run(&si);
	if (!si.discard->off)
		t_fail("EOPNOTSUPP did not turn discard off");
	c[0] = fill_cluster(&si, &ctx, io, buf, 301);
	swap_slot_free(&si, c[0] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	if (si.clusters[c[0]].list != CLUSTER_FREE || si.discard->nr)
		t_fail("cluster parked with discard off");

	/* Closing with a parked cluster: it stays parked, nothing breaks. */
	si.discard->off = false;
	c[0] = fill_cluster(&si, &ctx, io, buf, 302);
	swap_slot_free(&si, c[0] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_slot_free(&si, c[3] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_alloc_ctx_release(&si, &ctx);
	if (swap_inuse_slots(&si))
		t_fail("%u slots still in use", swap_inuse_slots(&si));
	dev_close(&si);
	swap_io_destroy(io);
	free(buf);
}

/*
 * A lazy discard (the swap file that grows with the free space): a freed
 * cluster goes back to FREE still holding its space and is reused
 * without a punch; swap_discard_run() (an idle reclaimer) punches the
 * free ones, and the used ones keep their data.
 */
static void test_discard_lazy(void)
{
	struct swap_io *io = io_new(16, false);
	char *buf = xalloc(SWAP_CLUSTER_BYTES);
	struct swap_alloc_ctx ctx;
	struct swap_info si;
	uint32_t c[3], k, again;
	uint64_t before;
	int err;

	if (!can_punch()) {
		swap_io_destroy(io);
		free(buf);
		return;
	}
	dev_open(&si, 16u << 20);
	if ((err = swap_discard_enable(&si)))
		t_fail("swap_discard_enable: %d", err);
	si.discard->lazy = true;
	swap_alloc_ctx_init(&ctx);
	for (k = 0; k < 3; k++)
		c[k] = fill_cluster(&si, &ctx, io, buf, 400 + k);
	if (si.nr_provisioned != 3)
		t_fail("%u clusters provisioned, expected 3", si.nr_provisioned);

	/* Freed: on FREE at once, provisioned, reused first, no punch. */
	swap_slot_free(&si, c[0] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	if (si.clusters[c[0]].list != CLUSTER_FREE ||
	    !si.clusters[c[0]].provisioned || si.discard->nr ||
	    data_in_cluster(si.fd, c[0]) != SWAP_CLUSTER_BYTES)
		t_fail("a lazily freed cluster was parked or punched");
	again = fill_cluster(&si, &ctx, io, buf, 500);
	if (again != c[0] || swap_discard_count(&si) || si.nr_provisioned != 3)
		t_fail("the freed cluster was not reused as it was (got %u)", again);
	if (swap_info_validate(&si))
		t_fail("slot map invalid");

	/* Idle: every free cluster that holds space is punched. */
	swap_slot_free(&si, c[0] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_slot_free(&si, c[1] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	swap_alloc_ctx_release(&si, &ctx);
	before = blocks_of(si.fd);
	swap_discard_run(&si);
	if (swap_discard_count(&si) != 2 || si.nr_provisioned != 1 ||
	    data_in_cluster(si.fd, c[0]) || data_in_cluster(si.fd, c[1]))
		t_fail("idle trim: %" PRIu64 " discards, %u provisioned",
		       swap_discard_count(&si), si.nr_provisioned);
	if (before - blocks_of(si.fd) < 2ull * SWAP_CLUSTER_BYTES)
		t_fail("st_blocks did not fall by two clusters");
	verify_cluster(&si, io, c[2], buf, 402);
	swap_discard_run(&si);
	if (swap_discard_count(&si) != 2)
		t_fail("a second idle trim discarded again");
	if (swap_info_validate(&si))
		t_fail("slot map invalid after the trim");
	swap_slot_free(&si, c[2] << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	dev_close(&si);
	swap_io_destroy(io);
	free(buf);
}

/*
 * An allocation discards a few parked clusters, not all of them: a large
 * free does not stall it; the rest waits for swap_discard_run().
 */
static void test_discard_batch(void)
{
	struct swap_io *io = io_new(16, false);
	char *buf = xalloc(SWAP_CLUSTER_BYTES);
	struct swap_alloc_ctx ctx;
	struct swap_info si;
	uint32_t k, off;
	uint64_t n;

	if (!can_punch()) {
		t_skip_case("no hole punching in /tmp");
		swap_io_destroy(io);
		free(buf);
		return;
	}
	dev_open(&si, 32u << 20);	/* 16 clusters */
	if (swap_discard_enable(&si))
		t_fail("swap_discard_enable");
	swap_alloc_ctx_init(&ctx);
	for (k = 0; k < si.nr_clusters; k++)
		fill_cluster(&si, &ctx, io, buf, 400 + k);
	for (k = 0; k < si.nr_clusters; k++)
		swap_slot_free(&si, k << SWAP_CLUSTER_SHIFT, SWAP_CLUSTER_SLOTS);
	if (si.discard->nr != si.nr_clusters)
		t_fail("not every freed cluster parked");
	if (swap_slot_alloc(&si, &ctx, 0, &off))
		t_fail("alloc with only parked clusters");
	n = swap_discard_count(&si);
	if (n == 0 || n >= si.nr_clusters || si.discard->nr != si.nr_clusters - n)
		t_fail("one allocation discarded %" PRIu64 " of %u parked clusters",
		       n, si.nr_clusters);
	swap_slot_free(&si, off, 1);
	swap_alloc_ctx_release(&si, &ctx);
	swap_discard_run(&si);
	if (si.discard->nr || swap_discard_count(&si) != si.nr_clusters + 1)
		t_fail("swap_discard_run left %u parked", si.discard->nr);
	if (blocks_of(si.fd) >= SWAP_CLUSTER_BYTES)
		t_fail("%" PRIu64 " bytes still allocated after discarding "
		       "every cluster", blocks_of(si.fd));
	dev_close(&si);
	swap_io_destroy(io);
	free(buf);
}

/* --- discard racing with allocation --- */

#define RACE_LIVE	6

struct racer {
	struct swap_info *si;
	unsigned id;
	uint64_t rng;
	uint64_t version;
	pthread_t tid;
};

struct live {
	uint32_t off, nr;
	uint64_t v;
};

static _Atomic bool race_stop;
static int (*real_punch)(struct swap_info *si, uint32_t cluster);

/*
 * The discard, late: widens the window between taking a cluster off the
 * queue and punching it, where an allocation in that cluster would be
 * destroyed if the design let one happen.
 */
static int slow_punch(struct swap_info *si, uint32_t cluster)
{
	const struct timespec ts = { .tv_nsec = 300000 };

	nanosleep(&ts, NULL);
	return real_punch(si, cluster);
}

static void race_verify(struct swap_info *si, struct swap_io *io, char *buf,
			const struct live *l)
{
	int err = swap_io_read(io, si, l->off, buf, (size_t)l->nr * T_PAGE);

	if (err)
		t_fail("race: read of %u+%u: %d", l->off, l->nr, err);
	check_slots(buf, l->off, l->nr, l->v, "race (a discard destroyed a write?)");
}

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	struct swap_io *io = swap_io_create(8);
	char *buf = xalloc(SWAP_CLUSTER_BYTES);
	struct live live[RACE_LIVE];
	struct swap_alloc_ctx ctx;
	unsigned nlive = 0, i, k;
	const unsigned iters = 600;

	if (!io)
		t_fail("swap_io_create");
	swap_alloc_ctx_init(&ctx);
	for (i = 0; i < iters; i++) {
		unsigned order = (unsigned)(t_rand(&r->rng) % (SWAP_MAX_ORDER + 1));
		struct live l;
		int err;

		if (nlive == RACE_LIVE || (nlive && t_rand(&r->rng) % 3 == 0)) {
			k = (unsigned)(t_rand(&r->rng) % nlive);
			race_verify(r->si, io, buf, &live[k]);
			swap_slot_free(r->si, live[k].off, live[k].nr);
			live[k] = live[--nlive];
			if (t_rand(&r->rng) % 4 == 0)
				swap_alloc_ctx_release(r->si, &ctx);
			continue;
		}
		err = swap_slot_alloc(r->si, &ctx, order, &l.off);
		if (err == -ENOSPC)
			continue;
		if (err)
			t_fail("race: alloc: %d", err);
		l.nr = 1u << order;
		l.v = ((uint64_t)r->id << 32) | ++r->version;
		fill_slots(buf, l.off, l.nr, l.v);
		if ((err = write_one(io, r->si, l.off, buf, l.nr)))
			t_fail("race: write: %d", err);
		race_verify(r->si, io, buf, &l);
		live[nlive++] = l;
		for (k = 0; i % 16 == 0 && k < nlive; k++)
			race_verify(r->si, io, buf, &live[k]);
	}
	for (k = 0; k < nlive; k++) {
		race_verify(r->si, io, buf, &live[k]);
		swap_slot_free(r->si, live[k].off, live[k].nr);
	}
	swap_alloc_ctx_release(r->si, &ctx);
	swap_io_destroy(io);
	free(buf);
	return NULL;
}

static void *discarder_main(void *arg)
{
	struct swap_info *si = arg;

	while (!atomic_load(&race_stop)) {
		swap_discard_run(si);
		sched_yield();
	}
	return NULL;
}

static void test_discard_race(void)
{
	struct racer r[2];
	struct swap_info si;
	pthread_t disc;
	unsigned k;

	if (!can_punch()) {
		t_skip_case("no hole punching in /tmp");
		return;
	}
	dev_open(&si, 16u << 20);
	if (swap_discard_enable(&si))
		t_fail("swap_discard_enable");
	real_punch = si.discard->punch;
	si.discard->punch = slow_punch;
	atomic_store(&race_stop, false);
	if (pthread_create(&disc, NULL, discarder_main, &si))
		t_fail("pthread_create");
	for (k = 0; k < 2; k++) {
		r[k] = (struct racer){ .si = &si, .id = k, .rng = seed + k + 1 };
		if (pthread_create(&r[k].tid, NULL, racer_main, &r[k]))
			t_fail("pthread_create");
	}
	for (k = 0; k < 2; k++)
		pthread_join(r[k].tid, NULL);
	atomic_store(&race_stop, true);
	pthread_join(disc, NULL);
	swap_discard_run(&si);
	if (swap_inuse_slots(&si))
		t_fail("race: %u slots still in use", swap_inuse_slots(&si));
	fprintf(stderr, "race: %" PRIu64 " clusters discarded\n",
		swap_discard_count(&si));
	if (!swap_discard_count(&si))
		t_fail("race: nothing was discarded");
	dev_close(&si);
}

/* Swap files have no name (O_TMPFILE): the directory is all there is. */
static void remove_dir(void)
{
	rmdir(dir);
}

static void setup(void)
{
	if (!mkdtemp(dir))
		t_skip("cannot create a directory in /tmp");
	atexit(remove_dir);
}

static const struct t_case cases[] = {
	T_CASE(round_trips, "batched writes of random runs read back, in every I/O mode"),
	T_CASE(errors, "a bad request fails alone; short files, read-only, RLIMIT_FSIZE"),
	T_CASE(discard, "freed clusters are parked, punched, provisioned and used again"),
	T_CASE(discard_lazy, "freed clusters are punched by an idle reclaimer, used ones kept"),
	T_CASE(discard_batch, "an allocation discards a few parked clusters, not all"),
	T_CASE(discard_race, "discards racing writes and frees never destroy a write"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = setup, .seed = T_SEED_CLOCK,
		.rng = &seed,
	});
}
