// SPDX-License-Identifier: MIT
/*
 * tree.c - a running uswap tree: finding it, and reading what its
 * processes publish (for uswap stat and top), trusting nothing that a
 * program of the tree, or its user, could have written.
 *
 * Finding it.  uswap run holds its statistics directory open while PROG
 * runs (stats.c): the directory is the one a descriptor in /proc/RUN/fd
 * leads to, named uswap-stats.RUN.*, owned by the tree's user.  Nothing a
 * program does to itself changes that: programs that set their process
 * title (redis, postgres, nginx, stress-ng) write over their arguments
 * and environment.  The uswap run of a process is the nearest of its
 * ancestors whose command line says "uswap run" (uswap run never rewrites
 * its own).  A process without one among its ancestors (a daemon that
 * left its parent) is looked for in the directory of every uswap run this
 * user may inspect, then in the one its environment names, if it still
 * names one: it is found where a file of its own names it.
 *
 * Who is in it.  Every process rewrites <pid>.live.json every half second
 * (preload/live.c); the document names its pid and the budget it charges
 * (the memfd "uswap-tree-PID-N" of memcontrol.c).  A file counts while its
 * process maps that budget (/proc/PID/maps): a process killed by a signal
 * leaves its last file behind, and its pid may be reused.  A process whose
 * maps cannot be read (another user's) counts while it runs.
 *
 * Reading it.  The tree may be another user's (root watching a user's
 * tree): its files are read only as regular files of the tree's user of
 * at most STATS_FILE_MAX bytes, opened without following a link or
 * waiting (stats_file_read()); anything else is skipped, with one note per
 * process.  Each document is merged as uswap run merges the final files
 * (stats.c), and what it says is shown escaped (show.c).
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

#include "stats.h"

#define ENV_PREFIX	"USWAP_STATS_DIR="
#define BUDGET_PREFIX	"uswap-tree-"
#define RUN_DEPTH	64		/* ancestors searched for uswap run */
#define PROC_READ_MAX	(8u << 20)	/* a command line, an environment */

/* ---- /proc ------------------------------------------------------------ */

/* /proc/PID/NAME, whole and NUL-terminated (malloc'd); 0 or -errno. */
static int proc_read(pid_t pid, const char *name, char **text, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	*text = stats_read_file(AT_FDCWD, path, PROC_READ_MAX, len);
	return *text ? 0 : -errno;
}

static bool pid_alive(pid_t pid)
{
	return pid > 0 && (!kill(pid, 0) || errno == EPERM);
}

static pid_t proc_ppid(pid_t pid)
{
	char *text, *p;
	size_t len;
	int ppid = 0;

	if (proc_read(pid, "stat", &text, &len))
		return 0;
	/* The command name may hold anything: fields follow its last ')'. */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	free(text);
	return ppid;
}

/* PID's command line, its arguments joined by spaces; "" if unknown. */
static void proc_cmdline(pid_t pid, char *buf, size_t size)
{
	char *text;
	size_t len, i;

	buf[0] = 0;
	if (pid <= 0 || proc_read(pid, "cmdline", &text, &len))
		return;
	while (len && !text[len - 1])
		len--;
	for (i = 0; i < len; i++)
		if (!text[i])
			text[i] = ' ';
	text[len] = 0;
	snprintf(buf, size, "%s", text);
	free(text);
}

static void proc_comm(pid_t pid, char *buf, size_t size)
{
	char *text;
	size_t len;

	if (proc_read(pid, "comm", &text, &len)) {
		snprintf(buf, size, "?");
		return;
	}
	text[strcspn(text, "\n")] = 0;
	snprintf(buf, size, "%s", text);
	free(text);
}

/*
 * Does PID map the budget named budget, or any budget when budget is
 * NULL (its name then in buf)?  A budget is a memfd, which maps show as
 * "/memfd:NAME (deleted)".  0 yes; -ENOENT no; -ESRCH no such process;
 * -EACCES another user's.
 */
