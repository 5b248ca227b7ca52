/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fault phase keys (fault_phases, fault_maps_reads;
 * doc/vitalsd.conf.5.md). In config's layer: the names are checked and
 * normalised here, the tracker (trace/phase.c) takes the result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "config/config.h"

/*
 * "NAME[,NAME...]": at most FAULT_PHASES_MAX exact ATrace slice names or
 * "prefix*"; spaces around each are dropped. A name holds no '|' (the
 * marker's separator), no ',' and no control character, is at most 381
 * bytes (127 UTF-16 units of 3 bytes) and has '*' only at its end. ""
 * or "off": none. ret: the normalised list ("" when none).
 */
int
config_parse_fault_phases(const char *v, char *ret, size_t retsz)
{
	const char *p = v;
	size_t out = 0;
	unsigned n = 0;

	if (retsz == 0)
		return -EINVAL;
	ret[0] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || strcmp(p, "off") == 0)
		return 0;
	while (*p) {
		const char *c = strchr(p, ',');
		const char *e = c ? c : p + strlen(p);
		const char *s = p, *q;

		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == s || (size_t)(e - s) > FAULT_PHASE_NAME_MAX ||
		    ++n > FAULT_PHASES_MAX)
			return -EINVAL;
		for (q = s; q < e; q++)
			if (*q == '|' || (unsigned char)*q < 0x20 ||
			    *q == 0x7f || (*q == '*' && q != e - 1))
				return -EINVAL;
		if (*s == '*')
			return -EINVAL; /* a prefix of nothing matches all */
		if (out + (size_t)(e - s) + 2 > retsz)
			return -ERANGE;
		if (out)
			ret[out++] = ',';
		memcpy(ret + out, s, (size_t)(e - s));
		out += (size_t)(e - s);
		ret[out] = '\0';
		p = c ? c + 1 : e;
		if (c && *p == '\0')
			return -EINVAL; /* a trailing comma */
	}
	return 0;
}

/* -ENOENT: not a fault phase key. */
int
config_set_phase(struct config *cfg, const char *key, const char *value)
{
	char *buf;
	size_t sz = FAULT_PHASES_MAX * (FAULT_PHASE_NAME_MAX + 1) + 1;
	uint32_t u;
	int r;

	if (!strcmp(key, "fault_maps_reads")) {
		if ((r = parse_u32_range(value, 0, 4096, &u)) < 0)
			return r;
		cfg->fault_maps_reads = u;
		return 0;
	}
	if (strcmp(key, "fault_phases") != 0)
		return -ENOENT;
	if ((buf = malloc(sz)) == NULL)
		return -ENOMEM;
	if ((r = config_parse_fault_phases(value, buf, sz)) < 0) {
		free(buf);
		return r;
	}
	free(cfg->fault_phases);
	cfg->fault_phases = NULL;
	if (buf[0] && (cfg->fault_phases = strdup(buf)) == NULL)
		r = -ENOMEM;
	free(buf);
	return r;
}
