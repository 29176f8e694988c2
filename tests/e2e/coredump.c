// SPDX-License-Identifier: MIT
/*
 * coredump - a uswap program's core dump holds its swapped memory, and the
 * program's own signal handlers are its own (tests/e2e/coredump.sh):
 *
 *   coredump crash SIZE HOW     map SIZE bytes, fill every page, print
 *                               "ready PID ADDR LEN RESIDENT", then die:
 *                               HOW is segv (a store to address 16), abort
 *                               (abort()), quit (raise(SIGQUIT)) or bus
 *                               (a load past the end of a file mapping);
 *                               "thread-segv" does the store in a second
 *                               thread; "segv-reset" sets a handler of its
 *                               own first and SIG_DFL again; "segv-chain"
 *                               dies in its own handler, which puts SIG_DFL
 *                               back and raises the signal again (as crash
 *                               reporters do)
 *   coredump check CORE ADDR LEN
 *                               every page of [ADDR, ADDR+LEN) in the ELF
 *                               core file CORE holds what crash wrote:
 *                               prints "ok N missing N wrong N"
 *   coredump handler            the program's own SIGSEGV handler (set with
 *                               sigaction, then with signal) catches a fault
 *                               and gets what the kernel gives it; what
 *                               sigaction and signal report as the current
 *                               disposition is what the program set
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static unsigned long resident_pages(void *p, size_t len)
{
	size_t n = len / T_PAGE, i;
	unsigned char *vec = malloc(n);
	unsigned long r = 0;

	if (!vec || mincore(p, len, vec))
		t_fail("mincore: %s", strerror(errno));
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	free(vec);
	return r;
}

/* An address nothing is mapped at (the compiler cannot see it is bad). */
static volatile uintptr_t bad_addr = 16;

static void *segv_thread(void *arg)
{
	*(volatile int *)bad_addr = 1;
	return arg;
}

