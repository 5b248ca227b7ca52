/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protoc's text of a perfetto.protos.Trace, read back (pftrace.h). The
 * text format is protoc's: one field per line, "name {" opens a message,
 * "}" closes it, strings quoted with C escapes.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pftrace.h"

static void
whyf(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

static char *
slurp(FILE *f, size_t *ret_len)
{
	size_t len = 0, cap = 1 << 16, k;
	char *p = malloc(cap), *np;

	while (p && (k = fread(p + len, 1, cap - len - 1, f)) > 0) {
		len += k;
		if (cap - len - 1 == 0) {
			if ((np = realloc(p, cap * 2)) == NULL) {
				free(p);
				return NULL;
			}
			p = np;
			cap *= 2;
		}
	}
	if (p)
		p[len] = '\0';
	*ret_len = len;
	return p;
}

/* A quoted string's bytes (C escapes, octal for non-ASCII). */
static void
unquote(const char *s, char *out, size_t n)
{
	size_t k = 0;

	if (*s == '"')
		s++;
	while (*s && *s != '"' && k + 1 < n) {
		int c = (unsigned char)*s++;

		if (c == '\\' && *s) {
			c = (unsigned char)*s++;
			if (c >= '0' && c <= '7') {
				int v = c - '0', i;

				for (i = 0; i < 2 && *s >= '0' && *s <= '7';
				     i++)
					v = v * 8 + (*s++ - '0');
				c = v;
			} else if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
		}
		out[k++] = (char)c;
	}
	out[k] = '\0';
}

struct cur {
	bool desc, ev;
	struct pf_track t;
	struct pf_event e;
	uint64_t ts;
	uint32_t clock, seq, flags;
	bool has_ts;
};

static int
push_track(struct pf_trace *t, const struct pf_track *x)
{
	struct pf_track *v = realloc(t->t, (t->nt + 1) * sizeof(*v));

	if (v == NULL)
		return -1;
	t->t = v;
	t->t[t->nt++] = *x;
	return 0;
}

static int
push_event(struct pf_trace *t, const struct pf_event *x)
{
	struct pf_event *v = realloc(t->e, (t->ne + 1) * sizeof(*v));

	if (v == NULL)
		return -1;
	t->e = v;
	t->e[t->ne++] = *x;
	return 0;
}

static void
field(struct pf_trace *tr, struct cur *c, const char *path, const char *key,
    const char *val)
{
	unsigned long long u = strtoull(val, NULL, 10);
	long long s = strtoll(val, NULL, 10);

	if (strcmp(path, "packet") == 0) {
		if (!strcmp(key, "timestamp")) {
			c->ts = u;
			c->has_ts = true;
		} else if (!strcmp(key, "timestamp_clock_id"))
			c->clock = (uint32_t)u;
		else if (!strcmp(key, "trusted_packet_sequence_id"))
			c->seq = (uint32_t)u;
		else if (!strcmp(key, "sequence_flags"))
			c->flags = (uint32_t)u;
	} else if (strcmp(path, "packet/clock_snapshot") == 0) {
		if (!strcmp(key, "primary_trace_clock"))
			snprintf(tr->primary, sizeof(tr->primary), "%s", val);
	} else if (strcmp(path, "packet/clock_snapshot/clocks") == 0) {
		if (!strcmp(key, "clock_id"))
			tr->clocks++;
	} else if (strcmp(path, "packet/track_descriptor") == 0) {
		if (!strcmp(key, "uuid"))
			c->t.uuid = u;
		else if (!strcmp(key, "parent_uuid"))
			c->t.parent = u;
		else if (!strcmp(key, "name"))
			unquote(val, c->t.name, sizeof(c->t.name));
	} else if (strcmp(path, "packet/track_descriptor/process") == 0) {
		if (!strcmp(key, "pid"))
			c->t.pid = (int32_t)s;
		else if (!strcmp(key, "process_name"))
			unquote(val, c->t.pname, sizeof(c->t.pname));
	} else if (strcmp(path, "packet/track_descriptor/thread") == 0) {
		if (!strcmp(key, "pid"))
			c->t.pid = (int32_t)s;
		else if (!strcmp(key, "tid"))
			c->t.tid = (int32_t)s;
		else if (!strcmp(key, "thread_name"))
			unquote(val, c->t.pname, sizeof(c->t.pname));
	} else if (strcmp(path, "packet/track_descriptor/counter") == 0) {
		if (!strcmp(key, "unit"))
			snprintf(c->t.unit, sizeof(c->t.unit), "%s", val);
		else if (!strcmp(key, "unit_multiplier"))
			c->t.mult = s;
	} else if (strcmp(path, "packet/track_event") == 0) {
		if (!strcmp(key, "type"))
			snprintf(c->e.type, sizeof(c->e.type), "%s", val);
		else if (!strcmp(key, "track_uuid"))
			c->e.track = u;
		else if (!strcmp(key, "counter_value")) {
			c->e.value = s;
			c->e.has_value = true;
		} else if (!strcmp(key, "name"))
			unquote(val, c->e.name, sizeof(c->e.name));
	} else if (strcmp(path, "packet/track_event/debug_annotations") == 0) {
		if (!strcmp(key, "int_value")) {
			c->e.ret = s;
			c->e.has_ret = true;
		}
	}
}

static int
parse(char *text, struct pf_trace *tr, char *why, size_t whylen)
{
	char stack[8][48], path[400];
	unsigned depth = 0, i;
	struct cur c;
	char *line, *save = NULL;

	memset(&c, 0, sizeof(c));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *s = line, *e;
		size_t n;

		while (isspace((unsigned char)*s))
			s++;
		n = strlen(s);
		while (n && isspace((unsigned char)s[n - 1]))
			s[--n] = '\0';
		if (n == 0)
			continue;
		if (strcmp(s, "}") == 0) {
			if (depth == 0) {
				whyf(why, whylen, "unbalanced }");
				return -1;
			}
			if (--depth > 0)
				continue;
			/* a packet ends */
			if (c.desc) {
				c.t.at = tr->npackets;
				if (push_track(tr, &c.t) < 0)
					return -1;
			}
			if (c.ev) {
				c.e.at = tr->npackets;
				c.e.ts = c.has_ts ? c.ts : 0;
				c.e.clock = c.clock;
				c.e.seq = c.seq;
				c.e.flags = c.flags;
				if (push_event(tr, &c.e) < 0)
					return -1;
			}
			if (tr->npackets == 0)
				tr->flags0 = c.flags;
			if (c.seq == 1)
				tr->nseq++;
			tr->npackets++;
			memset(&c, 0, sizeof(c));
			continue;
		}
		if (n > 2 && strcmp(s + n - 2, " {") == 0) {
			s[n - 2] = '\0';
			if (depth >= 8) {
				whyf(why, whylen, "too deep");
				return -1;
			}
			snprintf(stack[depth++], sizeof(stack[0]), "%s", s);
			if (depth == 2 && !strcmp(s, "track_descriptor"))
				c.desc = true;
			if (depth == 2 && !strcmp(s, "track_event"))
				c.ev = true;
			if (depth == 3 && c.desc && !strcmp(s, "process"))
				c.t.process = true;
			if (depth == 3 && c.desc && !strcmp(s, "thread"))
				c.t.thread = true;
			if (depth == 3 && c.desc && !strcmp(s, "counter"))
				c.t.counter = true;
			continue;
		}
		if ((e = strstr(s, ": ")) == NULL) {
			whyf(why, whylen, "not a field: %s", s);
			return -1;
		}
		*e = '\0';
		path[0] = '\0';
		for (i = 0; i < depth; i++) {
			if (i)
				strcat(path, "/");
			strcat(path, stack[i]);
		}
		field(tr, &c, path, s, e + 2);
	}
	if (depth != 0) {
		whyf(why, whylen, "unbalanced {");
		return -1;
	}
	return 0;
}

