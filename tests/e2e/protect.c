// SPDX-License-Identifier: MIT
/*
 * protect.c - protections of managed memory are the program's, and
 * reclaim keeps them:
 *
 *   protect [--api] [whole|guard|pkey]...
 *
 * A 64 MiB mapping under a 16 MiB budget, its first 8 MiB made PROT_READ,
 * then PROT_NONE, then read-write again, with the rest of the mapping
 * written through in between so that the protected pages are evicted and
 * come back; then single pages inside folios (guard pages), and a
 * protection key if the machine has them.  At each step every page holds
 * what was written last; a write to a read-only page and any access to a
 * PROT_NONE page raise the program's own SIGSEGV, at the address it
 * touched (its handler runs).  Plain mmap(2)/mprotect(2) under `uswap run
 * --max 16M`, or with --api a runtime of its own and uswap_mmap and
 * uswap_mprotect.  The steps named run, in that order (all three by
 * default).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testlib.h"

#define MB		(1ul << 20)
#define SIZE		(64 * MB)
#define PROT_LEN	(8 * MB)
#define PROT_PAGES	(PROT_LEN / T_PAGE)

static struct uswap_runtime *rt;
static char *mem;
static uint64_t version[SIZE / T_PAGE];
static sigjmp_buf env;
static void *volatile fault_addr;
static volatile int fault_code;

static int protect(void *addr, size_t len, int prot)
{
	return rt ? uswap_mprotect(rt, addr, len, prot) : mprotect(addr, len, prot);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = si->si_addr;
	fault_code = si->si_code;
	siglongjmp(env, 1);
}

/* Does touching p (a write, or a read) raise SIGSEGV at p? */
static bool segv_at(char *p, bool write)
{
	fault_addr = NULL;
	if (!sigsetjmp(env, 1)) {
		if (write)
			*(volatile char *)p = 1;
		else
			(void)*(volatile char *)p;
		return false;
	}
	if (fault_addr != p)
		t_fail("SIGSEGV at %p, expected %p", fault_addr, (void *)p);
	return true;
}

static void fill(uint64_t first, uint64_t n, uint64_t v)
{
	uint64_t p;

	for (p = first; p < first + n; p++) {
		t_fill(mem + p * T_PAGE, p, v);
		version[p] = v;
	}
}

/* Write through the unprotected rest twice: the protected pages go out. */
static void churn(void)
{
	static uint64_t v = 100;
	unsigned pass;

	for (pass = 0; pass < 2; pass++)
		fill(PROT_PAGES, (SIZE - PROT_LEN) / T_PAGE, v++);
}

static void check(const char *what, uint64_t first, uint64_t n)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		if (t_check(mem + p * T_PAGE, p, version[p]))
			t_fail("%s: page %llu does not hold version %llu", what,
			       (unsigned long long)p,
			       (unsigned long long)version[p]);
}

static void must_protect(void *addr, size_t len, int prot)
{
	if (protect(addr, len, prot))
		t_fail("mprotect(%p, %zu, %d): %s", addr, len, prot,
		       strerror(errno));
}

static void whole_range(void)
{
	fill(0, PROT_PAGES, 2);			/* dirty, resident */
	must_protect(mem, PROT_LEN, PROT_READ);
	churn();
	check("PROT_READ, after eviction", 0, PROT_PAGES);
	if (!segv_at(mem + 5 * T_PAGE + 8, true))
		t_fail("a write to a PROT_READ page did not fault");
	must_protect(mem, PROT_LEN, PROT_READ | PROT_WRITE);
	fill(0, PROT_PAGES, 3);			/* dirty, resident */
	must_protect(mem, PROT_LEN, PROT_NONE);
	churn();
	if (!segv_at(mem + 77 * T_PAGE + 100, false))
		t_fail("a read of a PROT_NONE page did not fault");
	if (fault_code != SEGV_ACCERR)
		t_fail("SIGSEGV code %d on a PROT_NONE page, expected SEGV_ACCERR",
		       fault_code);
	churn();
	must_protect(mem, PROT_LEN, PROT_READ);
	check("PROT_NONE then PROT_READ, after eviction", 0, PROT_PAGES);
	if (!segv_at(mem + 9 * T_PAGE, true))
		t_fail("a write to a page made PROT_READ again did not fault");
	churn();
	must_protect(mem, PROT_LEN, PROT_READ | PROT_WRITE);
	check("read-write again", 0, PROT_PAGES);
	fill(0, PROT_PAGES, 4);
	churn();
	check("written after read-write again", 0, PROT_PAGES);
}

