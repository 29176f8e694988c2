/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the CLI's cross-file prototypes, grouped by the file that
 * defines them: the statistics of a tree (stats.c), a running tree
 * (tree.c), the stat and top commands (stat.c), and what uswap.c shares
 * with them.
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
#include <sys/types.h>
#include <time.h>

#include "json.h"

/* ---- uswap.c ---------------------------------------------------------- */

/* "uswap: " and the message on stderr. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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

/* The documents of several processes, merged. */
struct merged {
	struct counters vmstat, latency;
	struct json_value **docs;	/* every document merged: owned here */
	size_t nr_docs;
	uint64_t rss_peak_kib;
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
 * of fd: malloc'd and NUL-terminated (*lenp excludes the NUL), or NULL
 * with errno set.
 */
char *stats_read_file(int dirfd, const char *name, size_t *lenp);
char *stats_read_fd(int fd, size_t *lenp);

/*
 * Add one process's document to m, which takes it over (also on failure:
 * it is freed by stats_merged_free()); false when out of memory.
 */
bool stats_merge_doc(struct merged *m, struct json_value *doc);

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

/* Write m to file, through file.tmp and rename(2); 0 or -errno. */
int stats_write_file(const char *file, const struct merged *m);

void stats_merged_free(struct merged *m);

/* ---- tree.c ----------------------------------------------------------- */

/* Exit statuses of uswap stat and top besides 0 and 2 (usage). */
#define EXIT_NO_TREE	1	/* no such tree, or it has ended */
#define EXIT_DENIED	3	/* another user's process */

/* A running tree. */
struct tree {
	char *dir;		/* the statistics directory */
	pid_t run_pid;		/* uswap run; 0 if not found */
	pid_t prog_pid;		/* its PROG, or the process given */
	char cmd[512];		/* PROG's command line */
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
int view_read(const struct tree *t, struct view *v);
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

#endif /* USWAP_CLI_STATS_H */
