/* SPDX-License-Identifier: MIT */
/*
 * Description: options (src/options.c, src/options_defaults.c): sizes,
 * every option by name and from the environment, good and bad values and
 * their messages, the consistency checks and the documented defaults.
 *
 * The defaults that depend on the machine (max from MemAvailable) are
 * checked against the test's own reading of /proc/meminfo, with room for
 * what changes in between; swap_size has no default (a swap file without
 * one grows), and a swap_dir with less than 4M free is refused, checked on
 * small tmpfs mounts when the test may mount (root, in a private mount
 * namespace), and skipped with a note otherwise.  0 pass, 1 fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "uswap.h"
#include "options.h"
#include "unitlib.h"

#define K	(1ull << 10)
#define M	(1ull << 20)
#define G	(1ull << 30)
#define T	(1ull << 40)

static char tmp_root[] = "/tmp/uswap-options-test.XXXXXX";

static void expect_size(const char *s, uint64_t want)
{
	uint64_t v = 0xdead;
	int ret = uswap_size_parse(s, &v);

	if (ret || v != want)
		t_fail("size \"%s\": ret %d value %llu, expected %llu", s, ret,
		       (unsigned long long)v, (unsigned long long)want);
}

static void expect_size_err(const char *s, int want)
{
	uint64_t v = 0xdead;
	int ret = uswap_size_parse(s, &v);

	if (ret != want || v != 0xdead)
		t_fail("size \"%s\": ret %d value %llu, expected error %d", s,
		       ret, (unsigned long long)v, want);
}

static void test_sizes(void)
{
	uint64_t v;

	expect_size("0", 0);
	expect_size("4096", 4096);
	expect_size("007", 7);
	expect_size("1K", K);
	expect_size("1k", K);
	expect_size("1KiB", K);
	expect_size("64M", 64 * M);
	expect_size("64m", 64 * M);
	expect_size("64MiB", 64 * M);
	expect_size("2G", 2 * G);
	expect_size("2g", 2 * G);
	expect_size("2GiB", 2 * G);
	expect_size("3T", 3 * T);
	expect_size("3t", 3 * T);
	expect_size("3TiB", 3 * T);
	expect_size("1.5G", G + G / 2);
	expect_size("1.5GiB", G + G / 2);
	expect_size("0.5K", 512);
	expect_size("1.25M", M + M / 4);
	expect_size("0.001K", 1);	/* 1.024 bytes, rounded down */
	expect_size("1.0000000001K", K);
	expect_size("0.99999999999999999999999999K", K - 1);
	expect_size("18446744073709551615", UINT64_MAX);
	expect_size("16777215T", 16777215 * T);
	expect_size("16777215.99999999999999T", UINT64_MAX);
	expect_size("16777215.999999999999999999999T", UINT64_MAX);

	expect_size_err("", -EINVAL);
	expect_size_err("-1", -EINVAL);
	expect_size_err("-1G", -EINVAL);
	expect_size_err("+1", -EINVAL);
	expect_size_err("12Q", -EINVAL);
	expect_size_err("1.5", -EINVAL);	/* a fraction of a byte */
	expect_size_err("1.", -EINVAL);
	expect_size_err("1.G", -EINVAL);
	expect_size_err(".5G", -EINVAL);
	expect_size_err("G", -EINVAL);
	expect_size_err(" 1G", -EINVAL);
	expect_size_err("1G ", -EINVAL);
	expect_size_err("1 G", -EINVAL);
	expect_size_err("1GB", -EINVAL);
	expect_size_err("1Gi", -EINVAL);
	expect_size_err("1Gib", -EINVAL);
	expect_size_err("1GG", -EINVAL);
	expect_size_err("0x10", -EINVAL);
	expect_size_err("1e3", -EINVAL);
	expect_size_err("1,5G", -EINVAL);
	expect_size_err("99999999999999999999Q", -EINVAL);
	expect_size_err("18446744073709551616", -ERANGE);
	expect_size_err("99999999999999999999999", -ERANGE);
	expect_size_err("16777216T", -ERANGE);
	expect_size_err("17179869184G", -ERANGE);
	expect_size_err("16777216.0T", -ERANGE);
	if (uswap_size_parse(NULL, &v) != -EINVAL ||
	    uswap_size_parse("1", NULL) != -EINVAL)
		t_fail("size_parse(NULL) is not -EINVAL");
}

