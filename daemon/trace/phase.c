/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault phases (doc/metrics.md): ATrace B..E slices of configured names,
 * and what the process of the slice's thread faulted, read into the page
 * cache, reclaimed and issued to block devices between the B and the E —
 * all counted from the same timestamp-ordered record stream as the
 * markers, so the edges are exact.
 *
 * A process has running counters only while one of its phases is open
 * (a bounded table); a phase keeps the counters as they were at its B,
 * and its E adds the difference to the window's row of (process, name).
 * Records are attributed to a process by the reader's tid → tgid cache,
 * which a thread's exit ends. Mapping classes come from the process's
 * /proc/<pid>/maps, read when a fault's address or file is not in what
 * was read, at most once per process and fault_maps_reads times in all
 * per window. No I/O beyond those reads and /proc/<pid>/stat at a
 * process's first phase.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "trace/atrace_int.h"
#include "trace/phase.h"

#define PHASE_PROCS 16	   /* processes with an open phase */
#define PHASE_OPEN 128	   /* phases open at once */
#define PHASE_ROWS 256	   /* (process, name) rows per window */
#define PHASE_THREADS 4096 /* threads with a pending fault or reclaim */

struct phase_counts {
	uint64_t faults, file_faults, major, pages_read;
	uint64_t reclaim, reclaim_ns, blk, blk_bytes;
	uint64_t faults_by[PCLASS__MAX];
	uint64_t major_by[PCLASS__MAX];
};

struct phase_proc {
	int32_t tgid; /* 0: free slot */
	uint32_t nopen;
	uint64_t start_ticks;
	char comm[16];
	struct phase_counts c;
	struct phase_range *maps; /* PHASE_MAPS_MAX, lazily */
	size_t nmaps;
	uint64_t maps_gen; /* window generation of the last read; 0 none */
	uint64_t skip_gen; /* ... of the last read the budget refused */
};

struct phase_open {
	int32_t tid; /* 0: free slot */
	uint32_t depth;
	int proc; /* index into procs */
	uint64_t ts;
	struct phase_counts base;
	char name[VITALS_TRACE_NAME];
};

/* A thread's state for the major rule and direct reclaim. */
struct phase_thread {
	uint64_t h;
	int32_t tid;
	bool pend; /* a filemap fault awaits its add_to_page_cache */
	uint8_t cls;
	uint32_t dev;
	uint64_t ino, index;
	uint64_t reclaim_ts; /* in direct reclaim since; 0 not */
};

struct phase {
	unsigned nnames;
	char *name[PHASE_NAMES_MAX];
	bool prefix[PHASE_NAMES_MAX];
	unsigned maps_budget; /* reads per window */
	unsigned maps_used;
	uint64_t gen; /* window generation, from 1 */
	int procfd;
	uint32_t enabled; /* FEV_* bits of the instance */
	int32_t (*tgid_fn)(int32_t tid, void *arg);
	void *tgid_arg;
	/* the last record's thread and its process (−1 too: a thread gone
	 * from /proc is not looked up again for each of its records) */
	int32_t memo_tid, memo_tgid;
	unsigned nopen;
	struct phase_proc procs[PHASE_PROCS];
	struct phase_open open[PHASE_OPEN];
	struct tab threads;
	size_t nrows;
	uint32_t rows_other;
	struct window_trace_phase *rows; /* PHASE_ROWS */
	struct window_trace_phase rest;
	struct window_trace w; /* the scalar figures of the open window */
};

/* ------------------------------------------------------------- setup */

/* names: "a,b*,c" as config_phase.c normalised it (no spaces). */
int
phase_new(const char *names, unsigned maps_reads, int procfd,
    struct phase **ret)
{
	struct phase *ph;
	const char *p = names;

	if ((ph = calloc(1, sizeof(*ph))) == NULL)
		return -ENOMEM;
	ph->maps_budget = maps_reads;
	ph->procfd = procfd;
	ph->gen = 1;
	ph->threads.esz = sizeof(struct phase_thread);
	ph->threads.max = PHASE_THREADS;
	if ((ph->rows = calloc(PHASE_ROWS, sizeof(*ph->rows))) == NULL)
		goto nomem;
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (ph->nnames == PHASE_NAMES_MAX || n == 0 ||
		    n >= VITALS_TRACE_NAME) {
			phase_free(ph);
			return -EINVAL;
		}
		if (p[n - 1] == '*') {
			ph->prefix[ph->nnames] = true;
			n--;
		}
		if ((ph->name[ph->nnames] = strndup(p, n)) == NULL)
			goto nomem;
		ph->nnames++;
		p = c ? c + 1 : NULL;
	}
	*ret = ph;
	return 0;
