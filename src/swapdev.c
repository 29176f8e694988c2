// SPDX-License-Identifier: MIT
/*
 * swapdev.c - several swap devices: their specs, the kernel's priority
 * model with one availability list per NUMA node, and the sysfs topology
 * that says which node a device is attached to.
 *
 * This rebuilds the device-selection half of the kernel's mm/swapfile.c
 * (swapon's priority, setup_swap_info(), swap_avail_heads and the device
 * loop of the swap allocator) and the sysfs lookups behind swap_node().
 * The slot allocator of one device is swapfile.c; this file only decides
 * which device a folio goes to.
 *
 * The kernel's priority model
 * ---------------------------
 * Every swap device has a priority.  The administrator may give one, from
 * 0 to 32767 (swapon -p); a device given none is numbered below every
 * user priority, in the order the devices were enabled: the first gets -2,
 * the next -3, and so on (the kernel counts a global "least priority"
 * down from -1).  The value -1 itself is never handed out: it is kept for
 * promotion, below.
 *
 * The devices that still have free space sit on priority-ordered lists,
 * and there is one list per NUMA node.  A device appears on every node's
 * list, but not always with the same priority: on the list of the node the
 * device is attached to, a device without a user priority counts as -1.
 * That puts it ahead of every other automatic device for memory of that
 * node, while any device the administrator ranked still comes first
 * (0 > -1).  A device with a user priority has that priority on every
 * list.  Example:
 *
 *	given:		A (node 1)   B (node 0)   C prio=5 (node 0)
 *	own priority:	A -2         B -3         C 5
 *	node 0's list:	C(5)  B(-1)  A(-2)
 *	node 1's list:	C(5)  A(-1)  B(-3)
 *
 * To swap out memory of node N, the allocator walks node N's list from
 * the head.  Before it tries a device it moves that device behind the
 * others of the same priority on that list, so that devices of equal
 * priority take turns (round robin) while a lower priority is touched
 * only when every device above it has failed.  A device that fills up
 * leaves every list at once; when space is freed on it, it is put back on
 * every list, behind the devices of its priority already there.
 *
 * Here a list is a small array of device numbers per node (at most 15
 * devices: a swap entry has 4 bits for the device, and 0 means "none"),
 * head first, sorted by priority on that list, non-increasing.  "Behind
 * its equals" is the position after the last device of the same priority.
 * struct swap_avail holds the arrays; its mutex (a leaf lock) protects the
 * lists and the full flags; priorities and nodes never change after
 * creation and are read without it.  A device whose node is unknown (-1)
 * is promoted nowhere.
 *
 * The caller's loop, as the kernel's: dev = swap_avail_next(sa, node);
 * allocate from dev; if dev has no slot at all, swap_avail_full(sa, dev)
 * and ask again, until -ENOSPC (every device full: keep the folio).  When
 * a slot is freed on a device that was full, swap_avail_room(sa, dev).  A
 * device that only lacks a contiguous run for a large folio is not full:
 * the folio is split instead (swapfile.c's -ENOSPC for an order > 0).
 *
 * Specs.  A device is "PATH[,prio=N][,size=SIZE][,node=N][,discard]
 * [,direct]" on the command line (--swap) or one per line of a uswaptab
 * file; the parsers check every field and name the one that is wrong, and
 * never call malloc (the preload library may parse before main; a file is
 * read into a prim_alloc() buffer).
 *
 * Topology.  sysfs is read under a root that tests point at fixture trees:
 * the node count from devices/system/node/possible, a CPU's node from its
 * nodeN link, and a block device's node by following dev/block/MAJ:MIN to
 * the disk (a partition's parent), then its device's numa_node, or, for a
 * disk with no device of its own (dm, md), its first slave.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "swapdev.h"

#define SPEC_FIELDS	"prio=, size=, node=, discard or direct"
#define SPEC_SYNTAX	"PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]"
#define SWAPTAB_MAX_BYTES	(64u << 10)
#define MSG_LEN		512
#define SHOW_MAX	64	/* bytes of user input quoted in a message */
#define SYSFS_DEPTH	8	/* slaves followed, at most */

