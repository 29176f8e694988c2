// SPDX-License-Identifier: MIT
/*
 * memory_tiers.c - memory tiers and demotion targets, as the kernel's
 * mm/memory-tiers.c computes them: the topology read from sysfs, the
 * tiers, the demotion graph, and a user's override of it.
 *
 * A machine with slow memory (PMEM, CXL) has NUMA nodes without CPUs.  The
 * kernel sorts the memory nodes into tiers by abstract distance (smaller
 * is faster; DRAM is memory_tier4) and gives each node a list of demotion
 * targets: the nodes of the next slower tier that are nearest to it.
 * Reclaim moves a cold folio one step down that graph before it would
 * swap it.  uswap will do the same in user space (move_pages), so it
 * needs the same graph:
 *
 *	tier 4    [0]   [1]      nodes with CPUs (DRAM)
 *	            \   /
 *	tier 5       [2]         PMEM near both sockets: 0 and 1 prefer it
 *	              |
 *	tier 6       [3]         CXL behind 2: 2 prefers it; 3 is last
 *
 * A node may also fall back to any slower node when its preferred ones
 * are full (0 and 1 to 3 here), as the kernel's lower_tier_mask.
 *
 * Tiers come from devices/virtual/memory_tiering when the kernel has it
 * (6.1 and later), where the kernel has already weighed HMAT and CDAT
 * performance data.  Else mem_tiers_derive() ranks nodes from what every
 * NUMA kernel exports: nodes with CPUs first, then CPU-less nodes by their
 * distance from the nearest CPU.  demotion_targets_compute() then links
 * each node to the next tier only, never sideways or up, so the graph has
 * no cycle: on the kernel's list, two nodes demoting to each other ran
 * 7-10% slower in steady state than a one-way path, pages bouncing
 * between them.  An override (demotion_override_parse()) is checked for
 * the same property and refused, naming the cycle, when it has one.
 *
 * Everything runs once, at setup: files are read into buffers on the
 * stack and the results are fixed arrays, so nothing here allocates.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "memory_tiers.h"
#include "swapdev.h"

#define NODE_BIG	1000000000ul	/* numbers saturate here */
#define TEXT_MAX	4096		/* a sysfs file: one page */

static uint64_t node_bit(unsigned n)
{
	return 1ull << n;
}

/* Nodes lo..hi (both < MEM_MAX_NODES) as a mask. */
static uint64_t node_range(unsigned lo, unsigned hi)
{
	uint64_t upto = hi + 1 >= MEM_MAX_NODES ? ~0ull : node_bit(hi + 1) - 1;

	return upto & ~(node_bit(lo) - 1);
}

/* The first node of mask at or after n, or MEM_MAX_NODES. */
static unsigned node_next(uint64_t mask, unsigned n)
{
	mask = n >= MEM_MAX_NODES ? 0 : mask & ~(node_bit(n) - 1);
	return mask ? (unsigned)__builtin_ctzll(mask) : MEM_MAX_NODES;
}

/* Each node n of mask, in order of id (mask is read at each step). */
#define for_each_node_in(n, mask)					\
	for ((n) = node_next((mask), 0); (n) < MEM_MAX_NODES;		\
	     (n) = node_next((mask), (n) + 1))

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal at *p, saturating at NODE_BIG; false when *p is no digit. */
static bool number_next(const char **p, const char *end, unsigned long *v)
{
	const char *s = *p;

	if (s == end || !is_digit(*s))
		return false;
	for (*v = 0; s < end && is_digit(*s); s++)
		*v = MIN(*v * 10 + (unsigned long)(*s - '0'), NODE_BIG);
	*p = s;
	return true;
}

/*
 * A node list as sysfs writes it ("0-3,5", or "" for none) into *mask:
 * 0, -EINVAL when malformed, -ERANGE with *bad = a node id too large.
 */
static int mask_parse(const char *s, uint64_t *mask, unsigned long *bad)
{
	const char *end = s + strlen(s);
	unsigned long lo, hi;
	uint64_t m = 0;

	while (s < end) {
		if (!number_next(&s, end, &lo))
			return -EINVAL;
		hi = lo;
		if (s < end && *s == '-' && (s++, !number_next(&s, end, &hi)))
			return -EINVAL;
		if (hi < lo)
			return -EINVAL;
		if (hi >= MEM_MAX_NODES) {
			*bad = MAX(lo, (unsigned long)MEM_MAX_NODES);
			return -ERANGE;
		}
		m |= node_range((unsigned)lo, (unsigned)hi);
		if (s < end && (*s != ',' || ++s == end))
			return -EINVAL;
	}
	*mask = m;
	return 0;
}

