/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU memory per process from a GpuMem total map (doc/gpumem.md): which map
 * (the platform's pin, or vitalsd's own program's), its state, a traversal
 * at the sampling cadence, the attribution of each pid to a process
 * instance, and per window the bytes at its end with their range inside
 * (the part of a window: gpumem_window.c).
 *
 * Every pair the daemon has seen is tracked here, sorted by key, so a
 * traversal costs one binary search per entry. The driver reports a
 * process's totals itself, so a pair belongs to the instance of its pid
 * that existed when the pair last changed: when a live (pid, starttime)
 * started no later than that report, it is credited; when the pid has no
 * live process, or its process started after the report (the pid was
 * reused and the new process has not allocated yet), the pair is stale and
 * credited to nobody. A change is seen at the next traversal (up to one
 * interval late) or at once through gpumem_note_event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "gpumem/gpumem.h"
#include "window/window.h"

#define GPUMEM_RETRY_NS NSEC_PER_SEC /* own program: attach attempts */

struct gpu_ent {
	uint64_t key;		       /* (gpu_id << 32) | pid */
	uint64_t bytes;		       /* last known total; 0 after a delete */
	uint64_t min_bytes, max_bytes; /* in the open window */
	uint64_t imported;  /* of bytes, imported (16-byte map values only) */
	uint64_t starttime; /* bound instance; 0: never bound */
	int64_t report_ns;  /* CLOCK_BOOTTIME when its total last changed */
	char name[VITALS_NAME_LEN];
	bool present; /* in the map (last traversal or event) */
	bool stale;
	bool in_window; /* has a value in the open window */
	uint32_t gen;	/* traversal that last saw it */
};

struct gpumem {
	struct gpumem_opts o;
	char *map_path;	     /* one path, or several tried in order (':') */
	char *map_used;	     /* the one opened or failing; NULL: none */
	uint32_t value_size; /* of the open map: GPUMEM_VAL_* */
	char *bpffs;
	char *tracefs;	       /* NULL: the usual mounts */
	int fd;		       /* the map; -1: none open */
	struct gpumem_bpf *gb; /* own program; NULL: none */
	bool attached;
	int64_t attach_deadline_ns, attach_next_ns;
	uint32_t state, why, source;
	int err;
	uint32_t capacity;
	struct gpu_ent *e; /* sorted by key */
	size_t n, cap;
	uint32_t gen;
	int64_t window_start_ns, last_ns;
	struct window_gpumem acc; /* counters of the open window */
	struct gpumem_walk wk;
	uint64_t tp_events0, insert_fail0; /* own program counters at the
					    * open window's start */
	gpumem_lookup_fn lookup;
	void *lookup_arg;
	unsigned hz; /* USER_HZ of starttime */
};

/*
 * At or within 1/64 of capacity (16 of AOSP's 1024 slots): a new pair may
 * already have been refused, and any later one will be, unseen.
 */
bool
gpumem_saturated(uint32_t entries, uint32_t capacity)
{
	uint32_t margin = capacity / 64 ? capacity / 64 : 1;

	return capacity != 0 && entries + margin >= capacity;
}

static void
set_state(struct gpumem *g, uint32_t state, uint32_t why, int err)
{
	g->state = state;
	g->why = why;
	g->err = err;
}

/*
 * Open the first pin of the list that exists (AOSP main's name, then the
 * older one, by default): NOT_INIT while there is none, ERROR when the
 * first that exists is unusable. A later name is no excuse for a broken
 * earlier one: a pin that exists but cannot be read is reported as it is.
 */
static int
open_pinned(struct gpumem *g)
{
	const char *p = g->map_path, *end;
	uint32_t cap, vsz;
	char *path;
	int fd, r = -ENOENT;

	free(g->map_used);
	g->map_used = NULL;
	for (; *p; p = *end ? end + 1 : end) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		if (end == p)
			continue;
		if ((path = strndup(p, (size_t)(end - p))) == NULL)
			return -ENOMEM;
		r = gpumem_map_open(path, &fd, &cap, &vsz);
		if (r == -ENOENT) {
			free(path);
			continue;
		}
		g->map_used = path;
		break;
	}
	if (r == -ENOENT) {
		set_state(g, GPUMEM_NOT_INIT, GPUMEM_WHY_NO_MAP, 0);
		return r;
	}
	if (r < 0) {
		set_state(g, GPUMEM_ERROR,
		    r == -EPROTOTYPE ? GPUMEM_WHY_LAYOUT : GPUMEM_WHY_OPEN, r);
		return r;
	}
	g->fd = fd;
	g->capacity = cap;
	g->value_size = vsz;
	g->source = GPUMEM_SRC_PINNED;
	set_state(g, GPUMEM_EMPTY, GPUMEM_WHY_NONE, 0);
	return 0;
}

