// SPDX-License-Identifier: MIT
/*
 * stat.c - uswap stat and uswap top: show a running tree.
 *
 * tree.c finds the tree and reads what its processes published; this
 * shows it: a summary that reads at a glance (the budget as a bar, the
 * swapped total, with top the rates), the processes, the swap devices and
 * the nonzero counters; or one JSON object (stat --json).  top redraws it
 * every interval and computes rates per process, between the latest two
 * snapshots of each (told apart by their files' mtimes), so that a
 * process that starts or ends does not make the sums jump.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

/* Exit statuses besides EXIT_NO_TREE and EXIT_DENIED (stats.h). */
#define EXIT_USAGE	2

#define BAR_WIDTH	30

static const char stat_help[] =
"Usage: uswap stat [--json] [PID]\n"
"\n"
"Print the counters of a tree that uswap run runs: the budget's use, the\n"
"swap devices, per process the resident, compressed (pool) and swapped\n"
"sizes, and the nonzero counters of all its processes, merged as --stats\n"
"merges them.  Counters are those of the processes running now, as they\n"
"published them in the last half second.\n"
"\n"
"PID is uswap run's, or that of any process of the tree.  Without PID, the\n"
"tree is found in /proc: if several run, they are listed.\n"
"\n"
"  --json      print one JSON object: \"tree\", \"vmstat\", \"swaps\",\n"
"              \"fault_latency_us\", \"process\" as in --stats, and\n"
"              \"processes\", one object per process\n"
"  -h, --help  print this help and exit\n"
"\n"
"Exit status:\n"
"  0   printed\n"
"  1   no such tree: PID is not running, is not in a uswap tree, or its\n"
"      run has ended; without PID, none or several trees run\n"
"  2   usage error\n"
"  3   PID is another user's process: its environment cannot be read\n";

static const char top_help[] =
"Usage: uswap top [-d SECONDS] [-n COUNT] [PID]\n"
"\n"
"Show what uswap stat shows, redrawn every SECONDS, with the rates since\n"
"the previous frame: faults, swap-in and swap-out, pool in and out.\n"
"Quits on q or Ctrl-C, after COUNT frames, or when the tree ends.  When\n"
"standard output is not a terminal, one frame is printed per interval.\n"
"\n"
"  -d, --delay SECONDS     between frames, 0.1 to 3600; default 1\n"
"  -n, --iterations COUNT  frames to show; default: until q or Ctrl-C\n"
"  -h, --help              print this help and exit\n"
"\n"
"Exit status: as uswap stat (0 also when the tree ends while shown).\n";

/* ---- arguments -------------------------------------------------------- */

struct watch_args {
	const char *cmd;	/* "stat" or "top" */
	bool json;
	double delay;		/* seconds between frames */
	unsigned long count;	/* frames; 0: until told to quit */
	pid_t pid;		/* 0: find the tree */
};

static void __attribute__((noreturn, format(printf, 2, 3)))
watch_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("uswap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'uswap %s --help'.\n", cmd);
	exit(EXIT_USAGE);
}

/*
 * Is argv[*i] the option -s or --name?  Then its value (attached, after
 * '=', or the next argument) goes to *val.
 */
static bool opt_value(const struct watch_args *wa, int argc, char **argv,
		      int *i, const char *s, const char *name,
		      const char **val)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (!strncmp(arg, s, 2) && arg[2]) {
		*val = arg + 2;
		return true;
	}
	if (!strncmp(arg, name, n) && arg[n] == '=') {
		*val = arg + n + 1;
		return true;
	}
	if (strcmp(arg, s) && strcmp(arg, name))
		return false;
	if (*i + 1 >= argc)
		watch_usage(wa->cmd, "option '%s' needs a value", arg);
	*val = argv[++*i];
	return true;
}

static void parse_delay(struct watch_args *wa, const char *val)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(val, &end);
	if (errno || end == val || *end || !(d >= 0.1 && d <= 3600))
		watch_usage(wa->cmd, "-d: \"%s\" is not a delay (expected seconds, from 0.1 to 3600)",
			    val);
	wa->delay = d;
}

