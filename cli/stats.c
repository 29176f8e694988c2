// SPDX-License-Identifier: MIT
/*
 * stats.c - the statistics of a tree of processes: their directory, and
 * what the processes write there, merged.
 *
 * Each process of a uswap tree writes its counters as one JSON document
 * into the tree's statistics directory (see stats.h).  uswap run makes
 * the directory before PROG (uswap-stats.PID.XXXXXX in $TMPDIR; those of
 * runs that were killed are swept away then), merges the final documents
 * when PROG ends, and removes it; uswap stat and top merge the live ones
 * of the processes still running.  Both merge the same way:
 *
 *   vmstat            summed, except levels and limits (names ending in
 *                     _peak or _bytes), which take the largest value
 *   swaps, tiers      every process's rows, each with its "pid" (a tier's
 *                     budget is the tree's; own_kib is the process's)
 *   fault_latency_us  buckets summed
 *   process           the largest rss_peak_kib, and the number of processes
 *   reaped            the counters of the processes that ended without
 *                     writing theirs (_exit, a signal), which the process
 *                     that reaped them folded into its budget's totals:
 *                     every document carries those totals as they were,
 *                     so the largest of each, per budget, is added once
 *                     to vmstat and fault_latency_us, and its processes
 *                     to the number
 *
 * At the end of a run, a process that wrote no final document and that
 * no reaper folded in (the last of its tree to end, by _exit or a signal)
 * counts as its last live document says (stats_dir_finish).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uswap.h"
#include "stats.h"

bool counter_is_level(const char *name)
{
	size_t len = strlen(name);

	return (len >= 5 && !strcmp(name + len - 5, "_peak")) ||
	       (len >= 6 && !strcmp(name + len - 6, "_bytes"));
}

bool counters_add(struct counters *cs, const char *name, uint64_t v,
		  bool take_max)
{
	struct counter *c;
	size_t i;

	for (i = 0; i < cs->n; i++) {
		c = &cs->c[i];
		if (strcmp(c->name, name))
			continue;
		if (take_max)
			c->v = v > c->v ? v : c->v;
		else
			c->v = c->v > UINT64_MAX - v ? UINT64_MAX : c->v + v;
		return true;
	}
	c = realloc(cs->c, (cs->n + 1) * sizeof(*c));
	if (!c)
		return false;
	cs->c = c;
	c[cs->n].name = strdup(name);
	if (!c[cs->n].name)
		return false;
	c[cs->n++].v = v;
	return true;
}

uint64_t counters_get(const struct counters *cs, const char *name)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		if (!strcmp(cs->c[i].name, name))
			return cs->c[i].v;
	}
	return 0;
}

static void counters_free(struct counters *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		free(cs->c[i].name);
	free(cs->c);
	cs->c = NULL;
	cs->n = 0;
}

/* The reaped totals of budget in m, made if new; NULL when out of memory. */
static struct reaped *reaped_of(struct merged *m, const char *budget)
{
	struct reaped *r;
	size_t i;

	for (i = 0; i < m->nr_reaped; i++)
		if (!strcmp(m->reaped[i].budget, budget))
			return &m->reaped[i];
	r = realloc(m->reaped, (m->nr_reaped + 1) * sizeof(*r));
	if (!r)
		return NULL;
	m->reaped = r;
	r = &r[m->nr_reaped];
	memset(r, 0, sizeof(*r));
	r->budget = strdup(budget);
	if (!r->budget)
		return NULL;
	m->nr_reaped++;
	return r;
}

/*
 * Raise the reaped counters in `have` to those of obj, adding what they
 * grew by to `sum` (NULL: nowhere).  false when out of memory.
 */
static bool reaped_raise(struct counters *have, struct counters *sum,
			 const struct json_value *obj)
{
	size_t i;

	for (i = 0; obj && obj->type == JSON_OBJECT && i < obj->n; i++) {
		const char *k = obj->keys[i];
		uint64_t v = obj->items[i]->u, old = counters_get(have, k);

		if (!obj->items[i]->is_uint || v <= old)
			continue;
		if (!counters_add(have, k, v, true) ||
		    (sum && !counters_add(sum, k, v - old, false)))
			return false;
	}
	return true;
}

