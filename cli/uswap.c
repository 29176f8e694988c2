// SPDX-License-Identifier: MIT
/*
 * uswap.c - the uswap command: run a program with application-level swap.
 *
 *   uswap run [OPTIONS] [--] PROG [ARGS...]
 *   uswap stat [--json] [PID]                   (stat.c: watch a running
 *   uswap top [-d SECONDS] [-n COUNT] [PID]      tree)
 *
 * uswap itself manages no memory.  It checks the options, checks that
 * userfaultfd is usable (if not, --fallback says whether PROG runs without
 * uswap or not at all), and starts PROG with libuswap_preload.so in
 * LD_PRELOAD and the options in USWAP_* variables (env.c): the
 * preload library then creates a runtime in every process of the tree.
 * While PROG runs, uswap forwards the signals sent to it; when PROG ends,
 * it merges the statistics the processes wrote (one JSON file each, in a
 * private directory named by USWAP_STATS_DIR: stats.c) and exits as
 * PROG did.
 *
 * Only the public header and libc are used here, as a program of the
 * library's users would.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uswap.h"
#include "swapdev.h"
#include "json.h"
#include "stats.h"

#define EXIT_USAGE	2
#define EXIT_NOEXEC	126
#define EXIT_NOTFOUND	127

static const char usage_text[] =
"Usage: uswap run [OPTIONS] [--] PROG [ARGS...]\n"
"       uswap stat [--json] [PID]\n"
"       uswap top [-d SECONDS] [-n COUNT] [PID]\n"
"       uswap --help | --version\n";

static const char help_text[] =
"Usage: uswap run [OPTIONS] [--] PROG [ARGS...]\n"
"       uswap stat [--json] [PID]\n"
"       uswap top [-d SECONDS] [-n COUNT] [PID]\n"
"       uswap --help | --version\n"
"\n"
"Run PROG with application-level swap.\n"
"\n"
"uswap gives PROG, and every process it starts, a memory budget without root,\n"
"swapon or a kernel change.  Each anonymous private mapping of at least\n"
"--min-region bytes is managed through userfaultfd: past --high a background\n"
"reclaimer writes its coldest folios to a swap file in --swap-dir, resident\n"
"managed memory never goes past --max, and a folio that is touched again is\n"
"read back on the fault.  The program sees ordinary memory, only slower.\n"
"\n"
"Options (each also read from the USWAP_* variable of the same name, in\n"
"upper case with '_' for '-'; a flag wins over its variable):\n"
"  --max SIZE            hard limit on resident managed memory, at least 1M\n"
"                        and 4 folios; default: half of MemAvailable when the\n"
"                        process starts, rounded down to the folio size\n"
"  --high SIZE           background reclaim starts above this; from one folio\n"
"                        to max; default: 90% of max, rounded down to the folio\n"
"  --folio SIZE          unit of fault-in and reclaim: 4K, 16K, 64K or 2M;\n"
"                        default 64K\n"
"  --min-region SIZE     smallest anonymous private mapping that is managed, at\n"
"                        least 4K; default 1M\n"
"  --swap SPEC           a swap device; repeat for several.  SPEC is\n"
"                        PATH[,prio=N][,size=SIZE][,node=N][,discard][,direct]:\n"
"                        PATH a file (if missing, an unnamed one is made in its\n"
"                        directory; an existing one must be yours alone, mode\n"
"                        0600, and is emptied when PROG ends) or a block device;\n"
"                        prio 0..32767 (higher is used first; equal priorities\n"
"                        in turn; without prio, -2, -3, ... in the order given,\n"
"                        and -1 on the lists of the device's own NUMA node);\n"
"                        size (default --swap-size);\n"
"                        node (default: from sysfs); discard: give freed\n"
"                        clusters back; direct: O_DIRECT or fail.  Default:\n"
"                        one unnamed file in --swap-dir.  --swap none: no\n"
"                        device, the pool is the only tier (as zram; --zswap\n"
"                        is required)\n"
"  --swaptab FILE        more devices, one SPEC per line, # comments\n"
"  --swap-node-policy page|cpu\n"
"                        whose NUMA node picks the device list: the memory's\n"
"                        (page, the default) or the reclaiming thread's (cpu)\n"
"  --swap-size SIZE      size cap of a swap file, at least 2M; default: none,\n"
"                        the file grows while its file system keeps as much\n"
"                        free space as it holds, and shrinks as memory is freed\n"
"  --swap-dir DIR        directory of the swap file (created and unlinked at\n"
"                        once; yours or root's, written by nobody else unless\n"
"                        sticky); default: $TMPDIR, else /tmp\n"
"  --stats FILE          when PROG ends, write the counters of all its\n"
"                        processes, merged, to FILE as JSON; default: none\n"
"  --fault-threads N     fault handler threads per process, 1 to 64; default 2\n"
"  --zswap COMP[:LEVEL]  keep cold folios compressed in memory, in front of the\n"
"                        swap file: lz4 (level = acceleration, default 1),\n"
"                        zstd (levels 1..22, or -1 and below for faster;\n"
"                        default 1) or deflate (levels 1..9; default 1); off\n"
"                        (the default) turns the pool off.  Folios that\n"
"                        compress to more than 7/8 of their size go to the\n"
"                        swap file instead (--zswap-incompressible).  The\n"
"                        pool is charged to --max (--zswap-charge)\n"
"  --zswap-max PCT       the pool may hold up to PCT% of --max, 1 to 100;\n"
"                        default 20\n"
"  --zswap-accept PCT    once full, the pool refuses new folios until it is\n"
"                        below PCT% of its limit, while the oldest entries are\n"
"                        written back to the swap file; default 90\n"
"  --zswap-unit folio|page\n"
"                        store a large folio as one compressed object (folio,\n"
"                        the default: better ratio, one decompression per\n"
"                        fault) or page by page as the kernel does (page)\n"
"  --zswap-threads N     compression threads besides the reclaimer, 1 to 16;\n"
"                        default: online CPUs - 1, at least 1\n"
"  --zswap-incompressible device|store\n"
"                        a folio that compresses to more than 7/8 of its\n"
"                        size: device (the default) writes it to a swap\n"
"                        device, or keeps it as it is when there is none;\n"
"                        store keeps it in the pool as it is, to be written\n"
"                        back with the oldest entries (as recent kernels'\n"
"                        zswap does: stored_incompressible_pages)\n"
"  --zswap-charge on|off on (the default): resident memory plus the pool stay\n"
"                        under --max, as cgroup v2 charges zswap.  off: only\n"
"                        resident memory is charged, as under cgroup v1,\n"
"                        and the pool may add up to --zswap-max% of --max\n"
"                        on top\n"
"  --verify on|off       on (the default): each page written to a swap device\n"
"                        carries a crc32c, checked when it is read back; a\n"
"                        page that fails gives PROG SIGBUS there, never bad\n"
"                        data.  off: no checksums (the pool keeps its own)\n"
"  --encrypt on|off      on: what goes to a swap device is encrypted and\n"
"                        authenticated (XChaCha20-Poly1305, a random key per\n"
"                        run, held in locked memory, never written anywhere);\n"
"                        a page whose bytes on the device were changed or\n"
"                        moved gives PROG SIGBUS there, never bad data, even\n"
"                        with --verify off.  The compressed pool is memory\n"
"                        and stays plain.  off (the default): plaintext\n"
"  --demotion auto|none|SPEC\n"
"                        on a machine with slower memory nodes (CPU-less NUMA\n"
"                        nodes: PMEM, CXL), cold folios move there before they\n"
"                        are swapped, and stay mapped.  auto (the default):\n"
"                        the kernel's targets, from the memory tiers in sysfs;\n"
"                        none: never; SPEC: NODE>NODES[;NODE>NODES]..., as\n"
"                        0>2;1>2 (no cycles).  Folios written to again move\n"
"                        back.  See docs/tiers.md\n"
"  --tier-max NODE=SIZE[,NODE=SIZE]...\n"
"                        how much memory may be demoted to each slower node\n"
"                        (at least 1M); --max covers only the fast nodes.\n"
"                        Default: as much as --max on each target node.  Past\n"
"                        90% of it, that node's coldest folios go further\n"
"                        down: to swap, or the next slower node\n"
"  --fallback run|fail   when userfaultfd is unavailable (not permitted for\n"
"                        this user, or absent): fail (the default) exits 125\n"
"                        without running PROG; run warns and runs PROG\n"
"                        without uswap.  Also for each process of the tree\n"
"                        (USWAP_FALLBACK): one that cannot start its runtime\n"
"                        exits 125 with a message (before main, at start-up)\n"
"                        or, with run, warns and runs unmanaged\n"
"  -v, --verbose         when PROG ends, print one summary line on stderr\n"
"  -h, --help            print this help and exit\n"
"  --version             print the version and exit\n"
"Options take their value as the next argument or after '=' (--max=64M).\n"
"SIZE is a byte count, or a number with a suffix K, M, G or T (powers of 1024;\n"
"also k, m, g, t and KiB, MiB, GiB, TiB); with a suffix it may have a fraction,\n"
"as in 1.5G.  The \"--\" before PROG is needed only when PROG starts with '-'.\n"
"\n"
"Environment:\n"
"  USWAP_MAX, USWAP_HIGH, USWAP_FOLIO, USWAP_MIN_REGION, USWAP_SWAP_SIZE,\n"
"  USWAP_SWAP_DIR, USWAP_STATS, USWAP_FAULT_THREADS, USWAP_VERBOSE, USWAP_SWAP,\n"
"  USWAP_ZSWAP, USWAP_ZSWAP_MAX, USWAP_ZSWAP_ACCEPT, USWAP_ZSWAP_UNIT,\n"
"  USWAP_ZSWAP_THREADS, USWAP_ZSWAP_INCOMPRESSIBLE, USWAP_ZSWAP_CHARGE,\n"
"  USWAP_SWAPTAB, USWAP_SWAP_NODE_POLICY, USWAP_VERIFY, USWAP_ENCRYPT,\n"
"  USWAP_DEMOTION, USWAP_TIER_MAX, USWAP_FALLBACK\n"
"                        the option of the same name (USWAP_SWAP: SPECs one\n"
"                        per line)\n"
"  USWAP_SYSFS_ROOT      read the NUMA topology under this directory instead\n"
"                        of /sys (tests)\n"
"  TMPDIR                default swap directory; the statistics directory is\n"
"                        made there too\n"
"  LD_PRELOAD            uswap puts libuswap_preload.so first and keeps the\n"
"                        entries that were there after it\n"
"  ASAN_OPTIONS          uswap adds verify_asan_link_order=0 unless it is set:\n"
"                        an ASan program then accepts the library ahead of ASan\n"
"  PROG runs with LD_PRELOAD, the options that were given as USWAP_* (sizes in\n"
"  bytes), and USWAP_STATS_DIR, where each process publishes its counters.\n"
"\n"
"Exit status:\n"
"  N                     PROG exited with status N\n"
"  2                     usage error: unknown option, bad value, no PROG\n"
"  125                   uswap could not start PROG: userfaultfd unavailable\n"
"                        (with --fallback fail), preload library missing, swap\n"
"                        directory or statistics file unusable\n"
"  126                   PROG was found but could not be executed\n"
"  127                   PROG was not found\n"
"  (signal)              PROG was killed by a signal: uswap kills itself with\n"
"                        the same signal, so that the shell sees it (128 + the\n"
"                        signal number if it cannot)\n"
"  A process of the tree that cannot start its runtime exits 125 (unless\n"
"  USWAP_FALLBACK=run); PROG's status is then 125 too, if PROG was it.\n"
"\n"
"Watching a running tree:\n"
"  uswap stat [--json] [PID]\n"
"      the tree's counters, its swap devices and, per process, the resident,\n"
"      compressed (pool) and swapped sizes.  PID is uswap run's or that of\n"
"      any process of the tree; without PID, the one tree this user runs.\n"
"      --json prints one JSON object.\n"
"  uswap top [-d SECONDS] [-n COUNT] [PID]\n"
"      the same, refreshed every SECONDS (default 1), with the budget's use\n"
"      and the fault and swap rates since the previous frame; COUNT frames,\n"
"      or until q or Ctrl-C.  Without a terminal, one frame per interval.\n"
"  Exit status: 0 printed (top: until COUNT, q, Ctrl-C or the tree's end);\n"
"  1 no such tree (PID is not running, or not in a uswap tree, or its run\n"
"  has ended; without PID, none or several: they are listed); 2 usage\n"
"  error; 3 PID is another user's (its environment cannot be read).\n"
"\n"
"Examples:\n"
"  uswap run --max 2G -- ./prog\n"
"  uswap run --max 64M --folio 4K --stats s.json -- python3 big.py\n"
"  uswap run --max 1G --zswap zstd:3 -- ./prog\n"
"  uswap run --max 1G --zswap lz4 --zswap-max 50 --swap none -- ./prog\n"
"  USWAP_MAX=512M uswap run --verbose make -j2\n"
"  uswap run --fallback run --max 1G -- ./prog\n"
"  uswap top\n"
"  uswap stat --json 12345\n"
"\n"
"Files:\n"
"  libuswap_preload.so   next to the uswap executable, else in\n"
"                        ../lib/uswap/ from its directory\n";

/*
 * The options uswap run accepts, as uswap_options_set() names them.
 * Hidden ones are for tests and are not in --help.
 */
