// SPDX-License-Identifier: MIT
/*
 * jemalloc_fork.c - a program whose allocator keeps its heap in managed
 * memory forks after that heap was swapped out: the child runs (it
 * allocates at once, and its heap, the allocator's own structures
 * included, is swapped-out memory), sees every block as it was, and the
 * parent too.  Run by jemalloc_fork.sh under uswap run with jemalloc
 * preloaded, so that jemalloc's extents are regions; any allocator works.
 *
 * The parent makes NR_BLOCKS blocks of 64..8191 bytes (about 128 MiB),
 * each filled from its index, then forks several times: each child
 * checks every block, frees a third, allocates new ones, rewrites a
 * third and checks again; forks a grandchild that checks its view; and
 * exits.  A child that does not end within TIMEOUT seconds (a few at
 * rest) fails the test (it is killed: a fork that deadlocks sleeps for
 * ever).
 *
 * Usage: jemalloc_fork [NR_FORKS]
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_BLOCKS	32768u
#define TIMEOUT		300

static unsigned char **blocks;
static size_t *sizes;

static size_t block_size(uint64_t i)
{
	return 64 + (size_t)((i * 2654435761u) % 8128);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
	size_t k;

	for (k = 0; k < n; k++) {
		if (!(k & 7)) {
			s ^= s >> 12;
			s ^= s << 25;
			s ^= s >> 27;
		}
		p[k] = (unsigned char)(s >> (8 * (k & 7)));
	}
}

static bool same(const unsigned char *p, size_t n, uint64_t seed)
{
	unsigned char buf[8192];

	fill(buf, n, seed);
	return !memcmp(p, buf, n);
}

static void fail(const char *who, const char *what, uint64_t i)
{
	fprintf(stderr, "FAIL: %s: %s (block %llu)\n", who, what,
		(unsigned long long)i);
	exit(1);
}

/* Block i holds seed i + version * NR_BLOCKS. */
static void check_all(const char *who, const uint32_t *version)
{
	uint64_t i;

	for (i = 0; i < NR_BLOCKS; i++)
		if (blocks[i] && !same(blocks[i], sizes[i],
				       i + (uint64_t)version[i] * NR_BLOCKS))
			fail(who, "wrong contents", i);
}

/* Wait for pid at most TIMEOUT seconds; kill it then.  Its exit status. */
static int wait_bounded(pid_t pid, const char *who)
{
	int status, t;

	for (t = 0; t < TIMEOUT * 10; t++) {
		pid_t got = waitpid(pid, &status, WNOHANG);

		if (got == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			       128 + WTERMSIG(status);
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fprintf(stderr, "FAIL: %s did not end within %d s (deadlocked at fork?)\n",
		who, TIMEOUT);
	exit(1);
}

static void child(unsigned round)
{
	uint32_t *version = calloc(NR_BLOCKS, sizeof(*version));
	unsigned char **fresh = malloc(NR_BLOCKS / 3 * sizeof(*fresh));
	uint64_t i;
	pid_t g;

	if (!version || !fresh)
		fail("child", "out of memory", 0);
	check_all("child after fork", version);
	for (i = round % 3; i < NR_BLOCKS; i += 3) {
		free(blocks[i]);
		blocks[i] = NULL;
	}
	for (i = 0; i < NR_BLOCKS / 3; i++) {
		fresh[i] = malloc(block_size(i + 7));
		if (!fresh[i])
			fail("child", "malloc failed", i);
		fill(fresh[i], block_size(i + 7), i + 99);
	}
	for (i = (round + 1) % 3; i < NR_BLOCKS; i += 3) {
		version[i] = round + 2;
		fill(blocks[i], sizes[i], i + (uint64_t)version[i] * NR_BLOCKS);
	}
	check_all("child after rewriting", version);
	for (i = 0; i < NR_BLOCKS / 3; i++)
		if (!same(fresh[i], block_size(i + 7), i + 99))
			fail("child", "a new block changed", i);
	g = fork();
	if (g < 0)
		fail("child", "fork failed", 0);
	if (g == 0) {
		check_all("grandchild", version);
		exit(0);
	}
	if (wait_bounded(g, "a grandchild"))
		fail("child", "the grandchild failed", 0);
	check_all("child after the grandchild", version);
	exit(0);
}

int main(int argc, char **argv)
{
	unsigned forks = argc > 1 ? (unsigned)atoi(argv[1]) : 3, round;
	uint32_t *zero;
	size_t total = 0;
	uint64_t i;

	blocks = calloc(NR_BLOCKS, sizeof(*blocks));
	sizes = calloc(NR_BLOCKS, sizeof(*sizes));
	zero = calloc(NR_BLOCKS, sizeof(*zero));
	if (!blocks || !sizes || !zero)
		fail("parent", "out of memory", 0);
	for (i = 0; i < NR_BLOCKS; i++) {
		sizes[i] = block_size(i);
		blocks[i] = malloc(sizes[i]);
		if (!blocks[i])
			fail("parent", "malloc failed", i);
		fill(blocks[i], sizes[i], i);
		total += sizes[i];
	}
	/* The newest blocks are read last: the oldest are swapped out. */
	check_all("parent before fork", zero);
	for (round = 0; round < forks; round++) {
		pid_t pid = fork();

		if (pid < 0)
			fail("parent", "fork failed", round);
		if (pid == 0)
			child(round);
		if (wait_bounded(pid, "a child"))
			fail("parent", "a child failed", round);
		check_all("parent after a child", zero);
	}
	printf("jemalloc_fork: %u blocks, %zu MiB, %u forks: every block kept\n",
	       NR_BLOCKS, total >> 20, forks);
	return 0;
}
