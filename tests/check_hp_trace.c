/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checked heapprofd profiles: the trace decoder (hp_trace.c) on traces
 * written through proto/perfetto_trace.proto (every error flag, missing
 * and foreign dumps, continuous dumps, large skipped samples) and on
 * malformed bytes (every cut of a good trace, garbage), the file reader
 * against the in-memory one; then sessions end to end through the library
 * with the stand-in perfetto (fake_perfetto.c) writing each kind of trace:
 * the record's outcome and the health counters.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "perfetto_trace.pb-c.h"
#include "testutil.h"
#include "vitalsd.h"

typedef Perfetto__Protos__ProfilePacket__ProcessHeapSamples Dump;

/* A trace of one clock packet, then one profile packet per dumps[] row
 * (each row: the dumps of that packet). */
static uint8_t *
trace_of(Dump **dumps, const size_t *ndumps, size_t npackets, size_t *ret_len)
{
	Perfetto__Protos__Trace tr = PERFETTO__PROTOS__TRACE__INIT;
	Perfetto__Protos__TracePacket pk[8], *pks[8];
	Perfetto__Protos__ProfilePacket pp[8];
	Perfetto__Protos__ClockSnapshot cs =
	    PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	size_t i, n, off = 0;
	uint8_t *out;

	ck_assert_uint_lt(npackets, 8);
	perfetto__protos__trace_packet__init(&pk[0]);
	pk[0].clock_snapshot = &cs;
	pk[0].has_timestamp = true;
	pk[0].timestamp = 12345;
	pks[0] = &pk[0];
	for (i = 0; i < npackets; i++) {
		perfetto__protos__trace_packet__init(&pk[i + 1]);
		perfetto__protos__profile_packet__init(&pp[i]);
		pp[i].n_process_dumps = ndumps[i];
		pp[i].process_dumps = dumps + off;
		off += ndumps[i];
		pk[i + 1].profile_packet = &pp[i];
		pks[i + 1] = &pk[i + 1];
	}
	tr.n_packet = npackets + 1;
	tr.packet = pks;
	n = perfetto__protos__trace__get_packed_size(&tr);
	ck_assert_ptr_nonnull(out = malloc(n ? n : 1));
	perfetto__protos__trace__pack(&tr, out);
	*ret_len = n;
	return out;
}

static void
dump_init(Dump *d, uint64_t pid)
{
	perfetto__protos__profile_packet__process_heap_samples__init(d);
	d->has_pid = true;
	d->pid = pid;
	d->heap_name = (char *)"libc.malloc";
}

static enum hp_profile
check_one(Dump *d, const int32_t *pids, unsigned npids,
    struct hp_trace_verdict *v)
{
	size_t n = 1, len;
	uint8_t *buf = trace_of(&d, &n, 1, &len);

	hp_trace_check(buf, len, pids, npids, v);
	free(buf);
	return v->outcome;
}

START_TEST(test_verdict_flags)
{
	static const int32_t pid[] = { 4242 };
	struct hp_trace_verdict v;
	Dump d;

	dump_init(&d, 4242);
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_COMPLETED);
	ck_assert_uint_eq(v.dumps, 1);
	ck_assert_uint_eq(v.profile_packets, 1);
	ck_assert_uint_eq(v.packets, 2);
	ck_assert_uint_eq(v.pid[0].dumps, 1);

	dump_init(&d, 4242);
	d.has_rejected_concurrent = true;
	d.rejected_concurrent = true;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_REJECTED);
	ck_assert(v.pid[0].rejected);

	dump_init(&d, 4242);
	d.has_disconnected = d.has_buffer_overran = true;
	d.disconnected = d.buffer_overran = true;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_BUFFER_OVERRAN);

	/* S and later say the overrun as client_error HIT_TIMEOUT */
	dump_init(&d, 4242);
	d.has_client_error = true;
	d.client_error =
	    PERFETTO__PROTOS__PROFILE_PACKET__PROCESS_HEAP_SAMPLES__CLIENT_ERROR__CLIENT_ERROR_HIT_TIMEOUT;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_BUFFER_OVERRAN);

	dump_init(&d, 4242);
	d.has_disconnected = d.has_buffer_corrupted = true;
	d.disconnected = d.buffer_corrupted = true;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_BUFFER_CORRUPTED);

	dump_init(&d, 4242);
	d.has_disconnected = d.has_hit_guardrail = true;
	d.disconnected = d.hit_guardrail = true;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_GUARDRAIL);

	dump_init(&d, 4242);
	d.has_disconnected = true;
	d.disconnected = true;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_DISCONNECTED);

	/* a flag written as false is no flag */
	dump_init(&d, 4242);
	d.has_disconnected = d.has_rejected_concurrent = true;
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_COMPLETED);

	/* a dump of another process only: the target has no profile */
	dump_init(&d, 77);
	ck_assert_int_eq(check_one(&d, pid, 1, &v), HP_PROF_NO_PROFILE);
	ck_assert_uint_eq(v.other_dumps, 1);
	ck_assert_uint_eq(v.pid[0].dumps, 0);

	/* no target pids known: any clean dump will do, none is none */
	dump_init(&d, 77);
	ck_assert_int_eq(check_one(&d, NULL, 0, &v), HP_PROF_COMPLETED);
}
END_TEST

