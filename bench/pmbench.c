// SPDX-License-Identifier: MIT
/*
 * pmbench.c - a paging latency workload, in the spirit of pmbench (written
 * here from scratch).
 *
 * It maps SIZE bytes with one anonymous private mmap (so that uswap's
 * preload manages it and a memory cgroup charges it), writes every page
 * once with realistic contents (pagedata.h: by default a quarter each of
 * zero, text-like, structured and random pages), and then, for DURATION
 * seconds, lets N threads make random accesses to the whole region and
 * times each one.  An access is one 8-byte word of one 4 KiB page: a read
 * loads a word at a random offset; a write adds one to the page's own
 * counter word (an atomic add, at an offset fixed per page), so that the
 * data stays what it was, bar one word, and --verify can check every
 * page afterwards.  Under a budget smaller than the region, an access to a
 * page that is not resident is a page fault, served by whatever swap is in
 * force: the latency histogram is the distribution of those faults next
 * to the cost of plain memory accesses.
 *
 * Which pages are accessed (--pattern):
 *
 *   uniform   every page alike (the kernel baseline of bench/README.md)
 *   zipf      rank k with probability ~ 1 / k^theta (--theta, default 0.99,
 *             YCSB's), a skewed working set with a long cold tail
 *   hot       --hot-pages PCT of the pages receive --hot-share PCT of the
 *             accesses, uniformly within each set
 *
 * For zipf and hot the ranks are scattered over the region by a fixed
 * bijection (multiplication by a constant prime to the page count), so
 * that hot pages are not neighbours: folio-sized fault-in gets no free
 * prefetch from the pattern.  --no-scatter keeps rank order (hot pages
 * at the start).
 *
 * Timing: two clock_gettime() calls around each access (vDSO, some 25 ns
 * each); the histogram is log-linear (lathist.h), the percentiles are
 * bucket upper bounds.  Throughput is accesses per second of the timed
 * window; CPU is getrusage() user and system seconds of the process over
 * that window (uswap's handler threads live in the process; the kernel's
 * direct reclaim runs in the faulting thread).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/*
 * zipf.h and pagedata.h each bring their own generator under the same
 * names; zipf.h's (splitmix64) is renamed here, for the Zipf sampler only.
 */
#define rng_next zipf_rng_next
#define rng_below zipf_rng_below
#define rng_double zipf_rng_double
#include "zipf.h"
#undef rng_next
#undef rng_below
#undef rng_double

#include "lathist.h"
#include "pagedata.h"

#define PM_MAX_THREADS	256U
#define PM_WORDS	(UM_PAGE / sizeof(uint64_t))
/* An access at or above this is counted as slow (a fault, almost surely). */
#define PM_SLOW_NS	2000U

enum pm_pattern { PAT_UNIFORM, PAT_ZIPF, PAT_HOT };

static const char *const pattern_names[] = { "uniform", "zipf", "hot" };

struct pm_config {
	uint64_t size;
	uint64_t npages;
	unsigned threads;
	double duration;	/* seconds; 0: --accesses decides */
	uint64_t accesses;	/* per thread; 0: --duration decides */
	unsigned read_pct;
	enum pm_pattern pattern;
	double theta;
	unsigned hot_pages_pct, hot_share_pct;
	bool scatter;
	enum um_data data;
	uint64_t seed;
	bool verify, json, hugepage;
	const char *hist_path;
};

struct pm_worker {
	const struct pm_config *cfg;
	pthread_t tid;
	unsigned id;
	uint8_t *base;
	uint64_t *writes;	/* --verify: writes per page, shared */
	struct zipf zipf;
	uint64_t scatter_mul;
	uint64_t accesses, reads, writes_done;
	uint64_t sink;
	struct lathist hist;
	uint64_t deadline_ns;
	pthread_barrier_t *filled, *go, *done;
};

/* Read sums end here (atomically), so that the reads are not optimised away. */
static uint64_t global_sink;

