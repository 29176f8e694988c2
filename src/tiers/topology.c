// SPDX-License-Identifier: MIT
/*
 * topology.c - the NUMA topology read from sysfs: how many nodes there
 * are, a CPU's node, and the node a swap device is attached to.
 *
 * One of the three parts of several swap devices (swapdev.h), beside
 * swapspec.c (the device specs) and swapavail.c (the per-node lists,
 * which promote a device on the list of its node).  This rebuilds the
 * lookups behind the kernel's swap_node(), which takes a swap device's
 * node from its block device.
 *
 * sysfs is read under a root that tests point at fixture trees: the node
 * count from devices/system/node/possible, a CPU's node from its nodeN
 * link, and a block device's node by following dev/block/MAJ:MIN to the
 * disk (a partition's parent), then its device's numa_node, or, for a
 * disk with no device of its own (dm, md), its first slave.  Files are
 * read once, at setup, into buffers on the stack: nothing here calls
 * malloc.
 */
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

#include "base.h"
#include "prim.h"
#include "swapdev.h"

#define SYSFS_DEPTH	8	/* slaves followed, at most */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

const char *sysfs_root(void)
{
	const char *root = getenv("USWAP_SYSFS_ROOT");

	return root && *root ? root : "/sys";
}

/*
 * Read a small sysfs file into buf, NUL-terminated, trailing whitespace
 * dropped.  Only a regular file (sysfs attributes are): prim_read_file
 * does not wait on a FIFO under a test's root, which would block the
 * runtime's start.  0 or -errno.
 */
int sysfs_read_text(const char *path, char *buf, size_t len)
{
	ssize_t n = prim_read_file(path, buf, len);

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

	if (sysfs_read_text(path, buf, sizeof(buf)))
		return -1;
	if (swapdev_parse_int(buf, strlen(buf), -1, SWAP_MAX_NODES - 1, &v))
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

	if (sysfs_read_text(path, buf, sizeof(buf)))
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

	if (sysfs_read_text(path, buf, sizeof(buf)))
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

bool sysfs_mkpath(char *buf, const char *fmt, ...)
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
	if (sysfs_mkpath(path, "%s/devices/system/node/possible", root))
		n = range_file_count(path);
	if (!n && sysfs_mkpath(path, "%s/devices/system/node/online", root))
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
		if (sysfs_mkpath(path, "%s/devices/system/cpu/cpu%u/node%d", root, cpu,
			   node) && !prim_lstat(path, &st))
			return node;
	}
	for (node = 0; node < nr; node++) {
		if (sysfs_mkpath(path, "%s/devices/system/node/node%d/cpulist", root,
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

	return !prim_stat(path, &st);
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
		if (sysfs_mkpath(path, "%s/numa_node", dev) && path_exists(path))
			return sysfs_node_value(path);
		path_up(dev);
	}
	return -1;
}

/* The alphabetically first entry of dir (not "." or ".."), into name. */
static bool first_entry(const char *dir, char *name, size_t len)
{
	char buf[2048] __attribute__((aligned(8)));
	int fd = prim_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	bool found = false;
	ssize_t n, off;

	if (fd < 0)
		return false;
	while ((n = prim_getdents(fd, buf, sizeof(buf))) > 0) {
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
	prim_close(fd);
	return found;
}

/* The node of a block device directory (resolved), following slaves. */
static int block_dir_node(const char *top, char *dir, unsigned depth)
{
	char path[PATH_MAX], real[PATH_MAX], name[NAME_MAX + 1];

	if (sysfs_mkpath(path, "%s/partition", dir) && path_exists(path))
		path_up(dir);
	if (sysfs_mkpath(path, "%s/device", dir) && realpath(path, real))
		return device_dir_node(top, real);
	if (depth >= SYSFS_DEPTH || !sysfs_mkpath(path, "%s/slaves", dir) ||
	    !first_entry(path, name, sizeof(name)) ||
	    !sysfs_mkpath(path, "%s/slaves/%s", dir, name) || !realpath(path, real))
		return -1;
	return block_dir_node(top, real, depth + 1);
}

int sysfs_blockdev_node(const char *root, unsigned major, unsigned minor)
{
	char path[PATH_MAX], top[PATH_MAX], dir[PATH_MAX];

	root = root_or_default(root);
	if (!realpath(root, top) || !sysfs_mkpath(path, "%s/dev/block/%u:%u", top,
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
	int err;

	if (!path || !*path || strlen(path) >= sizeof(p))
		return -1;
	strcpy(p, path);
	while ((err = prim_stat(p, &st))) {
		if ((err != -ENOENT && err != -ENOTDIR) || !strcmp(p, "/") ||
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
