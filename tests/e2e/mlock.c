// SPDX-License-Identifier: MIT
/*
 * mlock.c - locked managed memory stays resident, charged and counted,
 * and a lock that cannot fit under the budget fails at once:
 *
 *   mlock [--api] STEP
 *
 *   lock      mlock(8 MiB) of a 64 MiB mapping under a 16 MiB budget while
 *             the rest is written through: the locked pages never leave
 *             (pagemap says present at every look), hold their data, and
 *             the process's RSS stays near the budget; munlock, and they
 *             are evicted like the rest;
 *   onfault   mlock2(MLOCK_ONFAULT): the pages touched stay;
 *   toolarge  mlock(32 MiB), mlockall(MCL_CURRENT), a MAP_LOCKED mapping
 *             of 32 MiB and one made under mlockall(MCL_FUTURE) fail
 *             (ENOMEM or EAGAIN), at once, and lock nothing;
 *   future    mlockall(MCL_CURRENT | MCL_FUTURE) with 8 MiB mapped, then
 *             a 4 MiB MAP_LOCKED-free mapping and a MAP_LOCKED one: all
 *             locked and present, and the RSS the program's (uswap's own
 *             mappings neither locked nor brought in); munlockall, and
 *             they go out again;
 *   madvise   MADV_DONTNEED and MADV_REMOVE of locked memory fail with
 *             EINVAL, as the kernel's, and drop nothing;
 *   raw       mlock by the raw system call (no interposer sees it): the
 *             pages stay, with their data.
 *
 * Plain calls under `uswap run --max 16M`, or with --api a runtime of
 * its own and uswap_mmap, uswap_mlock2...  Without either (no budget),
 * "lock", "onfault", "madvise" and "raw" pass on the kernel alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	1
#endif

#define MB		(1ul << 20)
#define SIZE		(64 * MB)
#define LOCK		(8 * MB)

static struct uswap_runtime *rt;
static int pagemap = -1;
static bool budget;		/* under uswap: reclaim runs */
static bool rss_bounded;	/* ... and the RSS has a bound */

/* A sanitizer's shadow memory is in the RSS: no bound holds then. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_BOUNDED	false
#else
#define RSS_BOUNDED	true
#endif

static void *map(size_t len, int flags)
{
	void *p = rt ? uswap_mmap(rt, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0) :
		       mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p;
}

static int do_mlock2(void *a, size_t len, unsigned flags)
{
	return rt ? uswap_mlock2(rt, a, len, flags) : mlock2(a, len, flags);
}

static int do_munlock(void *a, size_t len)
{
	return rt ? uswap_munlock(rt, a, len) : munlock(a, len);
}

static int do_mlockall(int flags)
{
	return rt ? uswap_mlockall(rt, flags) : mlockall(flags);
}

static int do_munlockall(void)
{
	return rt ? uswap_munlockall(rt) : munlockall();
}

static int do_madvise(void *a, size_t len, int advice)
{
	return rt ? uswap_madvise(rt, a, len, advice) : madvise(a, len, advice);
}

static void fill(char *p, uint64_t first, uint64_t n, uint64_t v)
{
	uint64_t k;

	for (k = 0; k < n; k++)
		t_fill(p + k * T_PAGE, first + k, v);
}

static void check(const char *what, const char *p, uint64_t first, uint64_t n,
		  uint64_t v)
{
	uint64_t k;

	for (k = 0; k < n; k++)
		if (t_check(p + k * T_PAGE, first + k, v))
			t_fail("%s: page %llu does not hold version %llu", what,
			       (unsigned long long)(first + k),
			       (unsigned long long)v);
}

/* Pages of [p, p+len) that are not present (pagemap). */
static uint64_t not_present(const char *p, size_t len)
{
	uint64_t e[512], n = len / T_PAGE, k, missing = 0, done;

	for (done = 0; done < n; done += 512) {
		uint64_t m = n - done < 512 ? n - done : 512;
		off_t off = (off_t)(((uintptr_t)p / T_PAGE + done) * 8);

		if (pread(pagemap, e, m * 8, off) != (ssize_t)(m * 8))
			t_fail("pagemap: %s", strerror(errno));
		for (k = 0; k < m; k++)
			missing += !(e[k] >> 63);
	}
	return missing;
}

