// SPDX-License-Identifier: MIT
/*
 * threadcpu.c - which CPU a thread of the program is on, for the fault
 * threads (docs/fault-cost.md).
 *
 * A fault is cheapest when the fault thread that serves it runs on the
 * CPU of the thread that faulted: the faulting thread wakes it there
 * without an interprocessor interrupt, and it wakes the faulting thread
 * back there (here, 21 µs a fault against 38 µs across CPUs).  So after
 * each fault a fault thread moves to the faulting thread's CPU when they
 * are apart (memory.c, follow()).
 *
 * The faulting thread's CPU is in its rseq area, which the C library
 * registers for every thread and the kernel keeps current on every return
 * to user space: the CPU it faulted on.  Each thread of the program puts
 * the address of its area in a table here when it starts (the preload's
 * pthread_create, and the first thread at start-up) and takes it out when
 * it ends; the fault thread finds it by the thread id the userfaultfd
 * message carries.  The area is read with process_vm_readv, which fails
 * cleanly where a plain load could fault: a thread may end (a signal
 * handler calling pthread_exit) while its fault message is still queued.
 * A thread that is not in the table (the C library registered no rseq, or
 * the thread was made by clone() directly) is simply not followed.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base.h"
#include "prim.h"
#include "threadcpu.h"
#include "uswap.h"

/* glibc 2.35 and later: where the thread's rseq area is, and its size. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

#define TC_SLOTS	4096u		/* a power of two */
#define TC_GONE		(-1)		/* a slot whose thread ended */
#define RSEQ_CPU_ID	4		/* offset of cpu_id in struct rseq */

struct tc_slot {
	_Atomic int tid;		/* 0 never used, TC_GONE freed */
	_Atomic uintptr_t cpu_id;	/* address of the thread's cpu_id */
};

static struct tc_slot tc[TC_SLOTS];
static _Atomic bool tc_no_readv;	/* process_vm_readv refused (seccomp) */
static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
static bool tc_key_ok;

static unsigned tc_hash(int tid)
{
	return ((unsigned)tid * 2654435761u) & (TC_SLOTS - 1);
}

static void tc_thread_end(void *unused)
{
	int tid = (int)gettid();
	unsigned i, k;

	(void)unused;
	for (k = 0, i = tc_hash(tid); k < TC_SLOTS; k++, i = (i + 1) & (TC_SLOTS - 1)) {
		int t = atomic_load(&tc[i].tid);

		if (t == 0)
			return;
		if (t == tid) {
			atomic_store(&tc[i].cpu_id, 0);
			atomic_store(&tc[i].tid, TC_GONE);
			return;
		}
	}
}

static void tc_init(void)
{
	tc_key_ok = pthread_key_create(&tc_key, tc_thread_end) == 0;
}

/* The calling thread of the program: put its rseq area in the table. */
void thread_cpu_register(void)
{
	int tid = (int)gettid();
	uintptr_t addr;
	unsigned i, k;

	if (!&__rseq_offset || !&__rseq_size || __rseq_size < 8)
		return;			/* no rseq registered by the C library */
	pthread_once(&tc_once, tc_init);
	if (!tc_key_ok)
		return;			/* could not forget it at its end */
	addr = (uintptr_t)__builtin_thread_pointer() + (uintptr_t)__rseq_offset +
	       RSEQ_CPU_ID;
	/* Registered already (only this thread adds its tid)? */
	for (k = 0, i = tc_hash(tid); k < TC_SLOTS; k++, i = (i + 1) & (TC_SLOTS - 1)) {
		int t = atomic_load(&tc[i].tid);

		if (t == 0)
			break;
		if (t == tid) {
			atomic_store(&tc[i].cpu_id, addr);
			return;
		}
	}
	for (k = 0, i = tc_hash(tid); k < TC_SLOTS; k++, i = (i + 1) & (TC_SLOTS - 1)) {
		int t = atomic_load(&tc[i].tid);

		if ((t == 0 || t == TC_GONE) &&
		    atomic_compare_exchange_strong(&tc[i].tid, &t, tid)) {
			atomic_store(&tc[i].cpu_id, addr);
			pthread_setspecific(tc_key, (void *)1);	/* its end */
			return;
		}
	}
	/* Full: this thread is not followed. */
}

EXPORT void uswap_thread_started(void)
{
	thread_cpu_register();
}

/* In a child after fork: the only thread is the caller, with a new id. */
void thread_cpu_fork_child(void)
{
	unsigned i;

	for (i = 0; i < TC_SLOTS; i++) {
		atomic_store(&tc[i].tid, 0);
		atomic_store(&tc[i].cpu_id, 0);
	}
	thread_cpu_register();
}

/* The CPU thread tid of this process was last on, or -1 if unknown. */
int thread_cpu_of(int tid)
{
	unsigned i, k;

	if (atomic_load(&tc_no_readv))
		return -1;
	for (k = 0, i = tc_hash(tid); k < TC_SLOTS; k++, i = (i + 1) & (TC_SLOTS - 1)) {
		int t = atomic_load(&tc[i].tid);

		if (t == 0)
			return -1;
		if (t == tid) {
			uintptr_t addr = atomic_load(&tc[i].cpu_id);
			uint32_t cpu;
			ssize_t r;

			if (!addr)
				return -1;
			r = prim_read_pinned(&cpu, addr, sizeof(cpu));
			if (r != sizeof(cpu)) {
				if (r == -EPERM || r == -ENOSYS)
					atomic_store(&tc_no_readv, true);
				return -1;	/* EFAULT: the thread ended */
			}
			return cpu < MAX_CPUS ? (int)cpu : -1;
		}
	}
	return -1;
}
