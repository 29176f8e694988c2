// SPDX-License-Identifier: MIT
/*
 * preinit.c - a program that maps memory before the C library has its
 * environment (a preinit function, as an ASan program's runtime does)
 * still gets the budget of its USWAP_* variables from the preload
 * library (docs/reliability.md, soak bug 4).
 *
 * Its preinit function maps and touches 1 MiB (through the preload
 * library's mmap, before environ is set); main then fills SIZE (argv[1],
 * default 64M) of mapped memory and checks it.  tests/e2e/preinit.sh runs
 * it under uswap run and checks the counters: the budget is --max, and
 * memory went out.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "testlib.h"

#define EARLY_LEN (1ul << 20)

extern char **environ;

static char *early;
static int early_had_environ = -1;

static void map_early(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	early_had_environ = environ != NULL;
	early = mmap(NULL, EARLY_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (early != MAP_FAILED)
		memset(early, 0x5a, EARLY_LEN);
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit_fn)(int, char **, char **) = map_early;

int main(int argc, char **argv)
{
	uint64_t size = argc > 1 ? t_size(argv[1]) : 64ull << 20, p;
	char *mem;

	if (early == MAP_FAILED || !early)
		t_fail("the preinit function's mmap failed");
	for (p = 0; p < EARLY_LEN; p++)
		if (early[p] != 0x5a)
			t_fail("the preinit function's memory changed at %llu",
			       (unsigned long long)p);
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("mmap %llu: %s", (unsigned long long)size, strerror(errno));
	for (p = 0; p < size / T_PAGE; p++)
		t_fill(mem + p * T_PAGE, p, 1);
	for (p = 0; p < size / T_PAGE; p++)
		if (t_check(mem + p * T_PAGE, p, 1))
			t_fail("page %llu lost", (unsigned long long)p);
	munmap(mem, size);
	munmap(early, EARLY_LEN);
	printf("preinit: environ %s in the preinit function; %llu MiB checked\n",
	       early_had_environ ? "set" : "not set",
	       (unsigned long long)(size >> 20));
	return 0;
}
