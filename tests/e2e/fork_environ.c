// SPDX-License-Identifier: MIT
/*
 * fork_environ - a fork whose environment lives in managed memory that is
 * swapped out.  Programs that set their process title (redis, postgres,
 * nginx) move their environment to their heap, which uswap may manage; a
 * fork child's runtime starts in a fork handler, before any fault thread
 * of its own runs, so nothing it does there may read the program's
 * memory (a getenv there slept for ever in handle_userfault: redis BGSAVE).
 *
 * Run under `uswap run --max 16M`: moves environ into a managed 4 MiB
 * block, pushes it out with 64 MiB of other writes, checks that its page
 * is out (mincore), forks a few times; each child checks the environment
 * and exits.  A child stuck for 60 s fails the test.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK		(4u << 20)
#define FILLER		(64u << 20)
#define PAGE		4096u

extern char **environ;

static void die(const char *what)
{
	fprintf(stderr, "FAIL: %s\n", what);
	exit(1);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: a fork child is stuck (60 s)\n";

	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

/* Copy environ into blk (its array at the start, then the strings). */
static void move_environ(char *blk)
{
	size_t n = 0, i, off;
	char **env;

	while (environ[n])
		n++;
	env = (char **)blk;
	off = (n + 1) * sizeof(char *);
	for (i = 0; i < n; i++) {
		size_t len = strlen(environ[i]) + 1;

		if (off + len > BLOCK)
			die("environment larger than the block");
		memcpy(blk + off, environ[i], len);
		env[i] = blk + off;
		off += len;
	}
	env[n] = NULL;
	environ = env;
}

static int resident(const void *p)
{
	unsigned char v = 0;

	if (mincore((void *)((uintptr_t)p & ~(uintptr_t)(PAGE - 1)), PAGE, &v))
		die("mincore");
	return v & 1;
}

int main(void)
{
	char *blk = malloc(BLOCK), *filler = malloc(FILLER);
	int round, out = 0, status;

	if (!blk || !filler)
		die("malloc");
	if (setenv("FORK_ENVIRON_MARK", "kept", 1))
		die("setenv");
	memset(blk, 0, BLOCK);
	move_environ(blk);
	signal(SIGALRM, on_alarm);
	for (round = 0; round < 5; round++) {
		size_t i;
		pid_t c;

		/* Push the environment's page out: write everything else. */
		for (i = 0; i < FILLER; i += PAGE)
			filler[i] = (char)(i / PAGE + round);
		out += !resident(blk);	/* environ's array: not read here */
		c = fork();
		if (c < 0)
			die("fork");
		if (c == 0) {
			const char *v = getenv("FORK_ENVIRON_MARK");

			_exit(v && !strcmp(v, "kept") ? 0 : 2);
		}
		alarm(60);
		if (waitpid(c, &status, 0) != c)
			die("waitpid");
		alarm(0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			die("a child did not find its environment");
	}
	if (!out)
		die("the environment's page was never out at a fork: the test tested nothing");
	printf("fork_environ: 5 forks, the environment out of memory at %d of them\n", out);
	return 0;
}
