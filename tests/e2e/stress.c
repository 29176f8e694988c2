// SPDX-License-Identifier: MIT
/*
 * stress.c - integrity stress: threads read and write random pages of a
 * region several times the budget and check every byte, also through
 * system calls (read(2) into and write(2) from managed memory).
 *
 *   stress [--api|--mmap] [--size S] [--max S] [--folio S] [--threads N]
 *          [--ops N] [--write-ratio PCT] [--seed N] [--expect-swap]
 *
 * --api (default) links the library and makes a region with
 * uswap_region_create; --mmap maps with plain mmap(2), for a run under
 * `uswap run` (the preload library manages it).  Each thread owns the
 * pages p with p % threads == its index and keeps the version it last
 * wrote; reads check the contents for that version; at the end the main
 * thread checks every page written by every thread.
 * Exit 0 when every check passed (and, with --expect-swap, pages really
 * went out and came back), 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testlib.h"

static uint64_t size = 256 << 20, max_bytes = 32 << 20, folio = 65536;
static unsigned nthreads = 4, write_pct = 50;
static uint64_t ops = 200000, seed = 1;
static bool use_api = true, expect_swap;
static char *base;
static uint64_t npages;
static _Atomic uint64_t checked, written;

struct worker {
	pthread_t tid;
	unsigned id;
	uint32_t *version;	/* per page of this thread's stripe, by page */
};

