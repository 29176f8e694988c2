/* SPDX-License-Identifier: MIT */
/*
 * Description: the debug build's lock assertions (src/lockdep.h) pass
 * exactly when the calling thread holds the lock, in the mode asked: not
 * when another thread holds it, not after it was let go, not in the other
 * mode of a rwlock; they survive a condition wait and a fork, and forget
 * a lock re-initialised.  A failing assertion is run in a child process,
 * which must die of SIGABRT having logged "uswap[PID]: lockdep: ...".
 * Built without USWAP_DEBUG (make, not make debug) every case skips.
 * Usage: lockdep [CASE...] (tests/unit/unitlib.h); 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lockdep.h"
#include "swap.h"
#include "unitlib.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static bool debug_built(void)
{
#ifdef USWAP_DEBUG
	return true;
#else
	t_skip_case("built without USWAP_DEBUG: build/debug (make debug) has the assertions");
	return false;
#endif
}

/*
 * Run fn in a child process: true when it died of SIGABRT after a
 * lockdep message (the assertion fired), false when it returned.
 */
static bool fires(void (*fn)(void), const char *what)
{
	char buf[1024] = "";
	int p[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(p))
		t_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		fn();
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return false;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||
	    !strstr(buf, "]: lockdep: "))
		t_fail("%s: the child ended with status %#x, saying: %s", what,
		       status, buf);
	printf("  %s fires: %s", what, buf);
	return true;
}

static void expect(bool fired, bool want, const char *what)
{
	if (fired != want)
		t_fail("%s: the assertion %s", what, fired ? "fired" : "passed");
}

/* ---- a mutex ---- */

static void assert_m(void)
{
	lock_assert_held(&m);
}

static void lock_m_assert(void)
{
	pthread_mutex_lock(&m);
	lock_assert_held(&m);
	pthread_mutex_unlock(&m);
}

static void lock_unlock_assert(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	lock_assert_held(&m);
}

static void test_mutex(void)
{
	if (!debug_built())
		return;
	expect(fires(assert_m, "never locked"), true, "never locked");
	expect(fires(lock_m_assert, "locked"), false, "locked");
	expect(fires(lock_unlock_assert, "unlocked"), true, "unlocked");
}

/* ---- a lock another thread holds ---- */

static _Atomic int holding;

static void *holder(void *arg)
{
	pthread_mutex_lock(&m);
	holding = 1;
	while (holding != 2)
		usleep(1000);
	pthread_mutex_unlock(&m);
	return arg;
}

static void other_thread_assert(void)
{
	pthread_t t;

	pthread_create(&t, NULL, holder, NULL);
	while (holding != 1)
		usleep(1000);
	if (pthread_mutex_trylock(&m) != EBUSY)
		_exit(3);	/* not held: nothing to test */
	lock_assert_held(&m);
	holding = 2;
	pthread_join(t, NULL);
}

static struct swap_info si;

static void *cluster_holder(void *arg)
{
	swap_cluster_lock(&si, 0);
	holding = 1;
	while (holding != 2)
		usleep(1000);
	swap_cluster_unlock(&si, 0);
	return arg;
}

/* A uswap function whose caller must hold the cluster's lock. */
static void cluster_held_elsewhere(void)
{
	pthread_t t;

	pthread_create(&t, NULL, cluster_holder, NULL);
	while (holding != 1)
		usleep(1000);
	/* swap_assert_cluster_locked()'s trylock says EBUSY: held, by t. */
	swap_cluster_put_locked(&si, 0, 0);
	holding = 2;
	pthread_join(t, NULL);
}

static void test_other_thread(void)
{
	if (!debug_built())
		return;
	expect(fires(other_thread_assert, "held by another thread"), true,
	       "held by another thread");
	if (swap_info_init(&si, 0, 4ull << 21))
		t_fail("swap_info_init");
	expect(fires(cluster_held_elsewhere,
		     "swap_cluster_put_locked, the lock held by another thread"),
	       true, "swap_cluster_put_locked");
	swap_info_destroy(&si);
}

/* ---- a rwlock's modes ---- */

static void read_assert_read(void)
{
	pthread_rwlock_rdlock(&rw);
	lock_assert_held_read(&rw);
	lock_assert_held(&rw);
}

static void read_assert_write(void)
{
	pthread_rwlock_rdlock(&rw);
	lock_assert_held_write(&rw);
}

static void write_assert_write(void)
{
	pthread_rwlock_wrlock(&rw);
	lock_assert_held_write(&rw);
	lock_assert_held(&rw);
}

static void write_assert_read(void)
{
	pthread_rwlock_wrlock(&rw);
	lock_assert_held_read(&rw);
}

/* Read-locked twice, let go once: still held. */
static void read_twice(void)
{
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	lock_assert_held_read(&rw);
	pthread_rwlock_unlock(&rw);
	lock_assert_held(&rw);
}

static void test_rwlock(void)
{
	if (!debug_built())
		return;
	expect(fires(read_assert_read, "read, read asked"), false, "read");
	expect(fires(read_assert_write, "read, write asked"), true, "read");
	expect(fires(write_assert_write, "write, write asked"), false, "write");
	expect(fires(write_assert_read, "write, read asked"), true, "write");
	expect(fires(read_twice, "read twice, unlocked twice"), true,
	       "read twice");
}

/* ---- a condition wait, fork, init ---- */

static void cond_wait_assert(void)
{
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct timespec ts;

	pthread_mutex_lock(&m);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&cv, &m, &ts);
	lock_assert_held(&m);
	pthread_mutex_unlock(&m);
	lock_assert_none_held();
}

/* Held at fork: held in the child; re-initialised there: not held. */
static void fork_assert(void)
{
	pid_t pid;
	int status;

	pthread_mutex_lock(&m);
	pid = fork();
	if (pid == 0) {
		lock_assert_held(&m);
		pthread_mutex_init(&m, NULL);
		lock_assert_none_held();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		_exit(4);
	pthread_mutex_unlock(&m);
}

static void init_assert(void)
{
	pthread_mutex_lock(&m);
	pthread_mutex_init(&m, NULL);
	lock_assert_held(&m);
}

static void test_lifetime(void)
{
	if (!debug_built())
		return;
	expect(fires(cond_wait_assert, "after a condition wait"), false,
	       "after a condition wait");
	expect(fires(fork_assert, "across fork"), false, "across fork");
	expect(fires(init_assert, "re-initialised"), true, "re-initialised");
}

static const struct t_case cases[] = {
	T_CASE(mutex, "a mutex: held while locked, not before nor after"),
	T_CASE(other_thread, "a lock another thread holds does not pass, in uswap's functions too"),
	T_CASE(rwlock, "a rwlock: held for reading or writing, each only so"),
	T_CASE(lifetime, "a condition wait and a fork keep a lock held, init forgets it"),
	{ 0 }
};

int main(int argc, char **argv)
{
	return t_main(argc, argv, &(struct t_suite){ .cases = cases });
}
