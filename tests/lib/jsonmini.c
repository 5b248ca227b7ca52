/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A strict little JSON reader for the client's tests (RFC 8259): rejects
 * what a real parser rejects (bad escapes, raw control bytes, invalid
 * UTF-8, leading zeros, trailing garbage), so "it parsed" means "valid
 * JSON", and then lets a test look values up. Independent of client/json.c
 * on purpose.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonmini.h"

struct jm_in {
	const char *p, *end;
	int depth;
};

static void
jm_free_in(struct jm *j)
{
	size_t i;

	for (i = 0; i < j->n; i++) {
		jm_free_in(&j->v[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->v);
	free(j->keys);
	free(j->str);
}

void
jm_free(struct jm *j)
{
	if (j == NULL)
		return;
	jm_free_in(j);
	free(j);
}

static void
jm_ws(struct jm_in *in)
{
	while (in->p < in->end &&
	    (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' ||
		*in->p == '\r'))
		in->p++;
}

static size_t
jm_utf8(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	if (c == 0xed)
		hi = 0x9f;
	if (c == 0xf0)
		lo = 0x90;
	if (c == 0xf4)
		hi = 0x8f;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void
jm_put_cp(char *o, size_t *k, unsigned cp)
{
	if (cp < 0x80) {
		o[(*k)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*k)++] = (char)(0xc0 | cp >> 6);
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		o[(*k)++] = (char)(0xe0 | cp >> 12);
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		o[(*k)++] = (char)(0xf0 | cp >> 18);
		o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int
jm_hex4(const char *p, unsigned *ret)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)p[i]))
			return -1;
		v = v * 16 +
		    (unsigned)(isdigit((unsigned char)p[i]) ?
			    p[i] - '0' :
			    (tolower((unsigned char)p[i]) - 'a' + 10));
	}
	*ret = v;
	return 0;
}

static char *
jm_string(struct jm_in *in)
{
	const char *q;
	char *o;
	size_t k = 0;

	if (in->p >= in->end || *in->p != '"')
		return NULL;
	in->p++;
	/*
	 * The decoded string is never longer than its text: a character is
	 * copied as is, an escape shrinks (\uXXXX is at most 3 bytes of
	 * UTF-8, a surrogate pair's 12 characters 4). Sized by the text up
	 * to its closing quote, not by the rest of the input: a buffer per
	 * string of twice the input left made a 250 KB answer take 2 s and
	 * 2 GB to parse.
	 */
	for (q = in->p; q < in->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < in->end)
			q++;
	if ((o = malloc((size_t)(q - in->p) + 1)) == NULL)
		return NULL;
	while (in->p < in->end && *in->p != '"') {
		unsigned char c = (unsigned char)*in->p;
		unsigned cp, lo;
		size_t n;

		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			if ((n = jm_utf8((const unsigned char *)in->p,
				 (size_t)(in->end - in->p))) == 0)
				goto bad;
			memcpy(o + k, in->p, n);
			k += n;
			in->p += n;
			continue;
		}
		if (++in->p >= in->end)
			goto bad;
		switch (*in->p++) {
		case '"':
			o[k++] = '"';
			break;
		case '\\':
			o[k++] = '\\';
			break;
		case '/':
			o[k++] = '/';
			break;
		case 'b':
			o[k++] = '\b';
			break;
		case 'f':
			o[k++] = '\f';
			break;
		case 'n':
			o[k++] = '\n';
			break;
		case 'r':
			o[k++] = '\r';
			break;
		case 't':
			o[k++] = '\t';
			break;
		case 'u':
			if (in->end - in->p < 4 || jm_hex4(in->p, &cp) < 0)
				goto bad;
			in->p += 4;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (in->end - in->p < 6 || in->p[0] != '\\' ||
				    in->p[1] != 'u' ||
				    jm_hex4(in->p + 2, &lo) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				in->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				goto bad;
			}
			jm_put_cp(o, &k, cp);
			break;
		default:
			goto bad;
		}
	}
	if (in->p >= in->end)
		goto bad;
	in->p++;
	o[k] = '\0';
	return o;
bad:
	free(o);
	return NULL;
}

static int jm_value(struct jm_in *in, struct jm *ret);