/* The offset of page idx's counter word: fixed per page. */
static unsigned counter_word(uint64_t idx)
{
	return (unsigned)(mix64(idx ^ 0x636f756e74ULL) % PM_WORDS);
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* A multiplier prime to n: rank r goes to page r * mul mod n. */
static uint64_t scatter_multiplier(uint64_t n)
{
	uint64_t m = 0x9e3779b97f4a7c15ULL % n;

	if (n <= 2)
		return 1;
	if (m < 2)
		m = n / 2 + 1;
	while (gcd64(m, n) != 1)
		m++;
	return m % n ? m % n : 1;
}

static uint64_t scatter(const struct pm_worker *w, uint64_t rank)
{
	const uint64_t n = w->cfg->npages;

	if (!w->cfg->scatter)
		return rank;
	return (uint64_t)(((unsigned __int128)rank * w->scatter_mul) % n);
}

/* The page of the next access, as a rank scattered over the region. */
static uint64_t next_page(struct pm_worker *w, uint64_t *s, uint64_t *zs)
{
	const struct pm_config *cfg = w->cfg;
	const uint64_t n = cfg->npages;
	uint64_t hot;

	switch (cfg->pattern) {
	case PAT_UNIFORM:
		return rng_below(s, n);
	case PAT_ZIPF:
		return scatter(w, zipf_next(&w->zipf, zs) - 1);
	case PAT_HOT:
		hot = n * cfg->hot_pages_pct / 100;
		if (!hot)
			hot = 1;
		if (hot >= n || rng_below(s, 100) < cfg->hot_share_pct)
			return scatter(w, rng_below(s, hot));
		return scatter(w, hot + rng_below(s, n - hot));
	}
	return 0;
}

static void fill_slice(struct pm_worker *w)
{
	const struct pm_config *cfg = w->cfg;
	const uint64_t lo = cfg->npages * w->id / cfg->threads;
	const uint64_t hi = cfg->npages * (w->id + 1) / cfg->threads;

	for (uint64_t i = lo; i < hi; i++)
		page_fill(w->base + i * UM_PAGE, cfg->data, i, 1);
}

static void access_page(struct pm_worker *w, uint64_t idx, bool write,
			uint64_t r)
{
	uint64_t *p = (uint64_t *)(void *)(w->base + idx * UM_PAGE);

	if (write) {
		__atomic_fetch_add(&p[counter_word(idx)], 1, __ATOMIC_RELAXED);
		if (w->writes)
			__atomic_fetch_add(&w->writes[idx], 1,
					   __ATOMIC_RELAXED);
		w->writes_done++;
	} else {
		w->sink += __atomic_load_n(&p[r % PM_WORDS], __ATOMIC_RELAXED);
		w->reads++;
	}
}

static void run_accesses(struct pm_worker *w)
{
	const struct pm_config *cfg = w->cfg;
	uint64_t s = rng_seed(cfg->seed + 0x706d62ULL, w->id);
	uint64_t zs = rng_seed(cfg->seed + 0x7a697066ULL, w->id);

	for (uint64_t k = 0;; k++) {
		uint64_t idx, r, t0, t1;
		bool write;

		if (cfg->accesses && k >= cfg->accesses)
			break;
		idx = next_page(w, &s, &zs);
		r = rng_next(&s);
		write = (r >> 32) % 100 >= cfg->read_pct;
		t0 = lh_now_ns();
		access_page(w, idx, write, r);
		t1 = lh_now_ns();
		lh_add(&w->hist, t1 - t0);
		w->accesses++;
		if (!cfg->accesses && t1 >= w->deadline_ns)
			break;
	}
}

static void *worker_main(void *arg)
{
	struct pm_worker *w = arg;

	fill_slice(w);
	pthread_barrier_wait(w->filled);
	pthread_barrier_wait(w->go);
	run_accesses(w);
	pthread_barrier_wait(w->done);
	__atomic_fetch_add(&global_sink, w->sink, __ATOMIC_RELAXED);
	return NULL;
}

static double tv_secs(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static void cpu_now(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = tv_secs(&ru.ru_utime);
	*sys = tv_secs(&ru.ru_stime);
}

/*
 * Check every page: its contents as filled, but for the counter word,
 * which must have grown by the number of writes to the page.  Returns the
 * first bad page, or -1.
 */
static int64_t verify_all(const struct pm_config *cfg, const uint8_t *base,
			  const uint64_t *writes)
{
	uint64_t want[PM_WORDS];

	for (uint64_t i = 0; i < cfg->npages; i++) {
		const unsigned cw = counter_word(i);

		page_fill((uint8_t *)want, cfg->data, i, 1);
		want[cw] += writes[i];
		if (memcmp(base + i * UM_PAGE, want, UM_PAGE))
			return (int64_t)i;
	}
	return -1;
}

struct pm_result {
	struct lathist hist;
	uint64_t accesses, reads, writes;
	double secs, cpu_user, cpu_sys;
	int64_t bad_page;
};

static int run(const struct pm_config *cfg, struct pm_result *res)
{
	const size_t len = cfg->npages * UM_PAGE;
	pthread_barrier_t filled, go, done;
	uint64_t *writes = NULL, t0, t1, mul;
	struct pm_worker *w;
	double u0, s0, u1, s1;
	uint8_t *base;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->bad_page = -1;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (cfg->hugepage && madvise(base, len, MADV_HUGEPAGE)) {
		ret = -errno;
		goto out_unmap;
	}
	/* Shared, so that uswap leaves it alone; only with --verify. */
	if (cfg->verify) {
		writes = mmap(NULL, cfg->npages * sizeof(*writes),
			      PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (writes == MAP_FAILED) {
			ret = -errno;
			goto out_unmap;
		}
	}
	w = calloc(cfg->threads, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto out_writes;
	}
	pthread_barrier_init(&filled, NULL, cfg->threads + 1);
	pthread_barrier_init(&go, NULL, cfg->threads + 1);
	pthread_barrier_init(&done, NULL, cfg->threads + 1);
	mul = scatter_multiplier(cfg->npages);
	for (unsigned t = 0; t < cfg->threads; t++) {
		w[t].cfg = cfg;
		w[t].id = t;
		w[t].base = base;
		w[t].writes = writes;
		w[t].scatter_mul = mul;
		w[t].filled = &filled;
		w[t].go = &go;
		w[t].done = &done;
		if (cfg->pattern == PAT_ZIPF)
			zipf_init(&w[t].zipf, cfg->npages, cfg->theta);
		ret = -pthread_create(&w[t].tid, NULL, worker_main, &w[t]);
		if (ret) {
			/* Threads already started wait forever: give up. */
			fprintf(stderr, "pmbench: pthread_create: %s\n",
				strerror(-ret));
			exit(1);
		}
	}

	pthread_barrier_wait(&filled);
	cpu_now(&u0, &s0);
	t0 = lh_now_ns();
	for (unsigned t = 0; t < cfg->threads; t++)
		w[t].deadline_ns = t0 + (uint64_t)(cfg->duration * 1e9);
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	t1 = lh_now_ns();
	cpu_now(&u1, &s1);

	for (unsigned t = 0; t < cfg->threads; t++) {
		pthread_join(w[t].tid, NULL);
		lh_merge(&res->hist, &w[t].hist);
		res->accesses += w[t].accesses;
		res->reads += w[t].reads;
		res->writes += w[t].writes_done;
	}
	res->secs = (double)(t1 - t0) / 1e9;
	res->cpu_user = u1 - u0;
	res->cpu_sys = s1 - s0;
	if (cfg->verify)
		res->bad_page = verify_all(cfg, base, writes);

	pthread_barrier_destroy(&filled);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	free(w);
out_writes:
	if (writes)
		munmap(writes, cfg->npages * sizeof(*writes));
out_unmap:
	munmap(base, len);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: pmbench [options]\n"
"  --size SIZE       bytes to map, K/M/G/T suffixes (default 256M)\n"
"  --threads N       threads, all over the whole region (default 1)\n"
"  --duration SECS   timed accesses for SECS seconds (default 10)\n"
"  --accesses N      or exactly N accesses per thread\n"
"  --read PCT        share of reads, the rest writes (default 50)\n"
"  --pattern P       uniform (default), zipf, hot\n"
"  --theta T         zipf exponent (default 0.99)\n"
"  --hot-pages PCT   hot: share of the pages that are hot (default 20)\n"
"  --hot-share PCT   hot: share of the accesses that go to them (default 80)\n"
"  --no-scatter      zipf, hot: hot pages at the start of the region\n"
"                    (default: scattered over it)\n"
"  --data KIND       mixed (default), text, random, zero\n"
"  --seed N          random seed (default 1)\n"
"  --verify          after the timed accesses, check every page\n"
"  --hugepage        madvise(MADV_HUGEPAGE) the region\n"
"  --hist FILE       write the latency histogram to FILE\n"
"  --json            print the result as a JSON object\n"
"Every page is written once (not timed) before the timed accesses.  Prints\n"
"one line: pmbench ... aps=... p50_us=... p99_us=... cpu_user=... cpu_sys=...\n"
"Exit status: 0 done, 1 verification failed or a system call failed,\n"
"2 bad arguments.\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -EINVAL;
	*out = v;
	return 0;
}

static void __attribute__((noreturn)) bad_arg(const char *opt, const char *val,
					      const char *want)
{
	fprintf(stderr, "pmbench: %s '%s': expected %s\n", opt, val, want);
	exit(2);
}

enum {
	OPT_SIZE = 256, OPT_THREADS, OPT_DURATION, OPT_ACCESSES, OPT_READ,
	OPT_PATTERN, OPT_THETA, OPT_HOT_PAGES, OPT_HOT_SHARE, OPT_NO_SCATTER,
	OPT_DATA, OPT_SEED, OPT_VERIFY, OPT_HUGEPAGE, OPT_HIST, OPT_JSON,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "accesses", required_argument, NULL, OPT_ACCESSES },
	{ "read", required_argument, NULL, OPT_READ },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "theta", required_argument, NULL, OPT_THETA },
	{ "hot-pages", required_argument, NULL, OPT_HOT_PAGES },
	{ "hot-share", required_argument, NULL, OPT_HOT_SHARE },
	{ "no-scatter", no_argument, NULL, OPT_NO_SCATTER },
	{ "data", required_argument, NULL, OPT_DATA },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "hugepage", no_argument, NULL, OPT_HUGEPAGE },
	{ "hist", required_argument, NULL, OPT_HIST },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void parse_pattern(const char *s, struct pm_config *cfg)
{
	for (unsigned i = 0; i < 3; i++) {
		if (!strcmp(s, pattern_names[i])) {
			cfg->pattern = (enum pm_pattern)i;
			return;
		}
	}
	bad_arg("--pattern", s, "uniform, zipf or hot");
}

static void parse_data(const char *s, struct pm_config *cfg)
{
	for (unsigned i = 0; i < 4; i++) {
		if (!strcmp(s, data_names[i])) {
			cfg->data = (enum um_data)i;
			return;
		}
	}
	bad_arg("--data", s, "mixed, text, random or zero");
}

static void parse_args(int argc, char **argv, struct pm_config *cfg)
{
	uint64_t v;
	int c;

	*cfg = (struct pm_config){
		.size = 256ULL << 20,
		.threads = 1,
		.duration = 10,
		.read_pct = 50,
		.pattern = PAT_UNIFORM,
		.theta = 0.99,
		.hot_pages_pct = 20,
		.hot_share_pct = 80,
		.scatter = true,
		.data = DATA_MIXED,
		.seed = 1,
	};
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_SIZE:
			if (parse_size(optarg, &cfg->size) ||
			    cfg->size < UM_PAGE)
				bad_arg("--size", optarg,
					"a size of at least 4K, such as 512M");
			break;
		case OPT_THREADS:
			if (parse_u64(optarg, 1, PM_MAX_THREADS, &v))
				bad_arg("--threads", optarg, "1 to 256");
			cfg->threads = (unsigned)v;
			break;
		case OPT_DURATION:
			if (parse_double(optarg, 0.001, 86400, &cfg->duration))
				bad_arg("--duration", optarg,
					"seconds, 0.001 to 86400");
			cfg->accesses = 0;
			break;
		case OPT_ACCESSES:
			if (parse_u64(optarg, 1, UINT64_MAX >> 1,
				      &cfg->accesses))
				bad_arg("--accesses", optarg, "a count >= 1");
			break;
		case OPT_READ:
			if (parse_u64(optarg, 0, 100, &v))
				bad_arg("--read", optarg, "0 to 100");
			cfg->read_pct = (unsigned)v;
			break;
		case OPT_PATTERN:
			parse_pattern(optarg, cfg);
			break;
		case OPT_THETA:
			if (parse_double(optarg, 0, 10, &cfg->theta))
				bad_arg("--theta", optarg, "0 to 10");
			break;
		case OPT_HOT_PAGES:
			if (parse_u64(optarg, 1, 100, &v))
				bad_arg("--hot-pages", optarg, "1 to 100");
			cfg->hot_pages_pct = (unsigned)v;
			break;
		case OPT_HOT_SHARE:
			if (parse_u64(optarg, 0, 100, &v))
				bad_arg("--hot-share", optarg, "0 to 100");
			cfg->hot_share_pct = (unsigned)v;
			break;
		case OPT_NO_SCATTER:
			cfg->scatter = false;
			break;
		case OPT_DATA:
			parse_data(optarg, cfg);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &cfg->seed))
				bad_arg("--seed", optarg, "a number");
			break;
		case OPT_VERIFY:
			cfg->verify = true;
			break;
		case OPT_HUGEPAGE:
			cfg->hugepage = true;
			break;
		case OPT_HIST:
			cfg->hist_path = optarg;
			break;
		case OPT_JSON:
			cfg->json = true;
			break;
		case OPT_HELP:
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		bad_arg("argument", argv[optind], "options only (see --help)");
	cfg->npages = cfg->size / UM_PAGE;
	if (cfg->npages < cfg->threads)
		bad_arg("--size", "too small", "at least one page per thread");
}

