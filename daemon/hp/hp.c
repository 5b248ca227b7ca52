/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapprofd sessions: a request (a trusted caller's, or a rule's at window
 * close) is checked — parameters, one session at a time, eligibility by
 * the platform's rules, budgets — then recorded, and the perfetto binary
 * runs as `perfetto -c - -o -`: the config on its stdin (a pipe), the trace
 * file and the log, opened here, as stdout and stderr. Under the daemon's
 * seccomp filter (no fork, no execve) the privileged helper's spawner runs
 * it and reports on a channel the loop watches; otherwise the daemon forks
 * it and watches a pidfd. Either way: a timeout (SIGTERM, then SIGKILL),
 * cancellation, exit status and output size into the record. A session a
 * restart finds "running" is closed with what happened. doc/heapprofd.md.
 * The running perfetto is hp_session.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "core/log.h"
#include "core/util.h"
#include "hp/hp.h"
#include "proc/proc.h"
#include "store/store.h"
#include "window/window.h"
#include "hp_int.h"
#include "core/sysprop.h"

#define HP_FIRES_MAX 16

/* ------------------------------------------------------------ /proc */

static int
proc_name(struct heapprofd *hp, int32_t pid, char *buf, size_t sz)
{
	struct vbuf b = { 0 };
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
	if ((r = read_at(hp->procfd, path, &b)) == 0)
		r = hp_normalize(b.p, b.len, buf, sz);
	vbuf_release(&b);
	return r;
}

static int
proc_status(struct heapprofd *hp, int32_t pid, struct pid_status *ret)
{
	struct vbuf b = { 0 };
	char path[32];
	int r;

	snprintf(path, sizeof(path), "%d/status", (int)pid);
	if ((r = read_at(hp->procfd, path, &b)) == 0)
		r = pidstatus_parse(b.p, b.len, ret);
	vbuf_release(&b);
	return r;
}

static int
eval_name_cb(void *arg, int32_t pid, char *buf, size_t sz)
{
	return proc_name(arg, pid, buf, sz);
}

static int
eval_anon_cb(void *arg, int32_t pid, uint64_t starttime, uint64_t *kb)
{
	struct heapprofd *hp = arg;
	struct pid_status s;
	uint64_t st;
	int r;

	if ((r = hp_proc_starttime(hp, pid, &st)) < 0)
		return r;
	if (st != starttime)
		return -ESRCH;
	if ((r = proc_status(hp, pid, &s)) < 0)
		return r;
	if (s.rss_anon_kb < 0)
		return -ENODATA;
	*kb = (uint64_t)s.rss_anon_kb;
	return 0;
}

static int
eval_gpu_cb(void *arg, const struct window *w, int32_t pid, uint64_t starttime,
    uint64_t *bytes)
{
	struct heapprofd *hp = arg;

	if (hp->gpu_bytes == NULL)
		return -ENOENT;
	return hp->gpu_bytes(hp->gpu_arg, w, pid, starttime, bytes);
}

/*
 * Calls fn for every numeric entry of the proc root until it returns
 * non-zero (which is returned; 0 at the end).
 */
static int
proc_each(struct heapprofd *hp,
    int (*fn)(struct heapprofd *hp, int32_t pid, void *arg), void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if ((fd = openat(hp->procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
	    0)
		return -errno;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 || pid > INT32_MAX)
			continue;
		r = fn(hp, (int32_t)pid, arg);
	}
	closedir(d);
	return r;
}

struct find {
	const char *name; /* by name: heapprofd's normalised name */
	uint32_t uid;	  /* by uid: effective */
	uint32_t *uids;	  /* by name: the matches' uids */
	int32_t *pids;	  /* by uid: the matches */
	unsigned max, n;
};

static int
find_name_cb(struct heapprofd *hp, int32_t pid, void *arg)
{
	struct find *f = arg;
	struct pid_status s;
	char n[HP_NAME_MAX];

	if (proc_name(hp, pid, n, sizeof(n)) < 0 || strcmp(n, f->name) != 0 ||
	    proc_status(hp, pid, &s) < 0)
		return 0;
	if (f->n < f->max) {
		f->uids[f->n] = s.euid;
		f->pids[f->n] = pid;
	}
	f->n++;
	return 0;
}

