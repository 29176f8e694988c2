// SPDX-License-Identifier: MIT
/*
 * swap_remote.c - a swap device on a Redis Cluster (docs/far-memory.md).
 *
 * To the rest of uswap it is a device like a file: slots, clusters,
 * priorities, the pool in front, the checks of what is read back; only
 * its page I/O differs, and page_io.c hands it here.  It has no file
 * (si->fd < 0) and a struct swap_remote in si->remote.
 *
 * Values.  What a write gives is cut into aligned power-of-two runs of
 * slots, at most a cluster (512 slots), never across two elements of the
 * request's iovec: a folio written from the program's memory is one
 * element, so a 64 KiB folio is one value of 64 KiB, a 4 KiB folio one
 * of 4 KiB.  (Values gathered across consecutive 4 KiB folios, up to
 * 2 MiB, were tried: 6% slower for sequential writes, side by side, since
 * gathering adds a copy to the two hiredis makes.)  The value of the run
 * of 2^k slots from slot b is
 *
 *	us:{RUN.INST.DEV.CLUSTER}:B.K
 *
 * RUN is the tree's run id (uswap run's, in $USWAP_RUN_ID), INST this
 * device's own (each runtime's slot space is its own: a program that
 * execs another under the same run gets another INST), B the run's first
 * slot in its cluster.  The hash tag is the cluster: a cluster's values
 * live on one shard, one cluster after another spreads over them.
 *
 * Which value holds a slot is in si->remote->order, one byte per slot in
 * shared memory beside the slot map: k of the run written last over it,
 * set by the writer once the write succeeded and before the slot is
 * published, as the slot's checksum is (swap_io.h).  A read of slots
 * takes, from each value that holds some of them, what it needs (GET of
 * a whole value, GETRANGE of part of one), straight into the caller's
 * buffer.  A slot freed and written again gets a value of the new write's
 * run, whose key is new unless the run is the same: then every slot of
 * the old value was free, and replacing it loses nothing.  What an old
 * value still holds for a slot no one reads is never read.
 *
 * Checks.  Every value read is checked as a file's slots are (the AEAD
 * tag of a device that encrypts, else its crc32c), against what this
 * process recorded when it wrote: a value that a failover took back to an
 * older copy, or that someone changed, is refused (SIGBUS at that page),
 * never returned.  So a remote device always has a check: encryption
 * unless encrypt=off, else the crc32c even with --verify off.
 *
 * Durability.  With replicas=K, each write batch ends with WAIT K on
 * every master written to: the batch fails (the folios stay in memory)
 * unless each master confirms K copies.
 *
 * Frees.  A freed slot's value stays until its cluster is free: the
 * device discards freed clusters (swap_io.h, not lazily), and discarding
 * one here is an UNLINK of every value it may hold (the orders written
 * in it, a bit each in si->remote->cluster_orders).  A cluster is
 * reused only after its discard.
 *
 * Connections.  Each thread that does remote I/O has its own store (one
 * connection per node, its own slot map), made on first use and kept in
 * thread-local storage; its sockets are in the thread's own descriptor
 * table (fdtable.c).  A fork child starts without any.
 *
 * Names and cleanup.  The device leaves a record, us:run:RUN.INST, with
 * its host, the pid and start time of the process that owns the run (uswap
 * run's, else its own) and the user.  uswap run deletes the run's keys
 * when PROG has ended, whatever happened to it; uswap gc deletes those of
 * runs whose owner no longer runs on this host.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "fdtable.h"
#include "log.h"
#include "prim.h"
#include "redis_store.h"
#include "slab.h"
#include "swap.h"
#include "swap_io.h"
#include "swap_remote.h"
#include "swapdev.h"
#include "uswap.h"

#define ORDER_NONE	0xffu		/* no value holds the slot */
#define ORDER_MAX	9u		/* a cluster: 512 slots */
#define KEY_MAX		80u
#define CHUNK		256u		/* operations per round */
#define PASSWORD_MAX	511u
#define RECORD_PREFIX	"us:run:"
#define RECORD_LEN	512u		/* a record's value, space-padded */
#define GC_MAX		256u		/* runs judged per uswap gc */

