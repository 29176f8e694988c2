/* SPDX-License-Identifier: MIT */
/*
 * redis_store.h - a client of a Redis Cluster (or of one plain server) for
 * the remote swap tier (docs/far-memory.md): batches of SET, GET and DEL,
 * pipelined to each node, following the cluster's slot map and its
 * MOVED and ASK redirections, and WAIT for replicas.
 *
 * One struct redis_store per thread: it holds a connection to each node
 * it has talked to and its own copy of the slot map.  Nothing here is
 * shared between threads, and nothing is called on a program's fault
 * without the caller choosing to.
 */
#ifndef USWAP_REDIS_STORE_H
#define USWAP_REDIS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_CLUSTER_SLOTS	16384u	/* the cluster's hash slots */
#define RS_MAX_SEEDS		16u
#define RS_MAX_NODES		64u	/* nodes one store talks to */
#define RS_HOST_MAX		64u	/* a host name or address, with its NUL */

struct redis_store_config {
	struct {
		char host[RS_HOST_MAX];
		int port;
	} seed[RS_MAX_SEEDS];
	unsigned nr_seeds;
	const char *user;		/* ACL user, or NULL ("default") */
	const char *password;		/* or NULL: no AUTH */
	unsigned timeout_ms;		/* connect and each reply; 0: 2000 */
	/*
	 * How long a batch keeps trying through redirections, a cluster
	 * that is down or failing over, and lost connections, before its
	 * operations fail with -EIO; 0: 10000 ms.
	 */
	unsigned retry_ms;
};

enum redis_op_kind { RS_SET, RS_GET, RS_GETRANGE, RS_DEL };

/*
 * One operation of a batch.  SET stores len bytes from val under key; GET
 * reads the value of key into buf, which must be exactly len bytes long;
 * GETRANGE reads len bytes of it from byte off on; DEL removes key (a key
 * that is not there is no error).  result: 0, or -ENOENT (GET, GETRANGE:
 * no such key, or nothing there), -EMSGSIZE (GET: a value of another
 * length; GETRANGE: shorter than off + len),
 * -ENOSPC (SET: the node is out of memory, its maxmemory reached),
 * -EACCES (refused: authentication or ACL), -EIO (anything else, or
 * retried until retry_ms).
 */
struct redis_op {
	enum redis_op_kind kind;
	const char *key;
	size_t keylen;
	const void *val;		/* SET */
	void *buf;			/* GET, GETRANGE */
	size_t len;			/* SET, GET, GETRANGE */
	size_t off;			/* GETRANGE */
	int result;
	/* internal */
	uint16_t node;			/* where it goes */
	uint16_t sent_to;		/* where it went this round */
	bool ask;			/* send ASKING first (an ASK redirection) */
	bool inflight;			/* sent, its reply not read yet */
	bool done;
};

struct redis_store;

/*
 * Connect to the first seed that answers, read the cluster's slot map
 * (CLUSTER SLOTS; a server without cluster support owns every slot).  0
 * and *out, or -errno with a line in err: -ECONNREFUSED (no seed
 * answered), -EACCES (authentication refused), -EPROTO (a reply that
 * makes no sense).
 */
int redis_store_open(const struct redis_store_config *cfg,
		     struct redis_store **out, char *err, size_t errlen);
void redis_store_close(struct redis_store *rs);

/* Is it a cluster (false: one plain server)?  How many masters it has. */
bool redis_store_is_cluster(const struct redis_store *rs);
unsigned redis_store_masters(const struct redis_store *rs);

/*
 * Run n operations: each node's are pipelined (sent together, then their
 * replies read); a MOVED reply updates the slot map and the operation goes
 * again to its new node, an ASK reply sends it to the node named, once; a
 * lost connection, CLUSTERDOWN or TRYAGAIN makes the store reconnect,
 * read the slot map again and retry with back-off, up to retry_ms.
 * Operations on different keys may complete in any order; two on one key
 * in one batch are not allowed.  Returns the first operation's error in
 * array order, or 0; every op's result is set.
 */
int redis_store_run(struct redis_store *rs, struct redis_op *ops, unsigned n);

/*
 * WAIT replicas timeout_ms on every master written to since the last
 * call: 0 when each confirms at least `replicas` copies, -EIO when one
 * does not (or cannot be asked).  replicas 0: returns 0 at once.
 */
int redis_store_wait(struct redis_store *rs, unsigned replicas,
		     unsigned timeout_ms);

/*
 * Delete every key that matches a SCAN pattern (a tree's prefix and '*'),
 * on every master: SCAN ... MATCH, then UNLINK of what it finds, until
 * each master's cursor comes back to 0.  *deleted (may be NULL) gets how
 * many were.  0, or -EIO when a master could not be asked.
 */
int redis_store_delete_matching(struct redis_store *rs, const char *pattern,
				uint64_t *deleted);

/*
 * Call fn(arg, key, len) for every key that matches a SCAN pattern, on
 * every master (a key may come more than once).  0 or -EIO.
 */
int redis_store_scan(struct redis_store *rs, const char *pattern,
		     void (*fn)(void *arg, const char *key, size_t len),
		     void *arg);

/*
 * Every master keeps what it is given: its maxmemory-policy is
 * noeviction (INFO memory).  0, -EPERM with a line in err naming a master
 * that may evict keys (swapped pages would vanish), or -EIO.
 */
int redis_store_check_policy(struct redis_store *rs, char *err,
			     size_t errlen);

/* The hash slot of a key, as the cluster computes it (hash tags too). */
unsigned redis_key_slot(const char *key, size_t len);

/*
 * Parse "HOST:PORT" (an IPv6 address in brackets) into host and *port:
 * 0 or -EINVAL.
 */
int redis_parse_hostport(const char *s, size_t len, char *host,
			 size_t hostlen, int *port);

#endif /* USWAP_REDIS_STORE_H */
