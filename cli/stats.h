/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the CLI's cross-file prototypes, grouped by the file that
 * defines them: what uswap.c shares with the others, what uswap says
 * about itself (help.c), PROG's environment (env.c), the statistics of a tree and their directory (stats.c), a
 * running tree (tree.c), the stat and top commands (stat.c) and what they
 * print (show.c).
 *
 * Every process of a tree writes its counters as one JSON document
 * (uswap_stats_write_json()) into the tree's statistics directory:
 * <pid>.live.json every half second while it runs (preload/live.c), and
 * <pid>.json when it exits.  stats.c reads such documents and merges them
 * into the tree's totals.
 */
#ifndef USWAP_CLI_STATS_H
#define USWAP_CLI_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "json.h"

struct uswap_options;

/* ---- uswap.c ---------------------------------------------------------- */

/* uswap run's exit status when it cannot start PROG. */
#define EXIT_CANNOT_RUN	125

/* "uswap: " and the message on stderr. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The directory for temporary files: $TMPDIR, else /tmp. */
const char *cli_tmp_dir(void);

/* ---- help.c ----------------------------------------------------------- */

/* The synopsis of every command, for a usage error. */
extern const char help_usage[];

/* --help: the commands, every option that is not hidden, and the rest. */
void help_print(FILE *f);

/*
 * The option list of docs/uswap.1, in roff: one block per option (hidden
 * ones too) and one of their variables, each between marker comments
 * ".\" <option NAME>" and ".\" </option NAME>" ("<environment>"), for
 * "make docs" to put into the man page and scripts/lint to compare.
 */
void help_print_man(FILE *f);

/* ---- env.c ------------------------------------------------------------ */

/*
 * The path of the preload library: next to the uswap executable, else in
 * ../lib/uswap/ from there.  Exits 125 if neither.
 */
char *env_find_preload(void);

/* setenv(3) that exits 125 when it fails. */
void env_set(const char *name, const char *value);

/*
 * Set PROG's environment: preload first in LD_PRELOAD, the options of o
 * that were given as USWAP_* variables (the others unset), and stats_dir
 * (unless NULL) as USWAP_STATS_DIR.  Exits 125 when it cannot.
 */
void env_export(const struct uswap_options *o, const char *preload,
		const char *stats_dir);

/* ---- stats.c ---------------------------------------------------------- */

struct counter {
	char *name;
	uint64_t v;
};

/* Named counters in the order first seen. */
struct counters {
	struct counter *c;
	size_t n;
};

/*
 * The "reaped" section of the documents of one budget: the counters of
 * the tree's processes that ended without writing theirs, the largest
 * value seen of each (every document carries the tree's totals as they
 * were when it was written).
 */
struct reaped {
	char *budget;
	struct counters vmstat, latency;
	struct counters members;	/* member entry: last occupancy folded */
	uint64_t processes;
};

/*
 * The documents of several processes, merged.  vmstat and latency hold
 * the documents' sums plus, once, each budget's reaped totals.
 */
struct merged {
	struct counters vmstat, latency;
	struct json_value **docs;	/* every document merged: owned here */
	size_t nr_docs;
	uint64_t rss_peak_kib;
	struct reaped *reaped;		/* per budget */
	size_t nr_reaped;
};

/* Which files of a statistics directory stats_merge_dir() reads. */
enum stats_kind {
	STATS_FINAL,		/* <pid>.json: written at exit */
	STATS_LIVE,		/* <pid>.live.json: rewritten while running */
};

/*
 * Add v to the counter name (or take the larger, with take_max); false
 * when out of memory.
 */
bool counters_add(struct counters *cs, const char *name, uint64_t v,
		  bool take_max);
/* The counter name, or 0. */
uint64_t counters_get(const struct counters *cs, const char *name);

/* Is name a level or a limit (_peak, _bytes) rather than an event count? */
bool counter_is_level(const char *name);

/*
 * The pid of a statistics file name ("123.json", "123.live.json") of the
 * kind given, or 0 when the name is not one.
 */
int stats_file_pid(const char *name, enum stats_kind kind);

/*
 * The whole of file name in dirfd (or a path), or of what is left to read
 * of fd, if it holds at most max bytes: malloc'd and NUL-terminated (*lenp
 * excludes the NUL), or NULL with errno set (EFBIG: more than max).
 */
char *stats_read_file(int dirfd, const char *name, size_t max, size_t *lenp);
char *stats_read_fd(int fd, size_t max, size_t *lenp);

/* The most a statistics file may hold: a process's is a few KiB. */
#define STATS_FILE_MAX		(1 << 20)
#define STATS_FILE_MAX_TEXT	"1 MiB"

/*
 * The statistics file name in dfd, read as a file that someone else may
 * have put there: opened without following a link or waiting (a FIFO),
 * and read only if it is a regular file of owner's of at most
 * STATS_FILE_MAX bytes.  Returns its text (as stats_read_fd()) and its
 * stat in *st; or NULL, and in *why what it is instead (NULL when it is
 * just gone).
 */
char *stats_file_read(int dfd, const char *name, uid_t owner, size_t *lenp,
		      struct stat *st, const char **why);

/*
 * Add one process's document to m, which takes it over (also on failure:
 * it is freed by stats_merged_free()); false when out of memory.
 */
bool stats_merge_doc(struct merged *m, struct json_value *doc);

/* The number of processes m counts: its documents and those reaped. */
uint64_t stats_processes(const struct merged *m);

