/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The GPU drivers' sysfs files, parsed strictly: anything but the shape
 * the kernel prints is -EINVAL (the caller counts it), never a zero.
 *   devfreq cur_freq, min_freq, max_freq, kgsl gpuclk, max_gpuclk: "%lu\n"
 *   kgsl gpubusy: "%7d %7d\n" (busy and total µs of the last period)
 *   kgsl gpu_busy_percentage: "%d %%\n"; Mali utilisation: "%d\n"
 *   devfreq trans_stat: a "From : To" table, time(ms) in the last column,
 *   then "Total transition : %u\n"; "Not Supported.\n" without a table.
 */
#include <errno.h>
#include <string.h>

#include "gpufreq/gpufreq.h"

/* Digits at *p (at least one) into *ret; no sign, no overflow. */
static int
num(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*ret = v;
	return 0;
}

static void
spaces(const char **p, const char *end)
{
	while (*p < end && **p == ' ')
		(*p)++;
}

/* The expected literal at *p. */
static int
lit(const char **p, const char *end, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(end - *p) < n || memcmp(*p, s, n) != 0)
		return -EINVAL;
	*p += n;
	return 0;
}

int
gpufreq_parse_u64(const char *buf, size_t len, uint64_t *ret)
{
	const char *p = buf, *end = buf + len;
	uint64_t v;

	spaces(&p, end);
	if (num(&p, end, &v) < 0 || lit(&p, end, "\n") < 0 || p != end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int
gpufreq_parse_gpubusy(const char *buf, size_t len, uint64_t *ret_busy,
    uint64_t *ret_total)
{
	const char *p = buf, *end = buf + len;
	uint64_t busy, total;

	spaces(&p, end);
	if (num(&p, end, &busy) < 0)
		return -EINVAL;
	if (p >= end || *p != ' ')
		return -EINVAL;
	spaces(&p, end);
	if (num(&p, end, &total) < 0 || lit(&p, end, "\n") < 0 || p != end)
		return -EINVAL;
	if (busy > total)
		return -EINVAL;
	*ret_busy = busy;
	*ret_total = total;
	return 0;
}

int
gpufreq_parse_pct(const char *buf, size_t len, uint32_t *ret)
{
	const char *p = buf, *end = buf + len;
	uint64_t v;

	spaces(&p, end);
	if (num(&p, end, &v) < 0)
		return -EINVAL;
	if (p < end && *p == ' ' && lit(&p, end, " %") < 0)
		return -EINVAL;
	if (lit(&p, end, "\n") < 0 || p != end || v > 100)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

/*
 * A right-aligned field of exactly w characters ("%10lu", "%10u"): the
 * kernel prints them with no separator, so a 10-digit value touches its
 * neighbour and only the width tells them apart.
 */
static int
field(const char **p, const char *end, size_t w, uint64_t *ret)
{
	const char *s = *p, *f;

	if ((size_t)(end - s) < w)
		return -EINVAL;
	f = s;
	spaces(&f, s + w);
	if (num(&f, s + w, ret) < 0 || f != s + w)
		return -EINVAL;
	*p = s + w;
	return 0;
}

int
gpufreq_parse_trans_stat(const char *buf, size_t len, struct gpufreq_tis *ret)
{
	const char *p = buf, *end = buf + len;
	struct gpufreq_tis t;
	uint64_t v;

	if (len == 15 && memcmp(buf, "Not Supported.\n", 15) == 0)
		return -ENOTSUP;
	memset(&t, 0, sizeof(t));
	if (lit(&p, end, "     From  :   To\n") < 0 ||
	    lit(&p, end, "           :") < 0)
		return -EINVAL;
	/* the frequency table, then "   time(ms)" */
	while (p < end && *p != '\n' && lit(&p, end, "   time(ms)\n") < 0) {
		if (t.n == GPUFREQ_MAX_STATES || field(&p, end, 10, &v) < 0)
			return -EINVAL;
		t.hz[t.n++] = v;
	}
	if (t.n == 0 || p[-1] != '\n')
		return -EINVAL;
	/* one row per state: mark, frequency, n transitions, time */
	for (uint32_t i = 0; i < t.n; i++) {
		if (p >= end || (*p != '*' && *p != ' '))
			return -EINVAL;
		p++;
		if (field(&p, end, 10, &v) < 0 || v != t.hz[i] ||
		    lit(&p, end, ":") < 0)
			return -EINVAL;
		for (uint32_t j = 0; j < t.n; j++)
			if (field(&p, end, 10, &v) < 0)
				return -EINVAL;
		/* "%10llu": wider when the time outgrows it */
		spaces(&p, end);
		if (num(&p, end, &t.ms[i]) < 0 || lit(&p, end, "\n") < 0)
			return -EINVAL;
	}
	if (lit(&p, end, "Total transition : ") < 0 ||
	    num(&p, end, &t.total_trans) < 0 || lit(&p, end, "\n") < 0 ||
	    p != end)
		return -EINVAL;
	*ret = t;
	return 0;
}
