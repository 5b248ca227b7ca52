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
 * What setup reads: the largest id (the next one is ours to hand out),
 * the started sessions of the last week (budgets) and the newest records
 * (cancel's answers). Not read: hp->next_id stays 0 and sessions are
 * refused, since no budget could be kept.
 */
int
hp_records_load(struct heapprofd *hp, int64_t now_wall_ns)
{
	struct hp_record *v = NULL;
	int64_t max = 0;
	size_t n = 0, i;
	int r;

	if ((r = store_hp_max_id(hp->store, &max)) < 0 ||
	    (r = store_hp_budget(hp->store, now_wall_ns - HP_WEEK_NS,
		 &hp->budget, &hp->nbudget)) < 0 ||
	    (r = store_hp_list(hp->store, HP_SEEN_MAX, &v, &n)) < 0) {
		hp->load_err = r;
		hp_note_store_error(hp, r, "session records not read");
		return r;
	}
	hp->budget_cap = hp->nbudget;
	for (i = n; i-- > 0;) /* newest first: oldest into the ring first */
		seen_note(hp, v[i].id, v[i].outcome);
	free(v);
	hp->next_id = max + 1;
	return 0;
}

void
hp_records_free(struct heapprofd *hp)
{
	free(hp->budget);
	hp->budget = NULL;
	hp->nbudget = hp->budget_cap = 0;
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
