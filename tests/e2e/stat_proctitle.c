// SPDX-License-Identifier: MIT
/*
 * stat_proctitle.c - a program that sets its process title, as redis,
 * postgres, nginx and stress-ng do: it moves its environment to the heap
 * and writes over the whole block of its arguments and environment, so
 * that /proc/PID/cmdline shows the title and /proc/PID/environ shows
 * nothing of what it was started with (USWAP_STATS_DIR included).  Run
 * under uswap run by stat_proctitle.sh, which then looks for it with
 * uswap stat and uswap top.
 *
 * It writes SIZE MiB of managed memory (so that it swaps under a smaller
 * --max), prints "ready PID" once the title is set, rewrites its memory
 * until standard input ends, then checks every byte and exits 0.
 *
 * Usage: stat_proctitle SIZE_MIB TITLE [args]
 * (args: write over the arguments only, and keep the environment).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

extern char **environ;

/*
 * The block of this process's arguments and environment strings, as the
 * kernel knows it (/proc/self/stat: arg_start, env_end): the environment
 * array may point elsewhere by now (setenv).
 */
static void args_block(char **start, char **end, bool args_only)
{
	unsigned long v[4];
	char buf[4096], *p;
	int field, fd = open("/proc/self/stat", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (n <= 0)
		t_fail("/proc/self/stat: %s", strerror(errno));
	close(fd);
	buf[n] = 0;
	p = strrchr(buf, ')');
	for (field = 2; p && field < 48; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		t_fail("/proc/self/stat: no arg_start..env_end");
	*start = (char *)v[0];
	*end = (char *)v[args_only ? 1 : 3];
}

/*
 * Move the environment to the heap, then clear the whole block of the
 * arguments and environment (or of the arguments only) and put title
 * there.
 */
static void set_title(const char *title, bool args_only)
{
	char *start, *end, **env, *t = strdup(title);
	size_t n, i;

	args_block(&start, &end, args_only);
	for (n = 0; environ[n]; n++)
		;
	env = calloc(n + 1, sizeof(*env));
	if (!env || !t)
		t_fail("out of memory");
	for (i = 0; i < n; i++) {
		env[i] = strdup(environ[i]);
		if (!env[i])
			t_fail("out of memory");
	}
	environ = env;
	memset(start, 0, (size_t)(end - start));
	snprintf(start, (size_t)(end - start), "%s", t);
	free(t);
}

static uint8_t pattern(size_t page, unsigned pass)
{
	return (uint8_t)(page * 131 + pass * 7 + 1);
}

int main(int argc, char **argv)
{
	size_t size, pages, p;
	unsigned pass = 0;
	uint8_t *mem;
	char c;

	if (argc != 3 && (argc != 4 || strcmp(argv[3], "args")))
		t_fail("usage: stat_proctitle SIZE_MIB TITLE [args]");
	size = strtoul(argv[1], NULL, 10) << 20;
	pages = size / T_PAGE;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	for (p = 0; p < pages; p++)
		memset(mem + p * T_PAGE, pattern(p, pass), T_PAGE);
	set_title(argv[2], argc == 4);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	/* Rewrite the memory while the test looks, until stdin ends. */
	for (;;) {
		struct timespec ts = { 0, 200 * 1000 * 1000 };
		ssize_t r;

		fcntl(0, F_SETFL, O_NONBLOCK);
		r = read(0, &c, 1);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			break;
		pass++;
		for (p = 0; p < pages; p++)
			memset(mem + p * T_PAGE, pattern(p, pass), T_PAGE);
		nanosleep(&ts, NULL);
	}
	for (p = 0; p < pages; p++) {
		uint8_t want = pattern(p, pass);
		size_t i;

		for (i = 0; i < T_PAGE; i++)
			if (mem[p * T_PAGE + i] != want)
				t_fail("page %zu byte %zu: %#x, expected %#x",
				       p, i, mem[p * T_PAGE + i], want);
	}
	return 0;
}
