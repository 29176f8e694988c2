// SPDX-License-Identifier: MIT
/*
 * worker.c - the soak's workload: one process of a soak round
 * (tests/soak/run starts it under `uswap run`, a fresh tree each round).
 *
 *   worker [--role main|fork|exec|api] [--seed N] [--size S] [--areas N]
 *          [--threads N] [--seconds N] [--forks N] [--execs N] [--apis N]
 *          [--lost] [--api] [--no-mremap] [--folio S]
 *
 * It maps --size bytes in --areas anonymous mappings (the preload library
 * manages them), fills every page, then for --seconds lets --threads
 * threads write new versions of random pages and check others, while the
 * main thread now and then stops them to fork, discard a range
 * (MADV_DONTNEED), move or resize an area (mremap), or check everything,
 * and starts other processes:
 *
 *   fork  a child checks every page it inherited, rewrites some with
 *         versions of its own (its parent must never see them: copy on
 *         write), runs threads of its own, maybe forks a grandchild, and
 *         checks everything again;
 *   exec  fork + exec (or posix_spawn) of this program, which joins the
 *         same budget and runs a smaller workload of its own;
 *   api   posix_spawn of this program without the preload library: it
 *         makes a runtime with the library (the same options, a budget
 *         and swap files of its own), runs a workload, destroys the
 *         runtime, and checks that it left no descriptor, no mapping and
 *         no file behind.
 *
 * At the end every page is checked twice, the areas are unmapped, and the
 * process's descriptors must be those it had after its first fill (a
 * runtime that leaked one per fork, exec or swap file would show); a fork
 * child's, at its end, those its parent had at the fork.  A difference is
 * printed as a "LEAK:" line and the workload goes on.
 *
 * Protections, locks and pins: now and then the main thread takes a run
 * of pages that the threads then keep off (the window), and
 *
 *   protects it PROT_READ or PROT_NONE while the threads run (reclaim
 *   evicts it meanwhile), checks it (made readable), and makes it
 *   read-write again;
 *   locks it (mlock, within a quarter of the budget) while the threads
 *   run: every page of it must stay present (pagemap), hold its version,
 *   and take a new one; then munlock;
 *   has the kernel write new versions into it while the threads run:
 *   O_DIRECT reads of a file, or IORING_OP_READ_FIXED with the window
 *   registered as an io_uring fixed buffer (the pages are pinned while
 *   the kernel writes them).
 *
 * Every page of the window is checked after each of them.
 *
 * Fork advice and hints: now and then the main thread
 *
 *   advises a window (now and then a whole area) MADV_WIPEONFORK or
 *   MADV_DONTFORK, lets reclaim evict it (MADV_PAGEOUT hurries it, or a
 *   read brings it back in), and forks: the child (and its grandchild)
 *   must read zeros in a wiped window and then its own writes there, or
 *   have no mapping in a window not forked (each page reads EIO through
 *   /proc/self/mem, or belongs to a mapping the child made since and
 *   does not hold the parent's page); a quarter of the time the advice
 *   is undone (MADV_KEEPONFORK, MADV_DOFORK) before the fork, and the
 *   child must read the data.  The parent keeps its data and undoes the
 *   advice after the fork.  A window smaller than its area splits the
 *   area's region for good, and an mremap of that area is then refused
 *   (EINVAL, as docs/uswap.1 says), and only then;
 *   advises a run MADV_COLD or MADV_PAGEOUT, with the threads kept off it
 *   (then checked) or going on there.
 *
 * None of these with --lost.
 *
 * --api: the whole tree on the library's API instead of the preload
 * library (the process starts again without LD_PRELOAD): the main process
 * makes the budget from the USWAP_* environment, exec children join it
 * (uswap_runtime_tree_fd), fork children carry it on; each destroys its
 * runtime at the end, writes its counters where uswap run merges them,
 * and must then have the descriptors it had before the runtime, no
 * mapping of it, and (the main) no swap file left.  The soak's ASan rounds
 * use it (an ASan program's preload runtime starts before the program has
 * its environment).  --no-mremap leaves mremap out (it found the
 * soak's first lost write: tests/e2e/mremap_clean.c), to tell bugs apart.
 *
 * Page contents.  Page g (its index over all areas) at version v holds a
 * deterministic pattern of (seed, g, v): a header (magic, g, v, a checksum
 * of the rest) and one of several kinds of body (random, small numbers,
 * a repeated record, mostly zeros, text), or a page that is one repeated
 * word or all zeros (the pool's same-filled pages).  Version 0 is "never
 * written" or discarded: zeros.  A check regenerates the page and
 * compares every byte; a mismatch is explained from the header (zeros, an
 * older version, another page's contents, a fork child's version, or
 * garbage).  Fork children write versions with CHILD_BIT set.
 *
 * Ownership.  The threads own disjoint pages, so that each page's version
 * is known exactly: page g belongs to thread g % threads (neighbouring
 * pages, and so every folio, are shared by all threads: their faults race),
 * or, with --lost, the page's 2 MiB block of addresses does (a folio
 * belongs to one thread, which can then handle it alone).
 *
 * --lost: the round injects read errors or corrupt reads, which lose
 * folios.  Every access then runs under a SIGBUS handler (sigsetjmp).
 * A SIGBUS must hit the page touched; every page of that folio (the
 * --folio window of addresses, within the area) must then raise SIGBUS,
 * twice; the folio is discarded (MADV_DONTNEED), must read zeros, and is
 * written again.  The number of folios lost is printed; the run script
 * compares it with swap_io_error / swap_corrupt.  Without --lost any
 * SIGBUS is a failure.
 *
 * Output: one line "soak-worker: role=R pid=P seed=S ... result=ok" per
 * process (the run script sums verified_bytes); a failure prints
 * "FAIL: ..." and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <dirent.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

extern char **environ;

#define MAX_AREAS	16
#define MAX_THREADS	8
#define MAX_CHILDREN	64
#define MAX_FDS		256
#define CHILD_BIT	0x80000000u
#define MAGIC		0x6b616f7370617773ull	/* "uswapsoak" */
#define BLOCK_SHIFT	21			/* --lost ownership: 2 MiB */
/* Version table chunks of 128 Ki entries (512 KiB): malloc'd below
   --min-region, so never managed (a lost folio cannot take them). */
#define CHUNK_SHIFT	17
#define MAX_CHUNKS	4096

struct area {
	char *base;
	size_t len;		/* bytes mapped now */
	uint64_t cap;		/* pages of the index space it owns */
	uint64_t first;		/* index of its first page */
	bool split;		/* fork advice split its region: no mremap */
};

struct thread {
	pthread_t tid;
	unsigned id;
	uint64_t rng;
};

struct child {
	pid_t pid;
	const char *kind;
};

static struct {
	const char *role;
	uint64_t seed, size, folio;
	unsigned areas, threads, seconds, forks, execs, apis, depth;
	bool lost, api, no_mremap;
} cfg = {
	.role = "main", .seed = 1, .size = 64u << 20, .folio = 64u << 10,
	.areas = 4, .threads = 4, .seconds = 20,
};

static struct area areas[MAX_AREAS];
static unsigned nr_areas;
static uint64_t npages;			/* index space: sum of caps */
static uint32_t *ver[MAX_CHUNKS];	/* version of each page */
static const char zero_page[T_PAGE];
static struct uswap_runtime *api_rt;	/* --api: the library's runtime */

static struct thread threads[MAX_THREADS];
static pthread_rwlock_t pause_lock;	/* threads: read; main: write */
static _Atomic bool stop;
static _Atomic uint64_t hot_start, hot_len;
static _Atomic uint64_t excl_start, excl_len;	/* the main thread's window */

static struct child children[MAX_CHILDREN];
static unsigned nr_children;

/*
 * Fork advice in force at a fork: the main thread's window, advised
 * MADV_WIPEONFORK or MADV_DONTFORK (advice 0: none, or undone before the
 * fork).  A child keeps its parent's advice and passes it on: the window
 * is zeros again in each child and grandchild (wiped), or no mapping of
 * the area in any of them (the hole: pages page_addr() does not give).
 */
static struct {
	uint64_t g0, n;
	int advice;
} fork_advice;
static uint64_t hole_start, hole_len;

static struct {
	_Atomic uint64_t verified_bytes, written_pages, discarded_pages;
	_Atomic uint64_t syscall_ops, lost_folios, lost_again, sigbus_checked;
	unsigned fd_leaks, forks, execs, apis, mremaps, dontneeds, full_checks;
	unsigned protects, locks, locks_refused, pinned_reads;
	unsigned wipeonforks, dontforks, fork_advice_undone, cold_hints;
	unsigned mremaps_refused;
	uint64_t wiped_pages, hole_pages;	/* a fork child's, as inherited */
} st;

/* --- helpers --- */

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint32_t *ver_at(uint64_t g)
{
	return &ver[g >> CHUNK_SHIFT][g & ((1u << CHUNK_SHIFT) - 1)];
}

/* The area of page g and g's offset in it (pages), or NULL if unmapped. */
static struct area *area_of(uint64_t g, uint64_t *off)
{
	unsigned i;