nomem:
	phase_free(ph);
	return -ENOMEM;
}

struct phase *
phase_free(struct phase *ph)
{
	unsigned i;

	if (ph == NULL)
		return NULL;
	for (i = 0; i < PHASE_NAMES_MAX; i++)
		free(ph->name[i]);
	for (i = 0; i < PHASE_PROCS; i++)
		free(ph->procs[i].maps);
	atab_release(&ph->threads);
	free(ph->rows);
	free(ph);
	return NULL;
}

void
phase_set_tgid_fn(struct phase *ph, int32_t (*fn)(int32_t, void *), void *arg)
{
	ph->tgid_fn = fn;
	ph->tgid_arg = arg;
}

void
phase_set_events(struct phase *ph, uint32_t enabled)
{
	ph->enabled = enabled;
}

/* A configured name: exactly, or a prefix of it ("name*"). */
bool
phase_match(const struct phase *ph, const char *name)
{
	unsigned i;

	for (i = 0; i < ph->nnames; i++) {
		if (ph->prefix[i] ?
			strncmp(name, ph->name[i], strlen(ph->name[i])) == 0 :
			strcmp(name, ph->name[i]) == 0)
			return true;
	}
	return false;
}

/* The figures the enabled events give (bit PHAVE_*). */
static uint32_t
have_bits(uint32_t en)
{
	uint32_t h = 0;

	if (en & 1u << FEV_PAGE_FAULT)
		h |= 1u << PHAVE_FAULTS;
	if (en & 1u << FEV_FILEMAP_FAULT)
		h |= 1u << PHAVE_FILE;
	if (en & 1u << FEV_FILEMAP_ADD)
		h |= 1u << PHAVE_READ;
	if ((en & 1u << FEV_FILEMAP_FAULT) && (en & 1u << FEV_FILEMAP_ADD))
		h |= 1u << PHAVE_MAJOR;
	if ((en & 1u << FEV_RECLAIM_BEGIN) && (en & 1u << FEV_RECLAIM_END))
		h |= 1u << PHAVE_RECLAIM;
	if (en & 1u << FEV_BLOCK_ISSUE)
		h |= 1u << PHAVE_BLOCK;
	return h;
}

/* ---------------------------------------------------------- processes */

/* comm and starttime from /proc/<pid>/stat: "pid (comm) S ... 22nd" */
static void
proc_ident(struct phase *ph, struct phase_proc *p)
{
	struct vbuf b = { 0 };
	char path[32];
	const char *l, *r, *s;
	unsigned field;

	snprintf(path, sizeof(path), "%d/stat", (int)p->tgid);
	if (ph->procfd < 0 || read_at(ph->procfd, path, &b) < 0 || !b.p ||
	    (l = strchr(b.p, '(')) == NULL || (r = strrchr(b.p, ')')) == NULL ||
	    r < l) {
		ph->w.maps_fail++;
		vbuf_release(&b);
		return;
	}
	snprintf(p->comm, sizeof(p->comm), "%.*s",
	    (int)(r - l - 1 < 15 ? r - l - 1 : 15), l + 1);
	/* field 3 (state) follows ") "; starttime is field 22 */
	for (s = r + 2, field = 3; *s && field < 22; s++)
		if (*s == ' ')
			field++;
	if (field == 22)
		p->start_ticks = strtoull(s, NULL, 10);
	vbuf_release(&b);
}

static struct phase_proc *
proc_find(struct phase *ph, int32_t tgid)
{
	unsigned i;

	for (i = 0; i < PHASE_PROCS; i++)
		if (ph->procs[i].tgid == tgid && tgid > 0)
			return &ph->procs[i];
	return NULL;
}

static struct phase_proc *
proc_get(struct phase *ph, int32_t tgid)
{
	struct phase_proc *p = proc_find(ph, tgid);
	unsigned i;

	if (p)
		return p;
	for (i = 0; i < PHASE_PROCS; i++)
		if (ph->procs[i].tgid == 0)
			break;
	if (i == PHASE_PROCS) /* reuse one with nothing open */
		for (i = 0; i < PHASE_PROCS; i++)
			if (ph->procs[i].nopen == 0)
				break;
	if (i == PHASE_PROCS)
		return NULL;
	p = &ph->procs[i];
	free(p->maps);
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	proc_ident(ph, p);
	return p;
}

