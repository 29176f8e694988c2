// SPDX-License-Identifier: MIT
/*
 * counters_exit.c - a program whose processes end every way a process
 * ends, for counters_exit.sh to check that each one's counters reach the
 * tree's statistics.  It knows nothing of uswap: run it under uswap run,
 * which manages its mmap.
 *
 * Each process that works maps MB MiB, writes every page, and reads every
 * page back (the budget is far smaller: most of it goes to swap and back).
 *
 * Usage: counters_exit child _exit|exit|kill MB
 *          a child works and ends with _exit(0), exit(0), or SIGKILL (it
 *          kills itself); the parent waits for it and exits with exit(0)
 *        counters_exit self MB
 *          this process works, waits a second and a half, and ends with
 *          _exit(0): nobody is left to take its counters over
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static void work(uint64_t mb)
{
	uint64_t n = (mb << 20) / T_PAGE, p;
	char *mem = mmap(NULL, n * T_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		t_fail("mmap %llu MiB: %s", (unsigned long long)mb,
		       strerror(errno));
	for (p = 0; p < n; p++)
		t_fill(mem + p * T_PAGE, p, 1);
	for (p = 0; p < n; p++)
		if (t_check(mem + p * T_PAGE, p, 1))
			t_fail("page %llu read back wrong", (unsigned long long)p);
}

static void end(const char *how)
{
	if (!strcmp(how, "_exit"))
		_exit(0);
	if (!strcmp(how, "exit"))
		exit(0);
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
	t_fail("bad end %s", how);
}

int main(int argc, char **argv)
{
	const struct timespec pause = { 1, 500000000 };
	int status;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "self")) {
		work(strtoull(argv[2], NULL, 0));
		nanosleep(&pause, NULL);
		_exit(0);
	}
	if (argc != 4 || strcmp(argv[1], "child"))
		t_fail("usage: counters_exit child _exit|exit|kill MB | self MB");
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		work(strtoull(argv[3], NULL, 0));
		end(argv[2]);
	}
	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (strcmp(argv[2], "kill") ?
	    !WIFEXITED(status) || WEXITSTATUS(status) :
	    !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		t_fail("the child ended with status %#x", status);
	return 0;
}
