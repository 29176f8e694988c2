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

#include "internal.h"
#include "swap_io.h"

static const char *const counter_names[USWAP_NR_COUNTERS] = {
	[USWAP_PGFAULT] = "pgfault",
	[USWAP_PGMAJFAULT] = "pgmajfault",
	[USWAP_PSWPIN] = "pswpin",
	[USWAP_PSWPOUT] = "pswpout",
	[USWAP_PGSCAN] = "pgscan",
	[USWAP_PGSTEAL] = "pgsteal",
	[USWAP_PGACTIVATE] = "pgactivate",
	[USWAP_PGDEACTIVATE] = "pgdeactivate",
	[USWAP_WORKINGSET_REFAULT] = "workingset_refault_anon",
	[USWAP_WORKINGSET_ACTIVATE] = "workingset_activate_anon",
	[USWAP_WORKINGSET_RESTORE] = "workingset_restore_anon",
	[USWAP_ZERO_FILL] = "zero_fill",
	[USWAP_WP_FAULT] = "wp_fault",
	[USWAP_EVICT_ABORT] = "evict_abort",
	[USWAP_CLEAN_DROP] = "clean_drop",
	[USWAP_SWAP_FULL] = "swap_full",
	[USWAP_SWAP_IO_ERROR] = "swap_io_error",
	[USWAP_RECLAIM_STALL] = "reclaim_stall",
	[USWAP_RECLAIM_STALL_US] = "reclaim_stall_us",
	[USWAP_MAX_OVERRUN] = "max_overrun",
	[USWAP_FORK_MATERIALIZED] = "fork_materialized",
	[USWAP_RESIDENT_BYTES] = "resident_bytes",
	[USWAP_RESIDENT_PEAK] = "resident_peak",
	[USWAP_SWAP_USED_BYTES] = "swap_used_bytes",
	[USWAP_MAX_BYTES] = "max_bytes",
	[USWAP_HIGH_BYTES] = "high_bytes",
	[USWAP_MANAGED_BYTES] = "managed_bytes",
	[USWAP_METADATA_BYTES] = "metadata_bytes",
	[USWAP_SWAP_CORRUPT] = "swap_corrupt",
	[USWAP_ZSWPIN] = "zswpin",
	[USWAP_ZSWPOUT] = "zswpout",
	[USWAP_ZSWPWB] = "zswpwb",
	[USWAP_ZSWAP_POOL_TOTAL_SIZE] = "zswap_pool_total_size",
	[USWAP_ZSWAP_STORED_PAGES] = "zswap_stored_pages",
	[USWAP_ZSWAP_SAME_FILLED_PAGES] = "zswap_same_filled_pages",
	[USWAP_ZSWAP_STORED_INCOMPRESSIBLE_PAGES] = "zswap_stored_incompressible_pages",
	[USWAP_ZSWAP_COMPRESSED_BYTES] = "zswap_compressed_bytes",
	[USWAP_ZSWAP_REJECT_COMPRESS_POOR] = "zswap_reject_compress_poor",
	[USWAP_ZSWAP_REJECT_COMPRESS_FAIL] = "zswap_reject_compress_fail",
	[USWAP_ZSWAP_REJECT_ALLOC_FAIL] = "zswap_reject_alloc_fail",
	[USWAP_ZSWAP_REJECT_POOL_LIMIT] = "zswap_reject_pool_limit",
	[USWAP_ZSWAP_POOL_LIMIT_HIT] = "zswap_pool_limit_hit",
	[USWAP_ZSWAP_DECOMPRESS_FAIL] = "zswap_decompress_fail",
	[USWAP_ZSWAP_WRITEBACK_FAIL] = "zswap_writeback_fail",
	[USWAP_MTHP_16KB_ZSWPOUT] = "mthp_16kB_zswpout",
	[USWAP_MTHP_64KB_ZSWPOUT] = "mthp_64kB_zswpout",
	[USWAP_MTHP_2048KB_ZSWPOUT] = "mthp_2048kB_zswpout",
	[USWAP_THP_SWPOUT] = "thp_swpout",
	[USWAP_THP_SWPOUT_FALLBACK] = "thp_swpout_fallback",
	[USWAP_MTHP_16KB_SWPOUT] = "mthp_16kB_swpout",
	[USWAP_MTHP_16KB_SWPOUT_FALLBACK] = "mthp_16kB_swpout_fallback",
	[USWAP_MTHP_64KB_SWPOUT] = "mthp_64kB_swpout",
	[USWAP_MTHP_64KB_SWPOUT_FALLBACK] = "mthp_64kB_swpout_fallback",
	[USWAP_SWAP_RA] = "swap_ra",
	[USWAP_SWAP_RA_HIT] = "swap_ra_hit",
	[USWAP_PGDEMOTE_KSWAPD] = "pgdemote_kswapd",
	[USWAP_PGDEMOTE_DIRECT] = "pgdemote_direct",
	[USWAP_PGDEMOTE_FAIL] = "pgdemote_fail",
	[USWAP_PGPROMOTE_SUCCESS] = "pgpromote_success",
	[USWAP_PGPROMOTE_CANDIDATE] = "pgpromote_candidate",
	[USWAP_DEMOTED_BYTES] = "demoted_bytes",
	[USWAP_UFFD_EAGAIN] = "uffd_eagain",
	[USWAP_UFFD_EEXIST] = "uffd_eexist",
	[USWAP_SWAP_IO_SHORT] = "swap_io_short",
	[USWAP_SWAP_ENCRYPT] = "swap_encrypt",
	[USWAP_ZSWAP_WRITEBACK_SHARED] = "zswap_writeback_shared",
	[USWAP_FAULT_THREAD_MOVES] = "fault_thread_moves",
	[USWAP_FORK_SHARED_BYTES] = "fork_shared_bytes",
	[USWAP_MADV_COLD] = "madv_cold",
	[USWAP_MADV_PAGEOUT] = "madv_pageout",
};

