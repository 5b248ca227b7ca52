/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metrics_* keys (the OpenMetrics endpoint, export/) and the address
 * syntax of metrics_listen, the otlp_* keys (OTLP push) and the URL syntax
 * of otlp_endpoint, so that vitalsd -n refuses a bad one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "config/config.h"
#include "core/util.h"

int
config_parse_listen(const char *s, struct sockaddr_storage *ret,
    socklen_t *ret_len)
{
	char host[64];
	const char *colon, *port;
	unsigned long p;
	char *end;

	memset(ret, 0, sizeof(*ret));
	if (s == NULL || *s == '\0')
		return -EINVAL;
	if (!strncmp(s, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)ret;

		if (s[5] == '\0' || strlen(s + 5) >= sizeof(un->sun_path))
			return -EINVAL;
		un->sun_family = AF_UNIX;
		strcpy(un->sun_path, s + 5);
		*ret_len = sizeof(*un);
		return 0;
	}
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (rb == NULL || rb[1] != ':' ||
		    (size_t)(rb - s - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(rb - s - 1));
		host[rb - s - 1] = '\0';
		port = rb + 2;
	} else {
		if ((colon = strrchr(s, ':')) == NULL ||
		    (size_t)(colon - s) >= sizeof(host) || colon == s)
			return -EINVAL;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (*port == '\0' || *end != '\0' || errno || p == 0 || p > 65535)
		return -EINVAL;
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ret;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*ret_len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ret;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*ret_len = sizeof(*a);
	}
	return 0;
}

void
config_metrics_init(struct config *cfg)
{
	cfg->metrics_listen = NULL;
	cfg->metrics_top_n = 50;
	cfg->metrics_max_conns = 8;
	cfg->metrics_timeout_ms = 5000;
	cfg->metrics_max_request = 8192;
	cfg->otlp_endpoint = NULL;
	cfg->otlp_interval_s = 10;
	cfg->otlp_queue_max = 60;
	cfg->otlp_timeout_ms = 10000;
}

/* -ENOENT: not a metrics_* key */
int
config_metrics_set(struct config *cfg, const char *key, const char *value)
{
	if (!strcmp(key, "metrics_listen")) {
		struct sockaddr_storage ss;
		socklen_t sl;
		char *s;

		if (!strcmp(value, "off") || *value == '\0') {
			free(cfg->metrics_listen);
			cfg->metrics_listen = NULL;
			return 0;
		}
		if (config_parse_listen(value, &ss, &sl) < 0)
			return -EINVAL;
		if ((s = strdup(value)) == NULL)
			return -ENOMEM;
		free(cfg->metrics_listen);
		cfg->metrics_listen = s;
		return 0;
	}
	if (!strcmp(key, "metrics_top_n"))
		return parse_u32_range(value, 0, 1000, &cfg->metrics_top_n);
	if (!strcmp(key, "metrics_max_connections"))
		return parse_u32_range(value, 1, 1024, &cfg->metrics_max_conns);
	if (!strcmp(key, "metrics_timeout_ms"))
		return parse_u32_range(value, 100, 600000,
		    &cfg->metrics_timeout_ms);
	if (!strcmp(key, "metrics_max_request"))
		return parse_u32_range(value, 256, 1u << 20,
		    &cfg->metrics_max_request);
	return -ENOENT;
}

int
config_parse_url(const char *url, char *ret_host, size_t hostsz,
    uint16_t *ret_port, char *ret_path, size_t pathsz)
{
	const char *h, *end, *colon, *path;
	unsigned long port = 4318; /* OTLP/HTTP's */
	size_t hn, pn;

	if (url == NULL || strncmp(url, "http://", 7) != 0)
		return -EINVAL;
	h = url + 7;
	path = h + strcspn(h, "/?#");
	if (*path == '?' || *path == '#')
		return -EINVAL;
	if (*h == '[') { /* [V6] */
		if ((end = memchr(h, ']', (size_t)(path - h))) == NULL)
			return -EINVAL;
		colon = end + 1 < path && end[1] == ':' ? end + 1 : NULL;
		if (colon == NULL && end + 1 != path)
			return -EINVAL;
		h++;
		hn = (size_t)(end - h);
	} else {
		colon = memchr(h, ':', (size_t)(path - h));
		hn = (size_t)((colon ? colon : path) - h);
		if (memchr(h, '@', (size_t)(path - h)))
			return -EINVAL; /* no credentials in a URL here */
	}
	if (colon) {
		char *e;

		errno = 0;
		port = strtoul(colon + 1, &e, 10);
		if (e != path || e == colon + 1 || errno || port == 0 ||
		    port > 65535)
			return -EINVAL;
	}
	if (hn == 0 || hn >= hostsz)
		return -EINVAL;
	pn = strlen(path);
	while (pn && path[pn - 1] == '/')
		pn--;
	if (pn >= pathsz || strpbrk(path, " \t\r\n?#"))
		return -EINVAL;
	memcpy(ret_host, h, hn);
	ret_host[hn] = '\0';
	memcpy(ret_path, path, pn);
	ret_path[pn] = '\0';
	*ret_port = (uint16_t)port;
	return 0;
}

/* -ENOENT: not an otlp_* key */
int
config_otlp_set(struct config *cfg, const char *key, const char *value)
{
	if (!strcmp(key, "otlp_endpoint")) {
		char host[256], path[256], *s;
		uint16_t port;

		if (!strcmp(value, "off") || *value == '\0') {
			free(cfg->otlp_endpoint);
			cfg->otlp_endpoint = NULL;
			return 0;
		}
		if (config_parse_url(value, host, sizeof(host), &port, path,
			sizeof(path)) < 0)
			return -EINVAL;
		if ((s = strdup(value)) == NULL)
			return -ENOMEM;
		free(cfg->otlp_endpoint);
		cfg->otlp_endpoint = s;
		return 0;
	}
	if (!strcmp(key, "otlp_interval_s"))
		return parse_u32_range(value, 1, 86400, &cfg->otlp_interval_s);
	if (!strcmp(key, "otlp_queue_max"))
		return parse_u32_range(value, 1, 10000, &cfg->otlp_queue_max);
	if (!strcmp(key, "otlp_timeout_ms"))
		return parse_u32_range(value, 100, 600000,
		    &cfg->otlp_timeout_ms);
	return -ENOENT;
}
