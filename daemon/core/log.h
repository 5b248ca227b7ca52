/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging (log.c): log_warn appends strerror(errno), log_warnx does not;
 * fatal/fatalx exit.
 */
#ifndef VITALSD_CORE_LOG_H
#define VITALSD_CORE_LOG_H

#include <stdbool.h>

/* ----------------------------------------------------------------- log.c */

void log_init(bool foreground, int verbosity, const char *ident);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#endif /* VITALSD_CORE_LOG_H */
