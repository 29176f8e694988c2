/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - struct uswap_runtime, what uswap holds in a process, and
 * what works on it: the fault path (memory.c), the reclaimer (vmscan.c),
 * the swap devices in use (swapon.c), the watchdog, hold, locks and pins
 * (mlock.c).  The files that need no runtime (prim.c, log.c, the pool,
 * the slot allocator) do not include it.
 */
#ifndef USWAP_RUNTIME_H
#define USWAP_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uswap.h"
#include "lockdep.h"
#include "memcontrol.h"
#include "swap.h"
#include "threadcpu.h"
#include "vma.h"
#include "vmstat.h"

struct region;
struct folio;
struct zswap_ctx;

/* A range registered as io_uring fixed buffers (mlock.c), by its ring. */
struct pin {
	int owner;
	uintptr_t start, end;
};

/* Per swap device counters (the "swaps" rows of the stats). */
struct swap_dev_stat {
	_Atomic uint64_t pswpin, pswpout;	/* pages read, written */
	_Atomic uint64_t rlat[USWAP_LATENCY_BUCKETS], wlat[USWAP_LATENCY_BUCKETS];
};

/*
 * A reclaimer's device choice (swapon.c): its allocation context on each
 * device and the device it is using for a node, for up to a cluster of
 * slots.
 */
struct swap_pick {
	struct swap_alloc_ctx ctx[SWAP_MAX_TYPES];
	int node, dev;
	uint32_t used;		/* slots taken from dev since it was picked */
};

struct uswap_runtime {
	struct uswap_options opt;
	int uffd;
	uint64_t features;		/* userfaultfd features in use */
	bool have_wp;			/* UFFDIO_REGISTER_MODE_WP on anon */
	_Atomic bool stopping;
	bool defunct;			/* a child's copy after fork: unused */
	unsigned folio_shift;

	/*
	 * op_lock: held for reading by every operation that changes folio
	 * states (fault handling, a reclaim step), for writing by structural
	 * changes (region create/unmap/remap/discard, fork).  Nobody holds it
	 * across I/O or while waiting for budget: in-flight folios
	 * (EVICTING, LOADING) are owned by their thread without the lock, and
	 * structural changes wait for them to settle.
	 */
	pthread_rwlock_t op_lock;
	struct region **regions;	/* sorted by start; under op_lock */
	/*
	 * Written under op_lock (write), read under it, except by the
	 * reclaimer's idle count (vmscan.c), which reads it between its
	 * locked steps: a stale value only moves the moment it declares
	 * itself stuck by a round, so that read needs no lock, but it must
	 * be a whole one: atomic.
	 */
	_Atomic unsigned nr_regions;
	unsigned cap_regions;
	size_t regions_map_len;

	struct memcg *memcg;		/* the tree's budget (shared memory) */
	unsigned member;		/* this process's index in it */
	int tree_fd;			/* the budget's memfd (close-on-exec) */
	int tree_fd_exec;		/* its copy for exec'd images, or -1 */
	uint64_t devset;		/* names rt->swap among the members */
	/*
	 * Swap devices by type (swapon.c); fd < 0 with swap "none".  In
	 * shared memory: after fork, parent and child allocate from and free
	 * to the same slot maps (prim_alloc_shared).
	 */
	struct swap_info *swap;
	unsigned nr_swap;
	const char *swap_kind[SWAP_MAX_TYPES];	/* "file", "partition", "virtual" */
	_Atomic bool swap_dev_full[SWAP_MAX_TYPES];
	_Atomic bool swap_dev_failed[SWAP_MAX_TYPES];	/* writes fail: unused */
	struct swap_dev_stat swapstat[SWAP_MAX_TYPES];
	struct swap_avail *avail;		/* per-node device lists */
	unsigned nr_nodes, nr_cpus;
	int16_t cpu_node[MAX_CPUS];
	struct tiering *tiering;	/* demotion (demote.c), or NULL */
	struct zswap *zswap;		/* compressed pool in front, or NULL */
	struct zswap_ctx *fork_zctx;	/* for reading the pool at fork */
	_Atomic uint64_t pool_pages;	/* charged for the pool */
	_Atomic uint64_t pool_deferred;	/* of them, not charged yet (memcg_pool_defer) */
	_Atomic bool pool_deferring;	/* a reclaim batch is under way */
	_Atomic uint64_t share_swept_us;	/* last share_sweep() */
	int pagemap_fd;			/* /proc/self/pagemap, or -1: pages
					   shared by fork are charged to every
					   process then, as before (fork_share.c) */
	struct vmstat *stat;		/* this process's counters: its member's
					   block in the budget, or stat_own */
	struct vmstat stat_own;		/* before it has a member, or after */
	_Atomic uint64_t nonresident_age;	/* workingset clock, pages */
	_Atomic uint64_t active_pages;	/* on the active lists of regions in the table */

