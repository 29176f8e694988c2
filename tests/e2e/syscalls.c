// SPDX-License-Identifier: MIT
/*
 * syscalls.c - managed memory used by the kernel and by signal handlers
 * while most of it is swapped out:
 *  - write(2) from swapped-out memory to a file, read(2) back into
 *    swapped-out memory, and readv/writev over both (the kernel's own
 *    copies fault, and the fault threads serve them);
 *  - a SIGALRM handler, every millisecond, checks a page chosen at random
 *    and bumps a counter that lives in managed memory, while 4 threads
 *    check and rewrite pages of their own slices.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define MB (1ul << 20)
#define SIZE (32 * MB)
#define NPAGES (SIZE / T_PAGE)
#define THREADS 4

static char *mem;
/* In managed memory; atomic: the handler runs on any thread, maybe two at once. */
static _Atomic uint64_t *counter;
static atomic_uint_fast64_t handled, handler_bad;
static atomic_bool stop;
static _Atomic uint64_t version[NPAGES];

static void on_alarm(int sig)
{
	static uint64_t s = 99;
	uint64_t p = t_rand(&s) % NPAGES, v;

	(void)sig;
	/* The page's owner may be rewriting it: check the header only. */
	if (t_header(mem + p * T_PAGE, p, &v) || v == 0)
		atomic_fetch_add(&handler_bad, 1);
	atomic_fetch_add(counter, 1);
	atomic_fetch_add(&handled, 1);
}

static void *worker(void *arg)
{
	uint64_t id = (uintptr_t)arg, s = id + 1, first = id * NPAGES / THREADS;
	uint64_t n = NPAGES / THREADS, i;

	for (i = 0; !stop; i++) {
		uint64_t p = first + t_rand(&s) % n, v = atomic_load(&version[p]);

		if (t_check(mem + p * T_PAGE, p, v))
			t_fail("thread %llu: page %llu is not version %llu",
			       (unsigned long long)id, (unsigned long long)p,
			       (unsigned long long)v);
		if (i % 4 == 0) {
			t_fill(mem + p * T_PAGE, p, v + 1);
			atomic_store(&version[p], v + 1);
		}
	}
	return NULL;
}

static void check_all(const char *what)
{
	uint64_t p;

	for (p = 0; p < NPAGES; p++)
		if (t_check(mem + p * T_PAGE, p, atomic_load(&version[p])))
			t_fail("%s: page %llu wrong", what, (unsigned long long)p);
}

static void file_round_trip(void)
{
	char path[] = "/tmp/uswap-syscalls-XXXXXX", *buf = malloc(T_PAGE);
	struct iovec iov[2];
	uint64_t p;
	int fd = mkstemp(path);

	if (fd < 0 || !buf)
		t_fail("mkstemp: %s", strerror(errno));
	unlink(path);
	/* write(2) straight from (mostly swapped-out) managed memory. */
	if (write(fd, mem, SIZE) != (ssize_t)SIZE)
		t_fail("write from managed memory: %s", strerror(errno));
	for (p = 0; p < NPAGES; p += 97) {
		if (pread(fd, buf, T_PAGE, (off_t)(p * T_PAGE)) != T_PAGE ||
		    t_check(buf, p, 1))
			t_fail("the file has the wrong page %llu", (unsigned long long)p);
	}
	/* Rewrite the file with version 2, read(2) it over swapped-out memory. */
	for (p = 0; p < NPAGES; p++) {
		t_fill(buf, p, 2);
		if (pwrite(fd, buf, T_PAGE, (off_t)(p * T_PAGE)) != T_PAGE)
			t_fail("pwrite: %s", strerror(errno));
	}
	if (pread(fd, mem, SIZE / 2, 0) != (ssize_t)(SIZE / 2))
		t_fail("read into managed memory: %s", strerror(errno));
	iov[0].iov_base = mem + SIZE / 2;
	iov[0].iov_len = SIZE / 4;
	iov[1].iov_base = mem + 3 * SIZE / 4;
	iov[1].iov_len = SIZE / 4;
	if (preadv(fd, iov, 2, SIZE / 2) != (ssize_t)(SIZE / 2))
		t_fail("readv into managed memory: %s", strerror(errno));
	for (p = 0; p < NPAGES; p++)
		atomic_store(&version[p], 2);
	check_all("after read(2) into managed memory");
	close(fd);
	free(buf);
}

int main(void)
{
	struct uswap_options opt;
	struct uswap_runtime *rt;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	pthread_t th[THREADS];
	uint64_t p, v[USWAP_NR_COUNTERS];
	unsigned i;

	uswap_options_init(&opt);
	opt.max = 8 * MB;
	opt.folio_size = 16384;
	rt = t_runtime(&opt);
	mem = uswap_mmap(rt, NULL, SIZE + T_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		t_fail("uswap_mmap: %s", strerror(errno));
	counter = (_Atomic uint64_t *)(mem + SIZE);
	for (p = 0; p < NPAGES; p++) {
		t_fill(mem + p * T_PAGE, p, 1);
		atomic_store(&version[p], 1);
	}
	file_round_trip();

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	/* 3 s (sleep returns at each signal). */
	{
		time_t end = time(NULL) + 3;

		while (time(NULL) < end)
			usleep(100000);
	}
	stop = true;
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	check_all("at the end");
	uswap_stats_read(rt, v, USWAP_NR_COUNTERS);
	printf("syscalls: %llu signal handlers ran (counter in managed memory: %llu), pswpout %llu pswpin %llu\n",
	       (unsigned long long)atomic_load(&handled),
	       (unsigned long long)atomic_load(counter),
	       (unsigned long long)v[USWAP_PSWPOUT],
	       (unsigned long long)v[USWAP_PSWPIN]);
	if (atomic_load(&handler_bad))
		t_fail("%llu handler reads saw a wrong page header",
		       (unsigned long long)atomic_load(&handler_bad));
	if (!atomic_load(&handled) || atomic_load(counter) != atomic_load(&handled))
		t_fail("the handlers' counter in managed memory is %llu, %llu ran",
		       (unsigned long long)atomic_load(counter),
		       (unsigned long long)atomic_load(&handled));
	if (!v[USWAP_PSWPOUT] || !v[USWAP_PSWPIN])
		t_fail("nothing was swapped: the test tested nothing");
	uswap_runtime_destroy(rt);
	return 0;
}
