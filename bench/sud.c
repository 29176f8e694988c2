// SPDX-License-Identifier: MIT
/*
 * sud - can Linux's syscall user dispatch bring raw-syscall mmaps under
 * uswap?  (docs/unmanaged.md has the findings.)
 *
 *   build/bench/sud [CALLS]
 *
 * PR_SET_SYSCALL_USER_DISPATCH makes the kernel send SIGSYS for every
 * system call a thread makes from outside one address range, while a
 * selector byte says BLOCK.  Here the range is the C library's text: the
 * handler's own calls (and the signal return) go through the C library
 * and are let through, while a system call instruction in this program's
 * text (as the Go runtime makes them) is trapped.  It prints, per call:
 *
 *   native      a raw getpid(2) from this program's text
 *   sud-allow   the same with dispatch on and the selector at ALLOW
 *   sud-trap    the same trapped: SIGSYS, the handler makes the call
 *               through the C library and writes its result back
 *   libc        getpid through the C library with dispatch on and BLOCK
 *               (inside the allowed range: not trapped)
 *
 * and whether a raw mmap(2) was seen by the handler, as the preload
 * library would need to see it to manage the mapping.  Nothing here is
 * uswap's: it measures the mechanism only.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
	puts("{\"sud\": false, \"error\": \"measured on x86_64 only\"}");
	return 0;
}
#else

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH	59
#define PR_SYS_DISPATCH_OFF		0
#define PR_SYS_DISPATCH_ON		1
#define SYSCALL_DISPATCH_FILTER_ALLOW	0
#define SYSCALL_DISPATCH_FILTER_BLOCK	1
#endif

static volatile char selector = SYSCALL_DISPATCH_FILTER_ALLOW;
static volatile unsigned long trapped, mmaps_seen;

/* A system call made from this program's text, not the C library's. */
static inline long raw6(long nr, long a, long b, long c, long d, long e,
			long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/*
 * SIGSYS: the trapped call, made again through the C library (inside the
 * allowed range), its result put where the program expects it.
 */
static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	long nr = si->si_syscall;

	(void)sig;
	trapped++;
	if (nr == SYS_mmap)
		mmaps_seen++;	/* where uswap_mmap would take over */
	g[REG_RAX] = syscall(nr, g[REG_RDI], g[REG_RSI], g[REG_RDX],
			     g[REG_R10], g[REG_R8], g[REG_R9]);
	if (g[REG_RAX] == -1)
		g[REG_RAX] = -errno;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double per_call(long calls, int libc)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < calls; i++) {
		if (libc)
			syscall(SYS_getpid);
		else
			raw6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	}
	return (now_ns() - t0) / (double)calls;
}

/* The C library's text: the range whose system calls are let through. */
static int libc_text(uintptr_t *start, uintptr_t *len)
{
	uintptr_t fn = (uintptr_t)(void *)syscall;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 &&
		    perms[2] == 'x' && fn >= s && fn < e) {
			*start = s;
			*len = e - s;
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 200000;
	struct sigaction sa;
	uintptr_t start, len;
	double native, allow, trap, libc;
	void *p;

	if (libc_text(&start, &len)) {
		fprintf(stderr, "sud: cannot find the C library's text\n");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);

	native = per_call(calls, 0);
	if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, start, len,
		  &selector)) {
		printf("{\"sud\": false, \"error\": \"%s\"}\n", strerror(errno));
		return 0;
	}
	allow = per_call(calls, 0);
	selector = SYSCALL_DISPATCH_FILTER_BLOCK;
	trap = per_call(calls, 0);
	libc = per_call(calls, 1);
	p = (void *)raw6(SYS_mmap, 0, 1 << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
	printf("{\"sud\": true, \"calls\": %ld, \"native_ns\": %.0f, "
	       "\"sud_allow_ns\": %.0f, \"sud_trap_ns\": %.0f, "
	       "\"libc_blocked_ns\": %.0f, \"trap_ratio\": %.1f, "
	       "\"trapped\": %lu, \"raw_mmap_seen\": %s, \"mmap_ok\": %s}\n",
	       calls, native, allow, trap, libc, trap / native, trapped,
	       mmaps_seen == 1 ? "true" : "false",
	       p != MAP_FAILED && (long)p > 0 ? "true" : "false");
	return 0;
}
#endif /* __x86_64__ */