static const struct cli_option {
	const char *name;
	const char *env;
	bool has_value;
} cli_options[] = {
	{ "max",		"USWAP_MAX",			true },
	{ "high",		"USWAP_HIGH",			true },
	{ "folio",		"USWAP_FOLIO",			true },
	{ "min-region",		"USWAP_MIN_REGION",		true },
	{ "swap-size",		"USWAP_SWAP_SIZE",		true },
	{ "swap-dir",		"USWAP_SWAP_DIR",		true },
	{ "stats",		"USWAP_STATS",			true },
	{ "fault-threads",	"USWAP_FAULT_THREADS",		true },
	{ "verbose",		"USWAP_VERBOSE",		false },
	{ "uffd-features-off",	"USWAP_UFFD_FEATURES_OFF",	true },
	{ "swap",		"USWAP_SWAP",			true },
	{ "swaptab",		"USWAP_SWAPTAB",		true },
	{ "swap-node-policy",	"USWAP_SWAP_NODE_POLICY",	true },
	{ "zswap",		"USWAP_ZSWAP",			true },
	{ "zswap-max",		"USWAP_ZSWAP_MAX",		true },
	{ "zswap-accept",	"USWAP_ZSWAP_ACCEPT",		true },
	{ "zswap-unit",		"USWAP_ZSWAP_UNIT",		true },
	{ "zswap-threads",	"USWAP_ZSWAP_THREADS",		true },
	{ "zswap-incompressible", "USWAP_ZSWAP_INCOMPRESSIBLE",	true },
	{ "zswap-charge",	"USWAP_ZSWAP_CHARGE",		true },
	{ "verify",		"USWAP_VERIFY",			true },
	{ "encrypt",		"USWAP_ENCRYPT",		true },
	{ "demotion",		"USWAP_DEMOTION",		true },
	{ "tier-max",		"USWAP_TIER_MAX",		true },
};

