// SPDX-License-Identifier: MIT
/*
 * usemem.c - a memory-bandwidth workload for swap benchmarks, in the spirit of
 * vm-scalability's usemem (written here from scratch).
 *
 * It maps SIZE bytes with one anonymous private mmap (so that uswap's preload
 * manages it, and so that a memory cgroup charges it) and walks it in 4 KiB
 * pages, sequentially or at random, writing, reading or both.  It is a plain
 * program: it knows nothing of uswap, so the same binary and arguments run
 * under `uswap run`, under a kernel memory cgroup with swap, or unlimited.
 *
 * Page contents are realistic, because every compressed tier's speed depends
 * on them: "mixed" data is a quarter each of zero pages, text-like pages,
 * structured binary pages and random pages, a function of the page's index
 * and a generation number (the pass that wrote it), so that every page can
 * be regenerated and checked with --verify (pagedata.h).
 *
 * What is timed (see usage()): with --write and --rw every pass is timed,
 * the first one included (it faults in fresh memory); with --read the first
 * pass writes the data untimed and the later passes, which read, are timed.
 * MB/s = bytes accessed in timed passes / 1e6 / seconds of the timed window;
 * CPU is getrusage() user and system time of the process (all its threads)
 * and of its children over that same window.
 *
 * With --duration the timed passes go on, pass after pass, until the time is
 * up, and stop where they are (mid-pass); --verify then replays exactly the
 * accesses that were made.  With --latency every page access is timed (two
 * vDSO clock reads, some 50 ns against a microsecond or more to fill a page)
 * into a log-linear histogram (lathist.h): a page that faults shows up as a
 * slow access, so the percentiles are those of the faults, and --hist writes
 * the histogram for a CDF.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lathist.h"
#include "pagedata.h"

#define UM_MAX_PASSES	65535U
#define UM_MAX_WORKERS	1024U

enum um_order { ORDER_SEQ, ORDER_RAND };
enum um_op { OP_WRITE, OP_READ, OP_RW };

static const char *const order_names[] = { "seq", "rand" };
static const char *const op_names[] = { "write", "read", "rw" };

struct um_config {
	uint64_t size;		/* total bytes, all processes */
	unsigned threads;	/* threads per process */
	unsigned procs;		/* processes; 1 = no fork */
	unsigned passes;	/* passes in all, timed or not */
	enum um_order order;
	enum um_op op;
	enum um_data data;
	bool verify;
	bool json;
	bool hugepage;
	bool latency;		/* time every page access */
	double duration;	/* seconds of timed passes; 0: --passes */
	const char *hist_path;
};

/* One thread's share of the work, and what it found. */
struct um_worker {
	const struct um_config *cfg;
	pthread_t tid;
	unsigned seed_id;	/* process * threads + thread: seeds its RNG */
	uint8_t *base;		/* first byte of its slice */
	uint64_t first_page;	/* data index of the slice's first page */
	uint64_t npages;
	uint64_t accesses;	/* page accesses in timed passes */
	uint64_t sink;		/* read checksums, so reads are not elided */
	int64_t bad_page;	/* first page failing --verify, or -1 */
	unsigned bad_gen;	/* the generation it should hold */
	unsigned bad_byte;	/* offset of its first wrong byte */
	int err;		/* 0 or -errno from verification setup */
	uint64_t deadline_ns;	/* --duration: when the timed passes stop */
	unsigned last_pass;	/* the last pass that ran, maybe in part */
	uint64_t last_count;	/* accesses made in that pass */
	struct lathist hist;	/* --latency */
	pthread_barrier_t *filled, *go, *done;
};

/* What one process reports to the caller (or, forked, to its parent). */
struct um_result {
	uint64_t accesses;
	double cpu_user, cpu_sys;	/* over the timed window */
	double secs;
	int64_t bad_page;		/* data index, or -1 */
	unsigned bad_gen, bad_byte;	/* as in struct um_worker */
	int err;
	bool verified;
	struct lathist hist;		/* --latency: all its threads */
};

/* Read sums end here (atomically), so that the reads are not optimised away. */
static uint64_t global_sink;

