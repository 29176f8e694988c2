// SPDX-License-Identifier: MIT
/*
 * demotion_fuzz.c - the demotion override parser (src/tiers/demotion_override.c)
 * and the demotion target computation (src/tiers/memory_tiers.c) against a
 * reference model.
 *
 * The first byte h picks what to fuzz (h & 3) and the topology; for modes
 * 0..2 the next two bytes are the online and memory masks of nodes 0..7
 * (0 online means all), and h & 0x80 adds node 63 with memory.
 *
 *	0, 1	the rest of the input is a SPEC, parsed with a message buffer
 *		of 300 bytes (mode 0) or of (h >> 2) & 31 bytes (mode 1,
 *		with a canary after it)
 *	2	structured: a style byte, a start byte, then byte n is the
 *		target mask of node n (n < 8); the harness writes the SPEC
 *		itself (ranges, blanks, rule order as the style and start
 *		say), perhaps with the first rule's source repeated
 *	3	a random topology: nodes, CPUs, memory, tiers and distances
 *		from the input (mem_tiers_derive() when h & 4), then
 *		demotion_targets_compute()
 *
 * Checks, from what memory_tiers.h promises:
 *
 *  - the parser returns 0 or -EINVAL; on failure it leaves the map alone,
 *    writes a NUL-terminated message within errlen and nothing past it,
 *    starting --demotion "; on success the map covers the memory nodes,
 *    names only them, has no self arrow and no cycle, allowed is exactly
 *    what is reachable along preferred, and it prints back to a spec that
 *    parses to the same map;
 *  - structured: accepted exactly when every node named is online with
 *    memory, no source repeats, no node points at itself and the graph
 *    has no cycle (a transitive closure), and then preferred is the
 *    input; a refusal names a real fault: a node named that is not
 *    online or has no memory, a repeated source, or a cycle (a self arrow
 *    included) each of whose arrows is in the input;
 *  - computed: for every node with memory and a tier, preferred is the
 *    nodes of the next slower tier at the smallest distance and allowed
 *    every slower node, nothing for the others, no cycle; demotion_next()
 *    hands out each preferred node once in k turns; the printed map parses
 *    back to the same preferred arrows; derived tiers put CPU nodes at
 *    MEMTIER_DRAM and CPU-less ones below, ranked by distance to the
 *    nearest CPU, equal distances sharing a tier, with no gap.
 *
 * Any mismatch abort()s.  Built with tests/fuzz/replay.c by make, for
 * libFuzzer by make fuzz.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzlib.h"
#include "memory_tiers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BIT(n)		(1ull << (n))
#define SPEC_MAX	(DEMOTION_SPEC_MAX + 64)

struct input {
	const uint8_t *p;
	size_t left;
};

/* The next input byte; 0 past the end. */
static uint8_t byte(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static uint64_t memory_nodes(const struct mem_topology *t)
{
	uint64_t m = 0;

	for (unsigned n = 0; n < MEM_MAX_NODES; n++)
		if ((t->nodes & BIT(n)) && t->node[n].has_memory)
			m |= BIT(n);
	return m;
}

/* Nodes 0..7 from two bytes (and 63 with memory when h & 0x80). */
static void small_topology(uint8_t h, struct input *in, struct mem_topology *t)
{
	uint8_t online = byte(in), memory = byte(in);

	memset(t, 0, sizeof(*t));
	t->nodes = online ? online : 0xff;
	for (unsigned n = 0; n < 8; n++)
		t->node[n].has_memory = (t->nodes & BIT(n)) && (memory & BIT(n));
	if (h & 0x80) {
		t->nodes |= BIT(63);
		t->node[63].has_memory = true;
	}
}

/* Every node reachable from each along edges; true when one reaches itself. */
static bool closure(const uint64_t *edges, uint64_t *reach)
{
	bool changed = true, cyclic = false;

	memcpy(reach, edges, sizeof(uint64_t) * MEM_MAX_NODES);
	while (changed) {
		changed = false;
		for (unsigned n = 0; n < MEM_MAX_NODES; n++) {
			uint64_t r = reach[n];

			for (unsigned v = 0; v < MEM_MAX_NODES; v++)
				if (reach[n] & BIT(v))
					r |= reach[v];
			changed |= r != reach[n];
			reach[n] = r;
		}
	}
	for (unsigned n = 0; n < MEM_MAX_NODES; n++)
		cyclic |= !!(reach[n] & BIT(n));
	return cyclic;
}

/* What an accepted override must be. */
static void check_accepted(const struct mem_topology *t,
			   const struct demotion_map *d)
{
	uint64_t mem = memory_nodes(t), reach[MEM_MAX_NODES];
	struct demotion_map again;
	char text[SPEC_MAX], err[300];

	CHECK(d->override && d->nodes == mem);
	CHECK(!closure(d->preferred, reach));
	CHECK(demotion_acyclic(d));
	for (unsigned n = 0; n < MEM_MAX_NODES; n++) {
		CHECK(!(d->preferred[n] & BIT(n)));
		CHECK(!(d->preferred[n] & ~mem) && !(d->allowed[n] & ~mem));
		CHECK(!d->preferred[n] || (mem & BIT(n)));
		CHECK(d->allowed[n] == reach[n]);
	}
	CHECK(demotion_format(d, text, sizeof(text)) > 0);
	CHECK(demotion_override_parse(text, t, &again, err, sizeof(err)) == 0);
	CHECK(!memcmp(d, &again, sizeof(again)));
}

/* Modes 0 and 1: the input is the spec. */
static void fuzz_text(uint8_t h, struct input *in)
{
	static char spec[SPEC_MAX + 1];
	struct mem_topology t;
	struct demotion_map d, before;
	char err[300 + 16];
	size_t errlen = (h & 3) ? (h >> 2) & 31 : 300, len;
	int ret;

	small_topology(h, in, &t);
	len = in->left < SPEC_MAX ? in->left : SPEC_MAX;
	memcpy(spec, in->p, len);
	spec[len] = 0;
	memset(&d, 0xa5, sizeof(d));
	before = d;
	memset(err, 'x', sizeof(err));
	ret = demotion_override_parse(spec, &t, &d, err, errlen);
	CHECK(err[errlen] == 'x');
	if (ret) {
		CHECK(ret == -EINVAL);
		CHECK(!memcmp(&d, &before, sizeof(d)));
		CHECK(!errlen || memchr(err, 0, errlen));
		CHECK(errlen < 12 || !strncmp(err, "--demotion \"", 11));
		return;
	}
	check_accepted(&t, &d);
}

/* Append the node list of mask at buf + n, with ranges and blanks if asked. */
static size_t put_list(char *buf, size_t n, size_t len, uint64_t mask,
		       bool ranges, bool blanks)
{
	bool first = true;

	for (unsigned lo = 0; lo < MEM_MAX_NODES; lo++) {
		unsigned hi = lo;

		if (!(mask & BIT(lo)))
			continue;
		while (ranges && hi + 1 < MEM_MAX_NODES && (mask & BIT(hi + 1)))
			hi++;
		n += (size_t)snprintf(buf + n, len - n, "%s%u",
				      first ? "" : (blanks ? " , " : ","), lo);
		if (hi > lo)
			n += (size_t)snprintf(buf + n, len - n, "%s-%s%u",
					      blanks ? " " : "", blanks ? " " : "", hi);
		first = false;
		lo = hi;
	}
	return n;
}

/* msg is "node N" followed by exactly tail: N, else -1. */
static long node_msg(const char *msg, const char *tail)
{
	unsigned long a;
	char *end;

	if (strncmp(msg, "node ", 5))
		return -1;
	a = strtoul(msg + 5, &end, 10);
	if (end == msg + 5 || strcmp(end, tail) || a >= MEM_MAX_NODES)
		return -1;
	return (long)a;
}

/*
 * msg is "demotion a->b->...->a is a cycle", each arrow one of edges, with
 * " (a node cannot demote to itself)" exactly when it is one arrow.
 */
static void check_cycle_msg(const char *msg, const uint64_t *edges)
{
	unsigned long a, b, first;
	unsigned arrows = 0;
	char *end;

	CHECK(!strncmp(msg, "demotion ", 9));
	first = a = strtoul(msg + 9, &end, 10);
	CHECK(!strncmp(end, "->", 2));
	while (!strncmp(end, "->", 2)) {
		b = strtoul(end + 2, &end, 10);
		CHECK(a < MEM_MAX_NODES && b < MEM_MAX_NODES && (edges[a] & BIT(b)));
		a = b;
		arrows++;
	}
	CHECK(a == first);
	CHECK(!strcmp(end, arrows == 1 ? " is a cycle (a node cannot demote to itself)" :
		      " is a cycle"));
}

/* A refusal must name a real fault of the input. */
static void check_refusal(const char *err, const struct mem_topology *t,
			  const uint64_t *edges, uint64_t named, uint64_t repeated)
{
	const char *msg = strstr(err, "\": "), *gone;
	unsigned long a;
	char *end;
	long v;

	CHECK(msg);
	msg += 3;
	gone = strstr(msg, " does not exist (online nodes: ");
	if (gone) {
		CHECK(!strncmp(msg, "node ", 5));
		a = strtoul(msg + 5, &end, 10);
		CHECK(end == gone && a < MEM_MAX_NODES && (named & BIT(a)) &&
		      !(t->nodes & BIT(a)));
	} else if ((v = node_msg(msg, " has no memory")) >= 0) {
		CHECK((named & BIT(v)) && (t->nodes & BIT(v)) && !t->node[v].has_memory);
	} else if ((v = node_msg(msg, " is the source of two rules")) >= 0) {
		CHECK(repeated & BIT(v));
	} else {
		check_cycle_msg(msg, edges);
	}
}

/* Mode 2: edges from the input, written out as a spec here. */
static void fuzz_edges(uint8_t h, struct input *in)
{
	uint64_t edges[MEM_MAX_NODES] = { 0 }, reach[MEM_MAX_NODES];
	uint64_t named = 0, repeated = 0;
	static char spec[SPEC_MAX];
	struct mem_topology t;
	struct demotion_map d;
	unsigned first = 0, k, src;
	uint8_t style, start;
	char err[300];
	size_t n = 0;
	bool valid;
	int ret;

	small_topology(h, in, &t);
	style = byte(in);
	start = byte(in) & 7;
	for (unsigned i = 0; i < 8; i++)
		edges[i] = byte(in);
	if (h & 0x80)
		edges[63] = (style & 0x40 ? BIT(7) : 0) | (style & 0x80 ? BIT(63) : 0);
	for (k = 0; k < 9; k++) {
		src = k < 8 ? (start + k) & 7 : 63;
		if (!edges[src])
			continue;
		if (!n)
			first = src;
		n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%s%u%s>%s",
				      n ? (style & 2 ? " ; " : ";") : "", src,
				      style & 2 ? " " : "", style & 2 ? "\t" : "");
		n = put_list(spec, n, sizeof(spec), edges[src], style & 1, style & 2);
		named |= BIT(src) | edges[src];
	}
	if ((style & 4) && n) {
		/* the first source again, to a node it already points at */
		n += (size_t)snprintf(spec + n, sizeof(spec) - n, ";%u>%d", first,
				      __builtin_ctzll(edges[first]));
		repeated = BIT(first);
	}
	if (!n)
		snprintf(spec, sizeof(spec), "%s", style & 8 ? "none" : "");
	valid = n ? !(named & ~memory_nodes(&t)) && !repeated && !closure(edges, reach) :
		(style & 8);
	ret = demotion_override_parse(spec, &t, &d, err, sizeof(err));
	CHECK(valid == (ret == 0));
	if (ret) {
		CHECK(ret == -EINVAL);
		if (n)
			check_refusal(err, &t, edges, named, repeated);
		return;
	}
	check_accepted(&t, &d);
	for (unsigned i = 0; i < MEM_MAX_NODES; i++)
		CHECK(d.preferred[i] == edges[i]);
}

