// SPDX-License-Identifier: MIT
/*
 * swap_race.c - the three parts of the swap file isolation tests
 * (swap_race.sh, swap_existing.sh):
 *
 *   swap_race fill SIZE [READY]   the victim's program: SIZE bytes of
 *				   tagged words, read back and checked; with
 *				   READY, create that file and wait to be
 *				   killed
 *   swap_race scan FILE	   print how many of FILE's words carry the
 *				   tag (what a reader finds of the program)
 *   swap_race exchange A B MS	   the attacker: swap the names A and B with
 *				   renameat2(RENAME_EXCHANGE) for MS
 *				   milliseconds, as fast as it can
 *
 * A tagged word has "USWF" in its high 32 bits and its index below, so a
 * scan of any file counts the program's words wherever they landed.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define TAG		0x55535746ull	/* "USWF" */
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE	(1 << 1)
#endif

static uint64_t tagged(uint64_t i)
{
	return TAG << 32 | (i & 0xffffffffu);
}

static int fill(uint64_t size, const char *ready)
{
	uint64_t words = size / 8, i;
	uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	for (i = 0; i < words; i++)
		p[i] = tagged(i);
	for (i = 0; i < words; i++)
		if (p[i] != tagged(i))
			t_fail("word %llu read back %016llx",
			       (unsigned long long)i, (unsigned long long)p[i]);
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_EXCL, 0644);

		if (fd < 0)
			t_fail("%s: %s", ready, strerror(errno));
		close(fd);
		for (;;)
			pause();
	}
	return 0;
}

static int scan(const char *file)
{
	static uint64_t buf[1 << 16];
	unsigned long long found = 0;
	ssize_t n;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		t_fail("%s: %s", file, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		size_t i;

		for (i = 0; i < (size_t)n / 8; i++)
			found += buf[i] >> 32 == TAG;
	}
	if (n < 0)
		t_fail("%s: %s", file, strerror(errno));
	close(fd);
	printf("%llu\n", found);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int exchange(const char *a, const char *b, unsigned ms)
{
	uint64_t end = now_ms() + ms, n = 0;

	while (now_ms() < end) {
		if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			    RENAME_EXCHANGE) == 0)
			n++;
	}
	printf("%llu exchanges\n", (unsigned long long)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "fill"))
		return fill(t_size(argv[2]), argc > 3 ? argv[3] : NULL);
	if (argc == 3 && !strcmp(argv[1], "scan"))
		return scan(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "exchange"))
		return exchange(argv[2], argv[3], (unsigned)atoi(argv[4]));
	fprintf(stderr, "usage: swap_race fill SIZE [READY] | scan FILE | exchange A B MS\n");
	return 2;
}
