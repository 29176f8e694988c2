/* SPDX-License-Identifier: MIT */
/*
 * internal.h - uswap's internal structures and cross-file prototypes,
 * grouped by the file that defines them.
 */
#ifndef USWAP_INTERNAL_H
#define USWAP_INTERNAL_H

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "uswap.h"
#include "fdtable.h"
#include "ilist.h"
#include "lockdep.h"
#include "swap.h"
#include "zswap.h"
#include "memory_tiers.h"

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1ul << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define MAX_FOLIO_SHIFT	21
#define MAX_FOLIO_PAGES	(1u << (MAX_FOLIO_SHIFT - PAGE_SHIFT))

/*
 * Reclaim reads a victim's pages in user space (to compress them) while
 * the program's threads may have written them just before: the order is
 * made by write-protect, in the kernel, which ThreadSanitizer cannot see.
 * Such reads go between these marks.
 */
#if defined(__SANITIZE_THREAD__)
#define USWAP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define USWAP_TSAN 1
#endif
#endif
#ifdef USWAP_TSAN
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define program_memory_read_begin()	__tsan_ignore_thread_begin()
#define program_memory_read_end()	__tsan_ignore_thread_end()
#else
#define program_memory_read_begin()	do { } while (0)
#define program_memory_read_end()	do { } while (0)
#endif

#define EXPORT		__attribute__((visibility("default")))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

/*
 * Folio states (region.c has the state diagram).  The state lives in the
 * low bits of folio->flags with the flag bits above it; every change of
 * state is a compare-and-swap by the thread that owns the transition.
 */
enum folio_state {
	FOLIO_NONE,		/* never touched (or discarded): reads as zeros */
	FOLIO_RESIDENT,		/* mapped in the region */
	FOLIO_EVICTING,		/* write-protected, being written to a slot */
	FOLIO_ZAPPING,		/* stored; being removed from the address space */
	FOLIO_SWAPPED,		/* only in its slots (swp[] of its pages) */
	FOLIO_LOADING,		/* being read back by a fault handler */
};

#define FOLIO_STATE_MASK	0x7u
#define F_LRU		(1u << 3)	/* on one of the region's LRU lists */
#define F_ACTIVE	(1u << 4)	/* ... the active one */
#define F_REFERENCED	(1u << 5)	/* written since armed */
#define F_ARMED		(1u << 6)	/* write-protected to observe writes */
#define F_CLEAN		(1u << 7)	/* swp[] holds an exact copy; WP'd */
#define F_WORKINGSET	(1u << 8)	/* was active when evicted */
#define F_WAITERS	(1u << 9)	/* a fault waits for ZAPPING to end */
#define F_DEMOTED	(1u << 10)	/* on a slower node, charged to its tier
					   (demote.c); node in FOLIO_NODE bits */
#define F_PROMOTE	(1u << 11)	/* demoted, written in the last scan
					   too: promoted if written again */
#define F_STORING	(1u << 12)	/* a victim the reclaimer still reads
					   in place (pageout.c): in flight,
					   even if a write made it RESIDENT */
#define F_SHARED	(1u << 13)	/* resident at a fork: its pages may be
					   mapped by other processes of the
					   tree too, charged once to the tree's
					   `shared` (fork_share.c); WP'd */
#define F_MOVED		(1u << 14)	/* EVICTING, its pages in (or on their
					   way into or out of) the reclaimer's
					   staging area: a fault on it waits
					   (F_WAITERS), a write does not abort */
#define F_UNEVICTABLE	(1u << 15)	/* resident and locked or pinned
					   (mlock.c): off the LRU, charged */
#define F_BUSY		(1u << 22)	/* refused eviction: a page pinned
					   (vmscan.c); tried again less */
#define FOLIO_NODE_SHIFT	16
#define FOLIO_NODE_MASK		(0x3fu << FOLIO_NODE_SHIFT)	/* 64 nodes */

/*
 * Per-folio metadata: 12 bytes.  lru links the folio on its region's
 * LRU list while resident (ilist.h); while swapped, lru.prev holds the
 * shadow entry (the eviction clock at eviction, workingset.c).
 */
