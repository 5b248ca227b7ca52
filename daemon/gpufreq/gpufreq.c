/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GPU devices under a sys root and their readings (doc/metrics.md, "GPU
 * frequency"): an Adreno's class/kgsl/kgsl-3d0 (gpuclk, max_gpuclk,
 * gpubusy, gpu_busy_percentage and its devfreq/ node), and every devfreq
 * node whose name says GPU or Mali (a Mali's device/utilisation beside
 * it). A reading is a few small sysfs reads; each is folded into the
 * device's window figures, taken and reset at window close. A file that
 * is not there leaves its figure unknown; one that does not parse is
 * counted and leaves it unknown too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpufreq/gpufreq.h"

const char *
gpufreq_kind_name(enum gpufreq_kind k)
{
	switch (k) {
	case GPUFREQ_KGSL:
		return "kgsl";
	case GPUFREQ_DEVFREQ:
		return "devfreq";
	case GPUFREQ_MALI:
		return "mali";
	}
	return "?";
}

static char *
join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s/%s", a, b);
	return s;
}

static bool
exists(const char *dir, const char *name, bool want_dir)
{
	char p[PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return false;
	if (stat(p, &st) < 0)
		return false;
	return want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

/* dir/name into buf: its length, -ENOENT when absent, -errno. */
static ssize_t
slurp(const char *dir, const char *name, char *buf, size_t cap)
{
	char p[PATH_MAX];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < cap && (n = read(fd, buf + len, cap - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		len += (size_t)n;
	}
	close(fd);
	return len == cap ? -EFBIG : (ssize_t)len;
}

static struct gpufreq_dev *
dev_add(struct gpufreq *g, const char *name, enum gpufreq_kind kind,
    const char *dir)
{
	struct gpufreq_dev *d;

	if (g->ndev == GPUFREQ_MAX_DEV) {
		g->skipped++;
		return NULL;
	}
	d = &g->dev[g->ndev];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->kind = kind;
	d->dir = strdup(dir);
	if (!d->dir)
		return NULL;
	g->ndev++;
	return d;
}

static bool
gpu_name(const char *name)
{
	char low[GPUFREQ_NAME_LEN];
	size_t i;

	for (i = 0; name[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ?
			name[i] - 'A' + 'a' :
			name[i]);
	low[i] = '\0';
	return strstr(low, "gpu") || strstr(low, "mali") || strstr(low, "kgsl");
}

static int
discover(struct gpufreq *g)
{
	char p[PATH_MAX];
	struct dirent **ents = NULL;
	struct gpufreq_dev *d;
	bool kgsl = false;
	int n;

	snprintf(p, sizeof(p), "%s/class/kgsl", g->sys_root);
	if (exists(p, "kgsl-3d0", true)) {
		snprintf(p, sizeof(p), "%s/class/kgsl/kgsl-3d0", g->sys_root);
		d = dev_add(g, "kgsl-3d0", GPUFREQ_KGSL, p);
		if (!d)
			return -ENOMEM;
		kgsl = true;
		if (exists(p, "devfreq", true) &&
		    !(d->devfreq = join(p, "devfreq")))
			return -ENOMEM;
	}
	snprintf(p, sizeof(p), "%s/class/devfreq", g->sys_root);
	n = scandir(p, &ents, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char node[PATH_MAX];

		/* the kgsl node is the Adreno already listed */
		if (name[0] == '.' || !gpu_name(name) ||
		    (kgsl && strstr(name, "kgsl")))
			continue;
		if (snprintf(node, sizeof(node), "%s/%s", p, name) >=
		    (int)sizeof(node))
			continue;
		d = dev_add(g, name, GPUFREQ_DEVFREQ, node);
		if (!d)
			continue;
		if (!(d->devfreq = strdup(node)))
			continue;
		if (exists(node, "device/utilisation", false)) {
			d->kind = GPUFREQ_MALI;
			d->util = join(node, "device");
		} else if (strstr(name, "mali")) {
			d->kind = GPUFREQ_MALI;
		}
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return 0;
}

int
gpufreq_new(const char *sys_root, struct gpufreq **ret)
{
	struct gpufreq *g = calloc(1, sizeof(*g));
	int r;

	if (!g)
		return -ENOMEM;
	g->sys_root = strdup(sys_root ? sys_root : "/sys");
	if (!g->sys_root) {
		free(g);
		return -ENOMEM;
	}
	r = discover(g);
	if (r < 0) {
		gpufreq_free(g);
		return r;
	}
	*ret = g;
	return 0;
}

void
gpufreq_free(struct gpufreq *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; i < g->ndev; i++) {
		free(g->dev[i].dir);
		free(g->dev[i].devfreq);
		free(g->dev[i].util);
	}
	free(g->sys_root);
	free(g);
}

/* One "%lu\n" file into *v and the have bit; absent leaves both. */
static void
read_hz(const char *dir, const char *name, uint64_t *v, uint32_t *have,
    uint32_t bit, uint32_t *errs)
{
	char buf[64];
	ssize_t n;

	if (!dir || (*have & bit))
		return;
	n = slurp(dir, name, buf, sizeof(buf));
	if (n == -ENOENT)
		return;
	if (n < 0 || gpufreq_parse_u64(buf, (size_t)n, v) < 0) {
		(*errs)++;
		return;
	}
	*have |= bit;
}

int
gpufreq_sample_dev(const struct gpufreq_dev *d, struct gpufreq_sample *ret,
    uint32_t *ret_errors)
{
	struct gpufreq_sample s;
	uint32_t errs = 0;
	char buf[8192];
	ssize_t n;
	int r;

	memset(&s, 0, sizeof(s));
	if (d->kind == GPUFREQ_KGSL) {
		read_hz(d->dir, "gpuclk", &s.cur_hz, &s.have, GPUFREQ_HAVE_CUR,
		    &errs);
		read_hz(d->dir, "max_gpuclk", &s.max_hz, &s.have,
		    GPUFREQ_HAVE_MAX, &errs);
		n = slurp(d->dir, "gpubusy", buf, sizeof(buf));
		if (n >= 0 &&
		    gpufreq_parse_gpubusy(buf, (size_t)n, &s.busy_us,
			&s.total_us) == 0)
			s.have |= GPUFREQ_HAVE_BUSY;
		else if (n != -ENOENT)
			errs++;
		n = slurp(d->dir, "gpu_busy_percentage", buf, sizeof(buf));
		if (n >= 0 &&
		    gpufreq_parse_pct(buf, (size_t)n, &s.busy_pct) == 0)
			s.have |= GPUFREQ_HAVE_BUSY_PCT;
		else if (n != -ENOENT)
			errs++;
	}
	if (d->util) {
		n = slurp(d->util, "utilisation", buf, sizeof(buf));
		if (n >= 0 &&
		    gpufreq_parse_pct(buf, (size_t)n, &s.busy_pct) == 0)
			s.have |= GPUFREQ_HAVE_BUSY_PCT;
		else if (n != -ENOENT)
			errs++;
	}
	read_hz(d->devfreq, "cur_freq", &s.cur_hz, &s.have, GPUFREQ_HAVE_CUR,
	    &errs);
	read_hz(d->devfreq, "min_freq", &s.min_hz, &s.have, GPUFREQ_HAVE_MIN,
	    &errs);
	read_hz(d->devfreq, "max_freq", &s.max_hz, &s.have, GPUFREQ_HAVE_MAX,
	    &errs);
	if (d->devfreq) {
		n = slurp(d->devfreq, "trans_stat", buf, sizeof(buf));
		if (n >= 0) {
			r = gpufreq_parse_trans_stat(buf, (size_t)n, &s.tis);
			if (r == 0)
				s.have |= GPUFREQ_HAVE_TIS;
			else if (r != -ENOTSUP)
				errs++;
		} else if (n != -ENOENT) {
			errs++;
		}
	}
	*ret = s;
	*ret_errors = errs;
	return 0;
}

static bool
same_table(const struct gpufreq_tis *a, const struct gpufreq_tis *b)
{
	return a->n == b->n &&
	    memcmp(a->hz, b->hz, a->n * sizeof(a->hz[0])) == 0;
}

/* A reading into the window; time in state as the Δ since the last. */
static void
fold(struct gpufreq_dev *d, const struct gpufreq_sample *s, uint32_t errs,
    uint64_t *g_errors)
{
	struct gpufreq_win *w = &d->win;

	w->reads++;
	w->errors += errs;
	*g_errors += errs;
	if (s->have & GPUFREQ_HAVE_CUR) {
		if (w->cur_n == 0 || s->cur_hz < w->cur_min_hz)
			w->cur_min_hz = s->cur_hz;
		if (w->cur_n == 0 || s->cur_hz > w->cur_max_hz)
			w->cur_max_hz = s->cur_hz;
		w->cur_sum_hz += s->cur_hz;
		w->cur_n++;
		w->have |= GPUFREQ_HAVE_CUR;
	}
	if (s->have & GPUFREQ_HAVE_MIN) {
		w->min_hz = s->min_hz;
		w->have |= GPUFREQ_HAVE_MIN;
	}
	if (s->have & GPUFREQ_HAVE_MAX) {
		w->max_hz = s->max_hz;
		w->have |= GPUFREQ_HAVE_MAX;
	}
	if (s->have & GPUFREQ_HAVE_BUSY) {
		w->busy_us += s->busy_us;
		w->total_us += s->total_us;
		w->have |= GPUFREQ_HAVE_BUSY;
	}
	if (s->have & GPUFREQ_HAVE_BUSY_PCT) {
		w->busy_pct_sum += s->busy_pct;
		w->busy_pct_n++;
		w->have |= GPUFREQ_HAVE_BUSY_PCT;
	}
	if (!(s->have & GPUFREQ_HAVE_TIS)) {
		d->have_prev = false;
		return;
	}
	if (d->have_prev && same_table(&d->prev, &s->tis)) {
		bool back = false;

		for (uint32_t i = 0; i < s->tis.n; i++)
			back |= s->tis.ms[i] < d->prev.ms[i];
		if (back) {
			/* reset by the driver: no Δ from this pair */
			w->errors++;
			(*g_errors)++;
		} else {
			if (!(w->have & GPUFREQ_HAVE_TIS) ||
			    w->tis_n != s->tis.n ||
			    memcmp(w->tis_hz, s->tis.hz,
				s->tis.n * sizeof(w->tis_hz[0])) != 0) {
				w->tis_n = s->tis.n;
				memcpy(w->tis_hz, s->tis.hz, sizeof(w->tis_hz));
				memset(w->tis_ms, 0, sizeof(w->tis_ms));
			}
			for (uint32_t i = 0; i < s->tis.n; i++)
				w->tis_ms[i] += s->tis.ms[i] - d->prev.ms[i];
			w->have |= GPUFREQ_HAVE_TIS;
		}
	}
	d->prev = s->tis;
	d->have_prev = true;
}

void
gpufreq_read(struct gpufreq *g)
{
	for (uint32_t i = 0; i < g->ndev; i++) {
		struct gpufreq_sample s;
		uint32_t errs;

		gpufreq_sample_dev(&g->dev[i], &s, &errs);
		fold(&g->dev[i], &s, errs, &g->errors);
	}
}

void
gpufreq_take(struct gpufreq *g, uint32_t i, struct gpufreq_win *ret)
{
	*ret = g->dev[i].win;
	memset(&g->dev[i].win, 0, sizeof(g->dev[i].win));
}
