/* SPDX-License-Identifier: MIT */
/*
 * swapdev.h - several swap devices, in three files: the device spec and
 * the uswaptab file (swapspec.c), the kernel's priority model with one
 * availability list per NUMA node (swapavail.c), and the topology read
 * from sysfs that places devices on nodes (topology.c).  Pure logic:
 * nothing here opens a swap device or does I/O to one.
 */
#ifndef USWAP_SWAPDEV_H
#define USWAP_SWAPDEV_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "swap.h"

/*
 * Swap entries carry the device as type + 1 in SWP_TYPE_BITS bits, and 0
 * means "no entry": that leaves 15 devices.
 */
#define SWAP_MAX_DEVICES	((1u << SWP_TYPE_BITS) - 1)
#define SWAP_MAX_NODES		1024u		/* node= takes 0..1023 */
#define SWAP_PRIO_MAX		32767		/* user range, as swapon -p */
#define SWAP_PRIO_AUTO		INT_MIN		/* no prio= given */
#define SWAP_SPEC_MIN_SIZE	(2ull << 20)	/* one cluster */
#define SWAP_SPEC_MAX_SIZE	((uint64_t)SWP_MAX_SLOTS << SWAP_SLOT_SHIFT)
#define SWAP_PATH_MAX		256		/* sizeof(swap_spec.path) */

/*
 * One device as the user gave it:
 *
 *	PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]
 *	redis://HOST:PORT[,HOST:PORT...][,prio=N][,size=SIZE][,node=N]
 *		[,user=U][,password-file=F][,tls=off][,replicas=K][,encrypt=on|off]
 *
 * path	a file or a block device, not checked here; at most SWAP_PATH_MAX - 1
 *	bytes, without ',' (the field separator) or control characters, and
 *	not beginning or ending with a space.  For a remote device,
 *	"redis://" and its first seed.
 * prio	0..SWAP_PRIO_MAX, or SWAP_PRIO_AUTO when not given.
 * size	0 when not given; else at least 2M and at most 1T (what 28 bits of
 *	4 KiB slots address), rounded down to a multiple of 2M (whole
 *	clusters): "size=5M" gives 4M.
 * node	0..SWAP_MAX_NODES - 1, or -1 when not given (read from sysfs).
 * discard, direct	flags without a value (files and block devices).
 *
 * A remote device (docs/far-memory.md) is a Redis Cluster, or one plain
 * server, named by one address or more (seeds: host names, IPv4, or IPv6
 * in brackets, each with its port); its fields:
 * user	an ACL user name (1..63 printable bytes, no spaces).
 * password-file	a file holding the password (never the password
 *	itself: a command line is public), read when the device is set up.
 * tls	off; on is refused (this build's hiredis has no TLS).
 * replicas	0..8: a folio leaves memory only once WAIT says that many
 *	replicas hold its copy.  0 when not given.
 * encrypt	on (the default: the data leaves the machine) or off, whatever
 *	--encrypt says for the other devices.
 * Each field may appear once; fields are case-sensitive and take no
 * spaces (a space belongs to the path or makes the value invalid).
 */
#define SWAP_REMOTE_PREFIX	"redis://"
#define SWAP_REMOTE_USER_MAX	64
#define SWAP_REMOTE_REPLICAS_MAX 8
struct swap_spec {
	char path[SWAP_PATH_MAX];
	int prio;
	uint64_t size;
	int node;
	bool discard, direct;
	bool remote;				/* redis:// */
	char seeds[SWAP_PATH_MAX];		/* "HOST:PORT,HOST:PORT..." */
	char user[SWAP_REMOTE_USER_MAX];	/* "" when not given */
	char password_file[SWAP_PATH_MAX];	/* "" when not given */
	unsigned replicas;
	bool remote_plain;			/* encrypt=off */
};

/*
 * Parse one --swap SPEC into *out.  Returns 0, or -EINVAL (-ENAMETOOLONG
 * for a long path) with one line in err, prefixed with --swap "SPEC":, that
 * names the field and what it expects.  *out is written only on success.
 */
int swap_spec_parse(const char *s, struct swap_spec *out, char *err,
		    size_t errlen);

