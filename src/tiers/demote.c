// SPDX-License-Identifier: MIT
/*
 * demote.c - demotion of cold folios to slower memory nodes, and promotion
 * of the ones that turn out to be used (the kernel's demotion in
 * shrink_folio_list and NUMA-balancing promotion, in user space).
 *
 * Targets.  At start the runtime reads the machine's memory tiers and
 * computes each node's demotion targets (memory_tiers.c), or takes them
 * from --demotion SPEC; "none", a machine with one tier, or a map without
 * arrows leaves rt->tiering NULL and reclaim as it was.
 *
 * Budgets.  --max is the budget of the program's memory on its fast
 * nodes.  A folio demoted to a slower node leaves that budget and is
 * charged to the node's own (--tier-max NODE=SIZE; default: as much as
 * --max), in the tree's shared budget (memcontrol.c, struct tier_budget).
 * A folio carries F_DEMOTED and its node in its flags while it is
 * charged there, so that whoever drops it uncharges the right budget
 * (folio_uncharge()).
 *
 * Demotion.  The reclaimer isolates victims as for swap (EVICTING,
 * write-protected).  Before they are written, each one whose node has a
 * target with room is moved there with move_pages(MPOL_MF_MOVE): its pages
 * stay mapped and write-protected, so the program uses them without a
 * fault and a write still shows.  A folio whose pages all arrived is
 * RESIDENT again, on the region's demoted list; any other goes to swap as
 * usual (pgdemote_fail).  A write that aborts the eviction during the
 * move leaves the folio where it went: the pages did move.  The kernel
 * keeps the uffd-wp bit across migration, so the protection holds.
 *
 * The slower tier in turn.  When a node's budget passes its high mark,
 * the reclaimer takes the coldest folios of the demoted list that live
 * there and demotes them further (when the node has targets) or swaps
 * them out, down to its low mark.  So a workload fills the fast budget,
 * then the slow one, and only then writes to swap.
 *
 * Promotion, with hysteresis.  A demoted folio stays write-protected; a
 * write to it (fault_wp) marks it referenced.  When the reclaimer is idle
 * it walks the demoted lists: a folio written since the last walk is a
 * candidate (pgpromote_candidate), write-protected again by the walk after
 * (not at once: the writer that marked it may not have run since its
 * fault, and would fault again for the same write); written again after
 * that, it is moved back to a fast node (pgpromote_success), if the fast
 * budget has room below its low mark (so that a promotion never makes
 * reclaim demote something else at once) and within a rate limit.  Read-only use is not
 * seen here: such a folio goes to swap when its tier is full and comes
 * back to a fast node on its next fault.
 *
 * Only the reclaimer thread calls in here, so the move_pages arrays are
 * one set per runtime.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "demote.h"
#include "ilist.h"
#include "lockdep.h"
#include "log.h"
#include "memcontrol.h"
#include "prim.h"
#include "region.h"
#include "runtime.h"
#include "uswap.h"
#include "memory_tiers.h"

#define DEMOTE_MAX_PAGES	1024u	/* a batch: 2 MiB plus one 2 MiB folio */
#define PROMOTE_SCAN_PAGES	512u	/* a walk of one region's demoted list */
#define PROMOTE_MBPS		256u	/* promotion rate limit, MiB/s */
#define MPOL_MF_MOVE_FLAG	(1 << 1)

struct tiering {
	struct demotion_map map;
	int home[MEM_MAX_NODES];	/* where a node's folios are promoted to */
	unsigned rr;			/* spreads demotion over equal targets */
	/* Pages charged to each node for a move still in progress. */
	_Atomic uint64_t inflight[MEM_MAX_NODES];
	uint64_t tokens;		/* promotion budget, pages */
	uint64_t refill_us;
	bool logged_move, logged_promote;
	void *pages[DEMOTE_MAX_PAGES];
	int nodes[DEMOTE_MAX_PAGES];
	int status[DEMOTE_MAX_PAGES];
	uint32_t folio[DEMOTE_MAX_PAGES];	/* promotion: folio indices */
	uint32_t arm[DEMOTE_MAX_PAGES];
};

/* ---- options ------------------------------------------------------------ */