/* Set name=value, expect success, return the options. */
static struct uswap_options set_ok(const char *name, const char *value)
{
	struct uswap_options o;
	char err[256] = "";
	int ret;

	uswap_options_init(&o);
	ret = uswap_options_set(&o, name, value, err, sizeof(err));
	if (ret)
		t_fail("set %s=\"%s\": %d (%s)", name, value ? value : "(null)",
		       ret, err);
	return o;
}

/* Set name=value, expect error want and a message containing msg. */
static void set_bad(const char *name, const char *value, int want,
		    const char *msg)
{
	struct uswap_options o, before;
	char err[512] = "";
	int ret;

	uswap_options_init(&o);
	o.max = 123 * M;
	o.flags = USWAP_OPT_VERBOSE;
	strcpy(o.swap_dir, "/keep");
	before = o;
	ret = uswap_options_set(&o, name, value, err, sizeof(err));
	if (ret != want)
		t_fail("set %s=\"%s\": %d, expected %d (%s)", name,
		       value ? value : "(null)", ret, want, err);
	if (!strstr(err, msg))
		t_fail("set %s=\"%s\": message \"%s\" lacks \"%s\"", name,
		       value ? value : "(null)", err, msg);
	if (strchr(err, '\n'))
		t_fail("set %s: message has more than one line", name);
	if (memcmp(&o, &before, sizeof(o)))
		t_fail("set %s=\"%s\" failed but changed the options", name,
		       value ? value : "(null)");
	/* No room for a message: same result, nothing written. */
	if (uswap_options_set(&o, name, value, NULL, 0) != want)
		t_fail("set %s without err buffer: different result", name);
}