	pthread_t fault_tids[64];
	struct fault_thread *fault_threads[64];
	unsigned nr_fault_threads;
	pthread_t reclaim_thread;
	bool reclaim_started;
	pthread_t watchdog_thread;
	bool watchdog_started;
	struct reclaimer *reclaimer;	/* its state (vmscan.c), or NULL */
	_Atomic int reclaim_tid;	/* its thread's id, once it runs */
	_Atomic bool reads_in_place;	/* it may read a victim's pages where
					   they are (no UFFDIO_MOVE): a fault
					   on an evicting folio is served */
	int wake_pipe[2];		/* wakes fault threads at shutdown */

	/*
	 * Protections, locks and pins of managed memory (vma.c, mprotect.c,
	 * mlock.c), under op_lock; mcl: the MCL_FUTURE and MCL_ONFAULT of the
	 * last mlockall(), for mappings to come; pins: the ranges registered
	 * as io_uring buffers, by ring.
	 */
	struct vma_map vmas;
	_Atomic int mcl;
	_Atomic unsigned mlockall_gen;	/* bumped by mlockall(MCL_CURRENT),
					   which locks uswap's own memory too */
	struct pin *pins;
	unsigned nr_pins, cap_pins;
	size_t pins_len;

	void *zero_buf;			/* MAX folio of zeros, read-only */
	void *thread_bufs;		/* one folio buffer per fault thread */
	/* Page state tables: changed by whoever frees a region's last
	   reference (a fault thread may, without op_lock held for writing). */
	_Atomic uint64_t meta_bytes;
	bool logged_full, logged_overrun, logged_io, logged_share;

	/* hold.c: nothing is evicted while set, charges pass max. */
	_Atomic unsigned hold;		/* HOLD_LOCAL | HOLD_REMOTE */
	uint32_t hold_seen;		/* the member's hold_seq served last */
	uint64_t hold_checked_us;	/* the remote holder last seen alive */
	/* unmanaged.c: anonymous memory outside the regions. */
	_Atomic bool logged_unmanaged;
	_Atomic uint64_t unmanaged_checked_us;
	bool logged_starved, logged_restart, logged_stuck, logged_read;
	bool logged_move, logged_zap;
};

/*
 * hold.c: every swapped folio brought back and kept resident, for those
 * who read the memory from outside (a core dump, a debugger).
 */
#define HOLD_LOCAL	1u	/* uswap_runtime_hold(): the process itself */
#define HOLD_REMOTE	2u	/* uswap_hold_pid(): another process */
static inline bool hold_active(struct uswap_runtime *rt)
{
	return atomic_load_explicit(&rt->hold, memory_order_acquire) != 0;
}
/* Held, or another process asks for a change (the reclaimer stops). */
static inline bool hold_wanted(struct uswap_runtime *rt)
{
	return hold_active(rt) ||
	       atomic_load_explicit(&rt->memcg->member[rt->member].hold_seq,
				    memory_order_relaxed) != rt->hold_seen;
}
/* A charge past max while held: admitted (forced, counted).  true if so. */
bool hold_admit(struct uswap_runtime *rt, unsigned nr);
/* The reclaimer's turn: serve another process's request; true while held
   (then it has slept a while and evicts nothing). */
bool hold_reclaim(struct uswap_runtime *rt);

