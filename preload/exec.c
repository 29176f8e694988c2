// SPDX-License-Identifier: MIT
/*
 * exec.c - the budget's descriptor crosses exec only into a program that
 * runs the preload library.
 *
 * A program exec'd by a process of the tree joins its budget through a
 * descriptor of the budget's memfd, named by USWAP_TREE_FD (preload.c).
 * That descriptor is close-on-exec like all of uswap's (fdtable.c), and
 * the exec family, posix_spawn, system and popen are interposed here to
 * let it cross one exec when, and only when, the new image will run
 * uswap's preload library:
 *
 *  - the new environment's LD_PRELOAD names this library, and its
 *    USWAP_TREE_FD names the descriptor;
 *  - the calling process's real and effective ids are equal (otherwise
 *    the new image runs in secure-execution mode, where the dynamic
 *    loader ignores LD_PRELOAD paths);
 *  - the program is a regular file with no set-user-ID or set-group-ID
 *    bit and no file capabilities, and is a dynamically linked ELF
 *    executable of this library's machine (a PT_INTERP header), or a
 *    script (#!) whose interpreter is one, or (execvp, execlp, execvpe,
 *    posix_spawnp: the C library runs a file of neither kind with
 *    /bin/sh) /bin/sh is one.
 *
 * Anything else (a static program, a set-id one, one the environment
 * does not preload uswap into, a file that cannot be read to tell)
 * starts without it.
 *
 * The flag is the process's, shared by its threads: a call clears it,
 * runs the exec (or the spawn, whose child has exec'd when it returns),
 * and sets it again, under `gate` so that two threads' calls do not mix.
 * system() and popen() run their shell through the C library's internal
 * spawn: the flag stays clear for the whole call (an open window); a call
 * for a program that does not qualify meanwhile sets it for its own
 * duration.  After fork the child starts with the flag set and no window
 * open.  A vfork child has a table of its own and shares the parent's
 * memory: it sets the flag in its own table, without the gate.
 *
 * Nothing here allocates: a vfork child may be the caller.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fdtable.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_INTERP_DEPTH	4	/* #! of #! ... as the kernel allows */
#define MAX_ARGS		65536	/* execl*: arguments collected on the stack */

extern char **environ;

/* preload.c: the budget's descriptor for exec (canonical), or -1. */
int preload_tree_fd(void);

static struct {
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	int (*posix_spawn)(pid_t *, const char *,
			   const posix_spawn_file_actions_t *,
			   const posix_spawnattr_t *, char *const[],
			   char *const[]);
	int (*posix_spawnp)(pid_t *, const char *,
			    const posix_spawn_file_actions_t *,
			    const posix_spawnattr_t *, char *const[],
			    char *const[]);
	int (*system)(const char *);
	FILE *(*popen)(const char *, const char *);
} real;

/* This library: its file (to recognise it in LD_PRELOAD), its machine. */
static struct {
	dev_t dev;
	ino_t ino;
	char base[256];
	unsigned machine;
	bool known;
} self;

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static unsigned open_windows;	/* system/popen calls in flight, flag clear */

/* --- does the new image run the preload library? --- */

static const char *env_get(char *const envp[], const char *name)
{
	size_t len = strlen(name);
	unsigned i;

	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, len) && envp[i][len] == '=')
			return envp[i] + len + 1;
	return NULL;
}

/* Does LD_PRELOAD entry v[0..len) name this library? */
static bool entry_is_us(const char *v, size_t len)
{
	char entry[PATH_MAX];
	struct stat st;

	if (!len || len >= sizeof(entry) || !self.known)
		return false;
	memcpy(entry, v, len);
	entry[len] = 0;
	if (!strchr(entry, '/'))
		return !strcmp(entry, self.base);
	return !stat(entry, &st) && st.st_dev == self.dev &&
	       st.st_ino == self.ino;
}

/* Does LD_PRELOAD (spaces or colons between entries) name this library? */
static bool preloads_us(char *const envp[])
{
	const char *v = env_get(envp, "LD_PRELOAD");

	while (v && *v) {
		size_t len = strcspn(v, " :");

		if (entry_is_us(v, len))
			return true;
		v += len + (v[len] != 0);
	}
	return false;
}

/*
 * preload.c, as the process leaves its tree: this library comes out of
 * LD_PRELOAD, so that the programs the process execs from now on run
 * without uswap as it does (the others stay, in their order).
 */
