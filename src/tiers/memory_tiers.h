/* SPDX-License-Identifier: MIT */
/*
 * memory_tiers.h - memory tiers and demotion targets (memory_tiers.c),
 * and a user's override of the targets (demotion_override.c): the NUMA
 * nodes that hold memory, sorted into tiers from fastest to slowest, and
 * for each node the nodes of the next slower tier that its cold memory
 * moves to before it is swapped.  Pure logic: nothing here migrates a
 * page.  docs/tiers.md describes the rules for users.
 *
 * Node ids are 0..MEM_MAX_NODES - 1, so that a set of nodes is one
 * uint64_t (bit n = node n).
 */
#ifndef USWAP_MEMORY_TIERS_H
#define USWAP_MEMORY_TIERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_MAX_NODES		64
#define MEM_LOCAL_DISTANCE	10	/* a node to itself, as numa_distance */
#define MEM_REMOTE_DISTANCE	20	/* any other, when sysfs does not say */

/*
 * Tiers are numbered as the kernel's memory_tierN: a tier covers the
 * abstract distances [N << 7, (N + 1) << 7), smaller is faster, and DRAM
 * (a node with CPUs) is tier 4.
 */
#define MEMTIER_CHUNK_BITS	7
#define MEMTIER_DRAM		4
#define MEMTIER_MAX		(1 << 20)	/* largest N read from sysfs */
#define MEMTIER_NONE		(-1)		/* a node without memory */

#define DEMOTION_SPEC_MAX	4096	/* longest override spec, in bytes */

enum mem_tier_source {
	MEM_TIERS_SYSFS,	/* devices/virtual/memory_tiering */
	MEM_TIERS_DERIVED,	/* mem_tiers_derive() */
};

struct mem_node {
	bool has_cpus;
	bool has_memory;
	int tier;		/* N of memory_tierN, or MEMTIER_NONE */
	int adistance;		/* tier << MEMTIER_CHUNK_BITS, or -1 */
	uint64_t mem_total;	/* bytes (nodeN/meminfo MemTotal), 0: unknown */
	int distance[MEM_MAX_NODES];	/* from this node to each (nodeN/distance) */
};

/*
 * What sysfs says about the machine's nodes.  node[] is meaningful for the
 * nodes in `nodes` only; a node has a tier when it has memory (and, with
 * sysfs tiers, when memory_tiering lists it).
 */
struct mem_topology {
	uint64_t nodes;			/* online nodes */
	enum mem_tier_source source;
	struct mem_node node[MEM_MAX_NODES];
};

/*
 * Where each node's cold memory goes.  preferred[n] is what the kernel
 * calls node_demotion[n].preferred: the nodes of the next slower tier at
 * the smallest distance from n, one of which takes each demoted folio
 * (demotion_next()).  allowed[n] is where a folio may go when the
 * preferred nodes are full: every node of every slower tier (the kernel's
 * lower_tier_mask), or for an override every node reachable along its
 * arrows.  A node of the slowest tier has neither.  The graph of both has
 * no cycle (demotion_acyclic()).
 */
struct demotion_map {
	uint64_t nodes;				/* the memory nodes it covers */
	uint64_t preferred[MEM_MAX_NODES];
	uint64_t allowed[MEM_MAX_NODES];
	bool override;				/* from demotion_override_parse() */
};

/* A set of nodes as one word: node n is bit n (n < MEM_MAX_NODES). */
static inline uint64_t mem_node_bit(unsigned n)
{
	return 1ull << n;
}

/* Nodes lo..hi (both < MEM_MAX_NODES) as a mask. */
static inline uint64_t mem_node_range(unsigned lo, unsigned hi)
{
	uint64_t upto = hi + 1 >= MEM_MAX_NODES ? ~0ull : mem_node_bit(hi + 1) - 1;

	return upto & ~(mem_node_bit(lo) - 1);
}

/* The first node of mask at or after n, or MEM_MAX_NODES. */
static inline unsigned mem_node_next(uint64_t mask, unsigned n)
{
	mask = n >= MEM_MAX_NODES ? 0 : mask & ~(mem_node_bit(n) - 1);
	return mask ? (unsigned)__builtin_ctzll(mask) : MEM_MAX_NODES;
}

/* Each node n of mask, in order of id (mask is read at each step). */
#define for_each_mem_node(n, mask)					\
	for ((n) = mem_node_next((mask), 0); (n) < MEM_MAX_NODES;	\
	     (n) = mem_node_next((mask), (n) + 1))

