// SPDX-License-Identifier: MIT
/*
 * trace.c - the folio history (USWAP_TRACE, uswap_trace_dump()): run
 * under uswap run with a budget a quarter of its memory, it fills 32 MiB,
 * reads the first page again (evicted by then, so brought back), and
 * prints that page's history, which trace.sh checks.  A page that does
 * not hold what was written fails the test.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define SIZE	(32u << 20)

int main(void)
{
	void (*dump)(const void *) =
		(void (*)(const void *))dlsym(RTLD_DEFAULT, "uswap_trace_dump");
	uint64_t *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t k;

	if (p == MAP_FAILED || !dump) {
		fprintf(stderr, "FAIL: %s\n", p == MAP_FAILED ? "mmap" :
			"uswap_trace_dump is not exported (run under uswap run)");
		return 1;
	}
	for (k = 0; k < SIZE / sizeof(*p); k += 512)
		p[k] = k + 1;
	if (*(volatile uint64_t *)p != 1) {
		fprintf(stderr, "FAIL: page 0 holds %llu\n", (unsigned long long)p[0]);
		return 1;
	}
	dump(p);
	return 0;
}
