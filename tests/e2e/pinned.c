// SPDX-License-Identifier: MIT
/*
 * pinned.c - the kernel writes into managed memory while reclaim evicts
 * the rest of it, and every byte it wrote is read back:
 *
 *   pinned [--api] MODE DIR
 *
 *   uring      8 MiB of a 64 MiB mapping registered as io_uring fixed
 *              buffers through liburing (which the preload library sees),
 *              read into with IORING_OP_READ_FIXED round after round
 *              (and, under uswap run, 32 MiB refused with ENOMEM first;
 *              registered again at the end, and left so);
 *   uring-raw  the same, registered with the raw system call (which no
 *              interposer sees);
 *   odirect    three threads read a file with O_DIRECT into slices of
 *              managed memory (the pages are pinned while the device
 *              writes them);
 *   vmsplice   vmsplice(2) from a pipe into managed memory;
 *   vm_writev  another process writes into managed memory with
 *              process_vm_writev(2).
 *
 * Meanwhile a thread writes through the rest of the mapping, four times
 * the budget, so that reclaim runs all the time.  DIR is where the file
 * goes (a local disk: O_DIRECT).  Plain mmap(2) under `uswap run --max
 * 16M`, or with --api a runtime of its own (max 16M) and uswap_mmap (for
 * the sanitizer builds).  Exit 0 when every page read back holds what the
 * kernel wrote, 1 otherwise (the message counts the pages that do not).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

#define MB		(1ul << 20)
#define SIZE		(64 * MB)
#define BUF		(8 * MB)		/* what the kernel writes into */
#define BUF_PAGES	(BUF / T_PAGE)
#define ROUNDS		6
#define ODIRECT_ROUNDS	30
#define THREADS		3
#define CHUNK		(BUF_PAGES / THREADS)
#define MIN(a, b)	((a) < (b) ? (a) : (b))

static struct uswap_runtime *rt;
static char *mem;
static atomic_bool stop;
static const char *mode, *dir;
static int file_fd = -1;

static void *map(size_t len)
{
	void *p = rt ? uswap_mmap(rt, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
		       mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		t_fail("mmap %zu: %s", len, strerror(errno));
	return p;
}

/* Write through [BUF, SIZE) of mem until stopped: reclaim never rests. */
static void *churn(void *arg)
{
	uint64_t n = (SIZE - BUF) / T_PAGE, v = 1, p;

	(void)arg;
	while (!stop) {
		for (p = 0; p < n && !stop; p++)
			t_fill(mem + BUF + p * T_PAGE, BUF_PAGES + p, v);
		v++;
	}
	return NULL;
}

/* Pages [first, first + n) of mem that do not hold version v. */
static uint64_t count_wrong(uint64_t first, uint64_t n, uint64_t v)
{
	uint64_t p, wrong = 0;

	for (p = first; p < first + n; p++)
		wrong += t_check(mem + p * T_PAGE, p, v) != 0;
	return wrong;
}

static void check(const char *what, uint64_t round, uint64_t first,
		  uint64_t n, uint64_t v)
{
	uint64_t wrong = count_wrong(first, n, v);

	if (wrong)
		t_fail("%s: round %llu: %llu of %llu pages do not hold what the kernel wrote (version %llu)",
		       what, (unsigned long long)round, (unsigned long long)wrong,
		       (unsigned long long)n, (unsigned long long)v);
}

/* The file DIR/pinned.data holds pages [0, BUF_PAGES) at version v. */
static void write_file(uint64_t v)
{
	static char chunk[16 * T_PAGE] __attribute__((aligned(4096)));
	uint64_t p, k;

	for (p = 0; p < BUF_PAGES; p += 16) {
		for (k = 0; k < 16; k++)
			t_fill(chunk + k * T_PAGE, p + k, v);
		if (pwrite(file_fd, chunk, sizeof(chunk), (off_t)(p * T_PAGE)) !=
		    (ssize_t)sizeof(chunk))
			t_fail("pwrite: %s", strerror(errno));
	}
	if (fdatasync(file_fd))
		t_fail("fdatasync: %s", strerror(errno));
}

static void open_file(void)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/pinned.data", dir);
	file_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (file_fd < 0)
		t_fail("open %s: %s", path, strerror(errno));
	unlink(path);
}