struct folio {
	struct ilist_link lru;
	_Atomic uint32_t flags;
};

#define SHADOW(f)	((f)->lru.prev)

static inline unsigned folio_state(uint32_t flags)
{
	return flags & FOLIO_STATE_MASK;
}

/* The node a demoted folio was moved to (F_DEMOTED set). */
static inline int folio_node(uint32_t flags)
{
	return (int)((flags & FOLIO_NODE_MASK) >> FOLIO_NODE_SHIFT);
}

/*
 * A region's LRU lists: inactive and active folios on the fast tier, and
 * the folios demoted to slower nodes (one list for all of them, in the
 * order they were demoted: demote.c).  lru_add() and lru_del() pick the
 * list from the folio's flags (F_DEMOTED, F_ACTIVE).
 */
enum lru_list_id { LRU_INACTIVE, LRU_ACTIVE, LRU_DEMOTED, NR_LRU_LISTS };

struct lru_list {
	struct ilist list;	/* of folio indices; first is the newest */
	uint64_t nr_pages;
};

/*
 * A managed region: one page-aligned range registered with userfaultfd.
 * Folio i covers [origin + i*fsize, origin + (i+1)*fsize) clipped to
 * [start, end): folio boundaries move with the data when a region moves.
 *
 * The region table and start/end/origin/arrays change only under the
 * runtime's op_lock held for writing.  lru_lock protects the LRU lists and
 * the links of folios on them; it nests inside op_lock.
 */
struct region {
	uintptr_t start, end, origin;
	unsigned folio_shift;
	uint32_t nr_pages, nr_folios;
	swp_entry_t *swp;		/* per page: slot holding its contents */
	struct folio *folios;
	size_t swp_map_len, folio_map_len;
	pthread_mutex_t lru_lock;
	struct lru_list lru[NR_LRU_LISTS];
	uint32_t scan_cursor;		/* reclaim: where the last batch stopped */
	/* Swap-in readahead (memory.c): the folio a sequential reader faults
	   on next, the window in folios, the pages read ahead last time. */
	_Atomic uint32_t ra_next, ra_win, ra_last;
	_Atomic int refs;		/* table reference + one per user */
	uintptr_t busy_start, busy_end;	/* range being changed: reclaim skips it */
	unsigned vm_flags;		/* R_*: advice the kernel keeps in the
					   VMA's flags */
	struct uswap_runtime *rt;
};

/* r's folios as the element array of its LRU lists (ilist.h). */
static inline struct ilist_array lru_folios(struct region *r)
{
	return ILIST_ARRAY(r->folios, r->nr_folios, lru);
}

/*
 * A process's counters (vmstat.c): its events and gauges by enum
 * uswap_counter, its fault latency histogram, and its compressed pool's
 * counters (zswap.h).  They live in the budget's shared memory, one block
 * per member, so that they outlive the process however it ends: the
 * member that reaps it folds them into the tree's `reaped` totals
 * (memcontrol.c).
 */
struct vmstat {
	_Atomic uint64_t ev[USWAP_NR_COUNTERS];
	_Atomic uint64_t latency[USWAP_LATENCY_BUCKETS];
	_Atomic uint64_t zswap[ZSWAP_NR_COUNTERS];
} __attribute__((aligned(64)));

/*
 * The counters of the members gone before the tree (vmstat.c's fold):
 * events only, under enum uswap_counter (the pool's included), summed.
 */
struct vmstat_reaped {
	_Atomic uint64_t ev[USWAP_NR_COUNTERS];
	_Atomic uint64_t latency[USWAP_LATENCY_BUCKETS];
	_Atomic uint64_t processes;	/* members that ended without a word */
};

/*
 * Region flags: the advice (mmap.c) the kernel keeps in the VMA's flags,
 * kept in the region's, a region being split where they change for part
 * of it, as the kernel splits the VMA.  Fork acts on two of them.
 */
#define R_WIPEONFORK	(1u << 0)	/* a fork child gets zeros here */
#define R_DONTFORK	(1u << 1)	/* a fork child has no mapping here */
#define R_DONTDUMP	(1u << 2)
#define R_SEQ_READ	(1u << 3)
#define R_RAND_READ	(1u << 4)
#define R_MERGEABLE	(1u << 5)

