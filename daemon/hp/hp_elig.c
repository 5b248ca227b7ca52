/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who may be heap-profiled, as Android's heapprofd decides it (Perfetto's
 * CanProfileAndroid, doc/heapprofd.md): heapprofd's process-name
 * normalisation, the packages.list parser and the eligibility rules by uid
 * range, session initiator and package flags. Pure: bytes in, answers out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hp/hp.h"

/* libcutils android_filesystem_config.h */
#define AID_USER_OFFSET 100000
#define AID_APP_START 10000
#define AID_APP_END 19999
#define AID_SDK_SANDBOX_START 20000
#define AID_SDK_SANDBOX_END 29999
#define AID_ISOLATED_START 90000
#define AID_ISOLATED_END 99999

/*
 * heapprofd's normalisation of a /proc/<pid>/cmdline (or of a configured
 * name): the first NUL-terminated argument, cut at its first '@', then
 * everything up to its last '/' dropped. No NUL within len: -EOVERFLOW, as
 * heapprofd refuses such a cmdline. An empty result: -ENODATA.
 */
int
hp_normalize(const char *cmdline, size_t len, char *ret, size_t retsz)
{
	const char *end, *at, *slash, *start;
	size_t n;

	if (cmdline == NULL || ret == NULL || retsz == 0)
		return -EINVAL;
	if ((end = memchr(cmdline, '\0', len)) == NULL)
		return -EOVERFLOW;
	if ((at = memchr(cmdline, '@', (size_t)(end - cmdline))) != NULL)
		end = at;
	slash = memrchr(cmdline, '/', (size_t)(end - cmdline));
	start = slash ? slash + 1 : cmdline;
	n = (size_t)(end - start);
	if (n == 0)
		return -ENODATA;
	if (n >= retsz)
		return -ENAMETOOLONG;
	memcpy(ret, start, n);
	ret[n] = '\0';
	return 0;
}

/* A decimal integer field, as Perfetto's parser takes it (strtoll). */
static int
field_int(const char *s, long long *ret)
{
	char *end;

	if (*s == '\0')
		return -EINVAL;
	errno = 0;
	*ret = strtoll(s, &end, 10);
	if (*end != '\0' || errno)
		return -EINVAL;
	return 0;
}

static void
copy_field(char *dst, size_t sz, const char *s)
{
	size_t n = strlen(s);

	if (n >= sz)
		n = sz - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/*
 * One line: name uid debuggable data_dir seinfo gids profileable_from_shell
 * version_code profileable installer, separated by single spaces. Fields
 * past the last present one keep their zero values, as in Perfetto's
 * parser; a line without a name and a numeric uid, or with a numeric field
 * that is not a number, is malformed.
 */
static int
parse_line(char *line, struct hp_package *ret)
{
	struct hp_package pkg;
	char *tok, *save = NULL;
	unsigned idx = 0;
	long long v;

	memset(&pkg, 0, sizeof(pkg));
	for (tok = strtok_r(line, " ", &save); tok != NULL;
	     tok = strtok_r(NULL, " ", &save), idx++) {
		switch (idx) {
		case 0:
			if (strlen(tok) >= sizeof(pkg.name))
				return -ENAMETOOLONG;
			copy_field(pkg.name, sizeof(pkg.name), tok);
			break;
		case 1:
			if (field_int(tok, &v) < 0 || v < 0)
				return -EINVAL;
			pkg.uid = (uint64_t)v;
			break;
		case 2:
			if (field_int(tok, &v) < 0)
				return -EINVAL;
			pkg.debuggable = v != 0;
			break;
		case 6:
			if (field_int(tok, &v) < 0)
				return -EINVAL;
			pkg.profileable_from_shell = v != 0;
			break;
		case 7:
			if (field_int(tok, &v) < 0)
				return -EINVAL;
			pkg.version_code = v;
			break;
		case 8:
			if (field_int(tok, &v) < 0)
				return -EINVAL;
			pkg.profileable = v != 0;
			break;
		case 9:
			copy_field(pkg.installer, sizeof(pkg.installer), tok);
			break;
		default:
			break;
		}
	}
	if (idx < 2)
		return -EINVAL;
	*ret = pkg;
	return 0;
}

int
hp_packages_parse(const char *buf, size_t len, struct hp_packages *ret)
{
	struct hp_packages pk = { 0 };
	const char *p = buf, *end = buf + len, *nl;
	unsigned lineno = 0;
	char line[4096];

	while (p < end) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl ? nl : end) - p);
		lineno++;
		if (n == 0) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (pk.n == pk.cap) {
			size_t cap = pk.cap ? pk.cap * 2 : 64;
			struct hp_package *np = realloc(pk.p,
			    cap * sizeof(*np));

			if (np == NULL) {
				hp_packages_release(&pk);
				return -ENOMEM;
			}
			pk.p = np;
			pk.cap = cap;
		}
		if (n >= sizeof(line) || memchr(p, '\0', n) != NULL) {
			pk.malformed++;
		} else {
			memcpy(line, p, n);
			line[n] = '\0';
			if (line[n - 1] == '\r')
				line[n - 1] = '\0';
			if (parse_line(line, &pk.p[pk.n]) == 0)
				pk.n++;
			else
				pk.malformed++;
		}
		if (pk.malformed && pk.first_bad_line == 0)
			pk.first_bad_line = lineno;
		p = nl ? nl + 1 : end;
	}
	*ret = pk;
	return 0;
}

