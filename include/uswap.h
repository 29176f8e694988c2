/* SPDX-License-Identifier: MIT */
/*
 * uswap.h - application-level swap on userfaultfd.
 *
 * A runtime gives the memory of its managed regions a budget: resident
 * managed memory stays under `max`; past `high` a background reclaimer moves
 * cold folios to a swap file, and an access to a folio that is not resident
 * brings it back through userfaultfd.  Nothing here needs root.
 *
 * All functions return 0 or a negative errno value unless they say otherwise.
 * The library starts its own threads (fault handlers and a reclaimer); it
 * never calls malloc on its fault path and exports only the symbols below.
 */
#ifndef USWAP_H
#define USWAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define USWAP_VERSION "0.1.0"

struct uswap_runtime;

/* Flags of struct uswap_options.flags. */
#define USWAP_OPT_VERBOSE	(1u << 0)	/* one-line summary on stderr at destroy */
#define USWAP_OPT_NO_SWAP_FILE	(1u << 1)	/* no swap file: the compressed pool is
						   the only tier ("swap none") */
#define USWAP_OPT_JOIN_TREE	(1u << 2)	/* join the budget whose descriptor is
						   tree_fd (after exec) */
#define USWAP_OPT_NO_VERIFY	(1u << 3)	/* no crc32c of swap slots ("verify
						   off"; the pool's objects keep theirs) */
#define USWAP_OPT_ENCRYPT	(1u << 4)	/* encrypt and authenticate what goes
						   to a swap device ("encrypt on") */
#define USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE (1u << 5) /* the pool keeps pages
						   that do not compress, as they are
						   ("zswap-incompressible store") */
#define USWAP_OPT_ZSWAP_NO_CHARGE (1u << 6)	/* the pool is not charged to max
						   ("zswap-charge off") */

/* Values of struct uswap_options.swap_node_policy. */
#define USWAP_SWAP_NODE_PAGE	1	/* the node of the memory swapped out (default) */
#define USWAP_SWAP_NODE_CPU	2	/* the node of the reclaiming thread */

/* Values of struct uswap_options.zswap_unit. */
#define USWAP_ZSWAP_UNIT_FOLIO	1	/* a large folio is one compressed object */
#define USWAP_ZSWAP_UNIT_PAGE	2	/* each page its own object (the kernel's way) */

/*
 * Options of a runtime.  Initialise with uswap_options_init(), then set
 * fields directly or by name with uswap_options_set().  A zero size means
 * "the documented default".
 */
struct uswap_options {
	uint64_t max;		/* hard limit on resident managed bytes; default:
				   half of MemAvailable at start */
	uint64_t high;		/* background reclaim starts above this; default:
				   90% of max; must not exceed max */
	uint64_t folio_size;	/* unit of fault-in and reclaim: 4K, 16K, 64K
				   (default) or 2M */
	uint64_t min_region;	/* preload only: smallest anonymous private mmap
				   that is managed; default 1 MiB */
	uint64_t swap_size;	/* size cap of the swap file; default: eight times
				   max, at least 1 GiB, at most half the free space
				   of swap_dir's file system */
	char swap[1024];	/* swap devices, one SPEC per line:
				   PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct];
				   empty: one unnamed swap file in swap_dir */
	char swaptab[256];	/* a file of SPECs, one per line, # comments */
	unsigned swap_node_policy; /* USWAP_SWAP_NODE_*; default PAGE */
	char swap_dir[256];	/* directory of the swap file; default $TMPDIR,
				   else /tmp */
	char stats_path[256];	/* preload only: JSON counters written here at exit */
	unsigned fault_threads;	/* fault handler threads; default 2 */
	char zswap[32];		/* compressed pool in front of the swap file:
				   "lz4", "zstd[:LEVEL]", "deflate[:LEVEL]" or
				   "off"; default (empty): off */
	unsigned zswap_max_pct;	/* pool limit, percent of max (1..100); default 20 */
	unsigned zswap_accept_pct; /* once full, the pool accepts again below this
				      percent of its limit (1..100); default 90 */
	unsigned zswap_unit;	/* USWAP_ZSWAP_UNIT_*; default FOLIO */
	unsigned zswap_threads;	/* compression threads besides the reclaimer,
				   0..16; default: online CPUs - 1, at least 1 */
	unsigned flags;		/* USWAP_OPT_* */
	int tree_fd;		/* with USWAP_OPT_JOIN_TREE: a descriptor from
				   uswap_runtime_tree_fd() of the process that
				   exec'd this one; its --max and --high apply */
	uint64_t uffd_features_off; /* testing: userfaultfd feature bits to treat
				       as absent (exercises fallbacks) */
	char demotion[512];	/* demotion to slower memory nodes: "auto"
				   (default, empty: the kernel's targets),
				   "none", or a SPEC "0>2;1>2" (docs/tiers.md) */
	char tier_max[256];	/* budgets of slower nodes: "NODE=SIZE[,...]";
				   a target without one: as much as max */
};

