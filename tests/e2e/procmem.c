// SPDX-License-Identifier: MIT
/*
 * procmem - another process reads a uswap program's memory, as a debugger
 * does (tests/e2e/procmem.sh):
 *
 *   procmem target SIZE           map SIZE bytes, fill every page, print
 *                                 "ready PID ADDR LEN RESIDENT", then serve
 *                                 commands from stdin: "check" prints
 *                                 "checked BAD RESIDENT" (pages that read
 *                                 back wrong; pages resident, by mincore),
 *                                 "evict" writes the memory again, version
 *                                 2 (the old copies go out again under a
 *                                 small budget), "version V" checks for
 *                                 version V (written by another process),
 *                                 EOF exits
 *   procmem mem PID ADDR LEN V    read it through /proc/PID/mem
 *   procmem vmread PID ADDR LEN V read it with process_vm_readv
 *   procmem peek PID ADDR LEN V   attach with ptrace and PTRACE_PEEKDATA
 *                                 the first, second and last word of
 *                                 every page
 *   procmem write PID ADDR LEN V  write version V of every page through
 *                                 /proc/PID/mem, as a debugger writes
 *
 * Each reader prints "ok N eio N wrong N" (pages) and exits 0 only when
 * every page read back as written (version V).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
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

static int target(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t version = 1, v;
	char line[64];
	size_t i;

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	for (i = 0; i < len / T_PAGE; i++)
		t_fill(p + i * T_PAGE, i, version);
	printf("ready %d %p %zu %lu\n", (int)getpid(), (void *)p, len,
	       resident_pages(p, len));
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long bad = 0;

		if (!strncmp(line, "evict", 5)) {
			version++;
			for (i = 0; i < len / T_PAGE; i++)
				t_fill(p + i * T_PAGE, i, version);
		}
		if (!strncmp(line, "version ", 8))
			version = strtoull(line + 8, NULL, 10);
		for (i = 0; i < len / T_PAGE; i++)
			if (t_header(p + i * T_PAGE, i, &v) || v != version ||
			    t_check(p + i * T_PAGE, i, version))
				bad++;
		printf("checked %lu %lu\n", bad, resident_pages(p, len));
		fflush(stdout);
	}
	return 0;
}

struct tally {
	unsigned long ok, eio, wrong;
};

static int report(const struct tally *t)
{
	printf("ok %lu eio %lu wrong %lu\n", t->ok, t->eio, t->wrong);
	return t->eio || t->wrong ? T_FAIL : T_PASS;
}

static void judge(struct tally *t, const char *page, uint64_t i, uint64_t v)
{
	if (t_check(page, i, v))
		t->wrong++;
	else
		t->ok++;
}

static int read_mem(int pid, uintptr_t addr, size_t len, uint64_t v)
{
	char path[64], page[T_PAGE];
	struct tally t = { 0 };
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		t_fail("%s: %s", path, strerror(errno));
	for (i = 0; i < len / T_PAGE; i++) {
		ssize_t n = pread(fd, page, T_PAGE,
				  (off_t)(addr + i * T_PAGE));

		if (n != T_PAGE)
			t.eio++;
		else
			judge(&t, page, i, v);
	}
	close(fd);
	return report(&t);
}

static int write_mem(int pid, uintptr_t addr, size_t len, uint64_t v)
{
	char path[64], page[T_PAGE];
	struct tally t = { 0 };
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	if (fd < 0)
		t_fail("%s: %s", path, strerror(errno));
	for (i = 0; i < len / T_PAGE; i++) {
		t_fill(page, i, v);
		if (pwrite(fd, page, T_PAGE, (off_t)(addr + i * T_PAGE)) !=
		    T_PAGE)
			t.eio++;
		else
			t.ok++;
	}
	close(fd);
	return report(&t);
}

static int read_vm(int pid, uintptr_t addr, size_t len, uint64_t v)
{
	struct tally t = { 0 };
	char page[T_PAGE];
	size_t i;

	for (i = 0; i < len / T_PAGE; i++) {
		struct iovec local = { page, T_PAGE };
		struct iovec remote = { (void *)(addr + i * T_PAGE), T_PAGE };

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != T_PAGE)
			t.eio++;
		else
			judge(&t, page, i, v);
	}
	return report(&t);
}

static int peek(int pid, uintptr_t addr, size_t len, uint64_t v)
{
	static const unsigned words[] = { 0, 1, T_PAGE / 8 - 1 };
	struct tally t = { 0 };
	uint64_t want[T_PAGE / 8];
	int status;
	size_t i, k;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL))
		t_fail("PTRACE_ATTACH %d: %s", pid, strerror(errno));
	if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status))
		t_fail("waitpid %d: not stopped", pid);
	for (i = 0; i < len / T_PAGE; i++) {
		bool eio = false, wrong = false;

		t_fill(want, i, v);
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
			long w;

			errno = 0;
			w = ptrace(PTRACE_PEEKDATA, pid,
				   (void *)(addr + i * T_PAGE + words[k] * 8),
				   NULL);
			if (errno)
				eio = true;
			else if ((uint64_t)w != want[words[k]])
				wrong = true;
		}
		if (eio)
			t.eio++;
		else if (wrong)
			t.wrong++;
		else
			t.ok++;
	}
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return report(&t);
}

int main(int argc, char **argv)
{
	uintptr_t addr;
	size_t len;
	uint64_t v;
	int pid;

	if (argc == 3 && !strcmp(argv[1], "target"))
		return target((size_t)t_size(argv[2]));
	if (argc != 6)
		t_fail("usage: procmem target SIZE | procmem mem|vmread|peek|write PID ADDR LEN VERSION");
	pid = atoi(argv[2]);
	addr = (uintptr_t)strtoull(argv[3], NULL, 0);
	len = (size_t)strtoull(argv[4], NULL, 0);
	v = strtoull(argv[5], NULL, 0);
	if (!strcmp(argv[1], "mem"))
		return read_mem(pid, addr, len, v);
	if (!strcmp(argv[1], "write"))
		return write_mem(pid, addr, len, v);
	if (!strcmp(argv[1], "vmread"))
		return read_vm(pid, addr, len, v);
	if (!strcmp(argv[1], "peek"))
		return peek(pid, addr, len, v);
	t_fail("unknown mode %s", argv[1]);
}
