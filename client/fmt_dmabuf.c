/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals dmabuf` as text: the pass's totals (every buffer once, whoever
 * holds it) and what it could not read, then the processes, the
 * exporters and the buffers two or more processes share (doc/metrics.md,
 * "DMA-BUF"). Sizes in KiB, with a decimal only when not a whole KiB.
 */
#include <stdio.h>
#include <string.h>

#include "client.h"

static void
kib(char *buf, size_t len, uint64_t b)
{
	if (b % 1024 == 0)
		snprintf(buf, len, "%llu", (unsigned long long)(b / 1024));
	else
		snprintf(buf, len, "%.1f", (double)b / 1024.0);
}

static void
procs(struct sbuf *o, const Vitals__Dmabuf *d)
{
	struct table *tb = table_new();
	char a[32], b[32], c[32], e[32];
	size_t i;

	if (tb == NULL)
		return;
	table_col(tb, "pid", 0, 2, 0);
	table_col(tb, "kib", 0, 1, 0);
	table_col(tb, "max_kib", 0, 1, 0);
	table_col(tb, "bufs", 0, 1, 0);
	table_col(tb, "fds", 0, 1, 0);
	table_col(tb, "shared_kib", 0, 1, 0);
	table_col(tb, "pss_kib", 0, 1, 0);
	table_col(tb, "name", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < d->n_procs; i++) {
		const Vitals__DmabufProc *p = d->procs[i];

		if (p->pid < 0)
			table_cell(tb, "-");
		else
			table_cell(tb, "%d", p->pid);
		kib(a, sizeof(a), p->bytes);
		kib(b, sizeof(b), p->bytes_max);
		kib(c, sizeof(c), p->shared_bytes);
		kib(e, sizeof(e), p->pss_bytes);
		table_cell(tb, "%s", a);
		table_cell(tb, "%s", b);
		table_cell(tb, "%u", p->buffers);
		table_cell(tb, "%u", p->fds);
		table_cell(tb, "%s", c);
		table_cell(tb, "%s", e);
		if (p->pid < 0) {
			snprintf(a, sizeof(a), "(other: %u processes)",
			    p->procs);
			table_label(tb, a);
		} else {
			table_label(tb, p->name);
		}
	}
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
}

static void
exporters(struct sbuf *o, const Vitals__Dmabuf *d)
{
	struct table *tb = table_new();
	char a[32], b[32];
	size_t i;

	if (tb == NULL)
		return;
	table_col(tb, "kib", 0, 2, 0);
	table_col(tb, "max_kib", 0, 1, 0);
	table_col(tb, "bufs", 0, 1, 0);
	table_col(tb, "exporter", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < d->n_exporters; i++) {
		const Vitals__DmabufExporter *e = d->exporters[i];

		kib(a, sizeof(a), e->bytes);
		kib(b, sizeof(b), e->bytes_max);
		table_cell(tb, "%s", a);
		table_cell(tb, "%s", b);
		table_cell(tb, "%u", e->buffers);
		table_label(tb,
		    e->other	   ? "(other)" :
			e->name[0] ? e->name :
				     "(unknown)");
	}
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
}

static void
shared(struct sbuf *o, const Vitals__Dmabuf *d)
{
	struct table *tb = table_new();
	char a[32], pids[128];
	size_t i, k, n;

	if (tb == NULL)
		return;
	table_col(tb, "inode", 0, 2, 0);
	table_col(tb, "kib", 0, 1, 0);
	table_col(tb, "sharers", 0, 1, 0);
	table_col(tb, "exporter", 0, 2, TABLE_LEFT);
	table_col(tb, "pids", 0, 2, TABLE_LEFT | TABLE_FLEX);
	for (i = 0; i < d->n_shared; i++) {
		const Vitals__DmabufShared *s = d->shared[i];

		table_cell(tb, "%llu", (unsigned long long)s->inode);
		kib(a, sizeof(a), s->size);
		table_cell(tb, "%s", a);
		table_cell(tb, "%u", s->sharers);
		table_label(tb, s->exporter[0] ? s->exporter : "(unknown)");
		pids[0] = '\0';
		for (n = 0, k = 0; k < s->n_pids && n < sizeof(pids); k++)
			n += (size_t)snprintf(pids + n, sizeof(pids) - n,
			    "%s%d", k ? "," : "", s->pids[k]);
		if (s->sharers > s->n_pids && n < sizeof(pids))
			snprintf(pids + n, sizeof(pids) - n, ",...");
		table_label(tb, pids);
	}
	table_render(tb, o, TEXT_WIDTH);
	table_free(tb);
}

/* The kernel's list (iter/dmabuf): what it held, the passes it spared. */
static void
kernel(struct sbuf *o, const Vitals__Dmabuf *d)
{
	char k[32];

	if (d->kernel_passes == 0 && d->iter_errors == 0) {
		sbuf_printf(o,
		    "kernel list (iter/dmabuf): not read (%s): every pass "
		    "walked /proc\n",
		    d->iter_why && *d->iter_why ? d->iter_why : "unknown");
		return;
	}
	kib(k, sizeof(k), d->kernel_bytes);
	sbuf_printf(o,
	    "kernel list (iter/dmabuf): %u buffers, %s KiB, whoever holds "
	    "them; read by %u passes, %u of them with no buffer (no /proc "
	    "walk), read failed %u\n",
	    d->kernel_buffers, k, d->kernel_passes, d->passes_no_buffer,
	    d->iter_errors);
}

void
fmt_dmabuf(struct sbuf *o, const Vitals__Dmabuf *d)
{
	char t[48], a[32], b[32], m[32];

	if (d == NULL || !d->on) {
		if (d && d->stored)
			sbuf_printf(o,
			    "DMA-BUF: no pass in the %u stored windows of the "
			    "range\n",
			    d->windows);
		else
			sbuf_puts(o,
			    "DMA-BUF: no pass yet (dmabuf = off, or no "
			    "window has closed)\n");
		return;
	}
	fmt_time(t, sizeof(t), d->pass_wall_ns);
	kib(a, sizeof(a), d->total_bytes);
	kib(b, sizeof(b), d->shared_bytes);
	kib(m, sizeof(m), d->total_bytes_max);
	sbuf_printf(o,
	    "DMA-BUF at %s (%u passes%s): %s KiB in %u buffers, each "
	    "counted once; shared by two or more processes %s KiB in %u; "
	    "max %s KiB\n",
	    t, d->passes, d->stored ? " in the stored windows" : "", a,
	    d->buffers, b, d->shared_buffers, m);
	sbuf_printf(o,
	    "read %u processes (not reached, fd budget: %u; unreadable %u; "
	    "exited %u), %llu links, %u DMA-BUF fds, bad fdinfo %u, sysfs "
	    "entries %u (size mismatch %u), pass %.2f ms max, due while "
	    "one ran %u\n",
	    d->procs_scanned, d->procs_skipped, d->procs_unreadable,
	    d->procs_gone, (unsigned long long)d->fds_read, d->fds_dmabuf,
	    d->fdinfo_invalid, d->sysfs_found, d->size_mismatch,
	    (double)d->pass_ns_max / 1e6, d->passes_overlapped);
	kernel(o, d);
	if (d->n_procs) {
		sbuf_puts(o,
		    "\nprocesses (each buffer once per process; pss: "
		    "size / sharers)\n");
		procs(o, d);
	}
	if (d->n_exporters) {
		sbuf_puts(o, "\nexporters\n");
		exporters(o, d);
	}
	if (d->n_shared) {
		sbuf_printf(o, "\nshared buffers (largest %zu%s)\n",
		    d->n_shared, d->shared_cut ? ", more not listed" : "");
		shared(o, d);
	}
}
