// SPDX-License-Identifier: MIT
/*
 * wake_one.c - a fault wakes one waiting fault thread, not all of them
 * (memory.c: each fault thread waits in an epoll set of its own that
 * holds the userfaultfd with EPOLLEXCLUSIVE; poll(2) would wake every
 * thread that polls, and all but one would go back to sleep in the
 * kernel, unseen but for their context switches).
 *
 * Four fault threads; the program touches 256 fresh pages one at a time,
 * 2 ms apart, so that at every fault all four are waiting, and out of
 * order (a stride of 97), so that each is a fault of its own (in order,
 * fault-around would fill those that follow).  The fault
 * threads' voluntary context switches (/proc/self/task/TID/status) are
 * counted over the touches: about one per fault when one thread is woken,
 * about four when all are.  Every page is checked.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uswap.h"
#include "testlib.h"

#define NPAGES 256

/* The voluntary context switches of this process's threads named name. */
static unsigned long switches_of(const char *name, int *nthreads)
{
	DIR *d = opendir("/proc/self/task");
	unsigned long sum = 0;
	struct dirent *e;

	if (!d)
		t_fail("/proc/self/task: %s", strerror(errno));
	*nthreads = 0;
	while ((e = readdir(d))) {
		char path[300], line[128], comm[32] = "";
		unsigned long n;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Name: %31s", comm) == 1 && strcmp(comm, name))
				break;
			if (sscanf(line, "voluntary_ctxt_switches: %lu", &n) == 1) {
				sum += n;
				(*nthreads)++;
			}
		}
		fclose(f);
	}
	closedir(d);
	return sum;
}

int main(void)
{
	const struct timespec gap = { 0, 2000000 };
	struct uswap_options opt;
	struct uswap_runtime *rt;
	unsigned long before, after;
	int k, nthreads, n2;
	char *mem;

	uswap_options_init(&opt);
	opt.max = 64ul << 20;
	opt.folio_size = 4096;
	opt.fault_threads = 4;
	rt = t_runtime(&opt);
	mem = uswap_mmap(rt, NULL, (size_t)NPAGES * T_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	/* The threads name themselves once they run: give them the time. */
	for (k = 0; k < 200; k++) {
		switches_of("uswap-fault", &nthreads);
		if (nthreads == 4)
			break;
		usleep(10000);
	}
	if (nthreads != 4)
		t_fail("%d threads named uswap-fault, not 4", nthreads);
	nanosleep(&gap, NULL);
	before = switches_of("uswap-fault", &nthreads);
	for (k = 0; k < NPAGES; k++) {
		nanosleep(&gap, NULL);
		t_fill(mem + (size_t)(k * 97 % NPAGES) * T_PAGE, (uint64_t)k, 1);
	}
	after = switches_of("uswap-fault", &n2);
	for (k = 0; k < NPAGES; k++)
		if (t_check(mem + (size_t)(k * 97 % NPAGES) * T_PAGE, (uint64_t)k, 1))
			t_fail("page %d changed", k);
	printf("wake_one: %d faults, %lu context switches of the %d fault threads\n",
	       NPAGES, after - before, nthreads);
	if (n2 != nthreads)
		t_fail("fault threads came or went (%d, then %d)", nthreads, n2);
	if (after - before < NPAGES / 2)
		t_fail("the fault threads slept %lu times for %d faults: the test tested nothing",
		       after - before, NPAGES);
	/* All four woken: about 4 per fault.  One: about 1 (and a few more
	   for a thread scheduled late). */
	if (after - before > 2ul * NPAGES)
		t_fail("a fault woke several fault threads: %lu context switches for %d faults",
		       after - before, NPAGES);
	uswap_munmap(rt, mem, (size_t)NPAGES * T_PAGE);
	uswap_runtime_destroy(rt);
	return 0;
}
