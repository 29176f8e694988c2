// SPDX-License-Identifier: MIT
/*
 * regions_race.c - the reclaimer reads the region table while other
 * threads map and unmap regions: every read of the table's fields must be
 * ordered with those changes (meant for the ThreadSanitizer build, where
 * an unordered read fails the run; the plain build checks the data).
 *
 * A region twice the budget is written and read by one thread while the
 * swap device refuses every write (USWAP_INJECT=enospc=0): the reclaimer
 * finds nothing it can evict and goes round its idle loop again and
 * again, reading the table's size between its locked steps, while two
 * threads map, write, check and unmap regions of their own.
 *
 * Usage: regions_race [SECONDS [COMPRESSOR]] (with a compressed pool,
 * which takes what the device refuses until it is full too)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define MB (1ul << 20)

static struct uswap_runtime *rt;
static atomic_bool stop;

static void *filler(void *arg)
{
	uint64_t n = 8 * MB / T_PAGE, p, round = 0;
	char *mem;

	(void)arg;
	if (uswap_region_create(rt, 8 * MB, (void **)&mem))
		t_fail("region");
	while (!stop) {
		round++;
		for (p = 0; p < n; p++)
			t_fill(mem + p * T_PAGE, p, round);
		for (p = 0; p < n; p++)
			if (t_check(mem + p * T_PAGE, p, round))
				t_fail("filler: page %llu wrong in round %llu",
				       (unsigned long long)p,
				       (unsigned long long)round);
	}
	uswap_munmap(rt, mem, 8 * MB);
	return NULL;
}

static void *mapper(void *arg)
{
	uint64_t id = (uintptr_t)arg, s = id + 1, round = 0;

	while (!stop) {
		size_t len = (1 + t_rand(&s) % 3) * MB;
		uint64_t p, n = len / T_PAGE;
		char *mem;

		if (uswap_region_create(rt, len, (void **)&mem))
			t_fail("mapper %llu: region", (unsigned long long)id);
		round++;
		for (p = 0; p < n; p += 8)
			t_fill(mem + p * T_PAGE, p, round);
		for (p = 0; p < n; p += 8)
			if (t_check(mem + p * T_PAGE, p, round))
				t_fail("mapper %llu: page %llu wrong",
				       (unsigned long long)id,
				       (unsigned long long)p);
		if (uswap_munmap(rt, mem, len))
			t_fail("mapper %llu: munmap", (unsigned long long)id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 3, k;
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS];
	pthread_t th[3];

	setenv("USWAP_INJECT", "enospc=0", 1);
	uswap_options_init(&opt);
	opt.max = 4 * MB;
	opt.folio_size = 16384;
	opt.swap_size = 64 * MB;
	if (argc > 2)
		snprintf(opt.zswap, sizeof(opt.zswap), "%s", argv[2]);
	rt = t_runtime(&opt);
	pthread_create(&th[0], NULL, filler, NULL);
	for (k = 1; k < 3; k++)
		pthread_create(&th[k], NULL, mapper, (void *)(uintptr_t)k);
	sleep(seconds);
	stop = true;
	for (k = 0; k < 3; k++)
		pthread_join(th[k], NULL);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("regions_race: pgscan %llu swap_full %llu max_overrun %llu\n",
	       (unsigned long long)v[USWAP_PGSCAN],
	       (unsigned long long)v[USWAP_SWAP_FULL],
	       (unsigned long long)v[USWAP_MAX_OVERRUN]);
	if (!v[USWAP_SWAP_FULL])
		t_fail("the reclaimer never found the device full: the idle loop was not exercised");
	uswap_runtime_destroy(rt);
	return 0;
}
