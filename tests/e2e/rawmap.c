// SPDX-License-Identifier: MIT
/*
 * rawmap SIZE [SECONDS] - map SIZE bytes with the raw mmap system call
 * (as the Go runtime and other raw-syscall runtimes do: the preload
 * library never sees it), write every page, wait SECONDS, print "done"
 * (tests/e2e/static_prog.sh: the unmanaged memory gauge).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testlib.h"

int main(int argc, char **argv)
{
	size_t len;
	char *p;

	if (argc < 2)
		t_fail("usage: rawmap SIZE [SECONDS]");
	len = (size_t)t_size(argv[1]);
	p = (char *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	memset(p, 1, len);
	if (argc > 2)
		sleep((unsigned)atoi(argv[2]));
	printf("done\n");
	return 0;
}
