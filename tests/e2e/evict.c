// SPDX-License-Identifier: MIT
/*
 * evict.c - eviction by moving pages (UFFDIO_MOVE) in the cases that are
 * not the common one:
 *
 *   evict STEP [FOLIO]
 *
 *   child     a fork child evicts its own memory with a staging area of
 *             its own (evict_move in the child), every byte right in both;
 *   sibling   after a fork child has written its copy and exited, the
 *             parent's pages it never wrote (marked shared by the fork,
 *             mapped by the parent alone) are evicted by moving them too;
 *   partial   one page in the middle of a folio pinned (an io_uring fixed
 *             buffer registered with the raw system call): the move stops
 *             there, the pages moved before it go back, the folio stays
 *             resident (evict_busy) and whole, every byte right;
 *   wait      threads read pages of the first half while the second is
 *             written through, until a read meets a folio whose pages are
 *             moving out (evict_wait): it waits for the eviction to end
 *             and brings the folio back, never zeros; every page right;
 *   hole      a page dropped behind uswap's back (madvise(2) itself, not
 *             uswap_madvise) inside folios that are then evicted: it
 *             reads as zeros, its neighbours as written, and nothing hangs;
 *   run       folios side by side move out in one UFFDIO_MOVE; a pinned
 *             page and a dropped one cut such a run: the folio pinned
 *             stays resident, every other one goes out (the run goes on
 *             past each cut), the dropped page reads as zeros, the rest
 *             as written.
 *
 * A 64 MiB region under a 16 MiB budget (the library's runtime, FOLIO
 * 64K by default; USWAP_* in the environment apply).  Skips (77) where
 * the kernel has no UFFDIO_MOVE, but "hole", which the write-protect path
 * runs too (USWAP_UFFD_FEATURES_OFF=65536).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MB	(1ul << 20)
#define SIZE	(64 * MB)
#define NPAGES	(SIZE / T_PAGE)
#define MAX_PM	512

static struct uswap_runtime *rt;
static char *mem;
static uint64_t folio_pages;

static uint64_t counter(enum uswap_counter c)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	return v[c];
}

static void fill(uint64_t first, uint64_t n, uint64_t v)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		t_fill(mem + p * T_PAGE, p, v);
}

static void check(const char *who, uint64_t first, uint64_t n, uint64_t v)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		if (t_check(mem + p * T_PAGE, p, v))
			t_fail("%s: page %llu is not version %llu", who,
			       (unsigned long long)p, (unsigned long long)v);
}

/* Write through pages [first, NPAGES), twice: everything else goes out. */
static void churn(uint64_t first)
{
	static uint64_t v = 1000;

	fill(first, NPAGES - first, v++);
	fill(first, NPAGES - first, v++);
}

static void step_child(void)
{
	int status;
	pid_t pid;

	fill(0, NPAGES, 1);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		uint64_t before = counter(USWAP_EVICT_MOVE);

		check("child, what it inherited", 0, NPAGES, 1);
		fill(0, NPAGES, 2);
		check("child, its own", 0, NPAGES, 2);
		if (counter(USWAP_EVICT_MOVE) == before)
			t_fail("the fork child evicted nothing by moving it");
		fprintf(stderr, "child: evict_move %llu\n",
			(unsigned long long)(counter(USWAP_EVICT_MOVE) - before));
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		t_fail("the fork child failed (status %#x)", status);
	check("parent, after its child", 0, NPAGES, 1);
	printf("child: the child evicted with its own staging area; both right\n");
}

static void step_sibling(void)
{
	uint64_t moved, busy;
	int status;
	pid_t pid;

	fill(0, NPAGES, 1);
	check("resident before the fork", NPAGES - 2048, 2048, 1);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		fill(NPAGES - 2048, 1024, 3);	/* its copy of some of them */
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		t_fail("the fork child failed (status %#x)", status);
	/* The parent's pages of the fork's last 8 MiB: its own now. */
	moved = counter(USWAP_EVICT_MOVE);
	busy = counter(USWAP_EVICT_BUSY);
	churn(0);
	fill(0, NPAGES, 4);
	check("after the sibling left", 0, NPAGES, 4);
	if (counter(USWAP_EVICT_MOVE) == moved)
		t_fail("nothing was evicted by moving it after the fork child left");
	/* No pin here: a refusal would be a page taken for pinned. */
	if (counter(USWAP_EVICT_BUSY) != busy)
		t_fail("%llu evictions refused with nothing pinned",
		       (unsigned long long)(counter(USWAP_EVICT_BUSY) - busy));
	printf("sibling: evict_move +%llu evict_busy +%llu after the child left\n",
	       (unsigned long long)(counter(USWAP_EVICT_MOVE) - moved),
	       (unsigned long long)(counter(USWAP_EVICT_BUSY) - busy));
}

/*
 * Pin page p for I/O: an io_uring fixed buffer registered with the raw
 * system call, which uswap is not told about.  Returns the ring.
 */
