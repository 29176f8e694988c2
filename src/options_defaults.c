// SPDX-License-Identifier: MIT
/*
 * options_defaults.c - a whole set of options: whether it holds together,
 * and the documented defaults that fill in what the user left out.
 *
 * options.c checks each value as it is set, alone; here the options are
 * checked together (high within max, max room for a few folios, swap
 * "none" only with zswap, ...) and against the machine (the swap directory
 * must be usable).  The CLI checks what the user gave before it starts
 * anything, with zero fields meaning "the default"; the runtime then fills
 * those fields from the machine (MemAvailable, the online CPUs) and checks
 * the result again, and that the swap directory has room to start.  The defaults
 * are listed in options.h.
 *
 * Nothing here allocates: the preload library calls it from its
 * constructor, inside a program that has not started yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base.h"
#include "prim.h"
#include "uswap.h"
#include "options.h"

#define SZ_4K		(4ull << 10)
#define SZ_1M		(1ull << 20)
#define SZ_2M		(2ull << 20)
#define SZ_4M		(4ull << 20)

#define MAX_MIN_FOLIOS	4	/* max holds at least this many folios */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The swap directory must exist, be a directory and be writable. */
static int check_swap_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int ret = prim_stat(dir, &st);

	if (ret) {
		options_err(err, errlen, "swap dir \"%s\": %s", dir, strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		options_err(err, errlen, "swap dir \"%s\" is not a directory", dir);
		return -ENOTDIR;
	}
	ret = prim_access(dir, W_OK | X_OK);
	if (ret) {
		options_err(err, errlen, "swap dir \"%s\" is not writable: %s", dir,
			strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * Zero fields are "the default" here, so that the CLI can check what the
 * user gave before the runtime fills in the rest.  Value errors are
 * -EINVAL; a swap directory that cannot be used gives its errno.
 */
EXPORT int uswap_options_check(const struct uswap_options *opt, char *err,
			       size_t errlen)
{
	uint64_t folio;
	char a[32], b[32], c[32];

	if (!opt)
		return -EINVAL;
	folio = opt->folio_size ? opt->folio_size : OPTIONS_FOLIO_DEFAULT;
	if (!options_folio_size_valid(folio)) {
		options_err(err, errlen, "folio size %s is not supported (expected 4K, 16K, 64K or 2M)",
			options_size_str(folio, a, sizeof(a)));
		return -EINVAL;
	}
	if (opt->max && opt->max < SZ_1M) {
		options_err(err, errlen, "max %s is too small (expected at least 1M)",
			options_size_str(opt->max, a, sizeof(a)));
		return -EINVAL;
	}
	if (opt->max && opt->max < MAX_MIN_FOLIOS * folio) {
		options_err(err, errlen, "max %s is less than %d folios of %s (expected at least %s, or a smaller folio)",
			options_size_str(opt->max, a, sizeof(a)),
			MAX_MIN_FOLIOS,
			options_size_str(folio, b, sizeof(b)),
			options_size_str(MAX_MIN_FOLIOS * folio, c, sizeof(c)));
		return -EINVAL;
	}
	if (opt->high && opt->high < folio) {
		options_err(err, errlen, "high %s is less than one folio (expected at least %s)",
			options_size_str(opt->high, a, sizeof(a)),
			options_size_str(folio, b, sizeof(b)));
		return -EINVAL;
	}
	if (opt->high && opt->max && opt->high > opt->max) {
		options_err(err, errlen, "high %s is greater than max %s (expected high <= max)",
			options_size_str(opt->high, a, sizeof(a)),
			options_size_str(opt->max, b, sizeof(b)));
		return -EINVAL;
	}
	if (opt->min_region && opt->min_region < SZ_4K) {
		options_err(err, errlen, "min-region %s is too small (expected at least 4K)",
			options_size_str(opt->min_region, a, sizeof(a)));
		return -EINVAL;
	}
	if (opt->swap_size && opt->swap_size < SZ_2M) {
		options_err(err, errlen, "swap-size %s is too small (expected at least 2M)",
			options_size_str(opt->swap_size, a, sizeof(a)));
		return -EINVAL;
	}
	if (opt->fault_threads > OPTIONS_FAULT_THREADS_MAX) {
		options_err(err, errlen, "fault-threads %u is out of range (expected 1 to %u)",
			opt->fault_threads, OPTIONS_FAULT_THREADS_MAX);
		return -EINVAL;
	}
	if (opt->flags & ~(options_flags() | USWAP_OPT_JOIN_TREE)) {
		options_err(err, errlen, "unknown flags 0x%x", opt->flags);
		return -EINVAL;
	}
	if (opt->zswap_max_pct > 100 || opt->zswap_accept_pct > 100) {
		options_err(err, errlen, "zswap-max %u%% or zswap-accept %u%% is over 100%%",
			opt->zswap_max_pct, opt->zswap_accept_pct);
		return -EINVAL;
	}
	if (opt->zswap_unit > USWAP_ZSWAP_UNIT_PAGE ||
	    opt->zswap_threads > OPTIONS_ZSWAP_THREADS_MAX) {
		options_err(err, errlen, "zswap-unit %u or zswap-threads %u is out of range",
			opt->zswap_unit, opt->zswap_threads);
		return -EINVAL;
	}
	if (!memchr(opt->zswap, 0, sizeof(opt->zswap))) {
		options_err(err, errlen, "zswap is not terminated (at most %zu bytes)",
			sizeof(opt->zswap) - 1);
		return -EINVAL;
	}
	if (!memchr(opt->swap_dir, 0, sizeof(opt->swap_dir)) ||
	    !memchr(opt->stats_path, 0, sizeof(opt->stats_path))) {
		options_err(err, errlen, "swap-dir or stats path is not terminated (at most %zu bytes)",
			sizeof(opt->swap_dir) - 1);
		return -ENAMETOOLONG;
	}
	if ((opt->flags & USWAP_OPT_NO_SWAP_FILE) &&
	    (opt->swap[0] || opt->swaptab[0])) {
		options_err(err, errlen, "swap none and swap devices contradict each other (expected one or the other)");
		return -EINVAL;
	}
	if (!memchr(opt->swap, 0, sizeof(opt->swap)) ||
	    !memchr(opt->swaptab, 0, sizeof(opt->swaptab))) {
		options_err(err, errlen, "swap or swaptab is not terminated");
		return -EINVAL;
	}
	if (opt->swap_node_policy > USWAP_SWAP_NODE_CPU) {
		options_err(err, errlen, "swap-node-policy %u is out of range",
			opt->swap_node_policy);
		return -EINVAL;
	}
	if ((opt->flags & USWAP_OPT_NO_SWAP_FILE) &&
	    (!opt->zswap[0] || !strcmp(opt->zswap, "off"))) {
		options_err(err, errlen, "swap none needs zswap (expected --zswap lz4, zstd or deflate: with no swap file the compressed pool is the only tier)");
		return -EINVAL;
	}
	if (opt->swap_dir[0] && !(opt->flags & USWAP_OPT_NO_SWAP_FILE))
		return check_swap_dir(opt->swap_dir, err, errlen);
	return 0;
}

/* MemAvailable of /proc/meminfo, in bytes. */
static int meminfo_available(uint64_t *bytes)
{
	char buf[4096], *p;
	uint64_t kib = 0;
	ssize_t n = prim_read_file("/proc/meminfo", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	p = strstr(buf, "MemAvailable:");
	if (!p)
		return -ENOENT;
	p += strlen("MemAvailable:");
	while (*p == ' ')
		p++;
	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p) && kib < (UINT64_MAX >> 10) / 10; p++)
		kib = kib * 10 + (unsigned)(*p - '0');
	*bytes = kib << 10;
	return 0;
}

/*
 * The swap directory's file system must have room for a start (4M): a
 * swap file without a size then grows with its free space (swap_file.c).
 */
static int check_swap_room(const char *dir, char *err, size_t errlen)
{
	struct statvfs sv;
	uint64_t free_bytes;

	if (statvfs(dir, &sv)) {
		int ret = -errno;

		options_err(err, errlen, "swap dir \"%s\": %s", dir, strerror(-ret));
		return ret;
	}
	free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (free_bytes < SZ_4M) {
		options_err(err, errlen, "swap dir \"%s\" has only %llu KiB free (expected at least 4M; give another swap-dir)",
			dir, (unsigned long long)(free_bytes >> 10));
		return -ENOSPC;
	}
	return 0;
}

int options_apply_defaults(struct uswap_options *opt, char *err,
			   size_t errlen)
{
	struct uswap_options o = *opt;
	uint64_t avail = 0;
	int ret;

	if (!o.folio_size)
		o.folio_size = OPTIONS_FOLIO_DEFAULT;
	if (!o.min_region)
		o.min_region = OPTIONS_MIN_REGION_DEFAULT;
	if (!o.fault_threads)
		o.fault_threads = OPTIONS_FAULT_THREADS_DEFAULT;
	if (!o.zswap[0])
		strcpy(o.zswap, OPTIONS_ZSWAP_DEFAULT);
	if (!o.zswap_max_pct)
		o.zswap_max_pct = OPTIONS_ZSWAP_MAX_PCT_DEFAULT;
	if (!o.zswap_accept_pct)
		o.zswap_accept_pct = OPTIONS_ZSWAP_ACCEPT_PCT_DEFAULT;
	if (!o.zswap_unit)
		o.zswap_unit = USWAP_ZSWAP_UNIT_FOLIO;
	if (!o.swap_node_policy)
		o.swap_node_policy = USWAP_SWAP_NODE_PAGE;
	if (!o.zswap_threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		o.zswap_threads = (unsigned)MIN(MAX(cpus - 1, 1L),
					       (long)OPTIONS_ZSWAP_THREADS_MAX);
	}
	if (!o.swap_dir[0]) {
		const char *tmp = getenv("TMPDIR");

		if (!tmp || !*tmp)
			tmp = "/tmp";
		if (strlen(tmp) >= sizeof(o.swap_dir)) {
			options_err(err, errlen, "TMPDIR is too long for the swap dir (%zu bytes, at most %zu): give swap-dir",
				strlen(tmp), sizeof(o.swap_dir) - 1);
			return -ENAMETOOLONG;
		}
		strcpy(o.swap_dir, tmp);
	}
	/* An invalid folio size would make the roundings below meaningless. */
	if (!options_folio_size_valid(o.folio_size))
		return uswap_options_check(&o, err, errlen);
	if (!o.max) {
		ret = meminfo_available(&avail);
		if (ret) {
			options_err(err, errlen, "cannot read MemAvailable from /proc/meminfo (%s): give max",
				strerror(-ret));
			return ret;
		}
		o.max = avail / 2 / o.folio_size * o.folio_size;
		if (o.high > o.max) {
			char a[32], b[32];

			options_err(err, errlen, "high %s is greater than the default max %s (half of MemAvailable): give max too",
				options_size_str(o.high, a, sizeof(a)),
				options_size_str(o.max, b, sizeof(b)));
			return -EINVAL;
		}
	}
	if (!o.high)
		o.high = (o.max - o.max / OPTIONS_HIGH_HEADROOM) /
			 o.folio_size * o.folio_size;
	ret = uswap_options_check(&o, err, errlen);
	if (ret)
		return ret;
	if (!(o.flags & USWAP_OPT_NO_SWAP_FILE)) {
		ret = check_swap_room(o.swap_dir, err, errlen);
		if (ret)
			return ret;
	}
	*opt = o;
	return 0;
}
