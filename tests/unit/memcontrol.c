// SPDX-License-Identifier: MIT
/*
 * memcontrol.c - claiming a gone member of the budget for reaping
 * (reap_claim): a member entry that changed hands since the reaper looked
 * at it (its process left and a fork gave the entry to a new child, or an
 * exec'd image took it back under the same pid) is never claimed, as
 * reaping the new occupant would free the uses of slots it still holds;
 * a gone member and a reaper that died half-way are.
 *
 * The test includes memcontrol.c itself to reach the static function.
 */
#include <sys/mman.h>

#include "testlib.h"
#include "../../src/memcontrol.c"

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

int main(void)
{
	struct memcg *mc = mmap(NULL, sizeof(*mc), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const int me = (int)getpid(), parent = (int)getppid();

	if (mc == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));

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

	printf("memcontrol: reap claims: all checks passed\n");
	return T_PASS;
}