#define NR_CLI_OPTIONS	(sizeof(cli_options) / sizeof(cli_options[0]))

/* Signals passed on to PROG while it runs. */
static const int forwarded_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT,
};

void say(const char *fmt, ...)
{
	va_list ap;

	fputs("uswap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("uswap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'uswap run --help'.\n", stderr);
	exit(EXIT_USAGE);
}

static void __attribute__((noreturn)) print_help(void)
{
	fputs(help_text, stdout);
	exit(fflush(stdout) ? 1 : 0);
}

static void __attribute__((noreturn)) print_version(void)
{
	printf("uswap %s\n", USWAP_VERSION);
	exit(fflush(stdout) ? 1 : 0);
}

/* ---- options ---------------------------------------------------------- */

/* --fallback: what to do when userfaultfd is unavailable. */
enum fallback {
	FALLBACK_FAIL,		/* exit 125 without running PROG (default) */
	FALLBACK_RUN,		/* run PROG without uswap */
};

struct run_args {
	struct uswap_options opt;
	bool given[NR_CLI_OPTIONS];	/* set by a flag */
	char **prog;			/* PROG and its arguments */
	enum fallback fallback;
	const char *fallback_flag;	/* --fallback's value, if given */
};

static int cli_option_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NR_CLI_OPTIONS; i++) {
		if (strlen(cli_options[i].name) == len &&
		    !strncmp(cli_options[i].name, name, len))
			return (int)i;
	}
	return -1;
}