/*
 * Parse a uswaptab: one SPEC per line; '#' starts a comment at the start
 * of a line or after a space or tab (elsewhere it belongs to the path);
 * blank lines are ignored; each line is trimmed of spaces, tabs and '\r'.
 * At most min(max, SWAP_MAX_DEVICES) devices, each path once, at least one.
 * Fills out[0..*n).  Returns 0, or a negative errno with one line in err
 * prefixed "NAME:LINE: " (or "NAME: " for the whole file); out and *n are
 * written only on success.  The file is read whole; at most 64 KiB.  It
 * is opened without following a link or waiting (O_NOFOLLOW, O_NONBLOCK)
 * and checked on the descriptor: a regular file (-ELOOP for a link,
 * -EISDIR, -EINVAL for a FIFO, device or socket), owned by the user or
 * root and writable by nobody else (-EPERM).
 */
int swaptab_parse_file(const char *file, struct swap_spec *out, unsigned max,
		       unsigned *n, char *err, size_t errlen);
int swaptab_parse_text(const char *name, const char *text,
		       struct swap_spec *out, unsigned max, unsigned *n,
		       char *err, size_t errlen);

/*
 * The per-node availability lists (the kernel's swap_avail_heads).  Devices
 * are numbered 0..nr_devs-1 in the order given; one mutex inside makes
 * every call thread-safe.
 */
struct swap_avail;

/*
 * Build the lists.  user_prio[i] is SWAP_PRIO_AUTO or 0..SWAP_PRIO_MAX;
 * dev_node[i] is -1 (unknown) or 0..SWAP_MAX_NODES-1; either array may be
 * NULL (all automatic, all unknown).  nr_nodes 1..SWAP_MAX_NODES, nr_devs
 * 1..SWAP_MAX_DEVICES.  Every device starts on the lists.  0, -EINVAL or
 * -ENOMEM.
 */
int swap_avail_create(struct swap_avail **out, unsigned nr_nodes,
		      const int *user_prio, const int *dev_node,
		      unsigned nr_devs);
void swap_avail_destroy(struct swap_avail *sa);
/* The device's own priority: the user's, or -2, -3, ... in device order. */
int swap_avail_prio(const struct swap_avail *sa, unsigned dev);
/* Its priority on node's list: -1 when promoted there, else its own. */
int swap_avail_prio_on(const struct swap_avail *sa, unsigned node,
		       unsigned dev);
/*
 * The device to allocate from for memory of node `node` (-1 or out of
 * range: node 0's list): the head of that list, which is then rotated
 * behind the other devices of its priority on that list.  -ENOSPC when
 * every device is off the lists.
 */
int swap_avail_next(struct swap_avail *sa, int node);
/* The device is full: it leaves every list (no-op if already off). */
void swap_avail_full(struct swap_avail *sa, unsigned dev);
/* Space was freed: it rejoins every list behind its equals (no-op if on). */
void swap_avail_room(struct swap_avail *sa, unsigned dev);
/* Is the device on the lists (not full)? */
bool swap_avail_has_room(const struct swap_avail *sa, unsigned dev);
/*
 * Write one line per node, "node N: dev(prio) dev(prio) ...\n", head
 * first, prio as on that list.  Returns the length of the whole text (as
 * snprintf: when >= len, buf holds a truncated, terminated prefix).
 */
size_t swap_avail_describe(const struct swap_avail *sa, char *buf, size_t len);
/* Check every list against the rules; 0 or -EUCLEAN.  For tests. */
int swap_avail_validate(const struct swap_avail *sa);

/*
 * Topology under a sysfs root: NULL means sysfs_root().  These read files
 * once, at setup; they are not for the fault path.
 */
const char *sysfs_root(void);	/* $USWAP_SYSFS_ROOT if set and not empty, else "/sys" */
/* Number of node ids (highest possible, else online, node + 1); >= 1. */
int sysfs_nr_nodes(const char *root);
/* A CPU's node, or -1 when unknown. */
int sysfs_cpu_node(const char *root, unsigned cpu);
/*
 * The node of block device major:minor, or -1: a partition counts as its
 * disk; the disk's device/numa_node, else the nearest ancestor of that
 * device with a numa_node file; for a device without one (dm, md), its
 * first slave (by name).
 */
