// SPDX-License-Identifier: MIT
/*
 * memory_tiers.c - memory tiers and demotion targets (src/tiers/memory_tiers.c)
 * against the fixture sysfs trees of tests/fixtures/sysfs-tiers (two
 * sockets; three tiers; four sockets with a memory node each; explicit
 * memory_tiering; sparse node ids), bad sysfs files, the override parser
 * (src/tiers/demotion_override.c) with its exact messages, and random overrides
 * against a reference model of reachability.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unitlib.h"
#include "memory_tiers.h"

#define CHECK(cond, ...)			\
	do {					\
		if (!(cond))			\
			t_fail(__VA_ARGS__);	\
	} while (0)

#define GIB	(1ull << 30)
#define BIT(n)	(1ull << (n))

static char fixtures[1024];

/* tests/fixtures/sysfs-tiers: from the current directory, else above the binary. */
static void find_fixtures(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	char *slash;

	if (!stat("tests/fixtures/sysfs-tiers/three", &st)) {
		snprintf(fixtures, sizeof(fixtures), "tests/fixtures/sysfs-tiers");
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		t_fail("cannot find tests/fixtures/sysfs-tiers (run from the repository)");
	exe[n] = 0;
	while ((slash = strrchr(exe, '/')) && slash != exe) {
		*slash = 0;
		snprintf(path, sizeof(path), "%.900s/tests/fixtures/sysfs-tiers/three", exe);
		if (!stat(path, &st)) {
			snprintf(fixtures, sizeof(fixtures), "%.900s/tests/fixtures/sysfs-tiers", exe);
			return;
		}
	}
	t_fail("cannot find tests/fixtures/sysfs-tiers (run from the repository)");
}

static const char *fixture(const char *name)
{
	static char path[1100];

	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	return path;
}

static void read_fixture(const char *name, struct mem_topology *t)
{
	char err[256] = "";
	int ret = mem_topology_read(fixture(name), t, err, sizeof(err));

	CHECK(ret == 0, "%s: mem_topology_read %d: %s", name, ret, err);
}

static void compute(const char *name, const struct mem_topology *t,
		    struct demotion_map *d)
{
	CHECK(demotion_targets_compute(t, d) == 0, "%s: compute", name);
	CHECK(demotion_acyclic(d), "%s: computed map has a cycle", name);
	CHECK(!d->override, "%s: computed map marked override", name);
}

static void check_tiers(const char *name, const struct mem_topology *t,
			const int *tier, unsigned nr)
{
	for (unsigned n = 0; n < nr; n++) {
		CHECK(t->node[n].tier == tier[n], "%s: node %u tier %d, expected %d",
		      name, n, t->node[n].tier, tier[n]);
		CHECK(t->node[n].adistance == (tier[n] < 0 ? -1 : tier[n] << MEMTIER_CHUNK_BITS),
		      "%s: node %u adistance %d", name, n, t->node[n].adistance);
	}
}

/* preferred[n] == want[n] for n < nr, and nothing for the rest. */
static void check_preferred(const char *name, const struct demotion_map *d,
			    const uint64_t *want, unsigned nr)
{
	for (unsigned n = 0; n < MEM_MAX_NODES; n++) {
		uint64_t w = n < nr ? want[n] : 0;

		CHECK(d->preferred[n] == w, "%s: node %u demotes to %#llx, expected %#llx",
		      name, n, (unsigned long long)d->preferred[n], (unsigned long long)w);
	}
}

static void check_format(const char *name, const struct demotion_map *d,
			 const char *want)
{
	char buf[512];
	int n = demotion_format(d, buf, sizeof(buf));

	CHECK(n == (int)strlen(want) && !strcmp(buf, want), "%s: format \"%s\" (%d), expected \"%s\"",
	      name, buf, n, want);
}

/* ---- fixtures ----------------------------------------------------------- */

/* (a) Two sockets: one tier, nobody demotes. */
static void test_two(void)
{
	static const int tier[] = { 4, 4 };
	static const uint64_t none[2];
	struct mem_topology t;
	struct demotion_map d;

	read_fixture("two", &t);
	CHECK(t.nodes == 0x3 && t.source == MEM_TIERS_DERIVED, "two: nodes %#llx source %d",
	      (unsigned long long)t.nodes, t.source);
	CHECK(t.node[0].has_cpus && t.node[1].has_cpus && t.node[0].has_memory &&
	      t.node[1].has_memory, "two: cpus/memory");
	CHECK(t.node[0].mem_total == 32 * GIB && t.node[1].mem_total == 32 * GIB,
	      "two: MemTotal %llu", (unsigned long long)t.node[0].mem_total);
	CHECK(t.node[0].distance[0] == 10 && t.node[0].distance[1] == 21 &&
	      t.node[1].distance[0] == 21, "two: distances");
	check_tiers("two", &t, tier, 2);
	compute("two", &t, &d);
	CHECK(d.nodes == 0x3, "two: map nodes");
	check_preferred("two", &d, none, 2);
	CHECK(!d.allowed[0] && !d.allowed[1], "two: allowed");
	CHECK(demotion_next(&d, 0, 0) == -1 && demotion_next(&d, 1, 7) == -1, "two: next");
	check_format("two", &d, "none");
}

/* (b) Three tiers: 0,1 DRAM -> 2 (PMEM near both) -> 3 (CXL behind 2). */
static void test_three(void)
{
	static const int tier[] = { 4, 4, 5, 6 };
	static const uint64_t want[] = { BIT(2), BIT(2), BIT(3), 0 };
	struct mem_topology t;
	struct demotion_map d;

	read_fixture("three", &t);
	CHECK(t.nodes == 0xf && t.source == MEM_TIERS_DERIVED, "three: nodes/source");
	CHECK(!t.node[2].has_cpus && !t.node[3].has_cpus && t.node[3].has_memory,
	      "three: CPU-less memory nodes");
	CHECK(t.node[3].mem_total == 256 * GIB, "three: node 3 MemTotal");
	check_tiers("three", &t, tier, 4);
	compute("three", &t, &d);
	check_preferred("three", &d, want, 4);
	CHECK(d.allowed[0] == (BIT(2) | BIT(3)) && d.allowed[1] == (BIT(2) | BIT(3)) &&
	      d.allowed[2] == BIT(3) && !d.allowed[3], "three: allowed");
	for (unsigned rr = 0; rr < 5; rr++)
		CHECK(demotion_next(&d, 0, rr) == 2 && demotion_next(&d, 2, rr) == 3 &&
		      demotion_next(&d, 3, rr) == -1, "three: next rr %u", rr);
	CHECK(demotion_next(&d, -1, 0) == -1 && demotion_next(&d, 64, 0) == -1,
	      "three: next out of range");
	check_format("three", &d, "0>2;1>2;2>3");
}

/* (c) Four sockets, memory node 4+i on socket i: each to its own only. */
static void test_four_socket(void)
{
	static const int tier[] = { 4, 4, 4, 4, 5, 5, 5, 5 };
	static const uint64_t want[] = { BIT(4), BIT(5), BIT(6), BIT(7), 0, 0, 0, 0 };
	struct mem_topology t;
	struct demotion_map d;

	read_fixture("four-socket", &t);
	CHECK(t.nodes == 0xff, "four-socket: nodes");
	check_tiers("four-socket", &t, tier, 8);
	compute("four-socket", &t, &d);
	check_preferred("four-socket", &d, want, 8);
	for (unsigned n = 0; n < 8; n++)
		CHECK(d.allowed[n] == (n < 4 ? 0xf0u : 0), "four-socket: allowed %u", n);
	check_format("four-socket", &d, "0>4;1>5;2>6;3>7");
}

/*
 * (d) memory_tiering says 2 (tier 9) is faster than 3 (tier 22), where
 * the distances alone put them in one tier, both preferred.
 */
static void test_explicit(void)
{
	static const int sysfs_tier[] = { 4, 4, 9, 22 }, derived_tier[] = { 4, 4, 5, 5 };
	static const uint64_t chain[] = { BIT(2), BIT(2), BIT(3), 0 };
	static const uint64_t both[] = { BIT(2) | BIT(3), BIT(2) | BIT(3), 0, 0 };
	struct mem_topology t;
	struct demotion_map d;

	read_fixture("explicit", &t);
	CHECK(t.source == MEM_TIERS_SYSFS, "explicit: tiers not from sysfs");
	check_tiers("explicit", &t, sysfs_tier, 4);
	compute("explicit", &t, &d);
	check_preferred("explicit", &d, chain, 4);
	CHECK(d.allowed[0] == 0xc && d.allowed[2] == 0x8 && !d.allowed[3], "explicit: allowed");
	check_format("explicit", &d, "0>2;1>2;2>3");

	mem_tiers_derive(&t);
	CHECK(t.source == MEM_TIERS_DERIVED, "explicit: derived source");
	check_tiers("explicit derived", &t, derived_tier, 4);
	compute("explicit derived", &t, &d);
	check_preferred("explicit derived", &d, both, 4);
	for (unsigned rr = 0; rr < 6; rr++)
		CHECK(demotion_next(&d, 1, rr) == (rr % 2 ? 3 : 2), "explicit: round robin %u", rr);
	check_format("explicit derived", &d, "0>2-3;1>2-3");
}

/*
 * (e) Online nodes 0,2,3: distance rows have three columns, node 3 has
 * CPUs and no memory; no has_cpu or has_memory files (cpulist, meminfo).
 */
static void test_sparse(void)
{
	static const int tier[] = { 4, MEMTIER_NONE, 5, MEMTIER_NONE };
	static const uint64_t want[] = { BIT(2), 0, 0, 0 };
	struct mem_topology t;
	struct demotion_map d;

	read_fixture("sparse", &t);
	CHECK(t.nodes == 0xd, "sparse: nodes %#llx", (unsigned long long)t.nodes);
	CHECK(t.node[0].has_cpus && !t.node[2].has_cpus && t.node[3].has_cpus,
	      "sparse: cpus from cpulist");
	CHECK(t.node[0].has_memory && t.node[2].has_memory && !t.node[3].has_memory,
	      "sparse: memory from meminfo");
	CHECK(t.node[0].mem_total == 8 * GIB && t.node[2].mem_total == 16 * GIB &&
	      t.node[3].mem_total == 0, "sparse: MemTotal");
	CHECK(t.node[0].distance[2] == 17 && t.node[0].distance[3] == 21 &&
	      t.node[3].distance[0] == 21 && t.node[3].distance[2] == 17 &&
	      t.node[2].distance[2] == 10, "sparse: distance columns follow online ids");
	check_tiers("sparse", &t, tier, 4);
	compute("sparse", &t, &d);
	CHECK(d.nodes == 0x5, "sparse: map nodes");
	check_preferred("sparse", &d, want, 4);
	check_format("sparse", &d, "0>2");
}

/* No devices/system/node (a kernel without NUMA), and USWAP_SYSFS_ROOT. */
static void test_roots(void)
{
	struct mem_topology t, u;
	struct demotion_map d;
	char err[256] = "";

	CHECK(mem_topology_read(fixture("no-such-tree"), &t, err, sizeof(err)) == 0,
	      "missing root: %s", err);
	CHECK(t.nodes == 1 && t.node[0].has_cpus && t.node[0].has_memory &&
	      t.node[0].tier == MEMTIER_DRAM && t.node[0].distance[0] == 10,
	      "missing root: one node");
	compute("missing root", &t, &d);
	check_format("missing root", &d, "none");

	read_fixture("three", &u);
	setenv("USWAP_SYSFS_ROOT", fixture("three"), 1);
	CHECK(mem_topology_read(NULL, &t, err, sizeof(err)) == 0, "env root: %s", err);
	unsetenv("USWAP_SYSFS_ROOT");
	CHECK(!memcmp(&t, &u, sizeof(t)), "env root: not the same as the fixture");
}

/* ---- bad sysfs files ---------------------------------------------------- */

static char tmp_root[256];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp_root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(tmp_root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	CHECK(f && fputs(text, f) >= 0 && !fclose(f), "write %s", path);
}

/* A two-node tree in tmp_root, then one file replaced; the read must fail. */
static void check_bad(const char *rel, const char *text, int want_ret,
		      const char *want_msg)
{
	struct mem_topology t;
	char cmd[600], err[256] = "", want[512];
	int ret;

	snprintf(tmp_root, sizeof(tmp_root), "/tmp/uswap-tiers-XXXXXX");
	CHECK(mkdtemp(tmp_root), "mkdtemp");
	put("devices/system/node/online", "0-1\n");
	put("devices/system/node/node0/distance", "10 20\n");
	put("devices/system/node/node1/distance", "20 10\n");
	put("devices/system/node/node0/cpulist", "0\n");
	put("devices/system/node/node1/cpulist", "\n");
	put("devices/virtual/memory_tiering/memory_tier4/nodelist", "0\n");
	put("devices/virtual/memory_tiering/memory_tier22/nodelist", "1\n");
	CHECK(mem_topology_read(tmp_root, &t, err, sizeof(err)) == 0, "good tree: %s", err);
	put(rel, text);
	ret = mem_topology_read(tmp_root, &t, err, sizeof(err));
	snprintf(want, sizeof(want), "%s/%s", tmp_root, want_msg);
	CHECK(ret == want_ret && !strcmp(err, want), "%s \"%s\": %d \"%s\", expected %d \"%s\"",
	      rel, text, ret, err, want_ret, want);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	CHECK(system(cmd) == 0, "rm %s", tmp_root);
}

static void test_bad_files(void)
{
	check_bad("devices/system/node/online", "0-64\n", -ERANGE,
		  "devices/system/node/online: node 64: at most 64 nodes are supported");
	check_bad("devices/system/node/online", "0-\n", -EINVAL,
		  "devices/system/node/online: expected a node list such as 0-3,5, found \"0-\"");
	check_bad("devices/system/node/node1/distance", "20\n", -EINVAL,
		  "devices/system/node/node1/distance: expected 2 distances of 1..65535 (one per online node), found \"20\"");
	check_bad("devices/system/node/node0/distance", "10 0\n", -EINVAL,
		  "devices/system/node/node0/distance: expected 2 distances of 1..65535 (one per online node), found \"10 0\"");
	check_bad("devices/system/node/node0/distance", "10 20 30\n", -EINVAL,
		  "devices/system/node/node0/distance: expected 2 distances of 1..65535 (one per online node), found \"10 20 30\"");
	check_bad("devices/virtual/memory_tiering/memory_tier5/nodelist", "2\n", -EINVAL,
		  "devices/virtual/memory_tiering/memory_tier5/nodelist: node 2 is not online");
	check_bad("devices/system/node/has_cpu", "0,x\n", -EINVAL,
		  "devices/system/node/has_cpu: expected a node list such as 0-3,5, found \"0,x\"");
}

/* A node in two tiers: which tier is read first depends on the directory. */
static void test_two_tiers(void)
{
	struct mem_topology t;
	char cmd[600], err[256] = "";

	snprintf(tmp_root, sizeof(tmp_root), "/tmp/uswap-tiers-XXXXXX");
	CHECK(mkdtemp(tmp_root), "mkdtemp");
	put("devices/system/node/online", "0-1\n");
	put("devices/virtual/memory_tiering/memory_tier4/nodelist", "0-1\n");
	put("devices/virtual/memory_tiering/memory_tier22/nodelist", "1\n");
	CHECK(mem_topology_read(tmp_root, &t, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "node 1 is also in memory_tier"), "two tiers: \"%s\"", err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	CHECK(system(cmd) == 0, "rm %s", tmp_root);
}

/* ---- the override ------------------------------------------------------- */

static void check_parse_ok(const struct mem_topology *t, const char *spec,
			   const uint64_t *preferred, const uint64_t *allowed)
{
	struct demotion_map d, again;
	char err[256] = "", text[512];

	CHECK(demotion_override_parse(spec, t, &d, err, sizeof(err)) == 0,
	      "\"%s\": refused: %s", spec, err);
	CHECK(d.override && demotion_acyclic(&d), "\"%s\": override/acyclic", spec);
	for (unsigned n = 0; n < MEM_MAX_NODES; n++) {
		uint64_t p = n < 4 ? preferred[n] : 0, a = n < 4 ? allowed[n] : 0;

		CHECK(d.preferred[n] == p && d.allowed[n] == a,
		      "\"%s\": node %u preferred %#llx allowed %#llx", spec, n,
		      (unsigned long long)d.preferred[n], (unsigned long long)d.allowed[n]);
	}
	CHECK(demotion_format(&d, text, sizeof(text)) > 0, "\"%s\": format", spec);
	CHECK(demotion_override_parse(text, t, &again, err, sizeof(err)) == 0 &&
	      !memcmp(&d, &again, sizeof(d)), "\"%s\": does not round trip as \"%s\"", spec, text);
}

static void check_parse_err(const struct mem_topology *t, const char *spec,
			    const char *msg)
{
	struct demotion_map d, before;
	char err[300], want[600];

	memset(&d, 0x5a, sizeof(d));
	before = d;
	snprintf(want, sizeof(want), "--demotion \"%s\": %s", spec, msg);
	CHECK(demotion_override_parse(spec, t, &d, err, sizeof(err)) == -EINVAL,
	      "\"%s\": accepted", spec);
	CHECK(!strcmp(err, want), "\"%s\": message \"%s\", expected \"%s\"", spec, err, want);
	CHECK(!memcmp(&d, &before, sizeof(d)), "\"%s\": map written on failure", spec);
}

static void test_override(void)
{
	static const uint64_t kernel[] = { BIT(2), BIT(2), BIT(3), 0 };
	static const uint64_t kernel_allowed[] = { 0xc, 0xc, 0x8, 0 };
	static const uint64_t wide[] = { 0xc, BIT(3), 0, 0 };
	static const uint64_t wide_allowed[] = { 0xc, BIT(3), 0, 0 };
	static const uint64_t none[4];
	struct mem_topology t, sparse;
	struct demotion_map d;
	char long_spec[DEMOTION_SPEC_MAX + 2], err[300];

	read_fixture("three", &t);
	read_fixture("sparse", &sparse);
	check_parse_ok(&t, "0>2;1>2;2>3", kernel, kernel_allowed);
	check_parse_ok(&t, " 0 > 2 ;\t1>2 ;; 2> 3 ;", kernel, kernel_allowed);
	check_parse_ok(&t, "0>2-3;1>3", wide, wide_allowed);
	check_parse_ok(&t, "0>2,3;1>03", wide, wide_allowed);
	check_parse_ok(&t, "none", none, none);
	check_parse_ok(&t, " none ", none, none);

	check_parse_err(&t, "0>9", "node 9 does not exist (online nodes: 0-3)");
	check_parse_err(&t, "9>0", "node 9 does not exist (online nodes: 0-3)");
	check_parse_err(&t, "0>2-70", "node 4 does not exist (online nodes: 0-3)");
	check_parse_err(&t, "0>99999999999", "node 99999999999 does not exist (online nodes: 0-3)");
	check_parse_err(&sparse, "0>1", "node 1 does not exist (online nodes: 0,2-3)");
	check_parse_err(&sparse, "0>3", "node 3 has no memory");
	check_parse_err(&sparse, "3>0", "node 3 has no memory");
	check_parse_err(&t, "2>2", "demotion 2->2 is a cycle (a node cannot demote to itself)");
	check_parse_err(&t, "1>0-3", "demotion 1->1 is a cycle (a node cannot demote to itself)");
	check_parse_err(&t, "0>2;2>0", "demotion 0->2->0 is a cycle");
	check_parse_err(&t, "2>0;0>2", "demotion 0->2->0 is a cycle");
	check_parse_err(&t, "0>1;1>2;2>0", "demotion 0->1->2->0 is a cycle");
	check_parse_err(&t, "3>1;1>2;2>3;0>1", "demotion 1->2->3->1 is a cycle");
	check_parse_err(&t, "0>2;0>3", "node 0 is the source of two rules");
	check_parse_err(&t, "", "expected \"none\" or NODE>NODES[;NODE>NODES]...");
	check_parse_err(&t, " ; ;", "expected \"none\" or NODE>NODES[;NODE>NODES]...");
	check_parse_err(&t, "none;0>2", "expected a source node (NODE>NODES) at \"none\"");
	check_parse_err(&t, "0", "expected '>' after node 0 at \"\"");
	check_parse_err(&t, "0-1>2", "expected '>' after node 0 at \"-1>2\"");
	check_parse_err(&t, "0:2", "expected '>' after node 0 at \":2\"");
	check_parse_err(&t, "0>", "expected a target node at \"\"");
	check_parse_err(&t, "0>2,", "expected a target node at \"\"");
	check_parse_err(&t, "0>2-", "expected the end of a range at \"\"");
	check_parse_err(&t, "0>3-2", "range 3-2 is backwards");
	check_parse_err(&t, "0>2 3", "unexpected \"3\" after the target nodes");
	check_parse_err(&t, "0>2x;1>2", "unexpected \"x\" after the target nodes");

	memset(long_spec, ' ', sizeof(long_spec) - 1);
	long_spec[sizeof(long_spec) - 1] = 0;
	CHECK(demotion_override_parse(long_spec, &t, &d, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "longer than 4096 bytes"), "long spec: %s", err);
	long_spec[DEMOTION_SPEC_MAX - 4] = 0;
	memcpy(long_spec + DEMOTION_SPEC_MAX - 9, "0>2", 3);
	CHECK(demotion_override_parse(long_spec, &t, &d, err, sizeof(err)) == 0 &&
	      d.preferred[0] == BIT(2), "4092-byte spec: %s", err);

	/* Small message buffers: truncated, terminated, nothing past errlen. */
	memset(err, 'x', sizeof(err));
	CHECK(demotion_override_parse("0>9", &t, &d, err, 0) == -EINVAL && err[0] == 'x',
	      "errlen 0 written");
	CHECK(demotion_override_parse("0>9", &t, &d, err, 1) == -EINVAL && !err[0] &&
	      err[1] == 'x', "errlen 1");
	CHECK(demotion_override_parse("0>2;2>0", &t, &d, err, 20) == -EINVAL &&
	      strlen(err) == 19 && err[20] == 'x', "errlen 20");
	CHECK(demotion_override_parse("0>9", &t, &d, NULL, 0) == -EINVAL, "NULL err");
}

/* Maps with cycles only in allowed are cyclic too; format limits. */
static void test_acyclic_and_format(void)
{
	struct demotion_map d;
	char buf[8];

	memset(&d, 0, sizeof(d));
	CHECK(demotion_acyclic(&d), "empty map");
	d.preferred[0] = BIT(1);
	d.allowed[1] = BIT(0);
	CHECK(!demotion_acyclic(&d), "cycle through allowed");
	d.allowed[1] = 0;
	d.preferred[63] = BIT(0);
	CHECK(demotion_acyclic(&d), "63->0->1");
	d.allowed[1] = BIT(63);
	CHECK(!demotion_acyclic(&d), "63->0->1->63");
	d.allowed[1] = 0;
	CHECK(demotion_format(&d, buf, sizeof(buf)) == -ENOSPC, "format: too small");
	CHECK(demotion_format(&d, buf, 0) == -ENOSPC, "format: 0");
	memset(&d, 0, sizeof(d));
	CHECK(demotion_format(&d, buf, 5) == 4 && !strcmp(buf, "none"), "format: none");
	CHECK(demotion_format(&d, buf, 4) == -ENOSPC, "format: none in 4");
}

/* ---- random overrides against reachability ------------------------------ */

/* Whether any node reaches itself along edges (a transitive closure). */
static bool ref_cyclic(const uint64_t *edges, unsigned nr, uint64_t *reach)
{
	bool changed = true;

	for (unsigned n = 0; n < nr; n++)
		reach[n] = edges[n];
	while (changed) {
		changed = false;
		for (unsigned n = 0; n < nr; n++) {
			uint64_t r = reach[n];

			for (unsigned v = 0; v < nr; v++)
				if (reach[n] & BIT(v))
					r |= reach[v];
			changed |= r != reach[n];
			reach[n] = r;
		}
	}
	for (unsigned n = 0; n < nr; n++)
		if (reach[n] & BIT(n))
			return true;
	return false;
}

/* Each arrow of a "demotion a->b->...->a is a cycle" message is an edge. */
static void check_named_cycle(const char *err, const uint64_t *edges)
{
	const char *s = strstr(err, ": demotion ");
	unsigned long first, from, to;
	char *end;

	CHECK(s, "no cycle in \"%s\"", err);
	first = from = strtoul(s + strlen(": demotion "), &end, 10);
	while (!strncmp(end, "->", 2)) {
		to = strtoul(end + 2, &end, 10);
		CHECK(to < 64 && (edges[from] & BIT(to)), "\"%s\": %lu->%lu is no edge", err,
		      from, to);
		from = to;
	}
	CHECK(from == first && !strncmp(end, " is a cycle", 11), "\"%s\": not closed", err);
}

static void test_random_overrides(void)
{
	struct mem_topology t;
	uint64_t seed = 42;

	memset(&t, 0, sizeof(t));
	t.nodes = 0x3f;
	for (unsigned n = 0; n < 6; n++)
		t.node[n].has_memory = true;
	for (unsigned iter = 0; iter < 20000; iter++) {
		uint64_t edges[6] = { 0 }, reach[6];
		char spec[256], err[300];
		struct demotion_map d;
		size_t len = 0;
		bool self = false;
		int ret;

		for (unsigned n = 0; n < 6; n++) {
			edges[n] = t_rand(&seed) & t_rand(&seed) & 0x3f;
			self |= !!(edges[n] & BIT(n));
			if (!edges[n])
				continue;
			len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s%u>", len ? ";" : "", n);
			for (unsigned v = 0, first = 1; v < 6; v++) {
				if (edges[n] & BIT(v)) {
					len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s%u",
								first ? "" : ",", v);
					first = 0;
				}
			}
		}
		if (!len)
			snprintf(spec, sizeof(spec), "none");
		ret = demotion_override_parse(spec, &t, &d, err, sizeof(err));
		if (ref_cyclic(edges, 6, reach)) {
			CHECK(ret == -EINVAL, "\"%s\": cycle accepted", spec);
			if (!self)
				check_named_cycle(err, edges);
			else
				CHECK(strstr(err, "cannot demote to itself"), "\"%s\": %s", spec, err);
			continue;
		}
		CHECK(ret == 0, "\"%s\": refused: %s", spec, err);
		for (unsigned n = 0; n < MEM_MAX_NODES; n++)
			CHECK(d.preferred[n] == (n < 6 ? edges[n] : 0) &&
			      d.allowed[n] == (n < 6 ? reach[n] : 0), "\"%s\": node %u", spec, n);
	}
}

static const struct t_case cases[] = {
	T_CASE(two, "two sockets: one tier, nobody demotes"),
	T_CASE(three, "three tiers: DRAM to PMEM near both to CXL behind it"),
	T_CASE(four_socket, "four sockets with a memory node each: each to its own only"),
	T_CASE(explicit, "memory_tiering orders nodes the distances put in one tier"),
	T_CASE(sparse, "online nodes 0,2,3; a node of CPUs only; no has_* files"),
	T_CASE(roots, "no devices/system/node (no NUMA), and USWAP_SYSFS_ROOT"),
	T_CASE(bad_files, "a bad sysfs file fails the read with a message naming it"),
	T_CASE(two_tiers, "a node listed in two tiers is refused"),
	T_CASE(override, "the demotion override parser and its exact messages"),
	T_CASE(acyclic_and_format, "cycles through allowed targets are refused; format limits"),
	T_CASE(random_overrides, "random overrides against a reference model of reachability"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = find_fixtures,
	});
}