	for (i = 0; i < nr_areas; i++)
		if (g >= areas[i].first && g < areas[i].first + areas[i].cap) {
			*off = g - areas[i].first;
			return *off < areas[i].len / T_PAGE ? &areas[i] : NULL;
		}
	return NULL;
}

static char *page_addr(uint64_t g)
{
	uint64_t off;
	struct area *a;

	if (g - hole_start < hole_len)
		return NULL;	/* a fork child's hole: not mapped */
	a = area_of(g, &off);
	return a ? a->base + off * T_PAGE : NULL;
}

static void discard(char *p, size_t len);
static void api_finish(void);

/* --- page contents --- */

static uint64_t body_sum(const uint64_t *w)
{
	uint64_t s = 0;
	unsigned i;

	for (i = 4; i < T_PAGE / 8; i++)
		s = (s ^ w[i]) * 0x100000001B3ull;
	return s;
}

/* Page g's contents at version v (not 0). */
static void fill(void *dst, uint64_t g, uint32_t v)
{
	uint64_t *w = dst, h = mix(cfg.seed ^ mix(g) ^ ((uint64_t)v << 32));
	uint64_t s = h | 1;
	unsigned i;

	switch (h >> 61) {
	case 5:		/* one word repeated: a same-filled page */
		for (i = 0; i < T_PAGE / 8; i++)
			w[i] = s;
		return;
	case 6:		/* written, but all zeros */
		memset(dst, 0, T_PAGE);
		return;
	case 0:
	case 1:		/* random: incompressible */
		for (i = 4; i < T_PAGE / 8; i++)
			w[i] = t_rand(&s);
		break;
	case 2:		/* small numbers */
		for (i = 4; i < T_PAGE / 8; i++)
			w[i] = t_rand(&s) & 0x0f0f0f0f0f0f0f0full;
		break;
	case 3:		/* a repeated 64-byte record */
		for (i = 4; i < 12; i++)
			w[i] = t_rand(&s);
		for (; i < T_PAGE / 8; i++)
			w[i] = w[i - 8];
		break;
	case 4:		/* mostly zeros */
		memset(w + 4, 0, T_PAGE - 32);
		w[T_PAGE / 8 - 1] = s;
		break;
	default:	/* text */
		for (i = 4; i < T_PAGE / 8; i++) {
			uint64_t r = t_rand(&s), x = 0;
			unsigned b;

			for (b = 0; b < 8; b++)
				x |= (uint64_t)("etaoin shrdlu\n.,"[(r >> (4 * b)) & 15])
				     << (8 * b);
			w[i] = x;
		}
		break;
	}
	w[0] = MAGIC ^ cfg.seed;
	w[1] = g;
	w[2] = v;
	w[3] = body_sum(w);
}

/* The version of page g (1 .. want + 1) that p holds exactly, or 0. */
static unsigned older_version(const char *p, uint64_t g, uint32_t want)
{
	char buf[T_PAGE];
	uint32_t v, base = want & CHILD_BIT;

	for (v = 1; v <= (want & ~CHILD_BIT) + 1 && v < 100000; v++) {
		fill(buf, g, base | v);
		if (!memcmp(p, buf, T_PAGE))
			return base | v;
	}
	return 0;
}

/* Why page g at p is not version want: one line into why. */
static void diagnose(const char *p, uint64_t g, uint32_t want, char *why,
		     size_t len)
{
	const uint64_t *w = (const uint64_t *)p;
	char expect[T_PAGE];
	unsigned i, diff = 0, first = T_PAGE;

	if (want)
		fill(expect, g, want);
	else
		memset(expect, 0, T_PAGE);
	for (i = 0; i < T_PAGE; i++)
		if (p[i] != expect[i]) {
			diff++;
			if (first == T_PAGE)
				first = i;
		}
	if (!memcmp(p, zero_page, T_PAGE))
		snprintf(why, len, "it reads as zeros");
	else if (w[0] == (MAGIC ^ cfg.seed) && w[1] == g)
		snprintf(why, len, "it holds version %llu%s (body checksum %s)",
			 (unsigned long long)w[2],
			 (w[2] & CHILD_BIT) ? ", a fork child's" :
			 w[2] < want ? ", an older one" : "",
			 body_sum(w) == w[3] ? "good" : "BAD");
	else if (w[0] == (MAGIC ^ cfg.seed))
		snprintf(why, len, "it holds page %llu's version %llu (body checksum %s)",
			 (unsigned long long)w[1], (unsigned long long)w[2],
			 body_sum(w) == w[3] ? "good" : "BAD");
	else if ((i = older_version(p, g, want)))
		snprintf(why, len, "it holds version %u exactly%s (a page without a header: one repeated word or zeros)",
			 i, i < want ? ", an older one" : "");
	else
		snprintf(why, len, "garbage: %u bytes differ, the first at offset %u; it starts %016llx %016llx",
			 diff, first, (unsigned long long)w[0],
			 (unsigned long long)w[1]);
}

/*
 * uswap's history of the folio at p (USWAP_TRACE, uswap.h), when the
 * preload library is there to give it.
 */
static void explain(const char *p)
{
	void (*dump)(const void *) =
		(void (*)(const void *))dlsym(RTLD_DEFAULT, "uswap_trace_dump");

	if (dump)
		dump(p);
}

static void page_failed(const char *p, uint64_t g, uint32_t want,
			const char *who)
{
	uint64_t off = 0;
	struct area *a = area_of(g, &off);
	char why[160];

	diagnose(p, g, want, why, sizeof(why));
	explain(p);
	t_fail("%s (role %s, pid %d): page %llu (area %ld, page %llu of it, address %p) should hold version %u%s: %s",
	       who, cfg.role, (int)getpid(), (unsigned long long)g,
	       a ? (long)(a - areas) : -1L, (unsigned long long)off, (const void *)p,
	       want, want & CHILD_BIT ? " (a fork child's)" : "", why);
}

/* Check that page g at p holds version want. */
static void check_page(const char *p, uint64_t g, uint32_t want,
		       const char *who)
{
	static __thread char buf[T_PAGE];

	if (!want) {
		if (memcmp(p, zero_page, T_PAGE))
			page_failed(p, g, want, who);
	} else {
		fill(buf, g, want);
		if (memcmp(p, buf, T_PAGE))
			page_failed(p, g, want, who);
	}
	st.verified_bytes += T_PAGE;
}

/* --- SIGBUS: a failure, or with --lost a lost folio --- */

static __thread sigjmp_buf bus_jmp;
static __thread volatile sig_atomic_t bus_armed;
static __thread void *volatile bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	char msg[160];
	int n;

	(void)ctx;
	if (bus_armed) {
		bus_armed = 0;
		bus_addr = si->si_addr;
		siglongjmp(bus_jmp, 1);
	}
	n = snprintf(msg, sizeof(msg),
		     "FAIL: SIGBUS (code %d) at %p in pid %d (role %s): data lost where nothing may lose it\n",
		     si->si_code, si->si_addr, (int)getpid(), cfg.role);
	(void)!write(STDERR_FILENO, msg, (size_t)n);
	for (n = 0; n < (int)nr_children; n++)
		kill(children[n].pid, SIGKILL);
	signal(sig, SIG_DFL);
	_exit(3);
}

static void sigbus_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * Write version v into page g (v != 0), or check that it holds its
 * version (v == 0).  False when the access raised SIGBUS (--lost), which
 * must have hit g.
 */
static bool touch(uint64_t g, uint32_t v, const char *who)
{
	char *volatile p = page_addr(g);

	if (!cfg.lost) {
		if (v) {
			fill(p, g, v);
			*ver_at(g) = v;
			st.written_pages++;
		} else {
			check_page(p, g, *ver_at(g), who);
		}
		return true;
	}
	if (sigsetjmp(bus_jmp, 1)) {
		if ((char *)bus_addr < p || (char *)bus_addr >= p + T_PAGE)
			t_fail("%s: SIGBUS at %p while touching page %llu at %p",
			       who, bus_addr, (unsigned long long)g, (void *)p);
		return false;
	}
	bus_armed = 1;
	if (v)
		fill(p, g, v);
	else
		check_page(p, g, *ver_at(g), who);
	bus_armed = 0;
	if (v) {
		*ver_at(g) = v;
		st.written_pages++;
	}
	return true;
}

/*
 * The folio of page g as --lost sees it: the --folio window of addresses
 * around it, within its area (uswap clips folios to its regions): pages
 * [*first, *last), addresses [*fs, *fe).
 */
static void folio_bounds(uint64_t g, uint64_t *first, uint64_t *last,
			 uintptr_t *fs, uintptr_t *fe)
{
	uint64_t off;
	struct area *a = area_of(g, &off);
	uintptr_t addr = (uintptr_t)(a->base + off * T_PAGE);

	*fs = addr & ~(uintptr_t)(cfg.folio - 1);
	*fe = *fs + cfg.folio;
	if (*fs < (uintptr_t)a->base)
		*fs = (uintptr_t)a->base;
	if (*fe > (uintptr_t)a->base + a->len)
		*fe = (uintptr_t)a->base + a->len;
	*first = a->first + (*fs - (uintptr_t)a->base) / T_PAGE;
	*last = a->first + (*fe - (uintptr_t)a->base) / T_PAGE;
}

