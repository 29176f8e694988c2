// SPDX-License-Identifier: MIT
/*
 * elf.c - can uswap go into PROG?
 *
 * uswap manages a program through LD_PRELOAD, which only the dynamic
 * loader reads.  A program it cannot load into runs as if uswap were not
 * there: no budget, no counters.  That is so when PROG (or, for a script,
 * its interpreter, and the program a "#!/usr/bin/env NAME" line runs):
 *
 *  - has no program interpreter (no PT_INTERP: statically linked, as Go
 *    programs are by default, or static-pie);
 *  - is an ELF file of another class or machine than the preload library
 *    (a 32-bit program: the loader refuses the library and goes on);
 *  - is set-user-ID or set-group-ID to someone else: the loader runs it
 *    in secure mode, and ignores an LD_PRELOAD path such as uswap's.
 *
 * prog_check() finds PROG as execvp(3) would and reads its ELF headers.
 * What it cannot tell (PROG missing, unreadable, neither ELF nor script)
 * it leaves to exec: that is not uswap's to judge.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf.h"

#define SCRIPT_DEPTH	4	/* interpreters of interpreters, as the kernel */

#if defined(__x86_64__)
#define HOST_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE	EM_AARCH64
#else
#define HOST_MACHINE	EM_NONE
#endif

/* PROG as execvp finds it: into path (len bytes); false if not found. */
static bool prog_resolve(const char *prog, char *path, size_t len)
{
	const char *dirs = getenv("PATH"), *d, *end;
	struct stat st;

	if (strchr(prog, '/'))
		return snprintf(path, len, "%s", prog) < (int)len;
	if (!dirs)
		dirs = "/bin:/usr/bin";
	for (d = dirs; ; d = end + 1) {
		end = strchr(d, ':');
		if (!end)
			end = d + strlen(d);
		if (snprintf(path, len, "%.*s%s%s", (int)(end - d), d,
			     end > d ? "/" : "", prog) < (int)len &&
		    !stat(path, &st) && S_ISREG(st.st_mode) &&
		    !access(path, X_OK))
			return true;
		if (!*end)
			return false;
	}
}

/* Set-ID to another user or group: the loader's secure mode. */
static bool secure_exec(const struct stat *st)
{
	return ((st->st_mode & S_ISUID) && st->st_uid != geteuid()) ||
	       ((st->st_mode & S_ISGID) && st->st_gid != getegid());
}

/* The headers of an ELF file: PROG_DYNAMIC, or why not. */
static enum prog_kind elf_check(int fd, const unsigned char *id,
				char *why, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned i;

	if (id[EI_CLASS] != ELFCLASS64) {
		snprintf(why, len, "a 32-bit program (the preload library is 64-bit)");
		return PROG_FOREIGN;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return PROG_UNKNOWN;
	if (eh.e_machine != HOST_MACHINE) {
		snprintf(why, len, "a program for another machine (ELF machine %u)",
			 (unsigned)eh.e_machine);
		return PROG_FOREIGN;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return PROG_UNKNOWN;
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum > 4096)
		return PROG_UNKNOWN;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    sizeof(ph))
			return PROG_UNKNOWN;
		if (ph.p_type == PT_INTERP)
			return PROG_DYNAMIC;
	}
	snprintf(why, len, "statically linked (no program interpreter, PT_INTERP)");
	return PROG_STATIC;
}

static enum prog_kind check_file(const char *prog, int depth, char *path,
				 size_t plen, char *why, size_t len);

/*
 * A script: its interpreter, and for "#!/usr/bin/env NAME" what NAME is
 * (the program env will run).
 */
static enum prog_kind script_check(const char *line, int depth, char *path,
				   size_t plen, char *why, size_t len)
{
	char interp[PATH_MAX], arg[PATH_MAX] = "", ipath[PATH_MAX];
	enum prog_kind k;
	const char *s = line + 2, *e;

	s += strspn(s, " \t");
	e = s + strcspn(s, " \t\n");
	if (e == s || (size_t)(e - s) >= sizeof(interp))
		return PROG_UNKNOWN;
	memcpy(interp, s, (size_t)(e - s));
	interp[e - s] = 0;
	s = e + strspn(e, " \t");
	e = s + strcspn(s, " \t\n");
	if (e > s && (size_t)(e - s) < sizeof(arg)) {
		memcpy(arg, s, (size_t)(e - s));
		arg[e - s] = 0;
	}
	k = check_file(interp, depth + 1, ipath, sizeof(ipath), why, len);
	if (k != PROG_DYNAMIC) {
		snprintf(path, plen, "%s", ipath);
		return k;
	}
	e = strrchr(interp, '/');
	if (!strcmp(e ? e + 1 : interp, "env") && arg[0] && arg[0] != '-' &&
	    !strchr(arg, '='))
		return check_file(arg, depth + 1, path, plen, why, len);
	return PROG_DYNAMIC;
}

static enum prog_kind check_file(const char *prog, int depth, char *path,
				 size_t plen, char *why, size_t len)
{
	unsigned char head[256];
	enum prog_kind k = PROG_UNKNOWN;
	struct stat st;
	ssize_t n;
	int fd;

	if (depth > SCRIPT_DEPTH || !prog_resolve(prog, path, plen))
		return PROG_UNKNOWN;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PROG_UNKNOWN;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	n = pread(fd, head, sizeof(head) - 1, 0);
	if (n < 4)
		goto out;
	head[n] = 0;
	if (!memcmp(head, ELFMAG, SELFMAG) && n >= EI_NIDENT) {
		k = elf_check(fd, head, why, len);
		if (k == PROG_DYNAMIC && secure_exec(&st)) {
			snprintf(why, len, "set-user-ID or set-group-ID (the loader ignores LD_PRELOAD for it)");
			k = PROG_SECURE;
		}
	} else if (head[0] == '#' && head[1] == '!') {
		k = script_check((const char *)head, depth, path, plen, why, len);
	}
out:
	close(fd);
	return k;
}

enum prog_kind prog_check(const char *prog, char *path, size_t plen,
			  char *why, size_t len)
{
	why[0] = 0;
	path[0] = 0;
	return check_file(prog, 0, path, plen, why, len);
}
