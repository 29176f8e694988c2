// SPDX-License-Identifier: MIT
/*
 * stat.c - uswap stat and uswap top: show a running tree.
 *
 * tree.c finds the tree and reads what its processes published; show.c
 * shows it.  This runs the commands: stat shows the tree once, as text or
 * one JSON object (--json); top redraws it every interval, in place on a
 * terminal, until q, a signal, the last frame or the tree's end, and
 * computes rates per process, between the latest two snapshots of each
 * (told apart by their files' mtimes), so that a process that starts or
 * ends does not make the sums jump.
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
"tree is that of the uswap run this user may inspect: if several run, they\n"
"are listed.  A file of the tree's statistics directory that is not a\n"
"regular file of the tree's user, of at most 1 MiB, is skipped with a note;\n"
"control characters are shown as \\xNN.\n"
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
"  3   PID is another user's process: its uswap run's descriptors or its\n"
"      memory map cannot be read\n";

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

static const char *const rate_counter[NR_RATES] = {
	[RATE_FAULT] = "pgfault",
	[RATE_SWPIN] = "pswpin",
	[RATE_SWPOUT] = "pswpout",
	[RATE_ZSWPIN] = "zswpin",
	[RATE_ZSWPOUT] = "zswpout",
};

static double ts_diff(struct timespec a, struct timespec b)
{
	return (double)(a.tv_sec - b.tv_sec) +
	       (double)(a.tv_nsec - b.tv_nsec) / 1e9;
}

const struct rate_state *rates_find(const struct rates *r, pid_t pid)
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
bool rates_sum(const struct rates *r, int k, double *sum)
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
		show_view(stdout, &t, &v, NULL);
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
	show_view(f, t, v, r);
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