_Static_assert((1u << ORDER_MAX) == SWAP_CLUSTER_SLOTS, "a value is at most a cluster");

struct swap_remote {
	struct redis_store_config cfg;
	char user[SWAP_REMOTE_USER_MAX];
	char password[PASSWORD_MAX + 1];
	unsigned replicas;
	bool plain;			/* encrypt=off */
	char run[SWAP_REMOTE_RUN_LEN + 1];
	char inst[9];
	pid_t owner;			/* the run's: uswap run, or us */
	char lock[SWAP_PATH_MAX];	/* the run's lock, held shared; "" */
	char prefix[64];		/* "us:{RUN.INST.DEV." */
	uint8_t *order;			/* per slot, shared */
	_Atomic uint16_t *cluster_orders;	/* per cluster, shared */
	size_t alloc_len;
	_Atomic bool logged_io;
	_Atomic uint64_t full_since_us;	/* refused a write (OOM); 0: not */
};

/* This thread's stores, one per device it used (see "Connections"). */
struct remote_tls {
	pid_t pid;
	struct redis_store *rs[SWAP_MAX_TYPES];
	const struct swap_remote *of[SWAP_MAX_TYPES];
	struct redis_op *op;		/* CHUNK of them */
	char (*key)[KEY_MAX];
};
static __thread struct remote_tls tls __attribute__((tls_model("initial-exec")));

bool swap_remote_is(const struct swap_info *si)
{
	return si && si->remote;
}

bool swap_remote_wants_crypt(const struct swap_info *si)
{
	return si->remote && !si->remote->plain;
}

/* --- run ids and records --- */