const char *
gpumem_map_used(const struct gpumem *g)
{
	return g->map_used ? g->map_used : "";
}

int
gpumem_new(const struct gpumem_opts *o, struct gpumem **ret)
{
	struct gpumem *g;
	int r;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return -ENOMEM;
	g->o = *o;
	g->fd = -1;
	g->value_size = GPUMEM_VAL_TOTAL;
	g->hz = (unsigned)sysconf(_SC_CLK_TCK);
	if (g->hz == 0)
		g->hz = 100;
	g->map_path = strdup(o->map_path ? o->map_path : VITALS_GPUMEM_MAP);
	if (g->map_path == NULL ||
	    (o->bpffs && (g->bpffs = strdup(o->bpffs)) == NULL) ||
	    (o->tracefs && (g->tracefs = strdup(o->tracefs)) == NULL)) {
		gpumem_free(g);
		return -ENOMEM;
	}
	g->o.map_path = g->map_path;
	g->o.bpffs = g->bpffs;
	if (o->load == GPUMEM_LOAD_OFF) {
		set_state(g, GPUMEM_NOT_INIT, GPUMEM_WHY_DISABLED, 0);
		*ret = g;
		return 0;
	}
	r = open_pinned(g);
	if (r == -ENOENT && o->load == GPUMEM_LOAD_AUTO) {
		int fd = -1;

		r = gpumem_bpf_load(g->bpffs, &g->gb, &fd);
		if (r < 0) {
			set_state(g, GPUMEM_NOT_INIT,
			    r == -EOPNOTSUPP ? GPUMEM_WHY_NO_MAP :
					       GPUMEM_WHY_LOAD,
			    r == -EOPNOTSUPP ? 0 : r);
		} else {
			g->fd = fd;
			g->source = GPUMEM_SRC_OWN;
			(void)gpumem_map_check(fd, &g->capacity);
			set_state(g, GPUMEM_NOT_INIT, GPUMEM_WHY_WAITING, 0);
			g->attach_next_ns = 0;
			g->attach_deadline_ns = -1; /* set at the first tick */
		}
	}
	*ret = g;
	return 0;
}

struct gpumem *
gpumem_free(struct gpumem *g)
{
	if (g == NULL)
		return NULL;
	if (g->fd >= 0)
		close(g->fd);
	gpumem_bpf_free(g->gb);
	gpumem_walk_release(&g->wk);
	free(g->e);
	free(g->map_path);
	free(g->map_used);
	free(g->bpffs);
	free(g->tracefs);
	free(g);
	return NULL;
}

void
gpumem_set_walk_batch(struct gpumem *g, bool on)
{
	g->wk.no_batch = !on;
}

void
gpumem_set_lookup(struct gpumem *g, gpumem_lookup_fn fn, void *arg)
{
	g->lookup = fn;
	g->lookup_arg = arg;
}

unsigned
gpumem_state(const struct gpumem *g, unsigned *ret_why, int *ret_err)
{
	if (ret_why)
		*ret_why = g->why;
	if (ret_err)
		*ret_err = g->err;
	return g->state;
}

/* ------------------------------------------------------------ entries */

static size_t
ent_find(const struct gpumem *g, uint64_t key, bool *found)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->e[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < g->n && g->e[lo].key == key;
	return lo;
}