/* Every process whose normalised name is name: their effective uids and
 * pids (at most max). */
static int
find_by_name(struct heapprofd *hp, const char *name, uint32_t *uids,
    int32_t *pids, unsigned max, unsigned *ret_n)
{
	struct find f = { .name = name,
		.uids = uids,
		.pids = pids,
		.max = max };
	int r;

	if ((r = proc_each(hp, find_name_cb, &f)) < 0)
		return r;
	*ret_n = f.n < max ? f.n : max;
	return 0;
}

static int
find_uid_cb(struct heapprofd *hp, int32_t pid, void *arg)
{
	struct find *f = arg;
	struct pid_status s;

	/* kernel threads have no memory */
	if (proc_status(hp, pid, &s) < 0 || s.euid != f->uid || s.vm_rss_kb < 0)
		return 0;
	f->pids[f->n++] = pid;
	return f->n == f->max; /* full: stop */
}

/* Every process of uid (effective), at most max of them. */
static int
find_by_uid(struct heapprofd *hp, uint32_t uid, int32_t *pids, unsigned max,
    unsigned *ret_n)
{
	struct find f = { .uid = uid, .pids = pids, .max = max };
	int r;

	if (max == 0 || (r = proc_each(hp, find_uid_cb, &f)) < 0) {
		*ret_n = 0;
		return max == 0 ? 0 : r;
	}
	*ret_n = f.n;
	return 0;
}

/* ------------------------------------------------------------ records */

static void
params_line(const struct hp_params *p, char *buf, size_t sz)
{
	struct vbuf b = { 0 };
	unsigned i;

	vbuf_printf(&b,
	    "duration_ms=%u sampling_interval_bytes=%llu "
	    "shmem_size_bytes=%llu dump_interval_ms=%u block_client=%s",
	    p->duration_ms, (unsigned long long)p->sampling_interval_bytes,
	    (unsigned long long)p->shmem_size_bytes, p->dump_interval_ms,
	    p->block_client ? "on" : "off");
	if (p->no_startup)
		vbuf_printf(&b, " no_startup=on");
	if (p->no_running)
		vbuf_printf(&b, " no_running=on");
	if (p->adaptive_shmem_threshold)
		vbuf_printf(&b, " adaptive_sampling_shmem_threshold=%llu",
		    (unsigned long long)p->adaptive_shmem_threshold);
	if (p->adaptive_max_interval)
		vbuf_printf(&b,
		    " adaptive_sampling_max_sampling_interval_bytes=%llu",
		    (unsigned long long)p->adaptive_max_interval);
	if (p->max_heapprofd_memory_kb)
		vbuf_printf(&b, " max_heapprofd_memory_kb=%u",
		    p->max_heapprofd_memory_kb);
	if (p->max_heapprofd_cpu_secs)
		vbuf_printf(&b, " max_heapprofd_cpu_secs=%llu",
		    (unsigned long long)p->max_heapprofd_cpu_secs);
	for (i = 0; i < p->ninstalled_by; i++)
		vbuf_printf(&b, " target_installed_by=%s", p->installed_by[i]);
	snprintf(buf, sz, "%s", b.p ? b.p : "");
	vbuf_release(&b);
}

/* ------------------------------------------------------------ requests */

static enum hp_refusal refuse(struct hp_answer *ret, enum hp_refusal r,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum hp_refusal
refuse(struct hp_answer *ret, enum hp_refusal r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ret->message, sizeof(ret->message), fmt, ap);
	va_end(ap);
	ret->refusal = r;
	return r;
}

static void
build_params(const struct heapprofd *hp, const struct hp_request *rq,
    struct hp_params *p)
{
	const struct hp_rule *ru = rq->by_rule ? rq->rule : NULL;
	unsigned i;

