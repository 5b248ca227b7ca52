/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pure parsers of per-task procfs files: <pid>/stat (and task/<tid>/stat),
 * <pid>/status and <pid>/cmdline. Bytes in, struct out: no I/O, allocation
 * or logging, so unit tests feed fixture text and fuzzers feed garbage.
 *
 * The buffers are not NUL-terminated and nothing here reads past len.
 * Much of this text is chosen by the task itself (comm, argv), so it is
 * treated as hostile: names are cut and made printable, and a line that
 * does not have the kernel's exact shape is rejected rather than guessed at.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "core/util.h"
#include "proc/proc.h"

/* The last field of <pid>/stat that vitalsd reads (rss). */
#define PIDSTAT_LAST_FIELD 24

/*
 * A comm or an argv[0] is set by the task and may hold control characters or
 * bytes of a multi-byte character that a cut has split: name_clean() (util.c)
 * is the rule for every name, whatever its source.
 */
static void
copy_printable(char *dst, const char *src, size_t n)
{
	(void)name_clean(dst, src, n);
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Decimal digits at *pp, at least one, value at most max. Stops at the first
 * non-digit without judging it: the caller knows what may follow. *pp and
 * *ret are written only on success.
 */
static int
scan_uint(const char **pp, const char *end, uint64_t max, uint64_t *ret)
{
	const char *p = *pp;
	uint64_t v = 0, d;

	if (p == end || !is_digit(*p))
		return -EINVAL;
	for (; p < end && is_digit(*p); p++) {
		d = (uint64_t)(*p - '0');
		if (v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*pp = p;
	*ret = v;
	return 0;
}

/*
 * A stat field vitalsd does not keep. Several are signed in the kernel
 * (tpgid, cutime, cstime, priority, nice) and print negative, so a leading
 * '-' is allowed; the value is not converted, so its size does not matter.
 */
static int
skip_int(const char **pp, const char *end)
{
	const char *p = *pp;

	if (p < end && *p == '-')
		p++;
	if (p == end || !is_digit(*p))
		return -EINVAL;
	while (p < end && is_digit(*p))
		p++;
	*pp = p;
	return 0;
}

/* Parse stat field number field (1-based, >= 3) at *pp into st. */
static int
pidstat_field(struct pid_stat *st, int field, const char **pp, const char *end)
{
	uint64_t v, *dst;
	int r;

	switch (field) {
	case 3:
		/*
		 * Every task state the kernel has printed is a letter; anything
		 * else means the comm did not end where we think it did.
		 */
		if (*pp == end ||
		    !((**pp >= 'A' && **pp <= 'Z') ||
			(**pp >= 'a' && **pp <= 'z')))
			return -EINVAL;
		st->state = **pp;
		(*pp)++;
		return 0;
	case 4:
	case 20:
		/* Signed in the kernel but never negative for a live task. */
		if ((r = scan_uint(pp, end, INT32_MAX, &v)) < 0)
			return r;
		if (field == 4)
			st->ppid = (int32_t)v;
		else
			st->num_threads = (int32_t)v;
		return 0;
	case 10:
		dst = &st->minflt;
		break;
	case 12:
		dst = &st->majflt;
		break;
	case 14:
		dst = &st->utime;
		break;
	case 15:
		dst = &st->stime;
		break;
	case 22:
		dst = &st->starttime;
		break;
	case 23:
		dst = &st->vsize;
		break;
	case 24:
		dst = &st->rss_pages;
		break;
	default:
		return skip_int(pp, end);
	}
	return scan_uint(pp, end, UINT64_MAX, dst);
}

/*
 * /proc/<pid>/stat: "pid (comm) state ppid ...". The kernel writes comm raw,
 * so it may hold spaces, '(' and ')': it ends at the last ')' in the buffer,
 * since no later field can contain one. Fields after it are parsed through
 * field 24; the kernel appends fields over time, so no count is asserted.
 */
int
pidstat_parse(const char *buf, size_t len, struct pid_stat *ret)
{
	const char *p, *end, *lpar, *rpar;
	struct pid_stat st;
	uint64_t v;
	size_t n;
	int field, r;

	if (ret == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len == 0)
		return -ENODATA;

	memset(&st, 0, sizeof(st));
	p = buf;
	end = buf + len;

	if ((r = scan_uint(&p, end, INT32_MAX, &v)) < 0)
		return r;
	st.pid = (int32_t)v;

	/* The kernel prints "%d (": any other separator is not its text. */
	if (end - p < 2 || p[0] != ' ' || p[1] != '(')
		return -EINVAL;
	lpar = p + 1;
	rpar = memrchr(lpar + 1, ')', (size_t)(end - lpar - 1));
	if (rpar == NULL)
		return -EINVAL;

	/*
	 * comm is cut at 15 bytes by the kernel, except that kworkers show
	 * their workqueue after it ("kworker/u16:2-events_unbound"); cut
	 * those to the same length so comm stays a fixed-size label.
	 */
	n = (size_t)(rpar - lpar - 1);
	if (n > VITALS_COMM_LEN - 1)
		n = VITALS_COMM_LEN - 1;
	copy_printable(st.comm, lpar + 1, n);

	p = rpar + 1;
	for (field = 3; field <= PIDSTAT_LAST_FIELD; field++) {
		if (p == end || *p != ' ')
			return -EINVAL;
		p++;
		if ((r = pidstat_field(&st, field, &p, end)) < 0)
			return r;
	}

	/*
	 * The kernel always writes more fields and a newline after field 24.
	 * Requiring a separator here turns a read cut inside rss into an
	 * error instead of a silently shortened number.
	 */
	if (p == end || (*p != ' ' && *p != '\n'))
		return -EINVAL;

	*ret = st;
	return 0;
}

/* ---------------------------------------------------------------- status */

enum status_kind {
	STATUS_UID,
	STATUS_GID,
	STATUS_TGID,
	STATUS_KB,
};

static const struct status_key {
	const char *name;
	enum status_kind kind;
	size_t off; /* of the int64_t field, for STATUS_KB */
} status_keys[] = {
	{ "Tgid", STATUS_TGID, 0 },
	{ "Uid", STATUS_UID, 0 },
	{ "Gid", STATUS_GID, 0 },
	{ "VmRSS", STATUS_KB, offsetof(struct pid_status, vm_rss_kb) },
	{ "RssAnon", STATUS_KB, offsetof(struct pid_status, rss_anon_kb) },
	{ "RssFile", STATUS_KB, offsetof(struct pid_status, rss_file_kb) },
	{ "RssShmem", STATUS_KB, offsetof(struct pid_status, rss_shmem_kb) },
	{ "VmSwap", STATUS_KB, offsetof(struct pid_status, vm_swap_kb) },
};

#define STATUS_NKEYS (sizeof(status_keys) / sizeof(status_keys[0]))
#define STATUS_REQUIRED ((1u << 0) | (1u << 1) | (1u << 2)) /* Tgid Uid Gid */

static int
status_key_find(const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < STATUS_NKEYS; i++) {
		if (strlen(status_keys[i].name) == len &&
		    memcmp(status_keys[i].name, key, len) == 0)
			return (int)i;
	}
	return -1;
}

/* Skip ' ' and '\t'; at least one must be there. */
static int
skip_blanks(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == *pp)
		return -EINVAL;
	*pp = p;
	return 0;
}

/*
 * "Uid:" and "Gid:" hold the real, effective, saved and filesystem ids. All
 * four must be there so that a line cut short is not taken for a whole one;
 * anything the kernel might add after them is ignored.
 */
static int
status_ids(const char *p, const char *end, uint32_t ret[4])
{
	uint32_t ids[4];
	uint64_t v;
	int i, r;

	for (i = 0; i < 4; i++) {
		if ((r = skip_blanks(&p, end)) < 0)
			return r;
		if ((r = scan_uint(&p, end, UINT32_MAX, &v)) < 0)
			return r;
		ids[i] = (uint32_t)v;
	}
	if (p != end && *p != ' ' && *p != '\t')
		return -EINVAL;
	memcpy(ret, ids, sizeof(ids));
	return 0;
}

/* One matched line, value text in [p, end). */
static int
status_line(struct pid_status *st, const struct status_key *k, const char *p,
    const char *end)
{
	uint32_t ids[4];
	uint64_t v;
	int r;

	switch (k->kind) {
	case STATUS_UID:
		if ((r = status_ids(p, end, ids)) < 0)
			return r;
		st->uid = ids[0];
		st->euid = ids[1];
		return 0;
	case STATUS_GID:
		if ((r = status_ids(p, end, ids)) < 0)
			return r;
		st->gid = ids[0];
		return 0;
	case STATUS_TGID:
		if ((r = skip_blanks(&p, end)) < 0 ||
		    (r = scan_uint(&p, end, INT32_MAX, &v)) < 0)
			return r;
		if (p != end)
			return -EINVAL;
		st->tgid = (int32_t)v;
		return 0;
	case STATUS_KB:
		/*
		 * The unit is required: a number without it is either a cut
		 * line or a format vitalsd does not know.
		 */
		if ((r = skip_blanks(&p, end)) < 0 ||
		    (r = scan_uint(&p, end, INT64_MAX, &v)) < 0 ||
		    (r = skip_blanks(&p, end)) < 0)
			return r;
		if (end - p != 2 || p[0] != 'k' || p[1] != 'B')
			return -EINVAL;
		*(int64_t *)((char *)st + k->off) = (int64_t)v;
		return 0;
	}
	return -EINVAL;
}

/*
 * /proc/<pid>/status: "Key:\tvalue" lines. Keys are matched whole and only at
 * line starts. "Name:" comes first and holds the task's own comm; the kernel
 * escapes it, but a key seen twice is rejected so that no name can ever pass
 * for a Uid line.
 */
int
pidstatus_parse(const char *buf, size_t len, struct pid_status *ret)
{
	const char *p, *end, *eol, *colon;
	struct pid_status st;
	unsigned seen = 0;
	int k, r;

	if (ret == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len == 0)
		return -ENODATA;

	memset(&st, 0, sizeof(st));
	/* Kernel threads and zombies have no mm and print no Vm/Rss lines. */
	st.vm_rss_kb = st.rss_anon_kb = st.rss_file_kb = -1;
	st.rss_shmem_kb = st.vm_swap_kb = -1;

	p = buf;
	end = buf + len;
	while (p < end) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon != NULL &&
		    (k = status_key_find(p, (size_t)(colon - p))) >= 0) {
			if (seen & (1u << k))
				return -EINVAL;
			seen |= 1u << k;
			r = status_line(&st, &status_keys[k], colon + 1, eol);
			if (r < 0)
				return r;
		}
		p = eol < end ? eol + 1 : end;
	}

	/* Without these the task cannot be attributed; 0 would mean root. */
	if ((seen & STATUS_REQUIRED) != STATUS_REQUIRED)
		return -EINVAL;

	*ret = st;
	return 0;
}

