/* SPDX-License-Identifier: MIT */
/*
 * options.h - the internal side of the options: the documented defaults,
 * filled in when a runtime is created (options_defaults.c), and what
 * options.c shares with options_defaults.c.
 */
#ifndef USWAP_OPTIONS_H
#define USWAP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uswap_options;

#define OPTIONS_FOLIO_DEFAULT		(64ull << 10)
#define OPTIONS_MIN_REGION_DEFAULT	(1ull << 20)
#define OPTIONS_FAULT_THREADS_DEFAULT	2u
#define OPTIONS_FAULT_THREADS_MAX	64u
#define OPTIONS_ZSWAP_DEFAULT		"off"
#define OPTIONS_ZSWAP_MAX_PCT_DEFAULT	20u
#define OPTIONS_ZSWAP_ACCEPT_PCT_DEFAULT 90u
#define OPTIONS_ZSWAP_THREADS_MAX	16u

/* options_defaults.c */

/*
 * Fill every zero field of *opt with its documented default, then check the
 * whole with uswap_options_check():
 *   folio_size	64K;  min_region 1M;  fault_threads 2;
 *   zswap	off;  zswap_max_pct 20;  zswap_accept_pct 90;  zswap_unit folio;
 *   zswap_threads	online CPUs - 1, at least 1, at most 16;
 *   swap_dir	$TMPDIR if set and not empty, else /tmp;
 *   max	half of MemAvailable (/proc/meminfo), rounded down to the folio;
 *   high	90% of max, rounded down to the folio;
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

#endif /* USWAP_OPTIONS_H */