/* Fill *opt with defaults (all sizes zero: computed at runtime creation). */
void uswap_options_init(struct uswap_options *opt);

/*
 * Set one option by name, as the command line and the environment spell it:
 * "max", "high", "folio", "min-region", "swap", "swap-size", "swap-dir",
 * "stats", "fault-threads", "verbose", "zswap", "zswap-max", "zswap-accept",
 * "zswap-unit", "zswap-threads", "swaptab", "swap-node-policy", "verify",
 * "encrypt", "zswap-incompressible", "zswap-charge", "uffd-features-off".  "swap" takes a device SPEC (each call adds one;
 * several, one per line, from the environment), "file" (the default: one
 * unnamed swap file in swap-dir; forgets the SPECs given) or "none"
 * (USWAP_OPT_NO_SWAP_FILE).  "verify" takes on (the default: every slot
 * written to a device carries a crc32c, checked on every read) or off
 * (USWAP_OPT_NO_VERIFY).  "encrypt" takes off (the default) or on
 * (USWAP_OPT_ENCRYPT: what is written to a swap device is encrypted and
 * authenticated with XChaCha20-Poly1305 under a random key that lives in
 * locked memory for the runtime's life; every read is authenticated,
 * whatever "verify" says).  "zswap-incompressible" takes device (the
 * default: a page that compresses to more than 7/8 of its size goes to a
 * swap device, or is kept as it is when there is none) or store
 * (USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE: the pool keeps it as it is and
 * writes it back with the rest, as recent kernels' zswap does).
 * "zswap-charge" takes on (the default: the pool's memory is charged to
 * max, as cgroup v2 charges zswap) or off (USWAP_OPT_ZSWAP_NO_CHARGE: only
 * resident memory is, as under cgroup v1; the pool may add up to
 * zswap-max percent of max on top).  Sizes take K, M, G, T
 * suffixes (powers of 1024) or a plain byte count.  On a bad name or value,
 * returns -EINVAL and writes one line naming the option and what was
 * expected into err (errlen bytes, may be 0).
 */
int uswap_options_set(struct uswap_options *opt, const char *name,
		      const char *value, char *err, size_t errlen);

/*
 * Read options from the environment: USWAP_MAX, USWAP_HIGH, USWAP_FOLIO,
 * USWAP_MIN_REGION, USWAP_SWAP, USWAP_SWAP_SIZE, USWAP_SWAP_DIR, USWAP_STATS,
 * USWAP_FAULT_THREADS, USWAP_VERBOSE, USWAP_ZSWAP, USWAP_ZSWAP_MAX,
 * USWAP_ZSWAP_ACCEPT, USWAP_ZSWAP_UNIT, USWAP_ZSWAP_THREADS, USWAP_SWAPTAB,
 * USWAP_SWAP_NODE_POLICY, USWAP_VERIFY, USWAP_ENCRYPT,
 * USWAP_ZSWAP_INCOMPRESSIBLE, USWAP_ZSWAP_CHARGE, USWAP_UFFD_FEATURES_OFF
 * (each the
 * option of the same name, upper case, '-' as '_').  Errors as
 * uswap_options_set(), naming the variable.
 */
