/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup part of a window in the store: one blob per window in
 * window_cgroup (doc/storage.md, "cgroups"), framed and compressed as the
 * task blobs are (store_codec.c). A blob that does not decode is counted
 * (blob_errors) and the window reads without its cgroup part; the rest of
 * it is untouched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "store/store.h"
#include "store/store_codec.h"
#include "store_int.h"

#define CG_PART 8 /* the frame's part number */
#define CG_PART_VERSION 1

enum { CS_INS, CS_SEL };

static const char *const cs_sql[] = {
	[CS_INS] = "INSERT INTO main.window_cgroup (window_id, blob)"
		   " VALUES (?, ?)",
	[CS_SEL] = STORE_FOLD_SEL("window_cgroup", "cgroup"),
};

static void
enc_gauge(struct store_enc *e, const struct gauge *g)
{
	store_enc_u(e, g->n);
	if (g->n == 0)
		return;
	store_enc_num(e, g->min);
	store_enc_num(e, g->max);
	store_enc_num(e, g->sum);
	store_enc_num(e, g->last);
}

static void
dec_gauge(struct store_dec *d, struct gauge *g)
{
	memset(g, 0, sizeof(*g));
	g->n = (uint32_t)store_dec_u_max(d, UINT32_MAX);
	if (g->n == 0)
		return;
	g->min = store_dec_num(d);
	g->max = store_dec_num(d);
	g->sum = store_dec_num(d);
	g->last = store_dec_num(d);
}

/* The payload, field by field as doc/storage.md lists it. */
void
store_cgroup_encode(struct store_enc *e, const struct window_cgroup *p)
{
	size_t i;
	unsigned k;

	store_enc_u(e, p->state);
	store_enc_s(e, p->err);
	store_enc_str(e, p->root);
	store_enc_u(e, p->walks);
	store_enc_u(e, p->groups_seen);
	store_enc_u(e, p->groups_cut);
	store_enc_u(e, p->read_errors);
	store_enc_u(e, p->recreated);
	store_enc_u(e, p->gone);
	store_enc_u(e, p->inv_deltas);
	store_enc_u(e, p->path_cut);
	store_enc_u(e, p->walk_ns_sum);
	store_enc_u(e, p->walk_ns_max);
	store_enc_u(e, p->n);
	for (i = 0; i < p->n; i++) {
		const struct window_cgroup_grp *g = &p->g[i];

		store_enc_u(e, g->id);
		store_enc_str(e, g->path);
		store_enc_u(e, g->depth);
		store_enc_s(e, g->uid);
		store_enc_s(e, g->pid);
		store_enc_u(e, g->have);
		store_enc_u(e, g->deltas);
		store_enc_u(e, g->born);
		store_enc_u(e, g->d_usage_us);
		store_enc_u(e, g->d_user_us);
		store_enc_u(e, g->d_system_us);
		store_enc_u(e, g->d_nr_periods);
		store_enc_u(e, g->d_nr_throttled);
		store_enc_u(e, g->d_throttled_us);
		enc_gauge(e, &g->mem_current);
		for (k = 0; k < CG_MEM__MAX; k++)
			enc_gauge(e, &g->mem[k]);
		store_enc_u(e, g->d_pgfault);
		store_enc_u(e, g->d_pgmajfault);
		for (k = 0; k < CG_EV__MAX; k++)
			store_enc_u(e, g->d_events[k]);
		for (k = 0; k < CG_PSI__MAX; k++) {
			store_enc_u(e, g->d_psi_some_us[k]);
			store_enc_u(e, g->d_psi_full_us[k]);
			enc_gauge(e, &g->psi_some_avg10[k]);
		}
	}
}