/*
 * --swap is the one option that adds up: each SPEC is a device (the list
 * goes on one per line); "none" or "file" starts over.
 */
static const char *swap_accumulate(const char *val)
{
	static char list[sizeof(((struct uswap_options *)0)->swap)];
	size_t used = strlen(list);

	if (!strcmp(val, "none") || !strcmp(val, "file") || !used) {
		snprintf(list, sizeof(list), "%s", val);
		return list;
	}
	if (!strcmp(list, "none") || !strcmp(list, "file"))
		used = 0;
	snprintf(list + used, sizeof(list) - used, "%s%s", used ? "\n" : "", val);
	return list;
}

static enum fallback fallback_parse(const char *name, const char *val)
{
	if (!strcmp(val, "fail"))
		return FALLBACK_FAIL;
	if (!strcmp(val, "run"))
		return FALLBACK_RUN;
	usage_error("%s: \"%s\" is not a fallback (expected run or fail)",
		    name, val);
}

/*
 * --fallback run|fail is uswap run's, not the runtime's: it is parsed
 * here.  True when argv[*i] was it (and its value, if separate).
 */
static bool fallback_arg(int argc, char **argv, int *i, struct run_args *ra)
{
	const char *arg = argv[*i];

	if (strncmp(arg, "--fallback", 10) || (arg[10] && arg[10] != '='))
		return false;
	if (arg[10] == '=')
		ra->fallback_flag = arg + 11;
	else if (*i + 1 < argc)
		ra->fallback_flag = argv[++*i];
	else
		usage_error("option '--fallback' needs a value");
	ra->fallback = fallback_parse("--fallback", ra->fallback_flag);
	return true;
}