	*p = hp->hs->defaults;
	p->npids = p->nnames = 0;
	if (ru) {
		if (ru->duration_ms)
			p->duration_ms = ru->duration_ms;
		if (ru->sampling_interval_bytes)
			p->sampling_interval_bytes =
			    ru->sampling_interval_bytes;
		if (ru->shmem_size_bytes)
			p->shmem_size_bytes = ru->shmem_size_bytes;
		if (ru->dump_interval_ms)
			p->dump_interval_ms = ru->dump_interval_ms;
	} else {
		if (rq->duration_ms)
			p->duration_ms = rq->duration_ms;
		if (rq->sampling_interval_bytes)
			p->sampling_interval_bytes =
			    rq->sampling_interval_bytes;
		if (rq->shmem_size_bytes)
			p->shmem_size_bytes = rq->shmem_size_bytes;
		if (rq->dump_interval_ms)
			p->dump_interval_ms = rq->dump_interval_ms;
		if (rq->block_client)
			p->block_client = true;
		if (rq->max_heapprofd_memory_kb)
			p->max_heapprofd_memory_kb =
			    rq->max_heapprofd_memory_kb;
		if (rq->max_heapprofd_cpu_secs)
			p->max_heapprofd_cpu_secs = rq->max_heapprofd_cpu_secs;
	}
	hp_params_dumps(p);
	p->ninstalled_by = hp->hs->policy.ninstalled_by;
	for (i = 0; i < p->ninstalled_by; i++)
		memcpy(p->installed_by[i], hp->hs->policy.installed_by[i],
		    HP_NAME_MAX);
}