static void folio_lost(uint64_t g);

/*
 * Discard page g's folio (--lost: the thread owns it): it reads zeros.
 * The first touch fills it with zeros, no read involved, so a SIGBUS
 * there is poison the discard left behind.  Later pages may find the
 * folio lost again: evicted since the first touch (the budget is small),
 * its read failed once more.  Then it is lost whole, as any other, and
 * folio_lost() checks that every page says so, the first one too.
 */
static void folio_discard(uint64_t g, const char *who)
{
	uint64_t first, last, k;
	uintptr_t fs, fe;

	folio_bounds(g, &first, &last, &fs, &fe);
	discard((char *)fs, fe - fs);
	st.discarded_pages += last - first;
	for (k = first; k < last; k++)
		*ver_at(k) = 0;
	for (k = first; k < last; k++) {
		if (touch(k, 0, who))
			continue;
		if (k == first)
			t_fail("page %llu (%p) raises SIGBUS after MADV_DONTNEED of its folio",
			       (unsigned long long)k, (void *)page_addr(k));
		st.lost_again++;
		folio_lost(k);
		return;
	}
}

/*
 * Page g raised SIGBUS: its folio is lost.  Every page of it must raise
 * SIGBUS, twice; then it is discarded, must read zeros, and starts again
 * at version 0.  The caller owns the folio (--lost: 2 MiB blocks).
 */
static void folio_lost(uint64_t g)
{
	uint64_t first, last, k;
	uintptr_t fs, fe;
	unsigned round;

	st.lost_folios++;
	folio_bounds(g, &first, &last, &fs, &fe);
	for (round = 0; round < 2; round++)
		for (k = first; k < last; k++) {
			if (touch(k, 0, "lost folio"))
				t_fail("page %llu (%p) of the lost folio %p..%p gave data (SIGBUS was at page %llu)",
				       (unsigned long long)k, (void *)page_addr(k),
				       (void *)fs, (void *)fe, (unsigned long long)g);
			st.sigbus_checked++;
		}
	folio_discard(g, "discarded lost folio");
}

/* Touch g; a SIGBUS (--lost) loses its folio. */
static void visit(uint64_t g, uint32_t v, const char *who)
{
	if (!touch(g, v, who))
		folio_lost(g);
}

/* --- descriptors --- */

/*
 * A process's descriptors, as the kinds of what they point to ("pipe",
 * "anon_inode:[io_uring]", a file's path): after a fork or a runtime's
 * re-creation the numbers may change, what is open must not.
 */
struct fdset {
	unsigned n;
	int fd[MAX_FDS];
	char target[MAX_FDS][512];	/* whole: a log directory's path
					   can be long (tests/run's) */
};

static struct fdset fork_fds;	/* the parent's, just before a fork */
static struct fdset fds_start;	/* at start, before a runtime of ours */

/* This process's descriptors but those that come and go (uswap's live
   statistics file, the directory being read). */
static void fd_snapshot(struct fdset *s)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[64], *t;

	s->n = 0;
	if (!d)
		t_fail("opendir /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)) && s->n < MAX_FDS) {
		int fd;
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		t = s->target[s->n];
		len = readlink(path, t, sizeof(s->target[0]) - 1);
		if (len < 0)
			continue;	/* closed meanwhile */
		t[len] = 0;
		if (strstr(t, "live.tmp"))
			continue;
		if (!strncmp(t, "pipe:[", 6) || !strncmp(t, "socket:[", 8))
			*strchr(t, ':') = 0;
		if (!strncmp(t, "/proc/", 6) && t[6] >= '0' && t[6] <= '9') {
			/* A process's own (uswap's /proc/self/pagemap): the
			   same file in a child names the child's pid. */
			char *rest = t + 6;

			while (*rest >= '0' && *rest <= '9')
				rest++;
			memmove(t + 10, rest, strlen(rest) + 1);
			memcpy(t + 6, "self", 4);
		}
		s->fd[s->n++] = fd;
	}
	closedir(d);
}

static unsigned fd_count(const struct fdset *s, const char *target)
{
	unsigned i, n = 0;

	for (i = 0; i < s->n; i++)
		n += !strcmp(s->target[i], target);
	return n;
}

/* What now has more or fewer of than before, into why; true if nothing. */
static bool fd_same(const struct fdset *before, const struct fdset *now,
		    char *why, size_t len)
{
	const struct fdset *sets[2] = { before, now };
	unsigned i, k, j;
	size_t pos = 0;

	why[0] = 0;
	for (k = 0; k < 2; k++)
		for (i = 0; i < sets[k]->n; i++) {
			const char *t = sets[k]->target[i];
			int d = (int)fd_count(now, t) - (int)fd_count(before, t);

			for (j = 0; j < i && strcmp(sets[k]->target[j], t); j++)
				;
			if (!d || j < i || (k == 1 && fd_count(before, t)))
				continue;	/* equal, or said already */
			pos += (size_t)snprintf(why + pos, pos < len ? len - pos : 0,
						"%s%+d %s", pos ? ", " : "", d, t);
		}
	return !why[0];
}

/*
 * The descriptors now must be those of before (retried: uswap's threads
 * open some as they start).  A difference is printed as a LEAK line (the
 * run script fails the round) and the workload goes on.
 */
static void fd_check(const struct fdset *before, const char *when)
{
	char why[512];
	struct fdset now;
	unsigned i, tries;

	for (tries = 0; tries < 40; tries++) {
		fd_snapshot(&now);
		if (fd_same(before, &now, why, sizeof(why)))
			return;
		sleep_ms(50);
	}
	st.fd_leaks++;
	fprintf(stderr, "LEAK: role %s pid %d: descriptors %s: %s\n",
		cfg.role, (int)getpid(), when, why);
	fprintf(stderr, "  before (%u):", before->n);
	for (i = 0; i < before->n; i++)
		fprintf(stderr, " %d=%s", before->fd[i], before->target[i]);
	fprintf(stderr, "\n  now (%u):", now.n);
	for (i = 0; i < now.n; i++)
		fprintf(stderr, " %d=%s", now.fd[i], now.target[i]);
	fprintf(stderr, "\n");
}

/* --- areas: plain mmap (the preload manages it), or the library's --- */

