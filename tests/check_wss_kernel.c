/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The working-set monitor against the running kernel. A child process
 * maps a region between two guard pages, makes part of it resident, and
 * then does what the test tells it through a pipe: touch pages between
 * the two halves of a pass, load a shared object, unmap the region, or
 * keep touching in the background. The monitor must report what the test
 * knows: pages accessed, resident but untouched, never touched (not
 * resident), and a region list that follows the child's maps.
 *
 * Root: CI runs this suite as root; as root PFNs are readable, so on a
 * kernel with page_idle the page-level method runs, elsewhere clear_refs.
 * The expectations hold for both (Method B within one page).
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "testutil.h"
#include "vitalsd.h"

/* A process to exec once the test knows its pid: sleep, for 30 s. */
static const char *const sleeper[] = { "/bin/sleep", "30", NULL };

#define NPAGES 48   /* the region */
#define RESIDENT 32 /* made resident before monitoring */
#define BIG 2048    /* the region of the loop test */

struct cmd {
	char op;
	uint32_t a, b;
};

struct child {
	pid_t pid;
	int to, from;
	uint64_t addr; /* the region, after the leading guard page */
};

static long pg;

static void
touch(volatile char *p, uint32_t a, uint32_t b)
{
	uint32_t i;

	for (i = a; i < b; i++)
		p[(size_t)i * (size_t)pg] += 1;
}

/*
 * Drop the CPU's cached translations of the region. Clearing the accessed
 * bits (clear_refs "1", page_idle) does not flush the TLB on x86, so an
 * access through a translation cached since before the mark does not set
 * the bit again: the access goes unseen (doc/wss.md, accuracy). A real
 * workload's entries are evicted by its own traffic; this child's tiny
 * loop keeps them, so it changes the region's protection and back, which
 * flushes them, before it touches pages.
 */
static void
flush_tlb(volatile char *p, uint32_t npages)
{
	size_t len = (size_t)npages * (size_t)pg;

	mprotect((void *)p, len, PROT_READ);
	mprotect((void *)p, len, PROT_READ | PROT_WRITE);
}

