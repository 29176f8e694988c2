/* SPDX-License-Identifier: MIT */
/*
 * threadcpu.h - the CPU each thread of the program is on (threadcpu.c),
 * and the most CPUs uswap follows (the runtime's node of each CPU).
 * Apart from runtime.h: threadcpu.c needs no runtime.
 */
#ifndef USWAP_THREADCPU_H
#define USWAP_THREADCPU_H

#define MAX_CPUS	1024u

/* threadcpu.c: the CPU each thread of the program is on. */
void thread_cpu_register(void);
void thread_cpu_fork_child(void);
int thread_cpu_of(int tid);

#endif /* USWAP_THREADCPU_H */
