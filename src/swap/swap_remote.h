/* SPDX-License-Identifier: MIT */
/*
 * swap_remote.h - a swap device on a Redis Cluster (swap_remote.c,
 * docs/far-memory.md): the device's state, its page I/O (called by
 * page_io.c for requests to it), the discard of its freed clusters, and
 * the deletion of a run's keys (uswap run, uswap gc).
 */
#ifndef USWAP_SWAP_REMOTE_H
#define USWAP_SWAP_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct swap_info;
struct swap_io;
struct swap_io_req;
struct swap_spec;

#define SWAP_REMOTE_RUN_ENV	"USWAP_RUN_ID"	/* set by uswap run */
#define SWAP_REMOTE_RUN_LEN	16		/* hex digits of a run id */
#define SWAP_REMOTE_DEFAULT_SIZE (16ull << 30)	/* slot space without size= */

/*
 * Make si (swap_info_init() done, no file) a remote device from sp:
 * read the password file, connect, check that every master keeps what it
 * is given (noeviction), and leave the run's record (host, pid, start
 * time) for uswap gc.  0, or -errno with one line in err.
 */
int swap_remote_create(struct swap_info *si, const struct swap_spec *sp,
		       char *err, size_t errlen);
/*
 * This process is the last of the device's users: its values and record
 * are deleted (best effort: uswap gc removes what stays), its state goes.
 */
void swap_remote_destroy(struct swap_info *si);
/* Others still use the device: let go of this process's mapping only. */
void swap_remote_detach(struct swap_info *si);
/* Does si go to a Redis Cluster?  (si->remote set) */
bool swap_remote_is(const struct swap_info *si);
/* Should the device's pages be encrypted (not encrypt=off)? */
bool swap_remote_wants_crypt(const struct swap_info *si);

/*
 * Run every request of reqs[0..n) that goes to a remote device; the others
 * are left alone.  Writes: each element of a request's iovec (a folio, or
 * a sealed round's buffer) becomes values of aligned power-of-two runs
 * of slots, pipelined to the nodes (swap_remote.c), then WAIT for the
 * device's replicas; reads: each slot from the value that holds it.  io
 * may be NULL.  Sets each request's result: 0, -EINVAL (not whole slots),
 * -ENOSPC (the cluster is full), -EACCES, or -EIO.
 */
void swap_remote_run(struct swap_io *io, struct swap_io_req *reqs,
		     unsigned n, bool write);
/* Is one of reqs[0..n) to a remote device? */
bool swap_remote_any(const struct swap_io_req *reqs, unsigned n);

/*
 * A remote device refused a write for lack of memory (OOM, maxmemory):
 * freeing its slots gives that memory back only when their clusters are
 * discarded, so it counts as full until a discard has deleted values, or
 * for SWAP_REMOTE_FULL_MS (other clients may free memory too).
 * swap_remote_may_have_room() says when it may rejoin the lists; true for
 * any other device.
 */
#define SWAP_REMOTE_FULL_MS	1000u
void swap_remote_full(struct swap_info *si);
bool swap_remote_may_have_room(struct swap_info *si);

/* The discard of a freed cluster: UNLINK every value it ever held. */
int swap_remote_punch(struct swap_info *si, uint32_t cluster);

/*
 * This tree's run id ($USWAP_RUN_ID, else one made for this process):
 * SWAP_REMOTE_RUN_LEN hex digits and a NUL.
 */
void swap_remote_run_id(char id[SWAP_REMOTE_RUN_LEN + 1]);
/*
 * uswap run, before PROG starts, with a remote device named: a new run
 * id for the tree, into id, and the run's lock, a new file of the user's
 * whose path goes into lock: both given to PROG in the environment
 * ($USWAP_RUN_ID, $USWAP_RUN_LOCK, and $USWAP_RUN_OWNER, uswap run's
 * pid).  Each runtime with a remote device holds a shared flock on the
 * lock for as long as one process of it lives (fork children share it),
 * so that the run's keys are deleted only once nobody can read them.
 * 0 or -errno (then nothing is set: the runtimes name the run themselves
 * and only uswap gc deletes their keys).
 */
int swap_remote_run_begin(char id[SWAP_REMOTE_RUN_LEN + 1], char *lock,
			  size_t locklen);
/*
 * The run's lock at path is free (no runtime of it lives): true, and the
 * lock file is removed.  false: a process still uses the run's keys.
 */
bool swap_remote_run_over(const char *lock);

/*
 * Delete what run `run_id` left on the device of sp: every value and
 * record.  *deleted (may be NULL) gets how many keys went.  0 or -errno
 * with one line in err.
 */
int swap_remote_delete_run(const struct swap_spec *sp, const char *run_id,
			   uint64_t *deleted, char *err, size_t errlen);
/*
 * uswap gc: delete the keys of every run whose record names a process of
 * this host that no longer runs (or another process at that pid).
 * Records of other hosts are left alone.  *runs and *deleted get what
 * went.  0 or -errno with one line in err.
 */
int swap_remote_gc(const struct swap_spec *sp, unsigned *runs,
		   uint64_t *deleted, char *err, size_t errlen);

#endif /* USWAP_SWAP_REMOTE_H */