static void hex_random(char *out, size_t digits)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t i;

	assert(digits <= 2 * sizeof(b));
	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		uint64_t t = prim_now_us() ^ ((uint64_t)getpid() << 32);

		memcpy(b, &t, sizeof(t));
		memcpy(b + 8, &t, sizeof(t));
	}
	for (i = 0; i < digits; i++)
		out[i] = hex[(b[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	out[digits] = 0;
}

static bool run_id_valid(const char *s)
{
	size_t i;

	for (i = 0; i < SWAP_REMOTE_RUN_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[i] == 0;
}

static void new_run_id(char id[SWAP_REMOTE_RUN_LEN + 1])
{
	hex_random(id, SWAP_REMOTE_RUN_LEN);
}

void swap_remote_run_id(char id[SWAP_REMOTE_RUN_LEN + 1])
{
	static char own[SWAP_REMOTE_RUN_LEN + 1];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (!own[0])
		new_run_id(own);
	memcpy(id, own, sizeof(own));
	pthread_mutex_unlock(&lock);
}

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

int swap_remote_run_begin(char id[SWAP_REMOTE_RUN_LEN + 1], char *lock,
			  size_t locklen)
{
	char owner[24];
	int fd;

	new_run_id(id);
	if ((size_t)snprintf(lock, locklen, "%s/uswap-run.%s.lock", tmp_dir(),
			     id) >= locklen)
		return -ENAMETOOLONG;
	fd = prim_open(lock, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0600);
	if (fd < 0)
		return fd;
	prim_close(fd);
	snprintf(owner, sizeof(owner), "%d", (int)getpid());
	if (setenv(SWAP_REMOTE_RUN_ENV, id, 1) ||
	    setenv("USWAP_RUN_LOCK", lock, 1) ||
	    setenv("USWAP_RUN_OWNER", owner, 1)) {
		prim_unlinkat(AT_FDCWD, lock, 0);
		return -ENOMEM;
	}
	return 0;
}

/* Open the run's lock at path: a regular file of the user's.  fd or -errno. */
static int lock_open(const char *path)
{
	struct stat st;
	int fd = prim_open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			   0);

	if (fd < 0)
		return fd;
	if (prim_fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		prim_close(fd);
		return -EPERM;
	}
	return fd;
}

bool swap_remote_run_over(const char *path)
{
	int fd = lock_open(path);

	if (fd == -ENOENT)
		return true;
	if (fd < 0 || prim_flock(fd, LOCK_EX | LOCK_NB)) {
		if (fd >= 0)
			prim_close(fd);
		return false;
	}
	prim_unlinkat(AT_FDCWD, path, 0);
	prim_close(fd);
	return true;
}

/*
 * The run this runtime's device belongs to: uswap run's (its id, owner
 * and lock, held shared from now on) when its lock can still be taken,
 * else one of this process's own.
 */
static void run_join(struct swap_remote *r)
{
	const char *id = getenv(SWAP_REMOTE_RUN_ENV);
	const char *lock = getenv("USWAP_RUN_LOCK");
	const char *owner = getenv("USWAP_RUN_OWNER");
	long pid = owner ? strtol(owner, NULL, 10) : 0;
	int fd;

	if (id && run_id_valid(id) && lock && strlen(lock) < sizeof(r->lock) &&
	    pid > 0 && (fd = lock_open(lock)) >= 0) {
		if (prim_flock(fd, LOCK_SH | LOCK_NB) == 0) {
			fd_install(fd, FD_REMOTE);	/* held while we live */
			memcpy(r->run, id, sizeof(r->run));
			strcpy(r->lock, lock);
			r->owner = (pid_t)pid;
			return;
		}
		prim_close(fd);
	}
	swap_remote_run_id(r->run);
	r->owner = getpid();
}

/* Field 22 of /proc/PID/stat: the start time, in clock ticks; 0 if gone. */
static unsigned long long proc_start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = prim_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	n = prim_read_all(fd, buf, sizeof(buf) - 1);
	prim_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the name may hold spaces */
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}


/* --- the device --- */

/* Read the password file: the user's, and nobody else's to read. */
static int read_password(const char *file, char *out, size_t len, char *err,
			 size_t errlen)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = prim_open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "password-file %s: %s", file,
			 strerror(-fd));
		return fd;
	}
	if (prim_fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 077)) {
		snprintf(err, errlen, "password-file %s: must be a regular file of yours that nobody else may read or write (chmod 600)",
			 file);
		prim_close(fd);
		return -EPERM;
	}
	n = prim_read_all(fd, out, len - 1);
	prim_close(fd);
	if (n < 0) {
		snprintf(err, errlen, "password-file %s: %s", file,
			 strerror((int)-n));
		return (int)n;
	}
	out[n] = 0;
	out[strcspn(out, "\r\n")] = 0;	/* the first line */
	if (!out[0]) {
		snprintf(err, errlen, "password-file %s is empty", file);
		return -EINVAL;
	}
	return 0;
}

/* The seeds of "HOST:PORT,HOST:PORT..." into cfg (checked by the parser). */
static int seeds_parse(struct redis_store_config *cfg, const char *seeds)
{
	const char *p = seeds;

	cfg->nr_seeds = 0;
	while (*p && cfg->nr_seeds < RS_MAX_SEEDS) {
		size_t len = strcspn(p, ",");

		if (redis_parse_hostport(p, len, cfg->seed[cfg->nr_seeds].host,
					 RS_HOST_MAX,
					 &cfg->seed[cfg->nr_seeds].port))
			return -EINVAL;
		cfg->nr_seeds++;
		p += len + (p[len] == ',');
	}
	return cfg->nr_seeds ? 0 : -EINVAL;
}

static int store_open(const struct swap_remote *r, struct redis_store **out,
		      char *err, size_t errlen)
{
	struct redis_store_config cfg = r->cfg;

	cfg.user = r->user[0] ? r->user : NULL;
	cfg.password = r->password[0] ? r->password : NULL;
	return redis_store_open(&cfg, out, err, errlen);
}

static void record_key(char *key, size_t len, const char *run,
		       const char *inst)
{
	snprintf(key, len, RECORD_PREFIX "%s.%s", run, inst);
}