void
hp_packages_release(struct hp_packages *pk)
{
	if (pk == NULL)
		return;
	free(pk->p);
	memset(pk, 0, sizeof(*pk));
}

static const struct hp_package *
find_uid(const struct hp_packages *pk, uint64_t uid)
{
	size_t i;

	for (i = 0; i < pk->n; i++)
		if (pk->p[i].uid == uid)
			return &pk->p[i];
	return NULL;
}

static bool
all_profileable(const struct hp_packages *pk)
{
	size_t i;

	for (i = 0; i < pk->n; i++)
		if (!pk->p[i].profileable && !pk->p[i].debuggable)
			return false;
	return true;
}

static bool
verdict(enum hp_elig_why why, enum hp_elig_why *ret_why)
{
	*ret_why = why;
	return why < HP_ELIG_HOST_REFUSE;
}

/*
 * Android's rules on a user build, by the uid without its user offset:
 * platform uids only for a trusted-system initiator; app uids, and SDK
 * sandbox uids mapped to their app, by the package's flags (debuggable,
 * or profileable_from_shell for an unspecified initiator, profileable for
 * a trusted-system one) after the installer filter; isolated uids only
 * for a trusted-system initiator when every package may be profiled by
 * it; nothing else. A packages.list with malformed lines answers no, as
 * Perfetto refuses a file it cannot parse.
 */
bool
hp_eligible(const struct hp_elig_policy *pol, const struct hp_packages *pk,
    uint32_t uid, enum hp_elig_why *ret_why)
{
	bool trusted = pol->initiator == HP_INIT_TRUSTED_SYSTEM;
	uint64_t appid = uid % AID_USER_OFFSET, lookup;
	const struct hp_package *p;
	unsigned i;

	if (pol->build != HP_BUILD_USER)
		return verdict(HP_ELIG_DEBUG_BUILD, ret_why);
	if (pk == NULL)
		return verdict(pol->host == HP_HOST_ALLOW ? HP_ELIG_HOST_ALLOW :
							    HP_ELIG_HOST_REFUSE,
		    ret_why);
	if (appid < AID_APP_START)
		return verdict(trusted ? HP_ELIG_PLATFORM_TRUSTED :
					 HP_ELIG_PLATFORM_UID,
		    ret_why);
	if (pk->malformed)
		return verdict(HP_ELIG_MALFORMED, ret_why);
	if (appid <= AID_APP_END)
		lookup = appid;
	else if (appid >= AID_SDK_SANDBOX_START && appid <= AID_SDK_SANDBOX_END)
		lookup = appid - (AID_SDK_SANDBOX_START - AID_APP_START);
	else if (appid >= AID_ISOLATED_START && appid <= AID_ISOLATED_END)
		return verdict(trusted && all_profileable(pk) ?
			HP_ELIG_ISOLATED_TRUSTED :
			HP_ELIG_ISOLATED_UID,
		    ret_why);
	else
		return verdict(HP_ELIG_OTHER_UID, ret_why);

	if ((p = find_uid(pk, lookup)) == NULL)
		return verdict(HP_ELIG_NO_PACKAGE, ret_why);
	if (pol->ninstalled_by) {
		for (i = 0; i < pol->ninstalled_by; i++)
			if (p->installer[0] &&
			    !strcmp(p->installer, pol->installed_by[i]))
				break;
		if (i == pol->ninstalled_by)
			return verdict(HP_ELIG_INSTALLER, ret_why);
	}
	if (p->debuggable ||
	    (trusted ? p->profileable : p->profileable_from_shell))
		return verdict(HP_ELIG_OK, ret_why);
	return verdict(HP_ELIG_NOT_PROFILEABLE, ret_why);
}

