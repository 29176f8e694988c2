// SPDX-License-Identifier: MIT
/*
 * options_fuzz.c - setting options by name and from the environment, and
 * parsing sizes (src/options.c), and checking them (src/options_defaults.c),
 * against a reference model of what each option accepts.
 *
 * The input is text, one record a line:
 *
 *	NAME=VALUE	uswap_options_set(opt, NAME, VALUE)
 *	NAME		the same with a NULL value
 *	+MORE		appends "\n" MORE to the value of the record before it
 *			(several device specs in one "swap")
 *	#NAME=VALUE	field NAME (an option's, or "flags") of a copy of
 *			the options set directly to VALUE (a number, any
 *			base; or text, "~C" fills the array with C and no
 *			NUL), then uswap_options_check() on the copy
 *	!NAME=VALUE	sets USWAP_NAME to VALUE, NAME an option ('-' as '_'
 *			in the variable); "!NAME" unsets it.  After the last
 *			record, uswap_options_from_env() runs once and every
 *			variable set is unset again (by putenv() of buffers
 *			here: glibc's setenv() keeps a copy of every value
 *			it was ever given, which would pile up in a long
 *			run).
 *
 * Checks, from what uswap.h and the top of options.c promise:
 *
 *  - uswap_options_set() succeeds exactly when the model says the value
 *    is good for the option, and fails with the model's error (-EINVAL,
 *    -ERANGE for a size or mask past 64 bits, -ENAMETOOLONG for a long
 *    path); on success it changes only that option's fields, as the model
 *    says (sizes as parsed, paths and zswap copied, "swap" SPECs appended
 *    one per line, ...); on failure nothing;
 *  - on failure err is NUL-terminated within errlen (which varies, 0 and 1
 *    included), one line, not empty, and nothing is written past errlen;
 *  - uswap_options_check() after each successful set, and on fields set
 *    directly, returns 0 only for a struct that is valid (every string
 *    terminated, every number within what its option accepts), else a
 *    negative errno with such a message;
 *  - what a successful set leaves is valid in that sense too, and "swap"
 *    holds one SPEC a line, without empty lines;
 *  - uswap_options_from_env() is the sets of its variables together: it
 *    succeeds when each would and then gives the same struct; else it
 *    fails with one of their errors, a message naming the variable, and
 *    leaves the struct alone;
 *  - uswap_size_parse() on the whole input and on every value agrees with
 *    a reference parser (128-bit arithmetic: whole + fraction of at most
 *    18 digits, times the suffix, rounded down), and a size it returns
 *    parses back from its decimal and its largest exact suffix form.
 *
 * Known and reported, so not checked: a value that holds a newline is
 * quoted as it is in the message, which then has two lines; a bad SPEC in
 * USWAP_SWAP is reported as "--swap ...", not by the variable's name.
 * Any mismatch abort()s.  Built with tests/fuzz/replay.c by make, for
 * libFuzzer by make fuzz.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compress.h"
#include "demote.h"
#include "swapdev.h"
#include "uswap.h"
#include "fuzzlib.h"

#define INPUT_MAX	8192
#define MAX_RECORDS	64
#define ERR_MAX		512
#define ERR_CANARY	0x5a


#define SZ_4K	(4ull << 10)
#define SZ_1M	(1ull << 20)
#define SZ_2M	(2ull << 20)

enum opt {
	O_MAX, O_HIGH, O_FOLIO, O_MIN_REGION, O_SWAP_SIZE, O_SWAP_DIR,
	O_STATS, O_FAULT_THREADS, O_VERBOSE, O_UFFD, O_SWAP, O_ZSWAP,
	O_ZSWAP_MAX, O_ZSWAP_ACCEPT, O_ZSWAP_UNIT, O_ZSWAP_THREADS,
	O_SWAPTAB, O_SWAP_NODE_POLICY, O_VERIFY, O_DEMOTION, O_TIER_MAX,
	O_ENCRYPT, O_ZSWAP_INCOMPRESSIBLE, O_ZSWAP_CHARGE, NR_OPTS
};

static const char *const opt_names[NR_OPTS] = {
	"max", "high", "folio", "min-region", "swap-size", "swap-dir",
	"stats", "fault-threads", "verbose", "uffd-features-off", "swap",
	"zswap", "zswap-max", "zswap-accept", "zswap-unit", "zswap-threads",
	"swaptab", "swap-node-policy", "verify", "demotion", "tier-max",
	"encrypt", "zswap-incompressible", "zswap-charge",
};

static const char *const env_names[NR_OPTS] = {
	"USWAP_MAX", "USWAP_HIGH", "USWAP_FOLIO", "USWAP_MIN_REGION",
	"USWAP_SWAP_SIZE", "USWAP_SWAP_DIR", "USWAP_STATS",
	"USWAP_FAULT_THREADS", "USWAP_VERBOSE", "USWAP_UFFD_FEATURES_OFF",
	"USWAP_SWAP", "USWAP_ZSWAP", "USWAP_ZSWAP_MAX", "USWAP_ZSWAP_ACCEPT",
	"USWAP_ZSWAP_UNIT", "USWAP_ZSWAP_THREADS", "USWAP_SWAPTAB",
	"USWAP_SWAP_NODE_POLICY", "USWAP_VERIFY", "USWAP_DEMOTION",
	"USWAP_TIER_MAX", "USWAP_ENCRYPT", "USWAP_ZSWAP_INCOMPRESSIBLE",
	"USWAP_ZSWAP_CHARGE",
};

/* The fields of struct uswap_options, named as their options ("#NAME"). */
#define FIELD(f, name)							\
	{ offsetof(struct uswap_options, f),				\
	  sizeof(((struct uswap_options *)0)->f), name }
