// SPDX-License-Identifier: MIT
/*
 * fork_advice.c - madvise advice on managed memory does what the kernel
 * does without uswap, whether the memory is swapped out or resident.
 *
 * A region of 32 MiB is filled under an 8 MiB budget (16 MiB with 2M
 * folios): range EV (about 4 MiB near its start) is swapped out, range
 * RES (about 2 MiB near its end) is resident.  Their ends are pages, not folios, apart from folio
 * boundaries.  Then, by MODE:
 *
 *   wipe      MADV_WIPEONFORK on EV and RES: a child reads zeros there
 *             and the rest as its parent's, a grandchild of it zeros
 *             again (the advice is inherited); MADV_KEEPONFORK on RES:
 *             the next child reads RES as its parent's;
 *   dontfork  MADV_DONTFORK on EV and RES: a child has no mapping there,
 *             the rest as its parent's, its memory still managed;
 *             MADV_DOFORK on RES: the next child has it again;
 *   remove    MADV_REMOVE: refused as the kernel refuses it on private
 *             anonymous memory, and nothing is lost;
 *   populate  with room made in the budget (MADV_DONTNEED of 12 MiB),
 *             MADV_POPULATE_READ on 1 MiB of EV, MADV_POPULATE_WRITE on
 *             the next 1 MiB and on never-touched memory: the pages are
 *             resident after the call, read through the fault path,
 *             byte-exact;
 *   cold, pageout
 *             MADV_COLD / MADV_PAGEOUT on a range written after older
 *             memory, then more memory is written: the hinted range goes
 *             out before the older memory (a budget that evicts less
 *             than the older memory holds);
 *   dump      MADV_DONTDUMP and MADV_DODUMP: accepted, nothing changes
 *             (advice that changes no flag splits no region);
 *   guard     MADV_GUARD_INSTALL: refused (EINVAL), nothing lost.
 *
 * Each mode first checks the kernel's own answer on an unmanaged mapping
 * (and skips when the kernel does not know the advice).  At the end the
 * slots in use are those the parent's tables name, and the budget has one
 * member left.
 *
 * Usage: fork_advice MODE [FOLIO] [COMPRESSOR|off]
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "uswap.h"
#include "testlib.h"
#include "slot_use.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL	102
#endif

#define MB (1ul << 20)
#define SIZE (32 * MB)
#define NPAGES (SIZE / T_PAGE)

static struct uswap_runtime *rt;
static char *mem;

/* The two ranges, in pages of mem. */
#define EV_FIRST	(2 * MB / T_PAGE + 3)
#define EV_END		(6 * MB / T_PAGE + 5)
#define RES_FIRST	(28 * MB / T_PAGE + 7)
#define RES_END		(30 * MB / T_PAGE + 1)

static bool in_ev(uint64_t p) { return p >= EV_FIRST && p < EV_END; }
static bool in_res(uint64_t p) { return p >= RES_FIRST && p < RES_END; }

static bool page_zero(const char *p)
{
	static const char zero[T_PAGE];

	return !memcmp(p, zero, T_PAGE);
}

