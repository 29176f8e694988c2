// SPDX-License-Identifier: MIT
/*
 * crash.c - uswap's own threads, and the line a crash of one leaves.
 *
 * A fault thread, the reclaimer or a compression thread that takes a
 * fatal signal (a bug in uswap: a bad pointer, a failed assertion) would
 * kill its program with no word from uswap: the user would see the
 * program die of SIGSEGV and blame it.  Each thread uswap starts marks
 * itself (crash_thread_mark, from start_thread's trampoline), and leaves
 * its own faults unblocked (crash_sigmask: a blocked SIGSEGV from a fault
 * kills at once, without running any handler).  The preload library's
 * handler of those signals (preload/signals.c) asks crash_thread_name()
 * whose thread took it, and for one of uswap's writes crash_report()'s
 * line before the process dies of the signal as it would have.
 *
 * Everything here may run in a signal handler: the line is built on the
 * stack and written with one write(2), /proc/self/maps is read with
 * open/read into a buffer on the stack.
 *
 * raw: system calls straight to the C library, not through prim.c, whose
 * descriptor layer (fdtable.c) may be where the thread crashed.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "base.h"
#include "crash.h"
#include "fdtable.h"

/* Initial-exec TLS: nothing allocated on first use (in a handler). */
static __thread char thread_name[16] __attribute__((tls_model("initial-exec")));

void crash_thread_mark(const char *name)
{
	size_t n = strnlen(name, sizeof(thread_name) - 1);

	if (!n) {
		name = "uswap";
		n = 5;
	}
	memcpy(thread_name, name, n);
	thread_name[n] = 0;
}

const char *crash_thread_name(void)
{
	return thread_name[0] ? thread_name : NULL;
}

void crash_sigmask(sigset_t *set)
{
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGSYS);
}

void crash_line_str(struct crash_line *l, const char *s)
{
	size_t n = strlen(s);

	if (n > sizeof(l->buf) - 1 - l->len)
		n = sizeof(l->buf) - 1 - l->len;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void line_num(struct crash_line *l, uint64_t v, unsigned base)
{
	char tmp[24];
	unsigned i = sizeof(tmp) - 1;

	tmp[i] = 0;
	do {
		tmp[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && i);
	crash_line_str(l, tmp + i);
}

void crash_line_u64(struct crash_line *l, uint64_t v)
{
	line_num(l, v, 10);
}

void crash_line_hex(struct crash_line *l, uint64_t v)
{
	crash_line_str(l, "0x");
	line_num(l, v, 16);
}

void crash_line_start(struct crash_line *l)
{
	l->len = 0;
	crash_line_str(l, "uswap[");
	crash_line_u64(l, (uint64_t)getpid());
	crash_line_str(l, "]: ");
}

void crash_line_write(struct crash_line *l)
{
	l->buf[l->len++] = '\n';
	fd_stderr_write(l->buf, l->len);	/* uswap's threads have no fd 2 */
}

const char *crash_signame(int sig, char *buf, size_t len)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },
		{ SIGILL, "SIGILL" }, { SIGFPE, "SIGFPE" },
		{ SIGABRT, "SIGABRT" }, { SIGSYS, "SIGSYS" },
		{ SIGQUIT, "SIGQUIT" }, { SIGTRAP, "SIGTRAP" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
	};
	struct crash_line l = { .len = 0 };
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	crash_line_str(&l, "signal ");
	crash_line_u64(&l, (uint64_t)sig);
	l.buf[MIN(l.len, len - 1)] = 0;
	memcpy(buf, l.buf, MIN(l.len + 1, len));
	return buf;
}

static uint64_t parse_hex(const char **p)
{
	uint64_t v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps: if it maps ip, say which file and where. */
static bool maps_line(struct crash_line *l, const char *s, uint64_t ip)
{
	uint64_t start, end, off;
	const char *path;
	unsigned field;

	start = parse_hex(&s);
	if (*s++ != '-')
		return false;
	end = parse_hex(&s);
	if (ip < start || ip >= end)
		return false;
	s = strchr(s, ' ');		/* perms */
	if (!s)
		return false;
	s = strchr(s + 1, ' ');		/* offset */
	if (!s)
		return false;
	s++;
	off = parse_hex(&s);
	for (field = 0; field < 2 && s; field++)	/* dev, inode */
		s = strchr(s + 1, ' ');
	if (!s)
		return false;
	while (*s == ' ')
		s++;
	path = strrchr(s, '/');
	crash_line_str(l, " in ");
	crash_line_str(l, *s ? (path ? path + 1 : s) : "[anonymous]");
	crash_line_str(l, "+");
	crash_line_hex(l, ip - start + off);
	return true;
}

/* ", in FILE+0xOFFSET": where ip is, from /proc/self/maps. */
static void where(struct crash_line *l, uint64_t ip)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *s = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = strchr(s, '\n'))) {
			*nl = 0;
			if (maps_line(l, s, ip))
				goto out;
			s = nl + 1;
		}
		have = strlen(s);
		memmove(buf, s, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line longer than the buffer */
	}
out:
	close(fd);
}

void crash_report(int sig, const siginfo_t *si, const void *uc)
{
	const char *name = crash_thread_name();
	struct crash_line l;
	uint64_t ip = 0;
	char num[24];

#if defined(__x86_64__)
	ip = (uint64_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	ip = (uint64_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#endif
	crash_line_start(&l);
	crash_line_str(&l, "uswap's thread ");
	crash_line_str(&l, name ? name : "?");
	crash_line_str(&l, " (tid ");
	crash_line_u64(&l, (uint64_t)syscall(SYS_gettid));
	crash_line_str(&l, ") crashed: ");
	crash_line_str(&l, crash_signame(sig, num, sizeof(num)));
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) {
		crash_line_str(&l, " at address ");
		crash_line_hex(&l, (uint64_t)(uintptr_t)si->si_addr);
	}
	if (ip) {
		crash_line_str(&l, ", instruction ");
		crash_line_hex(&l, ip);
		where(&l, ip);
	}
	crash_line_str(&l, "; the process dies of it (a bug in uswap: please report it)");
	crash_line_write(&l);
}
