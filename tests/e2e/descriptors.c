// SPDX-License-Identifier: MIT
/*
 * descriptors.c - a runtime takes every descriptor of its with it: after
 * uswap_runtime_destroy the process has exactly the descriptors it had
 * before uswap_runtime_create, in the process that made the runtime, in a
 * fork child and a grandchild that carried it on, and in an exec'd image
 * that joined the budget (docs/reliability.md, soak bug 3).
 *
 * Each runtime here has swap I/O through io_uring when the kernel has it,
 * evicts (process_madvise on a pidfd), and hands out its budget's
 * descriptor for exec (uswap_runtime_tree_fd): the three that leaked.
 *
 * Every descriptor a runtime adds is close-on-exec and high in the table
 * (at least half of min(RLIMIT_NOFILE, 4096)), out of the program's way;
 * the budget's descriptor for exec crosses exec only when the caller
 * clears its FD_CLOEXEC for that exec (the preload library does it for
 * programs that run it), which the fork child here does.
 *
 * uswap_runtime_detach takes them all too, and every shared mapping:
 * after it the memory, swapped out before, reads back byte-exact as
 * ordinary memory of the process's own.
 *
 * Usage: descriptors [COMPRESSOR|off]
 *        descriptors --detach [COMPRESSOR|off]   (that part alone: no fork)
 *        descriptors --join FD   (the exec'd image: join, work, destroy)
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define MB (1ul << 20)
#define SIZE (24 * MB)
#define NPAGES (SIZE / T_PAGE)
#define MAX_FDS 256

struct fdset {
	unsigned n;
	int fd[MAX_FDS];
	char target[MAX_FDS][128];
};

static const char *who = "parent";
static const char *zswap = "off";

/* This process's descriptors, each with what it names. */
static void fd_snapshot(struct fdset *s)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[64];

	if (!d)
		t_fail("opendir /proc/self/fd: %s", strerror(errno));
	s->n = 0;
	while ((e = readdir(d))) {
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		if (s->n == MAX_FDS)
			t_fail("%s: more than %d descriptors", who, MAX_FDS);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, s->target[s->n], sizeof(s->target[0]) - 1);
		if (len < 0)
			continue;
		s->target[s->n][len] = 0;
		s->fd[s->n++] = fd;
	}
	closedir(d);
}

static bool fd_has(const struct fdset *s, int fd, const char *target)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (s->fd[i] == fd && !strcmp(s->target[i], target))
			return true;
	return false;
}

static bool fd_same(const struct fdset *a, const struct fdset *b)
{
	unsigned i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (!fd_has(b, a->fd[i], a->target[i]))
			return false;
	return true;
}

/*
 * The descriptors must be those of before, within two seconds (nothing of
 * the runtime should outlive destroy, but give a thread's exit its time).
 */
static void fd_check(const struct fdset *before, const char *when)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct fdset now;
	unsigned i, tries;

	for (tries = 0; tries < 40; tries++) {
		fd_snapshot(&now);
		if (fd_same(before, &now))
			return;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < now.n; i++)
		if (!fd_has(before, now.fd[i], now.target[i]))
			fprintf(stderr, "%s: %s: descriptor %d=%s is new\n", who,
				when, now.fd[i], now.target[i]);
	for (i = 0; i < before->n; i++)
		if (!fd_has(&now, before->fd[i], before->target[i]))
			fprintf(stderr, "%s: %s: descriptor %d=%s is gone\n", who,
				when, before->fd[i], before->target[i]);
	t_fail("%s (pool %s): descriptors %s differ from those before the runtime",
	       who, zswap, when);
}

/*
 * The descriptors the runtime added (those now not in before) are all
 * close-on-exec, and high: at least half of the top uswap uses.
 */
