/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Burst rules and their settings (config keys burst_*; doc/bursts.md), in
 * config's layer: config.c hands every burst_* key here, burst.c
 * evaluates what this parses:
 *
 *   burst_rule = NAME when=COND [match=any|name:NAME|uid:UID]
 *                [duration=T] [cooldown=T]
 *
 * with the heapprofd rules' words for what they share (NAME, match=, T).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "burst/burst.h"
#include "core/util.h"

static const char *const cond_names[BURST_COND__MAX] = {
	[BURST_PSI_SOME] = "psi_some",
	[BURST_RQ_P99] = "rq_p99",
	[BURST_SLICE] = "slice",
	[BURST_MAJFLT_RATE] = "majflt_rate",
};

static const char *const outcome_names[BURST_OUTCOME__MAX] = {
	[BURST_STARTED] = "started",
	[BURST_DURING_BURST] = "during_burst",
	[BURST_COOLDOWN] = "cooldown",
	[BURST_GAP] = "min_gap",
	[BURST_HOURLY] = "max_per_hour",
};

const char *
burst_cond_name(enum burst_cond c)
{
	return (unsigned)c < BURST_COND__MAX ? cond_names[c] : "unknown";
}

const char *
burst_outcome_name(enum burst_outcome o)
{
	return (unsigned)o < BURST_OUTCOME__MAX ? outcome_names[o] : "unknown";
}

static int
copy_word(char *dst, size_t sz, const char *s)
{
	if (*s == '\0' || strlen(s) >= sz)
		return -EINVAL;
	strcpy(dst, s);
	return 0;
}

static int
span_ms(const char *s, uint32_t *ret)
{
	int64_t ns;

	if (parse_span_ns(s, &ns) < 0 || ns / NSEC_PER_MSEC > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)(ns / NSEC_PER_MSEC);
	return 0;
}

/*
 * psi_some:cpu|memory|io:P   rq_p99:T   slice:GLOB:T   majflt_rate:N
 * A slice's GLOB may hold ':'; its bound is after the last one.
 */
static int
parse_when(char *v, struct burst_rule *r, char *err, size_t errsz)
{
	static const char *const res[PSI__MAX] = { "cpu", "memory", "io" };
	char *a = strchr(v, ':'), *b;
	unsigned i;

	if (a == NULL)
		goto bad;
	*a++ = '\0';
	if (!strcmp(v, "psi_some")) {
		r->cond = BURST_PSI_SOME;
		if ((b = strchr(a, ':')) == NULL)
			goto bad;
		*b++ = '\0';
		for (i = 0; i < PSI__MAX && strcmp(a, res[i]); i++)
			;
		if (i == PSI__MAX || parse_level(b, &r->level) < 0 ||
		    r->level > 100)
			goto bad;
		r->res = (enum psi_res)i;
		return 0;
	}
	if (!strcmp(v, "rq_p99")) {
		r->cond = BURST_RQ_P99;
		if (parse_span_ns(a, &r->bound_ns) < 0 || r->bound_ns <= 0)
			goto bad;
		return 0;
	}
	if (!strcmp(v, "slice")) {
		r->cond = BURST_SLICE;
		if ((b = strrchr(a, ':')) == NULL)
			goto bad;
		*b++ = '\0';
		if (copy_word(r->pattern, sizeof(r->pattern), a) < 0 ||
		    parse_span_ns(b, &r->bound_ns) < 0 || r->bound_ns <= 0)
			goto bad;
		return 0;
	}
	if (!strcmp(v, "majflt_rate")) {
		r->cond = BURST_MAJFLT_RATE;
		if (parse_level(a, &r->level) < 0 || r->level <= 0)
			goto bad;
		return 0;
	}
bad:
	snprintf(err, errsz,
	    "when=: expected psi_some:cpu|memory|io:PERCENT, rq_p99:T, "
	    "slice:GLOB:T or majflt_rate:N");
	return -EINVAL;
}

static int
parse_match(const char *v, struct burst_rule *r)
{
	uint64_t u;

	if (!strcmp(v, "any")) {
		r->sel = BURST_SEL_ANY;
		return 0;
	}
	if (!strncmp(v, "name:", 5) &&
	    copy_word(r->sel_name, sizeof(r->sel_name), v + 5) == 0) {
		r->sel = BURST_SEL_NAME;
		return 0;
	}
	if (!strncmp(v, "uid:", 4) &&
	    parse_uint(v + 4, UINT32_MAX - 1, &u) == 0) {
		r->sel = BURST_SEL_UID;
		r->sel_uid = (uint32_t)u;
		return 0;
	}
	return -EINVAL;
}

