// SPDX-License-Identifier: MIT
/*
 * signals.c - the signals that dump core: a core dump that holds the
 * program's swapped memory, and a word from uswap when one of its own
 * threads crashes.
 *
 * The kernel writes a core dump from the dying process's page tables,
 * without faulting anything in: a folio uswap has swapped out would be
 * written as zeros.  So for each signal whose default action dumps core
 * (SIGQUIT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS, SIGXCPU,
 * SIGXFSZ) that the program leaves at SIG_DFL, uswap installs a handler
 * of its own (fatal_signal).  It runs in the thread that got the signal:
 *
 *  - in one of uswap's threads (crash.c marks them), it was uswap's own
 *    fault: it writes one line saying so (which thread, which signal, the
 *    address) and touches nothing else;
 *  - in the program's threads, when a core dump will be written (the
 *    process is dumpable, RLIMIT_CORE allows one or core_pattern pipes it,
 *    /proc/self/coredump_filter keeps anonymous private memory), it brings
 *    the swapped memory back first (uswap_runtime_hold, up to RLIMIT_CORE
 *    bytes; the fault threads still serve, and the budget lets it in past
 *    --max, counted as hold_overrun);
 *
 * then it puts SIG_DFL back and queues the very same signal (its siginfo
 * too) to its thread: once the handler returns the signal is delivered
 * with its default action, and the process dies of it, with a core dump,
 * as it would have without uswap.
 *
 * The program's own dispositions stay its own: sigaction, signal,
 * bsd_signal and sysv_signal are interposed for those signals, so that
 * what the program sets is what the kernel runs (uswap's handler takes
 * the place of SIG_DFL only), and what they report as the old action is
 * what the program set (SIG_DFL, with its flags, where uswap's handler
 * is).  A program that sets its own handler gets every such signal as
 * without uswap, a crash of uswap's threads included.  (A handler set
 * with SA_RESETHAND goes back to the kernel's SIG_DFL once it has run, not
 * to uswap's; a program that calls rt_sigaction itself replaces uswap's.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uswap.h"
#include "crash.h"
#include "signals.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);

static const int dump_signals[] = {
	SIGQUIT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS, SIGXCPU,
	SIGXFSZ,
};

static sigaction_fn real_sigaction;
static _Atomic bool started;
/* The SIG_DFL action the program set last (its flags and mask), by signal. */
static struct sigaction program_dfl[NSIG];
/* Changes of the signals above, one at a time (never held in a handler). */
static atomic_flag change_lock = ATOMIC_FLAG_INIT;

static void fatal_signal(int sig, siginfo_t *si, void *uc);

static bool is_dump_signal(int sig)
{
	unsigned i;

	for (i = 0; i < sizeof(dump_signals) / sizeof(dump_signals[0]); i++)
		if (dump_signals[i] == sig)
			return true;
	return false;
}

static sigaction_fn next_sigaction(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return real_sigaction;
}

/*
 * uswap's handler in place of SIG_DFL: every signal blocked while it
 * runs; on the alternate stack if the thread has one (a stack overflow).
 */
static int install_ours(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	return real_sigaction(sig, &sa, NULL);
}

/* SIG_DFL, whichever member of the union names it. */
static bool is_default(const struct sigaction *sa)
{
	return sa->sa_flags & SA_SIGINFO ? !sa->sa_sigaction
					 : sa->sa_handler == SIG_DFL;
}

static bool is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == fatal_signal;
}

/*
 * With every signal blocked and the change lock held: no handler of ours
 * runs in this thread meanwhile, no other thread changes them.
 */
static void change_begin(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
	while (atomic_flag_test_and_set_explicit(&change_lock,
						 memory_order_acquire))
		;
}