/* ---- io_uring fixed buffers ---- */

static void uring(bool raw)
{
	struct iovec iov = { mem, BUF };
	struct io_uring ring;
	uint64_t r, p;
	int err;

	err = io_uring_queue_init(8, &ring, 0);
	if (err)
		t_skip("io_uring is not available");
	for (p = 0; p < BUF_PAGES; p++)
		t_fill(mem + p * T_PAGE, p, 1);
	if (!raw && !rt && getenv("USWAP_MAX")) {
		/* More than the 16 MiB budget can hold: refused, as a lock. */
		struct iovec big = { mem, 32 * MB };

		err = io_uring_register_buffers(&ring, &big, 1);
		if (err != -ENOMEM)
			t_fail("registering 32 MiB of fixed buffers under a 16 MiB budget: %s, expected ENOMEM",
			       err ? strerror(-err) : "success");
	}
	if (raw)
		err = syscall(__NR_io_uring_register, ring.ring_fd,
			      IORING_REGISTER_BUFFERS, &iov, 1) < 0 ? -errno : 0;
	else
		err = io_uring_register_buffers(&ring, &iov, 1);
	if (err)
		t_fail("registering %lu MiB of fixed buffers: %s", BUF / MB,
		       strerror(-err));
	for (r = 2; r < 2 + ROUNDS; r++) {
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;

		write_file(r);
		usleep(300000);		/* reclaim takes the buffer, if it may */
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read_fixed(sqe, file_fd, mem, BUF, 0, 0);
		if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
			t_fail("READ_FIXED: cannot submit or wait");
		if (cqe->res != (int)BUF)
			t_fail("READ_FIXED returned %d, not %lu", cqe->res, BUF);
		io_uring_cqe_seen(&ring, cqe);
		usleep(300000);
		check(raw ? "READ_FIXED (raw registration)" : "READ_FIXED",
		      r, 0, BUF_PAGES, r);
	}
	if (raw)
		syscall(__NR_io_uring_register, ring.ring_fd,
			IORING_UNREGISTER_BUFFERS, NULL, 0);
	else
		io_uring_unregister_buffers(&ring);
	/*
	 * Registered again, and left so: the counters at exit show the
	 * buffers pinned (through liburing: nr_unevictable).
	 */
	if (!raw && io_uring_register_buffers(&ring, &iov, 1))
		t_fail("registering the buffers again failed");
	printf("%s: %d rounds of %lu MiB read into fixed buffers, every page right\n",
	       mode, ROUNDS, BUF / MB);
}

/* ---- O_DIRECT reads, several threads ---- */

static atomic_uint round_now, readers_done;

static void *odirect_reader(void *arg)
{
	uint64_t id = (uintptr_t)arg, n = BUF_PAGES / THREADS;
	uint64_t first = id * n, r, done;
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", file_fd);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		t_fail("open O_DIRECT: %s", strerror(errno));
	for (r = 2; r < 2 + ODIRECT_ROUNDS; r++) {
		while (atomic_load(&round_now) < r)
			usleep(1000);
		for (done = 0; done < n; done += CHUNK) {
				size_t len = MIN(CHUNK, n - done) * T_PAGE;
				off_t off = (off_t)((first + done) * T_PAGE);

				if (pread(fd, mem + off, len, off) != (ssize_t)len)
					t_fail("pread O_DIRECT: %s", strerror(errno));
			}
		check("O_DIRECT read", r, first, n, r);
		atomic_fetch_add(&readers_done, 1);
	}
	close(fd);
	return NULL;
}

static void odirect(void)
{
	pthread_t th[THREADS];
	uint64_t r;
	unsigned i;

	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, odirect_reader, (void *)(uintptr_t)i);
	for (r = 2; r < 2 + ODIRECT_ROUNDS; r++) {
		write_file(r);
		usleep(100000);		/* the slices go out meanwhile */
		atomic_store(&round_now, (unsigned)r);
		while (atomic_load(&readers_done) < (r - 1) * THREADS)
			usleep(1000);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	printf("odirect: %d threads, %d rounds, every page right\n", THREADS,
	       ODIRECT_ROUNDS);
}

/* ---- vmsplice from a pipe ---- */

struct feeder {
	int fd;
	uint64_t v;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	char page[T_PAGE];
	uint64_t p;

