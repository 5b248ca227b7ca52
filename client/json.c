/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON output. The emitter is small on purpose (no dependency); messages are
 * walked through their protobuf-c descriptors so every raw field appears
 * under its .proto name, and the figures of doc/metrics.md are added beside
 * them. As in proto3's canonical JSON, every 64-bit integer (ns stamps,
 * counters, bytes) is a decimal string, so no reader's double rounds it;
 * 32-bit integers are numbers. An object with a count of pages carries the
 * page size in bytes beside it. Unknown values (a gauge with no reading,
 * max_khz −1, the aggregate line's frequency and capacity, a PSI file that
 * does not exist, a zero denominator, each sentinel the protocol defines)
 * are null, never 0 (doc/protocol.md, "JSON").
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"

/* Length of the valid UTF-8 sequence at s (RFC 3629), 0 if invalid. */
static size_t
utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0; /* continuation byte, overlong lead, or > U+10FFFF */
	/* second byte ranges that exclude overlongs, surrogates, > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * A JSON string literal with its quotes. Valid UTF-8 passes through;
 * each byte that does not start a valid sequence becomes U+FFFD, so the
 * output is always valid UTF-8 JSON whatever a comm or cmdline held.
 */
void
json_escape(struct sbuf *o, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	sbuf_putc(o, '"');
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		switch (c) {
		case '"':
			sbuf_puts(o, "\\\"");
			i++;
			continue;
		case '\\':
			sbuf_puts(o, "\\\\");
			i++;
			continue;
		case '\b':
			sbuf_puts(o, "\\b");
			i++;
			continue;
		case '\f':
			sbuf_puts(o, "\\f");
			i++;
			continue;
		case '\n':
			sbuf_puts(o, "\\n");
			i++;
			continue;
		case '\r':
			sbuf_puts(o, "\\r");
			i++;
			continue;
		case '\t':
			sbuf_puts(o, "\\t");
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			sbuf_printf(o, "\\u%04x", c);
			i++;
			continue;
		}
		if ((n = utf8_seq(s + i, len - i)) == 0) {
			sbuf_puts(o, "\\ufffd");
			i++;
			continue;
		}
		sbuf_put(o, (const char *)s + i, n);
		i += n;
	}
	sbuf_putc(o, '"');
}

void
json_init(struct json *j, struct sbuf *o)
{
	memset(j, 0, sizeof(*j));
	j->o = o;
}

/* The separator and, inside an object, the key. */
static void
json_key(struct json *j, const char *key)
{
	if (j->comma[j->depth])
		sbuf_putc(j->o, ',');
	j->comma[j->depth] = true;
	if (key) {
		json_escape(j->o, key, strlen(key));
		sbuf_putc(j->o, ':');
	}
}

static void
json_open(struct json *j, const char *key, char c)
{
	json_key(j, key);
	sbuf_putc(j->o, c);
	if (j->depth + 1 < sizeof(j->comma) / sizeof(j->comma[0]))
		j->depth++;
	j->comma[j->depth] = false;
}

static void
json_close(struct json *j, char c)
{
	sbuf_putc(j->o, c);
	if (j->depth > 0)
		j->depth--;
}

void
json_obj_begin(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void
json_obj_end(struct json *j)
{
	json_close(j, '}');
}

void
json_arr_begin(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void
json_arr_end(struct json *j)
{
	json_close(j, ']');
}

void
json_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	if (s == NULL)
		sbuf_puts(j->o, "null");
	else
		json_escape(j->o, s, strlen(s));
}

/* 64-bit integers: strings, as proto3's canonical JSON writes them. */
void
json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	sbuf_printf(j->o, "\"%" PRIu64 "\"", v);
}

void
json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	sbuf_printf(j->o, "\"%" PRId64 "\"", v);
}

/* 32-bit integers: numbers, exact in every reader. */
void
json_i32(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	sbuf_printf(j->o, "%" PRId64, v);
}

