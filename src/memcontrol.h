/* SPDX-License-Identifier: MIT */
/*
 * memcontrol.h - the budget a process tree shares (memcontrol.c): struct
 * memcg in shared memory, its members, the tier budgets, charging; and the
 * pages shared by fork, charged once to the tree (fork_share.c).
 */
#ifndef USWAP_MEMCONTROL_H
#define USWAP_MEMCONTROL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memory_tiers.h"
#include "vmstat.h"

struct uswap_runtime;

/*
 * Budget (memcontrol.c).  Charges are in pages.  One budget serves every
 * process forked from the one that created it (a process tree, like a
 * cgroup): it lives in shared memory, its lock and condition variables
 * are process-shared (the lock robust), and each process is a member
 * with its own share of the charges.
 */
/*
 * Fewer members than one swap slot can count uses (SWAP_MAP_MAX, swap.h):
 * each member holds at most one use of a slot, and a fork gives the child
 * one of every slot its parent names (swap_dup_for()).  The margin is for
 * uses that no member accounts for: a process killed half-way through
 * giving one up leaves it (docs/reliability.md, soak item 20, open), and
 * the next fork would otherwise find the count full.
 */
#define TREE_MAX_MEMBERS	250
#define TREE_USE_MARGIN		4

enum member_state {
	MEMBER_FREE,
	MEMBER_FORKING,		/* reserved by a parent about to fork */
	MEMBER_LIVE,
	MEMBER_EXECED,		/* its process exec'd: the image is gone */
	MEMBER_REAPING,
};

struct tree_member {
	_Atomic int pid;		/* 0 while FORKING */
	_Atomic unsigned state;		/* enum member_state */
	_Atomic uint64_t charged;	/* pages this process has charged */
	_Atomic uint64_t start_time;	/* of pid (/proc/PID/stat): pids recycle */
	_Atomic uint64_t devset;	/* the swap devices it uses (fork shares them) */
	_Atomic int reaper;		/* pid of the process reaping it, or 0 */
	_Atomic uint32_t gen;		/* bumped for each new occupant: a
					   reaper tells them apart (an exec'd
					   image keeps pid and start_time) */
	_Atomic uint32_t gone_gen;	/* the tree's checker found occupant
					   gen gone (memcg_reap_gone) */
	_Atomic uint64_t demoted[MEM_MAX_NODES];	/* pages charged to tiers */
	_Atomic uint64_t shared_held;	/* pages of its folios marked F_SHARED:
					   all of `shared` it may still map */
	/* A hold asked by another process (hold.c, uswap debug). */
	_Atomic int hold_holder;	/* the asking process, 0: none */
	_Atomic int hold_target;	/* the pid it asked for: this one's */
	_Atomic uint32_t hold_seq;	/* bumped by each request (futex) */
	_Atomic uint32_t hold_done;	/* the last request served (futex) */
	_Atomic int32_t hold_err;	/* its result: 0 or -errno */
	_Atomic uint64_t hold_pages;	/* pages it brought in */
	_Atomic bool reported;		/* its process wrote its final counters
					   (uswap_stats_write_final): the reaper
					   does not count them again */
};

#define MEMCG_MAGIC	0x7573776170747266ull	/* "uswaptrf" */

/*
 * The budget of a slower memory node (--tier-max): the pages demoted to
 * it, charged there instead of to max.  max 0: the node takes nothing.
 */
struct tier_budget {
	_Atomic uint64_t charged, peak;
	uint64_t max, high, low;
};

struct memcg {
	uint64_t magic;
	_Atomic uint64_t resident;	/* pages charged, whole tree */
	_Atomic uint64_t peak;
	uint64_t max, high, low;	/* pages; low = where reclaim stops */
	_Atomic uint32_t room;		/* futex: bumped when charges drop */
	_Atomic uint32_t kick;		/* futex: bumped to wake reclaimers */
	_Atomic unsigned waiters;	/* faults waiting for room */
	_Atomic unsigned sleepers;	/* reclaimers waiting for a kick */
	_Atomic bool stuck;		/* reclaim can make no room: admit past max */
	_Atomic uint64_t progress;	/* bumped by every batch that made room,
					   in any member (memcg_set_stuck) */
	_Atomic uint64_t starved_us;	/* since when faults wait with no room
					   made (0: none waits) */
	_Atomic uint64_t share_off_us;	/* until when every member reclaims what
					   it can, whatever its share */
	_Atomic uint64_t shared;	/* of resident: pages shared by fork,
					   charged to no member (fork_share.c) */
	_Atomic uint64_t fork_gen;	/* bumped by every fork (share_clamp) */
	pthread_mutex_t share_lock;	/* robust, process-shared: an eviction's
					   look at who maps a shared page and its
					   zap, against another's (fork_share.c) */
	_Atomic unsigned nr_live;	/* members LIVE or FORKING */
	_Atomic uint64_t checked_us;	/* when a process last checked the
					   members' processes in /proc */
	char name[48];			/* the mapping's name in /proc/PID/maps */
	size_t map_len;
	uint64_t tier_nodes;		/* nodes with a tier budget */
	struct tier_budget tier[MEM_MAX_NODES];
	struct tree_member member[TREE_MAX_MEMBERS];
	struct vmstat stat[TREE_MAX_MEMBERS];	/* each member's counters */
	struct vmstat_reaped reaped;
	_Atomic uint32_t folded_gen[TREE_MAX_MEMBERS];	/* per member entry: the
					   last occupancy (gen) whose counters
					   went into `reaped` */
};