static void *map_area(size_t len)
{
	void *p = NULL;
	int err;

	if (api_rt) {
		err = uswap_region_create(api_rt, len, &p);
		if (err)
			t_fail("uswap_region_create(%zu): %s", len, strerror(-err));
		return p;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		t_fail("mmap(%zu): %s", len, strerror(errno));
	return p;
}

static void unmap_range(char *p, size_t len)
{
	int err;

	if (!len)
		return;
	err = api_rt ? uswap_munmap(api_rt, p, len) : munmap(p, len);
	if (err)
		t_fail("munmap(%p, %zu): %s", (void *)p, len, strerror(errno));
}

/*
 * A fork child's hole (MADV_DONTFORK) is left alone: what is mapped there
 * now is the child's own (uswap's tables, thread stacks), not the area.
 */
static void unmap_area(struct area *a)
{
	uint64_t pages = a->len / T_PAGE, hs, he;

	if (hole_len && hole_start >= a->first &&
	    hole_start < a->first + pages) {
		hs = hole_start - a->first;
		he = hs + hole_len;
		unmap_range(a->base, hs * T_PAGE);
		unmap_range(a->base + he * T_PAGE, (pages - he) * T_PAGE);
	} else {
		unmap_range(a->base, a->len);
	}
	a->len = 0;
}

/* madvise of managed memory: 0 or -errno. */
static int advise(void *p, size_t len, int advice)
{
	int err = api_rt ? uswap_madvise(api_rt, p, len, advice) :
			   madvise(p, len, advice);

	return err ? -errno : 0;
}

static void discard(char *p, size_t len)
{
	int err = advise(p, len, MADV_DONTNEED);

	if (err)
		t_fail("madvise(DONTNEED): %s", strerror(-err));
}

/* mremap: the new address, or MAP_FAILED with errno set. */
static void *remap(void *old, size_t old_len, size_t new_len)
{
	return api_rt ? uswap_mremap(api_rt, old, old_len, new_len,
				     MREMAP_MAYMOVE, NULL) :
			mremap(old, old_len, new_len, MREMAP_MAYMOVE);
}

/* Split --size into areas of random sizes, each with room to grow. */
static void make_areas(uint64_t *rng)
{
	uint64_t left = cfg.size / T_PAGE, g = 0;
	unsigned i;

	nr_areas = cfg.areas;
	for (i = 0; i < nr_areas; i++) {
		uint64_t pages = i + 1 == nr_areas ? left :
			left / (nr_areas - i) / 2 +
			t_rand(rng) % (left / (nr_areas - i) + 1);

		if (pages < 256)
			pages = 256;	/* at least 1 MiB: --min-region */
		if (pages > left && i + 1 < nr_areas)
			pages = left > 256 ? left : 256;
		left -= pages < left ? pages : left;
		areas[i].first = g;
		areas[i].cap = pages + pages / 2;
		areas[i].len = pages * T_PAGE;
		areas[i].base = map_area(areas[i].len);
		g += areas[i].cap;
	}
	npages = g;
	if ((npages >> CHUNK_SHIFT) >= MAX_CHUNKS)
		t_fail("--size too large");
	for (i = 0; i <= (npages >> CHUNK_SHIFT); i++) {
		ver[i] = calloc(1u << CHUNK_SHIFT, sizeof(uint32_t));
		if (!ver[i])
			t_fail("calloc: out of memory");
	}
}

/* --- the threads --- */

static unsigned owner(uint64_t g)
{
	char *p;

	if (!cfg.lost)
		return (unsigned)(g % cfg.threads);
	p = page_addr(g);
	return (unsigned)(mix((uintptr_t)p >> BLOCK_SHIFT) % cfg.threads);
}

/* Is page g in the main thread's window (the threads keep off)? */
static bool in_window(uint64_t g)
{
	uint64_t s = atomic_load(&excl_start);

	return g >= s && g < s + atomic_load(&excl_len);
}

/* A mapped page of t's, near the hot window mostly; UINT64_MAX if none. */
static uint64_t pick_page(struct thread *t)
{
	unsigned tries;

	for (tries = 0; tries < 256; tries++) {
		uint64_t r = t_rand(&t->rng), g;

		if (r & 3)
			g = (hot_start + (r >> 8) % hot_len) % npages;
		else
			g = (r >> 8) % npages;
		if (!cfg.lost) {
			g = g - g % cfg.threads + t->id;
			if (g >= npages)
				continue;
		}
		if (page_addr(g) && owner(g) == t->id && !in_window(g))
			return g;
	}
	return UINT64_MAX;
}

/* write(2) from page g and read(2) a new version into it, through a pipe. */
static void syscall_roundtrip(uint64_t g)
{
	char *p = page_addr(g), buf[T_PAGE];
	uint32_t v = *ver_at(g);
	int fds[2];

	if (pipe(fds))
		t_fail("pipe: %s", strerror(errno));
	if (write(fds[1], p, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("write(2) from page %llu: %s", (unsigned long long)g,
		       strerror(errno));
	if (read(fds[0], buf, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("read back: %s", strerror(errno));
	check_page(buf, g, v, "write(2) from managed memory");
	v = (v + 1) & ~CHILD_BIT;
	fill(buf, g, v);
	if (write(fds[1], buf, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("write to a pipe: %s", strerror(errno));
	if (read(fds[0], p, T_PAGE) != (ssize_t)T_PAGE)
		t_fail("read(2) into page %llu: %s", (unsigned long long)g,
		       strerror(errno));
	*ver_at(g) = v;
	close(fds[0]);
	close(fds[1]);
	st.syscall_ops++;
}

static uint32_t next_version(uint64_t g)
{
	return (*ver_at(g) + 1) & ~CHILD_BIT;
}

/* One random operation of thread t. */
static void one_op(struct thread *t)
{
	uint64_t g = pick_page(t), r = t_rand(&t->rng), k, step;
	unsigned dice = (unsigned)(r % 1000), n;

	if (g == UINT64_MAX) {
		sleep_ms(1);
		return;
	}
	if (dice < 450) {
		visit(g, next_version(g), "write");
	} else if (dice < 900) {
		visit(g, 0, "read");
	} else if (dice < 960) {
		/* A run of the thread's pages, written or checked. */
		step = cfg.lost ? 1 : cfg.threads;
		n = 1 + (unsigned)((r >> 16) % 64);
		for (k = g; n-- && k < npages && page_addr(k); k += step)
			if (owner(k) == t->id && !in_window(k))
				visit(k, (r >> 40) & 1 ? next_version(k) : 0, "run");
	} else if (dice < 975 && !cfg.lost) {
		syscall_roundtrip(g);
	} else if (dice < 980) {
		/* Discard the page (--lost: its folio, wholly the thread's). */
		if (cfg.lost) {
			folio_discard(g, "after MADV_DONTNEED of a folio");
			return;
		}
		discard(page_addr(g), T_PAGE);
		*ver_at(g) = 0;
		st.discarded_pages++;
		visit(g, 0, "after MADV_DONTNEED");
	} else {
		visit(g, 0, "read");
	}
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;
	unsigned k;

	while (!atomic_load(&stop)) {
		pthread_rwlock_rdlock(&pause_lock);
		for (k = 0; k < 32 && !atomic_load(&stop); k++)
			one_op(t);
		pthread_rwlock_unlock(&pause_lock);
	}
	return NULL;
}

/* Each thread writes version 1 into every page it owns. */
static void *fill_main(void *arg)
{
	struct thread *t = arg;
	uint64_t g;

	for (g = 0; g < npages; g++)
		if (page_addr(g) && owner(g) == t->id)
			visit(g, 1, "first fill");
	return NULL;
}

static void threads_run(void *(*fn)(void *), unsigned n)
{
	pthread_rwlockattr_t attr;
	unsigned i;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&pause_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	atomic_store(&stop, false);
	for (i = 0; i < n; i++) {
		threads[i].id = i;
		threads[i].rng = mix(cfg.seed * 131 + i + 1 + cfg.depth * 7919);
		if (pthread_create(&threads[i].tid, NULL, fn, &threads[i]))
			t_fail("pthread_create: %s", strerror(errno));
	}
}

static void threads_join(unsigned n)
{
	unsigned i;

	atomic_store(&stop, true);
	for (i = 0; i < n; i++)
		pthread_join(threads[i].tid, NULL);
}

/* Every mapped page holds its version (threads stopped or paused). */
static void check_all(const char *who)
{
	uint64_t g;

	for (g = 0; g < npages; g++)
		if (page_addr(g))
			visit(g, 0, who);
}

/* --- processes --- */

static double t_start;

/* One line per event of the main loop, for the round's log. */
static void __attribute__((format(printf, 1, 2))) event(const char *fmt, ...)
{
	char buf[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "soak-worker event: role %s pid %d at %.1f s: %s\n",
		cfg.role, (int)getpid(), now() - t_start, buf);
}


static void report(const char *result)
{
	printf("soak-worker: role=%s%s pid=%d seed=%llu areas=%u threads=%u pages=%llu verified_bytes=%llu written_pages=%llu discarded_pages=%llu syscall_ops=%llu forks=%u execs=%u apis=%u mremaps=%u mremaps_refused=%u dontneeds=%u full_checks=%u protects=%u locks=%u locks_refused=%u pinned_reads=%u wipeonforks=%u dontforks=%u fork_advice_undone=%u cold_hints=%u wiped_pages=%llu hole_pages=%llu lost_folios=%llu lost_again=%llu sigbus_checked=%llu fd_leaks=%u result=%s\n",
	       cfg.role, cfg.api ? " api" : "", (int)getpid(),
	       (unsigned long long)cfg.seed, nr_areas,
	       cfg.threads, (unsigned long long)npages,
	       (unsigned long long)st.verified_bytes,
	       (unsigned long long)st.written_pages,
	       (unsigned long long)st.discarded_pages,
	       (unsigned long long)st.syscall_ops, st.forks, st.execs, st.apis,
	       st.mremaps, st.mremaps_refused, st.dontneeds, st.full_checks,
	       st.protects, st.locks, st.locks_refused, st.pinned_reads,
	       st.wipeonforks, st.dontforks, st.fork_advice_undone,
	       st.cold_hints, (unsigned long long)st.wiped_pages,
	       (unsigned long long)st.hole_pages,
	       (unsigned long long)st.lost_folios,
	       (unsigned long long)st.lost_again,
	       (unsigned long long)st.sigbus_checked, st.fd_leaks, result);
	fflush(stdout);
}

static void add_child(pid_t pid, const char *kind)
{
	if (nr_children == MAX_CHILDREN)
		t_fail("too many children");
	children[nr_children].pid = pid;
	children[nr_children].kind = kind;
	nr_children++;
}

/* Reap children (all, or those that ended); each must have exited 0. */
static void reap(bool all)
{
	unsigned i = 0;

	while (i < nr_children) {
		int status;
		pid_t r = waitpid(children[i].pid, &status, all ? 0 : WNOHANG);

		if (r == 0) {
			i++;
			continue;
		}
		if (r < 0)
			t_fail("waitpid %d: %s", (int)children[i].pid, strerror(errno));
		if (WIFSIGNALED(status))
			t_fail("%s child %d was killed by signal %d", children[i].kind,
			       (int)children[i].pid, WTERMSIG(status));
		if (WEXITSTATUS(status))
			t_fail("%s child %d exited with status %d", children[i].kind,
			       (int)children[i].pid, WEXITSTATUS(status));
		children[i] = children[--nr_children];
	}
}

static bool finished;	/* the process ends as it should (not t_fail) */

/*
 * At exit: children still running are killed (a failure left them).  A
 * failure then ends with _exit, before LeakSanitizer's exit handler
 * (registered earlier, so run later): that one would stop every thread
 * of a process whose runtime still runs, io_uring workers included, and
 * can spin for ever; a finished process has destroyed its runtime (--api).
 */
static void at_exit(void)
{
	unsigned i;

	for (i = 0; i < nr_children; i++) {
		kill(children[i].pid, SIGKILL);
		waitpid(children[i].pid, NULL, 0);
	}
	nr_children = 0;
	if (!finished)
		_exit(T_FAIL);
}

static void reset_stats(void)
{
	memset(&st, 0, sizeof(st));
}

/*
 * A fork child has no mapping where its parent said MADV_DONTFORK: each
 * page of the hole reads EIO through /proc/self/mem.  The child's own
 * mappings made since the fork (uswap's tables and thread stacks, made
 * by its fork handlers before this runs) may take that free address
 * space: such a page may read, but never as the parent's page there.
 */
static void hole_check(void)
{
	char buf[T_PAGE], expect[T_PAGE];
	uint64_t k, off, reused = 0;
	struct area *a;
	int fd;

	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		t_fail("open /proc/self/mem: %s", strerror(errno));
	for (k = 0; k < hole_len; k++) {
		uint64_t g = hole_start + k;
		uint32_t v = *ver_at(g);
		uintptr_t addr;
		ssize_t r;

		a = area_of(g, &off);
		addr = (uintptr_t)(a->base + off * T_PAGE);
		r = pread(fd, buf, T_PAGE, (off_t)addr);
		st.hole_pages++;
		if (r < 0 && errno == EIO)
			continue;	/* no mapping: as it should be */
		if (r != (ssize_t)T_PAGE)
			t_fail("reading %p through /proc/self/mem: %s",
			       (void *)addr, r < 0 ? strerror(errno) : "short");
		reused++;
		if (!v)
			continue;
		fill(expect, g, v);
		if (memcmp(expect, zero_page, T_PAGE) && !memcmp(buf, expect, T_PAGE))
			t_fail("fork child (role %s, pid %d): page %llu at %p, advised MADV_DONTFORK in its parent, is mapped in the child and holds the parent's version %u",
			       cfg.role, (int)getpid(), (unsigned long long)g,
			       (void *)addr, v);
	}
	close(fd);
	event("MADV_DONTFORK hole, pages %llu..%llu: not mapped (%llu of them mapped by the child since)",
	      (unsigned long long)hole_start,
	      (unsigned long long)(hole_start + hole_len),
	      (unsigned long long)reused);
}

/*
 * What a fork child (or grandchild) inherits of its parent's fork
 * advice: a wiped window reads zeros, and then holds what the child
 * writes there; a window not forked is a hole.
 */
static void fork_advice_inherit(unsigned nr)
{
	uint64_t g0 = fork_advice.g0, n = fork_advice.n, k;

	/* The parent's window: the child's threads may use it. */
	atomic_store(&excl_len, 0);
	if (fork_advice.advice == MADV_DONTFORK) {
		hole_start = g0;
		hole_len = n;
		hole_check();
	} else if (fork_advice.advice == MADV_WIPEONFORK) {
		for (k = 0; k < n; k++)
			*ver_at(g0 + k) = 0;
		st.wiped_pages += n;
		for (k = 0; k < n; k++)
			visit(g0 + k, 0, "fork child, a window wiped at the fork (MADV_WIPEONFORK)");
		for (k = 0; k < n; k += 2)
			visit(g0 + k, (next_version(g0 + k) + nr) | CHILD_BIT,
			      "fork child's own write in a wiped window");
		for (k = 0; k < n; k++)
			visit(g0 + k, 0, "fork child, its own writes in a wiped window");
	}
}

/*
 * A fork child (threads stopped at the fork): check what it inherited,
 * rewrite some of it with versions of its own, run threads of its own,
 * maybe fork a grandchild, check again.  Exits.
 */
static void __attribute__((noreturn)) fork_child(unsigned nr, uint64_t rng)
{
	unsigned n = cfg.threads < 3 ? cfg.threads : 3, i;
	static struct fdset fds;
	uint64_t g;
	pid_t pid;

	fds = fork_fds;
again:
	if (api_rt && !uswap_runtime_usable(api_rt))
		api_rt = NULL;	/* read in: plain memory now, not ours to destroy */
	cfg.role = cfg.depth ? "grandchild" : "fork";
	cfg.depth++;
	nr_children = 0;
	reset_stats();
	fork_advice_inherit(nr);
	check_all("fork child, what it inherited");
	for (g = 0; g < npages; g++)
		if (page_addr(g) && t_rand(&rng) % 8 == 0)
			visit(g, (next_version(g) + nr) | CHILD_BIT,
			      "fork child's own write");
	if (cfg.depth < 2 && t_rand(&rng) % 3 == 0) {
		fflush(stdout);
		fd_snapshot(&fork_fds);
		pid = fork();
		if (pid < 0)
			t_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			nr += 100;
			rng = mix(rng);
			fds = fork_fds;
			goto again;
		}
		add_child(pid, "grandchild");
	}
	cfg.threads = n;
	threads_run(thread_main, n);
	sleep_ms(1000 + (unsigned)(t_rand(&rng) % 3000));
	threads_join(n);
	reap(true);
	check_all("fork child, at its end");
	for (i = 0; i < nr_areas; i++)
		unmap_area(&areas[i]);
	if (api_rt)
		api_finish();
	else
		fd_check(&fds, "of a fork child at its end, against its parent's at the fork");
	report("ok");
	finished = true;
	exit(0);
}

/* Stop the threads, fork; the parent's threads go on while the child checks. */
static void do_fork(uint64_t *rng)
{
	pid_t pid;

	pthread_rwlock_wrlock(&pause_lock);
	fflush(stdout);
	fd_snapshot(&fork_fds);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (pid == 0)
		fork_child(st.forks + 1, mix(*rng));
	pthread_rwlock_unlock(&pause_lock);
	add_child(pid, "fork");
	st.forks++;
	t_rand(rng);
}

/* Arguments of a smaller run of this program. */
static void child_args(char **argv, char (*buf)[32], const char *role,
		       uint64_t seed, uint64_t size, unsigned nthreads,
		       unsigned seconds)
{
	unsigned n = 0;

	argv[n++] = "worker";
	argv[n++] = "--role";
	argv[n++] = (char *)role;
	snprintf(buf[0], 32, "%llu", (unsigned long long)seed);
	argv[n++] = "--seed";
	argv[n++] = buf[0];
	snprintf(buf[1], 32, "%llu", (unsigned long long)size);
	argv[n++] = "--size";
	argv[n++] = buf[1];
	snprintf(buf[2], 32, "%u", nthreads);
	argv[n++] = "--threads";
	argv[n++] = buf[2];
	snprintf(buf[3], 32, "%u", seconds);
	argv[n++] = "--seconds";
	argv[n++] = buf[3];
	argv[n++] = "--areas";
	argv[n++] = "2";
	if (cfg.api)
		argv[n++] = "--api";
	if (cfg.no_mremap)
		argv[n++] = "--no-mremap";
	argv[n] = NULL;
}

/* This program again, joining the budget: fork + exec or posix_spawn. */
static void do_exec(uint64_t *rng)
{
	char *argv[16], buf[4][32];
	uint64_t r = t_rand(rng);
	pid_t pid;

	child_args(argv, buf, "exec", mix(r), cfg.size / 4 + (4u << 20),
		   1 + (unsigned)(r % 4), 2 + (unsigned)((r >> 8) % 6));
	fflush(stdout);
	if ((r >> 16) & 1) {
		pid = fork();
		if (pid < 0)
			t_fail("fork: %s", strerror(errno));
		if (pid == 0) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
	} else if ((errno = posix_spawn(&pid, "/proc/self/exe", NULL, NULL,
					argv, environ))) {
		t_fail("posix_spawn: %s", strerror(errno));
	}
	add_child(pid, "exec");
	st.execs++;
}

/* This program without the preload library, on the library's API. */
static void do_api(uint64_t *rng)
{
	char *argv[16], buf[4][32], *envp[256];
	const char *max = getenv("USWAP_MAX");
	uint64_t r = t_rand(rng), size = 16u << 20;
	unsigned i, n = 0;
	pid_t pid;

	for (i = 0; environ[i] && n < 255; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			envp[n++] = environ[i];
	envp[n] = NULL;
	/* Two to three times the budget: it swaps (and zaps) too. */
	if (max && *max)
		size = t_size(max) * (2 + r % 2);
	child_args(argv, buf, "api", mix(r), size,
		   1 + (unsigned)(r % 3), 2 + (unsigned)((r >> 8) % 4));
	fflush(stdout);
	if ((errno = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, envp)))
		t_fail("posix_spawn: %s", strerror(errno));
	add_child(pid, "api");
	st.apis++;
}

/* Threads paused: discard a random range of an area. */
static void do_dontneed(uint64_t *rng)
{
	struct area *a = &areas[t_rand(rng) % nr_areas];
	uint64_t pages = a->len / T_PAGE, n, off, k;

	n = 1 + t_rand(rng) % (pages / 8 + 1);
	off = t_rand(rng) % (pages - n + 1);
	event("MADV_DONTNEED area %ld pages %llu..%llu", (long)(a - areas),
	      (unsigned long long)off, (unsigned long long)(off + n));
	discard(a->base + off * T_PAGE, n * T_PAGE);
	for (k = 0; k < n; k++) {
		*ver_at(a->first + off + k) = 0;
		visit(a->first + off + k, 0, "after MADV_DONTNEED of a range");
	}
	st.discarded_pages += n;
	st.dontneeds++;
}

/*
 * Threads paused: move an area and change its size (mremap).  An area
 * that fork advice split is several regions of uswap's for good, and one
 * mremap of several is refused with EINVAL (docs/uswap.1, NOTES, "Memory
 * advice"): expected there, and nothing may have changed.
 */
static void do_mremap(uint64_t *rng)
{
	struct area *a = &areas[t_rand(rng) % nr_areas];
	uint64_t old_pages = a->len / T_PAGE, pages, k;
	void *p;

	pages = a->cap / 2 + t_rand(rng) % (a->cap / 2 + 1);
	if (pages < 256)
		pages = 256;
	event("mremap area %ld from %p, %llu pages, to %llu pages",
	      (long)(a - areas), (void *)a->base, (unsigned long long)old_pages,
	      (unsigned long long)pages);
	p = remap(a->base, a->len, pages * T_PAGE);
	if (p == MAP_FAILED && errno == EINVAL && a->split) {
		event("mremap area %ld refused (EINVAL): fork advice split it",
		      (long)(a - areas));
		st.mremaps_refused++;
		return;
	}
	if (p == MAP_FAILED)
		t_fail("mremap(%zu -> %llu): %s", a->len,
		       (unsigned long long)(pages * T_PAGE), strerror(errno));
	a->base = p;
	a->len = pages * T_PAGE;
	for (k = pages; k < old_pages; k++)
		*ver_at(a->first + k) = 0;	/* cut off: zeros if it grows back */
	st.mremaps++;
}

/* --- the main thread's window: protections, locks, pins --- */

/*
 * Take a run of up to max_pages pages of a random area for the main
 * thread (the threads keep off it from now on).  Returns its first page
 * and count in *g0, *n.
 */
/* Pages [g0, g0 + n) are the main thread's from now on. */
static void window_set(uint64_t g0, uint64_t n)
{
	pthread_rwlock_wrlock(&pause_lock);	/* no thread is mid-op */
	atomic_store(&excl_start, g0);
	atomic_store(&excl_len, n);
	pthread_rwlock_unlock(&pause_lock);
}

static void window_take(uint64_t *rng, uint64_t max_pages, uint64_t *g0,
			uint64_t *n)
{
	struct area *a = &areas[t_rand(rng) % nr_areas];
	uint64_t pages = a->len / T_PAGE;

	*n = 1 + t_rand(rng) % (max_pages < pages ? max_pages : pages);
	*g0 = a->first + t_rand(rng) % (pages - *n + 1);
	window_set(*g0, *n);
}

static void window_give_back(void)
{
	atomic_store(&excl_len, 0);
}

static void window_check(uint64_t g0, uint64_t n, const char *who)
{
	uint64_t k;

	for (k = 0; k < n; k++)
		visit(g0 + k, 0, who);
}

static int do_protect_call(void *p, size_t len, int prot)
{
	return api_rt ? uswap_mprotect(api_rt, p, len, prot) :
			mprotect(p, len, prot);
}

/* The window PROT_READ or PROT_NONE while reclaim runs, then back. */
static void do_protect(uint64_t *rng)
{
	uint64_t g0, n, k;
	int prot = t_rand(rng) & 1 ? PROT_READ : PROT_NONE;
	char *p;

	window_take(rng, 2048, &g0, &n);
	p = page_addr(g0);
	event("%s pages %llu..%llu", prot == PROT_READ ? "PROT_READ" : "PROT_NONE",
	      (unsigned long long)g0, (unsigned long long)(g0 + n));
	if (do_protect_call(p, n * T_PAGE, prot))
		t_fail("mprotect: %s", strerror(errno));
	sleep_ms(200 + (unsigned)(t_rand(rng) % 600));
	if (prot == PROT_NONE && do_protect_call(p, n * T_PAGE, PROT_READ))
		t_fail("mprotect PROT_READ: %s", strerror(errno));
	window_check(g0, n, prot == PROT_READ ? "protected PROT_READ" :
		     "protected PROT_NONE, then PROT_READ");
	if (do_protect_call(p, n * T_PAGE, PROT_READ | PROT_WRITE))
		t_fail("mprotect read-write: %s", strerror(errno));
	for (k = 0; k < n; k += 2)
		visit(g0 + k, next_version(g0 + k), "written after a protection");
	window_give_back();
	st.protects++;
}

/* Pages of [p, p + n pages) that are not present (pagemap). */
static uint64_t not_present(const char *p, uint64_t n)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	uint64_t e[64], k, done, missing = 0;

	if (fd < 0)
		return 0;
	for (done = 0; done < n; done += 64) {
		uint64_t m = n - done < 64 ? n - done : 64;
		off_t off = (off_t)(((uintptr_t)p / T_PAGE + done) * 8);

		if (pread(fd, e, m * 8, off) != (ssize_t)(m * 8))
			t_fail("pagemap: %s", strerror(errno));
		for (k = 0; k < m; k++)
			missing += !(e[k] >> 63);
	}
	close(fd);
	return missing;
}

/* The window locked while reclaim runs: it stays, then is unlocked. */
static void do_lock(uint64_t *rng)
{
	const char *max = getenv("USWAP_MAX");
	uint64_t g0, n, k, budget = max && *max ? t_size(max) / T_PAGE : 0;
	unsigned i;
	char *p;
	int err;

	if (budget < 64)
		return;
	window_take(rng, budget / 4, &g0, &n);
	p = page_addr(g0);
	event("mlock pages %llu..%llu", (unsigned long long)g0,
	      (unsigned long long)(g0 + n));
	err = api_rt ? uswap_mlock2(api_rt, p, n * T_PAGE, 0) : mlock(p, n * T_PAGE);
	if (err) {
		/* Other processes of the tree may hold locks: no room. */
		if (errno != ENOMEM && errno != EAGAIN)
			t_fail("mlock: %s", strerror(errno));
		st.locks_refused++;
		window_give_back();
		return;
	}
	for (i = 0; i < 4; i++) {
		sleep_ms(50 + (unsigned)(t_rand(rng) % 150));
		if (not_present(p, n))
			t_fail("%llu pages of %llu locked at %p were evicted",
			       (unsigned long long)not_present(p, n),
			       (unsigned long long)n, (void *)p);
	}
	window_check(g0, n, "locked");
	for (k = 0; k < n; k++)
		visit(g0 + k, next_version(g0 + k), "written while locked");
	if (api_rt ? uswap_munlock(api_rt, p, n * T_PAGE) : munlock(p, n * T_PAGE))
		t_fail("munlock: %s", strerror(errno));
	window_give_back();
	st.locks++;
}

/* The file the kernel reads new versions of the window from, written. */
static int pinned_file(uint64_t g0, uint64_t n, uint32_t *vs)
{
	static char chunk[64 * T_PAGE] __attribute__((aligned(4096)));
	const char *dir = getenv("TMPDIR");
	char path[4096];
	uint64_t k, j;
	int fd;

	snprintf(path, sizeof(path), "%s/soak-pinned-%d-XXXXXX",
		 dir && *dir ? dir : "/var/tmp", (int)getpid());
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		t_fail("mkostemp %s: %s", path, strerror(errno));
	unlink(path);
	for (k = 0; k < n; k += 64) {
		uint64_t m = n - k < 64 ? n - k : 64;

		for (j = 0; j < m; j++) {
			vs[k + j] = next_version(g0 + k + j);
			fill(chunk + j * T_PAGE, g0 + k + j, vs[k + j]);
		}
		if (pwrite(fd, chunk, m * T_PAGE, (off_t)(k * T_PAGE)) !=
		    (ssize_t)(m * T_PAGE))
			t_fail("pwrite: %s", strerror(errno));
	}
	if (fdatasync(fd))
		t_fail("fdatasync: %s", strerror(errno));
	return fd;
}

/* The kernel writes new versions into the window, its pages pinned. */
static void do_pinned(uint64_t *rng)
{
	static uint32_t vs[512];
	uint64_t g0, n, k;
	bool uring = t_rand(rng) & 1;
	char *p, path[64];
	int fd, dfd;

	window_take(rng, 512, &g0, &n);
	p = page_addr(g0);
	event("%s into pages %llu..%llu", uring ? "READ_FIXED" : "O_DIRECT read",
	      (unsigned long long)g0, (unsigned long long)(g0 + n));
	fd = pinned_file(g0, n, vs);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (dfd < 0)
		dfd = open(path, O_RDONLY | O_CLOEXEC);	/* no O_DIRECT here */
	if (dfd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	if (uring) {
		struct iovec iov = { p, n * T_PAGE };
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		struct io_uring_sqe *sqe;

		if (io_uring_queue_init(4, &ring, 0))
			uring = false;	/* no io_uring: O_DIRECT instead */
		else if (io_uring_register_buffers(&ring, &iov, 1)) {
			io_uring_queue_exit(&ring);
			uring = false;
		} else {
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_read_fixed(sqe, dfd, p, (unsigned)(n * T_PAGE),
						 0, 0);
			if (io_uring_submit(&ring) != 1 ||
			    io_uring_wait_cqe(&ring, &cqe))
				t_fail("READ_FIXED: cannot submit or wait");
			if (cqe->res != (int)(n * T_PAGE))
				t_fail("READ_FIXED returned %d, not %llu", cqe->res,
				       (unsigned long long)(n * T_PAGE));
			io_uring_cqe_seen(&ring, cqe);
			io_uring_unregister_buffers(&ring);
			io_uring_queue_exit(&ring);
		}
	}
	if (!uring && pread(dfd, p, n * T_PAGE, 0) != (ssize_t)(n * T_PAGE))
		t_fail("pread into managed memory: %s", strerror(errno));
	for (k = 0; k < n; k++) {
		*ver_at(g0 + k) = vs[k];
		st.written_pages++;
	}
	close(dfd);
	close(fd);
	sleep_ms(50 + (unsigned)(t_rand(rng) % 250));
	window_check(g0, n, uring ? "written by READ_FIXED" :
		     "written by an O_DIRECT read");
	window_give_back();
	st.pinned_reads++;
}

/*
 * Fork advice on the window, reclaim free to evict it meanwhile (and
 * MADV_PAGEOUT now and then hurrying it, or a read bringing it back in
 * just before), then a fork: the child
 * (fork_child, fork_advice_inherit) must read zeros there
 * (MADV_WIPEONFORK) or have no mapping there (MADV_DONTFORK).  A quarter
 * of the time the advice is undone before the fork (MADV_KEEPONFORK,
 * MADV_DOFORK) and the child must read the data.  The parent keeps its
 * data either way, and undoes the advice after.  A window smaller than
 * its area splits the area's region for good (area->split).
 */
static void do_fork_advice(uint64_t *rng, bool wipe)
{
	int advice = wipe ? MADV_WIPEONFORK : MADV_DONTFORK;
	int undo = wipe ? MADV_KEEPONFORK : MADV_DOFORK;
	const char *name = wipe ? "MADV_WIPEONFORK" : "MADV_DONTFORK";
	const char *undo_name = wipe ? "MADV_KEEPONFORK" : "MADV_DOFORK";
	bool undo_first = t_rand(rng) % 4 == 0, pageout = t_rand(rng) & 1;
	bool read_in = t_rand(rng) % 3 == 0;
	uint64_t g0, n, off, k, out;
	struct area *a;
	size_t len;
	char *p;
	int err;

	if (nr_children >= MAX_CHILDREN)
		return;
	if (t_rand(rng) % 8 == 0) {
		a = &areas[t_rand(rng) % nr_areas];
		g0 = a->first;
		n = a->len / T_PAGE;
		window_set(g0, n);
	} else {
		window_take(rng, 2048, &g0, &n);
		a = area_of(g0, &off);
	}
	p = page_addr(g0);
	len = n * T_PAGE;
	if (len < a->len)
		a->split = true;
	event("%s pages %llu..%llu (area %ld, %llu of its %llu pages)%s%s%s",
	      name, (unsigned long long)g0, (unsigned long long)(g0 + n),
	      (long)(a - areas), (unsigned long long)n,
	      (unsigned long long)(a->len / T_PAGE),
	      pageout ? ", MADV_PAGEOUT" : "",
	      read_in ? ", read in" : "",
	      undo_first ? ", undone before the fork" : "");
	err = advise(p, len, advice);
	if (err)
		t_fail("madvise(%s) of %p, %zu bytes: %s", name, (void *)p, len,
		       strerror(-err));
	if (pageout && (err = advise(p, len, MADV_PAGEOUT)))
		t_fail("madvise(MADV_PAGEOUT) of %p, %zu bytes: %s", (void *)p,
		       len, strerror(-err));
	sleep_ms(50 + (unsigned)(t_rand(rng) % 450));	/* reclaim may evict it */
	if (read_in)	/* mostly resident at the fork, then */
		window_check(g0, n, "advised, before a fork");
	if (undo_first) {
		err = advise(p, len, undo);
		if (err)
			t_fail("madvise(%s) of %p, %zu bytes: %s", undo_name,
			       (void *)p, len, strerror(-err));
		st.fork_advice_undone++;
	}
	out = not_present(p, n);
	fork_advice.g0 = g0;
	fork_advice.n = n;
	fork_advice.advice = undo_first ? 0 : advice;
	event("fork with %s on pages %llu..%llu, %llu of them swapped out",
	      undo_first ? "no advice" : name, (unsigned long long)g0,
	      (unsigned long long)(g0 + n), (unsigned long long)out);
	do_fork(rng);
	memset(&fork_advice, 0, sizeof(fork_advice));
	window_check(g0, n, wipe ? "the parent's window, MADV_WIPEONFORK at a fork" :
		     "the parent's window, MADV_DONTFORK at a fork");
	if (!undo_first && (err = advise(p, len, undo)))
		t_fail("madvise(%s) of %p, %zu bytes: %s", undo_name, (void *)p,
		       len, strerror(-err));
	for (k = 0; k < n; k += 3)
		visit(g0 + k, next_version(g0 + k), "written after fork advice");
	window_give_back();
	if (wipe)
		st.wipeonforks++;
	else
		st.dontforks++;
}

/*
 * MADV_COLD or MADV_PAGEOUT on a run of an area: hints, after which only
 * the data must be the same.  Half the time the threads keep off the run
 * and it is checked after a while (reclaim free to evict it meanwhile);
 * else the threads go on using it, their writes racing the
 * write-protection MADV_PAGEOUT arms, and they check it.
 */
static void do_cold(uint64_t *rng)
{
	bool pageout = t_rand(rng) & 1, own = t_rand(rng) & 1;
	const char *name = pageout ? "MADV_PAGEOUT" : "MADV_COLD";
	struct area *a = &areas[t_rand(rng) % nr_areas];
	uint64_t pages = a->len / T_PAGE, g0, n;
	int err;

	if (own) {
		window_take(rng, 2048, &g0, &n);
	} else {
		n = 1 + t_rand(rng) % pages;
		g0 = a->first + t_rand(rng) % (pages - n + 1);
	}
	event("%s pages %llu..%llu%s", name, (unsigned long long)g0,
	      (unsigned long long)(g0 + n), own ? "" : " (the threads go on there)");
	err = advise(page_addr(g0), n * T_PAGE, pageout ? MADV_PAGEOUT : MADV_COLD);
	if (err)
		t_fail("madvise(%s) of %p, %llu bytes: %s", name,
		       (void *)page_addr(g0), (unsigned long long)(n * T_PAGE),
		       strerror(-err));
	if (own) {
		sleep_ms(50 + (unsigned)(t_rand(rng) % 350));
		window_check(g0, n, pageout ? "after MADV_PAGEOUT" : "after MADV_COLD");
		window_give_back();
	}
	st.cold_hints++;
}

/* The main thread's part of the random phase: events until the deadline. */
static void main_loop(uint64_t *rng)
{
	double end = now() + cfg.seconds, next_fork, next_exec, next_api;
	unsigned forks = 0, execs = 0, apis = 0;
	/* The advice events' own draws: rng's stay those of before them. */
	uint64_t adv_rng = mix(cfg.seed ^ 0x616476696365ull);

	next_fork = now() + cfg.seconds * 0.6 * (double)(t_rand(rng) % 100) / 100 / (cfg.forks + 1);
	next_exec = now() + cfg.seconds * 0.6 * (double)(t_rand(rng) % 100) / 100 / (cfg.execs + 1);
	next_api = now() + cfg.seconds * 0.6 * (double)(t_rand(rng) % 100) / 100 / (cfg.apis + 1);
	while (now() < end) {
		unsigned e = (unsigned)(t_rand(rng) % 100);

		sleep_ms(200 + (unsigned)(t_rand(rng) % 1300));
		reap(false);
		atomic_store(&hot_len, npages / 8 + 64);
		if (e < 30)
			atomic_store(&hot_start, t_rand(rng) % npages);
		if (forks < cfg.forks && now() >= next_fork) {
			event("fork");
			do_fork(rng);
			forks++;
			next_fork = now() + cfg.seconds * 0.8 / (cfg.forks + 1);
			continue;
		}
		if (execs < cfg.execs && now() >= next_exec) {
			event("exec");
			do_exec(rng);
			execs++;
			next_exec = now() + cfg.seconds * 0.8 / (cfg.execs + 1);
			continue;
		}
		if (apis < cfg.apis && now() >= next_api) {
			event("api child");
			do_api(rng);
			apis++;
			next_api = now() + cfg.seconds * 0.8 / (cfg.apis + 1);
			continue;
		}
		if (e >= 30 && e < 40) {
			pthread_rwlock_wrlock(&pause_lock);
			event("full check");
			check_all("full check (threads paused)");
			st.full_checks++;
			pthread_rwlock_unlock(&pause_lock);
		} else if (e >= 40 && e < 48) {
			pthread_rwlock_wrlock(&pause_lock);
			do_dontneed(rng);
			pthread_rwlock_unlock(&pause_lock);
		} else if (e >= 48 && e < 54 && !cfg.lost && !cfg.no_mremap) {
			pthread_rwlock_wrlock(&pause_lock);
			do_mremap(rng);
			pthread_rwlock_unlock(&pause_lock);
		} else if (e >= 54 && e < 60 && !cfg.lost) {
			do_protect(rng);
		} else if (e >= 60 && e < 65 && !cfg.lost) {
			do_lock(rng);
		} else if (e >= 65 && e < 71 && !cfg.lost) {
			do_pinned(rng);
		} else if (e >= 71 && e < 75 && !cfg.lost) {
			do_fork_advice(&adv_rng, true);
		} else if (e >= 75 && e < 79 && !cfg.lost) {
			do_fork_advice(&adv_rng, false);
		} else if (e >= 79 && e < 85 && !cfg.lost) {
			do_cold(&adv_rng);
		}
	}
}

/*
 * --api: a runtime of this process's own, from the USWAP_* environment
 * uswap run set.  The main process makes the tree's budget and passes it
 * on in USWAP_TREE_FD; an exec child joins it; an api child (own) has a
 * budget of its own and swap files of its own beside the named ones.
 */
static void api_start(bool own)
{
	const char *tree = getenv("USWAP_TREE_FD");
	char why[256], spec[1024], num[16], *line, *save, *specs;
	struct uswap_options o;
	int err, fd;

	uswap_options_init(&o);
	if (uswap_options_from_env(&o, why, sizeof(why)))
		t_fail("options from the environment: %s", why);
	if (own && o.swap[0] && !(o.flags & USWAP_OPT_NO_SWAP_FILE)) {
		specs = strdup(o.swap);
		uswap_options_set(&o, "swap", "file", NULL, 0);
		for (line = strtok_r(specs, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			const char *comma = strchr(line, ',');
			int plen = comma ? (int)(comma - line) : (int)strlen(line);

			snprintf(spec, sizeof(spec), "%.*s.api%s", plen, line,
				 comma ? comma : "");
			if (uswap_options_set(&o, "swap", spec, why, sizeof(why)))
				t_fail("swap %s: %s", spec, why);
		}
		free(specs);
	}
	if (!own && !strcmp(cfg.role, "exec") && tree && *tree) {
		o.flags |= USWAP_OPT_JOIN_TREE;
		o.tree_fd = atoi(tree);
	}
	err = uswap_runtime_create(&o, &api_rt);
	if (err)
		t_fail("uswap_runtime_create: %s", strerror(-err));
	if (!strcmp(cfg.role, "main")) {
		fd = uswap_runtime_tree_fd(api_rt);
		if (fd < 0)
			t_fail("uswap_runtime_tree_fd: %s", strerror(-fd));
		/* Close-on-exec: every exec of this program joins, so it goes. */
		if (fcntl(fd, F_SETFD, 0))
			t_fail("fcntl: %s", strerror(errno));
		snprintf(num, sizeof(num), "%d", fd);
		setenv("USWAP_TREE_FD", num, 1);
	}
}

/*
 * No mapping of the runtime may outlive it: its one named mapping is the
 * tree's budget (the memfd "uswap-tree-PID-N"; the program's own path
 * may say "uswap" too).
 */
static void maps_check(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (!f)
		t_fail("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/memfd:uswap-tree-")) {
			st.fd_leaks++;
			fprintf(stderr, "LEAK: role %s pid %d: a mapping outlived the runtime: %s",
				cfg.role, (int)getpid(), line);
		}
	fclose(f);
}

/* The named swap files (an api child's: with .api) are gone. */
static void files_check(const char *suffix)
{
	const char *s = getenv("USWAP_SWAP");
	char path[1024];

	while (s && *s && strcmp(s, "none")) {
		size_t n = strcspn(s, ",\n");

		snprintf(path, sizeof(path), "%.*s%s", (int)n, s, suffix);
		if (!access(path, F_OK)) {
			st.fd_leaks++;
			fprintf(stderr, "LEAK: role %s pid %d: swap file %s outlived the runtime\n",
				cfg.role, (int)getpid(), path);
		}
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
}

/*
 * --api, at the end: publish the counters where uswap run merges them
 * (there is no preload library to do it), destroy the runtime, and check
 * that it took everything of its with it.
 */
static void api_finish(void)
{
	const char *dir = getenv("USWAP_STATS_DIR");
	char path[4096];
	int fd;

	if (dir && *dir) {
		snprintf(path, sizeof(path), "%s/%d.json", dir, (int)getpid());
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || uswap_stats_write_json(api_rt, fd))
			t_fail("writing %s failed", path);
		close(fd);
	}
	uswap_runtime_destroy(api_rt);
	api_rt = NULL;
	fd_check(&fds_start, "after uswap_runtime_destroy, against before its creation");
	maps_check();
	/* The main's named files go once every process of the tree is gone. */
	if (!strcmp(cfg.role, "api"))
		files_check(".api");
	else if (!strcmp(cfg.role, "main"))
		files_check("");
}

static void usage(void)
{
	fprintf(stderr, "usage: worker [--role main|fork|exec|api] [--seed N] [--size S] [--areas N] [--threads N] [--seconds N] [--forks N] [--execs N] [--apis N] [--lost] [--api] [--no-mremap] [--folio S]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	const char *folio = getenv("USWAP_FOLIO");
	int i;

	if (folio && *folio)
		cfg.folio = t_size(folio);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--lost")) {
			cfg.lost = true;
			continue;
		}
		if (!strcmp(a, "--api")) {
			cfg.api = true;
			continue;
		}
		if (!strcmp(a, "--no-mremap")) {
			cfg.no_mremap = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--role"))
			cfg.role = v;
		else if (!strcmp(a, "--seed"))
			cfg.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--size"))
			cfg.size = t_size(v);
		else if (!strcmp(a, "--areas"))
			cfg.areas = (unsigned)atoi(v);
		else if (!strcmp(a, "--threads"))
			cfg.threads = (unsigned)atoi(v);
		else if (!strcmp(a, "--seconds"))
			cfg.seconds = (unsigned)atoi(v);
		else if (!strcmp(a, "--forks"))
			cfg.forks = (unsigned)atoi(v);
		else if (!strcmp(a, "--execs"))
			cfg.execs = (unsigned)atoi(v);
		else if (!strcmp(a, "--apis"))
			cfg.apis = (unsigned)atoi(v);
		else if (!strcmp(a, "--folio"))
			cfg.folio = t_size(v);
		else
			usage();
	}
	if (cfg.threads < 1 || cfg.threads > MAX_THREADS || cfg.areas < 1 ||
	    cfg.areas > MAX_AREAS || cfg.size < (cfg.areas << 20) ||
	    (cfg.folio & (cfg.folio - 1)) || cfg.folio < T_PAGE)
		usage();
	if (cfg.lost)
		cfg.forks = cfg.execs = cfg.apis = 0;
	if (!strcmp(cfg.role, "api"))
		cfg.api = true;
}

int main(int argc, char **argv)
{
	struct fdset fds_filled;
	uint64_t rng;
	unsigned i;

	parse(argc, argv);
	if (cfg.api && getenv("LD_PRELOAD")) {
		/* The library's runtime only: start again without the preload. */
		unsetenv("LD_PRELOAD");
		execv("/proc/self/exe", argv);
		t_fail("exec /proc/self/exe: %s", strerror(errno));
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	atexit(at_exit);
	rng = mix(cfg.seed);
	t_start = now();
	sigbus_setup();
	fd_snapshot(&fds_start);
	if (cfg.api)
		api_start(!strcmp(cfg.role, "api"));
	make_areas(&rng);
	atomic_store(&hot_len, npages / 8 + 64);
	threads_run(fill_main, cfg.threads);
	threads_join(cfg.threads);
	check_all("after the first fill");
	fd_snapshot(&fds_filled);

	threads_run(thread_main, cfg.threads);
	main_loop(&rng);
	threads_join(cfg.threads);
	reap(true);

	check_all("final check");
	check_all("final check, again");
	for (i = 0; i < nr_areas; i++)
		unmap_area(&areas[i]);
	if (api_rt)
		api_finish();
	else
		fd_check(&fds_filled, "between the first fill and the end");
	for (i = 0; i <= (npages >> CHUNK_SHIFT); i++)
		free(ver[i]);
	report("ok");
	finished = true;
	return 0;
}
