/* SPDX-License-Identifier: MIT */
/*
 * Description: the option table (src/option_table.c): every row is whole
 * and consistent (name, variable, help, kind, field), the "unknown
 * option" message lists every name in the table's order, and what
 * uswap_options_get() reads back sets the same options again, as uswap
 * run passes them to PROG.  0 pass, 1 fail.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uswap.h"
#include "options.h"
#include "testlib.h"

/* USWAP_ and the name in upper case, '_' for '-'. */
static void expect_env(const struct uswap_option_desc *d)
{
	char want[64];
	size_t i;

	snprintf(want, sizeof(want), "USWAP_%s", d->name);
	for (i = 6; want[i]; i++)
		want[i] = want[i] == '-' ? '_' : (char)toupper((unsigned char)want[i]);
	if (!d->env || strcmp(d->env, want))
		t_fail("--%s: variable %s, expected %s", d->name,
		       d->env ? d->env : "(none)", want);
}

/* A switch: its word sets sets its flag, the other clears it. */
static void expect_switch(const struct option *o)
{
	const char *m = o->d.metavar, *bar = strchr(m, '|');
	char a[32], b[32];
	struct uswap_options opt;

	snprintf(a, sizeof(a), "%.*s", bar ? (int)(bar - m) : 0, m);
	snprintf(b, sizeof(b), "%s", bar ? bar + 1 : "");
	if (!o->sets || !o->flag || strchr(b, '|') ||
	    (strcmp(o->sets, a) && strcmp(o->sets, b)))
		t_fail("--%s: sets \"%s\" is not one of its two words %s",
		       o->d.name, o->sets ? o->sets : "", m);
	uswap_options_init(&opt);
	opt.flags = ~0u;
	if (uswap_options_set(&opt, o->d.name, strcmp(o->sets, a) ? a : b,
			      NULL, 0) || opt.flags != ~o->flag ||
	    uswap_options_set(&opt, o->d.name, o->sets, NULL, 0) ||
	    opt.flags != ~0u)
		t_fail("--%s: its words do not set and clear flag 0x%x",
		       o->d.name, o->flag);
}

/* Every row: a name, its variable, a help text as --help words it. */
static void test_rows(void)
{
	const struct uswap_option_desc *d, *e;
	unsigned i, j, n = 0;

	for (i = 0; (d = uswap_option_desc(i)); i++, n++) {
		const struct option *o = &option_table[i];
		size_t len;

		if (d != &o->d)
			t_fail("uswap_option_desc(%u) is not row %u", i, i);
		if (!d->name || !*d->name ||
		    strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789-") !=
			    strlen(d->name))
			t_fail("row %u: name \"%s\"", i, d->name ? d->name : "");
		expect_env(d);
		len = d->help ? strlen(d->help) : 0;
		if (!len || !islower((unsigned char)d->help[0]) ||
		    d->help[len - 1] == '.' || strchr(d->help, '\n'))
			t_fail("--%s: help text must be one paragraph, lower case, without a final period",
			       d->name);
		if (d->default_text && (!*d->default_text ||
					strchr(d->default_text, '\n')))
			t_fail("--%s: default text", d->name);
		for (j = 0; j < i; j++) {
			e = uswap_option_desc(j);
			if (!strcmp(e->name, d->name))
				t_fail("--%s twice", d->name);
			if (d->short_name && e->short_name == d->short_name)
				t_fail("-%c twice", d->short_name);
		}
		/* The kind and the field. */
		if ((o->kind == OPTION_FLAG) != !d->metavar)
			t_fail("--%s: a metavar exactly when it takes a value", d->name);
		if ((o->kind == OPTION_SWITCH || o->kind == OPTION_WORDS) &&
		    !strchr(d->metavar, '|'))
			t_fail("--%s: its metavar lists no words", d->name);
		if (o->kind == OPTION_SWITCH)
			expect_switch(o);
		if ((o->kind == OPTION_FLAG || o->kind == OPTION_SWITCH) &&
		    (o->flag & (o->flag - 1)))
			t_fail("--%s: flag 0x%x is not one bit", d->name, o->flag);
		if (o->kind == OPTION_TEXT && !o->set)
			t_fail("--%s: a text option needs its own setter", d->name);
		if (o->kind != OPTION_FLAG && o->kind != OPTION_SWITCH &&
		    (!o->size || o->off + o->size > sizeof(struct uswap_options)))
			t_fail("--%s: no field", d->name);
		if ((o->kind == OPTION_PATH || o->kind == OPTION_COUNT ||
		     o->kind == OPTION_SWITCH || o->kind == OPTION_WORDS) &&
		    (!o->what || strncmp(o->what, "a ", 2)))
			t_fail("--%s: what (\"a ...\") names its value in messages",
			       d->name);
		if (o->kind == OPTION_COUNT && (o->min > o->max || !o->max))
			t_fail("--%s: range %llu..%llu", d->name,
			       (unsigned long long)o->min,
			       (unsigned long long)o->max);
	}
	if (n != nr_options || !n || uswap_option_desc(n) || uswap_option_desc(~0u))
		t_fail("uswap_option_desc: %u rows, nr_options %u", n, nr_options);
}

