// SPDX-License-Identifier: MIT
/*
 * fdtable.c - uswap's descriptors, kept out of the program's reach.
 *
 * uswap lives in someone else's process and shares its descriptor table:
 * the userfaultfd, the swap devices, the budget's memfd, pagemap, a pidfd,
 * wake-up pipes and io_uring instances.  Programs do things to descriptors
 * they did not open: a daemon closes everything above 2 (close_range,
 * closefrom, a close loop), a shell or a server dup2()s its log onto a
 * fixed number.  Closing the userfaultfd makes the kernel fill every
 * swapped-out page with zeros; a log file dup2()ed onto a device's number
 * receives the program's evicted memory.  Three defences:
 *
 *  1. Placement.  Every descriptor of uswap's is moved, as it is made
 *     (fd_install), to the top of the table: the highest numbers below
 *     RLIMIT_NOFILE's soft limit, capped at FD_TOP_MAX (the kernel sizes a
 *     table by its highest number), close-on-exec.  Programs use the low
 *     numbers; dup2() targets are small fixed numbers.
 *
 *  2. Interposition (preload/fds.c).  The program's close() of one of
 *     uswap's numbers fails with EBADF, as for a descriptor that is not
 *     open; close_range() and closefrom() skip uswap's numbers; dup2() and
 *     dup3() onto one first move uswap's descriptor elsewhere (fd_move),
 *     then do what the program asked.  The table below is what they
 *     consult, without taking any lock the program may hold.
 *
 *  3. Tables of their own.  Each of uswap's threads (fault threads,
 *     reclaimer, the pool's threads) starts by unsharing its descriptor
 *     table (fd_thread_private): it keeps its runtime's descriptors under
 *     their canonical numbers, and closes everything else (the program's
 *     files, stdin/out/err included: a thread must not keep a pipe open
 *     that the program closed).  Whatever the program does to its own
 *     table, raw system calls included, the threads that serve faults and
 *     write to devices hold the right files, and the userfaultfd stays
 *     open (its registrations too: no page is ever filled with zeros).
 *     Such a thread writes its messages to the program's current stderr
 *     through pidfd_getfd (fd_stderr_write).
 *
 * Canonical numbers and moves.  uswap's code holds each descriptor's
 * canonical number (the one fd_install returned), which is what its
 * threads' tables have.  In the program's table the descriptor may have
 * moved (fd_move): program threads go through fd_use(), which gives the
 * number the descriptor has now, and checks (fstat: device and inode,
 * unique for each of uswap's kinds on the kernels uswap supports) that it
 * still names uswap's file.  A move waits for the uses of the old number
 * in flight (users) before the program's dup2 replaces it.
 *
 * Loss.  A raw system call can still close or replace a number in the
 * program's table.  A program thread finds that out at its next use of
 * the descriptor (fd_use), a fault thread by comparing the program's
 * table with its own at most every FD_CHECK_US (fd_check_program, kcmp
 * or /proc/self/fd): the program is then stopped with status 124 and one
 * message (fd_lost), before its memory can be read back wrong or written
 * anywhere but uswap's own files.
 *
 * Locking: fdt.lock (uswap's own mutex, never held across a call into the
 * program) serialises installs, releases, moves, a thread taking its own
 * table, and fork (atfork).  Lookups read the entries without it: an
 * entry is published by its state (release) after its fields.
 *
 * raw: the system calls here are made directly, on the numbers this file
 * manages: prim.c's wrappers translate numbers through it (fd_use).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"
#include "lockdep.h"
#include "log.h"
#include "prim.h"
#include "fdtable.h"

#ifndef SYS_close_range
#define SYS_close_range		436
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif
#ifndef SYS_kcmp
#define SYS_kcmp		312
#endif
#ifndef KCMP_FILE
#define KCMP_FILE		0
#endif
#ifndef CLONE_FILES
#define CLONE_FILES		0x00000400
#endif

#define FDT_MAX		512	/* descriptors of uswap's in one process */
#define FD_BAND		128	/* uswap's numbers: up to this many below the top */
#define FD_TOP_MAX	4096	/* the top: RLIMIT_NOFILE's soft limit, at most */
#define FD_CHECK_US	10000	/* a fault thread compares tables this often */

