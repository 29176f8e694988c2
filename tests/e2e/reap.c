// SPDX-License-Identifier: MIT
/*
 * reap.c - members of a tree that end without a word (SIGKILL) are
 * reaped by the others, whichever process's turn it is to check them
 * (one process of the tree checks /proc each second), also when no
 * process that used their devices is left.
 *
 *  1. The parent fills 16 MiB under an 8 MiB budget and forks four
 *     children, which share its devices; each rewrites pages of its own
 *     and waits.  Two are killed: the budget must come down to three
 *     members.
 *  2. A child execs this program as "member": a new image that joins the
 *     budget with devices of its own, fills memory, forks a grandchild,
 *     and both wait.  Both are killed at once: nothing of the tree uses
 *     their devices any more, and the others, on other devices, must free
 *     both members (each of the two dead names the devices of the other).
 *  3. The last two children are killed: one member is left; the parent
 *     reads its memory back (every page as it wrote it), and the budget's
 *     charges are the parent's own: also the pages shared by fork that a
 *     killed child was the last to map (the parent had evicted its own
 *     mapping) left the tree's shared charge (share_clamp).
 *
 * Usage: reap   (reap member FD: the exec'd image, internal)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memcontrol.h"
#include "runtime.h"
#include "uswap.h"
#include "testlib.h"

#define MB (1ul << 20)
#define SIZE (16 * MB)
#define NPAGES (SIZE / T_PAGE)
#define NCHILD 4

static struct uswap_runtime *rt;
static char *mem;
static pid_t started[NCHILD + 2];	/* killed at exit: a failure leaves none */
static int nr_started;

static void kill_started(void)
{
	int k;

	for (k = 0; k < nr_started; k++)
		if (started[k] > 0)
			kill(started[k], SIGKILL);
}

static void started_add(pid_t pid)
{
	started[nr_started++] = pid;
}

static void fill(uint64_t first, uint64_t n, uint64_t version)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

static void map_and_fill(size_t size)
{
	mem = uswap_mmap(rt, NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	fill(0, size / T_PAGE, 1);
}

static void say_ready(int fd)
{
	pid_t me = getpid();

	if (write(fd, &me, sizeof(me)) != sizeof(me))
		t_fail("ready: %s", strerror(errno));
}

static pid_t read_ready(int fd, const char *who)
{
	pid_t pid;

	if (read(fd, &pid, sizeof(pid)) != sizeof(pid))
		t_fail("%s did not start", who);
	return pid;
}

/* The exec'd image: joins the budget on devices of its own, and forks. */
static int member_main(int ready)
{
	struct uswap_options opt;
	const char *fd = getenv("USWAP_TREE_FD");

	if (!fd)
		t_fail("member: no USWAP_TREE_FD");
	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = 16384;
	opt.flags |= USWAP_OPT_JOIN_TREE;
	opt.tree_fd = atoi(fd);
	rt = t_runtime(&opt);
	map_and_fill(8 * MB);
	if (fork() < 0)
		t_fail("member: fork: %s", strerror(errno));
	fill(0, 512, 3);	/* parent and child: pages of their own */
	say_ready(ready);
	for (;;)
		pause();
}

static unsigned live(void)
{
	return atomic_load(&rt->memcg->nr_live);
}

/* Wait (20 s at most) for the budget to have `want` members. */
static void wait_members(unsigned want, const char *after)
{
	int tries;

	for (tries = 0; tries < 400 && live() != want; tries++)
		usleep(50000);
	if (live() != want) {
		unsigned m;

		for (m = 0; m < TREE_MAX_MEMBERS; m++)
			if (atomic_load(&rt->memcg->member[m].state) != MEMBER_FREE)
				fprintf(stderr, "member %u: pid %d state %u charged %llu\n", m,
					atomic_load(&rt->memcg->member[m].pid),
					atomic_load(&rt->memcg->member[m].state),
					(unsigned long long)atomic_load(&rt->memcg->member[m].charged));
		t_fail("%s: %u members, wanted %u", after, live(), want);
	}
}

/* Kill pid and forget it: once it is gone, its pid may be someone else's. */
static void kill_forget(pid_t pid, bool ours)
{
	int k;

	kill(pid, SIGKILL);
	for (k = 0; k < nr_started; k++)
		if (started[k] == pid)
			started[k] = 0;
	if (ours)
		waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	struct uswap_options opt;
	pid_t kids[NCHILD], exe, grand;
	int ready[2], k, fd;
	char num[16];

	if (argc == 3 && !strcmp(argv[1], "member"))
		return member_main(atoi(argv[2]));

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = 16384;
	rt = t_runtime(&opt);
	atexit(kill_started);
	map_and_fill(SIZE);
	if (pipe(ready))
		t_fail("pipe");

	/* 1. Four children on the parent's devices; two are killed. */
	for (k = 0; k < NCHILD; k++) {
		kids[k] = fork();
		if (kids[k] < 0)
			t_fail("fork: %s", strerror(errno));
		if (kids[k] == 0) {
			fill((uint64_t)k * 256, 256, 10 + (uint64_t)k);
			say_ready(ready[1]);
			for (;;)
				pause();
		}
		started_add(kids[k]);
		read_ready(ready[0], "a child");
	}
	wait_members(1 + NCHILD, "after the forks");
	kill_forget(kids[0], true);
	kill_forget(kids[1], true);
	wait_members(1 + NCHILD - 2, "two children killed");

	/* 2. An exec'd image on devices of its own, and its child. */
	exe = fork();
	if (exe < 0)
		t_fail("fork: %s", strerror(errno));
	if (exe == 0) {
		fd = uswap_runtime_tree_fd(rt);
		/* Close-on-exec: this exec joins, so it crosses it. */
		if (fd < 0 || fcntl(fd, F_SETFD, 0))
			_exit(126);
		snprintf(num, sizeof(num), "%d", fd);
		setenv("USWAP_TREE_FD", num, 1);
		snprintf(num, sizeof(num), "%d", ready[1]);
		execl("/proc/self/exe", argv[0], "member", num, (char *)NULL);
		_exit(127);
	}
	started_add(exe);
	grand = read_ready(ready[0], "the exec'd image");
	if (grand == exe)
		grand = read_ready(ready[0], "the exec'd image's child");
	else
		read_ready(ready[0], "the exec'd image");
	started_add(grand);
	wait_members(1 + NCHILD - 2 + 2, "the exec'd image and its child");
	kill_forget(grand, false);	/* the exec'd image's child */
	kill_forget(exe, true);
	wait_members(1 + NCHILD - 2, "the exec'd image and its child killed");

	/* 3. The rest. */
	kill_forget(kids[2], true);
	kill_forget(kids[3], true);
	wait_members(1, "every child killed");
	for (k = 0; k < (int)NPAGES; k++)	/* back in: the parent charges */
		if (t_check(mem + (size_t)k * T_PAGE, (uint64_t)k, 1))
			t_fail("page %d of the parent changed", k);
	if (atomic_load(&rt->memcg->resident) != memcg_own_pages(rt))
		t_fail("the budget holds %llu pages, the parent %llu: the dead's charges stayed",
		       (unsigned long long)atomic_load(&rt->memcg->resident),
		       (unsigned long long)memcg_own_pages(rt));
	printf("reap: 4 children and an exec'd image with its child killed; 1 member left, %llu pages charged, all the parent's\n",
	       (unsigned long long)memcg_own_pages(rt));
	uswap_runtime_destroy(rt);
	return 0;
}
