/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DMA-BUF's files as bytes in, structs out (no I/O): the fd link text,
 * the fdinfo of a DMA-BUF (the generic pos/flags/mnt_id/ino head, then
 * size, count, exp_name and an optional name, each "key:\tvalue\n"), the
 * one-line sysfs files, and the tally of one pass's holdings: every
 * buffer once by inode, its sharers, rows per process and per exporter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "dmabuf/dmabuf.h"
#include "../../bpf/dmabuf/dmabuf.bpf.h"

int
dmabuf_iter_parse(const void *buf, size_t len, uint32_t *ret_n,
    uint64_t *ret_bytes)
{
	const struct dmabuf_rec *r = buf;
	size_t i, n = len / sizeof(*r);
	uint64_t bytes = 0;

	if (len % sizeof(*r) != 0 || n > UINT32_MAX)
		return -EBADMSG;
	for (i = 0; i < n; i++) {
		if (bytes + r[i].size < bytes)
			return -EBADMSG;
		bytes += r[i].size;
	}
	*ret_n = (uint32_t)n;
	*ret_bytes = bytes;
	return 0;
}

bool
dmabuf_link_is(const char *t, size_t len)
{
	static const char pfx[] = "/dmabuf:", anon[] = "anon_inode:dmabuf";

	if (len >= sizeof(pfx) - 1 && memcmp(t, pfx, sizeof(pfx) - 1) == 0)
		return true;
	return len == sizeof(anon) - 1 && memcmp(t, anon, len) == 0;
}

/* s[0..n) as a decimal number (signed: a leading '-'). */
static int
num(const char *s, size_t n, bool sign, int64_t *neg, uint64_t *ret)
{
	char tmp[24];

	*neg = 0;
	if (sign && n > 0 && s[0] == '-') {
		*neg = 1;
		s++;
		n--;
	}
	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return parse_uint(tmp, UINT64_MAX, ret) < 0 ? -EINVAL : 0;
}

/* A name value: control bytes replaced, cut to sz - 1 bytes (name_clean's
 * output is never longer than its input). */
static void
name_set(char *out, size_t sz, const char *v, size_t n)
{
	if (n > sz - 1)
		n = sz - 1;
	name_clean(out, v, n);
}

int
dmabuf_parse_fdinfo(const char *buf, size_t len, struct dmabuf_fdinfo *ret)
{
	struct dmabuf_fdinfo f;
	const char *p = buf, *end = buf + len, *nl, *tab, *v;
	uint64_t u;
	int64_t neg;
	size_t kl, vl;

	memset(&f, 0, sizeof(f));
	if (memchr(buf, '\0', len) != NULL)
		return -EINVAL;
	while (p < end) {
		/* a line without its newline: the read was cut */
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return -EINVAL;
		tab = memchr(p, ':', (size_t)(nl - p));
		if (tab == NULL) {
			p = nl + 1;
			continue;
		}
		kl = (size_t)(tab - p);
		v = tab + 1;
		while (v < nl && (*v == '\t' || *v == ' '))
			v++;
		vl = (size_t)(nl - v);
#define KEY(k) (kl == sizeof(k) - 1 && memcmp(p, k, kl) == 0)
		if (KEY("size")) {
			if (num(v, vl, false, &neg, &f.size) < 0)
				return -EINVAL;
			f.have |= DMABUF_FDI_SIZE;
		} else if (KEY("count")) {
			if (num(v, vl, true, &neg, &u) < 0 || u > INT64_MAX)
				return -EINVAL;
			f.count = neg ? -(int64_t)u : (int64_t)u;
			f.have |= DMABUF_FDI_COUNT;
		} else if (KEY("ino")) {
			if (num(v, vl, false, &neg, &f.ino) < 0)
				return -EINVAL;
			f.have |= DMABUF_FDI_INO;
		} else if (KEY("exp_name")) {
			name_set(f.exp_name, sizeof(f.exp_name), v, vl);
			f.have |= DMABUF_FDI_EXP;
		} else if (KEY("name")) {
			name_set(f.name, sizeof(f.name), v, vl);
			f.have |= DMABUF_FDI_NAME;
		}
#undef KEY
		p = nl + 1;
	}
	if (!(f.have & DMABUF_FDI_SIZE) || !(f.have & DMABUF_FDI_EXP))
		return -EINVAL;
	*ret = f;
	return 0;
}