static int proc_maps_budget(pid_t pid, const char *budget, char *buf,
			    size_t size)
{
	const char *p;
	char path[64], *line = NULL;
	size_t cap = 0, n;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (err == -ENOENT && getline(&line, &cap, f) > 0) {
		p = strstr(line, "/memfd:" BUDGET_PREFIX);
		if (!p)
			continue;
		p += strlen("/memfd:");
		n = strcspn(p, " \n");
		if (budget && (strlen(budget) != n || memcmp(p, budget, n)))
			continue;
		if (buf)
			snprintf(buf, size, "%.*s", (int)n, p);
		err = 0;
	}
	/* Reading maps is where another user's process says no. */
	if (err == -ENOENT && ferror(f))
		err = errno == EACCES || errno == EPERM ? -EACCES : -errno;
	free(line);
	fclose(f);
	return err;
}

/* Is PID a "uswap run" (whatever uswap's path)? */
static bool proc_is_uswap_run(pid_t pid)
{
	const char *base;
	char *text;
	size_t len, n0;
	bool yes;

	if (pid <= 1 || proc_read(pid, "cmdline", &text, &len))
		return false;
	n0 = strlen(text);
	base = strrchr(text, '/');
	base = base ? base + 1 : text;
	yes = n0 + 1 < len && !strcmp(base, "uswap") &&
	      !strcmp(text + n0 + 1, "run");
	free(text);
	return yes;
}

/*
 * The statistics directory that PID's environment names, if it still
 * names one (a hint, checked by the caller): 0 and *dir (malloc'd), else
 * -errno.
 */
static int proc_env_stats_dir(pid_t pid, char **dir)
{
	const size_t plen = strlen(ENV_PREFIX);
	char *env, *p;
	size_t len;
	int err = proc_read(pid, "environ", &env, &len);

	*dir = NULL;
	if (err)
		return err;
	err = -ENODATA;
	for (p = env; p < env + len; p += strlen(p) + 1) {
		if (!strncmp(p, ENV_PREFIX, plen) && p[plen]) {
			*dir = strdup(p + plen);
			err = *dir ? 0 : -ENOMEM;
			break;
		}
	}
	free(env);
	return err;
}

/* Call fn(pid, arg) for every process in /proc. */
static void proc_each(void (*fn)(pid_t pid, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	char *end;
	long pid;

	if (!d)
		return;
	while ((de = readdir(d))) {
		pid = strtol(de->d_name, &end, 10);
		if (pid > 0 && !*end)
			fn((pid_t)pid, arg);
	}
	closedir(d);
}

/* ---- the statistics directory of a uswap run -------------------------- */

static void tree_close(struct tree *t)
{
	if (t->dfd >= 0)
		close(t->dfd);
	t->dfd = -1;
	free(t->dir);
	t->dir = NULL;
}

/*
 * The statistics directory that uswap run RUN holds open: into t (dir,
 * dfd, uid).  0; -ENOENT when it holds none (starting, ending, or PROG
 * runs without uswap); -EACCES when its descriptors cannot be read.
 */
static int run_stats_dir(pid_t run, struct tree *t)
{
	char path[64], prefix[48], target[PATH_MAX];
	const char *base;
	struct stat st, pst;
	struct dirent *de;
	int fd, err = -ENOENT;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d", (int)run);
	if (stat(path, &pst))
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)run);
	d = opendir(path);
	if (!d)
		return errno == EACCES || errno == EPERM ? -EACCES : -ENOENT;
	snprintf(prefix, sizeof(prefix), "uswap-stats.%d.", (int)run);
	while (err && (de = readdir(d))) {
		n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
		/* " (deleted)": removed, the run is ending. */
		if (target[0] != '/' || strncmp(base, prefix, strlen(prefix)) ||
		    strchr(base, ' '))
			continue;
		/* The directory itself, through the descriptor: no path race. */
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISDIR(st.st_mode) ||
		    st.st_uid != pst.st_uid || !(t->dir = strdup(target))) {
			close(fd);
			continue;
		}
		t->dfd = fd;
		t->uid = st.st_uid;
		err = 0;
	}
	closedir(d);
	return err;
}

/* The first child of parent found in /proc. */
struct child_search {
	pid_t parent, found;
};

static void child_check(pid_t pid, void *arg)
{
	struct child_search *cs = arg;

	if (!cs->found && proc_ppid(pid) == cs->parent)
		cs->found = pid;
}