/*
 * Parse --tier-max "NODE=SIZE[,NODE=SIZE]..." into max[] (bytes) and the
 * set of nodes named.  0 or -EINVAL with one line in err.
 */
int tier_max_parse(const char *spec, uint64_t max[MEM_MAX_NODES],
		   uint64_t *nodes, char *err, size_t errlen)
{
	char item[64];
	const char *p = spec;

	*nodes = 0;
	while (*p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		unsigned long node;
		char *stop = NULL;
		uint64_t v;

		if (!len || len >= sizeof(item)) {
			snprintf(err, errlen, "--tier-max \"%s\": expected NODE=SIZE[,NODE=SIZE]...",
				 spec);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = 0;
		eq = strchr(item, '=');
		node = eq && item[0] >= '0' && item[0] <= '9' ?
		       strtoul(item, &stop, 10) : 0;
		if (!eq || eq == item || stop != eq || node >= MEM_MAX_NODES) {
			snprintf(err, errlen, "--tier-max \"%s\": \"%s\" is not NODE=SIZE (a node number below %d, then a size)",
				 spec, item, MEM_MAX_NODES);
			return -EINVAL;
		}
		if (uswap_size_parse(eq + 1, &v) || v < (1ull << 20)) {
			snprintf(err, errlen, "--tier-max \"%s\": \"%s\" is not a size of at least 1M",
				 spec, eq + 1);
			return -EINVAL;
		}
		if (*nodes & (1ull << node)) {
			snprintf(err, errlen, "--tier-max \"%s\": node %lu is given twice",
				 spec, node);
			return -EINVAL;
		}
		*nodes |= 1ull << node;
		max[node] = v;
		p += len + (end ? 1 : 0);
		if (end && !*p) {
			snprintf(err, errlen, "--tier-max \"%s\": nothing after the last ','",
				 spec);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Check a --demotion value without the machine: "auto", "none", or a SPEC
 * whose nodes all exist in a topology of 64 memory nodes (so that only
 * its grammar and cycles are checked; the runtime checks the nodes).
 */
int demotion_option_check(const char *spec, char *err, size_t errlen)
{
	static struct mem_topology all;
	struct demotion_map d;
	unsigned n;

	if (!strcmp(spec, "auto") || !strcmp(spec, "none"))
		return 0;
	all.nodes = ~0ull;
	for (n = 0; n < MEM_MAX_NODES; n++)
		all.node[n].has_memory = true;
	return demotion_override_parse(spec, &all, &d, err, errlen);
}

/* ---- set-up ------------------------------------------------------------- */

/*
 * Where folios of slow node s go back to: a node that is no node's target
 * (the fast tier), one that prefers s first, then one that may reach it,
 * the nearest of each.  -1 when none.
 */
static void homes_compute(struct tiering *tg, const struct mem_topology *t)
{
	uint64_t targets = 0;
	unsigned s, n;

	for (n = 0; n < MEM_MAX_NODES; n++)
		targets |= tg->map.preferred[n] | tg->map.allowed[n];
	for (s = 0; s < MEM_MAX_NODES; s++) {
		int best = -1, rank = 0;

		for (n = 0; n < MEM_MAX_NODES; n++) {
			int r, d = t->node[n].distance[s];

			if (targets & (1ull << n))
				continue;
			if (tg->map.preferred[n] & (1ull << s))
				r = 0;
			else if (tg->map.allowed[n] & (1ull << s))
				r = 1 << 20;
			else
				continue;
			r += d > 0 ? d : MEM_REMOTE_DISTANCE;
			if (best < 0 || r < rank) {
				best = (int)n;
				rank = r;
			}
		}
		tg->home[s] = best;
	}
}

static int map_build(struct uswap_runtime *rt, struct mem_topology *t,
		     struct demotion_map *d)
{
	const char *spec = rt->opt.demotion[0] ? rt->opt.demotion : "auto";
	char err[512];
	int ret;

	ret = mem_topology_read(NULL, t, err, sizeof(err));
	if (ret) {
		uswap_log("memory tiers: %s; nothing is demoted", err);
		return ret;
	}
	if (!strcmp(spec, "auto"))
		return demotion_targets_compute(t, d);
	ret = demotion_override_parse(spec, t, d, err, sizeof(err));
	if (ret)
		uswap_log("%s", err);
	return ret;
}

/*
 * Read the tiers and the options; rt->tiering stays NULL when nothing
 * demotes.  The tree's creator sets the tier budgets; an exec'd image
 * that joins the tree finds them set.  0, or -EINVAL (logged) for a
 * --demotion or --tier-max that does not fit this machine.
 */
int tiering_setup(struct uswap_runtime *rt)
{
	struct mem_topology *t;
	uint64_t max[MEM_MAX_NODES] = { 0 }, given = 0, targets = 0;
	struct tiering *tg;
	char err[256];
	unsigned n;
	int ret;

	if (!strcmp(rt->opt.demotion, "none"))
		return 0;
	if (rt->opt.tier_max[0] &&
	    tier_max_parse(rt->opt.tier_max, max, &given, err, sizeof(err))) {
		uswap_log("%s", err);
		return -EINVAL;
	}
	tg = prim_alloc(sizeof(*tg));
	t = prim_alloc(sizeof(*t));	/* 16 KiB: not on the stack */
	if (!tg || !t) {
		prim_free(tg, sizeof(*tg));
		prim_free(t, sizeof(*t));
		return -ENOMEM;
	}
	ret = map_build(rt, t, &tg->map);
	if (!ret)
		homes_compute(tg, t);
	prim_free(t, sizeof(*t));
	if (ret) {
		prim_free(tg, sizeof(*tg));
		/* auto on a machine sysfs does not describe: no tiers */
		return rt->opt.demotion[0] && strcmp(rt->opt.demotion, "auto") ?
		       ret : 0;
	}
	for (n = 0; n < MEM_MAX_NODES; n++)
		targets |= tg->map.preferred[n] | tg->map.allowed[n];
	if (given & ~targets) {
		n = (unsigned)__builtin_ctzll(given & ~targets);
		uswap_log("--tier-max: node %u is not a demotion target here (targets: see --demotion and docs/tiers.md)",
			  n);
		prim_free(tg, sizeof(*tg));
		return -EINVAL;
	}
	if (!targets) {
		prim_free(tg, sizeof(*tg));
		return 0;
	}
	if (!rt->memcg->tier_nodes)
		for (n = 0; n < MEM_MAX_NODES; n++)
			if (targets & (1ull << n))
				tier_budget_set(rt->memcg, (int)n,
						(given & (1ull << n) ? max[n] :
						 rt->opt.max) >> PAGE_SHIFT);
	tg->refill_us = prim_now_us();
	rt->tiering = tg;
	if (rt->opt.flags & USWAP_OPT_VERBOSE) {
		char map[256];

		demotion_format(&tg->map, map, sizeof(map));
		uswap_log("demotion: %s", map);
	}
	return 0;
}

/* Pages charged to tiers for a move still in progress (not there yet). */
uint64_t tiering_inflight(struct uswap_runtime *rt, int node)
{
	return rt->tiering ? atomic_load(&rt->tiering->inflight[node]) : 0;
}

void tiering_destroy(struct uswap_runtime *rt)
{
	prim_free(rt->tiering, sizeof(*rt->tiering));
	rt->tiering = NULL;
}

/* ---- demotion ----------------------------------------------------------- */

static long move_pages_to(unsigned n, void **pages, const int *nodes,
			  int *status)
{
	return prim_move_pages_to(n, pages, nodes, status, MPOL_MF_MOVE_FLAG);
}

/*
 * A target of from with room for nr pages (charged there): the preferred
 * nodes in turn, then the other allowed ones.  -1 when all are full.
 */
static bool try_target(struct tiering *tg, struct uswap_runtime *rt, int to,
		       unsigned nr)
{
	/* In flight before it is charged: stats never count it as there. */
	atomic_fetch_add(&tg->inflight[to], nr);
	if (tier_try_charge(rt, to, nr))
		return true;
	atomic_fetch_sub(&tg->inflight[to], nr);
	return false;
}

static int target_charge(struct uswap_runtime *rt, int from, unsigned nr)
{
	struct tiering *tg = rt->tiering;
	int to = demotion_next(&tg->map, from, tg->rr++);
	uint64_t rest;

	if (to < 0)
		return -1;
	if (try_target(tg, rt, to, nr))
		return to;
	rest = tg->map.allowed[from] & ~(1ull << to);
	while (rest) {
		to = __builtin_ctzll(rest);
		rest &= rest - 1;
		if (try_target(tg, rt, to, nr))
			return to;
	}
	return -1;
}

/*
 * Move the folios of df[0..n) whose node demotes somewhere: df[k].to is
 * where each one went, or -1 (it goes to swap).  One move_pages call for
 * the batch.  Counts pgdemote_* (direct: a fault waits at max).
 */
void demote_folios(struct uswap_runtime *rt, struct demote_folio *df,
		   unsigned n, bool direct)
{
	struct tiering *tg = rt->tiering;
	unsigned k, m = 0, p, failed = 0, moved = 0;
	long ret;

	for (k = 0; k < n; k++) {
		df[k].to = -1;
		if (df[k].from < 0 || df[k].from >= MEM_MAX_NODES ||
		    m + df[k].nr_pages > DEMOTE_MAX_PAGES ||
		    !(tg->map.preferred[df[k].from] | tg->map.allowed[df[k].from]))
			continue;
		df[k].to = target_charge(rt, df[k].from, df[k].nr_pages);
		if (df[k].to < 0) {
			failed += df[k].nr_pages;
			continue;
		}
		for (p = 0; p < df[k].nr_pages; p++, m++) {
			tg->pages[m] = (void *)(df[k].addr + ((uintptr_t)p << PAGE_SHIFT));
			tg->nodes[m] = df[k].to;
			tg->status[m] = -EBUSY;
		}
	}
	if (!m)
		goto count;
	ret = move_pages_to(m, tg->pages, tg->nodes, tg->status);
	if (ret < 0)
		uswap_log_once(&tg->logged_move, "demotion: move_pages failed (%s): folios go to swap instead (counted as pgdemote_fail)",
			       strerror((int)-ret));
	for (k = 0, m = 0; k < n; k++) {
		bool all = true;

		if (df[k].to < 0)
			continue;
		for (p = 0; p < df[k].nr_pages; p++, m++)
			all &= ret >= 0 && tg->status[m] == df[k].to;
		if (all) {
			moved += df[k].nr_pages;
			atomic_fetch_sub(&tg->inflight[df[k].to], df[k].nr_pages);
			continue;
		}
		tier_uncharge(rt, df[k].to, df[k].nr_pages);
		atomic_fetch_sub(&tg->inflight[df[k].to], df[k].nr_pages);
		df[k].to = -1;
		failed += df[k].nr_pages;
		if (ret > 0)
			uswap_log_once(&tg->logged_move, "demotion: some pages could not move to their node: those folios go to swap instead (counted as pgdemote_fail)");
	}
count:
	count_event(rt, direct ? USWAP_PGDEMOTE_DIRECT : USWAP_PGDEMOTE_KSWAPD,
		    moved);
	count_event(rt, USWAP_PGDEMOTE_FAIL, failed);
}

/*
 * Folio i of r moved to node `to` (demote_folios): it is RESIDENT on the
 * demoted list again, charged there instead of where it was (fl_before:
 * its flags when it was isolated).  Caller holds op_lock for reading.
 */
void demote_finish(struct uswap_runtime *rt, struct region *r, uint32_t i,
		   int to, unsigned nr, uint32_t fl_before)
{
	struct folio *f = &r->folios[i];
	uint32_t fl, nfl, node_bits = (uint32_t)to << FOLIO_NODE_SHIFT;
	bool listed;

	lock_assert_held_read(&rt->op_lock);
	pthread_mutex_lock(&r->lru_lock);
	fl = atomic_load(&f->flags);
	if (folio_state(fl) != FOLIO_EVICTING &&
	    folio_state(fl) != FOLIO_RESIDENT) {
		/* Not ours any more (cannot happen while EVICTING). */
		pthread_mutex_unlock(&r->lru_lock);
		tier_uncharge(rt, to, nr);
		return;
	}
	/*
	 * A write that aborted the eviction turned it RESIDENT and puts it on
	 * a list (fault_wp): off that list, to come back on the demoted one.
	 * If fault_wp has not taken the lock yet, it will, and lru_add() will
	 * pick the demoted list from the flags set here.
	 */
	listed = fl & F_LRU;
	if (listed)
		lru_del(r, i);
	fl = atomic_load(&f->flags);
	do {
		nfl = (fl & ~(FOLIO_NODE_MASK | F_PROMOTE)) | F_DEMOTED | node_bits;
		if (folio_state(fl) == FOLIO_EVICTING)
			nfl = (nfl & ~(FOLIO_STATE_MASK | F_WAITERS)) |
			      FOLIO_RESIDENT;
	} while (!atomic_compare_exchange_weak(&f->flags, &fl, nfl));
	if (listed || folio_state(fl) == FOLIO_EVICTING)
		lru_add(r, i, false);
	pthread_mutex_unlock(&r->lru_lock);
	if (folio_state(fl) == FOLIO_EVICTING && (fl & F_WAITERS)) {
		uintptr_t a;
		size_t len;
		uint32_t page;

		folio_range(r, i, &a, &len, &page);
		prim_uffd_wake(rt->uffd, a, len);	/* it waited (memory.c) */
	}
	folio_uncharge(rt, fl_before, nr);
	tier_note_peak(rt, to);
}

/* ---- promotion ---------------------------------------------------------- */

/* May nr more pages be promoted now?  A token bucket of PROMOTE_MBPS. */
static bool promote_allowed(struct tiering *tg, unsigned nr)
{
	uint64_t now = prim_now_us(), cap = (uint64_t)PROMOTE_MBPS << (20 - PAGE_SHIFT);

	tg->tokens += (now - tg->refill_us) * cap / 1000000;
	tg->tokens = MIN(tg->tokens, cap);
	tg->refill_us = now;
	if (tg->tokens < nr)
		return false;
	tg->tokens -= nr;
	return true;
}

/*
 * One walk of r's demoted list (up to PROMOTE_SCAN_PAGES from the cold
 * end): candidates are marked, marked ones write-protected again (a walk
 * later), second-time candidates taken off the list into tg->folio[].  Returns how many were
 * taken; *na the folios to write-protect in tg->arm[].
 */
static unsigned promote_walk(struct uswap_runtime *rt, struct region *r,
			     unsigned *na)
{
	struct tiering *tg = rt->tiering;
	unsigned np = 0, pages = 0, seen = 0, total;

	*na = 0;
	pthread_mutex_lock(&r->lru_lock);
	total = r->lru[LRU_DEMOTED].list.nr;
	while (seen < total && pages < PROMOTE_SCAN_PAGES &&
	       *na < DEMOTE_MAX_PAGES && np < DEMOTE_MAX_PAGES) {
		uint32_t i = ilist_last(&r->lru[LRU_DEMOTED].list);
		struct folio *f = &r->folios[i];
		uint32_t fl = atomic_load(&f->flags), nr;
		uintptr_t a;
		size_t len;
		uint32_t page;

		folio_range(r, i, &a, &len, &page);
		nr = (uint32_t)(len >> PAGE_SHIFT);
		seen++;
		pages += nr;
		lru_del(r, i);
		if (folio_state(fl) == FOLIO_RESIDENT && (fl & F_REFERENCED)) {
			count_event(rt, USWAP_PGPROMOTE_CANDIDATE, nr);
			if ((fl & F_PROMOTE) && memcg_has_room(rt, nr) &&
			    promote_allowed(tg, nr)) {
				tg->folio[np++] = i;	/* off the list */
				continue;
			}
			atomic_fetch_and(&f->flags, ~F_REFERENCED);
			atomic_fetch_or(&f->flags, F_PROMOTE);
			lru_add(r, i, false);	/* armed by the next walk */
			continue;
		} else if (folio_state(fl) == FOLIO_RESIDENT &&
			   (fl & (F_ARMED | F_CLEAN))) {
			atomic_fetch_and(&f->flags, ~F_PROMOTE);
		}
		fl = atomic_load(&f->flags);
		if (folio_state(fl) == FOLIO_RESIDENT && rt->have_wp &&
		    !(fl & (F_ARMED | F_CLEAN | F_REFERENCED))) {
			atomic_fetch_or(&f->flags, F_ARMED);
			tg->arm[(*na)++] = i;
		}
		lru_add(r, i, false);
	}
	pthread_mutex_unlock(&r->lru_lock);
	return np;
}

/* Move the folios taken by promote_walk back to their fast node. */
static void promote_move(struct uswap_runtime *rt, struct region *r,
			 unsigned np)
{
	struct tiering *tg = rt->tiering;
	unsigned k, m = 0, p, first[DEMOTE_MAX_PAGES];
	uint32_t nrs[DEMOTE_MAX_PAGES];
	long ret;

	for (k = 0; k < np; k++) {
		uint32_t fl = atomic_load(&r->folios[tg->folio[k]].flags);
		int home = tg->home[folio_node(fl)];
		uintptr_t a;
		size_t len;
		uint32_t page;

		folio_range(r, tg->folio[k], &a, &len, &page);
		nrs[k] = (uint32_t)(len >> PAGE_SHIFT);
		first[k] = m;
		for (p = 0; p < nrs[k] && m < DEMOTE_MAX_PAGES; p++, m++) {
			tg->pages[m] = (void *)(a + ((uintptr_t)p << PAGE_SHIFT));
			tg->nodes[m] = home < 0 ? 0 : home;
			tg->status[m] = -EBUSY;
		}
	}
	ret = m ? move_pages_to(m, tg->pages, tg->nodes, tg->status) : 0;
	if (ret < 0)
		uswap_log_once(&tg->logged_promote, "promotion: move_pages failed (%s): demoted folios stay where they are",
			       strerror((int)-ret));
	pthread_mutex_lock(&r->lru_lock);
	for (k = 0; k < np; k++) {
		struct folio *f = &r->folios[tg->folio[k]];
		uint32_t fl = atomic_load(&f->flags), nfl;
		bool all = ret >= 0 && first[k] + nrs[k] <= m;

		for (p = 0; all && p < nrs[k]; p++)
			all = tg->status[first[k] + p] == tg->nodes[first[k] + p];
		if (all) {
			do {
				nfl = fl & ~(F_DEMOTED | F_PROMOTE |
					     FOLIO_NODE_MASK | F_REFERENCED);
			} while (!atomic_compare_exchange_weak(&f->flags, &fl,
							       nfl));
			tier_promote_charge(rt, folio_node(fl), nrs[k]);
			count_event(rt, USWAP_PGPROMOTE_SUCCESS, nrs[k]);
			lru_add(r, tg->folio[k], true);
		} else {
			atomic_fetch_and(&f->flags, ~F_PROMOTE);
			lru_add(r, tg->folio[k], false);
		}
	}
	pthread_mutex_unlock(&r->lru_lock);
}

/* Write-protect the folios promote_walk re-armed, one call each. */
static void promote_arm(struct uswap_runtime *rt, struct region *r,
			unsigned na)
{
	struct tiering *tg = rt->tiering;
	unsigned k;

	for (k = 0; k < na; k++) {
		uintptr_t a;
		size_t len;
		uint32_t page;

		folio_range(r, tg->arm[k], &a, &len, &page);
		if (prim_uffd_wp(rt->uffd, a, len, true, false))
			atomic_fetch_and(&r->folios[tg->arm[k]].flags, ~F_ARMED);
	}
}

/*
 * One promotion walk over every region's demoted list (the reclaimer,
 * when idle).  Takes op_lock for reading.
 */
void promote_scan(struct uswap_runtime *rt)
{
	unsigned n, np, na;

	if (!rt->tiering)
		return;
	pthread_rwlock_rdlock(&rt->op_lock);
	for (n = 0; n < rt->nr_regions; n++) {
		struct region *r = rt->regions[n];

		if (r->busy_end)	/* written under op_lock (write) */
			continue;
		np = promote_walk(rt, r, &na);
		promote_arm(rt, r, na);
		if (np)
			promote_move(rt, r, np);
	}
	pthread_rwlock_unlock(&rt->op_lock);
}