/* --------------------------------------------------------------- cmdline */

/*
 * Process name from /proc/<pid>/cmdline: the basename of the first argument,
 * cut at the first '@'. Kernel threads and zombies have an empty cmdline.
 */
int
cmdline_name(const char *buf, size_t len, char *ret, size_t retsz)
{
	const char *end, *word, *name, *slash, *at;
	size_t n;

	/* A name of zero bytes is no name: retsz must leave room for one. */
	if (ret == NULL || retsz < 2 || (buf == NULL && len > 0))
		return -EINVAL;
	if (len == 0)
		return -ENODATA;

	/* A process that rewrote its argv may leave no NUL at all. */
	end = memchr(buf, '\0', len);
	if (end == NULL)
		end = buf + len;

	/*
	 * Only the first word can be the program's path. A rewritten argv is
	 * often one string with spaces ("sshd: root@pts/0", "nginx: worker
	 * process", "/opt/google/chrome/chrome --type=renderer ..."), whose
	 * later words hold '/' that are not path components.
	 */
	for (word = buf; word < end && *word != ' ' && *word != '\t'; word++)
		;
	slash = memrchr(buf, '/', (size_t)(word - buf));
	name = slash != NULL ? slash + 1 : buf;

	/* What follows '@' qualifies the name (user@tty, lib@tag), not it. */
	at = memchr(name, '@', (size_t)(end - name));
	if (at != NULL)
		end = at;

	if (name == end)
		return -ENODATA;
	n = (size_t)(end - name);
	if (n > retsz - 1)
		n = retsz - 1;
	copy_printable(ret, name, n);
	return 0;
}