/* unmanaged.c: anonymous memory of this process outside its regions. */
uint64_t unmanaged_anon_bytes(struct uswap_runtime *rt, const uint64_t *v);
/* Now and then (the reclaimer): warn once when it passes max. */
void unmanaged_check(struct uswap_runtime *rt);

/* vmstat.c */
static inline void count_event(struct uswap_runtime *rt, unsigned item,
			       uint64_t n)
{
	atomic_fetch_add_explicit(&rt->stat->ev[item], n, memory_order_relaxed);
}

/* swapon.c: the swap devices. */
int swapon_all(struct uswap_runtime *rt);
void swapoff_all(struct uswap_runtime *rt);
/*
 * Slots for a folio of nr pages whose memory is on node: 2^order
 * contiguous ones on one device (returns 0), or when no device has such a
 * run, one per page (returns 1, "split"); -ENOSPC when there is no room.
 * ents[0..nr) get the entries.
 */
int swap_alloc_folio(struct uswap_runtime *rt, struct swap_pick *pick,
		     int node, uint32_t nr, swp_entry_t *ents);
void swap_pick_init(struct swap_pick *pick);
void swap_pick_release(struct uswap_runtime *rt, struct swap_pick *pick);
/* Drop nr slots from e, with their pool copies: every slot let go goes here. */
void swap_free_slots(struct uswap_runtime *rt, swp_entry_t e, uint32_t nr);
/* fork: member m (the child) holds e too. */
void swap_dup_for(struct uswap_runtime *rt, swp_entry_t e, unsigned m);
/* Free what member m still holds (its process is gone). */
void swap_reap_member(struct uswap_runtime *rt, unsigned m);
/* The same without the pool (its hook to give slots back). */
void swap_release_slots(void *arg, swp_entry_t e, uint32_t nr);
/* The node of the calling thread's CPU. */
int swap_node_now(struct uswap_runtime *rt);
void swap_count_io(struct uswap_runtime *rt, unsigned dev, bool write,
		   uint32_t pages, uint64_t us);
/* A write to dev failed: take it out of use (logged once). */
void swap_device_error(struct uswap_runtime *rt, unsigned dev, int err);

/* memory.c: the fault path. */
struct fault_thread;
struct fault_thread *fault_thread_alloc(struct uswap_runtime *rt, void *buf);
/*
 * Read the contents of nr pages named by entries (0: a zero page) into
 * buf, from the pool or the device (through io; NULL: plain preads).  *pool_pages gets how many came from
 * the pool.  0, -EBADMSG (a corrupt pool object) or -errno (I/O).
 */
struct swap_io;
int swap_read_entries(struct uswap_runtime *rt, struct zswap_ctx *zc,
		      struct swap_io *io, const swp_entry_t *entries,
		      unsigned nr, void *buf, unsigned *pool_pages);
void fault_thread_free(struct fault_thread *ft);
void *fault_thread_main(void *arg);
/* The calling fault thread waits for room at max (memcg_charge), or no more. */
void fault_thread_waits(bool waiting);
/* What a fault thread does, for the watchdog. */
struct fault_thread_state {
	uint64_t busy_since;	/* serving a fault since (us), or 0 */
	uint64_t served;	/* faults served */
	uintptr_t addr;		/* the fault being served, its flags */
	uint64_t flags;
	bool waiting;		/* for room at max */
	bool ended;		/* its thread returned: end_err says why */
	int end_err;
};
void fault_thread_look(struct fault_thread *ft, struct fault_thread_state *st);
/* Before its thread is started again; its thread ended (read error err). */
void fault_thread_reset(struct fault_thread *ft);
void fault_thread_end(struct fault_thread *ft, int err);
/* Before its thread starts: serve the fault at addr (flags) first. */
void fault_thread_give(struct fault_thread *ft, uintptr_t addr, uint64_t flags);

/*
 * watchdog.c: a thread that keeps the fault threads serving (started with
 * the workers, stopped before they are joined), and ends the process when
 * its memory can no longer be served.
 */