/* "--NAME: unknown option (expected a, b, ... or z)", every name in order. */
static void test_unknown(void)
{
	const struct uswap_option_desc *d;
	struct uswap_options o;
	char err[2048], want[2048];
	size_t used;
	unsigned i;

	used = (size_t)snprintf(want, sizeof(want), "--bogus: unknown option (expected ");
	for (i = 0; (d = uswap_option_desc(i)); i++)
		used += (size_t)snprintf(want + used, sizeof(want) - used, "%s%s",
					 !i ? "" : uswap_option_desc(i + 1) ? ", " : " or ",
					 d->name);
	snprintf(want + used, sizeof(want) - used, ")");
	uswap_options_init(&o);
	if (uswap_options_set(&o, "bogus", "1", err, sizeof(err)) != -EINVAL ||
	    strcmp(err, want))
		t_fail("unknown option:\n  %s\nexpected\n  %s", err, want);
	/* The list as it was written by hand before the table made it. */
	if (strcmp(want, "--bogus: unknown option (expected max, high, folio, min-region, swap, swaptab, swap-node-policy, swap-size, swap-dir, stats, fault-threads, verbose, zswap, zswap-max, zswap-accept, zswap-unit, zswap-threads, zswap-incompressible, zswap-charge, verify, encrypt, demotion, tier-max or uffd-features-off)"))
		printf("note: the option list has changed: %s\n", want);
}

/*
 * Values to read back, one per option where there is one; the words of
 * an option of words are tried too.  An option added without one here
 * is still checked from its default and its words.
 */
static const struct sample {
	const char *name, *value, *back;	/* back: what get returns */
} samples[] = {
	{ "max", "64M", "67108864" },
	{ "high", "1.5M", "1572864" },
	{ "folio", "16K", "16384" },
	{ "min-region", "2M", "2097152" },
	{ "swap", "/tmp/a,size=64M\n/tmp/b,prio=3", "/tmp/a,size=64M\n/tmp/b,prio=3" },
	{ "swaptab", "/etc/uswaptab", "/etc/uswaptab" },
	{ "swap-size", "4G", "4294967296" },
	{ "swap-dir", "/var/tmp", "/var/tmp" },
	{ "stats", "s.json", "s.json" },
	{ "fault-threads", "7", "7" },
	{ "verbose", "yes", "1" },
	{ "zswap", "zstd:3", "zstd:3" },
	{ "zswap-max", "50%", "50" },
	{ "zswap-accept", "80", "80" },
	{ "zswap-threads", "3", "3" },
	{ "demotion", "0>2;1>2", "0>2;1>2" },
	{ "tier-max", "2=1G", "2=1G" },
	{ "uffd-features-off", "31", "0x1f" },
};