static void __attribute__((noreturn))
child_main(int in, int out, uint32_t npages)
{
	volatile char *base;
	char *m;
	struct cmd c;
	uint64_t reply;
	void *h = NULL;
	char lib[4096];
	const char *bd = getenv("VITALS_BUILDDIR");

	m = mmap(NULL, (size_t)(npages + 2) * (size_t)pg,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(2);
	/* guards: a mapping of its own, never merged with a neighbour */
	mprotect(m, (size_t)pg, PROT_NONE);
	mprotect(m + (size_t)(npages + 1) * (size_t)pg, (size_t)pg, PROT_NONE);
	base = m + pg;
	madvise((void *)base, (size_t)npages * (size_t)pg, MADV_NOHUGEPAGE);
	touch(base, 0, npages == BIG ? BIG : RESIDENT);
	reply = (uint64_t)(uintptr_t)base;
	if (write(out, &reply, 8) != 8)
		_exit(3);
	while (read(in, &c, sizeof(c)) == (ssize_t)sizeof(c)) {
		reply = 0;
		switch (c.op) {
		case 't':
			flush_tlb(base, npages);
			touch(base, c.a, c.b);
			break;
		case 'd':
			snprintf(lib, sizeof(lib), "%s/tests/libwsstest.so",
			    bd ? bd : ".");
			h = dlopen(lib, RTLD_NOW);
			reply = h != NULL;
			break;
		case 'u':
			reply = munmap((void *)base,
				    (size_t)npages * (size_t)pg) == 0;
			break;
		case 'b':
			/* busy: every page, every 20 ms, until killed */
			if (write(out, &reply, 8) != 8)
				_exit(3);
			for (;;) {
				struct timespec ts = { 0, 20000000 };

				flush_tlb(base, npages);
				touch(base, 0, npages);
				nanosleep(&ts, NULL);
			}
		default:
			_exit(0);
		}
		if (write(out, &reply, 8) != 8)
			_exit(3);
	}
	(void)h;
	_exit(0);
}

static struct child
spawn(uint32_t npages)
{
	struct child ch;
	int a[2], b[2];

	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	ch.pid = fork();
	ck_assert_int_ge(ch.pid, 0);
	if (ch.pid == 0) {
		close(a[1]);
		close(b[0]);
		child_main(a[0], b[1], npages);
	}
	close(a[0]);
	close(b[1]);
	ch.to = a[1];
	ch.from = b[0];
	ck_assert_int_eq(read(ch.from, &ch.addr, 8), 8);
	return ch;
}

static uint64_t
ask(struct child *ch, char op, uint32_t a, uint32_t b)
{
	struct cmd c = { op, a, b };
	uint64_t reply;

	ck_assert_int_eq(write(ch->to, &c, sizeof(c)), (int)sizeof(c));
	ck_assert_int_eq(read(ch->from, &reply, 8), 8);
	return reply;
}

static void
reap(struct child *ch)
{
	int st;

	kill(ch->pid, SIGKILL);
	waitpid(ch->pid, &st, 0);
	close(ch->to);
	close(ch->from);
}

static struct wss *
monitor_on(struct event_base *base, struct wss_config *c,
    struct privhelper *helper)
{
	struct wss_opts o = { .proc_root = "/proc",
		.sys_root = "/sys",
		.cfg = c,
		.helper = helper };
	struct wss *w;

	ck_assert_int_eq(wss_new(base, &o, &w), 0);
	return w;
}

static struct wss *
monitor(struct event_base *base, struct wss_config *c)
{
	return monitor_on(base, c, NULL);
}

static const struct wss_region *
region_at(const struct wss_status *st, uint64_t addr)
{
	size_t i;

	for (i = 0; i < st->nregions; i++)
		if (st->regions[i].start == addr)
			return &st->regions[i];
	return NULL;
}

/* Accessed within one page of want (Method B is region-level); exact
 * for page_idle. */
static void
assert_accessed(const struct wss_status *st, const struct wss_region *g,
    unsigned want)
{
	unsigned slack = st->method == WSS_METHOD_PAGE_IDLE ? 0 : 1;

	ck_assert_msg(g->accessed + slack >= want &&
		g->accessed <= want + slack,
	    "accessed %u, want %u (method %s)", g->accessed, want,
	    wss_method_name(st->method));
	ck_assert_uint_eq(g->idle, g->resident - g->accessed);
}

START_TEST(test_counts)
{
	struct child ch = spawn(NPAGES);
	const struct wss_status *st;
	const struct wss_region *g;
	struct wss_config c;
	char err[160];
	struct wss *w;

	wss_config_init(&c);
	w = monitor(NULL, &c);
	ck_assert_msg(wss_start(w, ch.pid, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			  err, sizeof(err)) == 0,
	    "%s", err);

	/* pass 1: 8 of the 32 resident pages touched */
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	ask(&ch, 't', 0, 8);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	st = wss_get(w, ch.pid);
	g = region_at(st, ch.addr);
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(g->label, "heap");
	ck_assert_uint_eq(g->end - g->start, NPAGES * (uint64_t)pg);
	ck_assert_uint_eq(g->pages, NPAGES);
	ck_assert_uint_eq(g->resident, RESIDENT);
	ck_assert_uint_eq(g->not_resident, NPAGES - RESIDENT);
	ck_assert(!g->gone);
	assert_accessed(st, g, 8);
	if (st->method == WSS_METHOD_CLEAR_REFS) {
		/* raw smaps figure beside the page count */
		ck_assert_uint_le(g->referenced_kb, 9 * (uint64_t)pg / 1024);
		ck_assert_uint_ge(g->referenced_kb, 7 * (uint64_t)pg / 1024);
		ck_assert_uint_eq(g->rss_kb, RESIDENT * (uint64_t)pg / 1024);
		ck_assert_ptr_nonnull(strstr(st->note, "page_idle"));
	}

	/* pass 2: nothing touched */
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	st = wss_get(w, ch.pid);
	g = region_at(st, ch.addr);
	assert_accessed(st, g, 0);
	ck_assert_uint_eq(g->resident, RESIDENT);

	/* pass 3: 4 pages of the never-touched part fault in, 2 old ones */
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	ask(&ch, 't', 40, 44);
	ask(&ch, 't', 10, 12);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	st = wss_get(w, ch.pid);
	g = region_at(st, ch.addr);
	ck_assert_uint_eq(g->resident, RESIDENT + 4);
	ck_assert_uint_eq(g->not_resident, NPAGES - RESIDENT - 4);
	assert_accessed(st, g, 6);
	ck_assert_uint_eq(st->seq, 3);
	ck_assert_uint_gt(st->pass_ns_sum, 0);
	ck_assert_uint_eq(st->read_errors, 0);

	/* the child dies: the next pass ends the target cleanly */
	reap(&ch);
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), -ESRCH);
	st = wss_get(w, ch.pid);
	ck_assert(st->ended);
	ck_assert_ptr_nonnull(strstr(st->end_reason, "exited"));
	ck_assert_uint_eq(wss_npages(w), 0);
	wss_free(w);
}
END_TEST