static void test_set(void)
{
	struct uswap_options o;
	char path[300];

	/* Sizes. */
	if (set_ok("max", "64M").max != 64 * M || set_ok("max", "1M").max != M ||
	    set_ok("max", "1.5G").max != G + G / 2)
		t_fail("max");
	if (set_ok("high", "48M").high != 48 * M || set_ok("high", "4K").high != 4 * K)
		t_fail("high");
	if (set_ok("min-region", "2M").min_region != 2 * M ||
	    set_ok("min_region", "4096").min_region != 4096)
		t_fail("min-region");
	if (set_ok("swap-size", "4G").swap_size != 4 * G ||
	    set_ok("swap_size", "2M").swap_size != 2 * M)
		t_fail("swap-size");
	set_bad("max", "12Q", -EINVAL,
		"--max: \"12Q\" is not a size (expected a number with an optional K, M, G or T suffix)");
	set_bad("max", "", -EINVAL, "--max: \"\" is not a size");
	set_bad("max", "-64M", -EINVAL, "is not a size");
	set_bad("max", "64M junk", -EINVAL, "is not a size");
	set_bad("max", "99999999T", -ERANGE, "--max: \"99999999T\" is too large");
	set_bad("max", "512K", -EINVAL, "--max: \"512K\" is too small (expected at least 1M)");
	set_bad("max", "0", -EINVAL, "too small");
	set_bad("max", NULL, -EINVAL, "--max: missing value");
	set_bad("high", "lots", -EINVAL, "--high: \"lots\" is not a size");
	set_bad("high", "0", -EINVAL, "--high: \"0\" is too small (expected at least 4K)");
	set_bad("high", "20000000000000000000", -ERANGE, "too large");
	set_bad("min-region", "1K", -EINVAL, "--min-region: \"1K\" is too small");
	set_bad("min-region", "1.5", -EINVAL, "--min-region: \"1.5\" is not a size");
	set_bad("swap-size", "1M", -EINVAL, "--swap-size: \"1M\" is too small (expected at least 2M)");
	set_bad("swap_size", "x", -EINVAL, "--swap-size: \"x\" is not a size");

	/* The pool's policies: flags, set and cleared. */
	if (!(set_ok("zswap-incompressible", "store").flags &
	      USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE) ||
	    (set_ok("zswap_incompressible", "device").flags &
	     USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE))
		t_fail("zswap-incompressible");
	if (!(set_ok("zswap-charge", "off").flags & USWAP_OPT_ZSWAP_NO_CHARGE) ||
	    (set_ok("zswap-charge", "on").flags & USWAP_OPT_ZSWAP_NO_CHARGE))
		t_fail("zswap-charge");
	set_bad("zswap-incompressible", "disk", -EINVAL,
		"--zswap-incompressible: \"disk\" is not a choice (expected device or store)");
	set_bad("zswap-charge", "no", -EINVAL,
		"--zswap-charge: \"no\" is not a setting (expected on or off)");

	/* Folio sizes: any spelling of 4K, 16K, 64K, 2M. */
	if (set_ok("folio", "4K").folio_size != 4 * K ||
	    set_ok("folio", "4096").folio_size != 4 * K ||
	    set_ok("folio", "16k").folio_size != 16 * K ||
	    set_ok("folio", "64KiB").folio_size != 64 * K ||
	    set_ok("folio", "2M").folio_size != 2 * M ||
	    set_ok("folio", "2048K").folio_size != 2 * M ||
	    set_ok("folio", "0.0625M").folio_size != 64 * K)
		t_fail("folio");
	set_bad("folio", "0.5M", -EINVAL, "--folio: \"0.5M\" is not a folio size (expected 4K, 16K, 64K or 2M)");
	set_bad("folio", "8K", -EINVAL, "is not a folio size");
	set_bad("folio", "1G", -EINVAL, "is not a folio size");
	set_bad("folio", "0", -EINVAL, "is not a folio size");
	set_bad("folio", "big", -EINVAL, "--folio: \"big\" is not a folio size");

	/* Paths. */
	if (strcmp(set_ok("swap-dir", "/var/tmp").swap_dir, "/var/tmp") ||
	    strcmp(set_ok("stats", "s.json").stats_path, "s.json"))
		t_fail("paths");
	memset(path, 'a', 255);
	path[255] = 0;
	if (strlen(set_ok("swap-dir", path).swap_dir) != 255)
		t_fail("255-byte swap-dir");
	path[255] = 'a';
	path[256] = 0;
	set_bad("swap-dir", path, -ENAMETOOLONG,
		"--swap-dir: path is too long (256 bytes, at most 255)");
	set_bad("stats", path, -ENAMETOOLONG, "--stats: path is too long");
	set_bad("swap-dir", "", -EINVAL, "--swap-dir: empty path (expected a directory)");
	set_bad("stats", "", -EINVAL, "--stats: empty path");
	/* swap-dir is not checked for existence when set. */
	set_ok("swap-dir", "/nonexistent/dir");

	/* Fault threads. */
	if (set_ok("fault-threads", "1").fault_threads != 1 ||
	    set_ok("fault-threads", "64").fault_threads != 64 ||
	    set_ok("fault_threads", "8").fault_threads != 8)
		t_fail("fault-threads");
	set_bad("fault-threads", "0", -EINVAL,
		"--fault-threads: \"0\" is not a thread count (expected a whole number from 1 to 64)");
	set_bad("fault-threads", "65", -EINVAL, "is not a thread count");
	set_bad("fault-threads", "-1", -EINVAL, "is not a thread count");
	set_bad("fault-threads", "2x", -EINVAL, "is not a thread count");
	set_bad("fault-threads", "", -EINVAL, "is not a thread count");
	set_bad("fault-threads", "99999999999999999999999", -EINVAL, "is not a thread count");

	/* Verbose. */
	if (!(set_ok("verbose", "").flags & USWAP_OPT_VERBOSE) ||
	    !(set_ok("verbose", NULL).flags & USWAP_OPT_VERBOSE) ||
	    !(set_ok("verbose", "1").flags & USWAP_OPT_VERBOSE) ||
	    !(set_ok("verbose", "yes").flags & USWAP_OPT_VERBOSE) ||
	    !(set_ok("verbose", "TRUE").flags & USWAP_OPT_VERBOSE))
		t_fail("verbose on");
	uswap_options_init(&o);
	o.flags = USWAP_OPT_VERBOSE;
	if (uswap_options_set(&o, "verbose", "no", NULL, 0) || o.flags)
		t_fail("verbose no");
	o.flags = USWAP_OPT_VERBOSE;
	if (uswap_options_set(&o, "verbose", "0", NULL, 0) || o.flags)
		t_fail("verbose 0");
	o.flags = USWAP_OPT_VERBOSE;
	if (uswap_options_set(&o, "verbose", "false", NULL, 0) || o.flags)
		t_fail("verbose false");
	set_bad("verbose", "maybe", -EINVAL,
		"--verbose: \"maybe\" is not a boolean (expected 1, 0, yes, no, true or false)");
	set_bad("verbose", "2", -EINVAL, "is not a boolean");

	/* uffd-features-off. */
	if (set_ok("uffd-features-off", "0").uffd_features_off != 0 ||
	    set_ok("uffd-features-off", "12").uffd_features_off != 12 ||
	    set_ok("uffd-features-off", "0x1f").uffd_features_off != 0x1f ||
	    set_ok("uffd-features-off", "0X8000000000000000").uffd_features_off != 1ull << 63 ||
	    set_ok("uffd-features-off", "0xffffffffffffffff").uffd_features_off != UINT64_MAX)
		t_fail("uffd-features-off");
	set_bad("uffd-features-off", "0x", -EINVAL,
		"--uffd-features-off: \"0x\" is not a bit mask");
	set_bad("uffd-features-off", "ff", -EINVAL, "is not a bit mask");
	set_bad("uffd-features-off", "", -EINVAL, "is not a bit mask");
	set_bad("uffd-features-off", "-1", -EINVAL, "is not a bit mask");
	set_bad("uffd-features-off", "0x10000000000000000", -ERANGE, "is too large");

	/* Names. */
	set_bad("maximum", "1G", -EINVAL, "--maximum: unknown option");
	set_bad("", "1G", -EINVAL, "unknown option");
	set_bad("MAX", "1G", -EINVAL, "unknown option");
	uswap_options_init(&o);
	if (uswap_options_set(&o, NULL, "1G", NULL, 0) != -EINVAL ||
	    uswap_options_set(NULL, "max", "1G", NULL, 0) != -EINVAL)
		t_fail("NULL name or options accepted");

	/* A short buffer gets a truncated, terminated message. */
	{
		char err[8];

		uswap_options_init(&o);
		memset(err, 'x', sizeof(err));
		if (uswap_options_set(&o, "max", "12Q", err, sizeof(err)) != -EINVAL ||
		    strcmp(err, "--max: "))
			t_fail("short err buffer: \"%.8s\"", err);
	}
}