/* Shortest of %.15g / %.17g that reads back exactly; NaN and ±inf: null. */
void
json_double(struct json *j, const char *key, double v)
{
	char buf[32];

	json_key(j, key);
	if (!isfinite(v)) {
		sbuf_puts(j->o, "null");
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	sbuf_puts(j->o, buf);
}

void
json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	sbuf_puts(j->o, v ? "true" : "false");
}

void
json_null(struct json *j, const char *key)
{
	json_key(j, key);
	sbuf_puts(j->o, "null");
}

/* ------------------------------------------------------------ messages */

/* What derived figures need from enclosing messages. */
struct jctx {
	unsigned page_size; /* bytes, beside every count of pages */
	uint32_t hz;	    /* Window, TaskList, HistoryPoint */
	uint64_t wall_ns;   /* the window's Σ Δmono (all.wall_ns) */
	int64_t span_ns;    /* mono_end_ns − mono_start_ns */
	size_t points;	    /* GpuMem: window_end_wall_ns's count */
	/* the field of the enclosing message this one is written under (NULL:
	 * the top object, or an element of a repeated field) */
	const char *field;
};

static void json_msg(struct json *j, const char *key, const ProtobufCMessage *m,
    struct jctx c);

#define IS(m, name) ((m)->descriptor == &vitals__##name##__descriptor)

static bool
named(const ProtobufCFieldDescriptor *f, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(f->name, *names) == 0)
			return true;
	return false;
}

static bool
cgroup_has(const Vitals__Cgroup *g, const char *src)
{
	size_t i;

	for (i = 0; i < g->n_sources; i++)
		if (strcmp(g->sources[i], src) == 0)
			return true;
	return false;
}

/* A CPU line's field: the aggregate has no frequency, capacity or online
 * state of its own (the daemon sends 0 there); −1 is unknown. */
static bool
cpu_unknown(const Vitals__Cpu *c, const ProtobufCFieldDescriptor *f)
{
	static const char *const own[] = { "max_khz", "capacity", "online",
		"cur_khz", "freq_ratio", NULL };

	if (c->cpu < 0 && named(f, own))
		return true;
	if (strcmp(f->name, "max_khz") == 0)
		return c->max_khz < 0;
	if (strcmp(f->name, "capacity") == 0)
		return c->capacity < 0;
	return false;
}

/* A group's figures from a file it lacks, and deltas of its first walk. */
static bool
cgroup_unknown(const Vitals__Cgroup *g, const ProtobufCFieldDescriptor *f)
{
	static const char *const cpu[] = { "d_usage_us", "d_user_us",
		"d_system_us", NULL };
	static const char *const thr[] = { "d_nr_periods", "d_nr_throttled",
		"d_throttled_us", NULL };
	static const char *const mem[] = { "d_pgfault", "d_pgmajfault", NULL };

	if (strcmp(f->name, "uid") == 0)
		return g->uid < 0;
	if (strcmp(f->name, "pid") == 0)
		return g->pid < 0;
	if (strncmp(f->name, "d_", 2) == 0 && g->deltas == 0)
		return true;
	if (named(f, cpu))
		return !cgroup_has(g, "cpu.stat");
	if (named(f, thr))
		return !cgroup_has(g, "cpu.stat throttling");
	if (named(f, mem))
		return !cgroup_has(g, "memory.stat");
	return false;
}

static bool
psi_unknown(const Vitals__Psi *p, const ProtobufCFieldDescriptor *f)
{
	if (strcmp(f->name, "resource") == 0 ||
	    strcmp(f->name, "available") == 0 ||
	    strcmp(f->name, "have_full") == 0)
		return false;
	if (!p->available)
		return true;
	if (strncmp(f->name, "full", 4) == 0 ||
	    strcmp(f->name, "d_full_us") == 0)
		return !p->have_full;
	return false;
}

