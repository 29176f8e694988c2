// SPDX-License-Identifier: MIT
/*
 * tiering - demotion and promotion on a real NUMA machine (the guest of
 * tests/numa-vm).  Run under `numactl --membind=0
 * --cpunodebind=0`, through the library API, so that it can read the
 * counters and ask the kernel where each page is (move_pages, a query).
 *
 *   tiering demote SPEC     a region twice the fast budget, written in
 *                           order; with room on the slow node (--tier-max
 *                           above the cold half): afterwards the cold pages
 *                           are on the slow node, nothing went to swap,
 *                           and demoted_bytes and pgdemote_* agree with the
 *                           pages the kernel finds there
 *   tiering full SPEC       the same with a slow budget too small: the slow
 *                           node holds at most its budget, the rest went to
 *                           swap (pgdemote_fail, pswpout), every byte intact
 *   tiering promote SPEC    after demotion, a few folios written again and
 *                           again move back to node 0 (pgpromote_success);
 *                           folios written once stay (hysteresis)
 *   tiering fork SPEC       after demotion, a child sees every byte (demoted
 *                           pages included), rewrites some, and exits; the
 *                           parent's memory is intact and node 2's charge
 *                           is the parent's own again
 *
 * SPEC is the --demotion value ("0>2").  Each page holds a pattern of its
 * index and a version; every page is checked at the end.  Exit 0, 1 on a
 * failed check, 77 when the machine has no node 2.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uswap.h"

#define PAGE		4096ul
#define MIB		(1ul << 20)
#define SLOW		2

static struct uswap_runtime *rt;
static char *mem;
static size_t npages;
static uint32_t *version;

static void fail(const char *what)
{
	fprintf(stderr, "tiering: FAIL: %s\n", what);
	exit(1);
}

static void put(size_t i)
{
	uint64_t *p = (uint64_t *)(mem + i * PAGE);
	size_t k;

	version[i]++;
	for (k = 0; k < PAGE / 8; k += 8)
		p[k] = (i << 20) ^ version[i] ^ (k * 0x9e3779b97f4a7c15ull);
}

static void check_all(void)
{
	size_t i, k;

	for (i = 0; i < npages; i++) {
		const uint64_t *p = (const uint64_t *)(mem + i * PAGE);

		for (k = 0; k < PAGE / 8; k += 8)
			if (p[k] != ((i << 20) ^ version[i] ^
				     (k * 0x9e3779b97f4a7c15ull))) {
				fprintf(stderr, "tiering: page %zu word %zu wrong\n",
					i, k);
				fail("data");
			}
	}
	printf("tiering: all %zu pages verified\n", npages);
}

static uint64_t counter(enum uswap_counter c)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	return v[c];
}

/* Pages of [first, first + n) on each node (node[-1+1]: not resident). */
static void where(size_t first, size_t n, unsigned long count[4])
{
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	size_t i;

	memset(count, 0, 4 * sizeof(count[0]));
	for (i = 0; i < n; i++)
		pages[i] = mem + (first + i) * PAGE;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) < 0)
		fail("move_pages query");
	for (i = 0; i < n; i++) {
		if (status[i] < 0)
			count[3]++;
		else if (status[i] <= 2)
			count[status[i]]++;
	}
	free(pages);
	free(status);
}

/* The node of each page of [first, first + n), for a failure's report. */
static void print_nodes(size_t first, size_t n)
{
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	size_t i;

	for (i = 0; i < n; i++)
		pages[i] = mem + (first + i) * PAGE;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) < 0)
		fail("move_pages query");
	fprintf(stderr, "tiering: nodes of pages %zu..%zu:", first, first + n - 1);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %d", status[i]);
	fprintf(stderr, "\n");
	free(pages);
	free(status);
}

/* Wait until reclaim is quiet: resident under high, counters still. */
static void settle(void)
{
	uint64_t last = ~0ull, now;
	int stable = 0, rounds;

	for (rounds = 0; rounds < 300 && stable < 5; rounds++) {
		usleep(100000);
		now = counter(USWAP_PGSTEAL) + counter(USWAP_PGDEMOTE_KSWAPD) +
		      counter(USWAP_PGDEMOTE_DIRECT) +
		      counter(USWAP_PGPROMOTE_SUCCESS);
		stable = now == last ? stable + 1 : 0;
		last = now;
	}
}

