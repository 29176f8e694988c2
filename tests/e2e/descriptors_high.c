// SPDX-License-Identifier: MIT
/*
 * descriptors_high.c - a program that closes or replaces descriptors it
 * does not know of keeps its memory byte-exact under uswap run
 * (tests/e2e/descriptors_high.sh runs each mode).
 *
 * The program maps 64 MiB, writes every page, and (budget below it) has
 * most of them evicted; then it does what daemons and shells do to their
 * descriptors, maps and writes 64 MiB more (evictions to uswap's devices
 * after the change, before any old page is read), reads both back,
 * writes the first again and reads it again:
 *
 *   close_range   close_range(3, ~0U, 0) through the C library;
 *   closefrom     closefrom(3), then close() of every number up to
 *                 sysconf(_SC_OPEN_MAX), as a daemon's loop does;
 *   dup2_low      dup2() of its log file (O_RDWR | O_APPEND, 0644) onto every
 *                 number from 3 to 14 but the log's own;
 *   dup2_uswap    dup2() of the log onto every descriptor it did not open
 *                 (uswap's), then of the log onto them with dup3: each
 *                 must then name the log, as the program asked;
 *   dup2_device   the same onto those of uswap's that name a regular
 *                 file (its swap file) only, so that uswap's other
 *                 descriptors stay and evictions go on;
 *   raw           close_range(3, ~0U, 0) as a raw system call, past any
 *                 interposer: uswap must stop the program (exit status
 *                 124, one message) before a page reads back wrong.
 *
 * A page that reads back zeros where it held data says "ZERO" and exits
 * 3, another wrong page exits 4; the log file must stay empty (the .sh
 * checks it: no program memory in someone else's file).  raw exits 5 if
 * it was never stopped.
 *
 * Usage: descriptors_high MODE LOGFILE
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#ifndef SYS_close_range
#define SYS_close_range	436
#endif

#define SIZE	(64ul << 20)
#define NPAGES	(SIZE / T_PAGE)

/* Write version to every page of mem. */
static void fill(char *mem, uint64_t version)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

/* Every page of mem must hold version: zeros exit 3, anything else 4. */
static void check(const char *mem, uint64_t version, const char *when)
{
	static const char zero[T_PAGE];
	uint64_t p, bad = 0, zeros = 0, first = NPAGES;

	for (p = 0; p < NPAGES; p++) {
		if (!t_check(mem + p * T_PAGE, p, version))
			continue;
		if (!memcmp(mem + p * T_PAGE, zero, T_PAGE))
			zeros++;
		else
			bad++;
		if (first == NPAGES)
			first = p;
	}
	if (zeros) {
		fprintf(stderr, "ZERO: %s: %llu of %lu pages read back as zeros (first: page %llu), %llu otherwise wrong\n",
			when, (unsigned long long)zeros, NPAGES,
			(unsigned long long)first, (unsigned long long)bad);
		exit(3);
	}
	if (bad) {
		fprintf(stderr, "FAIL: %s: %llu of %lu pages read back wrong (first: page %llu)\n",
			when, (unsigned long long)bad, NPAGES,
			(unsigned long long)first);
		exit(4);
	}
}

/* The numbers of the descriptors this process has open, but those in skip. */
static unsigned open_fds(int *fds, unsigned max, const int *skip, unsigned nskip)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0, k;

	if (!d)
		t_fail("opendir /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)) && n < max) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		for (k = 0; k < nskip && skip[k] != fd; k++)
			;
		if (k == nskip)
			fds[n++] = fd;
	}
	closedir(d);
	return n;
}

static char *map(void)
{
	char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	return p;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The program's own descriptors above 2 are closed (or not). */
static void expect_closed(const int *fds, unsigned n, const char *how)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (fcntl(fds[k], F_GETFD) >= 0)
			t_fail("%s: the program's descriptor %d is still open",
			       how, fds[k]);
}

int main(int argc, char **argv)
{
	int mine[3], log_fd, fds[256];
	char *mem, *more;
	const char *mode;
	unsigned n, k;

	if (argc != 3)
		t_fail("usage: descriptors_high MODE LOGFILE");
	mode = argv[1];
	mem = map();
	fill(mem, 1);
	check(mem, 1, "before");

	if (!strcmp(mode, "close_range") || !strcmp(mode, "closefrom") ||
	    !strcmp(mode, "raw")) {
		/* Descriptors of the program's own, which must go. */
		for (k = 0; k < 3; k++)
			mine[k] = open("/dev/null", O_RDONLY);
		if (!strcmp(mode, "close_range")) {
			if (close_range(3, ~0U, 0))
				t_fail("close_range: %s", strerror(errno));
		} else if (!strcmp(mode, "closefrom")) {
			long max = sysconf(_SC_OPEN_MAX), fd;

			closefrom(3);
			for (fd = 3; fd < max; fd++)
				close((int)fd);
		} else {
			if (syscall(SYS_close_range, 3, ~0U, 0))
				t_fail("close_range: %s", strerror(errno));
		}
		expect_closed(mine, 3, mode);
	} else if (!strcmp(mode, "dup2_low") || !strcmp(mode, "dup2_uswap") ||
		   !strcmp(mode, "dup2_device")) {
		int skip[2];

		log_fd = open(argv[2], O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC,
			      0644);
		if (log_fd < 0)
			t_fail("open %s: %s", argv[2], strerror(errno));
		if (!strcmp(mode, "dup2_low")) {
			for (n = 0, k = 3; k <= 14; k++)
				if ((int)k != log_fd)
					fds[n++] = (int)k;
		} else {
			skip[0] = 0;
			skip[1] = log_fd;
			n = open_fds(fds, 256, skip, 2);
			/* 1 and 2 are the test's own */
			for (k = 0; k < n; k++) {
				struct stat st;

				if (fds[k] <= 2 || (!strcmp(mode, "dup2_device") &&
				    (fstat(fds[k], &st) || !S_ISREG(st.st_mode))))
					fds[k--] = fds[--n];
			}
			if (!n)
				t_fail("%s: no descriptor of uswap's to replace", mode);
		}
		for (k = 0; k < n; k++) {
			int r = (k & 1) ? dup3(log_fd, fds[k], O_CLOEXEC) :
					  dup2(log_fd, fds[k]);

			if (r != fds[k])
				t_fail("dup onto %d: %s", fds[k], strerror(errno));
		}
		for (k = 0; k < n; k++)
			if (!same_file(fds[k], log_fd))
				t_fail("descriptor %d does not name the log after dup2 onto it",
				       fds[k]);
		printf("%s: the log is now on %u descriptors\n", mode, n);
	} else {
		t_fail("unknown mode %s", mode);
	}

	/*
	 * New memory first: evictions before any old page is read back.
	 * Not after raw: what must find the loss there is a fault alone.
	 */
	if (strcmp(mode, "raw")) {
		more = map();
		fill(more, 7);
		check(more, 7, "after, new memory");
	}
	check(mem, 1, "after");
	fill(mem, 2);
	check(mem, 2, "after, written again");
	if (!strcmp(mode, "raw")) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		unsigned round;

		/* uswap has not stopped us yet: keep going, for a while. */
		for (round = 0; round < 100; round++) {
			fill(mem, 3 + round);
			check(mem, 3 + round, "raw, later");
			nanosleep(&ts, NULL);
		}
		fprintf(stderr, "FAIL: raw: uswap lost its descriptors and never stopped the program\n");
		return 5;
	}
	printf("%s: every page byte-exact\n", mode);
	return 0;
}
