/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A window's CPU and PSI rows as one payload (doc/storage.md, "Blobs"):
 *
 *   u  CPU rows; per row:
 *        s  cpu − previous cpu − 1 (before the first: −2, so the
 *           aggregate line −1 and then CPUs 0, 1, 2 … take a 0 each)
 *        u  flags: 1 online_end, 2 samples and wall_ns follow (always
 *           on the first row; later rows without it share the first's)
 *        u  user, nice, system, idle, iowait, irq, softirq, steal, guest,
 *           guest_nice
 *        if 2: u samples, u wall_ns
 *        gauge cur_khz; s max_khz; s capacity; gauge freq_ratio
 *   u  PSI rows; per row:
 *        u  resource (enum psi_res); u flags: 1 available, 2 have_full
 *        u  samples, d_some_us, d_full_us
 *        gauge some_avg10, gauge full_avg10
 *
 * Gauges as store_enc_gauge() writes them (store_kv.c): an empty one is
 * its n alone, as its figures are NULL in a table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_codec.h"
#include "store/store_kv.h"
#include "store/store_sys.h"

enum {
	CF_ONLINE = 1,
	CF_TIME = 2,
	CF__ALL = 3,
	PF_AVAILABLE = 1,
	PF_FULL = 2,
	PF__ALL = 3,
};

#define CPU_TIMES 10 /* struct cpu_times: ten u64, user .. guest_nice */

static void
times_put(struct store_enc *e, const struct cpu_times *t)
{
	const uint64_t v[CPU_TIMES] = { t->user, t->nice, t->system, t->idle,
		t->iowait, t->irq, t->softirq, t->steal, t->guest,
		t->guest_nice };
	unsigned i;

	for (i = 0; i < CPU_TIMES; i++)
		store_enc_u(e, v[i]);
}

static void
times_get(struct store_dec *d, struct cpu_times *t)
{
	t->user = store_dec_u(d);
	t->nice = store_dec_u(d);
	t->system = store_dec_u(d);
	t->idle = store_dec_u(d);
	t->iowait = store_dec_u(d);
	t->irq = store_dec_u(d);
	t->softirq = store_dec_u(d);
	t->steal = store_dec_u(d);
	t->guest = store_dec_u(d);
	t->guest_nice = store_dec_u(d);
}

int
store_sys_put(struct store_enc *e, const struct store_sys_cpu *c, size_t nc,
    const struct store_sys_psi *p, size_t np)
{
	int64_t prev = -2;
	unsigned f;
	size_t i;

	for (i = 0; i < np; i++)
		if (p[i].res > 255)
			return -EINVAL;
	store_enc_u(e, nc);
	for (i = 0; i < nc; i++) {
		const struct window_cpu *x = &c[i].c;

		store_enc_s(e, (int64_t)c[i].cpu - prev - 1);
		prev = c[i].cpu;
		f = (x->online_end ? CF_ONLINE : 0) |
		    (i == 0 || x->samples != c[0].c.samples ||
				x->wall_ns != c[0].c.wall_ns ?
			    CF_TIME :
			    0);
		store_enc_u(e, f);
		times_put(e, &x->d);
		if (f & CF_TIME) {
			store_enc_u(e, x->samples);
			store_enc_u(e, x->wall_ns);
		}
		store_enc_gauge(e, &x->cur_khz);
		store_enc_s(e, x->max_khz);
		store_enc_s(e, x->capacity);
		store_enc_gauge(e, &x->freq_ratio);
	}
	store_enc_u(e, np);
	for (i = 0; i < np; i++) {
		const struct window_psi *x = &p[i].p;

		store_enc_u(e, p[i].res);
		store_enc_u(e,
		    (x->available ? PF_AVAILABLE : 0) |
			(x->have_full ? PF_FULL : 0));
		store_enc_u(e, x->samples);
		store_enc_u(e, x->d_some_us);
		store_enc_u(e, x->d_full_us);
		store_enc_gauge(e, &x->some_avg10);
		store_enc_gauge(e, &x->full_avg10);
	}
	return e->err;
}

static bool
cpu_get(struct store_dec *d, size_t i, int64_t *prev, struct store_sys_cpu *r,
    const struct store_sys_cpu *first)
{
	int64_t step = store_dec_s(d), cpu;
	unsigned f;

	/* the difference of two int32 and −2: anything wider is a lie */
	if (step < -((int64_t)1 << 33) || step > ((int64_t)1 << 33))
		return false;
	cpu = *prev + step + 1;
	if (cpu < INT32_MIN || cpu > INT32_MAX)
		return false;
	r->cpu = (int32_t)cpu;
	*prev = cpu;
	f = (unsigned)store_dec_u_max(d, CF__ALL);
	if (i == 0 && !(f & CF_TIME))
		return false; /* the first row carries them */
	r->c.online_end = f & CF_ONLINE;
	times_get(d, &r->c.d);
	if (f & CF_TIME) {
		r->c.samples = (uint32_t)store_dec_u_max(d, UINT32_MAX);
		r->c.wall_ns = store_dec_u(d);
	} else {
		r->c.samples = first->c.samples;
		r->c.wall_ns = first->c.wall_ns;
	}
	store_dec_gauge(d, &r->c.cur_khz);
	r->c.max_khz = store_dec_s(d);
	cpu = store_dec_s(d);
	if (cpu < INT32_MIN || cpu > INT32_MAX)
		return false;
	r->c.capacity = (int32_t)cpu;
	store_dec_gauge(d, &r->c.freq_ratio);
	return !d->err;
}

int
store_sys_get(const void *buf, size_t len, size_t max, struct store_sys *ret)
{
	struct store_dec d;
	struct store_sys s = { 0 };
	int64_t prev = -2;
	unsigned f;
	size_t i, n;

	store_dec_init(&d, buf, len);
	/* a CPU row takes at least 16 bytes, a PSI row 7 */
	n = (size_t)store_dec_u_max(&d, max < len / 16 ? max : len / 16);
	if (d.err)
		return -EBADMSG;
	if (n && (s.cpu = calloc(n, sizeof(*s.cpu))) == NULL)
		return -ENOMEM;
	s.ncpu = n;
	for (i = 0; i < n; i++)
		if (!cpu_get(&d, i, &prev, &s.cpu[i], &s.cpu[0]))
			goto bad;
	n = (size_t)store_dec_u_max(&d, max < len / 7 ? max : len / 7);
	if (d.err)
		goto bad;
	if (n && (s.psi = calloc(n, sizeof(*s.psi))) == NULL) {
		store_sys_release(&s);
		return -ENOMEM;
	}
	s.npsi = n;
	for (i = 0; i < n && !d.err; i++) {
		struct window_psi *x = &s.psi[i].p;

		s.psi[i].res = (uint32_t)store_dec_u_max(&d, 255);
		f = (unsigned)store_dec_u_max(&d, PF__ALL);
		x->available = f & PF_AVAILABLE;
		x->have_full = f & PF_FULL;
		x->samples = (uint32_t)store_dec_u_max(&d, UINT32_MAX);
		x->d_some_us = store_dec_u(&d);
		x->d_full_us = store_dec_u(&d);
		store_dec_gauge(&d, &x->some_avg10);
		store_dec_gauge(&d, &x->full_avg10);
	}
	if (store_dec_end(&d) < 0)
		goto bad;
	*ret = s;
	return 0;
bad:
	store_sys_release(&s);
	return -EBADMSG;
}

void
store_sys_release(struct store_sys *s)
{
	free(s->cpu);
	free(s->psi);
	memset(s, 0, sizeof(*s));
}
