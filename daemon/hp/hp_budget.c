/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Session budgets: a cooldown per target and at most N started sessions
 * per target and system-wide in the last hour, day and week (sliding
 * windows over the start times of the sessions the store remembers). Pure
 * arithmetic: the clock is the caller's, so tests inject it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "hp/hp.h"

#define HOUR_NS (3600LL * NSEC_PER_SEC)
#define DAY_NS (24 * HOUR_NS)

struct span {
	int64_t ns;
	const char *name;
};

static const struct span spans[3] = {
	{ HOUR_NS, "hour" },
	{ DAY_NS, "day" },
	{ HP_WEEK_NS, "week" },
};

static int
cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * How many starts (of target; NULL: any) lie in [from, now]. A budget of
 * `limit` is spent while that many do, and frees up when the limit-th
 * newest of them leaves the span: *ret_oldest is its start.
 */
static unsigned
count_in(const struct hp_budget_rec *recs, size_t n, const char *target,
    int64_t from_ns, int64_t now_ns, unsigned limit, int64_t *ret_oldest)
{
	int64_t *t = n ? malloc(n * sizeof(*t)) : NULL;
	unsigned c = 0;
	size_t k;

	*ret_oldest = from_ns;
	for (k = 0; k < n; k++) {
		if (recs[k].start_wall_ns < from_ns ||
		    recs[k].start_wall_ns > now_ns)
			continue;
		if (target && strcmp(recs[k].target, target))
			continue;
		if (t)
			t[c] = recs[k].start_wall_ns;
		c++;
	}
	if (t && c >= limit && limit > 0) {
		qsort(t, c, sizeof(*t), cmp_desc);
		*ret_oldest = t[limit - 1];
	}
	free(t);
	return c;
}

static enum hp_refusal
check_limits(const unsigned lim[3], const struct hp_budget_rec *recs, size_t n,
    const char *target, int64_t now_ns, enum hp_refusal r,
    int64_t *ret_retry_ns, char *why, size_t whysz)
{
	int64_t oldest;
	unsigned i, c;

	for (i = 0; i < 3; i++) {
		if (lim[i] == 0)
			continue;
		c = count_in(recs, n, target, now_ns - spans[i].ns, now_ns,
		    lim[i], &oldest);
		if (c < lim[i])
			continue;
		if (ret_retry_ns)
			*ret_retry_ns = oldest + spans[i].ns + 1 - now_ns;
		snprintf(why, whysz,
		    "%s%s: %u session%s in the last %s "
		    "(limit %u)",
		    target ? "target " : "system-wide", target ? target : "", c,
		    c == 1 ? "" : "s", spans[i].name, lim[i]);
		return r;
	}
	return HP_OK;
}

enum hp_refusal
hp_budget_check(const struct hp_limits *l, const struct hp_budget_rec *recs,
    size_t n, const char *target, int64_t now_wall_ns, int64_t *ret_retry_ns,
    char *why, size_t whysz)
{
	const unsigned proc[3] = { l->proc_hour, l->proc_day, l->proc_week };
	const unsigned sys[3] = { l->sys_hour, l->sys_day, l->sys_week };
	int64_t last = INT64_MIN, cool = (int64_t)l->cooldown_s * NSEC_PER_SEC;
	enum hp_refusal r;
	size_t k;

	if (why && whysz)
		why[0] = '\0';
	if (l->cooldown_s) {
		for (k = 0; k < n; k++)
			if (!strcmp(recs[k].target, target) &&
			    recs[k].start_wall_ns <= now_wall_ns &&
			    recs[k].start_wall_ns > last)
				last = recs[k].start_wall_ns;
		if (last != INT64_MIN && now_wall_ns - last < cool) {
			if (ret_retry_ns)
				*ret_retry_ns = last + cool - now_wall_ns;
			snprintf(why, whysz,
			    "target %s: cooldown of %u s, "
			    "last session started %lld s ago",
			    target, l->cooldown_s,
			    (long long)((now_wall_ns - last) / NSEC_PER_SEC));
			return HP_REFUSE_RATE_PROCESS;
		}
	}
	r = check_limits(proc, recs, n, target, now_wall_ns,
	    HP_REFUSE_RATE_PROCESS, ret_retry_ns, why, whysz);
	if (r != HP_OK)
		return r;
	return check_limits(sys, recs, n, NULL, now_wall_ns,
	    HP_REFUSE_RATE_SYSTEM, ret_retry_ns, why, whysz);
}