/* Merge doc's "reaped" section into m: false when out of memory. */
static bool merge_reaped(struct merged *m, const struct json_value *doc)
{
	const struct json_value *rp = json_get(doc, "reaped");
	const struct json_value *budget = json_get(rp, "budget");
	const struct json_value *procs = json_get(rp, "processes");
	struct reaped *r;

	if (!budget || budget->type != JSON_STRING)
		return true;
	r = reaped_of(m, budget->text);
	if (!r)
		return false;
	if (procs && procs->is_uint && procs->u > r->processes)
		r->processes = procs->u;
	return reaped_raise(&r->vmstat, &m->vmstat, json_get(rp, "vmstat")) &&
	       reaped_raise(&r->latency, &m->latency,
			    json_get(rp, "fault_latency_us")) &&
	       reaped_raise(&r->members, NULL, json_get(rp, "members"));
}

uint64_t stats_processes(const struct merged *m)
{
	uint64_t n = m->nr_docs;
	size_t i;

	for (i = 0; i < m->nr_reaped; i++)
		n += m->reaped[i].processes;
	return n;
}

int stats_file_pid(const char *name, enum stats_kind kind)
{
	const char *suffix = kind == STATS_LIVE ? ".live.json" : ".json";
	long pid = 0;
	const char *p;

	for (p = name; *p >= '0' && *p <= '9'; p++) {
		pid = pid * 10 + (*p - '0');
		if (pid > 0x7fffffff)
			return 0;
	}
	if (p == name || strcmp(p, suffix))
		return 0;
	return (int)pid;
}

char *stats_read_fd(int fd, size_t *lenp)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;

	for (;;) {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 8192;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*lenp = len;
	return buf;
}

char *stats_read_file(int dirfd, const char *name, size_t *lenp)
{
	int e, fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	char *buf;

	if (fd < 0)
		return NULL;
	buf = stats_read_fd(fd, lenp);
	e = errno;
	close(fd);
	errno = e;
	return buf;
}

bool stats_merge_doc(struct merged *m, struct json_value *doc)
{
	const struct json_value *vs = json_get(doc, "vmstat");
	const struct json_value *lat = json_get(doc, "fault_latency_us");
	const struct json_value *rss;
	struct json_value **docs;
	size_t i;

	docs = realloc(m->docs, (m->nr_docs + 1) * sizeof(*docs));
	if (!docs) {
		json_free(doc);
		return false;
	}
	m->docs = docs;
	docs[m->nr_docs++] = doc;
	for (i = 0; vs && vs->type == JSON_OBJECT && i < vs->n; i++) {
		if (vs->items[i]->is_uint &&
		    !counters_add(&m->vmstat, vs->keys[i], vs->items[i]->u,
				  counter_is_level(vs->keys[i])))
			return false;
	}
	for (i = 0; lat && lat->type == JSON_OBJECT && i < lat->n; i++) {
		if (lat->items[i]->is_uint &&
		    !counters_add(&m->latency, lat->keys[i], lat->items[i]->u,
				  false))
			return false;
	}
	rss = json_get(json_get(doc, "process"), "rss_peak_kib");
	if (rss && rss->is_uint && rss->u > m->rss_peak_kib)
		m->rss_peak_kib = rss->u;
	return merge_reaped(m, doc);
}

/* Parse one file of dir into m; skip it (saying why, when verbose) if bad. */
static void merge_file(const char *dir, int dfd, const char *name,
		       struct merged *m, bool verbose)
{
	struct json_value *doc;
	char err[256];
	size_t len;
	char *text = stats_read_file(dfd, name, &len);

