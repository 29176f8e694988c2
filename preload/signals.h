/* SPDX-License-Identifier: MIT */
/*
 * signals.h - the signals that dump core (signals.c), and what signals.c
 * needs of preload.c.
 */
#ifndef USWAP_PRELOAD_SIGNALS_H
#define USWAP_PRELOAD_SIGNALS_H

struct uswap_runtime;

/*
 * Put uswap's handler in place of SIG_DFL for the signals that dump core,
 * once this process has a runtime.  Never fails the caller.
 */
void signals_start(void);

/* preload.c: this process's runtime if it has one now, else NULL; never
   creates one (async-signal-safe). */
struct uswap_runtime *preload_runtime_now(void);

#endif /* USWAP_PRELOAD_SIGNALS_H */
