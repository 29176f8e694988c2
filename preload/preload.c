// SPDX-License-Identifier: MIT
/*
 * preload.c - libuswap_preload.so: transparent mode.
 *
 * Loaded into a program with LD_PRELOAD (uswap run does that), it creates
 * a runtime from the USWAP_* environment and interposes mmap, munmap,
 * mremap and madvise, so that every anonymous private mapping of at least
 * --min-region bytes is managed, and (malloc.c) the malloc family, so that
 * large allocations are managed too; pthread_create, so that each new
 * thread tells where it runs (uswap_thread_started); the close and dup
 * families (fds.c: uswap's descriptors stay out of the program's reach),
 * the exec family and spawns (exec.c: the budget's descriptor goes only
 * where the preload runs), and the credential changes (creds.c: a process
 * leaves its tree first); and (protect.c) mprotect, the mlock family and
 * io_uring buffer registration, so that uswap knows which managed memory
 * it may evict and how to read it.  Only those symbols are exported
 * (preload.map).
 *
 * After fork the runtime carries on in the child, sharing its parent's
 * slots and budget (runtime.c); a child that could not keep it has its
 * inherited memory read in and gets a runtime of its own the first time
 * it maps managed memory.  At exit the counters are written as JSON to
 * $USWAP_STATS_DIR/<pid>.json (set by uswap run) or to $USWAP_STATS, each
 * through a new file renamed into place (never through a link);
 * while the process runs, live.c publishes them for uswap stat and top.
 * A process that ends without its destructors (_exit, a signal, exec)
 * writes nothing: its counters, kept in the tree's shared memory, are
 * taken over by the process that reaps it, or uswap run takes its last
 * live ones (docs/uswap.1, STATISTICS).
 * The runtime is not destroyed at exit: other threads may still run.
 * A process that cannot start a runtime exits 125 (before main at
 * start-up) unless USWAP_FALLBACK=run: then it runs unmanaged.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uswap.h"
#include "fdtable.h"
#include "live.h"
#include "signals.h"
#include "slab.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

/* malloc.c: this thread is inside uswap (its allocations are ours). */
void preload_uswap_enter(void);
void preload_uswap_leave(void);
/* runtime.c: the runtime's fork handlers, registered now. */
void runtime_atfork_init(void);

static struct uswap_runtime *rt;
static pid_t rt_pid;
static bool disabled;
static int tree_fd = -1;	/* rt's budget descriptor for exec (canonical) */
static int joined_fd = -1;	/* the one this image joined by (inherited) */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "uswap[%d]: ", (int)getpid());

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(STDERR_FILENO, buf, (size_t)n);
}

/*
 * Why a runtime found no memory, when an address space limit is the
 * likely cause: uswap's tables reserve address space for the largest
 * swap device (a swap file that grows takes half its file system), which
 * RLIMIT_AS counts.  "" otherwise.
 */
static const char *enomem_hint(int err, char *buf, size_t len)
{
	struct rlimit rl;

	if (err != -ENOMEM || getrlimit(RLIMIT_AS, &rl) ||
	    rl.rlim_cur == RLIM_INFINITY)
		return "";
	snprintf(buf, len, "; the address space limit (ulimit -v, %llu MiB) leaves too little for uswap's tables, which grow with the swap device: a smaller --swap-size needs less",
		 (unsigned long long)(rl.rlim_cur >> 20));
	return buf;
}

/*
 * This process cannot have a runtime.  USWAP_FALLBACK=run: say so and run
 * on unmanaged.  Otherwise (fail, the default): say so and exit 125 now,
 * before main() at start-up.  _exit, not exit: this may run inside the
 * program's malloc (which maps memory), where exit handlers could hang.
 */
