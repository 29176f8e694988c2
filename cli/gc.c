// SPDX-License-Identifier: MIT
/*
 * gc.c - uswap gc: delete what runs that ended left on remote swap
 * devices (docs/far-memory.md).
 *
 *   uswap gc SPEC...
 *
 * uswap run deletes its run's values when PROG and every process of its
 * tree that used the device have ended; a run whose uswap run was killed
 * (kill -9), or a program that used a remote device without uswap run,
 * leaves them.  Each device's runs carry a record with their host, owner
 * and lock: gc deletes the values of this host's runs whose owner is gone
 * and whose lock nobody holds, and leaves every other run alone.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "uswap.h"
#include "stats.h"

#define EXIT_USAGE	2

static const char gc_help[] =
"Usage: uswap gc SPEC...\n"
"\n"
"Delete, on each remote swap device SPEC (redis://HOST:PORT[,HOST:PORT...]\n"
"with the user= and password-file= its runs used), the values of runs of\n"
"this host that have ended: their owner (uswap run, or the program that\n"
"used the device without it) no longer runs, and no process of theirs\n"
"holds the run's lock.  Runs of other hosts are left alone.\n"
"\n"
"Exit status: 0 when every SPEC was cleaned, 1 when one could not be\n"
"(unreachable, authentication refused), 2 for a SPEC that is not a remote\n"
"device.\n";

int cmd_gc(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 1) {
		fputs("uswap gc: no SPEC given\nUsage: uswap gc SPEC...\n", stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		fputs(gc_help, stdout);
		return 0;
	}
	for (i = 0; i < argc; i++) {
		char err[512] = "";
		unsigned runs = 0;
		uint64_t keys = 0;
		int ret = uswap_remote_gc(argv[i], &runs, &keys, err, sizeof(err));

		if (ret == -EINVAL) {
			fprintf(stderr, "uswap gc: %s\n", err);
			return EXIT_USAGE;
		}
		if (ret) {
			fprintf(stderr, "uswap gc: %s: %s\n", argv[i], err);
			rc = 1;
			continue;
		}
		printf("%s: %u ended run%s, %llu key%s deleted\n", argv[i], runs,
		       runs == 1 ? "" : "s", (unsigned long long)keys,
		       keys == 1 ? "" : "s");
	}
	return rc;
}
