/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The heapprofd_* configuration keys and the rule syntax (doc/heapprofd.md):
 * struct hp_settings filled from config lines. In config's layer, so
 * config.c calls nothing above it; hp_rules.c evaluates what this parses.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "hp/hp.h"

/* A heapprofd request's parameters before the request and the
 * heapprofd_* keys say otherwise. */
void
hp_params_default(struct hp_params *p)
{
	memset(p, 0, sizeof(*p));
	p->duration_ms = 60000;
	p->sampling_interval_bytes = 4096;
	p->shmem_size_bytes = 8u << 20;
	p->dump_interval_ms = 0;
	p->dumps = 2; /* a leak claim needs two dumps at least */
	p->block_client = false;
	p->buffer_kb = 32768;
	p->proc_stats_poll_ms = 5000;
}

/* ------------------------------------------------------------ values */

/* "4096", "8K", "100M", "1G": bytes, binary multiples. */
static int
parse_size(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = (uint64_t)v << shift;
	return 0;
}

static int
parse_ms(const char *s, uint32_t *ret)
{
	int64_t ns;
	int r;

	if ((r = parse_span_ns(s, &ns)) < 0)
		return r;
	if (ns / NSEC_PER_MSEC > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)(ns / NSEC_PER_MSEC);
	return 0;
}

static int
copy_name(char *dst, size_t sz, const char *s)
{
	if (*s == '\0' || strlen(s) >= sz)
		return -EINVAL;
	strcpy(dst, s);
	return 0;
}

/* ------------------------------------------------------------ rules */

const char *
hp_cond_name(enum hp_cond c)
{
	switch (c) {
	case HP_COND_RSS_GROWTH:
		return "rss_growth";
	case HP_COND_ANON_GROWTH:
		return "anon_growth";
	case HP_COND_GPU_GROWTH:
		return "gpu_growth";
	case HP_COND_MAJFLT_RATE:
		return "majflt_rate";
	case HP_COND_PSI_MEMORY:
		return "psi_memory";
	}
	return "?";
}

static int
parse_when(char *v, struct hp_rule *r, char *err, size_t errsz)
{
	char *a = strchr(v, ':'), *b;
	static const enum hp_cond growth[] = { HP_COND_RSS_GROWTH,
		HP_COND_ANON_GROWTH, HP_COND_GPU_GROWTH };
	unsigned i;

	if (a == NULL)
		return snprintf(err, errsz, "when=%s: expected KIND:...", v),
		       -EINVAL;
	*a++ = '\0';
	for (i = 0; i < 3; i++) {
		if (strcmp(v, hp_cond_name(growth[i])))
			continue;
		r->cond = growth[i];
		if ((b = strchr(a, ':')) == NULL)
			return snprintf(err, errsz,
				   "when=%s: expected "
				   "%s:SIZE:SPAN",
				   v, v),
			       -EINVAL;
		*b++ = '\0';
		if (parse_size(a, &r->bytes) < 0 || r->bytes == 0)
			return snprintf(err, errsz, "when=%s: bad size '%s'", v,
				   a),
			       -EINVAL;
		if (parse_span_ns(b, &r->span_ns) < 0 || r->span_ns <= 0)
			return snprintf(err, errsz, "when=%s: bad span '%s'", v,
				   b),
			       -EINVAL;
		return 0;
	}
	if (!strcmp(v, "majflt_rate"))
		r->cond = HP_COND_MAJFLT_RATE;
	else if (!strcmp(v, "psi_memory"))
		r->cond = HP_COND_PSI_MEMORY;
	else
		return snprintf(err, errsz, "when=%s: unknown condition", v),
		       -EINVAL;
	if (parse_level(a, &r->level) < 0)
		return snprintf(err, errsz, "when=%s: bad level '%s'", v, a),
		       -EINVAL;
	return 0;
}

/* Selector values of match= and target=: the word (0), name:NAME (1) or
 * uid:UID (2), the order of enum hp_sel and enum hp_tgt; -EINVAL. */
_Static_assert(HP_SEL_NAME == 1 && HP_TGT_NAME == 1 && HP_SEL_UID == 2 &&
	HP_TGT_UID == 2,
    "selector numbering");

