// SPDX-License-Identifier: MIT
/*
 * debug.c - uswap debug: hold a running process's memory resident while a
 * debugger (or any command) looks at it.
 *
 *   uswap debug [--timeout SECONDS] PID [COMMAND [ARG...]]
 *
 * A debugger reads another process's memory through /proc/PID/mem or
 * ptrace, which cannot fault in what uswap swapped out (they get EIO
 * there), and it stops every thread of the process, uswap's fault threads
 * with the rest.  So the memory must be resident before it attaches:
 * uswap debug asks PID's runtime to bring every swapped folio back and
 * to evict nothing until COMMAND ends (uswap_hold_pid: the budget lets
 * the memory in past --max, counted as hold_overrun), runs COMMAND
 * (default: gdb -p PID), and lets go when it ends.  If uswap debug dies
 * first, PID's runtime notices within a second and lets go itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uswap.h"
#include "stats.h"

#define EXIT_NOT_HELD	1
#define EXIT_USAGE	2
#define EXIT_DENIED_PID	3
#define EXIT_NOEXEC	126
#define EXIT_NOTFOUND	127

static const char debug_help[] =
"Usage: uswap debug [--timeout SECONDS] PID [COMMAND [ARG...]]\n"
"\n"
"Make the memory of PID, a process that uswap run runs, resident and keep\n"
"it so while COMMAND runs (default: gdb -p PID), then let it be swapped\n"
"again.  A debugger reads a process's memory through /proc/PID/mem or\n"
"ptrace, which get an error (EIO, \"Cannot access memory\") where uswap\n"
"has swapped it out; with uswap debug they read all of it, and may write.\n"
"While it is held, PID's managed memory is not limited by --max: every\n"
"swapped page comes back, and new faults are let in past the budget\n"
"(counted as hold_overrun); the tree's other processes keep to it.\n"
"\n"
"  --timeout SECONDS  wait at most that long for the memory to come back;\n"
"                     default: as long as PID runs\n"
"  -h, --help         print this help and exit\n"
"\n"
"Exit status:\n"
"  N    COMMAND exited with status N (128 + the signal that killed it)\n"
"  1    PID's memory could not be held: PID is not in a uswap tree, has\n"
"       ended, is held by another uswap debug, or the time ran out\n"
"  2    usage error\n"
"  3    PID is another user's process: its descriptors cannot be opened\n"
"  126  COMMAND could not be executed\n"
"  127  COMMAND was not found\n";

static void __attribute__((noreturn, format(printf, 1, 2)))
debug_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("uswap debug: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'uswap debug --help'.\n", stderr);
	exit(EXIT_USAGE);
}

/* A whole positive number that fits an int, or -1. */
static long parse_pid(const char *s)
{
	char *end;
	long v;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v <= 0 || v > INT_MAX ? -1 : v;
}

/* Run argv and wait for it; its exit status as a shell gives it. */
static int run_command(char **argv)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int status, e, pfd[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC)) {
		say("pipe: %s", strerror(errno));
		return EXIT_NOEXEC;
	}
	/* Ctrl-C belongs to the debugger while it runs. */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		say("fork: %s", strerror(errno));
		return EXIT_NOEXEC;
	}
	if (!pid) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		close(pfd[0]);
		execvp(argv[0], argv);
		e = errno;
		(void)!write(pfd[1], &e, sizeof(e));
		_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (n == sizeof(e)) {
		say("%s: %s", argv[0], strerror(e));
		return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_NOEXEC;
}

int cmd_debug(int argc, char **argv)
{
	char pidstr[16], *dflt[] = { "gdb", "-p", pidstr, NULL }, **cmd;
	unsigned timeout_ms = 0;
	struct uswap_hold *h;
	uint64_t pages = 0;
	long pid;
	int i = 0, err, rc;

	while (i < argc && argv[i][0] == '-') {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(debug_help, stdout);
			return fflush(stdout) ? 1 : 0;
		}
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--timeout") || !strncmp(a, "--timeout=", 10)) {
			const char *v = a[9] == '=' ? a + 10 : NULL;
			char *end;
			double s;

			if (!v && ++i >= argc)
				debug_usage("option '--timeout' needs a value");
			v = v ? v : argv[i];
			s = strtod(v, &end);
			if (!*v || *end || !(s > 0) || s > 86400)
				debug_usage("--timeout: \"%s\" is not a number of seconds (more than 0, at most 86400)",
					    v);
			timeout_ms = (unsigned)(s * 1000 + 0.5);
			if (!timeout_ms)
				timeout_ms = 1;
			i++;
			continue;
		}
		debug_usage("unknown option '%s'", a);
	}
	if (i >= argc)
		debug_usage("no PID");
	pid = parse_pid(argv[i]);
	if (pid < 0)
		debug_usage("\"%s\" is not a process id", argv[i]);
	i++;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	snprintf(pidstr, sizeof(pidstr), "%ld", pid);
	cmd = i < argc ? argv + i : dflt;

	err = uswap_hold_pid((int)pid, timeout_ms, &h, &pages);
	switch (err) {
	case 0:
		break;
	case -ESRCH:
		say("%ld is not a process of a uswap tree (or it has ended)", pid);
		return EXIT_NOT_HELD;
	case -EACCES:
	case -EPERM:
		say("cannot open the descriptors of %ld: %s (another user's process?)",
		    pid, strerror(-err));
		return EXIT_DENIED_PID;
	case -EBUSY:
		say("%ld is held by another uswap debug", pid);
		return EXIT_NOT_HELD;
	case -ETIMEDOUT:
		say("%ld's memory did not all come back within the --timeout", pid);
		return EXIT_NOT_HELD;
	default:
		say("%ld's memory could not be held: %s", pid, strerror(-err));
		return EXIT_NOT_HELD;
	}
	say("%ld's memory is resident (%llu swapped pages, %llu MiB, brought back) until %s ends",
	    pid, (unsigned long long)pages, (unsigned long long)(pages >> 8),
	    cmd[0]);
	rc = run_command(cmd);
	uswap_hold_release(h);
	return rc;
}