static int
jm_number(struct jm_in *in, struct jm *ret)
{
	const char *s = in->p;
	char buf[64];
	bool is_int = true;

	if (in->p < in->end && *in->p == '-')
		in->p++;
	if (in->p >= in->end || !isdigit((unsigned char)*in->p))
		return -1;
	if (*in->p == '0')
		in->p++;
	else
		while (in->p < in->end && isdigit((unsigned char)*in->p))
			in->p++;
	if (in->p < in->end && *in->p == '.') {
		is_int = false;
		in->p++;
		if (in->p >= in->end || !isdigit((unsigned char)*in->p))
			return -1;
		while (in->p < in->end && isdigit((unsigned char)*in->p))
			in->p++;
	}
	if (in->p < in->end && (*in->p == 'e' || *in->p == 'E')) {
		is_int = false;
		in->p++;
		if (in->p < in->end && (*in->p == '+' || *in->p == '-'))
			in->p++;
		if (in->p >= in->end || !isdigit((unsigned char)*in->p))
			return -1;
		while (in->p < in->end && isdigit((unsigned char)*in->p))
			in->p++;
	}
	if ((size_t)(in->p - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(in->p - s));
	buf[in->p - s] = '\0';
	ret->t = JM_NUM;
	ret->num = strtod(buf, NULL);
	ret->is_int = is_int;
	if (is_int)
		ret->ll = strtoll(buf, NULL, 10);
	return 0;
}

static int
jm_lit(struct jm_in *in, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(in->end - in->p) < n || memcmp(in->p, w, n) != 0)
		return -1;
	in->p += n;
	return 0;
}

static int
jm_container(struct jm_in *in, struct jm *ret, bool obj)
{
	size_t cap = 0;

	ret->t = obj ? JM_OBJ : JM_ARR;
	in->p++;
	jm_ws(in);
	if (in->p < in->end && *in->p == (obj ? '}' : ']')) {
		in->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		if (ret->n == cap) {
			cap = cap ? cap * 2 : 8;
			ret->v = realloc(ret->v, cap * sizeof(*ret->v));
			if (obj)
				ret->keys = realloc(ret->keys,
				    cap * sizeof(*ret->keys));
		}
		jm_ws(in);
		if (obj) {
			if ((key = jm_string(in)) == NULL)
				return -1;
			jm_ws(in);
			if (in->p >= in->end || *in->p != ':') {
				free(key);
				return -1;
			}
			in->p++;
			ret->keys[ret->n] = key;
		}
		memset(&ret->v[ret->n], 0, sizeof(ret->v[0]));
		ret->n++;
		if (jm_value(in, &ret->v[ret->n - 1]) < 0)
			return -1;
		jm_ws(in);
		if (in->p >= in->end)
			return -1;
		if (*in->p == ',') {
			in->p++;
			continue;
		}
		if (*in->p == (obj ? '}' : ']')) {
			in->p++;
			return 0;
		}
		return -1;
	}
}

/*
 * A string holding a canonical decimal integer (proto3's JSON form of a
 * 64-bit integer: "-12", "0", "18446744073709551615") also carries its
 * value: num always, ll and is_int when it fits a long long. t stays
 * JM_STR, so a test can tell the two forms apart.
 */
static void
jm_int_string(struct jm *v)
{
	const char *p = v->str;
	char *end;

	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9' || (*p == '0' && p[1] != '\0'))
		return;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return;
	errno = 0;
	v->ll = strtoll(v->str, &end, 10);
	v->is_int = errno == 0;
	v->num = strtod(v->str, NULL);
	if (!v->is_int)
		v->ll = 0;
}

static int
jm_value(struct jm_in *in, struct jm *ret)
{
	int r;

	if (++in->depth > 200)
		return -1;
	jm_ws(in);
	if (in->p >= in->end)
		return -1;
	switch (*in->p) {
	case '{':
		r = jm_container(in, ret, true);
		break;
	case '[':
		r = jm_container(in, ret, false);
		break;
	case '"':
		ret->t = JM_STR;
		r = (ret->str = jm_string(in)) ? 0 : -1;
		if (r == 0)
			jm_int_string(ret);
		break;
	case 't':
		ret->t = JM_BOOL;
		ret->b = true;
		r = jm_lit(in, "true");
		break;
	case 'f':
		ret->t = JM_BOOL;
		r = jm_lit(in, "false");
		break;
	case 'n':
		ret->t = JM_NULL;
		r = jm_lit(in, "null");
		break;
	default:
		r = jm_number(in, ret);
		break;
	}
	in->depth--;
	return r;
}

/* The document, or NULL when it is not exactly one valid JSON value. */
struct jm *
jm_parse(const char *s, size_t len)
{
	struct jm_in in = { s, s + len, 0 };
	struct jm *j = calloc(1, sizeof(*j));

	if (jm_value(&in, j) < 0) {
		jm_free(j);
		return NULL;
	}
	jm_ws(&in);
	if (in.p != in.end) {
		jm_free(j);
		return NULL;
	}
	return j;
}

const struct jm *
jm_get(const struct jm *o, const char *key)
{
	size_t i;

	if (o == NULL || o->t != JM_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->v[i];
	return NULL;
}

/* "a.b.c" through objects. */
const struct jm *
jm_path(const struct jm *o, const char *path)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o;
	     tok = strtok_r(NULL, ".", &save))
		o = jm_get(o, tok);
	return o;
}

const struct jm *
jm_find_id(const struct jm *arr, long long id)
{
	size_t i;

	for (i = 0; arr && arr->t == JM_ARR && i < arr->n; i++) {
		const struct jm *v = jm_get(&arr->v[i], "id");

		if (jm_is_int(v) && v->ll == id)
			return &arr->v[i];
	}
	return NULL;
}
