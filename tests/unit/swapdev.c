// SPDX-License-Identifier: MIT
/*
 * swapdev.c - several swap devices: spec and uswaptab parsing, the kernel's
 * priorities on per-node lists (against the fixture sysfs trees one, two,
 * four in tests/fixtures/sysfs and a reference model), and the sysfs
 * topology lookups.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unitlib.h"
#include "swapdev.h"

#define CHECK(cond, ...)			\
	do {					\
		if (!(cond))			\
			t_fail(__VA_ARGS__);	\
	} while (0)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define AUTO	SWAP_PRIO_AUTO
#define M	(1ull << 20)
#define G	(1ull << 30)

static char fixtures[1024];

/* tests/fixtures/sysfs: from the current directory, else above the binary. */
static void find_fixtures(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	char *slash;

	if (!stat("tests/fixtures/sysfs/two", &st)) {
		snprintf(fixtures, sizeof(fixtures), "tests/fixtures/sysfs");
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		t_fail("cannot find tests/fixtures/sysfs (run from the repository)");
	exe[n] = 0;
	while ((slash = strrchr(exe, '/')) && slash != exe) {
		*slash = 0;
		snprintf(path, sizeof(path), "%.900s/tests/fixtures/sysfs/two", exe);
		if (!stat(path, &st)) {
			snprintf(fixtures, sizeof(fixtures), "%.900s/tests/fixtures/sysfs", exe);
			return;
		}
	}
	t_fail("cannot find tests/fixtures/sysfs (run from the repository)");
}

static const char *fixture(const char *name)
{
	static char path[4][1100];
	static unsigned i;
	char *p = path[i++ % 4];

	snprintf(p, 1100, "%s/%s", fixtures, name);
	return p;
}

/* ---- specs -------------------------------------------------------------- */

static const struct good_spec {
	const char *in, *path;
	int prio;
	uint64_t size;
	int node;
	bool discard, direct;
} good_specs[] = {
	{ "/dev/sdb", "/dev/sdb", AUTO, 0, -1, false, false },
	{ "/swap/a,prio=5,size=4G,node=1,discard,direct", "/swap/a", 5, 4 * G, 1, true, true },
	{ "/x,direct,discard,node=0,size=2M,prio=0", "/x", 0, 2 * M, 0, true, true },
	{ "x,prio=32767", "x", 32767, 0, -1, false, false },
	{ "x,node=1023", "x", AUTO, 0, 1023, false, false },
	{ "x,size=3M", "x", AUTO, 2 * M, -1, false, false },		/* rounded down */
	{ "x,size=5242879", "x", AUTO, 4 * M, -1, false, false },
	{ "x,size=1.5G", "x", AUTO, 1536 * M, -1, false, false },
	{ "x,size=1T", "x", AUTO, 1ull << 40, -1, false, false },
	{ "x,size=64MiB", "x", AUTO, 64 * M, -1, false, false },
	{ "/mnt/my swap#1", "/mnt/my swap#1", AUTO, 0, -1, false, false },
	{ "/a=b", "/a=b", AUTO, 0, -1, false, false },
	{ "x,prio=007", "x", 7, 0, -1, false, false },
};

static const struct bad_spec {
	const char *in, *msg;
} bad_specs[] = {
	{ "/x,prio=40000", "--swap \"/x,prio=40000\": prio 40000 is out of range (expected 0..32767)" },
	{ "", "--swap \"\": empty path" },
	{ ",prio=1", "empty path" },
	{ "/x,prio=-1", "prio -1 is out of range (expected 0..32767)" },
	{ "/x,prio=99999999999999999999999", "prio 99999999999999999999999 is out of range" },
	{ "/x,prio=abc", "prio \"abc\" is not a number (expected 0..32767)" },
	{ "/x,prio=", "prio \"\" is not a number" },
	{ "/x,prio=1x", "prio \"1x\" is not a number" },
	{ "/x,prio", "prio needs a value (expected prio=N" },
	{ "/x,size", "size needs a value" },
	{ "/x,node", "node needs a value" },
	{ "/x,foo", "unknown field \"foo\" (expected prio=, size=, node=, discard or direct)" },
	{ "/x,foo=1", "unknown field \"foo\" (expected prio=, size=, node=, discard or direct)" },
	{ "/x, prio=1", "unknown field \" prio\"" },
	{ "/x,PRIO=1", "unknown field \"PRIO\"" },
	{ "/x,prio=1,prio=2", "prio is given twice" },
	{ "/x,discard,discard", "discard is given twice" },
	{ "/x,size=1M", "size 1M is too small (expected at least 2M)" },
	{ "/x,size=2097151", "size 2097151 is too small" },
	{ "/x,size=2T", "size 2T is too large (expected at most 1T per device)" },
	{ "/x,size=99999999999999999999999", "is too large" },
	{ "/x,size=zz", "size \"zz\" is not a size (expected a number with an optional K, M, G or T suffix)" },
	{ "/x,size=-4G", "size \"-4G\" is not a size" },
	{ "/x,node=1024", "node 1024 is out of range (expected 0..1023)" },
	{ "/x,node=-1", "node -1 is out of range" },
	{ "/x,discard=yes", "discard takes no value" },
	{ "/x,direct=", "direct takes no value" },
	{ "/x,", "empty field after \",\"" },
	{ "/x,,discard", "empty field after \",\"" },
	{ "/x,\x01", "unknown field \"\\x01\"" },
	{ "/x ,prio=5", "path \"/x \" begins or ends with a space" },
	{ " /x", "path \" /x\" begins or ends with a space" },
	{ "/de\t,direct", "path \"/de\\x09\" contains a control character" },
	{ "/a\nb", "path \"/a\\x0ab\" contains a control character" },
	/* remote devices */
	{ "redis://", "no address after redis://" },
	{ "redis://host", "\"host\" is not HOST:PORT" },
	{ "redis://h:0", "\"h:0\" is not HOST:PORT" },
	{ "redis://h:65536", "is not HOST:PORT" },
	{ "redis://::1:6379", "is not HOST:PORT" },
	{ "redis://h:1,g:x", "\"g:x\" is not HOST:PORT" },
	{ "redis://h:1,tls=on", "tls=on is not available: this build's hiredis (0.14) has no TLS" },
	{ "redis://h:1,tls=maybe", "tls \"maybe\" is not on or off" },
	{ "redis://h:1,replicas=9", "replicas 9 is out of range (expected 0..8)" },
	{ "redis://h:1,encrypt=no", "encrypt \"no\" is not on or off" },
	{ "redis://h:1,user=", "user \"\" is not a user name" },
	{ "redis://h:1,user=a b", "user \"a b\" is not a user name" },
	{ "redis://h:1,password-file=", "password-file \"\" is not a file name" },
	{ "redis://h:1,discard", "discard is for a file or block device, not a redis:// device" },
	{ "redis://h:1,direct", "direct is for a file or block device" },
	{ "redis://h:1,foo", "unknown field \"foo\" (expected HOST:PORT, prio=" },
	{ "/x,replicas=1", "replicas is for a redis:// device, not a file" },
	{ "/x,user=alice", "user is for a redis:// device" },
	{ "redis://h:1,a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8,i:9,j:10,k:11,l:12,m:13,n:14,o:15,p:16", "too many addresses" },
};

static const struct remote_spec {
	const char *in, *seeds, *user, *password_file;
	unsigned replicas;
	bool plain;
	int prio;
	uint64_t size;
} remote_specs[] = {
	{ "redis://127.0.0.1:6379", "127.0.0.1:6379", "", "", 0, false, AUTO, 0 },
	{ "redis://a:1,b:2,[::1]:3,prio=5,size=8G,replicas=1,user=alice,password-file=/p,tls=off,encrypt=off",
	  "a:1,b:2,[::1]:3", "alice", "/p", 1, true, 5, 8 * G },
	{ "redis://h.example:7000,encrypt=on,replicas=8", "h.example:7000", "", "", 8, false, AUTO, 0 },
};

static void test_spec_remote(void)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(remote_specs); i++) {
		const struct remote_spec *r = &remote_specs[i];
		struct swap_spec sp;
		char err[512] = "";
		int ret = swap_spec_parse(r->in, &sp, err, sizeof(err));

		CHECK(!ret, "spec \"%s\": %d %s", r->in, ret, err);
		if (ret)
			continue;
		CHECK(sp.remote, "spec \"%s\": not remote", r->in);
		CHECK(!strcmp(sp.seeds, r->seeds), "spec \"%s\": seeds \"%s\"", r->in, sp.seeds);
		CHECK(!strcmp(sp.user, r->user), "spec \"%s\": user \"%s\"", r->in, sp.user);
		CHECK(!strcmp(sp.password_file, r->password_file),
		      "spec \"%s\": password-file \"%s\"", r->in, sp.password_file);
		CHECK(sp.replicas == r->replicas && sp.remote_plain == r->plain &&
		      sp.prio == r->prio && sp.size == r->size,
		      "spec \"%s\": replicas %u plain %d prio %d size %llu", r->in,
		      sp.replicas, sp.remote_plain, sp.prio, (unsigned long long)sp.size);
	}
	{
		struct swap_spec sp;
		char err[512];

		CHECK(!swap_spec_parse("/redis://x", &sp, err, sizeof(err)) && !sp.remote,
		      "a path that only contains redis:// is a file");
	}
}

