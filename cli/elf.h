/* SPDX-License-Identifier: MIT */
/*
 * elf.h - can uswap go into PROG (elf.c)?
 */
#ifndef USWAP_CLI_ELF_H
#define USWAP_CLI_ELF_H

#include <stddef.h>

enum prog_kind {
	PROG_DYNAMIC,	/* the dynamic loader will load the preload library */
	PROG_UNKNOWN,	/* not found, unreadable, not ELF: left to exec */
	PROG_STATIC,	/* no PT_INTERP: nothing loads the library */
	PROG_FOREIGN,	/* another ELF class or machine */
	PROG_SECURE,	/* set-ID to another user: LD_PRELOAD ignored */
};

/*
 * Find PROG as execvp would and tell whether the preload library can go
 * into it.  For a script, the verdict is its interpreter's (and for
 * "#!/usr/bin/env NAME", NAME's).  path (plen bytes) gets the file the
 * verdict is about; why (len bytes), for a kind other than DYNAMIC and
 * UNKNOWN, what it is ("statically linked (...)").
 */
enum prog_kind prog_check(const char *prog, char *path, size_t plen,
			  char *why, size_t len);

#endif /* USWAP_CLI_ELF_H */
