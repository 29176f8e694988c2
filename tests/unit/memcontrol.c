// SPDX-License-Identifier: MIT
/*
 * memcontrol.c - claiming a gone member of the budget for reaping
 * (reap_claim): a member entry that changed hands since the reaper looked
 * at it (its process left and a fork gave the entry to a new child, or an
 * exec'd image took it back under the same pid) is never claimed, as
 * reaping the new occupant would free the uses of slots it still holds;
 * a gone member and a reaper that died half-way are.
 *
 * Releasing a member folds its counters into the tree's reaped totals
 * (member_release): its events, the pool's included, once per occupancy
 * (a release taken over again adds nothing), never its gauges, and
 * nothing of a process that wrote its final counters itself.
 *
 * The test includes memcontrol.c itself to reach the static function.
 */
#include <sys/mman.h>

#include "unitlib.h"
#include "../../src/memcontrol.c"
#include "zswap_pool.h"

/* A pid that names no process: past pid_max, which is at most 2^22. */
#define NO_PID	((1 << 22) + 1)

/* Member m in occupancy gen 1: state, pid, reaper. */
static void set_member(struct memcg *mc, unsigned m, unsigned st, int pid,
		       int reaper)
{
	atomic_store(&mc->member[m].gen, 1);
	atomic_store(&mc->member[m].state, st);
	atomic_store(&mc->member[m].pid, pid);
	atomic_store(&mc->member[m].reaper, reaper);
}

static void expect(struct memcg *mc, unsigned m, unsigned st, int reaper,
		   const char *what)
{
	if (atomic_load(&mc->member[m].state) != st ||
	    atomic_load(&mc->member[m].reaper) != reaper)
		t_fail("%s: state %u reaper %d, expected state %u reaper %d",
		       what, atomic_load(&mc->member[m].state),
		       atomic_load(&mc->member[m].reaper), st, reaper);
}

