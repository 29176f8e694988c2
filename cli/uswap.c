// SPDX-License-Identifier: MIT
/*
 * uswap.c - the uswap command: run a program with application-level swap.
 *
 *   uswap run [OPTIONS] [--] PROG [ARGS...]
 *   uswap stat [--json] [PID]                   (stat.c: watch a running
 *   uswap top [-d SECONDS] [-n COUNT] [PID]      tree)
 *
 * uswap itself manages no memory.  It checks the options, checks that
 * userfaultfd is usable (if not, --fallback says whether PROG runs without
 * uswap or not at all), and starts PROG with libuswap_preload.so in
 * LD_PRELOAD and the options in USWAP_* variables (env.c): the
 * preload library then creates a runtime in every process of the tree.
 * While PROG runs, uswap forwards the signals sent to it; when PROG ends,
 * it merges the statistics the processes wrote (one JSON file each, in a
 * private directory named by USWAP_STATS_DIR: stats.c) and exits as
 * PROG did.
 *
 * Only the public header and libc are used here, as a program of the
 * library's users would.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uswap.h"
#include "json.h"
#include "stats.h"
#include "elf.h"

#define EXIT_USAGE	2
#define EXIT_NOEXEC	126
#define EXIT_NOTFOUND	127

/* Signals passed on to PROG while it runs. */
static const int forwarded_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT,
};

void say(const char *fmt, ...)
{
	va_list ap;

	fputs("uswap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("uswap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'uswap run --help'.\n", stderr);
	exit(EXIT_USAGE);
}

static void __attribute__((noreturn)) print_help(void)
{
	help_print(stdout);
	exit(fflush(stdout) ? 1 : 0);
}

static void __attribute__((noreturn)) print_version(void)
{
	printf("uswap %s\n", USWAP_VERSION);
	exit(fflush(stdout) ? 1 : 0);
}

/* ---- options ---------------------------------------------------------- */

/* --fallback: what to do when userfaultfd is unavailable. */
enum fallback {
	FALLBACK_FAIL,		/* exit 125 without running PROG (default) */
	FALLBACK_RUN,		/* run PROG without uswap */
};

struct run_args {
	struct uswap_options opt;
	char **prog;			/* PROG and its arguments */
	enum fallback fallback;
	const char *fallback_flag;	/* --fallback's value, if given */
};

/* The runtime's option that flag (len bytes, after "--" or "-") names. */
static const struct uswap_option_desc *option_find(const char *flag,
						   size_t len, bool is_short)
{
	const struct uswap_option_desc *d;
	unsigned i;

	for (i = 0; (d = uswap_option_desc(i)); i++) {
		if (is_short ? len == 1 && d->short_name == flag[0] :
			       strlen(d->name) == len &&
			       !strncmp(d->name, flag, len))
			return d;
	}
	return NULL;
}

static enum fallback fallback_parse(const char *name, const char *val)
{
	if (!strcmp(val, "fail"))
		return FALLBACK_FAIL;
	if (!strcmp(val, "run"))
		return FALLBACK_RUN;
	usage_error("%s: \"%s\" is not a fallback (expected run or fail)",
		    name, val);
}

/*
 * --fallback run|fail is uswap run's, not the runtime's: it is parsed
 * here.  True when argv[*i] was it (and its value, if separate).
 */
static bool fallback_arg(int argc, char **argv, int *i, struct run_args *ra)
{
	const char *arg = argv[*i];

	if (strncmp(arg, "--fallback", 10) || (arg[10] && arg[10] != '='))
		return false;
	if (arg[10] == '=')
		ra->fallback_flag = arg + 11;
	else if (*i + 1 < argc)
		ra->fallback_flag = argv[++*i];
	else
		usage_error("option '--fallback' needs a value");
	ra->fallback = fallback_parse("--fallback", ra->fallback_flag);
	return true;
}

/*
 * Parse the arguments of "uswap run": flags, then PROG.  Flags win over
 * the environment: a variable whose option is given as a flag is not read
 * (so a bad value there is no error) and is replaced for PROG.  The flags
 * are set in their order twice: on a scratch copy as they come, so that
 * a bad one is reported before anything else, and over the variables at
 * the end (each --swap adds a device, as it did the first time).
 */
static void parse_run_args(int argc, char **argv, struct run_args *ra)
{
	const struct uswap_option_desc **flag_opt;
	struct uswap_options scratch;
	const char **flag_val;
	char err[512];
	int i, nr_flags = 0, k;

	flag_opt = calloc((size_t)argc + 1, sizeof(*flag_opt));
	flag_val = calloc((size_t)argc + 1, sizeof(*flag_val));
	if (!flag_opt || !flag_val) {
		say("out of memory");
		exit(EXIT_CANNOT_RUN);
	}
	uswap_options_init(&scratch);
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val = NULL;
		const struct uswap_option_desc *d;
		bool is_short;
		size_t len;

		if (!strcmp(arg, "--")) {
			i++;
			break;
		}
		if (arg[0] != '-' || !arg[1])
			break;
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			print_help();
		if (!strcmp(arg, "--version"))
			print_version();
		if (fallback_arg(argc, argv, &i, ra))
			continue;
		is_short = arg[1] != '-';
		name = arg + (is_short ? 1 : 2);
		eq = is_short ? NULL : strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		d = option_find(name, len, is_short);
		if (!d)
			usage_error("unknown option '%.*s'",
				    (int)(name - arg + (int)len), arg);
		if (eq)
			val = eq + 1;
		else if (d->metavar) {
			if (i + 1 >= argc)
				usage_error("option '--%s' needs a value",
					    d->name);
			val = argv[++i];
		}
		if (uswap_options_set(&scratch, d->name, val, err, sizeof(err)))
			usage_error("%s", err);
		flag_opt[nr_flags] = d;
		flag_val[nr_flags++] = val;
	}
	if (i >= argc)
		usage_error("no program to run");
	ra->prog = argv + i;
	if (!ra->fallback_flag && getenv("USWAP_FALLBACK"))
		ra->fallback = fallback_parse("USWAP_FALLBACK",
					      getenv("USWAP_FALLBACK"));

	for (k = 0; k < nr_flags; k++)
		unsetenv(flag_opt[k]->env);
	uswap_options_init(&ra->opt);
	if (uswap_options_from_env(&ra->opt, err, sizeof(err)))
		usage_error("%s", err);
	for (k = 0; k < nr_flags; k++) {
		if (uswap_options_set(&ra->opt, flag_opt[k]->name, flag_val[k],
				      err, sizeof(err)))
			usage_error("%s", err);
	}
	free(flag_opt);
	free(flag_val);
}

