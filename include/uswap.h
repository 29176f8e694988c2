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
				   97% of max (max less 1/32); must not
				   exceed max */
	uint64_t folio_size;	/* unit of fault-in and reclaim: 4K (default),
				   16K, 64K or 2M */
	uint64_t min_region;	/* preload only: smallest anonymous private mmap
				   that is managed; default 1 MiB */
	uint64_t swap_size;	/* size cap of a swap file; default (0): none,
				   the file grows on demand while its file
				   system keeps as much free space as it holds */
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
 * Set one option by name, as the command line and the environment spell
 * it ('_' may stand for '-').  The options, in the order of the option
 * table (uswap_option_desc(), which gives each one's value, default and
 * help):
 *   max, high, folio, min-region, swap, swaptab, swap-node-policy,
 *   swap-size, swap-dir, stats, fault-threads, verbose, zswap, zswap-max,
 *   zswap-accept, zswap-unit, zswap-threads, zswap-incompressible,
 *   zswap-charge, verify, encrypt, demotion, tier-max, uffd-features-off
 * Each sets the field of the same name above (folio: folio_size; stats:
 * stats_path; zswap-max and zswap-accept: the _pct fields;
 * uffd-features-off, for tests: the userfaultfd features to treat as
 * absent), or a flag.  Sizes take K, M, G, T suffixes (powers of 1024) or
 * a plain byte count.  "verbose" takes a boolean (1, 0, yes, no, true,
 * false; NULL or "" is 1: USWAP_OPT_VERBOSE).  "swap" takes a device SPEC
 * (each call adds one; several, one per line, from the environment),
 * "file" (the default: one unnamed swap file in swap-dir; forgets the
 * SPECs given) or "none" (USWAP_OPT_NO_SWAP_FILE).  "verify" takes on
 * (the default: every slot written to a device carries a crc32c, checked
 * on every read) or off (USWAP_OPT_NO_VERIFY).  "encrypt" takes off (the
 * default) or on (USWAP_OPT_ENCRYPT: what is written to a swap device is
 * encrypted and authenticated with XChaCha20-Poly1305 under a random key
 * that lives in locked memory for the runtime's life; every read is
 * authenticated, whatever "verify" says).  "zswap-incompressible" takes
 * device (the default: a page that compresses to more than 7/8 of its
 * size goes to a swap device, or is kept as it is when there is none) or
 * store (USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE: the pool keeps it as it is
 * and writes it back with the rest, as recent kernels' zswap does).
 * "zswap-charge" takes on (the default: the pool's memory is charged to
 * max, as cgroup v2 charges zswap) or off (USWAP_OPT_ZSWAP_NO_CHARGE:
 * only resident memory is, as under cgroup v1; the pool may add up to
 * zswap-max percent of max on top).  "demotion" takes auto (the default),
 * none or a SPEC "0>2;1>2"; "tier-max" takes "NODE=SIZE[,NODE=SIZE]...";
 * their nodes are checked against the machine when a runtime starts.  On
 * a bad name or value, returns -EINVAL (-ERANGE for a size or mask past 64
 * bits, -ENAMETOOLONG for a path too long) and writes one line naming the
 * option and what was expected into err (errlen bytes, may be 0); *opt is
 * then left as it was.
 */
int uswap_options_set(struct uswap_options *opt, const char *name,
		      const char *value, char *err, size_t errlen);

/*
 * Read the options from the environment: each option's variable
 * (struct uswap_option_desc.env: USWAP_ and its name in upper case, '_'
 * for '-', as USWAP_MAX, USWAP_SWAP_NODE_POLICY) that is set is given to
 * uswap_options_set().  Errors as uswap_options_set(), naming the
 * variable; *opt is changed only on success.
 */
int uswap_options_from_env(struct uswap_options *opt, char *err, size_t errlen);

/*
 * The value of option name in *opt as uswap_options_set() takes it back
 * (sizes and counts in decimal, bit masks in hexadecimal, words as
 * words), into buf: what a program passes on to another in the option's
 * variable.  Returns its length, 0 (buf "") when the option holds its
 * default (nothing to pass on), -EINVAL for an unknown name or a field
 * that holds no value of the option (as uswap_options_check() would say),
 * -ENOSPC when len is too small (sizeof(struct uswap_options) is always
 * enough).
 */
int uswap_options_get(const struct uswap_options *opt, const char *name,
		      char *buf, size_t len);

/*
 * The option table, for a program that builds a command line, a help
 * text or a configuration file from it (the uswap command does): one
 * descriptor per option of uswap_options_set(), in the order above.
 * uswap_option_desc(i) for i = 0, 1, ... until it returns NULL.
 */
#define USWAP_OPTION_HIDDEN	(1u << 0)	/* for tests: not in a help text */

struct uswap_option_desc {
	const char *name;	/* "max": --max, uswap_options_set(opt, "max") */
	const char *env;	/* "USWAP_MAX", read by uswap_options_from_env() */
	const char *metavar;	/* the value in a synopsis: "SIZE", "page|cpu";
				   NULL: none, the name alone sets it (--verbose) */
	const char *default_text; /* the default as a help text says it ("64K",
				   "half of MemAvailable ..."); NULL: none */
	const char *help;	/* one paragraph: lower case, no final period,
				   two spaces between sentences */
	char short_name;	/* 'v' for -v, or 0 */
	unsigned flags;		/* USWAP_OPTION_* */
};

const struct uswap_option_desc *uswap_option_desc(unsigned i);

/*
 * Read and check a swap table (the file of the "swaptab" option) as a
 * runtime will when it starts, so that a program that starts several
 * runtimes can refuse a bad one once, before any starts.  0, or -errno
 * with one line naming the file (and the line) in err.
 */
int uswap_swaptab_check(const char *path, char *err, size_t errlen);

/*
 * For a supervisor such as uswap run: the swap files and block devices
 * the options name (swap, swaptab), opened before the program starts, and
 * emptied once the program has ended (a file truncated, a block device
 * discarded), unless a process of the tree still holds one.  Only the
 * devices a runtime would accept are opened.  open returns NULL when out
 * of memory (nothing will be emptied); run empties them and frees w.
 */
struct uswap_swap_wipe;
struct uswap_swap_wipe *uswap_swap_wipe_open(const struct uswap_options *opt);
void uswap_swap_wipe_run(struct uswap_swap_wipe *w);

/*
 * uswap gc: on the remote swap device of spec (redis://HOST:PORT[,...]
 * with its user= and password-file=), delete the values of every run
 * whose owner no longer runs on this host and whose lock nobody holds
 * (docs/far-memory.md).  *runs and *keys get what was deleted.  0;
 * -EINVAL for a spec that does not parse or is not remote (err says
 * why); else -errno with one line in err (the cluster cannot be reached,
 * authentication refused, ...).
 */
int uswap_remote_gc(const char *spec, unsigned *runs, uint64_t *keys,
		    char *err, size_t errlen);

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
 * Debugging: with USWAP_TRACE=1 in the environment, uswap keeps the
 * history of the last 65,536 events that changed a folio (served,
 * evicted, moved, dropped) in each process; this prints those of the
 * folios that covered addr to stderr, oldest first (nothing when the
 * history is off).  The preload library exports it too, for a program
 * that finds a page it did not expect (the soak's worker).
 */
void uswap_trace_dump(const void *addr);

/*
 * exec: a descriptor of rt's budget for the next image to join
 * (USWAP_OPT_JOIN_TREE), so that one budget covers a process tree that
 * forks and execs.  Close-on-exec, as every descriptor of uswap's: clear
 * FD_CLOEXEC for an exec whose program will join, and for that exec only
 * (the preload library does it for programs that load it).  Made once
 * and closed by uswap_runtime_destroy; in an image that joined, it is the
 * opt.tree_fd it joined by, which stays the caller's.  -errno.
 */
int uswap_runtime_tree_fd(struct uswap_runtime *rt);

/*
 * This process leaves rt's tree for good, as it must before its
 * credentials change (setuid, setgroups, capset ...): rt's threads stop,
 * every swapped-out page is read back into place, the memory stays
 * mapped as ordinary memory, and the process keeps nothing of the tree's
 * (no descriptor, no shared mapping, no key).  rt is defunct afterwards:
 * do not use or destroy it.  0, or -EIO when some memory could not be
 * read in (it raises SIGBUS where it is touched).
 */
int uswap_runtime_detach(struct uswap_runtime *rt);

/* Exit status of a program stopped because uswap lost a descriptor. */
#define USWAP_EXIT_LOST_FD	124

/*
 * Called by each new thread of the program (the preload does it for
 * threads made by pthread_create; uswap_runtime_create for its caller):
 * the fault threads can then serve its faults from its CPU
 * (docs/fault-cost.md).  Cheap, and harmless when the C library keeps no
 * rseq area for the thread.
 */
void uswap_thread_started(void);

/*
 * Debuggers and core dumps.  A page uswap has swapped out is not in the
 * address space: the process brings it back when it touches it, but a
 * reader from outside cannot (the kernel gives /proc/PID/mem and
 * PTRACE_PEEKDATA an error there, and writes zeros into a core dump).
 * process_vm_readv(2) does bring such pages in, served by rt's threads.
 *
 * uswap_runtime_hold brings every swapped folio of rt back, in address
 * order, until limit bytes have come back (UINT64_MAX: all), and keeps
 * all of rt's managed memory resident until uswap_runtime_unhold: nothing
 * is evicted, and faults that would pass max are admitted (counted as
 * hold_overrun).  USWAP_HOLD_WRITABLE also takes the write-protection off
 * (a debugger may write).  *pages (may be NULL) gets the pages brought
 * back (counted as hold_pages).  It allocates nothing and waits for no
 * lock forever, so that a signal handler may call it (the preload library
 * does, before a core dump): -EDEADLK when the calling thread holds the
 * runtime busy (it was interrupted inside uswap), -ETIMEDOUT when the
 * runtime stayed busy for seconds.
 */
#define USWAP_HOLD_WRITABLE	1u
int uswap_runtime_hold(struct uswap_runtime *rt, unsigned flags,
		       uint64_t limit, uint64_t *pages);
void uswap_runtime_unhold(struct uswap_runtime *rt);

/*
 * The same for another process of a uswap tree (uswap debug): pid's
 * runtime brings its memory back (writable) and keeps it resident until
 * uswap_hold_release(*hp) or until this process ends.  Waits for it, up
 * to timeout_ms (0: as long as pid runs).  *pages gets the pages brought
 * back.  -ESRCH: pid is in no uswap tree (or has ended); -EACCES or
 * -EPERM: its descriptors cannot be opened (another user's); -EBUSY:
 * another process holds it; -ETIMEDOUT; or what pid's runtime returned.
 */
struct uswap_hold;
int uswap_hold_pid(int pid, unsigned timeout_ms, struct uswap_hold **hp,
		   uint64_t *pages);
void uswap_hold_release(struct uswap_hold *h);

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

/*
 * Protections and locks, for a host that interposes them (the preload
 * library): uswap_mprotect, uswap_pkey_mprotect, uswap_mlock2 (flags as
 * mlock2(2): 0 or MLOCK_ONFAULT), uswap_munlock, uswap_mlockall,
 * uswap_munlockall.  Each does what the system call does and returns
 * what it returns, with errno set on failure; uswap learns what managed
 * memory it may evict and how to read it without touching it.  Locked
 * managed memory is charged and never evicted; a lock that would leave
 * no room under max fails with ENOMEM, as one past RLIMIT_MEMLOCK, and
 * brings nothing in.
 */
int uswap_mprotect(struct uswap_runtime *rt, void *addr, size_t len, int prot);
int uswap_pkey_mprotect(struct uswap_runtime *rt, void *addr, size_t len,
			int prot, int pkey);
int uswap_mlock2(struct uswap_runtime *rt, const void *addr, size_t len,
		 unsigned int flags);
int uswap_munlock(struct uswap_runtime *rt, const void *addr, size_t len);
int uswap_mlockall(struct uswap_runtime *rt, int flags);
int uswap_munlockall(struct uswap_runtime *rt);

/*
 * io_uring fixed buffers: the nr ranges of iov (struct iovec) are about
 * to be registered with the ring whose descriptor is ring_fd, which pins
 * their pages: managed memory among them is treated as locked until
 * uswap_unpin(rt, ring_fd) (the buffers unregistered, the ring closed).
 * Returns 0 when pinned; 1 when nothing was done because the ring has
 * buffers already (the kernel refuses a second registration); -ENOMEM
 * when they would leave no room under max (nothing is pinned then).  A
 * negative ring_fd names pins of their own (an update of a ring's
 * buffers, as -1 - ring_fd), which are always added.
 */
struct iovec;
int uswap_pin(struct uswap_runtime *rt, int ring_fd, const struct iovec *iov,
	      unsigned nr);
void uswap_unpin(struct uswap_runtime *rt, int ring_fd);

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
	USWAP_MAX_OVERRUN,		/* charges that took the budget past max:
					   a fault admitted when no tier had room
					   or after a bounded wait (a process of
					   the tree stopped or stuck), the pool
					   growing, a fork, a promotion */
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
	USWAP_FAULT_AROUND,		/* never-touched pages filled with zeros
					   ahead of a sequential first touch */
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
	USWAP_HOLD_PAGES,		/* pages brought back for a core dump or
					   a debugger (uswap_runtime_hold) */
	USWAP_HOLD_OVERRUN,		/* folios admitted past max while held */
	USWAP_ANON_UNMANAGED_BYTES,	/* now: anonymous memory of the process
					   outside uswap's management (RssAnon
					   less uswap's own) */
	USWAP_FAULT_THREAD_RESTARTS,	/* fault threads the watchdog started:
					   one had ended (its read failed), or
					   was stuck on a fault */
	USWAP_EVICT_MOVE,		/* pages evicted by moving them out of the
					   program's reach (UFFDIO_MOVE) */
	USWAP_EVICT_BUSY,		/* evictions refused: a page was pinned for
					   I/O (the folio stays resident) */
	USWAP_EVICT_WAIT,		/* faults that waited for a folio whose
					   pages were moving out (never zeros) */
	USWAP_UNEVICTABLE_PGS_CULLED,	/* pages the kernel refused to drop (locked
					   behind uswap's back): kept resident */
	USWAP_NR_UNEVICTABLE,		/* now: resident pages locked or pinned,
					   never evicted (nr_unevictable) */
	USWAP_NR_MLOCK,			/* now: of them, pages locked (nr_mlock) */
	USWAP_MADV_COLD,		/* pages MADV_COLD moved to the tail of
					   the inactive list */
	USWAP_MADV_PAGEOUT,		/* pages MADV_PAGEOUT put first in line
					   for eviction */
	USWAP_CHARGE_UNDERFLOW,		/* pages a charge would have gone below
					   zero by (a bug of uswap's: stopped
					   at zero, logged; always 0) */
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
 * "tiers": [...], "fault_latency_us": {...}, "reaped": {...},
 * "process": {...}} to fd.  The counters are this process's; "reaped"
 * holds the events of the processes of its tree that ended without
 * writing theirs (_exit, a signal, exec), folded in by the process that
 * reaped them, with their number: the same in every process's document,
 * and growing, so that a reader merging several takes the largest of
 * each, per "budget" (docs/uswap.1, STATISTICS).
 */
int uswap_stats_write_json(struct uswap_runtime *rt, int fd);

/*
 * The same, as this process's final statistics (at exit): the processes
 * of the tree found gone are reaped first (their counters join
 * "reaped"), and once it is written, no reaper counts this process's
 * counters again.
 */
int uswap_stats_write_final(struct uswap_runtime *rt, int fd);

/*
 * The exit status of a process whose memory uswap can no longer serve:
 * its userfaultfd was closed or replaced behind uswap's back, or its
 * fault threads keep failing and cannot be started again.  A message on
 * standard error says which (docs/uswap.1, EXIT STATUS).
 */
#define USWAP_EXIT_UNSERVED	123

#ifdef __cplusplus
}
#endif
#endif /* USWAP_H */