const char *
hp_elig_why_name(enum hp_elig_why why)
{
	static const char *const names[HP_ELIG__MAX] = {
		[HP_ELIG_OK] = "package allows it",
		[HP_ELIG_DEBUG_BUILD] = "not a user build",
		[HP_ELIG_HOST_ALLOW] = "no packages.list, host policy allows",
		[HP_ELIG_PLATFORM_TRUSTED] = "platform uid, trusted-system",
		[HP_ELIG_ISOLATED_TRUSTED] =
		    "isolated uid, trusted-system, every package profileable",
		[HP_ELIG_HOST_REFUSE] =
		    "no packages.list and the host policy refuses",
		[HP_ELIG_PLATFORM_UID] =
		    "platform uid: only a trusted-system session may profile it",
		[HP_ELIG_ISOLATED_UID] =
		    "isolated uid: only a trusted-system "
		    "session, with every package profileable",
		[HP_ELIG_OTHER_UID] = "uid outside the profileable ranges",
		[HP_ELIG_NO_PACKAGE] = "no packages.list entry for the uid",
		[HP_ELIG_INSTALLER] = "not installed by target_installed_by",
		[HP_ELIG_NOT_PROFILEABLE] =
		    "package not profileable by this "
		    "initiator (needs debuggable or the matching profileable "
		    "flag)",
		[HP_ELIG_MALFORMED] = "packages.list has malformed lines",
	};

	return (unsigned)why < HP_ELIG__MAX ? names[why] : "?";
}

const char *
hp_refusal_name(enum hp_refusal r)
{
	static const char *const names[HP_REFUSE__MAX] = {
		[HP_OK] = "ok",
		[HP_REFUSE_NOT_ELIGIBLE] = "not_eligible",
		[HP_REFUSE_RATE_PROCESS] = "rate_limited_process",
		[HP_REFUSE_RATE_SYSTEM] = "rate_limited_system",
		[HP_REFUSE_IN_PROGRESS] = "in_progress",
		[HP_REFUSE_INVALID] = "invalid_request",
		[HP_REFUSE_UNAVAILABLE] = "unavailable",
	};

	return (unsigned)r < HP_REFUSE__MAX ? names[r] : "?";
}

const char *
hp_initiator_name(enum hp_initiator i)
{
	return i == HP_INIT_TRUSTED_SYSTEM ? "trusted-system" : "unspecified";
}

/* ro.build.type's values (and the heapprofd_build_type key's). */
int
hp_build_parse(const char *value, enum hp_build *ret)
{
	if (!strcmp(value, "user"))
		*ret = HP_BUILD_USER;
	else if (!strcmp(value, "userdebug"))
		*ret = HP_BUILD_USERDEBUG;
	else if (!strcmp(value, "eng"))
		*ret = HP_BUILD_ENG;
	else
		return -EINVAL;
	return 0;
}

const char *
hp_build_name(enum hp_build b)
{
	return b == HP_BUILD_ENG    ? "eng" :
	    b == HP_BUILD_USERDEBUG ? "userdebug" :
				      "user";
}

const char *
hp_spawn_state_name(enum hp_spawn_state s)
{
	static const char *const names[] = {
		[HP_SPAWN_NONE] = "no perfetto",
		[HP_SPAWN_DIRECT] = "direct",
		[HP_SPAWN_HELPER] = "helper",
		[HP_SPAWN_BLOCKED] = "blocked by seccomp",
		[HP_SPAWN_FAILED] = "helper failed",
		[HP_SPAWN_LOST] = "helper lost",
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
