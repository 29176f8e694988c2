// SPDX-License-Identifier: MIT
/*
 * show.c - what uswap stat and top print of a running tree.
 *
 * tree.c finds the tree and reads what its processes published, stat.c
 * runs the commands; this shows it: a summary that reads at a glance (the
 * budget as a bar, a bar per demotion target node, the swapped total,
 * with top the rates), the processes, the swap devices and the nonzero
 * counters; or one JSON object (stat --json).  Processes forked from one
 * another share a budget and its swap devices: those are counted once.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

#define BAR_WIDTH	30

/* ---- what may go to a terminal ---------------------------------------- */

const char *term_safe(const char *s, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t used = 0, n, i, out;
	const char *c;

	for (c = s; *c; c += n) {
		n = utf8_len(c);
		out = !n || utf8_is_control(c, n) ? (n ? n : 1) * 4 :
		      *c == '\\' ? 2 : n;
		if (used + out >= size)
			break;		/* a whole character, or none */
		if (out == n) {
			memcpy(buf + used, c, n);
		} else if (*c == '\\') {
			memcpy(buf + used, "\\\\", 2);
		} else {
			n = n ? n : 1;
			for (i = 0; i < n; i++) {
				unsigned char b = (unsigned char)c[i];

				buf[used + 4 * i] = '\\';
				buf[used + 4 * i + 1] = 'x';
				buf[used + 4 * i + 2] = hex[b >> 4];
				buf[used + 4 * i + 3] = hex[b & 15];
			}
		}
		used += out;
	}
	if (size)
		buf[used] = 0;
	return buf;
}

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
	char cmd[sizeof(t->cmd) * 4], dir[PATH_MAX];

	term_safe(t->cmd, cmd, sizeof(cmd));
	if (t->run_pid)
		fprintf(f, "tree   uswap run %d: %s\n", (int)t->run_pid, cmd);
	else
		fprintf(f, "tree   process %d: %s\n", (int)t->prog_pid, cmd);
	fprintf(f, "       %zu process%s publishing, statistics in %s\n",
		v->nr, v->nr == 1 ? "" : "es", term_safe(t->dir, dir, sizeof(dir)));
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
 * Resident memory and the pool of every process against the budgets;
 * memory that processes share since a fork is charged to their budget
 * once, and counted here once.
 * Processes forked from one another share one; a program that is
 * started (exec) has its own.  The limit is the sum of the budgets in
 * use (or the largest, when no process manages memory).
 */
static void show_budget(FILE *f, const struct view *v)
{
	uint64_t resident = view_sum(v, "resident_bytes");
	uint64_t pool = view_sum(v, "zswap_pool_total_size");
	uint64_t max = 0, shared = 0;
	char a[16], b[16], c[16];
	unsigned nr = 0;
	size_t i;

	for (i = 0; i < v->nr; i++) {
		if (budget_seen(v, i) || !budget_used(v, i))
			continue;
		max += doc_counter(v->procs[i].doc, "max_bytes");
		/* The budget's, in no process's resident_bytes. */
		shared += doc_counter(v->procs[i].doc, "fork_shared_bytes");
		nr++;
	}
	if (!nr)
		max = counters_get(&v->m.vmstat, "max_bytes");
	resident += shared;
	fputs("budget ", f);
	bar(f, resident + pool, max);
	fprintf(f, " %3.0f%%  %s resident", max ?
		(double)(resident + pool) * 100 / (double)max : 0.0,
		human((double)resident, a));
	if (shared)
		fprintf(f, " (%s shared by fork)", human((double)shared, a));
	fprintf(f, " + %s pool of %s", human((double)pool, b),
		human((double)max, c));
	if (nr > 1)
		fprintf(f, " (%u budgets)", nr);
	fputc('\n', f);
	/* Anonymous memory the budget does not cover (unmanaged.c). */
	resident = view_sum(v, "anon_unmanaged_bytes");
	if (resident >> 20)
		fprintf(f, "outside %s anonymous memory not managed by uswap%s\n",
			human((double)resident, a),
			resident > max ? ": more than the budget" : "");
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
	char a[16], b[16], c[16], d[16], e[16], comm[64];
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
		fprintf(f, "  %s\n", term_safe(v->procs[i].comm, comm,
						  sizeof(comm)));
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
	char a[16], b[16], pids[24], path[PATH_MAX], type[32];
	size_t k;

	fprintf(f, "\n%-32s %5s %8s %8s %6s %4s %9s %9s %9s\n", "DEVICE", "TYPE",
		"SIZE", "USED", "PRIO", "NODE", "PSWPOUT", "PSWPIN", "PID");
	for (k = 0; k < n; k++) {
		const struct json_value *prio = json_get(d[k].row, "prio");
		const struct json_value *node = json_get(d[k].row, "node");

		snprintf(pids, sizeof(pids), d[k].nr > 1 ? "%d+%u" : "%d",
			 (int)d[k].pid, d[k].nr - 1);
		fprintf(f, "%-32s %5s %8s %8s %6s %4s %9llu %9llu %9s\n",
			path_tail(term_safe(row_str(d[k].row, "path"), path,
					    sizeof(path)), 32),
			term_safe(row_str(d[k].row, "type"), type, sizeof(type)),
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
	char name[128];

	fputs("\nCOUNTERS (all processes; zero ones left out)\n", f);
	for (i = 0; i < cs->n; i++) {
		if (!cs->c[i].v)
			continue;
		fprintf(f, "%s%-26s %12llu", col ? "   " : "",
			term_safe(cs->c[i].name, name, sizeof(name)),
			(unsigned long long)cs->c[i].v);
		if (col)
			fputc('\n', f);
		col ^= 1;
	}
	if (col)
		fputc('\n', f);
}

/* The whole view; r: top's rates, NULL for stat. */
void show_view(FILE *f, const struct tree *t, const struct view *v,
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

void show_json(FILE *f, const struct tree *t, const struct view *v)
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