	if (!text) {
		/* A live file may be replaced or removed while we look. */
		if (verbose && errno != ENOENT)
			say("cannot read statistics %s/%s: %s", dir, name,
			    strerror(errno));
		return;
	}
	if (json_parse(text, len, &doc, err, sizeof(err)) ||
	    doc->type != JSON_OBJECT) {
		if (verbose)
			say("statistics %s/%s are not a JSON object (%s): skipped",
			    dir, name, doc ? "not an object" : err);
		json_free(doc);
	} else if (!stats_merge_doc(m, doc)) {
		say("out of memory merging statistics");
	}
	free(text);
}

int stats_merge_dir(const char *dir, enum stats_kind kind, struct merged *m,
		    bool verbose)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (stats_file_pid(de->d_name, kind) > 0)
			merge_file(dir, dirfd(d), de->d_name, m, verbose);
	}
	closedir(d);
	return 0;
}

void stats_write_counters(FILE *f, const struct counters *cs)
{
	size_t i;

	fputc('{', f);
	for (i = 0; i < cs->n; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_write_string(f, cs->c[i].name);
		fprintf(f, ": %llu", (unsigned long long)cs->c[i].v);
	}
	fputs(cs->n ? "\n  }" : "}", f);
}

/* One row of a process's "swaps" or "tiers", with the process's pid first. */
static void write_row(FILE *f, const struct json_value *row,
			   const struct json_value *pid)
{
	size_t i;

	if (row->type != JSON_OBJECT || !pid || !pid->is_uint ||
	    json_get(row, "pid")) {
		json_write(f, row);
		return;
	}
	fprintf(f, "{\"pid\": %llu", (unsigned long long)pid->u);
	for (i = 0; i < row->n; i++) {
		fputs(", ", f);
		json_write_string(f, row->keys[i]);
		fputs(": ", f);
		json_write(f, row->items[i]);
	}
	fputc('}', f);
}

/* Every process's rows of the array `key`, each with its pid. */
static void write_rows(FILE *f, const struct merged *m, const char *key)
{
	const struct json_value *rows, *pid;
	bool first = true;
	size_t i, j;

	fprintf(f, ",\n  \"%s\": [", key);
	for (i = 0; i < m->nr_docs; i++) {
		rows = json_get(m->docs[i], key);
		pid = json_get(json_get(m->docs[i], "process"), "pid");
		for (j = 0; rows && rows->type == JSON_ARRAY && j < rows->n;
		     j++) {
			fputs(first ? "\n    " : ",\n    ", f);
			write_row(f, rows->items[j], pid);
			first = false;
		}
	}
	fputs(first ? "]" : "\n  ]", f);
}

void stats_write_members(FILE *f, const struct merged *m)
{
	fputs("\"vmstat\": ", f);
	stats_write_counters(f, &m->vmstat);
	write_rows(f, m, "swaps");
	write_rows(f, m, "tiers");
	fputs(",\n  \"fault_latency_us\": ", f);
	stats_write_counters(f, &m->latency);
	fprintf(f, ",\n  \"process\": {\"rss_peak_kib\": %llu, \"processes\": %llu}",
		(unsigned long long)m->rss_peak_kib,
		(unsigned long long)stats_processes(m));
}

void stats_write_merged(FILE *f, const struct merged *m)
{
	fputs("{\n  ", f);
	stats_write_members(f, m);
	fputs("\n}\n", f);
}

int stats_write_file(const char *file, const struct merged *m)
{
	char *tmp;
	FILE *f;
	int err = 0;

	if (asprintf(&tmp, "%s.tmp", file) < 0)
		return -ENOMEM;
	f = fopen(tmp, "we");
	if (!f) {
		err = -errno;
		goto out;
	}
	stats_write_merged(f, m);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, file))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	free(tmp);
	return err;
}

