/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd triggers: the evaluation of rules at each window close. A
 * rule's condition is over windows: growth of a process's RSS, anon RSS
 * or GPU memory within a span, a process's major-fault rate, or memory
 * PSI. The keys and the rule syntax are config/config_hp.c's.
 * doc/heapprofd.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "hp/hp.h"
#include "proc/proc.h"
#include "window/window.h"

#define HP_HIST 128	  /* samples kept per tracked process */
#define HP_TRACK_MAX 1024 /* processes tracked per rule */
#define HP_NAMES_MAX 4096 /* cached normalised names */

/* ------------------------------------------------------------ evaluation */

/* A process instance; the first member of what is indexed by it. */
struct tkey {
	int32_t pid;
	uint64_t starttime;
};

/* An open-addressing index of an array of structs that start with a
 * tkey: slot holds position + 1, 0 is empty. Rebuilt when the array is
 * compacted; a window close looks up every process it lists. */
struct kidx {
	uint32_t *slot;
	size_t cap; /* a power of two, at least twice the entries */
};

static size_t
khash(int32_t pid, uint64_t starttime)
{
	uint64_t h = (uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ULL ^
	    starttime * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)(h ^ (h >> 31));
}

static const struct tkey *
key_at(const void *base, size_t stride, size_t i)
{
	return (const struct tkey *)((const char *)base + i * stride);
}

static void
kidx_put(struct kidx *x, const void *base, size_t stride, size_t i)
{
	const struct tkey *k = key_at(base, stride, i);
	size_t m = x->cap - 1, h = khash(k->pid, k->starttime) & m;

	while (x->slot[h])
		h = (h + 1) & m;
	x->slot[h] = (uint32_t)i + 1;
}

static int
kidx_rebuild(struct kidx *x, const void *base, size_t stride, size_t n)
{
	size_t cap = 64, i;
	uint32_t *ns;

	while (cap < 2 * (n + 1))
		cap <<= 1;
	if (cap != x->cap) {
		if ((ns = realloc(x->slot, cap * sizeof(*ns))) == NULL) {
			x->cap = 0; /* every lookup misses until a rebuild */
			return -ENOMEM;
		}
		x->slot = ns;
		x->cap = cap;
	}
	memset(x->slot, 0, x->cap * sizeof(*x->slot));
	for (i = 0; i < n; i++)
		kidx_put(x, base, stride, i);
	return 0;
}

/* Position of (pid, starttime), or -1. */
static long
kidx_find(const struct kidx *x, const void *base, size_t stride, int32_t pid,
    uint64_t starttime)
{
	size_t m, h;

	if (x->cap == 0)
		return -1;
	m = x->cap - 1;
	for (h = khash(pid, starttime) & m; x->slot[h]; h = (h + 1) & m) {
		const struct tkey *k = key_at(base, stride, x->slot[h] - 1);

		if (k->pid == pid && k->starttime == starttime)
			return (long)x->slot[h] - 1;
	}
	return -1;
}

/* Entry n − 1 was just appended. */
static int
kidx_added(struct kidx *x, const void *base, size_t stride, size_t n)
{
	if (x->cap < 2 * (n + 1))
		return kidx_rebuild(x, base, stride, n);
	kidx_put(x, base, stride, n - 1);
	return 0;
}

struct track {
	struct tkey k;
	int64_t seen_ns;  /* mono end of the last window it was in */
	unsigned n, head; /* ring of samples */
	int64_t t[HP_HIST];
	uint64_t v[HP_HIST];
};

struct rule_state {
	struct track *tr;
	size_t ntr, cap;
	struct kidx idx;
};

struct name_ent {
	struct tkey k;
	int64_t seen_ns;
	char wname[VITALS_NAME_LEN]; /* the window's name when read */
	char name[HP_NAME_MAX];	     /* "" when the read failed */
};

struct hp_rules {
	struct hp_rule *rules;
	unsigned n;
	struct rule_state *rs;
	struct name_ent *names;
	size_t nnames, ncap;
	struct kidx nidx;
	struct hp_rule_stats st;
};