static int
parse_who(const char *v, const char *word, char *name, size_t namesz,
    uint32_t *uid)
{
	uint64_t u;

	if (!strcmp(v, word))
		return 0;
	if (!strncmp(v, "name:", 5) && copy_name(name, namesz, v + 5) == 0)
		return 1;
	if (!strncmp(v, "uid:", 4) &&
	    parse_uint(v + 4, UINT32_MAX - 1, &u) == 0) {
		*uid = (uint32_t)u;
		return 2;
	}
	return -EINVAL;
}

/*
 * NAME when=COND [match=any|name:N|uid:U] [target=matched|name:N|uid:U]
 *   [duration=T] [sampling=SIZE] [shmem=SIZE] [dump=T]
 */
int
hp_rule_parse(const char *s, struct hp_rule *ret, char *err, size_t errsz)
{
	struct hp_rule r;
	char buf[1024], *tok, *save = NULL, *v;
	bool have_when = false;
	int64_t ns;
	int k;

	memset(&r, 0, sizeof(r));
	if (strlen(s) >= sizeof(buf))
		return snprintf(err, errsz, "rule too long"), -EINVAL;
	strcpy(buf, s);
	if ((tok = strtok_r(buf, " \t", &save)) == NULL || strchr(tok, '='))
		return snprintf(err, errsz, "a rule starts with its name"),
		       -EINVAL;
	if (copy_name(r.name, sizeof(r.name), tok) < 0)
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
			if ((k = parse_who(v, "any", r.sel_name,
				 sizeof(r.sel_name), &r.sel_uid)) < 0)
				return snprintf(err, errsz,
					   "match=%s: expected "
					   "any, name:NAME or uid:UID",
					   v),
				       -EINVAL;
			r.sel = (enum hp_sel)k;
		} else if (!strcmp(tok, "target")) {
			if ((k = parse_who(v, "matched", r.tgt_name,
				 sizeof(r.tgt_name), &r.tgt_uid)) < 0)
				return snprintf(err, errsz,
					   "target=%s: expected "
					   "matched, name:NAME or uid:UID",
					   v),
				       -EINVAL;
			r.tgt = (enum hp_tgt)k;
		} else if (!strcmp(tok, "duration")) {
			if (parse_ms(v, &r.duration_ms) < 0 ||
			    r.duration_ms == 0)
				return snprintf(err, errsz, "duration=%s", v),
				       -EINVAL;
		} else if (!strcmp(tok, "dump")) {
			if (parse_ms(v, &r.dump_interval_ms) < 0)
				return snprintf(err, errsz, "dump=%s", v),
				       -EINVAL;
		} else if (!strcmp(tok, "sampling")) {
			if (parse_size(v, &r.sampling_interval_bytes) < 0 ||
			    r.sampling_interval_bytes == 0)
				return snprintf(err, errsz,
					   "sampling=%s: "
					   "bytes, not 0",
					   v),
				       -EINVAL;
		} else if (!strcmp(tok, "shmem")) {
			if (parse_size(v, &r.shmem_size_bytes) < 0)
				return snprintf(err, errsz, "shmem=%s", v),
				       -EINVAL;
		} else {
			return snprintf(err, errsz, "unknown rule key '%s'",
				   tok),
			       -EINVAL;
		}
	}
	if (!have_when)
		return snprintf(err, errsz, "rule %s: no when=", r.name),
		       -EINVAL;
	if (r.cond == HP_COND_PSI_MEMORY && r.tgt == HP_TGT_MATCHED)
		return snprintf(err, errsz,
			   "rule %s: psi_memory is system-wide: "
			   "it needs target=name:NAME or uid:UID",
			   r.name),
		       -EINVAL;
	(void)ns;
	*ret = r;
	return 0;
}

/* ------------------------------------------------------------ settings */

