// SPDX-License-Identifier: MIT
/*
 * remap.c - munmap, mremap and madvise of managed memory keep every byte:
 * a region is swapped out, then partly unmapped, grown and moved with
 * mremap, partly discarded with MADV_DONTNEED, and a child forked from it
 * sees its parent's memory (swapped-out parts included) - while another
 * thread keeps faulting on a second region.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MB (1ul << 20)
static struct uswap_runtime *rt;
static atomic_bool stop;
static char *other;

static void *churn(void *arg)
{
	uint64_t s = 7, p;

	(void)arg;
	for (p = 0; p < 32 * MB / T_PAGE; p++)
		t_fill(other + p * T_PAGE, p, 1);
	while (!stop) {
		p = t_rand(&s) % (32 * MB / T_PAGE);
		if (t_check(other + p * T_PAGE, p, 1))
			t_fail("churn region page %llu corrupted", (unsigned long long)p);
	}
	return NULL;
}

static void check_range(const char *what, char *base, uint64_t first, uint64_t n,
			uint64_t id0)
{
	uint64_t p;

	for (p = 0; p < n; p++)
		if (t_check(base + p * T_PAGE, id0 + first + p, 1))
			t_fail("%s: page %llu wrong", what, (unsigned long long)(first + p));
}

int main(void)
{
	struct uswap_options opt;
	uint64_t v[USWAP_NR_COUNTERS], p, n = 64 * MB / T_PAGE;
	pthread_t th;
	char *a, *b;
	int err, status;
	pid_t pid;

	uswap_options_init(&opt);
	opt.max = 16 * MB;
	opt.folio_size = 16384;
	err = uswap_runtime_create(&opt, &rt);
	if (err)
		t_fail("runtime: %s", strerror(-err));
	if (uswap_region_create(rt, 32 * MB, (void **)&other))
		t_fail("region");
	pthread_create(&th, NULL, churn, NULL);

	if (uswap_region_create(rt, 64 * MB, (void **)&a))
		t_fail("region");
	for (p = 0; p < n; p++)
		t_fill(a + p * T_PAGE, p, 1);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (!v[USWAP_PSWPOUT])
		t_fail("nothing was swapped out");

	/* Unmap a hole in the middle; the rest stays. */
	if (uswap_munmap(rt, a + 16 * MB, 8 * MB))
		t_fail("munmap: %s", strerror(errno));
	check_range("after munmap (head)", a, 0, 16 * MB / T_PAGE, 0);
	check_range("after munmap (tail)", a + 24 * MB, 24 * MB / T_PAGE,
		    40 * MB / T_PAGE, 0);

	/* Move and grow the tail part: contents follow, growth reads zeros. */
	b = uswap_mremap(rt, a + 24 * MB, 40 * MB, 48 * MB, MREMAP_MAYMOVE, NULL);
	if (b == MAP_FAILED)
		t_fail("mremap: %s", strerror(errno));
	check_range("after mremap", b, 0, 40 * MB / T_PAGE, 24 * MB / T_PAGE);
	for (p = 40 * MB; p < 48 * MB; p += T_PAGE)
		if (b[p] || b[p + T_PAGE - 1])
			t_fail("grown part is not zero");

	/* Discard part of the head: zeros there, the rest intact. */
	if (uswap_madvise(rt, a, 4 * MB, MADV_DONTNEED))
		t_fail("madvise: %s", strerror(errno));
	for (p = 0; p < 4 * MB; p += 512)
		if (a[p])
			t_fail("discarded byte %llu is not zero", (unsigned long long)p);
	check_range("after madvise", a + 4 * MB, 4 * MB / T_PAGE, 12 * MB / T_PAGE, 0);

	/* fork: the child sees everything, swapped-out parts included. */
	for (p = 0; p < 12 * MB / T_PAGE; p++)	/* push b out again */
		t_fill(a + 4 * MB + p * T_PAGE, 4 * MB / T_PAGE + p, 1);
	pid = fork();
	if (pid == 0) {
		check_range("child", b, 0, 40 * MB / T_PAGE, 24 * MB / T_PAGE);
		check_range("child head", a + 4 * MB, 4 * MB / T_PAGE,
			    12 * MB / T_PAGE, 0);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		t_fail("child saw wrong memory");
	check_range("parent after fork", b, 0, 40 * MB / T_PAGE, 24 * MB / T_PAGE);

	stop = true;
	pthread_join(th, NULL);
	if (uswap_munmap(rt, b, 48 * MB) || uswap_munmap(rt, a, 16 * MB))
		t_fail("final munmap");
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("remap: pswpout %llu pswpin %llu managed %llu\n",
	       (unsigned long long)v[USWAP_PSWPOUT], (unsigned long long)v[USWAP_PSWPIN],
	       (unsigned long long)v[USWAP_MANAGED_BYTES]);
	uswap_runtime_destroy(rt);
	return 0;
}