/*
 * A sanitizer reports from the thread that finds the bug, on descriptor
 * 2: in a sanitizer build (tests) uswap's threads keep it.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KEEP_STDERR	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KEEP_STDERR	1
#endif
#endif
#ifndef KEEP_STDERR
#define KEEP_STDERR	0
#endif

enum { ENTRY_FREE, ENTRY_LIVE };

/* The table a thread uses. */
enum {
	FDT_PROGRAM,		/* the program's (a program thread) */
	FDT_PRIVATE,		/* its own (one of uswap's threads) */
	FDT_SHARED,		/* one of uswap's threads that could not unshare */
};

struct fd_entry {
	_Atomic int state;
	int fd;			/* canonical number */
	_Atomic int cur;	/* its number in the program's table now */
	_Atomic unsigned users;	/* program threads using cur (fd_use) */
	pid_t pid;		/* the process that installed it */
	pid_t tid;		/* 0: in the program's table; else in this
				   thread's own only (made by it) */
	uint64_t seq;		/* install order: which threads' tables hold it */
	const void *owner;	/* its runtime, or NULL: the process's */
	const void *tag;	/* what holds it, when the number is not
				   enough to tell (fd_install_tagged) */
	dev_t dev;		/* identity, when installed */
	ino_t ino;
	enum fd_kind kind;
};

static struct {
	pthread_mutex_t lock;
	_Atomic unsigned hw;		/* entries [0, hw) may be live */
	_Atomic pid_t pid;		/* the process whose table this describes */
	_Atomic uint64_t seq;
	_Atomic uint64_t checked_us;	/* the last fd_check_program */
	_Atomic bool no_check;		/* the tables cannot be compared */
	struct fd_entry e[FDT_MAX];
} fdt = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t fdt_once = PTHREAD_ONCE_INIT;
static bool logged_full, logged_unshare, logged_kept;

#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS int tls_kind;		/* FDT_* */
static TLS const void *tls_owner;	/* the runtime of this thread */
static TLS uint64_t tls_seq;		/* entries up to this are in its table */

static const char *const kind_name[NR_FD_KINDS] = {
	[FD_UFFD]		= "userfaultfd",
	[FD_DEVICE]		= "swap device",
	[FD_BUDGET]		= "budget",
	[FD_BUDGET_EXEC]	= "budget (for exec)",
	[FD_PAGEMAP]		= "pagemap",
	[FD_SELF_MEM]		= "/proc/self/mem",
	[FD_PIDFD]		= "pidfd",
	[FD_WAKE]		= "wake-up pipe",
	[FD_RING]		= "io_uring instance",
	[FD_WAITSET]		= "fault thread's epoll set",
	[FD_REMOTE]		= "connection to a Redis node",
};

static pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static pid_t sys_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

/* Raw: the preload library's close() refuses uswap's numbers. */
static void sys_close(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

static void fdt_fork_prepare(void)
{
	pthread_mutex_lock(&fdt.lock);
}

static void fdt_fork_parent(void)
{
	pthread_mutex_unlock(&fdt.lock);
}

/* The child's table is a copy of the forking thread's: the program's. */
static void fdt_fork_child(void)
{
	unsigned i, hw = atomic_load(&fdt.hw);

	pthread_mutex_init(&fdt.lock, NULL);
	atomic_store(&fdt.pid, sys_getpid());
	atomic_store(&fdt.checked_us, 0);
	for (i = 0; i < hw; i++)
		atomic_store(&fdt.e[i].users, 0);
}

static void fdt_init(void)
{
	atomic_store(&fdt.pid, sys_getpid());
	pthread_atfork(fdt_fork_prepare, fdt_fork_parent, fdt_fork_child);
}

/*
 * Register the table's fork handlers now (runtime.c, before its own): a
 * fork child's table is usable (its lock new) before the runtime's child
 * handler closes and opens descriptors.
 */
void fd_table_init(void)
{
	pthread_once(&fdt_once, fdt_init);
}

bool fd_in_vfork_child(void)
{
	pid_t owner = atomic_load(&fdt.pid);

	return owner && sys_getpid() != owner;
}

void fd_owner_set(const void *owner)
{
	tls_owner = owner;
}

const void *fd_owner_get(void)
{
	return tls_owner;
}

bool fd_thread_is_private(void)
{
	return tls_kind == FDT_PRIVATE;
}

static bool live(const struct fd_entry *e)
{
	return atomic_load_explicit(&e->state, memory_order_acquire) ==
	       ENTRY_LIVE;
}

/* The entry of canonical fd in the program's table, or NULL. */
static struct fd_entry *lookup_program(int fd)
{
	unsigned i, hw = atomic_load_explicit(&fdt.hw, memory_order_acquire);

	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];

		if (live(e) && !e->tid && e->fd == fd)
			return e;
	}
	return NULL;
}

