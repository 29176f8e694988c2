// SPDX-License-Identifier: MIT
/*
 * faultcost - what one 4 KiB fault costs, three ways, on this machine:
 *
 *   kernel   the kernel fills a page: first touch of anonymous memory;
 *   thread   userfaultfd as uswap uses it today: the faulting thread
 *            sleeps, a handler thread reads the message and resolves it
 *            with UFFDIO_COPY, which wakes the faulting thread;
 *   follow   the same, and the handler thread moves to the CPU the
 *            faulting thread last ran on (published by it here; uswap
 *            would read it from the thread's rseq area) whenever the two
 *            are apart;
 *   sigbus   userfaultfd with UFFD_FEATURE_SIGBUS: the faulting thread
 *            gets SIGBUS and resolves the fault itself with UFFDIO_COPY
 *            in its handler (no other thread, no wakeup).
 *
 * Each round touches every page of a fresh region once, one word per page,
 * in a scattered order (so that no fault-around or readahead helps), and
 * prints the mean per fault; rounds alternate between the ways, and the
 * medians of the rounds are printed last with their ratios to "kernel".
 * Timing here decides nothing: it is a figure for docs/fault-cost.md.
 *
 * Usage: faultcost [--pages N] [--rounds R]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ul

#ifndef UFFD_FEATURE_SIGBUS
#define UFFD_FEATURE_SIGBUS (1 << 7)
#endif

enum way { WAY_KERNEL, WAY_THREAD, WAY_FOLLOW, WAY_SIGBUS, NR_WAYS };
static const char *const way_name[NR_WAYS] = {
	"kernel", "thread", "follow", "sigbus"
};

static char *src_page;		/* what UFFDIO_COPY puts in */
static int uffd = -1;
static volatile int stop_handler;
static volatile int follow, app_cpu;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	fprintf(stderr, "faultcost: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int copy_page(uintptr_t addr)
{
	struct uffdio_copy c = {
		.dst = addr & ~(PAGE - 1), .src = (uintptr_t)src_page,
		.len = PAGE, .mode = 0,
	};

	if (ioctl(uffd, UFFDIO_COPY, &c) == 0 || errno == EEXIST)
		return 0;
	return -1;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (copy_page((uintptr_t)si->si_addr))
		abort();	/* not ours: no way to go on */
}

static void *handler_main(void *arg)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	struct uffd_msg m;

	(void)arg;
	while (!stop_handler) {
		if (poll(&p, 1, 100) <= 0)
			continue;
		if (read(uffd, &m, sizeof(m)) != sizeof(m))
			continue;
		if (m.event == UFFD_EVENT_PAGEFAULT &&
		    copy_page((uintptr_t)m.arg.pagefault.address))
			die("UFFDIO_COPY");
		if (follow && sched_getcpu() != app_cpu) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(app_cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
	}
	return NULL;
}

static int open_uffd(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		die("userfaultfd (vm.unprivileged_userfaultfd=1, or run as root)");
	if (ioctl(fd, UFFDIO_API, &api))
		die("UFFDIO_API");
	return fd;
}

/* One round: the mean µs per fault of touching n pages one way. */
static double round_of(enum way w, size_t n, const size_t *order)
{
	size_t len = n * PAGE, i;
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t th;
	double t0, t1;

	if (mem == MAP_FAILED)
		die("mmap");
	if (w != WAY_KERNEL) {
		struct uffdio_register reg = {
			.range = { .start = (uintptr_t)mem, .len = len },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};

		uffd = open_uffd(w == WAY_SIGBUS ? UFFD_FEATURE_SIGBUS : 0);
		if (ioctl(uffd, UFFDIO_REGISTER, &reg))
			die("UFFDIO_REGISTER");
		if (w == WAY_THREAD || w == WAY_FOLLOW) {
			follow = w == WAY_FOLLOW;
			stop_handler = 0;
			if (pthread_create(&th, NULL, handler_main, NULL))
				die("pthread_create");
		}
	}
	t0 = now_us();
	for (i = 0; i < n; i++) {
		if (w == WAY_FOLLOW)
			app_cpu = sched_getcpu();
		((volatile char *)mem)[order[i] * PAGE] = 1;
	}
	t1 = now_us();
	if (w == WAY_THREAD || w == WAY_FOLLOW) {
		stop_handler = 1;
		pthread_join(th, NULL);
	}
	if (w != WAY_KERNEL)
		close(uffd);
	munmap(mem, len);
	return (t1 - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = 16384, rounds = 7, i, r;
	struct sigaction sa;
	double *res[NR_WAYS], med[NR_WAYS];
	size_t *order;
	uint64_t s = 88172645463325252ull;
	int w;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < (size_t)argc)
			n = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < (size_t)argc)
			rounds = strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: faultcost [--pages N] [--rounds R]\n");
			return 2;
		}
	}
	if (!n || !rounds) {
		fprintf(stderr, "faultcost: --pages and --rounds must be positive\n");
		return 2;
	}
	src_page = aligned_alloc(PAGE, PAGE);
	order = malloc(n * sizeof(*order));
	for (w = 0; w < NR_WAYS; w++)
		res[w] = malloc(rounds * sizeof(double));
	for (w = 0; w < NR_WAYS; w++)
		if (!res[w])
			die("malloc");
	if (!src_page || !order)
		die("malloc");
	memset(src_page, 0x5a, PAGE);
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {	/* Fisher-Yates, xorshift */
		size_t j, t;

		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		j = (size_t)((s * 2685821657736338717ull) % (i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);

	for (r = 0; r < rounds; r++)
		for (w = 0; w < NR_WAYS; w++) {
			res[w][r] = round_of((enum way)w, n, order);
			printf("round %zu %-6s %.2f us per fault\n", r + 1,
			       way_name[w], res[w][r]);
		}
	for (w = 0; w < NR_WAYS; w++) {
		qsort(res[w], rounds, sizeof(double), cmp_double);
		med[w] = res[w][rounds / 2];
	}
	printf("faultcost pages=%zu rounds=%zu", n, rounds);
	for (w = 0; w < NR_WAYS; w++)
		printf(" %s_us=%.2f (%.2fx)", way_name[w], med[w], med[w] / med[WAY_KERNEL]);
	printf("\n");
	return 0;
}