static int pin_page(uint64_t p)
{
	struct io_uring_params params = { 0 };
	struct iovec iov = { .iov_base = mem + p * T_PAGE, .iov_len = T_PAGE };
	int ring = (int)syscall(__NR_io_uring_setup, 4, &params);

	if (ring < 0)
		t_skip("io_uring is not available");
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		    &iov, 1) < 0)
		t_fail("registering a fixed buffer: %s", strerror(errno));
	return ring;
}

static void unpin(int ring)
{
	syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	close(ring);
}

static void step_partial(void)
{
	uint64_t pinned = folio_pages / 2 + 1, busy;
	int ring;

	if (folio_pages < 4)
		t_skip("partial: needs folios of at least 4 pages");
	fill(0, NPAGES, 1);
	/* Nothing is pinned yet: from here on a refusal is this folio's. */
	busy = counter(USWAP_EVICT_BUSY);
	/* One page in the middle of the first folio. */
	ring = pin_page(pinned);
	/*
	 * Pinning it may have written to it (a write fault when it was
	 * write-protected): referenced, it could outlive the churn on the
	 * active list.  Put it first in line.
	 */
	if (uswap_madvise(rt, mem, folio_pages * T_PAGE, MADV_PAGEOUT))
		t_fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	churn(folio_pages);
	churn(folio_pages);
	if (counter(USWAP_EVICT_BUSY) == busy)
		t_fail("the folio with a pinned page was never refused");
	check("the folio with a pinned page", 0, folio_pages, 1);
	unpin(ring);
	printf("partial: evict_busy +%llu, the folio whole\n",
	       (unsigned long long)(counter(USWAP_EVICT_BUSY) - busy));
}

static atomic_bool readers_stop;

static void *reader(void *arg)
{
	uint64_t rng = (uintptr_t)arg + 1, n = 0;

	while (!atomic_load(&readers_stop)) {
		uint64_t p = t_rand(&rng) % (NPAGES / 2);

		if (t_check(mem + p * T_PAGE, p, 1))
			t_fail("wait: page %llu read wrong while being evicted",
			       (unsigned long long)p);
		n++;
	}
	return (void *)(uintptr_t)n;
}

static void step_wait(void)
{
	uint64_t waits = counter(USWAP_EVICT_WAIT), reads = 0;
	pthread_t th[2];
	unsigned i, round;
	void *n;

	fill(0, NPAGES, 1);
	atomic_store(&readers_stop, false);
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)i);
	/* Until a read has met a folio moving out (a bound only for a hang). */
	for (round = 0; round < 2000 && counter(USWAP_EVICT_WAIT) == waits; round++)
		fill(NPAGES / 2, NPAGES / 2, 10 + round);
	atomic_store(&readers_stop, true);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], &n);
		reads += (uintptr_t)n;
	}
	check("wait, at the end", 0, NPAGES / 2, 1);
	if (counter(USWAP_EVICT_WAIT) == waits)
		t_fail("wait: no read met a folio whose pages were moving out (%llu reads)",
		       (unsigned long long)reads);
	printf("wait: %llu reads in %u rounds, evict_wait +%llu, every page right\n",
	       (unsigned long long)reads, round,
	       (unsigned long long)(counter(USWAP_EVICT_WAIT) - waits));
}

/* Is every page of [p, p + n) present (pagemap)? */
static bool all_present(uint64_t p, uint64_t n)
{
	static int fd = -1;
	uint64_t e[MAX_PM], k;

	if (fd < 0)
		fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || n > MAX_PM ||
	    pread(fd, e, n * 8, (off_t)((uintptr_t)(mem + p * T_PAGE) / T_PAGE * 8)) !=
	    (ssize_t)(n * 8))
		t_skip("no /proc/self/pagemap");
	for (k = 0; k < n; k++)
		if (!(e[k] >> 63))
			return false;
	return true;
}

static void step_hole(void)
{
	static bool hole[512];
	uint64_t f, p, h, holes = 0;

	if (folio_pages < 2)
		t_skip("hole: needs folios of at least 2 pages");
	fill(0, NPAGES, 1);
	/* Clean folios (read back from swap) and dirty ones, resident. */
	check("resident", 0, 256, 1);
	fill(256, 256, 2);
	/*
	 * A page dropped in each of them, behind uswap's back.  Only a folio
	 * whose other pages are all still there is known to have held it
	 * (a page that had gone to swap already is beyond a raw madvise's
	 * reach, and uswap's).
	 */
	for (f = 0; f < 512; f += folio_pages) {
		h = f + folio_pages / 2;
		if (madvise(mem + h * T_PAGE, T_PAGE, MADV_DONTNEED))
			t_fail("madvise: %s", strerror(errno));
		hole[h] = all_present(f, h - f) &&
			  all_present(h + 1, f + folio_pages - h - 1);
		holes += hole[h];
	}
	if (holes < 512 / folio_pages / 2)
		t_fail("hole: only %llu of %llu folios stayed resident around their hole",
		       (unsigned long long)holes,
		       (unsigned long long)(512 / folio_pages));
	churn(512);
	for (f = 0; f < 512; f += folio_pages)
		for (p = f; p < f + folio_pages; p++) {
			const char *pg = mem + p * T_PAGE;
			uint64_t ver = 0;

			if (p == f + folio_pages / 2) {
				if (!hole[p] || (!pg[0] && !pg[T_PAGE - 1]))
					continue;
				t_header(pg, p, &ver);
				t_fail("hole: the page dropped, %llu (of a %s folio), is not zeros (its header says version %llu)",
				       (unsigned long long)p, p < 256 ? "clean" : "dirty",
				       (unsigned long long)ver);
			}
			if (t_check(pg, p, p < 256 ? 1 : 2))
				t_fail("hole: page %llu is not version %d",
				       (unsigned long long)p, p < 256 ? 1 : 2);
		}
	printf("hole: %llu pages dropped behind uswap's back read as zeros, the rest right\n",
	       (unsigned long long)holes);
}