int
burst_rule_parse(const char *s, struct burst_rule *ret, char *err, size_t errsz)
{
	struct burst_rule r;
	char buf[512], *tok, *save = NULL, *v;
	bool have_when = false;

	memset(&r, 0, sizeof(r));
	if (strlen(s) >= sizeof(buf))
		return snprintf(err, errsz, "rule too long"), -EINVAL;
	strcpy(buf, s);
	if ((tok = strtok_r(buf, " \t", &save)) == NULL || strchr(tok, '='))
		return snprintf(err, errsz, "a rule starts with its name"),
		       -EINVAL;
	if (copy_word(r.name, sizeof(r.name), tok) < 0)
		return snprintf(err, errsz, "rule name too long"), -EINVAL;
	while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
		if ((v = strchr(tok, '=')) == NULL)
			return snprintf(err, errsz, "'%s': expected KEY=VALUE",
				   tok),
			       -EINVAL;
		*v++ = '\0';
		if (!strcmp(tok, "when")) {
			if (parse_when(v, &r, err, errsz) < 0)
				return -EINVAL;
			have_when = true;
		} else if (!strcmp(tok, "match")) {
			if (parse_match(v, &r) < 0)
				return snprintf(err, errsz,
					   "match=%s: expected any, "
					   "name:NAME or uid:UID",
					   v),
				       -EINVAL;
		} else if (!strcmp(tok, "duration")) {
			if (span_ms(v, &r.duration_ms) < 0 ||
			    r.duration_ms == 0 ||
			    r.duration_ms > VITALS_BURST_MAX_MS)
				return snprintf(err, errsz,
					   "duration=%s: 1 ms to %u s", v,
					   VITALS_BURST_MAX_MS / 1000),
				       -EINVAL;
		} else if (!strcmp(tok, "cooldown")) {
			if (span_ms(v, &r.cooldown_ms) < 0)
				return snprintf(err, errsz, "cooldown=%s", v),
				       -EINVAL;
			r.have_cooldown = true;
		} else {
			return snprintf(err, errsz, "unknown rule key '%s'",
				   tok),
			       -EINVAL;
		}
	}
	if (!have_when)
		return snprintf(err, errsz, "rule %s: no when=", r.name),
		       -EINVAL;
	if (r.sel != BURST_SEL_ANY && r.cond != BURST_MAJFLT_RATE &&
	    r.cond != BURST_SLICE)
		return snprintf(err, errsz,
			   "rule %s: %s is system-wide: no match=", r.name,
			   burst_cond_name(r.cond)),
		       -EINVAL;
	*ret = r;
	return 0;
}

void
burst_settings_init(struct burst_settings *bs)
{
	memset(bs, 0, sizeof(*bs));
	bs->duration_ms = VITALS_BURST_MAX_MS;
	bs->cooldown_ms = 10 * 60 * 1000;
	bs->min_gap_ms = 60 * 1000;
	bs->max_per_hour = 6;
}

/* -ENOENT: not a burst key. */
int
burst_settings_set(struct burst_settings *bs, const char *key, const char *v)
{
	char err[160];
	uint32_t ms;
	uint64_t u;

	if (!strcmp(key, "burst_rule")) {
		if (bs->nrules == BURST_RULES_MAX)
			return -ERANGE;
		if (burst_rule_parse(v, &bs->rule[bs->nrules], err,
			sizeof(err)) < 0)
			return -EINVAL;
		bs->nrules++;
		return 0;
	}
	if (!strcmp(key, "burst_max_per_hour")) {
		if (parse_uint(v, 3600, &u) < 0)
			return -EINVAL;
		bs->max_per_hour = (uint32_t)u;
		return 0;
	}
	if (strcmp(key, "burst_duration") && strcmp(key, "burst_cooldown") &&
	    strcmp(key, "burst_min_gap"))
		return -ENOENT;
	if (span_ms(v, &ms) < 0)
		return -EINVAL;
	if (!strcmp(key, "burst_duration")) {
		if (ms == 0 || ms > VITALS_BURST_MAX_MS)
			return -ERANGE;
		bs->duration_ms = ms;
	} else if (!strcmp(key, "burst_cooldown")) {
		bs->cooldown_ms = ms;
	} else {
		bs->min_gap_ms = ms;
	}
	return 0;
}