static const char *const env_names[] = {
	"USWAP_MAX", "USWAP_HIGH", "USWAP_FOLIO", "USWAP_MIN_REGION",
	"USWAP_SWAP_SIZE", "USWAP_SWAP_DIR", "USWAP_STATS",
	"USWAP_FAULT_THREADS", "USWAP_VERBOSE", "USWAP_UFFD_FEATURES_OFF",
};

static void env_clear(void)
{
	unsigned i;

	for (i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++)
		unsetenv(env_names[i]);
}

static void test_env(void)
{
	struct uswap_options o, before;
	char err[256] = "";
	int ret;

	env_clear();
	uswap_options_init(&o);
	before = o;
	if (uswap_options_from_env(&o, err, sizeof(err)) ||
	    memcmp(&o, &before, sizeof(o)))
		t_fail("empty environment changed the options");

	setenv("USWAP_MAX", "256M", 1);
	setenv("USWAP_HIGH", "200M", 1);
	setenv("USWAP_FOLIO", "16K", 1);
	setenv("USWAP_MIN_REGION", "2M", 1);
	setenv("USWAP_SWAP_SIZE", "3G", 1);
	setenv("USWAP_SWAP_DIR", "/var/tmp", 1);
	setenv("USWAP_STATS", "/tmp/s.json", 1);
	setenv("USWAP_FAULT_THREADS", "3", 1);
	setenv("USWAP_VERBOSE", "", 1);
	setenv("USWAP_UFFD_FEATURES_OFF", "0x40", 1);
	ret = uswap_options_from_env(&o, err, sizeof(err));
	if (ret)
		t_fail("from_env: %d %s", ret, err);
	if (o.max != 256 * M || o.high != 200 * M || o.folio_size != 16 * K ||
	    o.min_region != 2 * M || o.swap_size != 3 * G ||
	    strcmp(o.swap_dir, "/var/tmp") || strcmp(o.stats_path, "/tmp/s.json") ||
	    o.fault_threads != 3 || o.flags != USWAP_OPT_VERBOSE ||
	    o.uffd_features_off != 0x40)
		t_fail("from_env: wrong values");

	/* One bad variable: an error naming it, nothing applied. */
	uswap_options_init(&o);
	before = o;
	setenv("USWAP_MAX", "12Q", 1);
	ret = uswap_options_from_env(&o, err, sizeof(err));
	if (ret != -EINVAL || strcmp(err, "USWAP_MAX: \"12Q\" is not a size (expected a number with an optional K, M, G or T suffix)"))
		t_fail("bad USWAP_MAX: %d \"%s\"", ret, err);
	if (memcmp(&o, &before, sizeof(o)))
		t_fail("bad USWAP_MAX half-applied the environment");
	setenv("USWAP_MAX", "1G", 1);
	setenv("USWAP_VERBOSE", "loud", 1);
	ret = uswap_options_from_env(&o, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, "USWAP_VERBOSE: \"loud\" is not a boolean") ||
	    memcmp(&o, &before, sizeof(o)))
		t_fail("bad USWAP_VERBOSE: %d \"%s\"", ret, err);
	setenv("USWAP_VERBOSE", "0", 1);
	setenv("USWAP_FAULT_THREADS", "100", 1);
	ret = uswap_options_from_env(&o, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, "USWAP_FAULT_THREADS: \"100\""))
		t_fail("bad USWAP_FAULT_THREADS: %d \"%s\"", ret, err);
	setenv("USWAP_FAULT_THREADS", "1", 1);
	setenv("USWAP_MAX", "", 1);
	ret = uswap_options_from_env(&o, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, "USWAP_MAX: \"\" is not a size"))
		t_fail("empty USWAP_MAX: %d \"%s\"", ret, err);
	env_clear();
}