void exec_forget_preload(void);
void exec_forget_preload(void)
{
	const char *v = getenv("LD_PRELOAD");
	size_t n = 0;
	char *out;

	if (!v)
		return;
	out = malloc(strlen(v) + 1);
	if (!out)
		return;
	while (*v) {
		size_t len = strcspn(v, " :");

		if (len && !entry_is_us(v, len)) {
			if (n)
				out[n++] = ' ';
			memcpy(out + n, v, len);
			n += len;
		}
		v += len + (v[len] != 0);
	}
	out[n] = 0;
	if (n)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(out);
}

/* A dynamically linked ELF executable of our machine. */
static bool elf_dynamic(int fd, const unsigned char *hdr, size_t n)
{
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	unsigned k;

	if (n < sizeof(eh))
		return false;
	memcpy(&eh, hdr, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != self.machine ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(ph[0]) || !eh.e_phnum ||
	    eh.e_phnum > 64)
		return false;
	if (pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) !=
	    (ssize_t)(eh.e_phnum * sizeof(ph[0])))
		return false;
	for (k = 0; k < eh.e_phnum; k++)
		if (ph[k].p_type == PT_INTERP)
			return true;
	return false;
}

static bool runs_preload_path(const char *path, int depth, bool sh_fallback);

/* The program open at fd (readable): see the top of the file. */
static bool runs_preload_fd(int fd, int depth, bool sh_fallback)
{
	unsigned char hdr[512];
	char interp[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t i, len;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & S_ISUID) ||
	    (st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		return false;
	if (fgetxattr(fd, "security.capability", NULL, 0) >= 0 ||
	    errno == ERANGE)
		return false;
	n = pread(fd, hdr, sizeof(hdr), 0);
	if (n < 4)
		return false;
	if (!memcmp(hdr, ELFMAG, SELFMAG))
		return elf_dynamic(fd, hdr, (size_t)n);
	if (hdr[0] == '#' && hdr[1] == '!') {
		for (i = 2; i < (size_t)n && (hdr[i] == ' ' || hdr[i] == '\t'); i++)
			;
		for (len = 0; i + len < (size_t)n && hdr[i + len] != ' ' &&
		     hdr[i + len] != '\t' && hdr[i + len] != '\n' &&
		     len < sizeof(interp) - 1; len++)
			interp[len] = (char)hdr[i + len];
		interp[len] = 0;
		return len && depth < MAX_INTERP_DEPTH &&
		       runs_preload_path(interp, depth + 1, false);
	}
	return sh_fallback && depth < MAX_INTERP_DEPTH &&
	       runs_preload_path("/bin/sh", depth + 1, false);
}

static bool runs_preload_path(const char *path, int depth, bool sh_fallback)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	bool yes;

	if (fd < 0)
		return false;
	yes = runs_preload_fd(fd, depth, sh_fallback);
	syscall(SYS_close, fd);
	return yes;
}

/*
 * The file execvp() would run for `file`, into buf: itself when it names
 * a path, else the first executable regular file of that name in PATH.
 */
static bool search_path(const char *file, char *buf, size_t size)
{
	const char *path = getenv("PATH"), *p;
	struct stat st;

	if (strchr(file, '/')) {
		snprintf(buf, size, "%s", file);
		return true;
	}
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p += strcspn(p, ":") + 1) {
		size_t len = strcspn(p, ":");

		if ((size_t)snprintf(buf, size, "%.*s%s%s", (int)len,
				     len ? p : ".", "/", file) < size &&
		    !stat(buf, &st) && S_ISREG(st.st_mode) &&
		    !faccessat(AT_FDCWD, buf, X_OK, AT_EACCESS))
			return true;
		if (!p[len])
			return false;
	}
}

/* The new image's environment and the caller's ids allow the preload. */
static bool env_joins(char *const envp[], int fd)
{
	const char *v = env_get(envp, "USWAP_TREE_FD");
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (fd < 0 || !v || atoi(v) != fd || !preloads_us(envp))
		return false;
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg))
		return false;
	return ru == eu && rg == eg;
}

/* --- the flag, around a call --- */

struct exec_gate {
	int fd;			/* the budget's descriptor, in this table */
	bool vfork;		/* a vfork child: its own table, no gate */
	bool locked;
};

/* The budget's descriptor for exec as numbered in the program's table. */
static int tree_fd_now(void)
{
	int canonical = preload_tree_fd();

	return canonical < 0 ? -1 : fd_current(canonical);
}

