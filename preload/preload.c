// SPDX-License-Identifier: MIT
/*
 * preload.c - libuswap_preload.so: transparent mode.
 *
 * Loaded into a program with LD_PRELOAD (uswap run does that), it creates
 * a runtime from the USWAP_* environment and interposes mmap, munmap,
 * mremap and madvise, so that every anonymous private mapping of at least
 * --min-region bytes is managed, and (malloc.c) the malloc family, so that
 * large allocations are managed too; pthread_create, so that each new
 * thread tells where it runs (uswap_thread_started).  Only those symbols
 * are exported (preload.map).
 *
 * After fork the runtime carries on in the child, sharing its parent's
 * slots and budget (runtime.c); a child that could not keep it has its
 * inherited memory read in and gets a runtime of its own the first time
 * it maps managed memory.  At exit the counters are written as JSON to
 * $USWAP_STATS_DIR/<pid>.json (set by uswap run) or to $USWAP_STATS;
 * while the process runs, live.c publishes them for uswap stat and top.
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
#include <sys/syscall.h>
#include <unistd.h>

#include "uswap.h"
#include "live.h"
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
 * This process cannot have a runtime.  USWAP_FALLBACK=run: say so and run
 * on unmanaged.  Otherwise (fail, the default): say so and exit 125 now,
 * before main() at start-up.  _exit, not exit: this may run inside the
 * program's malloc (which maps memory), where exit handlers could hang.
 */
static void cannot_start(int err)
{
	const char *fallback = getenv("USWAP_FALLBACK");

	if (fallback && !strcmp(fallback, "run")) {
		say("cannot start (%s): the program runs without uswap (USWAP_FALLBACK=run)",
		    strerror(-err));
		return;
	}
	say("cannot start (%s): exiting with status 125 (USWAP_FALLBACK=run would run the program without uswap)",
	    strerror(-err));
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
	return 0;
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
	}
	preload_uswap_leave();
	pthread_mutex_unlock(&init_lock);
	return disabled ? NULL : rt;
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

static void write_stats(void)
{
	const char *dir = getenv("USWAP_STATS_DIR");
	const char *file = getenv("USWAP_STATS");
	char path[4096];
	int fd;

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/%d.json", dir, (int)getpid());
	else if (file && *file)
		snprintf(path, sizeof(path), "%s", file);
	else
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		say("cannot write stats to %s: %s", path, strerror(errno));
		return;
	}
	uswap_stats_write_json(rt, fd);
	close(fd);
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