static struct gpu_ent *
ent_get(struct gpumem *g, uint64_t key, bool *ret_new)
{
	bool found;
	size_t i = ent_find(g, key, &found);
	struct gpu_ent *e;

	*ret_new = !found;
	if (found)
		return &g->e[i];
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;

		if ((e = realloc(g->e, cap * sizeof(*e))) == NULL)
			return NULL;
		g->e = e;
		g->cap = cap;
	}
	memmove(&g->e[i + 1], &g->e[i], (g->n - i) * sizeof(*g->e));
	g->n++;
	e = &g->e[i];
	memset(e, 0, sizeof(*e));
	e->key = key;
	return e;
}

/* A new total for the pair: the window's range takes it in. */
static void
ent_value(struct gpu_ent *e, uint64_t bytes)
{
	if (!e->in_window) {
		e->min_bytes = e->max_bytes = bytes;
		e->in_window = true;
	} else {
		if (bytes < e->min_bytes)
			e->min_bytes = bytes;
		if (bytes > e->max_bytes)
			e->max_bytes = bytes;
	}
	e->bytes = bytes;
}

/* Whose is the pair now (see the head of this file). */
static void
ent_attribute(struct gpumem *g, struct gpu_ent *e)
{
	int32_t pid = (int32_t)(uint32_t)e->key;
	char name[VITALS_NAME_LEN] = "";
	uint64_t st = 0;
	int64_t start_ns;

	if (pid <= 0) {
		/* 0: the GPU's total; a pid that is no pid is never live */
		e->stale = pid < 0;
		return;
	}
	if (g->lookup == NULL ||
	    g->lookup(g->lookup_arg, pid, &st, name, sizeof(name)) < 0) {
		e->stale = true;
		return;
	}
	/* starttime is cut to a tick: allow that one tick */
	start_ns = (int64_t)(st * (uint64_t)NSEC_PER_SEC / g->hz);
	if (start_ns > e->report_ns + NSEC_PER_SEC / (int64_t)g->hz) {
		e->stale = true;
		return;
	}
	if (st != e->starttime) {
		/* another instance: its range starts here */
		e->min_bytes = e->max_bytes = e->bytes;
	}
	e->starttime = st;
	e->stale = false;
	memcpy(e->name, name, sizeof(e->name));
}

/* ---------------------------------------------------------- traversal */

static int
traverse(struct gpumem *g, int64_t mono_ns)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC), boot_ns;
	uint64_t dt;
	size_t i;
	int r;

	g->acc.traversals++;
	g->wk.value_size = g->value_size;
	if ((r = gpumem_map_walk(g->fd, g->capacity, &g->wk)) < 0) {
		g->acc.traversal_fail++;
		set_state(g, GPUMEM_ERROR, GPUMEM_WHY_TRAVERSE, r);
		return r;
	}
	g->gen++;
	boot_ns = clock_ns(CLOCK_BOOTTIME);
	for (i = 0; i < g->wk.n; i++) {
		struct gpu_ent *e;
		bool fresh;

		if ((e = ent_get(g, g->wk.key[i], &fresh)) == NULL)
			return -ENOMEM;
		if (fresh || !e->present || e->bytes != g->wk.val[i])
			e->report_ns =
			    boot_ns; /* a report since the last look */
		ent_value(e, g->wk.val[i]);
		e->imported = g->wk.imp ? g->wk.imp[i] : 0;
		e->present = true;
		e->gen = g->gen;
		ent_attribute(g, e);
	}
	/*
	 * Pairs not walked were deleted (size 0) — unless the walk missed
	 * them: a get-next-key walk can skip keys under a writer, a
	 * truncated one stops early. One lookup each tells: found, the
	 * pair is there (counted as recovered); gone, its total is now 0;
	 * unreadable, it keeps its last value.
	 */
	for (i = 0; i < g->n; i++) {
		struct gpu_ent *e = &g->e[i];
		uint64_t v[2] = { 0, 0 };

		if (e->gen == g->gen || !e->present)
			continue;
		r = gpumem_map_lookup(g->fd, e->key, v);
		if (r == 0) {
			g->acc.recovered++;
			if (e->bytes != v[0])
				e->report_ns = boot_ns;
			ent_value(e, v[0]);
			e->imported = g->wk.value_size == GPUMEM_VAL_IMPORTED ?
			    v[1] :
			    0;
			e->gen = g->gen;
		} else if (r == -ENOENT) {
			e->present = false;
			ent_value(e, 0);
			e->imported = 0;
		}
	}
	g->acc.entries = (uint32_t)g->wk.n;
	g->acc.restarts += g->wk.restarts;
	g->acc.vanished += g->wk.vanished;
	g->acc.duplicates += g->wk.duplicates;
	g->acc.truncated += g->wk.truncated;
	g->acc.batch_walks += g->wk.batch;
	if (gpumem_saturated((uint32_t)g->wk.n, g->capacity))
		g->acc.saturated = true;
	set_state(g, g->wk.n ? GPUMEM_OK : GPUMEM_EMPTY, GPUMEM_WHY_NONE, 0);
	g->last_ns = mono_ns;
	dt = (uint64_t)(clock_ns(CLOCK_MONOTONIC) - t0);
	g->acc.traverse_ns += dt;
	if (dt > g->acc.traverse_ns_max)
		g->acc.traverse_ns_max = dt;
	return 0;
}