/* Mode 3: a random topology of up to 12 nodes, ids spread over 0..63. */
static void random_topology(uint8_t h, struct input *in, struct mem_topology *t)
{
	uint8_t spread = byte(in);
	unsigned ids[12], nr = 1 + byte(in) % 12;

	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < nr; i++) {
		ids[i] = spread & 1 ? (i * 5 + spread) % 64 : i;
		while (t->nodes & BIT(ids[i]))
			ids[i] = (ids[i] + 1) % 64;
		t->nodes |= BIT(ids[i]);
	}
	for (unsigned i = 0; i < nr; i++) {
		struct mem_node *nd = &t->node[ids[i]];
		uint8_t b = byte(in);

		nd->has_cpus = b & 1;
		nd->has_memory = !(b & 2);
		nd->tier = nd->has_memory ? MEMTIER_DRAM + (b >> 2) % 6 : MEMTIER_NONE;
		if (b >= 0xf0)
			nd->tier = MEMTIER_NONE;	/* memory, but in no tier */
		nd->adistance = nd->tier < 0 ? -1 : nd->tier << MEMTIER_CHUNK_BITS;
		for (unsigned j = 0; j < nr; j++)
			nd->distance[ids[j]] = i == j ? MEM_LOCAL_DISTANCE :
				11 + byte(in) % (h & 8 ? 4 : 40);
	}
}

