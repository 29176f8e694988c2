// SPDX-License-Identifier: MIT
/*
 * options.c - the options of a runtime: setting them by name and from the
 * environment, reading them back, and what each kind of value accepts.
 *
 * The CLI (flags), the preload library (USWAP_* variables) and programs
 * that link libuswap all describe a runtime with one struct uswap_options.
 * What options there are is the option table's (option_table.c: one row
 * per option); this file sets, reads back and checks each kind of value a
 * row may have (enum option_kind), so that a bad value gets the same
 * one-line message wherever it comes from: "--max: ..." for a flag,
 * "USWAP_MAX: ..." for a variable.  Nothing is half-applied: a failing
 * call leaves the options as they were.  Whether a whole set of options
 * holds together, and the documented defaults that fill what was left
 * out, are options_defaults.c's.
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

#include "base.h"
#include "uswap.h"
#include "options.h"

#define SZ_4K		(4ull << 10)
#define SZ_16K		(16ull << 10)
#define SZ_64K		(64ull << 10)
#define SZ_2M		(2ull << 20)

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

/* ---- the kinds of value (enum option_kind) ---------------------------- */

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

static int set_count(unsigned *field, const struct option *o,
		     const char *label, const char *value, char *err,
		     size_t errlen)
{
	uint64_t v;

	if (parse_u64(value, false, &v) || v < o->min || v > o->max) {
		options_err(err, errlen, "%s: \"%s\" is not %s (expected a whole number from %llu to %llu)",
			label, value, o->what, (unsigned long long)o->min,
			(unsigned long long)o->max);
		return -EINVAL;
	}
	*field = (unsigned)v;
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

static int set_mask(uint64_t *field, const char *label, const char *value,
		    char *err, size_t errlen)
{
	uint64_t v;
	int ret = parse_u64(value, true, &v);

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
 * The words of a metavar "a|b|c": the index of value among them, or -1.
 * The words are a row's, so that --help, the parser and the messages
 * cannot disagree.
 */
static int word_index(const char *words, const char *value)
{
	const char *w = words;
	size_t n;
	int i;

	for (i = 0;; i++) {
		n = strcspn(w, "|");
		if (strlen(value) == n && !strncmp(w, value, n))
			return i;
		if (!w[n])
			return -1;
		w += n + 1;
	}
}

/* Word i of words, or NULL; *n gets its length. */
static const char *word_at(const char *words, unsigned i, size_t *n)
{
	const char *w = words;

	for (; i; i--) {
		w = strchr(w, '|');
		if (!w)
			return NULL;
		w++;
	}
	*n = strcspn(w, "|");
	return w;
}

/* "is not a unit (expected folio or page)": the words, "a, b or c". */
static void words_err(const struct option *o, const char *label,
		      const char *value, char *err, size_t errlen)
{
	char list[256];
	size_t n, next, used = 0;
	const char *w;
	unsigned i;

	list[0] = 0;
	for (i = 0; (w = word_at(o->d.metavar, i, &n)); i++) {
		const char *sep = !i ? "" :
			word_at(o->d.metavar, i + 1, &next) ? ", " : " or ";

		snprintf(list + used, sizeof(list) - used, "%s%.*s", sep,
			 (int)n, w);
		used = strlen(list);
	}
	options_err(err, errlen, "%s: \"%s\" is not %s (expected %s)", label,
		    value, o->what, list);
}

/* Set row o of *opt from value; label names it in messages. */
static int option_set(struct uswap_options *opt, const struct option *o,
		      const char *value, const char *label, char *err,
		      size_t errlen)
{
	void *field = option_field(opt, o);
	unsigned *flags = &opt->flags;
	int i;

	if (!value) {
		if (o->kind != OPTION_FLAG) {
			options_err(err, errlen, "%s: missing value", label);
			return -EINVAL;
		}
		value = "";
	}
	if (o->set)
		return o->set(opt, o, value, label, err, errlen);
	switch (o->kind) {
	case OPTION_SIZE:
		return set_size(field, o->min, label, value, err, errlen);
	case OPTION_COUNT:
		return set_count(field, o, label, value, err, errlen);
	case OPTION_PERCENT:
		return set_pct(field, label, value, err, errlen);
	case OPTION_MASK:
		return set_mask(field, label, value, err, errlen);
	case OPTION_PATH:
		return set_path(field, o->size, o->what, label, value, err,
				errlen);
	case OPTION_FLAG:
		return set_bool(flags, o->flag, label, value, err, errlen);
	case OPTION_SWITCH:
		i = word_index(o->d.metavar, value);
		if (i < 0)
			break;
		if (!strcmp(value, o->sets))
			*flags |= o->flag;
		else
			*flags &= ~o->flag;
		return 0;
	case OPTION_WORDS:
		i = word_index(o->d.metavar, value);
		if (i < 0)
			break;
		*(unsigned *)field = (unsigned)i + 1;
		return 0;
	case OPTION_TEXT:
		return -EINVAL;		/* a text option has its own setter */
	}
	words_err(o, label, value, err, errlen);
	return -EINVAL;
}

/* The text of a value into buf: its length, or -ENOSPC. */
static int put(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int put(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

/* Row o of *opt as uswap_options_set() takes it back (uswap_options_get()). */
static int option_get(const struct uswap_options *opt, const struct option *o,
		      char *buf, size_t len)
{
	const void *field = (const char *)opt + o->off;
	uint64_t u64 = 0;
	unsigned u = 0;
	const char *w;
	size_t n;

	if (o->get)
		return o->get(opt, o, buf, len);
	if (o->kind == OPTION_SIZE || o->kind == OPTION_MASK)
		memcpy(&u64, field, sizeof(u64));
	if (o->kind == OPTION_COUNT || o->kind == OPTION_PERCENT ||
	    o->kind == OPTION_WORDS)
		memcpy(&u, field, sizeof(u));
	switch (o->kind) {
	case OPTION_SIZE:
		return u64 ? put(buf, len, "%llu", (unsigned long long)u64) :
			     put(buf, len, "%s", "");
	case OPTION_MASK:
		return u64 ? put(buf, len, "0x%llx", (unsigned long long)u64) :
			     put(buf, len, "%s", "");
	case OPTION_COUNT:
	case OPTION_PERCENT:
		return u ? put(buf, len, "%u", u) : put(buf, len, "%s", "");
	case OPTION_PATH:
	case OPTION_TEXT:
		return put(buf, len, "%.*s", (int)strnlen(field, o->size),
			   (const char *)field);
	case OPTION_FLAG:
		return put(buf, len, "%s", opt->flags & o->flag ? "1" : "");
	case OPTION_SWITCH:
		return put(buf, len, "%s", opt->flags & o->flag ? o->sets : "");
	case OPTION_WORDS:
		if (!u)
			return put(buf, len, "%s", "");
		w = word_at(o->d.metavar, u - 1, &n);
		if (!w)
			return -EINVAL;
		return put(buf, len, "%.*s", (int)n, w);
	}
	return -EINVAL;
}

/* ---- by name, from the environment ----------------------------------- */

/* The row that name spells ('_' may stand for '-'), or NULL. */
static const struct option *option_find(const char *name)
{
	const char *n, *o;
	unsigned i;

	for (i = 0; i < nr_options; i++) {
		for (n = name, o = option_table[i].d.name; *n && *o; n++, o++) {
			if (*n != *o && !(*n == '_' && *o == '-'))
				break;
		}
		if (!*n && !*o)
			return &option_table[i];
	}
	return NULL;
}

/* "--NAME: unknown option (expected max, high, ... or uffd-features-off)" */
static void unknown_err(const char *name, char *err, size_t errlen)
{
	char list[1024];
	size_t used = 0;
	unsigned i;

	if (!err || !errlen)
		return;
	list[0] = 0;
	for (i = 0; i < nr_options && used < sizeof(list); i++) {
		snprintf(list + used, sizeof(list) - used, "%s%s",
			 !i ? "" : i + 1 < nr_options ? ", " : " or ",
			 option_table[i].d.name);
		used += strlen(list + used);
	}
	options_err(err, errlen, "--%s: unknown option (expected %s)", name, list);
}

unsigned options_flags(void)
{
	unsigned i, flags = 0;

	for (i = 0; i < nr_options; i++)
		flags |= option_table[i].flag;
	return flags;
}

EXPORT const struct uswap_option_desc *uswap_option_desc(unsigned i)
{
	return i < nr_options ? &option_table[i].d : NULL;
}

EXPORT int uswap_options_set(struct uswap_options *opt, const char *name,
			     const char *value, char *err, size_t errlen)
{
	const struct option *o;
	struct uswap_options tmp;
	char label[64];
	int ret;

	if (!opt || !name)
		return -EINVAL;
	o = option_find(name);
	if (!o) {
		unknown_err(name, err, errlen);
		return -EINVAL;
	}
	snprintf(label, sizeof(label), "--%s", o->d.name);
	tmp = *opt;
	ret = option_set(&tmp, o, value, label, err, errlen);
	if (!ret)
		*opt = tmp;
	return ret;
}

EXPORT int uswap_options_get(const struct uswap_options *opt, const char *name,
			     char *buf, size_t len)
{
	const struct option *o;

	if (!opt || !name || !buf)
		return -EINVAL;
	o = option_find(name);
	if (!o)
		return -EINVAL;
	return option_get(opt, o, buf, len);
}

EXPORT int uswap_options_from_env(struct uswap_options *opt, char *err,
				  size_t errlen)
{
	struct uswap_options tmp;
	const char *value;
	unsigned i;
	int ret;

	if (!opt)
		return -EINVAL;
	tmp = *opt;
	for (i = 0; i < nr_options; i++) {
		const struct option *o = &option_table[i];

		value = getenv(o->d.env);
		if (!value)
			continue;
		ret = option_set(&tmp, o, value, o->d.env, err, errlen);
		if (ret)
			return ret;
	}
	*opt = tmp;
	return 0;
}
