// SPDX-License-Identifier: MIT
/*
 * memory_tiers.c - memory tiers and demotion targets, as the kernel's
 * mm/memory-tiers.c computes them: the topology read from sysfs, the
 * tiers and the demotion graph.  A user's override of the graph
 * (--demotion SPEC) is demotion_override.c.
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
 * between them.  An override (demotion_override_parse(), in
 * demotion_override.c) is checked for the same property and refused,
 * naming the cycle, when it has one.
 *
 * Everything runs once, at setup: files are read into buffers on the
 * stack and the results are fixed arrays, so nothing here allocates.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "log.h"
#include "prim.h"
#include "memory_tiers.h"
#include "swapdev.h"

#define NODE_BIG	1000000000ul	/* numbers saturate here */
#define TEXT_MAX	4096		/* a sysfs file: one page */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal at *p, saturating at NODE_BIG; false when *p is no digit. */
bool mem_number_next(const char **p, const char *end, unsigned long *v)
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
		if (!mem_number_next(&s, end, &lo))
			return -EINVAL;
		hi = lo;
		if (s < end && *s == '-' && (s++, !mem_number_next(&s, end, &hi)))
			return -EINVAL;
		if (hi < lo)
			return -EINVAL;
		if (hi >= MEM_MAX_NODES) {
			*bad = MAX(lo, (unsigned long)MEM_MAX_NODES);
			return -ERANGE;
		}
		m |= mem_node_range((unsigned)lo, (unsigned)hi);
		if (s < end && (*s != ',' || ++s == end))
			return -EINVAL;
	}
	*mask = m;
	return 0;
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
	while (mem_is_blank(*s))
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
	for (s += strlen("MemTotal:"); mem_is_blank(*s); s++)
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

	for_each_mem_node(other, t->nodes)
		row[other] = other == node ? MEM_LOCAL_DISTANCE : MEM_REMOTE_DISTANCE;
	if (sysfs_read_text(path, buf, sizeof(buf)))
		return 0;
	end = buf + strlen(buf);
	for_each_mem_node(other, t->nodes) {
		while (s < end && mem_is_blank(*s))
			s++;
		if (!mem_number_next(&s, end, &v) || (s < end && !mem_is_blank(*s)) ||
		    !v || v > 65535)
			goto bad;
		row[other] = (int)v;
	}
	while (s < end && mem_is_blank(*s))
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
	for_each_mem_node(n, t->nodes) {
		struct mem_node *nd = &t->node[n];

		if (!sysfs_mkpath(path, "%s/devices/system/node/node%u/meminfo", root, n))
			return -ENAMETOOLONG;
		nd->mem_total = meminfo_total(path, &found);
		nd->has_memory = have_mem ? !!(mem & mem_node_bit(n)) :
			!found || nd->mem_total;
		nd->has_cpus = !!(cpus & mem_node_bit(n));
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
	    !mem_number_next(&s, end, &v) || s != end || v > MEMTIER_MAX)
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
	for_each_mem_node(n, mask) {
		if (!(t->nodes & mem_node_bit(n))) {
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
	fd = prim_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	while (!ret && (n = prim_getdents(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; !ret && off < n;) {
			const struct dirent64 *de = (const void *)(buf + off);

			off += de->d_reclen;
			tiers += tier_name(de->d_name) >= 0;
			ret = tier_read(dir, de->d_name, t, err, errlen);
		}
	}
	prim_close(fd);
	return ret ? ret : tiers > 0;
}

/* A kernel without NUMA: node 0 has everything. */
static void topology_single(struct mem_topology *t)
{
	t->nodes = mem_node_bit(0);
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

	for_each_mem_node(n, t->nodes) {
		if (t->node[n].has_memory && t->node[n].tier != MEMTIER_NONE)
			mask |= mem_node_bit(n);
	}
	return mask;
}

/* How many distinct values near[] takes over the nodes of set below v. */
static unsigned distinct_below(const int *near, uint64_t set, int v)
{
	unsigned o, p, count = 0;

	for_each_mem_node(o, set) {
		bool first = near[o] < v;

		for_each_mem_node(p, set & (mem_node_bit(o) - 1))
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

	for_each_mem_node(n, t->nodes) {
		if (t->node[n].has_cpus)
			cpus |= mem_node_bit(n);
	}
	for_each_mem_node(n, t->nodes) {
		struct mem_node *nd = &t->node[n];

		node_set_tier(nd, nd->has_memory ? MEMTIER_DRAM : MEMTIER_NONE);
		if (!nd->has_memory || nd->has_cpus || !cpus)
			continue;
		near[n] = INT_MAX;
		for_each_mem_node(c, cpus)
			near[n] = MIN(near[n], t->node[c].distance[n]);
		slow |= mem_node_bit(n);
	}
	/* Equal distances share a tier; each farther distance is one lower. */
	for_each_mem_node(n, slow)
		node_set_tier(&t->node[n], MEMTIER_DRAM + 1 +
			      (int)distinct_below(near, slow, near[n]));
	t->source = MEM_TIERS_DERIVED;
}

/* The smallest tier slower than tier among nodes, or MEMTIER_NONE. */
static int tier_below(const struct mem_topology *t, uint64_t nodes, int tier)
{
	int next = MEMTIER_NONE;
	unsigned n;

	for_each_mem_node(n, nodes) {
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
	for_each_mem_node(n, tiered) {
		int next = tier_below(t, tiered, t->node[n].tier);
		int best = INT_MAX;

		if (next == MEMTIER_NONE)
			continue;
		for_each_mem_node(x, tiered) {
			if (t->node[x].tier > t->node[n].tier)
				d->allowed[n] |= mem_node_bit(x);
			if (t->node[x].tier == next)
				best = MIN(best, t->node[n].distance[x]);
		}
		for_each_mem_node(x, tiered) {
			if (t->node[x].tier == next && t->node[n].distance[x] == best)
				d->preferred[n] |= mem_node_bit(x);
		}
	}
	assert(demotion_acyclic(d));
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