int
hp_rules_new(const struct hp_rule *rules, unsigned n, struct hp_rules **ret)
{
	struct hp_rules *hr;

	if ((hr = calloc(1, sizeof(*hr))) == NULL)
		return -ENOMEM;
	if (n &&
	    ((hr->rules = calloc(n, sizeof(*rules))) == NULL ||
		(hr->rs = calloc(n, sizeof(*hr->rs))) == NULL)) {
		hp_rules_free(hr);
		return -ENOMEM;
	}
	if (n)
		memcpy(hr->rules, rules, n * sizeof(*rules));
	hr->n = n;
	*ret = hr;
	return 0;
}

struct hp_rules *
hp_rules_free(struct hp_rules *hr)
{
	unsigned i;

	if (hr == NULL)
		return NULL;
	for (i = 0; hr->rs && i < hr->n; i++) {
		free(hr->rs[i].tr);
		free(hr->rs[i].idx.slot);
	}
	free(hr->nidx.slot);
	free(hr->rs);
	free(hr->rules);
	free(hr->names);
	free(hr);
	return NULL;
}

void
hp_rules_stats(const struct hp_rules *hr, struct hp_rule_stats *ret)
{
	*ret = hr->st;
}

/* The normalised name of a task, read again only when its window name
 * changed (an app renames itself after the zygote fork). NULL: unknown. */
static const char *
task_name(struct hp_rules *hr, const struct window *w,
    const struct window_task *t, const struct hp_eval_ctx *ctx)
{
	struct name_ent *e = NULL;
	long i;

	i = kidx_find(&hr->nidx, hr->names, sizeof(*hr->names), t->id,
	    t->starttime);
	if (i >= 0)
		e = &hr->names[i];
	if (e == NULL) {
		if (hr->nnames == hr->ncap) {
			size_t cap = hr->ncap ? hr->ncap * 2 : 256;
			struct name_ent *ne;

			if (cap > HP_NAMES_MAX ||
			    (ne = realloc(hr->names, cap * sizeof(*ne))) ==
				NULL)
				return NULL;
			hr->names = ne;
			hr->ncap = cap;
		}
		e = &hr->names[hr->nnames++];
		memset(e, 0, sizeof(*e));
		e->k.pid = t->id;
		e->k.starttime = t->starttime;
		e->wname[0] = '\x01'; /* never equal: read below */
		if (kidx_added(&hr->nidx, hr->names, sizeof(*hr->names),
			hr->nnames) < 0) {
			hr->nnames--;
			return NULL;
		}
	}
	e->seen_ns = w->mono_end_ns;
	if (strcmp(e->wname, window_task_name(t)) != 0) {
		snprintf(e->wname, sizeof(e->wname), "%s", window_task_name(t));
		e->name[0] = '\0';
		if (ctx->name == NULL ||
		    ctx->name(ctx->arg, t->id, e->name, sizeof(e->name)) < 0) {
			e->name[0] = '\0';
			hr->st.name_failed++;
		}
	}
	return e->name[0] ? e->name : NULL;
}

/* A window lists only processes with activity: an idle one keeps its
 * entries for a while (names a minute, samples a rule's span). */
#define HP_NAME_KEEP_NS (60 * NSEC_PER_SEC)

static void
prune_names(struct hp_rules *hr, int64_t now_ns)
{
	size_t i = 0, n = hr->nnames;

	while (i < hr->nnames) {
		if (now_ns - hr->names[i].seen_ns > HP_NAME_KEEP_NS)
			hr->names[i] = hr->names[--hr->nnames];
		else
			i++;
	}
	/* on failure the index is dropped: every lookup misses, names are
	 * read again */
	if (hr->nnames != n &&
	    kidx_rebuild(&hr->nidx, hr->names, sizeof(*hr->names), hr->nnames) <
		0)
		hr->nnames = 0;
}