/* Is pass `pass` (1-based) timed?  With --read the first pass is the fill. */
static bool pass_timed(const struct um_config *cfg, unsigned pass)
{
	return cfg->op != OP_READ || pass > 1;
}

/*
 * Does pass `pass` pick random pages?  The --read fill is always in order,
 * so that every page holds data before the timed reads; any other pass
 * follows --seq or --rand.
 */
static bool pass_random(const struct um_config *cfg, unsigned pass)
{
	return cfg->order == ORDER_RAND && (cfg->op != OP_READ || pass > 1);
}

/* Touch page i of the worker's slice as pass `pass` does. */
static void page_access(struct um_worker *w, uint64_t i, unsigned pass)
{
	uint8_t *p = w->base + i * UM_PAGE;
	const struct um_config *cfg = w->cfg;

	if (pass == 1) {
		page_fill(p, cfg->data, w->first_page + i, pass);
		return;
	}
	switch (cfg->op) {
	case OP_WRITE:
		page_fill(p, cfg->data, w->first_page + i, pass);
		break;
	case OP_READ:
		w->sink += page_read(p);
		break;
	case OP_RW:
		w->sink += page_read(p);
		page_fill(p, cfg->data, w->first_page + i, pass);
		break;
	}
}

static uint64_t pass_seed(const struct um_worker *w, unsigned pass)
{
	return rng_seed(0x75736d656dULL + w->seed_id, pass);
}

/* Page k of the pass's order: in order, or the pass's k-th random draw. */
static uint64_t pass_page(struct um_worker *w, uint64_t *s, bool rand,
			  uint64_t k)
{
	return rand ? rng_below(s, w->npages) : k;
}

/* Is the --duration deadline past?  Read the clock every 16 accesses. */
static bool time_up(const struct um_worker *w, uint64_t k, uint64_t now)
{
	if (!w->deadline_ns)
		return false;
	if (!now) {
		if (k % 16)
			return false;
		now = lh_now_ns();
	}
	return now >= w->deadline_ns;
}

/*
 * Run one pass; a timed pass stops early once the deadline is past.
 * Returns the accesses it made.
 */
static uint64_t run_pass(struct um_worker *w, unsigned pass, bool timed)
{
	const bool rand = pass_random(w->cfg, pass);
	const bool lat = timed && w->cfg->latency;
	uint64_t s = pass_seed(w, pass);
	uint64_t k;

	for (k = 0; k < w->npages; k++) {
		uint64_t i = pass_page(w, &s, rand, k), t0 = 0, t1 = 0;

		if (lat)
			t0 = lh_now_ns();
		page_access(w, i, pass);
		if (lat) {
			t1 = lh_now_ns();
			lh_add(&w->hist, t1 - t0);
		}
		if (timed && time_up(w, k + 1, t1))
			return k + 1;
	}
	return k;
}

/*
 * The generation each page of the slice should hold after all passes: 0
 * (never written, so zero) up to the last pass that wrote it.  For random
 * writes this replays the passes' generators into gens (one entry a page,
 * a shared mapping so that uswap does not manage it).
 */
static int expected_gens(struct um_worker *w, uint16_t **gens)
{
	const struct um_config *cfg = w->cfg;
	size_t len = w->npages * sizeof(uint16_t);
	uint16_t *g;

	*gens = NULL;
	if (cfg->op == OP_READ ||
	    (cfg->order == ORDER_SEQ && w->last_count == w->npages))
		return 0;
	g = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return -errno;
	for (unsigned pass = 1; pass <= w->last_pass; pass++) {
		const bool rand = pass_random(cfg, pass);
		const uint64_t n = pass == w->last_pass ? w->last_count :
				   w->npages;
		uint64_t s = pass_seed(w, pass);

		for (uint64_t k = 0; k < n; k++)
			g[pass_page(w, &s, rand, k)] = (uint16_t)pass;
	}
	*gens = g;
	return 0;
}