static void report(const char *when)
{
	unsigned long c[4];

	where(0, npages, c);
	printf("tiering: %s: node0 %lu node1 %lu node2 %lu swapped %lu pages; "
	       "pgdemote_kswapd %llu direct %llu fail %llu pswpout %llu "
	       "demoted_bytes %llu pgpromote_success %llu candidate %llu\n",
	       when, c[0], c[1], c[2], c[3],
	       (unsigned long long)counter(USWAP_PGDEMOTE_KSWAPD),
	       (unsigned long long)counter(USWAP_PGDEMOTE_DIRECT),
	       (unsigned long long)counter(USWAP_PGDEMOTE_FAIL),
	       (unsigned long long)counter(USWAP_PSWPOUT),
	       (unsigned long long)counter(USWAP_DEMOTED_BYTES),
	       (unsigned long long)counter(USWAP_PGPROMOTE_SUCCESS),
	       (unsigned long long)counter(USWAP_PGPROMOTE_CANDIDATE));
}

static void start(const char *spec, const char *max, const char *tier_max,
		  size_t size)
{
	struct uswap_options opt;
	char err[512];
	size_t i;
	int ret;

	uswap_options_init(&opt);
	if (uswap_options_set(&opt, "max", max, err, sizeof(err)) ||
	    uswap_options_set(&opt, "folio", "64K", err, sizeof(err)) ||
	    uswap_options_set(&opt, "demotion", spec, err, sizeof(err)) ||
	    uswap_options_set(&opt, "tier-max", tier_max, err, sizeof(err))) {
		fprintf(stderr, "tiering: %s\n", err);
		exit(1);
	}
	opt.flags |= USWAP_OPT_VERBOSE;
	ret = uswap_runtime_create(&opt, &rt);
	if (ret) {
		fprintf(stderr, "tiering: runtime: %s\n", strerror(-ret));
		exit(1);
	}
	npages = size / PAGE;
	version = calloc(npages, sizeof(*version));
	if (uswap_region_create(rt, size, (void **)&mem))
		fail("region");
	for (i = 0; i < npages; i++)
		put(i);
	settle();
}

static int demote(const char *spec)
{
	unsigned long c[4];
	uint64_t demoted;

	start(spec, "16M", "2=64M", 32 * MIB);
	report("after writing 32 MiB under --max 16M, --tier-max 2=64M");
	where(0, npages, c);
	demoted = counter(USWAP_PGDEMOTE_KSWAPD) + counter(USWAP_PGDEMOTE_DIRECT);
	if (counter(USWAP_PSWPOUT))
		fail("pages went to swap while node 2 had room");
	if (c[2] < npages / 3)
		fail("the cold pages are not on node 2");
	if (counter(USWAP_DEMOTED_BYTES) != c[2] * PAGE)
		fail("demoted_bytes disagrees with the pages move_pages finds on node 2");
	if (demoted < c[2])
		fail("pgdemote_* counts fewer pages than are on node 2");
	if (c[3])
		fail("pages are missing (neither resident nor expected in swap)");
	check_all();
	return 0;
}

static int full(const char *spec)
{
	unsigned long c[4];

	start(spec, "16M", "2=8M", 48 * MIB);
	report("after writing 48 MiB under --max 16M, --tier-max 2=8M");
	where(0, npages, c);
	if (c[2] * PAGE > 8 * MIB)
		fail("node 2 holds more than its budget");
	if (!c[2])
		fail("nothing was demoted");
	if (!counter(USWAP_PSWPOUT))
		fail("nothing went to swap with node 2 full");
	if (counter(USWAP_DEMOTED_BYTES) != c[2] * PAGE)
		fail("demoted_bytes disagrees with the pages move_pages finds on node 2");
	check_all();
	report("after reading everything back");
	return 0;
}

