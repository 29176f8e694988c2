/* SPDX-License-Identifier: MIT */
/*
 * live.h - the live counters of a process for uswap stat and top (live.c).
 */
#ifndef USWAP_PRELOAD_LIVE_H
#define USWAP_PRELOAD_LIVE_H

struct uswap_runtime;

/*
 * Start publishing rt's counters to $USWAP_STATS_DIR/<pid>.live.json every
 * half second, from a detached thread.  Nothing without USWAP_STATS_DIR or
 * rt, or when this process already publishes.  Never fails the caller.
 */
void live_start(struct uswap_runtime *rt);

/* Stop publishing and remove the file; at exit.  Bounded wait. */
void live_stop(void);

#endif /* USWAP_PRELOAD_LIVE_H */