static int record_write(struct redis_store *rs, const struct swap_remote *r)
{
	char key[KEY_MAX], val[RECORD_LEN + 1], host[64] = "";
	const pid_t owner = r->owner;
	struct redis_op op = { .kind = RS_SET, .key = key, .val = val,
			       .len = RECORD_LEN };
	size_t len;

	gethostname(host, sizeof(host) - 1);
	record_key(key, sizeof(key), r->run, r->inst);
	op.keylen = strlen(key);
	memset(val, ' ', RECORD_LEN);
	len = (size_t)snprintf(val, sizeof(val), "host=%s pid=%d start=%llu uid=%u lock=%s",
			       host, (int)owner, proc_start_time(owner),
			       (unsigned)getuid(), r->lock[0] ? r->lock : "-");
	if (len < RECORD_LEN)
		val[len] = ' ';		/* padded to RECORD_LEN */
	return redis_store_run(rs, &op, 1);
}

int swap_remote_create(struct swap_info *si, const struct swap_spec *sp,
		       char *err, size_t errlen)
{
	struct redis_store *rs = NULL;
	struct swap_remote *r;
	size_t len;
	int ret;

	len = sizeof(*r) + si->nr_slots +
	      (size_t)si->nr_clusters * sizeof(r->cluster_orders[0]);
	r = prim_alloc_shared(len);	/* order[] and cluster_orders[] are
					   the tree's, as the slot map */
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->alloc_len = len;
	r->cluster_orders = (_Atomic uint16_t *)(r + 1);
	r->order = (uint8_t *)(r->cluster_orders + si->nr_clusters);
	memset(r->order, ORDER_NONE, si->nr_slots);
	r->replicas = sp->replicas;
	r->plain = sp->remote_plain;
	memcpy(r->user, sp->user, sizeof(r->user));
	ret = seeds_parse(&r->cfg, sp->seeds);
	if (ret) {
		snprintf(err, errlen, "%s: bad addresses", sp->path);
		goto fail;
	}
	if (sp->password_file[0]) {
		ret = read_password(sp->password_file, r->password,
				    sizeof(r->password), err, errlen);
		if (ret)
			goto fail;
	}
	run_join(r);
	hex_random(r->inst, 8);
	snprintf(r->prefix, sizeof(r->prefix), "us:{%s.%s.%u.", r->run,
		 r->inst, si->type);
	ret = store_open(r, &rs, err, errlen);
	if (!ret)
		ret = redis_store_check_policy(rs, err, errlen);
	if (!ret) {
		ret = record_write(rs, r);
		if (ret)
			snprintf(err, errlen, "cannot write the run's record: %s",
				 strerror(-ret));
	}
	redis_store_close(rs);
	if (ret)
		goto fail;
	si->remote = r;
	return 0;
fail:
	memset(r->password, 0, sizeof(r->password));
	prim_free(r, len);
	return ret;
}

/* Delete keys matching pattern, and the record key, through a new store. */
static int delete_keys(const struct swap_remote *r, const char *pattern,
		       const char *record_pattern, uint64_t *deleted, char *err,
		       size_t errlen)
{
	struct redis_store *rs;
	uint64_t n = 0, m = 0;
	int ret;

	ret = store_open(r, &rs, err, errlen);
	if (ret)
		return ret;
	ret = redis_store_delete_matching(rs, pattern, &n);
	if (!ret)
		ret = redis_store_delete_matching(rs, record_pattern, &m);
	if (ret)
		snprintf(err, errlen, "cannot delete the keys: %s",
			 strerror(-ret));
	redis_store_close(rs);
	if (deleted)
		*deleted = n + m;
	return ret;
}

void swap_remote_destroy(struct swap_info *si)
{
	struct swap_remote *r = si->remote;
	char pattern[KEY_MAX], record[KEY_MAX], err[256];

	if (!r)
		return;
	si->remote = NULL;
	snprintf(pattern, sizeof(pattern), "%s*", r->prefix);
	record_key(record, sizeof(record), r->run, r->inst);
	if (delete_keys(r, pattern, record, NULL, err, sizeof(err)))
		uswap_log("swap device %s: %s (uswap gc removes them)",
			  si->path, err);
	memset(r->password, 0, sizeof(r->password));
	prim_free(r, r->alloc_len);
}