static bool
gpufreq_busy_known(const Vitals__GpuFreqDevice *d)
{
	return ((d->have & 8u) && d->total_us) ||
	    ((d->have & 16u) && d->busy_pct_n);
}

/* A GPU device's figure from a file it does not have (have bits, 1 cur,
 * 2 min_hz, 4 max_hz, 8 gpubusy, 16 busy %, 32 time in state). */
static bool
gpufreq_unknown(const Vitals__GpuFreqDevice *d,
    const ProtobufCFieldDescriptor *f)
{
	static const char *const cur[] = { "cur_min_hz", "cur_max_hz",
		"cur_sum_hz", "cur_n", NULL };
	static const char *const busy[] = { "busy_us", "total_us", NULL };
	static const char *const pct[] = { "busy_pct_sum", "busy_pct_n", NULL };

	if (named(f, cur))
		return !(d->have & 1u);
	if (strcmp(f->name, "min_hz") == 0)
		return !(d->have & 2u);
	if (strcmp(f->name, "max_hz") == 0)
		return !(d->have & 4u);
	if (named(f, busy))
		return !(d->have & 8u);
	if (named(f, pct))
		return !(d->have & 16u);
	if (strcmp(f->name, "busy_ppm") == 0)
		return !gpufreq_busy_known(d);
	if (strcmp(f->name, "states") == 0)
		return !(d->have & 32u);
	return false;
}

/*
 * A field whose value means "unknown" in the protocol (its comment in
 * vitals.proto says which value): printed null. doc/protocol.md lists them.
 */
