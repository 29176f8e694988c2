// SPDX-License-Identifier: MIT
/*
 * fork_share.c - memory shared by fork is charged once (src/fork_share.c).
 *
 * A parent fills 32 MiB under a 128 MiB budget (all resident), then:
 *  1. forks three children that read everything: the tree's charge stays
 *     at 32 MiB (it was 128 MiB when each child was charged its copy),
 *     all of it shared;
 *  2. the children rewrite the first half each: 32 + 3 x 16 MiB;
 *  3. the children end (their copies go); the parent rewrites everything:
 *     it maps every page alone now, so nothing new is charged, and the
 *     shared charge is gone; the first write finds so and makes every
 *     folio the parent's at once (few write-protect faults, not one per
 *     folio);
 *  4. forks child D, which reads everything; the budget is lowered to
 *     16 MiB: both evict, and the charge falls under it (the second
 *     process to evict a shared page frees it); D and the parent read
 *     everything back, D ends, the parent rewrites everything: nothing is
 *     left shared, and the charge is the parent's own again.
 * Every page is checked by content throughout.
 *
 * Usage: fork_share [FOLIO] [COMPRESSOR|off]
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "memcontrol.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"
#include "testlib.h"

#define MB (1ul << 20)
#define SIZE (32 * MB)
#define NPAGES (SIZE / T_PAGE)
#define KIDS 3

static struct uswap_runtime *rt;
static char *mem;

static void check_range(const char *who, uint64_t first, uint64_t n,
			uint64_t version)
{
	uint64_t p, got;

	for (p = first; p < first + n; p++)
		if (t_check(mem + p * T_PAGE, p, version)) {
			got = 0;
			t_header(mem + p * T_PAGE, p, &got);
			t_fail("%s: page %llu: wanted version %llu, header says %llu",
			       who, (unsigned long long)p,
			       (unsigned long long)version,
			       (unsigned long long)got);
		}
}

static void fill(uint64_t first, uint64_t n, uint64_t version)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

/*
 * The tree's shared count covers at least the parent's resident folios
 * still marked shared: a page unshared twice (both processes finding
 * themselves its last mapper) would leave it short.
 */
static void check_shared_count(const char *when)
{
	uint64_t held = 0;
	unsigned n;
	uint32_t i, p;

	pthread_rwlock_rdlock(&rt->op_lock);
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];

		for (i = 0; i < r->nr_folios; i++) {
			uint32_t fl = atomic_load(&r->folios[i].flags);
			uintptr_t a;
			size_t len;

			folio_range(r, i, &a, &len, &p);
			if (folio_state(fl) == FOLIO_RESIDENT && (fl & F_SHARED))
				held += len >> PAGE_SHIFT;
		}
	}
	pthread_rwlock_unlock(&rt->op_lock);
	if (atomic_load(&rt->memcg->shared) < held)
		t_fail("%s: the parent holds %llu shared pages, the tree counts %llu",
		       when, (unsigned long long)held,
		       (unsigned long long)atomic_load(&rt->memcg->shared));
}

static uint64_t tree_mb(void) { return atomic_load(&rt->memcg->resident) >> 8; }
static uint64_t shared_mb(void) { return atomic_load(&rt->memcg->shared) >> 8; }

/* The tree's charge (MiB) within [lo, hi], and the shared part exactly sh. */
static void expect(const char *when, uint64_t lo, uint64_t hi, uint64_t sh)
{
	uint64_t t = tree_mb(), s = shared_mb();

	printf("  %s: tree charge %llu MiB, shared %llu MiB\n", when,
	       (unsigned long long)t, (unsigned long long)s);
	if (t < lo || t > hi)
		t_fail("%s: the tree is charged %llu MiB, wanted %llu-%llu",
		       when, (unsigned long long)t, (unsigned long long)lo,
		       (unsigned long long)hi);
	if (s != sh)
		t_fail("%s: %llu MiB charged as shared, wanted %llu", when,
		       (unsigned long long)s, (unsigned long long)sh);
}

static void say(int fd) { if (write(fd, "x", 1) != 1) t_fail("pipe write"); }
static void hear(int fd, const char *what)
{
	char x;

	if (read(fd, &x, 1) != 1)
		t_fail("%s: no word", what);
}

static void wait_ok(pid_t pid, const char *who)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		t_fail("%s failed", who);
}

/* Child k: read all, say so; on the word, rewrite the first half, say so;
   on the word, end. */