	for (p = 0; p < BUF_PAGES; p++) {
		t_fill(page, p, f->v);
		if (write(f->fd, page, T_PAGE) != T_PAGE)
			t_fail("write to the pipe: %s", strerror(errno));
	}
	return NULL;
}

static void vmsplice_into(void)
{
	uint64_t r;

	for (r = 2; r < 2 + ROUNDS; r++) {
		struct feeder f = { .v = r };
		size_t done = 0;
		pthread_t th;
		int pfd[2];

		if (pipe(pfd))
			t_fail("pipe: %s", strerror(errno));
		fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20);
		f.fd = pfd[1];
		pthread_create(&th, NULL, feed, &f);
		while (done < BUF) {
			struct iovec iov = { mem + done, BUF - done };
			ssize_t n = vmsplice(pfd[0], &iov, 1, 0);

			if (n <= 0)
				t_fail("vmsplice into managed memory: %s",
				       n ? strerror(errno) : "end of pipe");
			done += (size_t)n;
		}
		pthread_join(th, NULL);
		close(pfd[0]);
		close(pfd[1]);
		usleep(200000);
		check("vmsplice", r, 0, BUF_PAGES, r);
	}
	printf("vmsplice: %d rounds, every page right\n", ROUNDS);
}

/* ---- process_vm_writev from another process ---- */

static void writer(pid_t target, int cmd, int ack)
{
	static char chunk[64 * T_PAGE];
	uint64_t v;

	while (read(cmd, &v, sizeof(v)) == sizeof(v)) {
		uint64_t p, k;

		for (p = 0; p < BUF_PAGES; p += 64) {
			struct iovec l = { chunk, sizeof(chunk) };
			struct iovec r = { mem + p * T_PAGE, sizeof(chunk) };

			for (k = 0; k < 64; k++)
				t_fill(chunk + k * T_PAGE, p + k, v);
			if (process_vm_writev(target, &l, 1, &r, 1, 0) !=
			    (ssize_t)sizeof(chunk))
				_exit(2);
		}
		if (write(ack, &v, sizeof(v)) != sizeof(v))
			_exit(3);
	}
	_exit(0);
}

static void vm_writev(void)
{
	int cmd[2], ack[2], status;
	pid_t pid, parent = getpid();
	uint64_t r, got;

	if (pipe(cmd) || pipe(ack))
		t_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		t_fail("fork: %s", strerror(errno));
	if (!pid) {
		close(cmd[1]);
		close(ack[0]);
		writer(parent, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	for (r = 2; r < 2 + ROUNDS; r++) {
		if (write(cmd[1], &r, sizeof(r)) != sizeof(r) ||
		    read(ack[0], &got, sizeof(got)) != sizeof(got) || got != r)
			t_fail("process_vm_writev: the writer failed");
		usleep(200000);
		check("process_vm_writev", r, 0, BUF_PAGES, r);
	}
	close(cmd[1]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		t_fail("process_vm_writev: the writer ended with status %d", status);
	printf("vm_writev: %d rounds, every page right\n", ROUNDS);
}

int main(int argc, char **argv)
{
	pthread_t churner;
	int a = 1;

	if (argc > a && !strcmp(argv[a], "--api")) {
		struct uswap_options opt;

		uswap_options_init(&opt);
		opt.max = 16 * MB;
		rt = t_runtime(&opt);
		a++;
	}
	if (argc != a + 2) {
		fprintf(stderr, "usage: pinned [--api] uring|uring-raw|odirect|vmsplice|vm_writev DIR\n");
		return 2;
	}
	mode = argv[a];
	dir = argv[a + 1];
	mem = map(SIZE);
	open_file();
	pthread_create(&churner, NULL, churn, NULL);
	if (!strcmp(mode, "uring"))
		uring(false);
	else if (!strcmp(mode, "uring-raw"))
		uring(true);
	else if (!strcmp(mode, "odirect"))
		odirect();
	else if (!strcmp(mode, "vmsplice"))
		vmsplice_into();
	else if (!strcmp(mode, "vm_writev"))
		vm_writev();
	else
		t_fail("unknown mode %s", mode);
	stop = true;
	pthread_join(churner, NULL);
	if (rt) {
		uswap_munmap(rt, mem, SIZE);
		uswap_runtime_destroy(rt);
	}
	return 0;
}