static void __attribute__((format(printf, 3, 4)))
put_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/*
 * User input as it may appear in a message: printable ASCII as is, other
 * bytes as \xNN, '"' and '\' escaped, cut at max bytes with "...".
 */
static const char *show(const char *s, size_t len, size_t max, char *buf,
			size_t buflen)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	assert(buflen >= 8);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i == max || o + 8 > buflen) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = 0;
	return buf;
}

/* ---- specs ------------------------------------------------------------ */

enum spec_field { F_PRIO, F_SIZE, F_NODE, F_DISCARD, F_DIRECT, NR_FIELDS };

static const struct {
	const char *name;
	bool value;		/* takes "=VALUE" */
	const char *expect;	/* for "needs a value" */
} spec_fields[NR_FIELDS] = {
	[F_PRIO]	= { "prio",	true,  "prio=N with N in 0..32767" },
	[F_SIZE]	= { "size",	true,  "size=SIZE, at least 2M" },
	[F_NODE]	= { "node",	true,  "node=N with N in 0..1023" },
	[F_DISCARD]	= { "discard",	false, NULL },
	[F_DIRECT]	= { "direct",	false, NULL },
};

static bool span_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(s, word, len);
}

/*
 * A decimal integer with an optional '-' in [lo, hi]: 0, -EINVAL when it
 * is not one, -ERANGE when it is one out of range.
 */
static int parse_int(const char *s, size_t len, long lo, long hi, int *out)
{
	bool neg = len && s[0] == '-', big = false;
	long v = 0;
	size_t i;

	for (i = neg; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (LONG_MAX - 9) / 10)
			big = true;
		else
			v = v * 10 + (s[i] - '0');
	}
	if (len == (size_t)neg)
		return -EINVAL;
	if (neg)
		v = -v;
	if (big || v < lo || v > hi)
		return -ERANGE;
	*out = (int)v;
	return 0;
}

static int spec_int(const char *name, const char *v, size_t len, long lo,
		    long hi, int *out, char *msg)
{
	char buf[SHOW_MAX * 4 + 8];
	int ret = parse_int(v, len, lo, hi, out);

	if (ret == -EINVAL)
		put_err(msg, MSG_LEN, "%s \"%s\" is not a number (expected %ld..%ld)",
			name, show(v, len, SHOW_MAX, buf, sizeof(buf)), lo, hi);
	else if (ret)
		put_err(msg, MSG_LEN, "%s %s is out of range (expected %ld..%ld)",
			name, show(v, len, SHOW_MAX, buf, sizeof(buf)), lo, hi);
	return ret ? -EINVAL : 0;
}

static int spec_size(const char *v, size_t len, uint64_t *out, char *msg)
{
	char val[128], buf[SHOW_MAX * 4 + 8];
	uint64_t size;
	int ret = -EINVAL;

	if (len < sizeof(val)) {
		memcpy(val, v, len);
		val[len] = 0;
		ret = uswap_size_parse(val, &size);
	}
	show(v, len, SHOW_MAX, buf, sizeof(buf));
	if (ret == -ERANGE || (!ret && size > SWAP_SPEC_MAX_SIZE)) {
		put_err(msg, MSG_LEN, "size %s is too large (expected at most 1T per device)",
			buf);
		return -EINVAL;
	}
	if (ret) {
		put_err(msg, MSG_LEN, "size \"%s\" is not a size (expected a number with an optional K, M, G or T suffix)",
			buf);
		return -EINVAL;
	}
	if (size < SWAP_SPEC_MIN_SIZE) {
		put_err(msg, MSG_LEN, "size %s is too small (expected at least 2M)",
			buf);
		return -EINVAL;
	}
	*out = size / SWAP_SPEC_MIN_SIZE * SWAP_SPEC_MIN_SIZE;
	return 0;
}

/* Apply one "name[=value]" field (already split) to *sp. */
static int spec_field(struct swap_spec *sp, enum spec_field f, const char *v,
		      size_t len, char *msg)
{
	switch (f) {
	case F_PRIO:
		return spec_int("prio", v, len, 0, SWAP_PRIO_MAX, &sp->prio,
				msg);
	case F_SIZE:
		return spec_size(v, len, &sp->size, msg);
	case F_NODE:
		return spec_int("node", v, len, 0, SWAP_MAX_NODES - 1,
				&sp->node, msg);
	case F_DISCARD:
		sp->discard = true;
		return 0;
	case F_DIRECT:
		sp->direct = true;
		return 0;
	case NR_FIELDS:
		break;
	}
	return -EINVAL;
}