/* The entry whose number in the program's table is n, or NULL. */
static struct fd_entry *lookup_cur(int n)
{
	unsigned i, hw = atomic_load_explicit(&fdt.hw, memory_order_acquire);

	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];

		if (live(e) && !e->tid && atomic_load(&e->cur) == n)
			return e;
	}
	return NULL;
}

/*
 * n is the canonical number of a descriptor of uswap's: its threads hold
 * it there, even when the program's table has it elsewhere (moved), and a
 * new descriptor must not take that number.
 */
static bool number_taken(int n)
{
	return lookup_program(n) != NULL;
}

/* The first number of uswap's band. */
static int band_base(void)
{
	struct rlimit rl;
	long top = FD_TOP_MAX;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	return (int)(top > 2 * FD_BAND ? top - FD_BAND : top / 2);
}

/*
 * A close-on-exec copy of fd at the lowest free number from `from` up that
 * is no canonical number in use, or -errno (none below RLIMIT_NOFILE).
 * fd stays open.  Caller holds fdt.lock.
 */
static int place_high(int fd, int from)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, from);

	lock_assert_held(&fdt.lock);
	while (nfd >= 0 && number_taken(nfd)) {
		int next = fcntl(fd, F_DUPFD_CLOEXEC, nfd + 1);

		sys_close(nfd);
		nfd = next;
	}
	if (nfd < 0)
		return -errno;
	return nfd;
}

static struct fd_entry *entry_alloc(void)
{
	unsigned i, hw = atomic_load(&fdt.hw);

	for (i = 0; i < hw; i++)
		if (atomic_load(&fdt.e[i].state) == ENTRY_FREE)
			return &fdt.e[i];
	if (hw == FDT_MAX)
		return NULL;
	return &fdt.e[hw];
}

static void entry_publish(struct fd_entry *e)
{
	unsigned i = (unsigned)(e - fdt.e);

	atomic_store_explicit(&e->state, ENTRY_LIVE, memory_order_release);
	if (i >= atomic_load(&fdt.hw))
		atomic_store_explicit(&fdt.hw, i + 1, memory_order_release);
}

static int install(int fd, enum fd_kind kind, const void *owner, bool move,
		   const void *tag)
{
	struct fd_entry *e;
	struct stat st;
	int nfd = fd;

	if (fd < 0)
		return fd;
	pthread_once(&fdt_once, fdt_init);
	pthread_mutex_lock(&fdt.lock);
	if (move && fd < band_base()) {
		nfd = place_high(fd, band_base());
		if (nfd >= 0)
			sys_close(fd);
		else
			nfd = fd;	/* the band is full: it stays, protected */
	}
	fcntl(nfd, F_SETFD, FD_CLOEXEC);
	e = entry_alloc();
	if (!e) {
		pthread_mutex_unlock(&fdt.lock);
		uswap_log_once(&logged_full, "more than %u descriptors of uswap's: descriptor %d is not protected from the program",
			       FDT_MAX, nfd);
		return nfd;
	}
	if (fstat(nfd, &st)) {
		st.st_dev = 0;
		st.st_ino = 0;
	}
	e->fd = nfd;
	e->tid = tls_kind == FDT_PRIVATE ? sys_gettid() : 0;
	atomic_store(&e->cur, e->tid ? -1 : nfd);
	atomic_store(&e->users, 0);
	e->pid = sys_getpid();
	e->seq = atomic_fetch_add(&fdt.seq, 1) + 1;
	e->owner = owner;
	e->tag = tag;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->kind = kind;
	entry_publish(e);
	pthread_mutex_unlock(&fdt.lock);
	return nfd;
}