static void change_end(const sigset_t *old)
{
	atomic_flag_clear_explicit(&change_lock, memory_order_release);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

void signals_start(void)
{
	struct sigaction cur;
	sigset_t old;
	unsigned i;

	if (!next_sigaction() || atomic_exchange(&started, true))
		return;
	change_begin(&old);
	for (i = 0; i < sizeof(dump_signals) / sizeof(dump_signals[0]); i++) {
		int sig = dump_signals[i];

		if (!real_sigaction(sig, NULL, &cur) && is_default(&cur)) {
			program_dfl[sig] = cur;
			install_ours(sig);
		}
	}
	change_end(&old);
}

EXPORT int sigaction(int sig, const struct sigaction *act,
		     struct sigaction *oldact)
{
	struct sigaction cur;
	sigset_t old;
	int ret = 0;

	if (!next_sigaction()) {
		errno = ENOSYS;
		return -1;
	}
	if (!atomic_load(&started) || sig <= 0 || sig >= NSIG ||
	    !is_dump_signal(sig))
		return real_sigaction(sig, act, oldact);
	change_begin(&old);
	if (real_sigaction(sig, NULL, &cur)) {
		ret = -1;
		goto out;
	}
	if (act && is_default(act)) {
		ret = install_ours(sig);
		if (!ret)
			program_dfl[sig] = *act;
	} else if (act) {
		ret = real_sigaction(sig, act, NULL);
	}
	if (!ret && oldact)
		*oldact = is_ours(&cur) ? program_dfl[sig] : cur;
out:
	change_end(&old);
	return ret;
}

/*
 * signal() and its kin for the signals above, through sigaction as the C
 * library's do; the C library's own for the others.
 */
static sighandler_fn set_handler(const char *name, int sig, sighandler_fn h,
				 int flags, bool mask_self)
{
	sighandler_fn (*next)(int, sighandler_fn);
	struct sigaction sa, old;

	if (!atomic_load(&started) || !is_dump_signal(sig)) {
		next = (sighandler_fn (*)(int, sighandler_fn))dlsym(RTLD_NEXT,
								    name);
		if (next)
			return next(sig, h);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (mask_self && sig > 0 && sig < NSIG)
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old))
		return SIG_ERR;
	return old.sa_flags & SA_SIGINFO ? (sighandler_fn)(void *)old.sa_sigaction
					 : old.sa_handler;
}

EXPORT sighandler_fn signal(int sig, sighandler_fn h)
{
	return set_handler("signal", sig, h, SA_RESTART, true);
}

/* Gone from the C library's headers, still in its symbols. */
sighandler_fn bsd_signal(int sig, sighandler_fn h);
EXPORT sighandler_fn bsd_signal(int sig, sighandler_fn h)
{
	return set_handler("bsd_signal", sig, h, SA_RESTART, true);
}

EXPORT sighandler_fn sysv_signal(int sig, sighandler_fn h)
{
	return set_handler("sysv_signal", sig, h, SA_RESETHAND | SA_NODEFER,
			   false);
}

/* A whole small file (a few bytes of /proc) into buf; its length or 0. */
static size_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? (size_t)n : 0;
}

/*
 * Will the kernel write a core dump of this process's anonymous memory,
 * and how much of it: *limit gets the bytes (RLIMIT_CORE; none for a
 * pipe in core_pattern, which the kernel does not limit).
 */
static bool core_expected(uint64_t *limit)
{
	struct rlimit rl;
	char buf[16];

	if (prctl(PR_GET_DUMPABLE) <= 0)
		return false;
	if (read_small("/proc/self/coredump_filter", buf, sizeof(buf)) &&
	    !((buf[strlen(buf) > 1 ? strlen(buf) - 2 : 0] - '0') & 1))
		return false;	/* anonymous private memory not dumped */
	if (getrlimit(RLIMIT_CORE, &rl))
		return false;
	*limit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
	if (read_small("/proc/sys/kernel/core_pattern", buf, sizeof(buf)) &&
	    buf[0] == '|') {
		if (rl.rlim_cur == 1)
			return false;	/* the kernel's "no pipe dump" */
		*limit = UINT64_MAX;
	}
	return *limit > 0;
}

/* Bring the swapped memory back for the core, and say what came of it. */
static void hold_for_core(int sig)
{
	struct uswap_runtime *rt = preload_runtime_now();
	struct crash_line l;
	uint64_t limit, pages = 0;
	char num[24];
	int err;

	if (!rt || !core_expected(&limit))
		return;
	err = uswap_runtime_hold(rt, 0, limit, &pages);
	if (!err && !pages)
		return;
	crash_line_start(&l);
	crash_line_str(&l, crash_signame(sig, num, sizeof(num)));
	if (err) {
		crash_line_str(&l, ": the swapped memory could not all be brought back for the core dump (");
		crash_line_str(&l, strerror(-err));
		crash_line_str(&l, "): what was not reads as zeros in it");
	} else {
		crash_line_str(&l, ": ");
		crash_line_u64(&l, pages);
		crash_line_str(&l, " swapped pages (");
		crash_line_u64(&l, pages >> 8);
		crash_line_str(&l, " MiB) brought back for the core dump");
	}
	crash_line_write(&l);
}

/*
 * uswap's handler of a signal the program leaves at SIG_DFL.  Signals
 * sent by another process (si_code <= 0) to a thread of uswap are not its
 * crash: uswap's threads block every signal but their own faults.
 */
static void fatal_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction dfl;
	bool ours = crash_thread_name() &&
		    (si->si_code > 0 || si->si_pid == getpid());

	if (ours)
		crash_report(sig, si, uc);
	else
		hold_for_core(sig);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(sig, &dfl, NULL);
	/* Delivered when this returns (it is blocked until then). */
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), sig,
		    si))
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	errno = saved;
}
