// SPDX-License-Identifier: MIT
/*
 * help.c - what uswap says about itself: --help, and the option list of
 * its man page, both made from the option table.
 *
 * The options of a runtime are the library's (uswap_option_desc(): name,
 * variable, metavar, default, help text); uswap run adds its own few
 * (run_options below), described the same way.  --help prints each as a
 * heading and its help text, wrapped to 80 columns, with the default at
 * the end, and lists their variables; "uswap --help-man" prints the same
 * in roff, as blocks between marker comments that "make docs" puts into
 * docs/uswap.1 and scripts/lint compares with it.  The rest of the help
 * is written here as it reads.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "uswap.h"
#include "stats.h"

#define HELP_WIDTH	79	/* --help fits a terminal of 80 columns */
#define HELP_TEXT_COL	24	/* where an option's help text starts */

const char help_usage[] =
"Usage: uswap run [OPTIONS] [--] PROG [ARGS...]\n"
"       uswap stat [--json] [PID]\n"
"       uswap top [-d SECONDS] [-n COUNT] [PID]\n"
"       uswap debug [--timeout SECONDS] PID [COMMAND [ARG...]]\n"
"       uswap gc SPEC...\n"
"       uswap --help | --version\n";

/* After the synopsis, before the options. */
static const char help_head[] =
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
"upper case with '_' for '-'; a flag wins over its variable):\n";

/* After the options. */
static const char help_notes[] =
"Options take their value as the next argument or after '=' (--max=64M).\n"
"SIZE is a byte count, or a number with a suffix K, M, G or T (powers of 1024;\n"
"also k, m, g, t and KiB, MiB, GiB, TiB); with a suffix it may have a fraction,\n"
"as in 1.5G.  The \"--\" before PROG is needed only when PROG starts with '-'.\n"
"\n";

/* After the variables of the options. */
static const char help_tail[] =
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
"                        or PROG a program uswap cannot go into (with\n"
"                        --fallback fail), preload library missing, swap\n"
"                        directory or statistics file unusable\n"
"  126                   PROG was found but could not be executed\n"
"  127                   PROG was not found\n"
"  (signal)              PROG was killed by a signal: uswap kills itself with\n"
"                        the same signal, so that the shell sees it (128 + the\n"
"                        signal number if it cannot)\n"
"  A process of the tree that cannot start its runtime exits 125 (unless\n"
"  USWAP_FALLBACK=run); PROG's status is then 125 too, if PROG was it.\n"
"  A process of the tree that can no longer serve its memory (its fault\n"
"  threads keep failing) is stopped with status 123; one that closed or\n"
"  replaced one of uswap's descriptors behind its back (a raw system call)\n"
"  with status 124.\n"
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
"  uswap debug [--timeout SECONDS] PID [COMMAND [ARG...]]\n"
"      make PID's memory resident (debuggers read swapped memory as EIO)\n"
"      and keep it so, past --max, while COMMAND runs (default gdb -p PID);\n"
"      exits as COMMAND (1 PID not held; 3 another user's).  A core dump\n"
"      gets the swapped memory without it.\n"
"  Exit status: 0 printed (top: until COUNT, q, Ctrl-C or the tree's end);\n"
"  1 no such tree (PID is not running, or not in a uswap tree, or its run\n"
"  has ended; without PID, none or several: they are listed); 2 usage\n"
"  error; 3 PID is another user's (its uswap run's descriptors or its\n"
"  memory map cannot be read).\n"
"\n"
"Examples:\n"
"  uswap run --max 2G -- ./prog\n"
"  uswap run --max 64M --folio 64K --stats s.json -- python3 big.py\n"
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
 * uswap run's own options, after the runtime's: uswap.c parses them (the
 * runtime never sees them, but for USWAP_FALLBACK, which the preload
 * library reads itself).
 */
static const struct uswap_option_desc run_options[] = {
	{ .name = "fallback", .env = "USWAP_FALLBACK", .metavar = "run|fail",
	  .help = "when userfaultfd is unavailable (not permitted for this "
		  "user: see uswap(1) for the ways to allow it; or absent), or "
		  "PROG is a program uswap cannot go into (statically linked: no "
		  "PT_INTERP, as Go programs by default; 32-bit; set-ID to "
		  "another user; for a script, its interpreter): fail exits 125 "
		  "without running PROG; run warns and runs PROG without uswap.  "
		  "Also for each process of the tree (USWAP_FALLBACK): one that "
		  "cannot start its runtime exits 125 with a message (before "
		  "main, at start-up) or, with run, warns and runs unmanaged",
	  .default_text = "fail" },
	{ .name = "help", .short_name = 'h',
	  .help = "print the help and exit" },
	{ .name = "version", .help = "print the version and exit" },
};