/*
 * Parse the arguments of "uswap run": flags, then PROG.  Flags win over
 * the environment: a variable whose option is given as a flag is not read
 * (so a bad value there is no error) and is replaced for PROG.
 */
static void parse_run_args(int argc, char **argv, struct run_args *ra)
{
	const char *value[NR_CLI_OPTIONS] = { 0 };
	struct uswap_options scratch;
	char err[512];
	int i, o;

	uswap_options_init(&scratch);
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq, *val = NULL;

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			print_help();
		if (!strcmp(arg, "--version"))
			print_version();
		if (fallback_arg(argc, argv, &i, ra))
			continue;
		if (!strcmp(arg, "-v")) {
			o = cli_option_find("verbose", 7);
		} else if (arg[1] == '-') {
			eq = strchr(arg + 2, '=');
			o = cli_option_find(arg + 2, eq ? (size_t)(eq - arg - 2)
						       : strlen(arg + 2));
			if (o < 0)
				usage_error("unknown option '%.*s'",
					    eq ? (int)(eq - arg) : (int)strlen(arg),
					    arg);
			if (eq)
				val = eq + 1;
			else if (cli_options[o].has_value) {
				if (i + 1 >= argc)
					usage_error("option '--%s' needs a value",
						    cli_options[o].name);
				val = argv[++i];
			}
		} else {
			usage_error("unknown option '%s'", arg);
		}
		if (uswap_options_set(&scratch, cli_options[o].name, val, err,
				      sizeof(err)))
			usage_error("%s", err);
		ra->given[o] = true;
		value[o] = val;
		if (!strcmp(cli_options[o].name, "swap"))
			value[o] = swap_accumulate(val);
	}
	if (i >= argc)
		usage_error("no program to run");
	ra->prog = argv + i;
	if (!ra->fallback_flag && getenv("USWAP_FALLBACK"))
		ra->fallback = fallback_parse("USWAP_FALLBACK",
					      getenv("USWAP_FALLBACK"));

	for (o = 0; o < (int)NR_CLI_OPTIONS; o++) {
		if (ra->given[o])
			unsetenv(cli_options[o].env);
	}
	uswap_options_init(&ra->opt);
	if (uswap_options_from_env(&ra->opt, err, sizeof(err)))
		usage_error("%s", err);
	for (o = 0; o < (int)NR_CLI_OPTIONS; o++) {
		if (ra->given[o] &&
		    uswap_options_set(&ra->opt, cli_options[o].name, value[o],
				      err, sizeof(err)))
			usage_error("%s", err);
	}
}

/* $TMPDIR, else /tmp. */
const char *cli_tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/*
 * Check the options as the runtime will see them.  The defaults are left
 * to the runtime (they depend on each process's start), except the swap
 * directory: it must be usable, whether given or $TMPDIR.  A bad value is
 * a usage error; an unusable directory means PROG cannot be started.
 */
