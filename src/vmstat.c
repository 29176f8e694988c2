// SPDX-License-Identifier: MIT
/*
 * vmstat.c - counters (/proc/vmstat, /proc/swaps) and their JSON form.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "demote.h"
#include "memcontrol.h"
#include "prim.h"
#include "runtime.h"
#include "swap.h"
#include "uswap.h"
#include "vmstat.h"
#include "zswap.h"
#include "swap_io.h"

/*
 * Every counter's name, and whether it is a gauge (a level or a limit,
 * read as it is now) rather than an event count (which only grows, and
 * sums over processes).
 */
static const struct counter_def {
	const char *name;
	bool gauge;
} counters[USWAP_NR_COUNTERS] = {
	[USWAP_PGFAULT] = { .name = "pgfault" },
	[USWAP_PGMAJFAULT] = { .name = "pgmajfault" },
	[USWAP_PSWPIN] = { .name = "pswpin" },
	[USWAP_PSWPOUT] = { .name = "pswpout" },
	[USWAP_PGSCAN] = { .name = "pgscan" },
	[USWAP_PGSTEAL] = { .name = "pgsteal" },
	[USWAP_PGACTIVATE] = { .name = "pgactivate" },
	[USWAP_PGDEACTIVATE] = { .name = "pgdeactivate" },
	[USWAP_WORKINGSET_REFAULT] = { .name = "workingset_refault_anon" },
	[USWAP_WORKINGSET_ACTIVATE] = { .name = "workingset_activate_anon" },
	[USWAP_WORKINGSET_RESTORE] = { .name = "workingset_restore_anon" },
	[USWAP_ZERO_FILL] = { .name = "zero_fill" },
	[USWAP_WP_FAULT] = { .name = "wp_fault" },
	[USWAP_EVICT_ABORT] = { .name = "evict_abort" },
	[USWAP_CLEAN_DROP] = { .name = "clean_drop" },
	[USWAP_SWAP_FULL] = { .name = "swap_full" },
	[USWAP_SWAP_IO_ERROR] = { .name = "swap_io_error" },
	[USWAP_RECLAIM_STALL] = { .name = "reclaim_stall" },
	[USWAP_RECLAIM_STALL_US] = { .name = "reclaim_stall_us" },
	[USWAP_MAX_OVERRUN] = { .name = "max_overrun" },
	[USWAP_FORK_MATERIALIZED] = { .name = "fork_materialized" },
	[USWAP_RESIDENT_BYTES] = { .name = "resident_bytes", .gauge = true },
	[USWAP_RESIDENT_PEAK] = { .name = "resident_peak", .gauge = true },
	[USWAP_SWAP_USED_BYTES] = { .name = "swap_used_bytes", .gauge = true },
	[USWAP_MAX_BYTES] = { .name = "max_bytes", .gauge = true },
	[USWAP_HIGH_BYTES] = { .name = "high_bytes", .gauge = true },
	[USWAP_MANAGED_BYTES] = { .name = "managed_bytes", .gauge = true },
	[USWAP_METADATA_BYTES] = { .name = "metadata_bytes", .gauge = true },
	[USWAP_SWAP_CORRUPT] = { .name = "swap_corrupt" },
	[USWAP_ZSWPIN] = { .name = "zswpin" },
	[USWAP_ZSWPOUT] = { .name = "zswpout" },
	[USWAP_ZSWPWB] = { .name = "zswpwb" },
	[USWAP_ZSWAP_POOL_TOTAL_SIZE] = { .name = "zswap_pool_total_size", .gauge = true },
	[USWAP_ZSWAP_STORED_PAGES] = { .name = "zswap_stored_pages", .gauge = true },
	[USWAP_ZSWAP_SAME_FILLED_PAGES] = { .name = "zswap_same_filled_pages", .gauge = true },
	[USWAP_ZSWAP_STORED_INCOMPRESSIBLE_PAGES] = { .name = "zswap_stored_incompressible_pages", .gauge = true },
	[USWAP_ZSWAP_COMPRESSED_BYTES] = { .name = "zswap_compressed_bytes", .gauge = true },
	[USWAP_ZSWAP_REJECT_COMPRESS_POOR] = { .name = "zswap_reject_compress_poor" },
	[USWAP_ZSWAP_REJECT_COMPRESS_FAIL] = { .name = "zswap_reject_compress_fail" },
	[USWAP_ZSWAP_REJECT_ALLOC_FAIL] = { .name = "zswap_reject_alloc_fail" },
	[USWAP_ZSWAP_REJECT_POOL_LIMIT] = { .name = "zswap_reject_pool_limit" },
	[USWAP_ZSWAP_POOL_LIMIT_HIT] = { .name = "zswap_pool_limit_hit" },
	[USWAP_ZSWAP_DECOMPRESS_FAIL] = { .name = "zswap_decompress_fail" },
	[USWAP_ZSWAP_WRITEBACK_FAIL] = { .name = "zswap_writeback_fail" },
	[USWAP_MTHP_16KB_ZSWPOUT] = { .name = "mthp_16kB_zswpout" },
	[USWAP_MTHP_64KB_ZSWPOUT] = { .name = "mthp_64kB_zswpout" },
	[USWAP_MTHP_2048KB_ZSWPOUT] = { .name = "mthp_2048kB_zswpout" },
	[USWAP_THP_SWPOUT] = { .name = "thp_swpout" },
	[USWAP_THP_SWPOUT_FALLBACK] = { .name = "thp_swpout_fallback" },
	[USWAP_MTHP_16KB_SWPOUT] = { .name = "mthp_16kB_swpout" },
	[USWAP_MTHP_16KB_SWPOUT_FALLBACK] = { .name = "mthp_16kB_swpout_fallback" },
	[USWAP_MTHP_64KB_SWPOUT] = { .name = "mthp_64kB_swpout" },
	[USWAP_MTHP_64KB_SWPOUT_FALLBACK] = { .name = "mthp_64kB_swpout_fallback" },
	[USWAP_SWAP_RA] = { .name = "swap_ra" },
	[USWAP_FAULT_AROUND] = { .name = "fault_around" },
	[USWAP_SWAP_RA_HIT] = { .name = "swap_ra_hit" },
	[USWAP_PGDEMOTE_KSWAPD] = { .name = "pgdemote_kswapd" },
	[USWAP_PGDEMOTE_DIRECT] = { .name = "pgdemote_direct" },
	[USWAP_PGDEMOTE_FAIL] = { .name = "pgdemote_fail" },
	[USWAP_PGPROMOTE_SUCCESS] = { .name = "pgpromote_success" },
	[USWAP_PGPROMOTE_CANDIDATE] = { .name = "pgpromote_candidate" },
	[USWAP_DEMOTED_BYTES] = { .name = "demoted_bytes", .gauge = true },
	[USWAP_UFFD_EAGAIN] = { .name = "uffd_eagain" },
	[USWAP_UFFD_EEXIST] = { .name = "uffd_eexist" },
	[USWAP_SWAP_IO_SHORT] = { .name = "swap_io_short" },
	[USWAP_SWAP_ENCRYPT] = { .name = "swap_encrypt" },
	[USWAP_ZSWAP_WRITEBACK_SHARED] = { .name = "zswap_writeback_shared" },
	[USWAP_FAULT_THREAD_MOVES] = { .name = "fault_thread_moves" },
	[USWAP_FORK_SHARED_BYTES] = { .name = "fork_shared_bytes", .gauge = true },
	[USWAP_FAULT_THREAD_RESTARTS] = { .name = "fault_thread_restarts" },
	[USWAP_HOLD_PAGES] = { .name = "hold_pages" },
	[USWAP_HOLD_OVERRUN] = { .name = "hold_overrun" },
	[USWAP_ANON_UNMANAGED_BYTES] = { .name = "anon_unmanaged_bytes", .gauge = true },
	[USWAP_EVICT_MOVE] = { .name = "evict_move" },
	[USWAP_EVICT_BUSY] = { .name = "evict_busy" },
	[USWAP_EVICT_WAIT] = { .name = "evict_wait" },
	[USWAP_UNEVICTABLE_PGS_CULLED] = { .name = "unevictable_pgs_culled" },
	[USWAP_NR_UNEVICTABLE] = { .name = "nr_unevictable", .gauge = true },
	[USWAP_NR_MLOCK] = { .name = "nr_mlock", .gauge = true },
	[USWAP_MADV_COLD] = { .name = "madv_cold" },
	[USWAP_MADV_PAGEOUT] = { .name = "madv_pageout" },
	[USWAP_CHARGE_UNDERFLOW] = { .name = "charge_underflow" },
};

