/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vitalsd's own gpu_mem/gpu_mem_total program (bpf/gpumem/gpumem.bpf.c), for
 * hosts where no platform loader provides the map: load it (privileged
 * setup), then attach when the tracepoint exists. GPU drivers are often
 * modules loaded after boot, so gpumem.c retries the attach once a second
 * for a while. The map is pinned as map_vitals_gpu_mem_total_map under
 * bpffs when one is given, and an earlier start's pin is reused, so the
 * totals the driver reported survive a daemon restart.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "gpumem/gpumem.h"

#ifdef HAVE_BPF_CORE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../bpf/gpumem/gpumem.bpf.h"
#include "gpumem.skel.h"

struct gpumem_bpf {
	struct vitals_gpumem *skel;
	struct bpf_link *link;
	int ncpu;
};

static int
reuse_pin(struct gpumem_bpf *gb, const char *path)
{
	uint32_t cap;
	int fd, r;

	if ((fd = bpf_obj_get(path)) < 0)
		return -errno;
	/* a pin of another layout is replaced, not reused */
	if ((r = gpumem_map_check(fd, &cap)) < 0 || cap != GPUMEM_MAP_ENTRIES) {
		close(fd);
		unlink(path);
		return r < 0 ? r : -EPROTOTYPE;
	}
	r = bpf_map__reuse_fd(gb->skel->maps.gpu_mem_total_map, fd);
	close(fd);
	return r;
}

int
gpumem_bpf_load(const char *bpffs, struct gpumem_bpf **ret, int *ret_map_fd)
{
	struct gpumem_bpf *gb;
	char path[PATH_MAX];
	bool reused = false;
	int fd, r;

	if ((gb = calloc(1, sizeof(*gb))) == NULL)
		return -ENOMEM;
	if ((gb->ncpu = libbpf_num_possible_cpus()) <= 0) {
		r = gb->ncpu < 0 ? gb->ncpu : -EINVAL;
		goto fail;
	}
	if ((gb->skel = vitals_gpumem__open()) == NULL) {
		r = -errno;
		goto fail;
	}
	if (bpffs) {
		if ((r = bpf_pin_path(bpffs, "map", "gpu_mem_total_map", path,
			 sizeof(path))) < 0)
			goto fail;
		reused = reuse_pin(gb, path) == 0;
	}
	if ((r = vitals_gpumem__load(gb->skel)) < 0)
		goto fail;
	/* Unpinned (no bpffs there, or another vitalsd pinned first) the
	 * map still works; it only does not outlive this daemon. */
	if (bpffs && !reused && bpf_check_bpffs(bpffs) == 0)
		(void)bpf_map__pin(gb->skel->maps.gpu_mem_total_map, path);
	fd = dup(bpf_map__fd(gb->skel->maps.gpu_mem_total_map));
	if (fd < 0) {
		r = -errno;
		goto fail;
	}
	*ret_map_fd = fd;
	*ret = gb;
	return 0;
fail:
	gpumem_bpf_free(gb);
	return r;
}

/*
 * The tracepoint's directory in tracefs (the configured mount, else the
 * usual ones): 0 there, -ENOENT absent, -errno when tracefs could not be
 * looked at (not "absent": a service user may not read it).
 */
static int
tracepoint_find(const char *tracefs)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
		"/sys/kernel/debug/tracing" };
	char path[PATH_MAX];
	unsigned i, n = tracefs ? 1 : sizeof(roots) / sizeof(roots[0]);
	int r = -ENOENT;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path),
		    "%s/events/gpu_mem/gpu_mem_total/id",
		    tracefs ? tracefs : roots[i]);
		if (access(path, F_OK) == 0)
			return 0;
		if (errno != ENOENT && errno != ENOTDIR)
			r = -errno;
	}
	return r;
}

/*
 * 0 attached; -ENOENT: no gpu_mem/gpu_mem_total tracepoint (yet). Looked
 * up first, so a retry each second does not make libbpf warn each time.
 */
int
gpumem_bpf_attach(struct gpumem_bpf *gb, const char *tracefs)
{
	struct bpf_link *l;
	int r;

	if (gb->link)
		return 0;
	if ((r = tracepoint_find(tracefs)) < 0)
		return r;
	l = bpf_program__attach_tracepoint(gb->skel->progs.vitals_gpu_mem_total,
	    "gpu_mem", "gpu_mem_total");
	if (l == NULL)
		return -errno;
	gb->link = l;
	return 0;
}

/* The per-CPU counters, summed. */
int
gpumem_bpf_stats(struct gpumem_bpf *gb, uint64_t *ret_events,
    uint64_t *ret_insert_fail)
{
	int fd = bpf_map__fd(gb->skel->maps.gpu_mem_stats);
	uint64_t sum[GPUMEM_STAT__MAX] = { 0 };
	uint64_t *v;
	uint32_t k;
	int i;

	if ((v = calloc((size_t)gb->ncpu, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (k = 0; k < GPUMEM_STAT__MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, v) < 0) {
			int r = -errno;

			free(v);
			return r;
		}
		for (i = 0; i < gb->ncpu; i++)
			sum[k] += v[i];
	}
	free(v);
	*ret_events = sum[GPUMEM_STAT_EVENTS];
	*ret_insert_fail = sum[GPUMEM_STAT_INSERT_FAIL];
	return 0;
}

struct gpumem_bpf *
gpumem_bpf_free(struct gpumem_bpf *gb)
{
	if (gb == NULL)
		return NULL;
	bpf_link__destroy(gb->link);
	vitals_gpumem__destroy(gb->skel);
	free(gb);
	return NULL;
}
#else  /* !HAVE_BPF_CORE */
int
gpumem_bpf_load(const char *bpffs, struct gpumem_bpf **ret, int *ret_map_fd)
{
	(void)bpffs;
	(void)ret;
	(void)ret_map_fd;
	return -EOPNOTSUPP;
}

int
gpumem_bpf_attach(struct gpumem_bpf *gb, const char *tracefs)
{
	(void)gb;
	(void)tracefs;
	return -EOPNOTSUPP;
}

int
gpumem_bpf_stats(struct gpumem_bpf *gb, uint64_t *ret_events,
    uint64_t *ret_insert_fail)
{
	(void)gb;
	(void)ret_events;
	(void)ret_insert_fail;
	return -EOPNOTSUPP;
}

struct gpumem_bpf *
gpumem_bpf_free(struct gpumem_bpf *gb)
{
	(void)gb;
	return NULL;
}
#endif /* HAVE_BPF_CORE */
