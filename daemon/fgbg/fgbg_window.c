/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The foreground/background part of a window as plain arithmetic (no
 * I/O): the entry list, the part's operations — free, copy, merge for
 * roll-ups (an entry matched by pid, starttime and state; deltas sum),
 * dump text — and the per-state sums a query answers from.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fgbg/fgbg.h"
#include "window/window.h"

struct window_fgbg *
window_fgbg_new(void)
{
	return calloc(1, sizeof(struct window_fgbg));
}

void
window_fgbg_free(struct window_fgbg *p)
{
	if (p == NULL)
		return;
	free(p->e);
	free(p);
}

struct window_fgbg_ent *
window_fgbg_add(struct window_fgbg *p)
{
	struct window_fgbg_ent *e;

	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 32;

		if ((e = realloc(p->e, nc * sizeof(*e))) == NULL)
			return NULL;
		p->e = e;
		p->cap = nc;
	}
	e = &p->e[p->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct window_fgbg_ent *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->starttime != y->starttime)
		return x->starttime < y->starttime ? -1 : 1;
	return x->state < y->state ? -1 : x->state > y->state;
}

void
window_fgbg_sort(struct window_fgbg *p)
{
	if (p->n > 1)
		qsort(p->e, p->n, sizeof(*p->e), ent_cmp);
}

static void
part_free(void *part)
{
	window_fgbg_free(part);
}

static void *
part_dup(const void *part)
{
	const struct window_fgbg *p = part;
	struct window_fgbg *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = *p;
	c->e = NULL;
	c->cap = c->n;
	if (p->n && (c->e = malloc(p->n * sizeof(*c->e))) == NULL) {
		free(c);
		return NULL;
	}
	if (p->n)
		memcpy(c->e, p->e, p->n * sizeof(*c->e));
	return c;
}

/* Both lists sorted by (pid, starttime, state): a merge of the two into
 * a new list, equal keys folded. */
static int
merge_ents(struct window_fgbg *acc, const struct window_fgbg *src)
{
	struct window_fgbg_ent *out;
	size_t i = 0, k = 0, n = 0, cap = acc->n + src->n;

	if (cap == 0)
		return 0;
	if ((out = malloc(cap * sizeof(*out))) == NULL)
		return -ENOMEM;
	while (i < acc->n || k < src->n) {
		int c = i == acc->n ? 1 :
		    k == src->n	    ? -1 :
				      ent_cmp(&acc->e[i], &src->e[k]);
		struct window_fgbg_ent *o;

		if (c < 0) {
			out[n++] = acc->e[i++];
			continue;
		}
		if (c > 0) {
			/* a day of short-lived processes: the store's bound
			 * (store_fgbg.c), the rest counted as not kept */
			if (n >= FG_ENTS_MAX) {
				acc->ents_cut++;
				k++;
				continue;
			}
			out[n++] = src->e[k++];
			continue;
		}
		o = &out[n++];
		*o = acc->e[i++];
		o->d_utime += src->e[k].d_utime;
		o->d_stime += src->e[k].d_stime;
		o->d_minflt += src->e[k].d_minflt;
		o->d_majflt += src->e[k].d_majflt;
		o->samples += src->e[k].samples;
		/* the later name: an app renames itself after zygote */
		memcpy(o->name, src->e[k].name, sizeof(o->name));
		k++;
	}
	free(acc->e);
	acc->e = out;
	acc->n = n;
	acc->cap = cap;
	return 0;
}

/* src (the later window's part) into *accp: counts sum, the later status
 * and cpuset win, entries fold by (pid, starttime, state). */
static int
part_merge(void **accp, const void *srcp)
{
	const struct window_fgbg *src = srcp;
	struct window_fgbg *acc = *accp;
	unsigned k;

	if (src == NULL)
		return 0;
	if (acc == NULL) {
		if ((*accp = part_dup(src)) == NULL)
			return -ENOMEM;
		return 0;
	}
	/* a range that was on anywhere is on: its datasets are real */
	if (acc->status != FGBG_ON)
		acc->status = src->status;
	if (src->cpuset[0])
		memcpy(acc->cpuset, src->cpuset, sizeof(acc->cpuset));
	acc->scans += src->scans;
	acc->reads += src->reads;
	for (k = 0; k < FG_SRC__MAX; k++)
		acc->by_src[k] += src->by_src[k];
	acc->read_errors += src->read_errors;
	acc->ents_cut += src->ents_cut;
	return merge_ents(acc, src);
}