void swap_remote_detach(struct swap_info *si)
{
	/* si and *si->remote are the tree's: nothing is written. */
	if (si->remote)
		prim_free(si->remote, si->remote->alloc_len);
}

/* --- this thread's stores --- */

static struct redis_store *thread_store(struct swap_info *si)
{
	const struct swap_remote *r = si->remote;
	const pid_t me = getpid();
	char err[256];

	if (tls.pid != me) {
		/* A fork child: what it inherited is its parent's. */
		memset(&tls, 0, sizeof(tls));
		tls.pid = me;
	}
	if (!tls.op) {
		tls.op = slab_alloc(CHUNK * sizeof(*tls.op), 0);
		tls.key = slab_alloc(CHUNK * sizeof(*tls.key), 0);
		if (!tls.op || !tls.key) {
			slab_free(tls.op);
			slab_free(tls.key);
			tls.op = NULL;
			tls.key = NULL;
			return NULL;
		}
	}
	if (tls.of[si->type] != r) {
		redis_store_close(tls.rs[si->type]);
		tls.rs[si->type] = NULL;
		tls.of[si->type] = NULL;
		if (store_open(r, &tls.rs[si->type], err, sizeof(err))) {
			if (swap_log_first(si, SWAP_LOGGED_READ))
				uswap_log("swap device %s: %s", si->path, err);
			return NULL;
		}
		tls.of[si->type] = r;
	}
	return tls.rs[si->type];
}

/* --- page I/O --- */

static size_t key_of(const struct swap_remote *r, char *key, uint32_t slot,
		     unsigned order)
{
	return (size_t)snprintf(key, KEY_MAX, "%s%u}:%u.%u", r->prefix,
				slot / SWAP_CLUSTER_SLOTS,
				slot % SWAP_CLUSTER_SLOTS, order);
}

/*
 * A round of operations being gathered for one store: run when full and
 * at the end.  Each operation knows its request (req), so that a failure
 * fails the request.
 */
struct round {
	struct redis_store *rs;
	struct swap_info *si;
	struct swap_io_req *req[CHUNK];
	unsigned n;
};

static void round_run(struct round *rd)
{
	unsigned k;

	if (!rd->n)
		return;
	redis_store_run(rd->rs, tls.op, rd->n);
	for (k = 0; k < rd->n; k++)
		if (tls.op[k].result && !rd->req[k]->result)
			rd->req[k]->result = tls.op[k].result;
	rd->n = 0;
}

static struct redis_op *round_add(struct round *rd, struct swap_io_req *req,
				  uint32_t slot, unsigned order)
{
	struct redis_op *op;

	if (rd->n == CHUNK)
		round_run(rd);
	op = &tls.op[rd->n];
	memset(op, 0, sizeof(*op));
	op->key = tls.key[rd->n];
	op->keylen = key_of(rd->si->remote, tls.key[rd->n], slot, order);
	rd->req[rd->n++] = req;
	return op;
}

/* The largest aligned run of slots from s, at most n slots long. */
static unsigned order_at(uint32_t s, uint32_t n)
{
	unsigned k = 0;

	while (k < ORDER_MAX && !(s & (1u << k)) && (2u << k) <= n)
		k++;
	return k;
}

/* Queue the writes of one request: values never across iov elements. */
static void write_req(struct round *rd, struct swap_io_req *req)
{
	uint32_t slot = req->offset;
	int i;

	for (i = 0; i < req->iovcnt; i++) {
		const char *p = req->iov[i].iov_base;
		uint32_t left = (uint32_t)(req->iov[i].iov_len >> SWAP_SLOT_SHIFT);

		while (left) {
			const unsigned k = order_at(slot, left);
			struct redis_op *op = round_add(rd, req, slot, k);

			op->kind = RS_SET;
			op->val = p;
			op->len = (size_t)SWAP_SLOT_SIZE << k;
			p += op->len;
			slot += 1u << k;
			left -= 1u << k;
		}
	}
}

