/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The foreground/background part of a window on the wire (Window.fgbg),
 * and the state a request names. With rpc.c and rpc_pb.c the only code
 * that knows protobuf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fgbg/fgbg.h"
#include "window/window.h"
#include "rpc_int.h"

static Vitals__FgbgEntry *
pb_entry(struct rpc_arena *a, const struct window_fgbg_ent *e)
{
	struct window_task t;
	Vitals__FgbgEntry *m;

	NEW(a, m, vitals__fgbg_entry__init);
	memset(&t, 0, sizeof(t));
	t.id = t.tgid = e->pid;
	t.starttime = e->starttime;
	t.uid = e->uid;
	window_task_set_name(&t, e->name);
	memcpy(t.comm, e->name, sizeof(t.comm) - 1);
	t.d_utime = e->d_utime;
	t.d_stime = e->d_stime;
	t.d_minflt = e->d_minflt;
	t.d_majflt = e->d_majflt;
	t.samples = e->samples;
	m->state = (char *)fg_state_name(e->state);
	TRY(m->task = rpc_pb_task(a, &t));
	return m;
}

/* Does the window message carry process (pid, starttime)? */
static bool
carried(const Vitals__Window *wm, const struct window_fgbg_ent *e)
{
	size_t i;

	for (i = 0; i < wm->n_procs; i++)
		if (wm->procs[i]->id == e->pid &&
		    wm->procs[i]->starttime == e->starttime)
			return true;
	return false;
}

/*
 * The head always; the entries of the processes the message carries (a
 * snapshot's top_n, a windows answer with tasks), none without tasks
 * (health, windows without with_tasks): they are per-process figures, and
 * a device's hundreds of them would fill every window of a long range.
 */
static Vitals__FgbgWindow *
pb_fgbg(struct rpc_arena *a, const struct window_fgbg *p,
    const Vitals__Window *wm)
{
	Vitals__FgbgWindow *m;
	unsigned k;
	size_t i, n;

	NEW(a, m, vitals__fgbg_window__init);
	m->status = (char *)fgbg_status_name(p->status);
	TRY(m->cpuset = rpc_pb_str(a, p->cpuset, sizeof(p->cpuset)));
	m->scans = p->scans;
	m->reads = p->reads;
	ARRAY(a, m->sources, FG_SRC__MAX);
	for (k = 0; k < FG_SRC__MAX; k++) {
		Vitals__Counter *c;

		NEW(a, c, vitals__counter__init);
		c->name = (char *)fg_source_name(k);
		c->value = p->by_src[k];
		m->sources[k] = c;
	}
	m->n_sources = FG_SRC__MAX;
	m->read_errors = p->read_errors;
	m->entries_cut = p->ents_cut;
	for (i = 0, n = 0; i < p->n; i++)
		n += carried(wm, &p->e[i]);
	ARRAY(a, m->entries, n);
	for (i = 0, n = 0; i < p->n; i++)
		if (carried(wm, &p->e[i]))
			TRY(m->entries[n++] = pb_entry(a, &p->e[i]));
	m->n_entries = n;
	return m;
}

static int
rpc_fgbg_window(struct rpc_arena *a, Vitals__Window *wm, const struct window *w)
{
	if ((wm->fgbg = pb_fgbg(a, window_fgbg(w), wm)) == NULL)
		return -ENOMEM;
	return 0;
}

const struct rpc_part rpc_fgbg_part = {
	.window = rpc_fgbg_window,
};

/* A request's state: "" or NULL is 0 (all), a state name its enum + 1;
 * -EINVAL for anything else. */
int
rpc_fgbg_state(const char *name, unsigned *ret)
{
	int st;

	if (name == NULL || *name == '\0') {
		*ret = 0;
		return 0;
	}
	if ((st = fg_state_parse(name)) < 0)
		return st;
	*ret = (unsigned)st + 1;
	return 0;
}

const char *
rpc_fgbg_state_name(unsigned st)
{
	return st ? fg_state_name(st - 1) : "";
}
