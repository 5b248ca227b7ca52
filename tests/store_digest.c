/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store_digest DB: a text digest of a vitalsd database read through the
 * store's own read API — every stored window (meta, system figures, tasks,
 * BPF totals) and the top-20 answers by each metric over the whole range
 * and over its last 30 s. tests/fixtures/store-v7/ keeps a schema-v7
 * database made by the v7 code and the digest that code printed for it:
 * a later schema must migrate that file and print the same digest
 * (tests/fixtures/store-v7/README.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

static void
task_line(const char *kind, const struct window_task *t)
{
	printf("  %s %" PRId32 " tgid %" PRId32 " start %" PRIu64
	       " uid %" PRIu32 " comm '%s' name '%s' ut %" PRIu64 " st %" PRIu64
	       " minflt %" PRIu64 " majflt %" PRIu64 " samples %" PRIu32
	       " wall %" PRIu64 " total %" PRIu64 " rss %" PRIu64 "/%" PRIu64
	       " born %d exited %d\n",
	    kind, t->id, t->tgid, t->starttime, t->uid, t->comm,
	    window_task_name(t), t->d_utime, t->d_stime, t->d_minflt,
	    t->d_majflt, t->samples, t->wall_ns, t->total_ticks,
	    t->rss_pages_max, t->rss_pages_last, t->born, t->exited);
}

static void
window_lines(const struct window *w)
{
	static const struct window_bpf none; /* no part: no BPF state */
	const struct window_bpf *b = window_sched(w) ? window_sched(w) : &none;
	const struct cpu_times *d = &w->all.d;
	size_t i;

	printf("window level %" PRIu32 " wall %" PRId64 "..%" PRId64
	       " boot %" PRId64 "..%" PRId64 " hz %" PRIu32 " samples %" PRIu32
	       "/%" PRIu32 "\n",
	    w->level, w->wall_start_ns, w->wall_end_ns, w->boot_start_ns,
	    w->boot_end_ns, w->hz, w->samples_valid, w->samples);
	printf("  cpu user %" PRIu64 " nice %" PRIu64 " system %" PRIu64
	       " idle %" PRIu64 " iowait %" PRIu64 " irq %" PRIu64
	       " softirq %" PRIu64 " steal %" PRIu64 " span %u ctxt %" PRIu64
	       " forks %" PRIu64 "\n",
	    d->user, d->nice, d->system, d->idle, d->iowait, d->irq, d->softirq,
	    d->steal, w->cpu_span, w->d_ctxt, w->d_processes);
	printf("  bpf state %" PRIu32 " oncpu %" PRIu64 " exited %" PRIu64
	       " rq %" PRIu64 "/%" PRIu64 " switches %" PRIu64 " uids %" PRIu32
	       " procs %" PRIu32 "\n",
	    b->state, b->oncpu_ns, b->exited_ns, b->rq_ns, b->rq_count,
	    b->switches, b->nuids, b->nprocs);
	for (i = 0; i < w->nprocs; i++)
		task_line("proc", &w->procs[i]);
	for (i = 0; i < w->nthreads; i++)
		task_line("thread", &w->threads[i]);
}

static const char *const metric_names[] = { "cpu", "minflt", "majflt", "rss" };

static int
top_lines(struct store *s, int64_t from, int64_t to, const char *label)
{
	struct window_task *t;
	size_t n, i;
	int m, th, r;

	for (th = 0; th < 2; th++) {
		for (m = METRIC_CPU; m <= METRIC_RSS; m++) {
			if ((r = store_top(s, from, to, th,
				 (enum store_metric)m, 20, &t, &n)) < 0)
				return r;
			printf("top %s %s %s: %zu\n", label, metric_names[m],
			    th ? "threads" : "procs", n);
			for (i = 0; i < n; i++)
				task_line(th ? "thread" : "proc", &t[i]);
			free(t);
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct store_opts o;
	struct store *s = NULL;
	struct window **ws = NULL;
	size_t n = 0, i;
	bool cut = false;
	int64_t first, last;
	int r;

	if (argc != 2) {
		fprintf(stderr, "usage: store_digest DB\n");
		return 2;
	}
	store_opts_default(&o);
	if ((r = store_open(argv[1], &o, &s)) < 0) {
		fprintf(stderr, "store_digest: %s: %s\n", argv[1],
		    strerror(-r));
		return 1;
	}
	if ((r = store_windows_max(s, INT64_MIN / 2, INT64_MAX / 2, 0, 0, &ws,
		 &n, &cut)) < 0) {
		fprintf(stderr, "store_digest: windows: %s\n", strerror(-r));
		store_close(s);
		return 1;
	}
	printf("windows %zu\n", n);
	first = n ? ws[0]->wall_start_ns : 0;
	last = n ? ws[0]->wall_end_ns : 0;
	for (i = 0; i < n; i++) {
		window_lines(ws[i]);
		if (ws[i]->wall_start_ns < first)
			first = ws[i]->wall_start_ns;
		if (ws[i]->wall_end_ns > last)
			last = ws[i]->wall_end_ns;
		window_free(ws[i]);
	}
	free(ws);
	if ((r = top_lines(s, first, last, "all")) < 0 ||
	    (r = top_lines(s, last - 30 * NSEC_PER_SEC, last, "last30s")) < 0)
		fprintf(stderr, "store_digest: top: %s\n", strerror(-r));
	store_close(s);
	return r < 0;
}