/* Queue the reads of one request: from each value, the part it holds. */
static void read_req(struct round *rd, struct swap_io_req *req)
{
	const struct swap_remote *r = rd->si->remote;
	uint32_t slot = req->offset;
	int i;

	for (i = 0; i < req->iovcnt; i++) {
		char *p = req->iov[i].iov_base;
		uint32_t left = (uint32_t)(req->iov[i].iov_len >> SWAP_SLOT_SHIFT);

		while (left) {
			const unsigned k = r->order[slot];
			uint32_t start, take;
			struct redis_op *op;

			if (k > ORDER_MAX) {
				req->result = -EIO;	/* never written */
				return;
			}
			start = slot & ~((1u << k) - 1);
			take = MIN(start + (1u << k) - slot, left);
			op = round_add(rd, req, start, k);
			op->buf = p;
			op->len = (size_t)take << SWAP_SLOT_SHIFT;
			if (take == 1u << k) {
				op->kind = RS_GET;
			} else {
				op->kind = RS_GETRANGE;
				op->off = (size_t)(slot - start) << SWAP_SLOT_SHIFT;
			}
			p += op->len;
			slot += take;
			left -= take;
		}
	}
}

/* Whole slots in every element, inside the device. */
static bool req_ok(const struct swap_io_req *req)
{
	size_t sum = 0;
	int i;

	if (req->iovcnt < 0 || (req->iovcnt && !req->iov))
		return false;
	for (i = 0; i < req->iovcnt; i++) {
		if (req->iov[i].iov_len & (SWAP_SLOT_SIZE - 1))
			return false;
		sum += req->iov[i].iov_len;
	}
	return sum == req->len && req->offset <= req->si->nr_slots &&
	       (req->len >> SWAP_SLOT_SHIFT) <= req->si->nr_slots - req->offset;
}

/* A write succeeded: each slot is now read from its new value. */
static void write_done(struct swap_info *si, const struct swap_io_req *req)
{
	struct swap_remote *r = si->remote;
	uint32_t slot = req->offset;
	int i;

	for (i = 0; i < req->iovcnt; i++) {
		uint32_t left = (uint32_t)(req->iov[i].iov_len >> SWAP_SLOT_SHIFT);

		while (left) {
			const unsigned k = order_at(slot, left);

			memset(r->order + slot, (int)k, 1u << k);
			atomic_fetch_or_explicit(&r->cluster_orders[slot / SWAP_CLUSTER_SLOTS],
						 (uint16_t)(1u << k),
						 memory_order_relaxed);
			slot += 1u << k;
			left -= 1u << k;
		}
	}
}

bool swap_remote_any(const struct swap_io_req *reqs, unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (reqs[k].si && reqs[k].si->remote)
			return true;
	return false;
}

/* Run the requests of reqs to device si (all of them to one store). */
static void run_device(struct swap_io *io, struct swap_info *si,
		       struct swap_io_req *reqs, unsigned n, bool write)
{
	struct round rd = { .si = si };
	unsigned k;

	rd.rs = thread_store(si);
	for (k = 0; k < n; k++) {
		struct swap_io_req *req = &reqs[k];

		if (req->si != si)
			continue;
		req->result = 0;
		if (!req_ok(req)) {
			req->result = -EINVAL;
			continue;
		}
		if (!rd.rs) {
			req->result = -EIO;
			continue;
		}
		if (write)
			write_req(&rd, req);
		else
			read_req(&rd, req);
	}
	round_run(&rd);
	if (write && rd.rs && si->remote->replicas) {
		bool wrote = false;

		for (k = 0; k < n; k++)
			wrote |= reqs[k].si == si && !reqs[k].result;
		if (wrote && redis_store_wait(rd.rs, si->remote->replicas,
					      1000) < 0) {
			if (!atomic_exchange(&si->remote->logged_io, true))
				uswap_log("swap device %s: fewer than %u replicas confirmed a write; its folios stay in memory",
					  si->path, si->remote->replicas);
			for (k = 0; k < n; k++)
				if (reqs[k].si == si && !reqs[k].result)
					reqs[k].result = -EIO;
		}
	}
	if (write)
		for (k = 0; k < n; k++)
			if (reqs[k].si == si && !reqs[k].result)
				write_done(si, &reqs[k]);
}