static void parse_count(struct watch_args *wa, const char *val)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(val, &end, 10);
	if (errno || end == val || *end || val[0] == '-' || !n ||
	    n > 1000000000UL)
		watch_usage(wa->cmd, "-n: \"%s\" is not a count (expected a whole number from 1)",
			    val);
	wa->count = n;
}

static void parse_pid(struct watch_args *wa, const char *val)
{
	long pid = 0;
	const char *p;

	for (p = val; *p >= '0' && *p <= '9' && pid <= 0x7fffffff; p++)
		pid = pid * 10 + (*p - '0');
	if (p == val || *p || pid < 1 || pid > 0x7fffffff)
		watch_usage(wa->cmd, "\"%s\" is not a process id (expected a number from 1)",
			    val);
	wa->pid = (pid_t)pid;
}

static void parse_watch_args(int argc, char **argv, struct watch_args *wa)
{
	bool top = !strcmp(wa->cmd, "top");
	const char *val;
	int i;

	wa->delay = 1;
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(top ? top_help : stat_help, stdout);
			exit(fflush(stdout) ? 1 : 0);
		}
		if (!top && !strcmp(arg, "--json"))
			wa->json = true;
		else if (top && opt_value(wa, argc, argv, &i, "-d", "--delay", &val))
			parse_delay(wa, val);
		else if (top && opt_value(wa, argc, argv, &i, "-n", "--iterations",
					  &val))
			parse_count(wa, val);
		else
			watch_usage(wa->cmd, "unknown option '%s'", arg);
	}
	if (i < argc)
		parse_pid(wa, argv[i++]);
	if (i < argc)
		watch_usage(wa->cmd, "one PID at most ('%s' is one too many)",
			    argv[i]);
}

/* ---- rates (top) ------------------------------------------------------ */

enum rate_id {
	RATE_FAULT, RATE_SWPIN, RATE_SWPOUT, RATE_ZSWPIN, RATE_ZSWPOUT,
	NR_RATES
};

static const char *const rate_counter[NR_RATES] = {
	[RATE_FAULT] = "pgfault",
	[RATE_SWPIN] = "pswpin",
	[RATE_SWPOUT] = "pswpout",
	[RATE_ZSWPIN] = "zswpin",
	[RATE_ZSWPOUT] = "zswpout",
};

/* One process's last snapshot and its rates per second. */
struct rate_state {
	pid_t pid;
	struct timespec mtime;
	uint64_t last[NR_RATES];
	double rate[NR_RATES];
	bool have;			/* rate[] holds a measurement */
};

struct rates {
	struct rate_state *s;
	size_t n;
};

static double ts_diff(struct timespec a, struct timespec b)
{
	return (double)(a.tv_sec - b.tv_sec) +
	       (double)(a.tv_nsec - b.tv_nsec) / 1e9;
}

static const struct rate_state *rates_find(const struct rates *r, pid_t pid)
{
	size_t i;

	for (i = 0; r && i < r->n; i++)
		if (r->s[i].pid == pid)
			return &r->s[i];
	return NULL;
}

/* One process's state after its current snapshot p. */
static void rate_next(struct rate_state *ns, const struct rate_state *old,
		      const struct proc_view *p)
{
	double dt = old ? ts_diff(p->mtime, old->mtime) : 0;
	uint64_t cur;
	int k;

	*ns = old ? *old : (struct rate_state){ .pid = p->pid };
	if (old && dt <= 0)
		return;		/* the same snapshot: keep the last rates */
	ns->mtime = p->mtime;
	for (k = 0; k < NR_RATES; k++) {
		cur = doc_counter(p->doc, rate_counter[k]);
		/* Counters that went back: a new image after exec. */
		ns->rate[k] = old && cur >= old->last[k] ?
			      (double)(cur - old->last[k]) / dt : 0;
		ns->last[k] = cur;
	}
	ns->have = old != NULL;
}

/* Move r on to the snapshots of v; processes that are gone are dropped. */
static void rates_update(struct rates *r, const struct view *v)
{
	struct rate_state *ns = calloc(v->nr ? v->nr : 1, sizeof(*ns));
	size_t i;

	if (!ns)
		return;
	for (i = 0; i < v->nr; i++)
		rate_next(&ns[i], rates_find(r, v->procs[i].pid), &v->procs[i]);
	free(r->s);
	r->s = ns;
	r->n = v->nr;
}

