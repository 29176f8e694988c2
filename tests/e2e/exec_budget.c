// SPDX-License-Identifier: MIT
/*
 * exec_budget.c - the budget's descriptor crosses exec only into a
 * program that runs the preload library (tests/e2e/exec_budget.sh).
 *
 *   exec_budget show
 *       prints "TREE_FD N" for each descriptor it holds that names a
 *       tree's budget (a memfd named uswap-tree-...), and "JOINED NAME"
 *       for each budget it maps (its runtime joined that tree).  Built
 *       also statically, and installed set-user-ID, by the .sh.
 *
 *   exec_budget launch HOW PROG
 *       under uswap run: prints "LAUNCHER NAME" (its own budget), then
 *       runs "PROG show" by HOW and waits for it: execve, execv, execvp,
 *       execvpe, execl, execle, execlp (in a fork child), fexecve,
 *       posix_spawn, posix_spawnp, system, popen, or execve_nopreload
 *       (execve with LD_PRELOAD taken out of the environment).  The p
 *       variants are given a name to find in PATH.  moved_HOW first
 *       dup2()s /dev/null onto the number USWAP_TREE_FD names (uswap's
 *       descriptor moves; the variable follows it), then runs by HOW.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The budgets this process maps: their names, one per line, from maps. */
static void print_budgets(const char *tag)
{
	char line[1024], *name, *end;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		name = strstr(line, "uswap-tree-");
		if (!name)
			continue;
		end = name + strcspn(name, " \n");
		*end = 0;
		printf("%s %s\n", tag, name);
	}
	fclose(f);
}

static int show(void)
{
	char path[64], link[512];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return 1;
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%.16s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = 0;
		if (strstr(link, "uswap-tree-"))
			printf("TREE_FD %s %s\n", e->d_name, link);
	}
	closedir(d);
	print_budgets("JOINED");
	return 0;
}

static int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* environ without LD_PRELOAD. */
static char **env_without_preload(void)
{
	static char *env[4096];
	unsigned i, n = 0;

	for (i = 0; environ[i] && n < 4095; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			env[n++] = environ[i];
	env[n] = NULL;
	return env;
}

static int launch(const char *how, const char *prog)
{
	char *argv[] = { (char *)prog, "show", NULL };
	char cmd[4200], line[1024];
	pid_t pid;
	int fd, err;

	print_budgets("LAUNCHER");
	fflush(stdout);
	if (!strncmp(how, "moved_", 6)) {
		const char *v = getenv("USWAP_TREE_FD");
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (!v || null < 0 || dup2(null, atoi(v)) != atoi(v)) {
			fprintf(stderr, "moving the budget's descriptor failed\n");
			return 1;
		}
		how += 6;
	}
	snprintf(cmd, sizeof(cmd), "%s show", prog);
	if (!strcmp(how, "system"))
		return system(cmd) == 0 ? 0 : 1;
	if (!strcmp(how, "popen")) {
		FILE *p = popen(cmd, "r");

		if (!p)
			return 1;
		while (fgets(line, sizeof(line), p))
			fputs(line, stdout);
		return pclose(p) == 0 ? 0 : 1;
	}
	if (!strcmp(how, "posix_spawn") || !strcmp(how, "posix_spawnp")) {
		err = (how[11] == 'p' ? posix_spawnp : posix_spawn)(&pid, prog,
				NULL, NULL, argv, environ);
		if (err) {
			fprintf(stderr, "%s: %s\n", how, strerror(err));
			return 1;
		}
		return wait_for(pid);
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid)
		return wait_for(pid);
	if (!strcmp(how, "execve"))
		execve(prog, argv, environ);
	else if (!strcmp(how, "execve_nopreload"))
		execve(prog, argv, env_without_preload());
	else if (!strcmp(how, "execv"))
		execv(prog, argv);
	else if (!strcmp(how, "execvp"))
		execvp(prog, argv);
	else if (!strcmp(how, "execvpe"))
		execvpe(prog, argv, environ);
	else if (!strcmp(how, "execl"))
		execl(prog, prog, "show", (char *)NULL);
	else if (!strcmp(how, "execle"))
		execle(prog, prog, "show", (char *)NULL, environ);
	else if (!strcmp(how, "execlp"))
		execlp(prog, prog, "show", (char *)NULL);
	else if (!strcmp(how, "fexecve")) {
		fd = open(prog, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			fexecve(fd, argv, environ);
	} else {
		fprintf(stderr, "unknown way %s\n", how);
		_exit(2);
	}
	fprintf(stderr, "%s %s: %s\n", how, prog, strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "show"))
		return show();
	if (argc == 4 && !strcmp(argv[1], "launch"))
		return launch(argv[2], argv[3]);
	fprintf(stderr, "usage: exec_budget show | launch HOW PROG\n");
	return 2;
}
