/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd's session records as the loop keeps them: the next id, the
 * budget records of the last week, the newest records' outcomes. Read
 * from the store once at setup (before the loop runs); from then on every
 * record is put whole through the writer thread's queue (writer.c), so no
 * request waits on SQLite. Below hp.c and hp_session.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "hp/hp.h"
#include "store/store.h"
#include "hp_int.h"

void
hp_note_store_error(struct heapprofd *hp, int r, const char *what)
{
	hp->st.store_errors++;
	log_warnx("heapprofd: %s: %s", what, strerror(-r));
}

/* Remember the outcome of record id (the newest HP_SEEN_MAX of them). */
static void
seen_note(struct heapprofd *hp, int64_t id, const char *outcome)
{
	struct hp_seen *s = NULL;
	unsigned i;

	for (i = 0; i < hp->nseen && s == NULL; i++)
		if (hp->seen[i].id == id)
			s = &hp->seen[i];
	if (s == NULL) {
		s = &hp->seen[hp->seen_next];
		hp->seen_next = (hp->seen_next + 1) % HP_SEEN_MAX;
		if (hp->nseen < HP_SEEN_MAX)
			hp->nseen++;
	}
	s->id = id;
	snprintf(s->outcome, sizeof(s->outcome), "%s", outcome);
}

/*
 * What heapprofd needs of the table before it can decide a request: the
 * largest id (the next one is ours to hand out), the started sessions of
 * the last week (budgets), the newest records (cancel's answers) and the
 * rows still "running" (a restart closes them). Store reads only, no
 * heapprofd state: setup calls it before the loop runs, or the writer
 * thread when the store could not be read then (writer_call).
 */
int
hp_records_read(struct store *s, int64_t now_wall_ns, struct hp_load *ret)
{
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = store_hp_max_id(s, &ret->max_id)) < 0 ||
	    (r = store_hp_budget(s, now_wall_ns - HP_WEEK_NS, &ret->budget,
		 &ret->nbudget)) < 0 ||
	    (r = store_hp_list(s, HP_SEEN_MAX, &ret->recent, &ret->nrecent)) <
		0 ||
	    (r = store_hp_running(s, &ret->running, &ret->nrunning)) < 0) {
		hp_load_release(ret);
		return r;
	}
	return 0;
}

void
hp_load_release(struct hp_load *ld)
{
	free(ld->budget);
	free(ld->recent);
	free(ld->running);
	memset(ld, 0, sizeof(*ld));
}

/* What was read becomes heapprofd's (the budget records taken over):
 * requests can be decided from now on. ld->running stays the caller's. */
void
hp_records_install(struct heapprofd *hp, struct hp_load *ld)
{
	size_t i;

	free(hp->budget);
	hp->budget = ld->budget;
	hp->nbudget = hp->budget_cap = ld->nbudget;
	ld->budget = NULL;
	ld->nbudget = 0;
	for (i = ld->nrecent; i-- > 0;) /* newest first: oldest in first */
		seen_note(hp, ld->recent[i].id, ld->recent[i].outcome);
	hp->next_id = ld->max_id + 1;
	hp->load_err = 0;
}

void
hp_records_free(struct heapprofd *hp)
{
	free(hp->budget);
	hp->budget = NULL;
	hp->nbudget = hp->budget_cap = 0;
	hp_load_release(&hp->late);
}

/* The id of a new record; 0 when the records were not read at setup. */
int64_t
hp_record_id(struct heapprofd *hp)
{
	return hp->next_id ? hp->next_id++ : 0;
}

/*
 * Put record r as it is now: queued to the writer thread (the loop runs),
 * or written here (setup, a stopped loop). Its outcome is remembered. A
 * full queue or a failed write is counted and logged.
 */
int
hp_record_put(struct heapprofd *hp, const struct hp_record *r, const char *what)
{
	int e;

	if (r->id <= 0)
		return -EINVAL;
	seen_note(hp, r->id, r->outcome);
	if (hp->wr)
		e = writer_hp_put(hp->wr, r);
	else
		e = store_hp_put(hp->store, r);
	if (e < 0)
		hp_note_store_error(hp, e, what);
	return e;
}

/* The outcome of record id if it is among the newest; false if not. */
bool
hp_record_outcome(const struct heapprofd *hp, int64_t id, char *ret,
    size_t retsz)
{
	unsigned i;

	for (i = 0; i < hp->nseen; i++)
		if (hp->seen[i].id == id) {
			snprintf(ret, retsz, "%s", hp->seen[i].outcome);
			return true;
		}
	return false;
}

/* A started session spends budget from now on. */
int
hp_budget_note(struct heapprofd *hp, int64_t start_wall_ns, const char *key)
{
	struct hp_budget_rec *nv;
	size_t cap;

	if (hp->nbudget == hp->budget_cap) {
		cap = hp->budget_cap ? hp->budget_cap * 2 : 16;
		if ((nv = realloc(hp->budget, cap * sizeof(*nv))) == NULL)
			return -ENOMEM;
		hp->budget = nv;
		hp->budget_cap = cap;
	}
	hp->budget[hp->nbudget].start_wall_ns = start_wall_ns;
	snprintf(hp->budget[hp->nbudget].target,
	    sizeof(hp->budget[hp->nbudget].target), "%s", key);
	hp->nbudget++;
	return 0;
}

/* The budget records of the week before now (older ones are let go). */
const struct hp_budget_rec *
hp_budget_recs(struct heapprofd *hp, int64_t now_wall_ns, size_t *ret_n)
{
	size_t i, k = 0;

	for (i = 0; i < hp->nbudget; i++)
		if (hp->budget[i].start_wall_ns >= now_wall_ns - HP_WEEK_NS)
			hp->budget[k++] = hp->budget[i];
	hp->nbudget = k;
	*ret_n = k;
	return hp->budget;
}
