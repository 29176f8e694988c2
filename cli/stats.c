// SPDX-License-Identifier: MIT
/*
 * stats.c - the statistics of a tree of processes: their directory, and
 * what the processes write there, merged.
 *
 * Each process of a uswap tree writes its counters as one JSON document
 * into the tree's statistics directory (see stats.h).  uswap run makes
 * the directory before PROG (uswap-stats.PID.XXXXXX in $TMPDIR, 0700;
 * those of runs that were killed are swept away then) and holds it open
 * while PROG runs: uswap stat and top find it through that descriptor in
 * /proc/PID/fd, which no program of the tree can change.  It merges the
 * final documents when PROG ends, and removes the directory; uswap stat
 * and top merge the live ones of the processes still running.
 *
 * Every file of the directory is read as a file another user may have
 * made (stats_file_read()): never through a link, never blocking, only a
 * regular file of the tree's user, of at most STATS_FILE_MAX bytes.  Every
 * file uswap writes (--stats) is created anew under a random name, never
 * through a link (O_EXCL | O_NOFOLLOW), checked on its descriptor, and
 * renamed into place.  Both merge the same way:
 *
 *   vmstat            summed, except levels and limits (names ending in
 *                     _peak or _bytes), which take the largest value
 *                     (anon_unmanaged_bytes, each process's own, is summed)
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
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uswap.h"
#include "stats.h"

bool counter_is_level(const char *name)
{
	size_t len = strlen(name);

	/* Each process's own memory outside the budget: the tree's is the sum. */
	if (!strcmp(name, "anon_unmanaged_bytes"))
		return false;
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

char *stats_read_fd(int fd, size_t max, size_t *lenp)
{
	char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t n;

	for (;;) {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 8192;
			if (cap > max + 2)
				cap = max + 2;	/* room for one byte too many */
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
		if (len > max) {
			free(buf);
			errno = EFBIG;
			return NULL;
		}
	}
	buf[len] = 0;
	*lenp = len;
	return buf;
}

char *stats_read_file(int dirfd, const char *name, size_t max, size_t *lenp)
{
	int e, fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	char *buf;

	if (fd < 0)
		return NULL;
	buf = stats_read_fd(fd, max, lenp);
	e = errno;
	close(fd);
	errno = e;
	return buf;
}

char *stats_file_read(int dfd, const char *name, uid_t owner, size_t *lenp,
		      struct stat *st, const char **why)
{
	static char owned[96];
	char *text;
	int fd, e;

	*why = NULL;
	/* Not even opened unless a regular file (a device may act on open). */
	if (!fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) &&
	    !S_ISREG(st->st_mode)) {
		*why = S_ISLNK(st->st_mode) ? "a symbolic link" :
					      "not a regular file";
		errno = EINVAL;
		return NULL;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		    O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			*why = "a symbolic link";
		else if (e != ENOENT)	/* else gone meanwhile: no news */
			*why = strerror(e);
		errno = e;
		return NULL;
	}
	if (fstat(fd, st)) {
		*why = strerror(errno);
	} else if (!S_ISREG(st->st_mode)) {
		*why = "not a regular file";
	} else if (st->st_uid != owner) {
		snprintf(owned, sizeof(owned),
			 "owned by uid %u, not by the tree's user (uid %u)",
			 (unsigned)st->st_uid, (unsigned)owner);
		*why = owned;
	} else if (st->st_size > STATS_FILE_MAX) {
		*why = "larger than " STATS_FILE_MAX_TEXT;
	}
	if (*why) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	text = stats_read_fd(fd, STATS_FILE_MAX, lenp);
	e = errno;
	if (!text)
		*why = e == EFBIG ? "larger than " STATS_FILE_MAX_TEXT :
				    strerror(e);
	close(fd);
	errno = e;
	return text;
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

/*
 * Parse one file of dir (dfd) into m, if it is owner's; skip it (saying
 * why, when verbose) if not, or bad.
 */
