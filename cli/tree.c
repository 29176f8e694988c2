// SPDX-License-Identifier: MIT
/*
 * tree.c - a running uswap tree: finding it, and reading what its
 * processes publish (for uswap stat and top).
 *
 * Finding it.  The statistics directory is named in /proc/PID/environ of
 * every process of the tree.  Not in uswap run's own: /proc shows the
 * environment a process was started with, and uswap run sets the variable
 * for PROG only; for uswap run's pid, the directory is that of its child.
 * uswap run is told by its command line ("uswap run ..."), and found from
 * a process of the tree among its ancestors.  Without a pid, /proc is
 * searched for the directories that the processes this user may inspect
 * name.
 *
 * Reading it.  Every process rewrites <pid>.live.json every half second
 * (preload/live.c).  The files of processes that still run and still name
 * the directory are read (a process killed by a signal leaves its last
 * file behind, and its pid may be reused), each with when it was written
 * (its mtime) and the budget its process charges, and merged as uswap run
 * merges the final files (stats.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stats.h"

#define ENV_PREFIX	"USWAP_STATS_DIR="
#define RUN_DEPTH	64	/* ancestors searched for uswap run */

/* ---- /proc ------------------------------------------------------------ */

/* /proc/PID/NAME, whole and NUL-terminated (malloc'd); 0 or -errno. */
static int proc_read(pid_t pid, const char *name, char **text, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	*text = stats_read_file(AT_FDCWD, path, len);
	return *text ? 0 : -errno;
}

/*
 * The statistics directory that PID's environment names: 0 and *dir
 * (malloc'd); -ENODATA when it names none, -ESRCH when there is no such
 * process, -EACCES when it is another user's.
 */