int uswap_options_from_env(struct uswap_options *opt, char *err, size_t errlen);

/*
 * Check that the options are consistent (high <= max, folio size valid, ...)
 * after defaults are applied.  Errors as uswap_options_set().
 */
int uswap_options_check(const struct uswap_options *opt, char *err, size_t errlen);

/* Parse a size ("64M", "2G", "4096", "1.5G"); 0 or -EINVAL / -ERANGE. */
int uswap_size_parse(const char *s, uint64_t *out);

/*
 * Create a runtime: probe userfaultfd, create the swap file (unlinked at
 * once), start the fault handler and reclaimer threads.  Returns -ENOSYS or
 * -EPERM when userfaultfd is unavailable to this process.
 */
int uswap_runtime_create(const struct uswap_options *opt,
			 struct uswap_runtime **rtp);

/* Stop the threads, unmap every region still managed, close the swap file. */
void uswap_runtime_destroy(struct uswap_runtime *rt);

/*
 * fork: a runtime carries on in the child (its memory stays managed, the
 * slots and the budget are shared with the parent).  In the child, this
 * says whether rt still serves the process: 1, or 0 when the child could
 * not keep it (its memory was read in; create a new runtime for memory
 * mapped from now on, and do not use or destroy rt).
 */
int uswap_runtime_usable(const struct uswap_runtime *rt);

/*
 * exec: a descriptor of rt's budget that survives exec (no FD_CLOEXEC),
 * for the next image to join (USWAP_OPT_JOIN_TREE), so that one budget
 * covers a process tree that forks and execs.  Made once and closed by
 * uswap_runtime_destroy; in an image that joined, it is the opt.tree_fd
 * it joined by, which stays the caller's.  -errno.
 */
int uswap_runtime_tree_fd(struct uswap_runtime *rt);

/*
 * Called by each new thread of the program (the preload does it for
 * threads made by pthread_create; uswap_runtime_create for its caller):
 * the fault threads can then serve its faults from its CPU
 * (docs/fault-cost.md).  Cheap, and harmless when the C library keeps no
 * rseq area for the thread.
 */
void uswap_thread_started(void);

/* Map len bytes (rounded up to pages) of managed anonymous memory. */
int uswap_region_create(struct uswap_runtime *rt, size_t len, void **addrp);

/*
 * The mmap(2) family, for a host that interposes it (the preload library).
 * Each manages what it should and passes the rest to the kernel, and
 * returns what the system call returns, with errno set on failure.
 *
 * uswap_mmap: an anonymous private read-write mapping of at least
 *   min_region bytes becomes a managed region; anything else is mapped
 *   unmanaged.
 * uswap_munmap, uswap_mremap, uswap_madvise: keep the state of managed
 *   ranges right (freed memory frees its swap slots; a moved region keeps
 *   its swapped-out contents; MADV_DONTNEED and MADV_FREE read back as
 *   zeros).
 */
void *uswap_mmap(struct uswap_runtime *rt, void *addr, size_t len, int prot,
		 int flags, int fd, long offset);
int uswap_munmap(struct uswap_runtime *rt, void *addr, size_t len);
void *uswap_mremap(struct uswap_runtime *rt, void *old_addr, size_t old_len,
		   size_t new_len, int flags, void *new_addr);
int uswap_madvise(struct uswap_runtime *rt, void *addr, size_t len, int advice);

/* Is [addr, addr+len) wholly or partly managed?  1, 0. */
int uswap_is_managed(struct uswap_runtime *rt, const void *addr, size_t len);