EXPORT const char *uswap_counter_name(enum uswap_counter c)
{
	return (unsigned)c < USWAP_NR_COUNTERS ? counters[c].name : NULL;
}

bool counter_is_gauge(unsigned c)
{
	return c < USWAP_NR_COUNTERS && counters[c].gauge;
}

void count_latency(struct uswap_runtime *rt, uint64_t us)
{
	unsigned b = 0;

	while (us > 1 && b < USWAP_LATENCY_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	atomic_fetch_add_explicit(&rt->stat->latency[b], 1, memory_order_relaxed);
}

/* The pool's counters, under the kernel's names. */
static void zswap_values(const struct zswap_stats *st, uint64_t *v)
{
	v[USWAP_ZSWPIN] = st->zswpin;
	v[USWAP_ZSWPOUT] = st->zswpout;
	v[USWAP_ZSWPWB] = st->zswpwb;
	v[USWAP_ZSWAP_POOL_TOTAL_SIZE] = st->pool_bytes;
	v[USWAP_ZSWAP_STORED_PAGES] = st->stored_pages;
	v[USWAP_ZSWAP_SAME_FILLED_PAGES] = st->same_filled_pages;
	v[USWAP_ZSWAP_STORED_INCOMPRESSIBLE_PAGES] = st->stored_incompressible_pages;
	v[USWAP_ZSWAP_COMPRESSED_BYTES] = st->compressed_bytes;
	v[USWAP_ZSWAP_REJECT_COMPRESS_POOR] = st->reject_compress_poor;
	v[USWAP_ZSWAP_REJECT_COMPRESS_FAIL] = st->reject_compress_fail;
	v[USWAP_ZSWAP_REJECT_ALLOC_FAIL] = st->reject_alloc_fail;
	v[USWAP_ZSWAP_REJECT_POOL_LIMIT] = st->reject_pool_limit;
	v[USWAP_ZSWAP_POOL_LIMIT_HIT] = st->pool_limit_hit;
	v[USWAP_ZSWAP_DECOMPRESS_FAIL] = st->decompress_fail;
	v[USWAP_ZSWAP_WRITEBACK_FAIL] = st->written_back_fail;
	v[USWAP_ZSWAP_WRITEBACK_SHARED] = st->written_back_shared;
	v[USWAP_MTHP_16KB_ZSWPOUT] = st->mthp_zswpout[0];
	v[USWAP_MTHP_64KB_ZSWPOUT] = st->mthp_zswpout[1];
	v[USWAP_MTHP_2048KB_ZSWPOUT] = st->mthp_zswpout[2];
}

static void read_zswap(struct uswap_runtime *rt, uint64_t *v)
{
	struct zswap_stats st;

	zswap_get_stats(rt->zswap, &st);
	zswap_values(&st, v);
}

/*
 * A process is gone (memcontrol.c releases its member): its events join
 * the tree's reaped totals; its gauges went with it.
 */
void vmstat_fold(struct vmstat *from, struct vmstat_reaped *into)
{
	uint64_t v[USWAP_NR_COUNTERS];
	struct zswap_stats st;
	unsigned i;

	for (i = 0; i < USWAP_NR_COUNTERS; i++)
		v[i] = atomic_load(&from->ev[i]);
	zswap_counters_stats(from->zswap, &st);
	zswap_values(&st, v);
	for (i = 0; i < USWAP_NR_COUNTERS; i++)
		if (!counters[i].gauge && v[i])
			atomic_fetch_add(&into->ev[i], v[i]);
	for (i = 0; i < USWAP_LATENCY_BUCKETS; i++)
		atomic_fetch_add(&into->latency[i], atomic_load(&from->latency[i]));
}

/* This process's pages on node, not counting a move still in flight. */
static uint64_t demoted_pages(struct uswap_runtime *rt, int node)
{
	uint64_t inflight = tiering_inflight(rt, node);
	uint64_t own = atomic_load(&rt->memcg->member[rt->member].demoted[node]);

	return own > inflight ? own - inflight : 0;
}

EXPORT int uswap_stats_read(struct uswap_runtime *rt, uint64_t *values, size_t n)
{
	size_t i;

	if (!rt || !values)
		return -EINVAL;
	for (i = 0; i < n && i < USWAP_NR_COUNTERS; i++)
		values[i] = atomic_load(&rt->stat->ev[i]);
	if (n > USWAP_RESIDENT_BYTES)
		values[USWAP_RESIDENT_BYTES] =
			(memcg_own_pages(rt) -
			 atomic_load(&rt->pool_pages)) << PAGE_SHIFT;
	if (n > USWAP_RESIDENT_PEAK)
		values[USWAP_RESIDENT_PEAK] =
			atomic_load(&rt->memcg->peak) << PAGE_SHIFT;
	if (n > USWAP_SWAP_USED_BYTES) {
		uint64_t used = 0;
		unsigned k;

		for (k = 0; k < rt->nr_swap; k++)
			used += (uint64_t)swap_inuse_slots(&rt->swap[k])
				<< SWAP_SLOT_SHIFT;
		values[USWAP_SWAP_USED_BYTES] = used;
	}
	if (n > USWAP_MAX_BYTES)
		values[USWAP_MAX_BYTES] = rt->memcg->max << PAGE_SHIFT;
	if (n > USWAP_HIGH_BYTES)
		values[USWAP_HIGH_BYTES] = rt->memcg->high << PAGE_SHIFT;
	if (n > USWAP_METADATA_BYTES) {
		pthread_rwlock_rdlock(&rt->op_lock);
		values[USWAP_METADATA_BYTES] = rt->meta_bytes;
		pthread_rwlock_unlock(&rt->op_lock);
	}
	if (n > USWAP_DEMOTED_BYTES) {
		uint64_t nodes = rt->memcg->tier_nodes, pages = 0;

		while (nodes) {
			int node = __builtin_ctzll(nodes);

			nodes &= nodes - 1;
			pages += demoted_pages(rt, node);
		}
		values[USWAP_DEMOTED_BYTES] = pages << PAGE_SHIFT;
	}
	if (n > USWAP_FORK_SHARED_BYTES)
		values[USWAP_FORK_SHARED_BYTES] =
			atomic_load(&rt->memcg->shared) << PAGE_SHIFT;
	/* page_io.c's counts are per process (swap_io.h). */
	if (n > USWAP_SWAP_IO_SHORT)
		values[USWAP_SWAP_IO_SHORT] = swap_io_stat(SWAP_IO_SHORT);
	if (n > USWAP_SWAP_ENCRYPT)
		values[USWAP_SWAP_ENCRYPT] = swap_io_stat(SWAP_IO_SEALED);
	if (n > USWAP_NR_MLOCK)
		mlock_counts(rt, &values[USWAP_NR_UNEVICTABLE],
			     &values[USWAP_NR_MLOCK]);
	if (rt->zswap && n >= USWAP_NR_COUNTERS)
		read_zswap(rt, values);
	if (n >= USWAP_NR_COUNTERS)
		values[USWAP_ANON_UNMANAGED_BYTES] = unmanaged_anon_bytes(rt, values);
	return 0;
}

EXPORT int uswap_stats_latency(struct uswap_runtime *rt,
			       uint64_t hist[USWAP_LATENCY_BUCKETS])
{
	unsigned i;

	if (!rt)
		return -EINVAL;
	for (i = 0; i < USWAP_LATENCY_BUCKETS; i++)
		hist[i] = atomic_load(&rt->stat->latency[i]);
	return 0;
}

/* VmHWM and VmRSS of this process, in KiB, from /proc/self/status. */
static void read_rss(uint64_t *hwm, uint64_t *rss)
{
	char buf[4096], *p;

	*hwm = *rss = 0;
	if (prim_read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return;
	p = strstr(buf, "VmHWM:");
	if (p)
		*hwm = strtoull(p + 6, NULL, 10);
	p = strstr(buf, "VmRSS:");
	if (p)
		*rss = strtoull(p + 6, NULL, 10);
}

struct out {
	char buf[8192];
	size_t len;
	int fd;
	int err;
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (done < o->len && !o->err) {
		ssize_t n = prim_write(o->fd, o->buf + done, o->len - done);

		if (n < 0) {
			if (n != -EINTR)
				o->err = (int)n;
			continue;
		}
		done += (size_t)n;
	}
	o->len = 0;
}

static void __attribute__((format(printf, 2, 3))) out_printf(struct out *o,
							     const char *fmt,
							     ...)
{
	va_list ap;
	int n;

	if (o->len > sizeof(o->buf) - 512)
		out_flush(o);
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += MIN((size_t)n, sizeof(o->buf) - o->len - 1);
}

/* The percentile q (0..100) of a log2 latency histogram: a bucket's top. */
static uint64_t hist_percentile(_Atomic uint64_t *h, unsigned q)
{
	uint64_t total = 0, seen = 0;
	unsigned b;

	for (b = 0; b < USWAP_LATENCY_BUCKETS; b++)
		total += atomic_load(&h[b]);
	if (!total)
		return 0;
	for (b = 0; b < USWAP_LATENCY_BUCKETS; b++) {
		seen += atomic_load(&h[b]);
		if (seen * 100 >= total * q)
			return 2ull << b;
	}
	return 2ull << (USWAP_LATENCY_BUCKETS - 1);
}

/*
 * s as the inside of a JSON string: '"' and '\\' escaped, and the control
 * characters a path may hold (a --swap-dir may have any).
 */
static const char *json_escape(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; *s && n + 7 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			n += (size_t)snprintf(buf + n, size - n, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\u%04x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = 0;
	return buf;
}

/* One device as a /proc/swaps row, with its traffic and I/O latency. */
static void write_swap_row(struct out *o, struct uswap_runtime *rt, unsigned k)
{
	struct swap_info *si = &rt->swap[k];
	struct swap_dev_stat *st = &rt->swapstat[k];
	char path[sizeof(si->path) * 6 + 8];
	uint64_t used, peak;

	used = (uint64_t)swap_inuse_slots(si) * (SWAP_SLOT_SIZE / 1024);
	peak = (uint64_t)swap_peak_inuse_slots(si) * (SWAP_SLOT_SIZE / 1024);
	out_printf(o, "%s{\"path\": \"%s\", \"type\": \"%s\", "
		   "\"size_kib\": %llu, \"used_kib\": %llu, "
		   "\"peak_used_kib\": %llu, \"prio\": %d, \"node\": %d, "
		   "\"direct_io\": %s, \"pswpout\": %llu, \"pswpin\": %llu, "
		   "\"write_p50_us\": %llu, \"write_p99_us\": %llu, "
		   "\"read_p50_us\": %llu, \"read_p99_us\": %llu, "
		   "\"discards\": %llu}",
		   k ? ", " : "", json_escape(si->path, path, sizeof(path)),
		   rt->swap_kind[k] ? rt->swap_kind[k] : "file",
		   (unsigned long long)si->nr_slots * (SWAP_SLOT_SIZE / 1024),
		   (unsigned long long)used,
		   (unsigned long long)peak,
		   si->prio, si->node, si->direct ? "true" : "false",
		   (unsigned long long)atomic_load(&st->pswpout),
		   (unsigned long long)atomic_load(&st->pswpin),
		   (unsigned long long)hist_percentile(st->wlat, 50),
		   (unsigned long long)hist_percentile(st->wlat, 99),
		   (unsigned long long)hist_percentile(st->rlat, 50),
		   (unsigned long long)hist_percentile(st->rlat, 99),
		   (unsigned long long)swap_discard_count(si));
}

/*
 * The tier budgets (--tier-max): each slower node that takes demoted
 * pages, for the whole tree (its charge includes moves in flight), and
 * this process's share (pages that arrived).
 */
static void write_tiers(struct out *o, struct uswap_runtime *rt)
{
	struct memcg *mc = rt->memcg;
	uint64_t nodes = mc->tier_nodes;
	bool first = true;

	out_printf(o, " \"tiers\": [");
	while (nodes) {
		int n = __builtin_ctzll(nodes);
		struct tier_budget *tb = &mc->tier[n];

		nodes &= nodes - 1;
		out_printf(o, "%s{\"node\": %d, \"max_kib\": %llu, "
			   "\"high_kib\": %llu, \"charged_kib\": %llu, "
			   "\"peak_kib\": %llu, \"own_kib\": %llu}",
			   first ? "" : ", ", n,
			   (unsigned long long)tb->max << (PAGE_SHIFT - 10),
			   (unsigned long long)tb->high << (PAGE_SHIFT - 10),
			   (unsigned long long)atomic_load(&tb->charged) << (PAGE_SHIFT - 10),
			   (unsigned long long)atomic_load(&tb->peak) << (PAGE_SHIFT - 10),
			   (unsigned long long)demoted_pages(rt, n) << (PAGE_SHIFT - 10));
		first = false;
	}
	out_printf(o, "],\n");
}

/*
 * The tree's counters of the processes that ended without writing theirs
 * (memcontrol.c folds them in as it reaps them): the same in every
 * process's statistics, and growing, so a reader takes the largest of
 * each (per budget) and adds it once.  "members" names each member entry
 * whose last occupancy (the "member_gen" of its process's statistics)
 * was folded in, so that a reader never counts that process twice.
 */
static void write_reaped(struct out *o, struct memcg *mc)
{
	unsigned i;
	bool first = true;

	out_printf(o, " \"reaped\": {\"budget\": \"%s\", \"processes\": %llu, "
		   "\"vmstat\": {", mc->name,
		   (unsigned long long)atomic_load(&mc->reaped.processes));
	for (i = 0; i < USWAP_NR_COUNTERS; i++) {
		uint64_t v = atomic_load(&mc->reaped.ev[i]);

		if (!v || counters[i].gauge)
			continue;
		out_printf(o, "%s\"%s\": %llu", first ? "" : ", ",
			   counters[i].name, (unsigned long long)v);
		first = false;
	}
	out_printf(o, "}, \"fault_latency_us\": {");
	first = true;
	for (i = 0; i < USWAP_LATENCY_BUCKETS; i++) {
		uint64_t v = atomic_load(&mc->reaped.latency[i]);

		if (!v)
			continue;
		out_printf(o, "%s\"%llu\": %llu", first ? "" : ", ",
			   1ull << i, (unsigned long long)v);
		first = false;
	}
	out_printf(o, "}, \"members\": {");
	first = true;
	for (i = 0; i < TREE_MAX_MEMBERS; i++) {
		uint32_t gen = atomic_load(&mc->folded_gen[i]);

		if (!gen)
			continue;
		out_printf(o, "%s\"%u\": %u", first ? "" : ", ", i, gen);
		first = false;
	}
	out_printf(o, "}},\n");
}

EXPORT int uswap_stats_write_json(struct uswap_runtime *rt, int fd)
{
	uint64_t v[USWAP_NR_COUNTERS], hist[USWAP_LATENCY_BUCKETS], hwm, rss;
	struct out *o = prim_alloc(sizeof(*o));
	unsigned i;
	int err;

	if (!rt)
		return -EINVAL;
	if (!o)
		return -ENOMEM;
	o->fd = fd;
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	uswap_stats_latency(rt, hist);
	read_rss(&hwm, &rss);
	out_printf(o, "{\"vmstat\": {");
	for (i = 0; i < USWAP_NR_COUNTERS; i++)
		out_printf(o, "%s\"%s\": %llu", i ? ", " : "", counters[i].name,
			   (unsigned long long)v[i]);
	out_printf(o, "},\n \"swaps\": [");
	for (i = 0; i < rt->nr_swap; i++)
		write_swap_row(o, rt, i);
	out_printf(o, "],\n");
	write_tiers(o, rt);
	out_printf(o, " \"fault_latency_us\": {");
	for (i = 0; i < USWAP_LATENCY_BUCKETS; i++)
		out_printf(o, "%s\"%llu\": %llu", i ? ", " : "",
			   1ull << i, (unsigned long long)hist[i]);
	out_printf(o, "},\n");
	write_reaped(o, rt->memcg);
	out_printf(o, " \"process\": {\"pid\": %d, \"rss_peak_kib\": %llu, "
		   "\"rss_kib\": %llu, \"folio_size\": %llu, "
		   "\"uffd_features\": %llu, \"write_protect\": %s, "
		   "\"zswap\": \"%s\", \"zswap_unit\": \"%s\", "
		   "\"zswap_incompressible\": \"%s\", \"zswap_charge\": \"%s\", "
		   "\"budget\": \"%s\", \"member\": %u, \"member_gen\": %u}}\n",
		   (int)getpid(), (unsigned long long)hwm,
		   (unsigned long long)rss,
		   (unsigned long long)rt->opt.folio_size,
		   (unsigned long long)rt->features,
		   rt->have_wp ? "true" : "false",
		   rt->zswap ? rt->opt.zswap : "off",
		   rt->opt.zswap_unit == USWAP_ZSWAP_UNIT_PAGE ? "page" : "folio",
		   rt->opt.flags & USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE ?
		   "store" : "device",
		   rt->opt.flags & USWAP_OPT_ZSWAP_NO_CHARGE ? "off" : "on",
		   rt->memcg->name, rt->member,
		   atomic_load(&rt->memcg->member[rt->member].gen));
	out_flush(o);
	err = o->err;
	prim_free(o, sizeof(*o));
	return err;
}

/*
 * The final statistics of a process: the members of the tree found gone
 * are reaped first, so that the reaped totals hold the children it waited
 * for; once written, the reaper does not count this process again.
 */
EXPORT int uswap_stats_write_final(struct uswap_runtime *rt, int fd)
{
	int err;

	if (!rt || rt->defunct)
		return -EINVAL;
	memcg_reap_now(rt);
	err = uswap_stats_write_json(rt, fd);
	if (!err)
		memcg_set_reported(rt);
	return err;
}
