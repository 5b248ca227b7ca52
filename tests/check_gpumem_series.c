/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpumem --since`'s series: per point of the span each instance's bytes,
 * from the store (store_gpumem_span_series), through the query thread's
 * answer (query_run, a real frame unpacked), to the client's JSON and
 * sparklines. Windows are written to a real store file; an instance absent
 * from a middle window must come back as a gap, never as 0, and more
 * windows than points are bucketed by the stated rule (the newest row of
 * each point's windows).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "frame.h"
#include "jsonmini.h"
#include "testutil.h"
#include "vitalsd.h"

#define SEC NSEC_PER_SEC
#define BASE (1700000000LL * SEC)
#define ABSENT UINT64_MAX

static struct window *
gpu_window(uint64_t seq, int64_t wall_end_s, const struct window_gpu_proc *p,
    size_t n)
{
	struct window *w = window_new(seq, 0);
	struct window_gpumem_part *g;

	ck_assert_ptr_nonnull(w);
	snprintf(w->boot_id, sizeof(w->boot_id), "boot-s");
	w->hz = 100;
	w->interval_ms = 1000;
	w->mono_start_ns = (wall_end_s - 10) * SEC;
	w->mono_end_ns = wall_end_s * SEC;
	w->boot_start_ns = w->mono_start_ns;
	w->boot_end_ns = w->mono_end_ns;
	w->wall_start_ns = BASE + (wall_end_s - 10) * SEC;
	w->wall_end_ns = BASE + wall_end_s * SEC;
	ck_assert_ptr_nonnull(g = window_gpumem_make(w));
	g->st.state = GPUMEM_OK;
	g->st.source = GPUMEM_SRC_PINNED;
	g->st.capacity = 1024;
	g->st.entries = (uint32_t)n;
	if (n) {
		ck_assert_ptr_nonnull(g->gpu = calloc(n, sizeof(*g->gpu)));
		memcpy(g->gpu, p, n * sizeof(*p));
		g->n_gpu = n;
	}
	return w;
}

static struct window_gpu_proc
gp(int32_t pid, uint64_t start, uint64_t bytes, bool stale, const char *name)
{
	struct window_gpu_proc p;

	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.starttime = start;
	p.bytes = p.min_bytes = p.max_bytes = bytes;
	p.stale = stale;
	snprintf(p.name, sizeof(p.name), "%s", name);
	return p;
}

/*
 * Five windows ending at +10 … +50 s: the GPU total in each, pid 7 absent
 * from the middle one and the last, pid 9 (stale) in the second only.
 */
static const uint64_t total[5] = { 1000, 2000, 3000, 4000, 5000 };
static const uint64_t seven[5] = { 70, 71, ABSENT, 73, ABSENT };

static struct store *
five_windows(char **ret_dir)
{
	char *dir = tu_mkdtemp("gpumem-series"), path[4096];
	struct store_opts o;
	struct store *s = NULL;
	int i;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	store_opts_default(&o);
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	for (i = 0; i < 5; i++) {
		struct window_gpu_proc p[3];
		struct window *w;
		size_t n = 0;

		p[n++] = gp(0, 0, total[i], false, "");
		if (seven[i] != ABSENT)
			p[n++] = gp(7, 700, seven[i], false, "app");
		if (i == 1)
			p[n++] = gp(9, 0, 9, true, "");
		w = gpu_window((uint64_t)i + 1, 10 * (i + 1), p, n);
		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	*ret_dir = dir;
	return s;
}

static void
done(struct store *s, char *dir)
{
	store_close(s);
	tu_rmtree(dir);
	free(dir);
}

/* instance k's values as "idx:bytes " pairs */
static void
values(const struct gpumem_series *ser, const struct gpumem_span *sp, char *buf,
    size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < sp->series_n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%u:%llu ",
		    ser->index[sp->series_off + i],
		    (unsigned long long)ser->bytes[sp->series_off + i]);
}

START_TEST(test_series_per_window)
{
	struct gpumem_series ser;
	struct gpumem_span *sp = NULL;
	struct window_gpumem st;
	char *dir, buf[256];
	struct store *s = five_windows(&dir);
	size_t n = 0, i;

	ck_assert_int_eq(store_gpumem_span_series(s, BASE, BASE + 50 * SEC, 0,
			     &sp, &n, &st, &ser),
	    0);
	ck_assert_uint_eq(ser.windows, 5);
	ck_assert_uint_eq(ser.n, 5);
	ck_assert_uint_eq(ser.step, 1);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(ser.end_wall_ns[i],
		    BASE + 10 * (int64_t)(i + 1) * SEC);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(sp[0].p.pid, 0);
	values(&ser, &sp[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "0:1000 1:2000 2:3000 3:4000 4:5000 ");
	/* the middle window and the last without pid 7: no value there */
	ck_assert_int_eq(sp[1].p.pid, 7);
	values(&ser, &sp[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "0:70 1:71 3:73 ");
	ck_assert_int_eq(sp[2].p.pid, 9);
	values(&ser, &sp[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "1:9 ");
	ck_assert_uint_eq(ser.nvalues, 9);
	/* the span's figures are unchanged */
	ck_assert_uint_eq(sp[1].first_bytes, 70);
	ck_assert_uint_eq(sp[1].p.bytes, 73);
	ck_assert_uint_eq(sp[1].windows, 3);
	store_gpumem_series_free(&ser);
	free(sp);

	/* part of the span: its own windows only, oldest first */
	ck_assert_int_eq(store_gpumem_span_series(s, BASE + 25 * SEC,
			     BASE + 50 * SEC, 0, &sp, &n, &st, &ser),
	    0);
	ck_assert_uint_eq(ser.n, 3);
	ck_assert_int_eq(ser.end_wall_ns[0], BASE + 30 * SEC);
	ck_assert_uint_eq(n, 2); /* pid 9 is not in it */
	values(&ser, &sp[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "1:73 ");
	store_gpumem_series_free(&ser);
	free(sp);
	done(s, dir);
}
END_TEST

/* Fewer values allowed than windows × instances: points of 3 windows. */
START_TEST(test_series_buckets)
{
	struct gpumem_series ser;
	struct gpumem_span *sp = NULL;
	struct window_gpumem st;
	char *dir, buf[256];
	struct store *s = five_windows(&dir);
	size_t n = 0;

	/* 6 values for 3 instances: 2 points; 3 windows each counted back
	 * from the newest, the oldest point the two left */
	ck_assert_int_eq(store_gpumem_span_series(s, BASE, BASE + 50 * SEC, 6,
			     &sp, &n, &st, &ser),
	    0);
	ck_assert_uint_eq(ser.windows, 5);
	ck_assert_uint_eq(ser.n, 2);
	ck_assert_uint_eq(ser.step, 3);
	ck_assert_int_eq(ser.end_wall_ns[0], BASE + 20 * SEC);
	ck_assert_int_eq(ser.end_wall_ns[1], BASE + 50 * SEC);
	values(&ser, &sp[0], buf, sizeof(buf));
	ck_assert_str_eq(buf, "0:2000 1:5000 ");
	/* pid 7 has no row in the newest window: the newest it has in the
	 * point's windows (73), not a gap and not 0 */
	values(&ser, &sp[1], buf, sizeof(buf));
	ck_assert_str_eq(buf, "0:71 1:73 ");
	values(&ser, &sp[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "0:9 ");
	store_gpumem_series_free(&ser);
	free(sp);

	/* not even one value per instance: no series, the spans still */
	ck_assert_int_eq(store_gpumem_span_series(s, BASE, BASE + 50 * SEC, 2,
			     &sp, &n, &st, &ser),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(ser.n, 0);
	ck_assert_uint_eq(ser.nvalues, 0);
	ck_assert_uint_eq(ser.windows, 5);
	ck_assert_uint_eq(sp[1].series_n, 0);
	store_gpumem_series_free(&ser);
	free(sp);
	done(s, dir);
}
END_TEST

/* Past GPUMEM_SERIES_POINTS windows: 250 windows are 125 points of 2. */
START_TEST(test_series_bound)
{
	char *dir = tu_mkdtemp("gpumem-bound"), path[4096];
	struct gpumem_series ser;
	struct gpumem_span *sp = NULL;
	struct window_gpumem st;
	struct store_opts o;
	struct store *s = NULL;
	size_t n = 0, i;

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/vitals.db", dir);
	store_opts_default(&o);
	o.commit_s = 3600; /* one commit at the flush, not 250 */
	ck_assert_int_eq(store_open(path, &o, &s), 0);
	for (i = 0; i < 250; i++) {
		struct window_gpu_proc p = gp(5, 50, 10 * i, false, "five");
		struct window *w = gpu_window(i + 1, 10 * ((int64_t)i + 1), &p,
		    1);

		ck_assert_int_eq(store_put(s, w), 0);
		window_free(w);
	}
	ck_assert_int_eq(store_flush(s), 0);
	ck_assert_int_eq(store_gpumem_span_series(s, BASE, BASE + 2500 * SEC, 0,
			     &sp, &n, &st, &ser),
	    0);
	ck_assert_uint_eq(ser.windows, 250);
	ck_assert_uint_le(ser.n, GPUMEM_SERIES_POINTS);
	ck_assert_uint_eq(ser.step, 2);
	ck_assert_uint_eq(ser.n, 125);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sp[0].series_n, 125);
	/* point b: windows 2b and 2b+1 (0-based), the newer one's value */
	for (i = 0; i < 125; i++) {
		ck_assert_int_eq(ser.end_wall_ns[i],
		    BASE + 10 * (int64_t)(2 * i + 2) * SEC);
		ck_assert_uint_eq(ser.index[i], i);
		ck_assert_uint_eq(ser.bytes[i], 10 * (2 * i + 1));
	}
	store_gpumem_series_free(&ser);
	free(sp);
	done(s, dir);
}
END_TEST

/* The answer as the query thread packs it, unpacked from its frame. */
static Vitals__Response *
answer(struct store *s)
{
	struct rpc_query q;
	Vitals__Response *r;
	uint8_t *frame = NULL;
	size_t len = 0;

	memset(&q, 0, sizeof(q));
	q.op = RPC_Q_GPUMEM;
	q.id = 5;
	q.from_wall_ns = BASE;
	q.to_wall_ns = BASE + 50 * SEC;
	ck_assert_int_eq(query_run(s, &q, 1u << 20, &frame, &len), 0);
	ck_assert_uint_gt(len, 4);
	r = frame_unpack_response(frame + 4, len - 4);
	free(frame);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result_case, VITALS__RESPONSE__RESULT_GPU_MEM);
	return r;
}

START_TEST(test_series_wire_json_text)
{
	const struct jm *procs, *ends, *se;
	struct fmt_ctx fc = { 0, 4, false, 80, true };
	Vitals__Response *r;
	Vitals__GpuMem *g;
	struct sbuf b;
	struct jm *j;
	char *dir;
	struct store *s = five_windows(&dir);
	size_t i;

	r = answer(s);
	g = r->gpu_mem;
	ck_assert_uint_eq(g->n_window_end_wall_ns, 5);
	ck_assert_int_eq(g->window_end_wall_ns[4], BASE + 50 * SEC);
	ck_assert_uint_eq(g->series_step, 1);
	ck_assert_uint_eq(g->series_windows, 5);
	ck_assert_uint_eq(g->n_procs, 3);
	ck_assert_int_eq(g->procs[1]->pid, 7);
	ck_assert_uint_eq(g->procs[1]->n_series_bytes, 3);
	ck_assert_uint_eq(g->procs[1]->n_series_index, 3);
	ck_assert_uint_eq(g->procs[1]->series_index[2], 3);
	ck_assert_uint_eq(g->procs[1]->series_bytes[2], 73);

	/* JSON: the ends once, each instance's series on them, null where
	 * it had no row; 64-bit values as strings */
	sbuf_init(&b);
	json_response(&b, r);
	j = jm_parse(sbuf_str(&b), b.len);
	ck_assert_ptr_nonnull(j);
	ends = jm_path(j, "gpu_mem.window_end_wall_ns");
	ck_assert_ptr_nonnull(ends);
	ck_assert_uint_eq(ends->n, 5);
	ck_assert_int_eq(ends->v[0].t, JM_STR);
	ck_assert_int_eq(ends->v[0].ll, BASE + 10 * SEC);
	procs = jm_path(j, "gpu_mem.procs");
	ck_assert_uint_eq(procs->n, 3);
	se = jm_get(&procs->v[1], "series");
	ck_assert_ptr_nonnull(se);
	ck_assert_uint_eq(se->n, 5);
	for (i = 0; i < 5; i++) {
		if (seven[i] == ABSENT) {
			ck_assert_int_eq(se->v[i].t, JM_NULL);
			continue;
		}
		ck_assert_int_eq(se->v[i].t, JM_STR);
		ck_assert_int_eq(se->v[i].ll, (long long)seven[i]);
	}
	se = jm_get(&procs->v[0], "series");
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(se->v[i].ll, (long long)total[i]);
	ck_assert_int_eq(jm_get(&procs->v[2], "series")->v[0].t, JM_NULL);
	ck_assert_int_eq(jm_get(&procs->v[2], "series")->v[1].ll, 9);
	jm_free(j);

	/* text: a row per GPU total and process after the table, the gap
	 * as a space (ASCII: C locale) */
	text_set_utf8(false);
	sbuf_reset(&b);
	fmt_gpumem(&b, g, false);
	fmt_gpumem_spark(&b, g, &fc);
	ck_assert_msg(strstr(sbuf_str(&b),
			  "History, oldest left: 5 windows (a column: their "
			  "max; blank: none)\n"
			  "  gpu 0 total 1000..5000  _:=+#\n"
			  "  app 7       70..73      _: # \n"
			  "  pid 9       9..9         _   \n") != NULL,
	    "%s", sbuf_str(&b));
	sbuf_free(&b);
	vitals__response__free_unpacked(r, NULL);
	done(s, dir);
}
END_TEST

static Suite *
gpumem_series_suite(void)
{
	Suite *s = suite_create("gpumem_series");
	TCase *tc = tcase_create("series");

	tcase_add_test(tc, test_series_per_window);
	tcase_add_test(tc, test_series_buckets);
	tcase_add_test(tc, test_series_bound);
	tcase_add_test(tc, test_series_wire_json_text);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(gpumem_series_suite());
}