/* A library loaded mid-monitoring shows up; an unmapped region leaves. */
START_TEST(test_maps_follow)
{
	struct child ch = spawn(NPAGES);
	const struct wss_status *st;
	const struct wss_region *g;
	struct wss_config c;
	struct wss *w;
	char err[160];
	size_t i, rx = 0, res = 0;

	wss_config_init(&c);
	w = monitor(NULL, &c);
	ck_assert_msg(wss_start(w, ch.pid, WSS_MODE_LIBRARY, "libwsstest.so",
			  WSS_METHOD_AUTO, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	ck_assert_uint_eq(wss_get(w, ch.pid)->nregions, 0);

	/* loaded between two passes */
	ck_assert_uint_eq(ask(&ch, 'd', 0, 0), 1);
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	st = wss_get(w, ch.pid);
	ck_assert_uint_ge(st->maps_changes, 1);
	ck_assert_uint_ge(st->nregions, 2);
	for (i = 0; i < st->nregions; i++) {
		ck_assert_ptr_nonnull(
		    strstr(st->regions[i].label, "(libwsstest.so)"));
		rx += strcmp(st->regions[i].label, "r-xp(libwsstest.so)") == 0;
		res += st->regions[i].resident;
	}
	/* the loader wrote its relocations: some page is resident */
	ck_assert_uint_gt(res, 0);
	ck_assert_uint_eq(rx, 1);
	ck_assert(!st->apk_fallback);
	ck_assert_int_eq(wss_stop(w, ch.pid), 0);

	/* heap: the region is there, then unmapped inside a pass */
	ck_assert_msg(wss_start(w, ch.pid, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			  err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	ck_assert_ptr_nonnull(region_at(wss_get(w, ch.pid), ch.addr));
	ck_assert_uint_eq(ask(&ch, 'u', 0, 0), 1);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	st = wss_get(w, ch.pid);
	g = region_at(st, ch.addr);
	ck_assert_ptr_nonnull(g);
	ck_assert(g->gone);
	ck_assert_uint_eq(g->resident, 0);
	ck_assert_uint_eq(st->maps_changes, 1);
	/* the next pass no longer has it: shown once that pass completes
	 * (inside it, the last completed pass's regions are shown) */
	ck_assert_int_eq(wss_pass_begin(w, ch.pid), 0);
	g = region_at(wss_get(w, ch.pid), ch.addr);
	ck_assert(g != NULL && g->gone);
	ck_assert_int_eq(wss_pass_end(w, ch.pid), 0);
	ck_assert_ptr_null(region_at(wss_get(w, ch.pid), ch.addr));
	wss_free(w);
	reap(&ch);
}
END_TEST

/* pid has exec'd sleep and its loader has mapped libc (10 s at most
 * for each). */
static bool
wait_exec(pid_t pid)
{
	char path[64], buf[512];
	bool libc = false;
	FILE *f;
	int i;

	for (i = 0; i < 500; i++) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		buf[0] = '\0';
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(buf, sizeof(buf), f) == NULL)
				buf[0] = '\0';
			fclose(f);
		}
		if (strncmp(buf, "sleep", 5) == 0)
			break;
		usleep(20000);
	}
	for (; i < 1000 && !libc; i++) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		if ((f = fopen(path, "r")) != NULL) {
			while (!libc && fgets(buf, sizeof(buf), f))
				libc = strstr(buf, "libc") != NULL;
			fclose(f);
		}
		if (!libc)
			usleep(20000);
	}
	return libc;
}

/* An exec keeps the pid and its starttime but replaces the address
 * space: the monitor follows it to the new one. */
