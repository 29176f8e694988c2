// SPDX-License-Identifier: MIT
/*
 * redis_store.c - a Redis Cluster client for the remote swap tier
 * (redis_store.h, docs/far-memory.md), on hiredis's synchronous API.
 *
 * The slot map.  A cluster splits its keys into 16384 hash slots (the
 * CRC16 of the key, or of its hash tag: the part between the first '{'
 * and the next '}', when not empty) and each master serves some of them.
 * The store reads which with CLUSTER SLOTS when it opens, and again when
 * a node cannot be reached or says the cluster is down; between readings
 * a MOVED reply (the slot now lives elsewhere, for good) updates the map
 * one slot at a time, and an ASK reply (the slot is moving, this key is
 * already on the other side) sends that one operation to the node named,
 * preceded by ASKING, without touching the map.  A server without
 * cluster support is a map with every slot on it.
 *
 * A batch.  The operations are grouped by node; each node's are written
 * to its connection together (writev of the requests, the values from the
 * caller's buffers: hiredis would copy each twice, and a batch of evicted
 * folios is megabytes), and then the replies are read with hiredis,
 * node after node, in the order sent: one round trip
 * per node per batch, and the nodes work in parallel.  Operations sent
 * elsewhere by a redirection go again in the next round, at once; those
 * that met a lost connection, CLUSTERDOWN or TRYAGAIN go again after the
 * map is read anew and a pause that doubles each time (10 ms to 500 ms),
 * until the batch has tried for retry_ms.
 *
 * Nothing here is shared: each thread that does remote I/O has its own
 * store, connections and map.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#include "base.h"
#include "fdtable.h"
#include "prim.h"
#include "redis_store.h"
#include "slab.h"

#define RS_NO_NODE		0xffffu
#define RS_TIMEOUT_MS		2000u
#define RS_RETRY_MS		10000u
#define RS_BACKOFF_MIN_MS	10u
#define RS_BACKOFF_MAX_MS	500u
#define RS_USER_MAX		128u
#define RS_PASSWORD_MAX		512u
#define RS_HDR_MAX		96u	/* a request's head or tail (op_header) */

struct rs_node {
	char host[RS_HOST_MAX];
	int port;
	redisContext *c;		/* NULL: not connected */
	bool master;			/* named a slot's master by the map */
	bool written;			/* SET or DEL since the last WAIT */
};

struct redis_store {
	struct redis_store_config cfg;
	char user[RS_USER_MAX];
	char password[RS_PASSWORD_MAX];
	bool cluster;
	unsigned nr_nodes;
	struct rs_node node[RS_MAX_NODES];
	uint16_t slot_node[RS_CLUSTER_SLOTS];
};

/* CRC16-CCITT (XMODEM: polynomial 0x1021, from 0), the cluster's hash. */
static uint16_t crc16(const char *p, size_t n)
{
	uint16_t crc = 0;
	int k;

	while (n--) {
		crc ^= (uint16_t)((uint8_t)*p++ << 8);
		for (k = 0; k < 8; k++)
			crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021)
					     : (uint16_t)(crc << 1);
	}
	return crc;
}

unsigned redis_key_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len);

	if (open) {
		size_t from = (size_t)(open - key) + 1;
		const char *close = memchr(key + from, '}', len - from);

		if (close && close > key + from)
			return crc16(key + from, (size_t)(close - key) - from) &
			       (RS_CLUSTER_SLOTS - 1);
	}
	return crc16(key, len) & (RS_CLUSTER_SLOTS - 1);
}

int redis_parse_hostport(const char *s, size_t len, char *host,
			 size_t hostlen, int *port)
{
	const char *colon, *h = s;
	size_t hl;
	long p = 0;
	size_t i;

	if (len && s[0] == '[') {	/* [v6 address]:port */
		const char *close = memchr(s, ']', len);

		if (!close || (size_t)(close - s) + 1 >= len || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = NULL;
		for (i = len; i-- > 0;)
			if (s[i] == ':') {
				colon = s + i;
				break;
			}
		if (!colon || memchr(s, ':', (size_t)(colon - s)))
			return -EINVAL;		/* none, or a bare v6 */
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= hostlen)
		return -EINVAL;
	for (i = (size_t)(colon - s) + 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || p > 65535)
			return -EINVAL;
		p = p * 10 + (s[i] - '0');
	}
	if ((size_t)(colon - s) + 1 == len || p < 1 || p > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (int)p;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000u, (long)(ms % 1000u) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct timeval tv_of(unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000u),
			      (suseconds_t)(ms % 1000u) * 1000 };

	return tv;
}