/* Format mask as a node list ("0-2,5") into buf: bytes written. */
static size_t mask_format(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;
	unsigned lo, hi;
	int w;

	assert(len > 0);
	buf[0] = 0;
	while (mask) {
		lo = (unsigned)__builtin_ctzll(mask);
		for (hi = lo; hi + 1 < MEM_MAX_NODES && (mask & node_bit(hi + 1));)
			hi++;
		mask &= ~node_range(lo, hi);
		if (hi == lo)
			w = snprintf(buf + n, len - n, "%s%u", n ? "," : "", lo);
		else
			w = snprintf(buf + n, len - n, "%s%u-%u", n ? "," : "", lo, hi);
		if (w < 0 || (size_t)w >= len - n)
			return n;
		n += (size_t)w;
	}
	return n;
}

/* ---- reading sysfs ------------------------------------------------------ */

static void node_set_tier(struct mem_node *nd, int tier)
{
	nd->tier = tier;
	nd->adistance = tier == MEMTIER_NONE ? -1 : tier << MEMTIER_CHUNK_BITS;
}

/*
 * A node list file into *mask.  *found is false (and 0 returned) when the
 * file cannot be read; a malformed one is an error, with the message.
 */
static int mask_read(const char *path, uint64_t *mask, bool *found,
		     char *err, size_t errlen)
{
	char buf[TEXT_MAX];
	unsigned long bad;
	const char *s = buf;
	int ret;

	*found = false;
	if (sysfs_read_text(path, buf, sizeof(buf)))
		return 0;
	while (is_blank(*s))
		s++;
	ret = mask_parse(s, mask, &bad);
	if (ret == -ERANGE)
		err_msg(err, errlen, "%s: node %lu: at most %d nodes are supported",
			path, bad, MEM_MAX_NODES);
	else if (ret)
		err_msg(err, errlen, "%s: expected a node list such as 0-3,5, found \"%.40s\"",
			path, s);
	*found = !ret;
	return ret;
}

/* MemTotal of a nodeN/meminfo, in bytes; 0 when it does not say. */
static uint64_t meminfo_total(const char *path, bool *found)
{
	char buf[TEXT_MAX];
	const char *s;
	unsigned long long kb = 0;

	*found = false;
	if (sysfs_read_text(path, buf, sizeof(buf)))
		return 0;
	s = strstr(buf, "MemTotal:");
	if (!s)
		return 0;
	for (s += strlen("MemTotal:"); is_blank(*s); s++)
		;
	if (!is_digit(*s))
		return 0;
	for (; is_digit(*s) && kb < (1ull << 50); s++)
		kb = kb * 10 + (unsigned long long)(*s - '0');
	*found = true;
	return (uint64_t)kb << 10;
}

/*
 * nodeN/distance: one distance to each online node, in the order of their
 * ids (not indexed by id: with nodes 0 and 2 online the row has two).  A
 * missing file gives the defaults.
 */
static int distance_read(const char *path, struct mem_topology *t,
			 unsigned node, char *err, size_t errlen)
{
	char buf[TEXT_MAX];
	const char *s = buf, *end;
	unsigned long v;
	unsigned other, want = (unsigned)__builtin_popcountll(t->nodes);
	int *row = t->node[node].distance;

	for_each_node_in(other, t->nodes)
		row[other] = other == node ? MEM_LOCAL_DISTANCE : MEM_REMOTE_DISTANCE;
	if (sysfs_read_text(path, buf, sizeof(buf)))
		return 0;
	end = buf + strlen(buf);
	for_each_node_in(other, t->nodes) {
		while (s < end && is_blank(*s))
			s++;
		if (!number_next(&s, end, &v) || (s < end && !is_blank(*s)) ||
		    !v || v > 65535)
			goto bad;
		row[other] = (int)v;
	}
	while (s < end && is_blank(*s))
		s++;
	if (s == end)
		return 0;
bad:
	err_msg(err, errlen, "%s: expected %u distances of 1..65535 (one per online node), found \"%.60s\"",
		path, want, buf);
	return -EINVAL;
}