START_TEST(test_verdict_targets)
{
	static const int32_t pids[] = { 100, 200, 100 };
	Perfetto__Protos__ProfilePacket__HeapSample s[400], *sp[400];
	struct hp_trace_verdict v;
	Dump d[4], *dp[4] = { &d[0], &d[1], &d[2], &d[3] };
	size_t nd[3] = { 2, 1, 1 }, len, i;
	uint8_t *buf;
	char line[256];

	/* continuous dumps: 100 twice, 200 once, a foreign pid; many
	 * samples in the first (skipped by length, never read) */
	for (i = 0; i < 400; i++) {
		perfetto__protos__profile_packet__heap_sample__init(&s[i]);
		s[i].has_self_allocated = true;
		s[i].self_allocated = i * 4096;
		sp[i] = &s[i];
	}
	dump_init(&d[0], 100);
	d[0].n_samples = 400;
	d[0].samples = sp;
	dump_init(&d[1], 200);
	dump_init(&d[2], 100);
	dump_init(&d[3], 300);
	buf = trace_of(dp, nd, 3, &len);
	hp_trace_check(buf, len, pids, 3, &v);
	ck_assert_int_eq(v.outcome, HP_PROF_COMPLETED);
	ck_assert_uint_eq(v.npids, 2); /* the repeated pid once */
	ck_assert_uint_eq(v.pid[0].dumps, 2);
	ck_assert_uint_eq(v.pid[1].dumps, 1);
	ck_assert_uint_eq(v.other_dumps, 1);
	ck_assert_uint_eq(v.dumps, 4);
	hp_trace_summary(&v, line, sizeof(line));
	ck_assert_msg(strstr(line, "pid 100: 2 dumps") &&
		strstr(line, "pid 200: 1 dump;") &&
		strstr(line, "1 dumps of other pids"),
	    "%s", line);
	free(buf);

	/* 200 never dumped: no_profile beats a clean 100 */
	nd[0] = 1;
	dp[1] = &d[2];
	buf = trace_of(dp, nd, 2, &len);
	hp_trace_check(buf, len, pids, 2, &v);
	ck_assert_int_eq(v.outcome, HP_PROF_NO_PROFILE);
	ck_assert_uint_eq(v.pid[1].dumps, 0);
	free(buf);

	/* a flag on a process outside the pids (a name's new process) */
	d[3].has_rejected_concurrent = true;
	d[3].rejected_concurrent = true;
	dp[1] = &d[3];
	nd[0] = 2;
	buf = trace_of(dp, nd, 1, &len);
	hp_trace_check(buf, len, pids, 1, &v);
	ck_assert_int_eq(v.outcome, HP_PROF_REJECTED);
	free(buf);

	/* an empty trace and a trace without profile packets */
	hp_trace_check(NULL, 0, pids, 1, &v);
	ck_assert_int_eq(v.outcome, HP_PROF_NO_PROFILE);
	buf = trace_of(dp, nd, 0, &len);
	hp_trace_check(buf, len, pids, 1, &v);
	ck_assert_int_eq(v.outcome, HP_PROF_NO_PROFILE);
	ck_assert_uint_eq(v.packets, 1);
	free(buf);
}
END_TEST

