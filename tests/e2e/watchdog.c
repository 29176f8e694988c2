// SPDX-License-Identifier: MIT
/*
 * watchdog.c - nobody waits forever on uswap (watchdog.sh runs the modes,
 * with faults injected where a mode needs them, and a generous timeout
 * that only catches a hang).
 *
 * Usage: watchdog serve
 *          write 32 MiB under an 8 MiB budget, read it back, rewrite it,
 *          read it back: every byte as written (watchdog.sh injects fault
 *          threads that fail or stop serving)
 *        watchdog close
 *          write 32 MiB under an 8 MiB budget, then close the runtime's
 *          userfaultfd behind its back (a raw close(2), as a program that
 *          closes every descriptor does) and wait: the program must be
 *          stopped (watchdog.sh checks how) before it reads anything back
 *        watchdog stopped
 *          a tree of two processes under a 16 MiB budget: the child writes
 *          14 MiB and stops (SIGSTOP) holding them; the parent then writes
 *          32 MiB, which needs room the stopped child cannot give back:
 *          the parent must get through (its own reclaim, or past --max,
 *          counted as max_overrun); the child, continued, reads its pages
 *          back, and so does the parent
 */
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define MB (1ul << 20)

static struct uswap_runtime *rt;
static pid_t child;

static char *map(size_t size)
{
	void *p;
	int err = uswap_region_create(rt, size, &p);

	if (err)
		t_fail("uswap_region_create: %s", strerror(-err));
	return p;
}

static void fill(char *mem, uint64_t first, uint64_t n, uint64_t version)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

static void check(const char *who, char *mem, uint64_t first, uint64_t n,
		  uint64_t version)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		if (t_check(mem + p * T_PAGE, p, version))
			t_fail("%s: page %llu is not version %llu", who,
			       (unsigned long long)p, (unsigned long long)version);
}

static struct uswap_runtime *runtime(uint64_t max)
{
	struct uswap_options opt;

	uswap_options_init(&opt);
	opt.max = max;
	opt.folio_size = 16384;
	return t_runtime(&opt);
}

static uint64_t counter(enum uswap_counter c)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	return v[c];
}

static int serve(void)
{
	const uint64_t n = 32 * MB / T_PAGE;
	char *mem;

	rt = runtime(8 * MB);
	mem = map(n * T_PAGE);
	fill(mem, 0, n, 1);
	check("first read", mem, 0, n, 1);
	fill(mem, 0, n, 2);
	check("second read", mem, 0, n, 2);
	printf("serve: pgfault %llu pswpout %llu pswpin %llu\n",
	       (unsigned long long)counter(USWAP_PGFAULT),
	       (unsigned long long)counter(USWAP_PSWPOUT),
	       (unsigned long long)counter(USWAP_PSWPIN));
	uswap_runtime_destroy(rt);
	return 0;
}

/* The descriptor of this process's (only) userfaultfd, or -1. */
static int find_uffd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int fd = -1;

	if (!d)
		t_skip("no /proc/self/fd");
	while (fd < 0 && (de = readdir(d))) {
		char path[300], target[128];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			if (strstr(target, "[userfaultfd]"))
				fd = atoi(de->d_name);
		}
	}
	closedir(d);
	return fd;
}

static int close_uffd(void)
{
	const uint64_t n = 32 * MB / T_PAGE;
	const struct timespec wait = { 10, 0 };
	char *mem;
	int fd;

	rt = runtime(8 * MB);
	mem = map(n * T_PAGE);
	fill(mem, 0, n, 1);
	fd = find_uffd();
	if (fd < 0)
		t_fail("no userfaultfd among the descriptors");
	printf("close: pswpout %llu; closing descriptor %d\n",
	       (unsigned long long)counter(USWAP_PSWPOUT), fd);
	fflush(stdout);
	syscall(SYS_close, fd);
	nanosleep(&wait, NULL);
	check("after the close", mem, 0, n, 1);
	printf("close: the program went on, and read its data back\n");
	return 0;
}

static void hung(int sig)
{
	static const char msg[] = "FAIL: the parent did not get through in 60 s while the child was stopped\n";

	(void)sig;
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	if (child > 0)
		kill(child, SIGKILL);
	_exit(1);
}

static int stopped(void)
{
	const uint64_t mine = 32 * MB / T_PAGE, theirs = 14 * MB / T_PAGE;
	int ready[2], status;
	char *mem, c;
	uint64_t t0;

	rt = runtime(16 * MB);
	mem = map(64 * MB);
	if (pipe(ready))
		t_fail("pipe: %s", strerror(errno));
	child = fork();
	if (child < 0)
		t_fail("fork: %s", strerror(errno));
	if (!child) {
		if (!uswap_runtime_usable(rt))
			t_fail("child: the runtime did not carry on");
		fill(mem, 0, theirs, 3);
		if (write(ready[1], "r", 1) != 1)
			t_fail("child: ready: %s", strerror(errno));
		raise(SIGSTOP);
		check("child, continued", mem, 0, theirs, 3);
		_exit(0);
	}
	signal(SIGALRM, hung);
	alarm(60);
	if (read(ready[0], &c, 1) != 1)
		t_fail("the child did not get ready");
	if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status))
		t_fail("the child did not stop (status %#x)", status);
	t0 = (uint64_t)time(NULL);
	fill(mem, 16 * MB / T_PAGE, mine, 4);
	printf("stopped: the parent wrote 32 MiB in about %llu s: max_overrun %llu pswpout %llu reclaim_stall_us %llu\n",
	       (unsigned long long)((uint64_t)time(NULL) - t0),
	       (unsigned long long)counter(USWAP_MAX_OVERRUN),
	       (unsigned long long)counter(USWAP_PSWPOUT),
	       (unsigned long long)counter(USWAP_RECLAIM_STALL_US));
	alarm(0);
	if (!counter(USWAP_MAX_OVERRUN) && !counter(USWAP_PSWPOUT))
		t_fail("the parent got through with neither its own reclaim nor an overrun");
	kill(child, SIGCONT);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		t_fail("the child failed (status %#x)", status);
	check("parent", mem, 16 * MB / T_PAGE, mine, 4);
	uswap_runtime_destroy(rt);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc == 2 && !strcmp(argv[1], "close"))
		return close_uffd();
	if (argc == 2 && !strcmp(argv[1], "stopped"))
		return stopped();
	t_fail("usage: watchdog serve|close|stopped");
}