int watchdog_start(struct uswap_runtime *rt);
void watchdog_stop(struct uswap_runtime *rt);
/* Is rt's userfaultfd still there?  If not, the process ends here. */
void watchdog_check_uffd(struct uswap_runtime *rt);

/* runtime.c: a runtime off the fork list with its threads stopped; then
   everything it holds let go (destroy: its regions' memory unmapped and
   its lock destroyed; else it stays a runtime with no region). */
void runtime_quiesce(struct uswap_runtime *rt);
void runtime_release(struct uswap_runtime *rt, bool destroy);

/* Register the fork handlers now (the preload, before a runtime exists). */
void runtime_atfork_init(void);

/*
 * vmscan.c: the reclaimer.  Its state is made before its thread starts
 * (NULL: out of memory) and freed once the thread is joined; a fork
 * child frees its copy with owner false (its allocation contexts name
 * clusters the parent's reclaimer still holds).
 */
struct reclaimer;
struct reclaimer *reclaimer_alloc(struct uswap_runtime *rt);
void reclaimer_free(struct reclaimer *rc, bool owner);
void *reclaim_thread_main(void *arg);

/*
 * vmscan.c: MADV_COLD and MADV_PAGEOUT on [start, end) of r (op_lock held
 * for writing): its resident folios go to the inactive tail, and with
 * pageout are armed there, to be evicted first.
 */
void lru_hint_range(struct uswap_runtime *rt, struct region *r, uintptr_t start,
		    uintptr_t end, bool pageout);

/* debug_check.c: the consistency checkers, in the debug build only. */
#ifdef USWAP_DEBUG
void debug_check_swap(struct uswap_runtime *rt, const char *where);
void debug_check_pool(struct uswap_runtime *rt, const char *where);
#else
#define debug_check_swap(rt, where)	((void)(rt))
#define debug_check_pool(rt, where)	((void)(rt))
#endif

/* workingset.c: refault detection. */
void workingset_eviction(struct uswap_runtime *rt, struct region *r,
			 struct folio *f, unsigned nr_pages);
/* Returns true when the refaulting folio should go on the active list. */
bool workingset_refault(struct uswap_runtime *rt, struct region *r,
			struct folio *f, unsigned nr_pages);
void workingset_activation(struct uswap_runtime *rt, unsigned nr_pages);

/* mmap.c */
void settle_range(struct uswap_runtime *rt, uintptr_t start, uintptr_t end);
void settle_done(struct uswap_runtime *rt);

/* mprotect.c: mprotect(2) of managed memory. */

/*
 * mlock.c: locked and pinned memory.  A folio coming in: does it stay off
 * the LRU?  op_lock held.
 */
static inline bool folio_unevictable(struct uswap_runtime *rt, uintptr_t addr,
				     size_t len)
{
	lock_assert_held(&rt->op_lock);
	return vma_flags(&rt->vmas, addr, addr + len) & (VMA_LOCKED | VMA_PINNED);
}
/* Mark the resident folios of [start, end) by their locks and pins, and
   take them off (or put them back on) the LRU.  op_lock (write). */
void unevictable_update(struct uswap_runtime *rt, uintptr_t start,
			uintptr_t end);
/* For uswap_mmap: may a locked mapping of len bytes be made (0 or
   -EAGAIN), and mark a new region locked and, if the kernel populated it,
   resident.  op_lock (write) for the second. */
int mlock_future_check(struct uswap_runtime *rt, size_t len);
void mlock_new_region(struct uswap_runtime *rt, uintptr_t start, size_t len,
		      bool locked, bool populated);
/* munmap: pins of the range are forgotten with it.  op_lock (write). */
void mlock_forget(struct uswap_runtime *rt, uintptr_t start, uintptr_t end);
/* In a fork child: locks and pins are not inherited. */
void mlock_fork_child(struct uswap_runtime *rt);
void mlock_destroy(struct uswap_runtime *rt);
/* The gauges nr_unevictable and nr_mlock, in pages. */
void mlock_counts(struct uswap_runtime *rt, uint64_t *unevictable,
		  uint64_t *mlocked);

#endif /* USWAP_RUNTIME_H */