/* Every cut of a good trace is either a whole prefix of packets (no
 * profile yet, or the profile) or trace_corrupt, never a crash. */
START_TEST(test_verdict_cuts)
{
	static const int32_t pid[] = { 4242 };
	struct hp_trace_verdict v;
	size_t n = 1, len, cut, corrupt = 0, whole = 0;
	Dump d, *dp = &d;
	uint8_t *buf;

	dump_init(&d, 4242);
	buf = trace_of(&dp, &n, 1, &len);
	for (cut = 0; cut < len; cut++) {
		hp_trace_check(buf, cut, pid, 1, &v);
		if (v.outcome == HP_PROF_TRACE_CORRUPT) {
			corrupt++;
			ck_assert_uint_le(v.bad_offset, cut);
			ck_assert(v.why[0] != '\0');
		} else {
			ck_assert_int_eq(v.outcome, HP_PROF_NO_PROFILE);
			whole++;
		}
	}
	/* only the empty prefix and the one after the clock packet are
	 * whole; the rest of the cuts fall inside a field */
	ck_assert_uint_eq(whole, 2);
	ck_assert_uint_eq(corrupt, len - 2);
	free(buf);
}
END_TEST

START_TEST(test_verdict_malformed)
{
	static const struct {
		const char *name;
		const char *bytes;
		size_t len;
	} bad[] = {
		{ "garbage 0x0a", "\x0a\x0a\x0a\x0a\x0a\x0a\x0a\x0a", 8 },
		{ "field 0", "\x02\x00", 2 },
		{ "group", "\x0b\x0c", 2 },
		{ "wire type 7", "\x0f", 1 },
		{ "11-byte varint",
		    "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff"
		    "\x01",
		    11 },
		{ "length past the end", "\x0a\x05\x00", 3 },
		{ "packet as a varint", "\x08\x01", 2 },
		/* packet { profile_packet: varint } */
		{ "profile as a varint", "\x0a\x03\xa8\x02\x01", 5 },
		/* packet { profile { process_dumps { pid: fixed64 } } } */
		{ "pid as fixed64",
		    "\x0a\x0e\xaa\x02\x0b\x2a\x09\x09\x01\x02\x03\x04\x05\x06"
		    "\x07\x08",
		    16 },
		/* a dump longer than its profile packet */
		{ "dump past its packet", "\x0a\x06\xaa\x02\x03\x2a\x05\x08",
		    8 },
	};
	struct hp_trace_verdict v;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		hp_trace_check((const uint8_t *)bad[i].bytes, bad[i].len, NULL,
		    0, &v);
		ck_assert_msg(v.outcome == HP_PROF_TRACE_CORRUPT, "%s: %s",
		    bad[i].name, hp_profile_name(v.outcome));
	}
	/* unknown fields of every wire type are skipped */
	hp_trace_check((const uint8_t *)"\x10\x01\x19\x01\x02\x03\x04\x05\x06"
					"\x07\x08\x25\x01\x02\x03\x04",
	    16, NULL, 0, &v);
	ck_assert_int_eq(v.outcome, HP_PROF_NO_PROFILE);
	ck_assert_uint_eq(v.packets, 0);
}
END_TEST

/* The file reader (a 64 KiB window) says what the memory one says, over a
 * trace larger than its window. */