START_TEST(test_exec)
{
	const struct wss_status *st;
	struct wss_config c;
	struct wss *w;
	char err[160];
	int gate, status;
	uint64_t res = 0;
	pid_t pid;
	size_t i;

	pid = tu_spawn_gated(sleeper, &gate);
	wss_config_init(&c);
	w = monitor(NULL, &c);
	ck_assert_msg(wss_start(w, pid, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			  err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_int_eq(wss_pass_begin(w, pid), 0);
	ck_assert_int_eq(wss_pass_end(w, pid), 0);
	ck_assert_int_eq(write(gate, "x", 1), 1);
	/* exec done when the name changes (10 s at most) */
	for (i = 0; i < 500; i++) {
		char path[64], buf[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(buf, sizeof(buf), f) == NULL)
				buf[0] = '\0';
			fclose(f);
		}
		if (strncmp(buf, "sleep", 5) == 0)
			break;
		usleep(20000);
	}
	ck_assert_int_lt(i, 500);
	/* the loader has run: libc is mapped (polled, 10 s at most) */
	for (i = 0; i < 500; i++) {
		char path[64], line[512];
		bool libc = false;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		if ((f = fopen(path, "r")) != NULL) {
			while (!libc && fgets(line, sizeof(line), f))
				libc = strstr(line, "libc") != NULL;
			fclose(f);
		}
		if (libc)
			break;
		usleep(20000);
	}
	ck_assert_int_lt(i, 500);
	ck_assert_int_eq(wss_pass_begin(w, pid), 0);
	ck_assert_int_eq(wss_pass_end(w, pid), 0);
	st = wss_get(w, pid);
	ck_assert(!st->ended);
	ck_assert_uint_ge(st->maps_changes, 1);
	for (i = 0; i < st->nregions; i++)
		res += st->regions[i].resident;
	/* read through the new address space, not the old one's nothing */
	ck_assert_uint_gt(res, 0);
	ck_assert_uint_eq(st->read_errors, 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(gate);
	wss_free(w);
}
END_TEST

static void
run_loop(struct event_base *base, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/*
 * What keeping a target's files open rests on, on this kernel: a maps or
 * smaps descriptor read again from offset 0 (read_fd_all: pread from 0)
 * shows mappings made after it was opened; after an exec it reads
 * nothing (it follows the address space it was opened on), and a fresh
 * one reads the new one; once the process is gone it fails.
 */
START_TEST(test_kept_fds)
{
	struct child ch = spawn(NPAGES);
	struct vbuf b = { 0 };
	char path[64], addr[32];
	int fm, fs, status, gate;
	size_t len0;
	pid_t pid;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)ch.pid);
	ck_assert_int_ge(fm = open(path, O_RDONLY | O_CLOEXEC), 0);
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)ch.pid);
	ck_assert_int_ge(fs = open(path, O_RDONLY | O_CLOEXEC), 0);
	snprintf(addr, sizeof(addr), "%llx-", (unsigned long long)ch.addr);
	ck_assert_int_eq(read_fd_all(fm, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, addr)); /* the region */
	ck_assert_ptr_null(strstr(b.p, "libwsstest.so"));
	len0 = b.len;
	ck_assert_int_eq(read_fd_all(fs, &b), 0);
	ck_assert_ptr_null(strstr(b.p, "libwsstest.so"));
	/* the child maps a shared object; the same descriptors see it */
	ck_assert_uint_eq(ask(&ch, 'd', 0, 0), 1);
	ck_assert_int_eq(read_fd_all(fm, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "libwsstest.so"));
	ck_assert_uint_gt(b.len, len0);
	ck_assert_int_eq(read_fd_all(fs, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "libwsstest.so"));
	ck_assert_ptr_nonnull(strstr(b.p, "Referenced:"));
	/* and its region unmapped: gone from the next read */
	ck_assert_uint_eq(ask(&ch, 'u', 0, 0), 1);
	ck_assert_int_eq(read_fd_all(fm, &b), 0);
	ck_assert_ptr_null(strstr(b.p, addr));
	reap(&ch);
	ck_assert_int_lt(read_fd_all(fm, &b), 0); /* gone */
	close(fm);
	close(fs);

	/* an exec: the kept descriptor reads nothing, a new one the new
	 * address space */
	pid = tu_spawn_gated(sleeper, &gate);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	ck_assert_int_ge(fm = open(path, O_RDONLY | O_CLOEXEC), 0);
	ck_assert_int_eq(read_fd_all(fm, &b), 0);
	ck_assert_uint_gt(b.len, 0);
	ck_assert_int_eq(write(gate, "x", 1), 1);
	ck_assert(wait_exec(pid));
	ck_assert_int_eq(read_fd_all(fm, &b), 0);
	ck_assert_uint_eq(b.len, 0);
	close(fm);
	ck_assert_int_ge(fm = open(path, O_RDONLY | O_CLOEXEC), 0);
	ck_assert_int_eq(read_fd_all(fm, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.p, "libc"));
	close(fm);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(gate);
	vbuf_release(&b);
}
END_TEST

/*
 * Through the privileged helper with a loop: the four files are opened
 * once, off the loop, and kept; passes run on them with no helper call;
 * an exec has the address-space files opened again through the helper
 * (three calls) and the passes follow the new address space.
 */