static bool
field_unknown(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
    const struct jctx *c)
{
	/* the priority lends are counted for the writer's moves only: in
	 * read_waits they do not apply (vitals.proto) */
	if (IS(m, store_waits))
		return (strcmp(f->name, "lent") == 0 ||
			   strcmp(f->name, "lend_denied") == 0) &&
		    (c->field == NULL || strcmp(c->field, "move_waits") != 0);
	if (IS(m, cpu))
		return cpu_unknown((const Vitals__Cpu *)m, f);
	if (IS(m, psi))
		return psi_unknown((const Vitals__Psi *)m, f);
	/* rq_p99 in the open top slot: no bound to give (-1) */
	if (IS(m, burst_firing))
		return strcmp(f->name, "value") == 0 &&
		    ((const Vitals__BurstFiring *)m)->value < 0;
	if (IS(m, cgroup))
		return cgroup_unknown((const Vitals__Cgroup *)m, f);
	if (IS(m, gpu_freq_device))
		return gpufreq_unknown((const Vitals__GpuFreqDevice *)m, f);
	if (IS(m, task)) {
		const Vitals__Task *t = (const Vitals__Task *)m;

		if (strcmp(f->name, "uid") == 0)
			return t->uid == VITALS_UID_UNKNOWN;
		/* wtd_source "": no capacity-weighted figure */
		if (strcmp(f->name, "wtd_ticks") == 0)
			return t->wtd_source == NULL || *t->wtd_source == '\0';
		return false;
	}
	if (IS(m, sched_task)) {
		const Vitals__SchedTask *t = (const Vitals__SchedTask *)m;

		if (strcmp(f->name, "uid") == 0)
			return t->uid == VITALS_UID_UNKNOWN;
		if (strcmp(f->name, "name") == 0)
			return t->name == NULL || *t->name == '\0';
		/* no histogram (no waits, or windows stored before threads
		 * had one): no quantile */
		if (strcmp(f->name, "rq_p50_ns") == 0 ||
		    strcmp(f->name, "rq_p99_ns") == 0)
			return t->n_rq_hist == 0;
		return false;
	}
	if (IS(m, sched_uid)) {
		const Vitals__SchedUid *u = (const Vitals__SchedUid *)m;

		if (strcmp(f->name, "rq_p50_ns") == 0 ||
		    strcmp(f->name, "rq_p99_ns") == 0)
			return u->n_rq_hist == 0;
		return false;
	}
	if (IS(m, syscalls_answer)) {
		const Vitals__SyscallsAnswer *a =
		    (const Vitals__SyscallsAnswer *)m;

		/* BPF stats off in a window folded: no run time */
		if (strncmp(f->name, "prog_run_", 9) == 0)
			return !a->have_prog_stats;
		/* no part: no ABI */
		if (strcmp(f->name, "arch") == 0)
			return a->arch == NULL || *a->arch == '\0';
		return false;
	}
	if (IS(m, syscall_health)) {
		const Vitals__SyscallHealth *h =
		    (const Vitals__SyscallHealth *)m;

		/* BPF stats off in the last window: no run time */
		if (strncmp(f->name, "prog_run_", 9) == 0)
			return !h->have_prog_stats;
		/* no ring buffer (off, or the platform loader's pins) */
		if (strncmp(f->name, "ring_", 5) == 0)
			return h->ring_bytes == 0;
		return false;
	}
	if (IS(m, syscall_row) || IS(m, syscall_slow)) {
		const char *name = IS(m, syscall_row) ?
		    ((const Vitals__SyscallRow *)m)->name :
		    ((const Vitals__SyscallSlow *)m)->name;

		/* a number the name table does not know */
		if (strcmp(f->name, "name") == 0)
			return name == NULL || *name == '\0';
		/* no call: no mean or percentile */
		if (IS(m, syscall_row) &&
		    (strcmp(f->name, "mean_ns") == 0 ||
			strncmp(f->name, "p9", 2) == 0 ||
			strcmp(f->name, "p50_ns") == 0))
			return ((const Vitals__SyscallRow *)m)->count == 0;
		return false;
	}
	if (IS(m, memory_health)) {
		const Vitals__MemoryHealth *h = (const Vitals__MemoryHealth *)m;
		/* have_status bits 1-128, the last two smaps's; 256 its
		 * Pss lines */
		static const char *const status[] = { "rss_bytes",
			"peak_rss_bytes", "anon_bytes", "file_bytes",
			"shmem_bytes", "threads", "program_bytes",
			"libraries_bytes" };
		unsigned k;

		/* malloc gave no account (have_heap), the kernel no line */
		if (strncmp(f->name, "heap_", 5) == 0)
			return !h->have_heap;
		if (strcmp(f->name, "program_dirty_bytes") == 0)
			return !(h->have_status & 64);
		if (strcmp(f->name, "pss_bytes") == 0 ||
		    strcmp(f->name, "libraries_pss_bytes") == 0)
			return !(h->have_status & 256);
		for (k = 0; k < 8; k++)
			if (strcmp(f->name, status[k]) == 0)
				return !(h->have_status & (1u << k));
		return false;
	}
	if (IS(m, config_health)) {
		const Vitals__ConfigHealth *c = (const Vitals__ConfigHealth *)m;

		/* no reload yet: no last one */
		if (strcmp(f->name, "last_wall_ns") == 0 ||
		    strcmp(f->name, "last") == 0)
			return c->reloads == 0;
		return false;
	}
	if (IS(m, otlp_health))
		/* no attempt yet: no status (-1, no answer, is one) */
		return strcmp(f->name, "last_status") == 0 &&
		    ((const Vitals__OtlpHealth *)m)->last_status == 0;
	if (IS(m, trace_binder_txn)) {
		const Vitals__TraceBinderTxn *b =
		    (const Vitals__TraceBinderTxn *)m;

		/* no latency paired: no quantile */
		if (strcmp(f->name, "recv_p50_ns") == 0 ||
		    strcmp(f->name, "recv_p99_ns") == 0)
			return b->n_recv_hist == 0;
		if (strcmp(f->name, "reply_p50_ns") == 0 ||
		    strcmp(f->name, "reply_p99_ns") == 0)
			return b->n_reply_hist == 0;
		return false;
	}
	if (IS(m, trace_slice))
		return strcmp(f->name, "pid") == 0 &&
		    ((const Vitals__TraceSlice *)m)->pid < 0;
	if (IS(m, gpu_proc))
		return strcmp(f->name, "starttime") == 0 &&
		    ((const Vitals__GpuProc *)m)->starttime == 0;
	if (IS(m, heapprofd_session)) {
		const Vitals__HeapprofdSession *h =
		    (const Vitals__HeapprofdSession *)m;

		if (strcmp(f->name, "end_wall_ns") == 0)
			return h->end_wall_ns == 0;
		if (strcmp(f->name, "start_wall_ns") == 0)
			return !h->started;
		if (strcmp(f->name, "exit_status") == 0)
			return h->exit_status < 0;
		if (strcmp(f->name, "output_bytes") == 0)
			return h->output_bytes < 0;
		return false;
	}
	if (IS(m, window_health)) {
		static const char *const late[] = { "tick_late_ns_max",
			"tick_late_ns_sum", "tick_late_ns_p99", "stat_fds",
			"stat_fd_reads", "stat_opens", "stat_fd_full",
			"lists_read", "lists_skipped", "loop_cb_ns_max",
			"loop_cb_what", "loop_cb_over_1ms", "loop_cb_cpu_ns",
			"tick_late_held_ns_sum", "tick_late_runq_ns_sum",
			"tick_late_max_held_ns", "tick_late_max_runq_ns",

			"samples_full", "samples_partial", "partial_records",
			"partial_doubts", "partial_why", "partial_err",
			"partial_gone_unknown", "ident_queued", "ident_done",
			"ident_full", "ident_stale", "ident_loop",
			"ident_pending", "walks_off_loop", "walks_dropped",
			"walk_wait_ns_max", NULL };

		const Vitals__WindowHealth *wh =
		    (const Vitals__WindowHealth *)m;

		/* no schedstat: the CPU wait is not known */
		if (wh->tick_late_runq_absent &&
		    (strcmp(f->name, "tick_late_runq_ns_sum") == 0 ||
			strcmp(f->name, "tick_late_max_runq_ns") == 0))
			return true;
		/* kept in memory only: a stored window has no histogram */
		return named(f, late) && wh->n_tick_late_hist == 0;
	}
	if (IS(m, store_health)) {
		const Vitals__StoreHealth *h = (const Vitals__StoreHealth *)m;
		static const char *const hist[] = { "history_wall_first_ns",
			"history_wall_last_ns", NULL };

		if (strcmp(f->name, "io_bytes_per_day") == 0)
			return h->io_span_ns <= 0;
		if (strcmp(f->name, "bound_holds_ns") == 0)
			return h->bound_holds_ns == 0;
		return named(f, hist) && h->history_windows == 0;
	}
	if (IS(m, wss_region)) {
		const Vitals__WssRegion *r = (const Vitals__WssRegion *)m;
		static const char *const pass[] = { "resident", "accessed",
			"idle", "not_resident", "moved", NULL };

		return named(f, pass) && (r->gone || !r->sampled);
	}
	return false;
}

