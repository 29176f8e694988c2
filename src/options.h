/* SPDX-License-Identifier: MIT */
/*
 * options.h - the internal side of the options: the option table's rows
 * (option_table.c), the documented defaults, filled in when a runtime is
 * created (options_defaults.c), and what options.c shares with both.
 */
#ifndef USWAP_OPTIONS_H
#define USWAP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uswap.h"

#define OPTIONS_FOLIO_DEFAULT		(4ull << 10)
#define OPTIONS_MIN_REGION_DEFAULT	(1ull << 20)
#define OPTIONS_HIGH_HEADROOM		32u	/* default high: max less max/32 */
#define OPTIONS_FAULT_THREADS_DEFAULT	2u
#define OPTIONS_FAULT_THREADS_MAX	64u
#define OPTIONS_ZSWAP_DEFAULT		"off"
#define OPTIONS_ZSWAP_MAX_PCT_DEFAULT	20u
#define OPTIONS_ZSWAP_ACCEPT_PCT_DEFAULT 90u
#define OPTIONS_ZSWAP_THREADS_MAX	16u

/* option_table.c */

/*
 * What an option's value is, and so how options.c sets it, reads it back
 * and words its errors.  The field is the row's off and size.
 */
enum option_kind {
	OPTION_SIZE,	/* uint64_t: a size (uswap_size_parse()), at least min */
	OPTION_COUNT,	/* unsigned: a whole number from min to max */
	OPTION_PERCENT,	/* unsigned: 1 to 100, optionally with '%' */
	OPTION_MASK,	/* uint64_t: decimal, or hexadecimal after 0x */
	OPTION_PATH,	/* char[]: a path, not empty, that fits */
	OPTION_TEXT,	/* char[]: its own syntax, checked by the row's set */
	OPTION_FLAG,	/* the bit flag of opt->flags: a boolean (1, 0, yes,
			   no, true, false; no value is 1) */
	OPTION_SWITCH,	/* the bit flag: one of the metavar's two words,
			   "a|b"; the word sets sets the bit */
	OPTION_WORDS,	/* unsigned: one of the metavar's words "a|b|c",
			   kept as 1 + its index (0 is the default) */
};

struct option;

/* A custom setter: value into *opt, or one message naming label. */
typedef int (*option_set_fn)(struct uswap_options *opt, const struct option *o,
			     const char *value, const char *label, char *err,
			     size_t errlen);
/* A custom reader: as uswap_options_get(), for a field set by a custom setter. */
typedef int (*option_get_fn)(const struct uswap_options *opt,
			     const struct option *o, char *buf, size_t len);

/*
 * One row of the option table: what the CLI and the docs see (d, public),
 * and how the value is kept.
 */
struct option {
	struct uswap_option_desc d;
	enum option_kind kind;
	size_t off, size;	/* the field of struct uswap_options */
	unsigned flag;		/* the USWAP_OPT_* bit it sets (OPTION_FLAG,
				   OPTION_SWITCH, or its own setter), or 0 */
	const char *sets;	/* OPTION_SWITCH: the word that sets flag */
	uint64_t min, max;	/* OPTION_SIZE: min; OPTION_COUNT: both */
	const char *what;	/* the value in messages: "a thread count" */
	option_set_fn set;	/* instead of the kind's setter, or NULL */
	option_get_fn get;	/* instead of the kind's reader, or NULL */
};

/* The field of struct uswap_options that a row sets. */
#define OPTION_FIELD(f)							\
	.off = offsetof(struct uswap_options, f),			\
	.size = sizeof(((struct uswap_options *)0)->f)

extern const struct option option_table[];
extern const unsigned nr_options;

/* options_defaults.c */

/*
 * Fill every zero field of *opt with its documented default, then check the
 * whole with uswap_options_check():
 *   folio_size	4K;  min_region 1M;  fault_threads 2;
 *   zswap	off;  zswap_max_pct 20;  zswap_accept_pct 90;  zswap_unit folio;
 *   zswap_threads	online CPUs - 1, at least 1, at most 16;
 *   swap_dir	$TMPDIR if set and not empty, else /tmp;
 *   max	half of MemAvailable (/proc/meminfo), rounded down to the folio;
 *   high	max less 1/32 of it (97%), rounded down to the folio;
 *   swap_size	left 0: no cap; a swap file without a size grows on demand
 *		while its file system keeps as much free space as it holds
 *		(swap_file.c); -ENOSPC when swap_dir has less than 4M free.
 * Returns 0 or -errno with one line in err; *opt is changed only on success.
 * Reads /proc/meminfo and statvfs()s swap_dir; never allocates.
 */
int options_apply_defaults(struct uswap_options *opt, char *err, size_t errlen);

/* options.c */

/*
 * Format one message into err (nothing when err is NULL or errlen 0),
 * truncated to errlen, with every control character made '?' so that it
 * stays on one line.
 */
void __attribute__((format(printf, 3, 4)))
options_err(char *err, size_t errlen, const char *fmt, ...);
/* v as the user would write it ("64M", "1536K", or bytes); returns buf. */
const char *options_size_str(uint64_t v, char *buf, size_t len);
/* Is v a supported folio size: 4K, 16K, 64K or 2M? */
bool options_folio_size_valid(uint64_t v);
/* The USWAP_OPT_* flags that options set (the rows' flag bits). */
unsigned options_flags(void);
/* The option's field in *opt. */
static inline void *option_field(struct uswap_options *opt,
				 const struct option *o)
{
	return (char *)opt + o->off;
}

#endif /* USWAP_OPTIONS_H */