static pid_t run_child(pid_t run)
{
	struct child_search cs = { .parent = run };

	proc_each(child_check, &cs);
	return cs.found;
}

/*
 * The uswap run above pid, if any, and in *top the process just below
 * it (PROG), else pid itself.
 */
static pid_t find_run(pid_t pid, pid_t *top)
{
	pid_t p = proc_ppid(pid);
	int i;

	*top = pid;
	for (i = 0; i < RUN_DEPTH && p > 1; i++) {
		if (proc_is_uswap_run(p))
			return p;
		*top = p;
		p = proc_ppid(p);
	}
	*top = pid;
	return 0;
}

/* ---- who is in it ----------------------------------------------------- */

/* Say once per process why its file was skipped. */
static void tree_note(struct tree *t, pid_t pid, const char *name,
		      const char *why)
{
	char dir[PATH_MAX];
	pid_t *noted;
	size_t i;

	for (i = 0; i < t->nr_noted; i++)
		if (t->noted[i] == pid)
			return;
	noted = realloc(t->noted, (t->nr_noted + 1) * sizeof(*noted));
	if (noted) {
		t->noted = noted;
		t->noted[t->nr_noted++] = pid;
	}
	say("%s/%s: %s: skipped", term_safe(t->dir, dir, sizeof(dir)), name,
	    why);
}

/*
 * The document of process pid, from its file name in dfd (the tree's
 * directory), if pid is a process of the tree: the file is the tree's
 * user's, names pid, and pid maps the budget the file names (its name in
 * budget).  NULL if not; with note, a file that is not what it should be
 * is said.  The file's stat in *st.
 */
static struct json_value *member_doc(struct tree *t, int dfd, const char *name,
				     pid_t pid, struct stat *st, char *budget,
				     size_t size, bool note)
{
	const struct json_value *proc, *id, *b;
	struct json_value *doc;
	const char *why;
	size_t len;
	char *text = stats_file_read(dfd, name, t->uid, &len, st, &why);
	int err;

	if (!text) {
		if (why && note)
			tree_note(t, pid, name, why);
		return NULL;
	}
	err = json_parse(text, len, &doc, NULL, 0);
	free(text);
	if (err || doc->type != JSON_OBJECT) {
		if (note)
			tree_note(t, pid, name, "not a JSON object");
		json_free(doc);
		return NULL;
	}
	proc = json_get(doc, "process");
	id = json_get(proc, "pid");
	b = json_get(proc, "budget");
	if (!id || !id->is_uint || id->u != (uint64_t)pid || !b ||
	    b->type != JSON_STRING ||
	    strncmp(b->text, BUDGET_PREFIX, strlen(BUDGET_PREFIX))) {
		if (note)
			tree_note(t, pid, name, "does not name its process and budget");
		json_free(doc);
		return NULL;
	}
	err = proc_maps_budget(pid, b->text, NULL, 0);
	if (err && !(err == -EACCES && pid_alive(pid))) {
		json_free(doc);	/* left by a process that has ended */
		return NULL;
	}
	snprintf(budget, size, "%s", b->text);
	return doc;
}

/* Does t's directory have a file of pid's that makes it a member? */
static bool tree_has_member(struct tree *t, pid_t pid)
{
	char name[32], budget[64];
	struct json_value *doc;
	struct stat st;

	snprintf(name, sizeof(name), "%d.live.json", (int)pid);
	doc = member_doc(t, t->dfd, name, pid, &st, budget, sizeof(budget),
			 false);
	json_free(doc);
	return doc != NULL;
}

/* ---- finding the tree ------------------------------------------------- */

/* A uswap run whose directory has a member's file of pid's. */
struct orphan_search {
	pid_t pid;
	struct tree *t;
	bool found;
};

static void orphan_check(pid_t run, void *arg)
{
	struct orphan_search *os = arg;

	if (os->found || !proc_is_uswap_run(run) || run_stats_dir(run, os->t))
		return;
	if (tree_has_member(os->t, os->pid)) {
		os->found = true;
		os->t->run_pid = run;
	} else {
		tree_close(os->t);
	}
}

/*
 * The directory that pid's environment names, if pid is a member there
 * (uswap run may be gone: kill -9).
 */