/*
 * Counters.  Names follow /proc/vmstat where the kernel has one.  Values
 * are cumulative unless the name says otherwise (resident_bytes, ...).
 */
enum uswap_counter {
	USWAP_PGFAULT,			/* userfaultfd faults handled */
	USWAP_PGMAJFAULT,		/* faults that read a tier */
	USWAP_PSWPIN,			/* pages read from swap */
	USWAP_PSWPOUT,			/* pages written to swap */
	USWAP_PGSCAN,			/* pages scanned by reclaim */
	USWAP_PGSTEAL,			/* pages reclaimed */
	USWAP_PGACTIVATE,		/* pages moved to the active list */
	USWAP_PGDEACTIVATE,		/* pages moved to the inactive list */
	USWAP_WORKINGSET_REFAULT,	/* workingset_refault_anon */
	USWAP_WORKINGSET_ACTIVATE,	/* workingset_activate_anon */
	USWAP_WORKINGSET_RESTORE,	/* workingset_restore_anon */
	USWAP_ZERO_FILL,		/* faults served with zeros, no I/O */
	USWAP_WP_FAULT,			/* write-protect faults handled */
	USWAP_EVICT_ABORT,		/* evictions cancelled by a write */
	USWAP_CLEAN_DROP,		/* pages evicted without I/O (clean) */
	USWAP_SWAP_FULL,		/* folios kept resident: no swap space */
	USWAP_SWAP_IO_ERROR,		/* failed swap reads or writes */
	USWAP_RECLAIM_STALL,		/* faults that waited at max */
	USWAP_RECLAIM_STALL_US,		/* microseconds spent waiting at max */
	USWAP_MAX_OVERRUN,		/* folios admitted past max: no tier had room */
	USWAP_FORK_MATERIALIZED,	/* pages read into a child at fork */
	USWAP_RESIDENT_BYTES,		/* now: managed bytes resident */
	USWAP_RESIDENT_PEAK,		/* peak of the budget's charge: resident
					   bytes plus the compressed pool */
	USWAP_SWAP_USED_BYTES,		/* now: bytes of swap slots in use */
	USWAP_MAX_BYTES,		/* the budget's max */
	USWAP_HIGH_BYTES,		/* the budget's high */
	USWAP_MANAGED_BYTES,		/* now: bytes of managed address space */
	USWAP_METADATA_BYTES,		/* now: bytes of page state tables */
	USWAP_SWAP_CORRUPT,		/* loads that failed their checksum (SIGBUS) */
	USWAP_ZSWPIN,			/* pages loaded from the compressed pool */
	USWAP_ZSWPOUT,			/* pages stored in the compressed pool */
	USWAP_ZSWPWB,			/* pages written back from the pool to swap */
	USWAP_ZSWAP_POOL_TOTAL_SIZE,	/* now: bytes of memory the pool holds */
	USWAP_ZSWAP_STORED_PAGES,	/* now: pages in the pool */
	USWAP_ZSWAP_SAME_FILLED_PAGES,	/* now: of them, stored as one word */
	USWAP_ZSWAP_STORED_INCOMPRESSIBLE_PAGES, /* now: of them, stored as
					   they are (did not compress) */
	USWAP_ZSWAP_COMPRESSED_BYTES,	/* now: bytes of compressed objects */
	USWAP_ZSWAP_REJECT_COMPRESS_POOR, /* pages that compressed too little */
	USWAP_ZSWAP_REJECT_COMPRESS_FAIL, /* pages the compressor failed on */
	USWAP_ZSWAP_REJECT_ALLOC_FAIL,	/* pages refused: pool arena full */
	USWAP_ZSWAP_REJECT_POOL_LIMIT,	/* pages refused: pool at its limit */
	USWAP_ZSWAP_POOL_LIMIT_HIT,	/* times the pool reached its limit */
	USWAP_ZSWAP_DECOMPRESS_FAIL,	/* objects that failed checksum or decompression */
	USWAP_ZSWAP_WRITEBACK_FAIL,	/* writebacks that failed (entry kept) */
	USWAP_MTHP_16KB_ZSWPOUT,	/* 16 KiB folios stored whole in the pool */
	USWAP_MTHP_64KB_ZSWPOUT,	/* 64 KiB folios ... */
	USWAP_MTHP_2048KB_ZSWPOUT,	/* 2 MiB folios ... */
	USWAP_THP_SWPOUT,		/* 2 MiB folios given contiguous slots */
	USWAP_THP_SWPOUT_FALLBACK,	/* 2 MiB folios split: no contiguous run */
	USWAP_MTHP_16KB_SWPOUT,		/* 16 KiB folios given contiguous slots */
	USWAP_MTHP_16KB_SWPOUT_FALLBACK, /* ... split */
	USWAP_MTHP_64KB_SWPOUT,		/* 64 KiB folios given contiguous slots */
	USWAP_MTHP_64KB_SWPOUT_FALLBACK, /* ... split */
	USWAP_SWAP_RA,			/* pages read ahead on swap-in */
	USWAP_SWAP_RA_HIT,		/* of them, passed over by a sequential reader */
	USWAP_PGDEMOTE_KSWAPD,		/* pages demoted by background reclaim */
	USWAP_PGDEMOTE_DIRECT,		/* pages demoted while a fault waited at max */
	USWAP_PGDEMOTE_FAIL,		/* pages that went to swap instead: the
					   target was full or the move failed */
	USWAP_PGPROMOTE_SUCCESS,	/* pages moved back to a fast node */
	USWAP_PGPROMOTE_CANDIDATE,	/* demoted pages found written to */
	USWAP_DEMOTED_BYTES,		/* now: bytes on slower nodes (all tiers) */
	USWAP_UFFD_EAGAIN,		/* userfaultfd copies and write-protects
					   retried: the address space was changing */
	USWAP_UFFD_EEXIST,		/* userfaultfd copies that found a page
					   mapped already (left as it was) */
	USWAP_SWAP_IO_SHORT,		/* device transfers that came back short
					   and were resubmitted for the rest */
	USWAP_SWAP_ENCRYPT,		/* pages encrypted on their way to a
					   device (--encrypt on) */
	USWAP_ZSWAP_WRITEBACK_SHARED,	/* pool entries writeback passed over:
					   their slots are shared with another
					   process of the tree (fork) */
	USWAP_FAULT_THREAD_MOVES,	/* fault threads that moved to the CPU
					   of the thread whose fault they served */
	USWAP_FORK_SHARED_BYTES,	/* now: resident bytes processes of the
					   tree share since a fork, charged to
					   the tree once */
	USWAP_MADV_COLD,		/* pages MADV_COLD moved to the tail of
					   the inactive list */
	USWAP_MADV_PAGEOUT,		/* pages MADV_PAGEOUT put first in line
					   for eviction */
	USWAP_NR_COUNTERS
};

/* The counter's name, as in the JSON ("pgfault", "pswpin", ...). */
const char *uswap_counter_name(enum uswap_counter c);

/* Read up to n counters into values[0..n), indexed by enum uswap_counter. */
int uswap_stats_read(struct uswap_runtime *rt, uint64_t *values, size_t n);

/* Fault latency histogram: bucket i counts faults served in [2^i, 2^(i+1)) us. */
#define USWAP_LATENCY_BUCKETS 24
int uswap_stats_latency(struct uswap_runtime *rt,
			uint64_t hist[USWAP_LATENCY_BUCKETS]);

/*
 * Write the counters as one JSON object: {"vmstat": {...}, "swaps": [...],
 * "fault_latency_us": {...}, "process": {...}} to fd.
 */
int uswap_stats_write_json(struct uswap_runtime *rt, int fd);

#ifdef __cplusplus
}
#endif
#endif /* USWAP_H */