static struct track *
track_get(struct hp_rules *hr, struct rule_state *rs,
    const struct window_task *t)
{
	long i;

	if ((i = kidx_find(&rs->idx, rs->tr, sizeof(*rs->tr), t->id,
		 t->starttime)) >= 0)
		return &rs->tr[i];
	if (rs->ntr == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct track *nt;

		if (cap > HP_TRACK_MAX ||
		    (nt = realloc(rs->tr, cap * sizeof(*nt))) == NULL) {
			hr->st.tracked_dropped++;
			return NULL;
		}
		rs->tr = nt;
		rs->cap = cap;
	}
	memset(&rs->tr[rs->ntr], 0, sizeof(rs->tr[0]));
	rs->tr[rs->ntr].k.pid = t->id;
	rs->tr[rs->ntr].k.starttime = t->starttime;
	if (kidx_added(&rs->idx, rs->tr, sizeof(*rs->tr), rs->ntr + 1) < 0) {
		hr->st.tracked_dropped++;
		return NULL;
	}
	return &rs->tr[rs->ntr++];
}

static void
prune_tracks(struct rule_state *rs, int64_t now_ns, int64_t keep_ns)
{
	size_t i = 0, n = rs->ntr;

	while (i < rs->ntr) {
		if (now_ns - rs->tr[i].seen_ns > keep_ns)
			rs->tr[i] = rs->tr[--rs->ntr];
		else
			i++;
	}
	/* on failure every sample is dropped: growth starts over */
	if (rs->ntr != n &&
	    kidx_rebuild(&rs->idx, rs->tr, sizeof(*rs->tr), rs->ntr) < 0)
		rs->ntr = 0;
}

/* Add a sample; the growth over the span: newest − lowest in the span. */
static bool
track_growth(struct track *tr, int64_t t, uint64_t v, int64_t span,
    uint64_t *ret_growth)
{
	uint64_t lo = v;
	unsigned i, k, n = 0;

	tr->t[tr->head] = t;
	tr->v[tr->head] = v;
	tr->head = (tr->head + 1) % HP_HIST;
	if (tr->n < HP_HIST)
		tr->n++;
	for (i = 0; i < tr->n; i++) {
		k = (tr->head + HP_HIST - 1 - i) % HP_HIST;
		if (t - tr->t[k] > span)
			break;
		if (tr->v[k] < lo)
			lo = tr->v[k];
		n++;
	}
	*ret_growth = v - lo;
	return n >= 2;
}

static bool
selected(struct hp_rules *hr, const struct hp_rule *r, const struct window *w,
    const struct window_task *t, const struct hp_eval_ctx *ctx)
{
	const char *name;

	switch (r->sel) {
	case HP_SEL_ANY:
		return true;
	case HP_SEL_UID:
		return t->uid == r->sel_uid;
	case HP_SEL_NAME:
		name = task_name(hr, w, t, ctx);
		return name && !strcmp(name, r->sel_name);
	}
	return false;
}

static void
fmt_bytes(char *buf, size_t sz, uint64_t v)
{
	if (v >= (1u << 20))
		snprintf(buf, sz, "%.1f MiB", (double)v / (1u << 20));
	else
		snprintf(buf, sz, "%.1f KiB", (double)v / 1024);
}