static void reporter(int sig)
{
	static const char msg[] = "the program's own handler ran\n";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int crash(size_t len, const char *how)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	for (i = 0; i < len / T_PAGE; i++)
		t_fill(p + i * T_PAGE, i, 1);
	printf("ready %d %p %zu %lu\n", (int)getpid(), (void *)p, len,
	       resident_pages(p, len));
	fflush(stdout);
	if (!strcmp(how, "segv-reset")) {
		signal(SIGSEGV, reporter);
		signal(SIGSEGV, SIG_DFL);
		how = "segv";
	} else if (!strcmp(how, "segv-chain")) {
		signal(SIGSEGV, reporter);
		how = "segv";
	}
	if (!strcmp(how, "segv")) {
		*(volatile int *)bad_addr = 1;
	} else if (!strcmp(how, "thread-segv")) {
		pthread_t t;

		pthread_create(&t, NULL, segv_thread, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(how, "abort")) {
		abort();
	} else if (!strcmp(how, "quit")) {
		raise(SIGQUIT);
	} else if (!strcmp(how, "bus")) {
		char path[] = "/tmp/coredump-bus-XXXXXX";
		int fd = mkstemp(path);
		volatile char *m;

		if (fd < 0 || ftruncate(fd, 1))
			t_fail("mkstemp: %s", strerror(errno));
		unlink(path);
		m = mmap(NULL, 2 * T_PAGE, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			t_fail("mmap file: %s", strerror(errno));
		(void)m[T_PAGE];
	}
	t_fail("still alive after %s", how);
}

/* Every page of [addr, addr+len) in the core's PT_LOAD segments. */
static int check(const char *core, uintptr_t addr, size_t len)
{
	unsigned long ok = 0, missing = 0, wrong = 0;
	struct stat st;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	char *img;
	size_t i;
	int fd = open(core, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		t_fail("%s: %s", core, strerror(errno));
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (img == MAP_FAILED)
		t_fail("mmap %s: %s", core, strerror(errno));
	eh = (Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_CORE)
		t_fail("%s is not an ELF core file", core);
	ph = (Elf64_Phdr *)(img + eh->e_phoff);
	for (i = 0; i < len / T_PAGE; i++) {
		uintptr_t a = addr + i * T_PAGE;
		const char *page = NULL;
		unsigned k;

		for (k = 0; k < eh->e_phnum; k++) {
			if (ph[k].p_type != PT_LOAD || a < ph[k].p_vaddr ||
			    a + T_PAGE > ph[k].p_vaddr + ph[k].p_memsz)
				continue;
			if (a + T_PAGE <= ph[k].p_vaddr + ph[k].p_filesz &&
			    ph[k].p_offset + (a - ph[k].p_vaddr) + T_PAGE <=
			    (uint64_t)st.st_size)
				page = img + ph[k].p_offset + (a - ph[k].p_vaddr);
			break;
		}
		if (!page)
			missing++;
		else if (t_check(page, i, 1))
			wrong++;
		else
			ok++;
	}
	printf("ok %lu missing %lu wrong %lu\n", ok, missing, wrong);
	return missing || wrong ? T_FAIL : T_PASS;
}

static volatile sig_atomic_t caught;
static volatile void *caught_addr;
static volatile int caught_code;
static sigjmp_buf back;

static void on_segv_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	caught = sig;
	caught_addr = si->si_addr;
	caught_code = si->si_code;
	siglongjmp(back, 1);
}

static void on_segv_plain(int sig)
{
	caught = sig;
	siglongjmp(back, 1);
}

/* Fault on a PROT_NONE page under the program's handler. */
static void fault_once(volatile char *p)
{
	caught = 0;
	if (!sigsetjmp(back, 1))
		(void)*p;
}

static int handler(void)
{
	struct sigaction sa, old;
	char *p = mmap(NULL, T_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	void (*prev)(int);

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	if (sigaction(SIGSEGV, NULL, &old))
		t_fail("sigaction: %s", strerror(errno));
	if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
		t_fail("SIGSEGV's disposition at start is not SIG_DFL (%p, flags %#x)",
		       (void *)old.sa_handler, (unsigned)old.sa_flags);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv_info;
	sa.sa_flags = SA_SIGINFO;
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (sigaction(SIGSEGV, &sa, &old))
		t_fail("sigaction: %s", strerror(errno));
	if (old.sa_handler != SIG_DFL)
		t_fail("the old disposition is not SIG_DFL (%p)",
		       (void *)old.sa_handler);
	fault_once(p);
	if (caught != SIGSEGV || caught_addr != p || caught_code != SEGV_ACCERR)
		t_fail("the handler got signal %d at %p code %d, expected %d at %p code %d",
		       (int)caught, (void *)caught_addr, (int)caught_code,
		       SIGSEGV, (void *)p, SEGV_ACCERR);
	if (sigaction(SIGSEGV, NULL, &old))
		t_fail("sigaction: %s", strerror(errno));
	if (old.sa_sigaction != on_segv_info || !(old.sa_flags & SA_SIGINFO) ||
	    !sigismember(&old.sa_mask, SIGUSR1))
		t_fail("sigaction reports %p flags %#x, not the program's handler",
		       (void *)old.sa_sigaction, (unsigned)old.sa_flags);

	prev = signal(SIGSEGV, on_segv_plain);
	if ((void *)prev != (void *)on_segv_info)
		t_fail("signal returned %p, expected the handler set before",
		       (void *)prev);
	fault_once(p);
	if (caught != SIGSEGV)
		t_fail("the plain handler did not catch the fault");
	prev = signal(SIGSEGV, SIG_DFL);
	if (prev != on_segv_plain)
		t_fail("signal returned %p, expected on_segv_plain", (void *)prev);
	if (sigaction(SIGSEGV, NULL, &old) || old.sa_handler != SIG_DFL)
		t_fail("SIGSEGV is not SIG_DFL again");
	/* A handler the program ignores a signal with stays so. */
	if (signal(SIGQUIT, SIG_IGN) != SIG_DFL)
		t_fail("SIGQUIT's disposition at start is not SIG_DFL");
	if (signal(SIGQUIT, SIG_DFL) != SIG_IGN)
		t_fail("SIGQUIT was not SIG_IGN");
	printf("handler ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "crash"))
		return crash((size_t)t_size(argv[2]), argv[3]);
	if (argc == 5 && !strcmp(argv[1], "check"))
		return check(argv[2], (uintptr_t)strtoull(argv[3], NULL, 0),
			     (size_t)strtoull(argv[4], NULL, 0));
	if (argc == 2 && !strcmp(argv[1], "handler"))
		return handler();
	t_fail("usage: coredump crash SIZE HOW | check CORE ADDR LEN | handler");
}
