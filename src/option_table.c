// SPDX-License-Identifier: MIT
/*
 * option_table.c - the option table: every option of a runtime in one row,
 * and the setters of the options whose values have a syntax of their own.
 *
 * A row holds all there is to know about an option: its name (--max,
 * uswap_options_set(opt, "max")), its variable (USWAP_MAX), the kind of
 * value and the field of struct uswap_options it sets, its range, and the
 * metavar, default and help text that --help and the man page show.
 * Everything else is made from the rows: options.c sets, reads back and
 * words the errors of each kind of value and lists the names in "unknown
 * option"; the uswap command parses its flags, exports the variables and
 * prints --help and the man page's option list from uswap_option_desc()
 * (cli/help.c; "make docs" writes docs/uswap.1's blocks, scripts/lint
 * checks them and include/uswap.h's list).
 *
 * Adding an option is adding a row (and its field or flag in uswap.h):
 * a kind of value that exists needs no code; one with a syntax of its own
 * gets a setter here (.set, and .get when the field does not say the value
 * as it was given).  The help text is one paragraph, lower case, without
 * a final period and with two spaces between sentences; the metavar of
 * OPTION_SWITCH and OPTION_WORDS lists the words that the option takes.
 * The order of the rows is the order of --help, the man page and the
 * "unknown option" message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "compress.h"
#include "base.h"
#include "demote.h"
#include "memory_tiers.h"
#include "uswap.h"
#include "swapdev.h"
#include "options.h"

#define SZ_4K		(4ull << 10)
#define SZ_1M		(1ull << 20)
#define SZ_2M		(2ull << 20)

/* ---- the options with a syntax of their own --------------------------- */

static int set_folio(struct uswap_options *opt, const struct option *o,
		     const char *value, const char *label, char *err,
		     size_t errlen)
{
	uint64_t v;

	if (uswap_size_parse(value, &v) || !options_folio_size_valid(v)) {
		options_err(err, errlen, "%s: \"%s\" is not a folio size (expected 4K, 16K, 64K or 2M)",
			label, value);
		return -EINVAL;
	}
	opt->folio_size = v;
	return 0;
}

/*
 * "none" (the row's flag, USWAP_OPT_NO_SWAP_FILE), "file", or device
 * SPECs (one per line from the environment), each checked here and
 * appended to opt->swap.
 */
static int set_swap(struct uswap_options *opt, const struct option *o,
		    const char *value, const char *label, char *err,
		    size_t errlen)
{
	struct swap_spec spec;
	char why[320], line[512];
	const char *p = value;

	if (!strcmp(value, "none")) {
		opt->flags |= o->flag;
		opt->swap[0] = 0;
		return 0;
	}
	if (!strcmp(value, "file")) {
		opt->flags &= ~o->flag;
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
		opt->flags &= ~o->flag;
	}
	return 0;
}

