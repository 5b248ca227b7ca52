/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure half of foreground and background: names, Android's cpuset
 * and cgroup groups as states, oom_score_adj as ActivityManager's levels.
 * Bytes in, a state out; no I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "fgbg/fgbg.h"

static const char *const state_names[FG__MAX] = { "top-app", "foreground",
	"background", "system", "unknown" };
static const char *const src_names[FG_SRC__MAX] = { "cpuset", "cgroup",
	"oom_score_adj", "none" };
static const char *const status_names[FGBG__MAX] = { "off", "absent", "on" };

const char *
fg_state_name(unsigned st)
{
	return st < FG__MAX ? state_names[st] : "?";
}

int
fg_state_parse(const char *name)
{
	unsigned i;

	for (i = 0; i < FG__MAX; i++)
		if (!strcmp(name, state_names[i]))
			return (int)i;
	return -EINVAL;
}

const char *
fg_source_name(unsigned src)
{
	return src < FG_SRC__MAX ? src_names[src] : "?";
}

const char *
fgbg_status_name(unsigned st)
{
	return st < FGBG__MAX ? status_names[st] : "?";
}

/*
 * Android's cpusets (init's cgroups.json and task_profiles.json) by the
 * first component of the path. camera-daemon runs the camera HAL for the
 * app on screen, so it counts with the foreground; system-background and
 * restricted are background tiers. The root holds what no profile moved:
 * native daemons.
 */
int
fg_group_state(const char *path, size_t len)
{
	static const struct {
		const char *name;
		enum fg_state st;
	} groups[] = {
		{ "top-app", FG_TOP_APP },
		{ "foreground", FG_FOREGROUND },
		{ "camera-daemon", FG_FOREGROUND },
		{ "background", FG_BACKGROUND },
		{ "system-background", FG_BACKGROUND },
		{ "restricted", FG_BACKGROUND },
	};
	const char *slash;
	size_t i, n;

	if (len == 0 || path[0] != '/')
		return -ENOENT;
	path++;
	len--;
	if (len == 0)
		return FG_SYSTEM;
	slash = memchr(path, '/', len);
	n = slash ? (size_t)(slash - path) : len;
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strlen(groups[i].name) == n &&
		    memcmp(groups[i].name, path, n) == 0)
			return (int)groups[i].st;
	return -ENOENT;
}

/* Does the comma-separated controller list c[0..n) name "cpuset"? */
static bool
has_cpuset(const char *c, size_t n)
{
	while (n > 0) {
		const char *comma = memchr(c, ',', n);
		size_t k = comma ? (size_t)(comma - c) : n;

		if (k == 6 && memcmp(c, "cpuset", 6) == 0)
			return true;
		if (comma == NULL)
			break;
		n -= k + 1;
		c = comma + 1;
	}
	return false;
}

/*
 * Lines are "hierarchy-id:controllers:path". The cpuset line decides when
 * it names a group (its root is the system state); a cpuset group that is
 * not Android's leaves the decision to the other lines (a v1 cpu or
 * schedtune hierarchy, or v2, laid out by Android's names), and those
 * only when one names an Android group other than the root: a v2 root is
 * no statement about the process.
 */
int
fg_parse_cgroup(const char *buf, size_t len, enum fg_state *ret_state,
    enum fg_source *ret_src)
{
	const char *p = buf, *end = buf + len;
	int other = -ENOENT;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *c1 = memchr(p, ':', (size_t)(le - p));
		const char *c2 = c1 ?
		    memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) :
		    NULL;
		int st;

		p = le + 1;
		if (c2 == NULL)
			continue;
		st = fg_group_state(c2 + 1, (size_t)(le - c2 - 1));
		if (has_cpuset(c1 + 1, (size_t)(c2 - c1 - 1))) {
			if (st >= 0) {
				*ret_state = (enum fg_state)st;
				*ret_src = FG_SRC_CPUSET;
				return 0;
			}
			continue;
		}
		if (st >= 0 && st != FG_SYSTEM && other < 0)
			other = st;
	}
	if (other < 0)
		return -ENOENT;
	*ret_state = (enum fg_state)other;
	*ret_src = FG_SRC_CGROUP;
	return 0;
}

/*
 * ActivityManager's levels (ProcessList): NATIVE_ADJ −1000 and SYSTEM_ADJ
 * −900 are the system; the persistent levels (−800, −700) run in the
 * default (foreground) group; FOREGROUND_APP_ADJ 0 is the top app;
 * PERCEPTIBLE_RECENT_FOREGROUND 50, VISIBLE 100..199 and the perceptible
 * levels up to PERCEPTIBLE_LOW_APP_ADJ 250 are foreground; BACKUP 300 and
 * everything above (heavy-weight, services, home, previous, cached) are
 * background.
 */
enum fg_state
fg_adj_state(int64_t adj)
{
	if (adj < -1000 || adj > 1000)
		return FG_UNKNOWN;
	if (adj <= -900)
		return FG_SYSTEM;
	if (adj < 0)
		return FG_FOREGROUND;
	if (adj == 0)
		return FG_TOP_APP;
	if (adj <= 250)
		return FG_FOREGROUND;
	return FG_BACKGROUND;
}

int
fg_parse_adj(const char *buf, size_t len, int64_t *ret)
{
	char tmp[16], *endp;
	long v;

	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (len == 0 || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	v = strtol(tmp, &endp, 10);
	if (*endp != '\0' || v < -1000 || v > 1000)
		return -EINVAL;
	*ret = v;
	return 0;
}
