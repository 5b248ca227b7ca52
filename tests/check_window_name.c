/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of window_name.c: a task row's name is a pointer (a name equal
 * to the comm read from the comm, any other interned once in the
 * process's table): the row's size, long names, shared storage, names
 * that outlive their window (dup, merge, free, a copy by value, a reader
 * thread while a ring rotates) and the table's bound.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

static uint64_t
str_bytes(void)
{
	struct window_names_stats ns;

	window_names_stats(&ns);
	return ns.str_bytes;
}

static void
row(struct window_task *t, int32_t id, const char *comm, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->id = t->tgid = id;
	t->starttime = 1000 + (uint64_t)id;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	window_task_set_name(t, name);
}

/* The 128-byte name is no longer inline: a row was 248 B. */
START_TEST(row_is_small)
{
	ck_assert_uint_le(sizeof(struct window_task), 128);
}
END_TEST

/* 127 bytes round-trip whole; a longer name is cut to 127, as before. */
START_TEST(long_name_round_trips)
{
	char name[VITALS_NAME_LEN], longer[200];
	struct window_task t;
	struct window *w, *d;

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	name[0] = 'L'; /* unlike any other test's */
	name[126] = 'z';
	ck_assert_uint_eq(strlen(name), 127);
	row(&t, 7, "short", name);
	ck_assert_str_eq(window_task_name(&t), name);
	memset(longer, 'b', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	row(&t, 8, "short", longer);
	ck_assert_uint_eq(strlen(window_task_name(&t)), 127);
	ck_assert_int_eq(strncmp(window_task_name(&t), longer, 127), 0);

	/* through a window, its copy and its free */
	ck_assert_ptr_nonnull(w = window_new(1, 0));
	row(&t, 7, "short", name);
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	ck_assert_ptr_nonnull(d = window_dup(w));
	window_free(w);
	ck_assert_str_eq(window_task_name(&d->procs[0]), name);
	window_free(d);
	ck_assert_str_eq(window_task_name(&t), name);
}
END_TEST

/* One copy of a name however many rows hold it; none for the comm's. */
START_TEST(identical_names_share)
{
	const char *n = "com.example.shared.name"; /* 23 bytes */
	struct window_task a, b, c;
	uint64_t before = str_bytes();

	row(&a, 1, "example", n);
	ck_assert_uint_eq(str_bytes(), before + strlen(n) + 1);
	row(&b, 2, "other", n);
	ck_assert_ptr_eq(window_task_name(&a), window_task_name(&b));
	memset(&c, 0, sizeof(c));
	window_task_set_namef(&c, "com.example.%s.name", "shared");
	ck_assert_ptr_eq(window_task_name(&c), window_task_name(&a));
	ck_assert_uint_eq(str_bytes(), before + strlen(n) + 1);

	/* a thread's name is its comm: read from the row, no table bytes */
	row(&a, 3, "Binder:1234_2", "Binder:1234_2");
	ck_assert_str_eq(window_task_name(&a), "Binder:1234_2");
	ck_assert_ptr_eq(window_task_name(&a), a.comm);
	ck_assert_uint_eq(str_bytes(), before + strlen(n) + 1);
	/* and the empty name is "" */
	row(&a, 4, "x", "");
	ck_assert_str_eq(window_task_name(&a), "");
}
END_TEST

/*
 * Names survive the window they were set in: a dup (the writer's queue),
 * a merge into an accumulator (the roll-ups), the source freed, and a row
 * copied by value (rpc's top rows, the store's aggregates).
 */
START_TEST(names_survive_dup_merge_free)
{
	struct window *w, *d, *acc;
	struct window_task t, held;
	char name[64];
	int i;

	ck_assert_ptr_nonnull(w = window_new(1, 0));
	ck_assert_ptr_nonnull(acc = window_new(0, 0));
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "com.survive.app%d", i % 50);
		row(&t, 100 + i, "app", name);
		ck_assert_int_eq(window_add_task(w, i % 3 == 0, &t), 0);
	}
	held = w->procs[5];
	ck_assert_ptr_nonnull(d = window_dup(w));
	ck_assert_int_eq(window_merge(acc, w), 0);
	window_shrink(w);
	window_free(w);
	for (i = 0; i < (int)d->nprocs; i++) {
		snprintf(name, sizeof(name), "com.survive.app%d",
		    (d->procs[i].id - 100) % 50);
		ck_assert_str_eq(window_task_name(&d->procs[i]), name);
		ck_assert_str_eq(window_task_name(&acc->procs[i]), name);
	}
	/* the later window renames a process (exec): the merge takes it */
	ck_assert_ptr_nonnull(w = window_new(2, 0));
	t = d->procs[0];
	window_task_set_name(&t, "renamed.by.exec");
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	window_free(d);
	ck_assert_int_eq(window_merge(acc, w), 0);
	window_free(w);
	ck_assert_str_eq(window_task_name(&acc->procs[0]), "renamed.by.exec");
	snprintf(name, sizeof(name), "com.survive.app%d", (held.id - 100) % 50);
	ck_assert_str_eq(window_task_name(&held), name);
	window_free(acc);
}
END_TEST

/* A merge whose later row has the comm for its name keeps reading it from
 * the accumulator's (now updated) comm. */