/* memcontrol.c */
void memcg_account_pool(void *arg, long delta_pages);
void memcg_pool_defer(struct uswap_runtime *rt);
void memcg_pool_settle(struct uswap_runtime *rt, uint64_t nr);
int memcg_create(struct uswap_runtime *rt, uint64_t max_bytes,
		 uint64_t high_bytes, unsigned folio_pages);
void memcg_destroy(struct uswap_runtime *rt);
/* Charge nr pages, waiting while that would pass max.  Returns the stall. */
uint64_t memcg_charge(struct uswap_runtime *rt, unsigned nr);
bool memcg_try_charge(struct uswap_runtime *rt, unsigned nr);
/* Charge nr pages now, past max if need be (never waits). */
void memcg_force_charge(struct uswap_runtime *rt, unsigned nr);
void memcg_uncharge(struct uswap_runtime *rt, uint64_t nr);
/* Pages shared by fork (fork_share.c): this member's charge of nr pages
   moves to the tree's `shared`; nr shared pages are freed. */
void memcg_share(struct uswap_runtime *rt, uint64_t nr);
void memcg_share_drop(struct uswap_runtime *rt, uint64_t held, uint64_t freed);
void memcg_unshare_to_own(struct uswap_runtime *rt, uint64_t nr);
void memcg_share_lock(struct memcg *mc);
void memcg_share_unlock(struct memcg *mc);
bool memcg_above_high(struct uswap_runtime *rt);
/* Above low, and this process holds at least its share: reclaim on. */
bool memcg_should_reclaim(struct uswap_runtime *rt);
void memcg_kick_reclaim(struct memcg *mc);
void memcg_wake_all(struct memcg *mc);
/* A reclaimer sleeps until kicked or ms pass. */
void memcg_reclaim_sleep(struct uswap_runtime *rt, long ms, bool always);
/* Reclaim reports whether it could make progress (stuck admits past max). */
void memcg_set_stuck(struct uswap_runtime *rt, bool stuck);
/* How many batches made room, tree-wide (changes: someone reclaims). */
uint64_t memcg_progress(struct uswap_runtime *rt);
uint64_t memcg_own_pages(struct uswap_runtime *rt);
/* fork: a member for the child, charged what the parent has resident. */
int memcg_fork_prepare(struct uswap_runtime *rt);
/* Fork waits for the reaper's reads of /proc (no descriptor inherited). */
void memcg_fork_lock(void);
void memcg_fork_unlock(bool child);
/* In the child: become member child (< 0: none, count on our own). */
void memcg_fork_child(struct uswap_runtime *rt, int child);
bool memcg_fork_failed(struct uswap_runtime *rt, unsigned child);
/* Members whose process is gone (exit, kill -9, exec): reap(rt, m) each. */
void memcg_reap_gone(struct uswap_runtime *rt,
		     void (*reap)(struct uswap_runtime *, unsigned));
void memcg_member_release(struct uswap_runtime *rt, unsigned m);
/* Reap the gone members now, every one checked (before the final counters). */
void memcg_reap_now(struct uswap_runtime *rt);
/* This process wrote its final counters: no reaper counts them again. */
void memcg_set_reported(struct uswap_runtime *rt);
int memcg_tree_fd(struct uswap_runtime *rt);
bool memcg_has_room(struct uswap_runtime *rt, unsigned nr);

/* fork_share.c */
void fork_share_open(struct uswap_runtime *rt);
void fork_share_close(struct uswap_runtime *rt);
unsigned share_exclusive(struct uswap_runtime *rt, uintptr_t addr, unsigned nr);
void fork_share_parent(struct uswap_runtime *rt);
int fork_share_child(struct uswap_runtime *rt);
unsigned share_release(struct uswap_runtime *rt, uintptr_t addr, unsigned nr);
void share_sweep(struct uswap_runtime *rt);

/* Tier budgets (memcontrol.c): pages demoted to slower nodes. */
void tier_budget_set(struct memcg *mc, int node, uint64_t max);
bool tier_try_charge(struct uswap_runtime *rt, int node, unsigned nr);
void tier_note_peak(struct uswap_runtime *rt, int node);
void tier_uncharge(struct uswap_runtime *rt, int node, uint64_t nr);
void tier_promote_charge(struct uswap_runtime *rt, int node, unsigned nr);
int tier_over_high(struct uswap_runtime *rt, int *reclaiming);
/* Uncharge nr pages of a folio with flags fl: its tier, or the budget. */
void folio_uncharge(struct uswap_runtime *rt, uint32_t fl, uint64_t nr);

#endif /* USWAP_MEMCONTROL_H */