static bool tree_from_env(pid_t pid, struct tree *t)
{
	struct stat st, pst;
	char path[64];
	char *dir;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &pst) || proc_env_stats_dir(pid, &dir))
		return false;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_uid != pst.st_uid) {
		if (fd >= 0)
			close(fd);
		free(dir);
		return false;
	}
	t->dir = dir;
	t->dfd = fd;
	t->uid = st.st_uid;
	if (tree_has_member(t, pid))
		return true;
	tree_close(t);
	return false;
}

/* The tree of pid, which has no uswap run among its ancestors. */
static int tree_of_orphan(pid_t pid, struct tree *t)
{
	struct orphan_search os = { .pid = pid, .t = t };
	char budget[64], safe[256];
	int err = proc_maps_budget(pid, NULL, budget, sizeof(budget));

	if (err == -ESRCH) {
		say("no process %d", (int)pid);
		return EXIT_NO_TREE;
	}
	if (err == -EACCES) {
		say("cannot read the memory map of process %d: %s (another user's process?)",
		    (int)pid, strerror(EACCES));
		return EXIT_DENIED;
	}
	if (err == -ENOENT) {
		say("process %d is not in a uswap tree (no uswap run above it, and it maps no uswap budget)",
		    (int)pid);
		return EXIT_NO_TREE;
	}
	if (err) {
		say("cannot read the memory map of process %d: %s", (int)pid,
		    strerror(-err));
		return EXIT_NO_TREE;
	}
	proc_each(orphan_check, &os);
	if (os.found || tree_from_env(pid, t)) {
		t->prog_pid = t->run_pid ? run_child(t->run_pid) : pid;
		return 0;
	}
	say("process %d charges the uswap budget %s, but no statistics directory of a running uswap run has it (its run has ended?)",
	    (int)pid, term_safe(budget, safe, sizeof(safe)));
	return EXIT_NO_TREE;
}

/* The tree of pid: 0, or an exit status after saying why not. */
static int tree_from_pid(pid_t pid, struct tree *t)
{
	pid_t run, top = pid;
	int err, ret;

	if (!pid_alive(pid)) {
		say("no process %d", (int)pid);
		return EXIT_NO_TREE;
	}
	run = proc_is_uswap_run(pid) ? pid : find_run(pid, &top);
	if (!run) {
		ret = tree_of_orphan(pid, t);
		if (ret)
			return ret;
	} else {
		err = run_stats_dir(run, t);
		if (err == -EACCES) {
			say("cannot read the descriptors of uswap run %d: %s (another user's process?)",
			    (int)run, strerror(EACCES));
			return EXIT_DENIED;
		}
		if (err) {
			say("uswap run %d has no statistics directory open (it is starting or ending, or runs its program without uswap)",
			    (int)run);
			return EXIT_NO_TREE;
		}
		t->run_pid = run;
		t->prog_pid = run == pid ? run_child(run) : top;
	}
	proc_cmdline(t->prog_pid, t->cmd, sizeof(t->cmd));
	return 0;
}

/* The uswap runs with a statistics directory that this user may read. */
struct run_list {
	struct found_run {
		pid_t run;
		unsigned nr;	/* processes with a live file that run */
	} *v;
	size_t n;
};

/* Processes with a live file in t's directory that still run. */
static unsigned count_live(const struct tree *t)
{
	struct dirent *de;
	unsigned nr = 0;
	int fd = openat(t->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	int pid;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		pid = stats_file_pid(de->d_name, STATS_LIVE);
		nr += pid > 0 && pid_alive(pid);
	}
	closedir(d);
	return nr;
}

static void run_list_check(pid_t pid, void *arg)
{
	struct tree t = { .dfd = -1 };
	struct run_list *l = arg;
	struct found_run *v;

	if (!proc_is_uswap_run(pid) || run_stats_dir(pid, &t))
		return;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (v) {
		l->v = v;
		v[l->n++] = (struct found_run){ .run = pid,
						.nr = count_live(&t) };
	}
	tree_close(&t);
}