/* $TMPDIR, else /tmp. */
const char *cli_tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/*
 * Check the options as the runtime will see them.  The defaults are left
 * to the runtime (they depend on each process's start), except the swap
 * directory: it must be usable, whether given or $TMPDIR.  A bad value is
 * a usage error; an unusable directory means PROG cannot be started.
 */
static void check_options(struct run_args *ra)
{
	struct uswap_options o = ra->opt;
	char err[512], real[PATH_MAX];
	int ret;

	if (!o.swap_dir[0] && strlen(cli_tmp_dir()) < sizeof(o.swap_dir))
		strcpy(o.swap_dir, cli_tmp_dir());
	ret = uswap_options_check(&o, err, sizeof(err));
	if (ret == -EINVAL || ret == -ENAMETOOLONG)
		usage_error("%s", err);
	if (ret) {
		say("%s", err);
		exit(EXIT_CANNOT_RUN);
	}
	/* Every process of the tree must find the same directory. */
	if (ra->opt.swap_dir[0] && realpath(ra->opt.swap_dir, real) &&
	    strlen(real) < sizeof(ra->opt.swap_dir))
		strcpy(ra->opt.swap_dir, real);
	if (o.swaptab[0]) {
		/* A bad table is a usage error here, not in every process. */
		ret = uswap_swaptab_check(o.swaptab, err, sizeof(err));
		if (ret)
			usage_error("--swaptab: %s", err);
		if (realpath(o.swaptab, real) &&
		    strlen(real) < sizeof(ra->opt.swaptab))
			strcpy(ra->opt.swaptab, real);
	}
}

/* ---- what PROG needs -------------------------------------------------- */

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW	_IO(0xAA, 0x00)
#endif

/*
 * A userfaultfd as the runtime opens one (prim_uffd_open): the system
 * call, else /dev/userfaultfd; the error of the latter in *dev_err.
 */
static int open_userfaultfd(int *dev_err)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	int dev;

	*dev_err = 0;
	if (fd >= 0 || errno != EPERM)
		return fd >= 0 ? fd : -errno;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		*dev_err = errno;
		return -EPERM;
	}
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
	*dev_err = fd < 0 ? errno : 0;
	close(dev);
	return fd >= 0 ? fd : -EPERM;
}

/*
 * Open and initialise a userfaultfd, as the runtime will; on failure say
 * why and return false.
 */