int fd_install(int fd, enum fd_kind kind)
{
	return install(fd, kind, tls_owner, true, NULL);
}

int fd_install_tagged(int fd, enum fd_kind kind, const void *tag)
{
	return install(fd, kind, tls_owner, true, tag);
}

int fd_install_process(int fd, enum fd_kind kind)
{
	return install(fd, kind, NULL, true, NULL);
}

/* An inherited descriptor, kept where it is (the number is someone's). */
int fd_install_in_place(int fd, enum fd_kind kind)
{
	return install(fd, kind, tls_owner, false, NULL);
}

/*
 * The entry uswap lets go of as fd in this thread: its own (one of uswap's
 * threads), else the program table's, else one of a thread of the parent
 * (in a fork child: in no table here).  Caller holds fdt.lock.
 */
static struct fd_entry *release_lookup(int fd, const void *tag, pid_t me,
					pid_t tid, bool *elsewhere)
{
	struct fd_entry *prog = NULL, *foreign = NULL;
	unsigned i, hw = atomic_load(&fdt.hw);

	lock_assert_held(&fdt.lock);
	*elsewhere = false;
	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];

		if (!live(e) || e->fd != fd || e->tag != tag)
			continue;
		if (!e->tid)
			prog = e;
		else if (e->pid != me)
			foreign = e;
		else if (e->tid == tid && tls_kind == FDT_PRIVATE)
			return e;
		else
			*elsewhere = true;	/* another live thread's own */
	}
	return prog ? prog : foreign;
}

int fd_release_tagged(int fd, const void *tag)
{
	const pid_t me = sys_getpid(), tid = sys_gettid();
	struct fd_entry *e;
	bool elsewhere;
	int ret = fd;

	if (fd < 0)
		return -1;
	pthread_mutex_lock(&fdt.lock);
	e = release_lookup(fd, tag, me, tid, &elsewhere);
	if (!e) {
		pthread_mutex_unlock(&fdt.lock);
		/* Not recorded (the table was full), or not in this table. */
		return elsewhere ? -1 : fd;
	}
	if (e->tid) {
		ret = e->pid == me ? fd : -1;
	} else if (tls_kind == FDT_PRIVATE) {
		/*
		 * One of uswap's threads lets go of a descriptor of the
		 * program's table: its own copy goes; the program's stays
		 * (recorded, so protected).
		 */
		pthread_mutex_unlock(&fdt.lock);
		uswap_log_once(&logged_kept, "descriptor %d (%s) let go by one of uswap's threads stays open in the program's table",
			       fd, kind_name[e->kind]);
		return fd;
	} else {
		ret = atomic_load(&e->cur);
		while (atomic_load(&e->users))
			sched_yield();
	}
	atomic_store_explicit(&e->state, ENTRY_FREE, memory_order_release);
	pthread_mutex_unlock(&fdt.lock);
	return ret;
}

int fd_release(int fd)
{
	return fd_release_tagged(fd, NULL);
}

static bool same_identity(const struct fd_entry *e, const struct stat *st)
{
	return (!e->dev && !e->ino) ||
	       (st->st_dev == e->dev && st->st_ino == e->ino);
}

/* The program's number n still names e's file (fstat, this table). */
static bool identity_ok(const struct fd_entry *e, int n)
{
	struct stat st;

	return n >= 0 && !fstat(n, &st) && same_identity(e, &st);
}

static void __attribute__((noreturn)) fd_lost(const struct fd_entry *e, int n)
{
	uswap_log("its %s (descriptor %d, canonical %d) was closed or replaced in the program's descriptor table behind its back (a raw close, close_range or dup2 system call): the program is stopped with status %d before any of its memory reads back wrong or goes into another file",
		  kind_name[e->kind], n, e->fd, FD_LOST_EXIT_STATUS);
	syscall(SYS_exit_group, FD_LOST_EXIT_STATUS);
	for (;;)
		;
}

int fd_use(int fd, struct fd_entry **ep)
{
	struct fd_entry *e;
	int cur;

	*ep = NULL;
	if (likely(tls_kind == FDT_PRIVATE) || fd < 0)
		return fd;
	e = lookup_program(fd);
	if (!e)
		return fd;
	atomic_fetch_add(&e->users, 1);
	cur = atomic_load(&e->cur);
	if (tls_kind == FDT_PROGRAM && !identity_ok(e, cur))
		fd_lost(e, cur);
	*ep = e;
	return cur;
}