/* Per node: CPUs, memory, MemTotal, distances. */
static int nodes_read(const char *root, struct mem_topology *t, char *err,
		      size_t errlen)
{
	char path[PATH_MAX], buf[TEXT_MAX];
	uint64_t cpus = 0, mem = 0;
	bool have_cpus, have_mem, found;
	unsigned n;
	int ret;

	if (!sysfs_mkpath(path, "%s/devices/system/node/has_cpu", root))
		return -ENAMETOOLONG;
	ret = mask_read(path, &cpus, &have_cpus, err, errlen);
	if (ret || !sysfs_mkpath(path, "%s/devices/system/node/has_memory", root))
		return ret ? ret : -ENAMETOOLONG;
	ret = mask_read(path, &mem, &have_mem, err, errlen);
	if (ret)
		return ret;
	for_each_node_in(n, t->nodes) {
		struct mem_node *nd = &t->node[n];

		if (!sysfs_mkpath(path, "%s/devices/system/node/node%u/meminfo", root, n))
			return -ENAMETOOLONG;
		nd->mem_total = meminfo_total(path, &found);
		nd->has_memory = have_mem ? !!(mem & node_bit(n)) :
			!found || nd->mem_total;
		nd->has_cpus = !!(cpus & node_bit(n));
		if (!have_cpus && sysfs_mkpath(path, "%s/devices/system/node/node%u/cpulist",
					 root, n) && !sysfs_read_text(path, buf, sizeof(buf)))
			nd->has_cpus = buf[strspn(buf, " \t\r\n")] != 0;
		if (!sysfs_mkpath(path, "%s/devices/system/node/node%u/distance", root, n))
			return -ENAMETOOLONG;
		ret = distance_read(path, t, n, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* The N of a "memory_tierN" directory name, or -1. */
static int tier_name(const char *name)
{
	const char *s = name + strlen("memory_tier"), *end = s + strlen(s);
	unsigned long v;

	if (strncmp(name, "memory_tier", strlen("memory_tier")) ||
	    !number_next(&s, end, &v) || s != end || v > MEMTIER_MAX)
		return -1;
	return (int)v;
}

/* One memory_tierN/nodelist: its nodes get tier N. */
static int tier_read(const char *dir, const char *name, struct mem_topology *t,
		     char *err, size_t errlen)
{
	char path[PATH_MAX];
	int tier = tier_name(name), ret;
	uint64_t mask = 0;
	bool found;
	unsigned n;

	if (tier < 0 || !sysfs_mkpath(path, "%s/%s/nodelist", dir, name))
		return 0;
	ret = mask_read(path, &mask, &found, err, errlen);
	if (ret)
		return ret;
	for_each_node_in(n, mask) {
		if (!(t->nodes & node_bit(n))) {
			err_msg(err, errlen, "%s: node %u is not online", path, n);
			return -EINVAL;
		}
		if (t->node[n].tier != MEMTIER_NONE) {
			err_msg(err, errlen, "%s: node %u is also in memory_tier%d",
				path, n, t->node[n].tier);
			return -EINVAL;
		}
		node_set_tier(&t->node[n], tier);
	}
	return 0;
}

/*
 * The tiers of devices/virtual/memory_tiering into t: 1 when it lists at
 * least one tier, 0 when it does not exist or lists none, or -errno.
 */
static int tiers_read(const char *root, struct mem_topology *t, char *err,
		      size_t errlen)
{
	char dir[PATH_MAX], buf[2048] __attribute__((aligned(8)));
	int fd, ret = 0, tiers = 0;
	ssize_t n, off;

	if (!sysfs_mkpath(dir, "%s/devices/virtual/memory_tiering", root))
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (!ret && (n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; !ret && off < n;) {
			const struct dirent64 *de = (const void *)(buf + off);

			off += de->d_reclen;
			tiers += tier_name(de->d_name) >= 0;
			ret = tier_read(dir, de->d_name, t, err, errlen);
		}
	}
	close(fd);
	return ret ? ret : tiers > 0;
}

/* A kernel without NUMA: node 0 has everything. */
static void topology_single(struct mem_topology *t)
{
	t->nodes = node_bit(0);
	t->node[0].has_cpus = true;
	t->node[0].has_memory = true;
	t->node[0].distance[0] = MEM_LOCAL_DISTANCE;
	mem_tiers_derive(t);
}

int mem_topology_read(const char *root, struct mem_topology *t, char *err,
		      size_t errlen)
{
	char path[PATH_MAX];
	bool found = false;
	unsigned n;
	int ret;

	root = root ? root : sysfs_root();
	memset(t, 0, sizeof(*t));
	for (n = 0; n < MEM_MAX_NODES; n++)
		node_set_tier(&t->node[n], MEMTIER_NONE);
	if (!sysfs_mkpath(path, "%s/devices/system/node/online", root))
		goto err_path;
	ret = mask_read(path, &t->nodes, &found, err, errlen);
	if (!ret && !found && sysfs_mkpath(path, "%s/devices/system/node/possible", root))
		ret = mask_read(path, &t->nodes, &found, err, errlen);
	if (ret)
		return ret;
	if (!found) {
		topology_single(t);
		return 0;
	}
	if (!t->nodes) {
		err_msg(err, errlen, "%s: no node is online", path);
		return -EINVAL;
	}
	ret = nodes_read(root, t, err, errlen);
	if (ret == -ENAMETOOLONG)
		goto err_path;
	if (!ret)
		ret = tiers_read(root, t, err, errlen);
	if (ret == -ENAMETOOLONG)
		goto err_path;
	if (ret < 0)
		return ret;
	if (ret == 1)
		t->source = MEM_TIERS_SYSFS;
	else
		mem_tiers_derive(t);
	return 0;
err_path:
	err_msg(err, errlen, "%.200s...: sysfs root path too long", root);
	return -EINVAL;
}

/* ---- tiers and targets -------------------------------------------------- */

/* The nodes that take part in demotion: online, with memory and a tier. */
static uint64_t tiered_nodes(const struct mem_topology *t)
{
	uint64_t mask = 0;
	unsigned n;

	for_each_node_in(n, t->nodes) {
		if (t->node[n].has_memory && t->node[n].tier != MEMTIER_NONE)
			mask |= node_bit(n);
	}
	return mask;
}

/* How many distinct values near[] takes over the nodes of set below v. */
static unsigned distinct_below(const int *near, uint64_t set, int v)
{
	unsigned o, p, count = 0;

	for_each_node_in(o, set) {
		bool first = near[o] < v;

		for_each_node_in(p, set & (node_bit(o) - 1))
			first = first && near[p] != near[o];
		count += first;
	}
	return count;
}

void mem_tiers_derive(struct mem_topology *t)
{
	int near[MEM_MAX_NODES];
	uint64_t cpus = 0, slow = 0;
	unsigned n, c;

	for_each_node_in(n, t->nodes) {
		if (t->node[n].has_cpus)
			cpus |= node_bit(n);
	}
	for_each_node_in(n, t->nodes) {
		struct mem_node *nd = &t->node[n];

		node_set_tier(nd, nd->has_memory ? MEMTIER_DRAM : MEMTIER_NONE);
		if (!nd->has_memory || nd->has_cpus || !cpus)
			continue;
		near[n] = INT_MAX;
		for_each_node_in(c, cpus)
			near[n] = MIN(near[n], t->node[c].distance[n]);
		slow |= node_bit(n);
	}
	/* Equal distances share a tier; each farther distance is one lower. */
	for_each_node_in(n, slow)
		node_set_tier(&t->node[n], MEMTIER_DRAM + 1 +
			      (int)distinct_below(near, slow, near[n]));
	t->source = MEM_TIERS_DERIVED;
}

/* The smallest tier slower than tier among nodes, or MEMTIER_NONE. */
static int tier_below(const struct mem_topology *t, uint64_t nodes, int tier)
{
	int next = MEMTIER_NONE;
	unsigned n;

	for_each_node_in(n, nodes) {
		int nt = t->node[n].tier;

		if (nt > tier && (next == MEMTIER_NONE || nt < next))
			next = nt;
	}
	return next;
}

int demotion_targets_compute(const struct mem_topology *t,
			     struct demotion_map *d)
{
	uint64_t tiered = tiered_nodes(t);
	unsigned n, x;

	memset(d, 0, sizeof(*d));
	d->nodes = tiered;
	for_each_node_in(n, tiered) {
		int next = tier_below(t, tiered, t->node[n].tier);
		int best = INT_MAX;

		if (next == MEMTIER_NONE)
			continue;
		for_each_node_in(x, tiered) {
			if (t->node[x].tier > t->node[n].tier)
				d->allowed[n] |= node_bit(x);
			if (t->node[x].tier == next)
				best = MIN(best, t->node[n].distance[x]);
		}
		for_each_node_in(x, tiered) {
			if (t->node[x].tier == next && t->node[n].distance[x] == best)
				d->preferred[n] |= node_bit(x);
		}
	}
	assert(demotion_acyclic(d));
	return 0;
}

/* ---- cycles ------------------------------------------------------------- */

enum { WHITE, GREY, BLACK };

struct cycle_search {
	const uint64_t *edges;
	unsigned char color[MEM_MAX_NODES];
	unsigned stack[MEM_MAX_NODES], depth;
	unsigned cycle[MEM_MAX_NODES + 1], len;	/* first node repeated last */
};

/* Depth first from u; true with s->cycle filled when a cycle is reached. */
static bool cycle_visit(struct cycle_search *s, unsigned u)
{
	unsigned v, i;

	s->color[u] = GREY;
	s->stack[s->depth++] = u;
	for_each_node_in(v, s->edges[u]) {
		if (s->color[v] == GREY) {
			for (i = 0; s->stack[i] != v; i++)
				;
			for (s->len = 0; i < s->depth; i++)
				s->cycle[s->len++] = s->stack[i];
			s->cycle[s->len++] = v;
			return true;
		}
		if (s->color[v] == WHITE && cycle_visit(s, v))
			return true;
	}
	s->depth--;
	s->color[u] = BLACK;
	return false;
}

/*
 * A cycle of edges (edges[n]: the nodes n points at), into s->cycle and
 * s->len, starting at its smallest node: false when there is none.
 */
static bool cycle_find(const uint64_t *edges, struct cycle_search *s)
{
	unsigned n, lo = 0, i, rot[MEM_MAX_NODES + 1];

	memset(s, 0, sizeof(*s));
	s->edges = edges;
	for (n = 0; n < MEM_MAX_NODES; n++) {
		if (s->color[n] == WHITE && cycle_visit(s, n))
			break;
	}
	if (n == MEM_MAX_NODES)
		return false;
	for (i = 1; i + 1 < s->len; i++)
		lo = s->cycle[i] < s->cycle[lo] ? i : lo;
	for (i = 0; i + 1 < s->len; i++)
		rot[i] = s->cycle[(lo + i) % (s->len - 1)];
	rot[i] = rot[0];
	memcpy(s->cycle, rot, sizeof(unsigned) * s->len);
	return true;
}

bool demotion_acyclic(const struct demotion_map *d)
{
	uint64_t edges[MEM_MAX_NODES];
	struct cycle_search s;
	unsigned n;

	for (n = 0; n < MEM_MAX_NODES; n++)
		edges[n] = d->preferred[n] | d->allowed[n];
	return !cycle_find(edges, &s);
}

/* Every node reachable from n along edges (which have no cycle). */
static uint64_t reach(const uint64_t *edges, unsigned n, uint64_t *memo,
		      uint64_t *done)
{
	uint64_t r = edges[n];
	unsigned v;

	if (*done & node_bit(n))
		return memo[n];
	for_each_node_in(v, edges[n])
		r |= reach(edges, v, memo, done);
	memo[n] = r;
	*done |= node_bit(n);
	return r;
}

/* ---- the override ------------------------------------------------------- */

struct spec_parse {
	const char *spec;		/* the whole, for messages */
	const char *p, *end;		/* the rule being parsed */
	const struct mem_topology *t;
	uint64_t memory;		/* nodes that may be named */
	uint64_t sources;
	struct demotion_map m;
	char *err;
	size_t errlen;
};

/* Set the message, prefixed with the spec; returns -EINVAL. */
static int __attribute__((format(printf, 2, 3)))
spec_fail(struct spec_parse *ps, const char *fmt, ...)
{
	size_t len = strlen(ps->spec);
	va_list ap;
	int n;

	if (!ps->err || !ps->errlen)
		return -EINVAL;
	n = snprintf(ps->err, ps->errlen, "--demotion \"%.*s%s\": ",
		     (int)MIN(len, 64), ps->spec, len > 64 ? "..." : "");
	if (n >= 0 && (size_t)n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void skip_blanks(struct spec_parse *ps)
{
	while (ps->p < ps->end && is_blank(*ps->p))
		ps->p++;
}

/* What is left of the rule, for messages: at most 24 bytes. */
static int rest_len(const struct spec_parse *ps)
{
	return (int)MIN(ps->end - ps->p, 24);
}

/* A node number: 0, or -EINVAL (with the message) when there is none. */
static int spec_node(struct spec_parse *ps, const char *what,
		     unsigned long *v, const char **text, int *text_len)
{
	skip_blanks(ps);
	*text = ps->p;
	if (!number_next(&ps->p, ps->end, v))
		return spec_fail(ps, "expected %s at \"%.*s\"", what,
				 rest_len(ps), ps->p);
	*text_len = (int)(ps->p - *text);
	skip_blanks(ps);
	return 0;
}

/* Nodes lo..hi must exist and have memory. */
static int spec_check_nodes(struct spec_parse *ps, unsigned long lo,
			    unsigned long hi, const char *text, int text_len)
{
	uint64_t want, missing;
	char list[256];

	if (lo >= MEM_MAX_NODES) {
		mask_format(ps->t->nodes, list, sizeof(list));
		return spec_fail(ps, "node %.*s does not exist (online nodes: %s)",
				 text_len, text, list);
	}
	want = node_range((unsigned)lo, (unsigned)MIN(hi, MEM_MAX_NODES - 1ul));
	missing = want & ~ps->t->nodes;
	if (missing || hi >= MEM_MAX_NODES) {
		mask_format(ps->t->nodes, list, sizeof(list));
		return spec_fail(ps, "node %d does not exist (online nodes: %s)",
				 missing ? __builtin_ctzll(missing) : MEM_MAX_NODES,
				 list);
	}
	missing = want & ~ps->memory;
	if (missing)
		return spec_fail(ps, "node %d has no memory",
				 __builtin_ctzll(missing));
	return 0;
}

/* NODES after the '>': a list of nodes and ranges, into *targets. */
static int spec_targets(struct spec_parse *ps, uint64_t *targets)
{
	unsigned long lo, hi;
	const char *text, *hi_text;
	int len, hi_len, ret;

	for (;;) {
		ret = spec_node(ps, "a target node", &lo, &text, &len);
		if (ret)
			return ret;
		hi = lo;
		if (ps->p < ps->end && *ps->p == '-') {
			ps->p++;
			ret = spec_node(ps, "the end of a range", &hi, &hi_text,
					&hi_len);
			if (ret)
				return ret;
			if (hi < lo)
				return spec_fail(ps, "range %.*s-%.*s is backwards",
						 len, text, hi_len, hi_text);
		}
		ret = spec_check_nodes(ps, lo, hi, text, len);
		if (ret)
			return ret;
		*targets |= node_range((unsigned)lo, (unsigned)hi);
		if (ps->p == ps->end || *ps->p != ',')
			break;
		ps->p++;
	}
	if (ps->p < ps->end)
		return spec_fail(ps, "unexpected \"%.*s\" after the target nodes",
				 rest_len(ps), ps->p);
	return 0;
}

/* One RULE in [ps->p, ps->end): NODE ">" NODES. */
static int spec_rule(struct spec_parse *ps)
{
	const char *text;
	unsigned long src;
	uint64_t targets = 0;
	int len, ret;

	ret = spec_node(ps, "a source node (NODE>NODES)", &src, &text, &len);
	if (ret)
		return ret;
	if (ps->p == ps->end || *ps->p != '>')
		return spec_fail(ps, "expected '>' after node %.*s at \"%.*s\"",
				 len, text, rest_len(ps), ps->p);
	ps->p++;
	ret = spec_check_nodes(ps, src, src, text, len);
	if (ret)
		return ret;
	if (ps->sources & node_bit((unsigned)src))
		return spec_fail(ps, "node %lu is the source of two rules", src);
	ret = spec_targets(ps, &targets);
	if (ret)
		return ret;
	if (targets & node_bit((unsigned)src))
		return spec_fail(ps, "demotion %lu->%lu is a cycle (a node cannot demote to itself)",
				 src, src);
	ps->sources |= node_bit((unsigned)src);
	ps->m.preferred[src] = targets;
	return 0;
}

/* The cycle of s as "0->2->0" into buf. */
static void cycle_format(const struct cycle_search *s, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;
	int w;

	buf[0] = 0;
	for (i = 0; i < s->len; i++) {
		w = snprintf(buf + n, len - n, "%s%u", i ? "->" : "", s->cycle[i]);
		if (w < 0 || (size_t)w >= len - n)
			return;
		n += (size_t)w;
	}
}

/* "none", after blanks are cut. */
static bool spec_is_none(const char *s, const char *end)
{
	while (s < end && is_blank(*s))
		s++;
	while (end > s && is_blank(end[-1]))
		end--;
	return end - s == 4 && !memcmp(s, "none", 4);
}

int demotion_override_parse(const char *spec, const struct mem_topology *t,
			    struct demotion_map *d, char *err, size_t errlen)
{
	struct spec_parse ps = { .spec = spec, .t = t, .err = err, .errlen = errlen };
	size_t len = strnlen(spec, DEMOTION_SPEC_MAX + 1);
	const char *s = spec, *end = spec + len;
	uint64_t done = 0;
	struct cycle_search cs;
	char cycle[MEM_MAX_NODES * 4 + 8];
	unsigned n;
	int ret;

	if (len > DEMOTION_SPEC_MAX)
		return spec_fail(&ps, "longer than %d bytes", DEMOTION_SPEC_MAX);
	for_each_node_in(n, t->nodes) {
		if (t->node[n].has_memory)
			ps.memory |= node_bit(n);
	}
	ps.m.nodes = ps.memory;
	ps.m.override = true;
	if (!spec_is_none(s, end)) {
		for (; s <= end; s = ps.end + 1) {
			ps.p = s;
			ps.end = memchr(s, ';', (size_t)(end - s));
			ps.end = ps.end ? ps.end : end;
			skip_blanks(&ps);
			if (ps.p == ps.end)
				continue;	/* an empty rule */
			ret = spec_rule(&ps);
			if (ret)
				return ret;
		}
		if (!ps.sources)
			return spec_fail(&ps, "expected \"none\" or NODE>NODES[;NODE>NODES]...");
	}
	if (cycle_find(ps.m.preferred, &cs)) {
		cycle_format(&cs, cycle, sizeof(cycle));
		return spec_fail(&ps, "demotion %s is a cycle", cycle);
	}
	for_each_node_in(n, ps.sources)
		ps.m.allowed[n] = reach(ps.m.preferred, n, ps.m.allowed, &done);
	assert(demotion_acyclic(&ps.m));
	*d = ps.m;
	return 0;
}

/* ---- using the map ------------------------------------------------------ */

int demotion_next(const struct demotion_map *d, int node, unsigned rr)
{
	uint64_t m;
	unsigned k;

	if (node < 0 || node >= MEM_MAX_NODES)
		return -1;
	m = d->preferred[node];
	k = (unsigned)__builtin_popcountll(m);
	if (!k)
		return -1;
	for (rr %= k; rr; rr--)
		m &= m - 1;
	return __builtin_ctzll(m);
}

int demotion_format(const struct demotion_map *d, char *buf, size_t len)
{
	char list[256];
	size_t n = 0;
	unsigned src;
	int w;

	if (!len)
		return -ENOSPC;
	buf[0] = 0;
	for (src = 0; src < MEM_MAX_NODES; src++) {
		if (!d->preferred[src])
			continue;
		mask_format(d->preferred[src], list, sizeof(list));
		w = snprintf(buf + n, len - n, "%s%u>%s", n ? ";" : "", src, list);
		if (w < 0 || (size_t)w >= len - n)
			return -ENOSPC;
		n += (size_t)w;
	}
	if (!n) {
		w = snprintf(buf, len, "none");
		if (w < 0 || (size_t)w >= len)
			return -ENOSPC;
		n = (size_t)w;
	}
	return (int)n;
}
