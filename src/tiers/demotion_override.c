// SPDX-License-Identifier: MIT
/*
 * demotion_override.c - a user's override of the demotion targets
 * (--demotion SPEC): the parser of the SPEC, the cycle check that every
 * demotion map must pass, and a map written back as a SPEC.
 *
 * memory_tiers.c computes the targets as the kernel's mm/memory-tiers.c
 * does (establish_demotion_targets()), from the tiers alone.  The kernel
 * takes no override; uswap does, for a machine where the tiers it derives
 * are wrong (docs/tiers.md, "Overriding the targets"):
 *
 *	SPEC  = "none" | RULE [";" RULE]...	"0>2;1>2;2>3"
 *	RULE  = NODE ">" NODES
 *	NODES = N[-M][,N[-M]]...
 *
 * A spec is the whole map, checked before anything is applied: every node
 * it names must be online with memory, a source appears once, and the
 * arrows have no cycle.  A cycle is refused by name ("demotion 0->2->0 is
 * a cycle"): cycle_find() returns the cycle it met, not only that there
 * is one, and demotion_acyclic() is the same search, which
 * demotion_targets_compute() asserts on the kernel's map too.  A bad spec
 * gets one message, prefixed with the spec (spec_fail()).
 *
 * Pure logic, run once at setup on the stack: nothing here allocates.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "memory_tiers.h"

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
		for (hi = lo; hi + 1 < MEM_MAX_NODES && (mask & mem_node_bit(hi + 1));)
			hi++;
		mask &= ~mem_node_range(lo, hi);
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
	for_each_mem_node(v, s->edges[u]) {
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

	if (*done & mem_node_bit(n))
		return memo[n];
	for_each_mem_node(v, edges[n])
		r |= reach(edges, v, memo, done);
	memo[n] = r;
	*done |= mem_node_bit(n);
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
	while (ps->p < ps->end && mem_is_blank(*ps->p))
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
	if (!mem_number_next(&ps->p, ps->end, v))
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
	want = mem_node_range((unsigned)lo, (unsigned)MIN(hi, MEM_MAX_NODES - 1ul));
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
		*targets |= mem_node_range((unsigned)lo, (unsigned)hi);
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
	if (ps->sources & mem_node_bit((unsigned)src))
		return spec_fail(ps, "node %lu is the source of two rules", src);
	ret = spec_targets(ps, &targets);
	if (ret)
		return ret;
	if (targets & mem_node_bit((unsigned)src))
		return spec_fail(ps, "demotion %lu->%lu is a cycle (a node cannot demote to itself)",
				 src, src);
	ps->sources |= mem_node_bit((unsigned)src);
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
	while (s < end && mem_is_blank(*s))
		s++;
	while (end > s && mem_is_blank(end[-1]))
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
	for_each_mem_node(n, t->nodes) {
		if (t->node[n].has_memory)
			ps.memory |= mem_node_bit(n);
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
	for_each_mem_node(n, ps.sources)
		ps.m.allowed[n] = reach(ps.m.preferred, n, ps.m.allowed, &done);
	assert(demotion_acyclic(&ps.m));
	*d = ps.m;
	return 0;
}

/* ---- printing the map --------------------------------------------------- */

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