static void fill(uint64_t first, uint64_t end, uint64_t version)
{
	uint64_t p;

	for (p = first; p < end; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

/* Pages [first, end) hold version, or zeros where zero(p) says so. */
static void check(const char *who, uint64_t first, uint64_t end,
		  uint64_t version, bool (*zero)(uint64_t))
{
	uint64_t p, bad = 0, first_bad = 0;

	for (p = first; p < end; p++) {
		bool ok = zero && zero(p) ? page_zero(mem + p * T_PAGE) :
			  !t_check(mem + p * T_PAGE, p, version);

		if (!ok && !bad++)
			first_bad = p;
	}
	if (bad)
		t_fail("%s: %llu pages wrong, the first page %llu (%s)", who,
		       (unsigned long long)bad, (unsigned long long)first_bad,
		       zero && zero(first_bad) ? "wanted zeros" : "wanted the data");
}

/* How many of pages [first, end) of mem are resident (mincore). */
static uint64_t resident(uint64_t first, uint64_t end)
{
	static unsigned char vec[NPAGES];
	uint64_t p, n = 0;

	if (mincore(mem + first * T_PAGE, (end - first) * T_PAGE, vec))
		t_fail("mincore: %s", strerror(errno));
	for (p = 0; p < end - first; p++)
		n += vec[p] & 1;
	return n;
}

/* Wait until reclaim rests (nothing stolen for 200 ms; 10 s at most). */
static void settle(void)
{
	uint64_t v[USWAP_NR_COUNTERS], last = UINT64_MAX;
	int tries, quiet = 0;

	for (tries = 0; tries < 200 && quiet < 4; tries++) {
		uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
		quiet = v[USWAP_PGSTEAL] == last ? quiet + 1 : 0;
		last = v[USWAP_PGSTEAL];
		usleep(50000);
	}
}

/* Is [addr, addr+len) mapped at all?  (msync fails with ENOMEM if not.) */
static bool mapped(const void *addr, size_t len)
{
	return msync((void *)addr, len, MS_ASYNC) == 0 || errno != ENOMEM;
}

/*
 * Does [addr, addr + len) hold the byte c throughout?  Read through
 * /proc/self/mem, which neither faults nor minds protections: a range
 * that is not mapped does not.  (A fork child's runtime maps memory of
 * its own, and may be given the range its parent's MADV_DONTFORK left
 * free: what matters is that the parent's data is not there.)
 */
static bool holds(const void *addr, size_t len, unsigned char c)
{
	unsigned char buf[T_PAGE];
	bool all = true;
	size_t off, k;
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		t_fail("open /proc/self/mem: %s", strerror(errno));
	for (off = 0; all && off < len; off += T_PAGE) {
		if (pread(fd, buf, T_PAGE, (off_t)((uintptr_t)addr + off)) != T_PAGE) {
			all = false;
			break;
		}
		for (k = 0; k < T_PAGE; k++)
			if (buf[k] != c)
				all = false;
	}
	close(fd);
	return all;
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		t_fail("child %d killed by signal %d", (int)pid, WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* The children ended: their slots and members are gone (bounded wait). */
static void check_nothing_left(void)
{
	uint64_t inuse = 0, named = 0;
	int tries;

	for (tries = 0; tries < 200; tries++) {
		t_slot_use(rt, &inuse, &named);
		if (inuse == named && atomic_load(&rt->memcg->nr_live) == 1)
			break;
		usleep(50000);
	}
	if (inuse != named)
		t_fail("%llu slots in use but the parent names %llu",
		       (unsigned long long)inuse, (unsigned long long)named);
	if (atomic_load(&rt->memcg->nr_live) != 1)
		t_fail("%u members left in the budget",
		       atomic_load(&rt->memcg->nr_live));
}

static int advise(uint64_t first, uint64_t end, int advice)
{
	return uswap_madvise(rt, mem + first * T_PAGE, (end - first) * T_PAGE,
			     advice);
}

/* The kernel's answer on unmanaged memory: the advice is known, or skip. */
static void *kernel_mapping(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	memset(p, 0x5a, len);
	return p;
}

static void kernel_knows(int advice, const char *name)
{
	void *p = kernel_mapping(T_PAGE);

	if (madvise(p, T_PAGE, advice) && errno == EINVAL) {
		char why[96];

		snprintf(why, sizeof(why), "the kernel does not know %s", name);
		t_skip(why);
	}
	munmap(p, T_PAGE);
}

/* The child's runtime carries on: usable, nothing read in at fork. */
static void check_child_managed(const char *who)
{
	uint64_t v[USWAP_NR_COUNTERS];

	if (!uswap_runtime_usable(rt))
		t_fail("%s: the runtime did not survive fork", who);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (v[USWAP_FORK_MATERIALIZED])
		t_fail("%s: %llu pages were read in at fork: its memory is no longer managed",
		       who, (unsigned long long)v[USWAP_FORK_MATERIALIZED]);
}

static bool wiped_both(uint64_t p) { return in_ev(p) || in_res(p); }
static bool wiped_ev(uint64_t p) { return in_ev(p); }

static void mode_wipe(void)
{
	pid_t c, g;
	char *k;

	/* The kernel: zeros in the child, the parent's data in the parent. */
	kernel_knows(MADV_WIPEONFORK, "MADV_WIPEONFORK");
	k = kernel_mapping(4 * T_PAGE);
	if (madvise(k, 4 * T_PAGE, MADV_WIPEONFORK))
		t_fail("kernel: MADV_WIPEONFORK: %s", strerror(errno));
	c = fork();
	if (c == 0)
		_exit(k[0] == 0 && k[4 * T_PAGE - 1] == 0 ? 0 : 1);
	if (wait_child(c) || k[0] != 0x5a)
		t_fail("the kernel's MADV_WIPEONFORK is not what this test expects");

	if (advise(EV_FIRST, EV_END, MADV_WIPEONFORK) ||
	    advise(RES_FIRST, RES_END, MADV_WIPEONFORK))
		t_fail("MADV_WIPEONFORK: %s", strerror(errno));
	c = fork();
	if (c < 0)
		t_fail("fork: %s", strerror(errno));
	if (c == 0) {
		check_child_managed("child");
		check("child after fork", 0, NPAGES, 1, wiped_both);
		fill(EV_FIRST, EV_END, 3);
		fill(RES_FIRST, RES_END, 3);
		check("child after writing the wiped ranges", EV_FIRST, EV_END, 3, NULL);
		check("child after writing the wiped ranges", RES_FIRST, RES_END, 3, NULL);
		check("child after writing the wiped ranges", 0, EV_FIRST, 1, NULL);
		g = fork();
		if (g == 0) {
			check_child_managed("grandchild");
			check("grandchild (the advice is inherited)", 0, NPAGES, 1,
			      wiped_both);
			uswap_runtime_destroy(rt);
			_exit(0);
		}
		if (g < 0 || wait_child(g))
			t_fail("grandchild failed");
		check("child after the grandchild", EV_FIRST, EV_END, 3, NULL);
		uswap_runtime_destroy(rt);
		_exit(0);
	}
	if (wait_child(c))
		t_fail("child failed");
	check("parent after the child", 0, NPAGES, 1, NULL);

	/* Keep RES again: the next child has its data there. */
	if (advise(RES_FIRST, RES_END, MADV_KEEPONFORK))
		t_fail("MADV_KEEPONFORK: %s", strerror(errno));
	c = fork();
	if (c == 0) {
		check_child_managed("second child");
		check("second child (RES kept, EV wiped)", 0, NPAGES, 1, wiped_ev);
		uswap_runtime_destroy(rt);
		_exit(0);
	}
	if (c < 0 || wait_child(c))
		t_fail("second child failed");
	check("parent at the end", 0, NPAGES, 1, NULL);
}

static void mode_dontfork(void)
{
	uint64_t v[USWAP_NR_COUNTERS], managed;
	pid_t c;
	char *k;

	kernel_knows(MADV_DONTFORK, "MADV_DONTFORK");
	k = kernel_mapping(4 * T_PAGE);
	if (madvise(k, 4 * T_PAGE, MADV_DONTFORK))
		t_fail("kernel: MADV_DONTFORK: %s", strerror(errno));
	c = fork();
	if (c == 0)
		_exit(holds(k, 4 * T_PAGE, 0x5a) ? 1 : 0);
	if (wait_child(c) || k[0] != 0x5a)
		t_fail("the kernel's MADV_DONTFORK is not what this test expects");

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	managed = v[USWAP_MANAGED_BYTES];
	if (advise(EV_FIRST, EV_END, MADV_DONTFORK) ||
	    advise(RES_FIRST, RES_END, MADV_DONTFORK))
		t_fail("MADV_DONTFORK: %s", strerror(errno));
	c = fork();
	if (c < 0)
		t_fail("fork: %s", strerror(errno));
	if (c == 0) {
		check_child_managed("child");
		if (mapped(mem + EV_FIRST * T_PAGE, (EV_END - EV_FIRST) * T_PAGE) ||
		    mapped(mem + RES_FIRST * T_PAGE, (RES_END - RES_FIRST) * T_PAGE))
			t_fail("child: a range advised MADV_DONTFORK is mapped");
		check("child", 0, EV_FIRST, 1, NULL);
		check("child", EV_END, RES_FIRST, 1, NULL);
		check("child", RES_END, NPAGES, 1, NULL);
		uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
		if (v[USWAP_MANAGED_BYTES] != managed -
		    (EV_END - EV_FIRST + RES_END - RES_FIRST) * T_PAGE)
			t_fail("child: %llu bytes managed, wanted %llu",
			       (unsigned long long)v[USWAP_MANAGED_BYTES],
			       (unsigned long long)(managed - (EV_END - EV_FIRST +
					RES_END - RES_FIRST) * T_PAGE));
		/* Its memory is still managed: rewrite it all, under the budget. */
		fill(0, EV_FIRST, 4);
		fill(EV_END, RES_FIRST, 4);
		check("child after rewriting", 0, EV_FIRST, 4, NULL);
		check("child after rewriting", EV_END, RES_FIRST, 4, NULL);
		uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
		if (!v[USWAP_PSWPOUT] && !v[USWAP_ZSWPOUT])
			t_fail("child: nothing swapped out while rewriting 24 MiB under 8");
		uswap_runtime_destroy(rt);
		_exit(0);
	}
	if (wait_child(c))
		t_fail("child failed");
	check("parent after the child", 0, NPAGES, 1, NULL);

	if (advise(RES_FIRST, RES_END, MADV_DOFORK))
		t_fail("MADV_DOFORK: %s", strerror(errno));
	c = fork();
	if (c == 0) {
		check_child_managed("second child");
		if (mapped(mem + EV_FIRST * T_PAGE, (EV_END - EV_FIRST) * T_PAGE))
			t_fail("second child: EV is mapped");
		check("second child (RES forked again)", RES_FIRST, RES_END, 1, NULL);
		check("second child", 0, EV_FIRST, 1, NULL);
		uswap_runtime_destroy(rt);
		_exit(0);
	}
	if (c < 0 || wait_child(c))
		t_fail("second child failed");
	check("parent at the end", 0, NPAGES, 1, NULL);
}

static void mode_remove(void)
{
	int kerr, err;
	char *k;

	k = kernel_mapping(4 * T_PAGE);
	kerr = madvise(k, 4 * T_PAGE, MADV_REMOVE) ? errno : 0;
	if (k[0] != 0x5a)
		t_fail("the kernel's MADV_REMOVE dropped private anonymous memory");
	err = advise(EV_FIRST, EV_END, MADV_REMOVE) ? errno : 0;
	if (err != kerr)
		t_fail("MADV_REMOVE on swapped-out memory: %s, the kernel says %s",
		       strerror(err), strerror(kerr));
	err = advise(RES_FIRST, RES_END, MADV_REMOVE) ? errno : 0;
	if (err != kerr)
		t_fail("MADV_REMOVE on resident memory: %s, the kernel says %s",
		       strerror(err), strerror(kerr));
	check("after MADV_REMOVE", 0, NPAGES, 1, NULL);
}

static bool discarded(uint64_t p)
{
	return p >= 16 * MB / T_PAGE && p < 28 * MB / T_PAGE;
}

static void mode_populate(void)
{
	uint64_t v0[USWAP_NR_COUNTERS], v[USWAP_NR_COUNTERS];
	uint64_t half = EV_FIRST + 256, end = half + 256, n;
	char *fresh;

	kernel_knows(MADV_POPULATE_READ, "MADV_POPULATE_READ");
	/* Room in the budget first: what comes in stays (no reclaim). */
	if (advise(16 * MB / T_PAGE, 28 * MB / T_PAGE, MADV_DONTNEED))
		t_fail("MADV_DONTNEED: %s", strerror(errno));
	settle();
	uswap_stats_read(rt, v0, USWAP_NR_COUNTERS);
	if (resident(EV_FIRST, EV_END) > (EV_END - EV_FIRST) / 8)
		t_fail("setup: EV is not swapped out");
	if (advise(EV_FIRST, half, MADV_POPULATE_READ))
		t_fail("MADV_POPULATE_READ: %s", strerror(errno));
	n = resident(EV_FIRST, half);
	if (n != half - EV_FIRST)
		t_fail("MADV_POPULATE_READ: %llu of %llu pages resident after it",
		       (unsigned long long)n, (unsigned long long)(half - EV_FIRST));
	check("after MADV_POPULATE_READ", EV_FIRST, half, 1, NULL);
	if (advise(half, end, MADV_POPULATE_WRITE))
		t_fail("MADV_POPULATE_WRITE: %s", strerror(errno));
	n = resident(half, end);
	if (n != end - half)
		t_fail("MADV_POPULATE_WRITE: %llu of %llu pages resident after it",
		       (unsigned long long)n, (unsigned long long)(end - half));
	check("after MADV_POPULATE_WRITE", half, end, 1, NULL);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (v[USWAP_PGMAJFAULT] == v0[USWAP_PGMAJFAULT])
		t_fail("the populated pages were not read through the fault path");

	/* Never-touched memory: zeros, resident. */
	if (uswap_region_create(rt, 2 * MB, (void **)&fresh))
		t_fail("region");
	if (uswap_madvise(rt, fresh, 2 * MB, MADV_POPULATE_WRITE))
		t_fail("MADV_POPULATE_WRITE on fresh memory: %s", strerror(errno));
	for (n = 0; n < 2 * MB; n += T_PAGE)
		if (!page_zero(fresh + n))
			t_fail("fresh memory is not zero after MADV_POPULATE_WRITE");
	uswap_munmap(rt, fresh, 2 * MB);
	check("at the end", 0, NPAGES, 1, discarded);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (v[USWAP_RESIDENT_PEAK] > v[USWAP_MAX_BYTES] + 2 * MB)
		t_fail("the budget's peak %llu MiB passed max by more than a folio per thread",
		       (unsigned long long)(v[USWAP_RESIDENT_PEAK] >> 20));
}

/*
 * cold, pageout: under a 16 MiB budget (high 97%), 14 MiB written, the
 * hint given on [8M, 12M), then 4 MiB more: reclaim evicts a few MiB,
 * less than the 8 MiB older than the hinted range.
 */
static void mode_hint(int advice, const char *name, unsigned counter)
{
	uint64_t v[USWAP_NR_COUNTERS], first = 8 * MB / T_PAGE,
		 end = 12 * MB / T_PAGE, n = 0;
	int tries;

	kernel_knows(advice, name);
	fill(0, 14 * MB / T_PAGE, 1);
	if (resident(first, end) != end - first)
		t_fail("setup: the range to hint is not resident");
	if (advise(first, end, advice))
		t_fail("%s: %s", name, strerror(errno));
	fill(14 * MB / T_PAGE, 18 * MB / T_PAGE, 1);
	/* The reclaimer works down to its low mark (bounded wait). */
	for (tries = 0; tries < 200; tries++) {
		n = resident(first, end);
		if (!n)
			break;
		usleep(50000);
	}
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("%s: %llu of %llu hinted pages resident, %llu of the %llu older ones; counted %llu\n",
	       name, (unsigned long long)n, (unsigned long long)(end - first),
	       (unsigned long long)resident(0, first), (unsigned long long)first,
	       (unsigned long long)v[counter]);
	if (n)
		t_fail("%s: %llu of the hinted pages are still resident", name,
		       (unsigned long long)n);
	if (!resident(0, first))
		t_fail("setup: reclaim evicted all the older memory too: the test shows nothing");
	if (v[counter] < end - first)
		t_fail("%s: counted %llu pages, wanted %llu", name,
		       (unsigned long long)v[counter],
		       (unsigned long long)(end - first));
	check("after the hint", 0, 18 * MB / T_PAGE, 1, NULL);
}

static unsigned nr_regions(void)
{
	return atomic_load(&rt->nr_regions);
}

static void mode_dump(void)
{
	unsigned n0 = nr_regions();
	pid_t c;

	kernel_knows(MADV_DONTDUMP, "MADV_DONTDUMP");
	/* What changes no flag splits nothing, in the kernel and here. */
	if (advise(EV_FIRST, EV_END, MADV_DODUMP) ||
	    advise(EV_FIRST, EV_END, MADV_NOHUGEPAGE))
		t_fail("MADV_DODUMP: %s", strerror(errno));
	if (nr_regions() != n0)
		t_fail("advice that changes nothing split the region (%u regions, %u before)",
		       nr_regions(), n0);
	if (advise(EV_FIRST, EV_END, MADV_DONTDUMP) ||
	    advise(RES_FIRST, RES_END, MADV_DONTDUMP))
		t_fail("MADV_DONTDUMP: %s", strerror(errno));
	check("after MADV_DONTDUMP", 0, NPAGES, 1, NULL);
	c = fork();
	if (c == 0) {
		check_child_managed("child");
		check("child", 0, NPAGES, 1, NULL);
		uswap_runtime_destroy(rt);
		_exit(0);
	}
	if (c < 0 || wait_child(c))
		t_fail("child failed");
	if (advise(RES_FIRST, RES_END, MADV_DODUMP))
		t_fail("MADV_DODUMP: %s", strerror(errno));
	check("after MADV_DODUMP", 0, NPAGES, 1, NULL);
}

/* MADV_GUARD_INSTALL: refused on managed memory, nothing lost. */
static void mode_guard(void)
{
	int err;

	kernel_knows(MADV_GUARD_INSTALL, "MADV_GUARD_INSTALL");
	err = advise(EV_FIRST, EV_END, MADV_GUARD_INSTALL) ? errno : 0;
	if (err != EINVAL)
		t_fail("MADV_GUARD_INSTALL on swapped-out memory: %s, wanted EINVAL",
		       err ? strerror(err) : "accepted");
	err = advise(RES_FIRST, RES_END, MADV_GUARD_INSTALL) ? errno : 0;
	if (err != EINVAL)
		t_fail("MADV_GUARD_INSTALL on resident memory: %s, wanted EINVAL",
		       err ? strerror(err) : "accepted");
	check("after MADV_GUARD_INSTALL", 0, NPAGES, 1, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "wipe";
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS];
	bool hint = !strcmp(mode, "cold") || !strcmp(mode, "pageout");

	uswap_options_init(&opt);
	t_folio_pool_args(&opt, argc - 1, argv + 1, 16384);
	/* 2M folios: reclaim stops 4 MiB below high, RES needs two. */
	opt.max = hint || opt.folio_size >= 2 * MB ? 16 * MB : 8 * MB;
	rt = t_runtime(&opt);
	mem = uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	if (!hint) {
		fill(0, NPAGES, 1);
		/* Reclaim may still be on its way to low: RES is read last. */
		settle();
		check("setup", RES_FIRST, RES_END, 1, NULL);
		settle();
		if (resident(RES_FIRST, RES_END) != RES_END - RES_FIRST)
			t_fail("setup: RES is not resident");
		if (resident(EV_FIRST, EV_END) > (EV_END - EV_FIRST) / 8)
			t_fail("setup: EV is not swapped out");
	}

	if (!strcmp(mode, "wipe"))
		mode_wipe();
	else if (!strcmp(mode, "dontfork"))
		mode_dontfork();
	else if (!strcmp(mode, "remove"))
		mode_remove();
	else if (!strcmp(mode, "populate"))
		mode_populate();
	else if (!strcmp(mode, "cold"))
		mode_hint(MADV_COLD, "MADV_COLD", USWAP_MADV_COLD);
	else if (!strcmp(mode, "pageout"))
		mode_hint(MADV_PAGEOUT, "MADV_PAGEOUT", USWAP_MADV_PAGEOUT);
	else if (!strcmp(mode, "dump"))
		mode_dump();
	else if (!strcmp(mode, "guard"))
		mode_guard();
	else
		t_fail("unknown mode %s", mode);

	check_nothing_left();
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("fork_advice %s %s %s: pswpout %llu zswpout %llu pswpin %llu\n", mode,
	       argc > 2 ? argv[2] : "16K", opt.zswap[0] ? opt.zswap : "off",
	       (unsigned long long)v[USWAP_PSWPOUT],
	       (unsigned long long)v[USWAP_ZSWPOUT],
	       (unsigned long long)v[USWAP_PSWPIN]);
	uswap_runtime_destroy(rt);
	return 0;
}