/* The derived tiers follow the rule of mem_tiers_derive(). */
static void check_derived(const struct mem_topology *t)
{
	uint64_t cpus = 0, slow = 0, used = 0;
	int near[MEM_MAX_NODES];

	for (unsigned n = 0; n < MEM_MAX_NODES; n++)
		if ((t->nodes & BIT(n)) && t->node[n].has_cpus)
			cpus |= BIT(n);
	for (unsigned n = 0; n < MEM_MAX_NODES; n++) {
		const struct mem_node *nd = &t->node[n];

		if (!(t->nodes & BIT(n)))
			continue;
		if (!nd->has_memory) {
			CHECK(nd->tier == MEMTIER_NONE && nd->adistance == -1);
			continue;
		}
		CHECK(nd->adistance == nd->tier << MEMTIER_CHUNK_BITS);
		if (nd->has_cpus || !cpus) {
			CHECK(nd->tier == MEMTIER_DRAM);
			continue;
		}
		near[n] = INT_MAX;
		for (unsigned c = 0; c < MEM_MAX_NODES; c++)
			if ((cpus & BIT(c)) && t->node[c].distance[n] < near[n])
				near[n] = t->node[c].distance[n];
		CHECK(nd->tier > MEMTIER_DRAM && nd->tier <= MEMTIER_DRAM + 64);
		slow |= BIT(n);
		used |= BIT(nd->tier - MEMTIER_DRAM - 1);
	}
	for (unsigned a = 0; a < MEM_MAX_NODES; a++)
		for (unsigned b = 0; b < MEM_MAX_NODES; b++)
			if ((slow & BIT(a)) && (slow & BIT(b)))
				CHECK((near[a] < near[b]) ==
				      (t->node[a].tier < t->node[b].tier));
	CHECK((used & (used + 1)) == 0);	/* 5, 6, ... without a gap */
}