START_TEST(test_verdict_file)
{
	static const int32_t pid[] = { 4242 };
	Perfetto__Protos__ProfilePacket__HeapSample *s, **sp;
	struct hp_trace_verdict vm, vf;
	size_t n = 1, len, i, ns = 40000;
	char *dir, path[PATH_MAX];
	Dump d, *dp = &d;
	uint8_t *buf;
	int fd;

	ck_assert_ptr_nonnull(s = calloc(ns, sizeof(*s)));
	ck_assert_ptr_nonnull(sp = calloc(ns, sizeof(*sp)));
	for (i = 0; i < ns; i++) {
		perfetto__protos__profile_packet__heap_sample__init(&s[i]);
		s[i].has_callstack_id = s[i].has_self_allocated = true;
		s[i].callstack_id = i;
		s[i].self_allocated = i * 64;
		sp[i] = &s[i];
	}
	dump_init(&d, 4242);
	d.n_samples = ns;
	d.samples = sp;
	d.has_hit_guardrail = true;
	d.hit_guardrail = true; /* after the samples on the wire */
	buf = trace_of(&dp, &n, 1, &len);
	ck_assert_uint_gt(len, 3 * 65536);
	dir = tu_mkdtemp("hptrace");
	snprintf(path, sizeof(path), "%s/t.pftrace", dir);
	ck_assert_int_eq(tu_write(path, (const char *)buf, len), 0);
	hp_trace_check(buf, len, pid, 1, &vm);
	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	ck_assert_int_eq(hp_trace_check_fd(fd, pid, 1, &vf), 0);
	close(fd);
	ck_assert_int_eq(vm.outcome, HP_PROF_GUARDRAIL);
	ck_assert_int_eq(vf.outcome, vm.outcome);
	ck_assert_uint_eq(vf.bytes, len);
	ck_assert_uint_eq(vf.dumps, vm.dumps);
	/* traces concatenate: 160 copies (~34 MB, the default 32 MiB
	 * buffer's size) are one trace of 160 dumps; what a check of that
	 * costs here is printed, not asserted */
	{
		int64_t t0;
		int k;

		ck_assert_int_ge(fd = open(path, O_WRONLY | O_APPEND), 0);
		for (k = 1; k < 160; k++)
			ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
		close(fd);
		ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
		t0 = clock_ns(CLOCK_MONOTONIC);
		ck_assert_int_eq(hp_trace_check_fd(fd, pid, 1, &vf), 0);
		fprintf(stderr,
		    "check of a %llu-byte trace (%llu dumps): "
		    "%.2f ms\n",
		    (unsigned long long)vf.bytes, (unsigned long long)vf.dumps,
		    (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
		close(fd);
		ck_assert_int_eq(vf.outcome, HP_PROF_GUARDRAIL);
		ck_assert_uint_eq(vf.dumps, 160);
		ck_assert_uint_eq(vf.pid[0].dumps, 160);
		ck_assert_uint_eq(vf.bytes, 160 * (uint64_t)len);
		ck_assert_int_eq(truncate(path, (off_t)len), 0);
	}
	/* cut in the file: corrupt at the same offset as in memory */
	ck_assert_int_eq(truncate(path, (off_t)(len - 3)), 0);
	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	ck_assert_int_eq(hp_trace_check_fd(fd, pid, 1, &vf), 0);
	close(fd);
	hp_trace_check(buf, len - 3, pid, 1, &vm);
	ck_assert_int_eq(vf.outcome, HP_PROF_TRACE_CORRUPT);
	ck_assert_uint_eq(vf.bad_offset, vm.bad_offset);
	/* a directory is not a trace */
	ck_assert_int_ge(fd = open(dir, O_RDONLY | O_DIRECTORY), 0);
	ck_assert_int_lt(hp_trace_check_fd(fd, pid, 1, &vf), 0);
	ck_assert_int_eq(vf.outcome, HP_PROF_TRACE_CORRUPT);
	close(fd);
	tu_rmtree(dir);
	free(dir);
	free(buf);
	free(s);
	free(sp);
}
END_TEST

/* ------------------------------------------------ sessions, end to end */

struct lib {
	char *dir;
	char db[PATH_MAX], fp[PATH_MAX];
	struct config cfg;
	struct store *store;
	struct event_base *base;
	struct heapprofd *hp;
};

static void
lib_open(struct lib *l, const char *const *keys)
{
	struct store_opts o;
	char calls[PATH_MAX + 8];
	unsigned i;

	memset(l, 0, sizeof(*l));
	l->dir = tu_mkdtemp_db("hplib", l->db, sizeof(l->db));
	snprintf(l->fp, sizeof(l->fp), "%s/fp", l->dir);
	snprintf(calls, sizeof(calls), "%s/calls", l->fp);
	ck_assert_int_eq(mkdir(l->fp, 0700), 0);
	ck_assert_int_eq(mkdir(calls, 0700), 0);
	setenv("VITALS_FAKE_PERFETTO_DIR", l->fp, 1);
	config_init(&l->cfg);
	ck_assert_int_eq(config_set(&l->cfg, "state_dir", l->dir), 0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_perfetto",
			     getenv("VITALS_FAKE_PERFETTO")),
	    0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_no_packages_list",
			     "allow"),
	    0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_packages_list",
			     "/nonexistent/packages.list"),
	    0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_cooldown_s", "0"), 0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_max_per_hour", "0"), 0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_max_per_day", "0"), 0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_system_max_per_hour",
			     "0"),
	    0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_system_max_per_day",
			     "0"),
	    0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_max_per_week", "0"), 0);
	ck_assert_int_eq(config_set(&l->cfg, "heapprofd_system_max_per_week",
			     "0"),
	    0);
	ck_assert_int_eq(config_set(&l->cfg, "seccomp", "off"), 0);
	for (i = 0; keys && keys[i]; i += 2)
		ck_assert_msg(config_set(&l->cfg, keys[i], keys[i + 1]) == 0,
		    "%s = %s", keys[i], keys[i + 1]);
	store_opts_default(&o);
	ck_assert_int_eq(store_open(l->db, &o, &l->store), 0);
	ck_assert_ptr_nonnull(l->base = event_base_new());
	ck_assert_int_eq(event_base_priority_init(l->base, 2), 0);
	ck_assert_int_eq(heapprofd_new(l->base, &l->cfg, l->store, NULL,
			     &l->hp),
	    0);
}