static void syscall_roundtrip(uint64_t page, struct worker *w, uint64_t *rng)
{
	char *p = base + page * T_PAGE;
	char buf[T_PAGE];
	int fds[2];
	uint64_t v = w->version[page];

	/* write(2) from managed memory (the page may be swapped out). */
	if (pipe(fds))
		t_fail("pipe: %s", strerror(errno));
	if (write(fds[1], p, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("write from managed page %llu: %s",
		       (unsigned long long)page, strerror(errno));
	if (read(fds[0], buf, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("read back: %s", strerror(errno));
	if (v ? t_check(buf, page, v) : (buf[0] != 0))
		t_fail("write(2) from page %llu gave wrong bytes",
		       (unsigned long long)page);
	/* read(2) into managed memory: a new version arrives by syscall. */
	v = w->version[page] + 1;
	t_fill(buf, page, v);
	if (write(fds[1], buf, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("write to pipe: %s", strerror(errno));
	if (read(fds[0], p, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("read(2) into managed page %llu: %s",
		       (unsigned long long)page, strerror(errno));
	w->version[page] = (uint32_t)v;
	close(fds[0]);
	close(fds[1]);
	(void)rng;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = seed * 7919 + w->id + 1, i;
	uint64_t mine = (npages + nthreads - 1 - w->id) / nthreads;

	for (i = 0; i < ops; i++) {
		uint64_t r = t_rand(&rng);
		uint64_t page = (r % mine) * nthreads + w->id;
		unsigned dice = (unsigned)((r >> 32) % 1000);
		char *p = base + page * T_PAGE;

		if (dice < 5) {
			syscall_roundtrip(page, w, &rng);
		} else if (dice < 5 + write_pct * 10) {
			w->version[page]++;
			t_fill(p, page, w->version[page]);
			written++;
		} else {
			uint64_t v = w->version[page];

			if (v == 0) {
				unsigned k;

				for (k = 0; k < T_PAGE; k++)
					if (p[k])
						t_fail("never-written page %llu is not zero",
						       (unsigned long long)page);
			} else if (t_check(p, page, v)) {
				uint64_t got = 0;

				t_header(p, page, &got);
				t_fail("page %llu: expected version %llu, found header version %llu (thread %u, op %llu)",
				       (unsigned long long)page,
				       (unsigned long long)v,
				       (unsigned long long)got, w->id,
				       (unsigned long long)i);
			}
			checked++;
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: stress [--api|--mmap] [--size S] [--max S] [--folio S] [--threads N] [--ops N] [--write-ratio PCT] [--seed N] [--expect-swap]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct uswap_runtime *rt = NULL;
	struct worker *workers;
	uint64_t v[USWAP_NR_COUNTERS], p;
	unsigned i;
	int err;

	for (i = 1; i < (unsigned)argc; i++) {
		const char *a = argv[i], *val = i + 1 < (unsigned)argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--api"))
			use_api = true;
		else if (!strcmp(a, "--mmap"))
			use_api = false;
		else if (!strcmp(a, "--expect-swap"))
			expect_swap = true;
		else if (!val)
			usage();
		else if (!strcmp(a, "--size"))
			size = t_size(val), i++;
		else if (!strcmp(a, "--max"))
			max_bytes = t_size(val), i++;
		else if (!strcmp(a, "--folio"))
			folio = t_size(val), i++;
		else if (!strcmp(a, "--threads"))
			nthreads = (unsigned)atoi(val), i++;
		else if (!strcmp(a, "--ops"))
			ops = strtoull(val, NULL, 0), i++;
		else if (!strcmp(a, "--write-ratio"))
			write_pct = (unsigned)atoi(val), i++;
		else if (!strcmp(a, "--seed"))
			seed = strtoull(val, NULL, 0), i++;
		else
			usage();
	}
	if (!nthreads || nthreads > 64)
		usage();
	npages = size / T_PAGE;

	if (use_api) {
		struct uswap_options opt;
		char why[256];

		/* USWAP_* variables first (e.g. USWAP_ZSWAP), then the flags. */
		uswap_options_init(&opt);
		if (uswap_options_from_env(&opt, why, sizeof(why)))
			t_fail("%s", why);
		opt.max = max_bytes;
		opt.folio_size = folio;
		err = uswap_runtime_create(&opt, &rt);
		if (err == -EPERM || err == -ENOSYS)
			t_skip("userfaultfd is not available");
		if (err)
			t_fail("uswap_runtime_create: %s", strerror(-err));
		err = uswap_region_create(rt, size, (void **)&base);
		if (err)
			t_fail("uswap_region_create: %s", strerror(-err));
	} else {
		base = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED)
			t_fail("mmap: %s", strerror(errno));
	}

	workers = calloc(nthreads, sizeof(*workers));
	for (i = 0; i < nthreads; i++) {
		workers[i].id = i;
		workers[i].version = calloc(npages, sizeof(uint32_t));
		if (!workers[i].version)
			t_fail("out of memory");
	}
	/* Write every page once, so that the whole region cycles. */
	for (p = 0; p < npages; p++) {
		workers[p % nthreads].version[p] = 1;
		t_fill(base + p * T_PAGE, p, 1);
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&workers[i].tid, NULL, work, &workers[i]);
	for (i = 0; i < nthreads; i++)
		pthread_join(workers[i].tid, NULL);
	/* Final sweep: every byte of every page. */
	for (p = 0; p < npages; p++) {
		uint64_t ver = workers[p % nthreads].version[p];

		if (t_check(base + p * T_PAGE, p, ver))
			t_fail("final check: page %llu is not version %llu",
			       (unsigned long long)p, (unsigned long long)ver);
	}
	printf("stress: %llu pages, %u threads, %llu ops each: %llu checked, %llu written, all bytes verified\n",
	       (unsigned long long)npages, nthreads, (unsigned long long)ops,
	       (unsigned long long)checked, (unsigned long long)written);
	if (rt) {
		uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
		printf("stress: pgfault %llu pgmajfault %llu pswpin %llu pswpout %llu wp_fault %llu evict_abort %llu clean_drop %llu resident_peak %llu max %llu\n",
		       (unsigned long long)v[USWAP_PGFAULT],
		       (unsigned long long)v[USWAP_PGMAJFAULT],
		       (unsigned long long)v[USWAP_PSWPIN],
		       (unsigned long long)v[USWAP_PSWPOUT],
		       (unsigned long long)v[USWAP_WP_FAULT],
		       (unsigned long long)v[USWAP_EVICT_ABORT],
		       (unsigned long long)v[USWAP_CLEAN_DROP],
		       (unsigned long long)v[USWAP_RESIDENT_PEAK],
		       (unsigned long long)v[USWAP_MAX_BYTES]);
		/*
		 * The pool is charged as it grows, before reclaim unmaps the
		 * folios it stores: the charge may pass max by one reclaim
		 * batch (2 MiB) while a batch is being stored.  When no tier
		 * had room, folios were admitted past max (counted).
		 */
		if (!v[USWAP_MAX_OVERRUN] && v[USWAP_RESIDENT_PEAK] >
		    max_bytes + (v[USWAP_ZSWPOUT] ? 2u << 20 : 0))
			t_fail("resident peak %llu passed max %llu",
			       (unsigned long long)v[USWAP_RESIDENT_PEAK],
			       (unsigned long long)max_bytes);
		if (expect_swap && (!(v[USWAP_PSWPOUT] + v[USWAP_ZSWPOUT]) ||
				    !(v[USWAP_PSWPIN] + v[USWAP_ZSWPIN])))
			t_fail("expected swap traffic, got pswpout %llu pswpin %llu zswpout %llu zswpin %llu",
			       (unsigned long long)v[USWAP_PSWPOUT],
			       (unsigned long long)v[USWAP_PSWPIN],
			       (unsigned long long)v[USWAP_ZSWPOUT],
			       (unsigned long long)v[USWAP_ZSWPIN]);
		uswap_runtime_destroy(rt);
	}
	for (i = 0; i < nthreads; i++)
		free(workers[i].version);
	free(workers);
	return T_PASS;
}