static int
load_packages(struct heapprofd *hp, struct hp_packages *pk, bool *ret_have,
    char *why, size_t whysz)
{
	struct vbuf b = { 0 };
	int fd, r;

	*ret_have = false;
	if ((fd = open(hp->hs->packages_list, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		r = -errno;
		snprintf(why, whysz, "%s: %s", hp->hs->packages_list,
		    strerror(-r));
		return r;
	}
	r = read_fd_all(fd, &b);
	close(fd);
	if (r == 0)
		r = hp_packages_parse(b.p ? b.p : "", b.len, pk);
	vbuf_release(&b);
	if (r < 0)
		snprintf(why, whysz, "%s: %s", hp->hs->packages_list,
		    strerror(-r));
	else
		*ret_have = true;
	return r;
}

/*
 * Resolve the target, judge eligibility; fill params, the key and the
 * processes whose heap dumps the trace must hold (want).
 */
static enum hp_refusal
check_target(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_params *p, struct hp_record *rec, struct hp_want *want,
    struct hp_answer *ret)
{
	uint32_t uids[HP_PIDS_MAX];
	struct hp_packages pk = { 0 };
	enum hp_elig_why why;
	struct pid_status s;
	unsigned n = 0, i, m;
	char msg[160];
	bool have;
	int r;

	want->n = 0;
	if (rq->by_uid) {
		snprintf(rec->target, sizeof(rec->target), "uid %u", rq->uid);
		snprintf(rec->target_key, sizeof(rec->target_key), "uid:%u",
		    rq->uid);
		if (find_by_uid(hp, rq->uid, p->pids, HP_PIDS_MAX, &p->npids) <
			0 ||
		    p->npids == 0)
			return refuse(ret, HP_REFUSE_INVALID,
			    "no process of "
			    "uid %u",
			    rq->uid);
		uids[n++] = rq->uid;
		memcpy(want->pids, p->pids, p->npids * sizeof(p->pids[0]));
		want->n = p->npids;
	} else if (rq->pid > 0) {
		p->pids[p->npids++] = rq->pid;
		snprintf(rec->target, sizeof(rec->target), "pid %d",
		    (int)rq->pid);
		if (proc_status(hp, rq->pid, &s) < 0 ||
		    proc_name(hp, rq->pid, rec->target_key,
			sizeof(rec->target_key)) < 0)
			return refuse(ret, HP_REFUSE_INVALID,
			    "no process %d "
			    "(or its cmdline is unreadable)",
			    (int)rq->pid);
		uids[n++] = s.euid;
		want->pids[want->n++] = rq->pid;
	} else {
		/* several names (an app and its :remote process) in one
		 * session; the first is the budget key */
		size_t tl = 0;

		for (i = 0; i < rq->nnames && i < HP_PIDS_MAX; i++) {
			snprintf(p->names[p->nnames++], HP_NAME_MAX, "%s",
			    rq->names[i]);
			tl += (size_t)snprintf(rec->target + tl,
			    tl < sizeof(rec->target) ?
				sizeof(rec->target) - tl :
				0,
			    "%s%s", i ? "," : "", rq->names[i]);
			if (tl >= sizeof(rec->target))
				tl = sizeof(rec->target) - 1;
		}
		snprintf(rec->target_key, sizeof(rec->target_key), "%s",
		    rq->names[0]);
		if (hp_params_check(p, msg, sizeof(msg)) < 0)
			return refuse(ret, HP_REFUSE_INVALID, "%s", msg);
		for (i = 0; i < p->nnames; i++) {
			if (n >= HP_PIDS_MAX ||
			    (r = find_by_name(hp, p->names[i], uids + n,
				 want->pids + n, HP_PIDS_MAX - n, &m)) < 0 ||
			    m == 0)
				return refuse(ret, HP_REFUSE_INVALID,
				    "no running process named '%s'%s",
				    p->names[i],
				    n >= HP_PIDS_MAX ? " (or too many "
						       "processes)" :
						       "");
			n += m;
		}
		want->n = n;
	}
	if (hp_params_check(p, msg, sizeof(msg)) < 0)
		return refuse(ret, HP_REFUSE_INVALID, "%s", msg);
	if (load_packages(hp, &pk, &have, msg, sizeof(msg)) < 0)
		return refuse(ret, HP_REFUSE_NOT_ELIGIBLE, "%s", msg);
	for (i = 0; i < n; i++) {
		if (!hp_eligible(&hp->policy, have ? &pk : NULL, uids[i],
			&why)) {
			hp_packages_release(&pk);
			return refuse(ret, HP_REFUSE_NOT_ELIGIBLE,
			    "uid %u "
			    "(%s initiator): %s",
			    uids[i], hp_initiator_name(hp->policy.initiator),
			    hp_elig_why_name(why));
		}
	}
	hp_packages_release(&pk);
	return HP_OK;
}

/* From the records kept in memory (hp_record.c): no store read. */
static enum hp_refusal
check_budget(struct heapprofd *hp, const char *key, int64_t now,
    struct hp_answer *ret)
{
	const struct hp_budget_rec *recs;
	enum hp_refusal r;
	char why[200];
	int64_t retry = 0;
	size_t n = 0;

	recs = hp_budget_recs(hp, now, &n);
	r = hp_budget_check(&hp->hs->limits, recs, n, key, now, &retry, why,
	    sizeof(why));
	if (r != HP_OK)
		refuse(ret, r, "%s; next possible in %lld s", why,
		    (long long)((retry + NSEC_PER_SEC - 1) / NSEC_PER_SEC));
	return r;
}

static enum hp_refusal
decide(struct heapprofd *hp, const struct hp_request *rq, struct hp_params *p,
    struct hp_record *rec, struct hp_want *want, int64_t now,
    struct hp_answer *ret)
{
	enum hp_refusal r;

	if ((rq->pid > 0) + (rq->nnames > 0) + rq->by_uid != 1)
		return refuse(ret, HP_REFUSE_INVALID,
		    "give exactly one "
		    "target: a pid or names");
	if (rq->nnames > HP_PIDS_MAX)
		return refuse(ret, HP_REFUSE_INVALID, "more than %d names",
		    HP_PIDS_MAX);
	if (hp->store == NULL)
		return refuse(ret, HP_REFUSE_UNAVAILABLE,
		    "no store: session "
		    "budgets cannot be kept");
	if (hp->next_id == 0)
		return refuse(ret, HP_REFUSE_UNAVAILABLE,
		    "session records "
		    "not read yet (%s): budgets cannot be kept",
		    strerror(-hp->load_err));
	if (!rq->dry_run && hp->st.spawn != HP_SPAWN_DIRECT &&
	    hp->st.spawn != HP_SPAWN_HELPER)
		return refuse(ret, HP_REFUSE_UNAVAILABLE,
		    "sessions cannot run "
		    "(%s): %s",
		    hp_spawn_state_name(hp->st.spawn), hp->st.spawn_detail);
	build_params(hp, rq, p);
	if ((r = check_target(hp, rq, p, rec, want, ret)) != HP_OK)
		return r;
	if (hp->running)
		return refuse(ret, HP_REFUSE_IN_PROGRESS,
		    "session %lld is "
		    "running (one session at a time)",
		    (long long)hp->rec.id);
	return check_budget(hp, rec->target_key, now, ret);
}

int
heapprofd_start(struct heapprofd *hp, const struct hp_request *rq,
    struct hp_answer *ret)
{
	struct hp_record rec;
	struct hp_params p;
	struct hp_want want = { .n = 0 };
	int64_t now = hp_wall_now();
	uint8_t *cfg = NULL;
	size_t len = 0;
	char why[200];
	int e;

	memset(ret, 0, sizeof(*ret));
	memset(&rec, 0, sizeof(rec));
	memset(&p, 0, sizeof(p));
	rec.created_wall_ns = now;
	rec.by_rule = rq->by_rule;
	if (rq->by_rule && rq->rule)
		snprintf(rec.rule, sizeof(rec.rule), "%s", rq->rule->name);
	rec.caller_uid = rq->caller_uid;
	rec.exit_status = -1;
	rec.output_bytes = -1;
	hp->st.requests++;
	if (decide(hp, rq, &p, &rec, &want, now, ret) != HP_OK) {
		if (rq->dry_run)
			return 0;
		hp->st.refused[ret->refusal]++;
		hp->st.last_refusal = ret->refusal;
		snprintf(hp->st.last_message, sizeof(hp->st.last_message), "%s",
		    ret->message);
		params_line(&p, rec.params, sizeof(rec.params));
		snprintf(rec.outcome, sizeof(rec.outcome), "refused");
		rec.refusal = ret->refusal;
		snprintf(rec.message, sizeof(rec.message), "%s", ret->message);
		if (rec.target[0] == '\0')
			snprintf(rec.target, sizeof(rec.target), "%s",
			    rq->pid > 0	   ? "pid" :
				rq->nnames ? rq->names[0] :
					     "");
		if (hp->store && (rec.id = hp_record_id(hp)) > 0)
			(void)hp_record_put(hp, &rec, "refusal not recorded");
		ret->id = rec.id;
		return 0;
	}
	if (rq->dry_run) {
		hp->st.dry_runs++;
		snprintf(ret->message, sizeof(ret->message),
		    "dry run: would "
		    "start a session on %.200s",
		    rec.target);
		return hp_config_text(&p, &ret->text);
	}
	if ((e = hp_config_encode(&p, &cfg, &len)) < 0) {
		refuse(ret, HP_REFUSE_UNAVAILABLE, "config: %s", strerror(-e));
		hp->st.refused[ret->refusal]++;
		return 0;
	}
	params_line(&p, rec.params, sizeof(rec.params));
	rec.started = true;
	rec.start_wall_ns = now;
	snprintf(rec.outcome, sizeof(rec.outcome), "running");
	snprintf(rec.message, sizeof(rec.message), "%s",
	    rq->by_rule ? "started by rule" : "started by caller");
	/* Queued to the writer before the child exists, written ahead of
	 * any window: once committed (a few ms), a crash leaves a "running"
	 * row the next start closes. The budget is spent from now on. */
	rec.id = hp_record_id(hp);
	if ((e = hp_budget_note(hp, now, rec.target_key)) == 0 &&
	    (e = hp_record_put(hp, &rec, "session not recorded")) < 0)
		hp->nbudget--; /* not recorded, not started: nothing spent */
	if (e < 0) {
		free(cfg);
		refuse(ret, HP_REFUSE_UNAVAILABLE, "session not recorded: %s",
		    strerror(-e));
		hp->st.refused[ret->refusal]++;
		return 0;
	}
	hp->rec = rec;
	hp->want = want;
	if ((e = hp_session_spawn(hp, &p, cfg, len, why, sizeof(why))) < 0) {
		free(cfg);
		hp->rec.end_wall_ns = hp_wall_now();
		snprintf(hp->rec.outcome, sizeof(hp->rec.outcome),
		    "spawn failed");
		snprintf(hp->rec.message, sizeof(hp->rec.message), "%s", why);
		hp->st.spawn_failed++;
		(void)hp_record_put(hp, &hp->rec, "spawn failure not recorded");
		ret->id = hp->rec.id;
		snprintf(ret->message, sizeof(ret->message),
		    "perfetto did not "
		    "start: %s",
		    why);
		return 0;
	}
	free(cfg);
	hp->running = true;
	hp->st.running = true;
	hp->st.running_id = hp->rec.id;
	hp->st.started++;
	(void)hp_record_put(hp, &hp->rec, "child pid not recorded");
	hp_session_arm(hp, p.duration_ms + hp->hs->grace_ms);
	ret->id = hp->rec.id;
	snprintf(ret->output_path, sizeof(ret->output_path), "%s",
	    hp->rec.output_path);
	if (hp->sp)
		snprintf(ret->message, sizeof(ret->message),
		    "session %lld "
		    "started on %.180s: perfetto through the spawn helper",
		    (long long)hp->rec.id, hp->rec.target);
	else
		snprintf(ret->message, sizeof(ret->message),
		    "session %lld "
		    "started on %.180s: perfetto pid %d",
		    (long long)hp->rec.id, hp->rec.target, (int)hp->child);
	log_info("heapprofd: %s by %s%s (%s)", ret->message,
	    rq->by_rule ? "rule " : "uid ", rq->by_rule ? hp->rec.rule : "",
	    hp->rec.params);
	return 0;
}

int
heapprofd_cancel(struct heapprofd *hp, int64_t id, char *msg, size_t msgsz)
{
	char outcome[32];

	if (hp->running && hp->rec.id == id) {
		if (hp->stop == STOP_NONE)
			hp->stop = STOP_CANCEL;
		hp_session_term(hp);
		if (hp->child > 0)
			snprintf(msg, msgsz,
			    "session %lld: SIGTERM sent to "
			    "perfetto (pid %d), SIGKILL after %u ms",
			    (long long)id, (int)hp->child,
			    hp->hs->kill_after_ms);
		else
			snprintf(msg, msgsz,
			    "session %lld: SIGTERM to perfetto "
			    "as soon as the spawn helper reports it started, "
			    "SIGKILL after %u ms",
			    (long long)id, hp->hs->kill_after_ms);
		return 0;
	}
	/* from memory: the newest records' outcomes, and the ids given */
	if (hp_record_outcome(hp, id, outcome, sizeof(outcome))) {
		snprintf(msg, msgsz, "session %lld is not running (%s)",
		    (long long)id, outcome);
		return -EALREADY;
	}
	if (id > 0 && id < hp->next_id) {
		snprintf(msg, msgsz,
		    "session %lld is not running "
		    "(an older record: `vitals heapprofd list` shows it)",
		    (long long)id);
		return -EALREADY;
	}
	snprintf(msg, msgsz, "no session %lld", (long long)id);
	return -ENOENT;
}

void
heapprofd_note_denied(struct heapprofd *hp)
{
	hp->st.denied++;
}

void
heapprofd_get_stats(struct heapprofd *hp, struct hp_stats *ret)
{
	struct writer_rec_stats ws;

	*ret = hp->st;
	if (hp->wr) {
		writer_hp_stats(hp->wr, &ws);
		ret->records_queued = ws.queued;
		ret->records_written = ws.written;
		ret->records_dropped = ws.dropped;
		ret->records_failed = ws.failed;
	}
	ret->rules = hp->hs->nrules;
	ret->initiator = hp->policy.initiator;
	ret->build = hp->policy.build;
	if (hp->rules)
		hp_rules_stats(hp->rules, &ret->rs);
}

void
heapprofd_set_gpu(struct heapprofd *hp,
    int (*gpu_bytes)(void *arg, const struct window *w, int32_t pid,
	uint64_t starttime, uint64_t *bytes),
    void *arg)
{
	hp->gpu_bytes = gpu_bytes;
	hp->gpu_arg = arg;
}

/* Rules at each window close: a rule that holds asks for a session like a
 * caller would, and is refused for the same reasons. */
void
heapprofd_window(struct heapprofd *hp, const struct window *w)
{
	struct hp_fire f[HP_FIRES_MAX];
	struct hp_eval_ctx ctx = {
		.name = eval_name_cb,
		.anon_kb = eval_anon_cb,
		.gpu_bytes = eval_gpu_cb,
		.arg = hp,
		.page_size = hp->page_size,
	};
	struct hp_request rq;
	struct hp_answer a;
	size_t n = 0, i;

	hp_expire_tick(hp);
	if (hp->rules == NULL || hp->hs->nrules == 0)
		return;
	if (hp_rules_eval(hp->rules, w, &ctx, f, HP_FIRES_MAX, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		const struct hp_rule *ru = &hp->hs->rules[f[i].rule];

		memset(&rq, 0, sizeof(rq));
		rq.by_rule = true;
		rq.rule = ru;
		if (ru->tgt == HP_TGT_NAME) {
			snprintf(rq.names[0], sizeof(rq.names[0]), "%s",
			    ru->tgt_name);
			rq.nnames = 1;
		} else if (ru->tgt == HP_TGT_UID) {
			rq.by_uid = true;
			rq.uid = ru->tgt_uid;
		} else {
			rq.pid = f[i].pid;
		}
		(void)heapprofd_start(hp, &rq, &a);
		if (a.refusal == HP_OK)
			log_info("heapprofd: rule %s: %s (pid %d): %s",
			    ru->name, f[i].why, (int)f[i].pid, a.message);
		else
			log_info("heapprofd: rule %s held (%s, pid %d), "
				 "refused: %s: %s",
			    ru->name, f[i].why, (int)f[i].pid,
			    hp_refusal_name(a.refusal), a.message);
		vbuf_release(&a.text);
	}
}

/* ------------------------------------------------------------ lifetime */

/* Sessions recorded as running belong to an earlier vitalsd: nobody
 * watches their child any more. Close them honestly; a perfetto that is
 * still alive (same pid and start time) is stopped, its output kept. */
static void
close_stale(struct heapprofd *hp, struct hp_record *v, size_t n)
{
	char what[96];
	size_t i;
	uint64_t st;

	for (i = 0; i < n; i++) {
		struct hp_record *r = &v[i];
		bool alive = r->child_pid > 0 &&
		    hp_proc_starttime(hp, r->child_pid, &st) == 0 &&
		    st == r->child_starttime;

		/* after the drop (a store read late) the filter may refuse */
		if (alive && kill(r->child_pid, SIGTERM) < 0)
			snprintf(what, sizeof(what),
			    "was still running: "
			    "SIGTERM refused (%s), exit status unknown",
			    strerror(errno));
		else
			snprintf(what, sizeof(what), "%s",
			    alive ? "was still running: sent SIGTERM, exit "
				    "status unknown" :
				    "had ended: exit status unknown");
		r->end_wall_ns = hp_wall_now();
		snprintf(r->outcome, sizeof(r->outcome), "daemon restarted");
		snprintf(r->message, sizeof(r->message),
		    "vitalsd restarted "
		    "during the session; perfetto (pid %d) %s",
		    r->child_pid, what);
		hp_file_size(r->output_path, &r->output_bytes);
		(void)hp_record_put(hp, r, "stale session not closed");
		hp->st.restarted_closed++;
		log_warnx("heapprofd: session %lld: %s", (long long)r->id,
		    r->message);
	}
}

/* Setup reads the session table; when it cannot (the store opens later),
 * the writer thread does once it can (late_read, late_done). */
static void
records_setup(struct heapprofd *hp)
{
	struct hp_load ld;
	int e;

	if ((e = hp_records_read(hp->store, hp_wall_now(), &ld)) < 0) {
		hp->load_err = e;
		hp_note_store_error(hp, e,
		    "session records not read (read once the store opens)");
		return;
	}
	hp_records_install(hp, &ld);
	close_stale(hp, ld.running, ld.nrunning);
	hp_load_release(&ld);
}

/* The writer thread: only hp->late, which the loop leaves alone until
 * late_done. */
static int
late_read(struct store *s, void *arg)
{
	struct heapprofd *hp = arg;

	hp_load_release(&hp->late);
	return hp_records_read(s, hp_wall_now(), &hp->late);
}

static void
late_done(void *arg)
{
	struct heapprofd *hp = arg;

	hp->late_asked = false;
	hp_records_install(hp, &hp->late);
	close_stale(hp, hp->late.running, hp->late.nrunning);
	hp_load_release(&hp->late);
	log_info("heapprofd: session records read (the store opened after "
		 "the start): sessions can start");
}

/*
 * The build type heapprofd's eligibility rules depend on: ro.build.type
 * through the platform's property API where there is one; the
 * heapprofd_build_type key where there is none (hosts, tests) or it says
 * nothing. An unknown value means the strictest rules (user). Read once:
 * ro.* properties do not change while the system runs.
 */
static void
hp_build_type(struct heapprofd *hp, const char *prop_root)
{
	char v[92] = "";
	int r;

	/* the platform's properties on Android, the double under prop_root
	 * on a host that has one; -EOPNOTSUPP where there are none */
	r = sysprop_read(prop_root, "ro.build.type", v, sizeof(v));
	if (r >= 0 && v[0] != '\0') {
		if (hp_build_parse(v, &hp->policy.build) < 0) {
			hp->policy.build = HP_BUILD_USER;
			snprintf(hp->st.build_source,
			    sizeof(hp->st.build_source),
			    "ro.build.type "
			    "(unknown value: user rules)");
		} else {
			snprintf(hp->st.build_source,
			    sizeof(hp->st.build_source), "ro.build.type");
		}
		return;
	}
	hp->policy.build = hp->hs->policy.build;
	snprintf(hp->st.build_source, sizeof(hp->st.build_source),
	    "heapprofd_build_type");
}

int
heapprofd_new(struct event_base *base, const struct config *cfg,
    struct store *store, const struct privs_helpers *helpers,
    struct heapprofd **ret)
{
	struct heapprofd *hp;
	long page;
	int r;

	if ((hp = calloc(1, sizeof(*hp))) == NULL)
		return -ENOMEM;
	hp->base = base;
	hp->store = store;
	hp->hs = cfg->hp;
	hp->policy = cfg->hp->policy;
	hp->pidfd = -1;
	hp->procfd = -1;
	page = sysconf(_SC_PAGESIZE);
	hp->page_size = page > 0 ? (unsigned)page : 4096;
	if ((hp->state_dir = strdup(cfg->state_dir)) == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((hp->procfd = open(cfg->proc_root,
		 O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = hp_rules_new(hp->hs->rules, hp->hs->nrules, &hp->rules)) < 0)
		goto fail;
	hp_build_type(hp, cfg->prop_root);
	if ((r = hp_session_setup(hp, cfg, helpers)) < 0)
		goto fail;
	/* setup reads, the loop does not: the ids, budgets and outcomes */
	if (store)
		records_setup(hp);
	*ret = hp;
	return 0;
fail:
	heapprofd_free(hp);
	return r;
}

/*
 * Records go through the writer thread from now on (the loop runs); NULL:
 * written on the caller's thread again (the writer has stopped).
 */
void
heapprofd_set_writer(struct heapprofd *hp, struct writer *wr)
{
	if (hp->wr && hp->late_asked)
		writer_call_cancel(hp->wr);
	hp->late_asked = false;
	hp->wr = wr;
	if (wr && hp->store && hp->next_id == 0 &&
	    writer_call(wr, late_read, late_done, hp) == 0)
		hp->late_asked = true;
}

/* The loop has ended: a running perfetto is stopped and waited for, its
 * end recorded (queued: the writer is stopped after this). */
void
heapprofd_stop(struct heapprofd *hp)
{
	if (hp) {
		hp_session_stop(hp);
		hp_check_stop(hp);
	}
}

/* The daemon stops: a running perfetto is stopped and waited for. */
struct heapprofd *
heapprofd_free(struct heapprofd *hp)
{
	if (hp == NULL)
		return NULL;
	hp_session_stop(hp);
	hp_check_free(hp);
	if (hp->wr && hp->late_asked)
		writer_call_cancel(hp->wr);
	hp_records_free(hp);
	hp_rules_free(hp->rules);
	if (hp->procfd >= 0)
		close(hp->procfd);
	free(hp->state_dir);
	free(hp);
	return NULL;
}