/*
 * Read the files of one kind in dir into m.  A file that cannot be read
 * or parsed (a process killed while writing it) is skipped, with a warning
 * when verbose.  Returns 0, or -errno when dir cannot be read.
 */
int stats_merge_dir(const char *dir, enum stats_kind kind, struct merged *m,
		    bool verbose);

/* Write cs as a JSON object, indented for a member of the top level. */
void stats_write_counters(FILE *f, const struct counters *cs);

/*
 * Write the members of the merged document ("vmstat", "swaps",
 * "fault_latency_us", "process"), without the enclosing braces.
 */
void stats_write_members(FILE *f, const struct merged *m);

/* Write m as one JSON object. */
void stats_write_merged(FILE *f, const struct merged *m);

/*
 * Write m to file: into a new file of a random name in its directory
 * (O_EXCL, no link followed), then rename(2) over file, which replaces a
 * link there rather than what it points to (and says so).  0 or -errno.
 */
int stats_write_file(const char *file, const struct merged *m);

void stats_merged_free(struct merged *m);

/*
 * Make uswap run's statistics directory in cli_tmp_dir() (0700), after
 * removing those of runs that were killed, and hold it open (close on
 * exec) until stats_dir_remove(): uswap stat and top find it there.
 * Returns its absolute path (malloc'd), or NULL after saying why not;
 * exits 125 instead when needed.
 */
char *stats_dir_create(bool needed);

/* Remove dir and the files in it. */
void stats_dir_remove(const char *dir);

/*
 * When PROG has ended: merge the final documents in dir (NULL: PROG ran
 * without uswap) into opt's --stats file and --verbose summary, and
 * remove dir.
 */
void stats_dir_finish(const char *dir, const struct uswap_options *opt);

/* ---- tree.c ----------------------------------------------------------- */

/* Exit statuses of uswap stat and top besides 0 and 2 (usage). */
#define EXIT_NO_TREE	1	/* no such tree, or it has ended */
#define EXIT_DENIED	3	/* another user's process */

/* A running tree. */
struct tree {
	char *dir;		/* the statistics directory, as /proc shows it */
	int dfd;		/* the directory itself, open; -1 if none */
	uid_t uid;		/* its owner: the tree's user */
	pid_t run_pid;		/* uswap run; 0 if not found */
	pid_t prog_pid;		/* its PROG, or the process given */
	char cmd[512];		/* PROG's command line */
	pid_t *noted;		/* processes whose file was skipped, said once */
	size_t nr_noted;
};

/* One process of a tree, as it last published. */
struct proc_view {
	pid_t pid;
	char comm[32];
	char budget[64];	/* the budget it charges; "" if unknown */
	struct json_value *doc;	/* its document: owned by the view's merged */
	struct timespec mtime;	/* when the process wrote it */
};

/* What the running processes of a tree published, merged. */
struct view {
	struct merged m;
	struct proc_view *procs;	/* by pid; docs in m in the same order */
	size_t nr;
};

/*
 * The tree of pid (uswap run's, or any process's of the tree), or without
 * pid (0) the one tree found in /proc.  Returns 0, or after saying why
 * not, EXIT_NO_TREE or EXIT_DENIED.  Free with tree_free().
 */
int tree_find(pid_t pid, struct tree *t);
void tree_free(struct tree *t);

/*
 * Read what the tree's running processes published into v (zeroed).
 * Returns 0, or -ENOENT when the tree has ended.  Free with view_free()
 * in either case.
 */
int view_read(struct tree *t, struct view *v);
void view_free(struct view *v);

/* The number obj.name of a process's document (obj NULL: the top), or 0. */
uint64_t doc_get(const struct json_value *doc, const char *obj,
		 const char *name);
/* The counter name ("vmstat") of a process's document, or 0. */
uint64_t doc_counter(const struct json_value *doc, const char *name);
/* The sum of a counter over the processes of v. */
uint64_t view_sum(const struct view *v, const char *name);

/* ---- stat.c ----------------------------------------------------------- */

/* uswap stat [--json] [PID] and uswap top [-d SECONDS] [-n COUNT] [PID]. */
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
/* debug.c: uswap debug. */
int cmd_debug(int argc, char **argv);
/* gc.c: uswap gc SPEC... */
int cmd_gc(int argc, char **argv);

/* The rates top shows, per second, of the counters rate_counter[] names. */
enum rate_id {
	RATE_FAULT, RATE_SWPIN, RATE_SWPOUT, RATE_ZSWPIN, RATE_ZSWPOUT,
	NR_RATES
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

/* The state of process pid in r (r may be NULL), or NULL. */
const struct rate_state *rates_find(const struct rates *r, pid_t pid);

/* The tree's rate k: the sum over the processes; false if none has one. */
bool rates_sum(const struct rates *r, int k, double *sum);

/* ---- show.c ----------------------------------------------------------- */

/*
 * s as it may go to a terminal, in buf: control characters (C0, DEL, C1)
 * and bytes that are not UTF-8 as \xNN, the backslash as \\, the rest as
 * it is; cut at a whole character to fit size.  Returns buf.  Every string
 * that a program of a tree, or its user, could have chosen goes through it.
 */
const char *term_safe(const char *s, char *buf, size_t size);

/* Print the view v of tree t as text; r: top's rates, NULL for stat. */
void show_view(FILE *f, const struct tree *t, const struct view *v,
	       const struct rates *r);

/* Print the view v of tree t as one JSON object (stat --json). */
void show_json(FILE *f, const struct tree *t, const struct view *v);

#endif /* USWAP_CLI_STATS_H */