START_TEST(test_helper_kept)
{
	struct privhelper *ph = NULL;
	struct privhelper_stats h0, h;
	const struct wss_status *st;
	struct event_base *base;
	struct wss_config c;
	struct wss *w;
	char err[160];
	int gate, status;
	uint64_t res = 0, seq;
	pid_t pid;
	size_t i;

	pid = tu_spawn_gated(sleeper, &gate);
	ck_assert_int_eq(privhelper_start("/proc", "/sys", NULL, &ph), 0);
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(event_base_priority_init(base, 3), 0);
	wss_config_init(&c);
	c.interval_ms = c.interval_min_ms = c.interval_max_ms = 100;
	w = monitor_on(base, &c, ph);
	privhelper_stats(ph, &h0);
	ck_assert_msg(wss_start(w, pid, WSS_MODE_HEAP, NULL,
			  WSS_METHOD_CLEAR_REFS, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert(wss_get(w, pid)->opening);
	run_loop(base, 700);
	st = wss_get(w, pid);
	ck_assert(!st->opening && !st->ended);
	ck_assert_str_eq(st->files, "privileged helper");
	ck_assert_uint_ge(st->seq, 3);
	privhelper_stats(ph, &h);
	ck_assert_uint_eq(h.calls - h0.calls, 4); /* none per pass */

	seq = st->seq;
	ck_assert_int_eq(write(gate, "x", 1), 1);
	ck_assert(wait_exec(pid));
	run_loop(base, 700);
	st = wss_get(w, pid);
	ck_assert(!st->opening && !st->ended);
	ck_assert_uint_gt(st->seq, seq);
	ck_assert_uint_ge(st->maps_changes, 1);
	for (i = 0; i < st->nregions; i++)
		res += st->regions[i].resident;
	ck_assert_uint_gt(res, 0); /* the new address space's */
	ck_assert_str_eq(st->files, "privileged helper");
	ck_assert_uint_eq(wss_helper_errors(w), 0);
	privhelper_stats(ph, &h);
	ck_assert_uint_eq(h.calls - h0.calls, 4 + 3);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(gate);
	wss_free(w);
	wss_config_release(&c);
	privhelper_stop(ph);
	event_base_free(base);
}
END_TEST

/* Passes on the loop: the interval lengthens while the child is idle and
 * shortens while it touches everything; each pass's cost is measured. */
START_TEST(test_loop_adaptive)
{
	struct child ch = spawn(BIG);
	const struct wss_status *st;
	struct event_base *base;
	struct wss_config c;
	struct wss *w;
	char err[160];
	uint64_t seq;

	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(event_base_priority_init(base, 3), 0);
	wss_config_init(&c);
	c.interval_ms = 200;
	c.interval_min_ms = 100;
	c.interval_max_ms = 400;
	w = monitor(base, &c);
	ck_assert_msg(wss_start(w, ch.pid, WSS_MODE_HEAP, NULL, WSS_METHOD_AUTO,
			  err, sizeof(err)) == 0,
	    "%s", err);
	run_loop(base, 1500);
	st = wss_get(w, ch.pid);
	ck_assert_uint_ge(st->seq, 2);
	ck_assert_uint_eq(st->interval_ms, 400);
	ck_assert_uint_gt(st->pass_ns_max, 0);
	ck_assert_uint_ge(st->pass_ns_sum, st->pass_ns_max);
	ck_assert_uint_gt(st->pass_cpu_ns_sum, 0);
	ck_assert_ptr_nonnull(region_at(st, ch.addr));
	ck_assert_uint_eq(region_at(st, ch.addr)->resident, BIG);

	seq = st->seq;
	ask(&ch, 'b', 0, 0);
	/*
	 * The child touches every page each 20 ms; a pass between two of
	 * its touches when a loaded machine starved it for a whole interval
	 * sees none: wait for a pass that saw the touches (up to 6 s).
	 */
	for (int i = 0; i < 20; i++) {
		run_loop(base, 300);
		st = wss_get(w, ch.pid);
		if (i >= 4 && st->interval_ms == 100 &&
		    region_at(st, ch.addr) != NULL &&
		    region_at(st, ch.addr)->accessed >= BIG - 1)
			break;
	}
	ck_assert_uint_gt(st->seq, seq);
	ck_assert_uint_eq(st->interval_ms, 100);
	ck_assert_uint_ge(region_at(st, ch.addr)->accessed, BIG - 1);
	reap(&ch);
	/* the loop notices the exit at its next pass */
	run_loop(base, 300);
	ck_assert(wss_get(w, ch.pid)->ended);
	wss_free(w);
	event_base_free(base);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("wss_kernel");
	TCase *tc = tcase_create("kernel");

	if (!tu_need_root("idle page tracking, other users' processes"))
		return 77;
	pg = sysconf(_SC_PAGESIZE);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_maps_follow);
	tcase_add_test(tc, test_exec);
	tcase_add_test(tc, test_loop_adaptive);
	tcase_add_test(tc, test_kept_fds);
	tcase_add_test(tc, test_helper_kept);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