static int proc_stats_dir(pid_t pid, char **dir)
{
	const size_t plen = strlen(ENV_PREFIX);
	char *env, *p;
	size_t len;
	int err = proc_read(pid, "environ", &env, &len);

	*dir = NULL;
	if (err == -ENOENT)
		return -ESRCH;
	if (err == -EPERM)
		return -EACCES;
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
	if (proc_read(pid, "cmdline", &text, &len))
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
 * The budget PID charges: the name of the memfd that holds it, as
 * /proc/PID/maps shows it ("uswap-tree-..."); "" if not found.  Processes
 * forked from one another share a budget (memcontrol.c).
 */
static void proc_budget(pid_t pid, char *buf, size_t size)
{
	const char *p;
	char *text;
	size_t len;

	buf[0] = 0;
	if (proc_read(pid, "maps", &text, &len))
		return;
	p = strstr(text, "/memfd:uswap-tree-");
	if (p) {
		p += strlen("/memfd:");
		snprintf(buf, size, "%.*s", (int)strcspn(p, " \n"), p);
	}
	free(text);
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

static bool pid_alive(pid_t pid)
{
	return !kill(pid, 0) || errno == EPERM;
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

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* ---- finding the tree ------------------------------------------------- */

/* A child of parent that names a statistics directory. */
struct child_search {
	pid_t parent, found;
	char *dir;
	bool denied;		/* a child's environment could not be read */
};

static void child_check(pid_t pid, void *arg)
{
	struct child_search *cs = arg;
	int err;

	if (cs->found || proc_ppid(pid) != cs->parent)
		return;
	err = proc_stats_dir(pid, &cs->dir);
	if (!err)
		cs->found = pid;
	cs->denied |= err == -EACCES;
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

/* The tree of pid: 0, or an exit status after saying why not. */
static int tree_from_pid(pid_t pid, struct tree *t)
{
	struct child_search cs = { .parent = pid };
	int err;

	if (proc_is_uswap_run(pid)) {
		proc_each(child_check, &cs);
		if (!cs.found && cs.denied) {
			say("cannot read the environment of the processes of uswap run %d: %s (another user's processes?)",
			    (int)pid, strerror(EACCES));
			return EXIT_DENIED;
		}
		if (!cs.found) {
			say("uswap run %d has no PROG running (it is starting or ending)",
			    (int)pid);
			return EXIT_NO_TREE;
		}
		t->dir = cs.dir;
		t->run_pid = pid;
		t->prog_pid = cs.found;
	} else {
		err = proc_stats_dir(pid, &t->dir);
		if (err == -ESRCH) {
			say("no process %d", (int)pid);
			return EXIT_NO_TREE;
		}
		if (err == -EACCES) {
			say("cannot read the environment of process %d: %s (another user's process?)",
			    (int)pid, strerror(EACCES));
			return EXIT_DENIED;
		}
		if (err == -ENODATA) {
			say("process %d is not in a uswap tree (no USWAP_STATS_DIR in its environment)",
			    (int)pid);
			return EXIT_NO_TREE;
		}
		if (err) {
			say("cannot read the environment of process %d: %s",
			    (int)pid, strerror(-err));
			return EXIT_NO_TREE;
		}
		t->run_pid = find_run(pid, &t->prog_pid);
	}
	if (!is_dir(t->dir)) {
		say("the uswap run of process %d has ended (its statistics directory %s is gone)",
		    (int)pid, t->dir);
		return EXIT_NO_TREE;
	}
	proc_cmdline(t->prog_pid, t->cmd, sizeof(t->cmd));
	return 0;
}

/* The statistics directories named in /proc, with a process of each. */
struct tree_list {
	struct found_tree {
		char *dir;
		pid_t pid;	/* the smallest pid that names it */
		unsigned nr;	/* processes that name it */
	} *v;
	size_t n;
};

static void tree_list_check(pid_t pid, void *arg)
{
	struct tree_list *l = arg;
	struct found_tree *v;
	char *dir;
	size_t i;

	if (proc_stats_dir(pid, &dir))
		return;
	for (i = 0; i < l->n; i++) {
		if (!strcmp(l->v[i].dir, dir)) {
			l->v[i].nr++;
			if (pid < l->v[i].pid)
				l->v[i].pid = pid;
			free(dir);
			return;
		}
	}
	v = is_dir(dir) ? realloc(l->v, (l->n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(dir);
		return;
	}
	l->v = v;
	v[l->n++] = (struct found_tree){ .dir = dir, .pid = pid, .nr = 1 };
}

/* Without PID: the one tree found, else say which there are. */
static int tree_search(struct tree *t)
{
	struct tree_list l = { 0 };
	char cmd[256];
	pid_t run, top;
	size_t i;
	int ret = EXIT_NO_TREE;

	proc_each(tree_list_check, &l);
	if (l.n == 1)
		ret = tree_from_pid(l.v[0].pid, t);
	else if (!l.n)
		say("no uswap tree is running (among the processes this user may inspect)");
	else
		say("%zu uswap trees are running; give the PID of one:", l.n);
	for (i = 0; l.n > 1 && i < l.n; i++) {
		run = find_run(l.v[i].pid, &top);
		proc_cmdline(top, cmd, sizeof(cmd));
		fprintf(stderr, "  %7d  %s(%u process%s) %s\n",
			(int)(run ? run : top), run ? "uswap run " : "",
			l.v[i].nr, l.v[i].nr == 1 ? "" : "es", cmd);
	}
	for (i = 0; i < l.n; i++)
		free(l.v[i].dir);
	free(l.v);
	return ret;
}

int tree_find(pid_t pid, struct tree *t)
{
	return pid ? tree_from_pid(pid, t) : tree_search(t);
}

void tree_free(struct tree *t)
{
	free(t->dir);
	t->dir = NULL;
}

/* ---- reading it ------------------------------------------------------- */

/*
 * Is pid still a process of the tree?  It runs and names the directory
 * (a reused pid would not); if its environment cannot be read, that it
 * runs must do.
 */
static bool tree_has(const struct tree *t, pid_t pid)
{
	char *dir;
	int err = proc_stats_dir(pid, &dir);
	bool yes = !err && !strcmp(dir, t->dir);

	free(dir);
	return yes || (err == -EACCES && pid_alive(pid));
}

static int proc_view_cmp(const void *a, const void *b)
{
	const struct proc_view *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * Parse one live file into v, with its mtime (of the same file: it may be
 * replaced meanwhile); skip what cannot be read.
 */
static void view_add(struct view *v, int dfd, const char *name, pid_t pid)
{
	struct proc_view *procs;
	struct json_value *doc;
	struct stat st;
	char *text = NULL;
	size_t len;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (!fstat(fd, &st))
		text = stats_read_fd(fd, &len);
	close(fd);
	if (!text)
		return;
	if (json_parse(text, len, &doc, NULL, 0) || doc->type != JSON_OBJECT) {
		json_free(doc);
		free(text);
		return;
	}
	free(text);
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
	proc_budget(pid, procs[v->nr].budget, sizeof(procs[v->nr].budget));
	v->nr++;
}

/*
 * Read the live files of the tree's running processes into v.  Returns
 * 0, or -ENOENT when the tree has ended (its directory is gone, or uswap
 * run has gone and no process runs).
 */
int view_read(const struct tree *t, struct view *v)
{
	struct dirent *de;
	DIR *d = opendir(t->dir);
	size_t i;
	int pid;

	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		pid = stats_file_pid(de->d_name, STATS_LIVE);
		if (pid > 0 && tree_has(t, pid))
			view_add(v, dirfd(d), de->d_name, pid);
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