/* Check every page of the slice; set w->bad_page to the first bad one. */
static void verify_slice(struct um_worker *w)
{
	const struct um_config *cfg = w->cfg;
	const unsigned last = cfg->op == OP_READ ? 1 : w->last_pass;
	uint64_t want[UM_WORDS];
	uint16_t *gens;
	int ret;

	ret = expected_gens(w, &gens);
	if (ret) {
		w->err = ret;
		return;
	}
	for (uint64_t i = 0; i < w->npages; i++) {
		const unsigned gen = gens ? gens[i] : last;
		const uint8_t *p = w->base + i * UM_PAGE;

		if (gen)
			page_fill((uint8_t *)want, cfg->data,
				  w->first_page + i, gen);
		else
			memset(want, 0, sizeof(want));
		if (memcmp(p, want, UM_PAGE)) {
			const uint8_t *q = (const uint8_t *)want;
			unsigned b = 0;

			while (b < UM_PAGE - 1 && p[b] == q[b])
				b++;
			w->bad_page = (int64_t)(w->first_page + i);
			w->bad_gen = gen;
			w->bad_byte = b;
			break;
		}
	}
	if (gens)
		munmap(gens, w->npages * sizeof(uint16_t));
}

static void *worker_main(void *arg)
{
	struct um_worker *w = arg;
	const struct um_config *cfg = w->cfg;
	unsigned pass = 1;

	for (; pass <= cfg->passes && !pass_timed(cfg, pass); pass++) {
		w->last_pass = pass;
		w->last_count = run_pass(w, pass, false);
	}
	pthread_barrier_wait(w->filled);
	pthread_barrier_wait(w->go);
	for (; pass <= cfg->passes; pass++) {
		w->last_pass = pass;
		w->last_count = run_pass(w, pass, true);
		w->accesses += w->last_count;
		if (w->last_count < w->npages || time_up(w, 0, 0))
			break;
	}
	pthread_barrier_wait(w->done);
	if (cfg->verify)
		verify_slice(w);
	__atomic_fetch_add(&global_sink, w->sink, __ATOMIC_RELAXED);
	return NULL;
}

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_secs(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* User and system CPU seconds of this process and its waited-for children. */
static void cpu_now(double *user, double *sys)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	*user = tv_secs(&self.ru_utime) + tv_secs(&kids.ru_utime);
	*sys = tv_secs(&self.ru_stime) + tv_secs(&kids.ru_stime);
}

/* Pipes that line forked processes up: all filled, go, all done. */
struct um_sync {
	int ready[2];
	int go[2];
	int done[2];
};

/*
 * Map this process's share of memory and run its threads over it.  proc is
 * the process's number; sync is NULL when there is no parent to report to.
 * Fills *res; returns 0 or -errno.
 */
