/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pure parsers of system-wide procfs and sysfs files: bytes in, struct out;
 * no I/O, allocation or logging, so tests feed fixtures and fuzzers garbage.
 * Buffers are not NUL-terminated: every scan is bounded by an end pointer.
 * One tokenizer serves all: lines end at '\n', tokens at runs of ' ' and
 * '\t'; any other byte ('\r', NUL, a sign) fails number parsing. A missing
 * final '\n' is accepted: files are read whole, and a line cut short looks
 * like a short line anyway.
 */
#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

/* A byte range [p, end) inside the caller's buffer. */
struct span {
	const char *p, *end;
};

/*
 * Kernel names in enum order, two a line (hence no clang-format). vmstat's
 * extra last entry is the pre-5.9 name of the file refault counter;
 * vmstat_parse folds it in.
 */
/* clang-format off */
static const char *const vmstat_names[VM__MAX + 1] = {
	[VM_PGFAULT] = "pgfault", [VM_PGMAJFAULT] = "pgmajfault",
	[VM_PSWPIN] = "pswpin", [VM_PSWPOUT] = "pswpout",
	[VM_PGPGIN] = "pgpgin", [VM_PGPGOUT] = "pgpgout",
	[VM_PGSCAN_KSWAPD] = "pgscan_kswapd",
	[VM_PGSCAN_DIRECT] = "pgscan_direct",
	[VM_PGSTEAL_KSWAPD] = "pgsteal_kswapd",
	[VM_PGSTEAL_DIRECT] = "pgsteal_direct",
	[VM_WORKINGSET_REFAULT_ANON] = "workingset_refault_anon",
	[VM_WORKINGSET_REFAULT_FILE] = "workingset_refault_file",
	[VM_OOM_KILL] = "oom_kill",
	[VM__MAX] = "workingset_refault",
};

static const char *const meminfo_names[MI__MAX] = {
	[MI_MEMTOTAL] = "MemTotal", [MI_MEMFREE] = "MemFree",
	[MI_MEMAVAILABLE] = "MemAvailable", [MI_BUFFERS] = "Buffers",
	[MI_CACHED] = "Cached", [MI_SWAPCACHED] = "SwapCached",
	[MI_ACTIVE] = "Active", [MI_INACTIVE] = "Inactive",
	[MI_SWAPTOTAL] = "SwapTotal", [MI_SWAPFREE] = "SwapFree",
	[MI_DIRTY] = "Dirty", [MI_ANONPAGES] = "AnonPages",
	[MI_MAPPED] = "Mapped", [MI_SHMEM] = "Shmem",
	[MI_SRECLAIMABLE] = "SReclaimable", [MI_SUNRECLAIM] = "SUnreclaim",
	[MI_KERNELSTACK] = "KernelStack", [MI_PAGETABLES] = "PageTables",
};

/* The single-value lines of /proc/stat kept, in PROCSTAT_HAVE_* order. */
static const char *const procstat_names[] = {
	"ctxt", "btime", "processes", "procs_running", "procs_blocked",
};
/* clang-format on */

static struct span
span_make(const char *buf, size_t len)
{
	/* NULL with len 0 is an empty text; no arithmetic on NULL */
	return (struct span){ buf, buf != NULL ? buf + len : buf };
}

static size_t
span_len(struct span s)
{
	return (size_t)(s.end - s.p);
}

/*
 * Cut the next line, without its '\n', off the front of text. memchr finds
 * the end, so a line nobody tokenises (intr, softirq: several KB on phones)
 * costs one fast scan.
 */