START_TEST(merge_comm_name)
{
	struct window *acc, *w;
	struct window_task t;

	ck_assert_ptr_nonnull(acc = window_new(0, 0));
	ck_assert_ptr_nonnull(w = window_new(1, 0));
	row(&t, 9, "before", "com.long.process.name");
	ck_assert_int_eq(window_add_task(acc, false, &t), 0);
	row(&t, 9, "after", "after");
	ck_assert_int_eq(window_add_task(w, false, &t), 0);
	ck_assert_int_eq(window_merge(acc, w), 0);
	window_free(w);
	ck_assert_str_eq(window_task_name(&acc->procs[0]), "after");
	window_free(acc);
}
END_TEST

/*
 * A reader thread copies rows out of the newest window of a ring under
 * its lock and reads their names after letting go, while the ring rotates
 * (windows built, duplicated, merged and freed): a name tied to its
 * window would be read after the free (ASan: heap-use-after-free).
 */
#define RING 4
struct ring {
	pthread_mutex_t mu;
	struct window *w[RING];
	unsigned head;
	atomic_bool stop;
	unsigned reads, bad;
};

static void *
reader(void *arg)
{
	struct ring *r = arg;
	struct window_task got[16];
	char want[64];
	unsigned i, n;

	while (!atomic_load(&r->stop)) {
		pthread_mutex_lock(&r->mu);
		n = 0;
		if (r->w[r->head] != NULL) {
			const struct window *w = r->w[r->head];

			for (i = 0; i < w->nprocs && n < 16; i += 37)
				got[n++] = w->procs[i];
		}
		pthread_mutex_unlock(&r->mu);
		for (i = 0; i < n; i++) {
			snprintf(want, sizeof(want), "com.ring.app%u.s%u",
			    (unsigned)got[i].id % 97,
			    (unsigned)(got[i].starttime % 5));
			if (strcmp(window_task_name(&got[i]), want) != 0)
				r->bad++;
			r->reads++;
		}
	}
	return NULL;
}

START_TEST(reader_while_ring_rotates)
{
	struct ring r = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct window *acc, *w, *old, *dup;
	struct window_task t;
	char name[64];
	pthread_t th;
	unsigned k, i;

	ck_assert_ptr_nonnull(acc = window_new(0, 0));
	ck_assert_int_eq(pthread_create(&th, NULL, reader, &r), 0);
	for (k = 0; k < 200; k++) {
		ck_assert_ptr_nonnull(w = window_new(k + 1, 0));
		for (i = 0; i < 400; i++) {
			memset(&t, 0, sizeof(t));
			t.id = t.tgid = (int32_t)(i + k);
			t.starttime = k;
			snprintf(t.comm, sizeof(t.comm), "app");
			snprintf(name, sizeof(name), "com.ring.app%u.s%u",
			    (i + k) % 97, k % 5);
			window_task_set_name(&t, name);
			ck_assert_int_eq(window_add_task(w, false, &t), 0);
		}
		window_shrink(w);
		/* the writer's copy, written and freed at once */
		ck_assert_ptr_nonnull(dup = window_dup(w));
		ck_assert_int_eq(window_merge(acc, dup), 0);
		window_free(dup);
		pthread_mutex_lock(&r.mu);
		r.head = (r.head + 1) % RING;
		old = r.w[r.head];
		r.w[r.head] = w;
		pthread_mutex_unlock(&r.mu);
		window_free(old);
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	for (i = 0; i < RING; i++)
		window_free(r.w[i]);
	ck_assert_uint_gt(r.reads, 0);
	ck_assert_uint_eq(r.bad, 0);
	/* the accumulator's rows kept the names of their last window */
	for (i = 0; i < acc->nprocs; i++) {
		snprintf(name, sizeof(name), "com.ring.app%u.s%u",
		    (unsigned)acc->procs[i].id % 97,
		    (unsigned)(acc->procs[i].starttime % 5));
		ck_assert_str_eq(window_task_name(&acc->procs[i]), name);
	}
	window_free(acc);
}
END_TEST

/* Past the table's bound a new name reads as its comm and is counted;
 * names already held keep being found. */
START_TEST(bound_falls_back_to_comm)
{
	struct window_names_stats ns;
	struct window_task t, kept;
	char name[VITALS_NAME_LEN];
	unsigned i;

	row(&kept, 1, "kept", "com.kept.before.the.bound");
	window_names_stats(&ns);
	ck_assert_uint_eq(ns.full, 0);
	for (i = 0; ns.full == 0; i++) {
		ck_assert_uint_lt(i, 100000);
		snprintf(name, sizeof(name), "%0100u", i);
		row(&t, 2, "filler", name);
		window_names_stats(&ns);
	}
	ck_assert_uint_le(ns.str_bytes, 1024 * 1024);
	ck_assert_uint_gt(ns.str_bytes, 1024 * 1024 - 2 * VITALS_NAME_LEN);
	ck_assert_str_eq(window_task_name(&t), "filler");
	row(&t, 3, "again", "com.kept.before.the.bound");
	ck_assert_ptr_eq(window_task_name(&t), window_task_name(&kept));
	window_names_stats(&ns);
	ck_assert_uint_eq(ns.full, 1);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("window_name");
	TCase *tc;

	tc = tcase_create("names");
	tcase_add_test(tc, row_is_small);
	tcase_add_test(tc, long_name_round_trips);
	tcase_add_test(tc, identical_names_share);
	tcase_add_test(tc, names_survive_dup_merge_free);
	tcase_add_test(tc, merge_comm_name);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reader_while_ring_rotates);
	suite_add_tcase(s, tc);

	/* last: it fills the process's table (the tests run in one process
	 * when CK_FORK=no) */
	tc = tcase_create("bound");
	tcase_add_test(tc, bound_falls_back_to_comm);
	suite_add_tcase(s, tc);

	return tu_run(s);
}