static int run_process(const struct um_config *cfg, unsigned proc,
		       const struct um_sync *sync, struct um_result *res)
{
	const uint64_t pages = cfg->size / cfg->procs / UM_PAGE;
	const size_t len = pages * UM_PAGE;
	pthread_barrier_t filled, go, done;
	struct um_worker *w;
	double t0, t1, u0, s0, u1, s1;
	uint8_t *base;
	char c = 0;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->bad_page = -1;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (cfg->hugepage && madvise(base, len, MADV_HUGEPAGE)) {
		ret = -errno;
		goto err_unmap;
	}
	w = calloc(cfg->threads, sizeof(*w));
	if (!w) {
		ret = -ENOMEM;
		goto err_unmap;
	}
	pthread_barrier_init(&filled, NULL, cfg->threads + 1);
	pthread_barrier_init(&go, NULL, cfg->threads + 1);
	pthread_barrier_init(&done, NULL, cfg->threads + 1);

	for (unsigned t = 0; t < cfg->threads; t++) {
		const uint64_t lo = pages * t / cfg->threads;
		const uint64_t hi = pages * (t + 1) / cfg->threads;

		w[t] = (struct um_worker){
			.cfg = cfg,
			.seed_id = proc * cfg->threads + t,
			.base = base + lo * UM_PAGE,
			.first_page = (uint64_t)proc * pages + lo,
			.npages = hi - lo,
			.bad_page = -1,
			.filled = &filled,
			.go = &go,
			.done = &done,
		};
		ret = -pthread_create(&w[t].tid, NULL, worker_main, &w[t]);
		if (ret) {
			/* Threads already started wait forever: give up. */
			fprintf(stderr, "usemem: pthread_create: %s\n",
				strerror(-ret));
			exit(1);
		}
	}

	pthread_barrier_wait(&filled);
	if (sync && (write(sync->ready[1], &c, 1) != 1 ||
		     read(sync->go[0], &c, 1) < 0)) {
		fprintf(stderr, "usemem: process %u lost its parent\n", proc);
		exit(1);
	}
	cpu_now(&u0, &s0);
	t0 = now_secs();
	if (cfg->duration > 0) {
		const uint64_t end = lh_now_ns() + (uint64_t)(cfg->duration * 1e9);

		for (unsigned t = 0; t < cfg->threads; t++)
			w[t].deadline_ns = end;
	}
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	t1 = now_secs();
	cpu_now(&u1, &s1);
	if (sync && write(sync->done[1], &c, 1) != 1) {
		fprintf(stderr, "usemem: process %u lost its parent\n", proc);
		exit(1);
	}

	for (unsigned t = 0; t < cfg->threads; t++) {
		pthread_join(w[t].tid, NULL);
		res->accesses += w[t].accesses;
		lh_merge(&res->hist, &w[t].hist);
		if (w[t].err && !res->err)
			res->err = w[t].err;
		if (w[t].bad_page >= 0 &&
		    (res->bad_page < 0 || w[t].bad_page < res->bad_page)) {
			res->bad_page = w[t].bad_page;
			res->bad_gen = w[t].bad_gen;
			res->bad_byte = w[t].bad_byte;
		}
	}
	res->secs = t1 - t0;
	res->cpu_user = u1 - u0;
	res->cpu_sys = s1 - s0;
	res->verified = cfg->verify && !res->err && res->bad_page < 0;

	pthread_barrier_destroy(&filled);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	free(w);
err_unmap:
	munmap(base, len);
	return ret;
}

/* Read n one-byte tokens from fd; return 0, or -EPIPE if a writer died. */
static int read_tokens(int fd, unsigned n)
{
	char buf[64];

	while (n) {
		ssize_t got = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -EPIPE;
		n -= (unsigned)got;
	}
	return 0;
}

/*
 * Fork cfg->procs processes, each running run_process() on its own mapping,
 * and time them from the moment all have filled to the moment all are done.
 * Fills *total; returns 0 or -errno.
 */
