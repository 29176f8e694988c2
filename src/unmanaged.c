// SPDX-License-Identifier: MIT
/*
 * unmanaged.c - the anonymous memory of a process that uswap does not
 * manage, as a gauge (anon_unmanaged_bytes) and a warning.
 *
 * The budget covers what the preload library sees: mappings of at least
 * --min-region made through the C library's mmap and the malloc family.
 * A program can hold much more elsewhere, and then --max limits little:
 * memory mapped with raw system calls (the Go runtime's heap, even in a
 * program built with cgo), pieces smaller than --min-region, thread
 * stacks.  (A static program has no preload library at all: uswap run
 * checks that before it starts one, cli/elf.c.)  The gauge is the
 * kernel's count of this process's resident anonymous pages (RssAnon in
 * /proc/self/status: a counter, no walk of the page tables) less what
 * uswap accounts for: the managed pages resident here (its own charge,
 * those it shares since a fork, those demoted to slower nodes), the
 * compressed pool and the page state tables.  When it passes max, the
 * process says so once on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "runtime.h"
#include "uswap.h"

#define UNMANAGED_CHECK_US	1000000

/* RssAnon of this process in bytes, or 0. */
static uint64_t rss_anon(void)
{
	char buf[4096], *p;

	if (prim_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "RssAnon:");
	return p ? strtoull(p + 8, NULL, 10) << 10 : 0;
}

/*
 * The gauge, from the counters v[] just read (uswap_stats_read); warns
 * once when it passes max.
 */
uint64_t unmanaged_anon_bytes(struct uswap_runtime *rt, const uint64_t *v)
{
	uint64_t anon = rss_anon(), ours, out;

	ours = v[USWAP_RESIDENT_BYTES] + v[USWAP_ZSWAP_POOL_TOTAL_SIZE] +
	       v[USWAP_METADATA_BYTES] + v[USWAP_DEMOTED_BYTES] +
	       (atomic_load(&rt->memcg->member[rt->member].shared_held)
		<< PAGE_SHIFT);
	out = anon > ours ? anon - ours : 0;
	if (out > v[USWAP_MAX_BYTES] && v[USWAP_MAX_BYTES] &&
	    !atomic_exchange(&rt->logged_unmanaged, true))
		uswap_log("%llu MiB of this process's memory is outside uswap's management, more than --max (%llu MiB): the budget does not limit it (memory mapped with raw system calls, or in pieces smaller than --min-region; counted as anon_unmanaged_bytes)",
			  (unsigned long long)(out >> 20),
			  (unsigned long long)(v[USWAP_MAX_BYTES] >> 20));
	return out;
}

void unmanaged_check(struct uswap_runtime *rt)
{
	uint64_t now = prim_now_us(), v[USWAP_NR_COUNTERS];
	uint64_t last = atomic_load(&rt->unmanaged_checked_us);

	if (now - last < UNMANAGED_CHECK_US || atomic_load(&rt->logged_unmanaged))
		return;
	if (!atomic_compare_exchange_strong(&rt->unmanaged_checked_us, &last, now))
		return;
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
}