static void test_spec_good(void)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(good_specs); i++) {
		const struct good_spec *g = &good_specs[i];
		struct swap_spec sp;
		char err[512] = "";
		int ret = swap_spec_parse(g->in, &sp, err, sizeof(err));

		CHECK(!ret, "spec \"%s\": %d %s", g->in, ret, err);
		CHECK(!strcmp(sp.path, g->path), "spec \"%s\": path \"%s\"", g->in, sp.path);
		CHECK(sp.prio == g->prio, "spec \"%s\": prio %d", g->in, sp.prio);
		CHECK(sp.size == g->size, "spec \"%s\": size %llu", g->in,
		      (unsigned long long)sp.size);
		CHECK(sp.node == g->node, "spec \"%s\": node %d", g->in, sp.node);
		CHECK(sp.discard == g->discard && sp.direct == g->direct,
		      "spec \"%s\": flags %d %d", g->in, sp.discard, sp.direct);
	}
}

static void test_spec_bad(void)
{
	struct swap_spec sp, before;
	char err[512];
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(bad_specs); i++) {
		const struct bad_spec *b = &bad_specs[i];
		int ret;

		memset(&sp, 0x5a, sizeof(sp));
		before = sp;
		err[0] = 0;
		ret = swap_spec_parse(b->in, &sp, err, sizeof(err));
		CHECK(ret == -EINVAL, "spec \"%s\": returned %d (%s)", b->in, ret, err);
		CHECK(strstr(err, b->msg), "spec \"%s\": message \"%s\", expected \"%s\"",
		      b->in, err, b->msg);
		CHECK(!strncmp(err, "--swap \"", 8), "spec \"%s\": no prefix: %s", b->in, err);
		CHECK(!memcmp(&sp, &before, sizeof(sp)), "spec \"%s\": output changed", b->in);
	}
}

static void test_spec_limits(void)
{
	char path[400], err[2048];
	struct swap_spec sp;
	int ret;

	/* 255 bytes fit, 256 do not. */
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[255] = 0;
	ret = swap_spec_parse(path, &sp, err, sizeof(err));
	CHECK(!ret && strlen(sp.path) == 255, "255-byte path: %d %s", ret, err);
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[256] = 0;
	ret = swap_spec_parse(path, &sp, err, sizeof(err));
	CHECK(ret == -ENAMETOOLONG && strstr(err, "path is too long (256 bytes, at most 255)"),
	      "256-byte path: %d %s", ret, err);
	/* A tiny error buffer is terminated, and NULL is fine. */
	ret = swap_spec_parse("/x,prio=40000", &sp, err, 8);
	CHECK(ret == -EINVAL && strlen(err) == 7, "short err: %d \"%s\"", ret, err);
	CHECK(swap_spec_parse("/x,foo", &sp, NULL, 0) == -EINVAL, "NULL err");
	CHECK(swap_spec_parse(NULL, &sp, err, sizeof(err)) == -EINVAL, "NULL spec");
}