static int run_forked(const struct um_config *cfg, struct um_result *total)
{
	struct um_result *res;
	struct um_sync sync;
	double t0 = 0, t1 = 0;
	unsigned started = 0;
	int ret = 0;

	res = mmap(NULL, cfg->procs * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return -errno;
	if (pipe(sync.ready) || pipe(sync.go) || pipe(sync.done)) {
		ret = -errno;
		goto out_unmap;
	}
	fflush(NULL);
	for (; started < cfg->procs; started++) {
		pid_t pid = fork();

		if (pid < 0) {
			ret = -errno;
			break;
		}
		if (pid == 0) {
			int r;

			close(sync.ready[0]);
			close(sync.go[1]);
			close(sync.done[0]);
			r = run_process(cfg, started, &sync, &res[started]);
			if (r)
				res[started].err = r;
			_exit(r ? 1 : 0);
		}
	}
	close(sync.ready[1]);
	close(sync.done[1]);
	if (!ret)
		ret = read_tokens(sync.ready[0], cfg->procs);
	t0 = now_secs();
	close(sync.go[1]);	/* EOF on go: every child starts */
	if (!ret)
		ret = read_tokens(sync.done[0], cfg->procs);
	t1 = now_secs();

	memset(total, 0, sizeof(*total));
	total->bad_page = -1;
	total->verified = cfg->verify;
	for (unsigned i = 0; i < started; i++) {
		int status;

		while (wait(&status) < 0 && errno == EINTR)
			;
	}
	for (unsigned i = 0; i < started; i++) {
		total->accesses += res[i].accesses;
		lh_merge(&total->hist, &res[i].hist);
		total->cpu_user += res[i].cpu_user;
		total->cpu_sys += res[i].cpu_sys;
		if (res[i].err && !total->err)
			total->err = res[i].err;
		if (res[i].bad_page >= 0 && (total->bad_page < 0 ||
					     res[i].bad_page < total->bad_page)) {
			total->bad_page = res[i].bad_page;
			total->bad_gen = res[i].bad_gen;
			total->bad_byte = res[i].bad_byte;
		}
		if (!res[i].verified)
			total->verified = false;
	}
	total->secs = t1 - t0;
	if (!ret && started == cfg->procs && total->err)
		ret = total->err;
	close(sync.ready[0]);
	close(sync.go[0]);
	close(sync.done[0]);
out_unmap:
	munmap(res, cfg->procs * sizeof(*res));
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: usemem [options]\n"
"  --size SIZE     bytes to map and walk (K, M, G, T suffixes: powers of\n"
"                  1024); default 256M; with --procs, split among them\n"
"  --threads N     threads per process, each on its own 1/N slice (default 1)\n"
"  --procs N       fork N processes, each mapping its own SIZE/N (default 1:\n"
"                  no fork)\n"
"  --seq | --rand  walk pages in order (default), or pick random 4 KiB pages\n"
"                  (fixed seed per thread and pass; as many accesses as the\n"
"                  slice has pages)\n"
"  --write         every pass writes every page it visits (default)\n"
"  --read          pass 1 writes all pages in order (not timed); later\n"
"                  passes read (default --passes 2)\n"
"  --rw            pass 1 writes; later passes read then rewrite each page\n"
"                  (default --passes 2)\n"
"  --passes K      passes in all (default 1; 2 with --read and --rw); with\n"
"                  --write and --rw all passes are timed, with --read all\n"
"                  but the first\n"
"  --data KIND     page contents: mixed (default: a quarter each of zero,\n"
"                  text, structured binary and random pages), text, random,\n"
"                  zero\n"
"  --verify        after the timed passes, check every page against what\n"
"                  was last written to it (not timed)\n"
"  --duration SECS timed passes go on until SECS seconds have passed, and\n"
"                  stop there, mid-pass (instead of --passes)\n"
"  --latency       time every page access of the timed passes; adds\n"
"                  mean_us p50_us p90_us p99_us p999_us max_us to the line\n"
"  --hist FILE     with --latency, write the latency histogram to FILE\n"
"  --hugepage      madvise(MADV_HUGEPAGE) the mapping\n"
"  --json          print the result as a JSON object\n"
"Prints one line: usemem mode=... secs=... mbps=... cpu_user=... cpu_sys=...\n"
"MB/s is bytes accessed in timed passes / 1e6 / timed seconds; CPU is user\n"
"and system seconds of all threads and processes over the timed window.\n"
"Exit status: 0 done, 1 verification failed or a system call failed,\n"
"2 bad arguments.\n");
}