static void
lib_close(struct lib *l)
{
	heapprofd_free(l->hp);
	event_base_free(l->base);
	store_close(l->store);
	config_release(&l->cfg);
	tu_rmtree(l->dir);
	free(l->dir);
}

static void
fake_kind(struct lib *l, const char *kind)
{
	char p[PATH_MAX + 8];

	snprintf(p, sizeof(p), "%s/trace", l->fp);
	ck_assert_int_eq(tu_writes(p, kind), 0);
}

/* Start a session (on this process, or rq), run the loop until it ends;
 * its record as stored. */
static void
lib_session_rq(struct lib *l, const struct hp_request *rq0,
    struct hp_record *ret)
{
	struct hp_request rq = { .pid = getpid(), .duration_ms = 5000 };
	struct hp_stats st;
	struct hp_answer a;
	struct hp_record *v = NULL;
	size_t n = 0;
	int i;

	if (rq0)
		rq = *rq0;
	ck_assert_int_eq(heapprofd_start(l->hp, &rq, &a), 0);
	ck_assert_msg(a.refusal == HP_OK, "%s", a.message);
	vbuf_release(&a.text);
	for (i = 0; i < 1000; i++) {
		heapprofd_get_stats(l->hp, &st);
		if (!st.running && !st.checking)
			break;
		event_base_loop(l->base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		tu_sleep_ms(5);
	}
	ck_assert(!st.running && !st.checking);
	ck_assert_int_eq(store_hp_list(l->store, 1, &v, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].id, a.id);
	*ret = v[0];
	free(v);
}

static void
lib_session(struct lib *l, struct hp_record *ret)
{
	lib_session_rq(l, NULL, ret);
}

START_TEST(test_sessions_each_outcome)
{
	static const struct {
		const char *kind, *outcome;
		enum hp_profile p;
	} k[] = {
		{ "good 2", "completed", HP_PROF_COMPLETED },
		{ "rejected", "rejected", HP_PROF_REJECTED },
		{ "overran", "buffer_overran", HP_PROF_BUFFER_OVERRAN },
		{ "timeout-error", "buffer_overran", HP_PROF_BUFFER_OVERRAN },
		{ "corrupted", "buffer_corrupted", HP_PROF_BUFFER_CORRUPTED },
		{ "guardrail", "guardrail", HP_PROF_GUARDRAIL },
		{ "disconnected", "disconnected", HP_PROF_DISCONNECTED },
		{ "nodump", "no_profile", HP_PROF_NO_PROFILE },
		{ "missing", "no_profile", HP_PROF_NO_PROFILE },
		{ "empty", "no_profile", HP_PROF_NO_PROFILE },
		{ "truncated", "trace_corrupt", HP_PROF_TRACE_CORRUPT },
		{ "garbage", "trace_corrupt", HP_PROF_TRACE_CORRUPT },
	};
	uint64_t want[HP_PROF__MAX] = { 0 };
	struct hp_record r;
	struct hp_stats st;
	struct lib l;
	size_t i;

	lib_open(&l, NULL);
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		fake_kind(&l, k[i].kind);
		lib_session(&l, &r);
		ck_assert_msg(!strcmp(r.outcome, k[i].outcome),
		    "%s: outcome %s (%s)", k[i].kind, r.outcome, r.message);
		ck_assert_int_eq(r.exit_status, 0);
		ck_assert_int_gt(r.output_bytes, -1);
		want[k[i].p]++;
		if (k[i].p == HP_PROF_TRACE_CORRUPT)
			ck_assert_msg(strstr(r.message,
					  "trace_corrupt at byte"),
			    "%s", r.message);
		else
			ck_assert_msg(strstr(r.message, "heap dumps"), "%s",
			    r.message);
	}
	heapprofd_get_stats(l.hp, &st);
	for (i = 0; i < HP_PROF__MAX; i++)
		ck_assert_msg(st.profiles[i] == want[i], "%s: %llu != %llu",
		    hp_profile_name(i), (unsigned long long)st.profiles[i],
		    (unsigned long long)want[i]);
	ck_assert_uint_eq(st.completed, want[HP_PROF_COMPLETED]);
	ck_assert_uint_eq(st.failed, 0);
	ck_assert_int_gt(st.check_ns_max, 0);
	lib_close(&l);
}
END_TEST

