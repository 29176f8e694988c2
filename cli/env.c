// SPDX-License-Identifier: MIT
/*
 * env.c - PROG's environment: how uswap run hands PROG to the preload
 * library.
 *
 * uswap run manages no memory itself: everything the processes of the tree
 * need to run under uswap reaches them in the environment, which each
 * passes on to the programs it starts.  libuswap_preload.so goes first in
 * LD_PRELOAD (found next to the uswap executable, or in an installed
 * tree), and ASAN_OPTIONS lets an ASan program accept it there; each
 * option that was given becomes its USWAP_* variable, which the runtime
 * of every process reads (uswap_options_from_env()); USWAP_STATS_DIR
 * names the directory where each process publishes its counters (stats.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uswap.h"
#include "stats.h"

#define PRELOAD_NAME	"libuswap_preload.so"

/*
 * The preload library: next to the uswap executable, else in
 * ../lib/uswap/ from there (an installed tree).  Exits 125 if neither.
 */
char *env_find_preload(void)
{
	char exe[PATH_MAX], parent[PATH_MAX];
	static char path[2][PATH_MAX + 64];
	char *slash;
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		say("cannot find the uswap executable (/proc/self/exe: %s)",
		    strerror(errno));
		exit(EXIT_CANNOT_RUN);
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	*slash = 0;
	strcpy(parent, exe[0] ? exe : "/");
	slash = strrchr(parent, '/');
	if (slash)
		slash[slash == parent] = 0;
	snprintf(path[0], sizeof(path[0]), "%s/" PRELOAD_NAME, exe);
	snprintf(path[1], sizeof(path[1]), "%s%slib/uswap/" PRELOAD_NAME,
		 parent, strcmp(parent, "/") ? "/" : "");
	for (i = 0; i < 2; i++) {
		struct stat st;

		if (!stat(path[i], &st) && S_ISREG(st.st_mode)) {
			if (strpbrk(path[i], ": ")) {
				say("the preload library's path %s has a ':' or a space, which LD_PRELOAD cannot hold",
				    path[i]);
				exit(EXIT_CANNOT_RUN);
			}
			return path[i];
		}
	}
	say("preload library not found: looked for %s and %s", path[0],
	    path[1]);
	exit(EXIT_CANNOT_RUN);
}

void env_set(const char *name, const char *value)
{
	if (setenv(name, value, 1)) {
		say("cannot set %s: %s", name, strerror(errno));
		exit(EXIT_CANNOT_RUN);
	}
}

/* name=first:second, a colon-separated list (LD_PRELOAD, ASAN_OPTIONS). */
static void env_set_list(const char *name, const char *first,
			 const char *second)
{
	char *v = malloc(strlen(first) + strlen(second) + 2);

	if (!v) {
		say("out of memory");
		exit(EXIT_CANNOT_RUN);
	}
	sprintf(v, "%s:%s", first, second);
	env_set(name, v);
	free(v);
}

/*
 * The preload library comes before the ASan runtime of an ASan program,
 * which then refuses to start unless told not to check that order.  The
 * order is harmless: the preload library is never built with a sanitizer
 * (Makefile), so nothing of it needs ASan initialised.  A choice the user
 * made in ASAN_OPTIONS stays.
 */
static void export_asan_options(void)
{
	static const char opt[] = "verify_asan_link_order=0";
	const char *old = getenv("ASAN_OPTIONS");

	if (!old || !*old)
		env_set("ASAN_OPTIONS", opt);
	else if (!strstr(old, "verify_asan_link_order"))
		env_set_list("ASAN_OPTIONS", old, opt);
}

/*
 * PROG's environment: the preload library first in LD_PRELOAD, every
 * option that was given, as the library reads it back (sizes in bytes;
 * the others unset so that the runtime uses its defaults), and the
 * statistics directory.
 */
void env_export(const struct uswap_options *o, const char *preload,
		    const char *stats_dir)
{
	const char *old = getenv("LD_PRELOAD");
	const struct uswap_option_desc *d;
	char value[sizeof(struct uswap_options)];
	unsigned i;

	if (old && *old)
		env_set_list("LD_PRELOAD", preload, old);
	else
		env_set("LD_PRELOAD", preload);
	export_asan_options();
	for (i = 0; (d = uswap_option_desc(i)); i++) {
		if (uswap_options_get(o, d->name, value, sizeof(value)) > 0)
			env_set(d->env, value);
		else
			unsetenv(d->env);
	}
	/* uswap writes the stats file itself, from the merged tree. */
	unsetenv("USWAP_STATS");
	if (stats_dir)
		env_set("USWAP_STATS_DIR", stats_dir);
}
