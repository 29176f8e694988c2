/* SPDX-License-Identifier: MIT */
/*
 * log.h - uswap's messages (log.c): lines on stderr, once-only ones, and
 * the error text a parser hands back.  Apart, so that any file logs
 * without seeing the runtime.
 */
#ifndef USWAP_LOG_H
#define USWAP_LOG_H

#include <stdbool.h>
#include <stddef.h>

/* log.c */
/* An error message into err (errlen bytes, may be NULL or 0). */
void err_msg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void uswap_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void uswap_log_once(bool *done, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* USWAP_LOG_H */