static const struct field {
	size_t off, size;
	const char *name;
} fields[] = {
	FIELD(max, "max"),
	FIELD(high, "high"),
	FIELD(folio_size, "folio"),
	FIELD(min_region, "min-region"),
	FIELD(swap_size, "swap-size"),
	FIELD(swap, "swap"),
	FIELD(swaptab, "swaptab"),
	FIELD(swap_node_policy, "swap-node-policy"),
	FIELD(swap_dir, "swap-dir"),
	FIELD(stats_path, "stats"),
	FIELD(fault_threads, "fault-threads"),
	FIELD(zswap, "zswap"),
	FIELD(zswap_max_pct, "zswap-max"),
	FIELD(zswap_accept_pct, "zswap-accept"),
	FIELD(zswap_unit, "zswap-unit"),
	FIELD(zswap_threads, "zswap-threads"),
	FIELD(flags, "flags"),
	FIELD(uffd_features_off, "uffd-features-off"),
	FIELD(tree_fd, "tree-fd"),
	FIELD(demotion, "demotion"),
	FIELD(tier_max, "tier-max"),
};

struct record {
	const char *name, *value;	/* value NULL: none given */
	char kind;			/* '!' env, '#' raw field, 0 set */
};

static struct {
	char text[2 * INPUT_MAX + 2];
	struct record rec[MAX_RECORDS];
	unsigned nr;
	const char *env_value[NR_OPTS];
	char env_buf[NR_OPTS][INPUT_MAX + 32];	/* "USWAP_NAME=VALUE" */
	bool env_set[NR_OPTS];
	unsigned nr_calls;
} fz;