static bool probe_userfaultfd(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	char sysctl[32] = "";
	int fd, err, sfd, dev_err;
	ssize_t n;

	fd = open_userfaultfd(&dev_err);
	if (fd >= 0) {
		if (!ioctl(fd, UFFDIO_API, &api)) {
			close(fd);
			return true;
		}
		err = errno;
		close(fd);
		say("userfaultfd does not work here (UFFDIO_API: %s)",
		    strerror(err));
		return false;
	}
	err = -fd;
	if (err == ENOSYS) {
		say("this kernel has no userfaultfd (built without CONFIG_USERFAULTFD, or a seccomp filter hides the system call)");
		return false;
	}
	if (err == EPERM) {
		sfd = open("/proc/sys/vm/unprivileged_userfaultfd",
			   O_RDONLY | O_CLOEXEC);
		if (sfd >= 0) {
			n = read(sfd, sysctl, sizeof(sysctl) - 1);
			sysctl[n > 0 ? n : 0] = 0;
			sysctl[strcspn(sysctl, "\n")] = 0;
			close(sfd);
		}
		if (!strcmp(sysctl, "1"))
			say("userfaultfd is not permitted for this user although vm.unprivileged_userfaultfd=1: a seccomp filter or security module forbids it");
		else
			say("userfaultfd is not permitted for this user (vm.unprivileged_userfaultfd is %s; /dev/userfaultfd: %s): an administrator can set vm.unprivileged_userfaultfd=1, give a group of the user read and write access to /dev/userfaultfd (see uswap(1)), or give the process CAP_SYS_PTRACE",
			    sysctl[0] ? sysctl : "unreadable",
			    strerror(dev_err ? dev_err : EPERM));
		return false;
	}
	say("cannot open a userfaultfd: %s", strerror(err));
	return false;
}

/*
 * Can the preload library go into PROG?  A program it cannot load into
 * would run without a budget, as if managed: with --fallback fail it is
 * not started (125); with run, the user is told it runs unmanaged.
 * Returns false when PROG runs unmanaged.
 */
static bool check_prog(const struct run_args *ra)
{
	char path[PATH_MAX], why[160];
	enum prog_kind k = prog_check(ra->prog[0], path, sizeof(path), why,
				      sizeof(why));

	if (k == PROG_DYNAMIC || k == PROG_UNKNOWN)
		return true;
	if (strcmp(path, ra->prog[0]))
		say("%s (%s) is %s: uswap cannot go into it and would not manage its memory",
		    ra->prog[0], path, why);
	else
		say("%s is %s: uswap cannot go into it and would not manage its memory",
		    ra->prog[0], why);
	if (ra->fallback == FALLBACK_FAIL) {
		say("%s was not started (--fallback run would run it without uswap)",
		    ra->prog[0]);
		exit(EXIT_CANNOT_RUN);
	}
	say("--fallback run: %s runs without uswap, with no memory budget",
	    ra->prog[0]);
	return false;
}

/* The --stats file must be creatable: its directory must be writable. */
static void check_stats_file(const char *file)
{
	char *dir = strdup(file), *slash;

	if (!dir) {
		say("out of memory");
		exit(EXIT_CANNOT_RUN);
	}
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else
		slash[slash == dir] = 0;
	if (access(dir, W_OK | X_OK)) {
		say("--stats %s: cannot write in %s: %s", file, dir,
		    strerror(errno));
		exit(EXIT_CANNOT_RUN);
	}
	free(dir);
}

/* ---- running PROG ----------------------------------------------------- */

/*
 * Start PROG.  The forwarded signals and SIGCHLD are blocked in uswap (it
 * takes them with sigwaitinfo) and restored in the child before exec.  An
 * exec failure comes back as the child's errno through a close-on-exec
 * pipe: end of file means exec succeeded.
 */
static pid_t spawn(char **prog, const sigset_t *oldmask, bool chld_ignored,
		   int *exec_err)
{
	int pfd[2], e;
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC)) {
		say("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		say("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		close(pfd[0]);
		if (chld_ignored)
			signal(SIGCHLD, SIG_IGN);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		execvp(prog[0], prog);
		e = errno;
		(void)!write(pfd[1], &e, sizeof(e));
		_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*exec_err = n == sizeof(e) ? e : 0;
	return pid;
}

/*
 * Wait for PROG, passing on the forwarded signals.  PROG runs in uswap's
 * process group, so a signal from the terminal (Ctrl-C, a window resize)
 * reaches both already: those are kernel-sent (si_code > 0) and not
 * passed on.  A signal sent with kill(2) or sigqueue(3) (si_code <= 0)
 * was meant for uswap alone, unless PROG sent it: that one is passed on.
 * (A kill(2) to the whole process group does reach PROG twice; for these
 * signals that is harmless.)
 */
static int wait_child(pid_t pid, const sigset_t *set)
{
	siginfo_t si;
	pid_t r;
	int status, sig;

	for (;;) {
		sig = sigwaitinfo(set, &si);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			say("sigwaitinfo: %s", strerror(errno));
			break;
		}
		if (sig == SIGCHLD) {
			r = waitpid(pid, &status, WNOHANG);
			if (r == pid)
				return status;
			if (r < 0 && errno != EINTR)
				break;
			continue;
		}
		if (si.si_code <= 0 && si.si_pid != pid)
			kill(pid, sig);
	}
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return r == pid ? status : (EXIT_CANNOT_RUN << 8);
}

