/* SPDX-License-Identifier: MIT */
/*
 * vmstat.h - a process's counters (vmstat.c): the blocks the budget's
 * shared memory holds (memcontrol.h), and what adds to and folds them.
 * count_event() reads the runtime's pointer to them: it is in runtime.h.
 */
#ifndef USWAP_VMSTAT_H
#define USWAP_VMSTAT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "uswap.h"
#include "zswap.h"

/*
 * A process's counters (vmstat.c): its events and gauges by enum
 * uswap_counter, its fault latency histogram, and its compressed pool's
 * counters (zswap.h).  They live in the budget's shared memory, one block
 * per member, so that they outlive the process however it ends: the
 * member that reaps it folds them into the tree's `reaped` totals
 * (memcontrol.c).
 */
struct vmstat {
	_Atomic uint64_t ev[USWAP_NR_COUNTERS];
	_Atomic uint64_t latency[USWAP_LATENCY_BUCKETS];
	_Atomic uint64_t zswap[ZSWAP_NR_COUNTERS];
} __attribute__((aligned(64)));

/*
 * The counters of the members gone before the tree (vmstat.c's fold):
 * events only, under enum uswap_counter (the pool's included), summed.
 */
struct vmstat_reaped {
	_Atomic uint64_t ev[USWAP_NR_COUNTERS];
	_Atomic uint64_t latency[USWAP_LATENCY_BUCKETS];
	_Atomic uint64_t processes;	/* members that ended without a word */
};

struct uswap_runtime;

/* vmstat.c */
void count_latency(struct uswap_runtime *rt, uint64_t us);
/* Is counter c a gauge (a level or a limit), not an event count? */
bool counter_is_gauge(unsigned c);
/* Add the events of a gone process's counters to the tree's reaped ones. */
void vmstat_fold(struct vmstat *from, struct vmstat_reaped *into);

#endif /* USWAP_VMSTAT_H */