/*
 * Budget (memcontrol.c).  Charges are in pages.  One budget serves every
 * process forked from the one that created it (a process tree, like a
 * cgroup): it lives in shared memory, its lock and condition variables
 * are process-shared (the lock robust), and each process is a member
 * with its own share of the charges.
 */
#define TREE_MAX_MEMBERS	256

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

/*
 * What the kernel's VMAs say about managed memory that reclaim must know
 * (vma.c): segments whose attributes differ from a fresh managed mapping
 * (read-write, key 0, not locked, not pinned), sorted.  Changed under
 * op_lock held for writing, read under op_lock.
 */
struct vma_attr {
	uint8_t prot;		/* PROT_* */
	uint8_t lock;		/* 0, VMA_LOCK_ALL or VMA_LOCK_ONFAULT */
	int16_t pkey;		/* protection key, 0 by default */
	uint32_t pins;		/* io_uring buffer registrations over it */
};

struct vma_seg {
	uintptr_t start, end;
	struct vma_attr a;
};

struct vma_map {
	struct vma_seg *seg;
	unsigned nr, cap;
	size_t map_len;
};

#define VMA_PROTECTED	(1u << 0)	/* not read-write, or under a key */
#define VMA_LOCKED	(1u << 1)
#define VMA_PINNED	(1u << 2)
#define VMA_ONFAULT	(1u << 3)	/* locked as pages fault in */

/* vma_attr.lock */
#define VMA_LOCK_ALL		1	/* mlock: every page in */
#define VMA_LOCK_ONFAULT	2	/* MLOCK_ONFAULT, MCL_ONFAULT */

/* A range registered as io_uring fixed buffers (mlock.c), by its ring. */
struct pin {
	int owner;
	uintptr_t start, end;
};

#define MAX_CPUS	1024u

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

/* crash.c: uswap's own threads, and the line a crash of one leaves. */
void crash_thread_mark(const char *name);
/* The signals a thread of uswap leaves unblocked: its own faults. */
void crash_sigmask(sigset_t *set);

/* unmanaged.c: anonymous memory of this process outside its regions. */
uint64_t unmanaged_anon_bytes(struct uswap_runtime *rt, const uint64_t *v);
/* Now and then (the reclaimer): warn once when it passes max. */
void unmanaged_check(struct uswap_runtime *rt);

/* prim.c: the system call layer. */
int prim_uffd_open(uint64_t features_wanted, uint64_t features_off,
		   uint64_t *features_got, int *uffdp);
int prim_uffd_register(int uffd, uintptr_t start, size_t len, bool wp);
int prim_uffd_unregister(int uffd, uintptr_t start, size_t len);
int prim_uffd_copy(int uffd, uintptr_t dst, const void *src, size_t len,
		   bool wp, size_t *copied);
unsigned prim_uffd_eagain_take(void);
int prim_uffd_wp(int uffd, uintptr_t start, size_t len, bool protect,
		 bool wake);
int prim_uffd_wake(int uffd, uintptr_t start, size_t len);
int prim_uffd_poison(int uffd, uintptr_t start, size_t len);
/* Read fault messages: the bytes read, or -errno (-EAGAIN: none now). */
ssize_t prim_uffd_read(int uffd, void *msgs, size_t len);
int prim_move_pages(unsigned n, void **pages, int *nodes);
void *prim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int prim_munmap(void *addr, size_t len);
void *prim_mremap(void *old, size_t old_len, size_t new_len, int flags,
		  void *new_addr);
int prim_madvise(void *addr, size_t len, int advice);
/* Zap many ranges at once (process_madvise, else one madvise each). */
int prim_zap_ranges(const struct iovec *iov, size_t n);
/* The same, each range's 0 or -errno in errs[], every range tried. */
int prim_zap_ranges_each(const struct iovec *iov, size_t n, int *errs);
/* UFFD_FEATURE_MOVE (Linux 6.8): UFFDIO_MOVE of anonymous pages. */
#define PRIM_UFFD_FEATURE_MOVE	(1ull << 16)
int prim_uffd_move(int uffd, uintptr_t dst, uintptr_t src, size_t len,
		   bool allow_holes, size_t *moved);
