/* SPDX-License-Identifier: MIT */
/*
 * thread.h - uswap's own threads (runtime.c): for the runtime's and for
 * the compressed pool's, which know nothing of the runtime.
 */
#ifndef USWAP_THREAD_H
#define USWAP_THREAD_H

#include <pthread.h>

/*
 * runtime.c: start an internal thread, every signal blocked (they are the
 * program's), on a small stack of uswap's own, its allocations uswap's own
 * (slab.h).  0 or -errno.  join_thread() joins it and frees its stack.
 */
int start_thread(pthread_t *tid, const char *name, void *(*fn)(void *),
		 void *arg);
void join_thread(pthread_t tid);

#endif /* USWAP_THREAD_H */
