// SPDX-License-Identifier: MIT
/*
 * log.c - messages on stderr.
 *
 * uswap runs inside someone else's process and may log from its fault
 * path, so messages are formatted on the stack and written with one
 * write(2): no stdio, no malloc, no lock the application could hold.
 * uswap's own threads have no descriptor 2 (fdtable.c): theirs go to the
 * program's standard error as it is at the time (fd_stderr_write).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fdtable.h"
#include "log.h"

static void __attribute__((format(printf, 1, 0))) vlog(const char *fmt, va_list ap)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "uswap[%d]: ", (int)getpid());

	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (n >= (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	fd_stderr_write(buf, (size_t)n);
}

void uswap_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

/* Log a message the first time only: *done remembers it was said. */
void uswap_log_once(bool *done, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(done, true, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

/* An error message into err (errlen bytes, may be NULL or 0). */
void err_msg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