/* Parse one field s[0..len) of a spec; *seen has a bit per field given. */
static int spec_option(struct swap_spec *sp, const char *s, size_t len,
		       unsigned *seen, char *msg)
{
	const char *eq = memchr(s, '=', len);
	size_t nlen = eq ? (size_t)(eq - s) : len;
	char buf[SHOW_MAX * 4 + 8];
	unsigned f;

	if (!len) {
		put_err(msg, MSG_LEN, "empty field after \",\" (expected " SPEC_FIELDS ")");
		return -EINVAL;
	}
	for (f = 0; f < NR_FIELDS; f++) {
		if (span_is(s, nlen, spec_fields[f].name))
			break;
	}
	if (f == NR_FIELDS) {
		put_err(msg, MSG_LEN, "unknown field \"%s\" (expected " SPEC_FIELDS ")",
			show(s, nlen, SHOW_MAX, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (*seen & (1u << f)) {
		put_err(msg, MSG_LEN, "%s is given twice (expected each field at most once)",
			spec_fields[f].name);
		return -EINVAL;
	}
	*seen |= 1u << f;
	if (spec_fields[f].value && !eq) {
		put_err(msg, MSG_LEN, "%s needs a value (expected %s)",
			spec_fields[f].name, spec_fields[f].expect);
		return -EINVAL;
	}
	if (!spec_fields[f].value && eq) {
		put_err(msg, MSG_LEN, "%s takes no value (expected \"%s\" alone, not \"%s\")",
			spec_fields[f].name, spec_fields[f].name,
			show(s, len, SHOW_MAX, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (eq)
		return spec_field(sp, f, eq + 1, len - nlen - 1, msg);
	return spec_field(sp, f, NULL, 0, msg);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * A path may not begin or end with a blank, nor hold a control character:
 * in "/x ,prio=5" or a line pasted with a tab, that is a typing mistake,
 * not a file name anyone means.
 */
static int spec_path_check(const char *s, size_t len, char *msg)
{
	char buf[SHOW_MAX * 4 + 8];
	size_t i;

	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			put_err(msg, MSG_LEN, "path \"%s\" contains a control character (expected a file or block device name)",
				show(s, len, SHOW_MAX, buf, sizeof(buf)));
			return -EINVAL;
		}
	}
	if (is_blank(s[0]) || is_blank(s[len - 1])) {
		put_err(msg, MSG_LEN, "path \"%s\" begins or ends with a space (expected no spaces around fields)",
			show(s, len, SHOW_MAX, buf, sizeof(buf)));
		return -EINVAL;
	}
	return 0;
}

/* Parse the spec s[0..len) into *out; the message (no prefix) into msg. */
static int spec_parse(const char *s, size_t len, struct swap_spec *out,
		      char *msg)
{
	const char *end = s + len, *comma = memchr(s, ',', len);
	size_t plen = comma ? (size_t)(comma - s) : len;
	struct swap_spec sp = { .prio = SWAP_PRIO_AUTO, .node = -1 };
	unsigned seen = 0;
	int ret;

	if (!plen) {
		put_err(msg, MSG_LEN, "empty path (expected " SPEC_SYNTAX ")");
		return -EINVAL;
	}
	if (plen >= sizeof(sp.path)) {
		put_err(msg, MSG_LEN, "path is too long (%zu bytes, at most %zu)",
			plen, sizeof(sp.path) - 1);
		return -ENAMETOOLONG;
	}
	ret = spec_path_check(s, plen, msg);
	if (ret)
		return ret;
	memcpy(sp.path, s, plen);
	while (comma) {
		const char *f = comma + 1;

		comma = memchr(f, ',', (size_t)(end - f));
		ret = spec_option(&sp, f, (size_t)((comma ? comma : end) - f),
				  &seen, msg);
		if (ret)
			return ret;
	}
	*out = sp;
	return 0;
}

int swap_spec_parse(const char *s, struct swap_spec *out, char *err,
		    size_t errlen)
{
	char msg[MSG_LEN], buf[SWAP_PATH_MAX * 4 + 8];
	int ret;

	if (!s || !out)
		return -EINVAL;
	ret = spec_parse(s, strlen(s), out, msg);
	if (ret)
		put_err(err, errlen, "--swap \"%s\": %s",
			show(s, strlen(s), SWAP_PATH_MAX + 32, buf, sizeof(buf)),
			msg);
	return ret;
}

/* The SPEC part of a uswaptab line: comment cut off, trimmed. */
static void swaptab_trim(const char **b, const char **e)
{
	const char *p;

	for (p = *b; p < *e; p++) {
		if (*p == '#' && (p == *b || is_blank(p[-1]))) {
			*e = p;
			break;
		}
	}
	while (*b < *e && is_blank(**b))
		++*b;
	while (*e > *b && is_blank((*e)[-1]))
		--*e;
}

int swaptab_parse_text(const char *name, const char *text,
		       struct swap_spec *out, unsigned max, unsigned *n,
		       char *err, size_t errlen)
{
	struct swap_spec tab[SWAP_MAX_DEVICES];
	unsigned line_of[SWAP_MAX_DEVICES];
	unsigned limit = MIN(max, SWAP_MAX_DEVICES), line = 0, nr = 0, i;
	const char *p, *b, *e, *eol;
	char msg[MSG_LEN];
	int ret;

	if (!name || !text || !n || (max && !out))
		return -EINVAL;
	for (p = text; *p;) {
		eol = strchrnul(p, '\n');
		b = p;
		e = eol;
		p = *eol ? eol + 1 : eol;
		line++;
		swaptab_trim(&b, &e);
		if (b == e)
			continue;
		if (nr == limit) {
			if (limit == SWAP_MAX_DEVICES)
				put_err(err, errlen, "%s:%u: too many swap devices (at most %u: a swap entry has %u bits for the device)",
					name, line, limit, SWP_TYPE_BITS);
			else
				put_err(err, errlen, "%s:%u: too many swap devices (at most %u)",
					name, line, limit);
			return -E2BIG;
		}
		ret = spec_parse(b, (size_t)(e - b), &tab[nr], msg);
		if (ret) {
			put_err(err, errlen, "%s:%u: %s", name, line, msg);
			return ret;
		}
		for (i = 0; i < nr; i++) {
			if (!strcmp(tab[i].path, tab[nr].path)) {
				char buf[SWAP_PATH_MAX * 4 + 8];

				put_err(err, errlen, "%s:%u: \"%s\" is already on line %u (expected each device once)",
					name, line,
					show(tab[nr].path, strlen(tab[nr].path),
					     SWAP_PATH_MAX, buf, sizeof(buf)),
					line_of[i]);
				return -EINVAL;
			}
		}
		line_of[nr++] = line;
	}
	if (!nr) {
		put_err(err, errlen, "%s: no swap device (expected one " SPEC_SYNTAX " per line)",
			name);
		return -EINVAL;
	}
	memcpy(out, tab, nr * sizeof(tab[0]));
	*n = nr;
	return 0;
}

/* Read the whole of a small file into buf (len bytes): bytes read or -errno. */
static ssize_t read_all(int fd, char *buf, size_t len)
{
	size_t done = 0;
	ssize_t r;

	while (done < len) {
		r = read(fd, buf + done, len - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int swaptab_parse_file(const char *file, struct swap_spec *out, unsigned max,
		       unsigned *n, char *err, size_t errlen)
{
	const size_t cap = SWAPTAB_MAX_BYTES + 1;
	struct stat st;
	ssize_t len;
	char *buf;
	int fd, ret;

	if (!file)
		return -EINVAL;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		put_err(err, errlen, "%s: %s", file, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		put_err(err, errlen, "%s: is a directory (expected a uswaptab file)",
			file);
		ret = -EISDIR;
		goto err_close;
	}
	buf = prim_alloc(cap + 1);
	if (!buf) {
		put_err(err, errlen, "%s: out of memory", file);
		ret = -ENOMEM;
		goto err_close;
	}
	len = read_all(fd, buf, cap);
	if (len < 0) {
		ret = (int)len;
		put_err(err, errlen, "%s: %s", file, strerror(-ret));
	} else if ((size_t)len == cap) {
		ret = -EFBIG;
		put_err(err, errlen, "%s: too large (expected at most %u KiB)",
			file, SWAPTAB_MAX_BYTES >> 10);
	} else if (memchr(buf, 0, (size_t)len)) {
		ret = -EINVAL;
		put_err(err, errlen, "%s: contains a NUL byte (expected text)",
			file);
	} else {
		buf[len] = 0;
		ret = swaptab_parse_text(file, buf, out, max, n, err, errlen);
	}
	prim_free(buf, cap + 1);
err_close:
	close(fd);
	return ret;
}

/* ---- per-node availability lists --------------------------------------- */

struct swap_avail_list {
	uint8_t nr;
	uint8_t dev[SWAP_MAX_DEVICES];		/* head first */
};

struct swap_avail {
	/* Protects full[] and lists[]; a leaf lock. */
	pthread_mutex_t lock;
	unsigned nr_nodes, nr_devs;
	size_t alloc_len;
	int prio[SWAP_MAX_DEVICES];		/* own priority; fixed */
	int node[SWAP_MAX_DEVICES];		/* attached node or -1; fixed */
	bool full[SWAP_MAX_DEVICES];		/* off the lists */
	struct swap_avail_list lists[];		/* one per node */
};

static void avail_assert_locked(struct swap_avail *sa)
{
	assert(pthread_mutex_trylock(&sa->lock) == EBUSY);
	(void)sa;
}

static int prio_on(const struct swap_avail *sa, unsigned node, unsigned dev)
{
	if (sa->prio[dev] < 0 && sa->node[dev] == (int)node)
		return -1;
	return sa->prio[dev];
}

/* Put dev on node's list behind every device of its priority or higher. */
static void list_add_locked(struct swap_avail *sa, unsigned node,
			    unsigned dev)
{
	struct swap_avail_list *l = &sa->lists[node];
	int p = prio_on(sa, node, dev);
	unsigned i = 0;

	avail_assert_locked(sa);
	assert(l->nr < SWAP_MAX_DEVICES);
	while (i < l->nr && prio_on(sa, node, l->dev[i]) >= p)
		i++;
	memmove(&l->dev[i + 1], &l->dev[i], l->nr - i);
	l->dev[i] = (uint8_t)dev;
	l->nr++;
}

static void list_del_locked(struct swap_avail *sa, unsigned node,
			    unsigned dev)
{
	struct swap_avail_list *l = &sa->lists[node];
	unsigned i = 0;

	avail_assert_locked(sa);
	while (i < l->nr && l->dev[i] != dev)
		i++;
	assert(i < l->nr);
	memmove(&l->dev[i], &l->dev[i + 1], l->nr - i - 1);
	l->nr--;
}

/* Move the head of node's list behind the others of its priority. */
static void list_rotate_head_locked(struct swap_avail *sa, unsigned node)
{
	struct swap_avail_list *l = &sa->lists[node];
	uint8_t head = l->dev[0];
	int p = prio_on(sa, node, head);
	unsigned i = 1;

	avail_assert_locked(sa);
	while (i < l->nr && prio_on(sa, node, l->dev[i]) == p)
		i++;
	memmove(&l->dev[0], &l->dev[1], i - 1);
	l->dev[i - 1] = head;
}

int swap_avail_create(struct swap_avail **out, unsigned nr_nodes,
		      const int *user_prio, const int *dev_node,
		      unsigned nr_devs)
{
	size_t len = sizeof(struct swap_avail) +
		     (size_t)nr_nodes * sizeof(struct swap_avail_list);
	struct swap_avail *sa;
	int least = -1;
	unsigned d, node;

	if (!out || !nr_nodes || nr_nodes > SWAP_MAX_NODES || !nr_devs ||
	    nr_devs > SWAP_MAX_DEVICES)
		return -EINVAL;
	for (d = 0; d < nr_devs; d++) {
		if (user_prio && user_prio[d] != SWAP_PRIO_AUTO &&
		    (user_prio[d] < 0 || user_prio[d] > SWAP_PRIO_MAX))
			return -EINVAL;
		if (dev_node && (dev_node[d] < -1 ||
				 dev_node[d] >= (int)SWAP_MAX_NODES))
			return -EINVAL;
	}
	sa = prim_alloc(len);
	if (!sa)
		return -ENOMEM;
	sa->alloc_len = len;
	sa->nr_nodes = nr_nodes;
	sa->nr_devs = nr_devs;
	pthread_mutex_init(&sa->lock, NULL);
	for (d = 0; d < nr_devs; d++) {
		bool user = user_prio && user_prio[d] != SWAP_PRIO_AUTO;

		sa->prio[d] = user ? user_prio[d] : --least;
		sa->node[d] = dev_node ? dev_node[d] : -1;
	}
	pthread_mutex_lock(&sa->lock);
	for (node = 0; node < nr_nodes; node++) {
		for (d = 0; d < nr_devs; d++)
			list_add_locked(sa, node, d);
	}
	pthread_mutex_unlock(&sa->lock);
	*out = sa;
	return 0;
}

void swap_avail_destroy(struct swap_avail *sa)
{
	if (!sa)
		return;
	pthread_mutex_destroy(&sa->lock);
	prim_free(sa, sa->alloc_len);
}

int swap_avail_prio(const struct swap_avail *sa, unsigned dev)
{
	assert(dev < sa->nr_devs);
	return sa->prio[dev];
}

int swap_avail_prio_on(const struct swap_avail *sa, unsigned node,
		       unsigned dev)
{
	assert(dev < sa->nr_devs);
	return prio_on(sa, node, dev);
}

int swap_avail_next(struct swap_avail *sa, int node)
{
	struct swap_avail_list *l;
	int dev = -ENOSPC;

	if (node < 0 || (unsigned)node >= sa->nr_nodes)
		node = 0;
	l = &sa->lists[node];
	pthread_mutex_lock(&sa->lock);
	if (l->nr) {
		dev = l->dev[0];
		list_rotate_head_locked(sa, (unsigned)node);
	}
	pthread_mutex_unlock(&sa->lock);
	return dev;
}

void swap_avail_full(struct swap_avail *sa, unsigned dev)
{
	unsigned node;

	assert(dev < sa->nr_devs);
	pthread_mutex_lock(&sa->lock);
	if (!sa->full[dev]) {
		sa->full[dev] = true;
		for (node = 0; node < sa->nr_nodes; node++)
			list_del_locked(sa, node, dev);
	}
	pthread_mutex_unlock(&sa->lock);
}

void swap_avail_room(struct swap_avail *sa, unsigned dev)
{
	unsigned node;

	assert(dev < sa->nr_devs);
	pthread_mutex_lock(&sa->lock);
	if (sa->full[dev]) {
		sa->full[dev] = false;
		for (node = 0; node < sa->nr_nodes; node++)
			list_add_locked(sa, node, dev);
	}
	pthread_mutex_unlock(&sa->lock);
}

bool swap_avail_has_room(const struct swap_avail *sa, unsigned dev)
{
	struct swap_avail *s = (struct swap_avail *)sa;
	bool room;

	assert(dev < sa->nr_devs);
	pthread_mutex_lock(&s->lock);
	room = !sa->full[dev];
	pthread_mutex_unlock(&s->lock);
	return room;
}

static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL,
		      *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

size_t swap_avail_describe(const struct swap_avail *sa, char *buf, size_t len)
{
	struct swap_avail *s = (struct swap_avail *)sa;
	size_t pos = 0;
	unsigned node, i;

	if (len)
		buf[0] = 0;
	pthread_mutex_lock(&s->lock);
	for (node = 0; node < sa->nr_nodes; node++) {
		const struct swap_avail_list *l = &sa->lists[node];

		append(buf, len, &pos, "node %u:", node);
		for (i = 0; i < l->nr; i++)
			append(buf, len, &pos, " %u(%d)", l->dev[i],
			       prio_on(sa, node, l->dev[i]));
		append(buf, len, &pos, "\n");
	}
	pthread_mutex_unlock(&s->lock);
	return pos;
}

static int avail_validate_list(const struct swap_avail *sa, unsigned node)
{
	const struct swap_avail_list *l = &sa->lists[node];
	unsigned seen = 0, want = 0, i, d;

	for (d = 0; d < sa->nr_devs; d++)
		want |= sa->full[d] ? 0 : 1u << d;
	if (l->nr > sa->nr_devs)
		return -EUCLEAN;
	for (i = 0; i < l->nr; i++) {
		d = l->dev[i];
		if (d >= sa->nr_devs || (seen & (1u << d)))
			return -EUCLEAN;
		seen |= 1u << d;
		if (i && prio_on(sa, node, l->dev[i - 1]) < prio_on(sa, node, d))
			return -EUCLEAN;
	}
	return seen == want ? 0 : -EUCLEAN;
}

int swap_avail_validate(const struct swap_avail *sa)
{
	struct swap_avail *s = (struct swap_avail *)sa;
	int least = -1, ret = 0;
	unsigned node, d;

	for (d = 0; d < sa->nr_devs; d++) {
		if (sa->prio[d] < 0 && sa->prio[d] != --least)
			return -EUCLEAN;
		if (sa->prio[d] > SWAP_PRIO_MAX)
			return -EUCLEAN;
	}
	pthread_mutex_lock(&s->lock);
	for (node = 0; node < sa->nr_nodes && !ret; node++)
		ret = avail_validate_list(sa, node);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* ---- topology from sysfs ---------------------------------------------- */

const char *sysfs_root(void)
{
	const char *root = getenv("USWAP_SYSFS_ROOT");

	return root && *root ? root : "/sys";
}

/*
 * Read a small sysfs file into buf, NUL-terminated, trailing whitespace
 * dropped.  0 or -errno.
 */
static int sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read_all(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return (int)n;
	while (n > 0 && (buf[n - 1] == '\n' || is_blank(buf[n - 1])))
		n--;
	buf[n] = 0;
	return 0;
}

/* A numa_node value: a node id, or -1 for "-1", junk or out of range. */
static int sysfs_node_value(const char *path)
{
	char buf[32];
	int v;

	if (sysfs_read(path, buf, sizeof(buf)))
		return -1;
	if (parse_int(buf, strlen(buf), -1, SWAP_MAX_NODES - 1, &v))
		return -1;
	return v;
}

/*
 * Next range of a list such as "0-3,8,10-11": true with [*lo, *hi], or
 * false at the end or on malformed input.
 */
static bool range_next(const char **p, unsigned *lo, unsigned *hi)
{
	const char *s = *p;
	unsigned long a, b;
	char *end;

	if (*s == ',')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	a = strtoul(s, &end, 10);
	b = a;
	if (*end == '-') {
		s = end + 1;
		if (*s < '0' || *s > '9')
			return false;
		b = strtoul(s, &end, 10);
	}
	if (b < a || b > UINT_MAX || (*end && *end != ','))
		return false;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	*p = end;
	return true;
}

/* Highest id of a range list file + 1, or 0 when unreadable or empty. */
static unsigned range_file_count(const char *path)
{
	char buf[4096];
	const char *p = buf;
	unsigned lo, hi, count = 0;

	if (sysfs_read(path, buf, sizeof(buf)))
		return 0;
	while (range_next(&p, &lo, &hi))
		count = MAX(count, hi >= SWAP_MAX_NODES ? SWAP_MAX_NODES : hi + 1);
	return *p ? 0 : count;
}

static bool range_file_has(const char *path, unsigned id)
{
	char buf[4096];
	const char *p = buf;
	unsigned lo, hi;

	if (sysfs_read(path, buf, sizeof(buf)))
		return false;
	while (range_next(&p, &lo, &hi)) {
		if (id >= lo && id <= hi)
			return true;
	}
	return false;
}

static const char *root_or_default(const char *root)
{
	return root ? root : sysfs_root();
}

/* snprintf into a PATH_MAX buffer; false when the path does not fit. */
static bool __attribute__((format(printf, 2, 3)))
mkpath(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	return n >= 0 && n < PATH_MAX;
}

int sysfs_nr_nodes(const char *root)
{
	char path[PATH_MAX];
	unsigned n = 0;

	root = root_or_default(root);
	if (mkpath(path, "%s/devices/system/node/possible", root))
		n = range_file_count(path);
	if (!n && mkpath(path, "%s/devices/system/node/online", root))
		n = range_file_count(path);
	return n ? (int)n : 1;
}

int sysfs_cpu_node(const char *root, unsigned cpu)
{
	char path[PATH_MAX];
	struct stat st;
	int nr, node;

	root = root_or_default(root);
	nr = sysfs_nr_nodes(root);
	for (node = 0; node < nr; node++) {
		if (mkpath(path, "%s/devices/system/cpu/cpu%u/node%d", root, cpu,
			   node) && !lstat(path, &st))
			return node;
	}
	for (node = 0; node < nr; node++) {
		if (mkpath(path, "%s/devices/system/node/node%d/cpulist", root,
			   node) && range_file_has(path, cpu))
			return node;
	}
	return -1;
}

/* Cut the last component of an absolute path ("/a/b" -> "/a"). */
static void path_up(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash && slash != path)
		*slash = 0;
	else if (slash)
		path[1] = 0;
}

static bool path_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/*
 * The node of a device directory (resolved, under devices/ of the root
 * `top`): its numa_node, else the nearest ancestor's below `top`.
 */
static int device_dir_node(const char *top, char *dev)
{
	char path[PATH_MAX];
	size_t top_len = strlen(top);

	while (strlen(dev) > top_len && !strncmp(dev, top, top_len)) {
		if (mkpath(path, "%s/numa_node", dev) && path_exists(path))
			return sysfs_node_value(path);
		path_up(dev);
	}
	return -1;
}

/* The alphabetically first entry of dir (not "." or ".."), into name. */
static bool first_entry(const char *dir, char *name, size_t len)
{
	char buf[2048] __attribute__((aligned(8)));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool found = false;
	ssize_t n, off;

	if (fd < 0)
		return false;
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;) {
			const struct dirent64 *de = (const void *)(buf + off);

			off += de->d_reclen;
			if (de->d_name[0] == '.' ||
			    strlen(de->d_name) >= len ||
			    (found && strcmp(de->d_name, name) >= 0))
				continue;
			strcpy(name, de->d_name);
			found = true;
		}
	}
	close(fd);
	return found;
}

/* The node of a block device directory (resolved), following slaves. */
static int block_dir_node(const char *top, char *dir, unsigned depth)
{
	char path[PATH_MAX], real[PATH_MAX], name[NAME_MAX + 1];

	if (mkpath(path, "%s/partition", dir) && path_exists(path))
		path_up(dir);
	if (mkpath(path, "%s/device", dir) && realpath(path, real))
		return device_dir_node(top, real);
	if (depth >= SYSFS_DEPTH || !mkpath(path, "%s/slaves", dir) ||
	    !first_entry(path, name, sizeof(name)) ||
	    !mkpath(path, "%s/slaves/%s", dir, name) || !realpath(path, real))
		return -1;
	return block_dir_node(top, real, depth + 1);
}

int sysfs_blockdev_node(const char *root, unsigned major, unsigned minor)
{
	char path[PATH_MAX], top[PATH_MAX], dir[PATH_MAX];

	root = root_or_default(root);
	if (!realpath(root, top) || !mkpath(path, "%s/dev/block/%u:%u", top,
					    major, minor) ||
	    !realpath(path, dir))
		return -1;
	return block_dir_node(top, dir, 0);
}

int sysfs_path_node(const char *root, const char *path)
{
	char p[PATH_MAX];
	struct stat st;
	dev_t dev;

	if (!path || !*path || strlen(path) >= sizeof(p))
		return -1;
	strcpy(p, path);
	while (stat(p, &st)) {
		if ((errno != ENOENT && errno != ENOTDIR) || !strcmp(p, "/") ||
		    !strcmp(p, "."))
			return -1;
		if (!strchr(p, '/'))
			strcpy(p, ".");
		else
			path_up(p);
	}
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	return sysfs_blockdev_node(root, major(dev), minor(dev));
}