int
pf_decode(const char *file, struct pf_trace *ret, char **text_out, char *why,
    size_t whylen)
{
	const char *src = getenv("VITALS_SRCDIR");
	char cmd[2048];
	size_t len;
	char *text, *copy;
	FILE *p;
	int st;

	memset(ret, 0, sizeof(*ret));
	snprintf(cmd, sizeof(cmd),
	    "protoc --decode perfetto.protos.Trace --proto_path='%s/proto' "
	    "perfetto_trace.proto < '%s' 2>&1",
	    src ? src : ".", file);
	if ((p = popen(cmd, "r")) == NULL) {
		whyf(why, whylen, "popen: %s", strerror(errno));
		return -1;
	}
	text = slurp(p, &len);
	st = pclose(p);
	if (text == NULL || st != 0) {
		whyf(why, whylen, "protoc failed (%d): %.300s", st,
		    text ? text : "");
		free(text);
		return -1;
	}
	copy = text_out ? strdup(text) : NULL;
	if (parse(text, ret, why, whylen) < 0) {
		free(text);
		free(copy);
		pf_free(ret);
		return -1;
	}
	free(text);
	if (text_out)
		*text_out = copy;
	return 0;
}

void
pf_free(struct pf_trace *t)
{
	free(t->t);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

const struct pf_track *
pf_track(const struct pf_trace *t, uint64_t uuid)
{
	size_t i;

	for (i = 0; i < t->nt; i++)
		if (t->t[i].uuid == uuid)
			return &t->t[i];
	return NULL;
}

const struct pf_track *
pf_child(const struct pf_trace *t, uint64_t parent, const char *name)
{
	size_t i;

	for (i = 0; i < t->nt; i++)
		if (t->t[i].counter && t->t[i].parent == parent &&
		    strcmp(t->t[i].name, name) == 0)
			return &t->t[i];
	return NULL;
}

const struct pf_track *
pf_process(const struct pf_trace *t, int32_t pid, const char *name)
{
	size_t i;

	for (i = 0; i < t->nt; i++)
		if (t->t[i].process && t->t[i].pid == pid &&
		    strcmp(t->t[i].pname, name) == 0)
			return &t->t[i];
	return NULL;
}

int
pf_value(const struct pf_trace *t, uint64_t track, uint64_t ts, int64_t *ret)
{
	size_t i;

	for (i = 0; i < t->ne; i++)
		if (t->e[i].track == track && t->e[i].ts == ts) {
			*ret = t->e[i].value;
			return 1;
		}
	return 0;
}

size_t
pf_count(const struct pf_trace *t, uint64_t track)
{
	size_t i, n = 0;

	for (i = 0; i < t->ne; i++)
		n += t->e[i].track == track;
	return n;
}

int
pf_check(const struct pf_trace *t, char *why, size_t whylen)
{
	uint64_t *last; /* per track, the last stamp */
	size_t i, j;

	if (t->npackets == 0 || t->flags0 != 1) {
		whyf(why, whylen, "first packet: sequence_flags %u, not 1",
		    t->flags0);
		return -1;
	}
	if (t->nseq != t->npackets) {
		whyf(why, whylen, "%zu of %zu packets on sequence 1", t->nseq,
		    t->npackets);
		return -1;
	}
	if (strcmp(t->primary, "BUILTIN_CLOCK_REALTIME") != 0) {
		whyf(why, whylen, "primary clock '%s'", t->primary);
		return -1;
	}
	for (i = 0; i < t->nt; i++) {
		if (t->t[i].uuid == 0) {
			whyf(why, whylen, "track %s: uuid 0", t->t[i].name);
			return -1;
		}
		for (j = i + 1; j < t->nt; j++)
			if (t->t[i].uuid == t->t[j].uuid) {
				whyf(why, whylen, "uuid %" PRIu64 " twice",
				    t->t[i].uuid);
				return -1;
			}
		if (t->t[i].parent &&
		    (pf_track(t, t->t[i].parent) == NULL ||
			pf_track(t, t->t[i].parent)->at > t->t[i].at)) {
			whyf(why, whylen, "track %s: parent not before it",
			    t->t[i].name);
			return -1;
		}
	}
	if ((last = calloc(t->nt + 1, sizeof(*last))) == NULL) {
		whyf(why, whylen, "out of memory");
		return -1;
	}
	for (i = 0; i < t->ne; i++) {
		const struct pf_event *e = &t->e[i];
		const struct pf_track *k = pf_track(t, e->track);

		if (k == NULL || k->at > e->at) {
			whyf(why, whylen,
			    "event at packet %zu: track %" PRIu64
			    " not described before it",
			    e->at, e->track);
			goto fail;
		}
		/* counters on counter tracks; slices (syscalls) on threads */
		if (strcmp(e->type, "TYPE_SLICE_BEGIN") == 0 ||
		    strcmp(e->type, "TYPE_SLICE_END") == 0) {
			if (!k->thread || e->has_value) {
				whyf(why, whylen,
				    "event at packet %zu: %s on %s", e->at,
				    e->type, k->name);
				goto fail;
			}
		} else if (strcmp(e->type, "TYPE_COUNTER") != 0 ||
		    !k->counter || !e->has_value) {
			whyf(why, whylen, "event at packet %zu: %s on %s",
			    e->at, e->type, k->name);
			goto fail;
		}
		if (e->clock != 1 || e->ts == 0 || e->flags != 2) {
			whyf(why, whylen,
			    "event at packet %zu: clock %u ts %" PRIu64
			    " flags %u",
			    e->at, e->clock, e->ts, e->flags);
			goto fail;
		}
		j = (size_t)(k - t->t);
		if (e->ts < last[j]) {
			whyf(why, whylen,
			    "track %s: stamp %" PRIu64 " after %" PRIu64,
			    k->name, e->ts, last[j]);
			goto fail;
		}
		last[j] = e->ts;
	}
	free(last);
	return 0;
fail:
	free(last);
	return -1;
}
