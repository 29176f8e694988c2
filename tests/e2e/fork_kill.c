// SPDX-License-Identifier: MIT
/*
 * fork_kill.c - children killed with SIGKILL at any moment leave no swap
 * slot in use (docs/reliability.md, soak item 20).
 *
 * A parent fills 24 MiB under a 4 MiB budget (8 folios with folios of
 * 1 MiB and more; most of it goes out), then, ROUNDS times, forks a child
 * that rewrites pages at random (its faults free slots, its reclaimer
 * takes new ones) and kills it with SIGKILL after a random 0-20 ms, in
 * the middle of whatever it was doing.  The dead are reaped about once a
 * second, so hundreds of them hold uses of the parent's slots at once,
 * and past the tree's member limit children read their memory in.  Every
 * page of the parent must still be its own, and once the reaper is done
 * the budget must have one member left.
 *
 * The slots in use on the device should then be exactly those the
 * parent's tables name (white-box, as fork.c); a child killed between
 * the two halves of taking or giving up a slot can leave one in use
 * (docs/reliability.md, soak item 20, open): that is checked only with
 * "strict", the item's reproducer, and otherwise printed.
 *
 * Usage: fork_kill [FOLIO] [COMPRESSOR|off] [ROUNDS] [strict]
 */
#include <signal.h>
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

#define MB (1ul << 20)
#define SIZE (24 * MB)
#define NPAGES (SIZE / T_PAGE)

static struct uswap_runtime *rt;
static char *mem;

/*
 * Slots whose use count is not the number of members that hold them
 * (owner bits, swapon.c): uses nobody will give back, or too few.
 */
static uint64_t uses_unaccounted(uint64_t *extra)
{
	uint64_t bad = 0;
	unsigned k, m;
	uint32_t off;

	*extra = 0;
	for (k = 0; k < rt->nr_swap; k++) {
		struct swap_info *si = &rt->swap[k];

		for (off = 0; off < si->nr_slots; off++) {
			unsigned count = swap_slot_count(si, off), held = 0;

			if (!count)
				continue;
			for (m = 0; m < TREE_MAX_MEMBERS; m++)
				held += !!(atomic_load(&si->owners[(size_t)m * si->owner_words + off / 64]) &
					   (1ull << (off % 64)));
			if (count != held) {
				bad++;
				*extra += count - held;
			}
		}
	}
	return bad;
}

static void child(unsigned seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (;;) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		t_fill(mem + (x % NPAGES) * T_PAGE, x % NPAGES, 3);
	}
}

int main(int argc, char **argv)
{
	struct uswap_options opt;
	unsigned rounds = argc > 3 ? (unsigned)atoi(argv[3]) : 100, r;
	uint64_t inuse = 0, named = 0, p;
	struct timespec ts;
	int tries;

	uswap_options_init(&opt);
	t_folio_pool_args(&opt, argc, argv, 4096);
	opt.max = opt.folio_size >= MB ? 8 * opt.folio_size : 4 * MB;
	rt = t_runtime(&opt);
	mem = uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	for (p = 0; p < NPAGES; p++)
		t_fill(mem + p * T_PAGE, p, 1);
	srand((unsigned)getpid());
	for (r = 0; r < rounds; r++) {
		pid_t c = fork();

		if (c < 0)
			t_fail("fork: %s", strerror(errno));
		if (c == 0)
			child(r + 1);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(rand() % 20000) * 1000;
		nanosleep(&ts, NULL);
		kill(c, SIGKILL);
		if (waitpid(c, NULL, 0) != c)
			t_fail("waitpid: %s", strerror(errno));
	}
	for (tries = 0; tries < 200; tries++) {
		t_slot_use(rt, &inuse, &named);
		if (inuse == named && atomic_load(&rt->memcg->nr_live) == 1)
			break;
		usleep(50000);
	}
	{
		uint64_t extra, bad = uses_unaccounted(&extra);

		printf("fork_kill %s %s, %u children killed: slots in use %llu, named by the parent %llu, members %u, slots with uses no member holds %llu (%lld uses)\n",
		       argc > 1 ? argv[1] : "4K", opt.zswap[0] ? opt.zswap : "off",
		       rounds, (unsigned long long)inuse, (unsigned long long)named,
		       atomic_load(&rt->memcg->nr_live), (unsigned long long)bad,
		       (long long)extra);
	}
	if (argc > 4 && !strcmp(argv[4], "strict")) {
		uint64_t extra, bad = uses_unaccounted(&extra);

		if (inuse != named || bad)
			t_fail("%llu slots in use but the parent names %llu; %llu slots with uses no member holds: left by killed children",
			       (unsigned long long)inuse,
			       (unsigned long long)named,
			       (unsigned long long)bad);
	}
	if (inuse < named)
		t_fail("%llu slots in use but the parent names %llu: slots it needs were freed",
		       (unsigned long long)inuse, (unsigned long long)named);
	if (atomic_load(&rt->memcg->nr_live) != 1)
		t_fail("%u members left in the budget",
		       atomic_load(&rt->memcg->nr_live));
	for (p = 0; p < NPAGES; p++)
		if (t_check(mem + p * T_PAGE, p, 1))
			t_fail("parent: page %llu is not its own",
			       (unsigned long long)p);
	uswap_runtime_destroy(rt);
	return 0;
}