/* Register [start, start+len) for write-protect faults only. */
int prim_uffd_register_wp(int uffd, uintptr_t start, size_t len);
int prim_self_mem_open(void);
/* mlock2(2) (lock) or munlock(2) of [addr, addr+len): 0 or -errno. */
int prim_mlock(void *addr, size_t len, bool lock, bool onfault);
ssize_t prim_read_pinned(void *buf, uintptr_t addr, size_t len);
/* The pidfd prim_zap_ranges keeps: opened as a runtime is created,
   closed when the last one is gone. */
void prim_self_pidfd_open(void);
void prim_self_pidfd_close(void);
/* uswap's descriptors (fdtable.c): close one; a close-on-exec copy of
   one, installed as kind (or -errno); a byte written to one. */
void prim_fd_close(int fd);
int prim_fd_dup(int fd, enum fd_kind kind);
void prim_fd_poke(int fd);
void *prim_alloc(size_t len);		/* internal memory: zeroed, page-rounded */
void prim_free(void *p, size_t len);	/* either kind */
void *prim_alloc_shared(size_t len);	/* stays shared across fork */
void *prim_alloc_stack(size_t len);	/* a thread's, above a guard page */
void prim_free_stack(void *stack, size_t len);
int prim_shared_mutex_init(pthread_mutex_t *m);
void prim_mutex_lock(pthread_mutex_t *m);	/* takes over a dead holder's */
void prim_futex_wait(_Atomic uint32_t *word, uint32_t val, long timeout_ms);
void prim_futex_wake_all(_Atomic uint32_t *word);
ssize_t prim_pwritev(int fd, const struct iovec *iov, int n, off_t off);
ssize_t prim_pread(int fd, void *buf, size_t len, off_t off);
int prim_fallocate(int fd, int mode, off_t off, off_t len);
/* Descriptors, installed (canonical numbers) or not: the call's result
   or -errno.  prim_close is for those uswap did not install. */
struct stat;
struct pollfd;
int prim_open(const char *path, int flags, mode_t mode);
int prim_openat(int dirfd, const char *path, int flags, mode_t mode);
int prim_close(int fd);
ssize_t prim_read(int fd, void *buf, size_t len);
ssize_t prim_read_all(int fd, void *buf, size_t len);	/* to len or EOF */
ssize_t prim_write(int fd, const void *buf, size_t len);
int prim_fstat(int fd, struct stat *st);
int prim_ftruncate(int fd, off_t len);
int prim_fcntl(int fd, int cmd, int arg);
int prim_ioctl(int fd, unsigned long req, void *arg);
int prim_pipe2(int fds[2], int flags);
int prim_poll(struct pollfd *pfd, unsigned n, int timeout_ms);	/* uswap's threads */
ssize_t prim_getdents(int fd, void *buf, size_t len);
ssize_t prim_readlink(const char *path, char *buf, size_t len);
/* A small regular file (/proc, /sys) into buf, NUL-terminated: its length. */
ssize_t prim_read_file(const char *path, char *buf, size_t len);
int prim_stat(const char *path, struct stat *st);
int prim_lstat(const char *path, struct stat *st);
int prim_access(const char *path, int mode);
int prim_unlinkat(int dirfd, const char *name, int flags);
int prim_flock(int fd, int op);
int prim_memfd_create(const char *name, unsigned flags);
int prim_kill(pid_t pid, int sig);
int prim_set_thread_name(const char *name);
int prim_pin_to_cpu(int cpu);		/* the calling thread: 0 or -errno */
/* The program's mlock family and mprotect (pkey >= 0: pkey_mprotect). */
int prim_mlock2(const void *addr, size_t len, unsigned flags);
int prim_munlock(const void *addr, size_t len);
int prim_mlockall(int flags);
int prim_munlockall(void);
int prim_mprotect(void *addr, size_t len, int prot, int pkey);
/* 0 or -errno as the C library answers: 0, or -1 with errno set. */
int prim_libc_result(int err);
/* move_pages(2) moving: pages not moved, or -errno. */
long prim_move_pages_to(unsigned n, void **pages, const int *nodes,
			int *status, int flags);