static void kid(int k, int up, int down)
{
	char who[32];

	snprintf(who, sizeof(who), "child %d", k);
	check_range(who, 0, NPAGES, 1);
	say(up);
	hear(down, who);
	fill(0, NPAGES / 2, 10 + (uint64_t)k);
	check_range(who, 0, NPAGES / 2, 10 + (uint64_t)k);
	check_range(who, NPAGES / 2, NPAGES / 2, 1);
	say(up);
	hear(down, who);
	uswap_runtime_destroy(rt);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS];
	int up[2], down[2], k, tries;
	uint64_t wp;
	pid_t kids[KIDS], d;

	uswap_options_init(&opt);
	opt.max = 128 * MB;
	t_folio_pool_args(&opt, argc, argv, 4096);
	rt = t_runtime(&opt);
	if (!rt->have_wp || rt->pagemap_fd < 0)
		t_skip("no userfaultfd write-protection or no /proc/self/pagemap");
	mem = uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	fill(0, NPAGES, 1);
	printf("fork_share %s %s:\n", argc > 1 ? argv[1] : "4K",
	       argc > 2 ? argv[2] : "off");
	expect("filled", 32, 33, 0);

	if (pipe(up) || pipe(down))
		t_fail("pipe");
	for (k = 0; k < KIDS; k++) {
		kids[k] = fork();
		if (kids[k] < 0)
			t_fail("fork: %s", strerror(errno));
		if (kids[k] == 0) {
			/* The parent's ends: a child sees EOF when it dies. */
			close(up[0]);
			close(down[1]);
			kid(k, up[1], down[0]);
		}
	}
	for (k = 0; k < KIDS; k++)
		hear(up[0], "a child's read");
	expect("3 children read all", 32, 33, 32);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (v[USWAP_FORK_SHARED_BYTES] != SIZE)
		t_fail("fork_shared_bytes says %llu", (unsigned long long)v[USWAP_FORK_SHARED_BYTES]);
	if (v[USWAP_PSWPOUT])
		t_fail("the parent was made to evict %llu pages", (unsigned long long)v[USWAP_PSWPOUT]);

	for (k = 0; k < KIDS; k++)
		say(down[1]);
	for (k = 0; k < KIDS; k++)
		hear(up[0], "a child's write");
	expect("3 children rewrote half", 80, 81, 32);
	check_range("parent", 0, NPAGES, 1);

	for (k = 0; k < KIDS; k++)
		say(down[1]);
	for (k = 0; k < KIDS; k++)
		wait_ok(kids[k], "a child");
	expect("the children ended", 32, 33, 32);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	wp = v[USWAP_WP_FAULT];
	fill(0, NPAGES, 2);
	expect("the parent rewrote all", 32, 33, 0);
	/* The first write found its folio unshared and swept the rest. */
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("  write-protect faults for the rewrite: %llu, for %llu folios\n",
	       (unsigned long long)(v[USWAP_WP_FAULT] - wp),
	       (unsigned long long)(SIZE / opt.folio_size));
	if (v[USWAP_WP_FAULT] - wp > SIZE / opt.folio_size / 4)
		t_fail("the parent took a fault per folio it held alone");

	d = fork();
	if (d < 0)
		t_fail("fork: %s", strerror(errno));
	if (d == 0) {
		close(up[0]);
		close(down[1]);
		check_range("child D", 0, NPAGES, 2);
		say(up[1]);
		hear(down[0], "child D");
		check_range("child D after eviction", 0, NPAGES, 2);
		uswap_runtime_destroy(rt);
		_exit(0);
	}
	hear(up[0], "child D's read");
	expect("child D read all", 32, 33, 32);
	/* A smaller budget, as a cgroup's limit lowered: both reclaim. */
	rt->memcg->low = 10 * MB >> PAGE_SHIFT;
	rt->memcg->high = 12 * MB >> PAGE_SHIFT;
	rt->memcg->max = 16 * MB >> PAGE_SHIFT;
	memcg_kick_reclaim(rt->memcg);
	for (tries = 0; tries < 400 && tree_mb() > 12; tries++)
		usleep(50 * 1000);
	printf("  budget lowered to 16 MiB: tree charge %llu MiB, shared %llu MiB after %d ms\n",
	       (unsigned long long)tree_mb(), (unsigned long long)shared_mb(),
	       tries * 50);
	if (tree_mb() > 12)
		t_fail("the shared pages were not freed: the tree stays at %llu MiB",
		       (unsigned long long)tree_mb());
	check_shared_count("after eviction");
	check_range("parent after eviction", 0, NPAGES, 2);
	check_shared_count("after reading back");
	say(down[1]);
	wait_ok(d, "child D");
	check_shared_count("after child D ended");
	fill(0, NPAGES, 3);
	check_range("parent at the end", 0, NPAGES, 3);
	if (shared_mb() || atomic_load(&rt->memcg->shared))
		t_fail("%llu pages are still charged as shared",
		       (unsigned long long)atomic_load(&rt->memcg->shared));
	if (atomic_load(&rt->memcg->resident) != memcg_own_pages(rt))
		t_fail("the tree is charged %llu pages, the parent %llu",
		       (unsigned long long)atomic_load(&rt->memcg->resident),
		       (unsigned long long)memcg_own_pages(rt));
	printf("  at the end: tree charge %llu MiB, all of it the parent's\n",
	       (unsigned long long)tree_mb());
	uswap_runtime_destroy(rt);
	return 0;
}