/* Every 16th page PROT_NONE, every 16th + 5 PROT_READ: inside folios. */
static void guard_pages(void)
{
	uint64_t p;

	fill(0, PROT_PAGES, 5);			/* dirty, resident */
	for (p = 0; p < PROT_PAGES; p += 16) {
		must_protect(mem + (p + 3) * T_PAGE, T_PAGE, PROT_NONE);
		must_protect(mem + (p + 5) * T_PAGE, T_PAGE, PROT_READ);
	}
	churn();
	for (p = 0; p < PROT_PAGES; p += 16) {
		if (t_check(mem + p * T_PAGE, p, version[p]) ||
		    t_check(mem + (p + 5) * T_PAGE, p + 5, version[p + 5]))
			t_fail("guard pages: page %llu or %llu is wrong",
			       (unsigned long long)p, (unsigned long long)p + 5);
		t_fill(mem + (p + 7) * T_PAGE, p + 7, 6);
		version[p + 7] = 6;
	}
	if (!segv_at(mem + 19 * T_PAGE, false) || !segv_at(mem + 21 * T_PAGE, true))
		t_fail("a guard page did not fault");
	churn();
	for (p = 0; p < PROT_PAGES; p += 16) {
		must_protect(mem + (p + 3) * T_PAGE, T_PAGE, PROT_READ | PROT_WRITE);
		must_protect(mem + (p + 5) * T_PAGE, T_PAGE, PROT_READ | PROT_WRITE);
	}
	check("guard pages made read-write again", 0, PROT_PAGES);
}

/* A protection key that denies all access, if the machine has keys. */
static void protection_key(void)
{
	int pkey = pkey_alloc(0, PKEY_DISABLE_ACCESS);

	if (pkey < 0) {
		printf("protect: no protection keys here (%s): that part skipped\n",
		       strerror(errno));
		return;
	}
	fill(0, PROT_PAGES, 7);			/* dirty, resident */
	if (rt ? uswap_pkey_mprotect(rt, mem, PROT_LEN, PROT_READ | PROT_WRITE, pkey) :
	    pkey_mprotect(mem, PROT_LEN, PROT_READ | PROT_WRITE, pkey))
		t_fail("pkey_mprotect: %s", strerror(errno));
	churn();
	if (!segv_at(mem + 3 * T_PAGE, false))
		t_fail("a page under a key that denies access did not fault");
	pkey_set(pkey, 0);
	check("under a protection key, after eviction", 0, PROT_PAGES);
	pkey_set(pkey, PKEY_DISABLE_ACCESS);
	churn();
	pkey_set(pkey, 0);
	check("under a protection key, again", 0, PROT_PAGES);
	if (rt ? uswap_pkey_mprotect(rt, mem, PROT_LEN, PROT_READ | PROT_WRITE, 0) :
	    pkey_mprotect(mem, PROT_LEN, PROT_READ | PROT_WRITE, 0))
		t_fail("pkey_mprotect back to key 0: %s", strerror(errno));
	pkey_free(pkey);
}

static bool wanted(int argc, char **argv, int a, const char *step)
{
	if (a == argc)
		return true;
	for (; a < argc; a++)
		if (!strcmp(argv[a], step))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	int a = 1;

	if (argc > 1 && !strcmp(argv[1], "--api")) {
		struct uswap_options opt;

		uswap_options_init(&opt);
		opt.max = 16 * MB;
		rt = t_runtime(&opt);
		a++;
	}
	sigaction(SIGSEGV, &sa, NULL);
	mem = rt ? uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
		   mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	fill(0, SIZE / T_PAGE, 1);
	if (wanted(argc, argv, a, "whole"))
		whole_range();
	if (wanted(argc, argv, a, "guard"))
		guard_pages();
	if (wanted(argc, argv, a, "pkey"))
		protection_key();
	check("at the end", 0, SIZE / T_PAGE);
	printf("protect: every page right, every fault the program's own\n");
	if (rt) {
		uswap_munmap(rt, mem, SIZE);
		uswap_runtime_destroy(rt);
	}
	return 0;
}