static void fd_check_high(const struct fdset *before, const char *when)
{
	struct rlimit rl;
	struct fdset now;
	long top = 4096;
	unsigned i, added = 0;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	fd_snapshot(&now);
	for (i = 0; i < now.n; i++) {
		int fl;

		if (fd_has(before, now.fd[i], now.target[i]))
			continue;
		added++;
		fl = fcntl(now.fd[i], F_GETFD);
		if (fl < 0 || !(fl & FD_CLOEXEC))
			t_fail("%s: %s: descriptor %d=%s is not close-on-exec",
			       who, when, now.fd[i], now.target[i]);
		if (now.fd[i] < top / 2)
			t_fail("%s: %s: descriptor %d=%s is low (below %ld)",
			       who, when, now.fd[i], now.target[i], top / 2);
	}
	if (!added)
		t_fail("%s: %s: the runtime added no descriptor", who, when);
}

/* Write version to every page, then check them all (through the swap). */
static void fill_check(char *mem, uint64_t version)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		t_fill(mem + p * T_PAGE, p, version);
	for (p = 0; p < NPAGES; p++)
		if (t_check(mem + p * T_PAGE, p, version))
			t_fail("%s: page %llu lost version %llu", who,
			       (unsigned long long)p, (unsigned long long)version);
}

static struct uswap_runtime *runtime(int join_fd)
{
	struct uswap_options opt;

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = 16384;
	if (strcmp(zswap, "off"))
		snprintf(opt.zswap, sizeof(opt.zswap), "%s", zswap);
	if (join_fd >= 0) {
		opt.flags |= USWAP_OPT_JOIN_TREE;
		opt.tree_fd = join_fd;
	}
	return t_runtime(&opt);
}