/* Read the process's maps again, if this window and the budget allow. */
static bool
maps_reread(struct phase *ph, struct phase_proc *p)
{
	struct vbuf b = { 0 };
	char path[32];
	int r;

	if (p->maps_gen == ph->gen)
		return false; /* read once this window already */
	if (ph->maps_used >= ph->maps_budget) {
		if (p->skip_gen != ph->gen) /* once a process a window */
			ph->w.maps_skipped++;
		p->skip_gen = ph->gen;
		return false;
	}
	if (p->maps == NULL &&
	    (p->maps = malloc(PHASE_MAPS_MAX * sizeof(*p->maps))) == NULL) {
		ph->w.maps_fail++;
		return false;
	}
	ph->maps_used++;
	p->maps_gen = ph->gen;
	ph->w.maps_reads++;
	snprintf(path, sizeof(path), "%d/maps", (int)p->tgid);
	if (ph->procfd < 0 || (r = read_at(ph->procfd, path, &b)) < 0 ||
	    b.p == NULL) {
		ph->w.maps_fail++;
		vbuf_release(&b);
		return false;
	}
	r = phase_maps_parse(b.p, b.len, p->maps, PHASE_MAPS_MAX, &p->nmaps,
	    &ph->w.maps_bad_lines, &ph->w.maps_cut);
	vbuf_release(&b);
	return r == 0;
}

static unsigned
class_addr(struct phase *ph, struct phase_proc *p, uint64_t addr)
{
	unsigned c = phase_maps_class_addr(p->maps, p->nmaps, addr);

	if (c == PCLASS_UNKNOWN && maps_reread(ph, p))
		c = phase_maps_class_addr(p->maps, p->nmaps, addr);
	if (c == PCLASS_UNKNOWN)
		ph->w.fault_unknown++;
	return c;
}

static unsigned
class_file(struct phase *ph, struct phase_proc *p, uint32_t dev, uint64_t ino)
{
	unsigned c = phase_maps_class_file(p->maps, p->nmaps, dev, ino);

	if (c == PCLASS_UNKNOWN && maps_reread(ph, p))
		c = phase_maps_class_file(p->maps, p->nmaps, dev, ino);
	return c;
}

/* ------------------------------------------------------------- rows */

static struct window_trace_phase *
row_get(struct phase *ph, const struct phase_proc *p, const char *name)
{
	struct window_trace_phase *w;
	size_t i;

	for (i = 0; i < ph->nrows; i++) {
		w = &ph->rows[i];
		if (w->pid == p->tgid && w->start_ticks == p->start_ticks &&
		    strcmp(w->name, name) == 0)
			return w;
	}
	if (ph->nrows == PHASE_ROWS) {
		ph->rows_other++;
		return &ph->rest;
	}
	w = &ph->rows[ph->nrows++];
	memset(w, 0, sizeof(*w));
	w->pid = p->tgid;
	w->start_ticks = p->start_ticks;
	memcpy(w->comm, p->comm, sizeof(w->comm));
	snprintf(w->name, sizeof(w->name), "%s", name);
	return w;
}

static void
counts_delta(struct window_trace_phase *w, const struct phase_counts *now,
    const struct phase_counts *base)
{
	unsigned k;

	w->faults += now->faults - base->faults;
	w->file_faults += now->file_faults - base->file_faults;
	w->major += now->major - base->major;
	w->pages_read += now->pages_read - base->pages_read;
	w->reclaim += now->reclaim - base->reclaim;
	w->reclaim_ns += now->reclaim_ns - base->reclaim_ns;
	w->blk += now->blk - base->blk;
	w->blk_bytes += now->blk_bytes - base->blk_bytes;
	for (k = 0; k < PCLASS__MAX; k++) {
		w->faults_by[k] += now->faults_by[k] - base->faults_by[k];
		w->major_by[k] += now->major_by[k] - base->major_by[k];
	}
}

/* ------------------------------------------------------------ phases */

static void
open_close(struct phase *ph, struct phase_open *o)
{
	struct phase_proc *p = &ph->procs[o->proc];

	if (p->nopen > 0)
		p->nopen--;
	o->tid = 0;
	ph->nopen--;
}

