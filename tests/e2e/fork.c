// SPDX-License-Identifier: MIT
/*
 * fork.c - a child sees exactly its parent's memory at fork, swapped-out
 * and compressed parts included, the two diverge copy-on-write, and no
 * slot is freed while a process still needs it or kept once none does.
 *
 * A parent fills 48 MiB under an 8 MiB budget (most of it goes out), then:
 *  - child A checks everything, rewrites half, forks grandchild G (which
 *    checks A's view, rewrites a quarter, and _exits without a word), and
 *    destroys its runtime before it exits;
 *  - child B rewrites some pages and is killed with SIGKILL;
 *  - child C execs /bin/true (its image, and its uses of the slots, go);
 *  - vfork + exec and posix_spawn (no fork handlers run: the child borrows
 *    the parent's memory until it execs);
 *  - the parent checks its own view after each, rewriting nothing.
 * At the end the slots in use on the devices must be exactly those the
 * parent's tables name (white-box: the test reads them), once the members
 * that ended without a word have been reaped, and the budget must have
 * one member left.
 *
 * Usage: fork [FOLIO] [COMPRESSOR|off]
 */
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "swap.h"
#include "uswap.h"
#include "testlib.h"
#include "slot_use.h"

extern char **environ;

#define MB (1ul << 20)
#define SIZE (48 * MB)
#define NPAGES (SIZE / T_PAGE)

static struct uswap_runtime *rt;
static char *mem;

/* Every page holds (page, version(page)). */
static void check_all(const char *who, uint64_t (*version)(uint64_t))
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		if (t_check(mem + p * T_PAGE, p, version(p))) {
			uint64_t got = 0;

			t_header(mem + p * T_PAGE, p, &got);
			t_fail("%s: page %llu: wanted version %llu, header says %llu",
			       who, (unsigned long long)p,
			       (unsigned long long)version(p),
			       (unsigned long long)got);
		}
}

static void fill(uint64_t first, uint64_t n, uint64_t version)
{
	uint64_t p;

	for (p = first; p < first + n; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

static uint64_t v_parent(uint64_t p) { (void)p; return 1; }
static uint64_t v_a(uint64_t p) { return p < NPAGES / 2 ? 2 : 1; }
static uint64_t v_g(uint64_t p)
{
	return p >= NPAGES / 4 && p < NPAGES / 2 ? 7 : v_a(p);
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	return status;
}

static void child_a(void)
{
	pid_t g;

	check_all("child A after fork", v_parent);
	fill(0, NPAGES / 2, 2);
	check_all("child A after rewriting", v_a);
	g = fork();
	if (g < 0)
		t_fail("fork G: %s", strerror(errno));
	if (g == 0) {
		check_all("grandchild G after fork", v_a);
		fill(NPAGES / 4, NPAGES / 4, 7);
		check_all("grandchild G after rewriting", v_g);
		_exit(0);	/* no destroy: reaped by the others */
	}
	if (wait_child(g) != 0)
		t_fail("grandchild G failed");
	check_all("child A after G", v_a);
	uswap_runtime_destroy(rt);
	_exit(0);
}

static void child_b(int ready)
{
	fill(NPAGES - 1024, 1024, 5);
	(void)!write(ready, "x", 1);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct uswap_options opt;
	uint64_t inuse = 0, named = 0, v[USWAP_NR_COUNTERS];
	int pipefd[2], tries;
	pid_t a, b, c;
	char x;

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	t_folio_pool_args(&opt, argc, argv, 16384);
	rt = t_runtime(&opt);
	mem = uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	fill(0, NPAGES, 1);
	check_all("parent before fork", v_parent);

	a = fork();
	if (a < 0)
		t_fail("fork A: %s", strerror(errno));
	if (a == 0)
		child_a();
	if (wait_child(a) != 0)
		t_fail("child A failed");
	check_all("parent after A", v_parent);

	if (pipe(pipefd))
		t_fail("pipe");
	b = fork();
	if (b == 0)
		child_b(pipefd[1]);
	if (b < 0 || read(pipefd[0], &x, 1) != 1)
		t_fail("child B did not start");
	kill(b, SIGKILL);
	wait_child(b);
	check_all("parent after B", v_parent);

	c = fork();
	if (c == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (c < 0 || wait_child(c) != 0)
		t_fail("child C failed");
	check_all("parent after C", v_parent);

	c = vfork();
	if (c == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (c < 0 || wait_child(c) != 0)
		t_fail("vfork child failed");
	{
		char *args[] = { "true", NULL };

		if (posix_spawn(&c, "/bin/true", NULL, NULL, args, environ) ||
		    wait_child(c) != 0)
			t_fail("posix_spawn child failed");
	}
	check_all("parent after vfork and posix_spawn", v_parent);

	/* G, B and C ended without freeing: the reclaimer reaps them. */
	for (tries = 0; tries < 200; tries++) {
		t_slot_use(rt, &inuse, &named);
		if (inuse == named && atomic_load(&rt->memcg->nr_live) == 1)
			break;
		usleep(50000);
	}
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("fork %s %s: slots in use %llu, named by the parent %llu, members %u, pswpout %llu zswpout %llu tree peak %llu MiB\n",
	       argc > 1 ? argv[1] : "16K", opt.zswap[0] ? opt.zswap : "off",
	       (unsigned long long)inuse, (unsigned long long)named,
	       atomic_load(&rt->memcg->nr_live),
	       (unsigned long long)v[USWAP_PSWPOUT],
	       (unsigned long long)v[USWAP_ZSWPOUT],
	       (unsigned long long)(v[USWAP_RESIDENT_PEAK] >> 20));
	/* On failure, say which members are left. */
	for (tries = 0; tries < TREE_MAX_MEMBERS &&
	     (inuse != named || atomic_load(&rt->memcg->nr_live) != 1); tries++)
		if (atomic_load(&rt->memcg->member[tries].state) != MEMBER_FREE)
			fprintf(stderr, "member %d: pid %d state %u charged %llu\n", tries,
				atomic_load(&rt->memcg->member[tries].pid),
				atomic_load(&rt->memcg->member[tries].state),
				(unsigned long long)atomic_load(&rt->memcg->member[tries].charged));
	if (inuse != named)
		t_fail("%llu slots in use but the parent names %llu: the children's were not freed",
		       (unsigned long long)inuse, (unsigned long long)named);
	if (atomic_load(&rt->memcg->nr_live) != 1)
		t_fail("%u members left in the budget", atomic_load(&rt->memcg->nr_live));
	if (!named)
		t_fail("nothing was swapped out: the test tested nothing");
	check_all("parent at the end", v_parent);
	uswap_runtime_destroy(rt);
	return 0;
}