void swap_remote_run(struct swap_io *io, struct swap_io_req *reqs,
		     unsigned n, bool write)
{
	bool done[SWAP_MAX_TYPES] = { false };
	unsigned k;

	for (k = 0; k < n; k++) {
		struct swap_info *si = reqs[k].si;

		if (!si || !si->remote || done[si->type])
			continue;
		done[si->type] = true;
		run_device(io, si, reqs, n, write);
	}
}

/* --- a full cluster --- */

void swap_remote_full(struct swap_info *si)
{
	if (si->remote)
		atomic_store(&si->remote->full_since_us, MAX(prim_now_us(), 1));
}

bool swap_remote_may_have_room(struct swap_info *si)
{
	uint64_t since = si->remote ? atomic_load(&si->remote->full_since_us) : 0;

	if (!since)
		return true;
	if (prim_now_us() - since < SWAP_REMOTE_FULL_MS * 1000ull)
		return false;
	atomic_store(&si->remote->full_since_us, 0);
	return true;
}

/* --- discard --- */

int swap_remote_punch(struct swap_info *si, uint32_t cluster)
{
	struct swap_remote *r = si->remote;
	uint16_t orders = atomic_exchange(&r->cluster_orders[cluster], 0);
	struct round rd = { .si = si };
	struct swap_io_req dummy = { .si = si };
	unsigned k;
	uint32_t b;

	if (!orders)
		return 0;
	rd.rs = thread_store(si);
	if (!rd.rs) {
		atomic_fetch_or(&r->cluster_orders[cluster], orders);
		return -EIO;
	}
	for (k = 0; k <= ORDER_MAX; k++) {
		if (!(orders & (1u << k)))
			continue;
		for (b = 0; b < SWAP_CLUSTER_SLOTS; b += 1u << k) {
			struct redis_op *op = round_add(&rd, &dummy,
				cluster * SWAP_CLUSTER_SLOTS + b, k);

			op->kind = RS_DEL;
		}
	}
	round_run(&rd);
	if (dummy.result)
		atomic_fetch_or(&r->cluster_orders[cluster], orders);
	else
		atomic_store(&r->full_since_us, 0);	/* memory came back */
	return dummy.result;
}

/* --- uswap run and uswap gc --- */

/* A temporary device state for sp, without slots: its store's settings. */
static int remote_of_spec(const struct swap_spec *sp, struct swap_remote *r,
			  char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->user, sp->user, sizeof(r->user));
	if (seeds_parse(&r->cfg, sp->seeds)) {
		snprintf(err, errlen, "%s: bad addresses", sp->path);
		return -EINVAL;
	}
	if (sp->password_file[0])
		return read_password(sp->password_file, r->password,
				     sizeof(r->password), err, errlen);
	return 0;
}

int swap_remote_delete_run(const struct swap_spec *sp, const char *run_id,
			   uint64_t *deleted, char *err, size_t errlen)
{
	char pattern[KEY_MAX], record[KEY_MAX];
	struct swap_remote *r = slab_alloc(sizeof(*r), 0);
	int ret;

	if (!r)
		return -ENOMEM;
	ret = remote_of_spec(sp, r, err, errlen);
	if (!ret) {
		snprintf(pattern, sizeof(pattern), "us:{%s.*", run_id);
		snprintf(record, sizeof(record), RECORD_PREFIX "%s.*", run_id);
		ret = delete_keys(r, pattern, record, deleted, err, errlen);
	}
	memset(r->password, 0, sizeof(r->password));
	slab_free(r);
	return ret;
}