static bool reply_is(const redisReply *r, const char *prefix)
{
	size_t n = strlen(prefix);

	return r->type == REDIS_REPLY_ERROR && r->len >= n &&
	       memcmp(r->str, prefix, n) == 0;
}

/*
 * The connection's socket is uswap's (fdtable.c): out of the program's
 * reach, closed here, never by hiredis (its close() would be the one the
 * preload library gives the program).
 */
static void node_drop(struct rs_node *nd)
{
	if (!nd->c)
		return;
	if (nd->c->fd >= 0) {
		int fd = fd_release_tagged(nd->c->fd, nd);

		if (fd >= 0)
			prim_close(fd);
	}
	nd->c->fd = -1;
	redisFree(nd->c);
	nd->c = NULL;
}

/* Connect node i (and authenticate) unless connected: 0 or -errno. */
static int node_connect(struct redis_store *rs, unsigned i, char *err,
			size_t errlen)
{
	struct rs_node *nd = &rs->node[i];
	struct timeval tv = tv_of(rs->cfg.timeout_ms);
	redisReply *r;

	if (nd->c)
		return 0;
	nd->c = redisConnectWithTimeout(nd->host, nd->port, tv);
	if (!nd->c || nd->c->err) {
		if (err)
			snprintf(err, errlen, "%s:%d: %s", nd->host, nd->port,
				 nd->c ? nd->c->errstr : "out of memory");
		node_drop(nd);
		return -ECONNREFUSED;
	}
	nd->c->fd = fd_install_tagged(nd->c->fd, FD_REMOTE, nd);
	redisSetTimeout(nd->c, tv);
	redisEnableKeepAlive(nd->c);
	if (!rs->password[0])
		return 0;
	if (rs->user[0])
		r = redisCommand(nd->c, "AUTH %s %s", rs->user, rs->password);
	else
		r = redisCommand(nd->c, "AUTH %s", rs->password);
	if (!r || r->type == REDIS_REPLY_ERROR) {
		int ret = r ? -EACCES : -ECONNREFUSED;

		if (err)
			snprintf(err, errlen, "%s:%d: authentication refused%s%s",
				 nd->host, nd->port, r ? ": " : "",
				 r ? r->str : "");
		if (r)
			freeReplyObject(r);
		node_drop(nd);
		return ret;
	}
	freeReplyObject(r);
	return 0;
}

/* The index of node host:port, added when new: index or -ENOSPC. */
static int node_index(struct redis_store *rs, const char *host, size_t hl,
		      int port)
{
	unsigned i;

	if (hl == 0 || hl >= RS_HOST_MAX)
		return -EINVAL;
	for (i = 0; i < rs->nr_nodes; i++)
		if (rs->node[i].port == port &&
		    strlen(rs->node[i].host) == hl &&
		    memcmp(rs->node[i].host, host, hl) == 0)
			return (int)i;
	if (rs->nr_nodes == RS_MAX_NODES)
		return -ENOSPC;
	i = rs->nr_nodes++;
	memset(&rs->node[i], 0, sizeof(rs->node[i]));
	memcpy(rs->node[i].host, host, hl);
	rs->node[i].port = port;
	return (int)i;
}

/*
 * Read the slot map from node i (connected): 0, or -EPROTO for a reply
 * that is not a map, -EACCES when the node wants credentials (or more
 * rights), -EIO for a lost connection.
 */