/* The phase's end will not come: counted, no figures. */
static void
open_abandon(struct phase *ph, struct phase_open *o)
{
	row_get(ph, &ph->procs[o->proc], o->name)->incomplete++;
	ph->w.phase_incomplete++;
	open_close(ph, o);
}

/* A B of a configured name (depth: its place on the thread's stack). */
void
phase_begin(struct phase *ph, const struct ftrace_rec *r, unsigned depth,
    const char *name)
{
	struct phase_proc *p;
	struct phase_open *o = NULL;
	int32_t tgid;
	unsigned i;

	if (!phase_match(ph, name))
		return;
	for (i = 0; i < PHASE_OPEN; i++) {
		struct phase_open *x = &ph->open[i];

		if (x->tid == r->tid && x->depth == depth)
			open_abandon(ph, x); /* its E was never seen */
		if (x->tid == 0 && o == NULL)
			o = x;
	}
	tgid = ph->tgid_fn ? ph->tgid_fn(r->tid, ph->tgid_arg) : -1;
	if (o == NULL || tgid <= 0 || (p = proc_get(ph, tgid)) == NULL) {
		ph->w.phase_untracked++;
		return;
	}
	o->tid = r->tid;
	o->depth = depth;
	o->proc = (int)(p - ph->procs);
	o->ts = r->ts;
	o->base = p->c;
	snprintf(o->name, sizeof(o->name), "%s", name);
	p->nopen++;
	ph->nopen++;
}

/* The E at depth of thread tid: a phase when one is open there. */
void
phase_end(struct phase *ph, const struct ftrace_rec *r, unsigned depth)
{
	struct window_trace_phase *w;
	struct phase_open *o;
	uint64_t dur;
	unsigned i;

	if (ph->nopen == 0)
		return;
	for (i = 0; i < PHASE_OPEN; i++)
		if (ph->open[i].tid == r->tid && ph->open[i].depth == depth)
			break;
	if (i == PHASE_OPEN)
		return;
	o = &ph->open[i];
	if (r->ts < o->ts) {
		open_abandon(ph, o);
		return;
	}
	dur = r->ts - o->ts;
	w = row_get(ph, &ph->procs[o->proc], o->name);
	w->count++;
	w->total_ns += dur;
	if (dur > w->max_ns)
		w->max_ns = dur;
	counts_delta(w, &ph->procs[o->proc].c, &o->base);
	open_close(ph, o);
}

static bool
thread_eq(const void *e, const void *key)
{
	return ((const struct phase_thread *)e)->tid == *(const int32_t *)key;
}

static struct phase_thread *
thread_get(struct phase *ph, int32_t tid, bool add)
{
	struct phase_thread *t;
	bool fresh;

	t = atab_get(&ph->threads, atab_key(tid, 0, 0, NULL), thread_eq, &tid,
	    add, &fresh);
	if (t && fresh)
		t->tid = tid;
	return t;
}

/* One record of a phase event, in timestamp order. */
void
phase_record(struct phase *ph, const struct ftrace_rec *r)
{
	struct phase_thread *t;
	struct phase_proc *p;
	struct phase_counts *c;
	int32_t tgid;

	ph->w.phase_events++;
	if (ph->nopen == 0)
		return; /* nothing open: no lookup, no cost beyond this */
	if (r->tid != ph->memo_tid || r->tid == 0) {
		ph->memo_tid = r->tid;
		ph->memo_tgid = ph->tgid_fn ?
		    ph->tgid_fn(r->tid, ph->tgid_arg) :
		    -1;
	}
	tgid = ph->memo_tgid;
	if ((p = proc_find(ph, tgid)) == NULL || p->nopen == 0)
		return;
	c = &p->c;
	switch (r->ev) {
	case FEV_PAGE_FAULT:
		c->faults++;
		c->faults_by[class_addr(ph, p, r->u.fault.addr)]++;
		/* a new fault: the last one's page-cache read is over */
		if ((t = thread_get(ph, r->tid, false)) != NULL)
			t->pend = false;
		break;
	case FEV_FILEMAP_FAULT:
		c->file_faults++;
		if ((t = thread_get(ph, r->tid, true)) == NULL)
			break;
		t->pend = true;
		t->dev = r->u.fmap.dev;
		t->ino = r->u.fmap.ino;
		t->index = r->u.fmap.index;
		t->cls = (uint8_t)class_file(ph, p, r->u.fmap.dev,
		    r->u.fmap.ino);
		break;
	case FEV_FILEMAP_ADD: {
		uint64_t pages = 1ULL << (r->u.fmap.order & 31);

		c->pages_read += pages;
		t = thread_get(ph, r->tid, false);
		/* the faulting page itself came into the cache: it was not
		 * there, the kernel's VM_FAULT_MAJOR case */
		if (t && t->pend && t->dev == r->u.fmap.dev &&
		    t->ino == r->u.fmap.ino && t->index >= r->u.fmap.index &&
		    t->index - r->u.fmap.index < pages) {
			c->major++;
			c->major_by[t->cls < PCLASS__MAX ? t->cls :
							   PCLASS_UNKNOWN]++;
			t->pend = false;
		}
		break;
	}
	case FEV_RECLAIM_BEGIN:
		if ((t = thread_get(ph, r->tid, true)) != NULL)
			t->reclaim_ts = r->ts ? r->ts : 1;
		break;
	case FEV_RECLAIM_END:
		t = thread_get(ph, r->tid, false);
		if (t && t->reclaim_ts && r->ts >= t->reclaim_ts) {
			c->reclaim++;
			c->reclaim_ns += r->ts - t->reclaim_ts;
		}
		if (t)
			t->reclaim_ts = 0;
		break;
	case FEV_BLOCK_ISSUE:
		c->blk++;
		c->blk_bytes += r->u.blk.bytes;
		break;
	}
}