static void check_options(struct run_args *ra)
{
	struct uswap_options o = ra->opt;
	char err[512], real[PATH_MAX];
	int ret;

	if (!o.swap_dir[0] && strlen(cli_tmp_dir()) < sizeof(o.swap_dir))
		strcpy(o.swap_dir, cli_tmp_dir());
	ret = uswap_options_check(&o, err, sizeof(err));
	if (ret == -EINVAL || ret == -ENAMETOOLONG)
		usage_error("%s", err);
	if (ret) {
		say("%s", err);
		exit(EXIT_CANNOT_RUN);
	}
	/* Every process of the tree must find the same directory. */
	if (ra->opt.swap_dir[0] && realpath(ra->opt.swap_dir, real) &&
	    strlen(real) < sizeof(ra->opt.swap_dir))
		strcpy(ra->opt.swap_dir, real);
	if (o.swaptab[0]) {
		struct swap_spec specs[SWAP_MAX_DEVICES];
		unsigned n;

		/* A bad table is a usage error here, not in every process. */
		ret = swaptab_parse_file(o.swaptab, specs, SWAP_MAX_DEVICES, &n,
					 err, sizeof(err));
		if (ret)
			usage_error("--swaptab: %s", err);
		if (realpath(o.swaptab, real) &&
		    strlen(real) < sizeof(ra->opt.swaptab))
			strcpy(ra->opt.swaptab, real);
	}
}

/* ---- what PROG needs -------------------------------------------------- */

/*
 * Open and initialise a userfaultfd, as the runtime will; on failure say
 * why and return false.
 */
static bool probe_userfaultfd(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	char sysctl[32] = "";
	int fd, err, sfd;
	ssize_t n;

	fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd >= 0) {
		if (!ioctl(fd, UFFDIO_API, &api)) {
			close(fd);
			return true;
		}
		err = errno;
		close(fd);
		say("userfaultfd does not work here (UFFDIO_API: %s)",
		    strerror(err));
		return false;
	}
	err = errno;
	if (err == ENOSYS) {
		say("this kernel has no userfaultfd (built without CONFIG_USERFAULTFD, or a seccomp filter hides the system call)");
		return false;
	}
	if (err == EPERM) {
		sfd = open("/proc/sys/vm/unprivileged_userfaultfd",
			   O_RDONLY | O_CLOEXEC);
		if (sfd >= 0) {
			n = read(sfd, sysctl, sizeof(sysctl) - 1);
			sysctl[n > 0 ? n : 0] = 0;
			sysctl[strcspn(sysctl, "\n")] = 0;
			close(sfd);
		}
		if (!strcmp(sysctl, "1"))
			say("userfaultfd is not permitted for this user although vm.unprivileged_userfaultfd=1: a seccomp filter or security module forbids it");
		else
			say("userfaultfd is not permitted for this user: set vm.unprivileged_userfaultfd=1 or give the process CAP_SYS_PTRACE (vm.unprivileged_userfaultfd is %s)",
			    sysctl[0] ? sysctl : "unreadable");
		return false;
	}
	say("cannot open a userfaultfd: %s", strerror(err));
	return false;
}

/* The --stats file must be creatable: its directory must be writable. */
static void check_stats_file(const char *file)
{
	char *dir = strdup(file), *slash;

	if (!dir) {
		say("out of memory");
		exit(EXIT_CANNOT_RUN);
	}
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = 0;
	if (access(dir, W_OK | X_OK)) {
		say("--stats %s: cannot write in %s: %s", file, dir,
		    strerror(errno));
		exit(EXIT_CANNOT_RUN);
	}
	free(dir);
}

/* ---- running PROG ----------------------------------------------------- */

/*
 * Start PROG.  The forwarded signals and SIGCHLD are blocked in uswap (it
 * takes them with sigwaitinfo) and restored in the child before exec.  An
 * exec failure comes back as the child's errno through a close-on-exec
 * pipe: end of file means exec succeeded.
 */
