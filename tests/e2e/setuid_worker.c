// SPDX-License-Identifier: MIT
/*
 * setuid_worker.c - a worker that drops privileges holds nothing of the
 * tree's (tests/e2e/setuid_worker.sh runs it as root under uswap run).
 *
 * The parent (root) writes the worker's memory and has it evicted, forks
 * the worker, then writes a secret into memory of its own and has it
 * evicted too (to the swap file).  The worker drops to UID:GID as servers
 * do (setgroups, setgid, setuid) and then acts as the attacker it may be:
 *
 *  - every descriptor it still has is one of the test's own (0, 1, 2 and
 *    its pipes: the .sh starts it with no other), and no mapping is
 *    shared (or is the tree's budget);
 *  - its own memory, written before the change and evicted, reads back
 *    byte-exact;
 *  - its environment no longer leads a program it execs into the tree
 *    (no USWAP_TREE_FD, uswap out of LD_PRELOAD);
 *  - it reads every file it can still reach (its descriptors, the
 *    parent's /proc/PID/fd) looking for the secret, and writes a pattern
 *    over every one it can write (what a worker would plant).
 *
 * The parent then reads its secret back: byte-exact (with --verify off
 * too, where a planted page would pass unseen).
 *
 * Usage: setuid_worker UID GID
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MB		(1ul << 20)
#define OWN_SIZE	(16 * MB)	/* the worker's memory */
#define SECRET_SIZE	(48 * MB)
#define FILLER_SIZE	(64 * MB)
#define OWN_VERSION	11
#define SECRET_VERSION	12
#define MARK		"uswap-t-secret:"
#define PLANT		"uswap-t-planted"
#define PLANT_MAX	((off_t)256 << 20)

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fail("mmap: %s", strerror(errno));
	return p;
}

/* A secret page: (page, SECRET_VERSION) contents behind a marker. */
static void secret_fill(char *p, uint64_t page)
{
	t_fill(p, page, SECRET_VERSION);
	memcpy(p + 16, MARK, sizeof(MARK) - 1);
}

static bool secret_ok(const char *p, uint64_t page)
{
	char buf[T_PAGE];

	secret_fill(buf, page);
	return !memcmp(p, buf, T_PAGE);
}

static void fill(char *mem, size_t len, uint64_t version)
{
	uint64_t p;

	for (p = 0; p < len / T_PAGE; p++)
		t_fill(mem + p * T_PAGE, p, version);
}

/* Pages of mem that do not hold version. */
static uint64_t bad_pages(const char *mem, size_t len, uint64_t version)
{
	uint64_t p, bad = 0;

	for (p = 0; p < len / T_PAGE; p++)
		bad += t_check(mem + p * T_PAGE, p, version) != 0;
	return bad;
}

/* Pages of buf[0..len) that hold the secret's marker. */
static uint64_t count_marks(const char *buf, size_t len)
{
	uint64_t n = 0;
	size_t off;

	for (off = 0; off + T_PAGE <= len; off += T_PAGE)
		n += !memcmp(buf + off + 16, MARK, sizeof(MARK) - 1);
	return n;
}

/* Read all of fd looking for the secret; then write the plant over it. */
static void attack_fd(int fd, const char *what, uint64_t *secret,
		      uint64_t *planted)
{
	/* Aligned: the swap file may be open with O_DIRECT. */
	static char buf[1 << 20] __attribute__((aligned(4096)));
	static char plant[T_PAGE] __attribute__((aligned(4096)));
	struct stat st;
	off_t off = 0, size;
	ssize_t n;

	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
		return;
	size = st.st_size;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		*secret += count_marks(buf, (size_t)n);
		off += n;
	}
	memset(plant, 'P', sizeof(plant));
	memcpy(plant, PLANT, sizeof(PLANT) - 1);
	/* Over the slots this test's 192 MiB can use, not a whole device. */
	for (off = 0; off + T_PAGE <= size && off < PLANT_MAX; off += T_PAGE)
		if (pwrite(fd, plant, T_PAGE, off) == T_PAGE)
			(*planted)++;
	if (*secret || *planted)
		fprintf(stderr, "worker: %s: %llu secret pages read, %llu pages planted so far\n",
			what, (unsigned long long)*secret,
			(unsigned long long)*planted);
}

static bool allowed(int fd, const int *mine, unsigned n)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (mine[k] == fd)
			return true;
	return false;
}