static void
json_field(struct json *j, const ProtobufCMessage *m,
    const ProtobufCFieldDescriptor *f, const void *p, const char *key,
    struct jctx c)
{
	const ProtobufCEnumValue *ev;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		json_i32(j, key, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		json_i32(j, key, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		json_i64(j, key, *(const int64_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		json_u64(j, key, *(const uint64_t *)p);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		json_double(j, key, *(const float *)p);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		json_double(j, key, *(const double *)p);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		json_bool(j, key, *(const protobuf_c_boolean *)p != 0);
		break;
	case PROTOBUF_C_TYPE_ENUM:
		ev = protobuf_c_enum_descriptor_get_value(f->descriptor,
		    *(const int *)p);
		if (ev)
			json_str(j, key, ev->name);
		else
			json_i32(j, key, *(const int *)p);
		break;
	case PROTOBUF_C_TYPE_STRING:
		json_str(j, key, *(char *const *)p);
		break;
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *b = p;
		size_t i;

		json_key(j, key);
		sbuf_putc(j->o, '"');
		for (i = 0; i < b->len; i++)
			sbuf_printf(j->o, "%02x", b->data[i]);
		sbuf_putc(j->o, '"');
		break;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		/* an element of a repeated field is under no field of its own */
		c.field = key;
		json_msg(j, key, *(ProtobufCMessage *const *)p, c);
		break;
	}
	(void)m;
}

static size_t
field_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return 4;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_FLOAT:
		return sizeof(float);
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_ENUM:
		return sizeof(int);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	}
	return 0;
}

/* A field counts pages (rss_pages_max, pages_lost, pages, ...). */
static bool
has_pages(const ProtobufCMessageDescriptor *d)
{
	unsigned i;

	for (i = 0; i < d->n_fields; i++)
		if (strstr(d->fields[i].name, "pages"))
			return true;
	return false;
}

static void
json_derived(struct json *j, const ProtobufCMessage *m, struct jctx c)
{
	if (IS(m, gauge)) {
		json_double(j, "avg", fig_gauge_avg((const Vitals__Gauge *)m));
	} else if (IS(m, cpu)) {
		const Vitals__Cpu *p = (const Vitals__Cpu *)m;
		uint64_t total = fig_cpu_total(p->d), busy = fig_cpu_busy(p->d);

		if (p->d) {
			json_u64(j, "total", total);
			json_u64(j, "busy", busy);
		} else { /* no times: unknown, not 0 */
			json_null(j, "total");
			json_null(j, "busy");
		}
		json_double(j, "busy_share", fig_ratio(busy, total));
		json_double(j, "iowait_share",
		    fig_ratio(p->d ? p->d->iowait : 0, total));
		json_double(j, "steal_share",
		    fig_ratio(p->d ? p->d->steal : 0, total));
	} else if (IS(m, task)) {
		const Vitals__Task *t = (const Vitals__Task *)m;
		uint64_t cpu = t->d_utime + t->d_stime;

		json_u64(j, "cpu_ticks", cpu);
		json_double(j, "core_equiv",
		    fig_core_equiv(cpu, t->wall_ns, c.hz));
		json_double(j, "machine_share",
		    fig_machine_share(cpu, t->total_ticks));
		json_double(j, "normalised",
		    fig_normalised(cpu, t->norm_ticks));
	} else if (IS(m, psi)) {
		const Vitals__Psi *p = (const Vitals__Psi *)m;

		json_double(j, "some_share",
		    p->available ? fig_psi_share(p->d_some_us, c.wall_ns) :
				   NAN);
		json_double(j, "full_share",
		    p->available && p->have_full ?
			fig_psi_share(p->d_full_us, c.wall_ns) :
			NAN);
	} else if (IS(m, gpu_freq_device)) {
		/* the means the client would otherwise divide for */
		const Vitals__GpuFreqDevice *d =
		    (const Vitals__GpuFreqDevice *)m;

		if ((d->have & 1u) && d->cur_n)
			json_u64(j, "cur_mean_hz", d->cur_sum_hz / d->cur_n);
		else
			json_null(j, "cur_mean_hz");
		json_double(j, "busy_share",
		    gpufreq_busy_known(d) ? (double)d->busy_ppm / 1e6 : NAN);
	} else if (IS(m, gpu_proc) && c.points > 0) {
		/* series_bytes laid on the span's points: null where the
		 * instance had no row (a gap, not 0 bytes) */
		const Vitals__GpuProc *p = (const Vitals__GpuProc *)m;
		size_t n = p->n_series_bytes, i, k = 0;

		if (p->n_series_index < n)
			n = p->n_series_index;
		json_arr_begin(j, "series");
		for (i = 0; i < c.points; i++) {
			while (k < n && p->series_index[k] < i)
				k++;
			if (k < n && p->series_index[k] == i)
				json_u64(j, NULL, p->series_bytes[k]);
			else
				json_null(j, NULL);
		}
		json_arr_end(j);
	} else if (IS(m, window_health)) {
		json_double(j, "self_core_equiv",
		    fig_self_core_equiv((const Vitals__WindowHealth *)m,
			c.span_ns));
	}
}

static void
json_msg(struct json *j, const char *key, const ProtobufCMessage *m,
    struct jctx c)
{
	const ProtobufCMessageDescriptor *d;
	unsigned i;