/* The tree's rate k: the sum over the processes; false if none has one. */
static bool rates_sum(const struct rates *r, int k, double *sum)
{
	bool any = false;
	size_t i;

	*sum = 0;
	for (i = 0; r && i < r->n; i++) {
		if (r->s[i].have) {
			*sum += r->s[i].rate[k];
			any = true;
		}
	}
	return any;
}

/* ---- showing it ------------------------------------------------------- */

/* bytes as 1023B, 15.2K, 1.5G (powers of 1024). */
static const char *human(double bytes, char buf[16])
{
	static const char units[] = "KMGTPE";
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, 16, "%.0fB", bytes);
		return buf;
	}
	while (bytes >= 1024 && u < 5) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, 16, "%.1f%c", bytes, units[u]);
	return buf;
}

static void bar(FILE *f, uint64_t used, uint64_t max)
{
	unsigned fill = max ? (unsigned)((double)used * BAR_WIDTH / (double)max
					 + 0.5) : 0;
	unsigned i;

	fputc('[', f);
	for (i = 0; i < BAR_WIDTH; i++)
		fputc(i < fill ? '#' : '-', f);
	fputc(']', f);
}

static void show_tree(FILE *f, const struct tree *t, const struct view *v)
{
	if (t->run_pid)
		fprintf(f, "tree   uswap run %d: %s\n", (int)t->run_pid, t->cmd);
	else
		fprintf(f, "tree   process %d: %s\n", (int)t->prog_pid, t->cmd);
	fprintf(f, "       %zu process%s publishing, statistics in %s\n",
		v->nr, v->nr == 1 ? "" : "es", t->dir);
}

static uint64_t row_get(const struct json_value *row, const char *name)
{
	const struct json_value *x = json_get(row, name);

	return x && x->is_uint ? x->u : 0;
}

/* Does a process before i charge the same budget as i? */
static bool budget_seen(const struct view *v, size_t i)
{
	const char *b = v->procs[i].budget;
	size_t j;

	for (j = 0; b[0] && j < i; j++)
		if (!strcmp(v->procs[j].budget, b))
			return true;
	return false;
}

/* Does any process that charges the budget of process i manage memory? */
static bool budget_used(const struct view *v, size_t i)
{
	const char *b = v->procs[i].budget;
	size_t j;

	for (j = 0; j < v->nr; j++)
		if ((j == i || (b[0] && !strcmp(v->procs[j].budget, b))) &&
		    doc_counter(v->procs[j].doc, "managed_bytes"))
			return true;
	return false;
}

/*
 * Resident memory and the pool of every process against the budgets.
 * Processes forked from one another share one; a program that is
 * started (exec) has its own.  The limit is the sum of the budgets in
 * use (or the largest, when no process manages memory).
 */
static void show_budget(FILE *f, const struct view *v)
{
	uint64_t resident = view_sum(v, "resident_bytes");
	uint64_t pool = view_sum(v, "zswap_pool_total_size");
	uint64_t max = 0;
	char a[16], b[16], c[16];
	unsigned nr = 0;
	size_t i;

	for (i = 0; i < v->nr; i++) {
		if (budget_seen(v, i) || !budget_used(v, i))
			continue;
		max += doc_counter(v->procs[i].doc, "max_bytes");
		nr++;
	}
	if (!nr)
		max = counters_get(&v->m.vmstat, "max_bytes");
	fputs("budget ", f);
	bar(f, resident + pool, max);
	fprintf(f, " %3.0f%%  %s resident + %s pool of %s",
		max ? (double)(resident + pool) * 100 / (double)max : 0.0,
		human((double)resident, a), human((double)pool, b),
		human((double)max, c));
	if (nr > 1)
		fprintf(f, " (%u budgets)", nr);
	fputc('\n', f);
}

/*
 * The slower nodes that take demoted memory (--tier-max), one bar each:
 * a node's charge is the tree's, so the first process that lists it says.
 */
