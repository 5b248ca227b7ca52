/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The BPF objects of this build agree on the sched maps' layout
 * (bpf/sched/sched.bpf.h): the task iterator's object reuses the thread
 * maps by fd, and one built before a change of the header reads them at
 * the old offsets (the build once rebuilt an object only for its own
 * header; it now follows clang's depfile). No kernel, no privilege: the
 * objects are only opened.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#ifdef HAVE_BPF_CORE
#include <bpf/libbpf.h>

#include "../bpf/sched/sched.bpf.h"

START_TEST(test_objects_share_layout)
{
	static const char *const objs[] = { "sched.bpf.o", "taskiter.bpf.o" };
	static const char *const maps[] = { "sched_tid0", "sched_tid1" };
	const char *dir = getenv("VITALS_BUILDDIR");
	unsigned i, j;

	ck_assert_ptr_nonnull(dir);
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		char path[PATH_MAX];
		struct bpf_object *obj;

		snprintf(path, sizeof(path), "%s/bpf/%s", dir, objs[i]);
		obj = bpf_object__open_file(path, NULL);
		ck_assert_msg(obj != NULL, "%s: %s", path, strerror(errno));
		for (j = 0; j < sizeof(maps) / sizeof(maps[0]); j++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj,
			    maps[j]);

			ck_assert_msg(m != NULL, "%s: no %s", objs[i], maps[j]);
			ck_assert_msg(bpf_map__value_size(m) ==
				    sizeof(struct sched_tid) &&
				bpf_map__key_size(m) ==
				    sizeof(struct sched_tid_key),
			    "%s: %s is %u → %u bytes, this layout %zu → %zu",
			    objs[i], maps[j], bpf_map__key_size(m),
			    bpf_map__value_size(m),
			    sizeof(struct sched_tid_key),
			    sizeof(struct sched_tid));
		}
		/* layout 11: the array slots, their counts */
		for (j = 0; j < 2; j++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj,
			    j ? "sched_slot1" : "sched_slot0");

			ck_assert_msg(m != NULL, "%s: no slot map", objs[i]);
			ck_assert_uint_eq(bpf_map__value_size(m),
			    sizeof(struct sched_slot));
			ck_assert_uint_eq(bpf_map__max_entries(m),
			    VITALS_SCHED_SLOTS);
		}
		ck_assert_ptr_nonnull(
		    bpf_object__find_map_by_name(obj, "sched_nslot"));
		ck_assert_uint_eq(bpf_map__value_size(
				      bpf_object__find_map_by_name(obj,
					  "sched_nslot")),
		    sizeof(struct sched_nslot));
		bpf_object__close(obj);
	}
}
END_TEST
#endif

int
main(void)
{
#ifdef HAVE_BPF_CORE
	Suite *s = suite_create("bpf_layout");
	TCase *tc = tcase_create("objects");

	tcase_add_test(tc, test_objects_share_layout);
	suite_add_tcase(s, tc);
	return tu_run(s);
#else
	return 77; /* no CO-RE objects in this build */
#endif
}