/* ---- uswaptab ------------------------------------------------------------ */

static void test_swaptab_good(void)
{
	static const char text[] =
		"# uswaptab: fast devices first\n"
		"\n"
		"/dev/nvme0n1p3,prio=100,node=0,discard   # local NVMe\n"
		"   /mnt/b/swap,size=64G,direct\t\r\n"
		"\t# an indented comment\n"
		"/mnt/c#d/swap # '#' inside a path stays\n"
		"   \n"
		"/mnt/e/swap\n"
		"redis://10.0.0.5:7000,10.0.0.6:7000,prio=1,replicas=1,user=u   # far memory";
	struct swap_spec tab[SWAP_MAX_DEVICES];
	char err[512] = "";
	unsigned n = 0;
	int ret;

	ret = swaptab_parse_text("tab", text, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(!ret && n == 5, "swaptab: %d n=%u %s", ret, n, err);
	CHECK(tab[4].remote && !strcmp(tab[4].seeds, "10.0.0.5:7000,10.0.0.6:7000") &&
	      tab[4].prio == 1 && tab[4].replicas == 1 && !strcmp(tab[4].user, "u"),
	      "swaptab line 9: a redis:// device");
	CHECK(!strcmp(tab[0].path, "/dev/nvme0n1p3") && tab[0].prio == 100 &&
	      tab[0].node == 0 && tab[0].discard && !tab[0].direct, "swaptab line 3");
	CHECK(!strcmp(tab[1].path, "/mnt/b/swap") && tab[1].size == 64 * G &&
	      tab[1].direct && tab[1].prio == AUTO, "swaptab line 4: \"%s\"", tab[1].path);
	CHECK(!strcmp(tab[2].path, "/mnt/c#d/swap"), "swaptab line 6: \"%s\"", tab[2].path);
	CHECK(!strcmp(tab[3].path, "/mnt/e/swap"), "swaptab line 8: \"%s\"", tab[3].path);

	/* Exactly 15 devices are allowed. */
	{
		char big[2048] = "";
		unsigned i;

		for (i = 0; i < SWAP_MAX_DEVICES; i++)
			sprintf(big + strlen(big), "/s%u\n", i);
		ret = swaptab_parse_text("t15", big, tab, 100, &n, err, sizeof(err));
		CHECK(!ret && n == SWAP_MAX_DEVICES, "15 devices: %d %s", ret, err);
	}
}

static void test_swaptab_bad(void)
{
	static const struct {
		const char *text;
		unsigned max;
		int ret;
		const char *msg;
	} cases[] = {
		{ "/a\n/b\n/x,prio=40000\n", 15, -EINVAL,
		  "tab:3: prio 40000 is out of range (expected 0..32767)" },
		{ "# c\n\n/a,foo\n", 15, -EINVAL,
		  "tab:3: unknown field \"foo\" (expected prio=, size=, node=, discard or direct)" },
		{ "/a\n  ,prio=3  # no path\n", 15, -EINVAL, "tab:2: empty path" },
		{ "/a\n/b\n/a,prio=1\n", 15, -EINVAL,
		  "tab:3: \"/a\" is already on line 1" },
		{ "", 15, -EINVAL, "tab: no swap device" },
		{ "# only\n   \n\t# comments\n", 15, -EINVAL, "tab: no swap device" },
		{ "/a\n/b\n/c\n", 2, -E2BIG, "tab:3: too many swap devices (at most 2)" },
		{ "/a\n", 0, -E2BIG, "tab:1: too many swap devices (at most 0)" },
		{ "/a,discard=1\n", 15, -EINVAL, "tab:1: discard takes no value" },
		{ "/a,size=1k\r\n", 15, -EINVAL, "tab:1: size 1k is too small" },
		{ "/a  ,discard\n", 15, -EINVAL, "tab:1: path \"/a  \" begins or ends with a space" },
	};
	struct swap_spec tab[SWAP_MAX_DEVICES], before[SWAP_MAX_DEVICES];
	char err[512], big[2048] = "";
	unsigned i, n;
	int ret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(tab, 0x5a, sizeof(tab));
		memcpy(before, tab, sizeof(tab));
		n = 12345;
		err[0] = 0;
		ret = swaptab_parse_text("tab", cases[i].text, tab, cases[i].max, &n,
					 err, sizeof(err));
		CHECK(ret == cases[i].ret, "swaptab case %u: returned %d (%s)", i, ret, err);
		CHECK(strstr(err, cases[i].msg), "swaptab case %u: \"%s\", expected \"%s\"",
		      i, err, cases[i].msg);
		CHECK(n == 12345 && !memcmp(tab, before, sizeof(tab)),
		      "swaptab case %u: output changed", i);
	}
	for (i = 0; i <= SWAP_MAX_DEVICES; i++)
		sprintf(big + strlen(big), "# %u\n/s%u\n", i, i);
	ret = swaptab_parse_text("tab", big, tab, 100, &n, err, sizeof(err));
	CHECK(ret == -E2BIG && strstr(err, "tab:32: too many swap devices (at most 15: a swap entry has 4 bits for the device)"),
	      "16 devices: %d %s", ret, err);
}