static int slots_from(struct redis_store *rs, unsigned i)
{
	redisReply *r = redisCommand(rs->node[i].c, "CLUSTER SLOTS");
	unsigned s, e, k;
	int ret = 0;

	if (!r) {
		node_drop(&rs->node[i]);
		return -EIO;
	}
	if (r->type == REDIS_REPLY_ERROR &&
	    strstr(r->str, "cluster support disabled")) {
		rs->cluster = false;
		for (s = 0; s < RS_CLUSTER_SLOTS; s++)
			rs->slot_node[s] = (uint16_t)i;
		rs->node[i].master = true;
		freeReplyObject(r);
		return 0;
	}
	if (reply_is(r, "NOAUTH") || reply_is(r, "NOPERM")) {
		freeReplyObject(r);	/* no credentials, or too few rights */
		return -EACCES;
	}
	if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EPROTO;
	}
	rs->cluster = true;
	for (s = 0; s < RS_CLUSTER_SLOTS; s++)
		rs->slot_node[s] = RS_NO_NODE;
	for (k = 0; k < rs->nr_nodes; k++)
		rs->node[k].master = false;
	for (k = 0; k < r->elements; k++) {
		const redisReply *en = r->element[k], *m;
		const char *host;
		size_t hl;
		int n;

		if (en->type != REDIS_REPLY_ARRAY || en->elements < 3 ||
		    en->element[0]->type != REDIS_REPLY_INTEGER ||
		    en->element[1]->type != REDIS_REPLY_INTEGER ||
		    en->element[2]->type != REDIS_REPLY_ARRAY ||
		    en->element[2]->elements < 2) {
			ret = -EPROTO;
			break;
		}
		m = en->element[2];
		if (m->element[0]->type != REDIS_REPLY_STRING ||
		    m->element[1]->type != REDIS_REPLY_INTEGER) {
			ret = -EPROTO;
			break;
		}
		/* An empty or unknown endpoint: the node that answered. */
		host = m->element[0]->str;
		hl = m->element[0]->len;
		if (hl == 0 || (hl == 1 && host[0] == '?')) {
			host = rs->node[i].host;
			hl = strlen(host);
		}
		n = node_index(rs, host, hl, (int)m->element[1]->integer);
		s = (unsigned)en->element[0]->integer;
		e = (unsigned)en->element[1]->integer;
		if (n < 0 || s > e || e >= RS_CLUSTER_SLOTS) {
			ret = n < 0 ? n : -EPROTO;
			break;
		}
		rs->node[n].master = true;
		for (; s <= e; s++)
			rs->slot_node[s] = (uint16_t)n;
	}
	freeReplyObject(r);
	return ret;
}

/*
 * Read the slot map again from any node that answers, the ones it knows
 * first, then the seeds.  0 or the last error.
 */
static int slots_refresh(struct redis_store *rs, char *err, size_t errlen)
{
	unsigned k, nr = rs->nr_nodes;
	int ret = -ECONNREFUSED, i;

	for (k = 0; k < nr + rs->cfg.nr_seeds; k++) {
		if (k < nr) {
			i = (int)k;
		} else {
			const char *h = rs->cfg.seed[k - nr].host;

			i = node_index(rs, h, strlen(h), rs->cfg.seed[k - nr].port);
			if (i < 0)
				continue;
		}
		ret = node_connect(rs, (unsigned)i, err, errlen);
		if (ret == 0)
			ret = slots_from(rs, (unsigned)i);
		if (ret == -EACCES && err)
			snprintf(err, errlen, "%s:%d: %s", rs->node[i].host,
				 rs->node[i].port, rs->password[0] ?
				 "authentication refused" :
				 "authentication required (no password given)");
		if (ret == 0 || ret == -EACCES)
			return ret;
	}
	return ret;
}

int redis_store_open(const struct redis_store_config *cfg,
		     struct redis_store **out, char *err, size_t errlen)
{
	struct redis_store *rs;
	int ret;

