/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the configuration parser: the input is a config
 * file's text, split into lines and fed through config_set() exactly as
 * config_parse_file() does after reading a line, then config_check().
 * The file is root's to write, but a typo or a hostile edit must give an
 * error, never a crash or an unbounded value.
 */
#include <stdlib.h>
#include <string.h>

#include "vitalsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s &&
	    (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *nl;
	struct config cfg;
	char line[1024], err[256];

	config_init(&cfg);
	for (; p < end; p = nl + 1) {
		char *s, *eq;
		size_t n;

		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n >= sizeof(line))
			break; /* "line too long" in the file reader */
		memcpy(line, p, n);
		line[n] = '\0';
		if (memchr(line, '\0', n) != NULL && strlen(line) < n)
			continue; /* fgets stops at no NUL: a text file has none */
		s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		if ((eq = strchr(s, '=')) == NULL)
			break;
		*eq = '\0';
		if (config_set(&cfg, trim(s), trim(eq + 1)) < 0)
			break;
	}
	err[0] = '\0';
	if (config_check(&cfg, err, sizeof(err)) < 0 && err[0] == '\0')
		abort(); /* every refusal names its reason */
	config_release(&cfg);
	return 0;
}