void fd_unuse(struct fd_entry *e)
{
	if (e)
		atomic_fetch_sub(&e->users, 1);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close every descriptor of this thread's table but keep[0..n), sorted. */
static void close_all_but(const int *keep, unsigned n)
{
	unsigned first = 0, k;

	for (k = 0; k < n; k++) {
		unsigned f = (unsigned)keep[k];

		if (f > first)
			syscall(SYS_close_range, first, f - 1, 0);
		if (f + 1 > first)
			first = f + 1;
	}
	syscall(SYS_close_range, first, ~0u, 0);
}

/* Is the program leader a zombie (main() returned from pthread_exit)? */
static bool leader_gone(void)
{
	char buf[256];
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	char *p;

	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	sys_close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/*
 * Does the program's number cur still name e's file?  1 yes, 0 no, -1
 * cannot tell.  kcmp against this thread's own copy (e->fd) first; else
 * the program's table by name (the leader's, /proc/self/fd).
 */
static int program_has(const struct fd_entry *e, int cur)
{
	char path[64];
	struct stat st;

	if (cur < 0)
		return 0;
	if (tls_kind == FDT_PRIVATE &&
	    syscall(SYS_kcmp, sys_getpid(), sys_gettid(), KCMP_FILE, cur,
		    e->fd) == 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", cur);
	if (!stat(path, &st))
		return same_identity(e, &st);
	if (errno == ENOENT && !leader_gone())
		return 0;
	return -1;
}

void fd_thread_private(const void *owner)
{
	static int keep[FDT_MAX + 1];	/* under fdt.lock */
	struct fd_entry *lost = NULL;
	unsigned i, n = 0, hw;
	int lost_cur = -1;

	pthread_once(&fdt_once, fdt_init);
	tls_owner = owner;
	pthread_mutex_lock(&fdt.lock);
	if (syscall(SYS_unshare, CLONE_FILES)) {
		pthread_mutex_unlock(&fdt.lock);
		tls_kind = FDT_SHARED;
		uswap_log_once(&logged_unshare, "a thread of uswap's cannot have a descriptor table of its own (%s): it shares the program's",
			       strerror(errno));
		return;
	}
	tls_seq = atomic_load(&fdt.seq);
	hw = atomic_load(&fdt.hw);
	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];
		int cur;

		if (!live(e) || e->tid || (owner && e->owner && e->owner != owner))
			continue;
		cur = atomic_load(&e->cur);
		/*
		 * Its canonical number names it in this table already (a
		 * copy of another of uswap's threads' tables), or is made to
		 * again from where the program's table has it.
		 */
		if (!identity_ok(e, e->fd) &&
		    (cur < 0 || cur == e->fd ||
		     syscall(SYS_dup3, cur, e->fd, O_CLOEXEC) < 0 ||
		     !identity_ok(e, e->fd))) {
			/*
			 * Made after the table this one copies (that of
			 * another of uswap's threads): not for this thread,
			 * unless the program lost it.
			 */
			if (program_has(e, cur))
				continue;
			lost = e;
			lost_cur = cur;
			break;
		}
		keep[n++] = e->fd;
	}
	if (!lost) {
		if (KEEP_STDERR)
			keep[n++] = STDERR_FILENO;
		qsort(keep, n, sizeof(keep[0]), cmp_int);
		close_all_but(keep, n);
	}
	tls_kind = FDT_PRIVATE;
	pthread_mutex_unlock(&fdt.lock);
	if (lost)
		fd_lost(lost, lost_cur);
}

/* Is this thread's table one to hold e (taken when the thread started)? */
static bool mine(const struct fd_entry *e)
{
	return !e->tid && e->seq <= tls_seq &&
	       (!tls_owner || !e->owner || e->owner == tls_owner);
}

void fd_check_program(void)
{
	uint64_t now, last;
	struct fd_entry *lost = NULL;
	unsigned i, hw;
	int cur = -1;

	if (tls_kind != FDT_PRIVATE || atomic_load(&fdt.no_check))
		return;
	now = prim_now_us();
	last = atomic_load_explicit(&fdt.checked_us, memory_order_relaxed);
	if (now - last < FD_CHECK_US ||
	    !atomic_compare_exchange_strong(&fdt.checked_us, &last, now))
		return;
	if (pthread_mutex_trylock(&fdt.lock))
		return;		/* a move or an install: next time */
	hw = atomic_load(&fdt.hw);
	for (i = 0; i < hw && !lost; i++) {
		struct fd_entry *e = &fdt.e[i];
		int has;

		if (!live(e) || !mine(e))
			continue;
		cur = atomic_load(&e->cur);
		has = program_has(e, cur);
		if (has < 0) {
			atomic_store(&fdt.no_check, true);
			break;
		}
		if (!has)
			lost = e;
	}
	pthread_mutex_unlock(&fdt.lock);
	if (lost)
		fd_lost(lost, cur);
}

void fd_check_all(void)
{
	unsigned i, hw = atomic_load(&fdt.hw);

	if (tls_kind == FDT_PRIVATE)
		return;
	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];
		int cur;

		if (!live(e) || e->tid)
			continue;
		cur = atomic_load(&e->cur);
		if (!identity_ok(e, cur))
			fd_lost(e, cur);
	}
}