/* Own program: one attach attempt a second until the deadline. */
static void
own_attach(struct gpumem *g, int64_t mono_ns)
{
	int r;

	if (g->attach_deadline_ns < 0)
		g->attach_deadline_ns = mono_ns +
		    (int64_t)g->o.attach_s * NSEC_PER_SEC;
	if (mono_ns < g->attach_next_ns)
		return;
	g->attach_next_ns = mono_ns + GPUMEM_RETRY_NS;
	if ((r = gpumem_bpf_attach(g->gb, g->tracefs)) == 0) {
		g->attached = true;
		set_state(g, GPUMEM_EMPTY, GPUMEM_WHY_NONE, 0);
		return;
	}
	if (mono_ns >= g->attach_deadline_ns)
		set_state(g, GPUMEM_NOT_INIT,
		    r == -ENOENT ? GPUMEM_WHY_TP_ABSENT : GPUMEM_WHY_LOAD, r);
}

/* Reads of the map (or a pin looked for each tick) are bpf() calls. */
bool
gpumem_uses_bpf(const struct gpumem *g)
{
	return g->o.load != GPUMEM_LOAD_OFF;
}

void
gpumem_attach_now(struct gpumem *g, int64_t mono_ns)
{
	if (g->source == GPUMEM_SRC_OWN && !g->attached &&
	    g->why == GPUMEM_WHY_WAITING)
		own_attach(g, mono_ns);
}

/*
 * Once per sample: attach the own program while it waits, open a pin that
 * was missing (the platform loader may come later), then traverse.
 */
int
gpumem_tick(struct gpumem *g, int64_t mono_ns)
{
	if (g->window_start_ns == 0)
		g->window_start_ns = mono_ns;
	if (g->o.load == GPUMEM_LOAD_OFF)
		return 0;
	if (g->source == GPUMEM_SRC_OWN && !g->attached) {
		if (g->why != GPUMEM_WHY_WAITING)
			return 0; /* given up: tracepoint absent */
		own_attach(g, mono_ns);
		if (!g->attached)
			return 0;
	}
	if (g->fd < 0) {
		if (g->source != GPUMEM_SRC_NONE ||
		    (g->state != GPUMEM_NOT_INIT &&
			g->why != GPUMEM_WHY_LAYOUT &&
			g->why != GPUMEM_WHY_OPEN))
			return 0;
		if (g->why == GPUMEM_WHY_LOAD)
			return 0;
		if (open_pinned(g) < 0)
			return 0;
	}
	return traverse(g, mono_ns);
}

void
gpumem_note_event(struct gpumem *g, uint32_t gpu_id, int32_t pid, uint64_t size,
    int64_t mono_ns)
{
	uint64_t key = ((uint64_t)gpu_id << 32) | (uint32_t)pid;
	struct gpu_ent *e;
	bool fresh;

	g->acc.events++;
	if (mono_ns < g->window_start_ns) {
		/* a closed window's: the traversal since then has it */
		g->acc.events_late++;
		return;
	}
	if ((e = ent_get(g, key, &fresh)) == NULL)
		return;
	ent_value(e, size);
	if (size == 0)
		e->imported = 0; /* else: the next traversal brings it */
	e->present = size != 0;
	/* the event's time on CLOCK_BOOTTIME, as starttime counts */
	e->report_ns = mono_ns +
	    (clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC));
	ent_attribute(g, e);
}

