/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals gpumem`. The default text is what `dumpsys gpu --gpumem` prints,
 * line for line, so whatever parses that parses this (doc/gpumem.md has
 * the rules, taken from GpuMem::dump and GpuService::doDump):
 *
 *   "Failed to initialize GPU memory eBPF"   no map could be opened
 *   "GPU memory total usage map is empty"    the walk found nothing
 *   per GPU: "Memory snapshot for GPU %u:", then "Global total: %llu" (pid
 *   0) or "Global total: N/A", then "Proc %u total: %llu" by pid ascending
 *   and, after it all, the empty line GpuService appends to each section.
 *
 * The map's state, the pin read, names, stale marks, imported sizes,
 * saturation and a span's min, max and growth are for --verbose (and
 * --json, which has every field); a span's bytes over time follow its
 * table as sparklines (fmt_gpumem_spark).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

#define ULL(x) ((unsigned long long)(x))

/* The map's state, the pin read and the warnings (health, --verbose). */
void
fmt_gpumem_health(struct sbuf *o, const Vitals__GpuMemState *s)
{
	sbuf_printf(o, "GPU memory: %s", s->state ? s->state : "unknown");
	if (s->why && *s->why)
		sbuf_printf(o, " (%s%s%s)", s->why, s->err ? ": " : "",
		    s->err ? strerror(s->err) : "");
	sbuf_printf(o, "; %s map", s->source ? s->source : "none");
	if (s->map_path && *s->map_path)
		sbuf_printf(o, " %s", s->map_path);
	sbuf_printf(o, ", %u of %u entries%s\n", s->entries, s->capacity,
	    s->imported ? ", imported sizes" : "");
	if (s->saturated)
		sbuf_printf(o,
		    "Warning: map saturated (%u of %u entries): "
		    "GPU memory of further (gpu, pid) pairs is not recorded\n",
		    s->entries, s->capacity);
	if (s->insert_fail)
		sbuf_printf(o,
		    "Warning: %llu inserts refused by the full "
		    "map\n",
		    ULL(s->insert_fail));
	if (s->restarts || s->vanished || s->truncated || s->recovered)
		sbuf_printf(o,
		    "Note: entries changed during the walk "
		    "(restarts %u, vanished %u, truncated %u, "
		    "recovered %u)\n",
		    s->restarts, s->vanished, s->truncated, s->recovered);
	if (s->traversals)
		sbuf_printf(o, "Walks: %u of %u by batch lookup\n",
		    s->batch_walks, s->traversals);
}

/* What --verbose adds after a line's bytes. */
static void
extras(struct sbuf *o, const Vitals__GpuMem *g, const Vitals__GpuProc *p)
{
	if (g->state && g->state->imported)
		sbuf_printf(o, " (imported %llu)", ULL(p->imported_bytes));
	if (p->pid != 0) {
		if (p->stale)
			sbuf_puts(o, " [stale]");
		else if (p->name && *p->name)
			sbuf_printf(o, " %s", p->name);
	}
	if (g->since_ns > 0)
		sbuf_printf(o, " (min %llu, max %llu, growth %+lld)",
		    ULL(p->min_bytes), ULL(p->max_bytes),
		    (long long)(p->bytes - p->first_bytes));
}

/* dumpsys's order: by GPU, then pid as an unsigned number (its key). */
static int
proc_cmp(const void *a, const void *b)
{
	const Vitals__GpuProc *x = *(Vitals__GpuProc *const *)a;
	const Vitals__GpuProc *y = *(Vitals__GpuProc *const *)b;
	uint32_t px = (uint32_t)x->pid, py = (uint32_t)y->pid;

	if (x->gpu_id != y->gpu_id)
		return x->gpu_id < y->gpu_id ? -1 : 1;
	if (px != py)
		return px < py ? -1 : 1;
	return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

/*
 * dumpsys's two messages: "Failed to initialize" while GpuService holds
 * no valid map (nothing pinned, or it could not be opened), "empty" when
 * its first get-next-key fails: an empty map, or a walk the kernel
 * refused.
 */
static const char *
dumpsys_message(const Vitals__GpuMem *g)
{
	const Vitals__GpuMemState *s = g->state;

	if (s == NULL || s->state == NULL)
		return "Failed to initialize GPU memory eBPF\n";
	if (!strcmp(s->state, "ok") && g->n_procs > 0)
		return NULL;
	if (!strcmp(s->state, "ok") || !strcmp(s->state, "empty") ||
	    (!strcmp(s->state, "traversal error") && s->why &&
		!strcmp(s->why, "traversal failed")))
		return "GPU memory total usage map is empty\n";
	return "Failed to initialize GPU memory eBPF\n";
}

void
fmt_gpumem(struct sbuf *o, const Vitals__GpuMem *g, bool verbose)
{
	const Vitals__GpuProc **v = NULL;
	const char *msg;
	size_t i, j;

	if (g->since_ns > 0)
		verbose = true; /* a span has no dumpsys form */
	if (verbose && g->state)
		fmt_gpumem_health(o, g->state);
	if (verbose && g->since_ns > 0) {
		char d[16];

		duration_format(d, sizeof(d), g->since_ns);
		sbuf_printf(o, "Over the last %s\n", d);
	}
	if (!verbose && (msg = dumpsys_message(g)) != NULL) {
		sbuf_puts(o, msg);
		sbuf_putc(o, '\n');
		return;
	}
	if (g->n_procs && (v = malloc(g->n_procs * sizeof(*v))) == NULL) {
		o->err = -ENOMEM;
		return;
	}
	for (i = 0; i < g->n_procs; i++)
		v[i] = g->procs[i];
	if (g->n_procs > 1)
		qsort(v, g->n_procs, sizeof(*v), proc_cmp);
	for (i = 0; i < g->n_procs; i = j) {
		uint32_t gpu = v[i]->gpu_id;

		sbuf_printf(o, "Memory snapshot for GPU %u:\n", gpu);
		if (v[i]->pid == 0) {
			sbuf_printf(o, "Global total: %llu", ULL(v[i]->bytes));
			if (verbose)
				extras(o, g, v[i]);
			sbuf_putc(o, '\n');
			j = i + 1;
		} else {
			sbuf_puts(o, "Global total: N/A\n");
			j = i;
		}
		for (; j < g->n_procs && v[j]->gpu_id == gpu; j++) {
			sbuf_printf(o, "Proc %u total: %llu",
			    (unsigned)v[j]->pid, ULL(v[j]->bytes));
			if (verbose)
				extras(o, g, v[j]);
			sbuf_putc(o, '\n');
		}
	}
	if (!verbose)
		sbuf_putc(o, '\n'); /* GpuService ends its section so */
	free(v);
}

#define SPARK_LABEL_COLS 24 /* a 15-byte comm, a space, a 7-digit pid */

/* "gpu N total", or "comm pid" (the comm abbreviated, the pid whole;
 * "pid N" when the instance has no name: stale). */
static void
spark_label(struct sbuf *o, const Vitals__GpuProc *p, uint32_t gpu)
{
	struct sbuf name;
	char pid[16];

	if (p == NULL || p->pid == 0) {
		sbuf_printf(o, "gpu %u total", gpu);
		return;
	}
	snprintf(pid, sizeof(pid), "%d", p->pid);
	if (p->name == NULL || *p->name == '\0') {
		sbuf_printf(o, "pid %s", pid);
		return;
	}
	sbuf_init(&name);
	fmt_label(&name, p->name);
	if (name.err)
		o->err = name.err;
	else
		text_abbrev(o, sbuf_str(&name),
		    SPARK_LABEL_COLS - 1 - strlen(pid));
	sbuf_printf(o, " %s", pid);
	sbuf_free(&name);
}

/*
 * After a span's table: per GPU its global total (a row even when the GPU
 * has none: "n/a"), then each instance on it, in the table's order, over
 * the answer's points (GpuMem.window_end_wall_ns). A point where the
 * instance had no row is a gap, never 0.
 */
void
fmt_gpumem_spark(struct sbuf *o, const Vitals__GpuMem *g,
    const struct fmt_ctx *c)
{
	const Vitals__GpuProc **v = NULL, **row = NULL;
	const char **label = NULL;
	struct sbuf *names = NULL;
	uint32_t *gpu = NULL;
	size_t np = g->n_window_end_wall_ns, nr = 0, i, k, lc = 0;
	double *val = NULL;

	if (g->since_ns <= 0 || np < 2)
		return;
	/* at most one more row than instances per GPU: its total */
	v = calloc(g->n_procs ? g->n_procs : 1, sizeof(*v));
	row = calloc(2 * g->n_procs + 1, sizeof(*row));
	gpu = calloc(2 * g->n_procs + 1, sizeof(*gpu));
	if (v == NULL || row == NULL || gpu == NULL)
		goto nomem;
	for (i = 0; i < g->n_procs; i++)
		v[i] = g->procs[i];
	if (g->n_procs > 1)
		qsort(v, g->n_procs, sizeof(*v), proc_cmp);
	for (i = 0; i < g->n_procs; i++) {
		if (i == 0 || v[i]->gpu_id != v[i - 1]->gpu_id) {
			gpu[nr] = v[i]->gpu_id;
			row[nr++] = v[i]->pid == 0 ? v[i] : NULL;
			if (v[i]->pid == 0)
				continue;
		}
		gpu[nr] = v[i]->gpu_id;
		row[nr++] = v[i];
	}
	if (nr == 0)
		goto out;
	label = calloc(nr, sizeof(*label));
	names = calloc(nr, sizeof(*names));
	val = malloc(np * nr * sizeof(*val));
	if (label == NULL || names == NULL || val == NULL)
		goto nomem;
	for (i = 0; i < np * nr; i++)
		val[i] = NAN;
	for (k = 0; k < nr; k++) {
		const Vitals__GpuProc *p = row[k];
		size_t n;

		sbuf_init(&names[k]);
		spark_label(&names[k], p, gpu[k]);
		label[k] = sbuf_str(&names[k]);
		if (text_cols(label[k]) > lc)
			lc = text_cols(label[k]);
		if (p == NULL)
			continue;
		n = p->n_series_bytes < p->n_series_index ? p->n_series_bytes :
							    p->n_series_index;
		for (i = 0; i < n; i++)
			if (p->series_index[i] < np)
				val[p->series_index[i] * nr + k] =
				    (double)p->series_bytes[i];
	}
	fmt_hist_ends(o, g->window_end_wall_ns, np, val, nr, label,
	    lc < SPARK_LABEL_COLS ? lc : SPARK_LABEL_COLS, g->series_step, c);
	goto out;
nomem:
	o->err = -ENOMEM;
out:
	for (k = 0; names && k < nr; k++)
		sbuf_free(&names[k]);
	free(names);
	free(label);
	free(val);
	free(gpu);
	free(row);
	free(v);
}