/* A blank of a sysfs file or a spec (a newline too). */
static inline bool mem_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* memory_tiers.c: the topology, the tiers, the kernel's targets. */

/*
 * A decimal at *p (not past end) into *v, saturating at 10^9, *p moved
 * past it: false, *p unmoved, when *p is no digit.
 */
bool mem_number_next(const char **p, const char *end, unsigned long *v);

/*
 * Read the topology under root (NULL: sysfs_root(), i.e. USWAP_SYSFS_ROOT
 * or /sys): devices/system/node/{online,has_cpu,has_memory},
 * nodeN/{cpulist,meminfo,distance}, and the tiers from
 * devices/virtual/memory_tiering/memory_tierN/nodelist, else derived
 * (mem_tiers_derive()).  A machine without devices/system/node (a kernel
 * without NUMA) is one node 0 with CPUs and memory.  Returns 0, or
 * -EINVAL / -ERANGE with one line in err naming the file and what is
 * wrong in it (-ERANGE: a node id of MEM_MAX_NODES or more); *t is then
 * meaningless.  Reads files into buffers on the stack; no malloc.
 */
int mem_topology_read(const char *root, struct mem_topology *t, char *err,
		      size_t errlen);

/*
 * Put the memory nodes of t into tiers from what sysfs always has, for
 * kernels without memory_tiering (before 6.1) or where it is not
 * mounted.  Nodes with CPUs are tier MEMTIER_DRAM; a node without CPUs is
 * slower: tier MEMTIER_DRAM + 1 + r, where r ranks its distance from the
 * nearest node with CPUs among the distinct such distances of CPU-less
 * nodes (the nearest are r = 0).  With no CPU node at all, every memory
 * node is MEMTIER_DRAM.  Sets t->source to MEM_TIERS_DERIVED.
 */
void mem_tiers_derive(struct mem_topology *t);

/*
 * The kernel's demotion targets for t into *d (see struct demotion_map):
 * each memory node demotes to the nodes of the next slower non-empty tier
 * at its smallest distance (every such node: the caller picks one with
 * demotion_next()).  Only online nodes with memory and a tier take part;
 * d->nodes is that set.  Returns 0.
 */
int demotion_targets_compute(const struct mem_topology *t,
			     struct demotion_map *d);

/*
 * The target for a folio of node: the (rr mod k)-th of its k preferred
 * nodes, in order of id, so that a counter rr spreads demotion over them
 * in turn.  -1 when node demotes nowhere or is out of range.
 */
int demotion_next(const struct demotion_map *d, int node, unsigned rr);

/* demotion_override.c: the --demotion SPEC, the cycle check. */

/*
 * Parse an override of the demotion targets into *d:
 *
 *	SPEC  = "none" | RULE [";" RULE]...
 *	RULE  = NODE ">" NODES		NODE demotes to NODES
 *	NODES = N[-M][,N[-M]]...	a node list, as sysfs cpulist
 *
 * e.g. "0>2;1>2;2>3" or "0>2,3; 1>4-5" (a source is one node: "0-1>4"
 * is refused).  At most DEMOTION_SPEC_MAX bytes.  Blanks around numbers and separators are ignored; empty
 * rules are skipped.  The spec is the whole map: a node that is no
 * rule's source does not demote; "none" turns demotion off.  Every node
 * named must be online with memory; a source appears once; no node
 * demotes to itself; and the arrows have no cycle.  Tiers are not
 * checked: an override may demote to any node.  allowed[n] becomes every
 * node reachable from n.  Returns 0, or -EINVAL with one line in err,
 * prefixed with --demotion "SPEC": (e.g. --demotion "0>2;2>0": demotion
 * 0->2->0 is a cycle); *d is written only on success.
 */
int demotion_override_parse(const char *spec, const struct mem_topology *t,
			    struct demotion_map *d, char *err, size_t errlen);

/* No cycle in the graph of preferred and allowed arrows. */
bool demotion_acyclic(const struct demotion_map *d);

/*
 * Write d's preferred arrows as an override SPEC ("0>2;1>2;2>3", "none")
 * into buf, NUL-terminated: its length, or -ENOSPC when it does not fit.
 * An override map prints back to a spec that parses to the same map.
 */
int demotion_format(const struct demotion_map *d, char *buf, size_t len);

#endif /* USWAP_MEMORY_TIERS_H */