static void cannot_start(int err)
{
	const char *fallback = getenv("USWAP_FALLBACK");
	char hint[256];

	if (fallback && !strcmp(fallback, "run")) {
		say("cannot start (%s%s): the program runs without uswap (USWAP_FALLBACK=run)",
		    strerror(-err), enomem_hint(err, hint, sizeof(hint)));
		return;
	}
	say("cannot start (%s%s): exiting with status 125 (USWAP_FALLBACK=run would run the program without uswap)",
	    strerror(-err), enomem_hint(err, hint, sizeof(hint)));
	_exit(125);
}

/*
 * After fork (the library's own handler has run first: it registered
 * before us): the runtime carries on in the child, unless the child could
 * not keep it; then a new one is created on first use.
 */
static void preload_atfork_child(void)
{
	if (rt && uswap_runtime_usable(rt))
		__atomic_store_n(&rt_pid, getpid(), __ATOMIC_RELEASE);
}

/*
 * Create the runtime.  A program exec'd by a process of the tree finds
 * the tree's budget in USWAP_TREE_FD and joins it; the first process of a
 * tree puts its budget there for the programs it execs.
 */
static int create_in_tree(struct uswap_options *opt)
{
	const char *v = getenv("USWAP_TREE_FD");
	char num[16];
	int ret, fd;

	if (v && *v) {
		opt->flags |= USWAP_OPT_JOIN_TREE;
		opt->tree_fd = atoi(v);
	}
	ret = uswap_runtime_create(opt, &rt);
	if (ret)
		return ret;
	pthread_atfork(NULL, NULL, preload_atfork_child);
	fd = uswap_runtime_tree_fd(rt);
	if (fd >= 0) {
		snprintf(num, sizeof(num), "%d", fd);
		setenv("USWAP_TREE_FD", num, 1);
	}
	/* Joined: the runtime hands on the very descriptor it joined by. */
	if ((opt->flags & USWAP_OPT_JOIN_TREE) && fd == opt->tree_fd)
		joined_fd = fd;
	__atomic_store_n(&tree_fd, fd >= 0 ? fd : -1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * exec.c: the budget's descriptor for exec of this process's runtime
 * (canonical number), or -1.  Never makes a runtime.  A vfork child (a
 * shell's, say) asks about its parent's: it shares the parent's memory,
 * and its table is a copy of the parent's.
 */
int preload_tree_fd(void);
int preload_tree_fd(void)
{
	if (!rt || (__atomic_load_n(&rt_pid, __ATOMIC_ACQUIRE) != getpid() &&
		    !fd_in_vfork_child()))
		return -1;
	return __atomic_load_n(&tree_fd, __ATOMIC_ACQUIRE);
}

/* fds.c: a dup2 moved uswap's descriptor `canonical`: USWAP_TREE_FD follows. */
void preload_tree_fd_moved(int canonical);
void preload_tree_fd_moved(int canonical)
{
	char num[16];

	if (canonical < 0 || canonical != preload_tree_fd())
		return;
	snprintf(num, sizeof(num), "%d", fd_current(canonical));
	setenv("USWAP_TREE_FD", num, 1);
}

/* exec.c: this library out of LD_PRELOAD. */
void exec_forget_preload(void);

/*
 * creds.c: this process's credentials are about to change.  It leaves its
 * tree for good (uswap_runtime_detach: its memory read in, nothing of the
 * tree's kept) and runs without uswap from now on, as do the programs it
 * execs later (this library leaves LD_PRELOAD).
 */
void preload_leave_tree(void);
void preload_leave_tree(void)
{
	struct uswap_runtime *r;

	pthread_mutex_lock(&init_lock);
	preload_uswap_enter();
	r = rt;
	if (r && rt_pid == getpid() && !disabled) {
		live_stop();
		__atomic_store_n(&tree_fd, -1, __ATOMIC_RELEASE);
		rt = NULL;
		(void)uswap_runtime_detach(r);
		/* The one it joined by stays the caller's, which is this file. */
		if (joined_fd >= 0)
			syscall(SYS_close, joined_fd);
	}
	joined_fd = -1;
	disabled = true;
	__atomic_store_n(&rt_pid, getpid(), __ATOMIC_RELEASE);
	unsetenv("USWAP_TREE_FD");
	exec_forget_preload();
	preload_uswap_leave();
	pthread_mutex_unlock(&init_lock);
}

/*
 * The runtime of this process, created on first use (and after fork).
 * NULL while the C library has no environment yet: code that runs before
 * it (an ASan program's runtime, mapping memory from the program's
 * preinit functions; any preinit function) would find no USWAP_* and get
 * a runtime of defaults.  Such early calls pass through unmanaged, and
 * the runtime is made on a later one (by the constructor at the latest).
 */
static struct uswap_runtime *runtime(void)
{
	struct uswap_options opt;
	char err[256];
	int ret;

	if (disabled)
		return NULL;
	if (__atomic_load_n(&rt_pid, __ATOMIC_ACQUIRE) == getpid())
		return rt;
	/*
	 * The fork handlers go first, even before the runtime can be made:
	 * the program's allocator, mapping its first memory, registers its
	 * own after them (runtime.c says why that order).
	 */
	runtime_atfork_init();
	if (!__atomic_load_n(&environ, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&init_lock);
	/*
	 * Creating the runtime allocates (the program's allocator may be the
	 * caller: jemalloc maps its first chunk under its init lock), so the
	 * malloc family serves this thread from a static arena meanwhile.
	 */
	preload_uswap_enter();
	if (rt_pid != getpid() && !disabled) {
		uswap_options_init(&opt);
		ret = uswap_options_from_env(&opt, err, sizeof(err));
		if (ret)
			say("%s", err);
		else
			ret = create_in_tree(&opt);
		if (ret) {
			cannot_start(ret);
			rt = NULL;
			disabled = true;
		}
		__atomic_store_n(&rt_pid, getpid(), __ATOMIC_RELEASE);
		live_start(rt);
		if (rt)
			signals_start();
	}
	preload_uswap_leave();
	pthread_mutex_unlock(&init_lock);
	return disabled ? NULL : rt;
}

struct uswap_runtime *preload_runtime_now(void)
{
	if (__atomic_load_n(&rt_pid, __ATOMIC_ACQUIRE) != getpid() || disabled)
		return NULL;
	return rt;
}

/* The runtime for malloc.c (hidden: the version script exports it not). */
struct uswap_runtime *preload_runtime(void);
struct uswap_runtime *preload_runtime(void)
{
	return runtime();
}

/*
 * Threads: each new thread of the program tells the runtime where it
 * runs (uswap_thread_started), so that the fault threads can serve its
 * faults from its CPU.  The C library's pthread_create does the rest.
 * uswap's own threads (made by a thread marked as uswap's, slab.h) are
 * not the program's: they go straight through, allocating nothing of the
 * program's.
 */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;

	free(p);
	uswap_thread_started();
	return ts.fn(ts.arg);
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	static int (*next)(pthread_t *, const pthread_attr_t *,
			   void *(*)(void *), void *);
	struct thread_start *ts;
	int err;

	if (!next)
		next = (int (*)(pthread_t *, const pthread_attr_t *,
				void *(*)(void *), void *))
			dlsym(RTLD_NEXT, "pthread_create");
	if (!next)
		return EAGAIN;
	if (slab_self())
		return next(thread, attr, fn, arg);
	ts = malloc(sizeof(*ts));
	if (!ts)
		return next(thread, attr, fn, arg);	/* not followed */
	ts->fn = fn;
	ts->arg = arg;
	err = next(thread, attr, thread_start, ts);
	if (err)
		free(ts);
	return err;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if ((flags & MAP_ANONYMOUS) && len >= 4096) {
		struct uswap_runtime *r = runtime();

		if (r)
			return uswap_mmap(r, addr, len, prot, flags, fd, off);
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
	if (rt && rt_pid == getpid())
		return uswap_munmap(rt, addr, len);
	return syscall(SYS_munmap, addr, len) < 0 ? -1 : 0;
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (rt && rt_pid == getpid())
		return uswap_mremap(rt, old, old_len, new_len, flags, new_addr);
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags,
			       new_addr);
}

EXPORT int madvise(void *addr, size_t len, int advice)
{
	if (rt && rt_pid == getpid())
		return uswap_madvise(rt, addr, len, advice);
	return syscall(SYS_madvise, addr, len, advice) < 0 ? -1 : 0;
}

/*
 * Write the counters to path: into a new file of a random name in its
 * directory, created here (O_EXCL), never through a link and checked on
 * its descriptor, then renamed over path.  A link at path is replaced,
 * never written through (and said so).
 */
static void write_stats_file(const char *path)
{
	char dir[4096], tmp[320], target[256] = "";
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct stat st;
	bool was_link = false;
	uint64_t r = 0;
	int dfd, fd = -1, i, err;
	ssize_t n;

	if (!*base || (size_t)(base - path) >= sizeof(dir))
		return;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s",
			 slash == path ? 1 : (int)(slash - path), path);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		say("cannot write stats to %s: %s", path, strerror(errno));
		return;
	}
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode)) {
		was_link = true;
		n = readlinkat(dfd, base, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
	}
	for (i = 0; i < 100 && fd < 0; i++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r += (uint64_t)getpid() << 20 | (uint64_t)i;
		snprintf(tmp, sizeof(tmp), ".%.200s.%012llx", base,
			 (unsigned long long)(r & 0xffffffffffffULL));
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		say("cannot write stats to %s: %s", path, strerror(errno));
		goto out_close_dir;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		say("cannot write stats to %s: the new file was replaced", path);
		close(fd);
		goto out_close_dir;	/* not ours: leave it */
	}
	err = uswap_stats_write_final(rt, fd);
	if (!err && renameat(dfd, tmp, dfd, base))
		err = -errno;
	if (err) {
		say("cannot write stats to %s: %s", path, strerror(-err));
		unlinkat(dfd, tmp, 0);
	} else if (was_link) {
		say("%s was a symbolic link (to %s): replaced by the stats file",
		    path, target);
	}
	close(fd);
out_close_dir:
	close(dfd);
}

