// SPDX-License-Identifier: MIT
/*
 * options.c - the options of a runtime: setting them by name and from the
 * environment, and what each one accepts.
 *
 * The CLI (flags), the preload library (USWAP_* variables) and programs
 * that link libuswap all describe a runtime with one struct uswap_options.
 * This file is the one place that knows what each option accepts, so that
 * a bad value gets the same one-line message wherever it comes from:
 * "--max: ..." for a flag, "USWAP_MAX: ..." for a variable.  Nothing is
 * half-applied: a failing call leaves the options as they were.  Whether a
 * whole set of options holds together, and the documented defaults that
 * fill what was left out, are options_defaults.c's.
 *
 * A size is a decimal number with an optional suffix K, M, G or T (also
 * k, m, g, t and KiB, MiB, GiB, TiB: powers of 1024); a fraction is allowed
 * with a suffix ("1.5G") and rounds down to whole bytes.
 *
 * Nothing here allocates: the preload library calls it from its
 * constructor, inside a program that has not started yet.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compress.h"
#include "internal.h"
#include "swapdev.h"
#include "options.h"

#define SZ_4K		(4ull << 10)
#define SZ_16K		(16ull << 10)
#define SZ_64K		(64ull << 10)
#define SZ_1M		(1ull << 20)
#define SZ_2M		(2ull << 20)

enum option_id {
	OPT_MAX,
	OPT_HIGH,
	OPT_FOLIO,
	OPT_MIN_REGION,
	OPT_SWAP_SIZE,
	OPT_SWAP_DIR,
	OPT_STATS,
	OPT_FAULT_THREADS,
	OPT_VERBOSE,
	OPT_UFFD_FEATURES_OFF,
	OPT_SWAP,
	OPT_ZSWAP,
	OPT_ZSWAP_MAX,
	OPT_ZSWAP_ACCEPT,
	OPT_ZSWAP_UNIT,
	OPT_ZSWAP_THREADS,
	OPT_SWAPTAB,
	OPT_SWAP_NODE_POLICY,
	OPT_VERIFY,
	OPT_ENCRYPT,
	OPT_ZSWAP_INCOMPRESSIBLE,
	OPT_ZSWAP_CHARGE,
	OPT_DEMOTION,
	OPT_TIER_MAX,
	NR_OPTIONS
};

/* Each option as uswap_options_set() and the environment spell it. */
static const struct option_name {
	const char *name;
	const char *env;
} option_names[NR_OPTIONS] = {
	[OPT_MAX]		= { "max",		 "USWAP_MAX" },
	[OPT_HIGH]		= { "high",		 "USWAP_HIGH" },
	[OPT_FOLIO]		= { "folio",		 "USWAP_FOLIO" },
	[OPT_MIN_REGION]	= { "min-region",	 "USWAP_MIN_REGION" },
	[OPT_SWAP_SIZE]		= { "swap-size",	 "USWAP_SWAP_SIZE" },
	[OPT_SWAP_DIR]		= { "swap-dir",		 "USWAP_SWAP_DIR" },
	[OPT_STATS]		= { "stats",		 "USWAP_STATS" },
	[OPT_FAULT_THREADS]	= { "fault-threads",	 "USWAP_FAULT_THREADS" },
	[OPT_VERBOSE]		= { "verbose",		 "USWAP_VERBOSE" },
	[OPT_UFFD_FEATURES_OFF]	= { "uffd-features-off", "USWAP_UFFD_FEATURES_OFF" },
	[OPT_SWAP]		= { "swap",		 "USWAP_SWAP" },
	[OPT_ZSWAP]		= { "zswap",		 "USWAP_ZSWAP" },
	[OPT_ZSWAP_MAX]		= { "zswap-max",	 "USWAP_ZSWAP_MAX" },
	[OPT_ZSWAP_ACCEPT]	= { "zswap-accept",	 "USWAP_ZSWAP_ACCEPT" },
	[OPT_ZSWAP_UNIT]	= { "zswap-unit",	 "USWAP_ZSWAP_UNIT" },
	[OPT_ZSWAP_THREADS]	= { "zswap-threads",	 "USWAP_ZSWAP_THREADS" },
	[OPT_SWAPTAB]		= { "swaptab",		 "USWAP_SWAPTAB" },
	[OPT_SWAP_NODE_POLICY]	= { "swap-node-policy",	 "USWAP_SWAP_NODE_POLICY" },
	[OPT_VERIFY]		= { "verify",		 "USWAP_VERIFY" },
	[OPT_ENCRYPT]		= { "encrypt",		 "USWAP_ENCRYPT" },
	[OPT_ZSWAP_INCOMPRESSIBLE] = { "zswap-incompressible", "USWAP_ZSWAP_INCOMPRESSIBLE" },
	[OPT_ZSWAP_CHARGE]	= { "zswap-charge",	 "USWAP_ZSWAP_CHARGE" },
	[OPT_DEMOTION]		= { "demotion",		 "USWAP_DEMOTION" },
	[OPT_TIER_MAX]		= { "tier-max",		 "USWAP_TIER_MAX" },
};