static bool
line_next(struct span *text, struct span *ret)
{
	const char *nl;

	if (text->p == text->end)
		return false;
	nl = memchr(text->p, '\n', span_len(*text));
	ret->p = text->p;
	ret->end = nl != NULL ? nl : text->end;
	text->p = nl != NULL ? nl + 1 : text->end;
	return true;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Cut the next token off the front of line; false when none is left. */
static bool
tok_next(struct span *line, struct span *ret)
{
	while (line->p < line->end && is_blank(*line->p))
		line->p++;
	if (line->p == line->end)
		return false;
	ret->p = line->p;
	while (line->p < line->end && !is_blank(*line->p))
		line->p++;
	ret->end = line->p;
	return true;
}

static bool
tok_is(struct span t, const char *s)
{
	size_t n;

	/* the first character first: a key table is searched for every
	 * line of vmstat and meminfo, and most keys differ there */
	if (span_len(t) == 0 || *t.p != *s)
		return span_len(t) == 0 && *s == '\0';
	n = strlen(s);
	return span_len(t) == n && memcmp(t.p, s, n) == 0;
}

/* Strict unsigned decimal: one digit at least, nothing else. */
static int
tok_u64(struct span t, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p;

	if (t.p == t.end)
		return -EINVAL;
	for (p = t.p; p < t.end; p++) {
		unsigned d = (unsigned)(unsigned char)*p - '0';

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/*
 * "12.34" into a double. Not strtod: it follows LC_NUMERIC, and the kernel
 * always writes '.'. While digits and 10^nf stay below 2^53 both are exact
 * and the one division rounds correctly, so the result equals the literal.
 * Fraction digits past 15 cannot matter for a percentage: checked, dropped.
 */
static int
tok_decimal(struct span t, double *ret)
{
	struct span ip = t, fp = { t.end, t.end };
	const char *dot = memchr(t.p, '.', span_len(t));
	uint64_t i, f = 0, scale = 1;
	int r;

	if (dot != NULL) {
		ip.end = dot;
		fp.p = dot + 1;
		if (fp.p == fp.end)
			return -EINVAL;
	}
	if ((r = tok_u64(ip, &i)) < 0)
		return r;
	for (; fp.p < fp.end; fp.p++) {
		unsigned d = (unsigned)(unsigned char)*fp.p - '0';

		if (d > 9)
			return -EINVAL;
		if (scale < 1000000000000000ULL) {
			f = f * 10 + d;
			scale *= 10;
		}
	}
	if (i < ((1ULL << 53) - f) / scale)
		*ret = (double)(i * scale + f) / (double)scale;
	else
		*ret = (double)i + (double)f / (double)scale;
	return 0;
}

static int
key_find(const char *const *names, size_t n, struct span t)
{
	int k;

	for (k = 0; (size_t)k < n; k++)
		if (tok_is(t, names[k]))
			return k;
	return -1;
}

/*
 * The numbers after a cpu line's name. Kernels before 2.6.11 print only the
 * first four (those columns do not exist there: 0); newer kernels have
 * appended columns before and may again, so extra numbers are checked and
 * ignored.
 */
static int
procstat_cpu_times(struct span rest, struct cpu_times *ret)
{
	struct cpu_times ct = { 0 };
	uint64_t *col[] = { &ct.user, &ct.nice, &ct.system, &ct.idle,
		&ct.iowait, &ct.irq, &ct.softirq, &ct.steal, &ct.guest,
		&ct.guest_nice };
	uint64_t x;
	struct span t;
	unsigned n = 0;
	int r;

	while (tok_next(&rest, &t)) {
		if ((r = tok_u64(t, &x)) < 0)
			return r;
		if (n < 10)
			*col[n++] = x;
	}
	if (n < 4)
		return -EINVAL;
	*ret = ct;
	return 0;
}

/* "cpu" (the sum over all possible CPUs) or "cpuN" (an online CPU). */
static int
procstat_cpu(struct procstat *st, struct span name, struct span rest,
    bool *have_all)
{
	struct cpu_times t;
	uint64_t n;
	int r;

	if ((r = procstat_cpu_times(rest, &t)) < 0)
		return r;
	name.p += 3;
	if (name.p == name.end) {
		if (*have_all)
			return -EINVAL;
		*have_all = true;
		st->all = t;
		return 0;
	}
	if ((r = tok_u64(name, &n)) < 0)
		return r;
	if (n >= VITALS_CPU_MAX) {
		/* counted so the health report shows what was not kept */
		st->cpu_dropped++;
		return 0;
	}
	if (st->online[n])
		return -EINVAL;
	st->online[n] = 1;
	st->cpu[n] = t;
	st->ncpu_online++;
	if (n + 1 > st->cpu_span)
		st->cpu_span = (unsigned)n + 1;
	return 0;
}

static int
procstat_scalar(struct procstat *st, struct span name, struct span rest)
{
	uint64_t *slot[] = { &st->ctxt, &st->btime, &st->processes,
		&st->procs_running, &st->procs_blocked };
	struct span t;
	int k, r;

	/* intr, softirq (several KB), page, swap, ...: skipped untokenised */
	if ((k = key_find(procstat_names, nitems(procstat_names), name)) < 0)
		return 0;
	/* "name value", once */
	if ((st->have & (1u << k)) || !tok_next(&rest, &t))
		return -EINVAL;
	if ((r = tok_u64(t, slot[k])) < 0)
		return r;
	if (tok_next(&rest, &t))
		return -EINVAL;
	st->have |= 1u << k;
	return 0;
}

int
procstat_parse(const char *buf, size_t len, struct procstat *ret)
{
	struct span text = span_make(buf, len), line, name;
	struct procstat st;
	bool have_all = false;
	int r;

	memset(&st, 0, sizeof(st));
	while (line_next(&text, &line)) {
		if (!tok_next(&line, &name))
			continue;
		if (span_len(name) >= 3 && memcmp(name.p, "cpu", 3) == 0)
			r = procstat_cpu(&st, name, line, &have_all);
		else
			r = procstat_scalar(&st, name, line);
		if (r < 0)
			return r;
	}
	if (!have_all)
		return -EINVAL;
	*ret = st;
	return 0;
}

int
loadavg_parse(const char *buf, size_t len, struct loadavg *ret)
{
	struct span text = span_make(buf, len), line, t[6];
	struct loadavg la;
	uint32_t *u[] = { &la.runnable, &la.threads, &la.last_pid };
	const char *slash;
	uint64_t v;
	int i, r;

	/* one line of exactly five fields, as the kernel has always written */
	if (!line_next(&text, &line) || text.p != text.end)
		return -EINVAL;
	for (i = 0; i < 5; i++)
		if (!tok_next(&line, &t[i]))
			return -EINVAL;
	if (tok_next(&line, &t[5]))
		return -EINVAL;
	if ((r = tok_decimal(t[0], &la.avg1)) < 0 ||
	    (r = tok_decimal(t[1], &la.avg5)) < 0 ||
	    (r = tok_decimal(t[2], &la.avg15)) < 0)
		return r;
	/* "runnable/threads" becomes t[3]/t[4], the last pid t[5] */
	if ((slash = memchr(t[3].p, '/', span_len(t[3]))) == NULL)
		return -EINVAL;
	t[5] = t[4];
	t[4].p = slash + 1;
	t[4].end = t[3].end;
	t[3].end = slash;
	for (i = 0; i < 3; i++) {
		if ((r = tok_u64(t[3 + i], &v)) < 0)
			return r;
		if (v > UINT32_MAX)
			return -ERANGE;
		*u[i] = (uint32_t)v;
	}
	*ret = la;
	return 0;
}

/*
 * "avg10=0.02 avg60=1.35 avg300=0.76 total=3304596": the layout has not
 * changed since PSI appeared in 4.20, so anything else is rejected rather
 * than guessed at.
 */
static int
psi_line_parse(struct span rest, struct psi_line *ret)
{
	static const char *const keys[] = { "avg10=", "avg60=", "avg300=",
		"total=" };
	struct psi_line pl;
	double *avg[] = { &pl.avg10, &pl.avg60, &pl.avg300 };
	struct span t;
	int i, r;

	for (i = 0; i < 4; i++) {
		size_t n = strlen(keys[i]);

		if (!tok_next(&rest, &t) || span_len(t) < n ||
		    memcmp(t.p, keys[i], n) != 0)
			return -EINVAL;
		t.p += n;
		if (i < 3)
			r = tok_decimal(t, avg[i]);
		else
			r = tok_u64(t, &pl.total_us);
		if (r < 0)
			return r;
	}
	if (tok_next(&rest, &t))
		return -EINVAL;
	*ret = pl;
	return 0;
}

int
psi_parse(const char *buf, size_t len, struct psi *ret)
{
	static const char *const names[] = { "some", "full" };
	struct span text = span_make(buf, len), line, name;
	struct psi psi;
	unsigned seen = 0;
	int k, r;

	memset(&psi, 0, sizeof(psi));
	while (line_next(&text, &line)) {
		if (!tok_next(&line, &name))
			continue;
		/* an unknown or a repeated line is not a pressure file */
		if ((k = key_find(names, nitems(names), name)) < 0 ||
		    (seen & (1u << k)))
			return -EINVAL;
		seen |= 1u << k;
		if ((r = psi_line_parse(line, k ? &psi.full : &psi.some)) < 0)
			return r;
	}
	if (!(seen & 1))
		return -EINVAL;
	psi.have_full = seen & 2;
	*ret = psi;
	return 0;
}

/*
 * Files of one "name value" line per key: each line is checked even when
 * its key is not kept, and a kept key may appear once. meminfo names end in
 * ':' and are matched whole, so "Active(anon):" is never "Active:"; its
 * values are "N kB", or a bare count (HugePages_*). A kept meminfo key must
 * say kB: a unit change must not be stored as kB silently.
 */
static int
keyed_parse(const char *buf, size_t len, const char *const *names, size_t n,
    bool meminfo, uint64_t *v, uint32_t *ret_have)
{
	struct span text = span_make(buf, len), line, name, t;
	uint32_t have = 0;
	uint64_t x;
	bool any = false, kb;
	int k, r;

	while (line_next(&text, &line)) {
		if (!tok_next(&line, &name))
			continue;
		any = true;
		if (meminfo) {
			if (span_len(name) < 2 || name.end[-1] != ':')
				return -EINVAL;
			name.end--;
		}
		if (!tok_next(&line, &t))
			return -EINVAL;
		if ((r = tok_u64(t, &x)) < 0)
			return r;
		kb = meminfo && tok_next(&line, &t);
		if ((kb && !tok_is(t, "kB")) || tok_next(&line, &t))
			return -EINVAL;
		if ((k = key_find(names, n, name)) < 0)
			continue;
		if ((meminfo && !kb) || (have & (1u << k)))
			return -EINVAL;
		v[k] = x;
		have |= 1u << k;
	}
	if (!any)
		return -EINVAL;
	*ret_have = have;
	return 0;
}

int
vmstat_parse(const char *buf, size_t len, struct vmstat *ret)
{
	const uint32_t file = 1u << VM_WORKINGSET_REFAULT_FILE;
	uint64_t v[VM__MAX + 1] = { 0 };
	uint32_t have;
	int r;

	r = keyed_parse(buf, len, vmstat_names, VM__MAX + 1, false, v, &have);
	if (r < 0)
		return r;
	/*
	 * Before 5.9 only file pages left shadow entries and the counter was
	 * "workingset_refault"; 5.9 split it into _anon and _file. Should a
	 * kernel print both, the suffixed name wins.
	 */
	if ((have & (1u << VM__MAX)) && !(have & file)) {
		v[VM_WORKINGSET_REFAULT_FILE] = v[VM__MAX];
		have |= file;
	}
	memcpy(ret->v, v, sizeof(ret->v));
	ret->have = have & ((1u << VM__MAX) - 1);
	return 0;
}

int
meminfo_parse(const char *buf, size_t len, struct meminfo *ret)
{
	struct meminfo mi = { { 0 }, 0 };
	int r;

	r = keyed_parse(buf, len, meminfo_names, MI__MAX, true, mi.kb,
	    &mi.have);
	if (r < 0)
		return r;
	*ret = mi;
	return 0;
}

/*
 * A sysfs attribute holding one number ("1804800\n"). Surrounding blanks
 * and newlines are tolerated; nothing at all is -ENODATA, so a caller can
 * tell "file empty" from "file holds something else" (-EINVAL, e.g. a
 * driver's "<unsupported>").
 */
int
parse_u64_text(const char *buf, size_t len, uint64_t *ret)
{
	struct span t = span_make(buf, len);

	while (t.p < t.end && (is_blank(*t.p) || *t.p == '\n'))
		t.p++;
	while (t.end > t.p && (is_blank(t.end[-1]) || t.end[-1] == '\n'))
		t.end--;
	if (t.p == t.end)
		return -ENODATA;
	return tok_u64(t, ret);
}

const char *
vmstat_key_name(enum vmstat_key k)
{
	return (unsigned)k < VM__MAX ? vmstat_names[k] : NULL;
}

const char *
meminfo_key_name(enum meminfo_key k)
{
	return (unsigned)k < MI__MAX ? meminfo_names[k] : NULL;
}
