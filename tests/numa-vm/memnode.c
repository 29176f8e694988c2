// SPDX-License-Identifier: MIT
/*
 * memnode - where does this process's memory land?  A check of the NUMA
 * test machine, run in the guest under `numactl --membind=N` before the
 * device-selection scenarios: those scenarios say "memory on node N", and
 * this shows that the binding really puts pages there on the emulated
 * topology (including the memory-only node).
 *
 *   memnode [SIZE_MIB]    map and touch SIZE_MIB (default 16), then ask the
 *                         kernel for each page's node with move_pages(2)
 *                         (no target nodes: a query) and print one line:
 *                         "memnode: pages=P node0=A node1=B ... other=X"
 *
 * The system call is made directly, so that neither libnuma nor its
 * headers are needed on the host or in the guest.  Exit 0, or 1 when the
 * query fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NODES	8

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 16;
	long psz = sysconf(_SC_PAGESIZE);
	size_t n = mib * 1024 * 1024 / (size_t)psz, i;
	unsigned long count[MAX_NODES] = { 0 }, other = 0;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	char *p;

	if (!n || !pages || !status) {
		fprintf(stderr, "memnode: bad size or out of memory\n");
		return 1;
	}
	p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("memnode: mmap");
		return 1;
	}
	for (i = 0; i < n; i++) {
		p[i * psz] = 1;		/* fault it in under the process policy */
		pages[i] = p + i * psz;
	}
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		perror("memnode: move_pages");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (status[i] >= 0 && status[i] < MAX_NODES)
			count[status[i]]++;
		else
			other++;
	}
	printf("memnode: pages=%zu", n);
	for (i = 0; i < MAX_NODES; i++)
		if (count[i])
			printf(" node%zu=%lu", i, count[i]);
	printf(" other=%lu\n", other);
	munmap(p, n * psz);
	free(pages);
	free(status);
	return 0;
}