/* A non-zero exit is failed, unchecked: the trace's verdict is for
 * sessions perfetto says ended well. */

/* An app and its other process in one session: both names in the
 * config, every process of both a target of the verdict. */
START_TEST(test_sessions_names)
{
	static struct hp_request rq = { .nnames = 2, .duration_ms = 4000 };
	char exe[PATH_MAX + 64], name[64], cmd[PATH_MAX * 2 + 80],
	    want[HP_NAME_MAX];
	const char *argv[] = { exe, "30", NULL };
	struct hp_record r;
	struct lib l;
	pid_t kid;
	int gate;

	/* a name of its own: no other process of the host has it */
	lib_open(&l, NULL);
	snprintf(name, sizeof(name), "hpt-remote-%d", (int)getpid());
	snprintf(exe, sizeof(exe), "%s/%s", l.dir, name);
	snprintf(cmd, sizeof(cmd), "cp /bin/sleep '%s'", exe);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(rq.names[0], HP_NAME_MAX, "check_hp_trace");
	snprintf(rq.names[1], HP_NAME_MAX, "%s", name);
	snprintf(want, sizeof(want), "check_hp_trace,%s", name);
	ck_assert_int_gt(kid = tu_spawn_gated(argv, &gate), 0);
	ck_assert_int_eq(write(gate, "g", 1), 1); /* it execs now */
	close(gate);
	tu_sleep_ms(100);
	lib_session_rq(&l, &rq, &r);
	ck_assert_str_eq(r.target, want);
	ck_assert_str_eq(r.target_key, "check_hp_trace");
	ck_assert_msg(!strcmp(r.outcome, "completed"), "%s: %s", r.outcome,
	    r.message);
	ck_assert_msg(strstr(r.message, "dumps; pid ") != NULL, "%s",
	    r.message);
	/* the last process found has no dump: no profile */
	fake_kind(&l, "missing");
	lib_session_rq(&l, &rq, &r);
	ck_assert_msg(!strcmp(r.outcome, "no_profile"), "%s: %s", r.outcome,
	    r.message);
	ck_assert_msg(strstr(r.message, ": 0 dumps") != NULL, "%s", r.message);
	/* a name without a process is refused */
	snprintf(rq.names[1], HP_NAME_MAX, "no-such-process-here");
	{
		struct hp_answer a;

		ck_assert_int_eq(heapprofd_start(l.hp, &rq, &a), 0);
		ck_assert_int_eq(a.refusal, HP_REFUSE_INVALID);
		ck_assert_ptr_nonnull(strstr(a.message,
		    "no running process named 'no-such-process-here'"));
		vbuf_release(&a.text);
	}
	lib_close(&l);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
}
END_TEST