static void show_tiers(FILE *f, const struct view *v)
{
	uint64_t shown = 0;
	char a[16], b[16];
	size_t i, j;

	for (i = 0; i < v->nr; i++) {
		const struct json_value *t = json_get(v->procs[i].doc, "tiers");

		for (j = 0; t && t->type == JSON_ARRAY && j < t->n; j++) {
			uint64_t node = row_get(t->items[j], "node");
			uint64_t used = row_get(t->items[j], "charged_kib") << 10;
			uint64_t max = row_get(t->items[j], "max_kib") << 10;

			if (node >= 64 || (shown >> node & 1))
				continue;
			shown |= 1ull << node;
			fprintf(f, "node %-2llu", (unsigned long long)node);
			bar(f, used, max);
			fprintf(f, " %3.0f%%  %s demoted of %s\n",
				max ? (double)used * 100 / (double)max : 0.0,
				human((double)used, a), human((double)max, b));
		}
	}
}

static const char *row_str(const struct json_value *row, const char *name)
{
	const struct json_value *x = json_get(row, name);

	return x && x->type == JSON_STRING ? x->text : "?";
}

/* A swap device of the tree; the processes of one budget share theirs. */
struct device {
	const struct json_value *row;	/* the first process's row */
	const char *budget;
	pid_t pid;			/* the first process that has it */
	unsigned nr;			/* processes that have it */
	uint64_t used_kib;		/* the latest figure: the largest */
	uint64_t pswpout, pswpin;	/* each process counts its own */
};

static bool device_is(const struct device *d, const struct proc_view *p,
		      const struct json_value *row)
{
	return p->budget[0] && !strcmp(d->budget, p->budget) &&
	       !strcmp(row_str(d->row, "path"), row_str(row, "path"));
}

/* The tree's devices, each once (malloc'd; *n of them). */
static struct device *devices_collect(const struct view *v, size_t *n)
{
	const struct json_value *sw, *row;
	struct device *d = NULL, *nd;
	size_t i, j, k;

	*n = 0;
	for (i = 0; i < v->nr; i++) {
		sw = json_get(v->procs[i].doc, "swaps");
		for (j = 0; sw && sw->type == JSON_ARRAY && j < sw->n; j++) {
			row = sw->items[j];
			for (k = 0; k < *n && !device_is(&d[k], &v->procs[i], row);
			     k++)
				;
			if (k == *n) {
				nd = realloc(d, (*n + 1) * sizeof(*d));
				if (!nd)
					return d;
				d = nd;
				d[k] = (struct device){ .row = row,
					.budget = v->procs[i].budget,
					.pid = v->procs[i].pid };
				(*n)++;
			}
			d[k].nr++;
			if (row_get(row, "used_kib") > d[k].used_kib)
				d[k].used_kib = row_get(row, "used_kib");
			d[k].pswpout += row_get(row, "pswpout");
			d[k].pswpin += row_get(row, "pswpin");
		}
	}
	return d;
}

static void show_swap(FILE *f, const struct device *d, size_t n)
{
	uint64_t used = 0, size = 0;
	char a[16], b[16];
	size_t k;

	for (k = 0; k < n; k++) {
		used += d[k].used_kib * 1024;
		size += row_get(d[k].row, "size_kib") * 1024;
	}
	fprintf(f, "swap   %s swapped, on %zu device%s of %s\n",
		human((double)used, a), n, n == 1 ? "" : "s",
		human((double)size, b));
}

/* The tree's rates since the previous frame. */
static void show_rates(FILE *f, const struct rates *r)
{
	double page = (double)sysconf(_SC_PAGESIZE), x[NR_RATES];
	char a[16], b[16], c[16], d[16];
	int k;

	for (k = 0; k < NR_RATES; k++) {
		if (!rates_sum(r, k, &x[k])) {
			fputs("rates  (from the next frame)\n", f);
			return;
		}
	}
	fprintf(f, "rates  faults %.0f/s  swap-in %s/s  swap-out %s/s  pool-in %s/s  pool-out %s/s\n",
		x[RATE_FAULT], human(x[RATE_SWPIN] * page, a),
		human(x[RATE_SWPOUT] * page, b),
		human(x[RATE_ZSWPIN] * page, c),
		human(x[RATE_ZSWPOUT] * page, d));
}