/* Parse a size with an optional K, M, G or T suffix; 0 or -EINVAL. */
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

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int parse_name(const char *s, const char *const *names, unsigned n,
		      unsigned *out)
{
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void __attribute__((noreturn)) bad_arg(const char *opt, const char *val,
					      const char *want)
{
	fprintf(stderr, "usemem: %s '%s': expected %s\n", opt, val, want);
	exit(2);
}

enum {
	OPT_SIZE = 256, OPT_THREADS, OPT_PROCS, OPT_PASSES, OPT_DATA,
	OPT_SEQ, OPT_RAND, OPT_WRITE, OPT_READ, OPT_RW, OPT_VERIFY, OPT_JSON,
	OPT_HUGEPAGE, OPT_DURATION, OPT_LATENCY, OPT_HIST, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "procs", required_argument, NULL, OPT_PROCS },
	{ "passes", required_argument, NULL, OPT_PASSES },
	{ "data", required_argument, NULL, OPT_DATA },
	{ "seq", no_argument, NULL, OPT_SEQ },
	{ "rand", no_argument, NULL, OPT_RAND },
	{ "write", no_argument, NULL, OPT_WRITE },
	{ "read", no_argument, NULL, OPT_READ },
	{ "rw", no_argument, NULL, OPT_RW },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "hugepage", no_argument, NULL, OPT_HUGEPAGE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "latency", no_argument, NULL, OPT_LATENCY },
	{ "hist", required_argument, NULL, OPT_HIST },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv, struct um_config *cfg)
{
	const char *size_arg = "256M";
	bool passes_set = false;
	char *end;
	unsigned v;
	int c;

	*cfg = (struct um_config){
		.size = 256ULL << 20,
		.threads = 1,
		.procs = 1,
		.passes = 1,
		.order = ORDER_SEQ,
		.op = OP_WRITE,
		.data = DATA_MIXED,
	};
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_SIZE:
			if (parse_size(optarg, &cfg->size) || !cfg->size)
				bad_arg("--size", optarg,
					"a size such as 512M or 2G");
			size_arg = optarg;
			break;
		case OPT_THREADS:
			if (parse_uint(optarg, 1, UM_MAX_WORKERS, &cfg->threads))
				bad_arg("--threads", optarg, "1 to 1024");
			break;
		case OPT_PROCS:
			if (parse_uint(optarg, 1, UM_MAX_WORKERS, &cfg->procs))
				bad_arg("--procs", optarg, "1 to 1024");
			break;
		case OPT_PASSES:
			if (parse_uint(optarg, 1, UM_MAX_PASSES, &cfg->passes))
				bad_arg("--passes", optarg, "1 to 65535");
			passes_set = true;
			break;
		case OPT_DATA:
			if (parse_name(optarg, data_names, 4, &v))
				bad_arg("--data", optarg,
					"mixed, text, random or zero");
			cfg->data = (enum um_data)v;
			break;
		case OPT_SEQ:
			cfg->order = ORDER_SEQ;
			break;
		case OPT_RAND:
			cfg->order = ORDER_RAND;
			break;
		case OPT_WRITE:
			cfg->op = OP_WRITE;
			break;
		case OPT_READ:
			cfg->op = OP_READ;
			break;
		case OPT_RW:
			cfg->op = OP_RW;
			break;
		case OPT_VERIFY:
			cfg->verify = true;
			break;
		case OPT_JSON:
			cfg->json = true;
			break;
		case OPT_HUGEPAGE:
			cfg->hugepage = true;
			break;
		case OPT_DURATION:
			cfg->duration = strtod(optarg, &end);
			if (end == optarg || *end || !(cfg->duration >= 0.001 &&
						       cfg->duration <= 86400))
				bad_arg("--duration", optarg,
					"seconds, 0.001 to 86400");
			break;
		case OPT_LATENCY:
			cfg->latency = true;
			break;
		case OPT_HIST:
			cfg->hist_path = optarg;
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
	if (cfg->duration > 0 && passes_set)
		bad_arg("--passes", "with --duration",
			"one or the other, not both");
	if (cfg->hist_path && !cfg->latency)
		bad_arg("--hist", cfg->hist_path, "--latency as well");
	if (cfg->duration > 0)
		cfg->passes = UM_MAX_PASSES;
	else if (cfg->op != OP_WRITE && !passes_set)
		cfg->passes = 2;
	if (cfg->op == OP_READ && cfg->passes < 2)
		bad_arg("--passes", "1",
			"at least 2 with --read (pass 1 writes the data)");
	if (cfg->size / cfg->procs / UM_PAGE < cfg->threads)
		bad_arg("--size", size_arg,
			"at least one 4 KiB page per thread and process");
}

/* The figures common to both formats of report(), in their order. */
#define UM_FIGURES(cfg, res, mode, bytes, secs, passes, timed)		\
	mode, data_names[(cfg)->data], (unsigned long long)(cfg)->size,	\
	(cfg)->threads, (cfg)->procs, passes, timed,			\
	(unsigned long long)(bytes), (unsigned long long)(res)->accesses, \
	(res)->secs, (double)(bytes) / 1e6 / (secs),			\
	(double)(res)->accesses / (secs), (res)->cpu_user, (res)->cpu_sys, \
	(res)->verified ? 1 : 0

#define UM_LATENCY(h)							\
	lh_mean_us(h), lh_quantile_us(h, 0.50), lh_quantile_us(h, 0.90), \
	lh_quantile_us(h, 0.99), lh_quantile_us(h, 0.999),		\
	(double)(h)->max_ns / 1000.0