static void check_ok(const struct uswap_options *o, const char *what)
{
	char err[256] = "";
	int ret = uswap_options_check(o, err, sizeof(err));

	if (ret)
		t_fail("check %s: %d %s", what, ret, err);
}

static void check_bad(const struct uswap_options *o, int want, const char *msg)
{
	char err[512] = "";
	int ret = uswap_options_check(o, err, sizeof(err));

	if (ret != want || !strstr(err, msg))
		t_fail("check: %d \"%s\", expected %d \"%s\"", ret, err, want,
		       msg);
}

static void test_check(void)
{
	struct uswap_options o;
	char file[300];
	int fd;

	uswap_options_init(&o);
	check_ok(&o, "all defaults");
	if (uswap_options_check(NULL, NULL, 0) != -EINVAL)
		t_fail("check(NULL)");

	o.max = 64 * M;
	o.high = 64 * M;
	check_ok(&o, "high == max");
	o.high = 65 * M;
	check_bad(&o, -EINVAL, "high 65M is greater than max 64M");
	o.high = 0;
	o.max = 0;
	o.high = 1 * G;
	check_ok(&o, "high without max");
	o.high = 0;

	o.folio_size = 2 * M;
	o.max = 8 * M;
	check_ok(&o, "max = 4 folios of 2M");
	o.max = 6 * M;
	check_bad(&o, -EINVAL, "max 6M is less than 4 folios of 2M (expected at least 8M");
	o.max = 8 * M;
	o.high = 1 * M;
	check_bad(&o, -EINVAL, "high 1M is less than one folio (expected at least 2M)");
	o.high = 2 * M;
	check_ok(&o, "high = one folio");
	uswap_options_init(&o);
	o.high = 2 * K;
	check_bad(&o, -EINVAL, "high 2K is less than one folio (expected at least 4K)");

	uswap_options_init(&o);
	o.max = 512 * K;
	check_bad(&o, -EINVAL, "max 512K is too small (expected at least 1M)");
	uswap_options_init(&o);
	o.folio_size = 8 * K;
	check_bad(&o, -EINVAL, "folio size 8K is not supported");
	uswap_options_init(&o);
	o.min_region = 100;
	check_bad(&o, -EINVAL, "min-region 100 is too small");
	uswap_options_init(&o);
	o.swap_size = M;
	check_bad(&o, -EINVAL, "swap-size 1M is too small");
	uswap_options_init(&o);
	o.fault_threads = 65;
	check_bad(&o, -EINVAL, "fault-threads 65 is out of range");
	o.fault_threads = 64;
	check_ok(&o, "64 fault threads");
	uswap_options_init(&o);
	o.flags = 0x100;
	check_bad(&o, -EINVAL, "unknown flags 0x100");
	uswap_options_init(&o);
	memset(o.swap_dir, 'a', sizeof(o.swap_dir));
	check_bad(&o, -ENAMETOOLONG, "not terminated");

	/* The swap directory must exist and be a writable directory. */
	uswap_options_init(&o);
	strcpy(o.swap_dir, tmp_root);
	check_ok(&o, "existing swap dir");
	strcpy(o.swap_dir, "/nonexistent/uswap");
	check_bad(&o, -ENOENT, "swap dir \"/nonexistent/uswap\": No such file or directory");
	snprintf(file, sizeof(file), "%s/file", tmp_root);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		t_fail("create %s", file);
	close(fd);
	strcpy(o.swap_dir, file);
	check_bad(&o, -ENOTDIR, "is not a directory");
	unlink(file);
}