/* --- the reference model ------------------------------------------------ */

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hexval(char c)
{
	if (digit(c))
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A whole number, decimal or (hex) 0x...: 0, -EINVAL or -ERANGE. */
static int ref_u64(const char *s, bool hex, uint64_t *out)
{
	unsigned __int128 v = 0;
	unsigned base = 10;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		int d = base == 16 ? hexval(*s) : digit(*s) ? *s - '0' : -1;

		if (d < 0)
			return -EINVAL;
		if (v <= UINT64_MAX)
			v = v * base + (unsigned)d;
	}
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/*
 * DIGITS[.DIGITS][K|M|G|T[iB]], either case of the letter; a fraction
 * needs a suffix; digits of the fraction past 18 are dropped; the result
 * rounds down.  0, -EINVAL, or -ERANGE past 2^64 - 1.
 */
static int ref_size(const char *s, uint64_t *out)
{
	static const char suffix[] = "kmgt";
	unsigned __int128 whole = 0, frac = 0, div = 1, v;
	unsigned shift = 0, nfrac = 0;
	bool frac_given = false;
	const char *q;

	if (!digit(*s))
		return -EINVAL;
	for (; digit(*s); s++)
		if (whole <= UINT64_MAX)
			whole = whole * 10 + (unsigned)(*s - '0');
	if (*s == '.') {
		if (!digit(*++s))
			return -EINVAL;
		frac_given = true;
		for (; digit(*s); s++, nfrac++) {
			if (nfrac < 18) {
				frac = frac * 10 + (unsigned)(*s - '0');
				div *= 10;
			}
		}
	}
	if (*s && (q = strchr(suffix, *s | 0x20)) != NULL) {
		shift = 10 * (unsigned)(q - suffix + 1);
		s++;
		if (s[0] == 'i' && s[1] == 'B')
			s += 2;
	}
	if (*s || (frac_given && !shift))
		return -EINVAL;
	if (whole > UINT64_MAX)
		return -ERANGE;
	v = (whole << shift) + (frac << shift) / div;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

static int ref_set_size(uint64_t *field, uint64_t min, const char *value)
{
	uint64_t v;
	int ret = ref_size(value, &v);

	if (ret)
		return ret;
	if (v < min)
		return -EINVAL;
	*field = v;
	return 0;
}

static int ref_set_path(char *field, size_t size, const char *value)
{
	size_t len = strlen(value);

	if (!len)
		return -EINVAL;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(field, value, len + 1);
	return 0;
}

static int ref_set_count(unsigned *field, unsigned max, const char *value)
{
	uint64_t v;

	if (ref_u64(value, false, &v) || v < 1 || v > max)
		return -EINVAL;
	*field = (unsigned)v;
	return 0;
}

static int ref_set_pct(unsigned *field, const char *value)
{
	char num[16];
	size_t len = strlen(value);
	uint64_t v;

	if (len && value[len - 1] == '%')
		len--;
	if (len >= sizeof(num))
		return -EINVAL;
	memcpy(num, value, len);
	num[len] = 0;
	if (ref_u64(num, false, &v) || v < 1 || v > 100)
		return -EINVAL;
	*field = (unsigned)v;
	return 0;
}

static int ref_set_verbose(unsigned *flags, const char *value)
{
	static const char *const on[] = { "", "1", "yes", "true" };
	static const char *const off[] = { "0", "no", "false" };

	for (unsigned i = 0; i < 4; i++)
		if (!strcasecmp(value, on[i])) {
			*flags |= USWAP_OPT_VERBOSE;
			return 0;
		}
	for (unsigned i = 0; i < 3; i++)
		if (!strcasecmp(value, off[i])) {
			*flags &= ~USWAP_OPT_VERBOSE;
			return 0;
		}
	return -EINVAL;
}

/* "none", "file", or SPEC lines appended one per line. */
static int ref_set_swap(struct uswap_options *o, const char *value)
{
	char line[1024], why[320];
	struct swap_spec sp;
	const char *p = value;
	size_t used = strlen(o->swap);

	if (!strcmp(value, "none") || !strcmp(value, "file")) {
		o->swap[0] = 0;
		if (value[0] == 'n')
			o->flags |= USWAP_OPT_NO_SWAP_FILE;
		else
			o->flags &= ~USWAP_OPT_NO_SWAP_FILE;
		return 0;
	}
	while (*p) {
		size_t n = strcspn(p, "\n");

		if (n >= 512)
			return -EINVAL;
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (p[n] == '\n');
		if (!n)
			continue;
		if (swap_spec_parse(line, &sp, why, sizeof(why)))
			return -EINVAL;
		if (used + !!used + n + 1 > sizeof(o->swap))
			return -EINVAL;
		if (used)
			o->swap[used++] = '\n';
		memcpy(o->swap + used, line, n + 1);
		used += n;
		o->flags &= ~USWAP_OPT_NO_SWAP_FILE;
	}
	return 0;
}

/*
 * --tier-max NODE=SIZE[,NODE=SIZE]...: NODE digits below 64, SIZE at
 * least 1M, each node once, no empty item; "" clears it.
 */
static int ref_set_tier_max(struct uswap_options *o, const char *value)
{
	uint64_t seen = 0, v;
	const char *p = value;
	char item[64];

	if (strlen(value) >= sizeof(o->tier_max))
		return -EINVAL;
	while (*p) {
		size_t n = strcspn(p, ","), d = 0;
		unsigned long node = 0;

		if (!n || n >= sizeof(item))
			return -EINVAL;
		memcpy(item, p, n);
		item[n] = 0;
		while (item[d] >= '0' && item[d] <= '9' && node < 1000)
			node = node * 10 + (unsigned long)(item[d++] - '0');
		if (!d || item[d] != '=' || node >= 64 || (seen >> node & 1) ||
		    uswap_size_parse(item + d + 1, &v) || v < SZ_1M)
			return -EINVAL;
		seen |= 1ull << node;
		p += n;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	strcpy(o->tier_max, value);
	return 0;
}

static int ref_set_zswap(char *field, size_t size, const char *value)
{
	char why[160];
	enum comp_alg alg;
	int level;

	if (strlen(value) >= size)
		return -EINVAL;
	if (strcmp(value, "off") &&
	    comp_parse(value, &alg, &level, why, sizeof(why)))
		return -EINVAL;
	strcpy(field, value);
	return 0;
}

/* Words a and b switch flag; the word `sets` sets it. */
static int ref_set_switch(unsigned *flags, unsigned flag, const char *value,
			  const char *a, const char *b, const char *sets)
{
	if (strcmp(value, a) && strcmp(value, b))
		return -EINVAL;
	if (!strcmp(value, sets))
		*flags |= flag;
	else
		*flags &= ~flag;
	return 0;
}

static int ref_set_choice(unsigned *field, const char *value, const char *a,
			  unsigned va, const char *b, unsigned vb)
{
	if (!strcmp(value, a))
		*field = va;
	else if (!strcmp(value, b))
		*field = vb;
	else
		return -EINVAL;
	return 0;
}

/* What uswap_options_set(o, opt_names[id], value) should do to *o. */
static int ref_set(struct uswap_options *o, int id, const char *value)
{
	char why[512];
	uint64_t v;

	if (!value) {
		if (id != O_VERBOSE)
			return -EINVAL;
		value = "";
	}
	switch (id) {
	case O_MAX:
		return ref_set_size(&o->max, SZ_1M, value);
	case O_HIGH:
		return ref_set_size(&o->high, SZ_4K, value);
	case O_MIN_REGION:
		return ref_set_size(&o->min_region, SZ_4K, value);
	case O_SWAP_SIZE:
		return ref_set_size(&o->swap_size, SZ_2M, value);
	case O_FOLIO:
		if (ref_size(value, &v) || (v != 4096 && v != 16384 &&
					    v != 65536 && v != SZ_2M))
			return -EINVAL;
		o->folio_size = v;
		return 0;
	case O_SWAP_DIR:
		return ref_set_path(o->swap_dir, sizeof(o->swap_dir), value);
	case O_STATS:
		return ref_set_path(o->stats_path, sizeof(o->stats_path), value);
	case O_SWAPTAB:
		return ref_set_path(o->swaptab, sizeof(o->swaptab), value);
	case O_FAULT_THREADS:
		return ref_set_count(&o->fault_threads, 64, value);
	case O_ZSWAP_THREADS:
		return ref_set_count(&o->zswap_threads, 16, value);
	case O_VERBOSE:
		return ref_set_verbose(&o->flags, value);
	case O_UFFD:
		return ref_u64(value, true, &o->uffd_features_off);
	case O_SWAP:
		return ref_set_swap(o, value);
	case O_ZSWAP:
		return ref_set_zswap(o->zswap, sizeof(o->zswap), value);
	case O_ZSWAP_MAX:
		return ref_set_pct(&o->zswap_max_pct, value);
	case O_ZSWAP_ACCEPT:
		return ref_set_pct(&o->zswap_accept_pct, value);
	case O_ZSWAP_UNIT:
		return ref_set_choice(&o->zswap_unit, value, "folio",
				      USWAP_ZSWAP_UNIT_FOLIO, "page",
				      USWAP_ZSWAP_UNIT_PAGE);
	case O_SWAP_NODE_POLICY:
		return ref_set_choice(&o->swap_node_policy, value, "page",
				      USWAP_SWAP_NODE_PAGE, "cpu",
				      USWAP_SWAP_NODE_CPU);
	case O_VERIFY:
		return ref_set_switch(&o->flags, USWAP_OPT_NO_VERIFY, value, "on",
				      "off", "off");
	case O_DEMOTION:
		/* The SPEC grammar has its own model (demotion_fuzz.c). */
		if (strlen(value) >= sizeof(o->demotion) ||
		    demotion_option_check(value, why, sizeof(why)))
			return -EINVAL;
		strcpy(o->demotion, value);
		return 0;
	case O_TIER_MAX:
		return ref_set_tier_max(o, value);
	case O_ENCRYPT:
		return ref_set_switch(&o->flags, USWAP_OPT_ENCRYPT, value, "on",
				      "off", "on");
	case O_ZSWAP_INCOMPRESSIBLE:
		return ref_set_switch(&o->flags, USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE,
				      value, "device", "store", "store");
	case O_ZSWAP_CHARGE:
		return ref_set_switch(&o->flags, USWAP_OPT_ZSWAP_NO_CHARGE, value, "on",
				      "off", "off");
	}
	return -EINVAL;
}

/* The option a name spells ('_' for '-'), or -1. */
static int opt_id(const char *name)
{
	for (int id = 0; id < NR_OPTS; id++) {
		const char *a = name, *b = opt_names[id];

		while (*a && *b && (*a == *b || (*a == '_' && *b == '-'))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return id;
	}
	return -1;
}

/* --- checks -------------------------------------------------------------- */

static bool fields_equal(const struct uswap_options *a,
			 const struct uswap_options *b)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (memcmp((const char *)a + fields[i].off,
			   (const char *)b + fields[i].off, fields[i].size))
			return false;
	return true;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, 0, size) != NULL;
}

/* What uswap_options_check() returning 0 implies. */
static void check_valid(const struct uswap_options *o)
{
	const uint64_t f = o->folio_size;

	CHECK(terminated(o->swap, sizeof(o->swap)));
	CHECK(terminated(o->swaptab, sizeof(o->swaptab)));
	CHECK(terminated(o->swap_dir, sizeof(o->swap_dir)));
	CHECK(terminated(o->stats_path, sizeof(o->stats_path)));
	CHECK(terminated(o->zswap, sizeof(o->zswap)));
	CHECK(terminated(o->demotion, sizeof(o->demotion)));
	CHECK(terminated(o->tier_max, sizeof(o->tier_max)));
	CHECK(!o->max || o->max >= SZ_1M);
	CHECK(!o->high || o->high >= SZ_4K);
	CHECK(!o->min_region || o->min_region >= SZ_4K);
	CHECK(!o->swap_size || o->swap_size >= SZ_2M);
	CHECK(!f || f == 4096 || f == 16384 || f == 65536 || f == SZ_2M);
	CHECK(o->fault_threads <= 64 && o->zswap_threads <= 16);
	CHECK(o->zswap_max_pct <= 100 && o->zswap_accept_pct <= 100);
	CHECK(o->zswap_unit <= USWAP_ZSWAP_UNIT_PAGE);
	CHECK(o->swap_node_policy <= USWAP_SWAP_NODE_CPU);
	CHECK(!(o->flags & ~(USWAP_OPT_VERBOSE | USWAP_OPT_NO_SWAP_FILE |
			     USWAP_OPT_JOIN_TREE | USWAP_OPT_NO_VERIFY |
			     USWAP_OPT_ENCRYPT |
			     USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE |
			     USWAP_OPT_ZSWAP_NO_CHARGE)));
	CHECK(!(o->flags & USWAP_OPT_NO_SWAP_FILE) || !o->swap[0]);
}

/* What every struct uswap_options_set() hands back satisfies. */
static void check_consistent(const struct uswap_options *o)
{
	check_valid(o);
	CHECK(o->swap[0] != '\n' && !strstr(o->swap, "\n\n"));
	CHECK(!o->swap[0] || o->swap[strlen(o->swap) - 1] != '\n');
}

/* An error buffer of errlen bytes, canaries after it. */
struct errbuf {
	char buf[ERR_MAX + 64];
	size_t len;
};

static void errbuf_init(struct errbuf *e)
{
	static const size_t lens[] = { ERR_MAX, 300, 0, ERR_MAX, 1, 40 };

	e->len = lens[fz.nr_calls++ % (sizeof(lens) / sizeof(lens[0]))];
	memset(e->buf, ERR_CANARY, sizeof(e->buf));
}

/* After a failure: a message, within errlen, on one line unless may_nl. */
static void check_message(const struct errbuf *e, bool may_nl,
			  const char *prefix)
{
	for (size_t i = e->len; i < sizeof(e->buf); i++)
		CHECK((unsigned char)e->buf[i] == ERR_CANARY);
	if (!e->len)
		return;
	CHECK(terminated(e->buf, e->len));
	if (e->len == 1)
		return;
	CHECK(e->buf[0]);
	CHECK(may_nl || !strchr(e->buf, '\n'));
	if (prefix && e->len > strlen(prefix))
		CHECK(!strncmp(e->buf, prefix, strlen(prefix)));
}

/* uswap_options_check(): 0 for a valid struct, or -errno and a message. */
static int check_options(const struct uswap_options *o)
{
	struct errbuf e;
	int ret;

	errbuf_init(&e);
	ret = uswap_options_check(o, e.buf, e.len);
	CHECK(ret <= 0 && ret > -4096);
	if (!ret)
		check_valid(o);
	else
		check_message(&e, memchr(o->swap_dir, '\n',
					 sizeof(o->swap_dir)) != NULL, NULL);
	return ret;
}

/*
 * "#NAME=VALUE": field NAME of a copy of *o set directly, as a program
 * may: a number (strtoull, any base, cut to the field's width), or a
 * string ("~C" fills the array with C, unterminated); then
 * uswap_options_check() on the copy.
 */
static void fuzz_raw(const struct uswap_options *o, const char *name,
		     const char *value)
{
	struct uswap_options raw = *o;
	const struct field *f = NULL;
	char *p;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(name, fields[i].name))
			f = &fields[i];
	if (!f || !value)
		return;
	p = (char *)&raw + f->off;
	if (f->size == 8 || f->size == 4) {
		uint64_t v = strtoull(value, NULL, 0);
		unsigned u = (unsigned)v;

		memcpy(p, f->size == 8 ? (void *)&v : (void *)&u, f->size);
		check_options(&raw);
	} else if (value[0] == '~') {
		memset(p, value[1] ? value[1] : 'x', f->size);
		CHECK(check_options(&raw) != 0);
	} else {
		snprintf(p, f->size, "%s", value);
		check_options(&raw);
	}
}

static void fuzz_set(struct uswap_options *o, const char *name,
		     const char *value)
{
	struct uswap_options before = *o, want = *o;
	int id = opt_id(name), ret, ref = -EINVAL;
	struct errbuf e;

	if (id >= 0)
		ref = ref_set(&want, id, value);
	errbuf_init(&e);
	ret = uswap_options_set(o, name, value, e.buf, e.len);
	if (ret) {
		CHECK(ret == ref);
		CHECK(fields_equal(o, &before));
		check_message(&e, value && strchr(value, '\n'), "--");
		return;
	}
	CHECK(ref == 0);
	CHECK(fields_equal(o, &want));
	if (e.len)	/* nothing written on success */
		CHECK((unsigned char)e.buf[0] == ERR_CANARY);
	check_consistent(o);
	check_options(o);
}

/* uswap_size_parse() against ref_size(), and back from its output. */
static void fuzz_size(const char *s)
{
	static const char units[] = "KMGT";
	uint64_t v = 0x1234, r = 0, again;
	char text[40];
	int ret = uswap_size_parse(s, &v), want = ref_size(s, &r);

	CHECK(ret == want);
	if (ret) {
		CHECK(v == 0x1234);
		return;
	}
	CHECK(v == r);
	snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
	CHECK(uswap_size_parse(text, &again) == 0 && again == v);
	for (int i = 3; i >= 0; i--) {
		unsigned shift = 10 * (unsigned)(i + 1);

		if (v && !(v & ((1ull << shift) - 1))) {
			snprintf(text, sizeof(text), "%llu%c%s",
				 (unsigned long long)(v >> shift), units[i],
				 v & (1ull << shift) ? "iB" : "");
			CHECK(uswap_size_parse(text, &again) == 0 &&
			      again == v);
			break;
		}
	}
}

/* --- the environment ---------------------------------------------------- */

static void env_clear(void)
{
	for (int id = 0; id < NR_OPTS; id++) {
		unsetenv(env_names[id]);
		fz.env_set[id] = false;
	}
}

static void env_record(const char *name, const char *value)
{
	int id = opt_id(name);

	if (id < 0)
		return;
	if (value) {
		char *b = fz.env_buf[id];

		snprintf(b, sizeof(fz.env_buf[id]), "%s=%s", env_names[id],
			 value);
		CHECK(putenv(b) == 0);
		fz.env_value[id] = value;
	} else {
		unsetenv(env_names[id]);
	}
	fz.env_set[id] = value != NULL;
}

/* uswap_options_from_env() is the sets of the variables together. */
static void fuzz_env(struct uswap_options *o)
{
	struct uswap_options before = *o, want = *o;
	int ret, errs[NR_OPTS], nr_errs = 0;
	bool known = false, swap = fz.env_set[O_SWAP];
	struct errbuf e;

	for (int id = 0; id < NR_OPTS; id++) {
		int r;

		if (!fz.env_set[id])
			continue;
		r = ref_set(&want, id, fz.env_value[id]);
		if (r)
			errs[nr_errs++] = r;
	}
	errbuf_init(&e);
	ret = uswap_options_from_env(o, e.buf, e.len);
	env_clear();
	if (ret) {
		for (int i = 0; i < nr_errs; i++)
			known |= errs[i] == ret;
		CHECK(known);
		CHECK(fields_equal(o, &before));
		(void)swap;
		check_message(&e, false, "USWAP_");
		return;
	}
	CHECK(nr_errs == 0);
	CHECK(fields_equal(o, &want));
	check_consistent(o);
	check_options(o);
}

/* --- input ------------------------------------------------------------- */

/* Split the input into records (see the top); fz.text holds the strings. */
static void parse_records(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *t = fz.text;
	struct record *r = NULL;

	fz.nr = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (*p == '+' && r && r->value) {
			/* Continue the last value: undo its NUL. */
			t[-1] = '\n';
			memcpy(t, p + 1, n - 1);
			t += n - 1;
			*t++ = 0;
		} else if (fz.nr < MAX_RECORDS) {
			const char *eq;

			r = &fz.rec[fz.nr++];
			r->kind = *p == '!' || *p == '#' ? *p : 0;
			if (r->kind) {
				p++;
				n--;
			}
			eq = memchr(p, '=', n);
			r->name = t;
			memcpy(t, p, eq ? (size_t)(eq - p) : n);
			t += eq ? eq - p : (ptrdiff_t)n;
			*t++ = 0;
			r->value = NULL;
			if (eq) {
				size_t vn = n - (size_t)(eq + 1 - p);

				r->value = t;
				memcpy(t, eq + 1, vn);
				t += vn;
				*t++ = 0;
			}
		}
		p += n + (nl != NULL);
	}
}

