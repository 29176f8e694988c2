// SPDX-License-Identifier: MIT
/*
 * hold - the library's hold (tests/e2e/hold.sh, and under the sanitizers):
 * 64 MiB of a region under an 8 MiB budget, most of it swapped out, while
 * a thread of the program keeps writing to it:
 *
 *   - uswap_runtime_hold brings every page back (mincore says resident),
 *     every byte reads back as written, hold_pages and hold_overrun count
 *     it; after uswap_runtime_unhold the reclaimer evicts again;
 *   - uswap_hold_pid on this very process (its reclaimer serves the
 *     request through the budget, as for uswap debug) does the same,
 *     writable: no page is write-protected any more (a write through
 *     /proc/self/mem succeeds everywhere), until uswap_hold_release.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testlib.h"

#define LEN	(64u << 20)
#define PAGES	(LEN / T_PAGE)

static char *mem;
static _Atomic uint64_t version[PAGES];
static _Atomic bool stop;
static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;

/* The program's own thread: rewrites pages of the first 4 MiB. */
static void *writer(void *arg)
{
	uint64_t s = 1, i;

	(void)arg;
	while (!atomic_load(&stop)) {
		i = t_rand(&s) % (PAGES / 16);
		pthread_mutex_lock(&page_lock);
		t_fill(mem + i * T_PAGE, i, atomic_load(&version[i]) + 1);
		atomic_fetch_add(&version[i], 1);
		pthread_mutex_unlock(&page_lock);
	}
	return NULL;
}

static unsigned long resident(void)
{
	static unsigned char vec[PAGES];
	unsigned long r = 0, i;

	if (mincore(mem, LEN, vec))
		t_fail("mincore: %s", strerror(errno));
	for (i = 0; i < PAGES; i++)
		r += vec[i] & 1;
	return r;
}

/* Resident pages once reclaim has had up to 30 seconds to evict. */
static unsigned long resident_settled(void)
{
	unsigned long r = resident();
	unsigned n;

	for (n = 0; n < 300 && r > PAGES / 2; n++) {
		usleep(100000);
		r = resident();
	}
	return r;
}

static void check_all(const char *when)
{
	unsigned long i;

	pthread_mutex_lock(&page_lock);
	for (i = 0; i < PAGES; i++)
		if (t_check(mem + i * T_PAGE, i, atomic_load(&version[i])))
			t_fail("%s: page %lu is not what was written", when, i);
	pthread_mutex_unlock(&page_lock);
}

/* Rewrite everything past the writer's part: the budget evicts again. */
static void rewrite(void)
{
	unsigned long i;

	for (i = PAGES / 16; i < PAGES; i++) {
		t_fill(mem + i * T_PAGE, i, atomic_load(&version[i]) + 1);
		atomic_fetch_add(&version[i], 1);
	}
}

/* Writes through /proc/self/mem, as a debugger's: each page as it is. */
static unsigned long mem_write_failures(void)
{
	static char page[T_PAGE];
	unsigned long bad = 0, i;
	int fd = open("/proc/self/mem", O_RDWR);

	if (fd < 0)
		t_fail("/proc/self/mem: %s", strerror(errno));
	pthread_mutex_lock(&page_lock);
	for (i = 0; i < PAGES; i++) {
		t_fill(page, i, atomic_load(&version[i]));
		if (pwrite(fd, page, T_PAGE, (off_t)(uintptr_t)(mem + i * T_PAGE)) != T_PAGE)
			bad++;
	}
	pthread_mutex_unlock(&page_lock);
	close(fd);
	return bad;
}

int main(void)
{
	struct uswap_options opt;
	struct uswap_runtime *rt;
	struct uswap_hold *h;
	uint64_t v[USWAP_NR_COUNTERS], pages;
	pthread_t tid;
	unsigned long i, r;
	int err;

	uswap_options_init(&opt);
	opt.max = 8u << 20;
	opt.folio_size = 16u << 10;
	rt = t_runtime(&opt);
	if (uswap_region_create(rt, LEN, (void **)&mem))
		t_fail("uswap_region_create");
	for (i = 0; i < PAGES; i++) {
		t_fill(mem + i * T_PAGE, i, 1);
		atomic_store(&version[i], 1);
	}
	pthread_create(&tid, NULL, writer, NULL);

	r = resident();
	printf("before: %lu of %u pages resident\n", r, PAGES);
	if (r > PAGES / 2)
		t_fail("too little swapped out");
	err = uswap_runtime_hold(rt, 0, UINT64_MAX, &pages);
	if (err)
		t_fail("uswap_runtime_hold: %s", strerror(-err));
	r = resident();
	printf("held: %llu pages brought back, %lu of %u resident\n",
	       (unsigned long long)pages, r, PAGES);
	if (r != PAGES || !pages)
		t_fail("not everything is resident under the hold");
	check_all("held");
	uswap_runtime_unhold(rt);
	rewrite();
	r = resident_settled();
	printf("released: %lu of %u resident after a rewrite\n", r, PAGES);
	if (r > PAGES / 2)
		t_fail("still held after uswap_runtime_unhold");
	check_all("released");

	printf("write through /proc/self/mem without a hold: %lu pages fail\n",
	       mem_write_failures());
	err = uswap_hold_pid(getpid(), 60000, &h, &pages);
	if (err)
		t_fail("uswap_hold_pid: %s", strerror(-err));
	r = resident();
	i = mem_write_failures();
	printf("uswap_hold_pid: %llu pages brought back, %lu resident, %lu writes fail\n",
	       (unsigned long long)pages, r, i);
	if (r != PAGES || i)
		t_fail("the remote hold left pages out or write-protected");
	check_all("remote hold");
	uswap_hold_release(h);
	rewrite();
	r = resident_settled();
	printf("released: %lu of %u resident after a rewrite\n", r, PAGES);
	if (r > PAGES / 2)
		t_fail("still held after uswap_hold_release");
	atomic_store(&stop, true);
	pthread_join(tid, NULL);
	check_all("end");

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("hold_pages %llu hold_overrun %llu\n",
	       (unsigned long long)v[USWAP_HOLD_PAGES],
	       (unsigned long long)v[USWAP_HOLD_OVERRUN]);
	if (!v[USWAP_HOLD_PAGES] || !v[USWAP_HOLD_OVERRUN])
		t_fail("hold_pages or hold_overrun not counted");
	uswap_runtime_destroy(rt);
	return 0;
}