static void merge_file(const char *dir, int dfd, const char *name,
		       uid_t owner, struct merged *m, bool verbose)
{
	struct json_value *doc;
	const char *why;
	struct stat st;
	char err[256];
	size_t len;
	char *text = stats_file_read(dfd, name, owner, &len, &st, &why);

	if (!text) {
		/* A live file may be replaced or removed while we look. */
		if (verbose && why)
			say("statistics %s/%s: %s: skipped", dir, name, why);
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

/* uswap run's statistics directory (stats_dir_create()), held open. */
static char *run_dir;
static int run_dfd = -1;

/* A new descriptor of dir: of the one held open, or opened (no link). */
static int dir_open(const char *dir)
{
	if (run_dir && run_dfd >= 0 && !strcmp(dir, run_dir))
		return openat(run_dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int stats_merge_dir(const char *dir, enum stats_kind kind, struct merged *m,
		    bool verbose)
{
	struct dirent *de;
	struct stat st;
	int fd = dir_open(dir);
	DIR *d;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (stats_file_pid(de->d_name, kind) > 0)
			merge_file(dir, dirfd(d), de->d_name, st.st_uid, m,
				   verbose);
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

/*
 * A new file in dfd, named after base with a random suffix, that no one
 * else has a name for: created here (O_EXCL), never through a link, and
 * checked on its descriptor.  Its name in tmp; the descriptor, or -errno.
 */
static int create_tmp(int dfd, const char *base, char *tmp, size_t size)
{
	static unsigned seq;
	struct stat st;
	uint64_t r;
	int fd, i;

	for (i = 0; i < 100; i++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint64_t)time(NULL) << 32 ^ (uint64_t)getpid() << 16 ^
			    ++seq;
		snprintf(tmp, size, ".%.200s.%012llx", base,
			 (unsigned long long)(r & 0xffffffffffffULL));
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, 0666);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid() && st.st_nlink == 1)
			return fd;
		close(fd);
		return -EPERM;	/* not the file just made: leave it */
	}
	return -EEXIST;
}

int stats_write_file(const char *file, const struct merged *m)
{
	char tmp[NAME_MAX + 1], target[PATH_MAX] = "", a[PATH_MAX], b[PATH_MAX];
	const char *slash = strrchr(file, '/');
	const char *base = slash ? slash + 1 : file;
	bool was_link = false;
	struct stat st;
	int dfd, fd, err = 0;
	char *dir;
	ssize_t n;
	FILE *f;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file))
		    : strdup(".");
	if (!dir)
		return -ENOMEM;
	/* The directory as named (links and all); its entry FILE never. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dfd < 0)
		return -errno;
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISDIR(st.st_mode)) {
			err = -EISDIR;
			goto out_close_dir;
		}
		if (S_ISLNK(st.st_mode)) {
			was_link = true;
			n = readlinkat(dfd, base, target, sizeof(target) - 1);
			target[n > 0 ? n : 0] = 0;
		}
	}
	fd = create_tmp(dfd, base, tmp, sizeof(tmp));
	if (fd < 0) {
		err = fd;
		goto out_close_dir;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out_unlink;
	}
	stats_write_merged(f, m);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	/* rename(2) replaces a link at FILE, never what it points to. */
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (!err && was_link)
		say("--stats %s was a symbolic link (to %s): replaced by the statistics file; %s is left as it was",
		    term_safe(file, a, sizeof(a)),
		    term_safe(target, b, sizeof(b)), b);
out_unlink:
	if (err)
		unlinkat(dfd, tmp, 0);
out_close_dir:
	close(dfd);
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

/* Remove the files of the directory dfd (closed here). */
static void dir_empty(int dfd)
{
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

/*
 * Statistics directories of runs that were killed (kill -9 of uswap run
 * itself leaves its directory behind): uswap-stats.PID.* of this user
 * whose PID is gone.  Swept at the start of every run, each through a
 * descriptor of its own that no link led to.
 */
static void sweep_stale_stats_dirs(const char *tmp)
{
	struct dirent *de;
	DIR *d = opendir(tmp);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		int pid, fd;

		if (sscanf(de->d_name, "uswap-stats.%d.", &pid) != 1 || pid <= 0 ||
		    (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || st.st_uid != geteuid()) {
			close(fd);
			continue;
		}
		dir_empty(fd);
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

char *stats_dir_create(bool needed)
{
	char *dir, *real;
	struct stat st;
	int fd;

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
		goto err_free;
	}
	/* The directory just made, and no other: it stays open while PROG runs. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		say("the statistics directory %s was replaced as it was made%s",
		    dir, needed ? "" :
		    " (uswap stat and top will not see this run)");
		if (fd >= 0)
			close(fd);
		goto err_free;
	}
	/* Absolute: processes that change directory, and uswap stat, find it. */
	real = realpath(dir, NULL);
	if (real) {
		free(dir);
		dir = real;
	}
	run_dfd = fd;
	run_dir = dir;
	return dir;

err_free:
	if (needed)
		exit(EXIT_CANNOT_RUN);
	free(dir);
	return NULL;
}

void stats_dir_remove(const char *dir)
{
	int fd = dir_open(dir);

	if (fd >= 0)
		dir_empty(fd);
	if (rmdir(dir) && errno != ENOENT)
		say("cannot remove the statistics directory %s: %s", dir,
		    strerror(errno));
	if (run_dir && !strcmp(dir, run_dir)) {
		close(run_dfd);
		run_dfd = -1;
		run_dir = NULL;
	}
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
	struct stat st, fst;
	int fd = dir_open(dir);
	char err[256], *text;
	const char *why;
	DIR *d;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		if (stats_file_pid(de->d_name, STATS_LIVE) <= 0)
			continue;
		text = stats_file_read(dirfd(d), de->d_name, st.st_uid, &len,
				       &fst, &why);
		if (!text) {
			if (verbose && why)
				say("statistics %s/%s: %s: skipped", dir,
				    de->d_name, why);
			continue;
		}
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
		char pool[64] = "", unmanaged[64] = "";

		if (counters_get(&m.vmstat, "anon_unmanaged_bytes") >> 20)
			snprintf(unmanaged, sizeof(unmanaged), " anon_unmanaged %llu MiB",
				 (unsigned long long)(counters_get(&m.vmstat, "anon_unmanaged_bytes") >> 20));
		/* The pool's traffic, when there was a pool. */
		if (zin || zout)
			snprintf(pool, sizeof(pool), " zswpin %llu zswpout %llu",
				 zin, zout);
		say("pgfault %llu pgmajfault %llu pswpin %llu pswpout %llu%s resident_peak %llu MiB max %llu MiB rss_peak %llu MiB%s",
		    (unsigned long long)counters_get(&m.vmstat, "pgfault"),
		    (unsigned long long)counters_get(&m.vmstat, "pgmajfault"),
		    (unsigned long long)counters_get(&m.vmstat, "pswpin"),
		    (unsigned long long)counters_get(&m.vmstat, "pswpout"),
		    pool,
		    (unsigned long long)(counters_get(&m.vmstat, "resident_peak") >> 20),
		    (unsigned long long)(counters_get(&m.vmstat, "max_bytes") >> 20),
		    (unsigned long long)(m.rss_peak_kib >> 10), unmanaged);
	}
	if (m.nr_docs && counters_get(&m.vmstat, "anon_unmanaged_bytes") >
			 counters_get(&m.vmstat, "max_bytes"))
		say("%llu MiB of the tree's memory was outside uswap's management at the end, more than --max (%llu MiB): the budget did not limit it (anon_unmanaged_bytes)",
		    (unsigned long long)(counters_get(&m.vmstat, "anon_unmanaged_bytes") >> 20),
		    (unsigned long long)(counters_get(&m.vmstat, "max_bytes") >> 20));
	stats_merged_free(&m);
	if (dir)
		stats_dir_remove(dir);
}