START_TEST(test_sessions_failed_unchecked)
{
	char p[PATH_MAX + 8];
	struct hp_record r;
	struct hp_stats st;
	struct lib l;
	unsigned i;

	lib_open(&l, NULL);
	snprintf(p, sizeof(p), "%s/mode", l.fp);
	ck_assert_int_eq(tu_writes(p, "exit 1 0"), 0);
	lib_session(&l, &r);
	ck_assert_str_eq(r.outcome, "failed");
	heapprofd_get_stats(l.hp, &st);
	for (i = 0; i < HP_PROF__MAX; i++)
		ck_assert_uint_eq(st.profiles[i], 0);
	ck_assert_uint_eq(st.failed, 1);
	lib_close(&l);
}
END_TEST

START_TEST(test_expire_plan)
{
	const int64_t now = 1000000 * NSEC_PER_SEC, day = 86400 * NSEC_PER_SEC;
	struct hp_trace_file f[] = {
		{ .id = 4, .mtime_ns = now - 1 * day, .bytes = 300 },
		{ .id = 1, .mtime_ns = now - 9 * day, .bytes = 100 },
		{ .id = 3, .mtime_ns = now - 2 * day, .bytes = 500 },
		{ .id = 2, .mtime_ns = now - 3 * day, .bytes = 400 },
		{ .id = 5, .mtime_ns = now, .bytes = 2000 },
	};
	enum hp_expire_why why[5];

	/* a week: 1 by age; 1000 bytes: 2, 3, 4 by size, oldest first;
	 * the newest (5) stays though it alone is over the bound */
	hp_expire_plan(f, 5, now, 7 * 86400, 1000, 0, why);
	ck_assert_int_eq(f[0].id, 1);
	ck_assert_int_eq(why[0], HP_EXPIRE_AGE);
	ck_assert_int_eq(why[1], HP_EXPIRE_SIZE);
	ck_assert_int_eq(why[2], HP_EXPIRE_SIZE);
	ck_assert_int_eq(why[3], HP_EXPIRE_SIZE);
	ck_assert_int_eq(why[4], HP_EXPIRE_KEEP);
	/* 3000 bytes: only what passes it (2: 3300 - 400 fits) */
	hp_expire_plan(f, 5, now, 7 * 86400, 3000, 0, why);
	ck_assert_int_eq(why[1], HP_EXPIRE_SIZE);
	ck_assert_int_eq(why[2], HP_EXPIRE_KEEP);
	/* the running session is kept, by age too; 0: no bound */
	hp_expire_plan(f, 5, now, 7 * 86400, 0, 1, why);
	ck_assert_int_eq(why[0], HP_EXPIRE_KEEP);
	ck_assert_int_eq(why[1], HP_EXPIRE_KEEP);
	hp_expire_plan(f, 5, now, 0, 0, 0, why);
	ck_assert_int_eq(why[0], HP_EXPIRE_KEEP);
	hp_expire_plan(f, 0, now, 1, 1, 0, why);
}
END_TEST

static void
plant(const char *dir, const char *name, size_t bytes, int64_t age_s)
{
	char p[PATH_MAX], *buf;
	struct timespec ts[2];

	snprintf(p, sizeof(p), "%s/heapprofd/%s", dir, name);
	ck_assert_ptr_nonnull(buf = calloc(1, bytes + 1));
	ck_assert_int_eq(tu_write(p, buf, bytes), 0);
	free(buf);
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static bool
exists(const char *dir, const char *name)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/heapprofd/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* Files 0600 in a 0700 directory; an old 0750 directory tightened. */
START_TEST(test_trace_modes)
{
	char p[PATH_MAX + 64];
	struct hp_record r;
	struct stat sb;
	struct lib l;

	/* made 0700 whatever the umask */
	umask(0);
	lib_open(&l, NULL);
	umask(022);
	snprintf(p, sizeof(p), "%s/heapprofd", l.dir);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0700);
	/* as an older vitalsd made it: tightened at the next session */
	ck_assert_int_eq(chmod(p, 0750), 0);
	lib_session(&l, &r);
	ck_assert_str_eq(r.outcome, "completed");
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0700);
	ck_assert_int_eq(stat(r.output_path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	snprintf(p, sizeof(p), "%s/heapprofd/session-%lld.log", l.dir,
	    (long long)r.id);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 07777, 0600);
	lib_close(&l);
}
END_TEST