/*
 * The passes that were timed: with --duration, as many as were begun (the
 * last maybe in part), which the accesses tell.
 */
static unsigned timed_passes(const struct um_config *cfg,
			     const struct um_result *res)
{
	const uint64_t pages = cfg->size / cfg->procs / UM_PAGE;
	const uint64_t per_pass = pages * cfg->procs;

	if (cfg->duration > 0)
		return (unsigned)((res->accesses + per_pass - 1) / per_pass);
	return cfg->op == OP_READ ? cfg->passes - 1 : cfg->passes;
}

static void report(const struct um_config *cfg, const struct um_result *res)
{
	const uint64_t bytes = res->accesses * UM_PAGE;
	const double secs = res->secs > 0 ? res->secs : 1e-9;
	const unsigned timed = timed_passes(cfg, res);
	const unsigned passes = cfg->duration > 0 ?
		timed + (cfg->op == OP_READ) : cfg->passes;
	const struct lathist *h = &res->hist;
	char mode[16];

	snprintf(mode, sizeof(mode), "%s-%s", order_names[cfg->order],
		 op_names[cfg->op]);
	if (cfg->json) {
		printf("{\"mode\":\"%s\",\"data\":\"%s\",\"size\":%llu,"
		       "\"threads\":%u,\"procs\":%u,\"passes\":%u,"
		       "\"timed_passes\":%u,\"bytes\":%llu,\"accesses\":%llu,"
		       "\"secs\":%.3f,\"mbps\":%.1f,\"aps\":%.0f,"
		       "\"cpu_user\":%.3f,\"cpu_sys\":%.3f,\"verified\":%d",
		       UM_FIGURES(cfg, res, mode, bytes, secs, passes, timed));
		if (cfg->latency)
			printf(",\"mean_us\":%.3f,\"p50_us\":%.3f,"
			       "\"p90_us\":%.3f,\"p99_us\":%.3f,"
			       "\"p999_us\":%.3f,\"max_us\":%.1f",
			       UM_LATENCY(h));
		printf("}\n");
	} else {
		printf("usemem mode=%s data=%s size=%llu threads=%u procs=%u "
		       "passes=%u timed_passes=%u bytes=%llu accesses=%llu "
		       "secs=%.3f mbps=%.1f aps=%.0f cpu_user=%.3f "
		       "cpu_sys=%.3f verified=%d",
		       UM_FIGURES(cfg, res, mode, bytes, secs, passes, timed));
		if (cfg->latency)
			printf(" mean_us=%.3f p50_us=%.3f p90_us=%.3f "
			       "p99_us=%.3f p999_us=%.3f max_us=%.1f",
			       UM_LATENCY(h));
		printf("\n");
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct um_config cfg;
	struct um_result res;
	int ret;

	parse_args(argc, argv, &cfg);
	text_templates_init();
	if (cfg.procs > 1)
		ret = run_forked(&cfg, &res);
	else
		ret = run_process(&cfg, 0, NULL, &res);
	if (ret) {
		fprintf(stderr, "usemem: %s\n", strerror(-ret));
		return 1;
	}
	if (cfg.verify && res.bad_page >= 0) {
		const uint64_t pages = cfg.size / cfg.procs / UM_PAGE;
		const uint64_t idx = (uint64_t)res.bad_page;
		const enum um_kind kind = res.bad_gen ?
			page_kind(cfg.data, page_hash(idx, res.bad_gen)) :
			KIND_ZERO;

		fprintf(stderr,
			"usemem: verify failed: page %llu (process %llu, offset "
			"0x%llx in its mapping) does not hold generation %u "
			"(a %s page); first wrong byte at %u\n",
			(unsigned long long)idx, (unsigned long long)(idx / pages),
			(unsigned long long)(idx % pages * UM_PAGE),
			res.bad_gen, kind_names[kind], res.bad_byte);
		return 1;
	}
	if (cfg.hist_path && lh_write(&res.hist, cfg.hist_path))
		fprintf(stderr, "usemem: cannot write %s: %s\n",
			cfg.hist_path, strerror(errno));
	report(&cfg, &res);
	return 0;
}
