/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A task row's name, set (window.h: window_task_name() reads it). On its
 * own file: every signal's window code sets rows' names, and window.c
 * reaches the signals' parts (window_part.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "window/window.h"

void
window_task_set_name(struct window_task *t, const char *s)
{
	size_t n = strnlen(s, sizeof(t->name_) - 1);

	memcpy(t->name_, s, n);
	t->name_[n] = '\0';
}

void
window_task_set_namef(struct window_task *t, const char *fmt, ...)
{
	char buf[VITALS_NAME_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	window_task_set_name(t, buf);
}