/* The figures of report(), in the order of both formats. */
#define PM_FIGURES(cfg, res, h, secs)					\
	pattern_names[(cfg)->pattern], data_names[(cfg)->data],		\
	(unsigned long long)(cfg)->size, (cfg)->threads, (cfg)->read_pct, \
	(unsigned long long)(res)->accesses,				\
	(unsigned long long)(res)->reads,				\
	(unsigned long long)(res)->writes, (res)->secs,		\
	(double)(res)->accesses / (secs),				\
	(double)(res)->accesses * UM_PAGE / 1e6 / (secs),		\
	lh_mean_us(h), lh_quantile_us(h, 0.50), lh_quantile_us(h, 0.90), \
	lh_quantile_us(h, 0.99), lh_quantile_us(h, 0.999),		\
	(double)(h)->max_ns / 1000.0,					\
	100.0 * lh_share_above(h, PM_SLOW_NS), (res)->cpu_user,	\
	(res)->cpu_sys, (cfg)->verify && (res)->bad_page < 0 ? 1 : 0

/*
 * mbps counts 4 KiB per access, as usemem does for its page accesses, so
 * that CPU seconds per GB read the same way for both workloads.
 */
static void report(const struct pm_config *cfg, const struct pm_result *res)
{
	const struct lathist *h = &res->hist;
	const double secs = res->secs > 0 ? res->secs : 1e-9;

	if (cfg->json)
		printf("{\"mode\":\"pmbench\",\"pattern\":\"%s\",\"data\":\"%s\","
		       "\"size\":%llu,\"threads\":%u,\"read_pct\":%u,"
		       "\"accesses\":%llu,\"reads\":%llu,\"writes\":%llu,"
		       "\"secs\":%.3f,\"aps\":%.0f,\"mbps\":%.1f,"
		       "\"mean_us\":%.3f,\"p50_us\":%.3f,\"p90_us\":%.3f,"
		       "\"p99_us\":%.3f,\"p999_us\":%.3f,\"max_us\":%.1f,"
		       "\"slow_pct\":%.2f,\"cpu_user\":%.3f,\"cpu_sys\":%.3f,"
		       "\"verified\":%d}\n", PM_FIGURES(cfg, res, h, secs));
	else
		printf("pmbench pattern=%s data=%s size=%llu threads=%u "
		       "read_pct=%u accesses=%llu reads=%llu writes=%llu "
		       "secs=%.3f aps=%.0f mbps=%.1f mean_us=%.3f p50_us=%.3f "
		       "p90_us=%.3f p99_us=%.3f p999_us=%.3f max_us=%.1f "
		       "slow_pct=%.2f cpu_user=%.3f cpu_sys=%.3f verified=%d\n",
		       PM_FIGURES(cfg, res, h, secs));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct pm_config cfg;
	struct pm_result *res;
	int ret;

	parse_args(argc, argv, &cfg);
	text_templates_init();
	res = calloc(1, sizeof(*res));
	if (!res) {
		fprintf(stderr, "pmbench: out of memory\n");
		return 1;
	}
	ret = run(&cfg, res);
	if (ret) {
		fprintf(stderr, "pmbench: %s\n", strerror(-ret));
		free(res);
		return 1;
	}
	if (cfg.hist_path && lh_write(&res->hist, cfg.hist_path))
		fprintf(stderr, "pmbench: cannot write %s: %s\n",
			cfg.hist_path, strerror(errno));
	if (cfg.verify && res->bad_page >= 0) {
		fprintf(stderr,
			"pmbench: verify failed: page %lld (offset 0x%llx) "
			"does not hold what was written to it\n",
			(long long)res->bad_page,
			(unsigned long long)res->bad_page * UM_PAGE);
		free(res);
		return 1;
	}
	report(&cfg, res);
	free(res);
	return 0;
}