EXPORT const char *uswap_counter_name(enum uswap_counter c)
{
	return (unsigned)c < USWAP_NR_COUNTERS ? counter_names[c] : NULL;
}

void count_latency(struct uswap_runtime *rt, uint64_t us)
{
	unsigned b = 0;

	while (us > 1 && b < USWAP_LATENCY_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	atomic_fetch_add_explicit(&rt->stat.latency[b], 1, memory_order_relaxed);
}

/* The pool's counters, under the kernel's names. */
static void read_zswap(struct uswap_runtime *rt, uint64_t *v)
{
	struct zswap_stats st;

	zswap_get_stats(rt->zswap, &st);
	v[USWAP_ZSWPIN] = st.zswpin;
	v[USWAP_ZSWPOUT] = st.zswpout;
	v[USWAP_ZSWPWB] = st.zswpwb;
	v[USWAP_ZSWAP_POOL_TOTAL_SIZE] = st.pool_bytes;
	v[USWAP_ZSWAP_STORED_PAGES] = st.stored_pages;
	v[USWAP_ZSWAP_SAME_FILLED_PAGES] = st.same_filled_pages;
	v[USWAP_ZSWAP_STORED_INCOMPRESSIBLE_PAGES] = st.stored_incompressible_pages;
	v[USWAP_ZSWAP_COMPRESSED_BYTES] = st.compressed_bytes;
	v[USWAP_ZSWAP_REJECT_COMPRESS_POOR] = st.reject_compress_poor;
	v[USWAP_ZSWAP_REJECT_COMPRESS_FAIL] = st.reject_compress_fail;
	v[USWAP_ZSWAP_REJECT_ALLOC_FAIL] = st.reject_alloc_fail;
	v[USWAP_ZSWAP_REJECT_POOL_LIMIT] = st.reject_pool_limit;
	v[USWAP_ZSWAP_POOL_LIMIT_HIT] = st.pool_limit_hit;
	v[USWAP_ZSWAP_DECOMPRESS_FAIL] = st.decompress_fail;
	v[USWAP_ZSWAP_WRITEBACK_FAIL] = st.written_back_fail;
	v[USWAP_ZSWAP_WRITEBACK_SHARED] = st.written_back_shared;
	v[USWAP_MTHP_16KB_ZSWPOUT] = st.mthp_zswpout[0];
	v[USWAP_MTHP_64KB_ZSWPOUT] = st.mthp_zswpout[1];
	v[USWAP_MTHP_2048KB_ZSWPOUT] = st.mthp_zswpout[2];
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
		values[i] = atomic_load(&rt->stat.ev[i]);
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
	if (rt->zswap && n >= USWAP_NR_COUNTERS)
		read_zswap(rt, values);
	return 0;
}

EXPORT int uswap_stats_latency(struct uswap_runtime *rt,
			       uint64_t hist[USWAP_LATENCY_BUCKETS])
{
	unsigned i;

	if (!rt)
		return -EINVAL;
	for (i = 0; i < USWAP_LATENCY_BUCKETS; i++)
		hist[i] = atomic_load(&rt->stat.latency[i]);
	return 0;
}

/* VmHWM and VmRSS of this process, in KiB, from /proc/self/status. */
static void read_rss(uint64_t *hwm, uint64_t *rss)
{
	char buf[4096], *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	*hwm = *rss = 0;
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
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
		ssize_t n = write(o->fd, o->buf + done, o->len - done);

		if (n < 0) {
			if (errno != EINTR)
				o->err = -errno;
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

/* One device as a /proc/swaps row, with its traffic and I/O latency. */
static void write_swap_row(struct out *o, struct uswap_runtime *rt, unsigned k)
{
	struct swap_info *si = &rt->swap[k];
	struct swap_dev_stat *st = &rt->swapstat[k];
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
		   k ? ", " : "", si->path,
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
		out_printf(o, "%s\"%s\": %llu", i ? ", " : "", counter_names[i],
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
	out_printf(o, "},\n \"process\": {\"pid\": %d, \"rss_peak_kib\": %llu, "
		   "\"rss_kib\": %llu, \"folio_size\": %llu, "
		   "\"uffd_features\": %llu, \"write_protect\": %s, "
		   "\"zswap\": \"%s\", \"zswap_unit\": \"%s\", "
		   "\"zswap_incompressible\": \"%s\", \"zswap_charge\": \"%s\", "
		   "\"budget\": \"%s\", \"member\": %u}}\n",
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
		   rt->memcg->name, rt->member);
	out_flush(o);
	err = o->err;
	prim_free(o, sizeof(*o));
	return err;
}