static void fuzz_whole_size(const uint8_t *data, size_t size)
{
	char s[256];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;

	memcpy(s, data, n);
	s[n] = 0;
	fuzz_size(s);
}

static void once(void)
{
	static bool done;
	struct uswap_options o;
	size_t sum = 0;
	uint64_t v;

	if (done)
		return;
	done = true;
	env_clear();
	/* A field added to the struct must be added to fields[] too. */
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		sum += fields[i].size;
	CHECK(sum + 8 > sizeof(struct uswap_options));
	uswap_options_init(&o);
	CHECK(uswap_options_set(NULL, "max", "1G", NULL, 0) == -EINVAL);
	CHECK(uswap_options_set(&o, NULL, "1G", NULL, 0) == -EINVAL);
	CHECK(uswap_size_parse(NULL, &v) == -EINVAL);
	CHECK(uswap_size_parse("1", NULL) == -EINVAL);
	CHECK(uswap_options_check(&o, NULL, 0) == 0);
	CHECK(uswap_options_from_env(&o, NULL, 0) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uswap_options o;
	bool env = false;

	once();
	if (size > INPUT_MAX)
		size = INPUT_MAX;
	fz.nr_calls = 0;
	fuzz_whole_size(data, size);
	parse_records(data, size);
	uswap_options_init(&o);
	for (unsigned i = 0; i < fz.nr; i++) {
		const struct record *r = &fz.rec[i];

		if (r->value)
			fuzz_size(r->value);
		if (r->kind == '!') {
			env_record(r->name, r->value);
			env = true;
		} else if (r->kind == '#') {
			fuzz_raw(&o, r->name, r->value);
		} else {
			fuzz_set(&o, r->name, r->value);
		}
	}
	if (env)
		fuzz_env(&o);
	check_consistent(&o);
	return 0;
}