START_TEST(test_expire_age)
{
	static const char *const keys[] = { "heapprofd_trace_max_age_s",
		"86400", NULL };
	struct hp_record r;
	struct hp_stats st;
	struct lib l;

	lib_open(&l, keys);
	/* two days old, an hour old, and not a session's */
	plant(l.dir, "session-900.pftrace", 1000, 2 * 86400);
	plant(l.dir, "session-900.log", 10, 2 * 86400);
	plant(l.dir, "session-901.pftrace", 500, 3600);
	plant(l.dir, "notes.pftrace", 100, 30 * 86400);
	plant(l.dir, "session-x.log", 100, 30 * 86400);
	lib_session(&l, &r);
	ck_assert(!exists(l.dir, "session-900.pftrace"));
	ck_assert(!exists(l.dir, "session-900.log"));
	ck_assert(exists(l.dir, "session-901.pftrace"));
	ck_assert(exists(l.dir, "notes.pftrace"));
	ck_assert(exists(l.dir, "session-x.log"));
	ck_assert(access(r.output_path, F_OK) == 0);
	heapprofd_get_stats(l.hp, &st);
	ck_assert_uint_eq(st.expired_age_files, 2);
	ck_assert_uint_eq(st.expired_size_files, 0);
	ck_assert_uint_eq(st.expired_bytes, 1010);
	ck_assert_uint_eq(st.expire_errors, 0);
	/* left: 901's trace, the session's trace and (empty) log */
	ck_assert_uint_eq(st.trace_files, 3);
	ck_assert_uint_eq(st.trace_bytes, 500 + (uint64_t)r.output_bytes);
	lib_close(&l);
}
END_TEST

START_TEST(test_expire_size)
{
	static const char *const keys[] = { "heapprofd_trace_max_bytes", "4K",
		NULL };
	struct hp_record r1, r2;
	struct hp_stats st;
	struct lib l;

	lib_open(&l, keys);
	lib_session(&l, &r1);
	heapprofd_get_stats(l.hp, &st);
	ck_assert_uint_eq(st.expired_size_files, 0);
	/* a big newer file: the older session goes, the newest stays
	 * though it alone passes the bound */
	plant(l.dir, "session-5000.pftrace", 6000, 0);
	lib_session(&l, &r2);
	heapprofd_get_stats(l.hp, &st);
	ck_assert(access(r1.output_path, F_OK) < 0);
	ck_assert(access(r2.output_path, F_OK) < 0);
	ck_assert(exists(l.dir, "session-5000.pftrace"));
	ck_assert_uint_eq(st.expired_size_files, 4); /* two traces, logs */
	ck_assert_uint_eq(st.expired_bytes,
	    (uint64_t)(r1.output_bytes + r2.output_bytes));
	ck_assert_uint_eq(st.trace_files, 1);
	ck_assert_uint_eq(st.trace_bytes, 6000);
	ck_assert_uint_eq(st.expired_age_files, 0);
	lib_close(&l);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("hp_trace");
	TCase *tc = tcase_create("decoder");

	tcase_add_test(tc, test_verdict_flags);
	tcase_add_test(tc, test_verdict_targets);
	tcase_add_test(tc, test_verdict_cuts);
	tcase_add_test(tc, test_verdict_malformed);
	tcase_add_test(tc, test_verdict_file);
	tcase_add_test(tc, test_expire_plan);
	suite_add_tcase(s, tc);
	tc = tcase_create("sessions");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sessions_each_outcome);
	tcase_add_test(tc, test_sessions_failed_unchecked);
	tcase_add_test(tc, test_sessions_names);
	tcase_add_test(tc, test_trace_modes);
	tcase_add_test(tc, test_expire_age);
	tcase_add_test(tc, test_expire_size);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}