/* A budget of nothing but free member entries. */
static struct memcg *memcg_new(void)
{
	struct memcg *mc = mmap(NULL, sizeof(*mc), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mc == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	return mc;
}

static void test_fold(void)
{
	struct memcg *mc = memcg_new();
	struct uswap_runtime *rt = calloc(1, sizeof(*rt));
	struct vmstat_reaped *r = &mc->reaped;

	if (!rt)
		t_fail("out of memory");
	rt->memcg = mc;
	rt->stat = &rt->stat_own;
	rt->member = 0;

	/* Member 10: a process gone without a word. */
	set_member(mc, 10, MEMBER_REAPING, NO_PID, 0);
	atomic_fetch_add(&mc->nr_live, 1);
	atomic_store(&mc->stat[10].ev[USWAP_PSWPOUT], 100);
	atomic_store(&mc->stat[10].ev[USWAP_MAX_OVERRUN], 3);
	atomic_store(&mc->stat[10].ev[USWAP_MANAGED_BYTES], 1 << 20);
	atomic_store(&mc->stat[10].latency[2], 5);
	atomic_store(&mc->stat[10].zswap[ZC_ZSWPOUT], 7);
	atomic_store(&mc->stat[10].zswap[ZC_STORED], 9);
	member_release(rt, 10, true);
	if (atomic_load(&r->ev[USWAP_PSWPOUT]) != 100 ||
	    atomic_load(&r->ev[USWAP_MAX_OVERRUN]) != 3 ||
	    atomic_load(&r->ev[USWAP_ZSWPOUT]) != 7 ||
	    atomic_load(&r->latency[2]) != 5 ||
	    atomic_load(&r->processes) != 1)
		t_fail("events not folded: pswpout %llu max_overrun %llu zswpout %llu latency %llu processes %llu",
		       (unsigned long long)atomic_load(&r->ev[USWAP_PSWPOUT]),
		       (unsigned long long)atomic_load(&r->ev[USWAP_MAX_OVERRUN]),
		       (unsigned long long)atomic_load(&r->ev[USWAP_ZSWPOUT]),
		       (unsigned long long)atomic_load(&r->latency[2]),
		       (unsigned long long)atomic_load(&r->processes));
	if (atomic_load(&r->ev[USWAP_MANAGED_BYTES]) ||
	    atomic_load(&r->ev[USWAP_ZSWAP_STORED_PAGES]))
		t_fail("gauges folded");
	if (atomic_load(&mc->folded_gen[10]) != 1)
		t_fail("the occupancy folded is not named");

	/* The same occupancy released again (a reaper taken over): nothing. */
	set_member(mc, 10, MEMBER_REAPING, NO_PID, 0);
	atomic_fetch_add(&mc->nr_live, 1);
	member_release(rt, 10, true);
	if (atomic_load(&r->ev[USWAP_PSWPOUT]) != 100 ||
	    atomic_load(&r->processes) != 1)
		t_fail("one occupancy folded twice");

	/* A process that wrote its final counters: not folded. */
	set_member(mc, 11, MEMBER_REAPING, NO_PID, 0);
	atomic_fetch_add(&mc->nr_live, 1);
	atomic_store(&mc->stat[11].ev[USWAP_PSWPOUT], 1000);
	atomic_store(&mc->member[11].reported, true);
	member_release(rt, 11, true);
	if (atomic_load(&r->ev[USWAP_PSWPOUT]) != 100 ||
	    atomic_load(&r->processes) != 1)
		t_fail("the counters of a process that wrote them were folded");

	/* An exec'd image: its events, but no process. */
	set_member(mc, 12, MEMBER_REAPING, NO_PID, 0);
	atomic_fetch_add(&mc->nr_live, 1);
	atomic_store(&mc->stat[12].ev[USWAP_PSWPOUT], 10);
	member_release(rt, 12, false);
	if (atomic_load(&r->ev[USWAP_PSWPOUT]) != 110 ||
	    atomic_load(&r->processes) != 1)
		t_fail("an exec'd image: pswpout %llu processes %llu",
		       (unsigned long long)atomic_load(&r->ev[USWAP_PSWPOUT]),
		       (unsigned long long)atomic_load(&r->processes));
	free(rt);
	munmap(mc, sizeof(*mc));
}

static void test_reap_claim(void)
{
	struct memcg *mc = memcg_new();
	const int me = (int)getpid(), parent = (int)getppid();

	/*
	 * The reaper saw occupancy 1 LIVE; its process left and a fork gave
	 * the entry to a new child (member_reserve: occupancy 2), LIVE too.
	 */
	set_member(mc, 3, MEMBER_FREE, 0, 0);
	if (member_reserve(mc, 0, 0) != 0 || member_reserve(mc, 0, 0) != 1 ||
	    member_reserve(mc, 0, 0) != 2 || member_reserve(mc, 0, 0) != 3)
		t_fail("member_reserve did not take the first free entries");
	if (atomic_load(&mc->member[3].gen) != 2)
		t_fail("member_reserve did not start a new occupancy");
	atomic_store(&mc->member[3].pid, me);
	atomic_store(&mc->member[3].state, MEMBER_LIVE);
	if (reap_claim(mc, 3, MEMBER_LIVE, 1))
		t_fail("claimed an entry that a new child took meanwhile");
	expect(mc, 3, MEMBER_LIVE, 0, "entry of a new child");

	/* ... the same with the exec'd image under the same pid. */
	set_member(mc, 9, MEMBER_LIVE, NO_PID, 0);
	atomic_store(&mc->member[9].gen, 2);
	if (reap_claim(mc, 9, MEMBER_LIVE, 1))
		t_fail("claimed an entry an exec'd image took back under its pid");
	expect(mc, 9, MEMBER_LIVE, 0, "entry of an exec'd image");

	/* ... and freed, not taken again. */
	set_member(mc, 4, MEMBER_FREE, 0, 0);
	if (reap_claim(mc, 4, MEMBER_LIVE, 1))
		t_fail("claimed a free entry");
	expect(mc, 4, MEMBER_FREE, 0, "free entry");

	/* ... and exec'd meanwhile (EXECED): not from the LIVE it saw. */
	set_member(mc, 5, MEMBER_EXECED, NO_PID, 0);
	if (reap_claim(mc, 5, MEMBER_LIVE, 1))
		t_fail("claimed from a state the entry is no longer in");
	expect(mc, 5, MEMBER_EXECED, 0, "exec'd entry");

	/* The same occupancy as seen: claimed. */
	set_member(mc, 6, MEMBER_LIVE, NO_PID, 0);
	if (!reap_claim(mc, 6, MEMBER_LIVE, 1))
		t_fail("a gone member was not claimed");
	expect(mc, 6, MEMBER_REAPING, me, "gone member");

	/* A reaper that died half-way is taken over; a live one is not. */
	set_member(mc, 7, MEMBER_REAPING, NO_PID, NO_PID + 1);
	if (!reap_claim(mc, 7, MEMBER_REAPING, 1))
		t_fail("the member of a dead reaper was not taken over");
	expect(mc, 7, MEMBER_REAPING, me, "taken over");
	set_member(mc, 8, MEMBER_REAPING, NO_PID, parent);
	if (reap_claim(mc, 8, MEMBER_REAPING, 1))
		t_fail("took a member from a live reaper");
	expect(mc, 8, MEMBER_REAPING, parent, "live reaper");
	munmap(mc, sizeof(*mc));
}

/*
 * An uncharge of more than a member holds (a bookkeeping bug) stops the
 * charges at zero and counts the difference; it neither wraps nor aborts.
 * (A debug build asserts instead: then the case is skipped.)
 */
static void test_underflow(void)
{
	struct memcg *mc = memcg_new();

#ifdef USWAP_DEBUG
	t_skip_case("a debug build stops at a charge below zero");
	return;
#endif
	set_member(mc, 3, MEMBER_LIVE, NO_PID, 0);
	atomic_store(&mc->member[3].charged, 5);
	atomic_store(&mc->resident, 12);
	uncharge_member(mc, 3, 4);
	if (atomic_load(&mc->member[3].charged) != 1 ||
	    atomic_load(&mc->resident) != 8 ||
	    atomic_load(&mc->stat[3].ev[USWAP_CHARGE_UNDERFLOW]))
		t_fail("a plain uncharge: charged %llu resident %llu underflow %llu",
		       (unsigned long long)atomic_load(&mc->member[3].charged),
		       (unsigned long long)atomic_load(&mc->resident),
		       (unsigned long long)atomic_load(&mc->stat[3].ev[USWAP_CHARGE_UNDERFLOW]));
	uncharge_member(mc, 3, 3);
	if (atomic_load(&mc->member[3].charged) != 0 ||
	    atomic_load(&mc->resident) != 5 ||
	    atomic_load(&mc->stat[3].ev[USWAP_CHARGE_UNDERFLOW]) != 2)
		t_fail("3 pages off 1: charged %llu resident %llu underflow %llu, expected 0, 5, 2",
		       (unsigned long long)atomic_load(&mc->member[3].charged),
		       (unsigned long long)atomic_load(&mc->resident),
		       (unsigned long long)atomic_load(&mc->stat[3].ev[USWAP_CHARGE_UNDERFLOW]));
	munmap(mc, sizeof(*mc));
}

static const struct t_case cases[] = {
	T_CASE(reap_claim, "only the occupancy the reaper saw is claimed"),
	T_CASE(fold, "a member's events fold into the reaped totals once"),
	T_CASE(underflow, "a charge below zero stops at zero and is counted"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){ .cases = cases });
}
