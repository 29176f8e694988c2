// SPDX-License-Identifier: MIT
/*
 * slotalloc.c - the slot allocator alone (src/swap/swapfile.c, src/swap/swap_map.c):
 * how many allocations and frees a second it serves to N threads at once,
 * with no I/O.
 *
 * Each thread allocates runs of 2^order slots from its own context (as a
 * reclaiming thread does) and holds the last HOLD of them; past that, each
 * allocation is paired with a free.  Without --cross a thread frees its own
 * runs; with --cross it frees the runs the previous thread allocated
 * (handed over through a one-way queue), as faults in the program's threads
 * free the slots a reclaimer allocated: frees then land in clusters other
 * threads own.  Frees take the oldest run (memory faulted back in the order
 * it went out, as a sequential program does), or with --random any of the
 * older half (a program with random access).  The device is 4 GiB of map
 * only (no file).
 *
 * This is where the allocator's locking shows: one device lock over
 * everything makes every thread wait for the others; per-cluster locks let
 * a thread allocate in its own cluster and free in another's side by side.
 * Figures are ratios between builds or thread counts measured in one run
 * on the same machine (bench/README.md), never absolute times.
 *
 * Usage: slotalloc [--threads N] [--order K] [--seconds S] [--cross]
 *		  [--random]
 * Prints: slotalloc threads=N order=K cross=0|1 random=0|1 secs=...
 *	   ops_per_s=...
 * (an op is one allocation and one free).  Exit status: 0, 1 on an
 * allocator error, 2 bad arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "swap.h"

#define HOLD		4096	/* runs a thread holds (a power of two) */
#define MAX_THREADS	64
#define DEVICE_BYTES	(4ull << 30)

struct worker {
	pthread_t tid;
	unsigned id;
	unsigned long ops;
	int err;
	/* Runs this thread allocated, oldest first: a one-way queue. */
	uint32_t ring[HOLD];
	_Atomic unsigned long head;	/* next to write (this thread) */
	_Atomic unsigned long tail;	/* next to free (the freer) */
};

static struct swap_info si;
static struct worker *workers;
static unsigned nr_threads = 1, order;
static bool cross, random_free;
static _Atomic bool stop;

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct worker *freed = cross ? &workers[(w->id + nr_threads - 1) %
						nr_threads] : w;
	struct swap_alloc_ctx ctx;
	const uint32_t nr = 1u << order;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (w->id + 1);

	swap_alloc_ctx_init(&ctx);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned long head = atomic_load(&w->head);
		unsigned long tail = atomic_load(&freed->tail);
		uint32_t off;

		/* Free one first when the queue to free from is full enough. */
		if (atomic_load(&freed->head) - tail >= HOLD / 2) {
			if (random_free) {
				/* Swap a random held run to the tail. */
				unsigned long j;
				uint32_t t;

				rnd = rnd * 6364136223846793005ull +
				      1442695040888963407ull;
				j = tail + (unsigned long)(rnd >> 33) % (HOLD / 2);
				t = freed->ring[j % HOLD];
				freed->ring[j % HOLD] = freed->ring[tail % HOLD];
				freed->ring[tail % HOLD] = t;
			}
			swap_slot_free(&si, freed->ring[tail % HOLD], nr);
			atomic_store(&freed->tail, tail + 1);
			w->ops++;
		}
		if (head - atomic_load(&w->tail) == HOLD)
			continue;	/* the freer is behind */
		w->err = swap_slot_alloc(&si, &ctx, order, &off);
		if (w->err)
			break;
		w->ring[head % HOLD] = off;
		atomic_store(&w->head, head + 1);
	}
	swap_alloc_ctx_release(&si, &ctx);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: slotalloc [--threads N] [--order K] "
		   "[--seconds S] [--cross] [--random]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "order", required_argument, NULL, 'o' },
		{ "seconds", required_argument, NULL, 's' },
		{ "cross", no_argument, NULL, 'x' },
		{ "random", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct timespec t0, t1, nap;
	unsigned long total = 0;
	double seconds = 2, secs;
	char *end;
	unsigned i;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			nr_threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !nr_threads || nr_threads > MAX_THREADS) {
				fprintf(stderr, "slotalloc: --threads: 1..%d\n",
					MAX_THREADS);
				return 2;
			}
			break;
		case 'o':
			order = (unsigned)strtoul(optarg, &end, 10);
			if (*end || order > 4) {
				fprintf(stderr, "slotalloc: --order: 0..4\n");
				return 2;
			}
			break;
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds <= 3600)) {
				fprintf(stderr, "slotalloc: --seconds: 0..3600\n");
				return 2;
			}
			break;
		case 'x':
			cross = true;
			break;
		case 'r':
			random_free = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (swap_info_init(&si, 0, DEVICE_BYTES) ||
	    !(workers = calloc(nr_threads, sizeof(*workers)))) {
		fprintf(stderr, "slotalloc: out of memory\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < nr_threads; i++) {
		workers[i].id = i;
		if (pthread_create(&workers[i].tid, NULL, worker_main,
				   &workers[i])) {
			fprintf(stderr, "slotalloc: pthread_create failed\n");
			return 1;
		}
	}
	nap.tv_sec = (time_t)seconds;
	nap.tv_nsec = (long)((seconds - (double)nap.tv_sec) * 1e9);
	nanosleep(&nap, NULL);
	atomic_store(&stop, true);
	for (i = 0; i < nr_threads; i++) {
		pthread_join(workers[i].tid, NULL);
		total += workers[i].ops;
		if (workers[i].err && !err)
			err = workers[i].err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		fprintf(stderr, "slotalloc: swap_slot_alloc: %s\n",
			strerror(-err));
		return 1;
	}
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("slotalloc threads=%u order=%u cross=%d random=%d secs=%.2f "
	       "ops_per_s=%.0f\n", nr_threads, order, cross, random_free,
	       secs, (double)total / secs);
	return 0;
}
