/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging: stderr in the foreground, syslog otherwise. log_warn appends
 * strerror(errno), log_warnx does not; fatal/fatalx exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "core/log.h"

static bool log_to_stderr = true;
static int log_verbose;

void
log_init(bool foreground, int verbosity, const char *ident)
{
	log_to_stderr = foreground;
	log_verbose = verbosity;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

static void
vlog(int pri, const char *fmt, va_list ap, int errnum)
{
	char msg[1024];
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_to_stderr) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		if (errnum)
			fprintf(stderr, "vitalsd[%lld.%03ld] %s: %s\n",
			    (long long)ts.tv_sec, ts.tv_nsec / 1000000, msg,
			    strerror(errnum));
		else
			fprintf(stderr, "vitalsd[%lld.%03ld] %s\n",
			    (long long)ts.tv_sec, ts.tv_nsec / 1000000, msg);
	} else {
		if (errnum)
			syslog(pri, "%s: %s", msg, strerror(errnum));
		else
			syslog(pri, "%s", msg);
	}
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, e);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, 0);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, 0);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, 0);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, e);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, 0);
	va_end(ap);
	exit(1);
}