/* Die of sig as PROG did, so that the shell sees the signal. */
static void __attribute__((noreturn)) die_of_signal(int sig)
{
	struct rlimit no_core = { 0, 0 };
	sigset_t s;

	fflush(stdout);
	fflush(stderr);
	setrlimit(RLIMIT_CORE, &no_core);	/* PROG dumped its own core */
	signal(sig, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(sig);
	/* Still alive: the signal's default is to ignore or stop. */
	exit(128 + sig);
}

static int cmd_run(int argc, char **argv)
{
	struct run_args ra = { 0 };
	struct uswap_swap_wipe *wipe = NULL;
	char *stats_dir = NULL;
	const char *preload = NULL;
	sigset_t set, oldmask;
	bool chld_ignored, managed;
	int status, exec_err;
	size_t i;
	pid_t pid;

	parse_run_args(argc, argv, &ra);
	check_options(&ra);
	managed = probe_userfaultfd();
	if (!managed && ra.fallback == FALLBACK_FAIL) {
		say("%s was not started (--fallback run would run it without uswap)",
		    ra.prog[0]);
		exit(EXIT_CANNOT_RUN);
	}
	if (!managed)
		say("--fallback run: %s runs without uswap, with no memory budget",
		    ra.prog[0]);
	else
		check_prog(&ra);	/* its children may still be managed */
	if (managed)
		preload = env_find_preload();
	if (ra.opt.stats_path[0])
		check_stats_file(ra.opt.stats_path);
	if (managed) {
		stats_dir = stats_dir_create(ra.opt.stats_path[0] ||
					     (ra.opt.flags & USWAP_OPT_VERBOSE));
		env_export(&ra.opt, preload, stats_dir);
		if (ra.fallback_flag)
			env_set("USWAP_FALLBACK", ra.fallback_flag);
		/* The named swap devices, emptied when PROG has ended. */
		wipe = uswap_swap_wipe_open(&ra.opt);
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (i = 0; i < sizeof(forwarded_signals) / sizeof(int); i++)
		sigaddset(&set, forwarded_signals[i]);
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	/* An ignored SIGCHLD would reap PROG before uswap could wait. */
	chld_ignored = signal(SIGCHLD, SIG_DFL) == SIG_IGN;

	pid = spawn(ra.prog, &oldmask, chld_ignored, &exec_err);
	if (pid < 0) {
		uswap_swap_wipe_run(wipe);
		if (stats_dir)
			stats_dir_remove(stats_dir);
		free(stats_dir);
		return EXIT_CANNOT_RUN;
	}
	status = wait_child(pid, &set);
	uswap_swap_wipe_run(wipe);
	if (exec_err) {
		say("%s: %s", ra.prog[0], strerror(exec_err));
		if (stats_dir)
			stats_dir_remove(stats_dir);
		free(stats_dir);
		return exec_err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
	}
	if (stats_dir || ra.opt.stats_path[0])
		stats_dir_finish(stats_dir, &ra.opt);
	free(stats_dir);
	if (WIFSIGNALED(status))
		die_of_signal(WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_CANNOT_RUN;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(help_usage, stderr);
		fputs("Try 'uswap --help'.\n", stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		print_help();
	if (!strcmp(argv[1], "--version"))
		print_version();
	if (!strcmp(argv[1], "--help-man")) {
		help_print_man(stdout);		/* make docs: docs/uswap.1 */
		return fflush(stdout) ? 1 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 2, argv + 2);
	if (!strcmp(argv[1], "top"))
		return cmd_top(argc - 2, argv + 2);
	if (!strcmp(argv[1], "debug"))
		return cmd_debug(argc - 2, argv + 2);
	if (!strcmp(argv[1], "gc"))
		return cmd_gc(argc - 2, argv + 2);
	fprintf(stderr, "uswap: unknown command '%s'\n%sTry 'uswap --help'.\n",
		argv[1], help_usage);
	return EXIT_USAGE;
}