static uint64_t meminfo_available(void)
{
	char line[256];
	unsigned long long kib = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		t_skip("no /proc/meminfo");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib * 1024;
}

static struct uswap_options defaults_ok(const struct uswap_options *in)
{
	struct uswap_options o = *in;
	char err[256] = "";
	int ret = options_apply_defaults(&o, err, sizeof(err));

	if (ret)
		t_fail("apply_defaults: %d %s", ret, err);
	return o;
}

/* |a - b| <= slack */
static bool near(uint64_t a, uint64_t b, uint64_t slack)
{
	return a > b ? a - b <= slack : b - a <= slack;
}

static void test_defaults(void)
{
	struct uswap_options in, o, before;
	uint64_t avail, want;
	char err[256];
	int ret;

	setenv("TMPDIR", tmp_root, 1);
	uswap_options_init(&in);
	avail = meminfo_available();
	o = defaults_ok(&in);
	if (o.folio_size != 4 * K || o.min_region != M || o.fault_threads != 2 ||
	    o.flags || o.uffd_features_off || o.stats_path[0])
		t_fail("defaults: folio %llu min_region %llu threads %u",
		       (unsigned long long)o.folio_size,
		       (unsigned long long)o.min_region, o.fault_threads);
	if (strcmp(o.swap_dir, tmp_root))
		t_fail("swap_dir \"%s\", expected $TMPDIR \"%s\"", o.swap_dir,
		       tmp_root);
	if (o.max % o.folio_size || !near(o.max, avail / 2, avail / 8 + 64 * M))
		t_fail("max %llu, MemAvailable %llu",
		       (unsigned long long)o.max, (unsigned long long)avail);
	want = o.max - o.max / 32;
	if (o.high % o.folio_size || o.high > want || want - o.high >= o.folio_size)
		t_fail("high %llu for max %llu", (unsigned long long)o.high,
		       (unsigned long long)o.max);
	if (o.swap_size)
		t_fail("swap_size %llu, expected 0 (no cap: the file grows)",
		       (unsigned long long)o.swap_size);

	/* Given values stay; what depends on them follows them. */
	in.max = 64 * M;
	in.folio_size = 4 * K;
	o = defaults_ok(&in);
	if (o.max != 64 * M || o.folio_size != 4 * K || o.high != 62 * M)
		t_fail("max 64M folio 4K: high %llu", (unsigned long long)o.high);
	in.max = 63 * M;
	in.folio_size = 64 * K;
	o = defaults_ok(&in);
	if (o.high != 63963136)		/* 61.03M down to 64K: 976 folios */
		t_fail("max 63M folio 64K: high %llu", (unsigned long long)o.high);
	in.max = 64 * M;
	in.folio_size = 0;		/* the default, 4K */
	o = defaults_ok(&in);
	if (o.high != 62 * M)
		t_fail("max 64M, the default folio: high %llu",
		       (unsigned long long)o.high);
	in.max = 1 * G;
	in.high = 100 * M;
	in.swap_size = 5 * M;
	in.min_region = 8 * K;
	in.fault_threads = 7;
	strcpy(in.swap_dir, "/tmp");
	o = defaults_ok(&in);
	if (o.max != G || o.high != 100 * M || o.swap_size != 5 * M ||
	    o.min_region != 8 * K || o.fault_threads != 7 ||
	    strcmp(o.swap_dir, "/tmp"))
		t_fail("given values were changed");

	/* $TMPDIR unset or empty: /tmp. */
	uswap_options_init(&in);
	in.max = 64 * M;
	unsetenv("TMPDIR");
	if (strcmp(defaults_ok(&in).swap_dir, "/tmp"))
		t_fail("TMPDIR unset: swap_dir is not /tmp");
	setenv("TMPDIR", "", 1);
	if (strcmp(defaults_ok(&in).swap_dir, "/tmp"))
		t_fail("TMPDIR empty: swap_dir is not /tmp");

	/* Errors leave the options alone. */
	setenv("TMPDIR", "/nonexistent/uswap", 1);
	before = in;
	ret = options_apply_defaults(&in, err, sizeof(err));
	if (ret != -ENOENT || !strstr(err, "swap dir \"/nonexistent/uswap\"") ||
	    memcmp(&in, &before, sizeof(in)))
		t_fail("TMPDIR missing: %d %s", ret, err);
	setenv("TMPDIR", tmp_root, 1);
	in.max = 0;
	in.high = 1ull << 50;
	before = in;
	ret = options_apply_defaults(&in, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, "is greater than the default max") ||
	    memcmp(&in, &before, sizeof(in)))
		t_fail("high above the default max: %d %s", ret, err);
	uswap_options_init(&in);
	in.max = 64 * M;
	in.high = 65 * M;
	ret = options_apply_defaults(&in, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, "high 65M is greater than max 64M"))
		t_fail("high above max: %d %s", ret, err);
	uswap_options_init(&in);
	in.folio_size = 2 * M;
	in.max = 4 * M;
	ret = options_apply_defaults(&in, err, sizeof(err));
	if (ret != -EINVAL || !strstr(err, "less than 4 folios"))
		t_fail("max of 2 folios: %d %s", ret, err);
}