/* Does another process charge the budget of process i? */
static bool budget_shared(const struct view *v, size_t i)
{
	const char *b = v->procs[i].budget;
	size_t j;

	for (j = 0; b[0] && j < v->nr; j++)
		if (j != i && !strcmp(v->procs[j].budget, b))
			return true;
	return false;
}

/*
 * One line per process: its sizes, and with top its rates.  The swap
 * devices of processes that share a budget are one: their SWAPPED is the
 * same, and marked.
 */
static void show_procs(FILE *f, const struct view *v, const struct rates *r)
{
	double page = (double)sysconf(_SC_PAGESIZE);
	const struct rate_state *rs;
	const struct json_value *doc;
	uint64_t resident, pool, max;
	char a[16], b[16], c[16], d[16], e[16];
	bool shared, any_shared = false;
	size_t i;

	fprintf(f, "\n    PID  RESIDENT     POOL  SWAPPED       MAX  USE      RSS%s  COMMAND\n",
		r ? "  FAULT/s     IN/s    OUT/s" : "");
	for (i = 0; i < v->nr; i++) {
		doc = v->procs[i].doc;
		resident = doc_counter(doc, "resident_bytes");
		pool = doc_counter(doc, "zswap_pool_total_size");
		max = doc_counter(doc, "max_bytes");
		shared = budget_shared(v, i);
		any_shared |= shared;
		fprintf(f, "%7d %9s %8s %8s%c %8s %3.0f%% %8s",
			(int)v->procs[i].pid, human((double)resident, a),
			human((double)pool, b),
			human((double)doc_counter(doc, "swap_used_bytes"), c),
			shared ? '*' : ' ', human((double)max, d),
			max ? (double)(resident + pool) * 100 / (double)max : 0.0,
			human((double)doc_get(doc, "process", "rss_kib") * 1024,
			      e));
		rs = r ? rates_find(r, v->procs[i].pid) : NULL;
		if (rs && rs->have)
			fprintf(f, " %8.0f %8s %8s", rs->rate[RATE_FAULT],
				human(rs->rate[RATE_SWPIN] * page, a),
				human(rs->rate[RATE_SWPOUT] * page, b));
		else if (r)
			fprintf(f, " %8s %8s %8s", "-", "-", "-");
		fprintf(f, "  %s\n", v->procs[i].comm);
	}
	if (any_shared)
		fputs("* one budget and one set of swap devices, shared by processes forked\n"
		      "  from one another\n", f);
}

/* The end of path, in width columns at most. */
static const char *path_tail(const char *path, size_t width)
{
	size_t n = strlen(path);

	return n <= width ? path : path + n - width;
}

/* The swap devices, as /proc/swaps rows with their traffic. */
static void show_devices(FILE *f, const struct device *d, size_t n)
{
	char a[16], b[16], pids[24];
	size_t k;

	fprintf(f, "\n%-32s %5s %8s %8s %6s %4s %9s %9s %9s\n", "DEVICE", "TYPE",
		"SIZE", "USED", "PRIO", "NODE", "PSWPOUT", "PSWPIN", "PID");
	for (k = 0; k < n; k++) {
		const struct json_value *prio = json_get(d[k].row, "prio");
		const struct json_value *node = json_get(d[k].row, "node");

		snprintf(pids, sizeof(pids), d[k].nr > 1 ? "%d+%u" : "%d",
			 (int)d[k].pid, d[k].nr - 1);
		fprintf(f, "%-32s %5s %8s %8s %6s %4s %9llu %9llu %9s\n",
			path_tail(row_str(d[k].row, "path"), 32),
			row_str(d[k].row, "type"),
			human((double)row_get(d[k].row, "size_kib") * 1024, a),
			human((double)d[k].used_kib * 1024, b),
			prio && prio->type == JSON_NUMBER ? prio->text : "?",
			node && node->type == JSON_NUMBER ? node->text : "?",
			(unsigned long long)d[k].pswpout,
			(unsigned long long)d[k].pswpin, pids);
	}
}