/* ------------------------------------------------------------ windows */

static void
ent_out(const struct gpu_ent *e, struct window_gpu_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->gpu_id = (uint32_t)(e->key >> 32);
	p->pid = (int32_t)(uint32_t)e->key;
	p->stale = e->stale;
	p->starttime = e->stale ? 0 : e->starttime;
	p->bytes = e->bytes;
	p->min_bytes = e->min_bytes;
	p->max_bytes = e->max_bytes;
	p->imported_bytes = e->imported;
	if (!e->stale)
		memcpy(p->name, e->name, sizeof(p->name));
}

static void
fill_state(const struct gpumem *g, struct window_gpumem *st)
{
	*st = g->acc;
	st->state = g->state;
	st->why = g->why;
	st->err = g->err;
	st->source = g->source;
	st->capacity = g->capacity;
	st->imported = g->fd >= 0 && g->value_size == GPUMEM_VAL_IMPORTED;
	if (g->state == GPUMEM_EMPTY || g->state == GPUMEM_OK)
		st->saturated |= gpumem_saturated(st->entries, g->capacity);
}

/*
 * The closing window takes every pair that had a value in it; the next
 * starts from each present pair's current total. Pairs deleted inside the
 * window appear once more, with 0 at its end, and are forgotten.
 */
int
gpumem_window(struct gpumem *g, struct window *w)
{
	struct window_gpu_proc *out = NULL;
	struct window_gpumem_part *part;
	uint64_t ev, fail;
	size_t i, k = 0, n = 0;

	if (g->gb && gpumem_bpf_stats(g->gb, &ev, &fail) == 0) {
		g->acc.tp_events = ev - g->tp_events0;
		g->acc.insert_fail = fail - g->insert_fail0;
		g->tp_events0 = ev;
		g->insert_fail0 = fail;
	}
	for (i = 0; i < g->n; i++)
		n += g->e[i].in_window;
	if ((part = window_gpumem_make(w)) == NULL)
		return -ENOMEM;
	if (n && (out = calloc(n, sizeof(*out))) == NULL)
		return -ENOMEM;
	fill_state(g, &part->st);
	for (i = 0; i < g->n; i++) {
		struct gpu_ent *e = &g->e[i];

		if (!e->in_window)
			continue;
		ent_out(e, &out[k]);
		part->st.stale += out[k].stale;
		k++;
	}
	if (k > 1)
		qsort(out, k, sizeof(*out), gpumem_proc_qcmp);
	free(part->gpu);
	part->gpu = out;
	part->n_gpu = k;

	/* the next window */
	for (i = 0, k = 0; i < g->n; i++) {
		struct gpu_ent *e = &g->e[i];

		if (!e->present)
			continue;
		e->min_bytes = e->max_bytes = e->bytes;
		e->in_window = true;
		g->e[k++] = *e;
	}
	g->n = k;
	memset(&g->acc, 0, sizeof(g->acc));
	g->acc.entries = part->st.entries;
	g->window_start_ns = w->mono_end_ns;
	return 0;
}

/* The map's state and the open window's counters so far. */
void
gpumem_get_state(const struct gpumem *g, struct window_gpumem *ret)
{
	fill_state(g, ret);
}

/* What the pairs hold now, for the control plane (loop thread). */
int
gpumem_view(const struct gpumem *g, struct gpumem_view *ret)
{
	struct window_gpu_proc *p = NULL;
	size_t i, k = 0;

	if (g->n && (p = calloc(g->n, sizeof(*p))) == NULL)
		return -ENOMEM;
	for (i = 0; i < g->n; i++)
		if (g->e[i].present)
			ent_out(&g->e[i], &p[k++]);
	if (k > 1)
		qsort(p, k, sizeof(*p), gpumem_proc_qcmp);
	memset(ret, 0, sizeof(*ret));
	fill_state(g, &ret->st);
	ret->at_mono_ns = g->last_ns;
	ret->procs = p;
	ret->n = k;
	return 0;
}

void
gpumem_view_release(struct gpumem_view *v)
{
	free(v->procs);
	v->procs = NULL;
	v->n = 0;
}