void stats_merged_free(struct merged *m)
{
	size_t i;

	for (i = 0; i < m->nr_docs; i++)
		json_free(m->docs[i]);
	free(m->docs);
	m->docs = NULL;
	m->nr_docs = 0;
	counters_free(&m->vmstat);
	counters_free(&m->latency);
	m->rss_peak_kib = 0;
	for (i = 0; i < m->nr_reaped; i++) {
		free(m->reaped[i].budget);
		counters_free(&m->reaped[i].vmstat);
		counters_free(&m->reaped[i].latency);
		counters_free(&m->reaped[i].members);
	}
	free(m->reaped);
	m->reaped = NULL;
	m->nr_reaped = 0;
}

/* ---- the statistics directory of a run -------------------------------- */

/*
 * The tree's statistics directory: every process publishes its live
 * counters there for uswap stat and top, and its final ones at exit.
 * Without it (needed for --stats and --verbose only) PROG still runs.
 */

/*
 * Statistics directories of runs that were killed (kill -9 of uswap run
 * itself leaves its directory behind): uswap-stats.PID.* of this user
 * whose PID is gone.  Swept at the start of every run.
 */
static void sweep_stale_stats_dirs(const char *tmp)
{
	struct dirent *de;
	DIR *d = opendir(tmp);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		int pid;

		if (sscanf(de->d_name, "uswap-stats.%d.", &pid) != 1 || pid <= 0 ||
		    (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", tmp, de->d_name) >=
		    (int)sizeof(path) || lstat(path, &st) ||
		    !S_ISDIR(st.st_mode) || st.st_uid != getuid())
			continue;
		stats_dir_remove(path);
	}
	closedir(d);
}

char *stats_dir_create(bool needed)
{
	char *dir, *real;

	sweep_stale_stats_dirs(cli_tmp_dir());
	if (asprintf(&dir, "%s/uswap-stats.%d.XXXXXX", cli_tmp_dir(),
		     (int)getpid()) < 0) {
		say("out of memory");
		exit(EXIT_CANNOT_RUN);
	}
	if (!mkdtemp(dir)) {
		say("cannot create a statistics directory %s: %s%s", dir,
		    strerror(errno), needed ? "" :
		    " (uswap stat and top will not see this run)");
		if (needed)
			exit(EXIT_CANNOT_RUN);
		free(dir);
		return NULL;
	}
	/* Absolute: processes that change directory, and uswap stat, find it. */
	real = realpath(dir, NULL);
	if (real) {
		free(dir);
		dir = real;
	}
	return dir;
}

void stats_dir_remove(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		}
		closedir(d);
	}
	if (rmdir(dir) && errno != ENOENT)
		say("cannot remove the statistics directory %s: %s", dir,
		    strerror(errno));
}

/* Did a reaper fold the counters of the process that wrote doc in? */
static bool doc_folded(const struct merged *m, const struct json_value *doc)
{
	const struct json_value *proc = json_get(doc, "process");
	const struct json_value *budget = json_get(proc, "budget");
	const struct json_value *member = json_get(proc, "member");
	const struct json_value *gen = json_get(proc, "member_gen");
	char key[32];
	size_t i;

	if (!budget || budget->type != JSON_STRING || !member ||
	    !member->is_uint || !gen || !gen->is_uint || !gen->u)
		return false;
	snprintf(key, sizeof(key), "%llu", (unsigned long long)member->u);
	for (i = 0; i < m->nr_reaped; i++)
		if (!strcmp(m->reaped[i].budget, budget->text))
			return counters_get(&m->reaped[i].members, key) >= gen->u;
	return false;
}

/* Is pid among the first nr documents of m? */
static bool doc_of(const struct merged *m, size_t nr, uint64_t pid)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct json_value *p =
			json_get(json_get(m->docs[i], "process"), "pid");

		if (p && p->is_uint && p->u == pid)
			return true;
	}
	return false;
}

/*
 * After the final documents: the processes that ended without writing
 * theirs and that no reaper took over (the last of a tree to end, by
 * _exit or a signal) count as their last live document says.  Those
 * still running (they outlive PROG) do not.  Every live document's reaped
 * totals are read first: they may say that a reaper took a process over.
 */