/* demotion_next() gives each of the k preferred nodes once in k turns. */
static void check_next(const struct demotion_map *d, unsigned n, unsigned base)
{
	uint64_t pref = d->preferred[n], seen = 0;
	unsigned k = (unsigned)__builtin_popcountll(pref);

	if (!k) {
		CHECK(demotion_next(d, (int)n, base) == -1);
		return;
	}
	for (unsigned rr = base; rr < base + k; rr++) {
		int v = demotion_next(d, (int)n, rr);

		CHECK(v >= 0 && (pref & BIT(v)) && !(seen & BIT(v)));
		seen |= BIT(v);
	}
}

/* The kernel's rule for node n of tiered, into *pref and *allowed. */
static void ref_targets(const struct mem_topology *t, uint64_t tiered,
			unsigned n, uint64_t *pref, uint64_t *allowed)
{
	int next = INT_MAX, best = INT_MAX;

	*pref = *allowed = 0;
	for (unsigned x = 0; (tiered & BIT(n)) && x < MEM_MAX_NODES; x++) {
		int tier = t->node[x].tier, dist = t->node[n].distance[x];

		if (!(tiered & BIT(x)) || tier <= t->node[n].tier)
			continue;
		*allowed |= BIT(x);
		if (tier < next) {
			next = tier;
			best = INT_MAX;
			*pref = 0;
		}
		if (tier == next && dist < best) {
			best = dist;
			*pref = 0;
		}
		if (tier == next && dist == best)
			*pref |= BIT(x);
	}
}

static void fuzz_compute(uint8_t h, struct input *in)
{
	struct mem_topology t;
	struct demotion_map d, parsed;
	uint64_t tiered = 0, pref, allowed;
	char text[SPEC_MAX], err[300];

	random_topology(h, in, &t);
	if (h & 4) {
		mem_tiers_derive(&t);
		CHECK(t.source == MEM_TIERS_DERIVED);
		check_derived(&t);
	}
	memset(&d, 0xa5, sizeof(d));
	CHECK(demotion_targets_compute(&t, &d) == 0);
	CHECK(!d.override && demotion_acyclic(&d));
	for (unsigned n = 0; n < MEM_MAX_NODES; n++)
		if ((t.nodes & BIT(n)) && t.node[n].has_memory &&
		    t.node[n].tier != MEMTIER_NONE)
			tiered |= BIT(n);
	CHECK(d.nodes == tiered);
	for (unsigned n = 0; n < MEM_MAX_NODES; n++) {
		ref_targets(&t, tiered, n, &pref, &allowed);
		CHECK(d.preferred[n] == pref && d.allowed[n] == allowed);
		check_next(&d, n, byte(in));
	}
	CHECK(demotion_format(&d, text, sizeof(text)) > 0);
	CHECK(demotion_override_parse(text, &t, &parsed, err, sizeof(err)) == 0);
	for (unsigned n = 0; n < MEM_MAX_NODES; n++)
		CHECK(parsed.preferred[n] == d.preferred[n] &&
		      !(parsed.allowed[n] & ~d.allowed[n]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	uint8_t h = byte(&in);

	switch (h & 3) {
	case 0:
	case 1:
		fuzz_text(h, &in);
		break;
	case 2:
		fuzz_edges(h, &in);
		break;
	default:
		fuzz_compute(h, &in);
		break;
	}
	return 0;
}
