/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the folio history (trace.c): events recorded when USWAP_TRACE
 * is set, dumped for one address by uswap_trace_dump().
 */
#ifndef USWAP_TRACE_H
#define USWAP_TRACE_H

#include <stdbool.h>
#include <stdint.h>

enum trace_event {
	TR_FILL,	/* a folio's first touch: zeros (before the copy) */
	TR_LOAD,	/* read back from its slots (before the copy) */
	TR_LOAD_FAIL,
	TR_REPAIR,	/* a missing page of a resident folio: zeros */
	TR_WAIT_MOVED,	/* a fault waits for pages moved out */
	TR_WP,		/* a write-protect fault */
	TR_PICK,	/* RESIDENT -> EVICTING */
	TR_MOVED,	/* captured by a move */
	TR_HOLE,	/* the capture found a page missing */
	TR_MOVE_FAIL,	/* the capture failed: pages back, resident */
	TR_MOVE_BACK,	/* pages moved back from the staging area */
	TR_ABORT,	/* a moved victim's store failed: resident */
	TR_PUTBACK,	/* a victim not evicted after all */
	TR_SWAPPED,	/* EVICTING or ZAPPING -> SWAPPED */
	TR_ZAP,		/* pages dropped in place */
	TR_DROP,	/* munmap or MADV_DONTNEED */
	TRACE_NR_EVENTS
};

extern bool trace_on;

void trace_init(void);
void trace_record(enum trace_event ev, uintptr_t addr, uint32_t nr,
		  uint32_t fl, long arg);

/* Record ev for the folio of nr pages at addr, when the history is on. */
static inline void trace_folio(enum trace_event ev, uintptr_t addr,
			       uint32_t nr, uint32_t fl, long arg)
{
	if (__builtin_expect(trace_on, 0))
		trace_record(ev, addr, nr, fl, arg);
}

#endif /* USWAP_TRACE_H */