/* Without PID: the one tree found, else say which there are. */
static int tree_search(struct tree *t)
{
	struct run_list l = { 0 };
	char cmd[256], safe[1024];
	size_t i;
	int ret = EXIT_NO_TREE;

	proc_each(run_list_check, &l);
	if (l.n == 1)
		ret = tree_from_pid(l.v[0].run, t);
	else if (!l.n)
		say("no uswap tree is running (among the processes this user may inspect)");
	else
		say("%zu uswap trees are running; give the PID of one:", l.n);
	for (i = 0; l.n > 1 && i < l.n; i++) {
		proc_cmdline(run_child(l.v[i].run), cmd, sizeof(cmd));
		fprintf(stderr, "  %7d  uswap run (%u process%s) %s\n",
			(int)l.v[i].run, l.v[i].nr, l.v[i].nr == 1 ? "" : "es",
			term_safe(cmd, safe, sizeof(safe)));
	}
	free(l.v);
	return ret;
}

int tree_find(pid_t pid, struct tree *t)
{
	t->dfd = -1;
	return pid ? tree_from_pid(pid, t) : tree_search(t);
}

void tree_free(struct tree *t)
{
	tree_close(t);
	free(t->noted);
	t->noted = NULL;
	t->nr_noted = 0;
}

/* ---- reading it ------------------------------------------------------- */

static int proc_view_cmp(const void *a, const void *b)
{
	const struct proc_view *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Add process pid's live file name to v, if pid is in the tree. */
static void view_add(struct tree *t, struct view *v, int dfd, const char *name,
		     pid_t pid)
{
	struct proc_view *procs;
	struct json_value *doc;
	struct stat st;
	char budget[64];

	doc = member_doc(t, dfd, name, pid, &st, budget, sizeof(budget), true);
	if (!doc)
		return;
	procs = realloc(v->procs, (v->nr + 1) * sizeof(*procs));
	if (!procs) {
		json_free(doc);
		say("out of memory reading the statistics");
		return;
	}
	v->procs = procs;
	if (!stats_merge_doc(&v->m, doc)) {
		say("out of memory reading the statistics");
		return;
	}
	procs[v->nr] = (struct proc_view){ .pid = pid, .doc = doc,
					   .mtime = st.st_mtim };
	proc_comm(pid, procs[v->nr].comm, sizeof(procs[v->nr].comm));
	snprintf(procs[v->nr].budget, sizeof(procs[v->nr].budget), "%s",
		 budget);
	v->nr++;
}

/*
 * Read the live files of the tree's running processes into v.  Returns
 * 0, or -ENOENT when the tree has ended (uswap run removed its directory,
 * or is gone and no process runs).
 */
int view_read(struct tree *t, struct view *v)
{
	struct dirent *de;
	struct stat st;
	size_t i;
	int pid, fd;
	DIR *d;

	if (t->dfd < 0 || fstat(t->dfd, &st) || !st.st_nlink)
		return -ENOENT;
	fd = openat(t->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -ENOENT;
	}
	while ((de = readdir(d))) {
		pid = stats_file_pid(de->d_name, STATS_LIVE);
		if (pid > 0 && pid_alive(pid))
			view_add(t, v, dirfd(d), de->d_name, pid);
	}
	closedir(d);
	if (!v->nr && t->run_pid && !pid_alive(t->run_pid))
		return -ENOENT;
	/* By pid, and the merged documents (swaps rows) in the same order. */
	qsort(v->procs, v->nr, sizeof(*v->procs), proc_view_cmp);
	for (i = 0; i < v->nr && v->m.nr_docs == v->nr; i++)
		v->m.docs[i] = v->procs[i].doc;
	return 0;
}

void view_free(struct view *v)
{
	stats_merged_free(&v->m);
	free(v->procs);
	v->procs = NULL;
	v->nr = 0;
}

uint64_t doc_get(const struct json_value *doc, const char *obj,
		 const char *name)
{
	const struct json_value *x = json_get(obj ? json_get(doc, obj) : doc,
					      name);

	return x && x->is_uint ? x->u : 0;
}

uint64_t doc_counter(const struct json_value *doc, const char *name)
{
	return doc_get(doc, "vmstat", name);
}

/* The sum of a counter over the processes of v. */
uint64_t view_sum(const struct view *v, const char *name)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < v->nr; i++)
		sum += doc_counter(v->procs[i].doc, name);
	return sum;
}
