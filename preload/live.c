// SPDX-License-Identifier: MIT
/*
 * live.c - publish this process's counters while it runs, for uswap stat
 * and uswap top.
 *
 * uswap run names a statistics directory in USWAP_STATS_DIR.  Once this
 * process has a runtime, a publisher thread rewrites
 * $USWAP_STATS_DIR/<pid>.live.json every LIVE_PERIOD_MS with
 * uswap_stats_write_json(): into a hidden temporary name first, then
 * rename(2), so that a reader sees a whole document or the previous one.
 * At exit the file is removed (the final <pid>.json that preload.c writes
 * stays).  A process killed by a signal leaves its last snapshot behind:
 * readers ignore the files of processes that no longer run.
 *
 * The publisher is never on the program's fault path and takes none of the
 * program's locks: it writes with open/write/rename and the library's own
 * buffer, no stdio, no malloc.  It is detached, with every signal blocked,
 * and does not hold the process at exit: live_stop() waits at most
 * LIVE_STOP_WAIT_MS for a snapshot being written, then removes the file.
 *
 * After fork the child has no publisher (threads do not survive fork) and
 * the state below still describes the parent.  A child that carries on its
 * copy of the runtime (runtime.c) starts its own publisher from the fork
 * handler, as the runtime restarts its threads there; one that could not
 * keep it starts one when preload.c creates its new runtime.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "uswap.h"
#include "live.h"
#include "slab.h"

#define LIVE_PERIOD_MS		500
#define LIVE_STOP_WAIT_MS	1000
#define LIVE_STACK_SIZE		(256 * 1024)

static struct live {
	_Atomic pid_t pid;		/* the process the publisher runs in */
	struct uswap_runtime *rt;
	_Atomic bool stop;		/* set by live_stop(): write no more */
	/*
	 * Held while a snapshot is written and renamed into place, so that
	 * live_stop() removes the file only after the last rename.  A leaf
	 * lock; taken by the publisher and by live_stop() only.
	 */
	pthread_mutex_t lock;
	char path[4096];		/* .../<pid>.live.json */
	char tmp[4096];			/* .../.<pid>.live.tmp */
} live;

/*
 * The temporary file, new: what is at its name (left by an earlier process
 * of this pid, or put there) goes first, and the file is created here,
 * never through a link, and checked on its descriptor.  -1 if not.
 */
static int live_create(void)
{
	struct stat st;
	int fd;

	unlink(live.tmp);
	fd = open(live.tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Write one snapshot: the temporary file, then rename over the old one. */
static void live_publish(void)
{
	int fd = live_create();

	if (fd < 0)
		return;		/* the directory is gone: the tree is ending */
	if (uswap_stats_write_json(live.rt, fd)) {
		close(fd);
		unlink(live.tmp);
		return;
	}
	close(fd);
	if (rename(live.tmp, live.path))
		unlink(live.tmp);
}

static void *live_thread(void *arg)
{
	const struct timespec period = {
		.tv_sec = LIVE_PERIOD_MS / 1000,
		.tv_nsec = (LIVE_PERIOD_MS % 1000) * 1000000L,
	};

	(void)arg;
	slab_self_enter();	/* uswap's thread: its allocations are uswap's */
	while (!atomic_load(&live.stop)) {
		pthread_mutex_lock(&live.lock);
		if (!atomic_load(&live.stop))
			live_publish();
		pthread_mutex_unlock(&live.lock);
		nanosleep(&period, NULL);
	}
	return NULL;
}

/*
 * A detached thread with every signal blocked: signals are the program's.
 * Made as uswap's (slab.h): from the fork child's handler it may run
 * before the program's allocator has unlocked itself in the child.
 */
static int live_spawn(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, LIVE_STACK_SIZE);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	slab_self_enter();
	err = pthread_create(&tid, &attr, live_thread, NULL);
	slab_self_leave();
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/*
 * Around fork: no snapshot is being written.  The publisher holds a
 * descriptor of the temporary file while it writes one; a child forked
 * then would keep it for good (the publisher does not run there).  These
 * handlers are registered after the runtime's, so this prepare runs
 * before the runtime's (which waits for every folio in flight) and the
 * lock is never held across it.
 */
static void live_atfork_prepare(void)
{
	pthread_mutex_lock(&live.lock);
}

static void live_atfork_parent(void)
{
	pthread_mutex_unlock(&live.lock);
}

static void live_atfork_child(void)
{
	pthread_mutex_init(&live.lock, NULL);
	atomic_store(&live.pid, 0);
	if (live.rt && uswap_runtime_usable(live.rt))
		live_start(live.rt);
}

static void live_atfork_register(void)
{
	pthread_atfork(live_atfork_prepare, live_atfork_parent,
		       live_atfork_child);
}

void live_start(struct uswap_runtime *rt)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	const char *dir = getenv("USWAP_STATS_DIR");
	pid_t pid = getpid();
	int n, m;

	if (!rt || !dir || !*dir || atomic_load(&live.pid) == pid)
		return;
	pthread_once(&atfork_once, live_atfork_register);
	/* In a child after fork: the parent's publisher does not run here. */
	pthread_mutex_init(&live.lock, NULL);
	atomic_store(&live.stop, false);
	live.rt = rt;
	n = snprintf(live.path, sizeof(live.path), "%s/%d.live.json", dir,
		     (int)pid);
	m = snprintf(live.tmp, sizeof(live.tmp), "%s/.%d.live.tmp", dir,
		     (int)pid);
	if (n < 0 || m < 0 || (size_t)n >= sizeof(live.path) ||
	    (size_t)m >= sizeof(live.tmp))
		return;
	if (live_spawn())
		return;		/* no live view of this process; it runs on */
	atomic_store(&live.pid, pid);
}

void live_stop(void)
{
	struct timespec deadline;
	bool locked;

	if (atomic_load(&live.pid) != getpid())
		return;
	atomic_store(&live.stop, true);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += (LIVE_STOP_WAIT_MS % 1000) * 1000000L;
	deadline.tv_sec += LIVE_STOP_WAIT_MS / 1000 +
			   deadline.tv_nsec / 1000000000L;
	deadline.tv_nsec %= 1000000000L;
	/* A snapshot being written is renamed before the file goes. */
	locked = !pthread_mutex_timedlock(&live.lock, &deadline);
	unlink(live.path);
	if (locked)
		pthread_mutex_unlock(&live.lock);
	atomic_store(&live.pid, 0);
}