int sysfs_blockdev_node(const char *root, unsigned major, unsigned minor);
/*
 * The node of the device behind a path: a block device itself, else the
 * block device of the file system holding the path (or its nearest
 * existing ancestor, for a file not created yet).  -1 when unknown (e.g.
 * btrfs, overlayfs and tmpfs have no block device of their own).
 */
int sysfs_path_node(const char *root, const char *path);

/* Helpers of swapspec.c and topology.c, which both read and parse files. */

/*
 * A decimal integer with an optional '-' in [lo, hi]: 0, -EINVAL when it
 * is not one, -ERANGE when it is one out of range.
 */
static inline int swapdev_parse_int(const char *s, size_t len, long lo,
				    long hi, int *out)
{
	bool neg = len && s[0] == '-', big = false;
	long v = 0;
	size_t i;

	for (i = neg; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (LONG_MAX - 9) / 10)
			big = true;
		else
			v = v * 10 + (s[i] - '0');
	}
	if (len == (size_t)neg)
		return -EINVAL;
	if (neg)
		v = -v;
	if (big || v < lo || v > hi)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

/* Read the whole of a small file into buf (len bytes): bytes read or -errno. */
/*
 * topology.c: a small sysfs file into buf (len bytes), NUL-terminated,
 * trailing blanks and newlines cut.  0 or -errno.
 */
int sysfs_read_text(const char *path, char *buf, size_t len);
/* snprintf into a PATH_MAX buffer; false when the path does not fit. */
bool sysfs_mkpath(char *buf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* swap_open.c: opening the files and block devices of specs. */

/* The directory part of path, or "." */
void swap_dir_of(const char *path, char *dir, size_t len);
/*
 * The slot space of a file without a size (no size=, no --swap-size) on
 * fd's file system: half of its size, at most what a swap entry can
 * name, whole clusters.  The file takes blocks only as it is used, and
 * no more than the free space allows (swap_cluster_provision()); the
 * slot maps are sized for this much, in address space that is touched
 * only where used.
 */
uint64_t swap_share_size(int fd);
/*
 * Open the existing file or block device at path, checked on the
 * descriptor that is then used, never on a path: the directory first
 * (swap_dir_open: nobody else may rename in it), the name in it without
 * following a link, its type on an O_PATH descriptor (so that no FIFO or
 * character device is ever opened), then the file itself, which must be
 * the same inode.  A regular file must be the user's and nobody else's to
 * read or write.  A block device is opened O_EXCL when excl, so that
 * nothing else uses it meanwhile.  O_DIRECT when the file system allows
 * it (*direct), or always with need_direct.  Messages are logged unless
 * quiet.  fd, -ENOENT when the path does not exist, or -errno.
 */
int swap_spec_open(const char *path, bool need_direct, bool excl, bool quiet,
		   bool *blk, bool *direct);

/*
 * For uswap run: the files and block devices the user named (--swap,
 * --swaptab), opened before PROG starts, and emptied once it has ended.
 * A process's runtime never tears its devices down (other threads may
 * still run at exit), so what a run wrote would stay there for a reader
 * of the file or device; a file is truncated, a block device discarded
 * over the size it was given.  One that a process of the tree still uses
 * is left as it is, with a message (the next run on it empties a file
 * when it starts).  Only files and devices that the runtime would accept
 * are opened.
 */
struct swap_wipe {
	unsigned nr;
	int fd[SWAP_MAX_DEVICES];
	bool blk[SWAP_MAX_DEVICES];
	uint64_t len[SWAP_MAX_DEVICES];
	char path[SWAP_MAX_DEVICES][SWAP_PATH_MAX];
	/*
	 * Remote devices (swap_remote.h): the run's id and lock, given to
	 * PROG in the environment, and the specs whose keys go at the end.
	 */
	unsigned nr_remote;
	struct swap_spec remote[SWAP_MAX_DEVICES];
	char run_lock[SWAP_PATH_MAX];
	char run_id[24];
};
struct uswap_options;
void swap_wipe_open(const struct uswap_options *opt, struct swap_wipe *w);
void swap_wipe_run(struct swap_wipe *w);

#endif /* USWAP_SWAPDEV_H */