/* payload into a new part; -EBADMSG for anything malformed. */
int
store_cgroup_decode(const void *payload, size_t len, struct window_cgroup **ret)
{
	struct window_cgroup *p;
	struct store_dec d;
	uint64_t n, i;
	unsigned k;

	if ((p = window_cgroup_new()) == NULL)
		return -ENOMEM;
	store_dec_init(&d, payload, len);
	p->state = (uint32_t)store_dec_u_max(&d, CG_STATE__MAX - 1);
	p->err = (int32_t)store_dec_s(&d);
	store_dec_str(&d, p->root, sizeof(p->root));
	p->walks = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->groups_seen = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->groups_cut = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->read_errors = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->recreated = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->gone = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->inv_deltas = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->path_cut = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
	p->walk_ns_sum = store_dec_u(&d);
	p->walk_ns_max = store_dec_u(&d);
	/* a group takes at least 30 bytes: a count the payload cannot
	 * hold is refused before anything is allocated */
	n = store_dec_u_max(&d, CG_GROUPS_MAX);
	if (n > len / 30)
		store_dec_fail(&d);
	for (i = 0; i < n && d.err == 0; i++) {
		struct window_cgroup_grp *g = window_cgroup_add(p);

		if (g == NULL) {
			window_cgroup_free(p);
			return -ENOMEM;
		}
		g->id = store_dec_u(&d);
		store_dec_str(&d, g->path, sizeof(g->path));
		g->depth = (uint32_t)store_dec_u_max(&d, CG_DEPTH_MAX);
		g->uid = store_dec_s(&d);
		g->pid = store_dec_s(&d);
		g->have = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
		g->deltas = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
		g->born = store_dec_u_max(&d, 1) != 0;
		g->d_usage_us = store_dec_u(&d);
		g->d_user_us = store_dec_u(&d);
		g->d_system_us = store_dec_u(&d);
		g->d_nr_periods = store_dec_u(&d);
		g->d_nr_throttled = store_dec_u(&d);
		g->d_throttled_us = store_dec_u(&d);
		dec_gauge(&d, &g->mem_current);
		for (k = 0; k < CG_MEM__MAX; k++)
			dec_gauge(&d, &g->mem[k]);
		g->d_pgfault = store_dec_u(&d);
		g->d_pgmajfault = store_dec_u(&d);
		for (k = 0; k < CG_EV__MAX; k++)
			g->d_events[k] = store_dec_u(&d);
		for (k = 0; k < CG_PSI__MAX; k++) {
			g->d_psi_some_us[k] = store_dec_u(&d);
			g->d_psi_full_us[k] = store_dec_u(&d);
			dec_gauge(&d, &g->psi_some_avg10[k]);
		}
	}
	if (store_dec_end(&d) < 0) {
		window_cgroup_free(p);
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static int
cg_dec(const void *payload, size_t len, void **ret)
{
	struct window_cgroup *p = NULL;
	int r = store_cgroup_decode(payload, len, &p);

	*ret = p;
	return r;
}

static int
store_cgroup_put(struct store *s, int64_t id, const struct window *w)
{
	const struct window_cgroup *p = window_cgroup(w);
	struct store_enc pl = { 0 };
	int rc;

	if (p == NULL)
		return SQLITE_OK;
	store_cgroup_encode(&pl, p);
	rc = store_blob_put(store_stmt(s, &s->part_st[WPART_CGROUP][CS_INS],
				cs_sql[CS_INS]),
	    id, CG_PART, CG_PART_VERSION, &pl);
	store_enc_release(&pl);
	return rc;
}

static int
store_cgroup_load(struct store *s, int64_t id, struct window *w)
{
	void *p;
	int r;

	r = store_blob_load(s,
	    store_stmt(s, &s->part_st[WPART_CGROUP][CS_SEL], cs_sql[CS_SEL]),
	    STORE_FOLD_CGROUP, id, CG_PART, CG_PART_VERSION, cg_dec, &p,
	    "read cgroup");
	if (r < 0)
		return r;
	if (p) {
		window_cgroup_free(window_cgroup(w));
		window_part_set(w, WPART_CGROUP, p);
	}
	return 0;
}

const struct store_part store_cgroup_part = {
	.sql = cs_sql,
	.nsql = sizeof(cs_sql) / sizeof(cs_sql[0]),
	.put = store_cgroup_put,
	.load = store_cgroup_load,
};