/* $USWAP_STATS_DIR/<pid>.json (uswap run's), or $USWAP_STATS. */
static void write_stats(void)
{
	const char *dir = getenv("USWAP_STATS_DIR");
	const char *file = getenv("USWAP_STATS");
	char path[4096];

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/%d.json", dir, (int)getpid());
	else if (file && *file)
		snprintf(path, sizeof(path), "%s", file);
	else
		return;
	write_stats_file(path);
}

static void summary(void)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	say("pgfault %llu pgmajfault %llu pswpin %llu pswpout %llu resident_peak %llu MiB max %llu MiB",
	    (unsigned long long)v[USWAP_PGFAULT],
	    (unsigned long long)v[USWAP_PGMAJFAULT],
	    (unsigned long long)v[USWAP_PSWPIN],
	    (unsigned long long)v[USWAP_PSWPOUT],
	    (unsigned long long)(v[USWAP_RESIDENT_PEAK] >> 20),
	    (unsigned long long)(v[USWAP_MAX_BYTES] >> 20));
}

__attribute__((constructor)) static void preload_init(void)
{
	runtime();
}

__attribute__((destructor)) static void preload_fini(void)
{
	const char *v = getenv("USWAP_VERBOSE");

	live_stop();
	if (!rt || rt_pid != getpid())
		return;
	write_stats();
	/* uswap run prints the tree's merged summary itself. */
	if (v && *v && strcmp(v, "0") && !getenv("USWAP_STATS_DIR"))
		summary();
}