	/* An absent message, or a gauge that never had a reading. */
	if (m == NULL || (IS(m, gauge) && ((const Vitals__Gauge *)m)->n == 0)) {
		json_null(j, key);
		return;
	}
	d = m->descriptor;
	if (IS(m, window)) {
		const Vitals__Window *w = (const Vitals__Window *)m;

		c.hz = w->hz;
		c.wall_ns = w->all ? w->all->wall_ns : 0;
		c.span_ns = w->mono_end_ns - w->mono_start_ns;
	} else if (IS(m, task_list)) {
		c.hz = ((const Vitals__TaskList *)m)->hz;
	} else if (IS(m, history_point)) {
		c.hz = ((const Vitals__HistoryPoint *)m)->hz;
	} else if (IS(m, gpu_mem)) {
		c.points = ((const Vitals__GpuMem *)m)->n_window_end_wall_ns;
	}
	json_obj_begin(j, key);
	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;
		const void *p = base + f->offset;

		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
			/* only the member that is set, under its own name */
			if (*(const uint32_t *)(base + f->quantifier_offset) !=
			    f->id)
				continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED &&
		    IS(m, gpu_freq_device) && field_unknown(m, f, &c)) {
			json_null(j, f->name); /* no trans_stat: not [] */
			continue;
		}
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(
			    const size_t *)(base + f->quantifier_offset);
			const char *arr = *(char *const *)p;
			size_t k, sz = field_size(f);