/* "none", or the SPECs one per line; "" for the default swap file. */
static int get_swap(const struct uswap_options *opt, const struct option *o,
		    char *buf, size_t len)
{
	const char *v = opt->flags & o->flag ? "none" : opt->swap;
	int n = snprintf(buf, len, "%.*s", (int)strnlen(v, sizeof(opt->swap)), v);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

static int set_zswap(struct uswap_options *opt, const struct option *o,
		     const char *value, const char *label, char *err,
		     size_t errlen)
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
static int set_tiers(struct uswap_options *opt, const struct option *o,
		     const char *value, const char *label, char *err,
		     size_t errlen)
{
	bool demotion = o->off == offsetof(struct uswap_options, demotion);
	uint64_t max[MEM_MAX_NODES], nodes;
	char why[512];
	int ret;

	if (strlen(value) >= o->size) {
		options_err(err, errlen, "%s: longer than %zu bytes", label,
			    o->size - 1);
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
	strcpy(option_field(opt, o), value);
	return 0;
}

EXPORT int uswap_swaptab_check(const char *path, char *err, size_t errlen)
{
	struct swap_spec specs[SWAP_MAX_DEVICES];
	unsigned n;

	return swaptab_parse_file(path, specs, SWAP_MAX_DEVICES, &n, err,
				  errlen);
}

/* ---- the table -------------------------------------------------------- */

const struct option option_table[] = {
{
	.d = { .name = "max", .env = "USWAP_MAX", .metavar = "SIZE",
	       .help = "hard limit on resident managed memory, at least 1M and 4 folios",
	       .default_text = "half of MemAvailable (/proc/meminfo) when the process starts, "
			       "rounded down to the folio size" },
	.kind = OPTION_SIZE, OPTION_FIELD(max), .min = SZ_1M,
},
{
	.d = { .name = "high", .env = "USWAP_HIGH", .metavar = "SIZE",
	       .help = "background reclaim starts above this; from one folio to --max",
	       .default_text = "97% of --max (--max less 1/32 of it), rounded down to the folio size" },
	.kind = OPTION_SIZE, OPTION_FIELD(high), .min = SZ_4K,
},
{
	.d = { .name = "folio", .env = "USWAP_FOLIO", .metavar = "SIZE",
	       .help = "unit of fault-in and reclaim: 4K, 16K, 64K or 2M; small "
		       "folios are filled up to 512K and read ahead up to 64K at a time "
		       "while access is in order",
	       .default_text = "4K" },
	.kind = OPTION_SIZE, OPTION_FIELD(folio_size), .set = set_folio,
},
{
	.d = { .name = "min-region", .env = "USWAP_MIN_REGION", .metavar = "SIZE",
	       .help = "smallest anonymous private mapping that is managed, at least 4K",
	       .default_text = "1M" },
	.kind = OPTION_SIZE, OPTION_FIELD(min_region), .min = SZ_4K,
},
{
	.d = { .name = "swap", .env = "USWAP_SWAP", .metavar = "SPEC",
	       .help = "a swap device; repeat for several.  "
		       "SPEC is PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]: "
		       "PATH a file (if missing, an unnamed one is made in its directory; "
		       "an existing one must be yours alone, mode 0600, and is emptied "
		       "when PROG ends) or a block device; "
		       "prio 0..32767 (higher is used first; equal priorities in turn; "
		       "without prio, -2, -3, ... in the order given, and -1 on the lists "
		       "of the device's own NUMA node); size (default --swap-size, "
		       "else growing with the free space); "
		       "node (default: from sysfs); discard: give freed clusters back; "
		       "direct: O_DIRECT or fail.  "
		       "SPEC redis://HOST:PORT[,HOST:PORT...] with the fields prio=, size=, "
		       "node=, user=U, password-file=F, replicas=K and encrypt=on|off is a "
		       "Redis Cluster, or one server, whose maxmemory-policy is noeviction "
		       "(docs/far-memory.md): any node a seed; size the slot space "
		       "(default --swap-size, else 16G); user and password-file (mode "
		       "0600) for AUTH; replicas: WAIT for K copies before a folio leaves "
		       "memory; encrypt: on by default, whatever --encrypt says; tls=on is "
		       "refused (no TLS in this build's hiredis).  uswap run deletes its "
		       "values when its tree has ended; uswap gc SPEC deletes those of runs "
		       "that were killed.  "
		       "--swap none: no device, the pool is the only tier (as zram; --zswap is required)",
	       .default_text = "one unnamed file in --swap-dir" },
	.kind = OPTION_TEXT, OPTION_FIELD(swap), .flag = USWAP_OPT_NO_SWAP_FILE,
	.set = set_swap, .get = get_swap,
},
{
	.d = { .name = "swaptab", .env = "USWAP_SWAPTAB", .metavar = "FILE",
	       .help = "more devices, one SPEC per line, # comments" },
	.kind = OPTION_PATH, OPTION_FIELD(swaptab), .what = "a file",
},
{
	.d = { .name = "swap-node-policy", .env = "USWAP_SWAP_NODE_POLICY",
	       .metavar = "page|cpu",
	       .help = "whose NUMA node picks the device list: the memory's (page) "
		       "or the reclaiming thread's (cpu)",
	       .default_text = "page" },
	.kind = OPTION_WORDS, OPTION_FIELD(swap_node_policy),
	.what = "a node policy",
},
{
	.d = { .name = "swap-size", .env = "USWAP_SWAP_SIZE", .metavar = "SIZE",
	       .help = "size cap of a swap file, at least 2M; without it, the file "
		       "grows while its file system keeps as much free space as it "
		       "holds, and shrinks as memory is freed",
	       .default_text = "none" },
	.kind = OPTION_SIZE, OPTION_FIELD(swap_size), .min = SZ_2M,
},
{
	.d = { .name = "swap-dir", .env = "USWAP_SWAP_DIR", .metavar = "DIR",
	       .help = "directory of the swap file (created and unlinked at once; "
		       "yours or root's, written by nobody else unless sticky); "
		       "a relative path is made absolute",
	       .default_text = "$TMPDIR, else /tmp" },
	.kind = OPTION_PATH, OPTION_FIELD(swap_dir), .what = "a directory",
},
{
	.d = { .name = "stats", .env = "USWAP_STATS", .metavar = "FILE",
	       .help = "when PROG ends, write the counters of all its processes, merged, "
		       "to FILE as JSON (a new file renamed over FILE: a symbolic link "
		       "there is replaced, not followed)",
	       .default_text = "none" },
	.kind = OPTION_PATH, OPTION_FIELD(stats_path), .what = "a file name",
},
{
	.d = { .name = "fault-threads", .env = "USWAP_FAULT_THREADS", .metavar = "N",
	       .help = "fault handler threads per process, 1 to 64",
	       .default_text = "2" },
	.kind = OPTION_COUNT, OPTION_FIELD(fault_threads),
	.min = 1, .max = OPTIONS_FAULT_THREADS_MAX, .what = "a thread count",
},
{
	.d = { .name = "verbose", .env = "USWAP_VERBOSE", .short_name = 'v',
	       .help = "when PROG ends, print one summary line on stderr" },
	.kind = OPTION_FLAG, .flag = USWAP_OPT_VERBOSE,
},
{
	.d = { .name = "zswap", .env = "USWAP_ZSWAP", .metavar = "COMP[:LEVEL]",
	       .help = "keep cold folios compressed in memory, in front of the swap file: "
		       "lz4 (level = acceleration, default 1), zstd (levels 1..22, or -1 "
		       "and below for faster; default 1) or deflate (levels 1..9; default 1); "
		       "off turns the pool off.  Folios that compress to more than 7/8 of "
		       "their size go to the swap file instead (--zswap-incompressible).  "
		       "The pool is charged to --max (--zswap-charge)",
	       .default_text = "off" },
	.kind = OPTION_TEXT, OPTION_FIELD(zswap), .set = set_zswap,
},
{
	.d = { .name = "zswap-max", .env = "USWAP_ZSWAP_MAX", .metavar = "PCT",
	       .help = "the pool may hold up to PCT% of --max, 1 to 100",
	       .default_text = "20" },
	.kind = OPTION_PERCENT, OPTION_FIELD(zswap_max_pct),
},
{
	.d = { .name = "zswap-accept", .env = "USWAP_ZSWAP_ACCEPT", .metavar = "PCT",
	       .help = "once full, the pool refuses new folios until it is below PCT% "
		       "of its limit, while the oldest entries are written back to the "
		       "swap file",
	       .default_text = "90" },
	.kind = OPTION_PERCENT, OPTION_FIELD(zswap_accept_pct),
},
{
	.d = { .name = "zswap-unit", .env = "USWAP_ZSWAP_UNIT", .metavar = "folio|page",
	       .help = "store a large folio as one compressed object (folio: better "
		       "ratio, one decompression per fault) or page by page as the "
		       "kernel does (page)",
	       .default_text = "folio" },
	.kind = OPTION_WORDS, OPTION_FIELD(zswap_unit), .what = "a unit",
},
{
	.d = { .name = "zswap-threads", .env = "USWAP_ZSWAP_THREADS", .metavar = "N",
	       .help = "compression threads besides the reclaimer, 1 to 16",
	       .default_text = "online CPUs - 1, at least 1" },
	.kind = OPTION_COUNT, OPTION_FIELD(zswap_threads),
	.min = 1, .max = OPTIONS_ZSWAP_THREADS_MAX, .what = "a thread count",
},
{
	.d = { .name = "zswap-incompressible", .env = "USWAP_ZSWAP_INCOMPRESSIBLE",
	       .metavar = "device|store",
	       .help = "a folio that compresses to more than 7/8 of its size: device "
		       "writes it to a swap device, or keeps it as it is when there is "
		       "none; store keeps it in the pool as it is, to be written back "
		       "with the oldest entries (as recent kernels' zswap does: "
		       "stored_incompressible_pages)",
	       .default_text = "device" },
	.kind = OPTION_SWITCH, .flag = USWAP_OPT_ZSWAP_STORE_INCOMPRESSIBLE,
	.sets = "store", .what = "a choice",
},
{
	.d = { .name = "zswap-charge", .env = "USWAP_ZSWAP_CHARGE", .metavar = "on|off",
	       .help = "on: resident memory plus the pool stay under --max, as cgroup "
		       "v2 charges zswap.  off: only resident memory is charged, as "
		       "under cgroup v1, and the pool may add up to --zswap-max% of "
		       "--max on top",
	       .default_text = "on" },
	.kind = OPTION_SWITCH, .flag = USWAP_OPT_ZSWAP_NO_CHARGE, .sets = "off",
	.what = "a setting",
},
{
	.d = { .name = "verify", .env = "USWAP_VERIFY", .metavar = "on|off",
	       .help = "on: each page written to a swap device carries a crc32c, "
		       "checked when it is read back; a page that fails gives PROG "
		       "SIGBUS there, never bad data.  off: no checksums (the pool "
		       "keeps its own)",
	       .default_text = "on" },
	.kind = OPTION_SWITCH, .flag = USWAP_OPT_NO_VERIFY, .sets = "off",
	.what = "a setting",
},
{
	.d = { .name = "encrypt", .env = "USWAP_ENCRYPT", .metavar = "on|off",
	       .help = "on: what goes to a swap device is encrypted and authenticated "
		       "(XChaCha20-Poly1305, a random key per run, held in locked "
		       "memory, never written anywhere); a page whose bytes on the "
		       "device were changed or moved gives PROG SIGBUS there, never "
		       "bad data, even with --verify off.  The compressed pool is "
		       "memory and stays plain.  off: plaintext",
	       .default_text = "off" },
	.kind = OPTION_SWITCH, .flag = USWAP_OPT_ENCRYPT, .sets = "on",
	.what = "a setting",
},
{
	.d = { .name = "demotion", .env = "USWAP_DEMOTION", .metavar = "auto|none|SPEC",
	       .help = "on a machine with slower memory nodes (CPU-less NUMA nodes: "
		       "PMEM, CXL), cold folios move there before they are swapped, "
		       "and stay mapped.  auto: the kernel's targets, from the memory "
		       "tiers in sysfs; none: never; SPEC: NODE>NODES[;NODE>NODES]..., "
		       "as 0>2;1>2 (no cycles).  Folios written to again move back.  "
		       "See docs/tiers.md",
	       .default_text = "auto" },
	.kind = OPTION_TEXT, OPTION_FIELD(demotion), .set = set_tiers,
},
{
	.d = { .name = "tier-max", .env = "USWAP_TIER_MAX",
	       .metavar = "NODE=SIZE[,NODE=SIZE]...",
	       .help = "how much memory may be demoted to each slower node (at least "
		       "1M); --max covers only the fast nodes.  Past 90% of it, that "
		       "node's coldest folios go further down: to swap, or the next "
		       "slower node",
	       .default_text = "as much as --max on each target node" },
	.kind = OPTION_TEXT, OPTION_FIELD(tier_max), .set = set_tiers,
},
{
	.d = { .name = "uffd-features-off", .env = "USWAP_UFFD_FEATURES_OFF",
	       .metavar = "MASK", .flags = USWAP_OPTION_HIDDEN,
	       .help = "for tests: userfaultfd feature bits (UFFD_FEATURE_*) to treat "
		       "as absent, in decimal or in hexadecimal after 0x, so that the "
		       "fallbacks for older kernels run here",
	       .default_text = "none" },
	.kind = OPTION_MASK, OPTION_FIELD(uffd_features_off),
},
};

const unsigned nr_options = ARRAY_SIZE(option_table);