static int promote(const char *spec)
{
	unsigned long hot[4], once[4];
	size_t hot_first = 0, once_first = 64, n = 32, i;	/* pages */
	int round;

	start(spec, "16M", "2=64M", 24 * MIB);
	where(hot_first, n, hot);
	where(once_first, n, once);
	if (hot[2] != n || once[2] != n)
		fail("the first folios were not demoted");
	/* Room on the fast tier: give back 8 MiB of the hot end. */
	if (uswap_madvise(rt, mem + 16 * MIB, 8 * MIB, MADV_DONTNEED))
		fail("madvise");
	/* (those pages read as zeros now: rewritten before the check) */
	/*
	 * One write per "once" folio (64K: 16 pages), to its first page.
	 * Writing all 16 is 16 references if a promotion walk re-arms the
	 * folio between two of them (the walk runs when it likes, and on a
	 * loaded machine it did): the folio was then promoted as one written
	 * twice, and rightly.
	 */
	for (i = 0; i < n; i += 16)
		put(once_first + i);
	for (round = 0; round < 40; round++) {
		for (i = 0; i < n; i++)
			put(hot_first + i);
		usleep(100000);
	}
	settle();
	report("after writing 32 demoted pages 40 times and 32 others once");
	where(hot_first, n, hot);
	where(once_first, n, once);
	if (!counter(USWAP_PGPROMOTE_SUCCESS) || hot[0] != n)
		fail("the pages written again and again did not come back to node 0");
	if (once[2] != n) {
		print_nodes(once_first, n);
		fail("pages written once were promoted (no hysteresis)");
	}
	for (i = 16 * MIB / PAGE; i < npages; i++)
		put(i);
	check_all();
	return 0;
}

/* Node 2's charge for the whole tree, from the stats ("charged_kib"). */
static unsigned long long tree_charged_kib(void)
{
	static char buf[1 << 16];
	int fd = memfd_create("stats", 0);
	const char *p;
	ssize_t n;

	if (fd < 0 || uswap_stats_write_json(rt, fd))
		fail("stats");
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		fail("stats read");
	buf[n] = 0;
	p = strstr(buf, "\"node\": 2,");
	p = p ? strstr(p, "\"charged_kib\": ") : NULL;
	if (!p)
		fail("no row for node 2 in the stats");
	return strtoull(p + strlen("\"charged_kib\": "), NULL, 10);
}

static int forked(const char *spec)
{
	unsigned long long own, tree;
	int status;
	pid_t pid;
	size_t i;

	start(spec, "16M", "2=64M", 32 * MIB);
	report("before fork");
	own = counter(USWAP_DEMOTED_BYTES) >> 10;
	if (!own)
		fail("nothing was demoted");
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (!pid) {
		check_all();	/* the parent's memory, demoted pages included */
		for (i = 0; i < npages; i += 7)
			put(i);
		check_all();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("the child failed");
	check_all();
	/* The child's member is released at its exit or reaped within 1 s. */
	for (i = 0; i < 50 && (tree = tree_charged_kib()) !=
	     (counter(USWAP_DEMOTED_BYTES) >> 10); i++)
		usleep(100000);
	tree = tree_charged_kib();
	printf("tiering: node 2 charge %llu KiB (the parent's %llu KiB, %llu before fork)\n",
	       tree, (unsigned long long)(counter(USWAP_DEMOTED_BYTES) >> 10), own);
	if (tree != counter(USWAP_DEMOTED_BYTES) >> 10)
		fail("node 2's charge is not the parent's own after the child ended");
	return 0;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: tiering demote|full|promote|fork SPEC\n");
		return 2;
	}
	if (access("/sys/devices/system/node/node2", F_OK)) {
		printf("SKIP: no node 2\n");
		return 77;
	}
	if (!strcmp(argv[1], "demote"))
		ret = demote(argv[2]);
	else if (!strcmp(argv[1], "full"))
		ret = full(argv[2]);
	else if (!strcmp(argv[1], "promote"))
		ret = promote(argv[2]);
	else if (!strcmp(argv[1], "fork"))
		ret = forked(argv[2]);
	else
		return 2;
	uswap_runtime_destroy(rt);
	return ret;
}