/* Set name=value on a fresh struct, read it back, set that on another. */
static void round_trip(const char *name, const char *value, const char *back)
{
	struct uswap_options a, b;
	char buf[sizeof(struct uswap_options)], err[512];
	int n;

	uswap_options_init(&a);
	uswap_options_init(&b);
	if (uswap_options_set(&a, name, value, err, sizeof(err)))
		t_fail("set %s=%s: %s", name, value, err);
	n = uswap_options_get(&a, name, buf, sizeof(buf));
	if (n < 0 || (size_t)n != strlen(buf) || (back && strcmp(buf, back)))
		t_fail("get %s after %s: %d \"%s\", expected \"%s\"", name, value,
		       n, buf, back ? back : "(any)");
	if (n && uswap_options_set(&b, name, buf, err, sizeof(err)))
		t_fail("set %s=%s (read back): %s", name, buf, err);
	if (memcmp(&a, &b, sizeof(a)))
		t_fail("%s=%s read back as \"%s\" sets other options", name,
		       value, buf);
}

static void test_get(void)
{
	const struct uswap_option_desc *d;
	struct uswap_options o;
	char buf[sizeof(struct uswap_options)], word[64];
	unsigned i, k;
	int n;

	uswap_options_init(&o);
	for (i = 0; (d = uswap_option_desc(i)); i++) {
		n = uswap_options_get(&o, d->name, buf, sizeof(buf));
		if (n || buf[0])
			t_fail("get %s of the defaults: %d \"%s\", expected nothing",
			       d->name, n, buf);
		/* Each word of an option of words reads back as set (or as
		 * nothing, for the default's). */
		if (d->metavar && strchr(d->metavar, '|')) {
			const char *w = d->metavar;

			for (;;) {
				size_t len = strcspn(w, "|");

				snprintf(word, sizeof(word), "%.*s", (int)len, w);
				if (strspn(word, "abcdefghijklmnopqrstuvwxyz") == len)
					round_trip(d->name, word, NULL);
				if (!w[len])
					break;
				w += len + 1;
			}
		}
	}
	for (k = 0; k < sizeof(samples) / sizeof(samples[0]); k++)
		round_trip(samples[k].name, samples[k].value, samples[k].back);
	round_trip("swap", "none", "none");
	round_trip("swap-node-policy", "cpu", "cpu");
	round_trip("zswap-unit", "page", "page");
	round_trip("verify", "off", "off");
	round_trip("verify", "on", "");
	round_trip("encrypt", "on", "on");

	/* Errors. */
	if (uswap_options_get(&o, "bogus", buf, sizeof(buf)) != -EINVAL ||
	    uswap_options_get(NULL, "max", buf, sizeof(buf)) != -EINVAL)
		t_fail("get of an unknown option");
	if (uswap_options_set(&o, "max_", "1G", NULL, 0) != -EINVAL)
		t_fail("max_ is an option");
	uswap_options_set(&o, "max", "64M", NULL, 0);
	if (uswap_options_get(&o, "max", buf, 8) != -ENOSPC ||
	    uswap_options_get(&o, "max", buf, 9) != 8 ||
	    uswap_options_get(&o, "max", buf, 0) != -ENOSPC)
		t_fail("get into a short buffer");
	if (uswap_options_get(&o, "min_region", buf, sizeof(buf)) != 0)
		t_fail("get min_region ('_' for '-')");
	o.zswap_unit = 3;	/* no word: uswap_options_check() refuses it too */
	if (uswap_options_get(&o, "zswap-unit", buf, sizeof(buf)) != -EINVAL)
		t_fail("get of a value no word names");
}

int main(void)
{
	test_rows();
	test_unknown();
	test_get();
	printf("%u options\n", nr_options);
	return T_PASS;
}
