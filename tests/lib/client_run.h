/* SPDX-License-Identifier: Apache-2.0 */
/* Run the built vitals binary and capture what it says (client tests). */
#ifndef VITALS_CLIENT_RUN_H
#define VITALS_CLIENT_RUN_H

#include <limits.h>

/* The client run: $VITALS_BUILDDIR/client/vitals unless set before. */
extern char client_path[PATH_MAX];

struct run {
	int code; /* exit status, or 128 + signal */
	char *out, *err;
};

/* All of fd from its start, NUL-terminated (never NULL); fd is closed. */
char *slurp_fd(int fd);
/* Run the client with argv (NULL-terminated), as uid when uid >= 0. */
struct run run_client_as(int uid, const char *const *argv);
struct run run_client(const char *const *argv);
void run_free(struct run *r);

#endif