/* Mount a tmpfs of size bytes on dir; false when not allowed. */
static bool mount_tmpfs(const char *dir, const char *size)
{
	char data[64];

	snprintf(data, sizeof(data), "size=%s", size);
	return !mount("uswap-test", dir, "tmpfs", 0, data);
}

/* No default cap, and the "less than 4M free" error, on small tmpfs. */
static void test_defaults_small_fs(void)
{
	struct uswap_options in, o;
	char dir[300], err[256];
	int ret;

	if (geteuid() != 0) {
		t_skip_case("not root: cannot mount a small tmpfs");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/fs", tmp_root);
	if (mkdir(dir, 0700))
		t_fail("mkdir %s", dir);
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    !mount_tmpfs(dir, "64M")) {
		printf("cannot mount a tmpfs: %s\n", strerror(errno));
		t_skip_case("no tmpfs of a given size to fill");
		rmdir(dir);
		return;
	}
	uswap_options_init(&in);
	in.max = 64 * M;
	strcpy(in.swap_dir, dir);
	o = defaults_ok(&in);
	if (o.swap_size)
		t_fail("64M tmpfs: swap_size %llu, expected 0",
		       (unsigned long long)o.swap_size);
	umount(dir);

	if (!mount_tmpfs(dir, "5M"))
		t_fail("mount 5M tmpfs");
	o = defaults_ok(&in);
	if (o.swap_size)
		t_fail("5M tmpfs: swap_size %llu, expected 0",
		       (unsigned long long)o.swap_size);
	in.swap_size = 100 * M;		/* given: not capped */
	if (defaults_ok(&in).swap_size != 100 * M)
		t_fail("given swap_size was capped");
	in.swap_size = 0;
	umount(dir);

	if (!mount_tmpfs(dir, "3M"))
		t_fail("mount 3M tmpfs");
	ret = options_apply_defaults(&in, err, sizeof(err));
	if (ret != -ENOSPC || !strstr(err, dir) || !strstr(err, "KiB free"))
		t_fail("3M tmpfs: %d %s", ret, err);
	umount(dir);
	rmdir(dir);
}

static void setup(void)
{
	if (!mkdtemp(tmp_root))
		t_fail("mkdtemp");
}

static void teardown(void)
{
	rmdir(tmp_root);
}

static const struct t_case cases[] = {
	T_CASE(sizes, "sizes: units, limits and refusals"),
	T_CASE(set, "every option by name: good and bad values, their messages"),
	T_CASE(env, "every option from the environment"),
	T_CASE(check, "the consistency checks and their messages"),
	T_CASE(defaults, "the documented defaults, and given values kept"),
	T_CASE(defaults_small_fs, "on small tmpfs mounts: the free-space limits"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){
		.cases = cases, .setup = setup, .teardown = teardown,
	});
}