static pid_t spawn(char **prog, const sigset_t *oldmask, bool chld_ignored,
		   int *exec_err)
{
	int pfd[2], e;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC)) {
		say("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		say("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		close(pfd[0]);
		if (chld_ignored)
			signal(SIGCHLD, SIG_IGN);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		execvp(prog[0], prog);
		e = errno;
		(void)!write(pfd[1], &e, sizeof(e));
		_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*exec_err = n == sizeof(e) ? e : 0;
	return pid;
}

/*
 * Wait for PROG, passing on the forwarded signals.  PROG runs in uswap's
 * process group, so a signal from the terminal (Ctrl-C, a window resize)
 * reaches both already: those are kernel-sent (si_code > 0) and not
 * passed on.  A signal sent with kill(2) or sigqueue(3) (si_code <= 0)
 * was meant for uswap alone, unless PROG sent it: that one is passed on.
 * (A kill(2) to the whole process group does reach PROG twice; for these
 * signals that is harmless.)
 */
static int wait_child(pid_t pid, const sigset_t *set)
{
	siginfo_t si;
	pid_t r;
	int status, sig;

	for (;;) {
		sig = sigwaitinfo(set, &si);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			say("sigwaitinfo: %s", strerror(errno));
			break;
		}
		if (sig == SIGCHLD) {
			r = waitpid(pid, &status, WNOHANG);
			if (r == pid)
				return status;
			if (r < 0 && errno != EINTR)
				break;
			continue;
		}
		if (si.si_code <= 0 && si.si_pid != pid)
			kill(pid, sig);
	}
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return r == pid ? status : (EXIT_CANNOT_RUN << 8);
}

/* Die of sig as PROG did, so that the shell sees the signal. */
static void __attribute__((noreturn)) die_of_signal(int sig)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t s;

	fflush(stdout);
	fflush(stderr);
	setrlimit(RLIMIT_CORE, &no_core);	/* PROG dumped its own core */
	signal(sig, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	/* Still alive: the signal's default is to ignore or stop. */
	exit(128 + sig);
}

static int cmd_run(int argc, char **argv)
{
	struct run_args ra = { 0 };
	struct swap_wipe wipe = { 0 };
	char *stats_dir = NULL;
	const char *preload = NULL;
	sigset_t set, oldmask;
	bool chld_ignored, managed;
	int status, exec_err;
	size_t i;
	pid_t pid;

	parse_run_args(argc, argv, &ra);
	check_options(&ra);
	managed = probe_userfaultfd();
	if (!managed && ra.fallback == FALLBACK_FAIL) {
		say("%s was not started (--fallback run would run it without uswap)",
		    ra.prog[0]);
		exit(EXIT_CANNOT_RUN);
	}
	if (!managed)
		say("--fallback run: %s runs without uswap, with no memory budget",
		    ra.prog[0]);
	if (managed)
		preload = env_find_preload();
	if (ra.opt.stats_path[0])
		check_stats_file(ra.opt.stats_path);
	if (managed) {
		stats_dir = stats_dir_create(ra.opt.stats_path[0] ||
					     (ra.opt.flags & USWAP_OPT_VERBOSE));
		env_export(&ra.opt, preload, stats_dir);
		if (ra.fallback_flag)
			env_set("USWAP_FALLBACK", ra.fallback_flag);
		/* The named swap devices, emptied when PROG has ended. */
		swap_wipe_open(&ra.opt, &wipe);
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < sizeof(forwarded_signals) / sizeof(int); i++)
		sigaddset(&set, forwarded_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	/* An ignored SIGCHLD would reap PROG before uswap could wait. */
	chld_ignored = signal(SIGCHLD, SIG_DFL) == SIG_IGN;

	pid = spawn(ra.prog, &oldmask, chld_ignored, &exec_err);
	if (pid < 0) {
		swap_wipe_run(&wipe);
		if (stats_dir)
			stats_dir_remove(stats_dir);
		free(stats_dir);
		return EXIT_CANNOT_RUN;
	}
	status = wait_child(pid, &set);
	swap_wipe_run(&wipe);
	if (exec_err) {
		say("%s: %s", ra.prog[0], strerror(exec_err));
		if (stats_dir)
			stats_dir_remove(stats_dir);
		free(stats_dir);
		return exec_err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
	}
	if (stats_dir || ra.opt.stats_path[0])
		stats_dir_finish(stats_dir, &ra.opt);
	free(stats_dir);
	if (WIFSIGNALED(status))
		die_of_signal(WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_CANNOT_RUN;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		fputs("Try 'uswap --help'.\n", stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		print_help();
	if (!strcmp(argv[1], "--version"))
		print_version();
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 2, argv + 2);
	if (!strcmp(argv[1], "top"))
		return cmd_top(argc - 2, argv + 2);
	fprintf(stderr, "uswap: unknown command '%s'\n%sTry 'uswap --help'.\n",
		argv[1], usage_text);
	return EXIT_USAGE;
}
