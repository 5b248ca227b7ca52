/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the heapprofd triggers' parsers of text vitalsd does
 * not control: a packages.list (then eligibility of every uid it names,
 * under every initiator), a rule line, a cmdline to normalise. The first
 * input byte picks the parser; the rest is its input.
 */
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
packages(const char *buf, size_t len)
{
	struct hp_elig_policy pol = { .build = HP_BUILD_USER };
	struct hp_packages pk;
	enum hp_elig_why why;
	size_t i;

	if (hp_packages_parse(buf, len, &pk) < 0)
		return;
	if (pk.n > 0 && pk.p[0].installer[0]) {
		pol.ninstalled_by = 1;
		memcpy(pol.installed_by[0], pk.p[0].installer, HP_NAME_MAX);
	}
	for (i = 0; i < pk.n; i++) {
		uint32_t uid = (uint32_t)pk.p[i].uid;

		pol.initiator = HP_INIT_UNSPECIFIED;
		(void)hp_eligible(&pol, &pk, uid, &why);
		(void)hp_elig_why_name(why);
		pol.initiator = HP_INIT_TRUSTED_SYSTEM;
		(void)hp_eligible(&pol, &pk, uid + 80000, &why);
		(void)hp_eligible(&pol, &pk, uid + 10000, &why);
	}
	hp_packages_release(&pk);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[HP_NAME_MAX], err[200], *s;
	struct hp_rule r;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		packages((const char *)data + 1, size - 1);
		break;
	case 1:
		if ((s = malloc(size)) == NULL)
			return 0;
		memcpy(s, data + 1, size - 1);
		s[size - 1] = '\0';
		(void)hp_rule_parse(s, &r, err, sizeof(err));
		free(s);
		break;
	default:
		(void)hp_normalize((const char *)data + 1, size - 1, out,
		    sizeof(out));
		break;
	}
	return 0;
}
