// SPDX-License-Identifier: MIT
/*
 * follow.c - the fault threads serve a thread's faults from its CPU
 * (threadcpu.c, docs/fault-cost.md).
 *
 *  1. threadcpu's table: the calling thread is known and on a CPU it may
 *     run on; a thread that ended, and a tid never seen, are unknown.
 *  2. The program's thread is pinned to CPU 0 and the fault thread to
 *     CPU 1; 8 MiB are written under a 2 MiB budget and read back twice
 *     (faults, every byte checked).  The fault thread must have moved
 *     (fault_thread_moves) and be allowed on CPU 0 alone at the end.
 *
 * Skips on a machine with one CPU, or without an rseq area (C library).
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"
#include "threadcpu.h"
#include "uswap.h"
#include "testlib.h"

#define MB (1ul << 20)
#define SIZE (8 * MB)
#define NPAGES (SIZE / T_PAGE)

static void pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(tid, sizeof(set), &set))
		t_fail("sched_setaffinity %d to CPU %d: %s", tid, cpu, strerror(errno));
}

/* The tids of this process's threads named name; returns how many. */
static int threads_named(const char *name, pid_t *tids, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		t_fail("/proc/self/task: %s", strerror(errno));
	while ((e = readdir(d)) && n < max) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		if (!strcmp(comm, name))
			tids[n++] = atoi(e->d_name);
	}
	closedir(d);
	return n;
}

static void *ends_at_once(void *arg)
{
	uswap_thread_started();
	*(int *)arg = (int)gettid();
	return NULL;
}

int main(void)
{
	struct uswap_options opt;
	struct uswap_runtime *rt;
	uint64_t v[USWAP_NR_COUNTERS];
	pid_t ft[16];
	pthread_t th;
	int nft, k, pass, gone = 0, me = (int)gettid();
	char *mem;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		t_skip("one CPU: nothing to follow");

	/* 1. The table. */
	thread_cpu_register();
	k = thread_cpu_of(me);
	if (k == -1)
		t_skip("the C library keeps no rseq area for this thread");
	if (k < 0 || k >= sysconf(_SC_NPROCESSORS_CONF))
		t_fail("thread_cpu_of(self) = %d: not a CPU", k);
	if (pthread_create(&th, NULL, ends_at_once, &gone) || pthread_join(th, NULL))
		t_fail("pthread_create");
	if (thread_cpu_of(gone) != -1)
		t_fail("a thread that ended is still known (tid %d: CPU %d)", gone,
		       thread_cpu_of(gone));
	if (thread_cpu_of(0x7ffffff0) != -1)
		t_fail("a tid never seen is known");

	/* 2. Fault threads on CPU 1, the program on CPU 0. */
	uswap_options_init(&opt);
	opt.max = 2 * MB;
	opt.folio_size = 4096;
	opt.fault_threads = 1;	/* one: it must serve faults to move */
	rt = t_runtime(&opt);
	/* Each names itself once it runs: give it the time to. */
	for (k = 0; k < 200 && (nft = threads_named("uswap-fault", ft, 16)) < 1; k++)
		usleep(10000);
	if (nft < 1)
		t_fail("no thread named uswap-fault");
	pin(0, 0);
	for (k = 0; k < nft; k++)
		pin(ft[k], 1);
	mem = uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	for (k = 0; k < (int)NPAGES; k++)
		t_fill(mem + (size_t)k * T_PAGE, (uint64_t)k, 1);
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < (int)NPAGES; k++)
			if (t_check(mem + (size_t)k * T_PAGE, (uint64_t)k, 1))
				t_fail("page %d changed", k);
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("follow: %d fault threads, %llu major faults, %llu moves\n", nft,
	       (unsigned long long)v[USWAP_PGMAJFAULT],
	       (unsigned long long)v[USWAP_FAULT_THREAD_MOVES]);
	if (!v[USWAP_PGMAJFAULT])
		t_fail("no fault was served: the test tested nothing");
	if (!v[USWAP_FAULT_THREAD_MOVES])
		t_fail("no fault thread moved to the program's CPU");
	for (k = 0; k < nft; k++) {
		cpu_set_t set;

		if (sched_getaffinity(ft[k], sizeof(set), &set))
			t_fail("sched_getaffinity: %s", strerror(errno));
		if (CPU_ISSET(1, &set))
			t_fail("fault thread %d is still on CPU 1", ft[k]);
	}
	uswap_runtime_destroy(rt);
	return 0;
}