void __attribute__((format(printf, 3, 4)))
options_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* Messages quote values: keep them on one line whatever they hold. */
	for (; *err; err++)
		if ((unsigned char)*err < 0x20 || *err == 0x7f)
			*err = '?';
}

/* A size as the user would write it: "64M", "1536K", or bytes. */
const char *options_size_str(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "TGMK";
	unsigned i;

	for (i = 0; i < 4; i++) {
		unsigned shift = 40 - 10 * i;

		if (v && !(v & ((1ull << shift) - 1))) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v >> shift), units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex_digit(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A whole number: decimal, or hexadecimal after "0x" when hex is set.
 * Returns 0, -EINVAL (not a number, empty, sign, junk) or -ERANGE.
 */
static int parse_u64(const char *s, bool hex, uint64_t *out)
{
	unsigned base = 10;
	bool range = false;
	uint64_t v = 0;
	int d;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		d = base == 16 ? hex_digit(*s) : (is_digit(*s) ? *s - '0' : -1);
		if (d < 0)
			return -EINVAL;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			range = true;
		else
			v = v * base + (unsigned)d;
	}
	if (range)
		return -ERANGE;
	*out = v;
	return 0;
}

EXPORT int uswap_size_parse(const char *s, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, frac_div = 1, frac_bytes = 0, r;
	unsigned shift = 0, i;
	bool range = false, has_frac = false;
	const char *p = s;

	if (!s || !out || !is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (whole > (UINT64_MAX - d) / 10)
			range = true;
		else
			whole = whole * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return -EINVAL;
		has_frac = true;
		/* 18 digits are more than any size needs; the rest round down. */
		for (; is_digit(*p); p++) {
			if (frac_div < 1000000000000000000ull) {
				frac = frac * 10 + (unsigned)(*p - '0');
				frac_div *= 10;
			}
		}
	}
	switch (*p) {
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	case 'T': case 't':
		shift = 40;
		break;
	}
	if (shift) {
		p++;
		if (p[0] == 'i' && p[1] == 'B')
			p += 2;
	}
	if (*p || (has_frac && !shift))
		return -EINVAL;
	if (range || whole > (UINT64_MAX >> shift))
		return -ERANGE;
	/* frac / frac_div * 2^shift, one bit at a time: no 128-bit product. */
	r = frac;
	for (i = 0; i < shift; i++) {
		r *= 2;
		frac_bytes = frac_bytes * 2 + r / frac_div;
		r %= frac_div;
	}
	whole <<= shift;
	if (whole > UINT64_MAX - frac_bytes)
		return -ERANGE;
	*out = whole + frac_bytes;
	return 0;
}

EXPORT void uswap_options_init(struct uswap_options *opt)
{
	memset(opt, 0, sizeof(*opt));
}

bool options_folio_size_valid(uint64_t v)
{
	return v == SZ_4K || v == SZ_16K || v == SZ_64K || v == SZ_2M;
}

static int set_size(uint64_t *field, uint64_t min, const char *label,
		    const char *value, char *err, size_t errlen)
{
	char buf[32];
	uint64_t v;
	int ret = uswap_size_parse(value, &v);

	if (ret == -ERANGE) {
		options_err(err, errlen, "%s: \"%s\" is too large (at most 2^64 - 1 bytes)",
			label, value);
		return ret;
	}
	if (ret) {
		options_err(err, errlen, "%s: \"%s\" is not a size (expected a number with an optional K, M, G or T suffix)",
			label, value);
		return ret;
	}
	if (v < min) {
		options_err(err, errlen, "%s: \"%s\" is too small (expected at least %s)",
			label, value, options_size_str(min, buf, sizeof(buf)));
		return -EINVAL;
	}
	*field = v;
	return 0;
}

static int set_path(char *field, size_t size, const char *what,
		    const char *label, const char *value, char *err,
		    size_t errlen)
{
	size_t len = strlen(value);

	if (!len) {
		options_err(err, errlen, "%s: empty path (expected %s)", label, what);
		return -EINVAL;
	}
	if (len >= size) {
		options_err(err, errlen, "%s: path is too long (%zu bytes, at most %zu)",
			label, len, size - 1);
		return -ENAMETOOLONG;
	}
	memcpy(field, value, len + 1);
	return 0;
}

static int set_bool(unsigned *flags, unsigned bit, const char *label,
		    const char *value, char *err, size_t errlen)
{
	static const char *const on[] = { "", "1", "yes", "true" };
	static const char *const off[] = { "0", "no", "false" };
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(on); i++) {
		if (!strcasecmp(value, on[i])) {
			*flags |= bit;
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(off); i++) {
		if (!strcasecmp(value, off[i])) {
			*flags &= ~bit;
			return 0;
		}
	}
	options_err(err, errlen, "%s: \"%s\" is not a boolean (expected 1, 0, yes, no, true or false)",
		label, value);
	return -EINVAL;
}

/*
 * A switch between two words, kept as one flag: the flag is set by the
 * word `sets` (a or b).  what names the kind of value in the message.
 */
static int set_switch(unsigned *flags, unsigned flag, const char *a,
		      const char *b, const char *sets, const char *what,
		      const char *label, const char *value, char *err,
		      size_t errlen)
{
	if (strcmp(value, a) && strcmp(value, b)) {
		options_err(err, errlen, "%s: \"%s\" is not a %s (expected %s or %s)",
			    label, value, what, a, b);
		return -EINVAL;
	}
	if (!strcmp(value, sets))
		*flags |= flag;
	else
		*flags &= ~flag;
	return 0;
}

/* A percentage: "20" or "20%", from 1 to 100. */
static int set_pct(unsigned *field, const char *label, const char *value,
		   char *err, size_t errlen)
{
	char num[16];
	size_t len = strlen(value);
	uint64_t v;

	if (len && value[len - 1] == '%')
		len--;
	if (len >= sizeof(num) || (memcpy(num, value, len), num[len] = 0,
				   parse_u64(num, false, &v)) || v < 1 || v > 100) {
		options_err(err, errlen, "%s: \"%s\" is not a percentage (expected a whole number from 1 to 100, optionally with %%)",
			label, value);
		return -EINVAL;
	}
	*field = (unsigned)v;
	return 0;
}

/*
 * "none", "file", or device SPECs (one per line from the environment),
 * each checked here and appended to opt->swap.
 */
static int set_swap(struct uswap_options *opt, const char *label,
		    const char *value, char *err, size_t errlen)
{
	struct swap_spec spec;
	char why[320], line[512];
	const char *p = value;

	if (!strcmp(value, "none")) {
		opt->flags |= USWAP_OPT_NO_SWAP_FILE;
		opt->swap[0] = 0;
		return 0;
	}
	if (!strcmp(value, "file")) {
		opt->flags &= ~USWAP_OPT_NO_SWAP_FILE;
		opt->swap[0] = 0;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, "\n"), used = strlen(opt->swap);

		if (n >= sizeof(line)) {
			options_err(err, errlen, "%s: a device spec is too long (at most %zu bytes)",
				label, sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (p[n] == '\n');
		if (!n)
			continue;
		if (swap_spec_parse(line, &spec, why, sizeof(why))) {
			/* why names --swap: from the environment, name the variable. */
			if (strncmp(label, "--", 2))
				options_err(err, errlen, "%s: %s", label, why);
			else
				options_err(err, errlen, "%s", why);
			return -EINVAL;
		}
		if (used + n + 2 > sizeof(opt->swap)) {
			options_err(err, errlen, "%s: too many device specs (at most %zu bytes in all)",
				label, sizeof(opt->swap) - 1);
			return -EINVAL;
		}
		snprintf(opt->swap + used, sizeof(opt->swap) - used, "%s%s",
			 used ? "\n" : "", line);
		opt->flags &= ~USWAP_OPT_NO_SWAP_FILE;
	}
	return 0;
}

static int set_zswap(struct uswap_options *opt, const char *label,
		     const char *value, char *err, size_t errlen)
{
	enum comp_alg alg;
	char why[160];
	int level;

	if (strlen(value) >= sizeof(opt->zswap)) {
		options_err(err, errlen, "%s: \"%s\" is too long (expected lz4, zstd[:LEVEL], deflate[:LEVEL] or off)",
			label, value);
		return -EINVAL;
	}
	if (strcmp(value, "off") &&
	    comp_parse(value, &alg, &level, why, sizeof(why))) {
		options_err(err, errlen, "%s: %s", label, why);
		return -EINVAL;
	}
	strcpy(opt->zswap, value);
	return 0;
}

/*
 * --demotion auto|none|SPEC and --tier-max NODE=SIZE[,...]: checked here
 * for their form (demote.c); the nodes are checked against the machine
 * when the runtime starts.
 */
static int set_tiers(struct uswap_options *opt, bool demotion,
		     const char *label, const char *value, char *err,
		     size_t errlen)
{
	char *field = demotion ? opt->demotion : opt->tier_max;
	size_t size = demotion ? sizeof(opt->demotion) : sizeof(opt->tier_max);
	uint64_t max[MEM_MAX_NODES], nodes;
	char why[512];
	int ret;

	if (strlen(value) >= size) {
		options_err(err, errlen, "%s: longer than %zu bytes", label, size - 1);
		return -EINVAL;
	}
	if (demotion)
		ret = demotion_option_check(value, why, sizeof(why));
	else
		ret = value[0] ? tier_max_parse(value, max, &nodes, why,
						sizeof(why)) : 0;
	if (ret) {
		/* why says "--demotion ..." or "--tier-max ...": keep label's spelling */
		const char *rest = strchr(why, ' ');

		options_err(err, errlen, "%s%s", label, rest ? rest : "");
		return -EINVAL;
	}
	strcpy(field, value);
	return 0;
}

/* Set option id of *opt from value; label names it in messages. */
static int option_set(struct uswap_options *opt, enum option_id id,
		      const char *value, const char *label, char *err,
		      size_t errlen)
{
	uint64_t v;
	int ret;

	if (!value) {
		if (id == OPT_VERBOSE)
			value = "";
		else {
			options_err(err, errlen, "%s: missing value", label);
			return -EINVAL;
		}
	}
	switch (id) {
	case OPT_MAX:
		return set_size(&opt->max, SZ_1M, label, value, err, errlen);
	case OPT_HIGH:
		return set_size(&opt->high, SZ_4K, label, value, err, errlen);
	case OPT_MIN_REGION:
		return set_size(&opt->min_region, SZ_4K, label, value, err,
				errlen);
	case OPT_SWAP_SIZE:
		return set_size(&opt->swap_size, SZ_2M, label, value, err,
				errlen);
	case OPT_FOLIO:
		if (uswap_size_parse(value, &v) ||
		    !options_folio_size_valid(v)) {
			options_err(err, errlen, "%s: \"%s\" is not a folio size (expected 4K, 16K, 64K or 2M)",
				label, value);
			return -EINVAL;
		}
		opt->folio_size = v;
		return 0;
	case OPT_SWAP_DIR:
		return set_path(opt->swap_dir, sizeof(opt->swap_dir),
				"a directory", label, value, err, errlen);
	case OPT_STATS:
		return set_path(opt->stats_path, sizeof(opt->stats_path),
				"a file name", label, value, err, errlen);
	case OPT_FAULT_THREADS:
		ret = parse_u64(value, false, &v);
		if (ret || v < 1 || v > OPTIONS_FAULT_THREADS_MAX) {
			options_err(err, errlen, "%s: \"%s\" is not a thread count (expected a whole number from 1 to %u)",
				label, value, OPTIONS_FAULT_THREADS_MAX);
			return -EINVAL;
		}
		opt->fault_threads = (unsigned)v;
		return 0;
	case OPT_VERBOSE:
		return set_bool(&opt->flags, USWAP_OPT_VERBOSE, label, value,
				err, errlen);
	case OPT_UFFD_FEATURES_OFF:
		ret = parse_u64(value, true, &v);
		if (ret == -ERANGE) {
			options_err(err, errlen, "%s: \"%s\" is too large (at most 64 bits)",
				label, value);
			return ret;
		}
		if (ret) {
			options_err(err, errlen, "%s: \"%s\" is not a bit mask (expected a decimal number, or hexadecimal with 0x)",
				label, value);
			return ret;
		}
		opt->uffd_features_off = v;
		return 0;
	case OPT_SWAP:
		return set_swap(opt, label, value, err, errlen);
	case OPT_SWAPTAB:
		return set_path(opt->swaptab, sizeof(opt->swaptab), "a file",
				label, value, err, errlen);
	case OPT_SWAP_NODE_POLICY:
		if (!strcmp(value, "page"))
			opt->swap_node_policy = USWAP_SWAP_NODE_PAGE;
		else if (!strcmp(value, "cpu"))
			opt->swap_node_policy = USWAP_SWAP_NODE_CPU;
		else {
			options_err(err, errlen, "%s: \"%s\" is not a node policy (expected page or cpu)",
				label, value);
			return -EINVAL;
		}
		return 0;
	case OPT_VERIFY:
		return set_switch(&opt->flags, USWAP_OPT_NO_VERIFY, "on", "off",
				  "off", "setting", label, value, err, errlen);
	case OPT_ENCRYPT:
		return set_switch(&opt->flags, USWAP_OPT_ENCRYPT, "on", "off",
				  "on", "setting", label, value, err, errlen);
	case OPT_ZSWAP:
		return set_zswap(opt, label, value, err, errlen);
	case OPT_ZSWAP_MAX:
		return set_pct(&opt->zswap_max_pct, label, value, err, errlen);
	case OPT_ZSWAP_ACCEPT:
		return set_pct(&opt->zswap_accept_pct, label, value, err,
			       errlen);
	case OPT_ZSWAP_UNIT:
		if (!strcmp(value, "folio"))
			opt->zswap_unit = USWAP_ZSWAP_UNIT_FOLIO;
		else if (!strcmp(value, "page"))
			opt->zswap_unit = USWAP_ZSWAP_UNIT_PAGE;
		else {
			options_err(err, errlen, "%s: \"%s\" is not a unit (expected folio or page)",
				label, value);
			return -EINVAL;
		}
		return 0;
	case OPT_ZSWAP_INCOMPRESSIBLE:
		return set_switch(&opt->flags, USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE,
				  "device", "store", "store", "choice", label,
				  value, err, errlen);
	case OPT_ZSWAP_CHARGE:
		return set_switch(&opt->flags, USWAP_OPT_ZSWAP_NO_CHARGE, "on", "off",
				  "off", "setting", label, value, err, errlen);
	case OPT_ZSWAP_THREADS:
		ret = parse_u64(value, false, &v);
		if (ret || v < 1 || v > OPTIONS_ZSWAP_THREADS_MAX) {
			options_err(err, errlen, "%s: \"%s\" is not a thread count (expected a whole number from 1 to %u)",
				label, value, OPTIONS_ZSWAP_THREADS_MAX);
			return -EINVAL;
		}
		opt->zswap_threads = (unsigned)v;
		return 0;
	case OPT_DEMOTION:
	case OPT_TIER_MAX:
		return set_tiers(opt, id == OPT_DEMOTION, label, value, err,
				 errlen);
	case NR_OPTIONS:
		break;
	}
	return -EINVAL;
}

/* Does name spell option id?  '_' may stand for '-'. */
static bool option_name_is(const char *name, enum option_id id)
{
	const char *o = option_names[id].name;

	for (; *name && *o; name++, o++) {
		if (*name != *o && !(*name == '_' && *o == '-'))
			return false;
	}
	return !*name && !*o;
}

EXPORT int uswap_options_set(struct uswap_options *opt, const char *name,
			     const char *value, char *err, size_t errlen)
{
	struct uswap_options tmp;
	char label[64];
	unsigned id;
	int ret;

	if (!opt || !name)
		return -EINVAL;
	for (id = 0; id < NR_OPTIONS; id++) {
		if (option_name_is(name, id))
			break;
	}
	if (id == NR_OPTIONS) {
		options_err(err, errlen, "--%s: unknown option (expected max, high, folio, min-region, swap, swaptab, swap-node-policy, swap-size, swap-dir, stats, fault-threads, verbose, zswap, zswap-max, zswap-accept, zswap-unit, zswap-threads, zswap-incompressible, zswap-charge, verify, encrypt, demotion, tier-max or uffd-features-off)",
			name);
		return -EINVAL;
	}
	snprintf(label, sizeof(label), "--%s", option_names[id].name);
	tmp = *opt;
	ret = option_set(&tmp, id, value, label, err, errlen);
	if (!ret)
		*opt = tmp;
	return ret;
}

EXPORT int uswap_options_from_env(struct uswap_options *opt, char *err,
				  size_t errlen)
{
	struct uswap_options tmp;
	const char *value;
	unsigned id;
	int ret;

	if (!opt)
		return -EINVAL;
	tmp = *opt;
	for (id = 0; id < NR_OPTIONS; id++) {
		value = getenv(option_names[id].env);
		if (!value)
			continue;
		ret = option_set(&tmp, id, value, option_names[id].env, err,
				 errlen);
		if (ret)
			return ret;
	}
	*opt = tmp;
	return 0;
}