/* A thread exited: its open phases end unseen, its state goes. */
void
phase_exit(struct phase *ph, int32_t tid)
{
	struct phase_thread *t;
	unsigned i;

	if (ph->nopen)
		for (i = 0; i < PHASE_OPEN; i++)
			if (ph->open[i].tid == tid)
				open_abandon(ph, &ph->open[i]);
	if ((t = thread_get(ph, tid, false)) != NULL)
		atab_del(&ph->threads, t);
	if (ph->memo_tid == tid)
		ph->memo_tid = 0;
}

/* Events were lost: any E or fault may be among them. */
void
phase_lost(struct phase *ph)
{
	unsigned i;

	for (i = 0; i < PHASE_OPEN && ph->nopen; i++)
		if (ph->open[i].tid)
			open_abandon(ph, &ph->open[i]);
	atab_clear(&ph->threads);
	ph->memo_tid = 0; /* exits may be among the lost */
}

void
phase_finish(struct phase *ph)
{
	phase_lost(ph);
}

size_t
phase_open_count(const struct phase *ph)
{
	return ph->nopen;
}

/*
 * The window closes: its rows (open phases counted on theirs), the
 * scalar figures; processes with nothing open are let go, and the maps
 * budget starts again.
 */
void
phase_window(struct phase *ph, struct window_trace *wt)
{
	uint32_t have = have_bits(ph->enabled);
	unsigned i;

	for (i = 0; i < PHASE_OPEN; i++)
		if (ph->open[i].tid)
			row_get(ph, &ph->procs[ph->open[i].proc],
			    ph->open[i].name)
			    ->open++;
	for (i = 0; i < ph->nrows; i++)
		ph->rows[i].have = have;
	if (ph->rows_other) {
		ph->rest.pid = -1;
		ph->rest.have = have;
	}
	window_phase_add(&wt->phase_rest, &ph->rest);
	if (ph->rows_other)
		wt->phase_rest.have = have;
	window_phase_keep(wt, ph->rows, ph->nrows,
	    wt->phase_other + ph->rows_other);
	wt->phase_events += ph->w.phase_events;
	wt->phase_open = ph->nopen;
	wt->phase_incomplete += ph->w.phase_incomplete;
	wt->phase_untracked += ph->w.phase_untracked;
	wt->maps_reads += ph->w.maps_reads;
	wt->maps_skipped += ph->w.maps_skipped;
	wt->maps_fail += ph->w.maps_fail;
	wt->maps_bad_lines += ph->w.maps_bad_lines;
	wt->maps_cut += ph->w.maps_cut;
	wt->fault_unknown += ph->w.fault_unknown;
	memset(&ph->w, 0, sizeof(ph->w));
	memset(&ph->rest, 0, sizeof(ph->rest));
	ph->nrows = 0;
	ph->rows_other = 0;
	for (i = 0; i < PHASE_PROCS; i++)
		if (ph->procs[i].tgid && ph->procs[i].nopen == 0) {
			free(ph->procs[i].maps);
			memset(&ph->procs[i], 0, sizeof(ph->procs[i]));
		}
	ph->gen++;
	ph->maps_used = 0;
}