static void gate_enter(struct exec_gate *g, bool pass)
{
	int err = errno;

	g->fd = tree_fd_now();
	g->vfork = fd_in_vfork_child();
	g->locked = false;
	if (g->fd < 0)
		return;
	if (!g->vfork) {
		pthread_mutex_lock(&gate);
		g->locked = true;
	}
	fcntl(g->fd, F_SETFD, pass ? 0 : FD_CLOEXEC);
	errno = err;
}

/* The call returned (an exec failed, a spawn is done): flag as it was. */
static void gate_leave(struct exec_gate *g)
{
	int err = errno;

	if (g->fd >= 0)
		fcntl(g->fd, F_SETFD,
		      !g->vfork && open_windows ? 0 : FD_CLOEXEC);
	if (g->locked)
		pthread_mutex_unlock(&gate);
	errno = err;
}

static void window_open(bool pass, int *fd)
{
	*fd = pass ? tree_fd_now() : -1;
	if (*fd < 0)
		return;
	pthread_mutex_lock(&gate);
	if (open_windows++ == 0)
		fcntl(*fd, F_SETFD, 0);
	pthread_mutex_unlock(&gate);
}

static void window_close(int fd)
{
	int err = errno;

	if (fd < 0)
		return;
	pthread_mutex_lock(&gate);
	if (--open_windows == 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	pthread_mutex_unlock(&gate);
	errno = err;
}

/* The child of fork: no window of the parent's threads is open here. */
static void exec_fork_child(void)
{
	int fd = tree_fd_now();

	pthread_mutex_init(&gate, NULL);
	open_windows = 0;
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* At load: everything the interposers need, so that none allocates later. */
__attribute__((constructor)) static void exec_init(void)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	Dl_info info;
	const char *slash;

	real.execve = dlsym(RTLD_NEXT, "execve");
	real.execvpe = dlsym(RTLD_NEXT, "execvpe");
	real.fexecve = dlsym(RTLD_NEXT, "fexecve");
	real.execveat = dlsym(RTLD_NEXT, "execveat");
	real.posix_spawn = dlsym(RTLD_NEXT, "posix_spawn");
	real.posix_spawnp = dlsym(RTLD_NEXT, "posix_spawnp");
	real.system = dlsym(RTLD_NEXT, "system");
	real.popen = dlsym(RTLD_NEXT, "popen");
	if (dladdr((void *)exec_init, &info) && info.dli_fname &&
	    info.dli_fbase && !stat(info.dli_fname, &st)) {
		eh = info.dli_fbase;
		self.dev = st.st_dev;
		self.ino = st.st_ino;
		slash = strrchr(info.dli_fname, '/');
		snprintf(self.base, sizeof(self.base), "%s",
			 slash ? slash + 1 : info.dli_fname);
		self.machine = eh->e_machine;
		self.known = true;
	}
	pthread_atfork(NULL, NULL, exec_fork_child);
}

/* --- the interposers --- */

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int fd = tree_fd_now();
	bool pass = env_joins(envp, fd) && runs_preload_path(path, 0, false);
	struct exec_gate g;
	int ret;

	if (!real.execve) {
		errno = ENOSYS;
		return -1;
	}
	gate_enter(&g, pass);
	ret = real.execve(path, argv, envp);
	gate_leave(&g);
	return ret;
}

EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int fd = tree_fd_now();
	char path[PATH_MAX];
	bool pass = env_joins(envp, fd) &&
		    search_path(file, path, sizeof(path)) &&
		    runs_preload_path(path, 0, true);
	struct exec_gate g;
	int ret;

	if (!real.execvpe) {
		errno = ENOSYS;
		return -1;
	}
	gate_enter(&g, pass);
	ret = real.execvpe(file, argv, envp);
	gate_leave(&g);
	return ret;
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