/* The one line of a sysfs file, without its newline. */
static int
one_line(const char *buf, size_t len, size_t *ret_n)
{
	const char *nl;

	if (len == 0 || memchr(buf, '\0', len) != NULL)
		return -EINVAL;
	nl = memchr(buf, '\n', len);
	if (nl != NULL && (size_t)(nl - buf) + 1 != len)
		return -EINVAL; /* more than one line */
	*ret_n = nl ? (size_t)(nl - buf) : len;
	return *ret_n ? 0 : -EINVAL;
}

int
dmabuf_parse_u64(const char *buf, size_t len, uint64_t *ret)
{
	int64_t neg;
	size_t n;

	if (one_line(buf, len, &n) < 0)
		return -EINVAL;
	return num(buf, n, false, &neg, ret);
}

int
dmabuf_parse_name(const char *buf, size_t len, char *out, size_t sz)
{
	size_t n;

	if (one_line(buf, len, &n) < 0)
		return -EINVAL;
	name_set(out, sz, buf, n);
	return 0;
}

/* ------------------------------------------------------------- the tally */

static int
cmp_hold(const void *a, const void *b)
{
	const struct dmabuf_hold *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct dmabuf_proc *
proc_row(struct window_dmabuf *p, size_t *cap, const struct dmabuf_hold *h)
{
	struct dmabuf_proc *r;
	size_t i;

	for (i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == h->pid)
			return &p->procs[i];
	if (p->nprocs == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;

		if ((r = realloc(p->procs, nc * sizeof(*r))) == NULL)
			return NULL;
		p->procs = r;
		*cap = nc;
	}
	r = &p->procs[p->nprocs++];
	memset(r, 0, sizeof(*r));
	r->pid = h->pid;
	snprintf(r->name, sizeof(r->name), "%s", h->comm);
	r->passes = 1;
	return r;
}

static struct dmabuf_exp *
exp_row(struct window_dmabuf *p, size_t *cap, const char *name)
{
	struct dmabuf_exp *r;
	size_t i;

	for (i = 0; i < p->nexps; i++)
		if (!p->exps[i].other && strcmp(p->exps[i].name, name) == 0)
			return &p->exps[i];
	if (p->nexps == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;

		if ((r = realloc(p->exps, nc * sizeof(*r))) == NULL)
			return NULL;
		p->exps = r;
		*cap = nc;
	}
	r = &p->exps[p->nexps++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->passes = 1;
	return r;
}

/* One buffer's holdings h[0..n) (one inode, by pid): its process rows. */
static int
tally_buffer(struct window_dmabuf *p, size_t *pcap, const struct dmabuf_hold *h,
    size_t n, uint32_t sharers)
{
	struct dmabuf_proc *r = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (i == 0 || h[i].pid != h[i - 1].pid) {
			if ((r = proc_row(p, pcap, &h[i])) == NULL)
				return -ENOMEM;
			r->buffers++;
			r->bytes += h[i].size;
			r->pss_bytes += h[i].size / sharers;
			if (sharers > 1)
				r->shared_bytes += h[i].size;
		}
		r->fds++;
	}
	return 0;
}

static void
shared_add(struct window_dmabuf *p, const struct dmabuf_hold *h, size_t n,
    uint32_t sharers)
{
	struct dmabuf_shared *s;
	size_t i, at;

	/* the DMABUF_SHARED_MAX largest: replace the smallest when full */
	if (p->nshared == DMABUF_SHARED_MAX) {
		p->shared_cut++;
		for (at = 0, i = 1; i < p->nshared; i++)
			if (p->shared[i].size < p->shared[at].size)
				at = i;
		if (p->shared[at].size >= h[0].size)
			return;
	} else {
		at = p->nshared++;
	}
	s = &p->shared[at];
	memset(s, 0, sizeof(*s));
	s->ino = h[0].ino;
	s->size = h[0].size;
	snprintf(s->exp, sizeof(s->exp), "%s", h[0].exp);
	s->sharers = sharers;
	for (i = 0; i < n && s->npids < DMABUF_SHARERS_MAX; i++)
		if (i == 0 || h[i].pid != h[i - 1].pid)
			s->pids[s->npids++] = h[i].pid;
}

/* Rows past max into one "other" row (pid -1); rows are sorted. */
static void
fold_procs(struct window_dmabuf *p, unsigned max)
{
	struct dmabuf_proc o = { .pid = -1, .passes = 1 };
	size_t i;

	if (p->nprocs <= max)
		return;
	snprintf(o.name, sizeof(o.name), "other");
	for (i = max; i < p->nprocs; i++) {
		o.fds += p->procs[i].fds;
		o.buffers += p->procs[i].buffers;
		o.bytes += p->procs[i].bytes;
		o.shared_bytes += p->procs[i].shared_bytes;
		o.pss_bytes += p->procs[i].pss_bytes;
		o.procs++;
	}
	o.bytes_max = o.bytes;
	p->procs_cut += (uint32_t)(p->nprocs - max);
	p->procs[max] = o;
	p->nprocs = max + 1;
}

static void
fold_exps(struct window_dmabuf *p)
{
	struct dmabuf_exp o = { .other = true, .passes = 1 };
	size_t i, max = DMABUF_EXPS_MAX - 1;

	if (p->nexps <= DMABUF_EXPS_MAX)
		return;
	for (i = max; i < p->nexps; i++) {
		o.buffers += p->exps[i].buffers;
		o.bytes += p->exps[i].bytes;
	}
	o.bytes_max = o.bytes;
	p->exps_cut += (uint32_t)(p->nexps - max);
	p->exps[max] = o;
	p->nexps = max + 1;
}

int
dmabuf_tally(struct dmabuf_hold *h, size_t n, unsigned procs_max,
    struct window_dmabuf **ret)
{
	struct window_dmabuf *p;
	struct dmabuf_exp *e;
	size_t i, j, k, pcap = 0, ecap = 0;
	uint32_t sharers;

	if ((p = window_dmabuf_new()) == NULL)
		return -ENOMEM;
	p->passes = 1;
	if (n &&
	    (p->shared = calloc(DMABUF_SHARED_MAX, sizeof(*p->shared))) == NULL)
		goto nomem;
	if (n > 1)
		qsort(h, n, sizeof(*h), cmp_hold);
	for (i = 0; i < n; i = j) {
		sharers = 1;
		for (j = i + 1; j < n && h[j].ino == h[i].ino; j++)
			if (h[j].pid != h[j - 1].pid)
				sharers++;
		/* one buffer, one size: the first fd's (the kernel's are
		 * all the same buffer's) */
		for (k = i + 1; k < j; k++) {
			h[k].size = h[i].size;
			memcpy(h[k].exp, h[i].exp, sizeof(h[k].exp));
		}
		p->buffers++;
		p->total_bytes += h[i].size;
		if (sharers > 1) {
			p->shared_buffers++;
			p->shared_bytes += h[i].size;
			shared_add(p, &h[i], j - i, sharers);
		}
		if ((e = exp_row(p, &ecap, h[i].exp)) == NULL)
			goto nomem;
		e->buffers++;
		e->bytes += h[i].size;
		if (tally_buffer(p, &pcap, &h[i], j - i, sharers) < 0)
			goto nomem;
	}
	p->total_bytes_max = p->total_bytes;
	for (i = 0; i < p->nprocs; i++)
		p->procs[i].bytes_max = p->procs[i].bytes;
	for (i = 0; i < p->nexps; i++)
		p->exps[i].bytes_max = p->exps[i].bytes;
	window_dmabuf_sort(p);
	fold_procs(p, procs_max ? procs_max : 1);
	fold_exps(p);
	*ret = p;
	return 0;
nomem:
	window_dmabuf_free(p);
	return -ENOMEM;
}