/* The merged counters that are not zero, two to a line. */
static void show_counters(FILE *f, const struct view *v)
{
	const struct counters *cs = &v->m.vmstat;
	size_t i, col = 0;

	fputs("\nCOUNTERS (all processes; zero ones left out)\n", f);
	for (i = 0; i < cs->n; i++) {
		if (!cs->c[i].v)
			continue;
		fprintf(f, "%s%-26s %12llu", col ? "   " : "", cs->c[i].name,
			(unsigned long long)cs->c[i].v);
		if (col)
			fputc('\n', f);
		col ^= 1;
	}
	if (col)
		fputc('\n', f);
}

/* The whole view; r: top's rates, NULL for stat. */
static void show(FILE *f, const struct tree *t, const struct view *v,
		 const struct rates *r)
{
	size_t n;
	struct device *d = devices_collect(v, &n);

	show_tree(f, t, v);
	show_budget(f, v);
	show_tiers(f, v);
	show_swap(f, d, n);
	if (r)
		show_rates(f, r);
	show_procs(f, v, r);
	show_devices(f, d, n);
	show_counters(f, v);
	free(d);
}

/* One process in "processes" of stat --json. */
static void json_proc(FILE *f, const struct proc_view *p)
{
	static const struct {
		const char *key, *counter;
	} sizes[] = {
		{ "resident_bytes", "resident_bytes" },
		{ "pool_bytes", "zswap_pool_total_size" },
		{ "compressed_bytes", "zswap_compressed_bytes" },
		{ "swapped_bytes", "swap_used_bytes" },
		{ "max_bytes", "max_bytes" },
		{ "pgfault", "pgfault" },
		{ "pgmajfault", "pgmajfault" },
		{ "pswpin", "pswpin" },
		{ "pswpout", "pswpout" },
		{ "zswpin", "zswpin" },
		{ "zswpout", "zswpout" },
	};
	size_t k;

	fprintf(f, "{\"pid\": %d, \"command\": ", (int)p->pid);
	json_write_string(f, p->comm);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		fprintf(f, ", \"%s\": %llu", sizes[k].key,
			(unsigned long long)doc_counter(p->doc, sizes[k].counter));
	fprintf(f, ", \"pool_stored_bytes\": %llu, \"rss_kib\": %llu, \"budget\": ",
		(unsigned long long)(doc_counter(p->doc, "zswap_stored_pages") *
				     (uint64_t)sysconf(_SC_PAGESIZE)),
		(unsigned long long)doc_get(p->doc, "process", "rss_kib"));
	if (p->budget[0])
		json_write_string(f, p->budget);
	else
		fputs("null", f);
	fputc('}', f);
}