static char *map(struct uswap_runtime *rt)
{
	char *mem = uswap_mmap(rt, NULL, SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		t_fail("%s: uswap_mmap: %s", who, strerror(errno));
	return mem;
}

/* The runtime went to work: memory went out and came back. */
static void check_swapped(struct uswap_runtime *rt)
{
	uint64_t v[USWAP_NR_COUNTERS];

	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	if (!v[USWAP_PGSTEAL] || !v[USWAP_PGMAJFAULT])
		t_fail("%s: nothing was evicted and read back (pgsteal %llu, pgmajfault %llu): the test tested nothing",
		       who, (unsigned long long)v[USWAP_PGSTEAL],
		       (unsigned long long)v[USWAP_PGMAJFAULT]);
}

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		t_fail("%s: waitpid: %s", who, strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The exec'd image: join the budget by fd, work, destroy; fd stays ours. */
static int joined(int fd)
{
	struct uswap_runtime *rt;
	struct fdset before;
	char *mem;

	who = "exec'd image";
	fd_snapshot(&before);
	if (fcntl(fd, F_GETFD) < 0)
		t_fail("%s: the budget's descriptor %d did not survive exec", who, fd);
	rt = runtime(fd);
	mem = map(rt);
	fill_check(mem, 5);
	check_swapped(rt);
	if (uswap_runtime_tree_fd(rt) != fd)
		t_fail("%s: uswap_runtime_tree_fd is not the descriptor it joined by", who);
	uswap_runtime_destroy(rt);
	fd_check(&before, "after destroy");
	return 0;
}

/* A fork child or grandchild: it carried the runtime on, works, leaves. */
static void carry_on(struct uswap_runtime *rt, char *mem, uint64_t version)
{
	if (!uswap_runtime_usable(rt))
		t_fail("%s: the runtime did not survive fork", who);
	fill_check(mem, version);
}

static void __attribute__((noreturn)) leave(struct uswap_runtime *rt,
					    const struct fdset *before)
{
	uswap_runtime_destroy(rt);
	fd_check(before, "after destroy");
	_exit(0);
}

/* The fork child, which forks a grandchild. */
static void child(struct uswap_runtime *rt, char *mem,
		  const struct fdset *before)
{
	pid_t g;

	who = "fork child";
	carry_on(rt, mem, 3);
	g = fork();
	if (g < 0)
		t_fail("%s: fork: %s", who, strerror(errno));
	if (g == 0) {
		who = "grandchild";
		carry_on(rt, mem, 4);
		leave(rt, before);
	}
	if (wait_child(g) != 0)
		t_fail("%s: the grandchild failed", who);
	leave(rt, before);
}

/* No shared mapping, and no budget, is left in this process. */
static void maps_check(const char *when)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	if (!f)
		t_fail("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";

		sscanf(line, "%*s %7s", perms);
		if (perms[3] == 's' || strstr(line, "uswap-tree"))
			t_fail("%s: %s: still mapped: %s", who, when, line);
	}
	fclose(f);
}

/* Create, evict, detach: the memory stays, byte-exact; nothing else. */
static void detach(void)
{
	struct uswap_runtime *rt;
	struct fdset before;
	uint64_t p;
	char *mem;
	int err;

	fd_snapshot(&before);
	rt = runtime(-1);
	mem = map(rt);
	fill_check(mem, 1);
	for (p = 0; p < NPAGES; p++)
		t_fill(mem + p * T_PAGE, p, 2);
	check_swapped(rt);
	err = uswap_runtime_detach(rt);
	if (err)
		t_fail("uswap_runtime_detach: %s", strerror(-err));
	fd_check(&before, "after detach");
	maps_check("after detach");
	for (p = 0; p < NPAGES; p++)
		if (t_check(mem + p * T_PAGE, p, 2))
			t_fail("%s: page %llu lost version 2 at detach", who,
			       (unsigned long long)p);
	fill_check(mem, 3);	/* ordinary memory: written and read */
	if (munmap(mem, SIZE))
		t_fail("munmap: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct uswap_runtime *rt;
	struct fdset before;
	char num[16];
	pid_t pid;
	char *mem;
	int fd;

	if (argc > 2 && !strcmp(argv[1], "--join"))
		return joined(atoi(argv[2]));
	if (argc > 1 && !strcmp(argv[1], "--detach")) {
		if (argc > 2)
			zswap = argv[2];
		detach();
		printf("descriptors (pool %s): detach left no descriptor and no shared mapping, memory byte-exact\n",
		       zswap);
		return 0;
	}
	if (argc > 1)
		zswap = argv[1];
	detach();

	/* Create, work, destroy. */
	fd_snapshot(&before);
	rt = runtime(-1);
	mem = map(rt);
	fill_check(mem, 1);
	check_swapped(rt);
	if (uswap_runtime_tree_fd(rt) < 0)
		t_fail("uswap_runtime_tree_fd failed");
	fd_check_high(&before, "with a runtime");
	uswap_runtime_destroy(rt);
	fd_check(&before, "after create and destroy");

	/* Again, with a fork child and a grandchild carrying it on. */
	rt = runtime(-1);
	mem = map(rt);
	fill_check(mem, 1);
	fd = uswap_runtime_tree_fd(rt);
	if (fd < 0)
		t_fail("uswap_runtime_tree_fd failed");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (pid == 0)
		child(rt, mem, &before);
	if (wait_child(pid) != 0)
		t_fail("the fork child failed");

	/* An exec'd image joins the budget by fd and leaves it. */
	snprintf(num, sizeof(num), "%d", fd);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Close-on-exec: this exec is one that joins. */
		if (fcntl(fd, F_SETFD, 0))
			_exit(126);
		execl("/proc/self/exe", argv[0], "--join", num, (char *)NULL);
		_exit(127);
	}
	if (wait_child(pid) != 0)
		t_fail("the exec'd image failed");

	fill_check(mem, 9);
	check_swapped(rt);
	uswap_runtime_destroy(rt);
	fd_check(&before, "after fork, exec and destroy");
	printf("descriptors (pool %s): create/destroy, fork child, grandchild, exec'd member: none left behind\n",
	       zswap);
	return 0;
}