/* Option i of all: the runtime's, then uswap run's own; NULL past them. */
static const struct uswap_option_desc *option_at(unsigned i)
{
	const struct uswap_option_desc *d;
	unsigned n;

	for (n = 0; uswap_option_desc(n); n++)
		;
	if (i < n)
		return uswap_option_desc(i);
	i -= n;
	d = i < sizeof(run_options) / sizeof(run_options[0]) ? &run_options[i] :
							       NULL;
	return d;
}

/* ---- --help ----------------------------------------------------------- */

/*
 * Print text from column col on, breaking lines at spaces before
 * HELP_WIDTH and going on at column indent.  Returns the column reached.
 */
static unsigned wrap(FILE *f, const char *text, unsigned col, unsigned indent)
{
	const char *p = text;
	size_t sp, n;

	for (;;) {
		sp = strspn(p, " ");
		n = strcspn(p + sp, " ");
		if (!n)
			return col;
		if (col > indent && col + sp + n > HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else {
			fprintf(f, "%.*s", (int)sp, p);
			col += (unsigned)sp;
		}
		fprintf(f, "%.*s", (int)n, p + sp);
		col += (unsigned)n;
		p += sp + n;
	}
}

/* "  -v, --verbose         when PROG ends, ...; default X" */
static void help_option(FILE *f, const struct uswap_option_desc *d)
{
	char head[128], text[4096], short_flag[8] = "";
	int n;

	if (d->short_name)
		snprintf(short_flag, sizeof(short_flag), "-%c, ", d->short_name);
	n = snprintf(head, sizeof(head), "  %s--%s%s%s", short_flag, d->name,
		     d->metavar ? " " : "", d->metavar ? d->metavar : "");
	if (n < HELP_TEXT_COL)
		fprintf(f, "%-*s", HELP_TEXT_COL, head);
	else
		fprintf(f, "%s\n%*s", head, HELP_TEXT_COL, "");
	snprintf(text, sizeof(text), "%s%s%s", d->help,
		 d->default_text ? "; default " : "",
		 d->default_text ? d->default_text : "");
	wrap(f, text, HELP_TEXT_COL, HELP_TEXT_COL);
	fputc('\n', f);
}

void help_print(FILE *f)
{
	const struct uswap_option_desc *d;
	char list[2048];
	size_t used = 0;
	unsigned i;

	fputs(help_usage, f);
	fputs(help_head, f);
	for (i = 0; (d = option_at(i)); i++) {
		if (!(d->flags & USWAP_OPTION_HIDDEN))
			help_option(f, d);
	}
	fputs(help_notes, f);
	fputs("Environment:\n  ", f);
	list[0] = 0;
	for (i = 0; (d = option_at(i)); i++) {
		if (d->env && !(d->flags & USWAP_OPTION_HIDDEN) &&
		    used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used,
						 "%s%s", used ? ", " : "", d->env);
	}
	wrap(f, list, 2, 2);
	fprintf(f, "\n%*s", HELP_TEXT_COL, "");
	wrap(f, "the option of the same name (USWAP_SWAP: SPECs one per line)",
	     HELP_TEXT_COL, HELP_TEXT_COL);
	fputc('\n', f);
	fputs(help_tail, f);
}

/* ---- the man page ----------------------------------------------------- */

/* Is the word w (n bytes) one of the words of d's metavar, of this case? */
static bool metavar_word(const struct uswap_option_desc *d, const char *w,
			 size_t n, bool upper)
{
	const char *m = d->metavar;
	size_t k;

	if (upper && n == 4 && !strncmp(w, "PROG", 4))
		return true;
	while (m && *m) {
		k = upper ? strspn(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") :
			    strspn(m, "abcdefghijklmnopqrstuvwxyz");
		/* a lower-case word counts only as a whole word of a|b|c */
		if (k == n && !strncmp(m, w, n) &&
		    (upper || ((m == d->metavar || m[-1] == '|') &&
			       (!m[k] || m[k] == '|'))))
			return true;
		m += k ? k : 1;
	}
	return false;
}

/* c as roff: '-' a minus sign (an option's), '\\' escaped. */
static void man_char(FILE *f, char c)
{
	if (c == '-')
		fputs("\\-", f);
	else if (c == '\\')
		fputs("\\e", f);
	else
		fputc(c, f);
}

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

/*
 * Does the word at p (n bytes) of text name one of an option's choices,
 * as in "on: ...", "(page)", "...; store keeps it"?  Elsewhere it is a
 * word of the sentence ("a swap device").
 */
static bool names_choice(const char *text, const char *p, size_t n)
{
	bool after = p == text || (p - text >= 2 && (p[-2] == ':' || p[-2] == ';') &&
				   p[-1] == ' ') || p[-1] == '(';

	return after || !p[n] || p[n] == ':' || p[n] == ')';
}

/*
 * text as roff: one sentence a line, --options in bold, d's metavar words
 * in italics (PROG too) and its literal words in bold where they name a
 * choice ("on:", "(page)"), minus signs and backslashes escaped.
 */
static void man_text(FILE *f, const char *text,
		     const struct uswap_option_desc *d)
{
	const char *p = text;
	bool bol = true, boundary = true;
	size_t n;

	while (*p) {
		if (bol && (*p == '.' || *p == '\''))
			fputs("\\&", f);
		bol = false;
		if (p[0] == '.' && p[1] == ' ' && p[2] == ' ') {
			fputs(".\n", f);
			p += 3;
			bol = boundary = true;
			continue;
		}
		if (boundary && p[0] == '-' && p[1] == '-' &&
		    p[2] >= 'a' && p[2] <= 'z') {
			n = 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
			fputs("\\fB", f);
			for (; n; n--, p++)
				man_char(f, *p);
			fputs("\\fR", f);
			boundary = false;
			continue;
		}
		if (boundary && is_word_char(*p)) {
			bool upper = *p >= 'A' && *p <= 'Z';

			for (n = 0; is_word_char(p[n]); n++)
				;
			if (metavar_word(d, p, n, upper) &&
			    (upper || names_choice(text, p, n))) {
				fprintf(f, "\\f%c%.*s\\fR", upper ? 'I' : 'B',
					(int)n, p);
				p += n;
				boundary = false;
				continue;
			}
			fprintf(f, "%.*s", (int)n, p);
			p += n;
			boundary = false;
			continue;
		}
		if (p[0] == ']' && p[1] == '[')
			fputs("]\\:", f);	/* PATH[,a][,b]: may break between */
		else if (*p == '\\')
			fputs("\\e", f);
		else if (*p == '-' && boundary)
			fputs("\\-", f);
		else
			fputc(*p, f);
		boundary = !is_word_char(*p) && *p != '-' && *p != '.';
		p++;
	}
}

/* The heading of an option: its flags in bold, its metavar's words set as words. */
static void man_heading(FILE *f, const struct uswap_option_desc *d)
{
	const char *m = d->metavar;
	size_t n;

	if (d->short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", d->short_name);
	fputs("\\fB\\-\\-", f);
	for (m = d->name; *m; m++)
		man_char(f, *m);
	fputs("\\fR", f);
	m = d->metavar;
	if (m)
		fputc(' ', f);
	while (m && *m) {
		n = strspn(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
		if (n) {
			fprintf(f, "\\fI%.*s\\fR", (int)n, m);
			m += n;
			continue;
		}
		n = strspn(m, "abcdefghijklmnopqrstuvwxyz0123456789");
		if (n) {
			fprintf(f, "\\fB%.*s\\fR", (int)n, m);
			m += n;
			continue;
		}
		man_char(f, *m++);
	}
	fputc('\n', f);
}

static void man_capital(FILE *f, const char *text,
			const struct uswap_option_desc *d)
{
	size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyz");

	/* A choice's word ("on: ...") keeps its case: it is typed so. */
	if (n && !metavar_word(d, text, n, false)) {
		fputc(text[0] - 'a' + 'A', f);
		text++;
	}
	man_text(f, text, d);
}

#define MAN_MARK "made by make docs from the option table (uswap --help-man)"

static void man_option(FILE *f, const struct uswap_option_desc *d)
{
	fprintf(f, ".\\\" <option %s> " MAN_MARK "\n.TP\n", d->name);
	man_heading(f, d);
	man_capital(f, d->help, d);
	fputs(".\n", f);
	if (d->default_text) {
		fputs("Default: ", f);
		man_text(f, d->default_text, d);
		fputs(".\n", f);
	}
	fprintf(f, ".\\\" </option %s>\n", d->name);
}

void help_print_man(FILE *f)
{
	const struct uswap_option_desc *d;
	unsigned i;

	for (i = 0; (d = option_at(i)); i++)
		man_option(f, d);
	fputs(".\\\" <environment> " MAN_MARK "\n.TP\n", f);
	for (i = 0; (d = uswap_option_desc(i)); i++)
		fprintf(f, "%s\\fB%s\\fR", i ? ", " : "", d->env);
	fputs("\nThe option of the same name.\n.\\\" </environment>\n", f);
}