			json_arr_begin(j, f->name);
			for (k = 0; k < n; k++)
				json_field(j, m, f, arr + k * sz, NULL, c);
			json_arr_end(j);
			continue;
		}
		if (field_unknown(m, f, &c)) {
			json_null(j, f->name);
			continue;
		}
		json_field(j, m, f, p, f->name, c);
	}
	json_derived(j, m, c);
	if (has_pages(d))
		json_i32(j, "page_size", c.page_size);
	if (j->extra_key && j->depth == 1) {
		const char *k = j->extra_key;

		j->extra_key = NULL; /* the top object's alone */
		c.field = k;
		json_msg(j, k, j->extra, c);
	}
	json_obj_end(j);
}

void
json_response_page(struct sbuf *o, const Vitals__Response *resp,
    unsigned page_size)
{
	struct jctx c = { page_size, 0, 0, 0, 0, NULL };
	struct json j;

	json_init(&j, o);
	json_msg(&j, NULL, (const ProtobufCMessage *)resp, c);
	sbuf_putc(o, '\n');
}

/* The daemon is on this machine (a UNIX socket): its page size is ours. */
void
json_response(struct sbuf *o, const Vitals__Response *resp)
{
	long page = sysconf(_SC_PAGESIZE);

	json_response_page(o, resp, page > 0 ? (unsigned)page : 4096);
}

void
json_response_with(struct sbuf *o, const Vitals__Response *resp,
    const char *key, const ProtobufCMessage *extra)
{
	long page = sysconf(_SC_PAGESIZE);
	struct jctx c = { page > 0 ? (unsigned)page : 4096, 0, 0, 0, 0, NULL };
	struct json j;

	json_init(&j, o);
	j.extra_key = key;
	j.extra = extra;
	json_msg(&j, NULL, (const ProtobufCMessage *)resp, c);
	sbuf_putc(o, '\n');
}