/* Is page p present (pagemap)? */
static bool present(uint64_t p)
{
	return all_present(p, 1);
}

static void step_run(void)
{
	const uint64_t n = 32 * folio_pages;
	const uint64_t pin = 7 * folio_pages + folio_pages / 2;
	const uint64_t hole = 20 * folio_pages + folio_pages / 2;
	uint64_t busy, p, out = 0;
	bool dropped;
	int ring;

	/* The first n pages written last: resident, listed in order. */
	fill(0, NPAGES, 1);
	fill(0, n, 2);
	/* Nothing is pinned yet: from here on a refusal is the pin's. */
	busy = counter(USWAP_EVICT_BUSY);
	ring = pin_page(pin);
	/* Known to be dropped only if it was there (see step_hole()). */
	dropped = present(hole);
	if (madvise(mem + hole * T_PAGE, T_PAGE, MADV_DONTNEED))
		t_fail("madvise: %s", strerror(errno));
	churn(n);
	if (counter(USWAP_EVICT_BUSY) == busy)
		t_fail("run: the folio with a pinned page was never refused");
	for (p = 0; p < n; p++) {
		bool pinned = p / folio_pages == pin / folio_pages;

		if (pinned && !present(p))
			t_fail("run: page %llu of the pinned folio went out",
			       (unsigned long long)p);
		if (!pinned && p != hole && present(p))
			t_fail("run: page %llu stayed resident (a cut run that did not go on?)",
			       (unsigned long long)p);
		out += !pinned && p != hole;
	}
	unpin(ring);
	for (p = 0; p < n; p++) {
		const char *pg = mem + p * T_PAGE;

		if (p == hole && dropped) {
			if (pg[0] || pg[T_PAGE - 1])
				t_fail("run: the page dropped, %llu, is not zeros",
				       (unsigned long long)p);
			continue;
		}
		if (p != hole && t_check(pg, p, 2))
			t_fail("run: page %llu is not version 2",
			       (unsigned long long)p);
	}
	printf("run: %llu pages out around a pinned and a dropped page, evict_busy +%llu, every page right\n",
	       (unsigned long long)out,
	       (unsigned long long)(counter(USWAP_EVICT_BUSY) - busy));
}

int main(int argc, char **argv)
{
	struct uswap_options opt;

	if (argc < 2) {
		fprintf(stderr, "usage: evict child|sibling|partial|wait|hole|run [FOLIO]\n");
		return 2;
	}
	uswap_options_init(&opt);
	if (uswap_options_from_env(&opt, NULL, 0))	/* USWAP_UFFD_FEATURES_OFF */
		t_fail("bad USWAP_* options");
	opt.max = 16 * MB;
	opt.folio_size = argc > 2 ? t_size(argv[2]) : 64 * 1024;
	folio_pages = opt.folio_size / T_PAGE;
	rt = t_runtime(&opt);
	if (uswap_region_create(rt, SIZE, (void **)&mem))
		t_fail("uswap_region_create");
	fill(0, NPAGES, 1);
	churn(0);
	/* The write-protect path (before Linux 6.8) has holes too. */
	if (!counter(USWAP_EVICT_MOVE) && strcmp(argv[1], "hole"))
		t_skip("no eviction by moving pages here (UFFDIO_MOVE, Linux 6.8)");
	if (!strcmp(argv[1], "child"))
		step_child();
	else if (!strcmp(argv[1], "sibling"))
		step_sibling();
	else if (!strcmp(argv[1], "partial"))
		step_partial();
	else if (!strcmp(argv[1], "hole"))
		step_hole();
	else if (!strcmp(argv[1], "wait"))
		step_wait();
	else if (!strcmp(argv[1], "run"))
		step_run();
	else
		t_fail("unknown step %s", argv[1]);
	uswap_munmap(rt, mem, SIZE);
	uswap_runtime_destroy(rt);
	return 0;
}