EXPORT int fexecve(int exec_fd, char *const argv[], char *const envp[])
{
	int fd = tree_fd_now(), rfd;
	char proc[64];
	bool pass = false;
	struct exec_gate g;
	int ret;

	if (env_joins(envp, fd)) {
		/* The descriptor may be O_PATH: read the file anew. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", exec_fd);
		rfd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (rfd >= 0) {
			pass = runs_preload_fd(rfd, 0, false);
			syscall(SYS_close, rfd);
		}
	}
	if (!real.fexecve) {
		errno = ENOSYS;
		return -1;
	}
	gate_enter(&g, pass);
	ret = real.fexecve(exec_fd, argv, envp);
	gate_leave(&g);
	return ret;
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		    char *const envp[], int flags)
{
	int fd = tree_fd_now(), rfd = -1;
	bool pass = false;
	struct exec_gate g;
	int ret;

	if (env_joins(envp, fd)) {
		if (*path)
			rfd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
				     ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
		else if (flags & AT_EMPTY_PATH) {
			char proc[64];

			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
			rfd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		}
		if (rfd >= 0) {
			pass = runs_preload_fd(rfd, 0, false);
			syscall(SYS_close, rfd);
		}
	}
	if (!real.execveat) {
		errno = ENOSYS;
		return -1;
	}
	gate_enter(&g, pass);
	ret = real.execveat(dirfd, path, argv, envp, flags);
	gate_leave(&g);
	return ret;
}

/*
 * execl, execle, execlp: count the arguments (arg0 first, up to the NULL),
 * collect them on the stack, then the v form.
 */
static unsigned count_args(const char *arg0, va_list *ap)
{
	unsigned n = 0;

	if (!arg0)
		return 0;
	for (n = 1; n < MAX_ARGS && va_arg(*ap, char *); n++)
		;
	return n;
}

static void collect_args(char **argv, unsigned n, const char *arg0,
			 va_list *ap)
{
	unsigned i;

	if (n)
		argv[0] = (char *)arg0;
	for (i = 1; i < n; i++)
		argv[i] = va_arg(*ap, char *);
	argv[n] = NULL;
}

/*
 * The list forms: argv gathered from the arguments after arg0 (and, with
 * with_env, the environment after the NULL), then execve or, with search,
 * execvpe, the interposed ones above.
 */
static int exec_list(const char *path, const char *arg0, va_list *ap,
		     bool with_env, bool search)
{
	char *const *envp = environ;
	va_list cp;
	unsigned n;

	va_copy(cp, *ap);
	n = count_args(arg0, &cp);
	va_end(cp);
	if (n == MAX_ARGS) {
		errno = E2BIG;
		return -1;
	}
	{
		char *argv[n + 1];

		collect_args(argv, n, arg0, ap);
		if (with_env) {
			if (n)
				(void)va_arg(*ap, char *);	/* the NULL */
			envp = va_arg(*ap, char *const *);
		}
		return search ? execvpe(path, argv, envp) :
				execve(path, argv, envp);
	}
}

EXPORT int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(path, arg0, &ap, false, false);
	va_end(ap);
	return ret;
}

EXPORT int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(path, arg0, &ap, true, false);
	va_end(ap);
	return ret;
}

EXPORT int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(file, arg0, &ap, false, true);
	va_end(ap);
	return ret;
}

EXPORT int posix_spawn(pid_t *pid, const char *path,
		       const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[],
		       char *const envp[])
{
	int fd = tree_fd_now();
	bool pass = env_joins(envp, fd) && runs_preload_path(path, 0, false);
	struct exec_gate g;
	int ret;

	if (!real.posix_spawn)
		return ENOSYS;
	gate_enter(&g, pass);
	ret = real.posix_spawn(pid, path, fa, attr, argv, envp);
	gate_leave(&g);
	return ret;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[],
			char *const envp[])
{
	int fd = tree_fd_now();
	char path[PATH_MAX];
	bool pass = env_joins(envp, fd) &&
		    search_path(file, path, sizeof(path)) &&
		    runs_preload_path(path, 0, true);
	struct exec_gate g;
	int ret;

	if (!real.posix_spawnp)
		return ENOSYS;
	gate_enter(&g, pass);
	ret = real.posix_spawnp(pid, file, fa, attr, argv, envp);
	gate_leave(&g);
	return ret;
}

/* The shell of system() and popen(): /bin/sh, with this environment. */
static bool shell_joins(void)
{
	return env_joins(environ, tree_fd_now()) &&
	       runs_preload_path("/bin/sh", 0, false);
}

EXPORT int system(const char *command)
{
	int fd, ret;

	if (!real.system) {
		errno = ENOSYS;
		return -1;
	}
	window_open(command && shell_joins(), &fd);
	ret = real.system(command);
	window_close(fd);
	return ret;
}

EXPORT FILE *popen(const char *command, const char *type)
{
	FILE *f;
	int fd;

	if (!real.popen) {
		errno = ENOSYS;
		return NULL;
	}
	window_open(shell_joins(), &fd);
	f = real.popen(command, type);
	window_close(fd);
	return f;
}