uint64_t prim_now_us(void);
/*
 * Fault injection for tests (USWAP_INJECT; prim.c documents the syntax).
 * prim_inject_init() reads it when a runtime sets up its devices (their
 * descriptors, by index): 0, or -EINVAL (logged) for a bad spec.
 * prim_inject(f, fd) says whether this call of kind f (on the device
 * whose descriptor is fd, for device faults; -1 for the others) fails.
 */
enum inject_fault {
	INJECT_WRITE_EIO, INJECT_READ_EIO, INJECT_SHORT_WRITE,
	INJECT_SHORT_READ, INJECT_ENOSPC, INJECT_CORRUPT,	/* devices */
	INJECT_MMAP_ENOMEM, INJECT_UFFD_EAGAIN, INJECT_UFFD_EEXIST,
	INJECT_COMPRESS_FAIL, INJECT_THREAD_CRASH, INJECT_THREAD_ABORT,
	INJECT_UFFD_READ_EIO, INJECT_FAULT_STALL,
	NR_INJECT
};
int prim_inject_init(const int *dev_fds, unsigned nr_devs);
bool prim_inject_hit(enum inject_fault f, int fd);
extern _Atomic bool prim_inject_armed;
static inline bool prim_inject(enum inject_fault f, int fd)
{
	return unlikely(atomic_load_explicit(&prim_inject_armed,
					     memory_order_acquire)) &&
	       prim_inject_hit(f, fd);
}