bool fd_is_uswap(int fd)
{
	return fd >= 0 && lookup_cur(fd) != NULL;
}

int fd_current(int fd)
{
	struct fd_entry *e = fd >= 0 ? lookup_program(fd) : NULL;

	return e ? atomic_load(&e->cur) : fd;
}

int fd_canonical_of(int fd)
{
	struct fd_entry *e = fd >= 0 ? lookup_cur(fd) : NULL;

	return e ? e->fd : -1;
}

int fd_move(int fd)
{
	struct fd_entry *e;
	int to;

	pthread_mutex_lock(&fdt.lock);
	e = lookup_cur(fd);
	if (!e) {
		pthread_mutex_unlock(&fdt.lock);
		return 0;
	}
	to = place_high(fd, band_base());
	if (to < 0)
		to = place_high(fd, 3);		/* anywhere */
	if (to < 0) {
		pthread_mutex_unlock(&fdt.lock);
		return to;
	}
	atomic_store(&e->cur, to);
	/* Uses of the old number finish before the program replaces it. */
	while (atomic_load(&e->users))
		sched_yield();
	pthread_mutex_unlock(&fdt.lock);
	return 0;
}

unsigned fd_program_numbers(unsigned first, unsigned last, int *out,
			    unsigned max)
{
	unsigned i, n = 0, hw = atomic_load_explicit(&fdt.hw,
						     memory_order_acquire);

	for (i = 0; i < hw && n < max; i++) {
		struct fd_entry *e = &fdt.e[i];
		int cur;

		if (!live(e) || e->tid)
			continue;
		cur = atomic_load(&e->cur);
		if (cur >= 0 && (unsigned)cur >= first && (unsigned)cur <= last)
			out[n++] = cur;
	}
	qsort(out, n, sizeof(out[0]), cmp_int);
	return n;
}

void fd_close_all_here(void)
{
	unsigned i, hw = atomic_load(&fdt.hw);

	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];

		if (live(e) && !e->tid)
			sys_close(atomic_load(&e->cur));
	}
}

/* The canonical number of the process's pidfd, in this thread's table. */
static int pidfd_here(void)
{
	unsigned i, hw = atomic_load(&fdt.hw);

	for (i = 0; i < hw; i++) {
		struct fd_entry *e = &fdt.e[i];

		if (live(e) && e->kind == FD_PIDFD && mine(e))
			return e->fd;
	}
	return -1;
}

void fd_stderr_write(const char *buf, size_t len)
{
	int pidfd, fd;

	if (tls_kind != FDT_PRIVATE || KEEP_STDERR) {
		(void)!write(STDERR_FILENO, buf, len);
		return;
	}
	/* The program's descriptor 2 as it is now, for this one write. */
	pidfd = pidfd_here();
	fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, STDERR_FILENO, 0)
			: -1;
	if (fd < 0)
		fd = open("/proc/self/fd/2", O_WRONLY | O_APPEND | O_NOCTTY |
			  O_CLOEXEC);
	if (fd < 0)
		return;
	(void)!write(fd, buf, len);
	sys_close(fd);
}