/* The worker after its credentials changed: 0 if it holds nothing. */
static int worker_checks(const char *own, const int *mine, unsigned nmine,
			 pid_t parent)
{
	uint64_t secret = 0, planted = 0, bad;
	char path[256], link[512], line[1024];
	struct dirent *e;
	int failures = 0;
	DIR *d;
	FILE *f;

	/* Its own memory first, before the attack could touch anything. */
	bad = bad_pages(own, OWN_SIZE, OWN_VERSION);
	/* Nothing leads what it execs from now on back into the tree. */
	if (getenv("USWAP_TREE_FD") ||
	    (getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "libuswap"))) {
		fprintf(stderr, "worker: its environment still names the tree: USWAP_TREE_FD=%s LD_PRELOAD=%s\n",
			getenv("USWAP_TREE_FD") ? getenv("USWAP_TREE_FD") : "",
			getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
		failures++;
	}
	d = opendir("/proc/self/fd");
	if (!d)
		t_fail("worker: opendir /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = 0;
		if (!allowed(fd, mine, nmine)) {
			fprintf(stderr, "worker: still holds descriptor %d: %s\n",
				fd, link);
			failures++;
		}
		attack_fd(fd, link, &secret, &planted);
	}
	closedir(d);

	f = fopen("/proc/self/maps", "re");
	if (!f)
		t_fail("worker: /proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char perms[8] = "";

		sscanf(line, "%*s %7s", perms);
		if (perms[3] == 's' || strstr(line, "uswap-tree")) {
			fprintf(stderr, "worker: still maps %s", line);
			failures++;
		}
	}
	fclose(f);

	/* The parent's descriptors, by name. */
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)parent);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d))) {
			int fd;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/%.16s",
				 (int)parent, e->d_name);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			fprintf(stderr, "worker: opened the parent's %s\n", path);
			failures++;
			attack_fd(fd, path, &secret, &planted);
			close(fd);
		}
		closedir(d);
	}

	printf("worker: uid %d: %llu secret pages read, %llu pages planted, %llu of its own %lu pages wrong\n",
	       (int)getuid(), (unsigned long long)secret,
	       (unsigned long long)planted, (unsigned long long)bad,
	       OWN_SIZE / T_PAGE);
	fflush(stdout);
	return failures || secret || planted || bad;
}

int main(int argc, char **argv)
{
	int go[2], done[2], status, mine[5];
	char *own, *secret, *filler, c;
	uid_t uid;
	gid_t gid;
	uint64_t p, bad;
	pid_t pid, parent = getpid();

	if (argc != 3)
		t_fail("usage: setuid_worker UID GID");
	uid = (uid_t)atoi(argv[1]);
	gid = (gid_t)atoi(argv[2]);
	if (geteuid() != 0)
		t_skip("needs root");

	own = map(OWN_SIZE);
	secret = map(SECRET_SIZE);
	filler = map(FILLER_SIZE);
	fill(own, OWN_SIZE, OWN_VERSION);
	fill(filler, FILLER_SIZE, 1);	/* the worker's memory goes out */
	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		t_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		mine[0] = 0;
		mine[1] = 1;
		mine[2] = 2;
		mine[3] = go[0];
		mine[4] = done[1];
		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			t_fail("worker: the parent went away");
		if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
			t_fail("worker: dropping privileges: %s", strerror(errno));
		if (getuid() != uid || geteuid() != uid)
			t_fail("worker: still uid %d", (int)geteuid());
		status = worker_checks(own, mine, 5, parent);
		(void)!write(done[1], "x", 1);
		_exit(status);
	}
	close(go[0]);
	close(done[1]);

	/* The secret, written after the fork, and evicted. */
	for (p = 0; p < SECRET_SIZE / T_PAGE; p++)
		secret_fill(secret + p * T_PAGE, p);
	fill(filler, FILLER_SIZE, 2);
	(void)!write(go[1], "x", 1);
	(void)!read(done[0], &c, 1);
	if (waitpid(pid, &status, 0) != pid)
		t_fail("waitpid: %s", strerror(errno));

	for (bad = 0, p = 0; p < SECRET_SIZE / T_PAGE; p++)
		bad += !secret_ok(secret + p * T_PAGE, p);
	bad += bad_pages(own, OWN_SIZE, OWN_VERSION);
	printf("parent: %llu pages of its secret and memory wrong after the worker ran\n",
	       (unsigned long long)bad);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "FAIL: the worker %s %d\n",
			WIFEXITED(status) ? "exited" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return 1;
	}
	if (bad) {
		fprintf(stderr, "FAIL: the parent read back %llu wrong pages\n",
			(unsigned long long)bad);
		return 1;
	}
	return 0;
}