/* log.c */
/* An error message into err (errlen bytes, may be NULL or 0). */
void err_msg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void uswap_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void uswap_log_once(bool *done, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* vmstat.c */
static inline void count_event(struct uswap_runtime *rt, unsigned item,
			       uint64_t n)
{
	atomic_fetch_add_explicit(&rt->stat->ev[item], n, memory_order_relaxed);
}
void count_latency(struct uswap_runtime *rt, uint64_t us);
/* Is counter c a gauge (a level or a limit), not an event count? */
bool counter_is_gauge(unsigned c);
/* Add the events of a gone process's counters to the tree's reaped ones. */
void vmstat_fold(struct vmstat *from, struct vmstat_reaped *into);

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

/* demote.c: demotion to slower nodes, promotion back. */
struct demote_folio {
	uintptr_t addr;
	uint32_t nr_pages;
	int from;		/* the node its memory is on, or -1 */
	int to;			/* set: where it went, or -1 */
};
int tiering_setup(struct uswap_runtime *rt);
void tiering_destroy(struct uswap_runtime *rt);
uint64_t tiering_inflight(struct uswap_runtime *rt, int node);
void demote_folios(struct uswap_runtime *rt, struct demote_folio *df,
		   unsigned n, bool direct);
void demote_finish(struct uswap_runtime *rt, struct region *r, uint32_t i,
		   int to, unsigned nr, uint32_t fl_before);
void promote_scan(struct uswap_runtime *rt);
int tier_max_parse(const char *spec, uint64_t max[MEM_MAX_NODES],
		   uint64_t *nodes, char *err, size_t errlen);
int demotion_option_check(const char *spec, char *err, size_t errlen);
/* Tier budgets (memcontrol.c): pages demoted to slower nodes. */
void tier_budget_set(struct memcg *mc, int node, uint64_t max);
bool tier_try_charge(struct uswap_runtime *rt, int node, unsigned nr);
void tier_note_peak(struct uswap_runtime *rt, int node);
void tier_uncharge(struct uswap_runtime *rt, int node, uint64_t nr);
void tier_promote_charge(struct uswap_runtime *rt, int node, unsigned nr);
int tier_over_high(struct uswap_runtime *rt, int *reclaiming);
/* Uncharge nr pages of a folio with flags fl: its tier, or the budget. */
void folio_uncharge(struct uswap_runtime *rt, uint32_t fl, uint64_t nr);

/* region.c */
int region_table_init(struct uswap_runtime *rt);
void region_table_destroy(struct uswap_runtime *rt);
struct region *region_find_locked(struct uswap_runtime *rt, uintptr_t addr);
void region_get(struct region *r);
void region_put(struct region *r);
int region_add(struct uswap_runtime *rt, uintptr_t start, size_t len);

static inline size_t folio_size(const struct region *r)
{
	return (size_t)1 << r->folio_shift;
}
static inline uint32_t folio_index(const struct region *r, uintptr_t addr)
{
	return (uint32_t)((addr - r->origin) >> r->folio_shift);
}
/* The clipped address range of folio i and the index of its first page. */
static inline void folio_range(const struct region *r, uint32_t i,
			       uintptr_t *addr, size_t *len, uint32_t *page)
{
	uintptr_t s = r->origin + ((uintptr_t)i << r->folio_shift);
	uintptr_t e = s + folio_size(r);

	if (s < r->start)
		s = r->start;
	if (e > r->end)
		e = r->end;
	*addr = s;
	*len = e - s;
	*page = (uint32_t)((s - r->start) >> PAGE_SHIFT);
}
/* Folios in the range [start,end) that is inside r: first and last+1. */
void region_folios_in(const struct region *r, uintptr_t start, uintptr_t end,
		      uint32_t *first, uint32_t *last);
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

/* Free the swap entries of pages [page, page+nr) of r and clear them. */
void region_free_entries(struct region *r, uint32_t page, uint32_t nr);

/* lru (vmscan.c) */
void lru_add(struct region *r, uint32_t i, bool active);
void lru_del(struct region *r, uint32_t i);
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

/*
 * runtime.c: start an internal thread, every signal blocked (they are the
 * program's), on a small stack of uswap's own, its allocations uswap's own
 * (slab.h).  0 or -errno.  join_thread() joins it and frees its stack.
 */
int start_thread(pthread_t *tid, const char *name, void *(*fn)(void *),
		 void *arg);
void join_thread(pthread_t tid);
/* Register the fork handlers now (the preload, before a runtime exists). */
void runtime_atfork_init(void);

/* threadcpu.c: the CPU each thread of the program is on. */
void thread_cpu_register(void);
void thread_cpu_fork_child(void);
int thread_cpu_of(int tid);

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

/* region.c, for mmap.c */
uint64_t region_drop_range(struct region *r, uintptr_t start, uintptr_t end,
			   bool unmap);
/* The first region ending after addr, or NULL.  Caller holds op_lock. */
struct region *region_next_locked(struct uswap_runtime *rt, uintptr_t addr);
/* Make [start, end), inside one region, a region of its own; *rp gets it. */
int region_isolate(struct uswap_runtime *rt, uintptr_t start, uintptr_t end,
		   struct region **rp);
int region_cut(struct uswap_runtime *rt, struct region *r, uintptr_t start,
	       uintptr_t end);
int region_move(struct uswap_runtime *rt, struct region *r, uintptr_t new_start,
		size_t new_len);

/* mmap.c */
void settle_range(struct uswap_runtime *rt, uintptr_t start, uintptr_t end);
void settle_done(struct uswap_runtime *rt);

/* vma.c: the attributes of managed memory (struct vma_map). */
int vma_update(struct vma_map *m, uintptr_t start, uintptr_t end,
	       void (*fn)(struct vma_attr *, const void *), const void *arg);
void vma_forget(struct vma_map *m, uintptr_t start, uintptr_t end);
void vma_move(struct vma_map *m, uintptr_t old, size_t old_len, uintptr_t new,
	      size_t new_len);
unsigned vma_flags(const struct vma_map *m, uintptr_t start, uintptr_t end);
void vma_unevictable_pages(const struct vma_map *m, uintptr_t start,
			   uintptr_t end, uint64_t *added, uint64_t *total);
void vma_clear_locks(struct vma_map *m);
const struct vma_seg *vma_segments(const struct vma_map *m, unsigned *nr);
void vma_map_destroy(struct vma_map *m);

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

#endif /* USWAP_INTERNAL_H */