void
hp_settings_init(struct hp_settings *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->packages_list = strdup("/data/system/packages.list");
	hs->policy.initiator = HP_INIT_UNSPECIFIED;
	hs->policy.build = HP_BUILD_USER;
	hs->policy.host = HP_HOST_REFUSE;
	hs->limits.proc_hour = 1;
	hs->limits.proc_day = 4;
	hs->limits.proc_week = 10;
	hs->limits.sys_hour = 2;
	hs->limits.sys_day = 10;
	hs->limits.sys_week = 30;
	hs->limits.cooldown_s = 1800;
	hp_params_default(&hs->defaults);
	hs->grace_ms = 30000;
	hs->kill_after_ms = 5000;
	/* at the default budgets (30 sessions a week system-wide) a week of
	 * traces fits well under the ~1 GiB of issue 21 */
	hs->trace_max_age_s = 7 * 86400;
	hs->trace_max_bytes = 256ull << 20;
}

void
hp_settings_release(struct hp_settings *hs)
{
	if (hs == NULL)
		return;
	free(hs->perfetto);
	free(hs->packages_list);
	free(hs->rules);
	memset(hs, 0, sizeof(*hs));
}

static int
set_path(char **dst, const char *v)
{
	char *s;

	if (*v == '\0')
		return -EINVAL;
	if ((s = strdup(v)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static const struct parse_word initiator_words[] = { { "unspecified",
							 HP_INIT_UNSPECIFIED },
	{ "trusted-system", HP_INIT_TRUSTED_SYSTEM }, { NULL, 0 } };
static const struct parse_word build_words[] = { { "user", HP_BUILD_USER },
	{ "userdebug", HP_BUILD_USERDEBUG }, { "eng", HP_BUILD_ENG },
	{ NULL, 0 } };
static const struct parse_word host_words[] = { { "refuse", HP_HOST_REFUSE },
	{ "allow", HP_HOST_ALLOW }, { NULL, 0 } };
static const struct parse_word on_off_words[] = { { "on", 1 }, { "off", 0 },
	{ NULL, 0 } };

static int
set_u32(uint32_t *dst, const char *v, uint64_t min, uint64_t max)
{
	return parse_u32_range(v, min, max, dst);
}

static int
set_limit(unsigned *dst, const char *v)
{
	return set_u32(dst, v, 0, 100000);
}

static int
set_installers(struct hp_elig_policy *pol, const char *v)
{
	struct hp_elig_policy p = *pol;
	char buf[1024], *tok, *save = NULL;

	if (strlen(v) >= sizeof(buf))
		return -ERANGE;
	strcpy(buf, v);
	p.ninstalled_by = 0;
	if (strcmp(v, "none") != 0) {
		for (tok = strtok_r(buf, ", \t", &save); tok != NULL;
		     tok = strtok_r(NULL, ", \t", &save)) {
			if (p.ninstalled_by == HP_INSTALLERS_MAX)
				return -ERANGE;
			if (copy_name(p.installed_by[p.ninstalled_by],
				HP_NAME_MAX, tok) < 0)
				return -EINVAL;
			p.ninstalled_by++;
		}
	}
	*pol = p;
	return 0;
}

static int
add_rule(struct hp_settings *hs, const char *v)
{
	struct hp_rule r, *nr;
	char err[160];

	if (hp_rule_parse(v, &r, err, sizeof(err)) < 0)
		return -EINVAL;
	if (hs->nrules == 64)
		return -ERANGE;
	if ((nr = realloc(hs->rules, (hs->nrules + 1) * sizeof(*nr))) == NULL)
		return -ENOMEM;
	hs->rules = nr;
	hs->rules[hs->nrules++] = r;
	return 0;
}

/* heapprofd_* keys; -ENOENT: not one of them. doc/vitalsd.8.md. */
int
hp_settings_set(struct hp_settings *hs, const char *key, const char *v)
{
	struct hp_params *d = &hs->defaults;
	struct hp_limits *l = &hs->limits;
	uint64_t u;
	int r;

	if (strncmp(key, "heapprofd_", 10) != 0)
		return -ENOENT;
	key += 10;
	if (!strcmp(key, "perfetto"))
		return set_path(&hs->perfetto, v);
	if (!strcmp(key, "packages_list"))
		return set_path(&hs->packages_list, v);
	if (!strcmp(key, "initiator")) {
		if ((r = parse_word(v, initiator_words)) < 0)
			return r;
		hs->policy.initiator = r;
		return 0;
	}
	if (!strcmp(key, "build_type")) {
		if ((r = parse_word(v, build_words)) < 0)
			return r;
		hs->policy.build = r;
		return 0;
	}
	if (!strcmp(key, "no_packages_list")) {
		if ((r = parse_word(v, host_words)) < 0)
			return r;
		hs->policy.host = r;
		return 0;
	}
	if (!strcmp(key, "target_installed_by"))
		return set_installers(&hs->policy, v);
	if (!strcmp(key, "max_per_hour"))
		return set_limit(&l->proc_hour, v);
	if (!strcmp(key, "max_per_day"))
		return set_limit(&l->proc_day, v);
	if (!strcmp(key, "max_per_week"))
		return set_limit(&l->proc_week, v);
	if (!strcmp(key, "system_max_per_hour"))
		return set_limit(&l->sys_hour, v);
	if (!strcmp(key, "system_max_per_day"))
		return set_limit(&l->sys_day, v);
	if (!strcmp(key, "system_max_per_week"))
		return set_limit(&l->sys_week, v);
	if (!strcmp(key, "cooldown_s"))
		return set_u32(&l->cooldown_s, v, 0, 7 * 86400);
	if (!strcmp(key, "duration_ms"))
		return set_u32(&d->duration_ms, v, 1, HP_DURATION_MAX_MS);
	if (!strcmp(key, "sampling_interval_bytes")) {
		if ((r = parse_size(v, &u)) < 0)
			return r;
		if (u == 0)
			return -ERANGE;
		d->sampling_interval_bytes = u;
		return 0;
	}
	if (!strcmp(key, "shmem_size_bytes")) {
		if ((r = parse_size(v, &u)) < 0)
			return r;
		if (u < HP_SHMEM_MIN || u > HP_SHMEM_MAX || (u & (u - 1)))
			return -ERANGE;
		d->shmem_size_bytes = u;
		return 0;
	}
	if (!strcmp(key, "dump_interval_ms"))
		return set_u32(&d->dump_interval_ms, v, 0, HP_DURATION_MAX_MS);
	if (!strcmp(key, "dumps"))
		return set_u32(&d->dumps, v, 1, 100);
	if (!strcmp(key, "no_startup")) {
		if ((r = parse_word(v, on_off_words)) < 0)
			return r;
		d->no_startup = r;
		return 0;
	}
	if (!strcmp(key, "no_running")) {
		if ((r = parse_word(v, on_off_words)) < 0)
			return r;
		d->no_running = r;
		return 0;
	}
	if (!strcmp(key, "adaptive_sampling_shmem_threshold"))
		return parse_size(v, &d->adaptive_shmem_threshold);
	if (!strcmp(key, "adaptive_sampling_max_interval_bytes"))
		return parse_size(v, &d->adaptive_max_interval);
	if (!strcmp(key, "block_client")) {
		if ((r = parse_word(v, on_off_words)) < 0)
			return r;
		d->block_client = r;
		return 0;
	}
	if (!strcmp(key, "max_memory_kb"))
		return set_u32(&d->max_heapprofd_memory_kb, v, 0, UINT32_MAX);
	if (!strcmp(key, "max_cpu_secs")) {
		if ((r = parse_uint(v, UINT32_MAX, &u)) < 0)
			return r;
		d->max_heapprofd_cpu_secs = u;
		return 0;
	}
	if (!strcmp(key, "buffer_kb"))
		return set_u32(&d->buffer_kb, v, 1024, 1u << 21);
	if (!strcmp(key, "proc_stats_poll_ms"))
		return set_u32(&d->proc_stats_poll_ms, v, 100, 3600000);
	if (!strcmp(key, "grace_ms"))
		return set_u32(&hs->grace_ms, v, 0, 3600000);
	if (!strcmp(key, "kill_after_ms"))
		return set_u32(&hs->kill_after_ms, v, 10, 600000);
	if (!strcmp(key, "trace_max_age_s"))
		return set_u32(&hs->trace_max_age_s, v, 0, 366 * 86400);
	if (!strcmp(key, "trace_max_bytes")) {
		if ((r = parse_size(v, &u)) < 0)
			return r;
		hs->trace_max_bytes = u;
		return 0;
	}
	if (!strcmp(key, "rule"))
		return add_rule(hs, v);
	return -ENOENT;
}