/* One rule over one process: true when its condition holds. */
static bool
eval_task(struct hp_rules *hr, unsigned ri, const struct window *w,
    const struct window_task *t, const struct hp_eval_ctx *ctx,
    bool *gpu_missing, char *why, size_t whysz)
{
	const struct hp_rule *r = &hr->rules[ri];
	struct track *tr;
	uint64_t v = 0, kb, g;
	char a[32], b[32];
	double secs, rate;

	switch (r->cond) {
	case HP_COND_MAJFLT_RATE:
		if (t->wall_ns == 0)
			return false;
		secs = (double)t->wall_ns / NSEC_PER_SEC;
		rate = (double)t->d_majflt / secs;
		if (rate < r->level)
			return false;
		snprintf(why, whysz,
		    "%.1f major faults/s over %.1f s "
		    "(>= %g)",
		    rate, secs, r->level);
		return true;
	case HP_COND_RSS_GROWTH:
		v = t->rss_pages_last * (uint64_t)ctx->page_size;
		break;
	case HP_COND_ANON_GROWTH:
		if (ctx->anon_kb == NULL ||
		    ctx->anon_kb(ctx->arg, t->id, t->starttime, &kb) < 0) {
			hr->st.anon_failed++;
			return false;
		}
		v = kb * 1024;
		break;
	case HP_COND_GPU_GROWTH:
		if (ctx->gpu_bytes == NULL ||
		    ctx->gpu_bytes(ctx->arg, w, t->id, t->starttime, &g) < 0) {
			*gpu_missing = true;
			return false;
		}
		v = g;
		break;
	case HP_COND_PSI_MEMORY:
		return false;
	}
	if ((tr = track_get(hr, &hr->rs[ri], t)) == NULL)
		return false;
	tr->seen_ns = w->mono_end_ns;
	if (!track_growth(tr, w->mono_end_ns, v, r->span_ns, &g) ||
	    g < r->bytes)
		return false;
	fmt_bytes(a, sizeof(a), g);
	fmt_bytes(b, sizeof(b), v);
	snprintf(why, whysz, "%s grew %s within %lld s (now %s)",
	    r->cond == HP_COND_RSS_GROWTH      ? "RSS" :
		r->cond == HP_COND_ANON_GROWTH ? "RssAnon" :
						 "GPU memory",
	    a, (long long)(r->span_ns / NSEC_PER_SEC), b);
	/* A new growth of the same size is needed to hold again. */
	tr->n = 0;
	tr->head = 0;
	(void)track_growth(tr, w->mono_end_ns, v, r->span_ns, &g);
	return true;
}

int
hp_rules_eval(struct hp_rules *hr, const struct window *w,
    const struct hp_eval_ctx *ctx, struct hp_fire *ret, size_t max,
    size_t *ret_n)
{
	size_t nf = 0, i;
	unsigned ri;

	for (ri = 0; ri < hr->n; ri++) {
		const struct hp_rule *r = &hr->rules[ri];
		bool gpu_missing = false;
		char why[160];

		hr->st.evaluations++;
		if (r->cond == HP_COND_PSI_MEMORY) {
			const struct window_psi *p = &w->psi[PSI_MEMORY];
			double avg;

			if (!p->available || p->some_avg10.n == 0)
				continue;
			avg = gauge_avg(&p->some_avg10);
			if (avg < r->level || nf == max)
				continue;
			memset(&ret[nf], 0, sizeof(ret[nf]));
			ret[nf].rule = ri;
			snprintf(ret[nf].why, sizeof(ret[nf].why),
			    "memory PSI "
			    "some avg10 %.2f%% over the window (>= %g)",
			    avg, r->level);
			hr->st.fired++;
			nf++;
			continue;
		}
		for (i = 0; i < w->nprocs; i++) {
			const struct window_task *t = &w->procs[i];
			const char *name;

			if (t->exited || !selected(hr, r, w, t, ctx))
				continue;
			if (!eval_task(hr, ri, w, t, ctx, &gpu_missing, why,
				sizeof(why)) ||
			    nf == max)
				continue;
			memset(&ret[nf], 0, sizeof(ret[nf]));
			ret[nf].rule = ri;
			ret[nf].pid = t->id;
			ret[nf].starttime = t->starttime;
			ret[nf].uid = t->uid;
			if ((name = task_name(hr, w, t, ctx)) != NULL)
				snprintf(ret[nf].name, sizeof(ret[nf].name),
				    "%s", name);
			snprintf(ret[nf].why, sizeof(ret[nf].why), "%s", why);
			hr->st.fired++;
			nf++;
		}
		if (gpu_missing)
			hr->st.gpu_unavailable++;
		prune_tracks(&hr->rs[ri], w->mono_end_ns, r->span_ns);
	}
	prune_names(hr, w->mono_end_ns);
	*ret_n = nf;
	return 0;
}