static void merge_unwritten(const char *dir, struct merged *m, bool verbose)
{
	struct json_value **live = NULL, **more, *doc;
	size_t nr = 0, i, finals = m->nr_docs, len;
	struct dirent *de;
	DIR *d = opendir(dir);
	char err[256], *text;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (stats_file_pid(de->d_name, STATS_LIVE) <= 0)
			continue;
		text = stats_read_file(dirfd(d), de->d_name, &len);
		if (!text)
			continue;
		if (json_parse(text, len, &doc, err, sizeof(err)) ||
		    doc->type != JSON_OBJECT) {
			if (verbose)
				say("statistics %s/%s are not a JSON object: skipped",
				    dir, de->d_name);
			json_free(doc);
		} else if (!merge_reaped(m, doc) ||
			   !(more = realloc(live, (nr + 1) * sizeof(*live)))) {
			json_free(doc);
		} else {
			live = more;
			live[nr++] = doc;
		}
		free(text);
	}
	closedir(d);
	for (i = 0; i < nr; i++) {
		const struct json_value *pid =
			json_get(json_get(live[i], "process"), "pid");

		if (!pid || !pid->is_uint || !pid->u || pid->u > INT_MAX ||
		    doc_of(m, finals, pid->u) ||
		    kill((pid_t)pid->u, 0) == 0 || errno != ESRCH ||
		    doc_folded(m, live[i])) {
			json_free(live[i]);
			continue;
		}
		if (!stats_merge_doc(m, live[i]))
			say("out of memory merging statistics");
	}
	free(live);
}

/*
 * After PROG: merge what the processes wrote, write the --stats file,
 * print the --verbose summary, remove the directory.  No directory: PROG
 * ran without uswap, the --stats file has no process.
 */
void stats_dir_finish(const char *dir, const struct uswap_options *opt)
{
	bool verbose = opt->flags & USWAP_OPT_VERBOSE;
	struct merged m = { 0 };
	int err;

	if (!opt->stats_path[0] && !verbose) {
		if (dir)
			stats_dir_remove(dir);
		return;
	}
	err = dir ? stats_merge_dir(dir, STATS_FINAL, &m, verbose) : 0;
	if (err)
		say("cannot read the statistics directory %s: %s", dir,
		    strerror(-err));
	else if (dir)
		merge_unwritten(dir, &m, verbose);
	if (dir && verbose && !m.nr_docs)
		say("no process wrote statistics (was the preload library loaded?)");
	if (opt->stats_path[0]) {
		err = stats_write_file(opt->stats_path, &m);
		if (err)
			say("--stats %s: %s", opt->stats_path,
			    strerror(-err));
	}
	if (verbose && m.nr_docs) {
		unsigned long long zin = counters_get(&m.vmstat, "zswpin"),
				   zout = counters_get(&m.vmstat, "zswpout");
		char pool[64] = "";

		/* The pool's traffic, when there was a pool. */
		if (zin || zout)
			snprintf(pool, sizeof(pool), " zswpin %llu zswpout %llu",
				 zin, zout);
		say("pgfault %llu pgmajfault %llu pswpin %llu pswpout %llu%s resident_peak %llu MiB max %llu MiB rss_peak %llu MiB",
		    (unsigned long long)counters_get(&m.vmstat, "pgfault"),
		    (unsigned long long)counters_get(&m.vmstat, "pgmajfault"),
		    (unsigned long long)counters_get(&m.vmstat, "pswpin"),
		    (unsigned long long)counters_get(&m.vmstat, "pswpout"),
		    pool,
		    (unsigned long long)(counters_get(&m.vmstat, "resident_peak") >> 20),
		    (unsigned long long)(counters_get(&m.vmstat, "max_bytes") >> 20),
		    (unsigned long long)(m.rss_peak_kib >> 10));
	}
	stats_merged_free(&m);
	if (dir)
		stats_dir_remove(dir);
}