/* "VmLck:" or "VmHWM:" of this process, in KiB. */
static uint64_t status_kib(const char *field)
{
	char buf[4096], *s;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		t_fail("/proc/self/status: %s", strerror(errno));
	buf[n] = 0;
	s = strstr(buf, field);
	return s ? strtoull(s + strlen(field), NULL, 10) : 0;
}

/* Write through `rest` (npages from page index first), twice. */
static void churn(char *rest, uint64_t first, uint64_t npages)
{
	static uint64_t v = 100;
	unsigned pass;

	for (pass = 0; pass < 2; pass++)
		fill(rest, first, npages, v++);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *region(void)
{
	char *mem = map(SIZE, 0);

	if (mem == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	fill(mem, 0, SIZE / T_PAGE, 1);
	return mem;
}

static void step_lock(void)
{
	char *mem = region(), *rest = mem + LOCK;
	uint64_t rest_pages = (SIZE - LOCK) / T_PAGE, hwm;
	unsigned i;

	if (do_mlock2(mem, LOCK, 0))
		t_fail("mlock of 8 MiB under a 16 MiB budget: %s", strerror(errno));
	if (status_kib("VmLck:") < LOCK / 1024)
		t_fail("VmLck is %llu KiB after mlock of 8 MiB",
		       (unsigned long long)status_kib("VmLck:"));
	check("just locked", mem, 0, LOCK / T_PAGE, 1);
	fill(mem, 0, LOCK / T_PAGE, 2);
	for (i = 0; i < 4; i++) {
		churn(rest, LOCK / T_PAGE, rest_pages);
		if (not_present(mem, LOCK))
			t_fail("%llu locked pages were evicted",
			       (unsigned long long)not_present(mem, LOCK));
	}
	check("locked, after reclaim", mem, 0, LOCK / T_PAGE, 2);
	hwm = status_kib("VmHWM:");
	if (rss_bounded && hwm > 40 * 1024)
		t_fail("peak RSS %llu KiB: more than the 16 MiB budget allows",
		       (unsigned long long)hwm);
	if (do_munlock(mem, LOCK))
		t_fail("munlock: %s", strerror(errno));
	churn(rest, LOCK / T_PAGE, rest_pages);
	if (budget && not_present(mem, LOCK) < LOCK / T_PAGE / 2)
		t_fail("after munlock, only %llu of %lu pages were evicted",
		       (unsigned long long)not_present(mem, LOCK), LOCK / T_PAGE);
	check("unlocked, after reclaim", mem, 0, LOCK / T_PAGE, 2);
	/* Locked again at the end: the counters at exit show it. */
	if (do_mlock2(mem, LOCK, 0))
		t_fail("mlock again: %s", strerror(errno));
	printf("lock: 8 MiB locked stayed, peak RSS %llu KiB\n",
	       (unsigned long long)hwm);
}

static void step_onfault(void)
{
	char *mem = map(SIZE, 0), *rest = mem + LOCK;

	if (mem == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	if (do_mlock2(mem, LOCK, MLOCK_ONFAULT))
		t_fail("mlock2 MLOCK_ONFAULT: %s", strerror(errno));
	if (not_present(mem, LOCK) != LOCK / T_PAGE)
		t_fail("MLOCK_ONFAULT brought pages in");
	fill(mem, 0, LOCK / T_PAGE / 2, 3);
	churn(rest, LOCK / T_PAGE, (SIZE - LOCK) / T_PAGE);
	churn(rest, LOCK / T_PAGE, (SIZE - LOCK) / T_PAGE);
	if (not_present(mem, LOCK / 2))
		t_fail("%llu pages locked on fault were evicted",
		       (unsigned long long)not_present(mem, LOCK / 2));
	check("locked on fault", mem, 0, LOCK / T_PAGE / 2, 3);
	printf("onfault: the pages touched stayed\n");
}

static void must_fail_fast(const char *what, int ret, double t0)
{
	double took = now() - t0;

	if (!ret)
		t_fail("%s succeeded beyond the budget", what);
	if (errno != ENOMEM && errno != EAGAIN)
		t_fail("%s: %s, expected ENOMEM or EAGAIN", what, strerror(errno));
	if (took > 10)
		t_fail("%s took %.1f s to fail", what, took);
	printf("toolarge: %s failed (%s) in %.3f s\n", what, strerror(errno), took);
}

static void step_toolarge(void)
{
	char *mem = region(), *p;
	uint64_t lck = status_kib("VmLck:");
	double t0;

	t0 = now();
	must_fail_fast("mlock of 32 MiB", do_mlock2(mem, 32 * MB, 0), t0);
	t0 = now();
	must_fail_fast("mlockall(MCL_CURRENT)", do_mlockall(MCL_CURRENT), t0);
	t0 = now();
	p = map(32 * MB, MAP_LOCKED);
	must_fail_fast("a MAP_LOCKED mapping of 32 MiB", p == MAP_FAILED ? -1 : 0, t0);
	if (status_kib("VmLck:") != lck)
		t_fail("VmLck went from %llu to %llu KiB: something was locked",
		       (unsigned long long)lck,
		       (unsigned long long)status_kib("VmLck:"));
	check("after the failed locks", mem, 0, SIZE / T_PAGE, 1);
}

static void step_future(void)
{
	char *small = map(LOCK, 0), *rest = map(SIZE, 0), *later, *locked;

	if (small == MAP_FAILED || rest == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	fill(small, 0, LOCK / T_PAGE, 4);
	/* What is mapped now must fit: the 64 MiB one goes first. */
	if (rt)
		uswap_munmap(rt, rest, SIZE);
	else
		munmap(rest, SIZE);
	if (do_mlockall(MCL_CURRENT | MCL_FUTURE))
		t_fail("mlockall(MCL_CURRENT | MCL_FUTURE) with 8 MiB mapped: %s",
		       strerror(errno));
	later = map(4 * MB, 0);
	locked = map(2 * MB, MAP_LOCKED);
	if (later == MAP_FAILED || locked == MAP_FAILED)
		t_fail("mmap under MCL_FUTURE: %s", strerror(errno));
	if (not_present(later, 4 * MB) || not_present(locked, 2 * MB))
		t_fail("a mapping made under MCL_FUTURE is not all present");
	/*
	 * What came in is the program's: 14 MiB and its libraries, not
	 * uswap's own mappings (a slot map sized for a growing swap file is
	 * a gigabyte of shared memory: 1.2 GB came in before).
	 */
	printf("future: after mlockall, VmRSS %llu KiB, RssShmem %llu KiB, VmLck %llu KiB\n",
	       (unsigned long long)status_kib("VmRSS:"),
	       (unsigned long long)status_kib("RssShmem:"),
	       (unsigned long long)status_kib("VmLck:"));
	if (rss_bounded && (status_kib("VmRSS:") > 64 * 1024 ||
			    status_kib("RssShmem:") > 8 * 1024))
		t_fail("mlockall brought in uswap's own memory: VmRSS %llu KiB, RssShmem %llu KiB",
		       (unsigned long long)status_kib("VmRSS:"),
		       (unsigned long long)status_kib("RssShmem:"));
	fill(later, 10000, 4 * MB / T_PAGE, 5);
	rest = map(32 * MB, 0);
	if (rest != MAP_FAILED)
		t_fail("a 32 MiB mapping under MCL_FUTURE succeeded beyond the budget");
	if (errno != EAGAIN && errno != ENOMEM)
		t_fail("a 32 MiB mapping under MCL_FUTURE: %s, expected EAGAIN",
		       strerror(errno));
	if (do_munlockall())
		t_fail("munlockall: %s", strerror(errno));
	rest = map(SIZE, 0);
	if (rest == MAP_FAILED)
		t_fail("mmap after munlockall: %s", strerror(errno));
	churn(rest, 20000, SIZE / T_PAGE);
	if (budget && not_present(small, LOCK) < LOCK / T_PAGE / 2)
		t_fail("after munlockall, the pages locked were not evicted");
	check("after munlockall", small, 0, LOCK / T_PAGE, 4);
	check("after munlockall", later, 10000, 4 * MB / T_PAGE, 5);
	printf("future: mappings made under MCL_FUTURE were locked, and unlocked\n");
}

static void step_madvise(void)
{
	char *mem = region();

	if (do_mlock2(mem, LOCK, 0))
		t_fail("mlock: %s", strerror(errno));
	if (do_madvise(mem, LOCK, MADV_DONTNEED) == 0 || errno != EINVAL)
		t_fail("MADV_DONTNEED of locked memory did not fail with EINVAL");
	if (do_madvise(mem + LOCK, 8 * MB, MADV_REMOVE) == 0 || errno != EINVAL)
		t_fail("MADV_REMOVE of private anonymous memory did not fail with EINVAL");
	check("locked, after MADV_DONTNEED", mem, 0, LOCK / T_PAGE, 1);
	check("after MADV_REMOVE", mem + LOCK, LOCK / T_PAGE, 8 * MB / T_PAGE, 1);
	churn(mem + LOCK, LOCK / T_PAGE, (SIZE - LOCK) / T_PAGE);
	check("locked, after MADV_DONTNEED and reclaim", mem, 0, LOCK / T_PAGE, 1);
	printf("madvise: locked memory kept\n");
}

static void step_raw(void)
{
	char *mem = region(), *rest = mem + LOCK;
	unsigned i;

	check("before", mem, 0, LOCK / T_PAGE, 1);	/* resident */
	if (syscall(SYS_mlock, mem, LOCK))
		t_fail("raw mlock: %s", strerror(errno));
	for (i = 0; i < 3; i++)
		churn(rest, LOCK / T_PAGE, (SIZE - LOCK) / T_PAGE);
	if (not_present(mem, LOCK))
		t_fail("pages locked behind uswap's back were dropped");
	check("locked behind uswap's back, after reclaim", mem, 0, LOCK / T_PAGE, 1);
	if (rss_bounded && status_kib("VmHWM:") > 40 * 1024)
		t_fail("peak RSS %llu KiB: more than the 16 MiB budget allows",
		       (unsigned long long)status_kib("VmHWM:"));
	syscall(SYS_munlock, mem, LOCK);
	printf("raw: pages locked behind uswap's back stayed\n");
}

int main(int argc, char **argv)
{
	int a = 1;

	if (argc > a && !strcmp(argv[a], "--api")) {
		struct uswap_options opt;

		uswap_options_init(&opt);
		opt.max = 16 * MB;
		rt = t_runtime(&opt);
		a++;
	}
	if (argc != a + 1) {
		fprintf(stderr, "usage: mlock [--api] lock|onfault|toolarge|future|madvise|raw\n");
		return 2;
	}
	budget = rt || getenv("USWAP_MAX");
	rss_bounded = budget && RSS_BOUNDED;
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap < 0)
		t_skip("no /proc/self/pagemap");
	if (!strcmp(argv[a], "lock"))
		step_lock();
	else if (!strcmp(argv[a], "onfault"))
		step_onfault();
	else if (!strcmp(argv[a], "toolarge"))
		step_toolarge();
	else if (!strcmp(argv[a], "future"))
		step_future();
	else if (!strcmp(argv[a], "madvise"))
		step_madvise();
	else if (!strcmp(argv[a], "raw"))
		step_raw();
	else
		t_fail("unknown step %s", argv[a]);
	return 0;
}