static void
part_dump(const struct window *w, unsigned topn, struct vbuf *out)
{
	const struct window_fgbg *p = window_fgbg(w);
	size_t i;

	vbuf_printf(out,
	    "fgbg: %s%s%s, %zu entries, reads %u (cpuset %u, cgroup %u, "
	    "oom_score_adj %u, none %u), read errors %u\n",
	    fgbg_status_name(p->status), p->cpuset[0] ? " cpuset " : "",
	    p->cpuset, p->n, p->reads, p->by_src[FG_SRC_CPUSET],
	    p->by_src[FG_SRC_CGROUP], p->by_src[FG_SRC_ADJ],
	    p->by_src[FG_SRC_NONE], p->read_errors);
	for (i = 0; i < p->n && (topn == 0 || i < topn); i++) {
		const struct window_fgbg_ent *e = &p->e[i];

		vbuf_printf(out,
		    "  %d %s %s: utime %llu stime %llu minflt %llu "
		    "majflt %llu\n",
		    e->pid, e->name, fg_state_name(e->state),
		    (unsigned long long)e->d_utime,
		    (unsigned long long)e->d_stime,
		    (unsigned long long)e->d_minflt,
		    (unsigned long long)e->d_majflt);
	}
}

static size_t
part_bytes(const void *part)
{
	const struct window_fgbg *p = part;

	return p ? sizeof(*p) + p->cap * sizeof(*p->e) : 0;
}

const struct window_part_ops fgbg_window_part = {
	.name = "fgbg",
	.free = part_free,
	.dup = part_dup,
	.merge = part_merge,
	.dump = part_dump,
	.bytes = part_bytes,
};

int
fgbg_range_status(struct window_fgbg *const *p, size_t n)
{
	int st = -ENOENT;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == NULL)
			continue;
		if (p[i]->status == FGBG_ON)
			return FGBG_ON;
		st = (int)p[i]->status;
	}
	return st;
}

static int
task_cmp(const void *a, const void *b)
{
	const struct window_task *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

int
fgbg_sum(struct window_fgbg *const *p, size_t n, enum fg_state st, int32_t pid,
    uint64_t starttime, struct window_task **ret, size_t *ret_n)
{
	struct window_task *t = NULL, *nt;
	size_t nt_n = 0, cap = 0, i, k, out;

	for (i = 0; i < n; i++) {
		for (k = 0; p[i] && k < p[i]->n; k++) {
			const struct window_fgbg_ent *e = &p[i]->e[k];
			struct window_task *a;

			if (e->state != (uint32_t)st ||
			    (pid > 0 && e->pid != pid) ||
			    (starttime && e->starttime != starttime))
				continue;
			if (nt_n == cap) {
				cap = cap ? cap * 2 : 64;
				if ((nt = realloc(t, cap * sizeof(*t))) ==
				    NULL) {
					free(t);
					return -ENOMEM;
				}
				t = nt;
			}
			a = &t[nt_n++];
			memset(a, 0, sizeof(*a));
			a->id = a->tgid = e->pid;
			a->starttime = e->starttime;
			a->uid = e->uid;
			window_task_set_name(a, e->name);
			memcpy(a->comm, e->name, sizeof(a->comm) - 1);
			a->d_utime = e->d_utime;
			a->d_stime = e->d_stime;
			a->d_minflt = e->d_minflt;
			a->d_majflt = e->d_majflt;
			a->samples = e->samples;
		}
	}
	/* one row per instance, its name from one of its windows */
	if (nt_n > 1)
		qsort(t, nt_n, sizeof(*t), task_cmp);
	for (i = 0, out = 0; i < nt_n; i++) {
		if (out > 0 && t[out - 1].id == t[i].id &&
		    t[out - 1].starttime == t[i].starttime) {
			struct window_task *a = &t[out - 1];

			a->d_utime += t[i].d_utime;
			a->d_stime += t[i].d_stime;
			a->d_minflt += t[i].d_minflt;
			a->d_majflt += t[i].d_majflt;
			a->samples += t[i].samples;
			continue;
		}
		t[out++] = t[i];
	}
	*ret = t;
	*ret_n = out;
	return 0;
}
