// SPDX-License-Identifier: MIT
/*
 * trace.c - the folio history: a ring of the last events that changed a
 * folio's state or its pages (faults served, evictions and their moves,
 * drops), for explaining a wrong page after the fact.
 *
 * A soak round that finds a page it did not expect has only the page's
 * bytes to go on; the bug that made them is long past.  With USWAP_TRACE
 * set in the environment, each runtime records its folio events here,
 * and the program (the soak's worker) asks for the history of the
 * address it found wrong (uswap_trace_dump(), exported by the preload
 * library): the events of the folios that covered it, oldest first.
 *
 * The ring is one per process (a fork child carries on in its copy) and
 * takes 2 MiB when enabled; recording an event is one atomic increment
 * and a store of 32 bytes, no lock.  An entry being written while the
 * ring is dumped may show half-written: the dump is a witness, not a
 * proof.  Off (the default), each trace point costs one load of a flag.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "prim.h"
#include "uswap.h"
#include "trace.h"

#define TRACE_ENTRIES	(1u << 16)

struct trace_entry {
	uint64_t us;		/* prim_now_us() */
	uintptr_t addr;		/* the folio's first address */
	uint32_t nr;		/* its pages */
	uint16_t ev;		/* enum trace_event */
	uint16_t arg;		/* what the event says more (per event) */
	uint32_t fl;		/* the folio's flags then */
	int32_t tid;
};

bool trace_on;
static struct trace_entry *ring;
static _Atomic uint64_t ring_next;
static __thread int32_t my_tid __attribute__((tls_model("initial-exec")));

static const char *const trace_names[TRACE_NR_EVENTS] = {
	[TR_FILL]	= "filled (zeros)",
	[TR_LOAD]	= "loaded (arg: pages from the pool)",
	[TR_LOAD_FAIL]	= "load failed, the folio is lost (arg: -errno)",
	[TR_REPAIR]	= "a missing page of a resident folio filled with zeros",
	[TR_WAIT_MOVED]	= "a fault waits for the eviction (pages moving out)",
	[TR_WP]		= "write-protect fault (arg: 1 aborted an eviction)",
	[TR_PICK]	= "picked for eviction",
	[TR_MOVED]	= "captured (arg: pages moved)",
	[TR_HOLE]	= "capture found a hole (arg: page)",
	[TR_MOVE_FAIL]	= "capture failed (arg: -errno)",
	[TR_MOVE_BACK]	= "moved back (arg: pages)",
	[TR_ABORT]	= "eviction aborted (moved back, resident)",
	[TR_PUTBACK]	= "put back (not evicted)",
	[TR_SWAPPED]	= "swapped (arg: 1 clean)",
	[TR_ZAP]	= "zapped in place (arg: 1 moved, but some pages in place)",
	[TR_DROP]	= "dropped (munmap, MADV_DONTNEED; arg: pages)",
};

/* From the runtime's creation: USWAP_TRACE set turns the history on. */
void trace_init(void)
{
	const char *v = getenv("USWAP_TRACE");

	if (ring || !v || !*v || !strcmp(v, "0"))
		return;
	ring = prim_alloc(TRACE_ENTRIES * sizeof(*ring));
	if (ring)
		trace_on = true;
}

void trace_record(enum trace_event ev, uintptr_t addr, uint32_t nr,
		  uint32_t fl, long arg)
{
	uint64_t k = atomic_fetch_add_explicit(&ring_next, 1,
					       memory_order_relaxed);
	struct trace_entry *e = &ring[k % TRACE_ENTRIES];

	if (!my_tid)
		my_tid = (int32_t)gettid();
	*e = (struct trace_entry){
		.us = prim_now_us(), .addr = addr, .nr = nr, .ev = (uint16_t)ev,
		.arg = (uint16_t)arg, .fl = fl, .tid = my_tid,
	};
}

/*
 * Print the events of the folios that covered addr to stderr, oldest
 * first, with the time before the dump.  Nothing when the history is off.
 */
EXPORT void uswap_trace_dump(const void *addr)
{
	uint64_t end = atomic_load(&ring_next), k, now = prim_now_us();
	uintptr_t a = (uintptr_t)addr;
	unsigned shown = 0;

	if (!trace_on)
		return;
	k = end > TRACE_ENTRIES ? end - TRACE_ENTRIES : 0;
	fprintf(stderr, "uswap[%d]: the history of %p (last %llu events of the process):\n",
		(int)getpid(), addr, (unsigned long long)(end - k));
	for (; k < end; k++) {
		const struct trace_entry *e = &ring[k % TRACE_ENTRIES];

		if (e->ev >= TRACE_NR_EVENTS || a < e->addr ||
		    a >= e->addr + ((uintptr_t)e->nr << PAGE_SHIFT))
			continue;
		fprintf(stderr, "  -%8.3f ms tid %d folio %#lx+%u flags %#x: %s, arg %d\n",
			(double)(now - e->us) / 1000.0, e->tid,
			(unsigned long)e->addr, e->nr, e->fl,
			trace_names[e->ev], (int)(int16_t)e->arg);
		shown++;
	}
	fprintf(stderr, "uswap[%d]: %u events\n", (int)getpid(), shown);
}