static void test_swaptab_file(void)
{
	char dir[] = "/tmp/uswap-swaptab-XXXXXX", file[64], err[512];
	struct swap_spec tab[SWAP_MAX_DEVICES];
	unsigned n;
	FILE *f;
	int ret;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(file, sizeof(file), "%s/uswaptab", dir);
	f = fopen(file, "w");
	CHECK(f, "fopen");
	fputs("/a,prio=1\n\n/b # second\n/c,node=1024\n", f);
	fclose(f);
	ret = swaptab_parse_file(file, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(ret == -EINVAL && strstr(err, "uswaptab:4: node 1024 is out of range") &&
	      !strncmp(err, file, strlen(file)), "file: %d %s", ret, err);
	f = fopen(file, "w");
	fputs("/a,prio=1\n\n/b # second\n", f);
	fclose(f);
	ret = swaptab_parse_file(file, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(!ret && n == 2 && tab[0].prio == 1 && !strcmp(tab[1].path, "/b"),
	      "file: %d %s", ret, err);
	ret = swaptab_parse_file(dir, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(ret == -EISDIR && strstr(err, "is a directory"), "dir: %d %s", ret, err);
	f = fopen(file, "w");
	fwrite("/a\n\0/b\n", 1, 7, f);
	fclose(f);
	ret = swaptab_parse_file(file, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(ret == -EINVAL && strstr(err, "NUL byte"), "NUL: %d %s", ret, err);
	f = fopen(file, "w");
	for (n = 0; n < 70000; n++)
		fputc(n % 64 == 63 ? '\n' : '#', f);
	fclose(f);
	ret = swaptab_parse_file(file, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(ret == -EFBIG && strstr(err, "too large"), "big: %d %s", ret, err);
	unlink(file);
	ret = swaptab_parse_file(file, tab, SWAP_MAX_DEVICES, &n, err, sizeof(err));
	CHECK(ret == -ENOENT && strstr(err, "No such file"), "missing: %d %s", ret, err);
	rmdir(dir);
}

/* ---- per-node lists -------------------------------------------------------- */

static struct swap_avail *avail(unsigned nodes, const int *prio, const int *node,
				unsigned n)
{
	struct swap_avail *sa;
	int ret = swap_avail_create(&sa, nodes, prio, node, n);

	CHECK(!ret, "swap_avail_create: %d", ret);
	CHECK(!swap_avail_validate(sa), "fresh lists invalid");
	return sa;
}

static void expect_lists(struct swap_avail *sa, const char *want, const char *what)
{
	char buf[4096];
	size_t len = swap_avail_describe(sa, buf, sizeof(buf));

	CHECK(len == strlen(buf) && !strcmp(buf, want), "%s: lists\n%sexpected\n%s",
	      what, buf, want);
	CHECK(!swap_avail_validate(sa), "%s: lists invalid", what);
}

static void test_avail_args(void)
{
	int bad_prio[2] = { 0, 40000 }, neg_prio[2] = { -2, AUTO };
	int bad_node[2] = { -2, 0 }, big_node[2] = { 0, 1024 };
	struct swap_avail *sa;
	char small[10];
	size_t len;

	CHECK(swap_avail_create(&sa, 0, NULL, NULL, 1) == -EINVAL, "0 nodes");
	CHECK(swap_avail_create(&sa, 1025, NULL, NULL, 1) == -EINVAL, "1025 nodes");
	CHECK(swap_avail_create(&sa, 1, NULL, NULL, 0) == -EINVAL, "0 devices");
	CHECK(swap_avail_create(&sa, 1, NULL, NULL, 16) == -EINVAL, "16 devices");
	CHECK(swap_avail_create(&sa, 1, bad_prio, NULL, 2) == -EINVAL, "prio 40000");
	CHECK(swap_avail_create(&sa, 1, neg_prio, NULL, 2) == -EINVAL, "prio -2");
	CHECK(swap_avail_create(&sa, 1, NULL, bad_node, 2) == -EINVAL, "node -2");
	CHECK(swap_avail_create(&sa, 1, NULL, big_node, 2) == -EINVAL, "node 1024");

	/* NULL arrays: automatic priorities, unknown nodes. */
	sa = avail(2, NULL, NULL, 3);
	expect_lists(sa, "node 0: 0(-2) 1(-3) 2(-4)\nnode 1: 0(-2) 1(-3) 2(-4)\n", "NULL arrays");
	len = swap_avail_describe(sa, small, sizeof(small));
	CHECK(len == 52 && !strcmp(small, "node 0: 0"), "truncated describe: %zu \"%s\"",
	      len, small);
	CHECK(swap_avail_describe(sa, NULL, 0) == 52, "describe length");
	swap_avail_destroy(sa);

	/* The largest: 1024 nodes, 15 devices, promoted where attached. */
	{
		int node[SWAP_MAX_DEVICES];
		unsigned d;

		for (d = 0; d < SWAP_MAX_DEVICES; d++)
			node[d] = (int)d * 73;
		sa = avail(SWAP_MAX_NODES, NULL, node, SWAP_MAX_DEVICES);
		for (d = 0; d < SWAP_MAX_DEVICES; d++)
			CHECK(swap_avail_next(sa, node[d]) == (int)d &&
			      swap_avail_prio_on(sa, (unsigned)node[d], d) == -1,
			      "1024 nodes: dev %u", d);
		CHECK(swap_avail_next(sa, 1) == 0, "1024 nodes: node 1");
		swap_avail_destroy(sa);
	}
}

/* The node of each block device of a fixture, by major:minor. */
static int fixture_node(const char *tree, unsigned maj, unsigned min)
{
	return sysfs_blockdev_node(fixture(tree), maj, min);
}

static void test_avail_one_node(void)
{
	int node[3];
	struct swap_avail *sa;

	CHECK(sysfs_nr_nodes(fixture("one")) == 1, "one: nodes");
	node[0] = fixture_node("one", 254, 0);		/* vda: unknown */
	node[1] = fixture_node("one", 8, 0);		/* sda: node 0 */
	node[2] = fixture_node("one", 253, 0);		/* zram0: unknown */
	CHECK(node[0] == -1 && node[1] == 0 && node[2] == -1, "one: device nodes %d %d %d",
	      node[0], node[1], node[2]);
	sa = avail(1, NULL, node, 3);
	CHECK(swap_avail_prio(sa, 0) == -2 && swap_avail_prio(sa, 1) == -3 &&
	      swap_avail_prio(sa, 2) == -4, "one: own priorities");
	expect_lists(sa, "node 0: 1(-1) 0(-2) 2(-4)\n", "one node");
	CHECK(swap_avail_next(sa, 0) == 1 && swap_avail_next(sa, 0) == 1, "one: sda first");
	CHECK(swap_avail_next(sa, -1) == 1 && swap_avail_next(sa, 5) == 1,
	      "one: node -1 and 5 use node 0's list");
	swap_avail_destroy(sa);
}

static void test_avail_two_nodes(void)
{
	int node[2], i;
	struct swap_avail *sa;

	CHECK(sysfs_nr_nodes(fixture("two")) == 2, "two: nodes");
	node[0] = fixture_node("two", 259, 0);		/* A: nvme0n1, node 1 */
	node[1] = fixture_node("two", 8, 0);		/* B: sda, node 0 */
	CHECK(node[0] == 1 && node[1] == 0, "two: device nodes %d %d", node[0], node[1]);
	sa = avail(2, NULL, node, 2);
	CHECK(swap_avail_prio(sa, 0) == -2 && swap_avail_prio(sa, 1) == -3, "two: own");
	CHECK(swap_avail_prio_on(sa, 0, 1) == -1 && swap_avail_prio_on(sa, 0, 0) == -2 &&
	      swap_avail_prio_on(sa, 1, 0) == -1 && swap_avail_prio_on(sa, 1, 1) == -3,
	      "two: prio_on");
	expect_lists(sa, "node 0: 1(-1) 0(-2)\nnode 1: 0(-1) 1(-3)\n", "two nodes");
	/* Memory on node 0 goes only to B, on node 1 only to A. */
	for (i = 0; i < 1000; i++) {
		CHECK(swap_avail_next(sa, 0) == 1, "two: node 0 pick %d", i);
		CHECK(swap_avail_next(sa, 1) == 0, "two: node 1 pick %d", i);
	}
	/* B full: node 0 spills to A; B back: node 0 uses B again. */
	swap_avail_full(sa, 1);
	expect_lists(sa, "node 0: 0(-2)\nnode 1: 0(-1)\n", "two, B full");
	CHECK(swap_avail_next(sa, 0) == 0, "two: B full");
	swap_avail_room(sa, 1);
	CHECK(swap_avail_next(sa, 0) == 1, "two: B back");
	swap_avail_destroy(sa);
}

static void test_avail_mixed(void)
{
	/* A auto node 1, B prio 0 node 0, C auto node 0, D prio 100 unknown. */
	int prio[4] = { AUTO, 0, AUTO, 100 }, node[4];
	struct swap_avail *sa;

	node[0] = fixture_node("two", 259, 1);		/* nvme0n1p1 */
	node[1] = fixture_node("two", 8, 1);		/* sda1 */
	node[2] = fixture_node("two", 9, 0);		/* md0 -> sda1 */
	node[3] = -1;
	CHECK(node[0] == 1 && node[1] == 0 && node[2] == 0, "mixed: nodes %d %d %d",
	      node[0], node[1], node[2]);
	sa = avail(2, prio, node, 4);
	CHECK(swap_avail_prio(sa, 0) == -2 && swap_avail_prio(sa, 1) == 0 &&
	      swap_avail_prio(sa, 2) == -3 && swap_avail_prio(sa, 3) == 100, "mixed: own");
	expect_lists(sa, "node 0: 3(100) 1(0) 2(-1) 0(-2)\n"
			 "node 1: 3(100) 1(0) 0(-1) 2(-3)\n", "mixed");
	CHECK(swap_avail_next(sa, 0) == 3, "mixed: D first");
	swap_avail_full(sa, 3);
	CHECK(swap_avail_next(sa, 0) == 1 && swap_avail_next(sa, 1) == 1,
	      "mixed: user prio 0 beats promoted -1");
	swap_avail_full(sa, 1);
	CHECK(swap_avail_next(sa, 0) == 2 && swap_avail_next(sa, 1) == 0, "mixed: promoted");
	swap_avail_full(sa, 2);
	CHECK(swap_avail_next(sa, 0) == 0, "mixed: last");
	swap_avail_full(sa, 0);
	CHECK(swap_avail_next(sa, 0) == -ENOSPC && swap_avail_next(sa, 1) == -ENOSPC,
	      "mixed: all full");
	expect_lists(sa, "node 0:\nnode 1:\n", "mixed, all full");
	swap_avail_room(sa, 2);
	swap_avail_room(sa, 3);
	expect_lists(sa, "node 0: 3(100) 2(-1)\nnode 1: 3(100) 2(-3)\n", "mixed, two back");
	swap_avail_destroy(sa);
}

static void test_avail_four_nodes(void)
{
	int prio[5] = { AUTO, AUTO, AUTO, AUTO, 7 }, node[5];
	static const int cpu_node[9] = { 0, 0, 1, 1, 2, 2, 3, 3, -1 };
	struct swap_avail *sa;
	unsigned i;

	CHECK(sysfs_nr_nodes(fixture("four")) == 4, "four: nodes");
	for (i = 0; i < 9; i++)
		CHECK(sysfs_cpu_node(fixture("four"), i) == cpu_node[i], "four: cpu %u node %d",
		      i, sysfs_cpu_node(fixture("four"), i));
	for (i = 0; i < 4; i++)
		node[i] = fixture_node("four", 259, 2 * i);
	node[4] = fixture_node("four", 8, 0);
	for (i = 0; i < 4; i++)
		CHECK(node[i] == (int)i && fixture_node("four", 259, 2 * i + 1) == (int)i,
		      "four: nvme%un1 node %d", i, node[i]);
	CHECK(node[4] == -1, "four: sda node %d", node[4]);
	sa = avail(4, prio, node, 5);
	expect_lists(sa, "node 0: 4(7) 0(-1) 1(-3) 2(-4) 3(-5)\n"
			 "node 1: 4(7) 1(-1) 0(-2) 2(-4) 3(-5)\n"
			 "node 2: 4(7) 2(-1) 0(-2) 1(-3) 3(-5)\n"
			 "node 3: 4(7) 3(-1) 0(-2) 1(-3) 2(-4)\n", "four");
	swap_avail_full(sa, 4);
	for (i = 0; i < 4; i++)
		CHECK(swap_avail_next(sa, (int)i) == (int)i, "four: node %u local", i);
	/* Memory of a CPU's node, as the cpu policy would ask. */
	CHECK(swap_avail_next(sa, sysfs_cpu_node(fixture("four"), 7)) == 3, "four: cpu 7");
	swap_avail_full(sa, 2);
	CHECK(swap_avail_next(sa, 2) == 0, "four: node 2 spills to the next automatic");
	swap_avail_destroy(sa);
}

static void test_avail_round_robin(void)
{
	int prio[3] = { 5, 5, 1 }, node2[2] = { 0, 0 };
	unsigned count[3] = { 0 }, i;
	struct swap_avail *sa;

	sa = avail(1, prio, NULL, 3);
	for (i = 0; i < 1000; i++) {
		int d = swap_avail_next(sa, 0);

		CHECK(d >= 0 && d < 3, "rr: pick %d", d);
		count[d]++;
	}
	CHECK(count[2] == 0, "rr: lower priority used %u times", count[2]);
	CHECK(count[0] * 10 >= count[1] * 9 && count[1] * 10 >= count[0] * 9,
	      "rr: %u vs %u", count[0], count[1]);
	CHECK(swap_avail_next(sa, 0) == 0 && swap_avail_next(sa, 0) == 1, "rr: alternate");
	swap_avail_full(sa, 0);
	for (i = 0; i < 10; i++)
		CHECK(swap_avail_next(sa, 0) == 1, "rr: one left");
	swap_avail_full(sa, 1);
	CHECK(swap_avail_next(sa, 0) == 2, "rr: both full, the lower one");
	swap_avail_destroy(sa);

	/* Two automatic devices on node 0: equal (-1) there, not on node 1. */
	sa = avail(2, NULL, node2, 2);
	memset(count, 0, sizeof(count));
	for (i = 0; i < 1000; i++) {
		count[swap_avail_next(sa, 0)]++;
		CHECK(swap_avail_next(sa, 1) == 0, "rr: node 1 unpromoted");
	}
	CHECK(count[0] == 500 && count[1] == 500, "rr promoted: %u vs %u", count[0], count[1]);
	swap_avail_destroy(sa);
}

static void test_avail_priorities(void)
{
	int prio[2] = { 10, 5 };
	struct swap_avail *sa = avail(1, prio, NULL, 2);
	unsigned i;

	for (i = 0; i < 1000; i++)
		CHECK(swap_avail_next(sa, 0) == 0, "prio: lower picked at %u", i);
	swap_avail_full(sa, 0);
	CHECK(swap_avail_next(sa, 0) == 1, "prio: after full");
	swap_avail_room(sa, 0);
	CHECK(swap_avail_next(sa, 0) == 0, "prio: after room");
	swap_avail_destroy(sa);
}

static void test_avail_full_room(void)
{
	int prio[3] = { 5, 5, 5 };
	struct swap_avail *sa = avail(2, prio, NULL, 3);

	CHECK(swap_avail_has_room(sa, 0), "room at start");
	swap_avail_full(sa, 0);
	swap_avail_full(sa, 0);			/* twice: no-op */
	CHECK(!swap_avail_has_room(sa, 0), "full");
	expect_lists(sa, "node 0: 1(5) 2(5)\nnode 1: 1(5) 2(5)\n", "0 full");
	swap_avail_room(sa, 0);
	swap_avail_room(sa, 0);			/* twice: no-op */
	/* Back behind its equals, on every list. */
	expect_lists(sa, "node 0: 1(5) 2(5) 0(5)\nnode 1: 1(5) 2(5) 0(5)\n", "0 back");
	/* Rotation is per list. */
	CHECK(swap_avail_next(sa, 1) == 1, "rotate node 1");
	expect_lists(sa, "node 0: 1(5) 2(5) 0(5)\nnode 1: 2(5) 0(5) 1(5)\n", "rotated");
	swap_avail_full(sa, 0);
	swap_avail_full(sa, 1);
	swap_avail_full(sa, 2);
	CHECK(swap_avail_next(sa, 0) == -ENOSPC && swap_avail_next(sa, 1) == -ENOSPC &&
	      swap_avail_next(sa, -1) == -ENOSPC, "all full");
	swap_avail_room(sa, 2);
	CHECK(swap_avail_next(sa, 1) == 2 && swap_avail_next(sa, 1) == 2, "one back");
	swap_avail_destroy(sa);
}

/*
 * Reference model: a device's place on a node's list is decided by its
 * priority there and a stamp, the time it last joined the list or was
 * rotated; the list's head is the highest priority, oldest stamp.
 */
struct model {
	unsigned nodes, devs;
	int prio[SWAP_MAX_DEVICES], node[SWAP_MAX_DEVICES];
	bool full[SWAP_MAX_DEVICES];
	uint64_t stamp[8][SWAP_MAX_DEVICES], clock;
};

static int model_prio_on(const struct model *m, unsigned node, unsigned d)
{
	return m->prio[d] < 0 && m->node[d] == (int)node ? -1 : m->prio[d];
}

static bool model_before(const struct model *m, unsigned node, unsigned a, unsigned b)
{
	int pa = model_prio_on(m, node, a), pb = model_prio_on(m, node, b);

	return pa > pb || (pa == pb && m->stamp[node][a] < m->stamp[node][b]);
}

static int model_next(struct model *m, int node)
{
	unsigned n = node < 0 || (unsigned)node >= m->nodes ? 0 : (unsigned)node, d;
	int best = -1;

	for (d = 0; d < m->devs; d++) {
		if (!m->full[d] && (best < 0 || model_before(m, n, d, (unsigned)best)))
			best = (int)d;
	}
	if (best < 0)
		return -ENOSPC;
	m->stamp[n][best] = ++m->clock;
	return best;
}

static void model_room(struct model *m, unsigned d)
{
	unsigned n;

	if (!m->full[d])
		return;
	m->full[d] = false;
	for (n = 0; n < m->nodes; n++)
		m->stamp[n][d] = ++m->clock;
}

static void model_describe(const struct model *m, char *buf, size_t len)
{
	size_t pos = 0;
	unsigned n, i, j, order[SWAP_MAX_DEVICES], nr;

	for (n = 0; n < m->nodes; n++) {
		nr = 0;
		for (i = 0; i < m->devs; i++) {
			if (m->full[i])
				continue;
			for (j = nr; j > 0 && model_before(m, n, i, order[j - 1]); j--)
				order[j] = order[j - 1];
			order[j] = i;
			nr++;
		}
		pos += (size_t)snprintf(buf + pos, len - pos, "node %u:", n);
		for (i = 0; i < nr; i++)
			pos += (size_t)snprintf(buf + pos, len - pos, " %u(%d)", order[i],
						model_prio_on(m, n, order[i]));
		pos += (size_t)snprintf(buf + pos, len - pos, "\n");
	}
}

static void test_avail_model(void)
{
	static const int prios[] = { 0, 1, 2, 32767 };
	uint64_t seed = 0x5eed5a11;
	unsigned round, op, d;

	for (round = 0; round < 400; round++) {
		struct model m = { 0 };
		struct swap_avail *sa;
		char want[1024], got[1024];

		m.nodes = 1 + (unsigned)(t_rand(&seed) % 5);
		m.devs = 1 + (unsigned)(t_rand(&seed) % SWAP_MAX_DEVICES);
		for (d = 0; d < m.devs; d++) {
			m.prio[d] = t_rand(&seed) % 2 ? AUTO :
				    prios[t_rand(&seed) % ARRAY_SIZE(prios)];
			m.node[d] = (int)(t_rand(&seed) % (m.nodes + 2)) - 1;
		}
		sa = avail(m.nodes, m.prio, m.node, m.devs);
		/* Own priorities: -2, -3, ... for the automatic ones, in order. */
		{
			int least = -1;

			for (d = 0; d < m.devs; d++) {
				if (m.prio[d] == AUTO)
					m.prio[d] = --least;
				CHECK(swap_avail_prio(sa, d) == m.prio[d], "model: prio of %u", d);
			}
		}
		for (d = 0; d < m.devs; d++) {
			unsigned n;

			for (n = 0; n < m.nodes; n++)
				m.stamp[n][d] = ++m.clock;
		}
		for (op = 0; op < 300; op++) {
			uint64_t r = t_rand(&seed);
			int node = (int)(r % (m.nodes + 2)) - 1;

			d = (unsigned)((r >> 8) % m.devs);
			switch ((r >> 16) % 8) {
			case 0:
				swap_avail_full(sa, d);
				m.full[d] = true;
				break;
			case 1:
				swap_avail_room(sa, d);
				model_room(&m, d);
				break;
			default: {
				int got_dev = swap_avail_next(sa, node);
				int want_dev = model_next(&m, node);

				CHECK(got_dev == want_dev, "model round %u op %u: next(%d) %d, expected %d",
				      round, op, node, got_dev, want_dev);
			}
			}
			swap_avail_describe(sa, got, sizeof(got));
			model_describe(&m, want, sizeof(want));
			CHECK(!strcmp(got, want), "model round %u op %u:\n%sexpected\n%s",
			      round, op, got, want);
			CHECK(!swap_avail_validate(sa), "model round %u op %u: invalid", round, op);
			for (d = 0; d < m.devs; d++)
				CHECK(swap_avail_has_room(sa, d) == !m.full[d], "model: room %u", d);
		}
		swap_avail_destroy(sa);
	}
}

struct thread_arg {
	struct swap_avail *sa;
	uint64_t seed;
	unsigned picks;
};

static void *avail_thread(void *p)
{
	struct thread_arg *a = p;
	unsigned i;

	for (i = 0; i < 20000; i++) {
		uint64_t r = t_rand(&a->seed);
		unsigned d = (unsigned)(r % 6);

		switch ((r >> 8) % 8) {
		case 0:
			swap_avail_full(a->sa, d);
			break;
		case 1:
		case 2:
			swap_avail_room(a->sa, d);
			break;
		default:
			a->picks += swap_avail_next(a->sa, (int)((r >> 16) % 3)) >= 0;
		}
	}
	return NULL;
}

static void test_avail_threads(void)
{
	int prio[6] = { AUTO, 3, 3, AUTO, AUTO, 0 }, node[6] = { 0, 1, -1, 1, 0, 2 };
	struct swap_avail *sa = avail(3, prio, node, 6);
	struct thread_arg arg[4];
	pthread_t tid[4];
	unsigned i, picks = 0;

	for (i = 0; i < 4; i++) {
		arg[i] = (struct thread_arg){ .sa = sa, .seed = 1234 + i };
		CHECK(!pthread_create(&tid[i], NULL, avail_thread, &arg[i]), "pthread_create");
	}
	for (i = 0; i < 4; i++) {
		pthread_join(tid[i], NULL);
		picks += arg[i].picks;
	}
	CHECK(picks > 0, "threads: no picks");
	CHECK(!swap_avail_validate(sa), "threads: lists invalid");
	swap_avail_destroy(sa);
}

/* ---- topology -------------------------------------------------------------- */

static void test_sysfs_fixtures(void)
{
	char missing[1100];

	snprintf(missing, sizeof(missing), "%s/no-such-tree", fixtures);
	CHECK(sysfs_nr_nodes(missing) == 1, "missing root: nodes");
	CHECK(sysfs_cpu_node(missing, 0) == -1, "missing root: cpu");
	CHECK(sysfs_blockdev_node(missing, 8, 0) == -1, "missing root: blockdev");

	CHECK(sysfs_cpu_node(fixture("one"), 0) == 0 && sysfs_cpu_node(fixture("one"), 1) == 0 &&
	      sysfs_cpu_node(fixture("one"), 2) == -1, "one: cpus");
	CHECK(fixture_node("one", 254, 1) == -1, "one: vda1");
	CHECK(fixture_node("one", 7, 0) == -1, "one: no such device");

	CHECK(sysfs_cpu_node(fixture("two"), 1) == 0 && sysfs_cpu_node(fixture("two"), 2) == 1,
	      "two: cpus");
	CHECK(fixture_node("two", 259, 1) == 1, "two: partition -> nvme0n1");
	CHECK(fixture_node("two", 8, 16) == 1 && fixture_node("two", 8, 17) == 1, "two: sdb");
	CHECK(fixture_node("two", 253, 0) == 1, "two: dm-0 -> nvme0n1p1");
	CHECK(fixture_node("two", 9, 0) == 0, "two: md0 -> sda1 (first slave)");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void put_file(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], cmd[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	CHECK(!system(cmd), "mkdir for %s", path);
	f = fopen(path, "w");
	CHECK(f, "create %s", path);
	fputs(text, f);
	fclose(f);
}

static void put_link(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	CHECK(!symlink(target, path), "symlink %s: %s", path, strerror(errno));
}

/*
 * Paths: files get their file system's device, so build a tree at run time
 * that names the real device numbers of a temporary directory (node 3)
 * and, if there is one, of a block device in /dev (node 2).
 */
static void test_sysfs_paths(void)
{
	static const char *const blk[] = { "/dev/loop0", "/dev/vda", "/dev/sda",
					   "/dev/nvme0n1", "/dev/zram0" };
	char dir[] = "/tmp/uswap-sysfs-XXXXXX", root[64], file[128], rel[64];
	const char *bdev = NULL;
	struct stat st, bst;
	unsigned i;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(root, sizeof(root), "%s/sys", dir);
	snprintf(file, sizeof(file), "%s/swapfile", dir);
	put_file(dir, "swapfile", "");
	CHECK(!stat(file, &st), "stat");
	put_file(root, "devices/pci0000:00/0000:00:05.0/numa_node", "3\n");
	put_file(root, "devices/pci0000:00/0000:00:05.0/block/xda/dev", "x\n");
	put_link(root, "devices/pci0000:00/0000:00:05.0/block/xda/device", "../..");
	put_file(root, "devices/pci0000:00/0000:00:06.0/numa_node", "2\n");
	put_file(root, "devices/pci0000:00/0000:00:06.0/block/xdb/dev", "x\n");
	put_link(root, "devices/pci0000:00/0000:00:06.0/block/xdb/device", "../..");
	put_file(root, "dev/block/.keep", "");
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	put_link(root, rel, "../../devices/pci0000:00/0000:00:05.0/block/xda");

	CHECK(sysfs_path_node(root, file) == 3, "file: node %d", sysfs_path_node(root, file));
	CHECK(sysfs_path_node(root, dir) == 3, "dir: node %d", sysfs_path_node(root, dir));
	snprintf(file, sizeof(file), "%s/not/yet/there", dir);
	CHECK(sysfs_path_node(root, file) == 3, "future file: node %d",
	      sysfs_path_node(root, file));
	CHECK(sysfs_path_node(root, "") == -1, "empty path");

	/* The environment names the default root. */
	setenv("USWAP_SYSFS_ROOT", root, 1);
	CHECK(!strcmp(sysfs_root(), root), "sysfs_root: %s", sysfs_root());
	CHECK(sysfs_path_node(NULL, dir) == 3, "env root: node %d", sysfs_path_node(NULL, dir));
	setenv("USWAP_SYSFS_ROOT", "", 1);
	CHECK(!strcmp(sysfs_root(), "/sys"), "empty env: %s", sysfs_root());
	unsetenv("USWAP_SYSFS_ROOT");
	CHECK(!strcmp(sysfs_root(), "/sys"), "no env: %s", sysfs_root());

	for (i = 0; i < ARRAY_SIZE(blk) && !bdev; i++) {
		if (!stat(blk[i], &bst) && S_ISBLK(bst.st_mode))
			bdev = blk[i];
	}
	if (bdev && bst.st_rdev != st.st_dev) {
		snprintf(rel, sizeof(rel), "dev/block/%u:%u", major(bst.st_rdev),
			 minor(bst.st_rdev));
		put_link(root, rel, "../../devices/pci0000:00/0000:00:06.0/block/xdb");
		CHECK(sysfs_path_node(root, bdev) == 2, "%s: node %d", bdev,
		      sysfs_path_node(root, bdev));
	} else if (!bdev) {
		printf("note: no block device in /dev, block device paths not checked\n");
	}
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

	/* The real sysfs: answers within range, whatever the machine. */
	CHECK(sysfs_nr_nodes(NULL) >= 1 && sysfs_nr_nodes(NULL) <= (int)SWAP_MAX_NODES,
	      "real nodes");
	CHECK(sysfs_path_node(NULL, "/") >= -1 && sysfs_path_node(NULL, "/") < (int)SWAP_MAX_NODES,
	      "real /");
	CHECK(sysfs_cpu_node(NULL, 0) >= -1, "real cpu 0");
}

static const struct t_case cases[] = {
	T_CASE(spec_good, "--swap specs accepted: path, prio, size, node, flags"),
	T_CASE(spec_bad, "--swap specs refused with their message, output untouched"),
	T_CASE(spec_remote, "redis:// specs: seeds, user, password-file, replicas, encrypt"),
	T_CASE(spec_limits, "path length limits, a short or NULL error buffer"),
	T_CASE(swaptab_good, "a uswaptab's lines, comments and blanks"),
	T_CASE(swaptab_bad, "a bad uswaptab line is refused, naming its line"),
	T_CASE(swaptab_file, "a uswaptab read from a file"),
	T_CASE(avail_args, "swap_avail_create() refuses bad priorities and nodes"),
	T_CASE(avail_one_node, "one node: automatic priorities, lists"),
	T_CASE(avail_two_nodes, "two nodes: each node's memory to its own device first"),
	T_CASE(avail_mixed, "given and automatic priorities on two nodes"),
	T_CASE(avail_four_nodes, "four nodes: automatic devices promoted on their node"),
	T_CASE(avail_round_robin, "equal priorities take turns"),
	T_CASE(avail_priorities, "a higher priority first, full and room again"),
	T_CASE(avail_full_room, "full and room on several nodes"),
	T_CASE(avail_model, "random priorities and nodes against a reference model"),
	T_CASE(avail_threads, "threads picking, filling and freeing devices at once"),
	T_CASE(sysfs_fixtures, "topology lookups in the fixture sysfs trees"),
	T_CASE(sysfs_paths, "files find the node of their file system's device"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = find_fixtures,
	});
}