/* Does the record's owner still run here?  false: its keys may go. */
static bool record_alive(const char *val, const char *host)
{
	char h[64], lock[SWAP_PATH_MAX];
	int pid = 0;
	unsigned long long start = 0;

	if (sscanf(val, "host=%63s pid=%d start=%llu uid=%*u lock=%255s", h,
		   &pid, &start, lock) != 4)
		return true;		/* not ours to judge */
	if (strcmp(h, host))
		return true;		/* another machine's */
	if (pid > 0 && start != 0 && proc_start_time(pid) == start)
		return true;		/* its owner runs */
	/* A process of the run may outlive its owner: it holds the lock. */
	return strcmp(lock, "-") != 0 && !swap_remote_run_over(lock);
}

/*
 * The records uswap gc found: one "us:run:RUN.INST" key per run (every
 * runtime of a run leaves one, all with the run's owner and lock).
 */
struct gc_found {
	unsigned nr;
	char key[GC_MAX][KEY_MAX];
};

static void gc_collect(void *arg, const char *key, size_t len)
{
	const size_t pre = strlen(RECORD_PREFIX);
	struct gc_found *f = arg;
	unsigned k;

	if (f->nr == GC_MAX || len != pre + SWAP_REMOTE_RUN_LEN + 9)
		return;
	for (k = 0; k < f->nr; k++)
		if (!memcmp(f->key[k] + pre, key + pre, SWAP_REMOTE_RUN_LEN))
			return;		/* this run's, or SCAN gave it twice */
	memcpy(f->key[f->nr], key, len);
	f->key[f->nr++][len] = 0;
}

int swap_remote_gc(const struct swap_spec *sp, unsigned *runs,
		   uint64_t *deleted, char *err, size_t errlen)
{
	struct swap_remote *r = slab_alloc(sizeof(*r), 0);
	struct gc_found *f = slab_alloc(sizeof(*f), 0);
	char host[64] = "", val[RECORD_LEN + 1];
	struct redis_store *rs = NULL;
	unsigned k;
	int ret = -ENOMEM;

	*runs = 0;
	*deleted = 0;
	err[0] = 0;
	if (!r || !f)
		goto out;
	gethostname(host, sizeof(host) - 1);
	ret = remote_of_spec(sp, r, err, errlen);
	if (!ret)
		ret = store_open(r, &rs, err, errlen);
	if (!ret)
		ret = redis_store_scan(rs, RECORD_PREFIX "*", gc_collect, f);
	for (k = 0; !ret && k < f->nr; k++) {
		struct redis_op op = { .kind = RS_GET, .key = f->key[k],
				       .keylen = strlen(f->key[k]), .buf = val,
				       .len = RECORD_LEN };
		char run[SWAP_REMOTE_RUN_LEN + 1];
		uint64_t n = 0;

		if (redis_store_run(rs, &op, 1))
			continue;	/* gone meanwhile, or not a record */
		val[RECORD_LEN] = 0;
		if (record_alive(val, host))
			continue;
		memcpy(run, f->key[k] + strlen(RECORD_PREFIX), SWAP_REMOTE_RUN_LEN);
		run[SWAP_REMOTE_RUN_LEN] = 0;
		ret = swap_remote_delete_run(sp, run, &n, err, errlen);
		*deleted += n;
		*runs += !ret;
	}
	if (ret && !err[0])
		snprintf(err, errlen, "cannot read the runs' records: %s",
			 strerror(-ret));
out:
	redis_store_close(rs);
	if (r)
		memset(r->password, 0, sizeof(r->password));
	slab_free(r);
	slab_free(f);
	return ret;
}

/* The public form of uswap gc (uswap.h). */
EXPORT int uswap_remote_gc(const char *spec, unsigned *runs, uint64_t *keys,
			   char *err, size_t errlen)
{
	struct swap_spec sp;
	int ret;

	*runs = 0;
	*keys = 0;
	ret = swap_spec_parse(spec, &sp, err, errlen);
	if (ret)
		return ret;
	if (!sp.remote) {
		snprintf(err, errlen, "%s is not a remote device (expected redis://HOST:PORT[,...])",
			 spec);
		return -EINVAL;
	}
	ret = swap_remote_gc(&sp, runs, keys, err, errlen);
	return ret == -EINVAL ? -EIO : ret;	/* -EINVAL: the spec only */
}
