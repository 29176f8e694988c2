/* SPDX-License-Identifier: MIT */
/*
 * crash.h - what the preload library's signal handlers need of the
 * library (crash.c): which threads are uswap's, and lines written from a
 * signal handler (no stdio, no malloc: async-signal-safe); and how a
 * thread of uswap marks itself one (start_thread, thread.h).
 */
#ifndef USWAP_CRASH_H
#define USWAP_CRASH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* The calling thread's name if it is one of uswap's, else NULL. */
const char *crash_thread_name(void);

/* A line built piece by piece on the stack, written with one write(2). */
struct crash_line {
	char buf[512];
	size_t len;
};
void crash_line_str(struct crash_line *l, const char *s);
void crash_line_u64(struct crash_line *l, uint64_t v);
void crash_line_hex(struct crash_line *l, uint64_t v);
/* "uswap[PID]: " */
void crash_line_start(struct crash_line *l);
/* Ends it with a newline and writes it to stderr. */
void crash_line_write(struct crash_line *l);
/* "SIGSEGV" for SIGSEGV, ... ("signal N" for the others). */
const char *crash_signame(int sig, char *buf, size_t len);

/*
 * One line on stderr: this thread of uswap took sig (what, where, the
 * instruction and the file it belongs to), and the process dies of it.
 */
void crash_report(int sig, const siginfo_t *si, const void *uc);

/* crash.c: uswap's own threads, and the line a crash of one leaves. */
void crash_thread_mark(const char *name);
/* The signals a thread of uswap leaves unblocked: its own faults. */
void crash_sigmask(sigset_t *set);

#endif /* USWAP_CRASH_H */