	if (cfg->nr_seeds == 0 || cfg->nr_seeds > RS_MAX_SEEDS ||
	    (cfg->user && strlen(cfg->user) >= RS_USER_MAX) ||
	    (cfg->password && strlen(cfg->password) >= RS_PASSWORD_MAX)) {
		snprintf(err, errlen, "bad configuration");
		return -EINVAL;
	}
	rs = slab_alloc(sizeof(*rs), 0);	/* uswap's memory (redis_alloc.c) */
	if (!rs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rs->cfg = *cfg;
	rs->cfg.user = rs->cfg.password = NULL;
	if (!rs->cfg.timeout_ms)
		rs->cfg.timeout_ms = RS_TIMEOUT_MS;
	if (!rs->cfg.retry_ms)
		rs->cfg.retry_ms = RS_RETRY_MS;
	if (cfg->user)
		strcpy(rs->user, cfg->user);
	if (cfg->password)
		strcpy(rs->password, cfg->password);
	ret = slots_refresh(rs, err, errlen);
	if (ret == -EPROTO)
		snprintf(err, errlen, "CLUSTER SLOTS: a reply that is not a slot map");
	if (ret) {
		redis_store_close(rs);
		return ret;
	}
	*out = rs;
	return 0;
}

void redis_store_close(struct redis_store *rs)
{
	unsigned i;

	if (!rs)
		return;
	for (i = 0; i < rs->nr_nodes; i++)
		node_drop(&rs->node[i]);
	memset(rs->password, 0, sizeof(rs->password));
	slab_free(rs);
}

bool redis_store_is_cluster(const struct redis_store *rs)
{
	return rs->cluster;
}

unsigned redis_store_masters(const struct redis_store *rs)
{
	unsigned i, n = 0;

	for (i = 0; i < rs->nr_nodes; i++)
		n += rs->node[i].master;
	return n;
}

/*
 * The request of op in the protocol (RESP), around its key and a SET's
 * value, which go from the caller's buffers in the iovec node_write()
 * sends, never copied (hiredis would copy each value twice): head is
 * ASKING when asked, the command and the key's length; tail what follows
 * the key up to a SET's value.  Returns the tail's length; *headlen gets
 * the head's.
 */
static size_t op_header(const struct redis_op *op, char *head, size_t *headlen,
			char *tail, size_t len)
{
	static const char *const cmd[] = {
		[RS_SET] = "*3\r\n$3\r\nSET", [RS_GET] = "*2\r\n$3\r\nGET",
		[RS_GETRANGE] = "*4\r\n$8\r\nGETRANGE",
		/* DEL: UNLINK, its memory freed off the node's main thread */
		[RS_DEL] = "*2\r\n$6\r\nUNLINK",
	};

	*headlen = (size_t)snprintf(head, len, "%s%s\r\n$%zu\r\n",
				    op->ask ? "*1\r\n$6\r\nASKING\r\n" : "",
				    cmd[op->kind], op->keylen);
	switch (op->kind) {
	case RS_SET:
		return (size_t)snprintf(tail, len, "\r\n$%zu\r\n", op->len);
	case RS_GETRANGE: {
		char from[24], to[24];
		const int fl = snprintf(from, sizeof(from), "%zu", op->off);
		const int tl = snprintf(to, sizeof(to), "%zu", op->off + op->len - 1);

		return (size_t)snprintf(tail, len, "\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n",
					fl, from, tl, to);
	}
	default:
		return (size_t)snprintf(tail, len, "\r\n");
	}
}

/* writev all of v[0..cnt) to fd, through short writes.  0 or -1. */
static int write_all(int fd, struct iovec *v, int cnt)
{
	while (cnt > 0) {
		ssize_t w = writev(fd, v, MIN(cnt, IOV_MAX));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		while (cnt > 0 && (size_t)w >= v->iov_len) {
			w -= (ssize_t)v->iov_len;
			v++;
			cnt--;
		}
		if (cnt > 0) {
			v->iov_base = (char *)v->iov_base + w;
			v->iov_len -= (size_t)w;
		}
	}
	return 0;
}

#define SEND_OPS	64u	/* operations per writev */

/*
 * Send the operations of ops that go to node i this round (inflight,
 * sent_to i), in order, SEND_OPS at a time, each one writev.  0, or -1
 * when the connection failed (the caller drops it).
 */
static int node_write(struct rs_node *nd, unsigned i, struct redis_op *ops,
		      unsigned n)
{
	static const char crlf[] = "\r\n";
	char head[SEND_OPS][RS_HDR_MAX], tail[SEND_OPS][RS_HDR_MAX];
	struct iovec v[5 * SEND_OPS];
	unsigned k, m = 0;
	int cnt = 0;

	for (k = 0; k < n; k++) {
		struct redis_op *op = &ops[k];
		size_t hl, tl;

		if (!op->inflight || op->sent_to != i)
			continue;
		tl = op_header(op, head[m], &hl, tail[m], RS_HDR_MAX);
		v[cnt].iov_base = head[m];
		v[cnt++].iov_len = hl;
		v[cnt].iov_base = (void *)op->key;
		v[cnt++].iov_len = op->keylen;
		v[cnt].iov_base = tail[m];
		v[cnt++].iov_len = tl;
		if (op->kind == RS_SET) {
			v[cnt].iov_base = (void *)op->val;
			v[cnt++].iov_len = op->len;
			v[cnt].iov_base = (void *)crlf;
			v[cnt++].iov_len = 2;
		}
		if (++m == SEND_OPS) {
			if (write_all(nd->c->fd, v, cnt))
				return -1;
			m = 0;
			cnt = 0;
		}
	}
	return cnt ? write_all(nd->c->fd, v, cnt) : 0;
}

enum verdict { V_DONE, V_AGAIN, V_RETRY };	/* again: at once; retry: later */

/* What a reply (not NULL) means for op. */
static enum verdict op_reply(struct redis_store *rs, struct redis_op *op,
			     const redisReply *r)
{
	if (reply_is(r, "MOVED ") || reply_is(r, "ASK ")) {
		bool ask = r->str[1] == 'S';
		const char *sp = strchr(r->str + (ask ? 4 : 6), ' ');
		char host[RS_HOST_MAX];
		int port, n;
		long slot = strtol(r->str + (ask ? 4 : 6), NULL, 10);

		if (!sp || slot < 0 || slot >= (long)RS_CLUSTER_SLOTS ||
		    redis_parse_hostport(sp + 1, strlen(sp + 1), host,
					 sizeof(host), &port) ||
		    (n = node_index(rs, host, strlen(host), port)) < 0) {
			op->result = -EIO;
			return V_DONE;
		}
		if (ask) {
			op->node = (uint16_t)n;
			op->ask = true;
		} else {
			rs->slot_node[slot] = (uint16_t)n;
			op->ask = false;
		}
		return V_AGAIN;
	}
	op->ask = false;
	if (reply_is(r, "CLUSTERDOWN") || reply_is(r, "TRYAGAIN") ||
	    reply_is(r, "LOADING") || reply_is(r, "MASTERDOWN") ||
	    reply_is(r, "READONLY"))
		return V_RETRY;
	if (reply_is(r, "OOM")) {
		op->result = -ENOSPC;
		return V_DONE;
	}
	if (reply_is(r, "NOAUTH") || reply_is(r, "WRONGPASS") ||
	    reply_is(r, "NOPERM")) {
		op->result = -EACCES;
		return V_DONE;
	}
	switch (op->kind) {
	case RS_SET:
		op->result = r->type == REDIS_REPLY_STATUS ? 0 : -EIO;
		break;
	case RS_GET:
		if (r->type == REDIS_REPLY_NIL)
			op->result = -ENOENT;
		else if (r->type != REDIS_REPLY_STRING)
			op->result = -EIO;
		else if (r->len != op->len)
			op->result = -EMSGSIZE;
		else
			memcpy(op->buf, r->str, op->len);
		break;
	case RS_GETRANGE:
		if (r->type != REDIS_REPLY_STRING)
			op->result = -EIO;
		else if (r->len == 0)
			op->result = -ENOENT;
		else if ((size_t)r->len != op->len)
			op->result = -EMSGSIZE;
		else
			memcpy(op->buf, r->str, op->len);
		break;
	default:
		op->result = r->type == REDIS_REPLY_INTEGER ? 0 : -EIO;
		break;
	}
	if (op->result == 0 && (op->kind == RS_SET || op->kind == RS_DEL))
		rs->node[op->sent_to].written = true;
	return V_DONE;
}

/* Send every pending op to its node, flush every connection. */
static bool round_send(struct redis_store *rs, struct redis_op *ops,
		       unsigned n)
{
	bool lost = false;
	unsigned k, i;

	for (k = 0; k < n; k++) {
		struct redis_op *op = &ops[k];

		if (op->done)
			continue;
		if (!op->ask)
			op->node = rs->slot_node[redis_key_slot(op->key,
								op->keylen)];
		if (op->node == RS_NO_NODE ||
		    node_connect(rs, op->node, NULL, 0)) {
			op->node = RS_NO_NODE;
			lost = true;
			continue;
		}
		op->sent_to = op->node;
		op->inflight = true;
	}
	for (i = 0; i < rs->nr_nodes; i++)
		if (rs->node[i].c && node_write(&rs->node[i], i, ops, n)) {
			node_drop(&rs->node[i]);
			lost = true;
		}
	return lost;
}

static bool round_read(struct redis_store *rs, struct redis_op *ops,
		       unsigned n, bool *again)
{
	bool retry = false;
	unsigned i, k;

	for (i = 0; i < rs->nr_nodes; i++) {
		for (k = 0; k < n; k++) {
			struct redis_op *op = &ops[k];
			redisReply *r = NULL;
			bool asked = op->ask;

			if (!op->inflight || op->sent_to != i)
				continue;
			op->inflight = false;
			if (!rs->node[i].c) {
				retry = true;	/* lost while reading it */
				continue;
			}
			if (asked) {		/* ASKING's +OK first */
				if (redisGetReply(rs->node[i].c,
						  (void **)&r) != REDIS_OK) {
					node_drop(&rs->node[i]);
					retry = true;
					continue;
				}
				freeReplyObject(r);
				r = NULL;
			}
			if (redisGetReply(rs->node[i].c, (void **)&r) != REDIS_OK ||
			    !r) {
				node_drop(&rs->node[i]);
				retry = true;
				continue;
			}
			switch (op_reply(rs, op, r)) {
			case V_DONE:
				op->done = true;
				break;
			case V_AGAIN:
				*again = true;
				break;
			default:
				retry = true;
				break;
			}
			freeReplyObject(r);
		}
	}
	return retry;
}

int redis_store_run(struct redis_store *rs, struct redis_op *ops, unsigned n)
{
	uint64_t deadline = now_ms() + rs->cfg.retry_ms;
	unsigned backoff = RS_BACKOFF_MIN_MS, k;

	for (k = 0; k < n; k++) {
		ops[k].done = ops[k].ask = ops[k].inflight = false;
		ops[k].result = 0;
		ops[k].node = ops[k].sent_to = RS_NO_NODE;
	}
	for (;;) {
		bool again = false, retry;
		unsigned left = 0;

		retry = round_send(rs, ops, n);
		retry |= round_read(rs, ops, n, &again);
		for (k = 0; k < n; k++)
			left += !ops[k].done;
		if (!left)
			break;
		if (now_ms() >= deadline) {
			for (k = 0; k < n; k++)
				if (!ops[k].done) {
					ops[k].result = -EIO;
					ops[k].done = true;
				}
			break;
		}
		if (retry) {
			sleep_ms(backoff);
			backoff = MIN(backoff * 2, RS_BACKOFF_MAX_MS);
			slots_refresh(rs, NULL, 0);
		} else if (!again) {
			backoff = RS_BACKOFF_MIN_MS;
		}
	}
	for (k = 0; k < n; k++)
		if (ops[k].result)
			return ops[k].result;
	return 0;
}

int redis_store_wait(struct redis_store *rs, unsigned replicas,
		     unsigned timeout_ms)
{
	unsigned i;
	int ret = 0;

	if (!replicas)
		return 0;
	for (i = 0; i < rs->nr_nodes; i++) {
		struct rs_node *nd = &rs->node[i];
		redisReply *r;

		if (!nd->written)
			continue;
		r = NULL;
		if (nd->c) {	/* the socket waits as long as WAIT may */
			redisSetTimeout(nd->c, tv_of(timeout_ms +
						     rs->cfg.timeout_ms));
			r = redisCommand(nd->c, "WAIT %u %u", replicas,
					 timeout_ms);
			if (r)
				redisSetTimeout(nd->c, tv_of(rs->cfg.timeout_ms));
		}
		if (!r || r->type != REDIS_REPLY_INTEGER ||
		    r->integer < (long long)replicas) {
			ret = -EIO;
			if (!r)
				node_drop(nd);
		} else {
			nd->written = false;
		}
		if (r)
			freeReplyObject(r);
	}
	return ret;
}

/* Delete the keys of one SCAN page (r's second element) from node nd. */
static int unlink_page(struct rs_node *nd, const redisReply *keys,
		       uint64_t *deleted)
{
	size_t k, sent = 0;
	int ret = 0;

	for (k = 0; k < keys->elements; k++) {
		const redisReply *key = keys->element[k];
		const char *argv[2] = { "UNLINK", key->str };
		size_t argl[2] = { 6, key->len };

		if (key->type != REDIS_REPLY_STRING)
			continue;
		redisAppendCommandArgv(nd->c, 2, argv, argl);
		sent++;
	}
	for (k = 0; k < sent; k++) {
		redisReply *r = NULL;

		if (redisGetReply(nd->c, (void **)&r) != REDIS_OK || !r) {
			node_drop(nd);
			return -EIO;
		}
		if (r->type == REDIS_REPLY_INTEGER)
			*deleted += (uint64_t)r->integer;
		else
			ret = -EIO;
		freeReplyObject(r);
	}
	return ret;
}

/*
 * SCAN every master for keys that match pattern, a page of them at a
 * time, each page given to page(nd, keys, arg).  0, or -EIO when a master
 * could not be asked or a page failed.
 */
static int scan_masters(struct redis_store *rs, const char *pattern,
			int (*page)(struct rs_node *nd, const redisReply *keys,
				    void *arg),
			void *arg)
{
	unsigned i;
	int ret = 0;

	for (i = 0; i < rs->nr_nodes; i++) {
		struct rs_node *nd = &rs->node[i];
		char cursor[32] = "0";

		if (!nd->master)
			continue;
		if (node_connect(rs, i, NULL, 0)) {
			ret = -EIO;
			continue;
		}
		do {
			const char *argv[6] = { "SCAN", cursor, "MATCH", pattern,
						"COUNT", "1000" };
			size_t argl[6];
			redisReply *r;
			int a;

			for (a = 0; a < 6; a++)
				argl[a] = strlen(argv[a]);
			r = redisCommandArgv(nd->c, 6, argv, argl);
			if (!r || r->type != REDIS_REPLY_ARRAY ||
			    r->elements != 2 ||
			    r->element[0]->type != REDIS_REPLY_STRING ||
			    r->element[0]->len >= sizeof(cursor) ||
			    r->element[1]->type != REDIS_REPLY_ARRAY) {
				if (r)
					freeReplyObject(r);
				else
					node_drop(nd);
				ret = -EIO;
				break;
			}
			memcpy(cursor, r->element[0]->str, r->element[0]->len);
			cursor[r->element[0]->len] = '\0';
			if (page(nd, r->element[1], arg))
				ret = -EIO;
			freeReplyObject(r);
		} while (nd->c && strcmp(cursor, "0") != 0);
	}
	return ret;
}

static int unlink_cb(struct rs_node *nd, const redisReply *keys, void *arg)
{
	return unlink_page(nd, keys, arg);
}

int redis_store_delete_matching(struct redis_store *rs, const char *pattern,
				uint64_t *deleted)
{
	uint64_t count = 0;
	int ret = scan_masters(rs, pattern, unlink_cb, &count);

	if (deleted)
		*deleted = count;
	return ret;
}

struct key_visit {
	void (*fn)(void *arg, const char *key, size_t len);
	void *arg;
};

static int visit_cb(struct rs_node *nd, const redisReply *keys, void *arg)
{
	const struct key_visit *v = arg;
	size_t k;

	for (k = 0; k < keys->elements; k++)
		if (keys->element[k]->type == REDIS_REPLY_STRING)
			v->fn(v->arg, keys->element[k]->str,
			      keys->element[k]->len);
	return 0;
}

int redis_store_scan(struct redis_store *rs, const char *pattern,
		     void (*fn)(void *arg, const char *key, size_t len),
		     void *arg)
{
	struct key_visit v = { .fn = fn, .arg = arg };

	return scan_masters(rs, pattern, visit_cb, &v);
}

int redis_store_check_policy(struct redis_store *rs, char *err,
			     size_t errlen)
{
	unsigned i;

	for (i = 0; i < rs->nr_nodes; i++) {
		struct rs_node *nd = &rs->node[i];
		const char *p;
		redisReply *r;
		int ok;

		if (!nd->master)
			continue;
		if (node_connect(rs, i, err, errlen))
			return -EIO;
		r = redisCommand(nd->c, "INFO memory");
		if (!r || r->type != REDIS_REPLY_STRING) {
			snprintf(err, errlen, "%s:%d: INFO memory failed",
				 nd->host, nd->port);
			if (r)
				freeReplyObject(r);
			else
				node_drop(nd);
			return -EIO;
		}
		p = strstr(r->str, "maxmemory_policy:");
		ok = p && strncmp(p + 17, "noeviction", 10) == 0 &&
		     (p[27] == '\r' || p[27] == '\n' || p[27] == '\0');
		if (!ok) {
			size_t n = p ? strcspn(p + 17, "\r\n") : 0;

			snprintf(err, errlen, "%s:%d: maxmemory-policy is %.*s, "
				 "not noeviction: the server may evict swapped "
				 "pages", nd->host, nd->port, (int)MIN(n, 40u),
				 p ? p + 17 : "unknown");
			freeReplyObject(r);
			return -EPERM;
		}
		freeReplyObject(r);
	}
	return 0;
}