static void show_json(FILE *f, const struct tree *t, const struct view *v)
{
	size_t i;

	fprintf(f, "{\n  \"tree\": {\"run_pid\": %d, \"prog_pid\": %d, \"command\": ",
		(int)t->run_pid, (int)t->prog_pid);
	json_write_string(f, t->cmd);
	fputs(", \"stats_dir\": ", f);
	json_write_string(f, t->dir);
	fputs("},\n  ", f);
	stats_write_members(f, &v->m);
	fputs(",\n  \"processes\": [", f);
	for (i = 0; i < v->nr; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_proc(f, &v->procs[i]);
	}
	fputs(v->nr ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* ---- uswap stat ------------------------------------------------------- */

int cmd_stat(int argc, char **argv)
{
	struct watch_args wa = { .cmd = "stat" };
	struct tree t = { 0 };
	struct view v = { 0 };
	int ret;

	parse_watch_args(argc, argv, &wa);
	ret = tree_find(wa.pid, &t);
	if (ret)
		goto out;
	if (view_read(&t, &v)) {
		say("the uswap run of process %d has ended",
		    (int)(t.run_pid ? t.run_pid : t.prog_pid));
		ret = EXIT_NO_TREE;
	} else if (wa.json) {
		show_json(stdout, &t, &v);
	} else {
		show(stdout, &t, &v, NULL);
	}
	view_free(&v);
out:
	tree_free(&t);
	if (fflush(stdout) && !ret)
		ret = 1;
	return ret;
}

/* ---- uswap top -------------------------------------------------------- */

static volatile sig_atomic_t quit_signal;

static void on_quit(int sig)
{
	quit_signal = sig;
}

/* The terminal top draws on, and reads q from. */
struct term {
	bool draw;		/* stdout is a terminal: redraw in place */
	bool keys;		/* stdin is a terminal, in non-canonical mode */
	struct termios saved;
	unsigned rows, cols;
};

static void term_open(struct term *tm)
{
	struct sigaction sa = { .sa_handler = on_quit };
	struct termios raw;

	/* No SA_RESTART: a signal ends the wait for the next frame. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	tm->draw = isatty(STDOUT_FILENO);
	if (!tm->draw || !isatty(STDIN_FILENO) ||
	    tcgetattr(STDIN_FILENO, &tm->saved))
		return;
	raw = tm->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tm->keys = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

static void term_close(struct term *tm)
{
	if (tm->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &tm->saved);
	tm->keys = false;
}

/* Print a frame: in place on a terminal, cut to its size; else as is. */
static void term_frame(struct term *tm, const char *text, size_t len)
{
	struct winsize ws;
	const char *line = text, *nl;
	unsigned row = 0;
	size_t n;

	if (!tm->draw) {
		fwrite(text, 1, len, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		return;
	}
	tm->rows = 24;
	tm->cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		tm->rows = ws.ws_row;
		tm->cols = ws.ws_col;
	}
	fputs("\033[H", stdout);
	for (; line < text + len && row + 1 < tm->rows; line = nl + 1, row++) {
		nl = memchr(line, '\n', (size_t)(text + len - line));
		if (!nl)
			nl = text + len;
		n = (size_t)(nl - line);
		fwrite(line, 1, n < tm->cols ? n : tm->cols, stdout);
		fputs("\033[K\n", stdout);
	}
	fputs("\033[J", stdout);
	fflush(stdout);
}

/* Wait delay seconds; true when told to quit (q, a signal). */
static bool term_wait(struct term *tm, double delay)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct timespec now, end;
	char keys[64];
	ssize_t n;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)delay;
	end.tv_nsec += (long)((delay - (double)(time_t)delay) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	while (!quit_signal) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (long)(ts_diff(end, now) * 1000 + 0.999);
		if (ms <= 0)
			return false;
		if (poll(&pfd, tm->keys ? 1 : 0, (int)ms) <= 0)
			continue;
		n = read(STDIN_FILENO, keys, sizeof(keys));
		if (n > 0 && (memchr(keys, 'q', (size_t)n) ||
			      memchr(keys, 'Q', (size_t)n)))
			return true;
		if (n <= 0 || (pfd.revents & (POLLHUP | POLLERR)))
			term_close(tm);	/* no more keys */
	}
	return true;
}

/* One frame of top into a buffer: title, then the view. */
static char *top_frame(const struct watch_args *wa, const struct term *tm,
		       const struct tree *t, const struct view *v,
		       const struct rates *r, size_t *len)
{
	char *text = NULL, when[16];
	time_t now = time(NULL);
	struct tm lt;
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &lt));
	fprintf(f, "uswap top - %s - every %gs%s\n", when, wa->delay,
		tm->keys ? " - q quits" : "");
	show(f, t, v, r);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int cmd_top(int argc, char **argv)
{
	struct watch_args wa = { .cmd = "top" };
	struct rates r = { 0 };
	struct term tm = { 0 };
	struct tree t = { 0 };
	unsigned long frame;
	size_t len;
	char *text;
	int ret;

	parse_watch_args(argc, argv, &wa);
	ret = tree_find(wa.pid, &t);
	if (ret)
		goto out;
	term_open(&tm);
	for (frame = 0; !wa.count || frame < wa.count; frame++) {
		struct view v = { 0 };

		if (frame && term_wait(&tm, wa.delay))
			break;
		if (view_read(&t, &v)) {
			view_free(&v);
			say("the uswap run of process %d has ended",
			    (int)(t.run_pid ? t.run_pid : t.prog_pid));
			break;
		}
		rates_update(&r, &v);
		text = top_frame(&wa, &tm, &t, &v, &r, &len);
		view_free(&v);
		if (!text) {
			say("out of memory");
			ret = 1;
			break;
		}
		term_frame(&tm, text, len);
		free(text);
	}
	term_close(&tm);
	free(r.s);
out:
	tree_free(&t);
	return ret;
}
