/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <openssl/sha.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "obs/http_auth.h"

void http_auth_key_of(const char *token, size_t len, struct http_auth_key *ret)
{
	SHA256((const unsigned char *)token, len, ret->h);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

int http_auth_parse_bearer(const char *value, const char **ret, size_t *ret_len)
{
	const char *s = value, *end;

	while (is_space(*s))
		s++;
	if (strncasecmp(s, "bearer", 6) != 0 || !is_space(s[6]))
		return -ENOENT;
	s += 6;
	while (is_space(*s))
		s++;
	end = s + strlen(s);
	while (end > s && (is_space(end[-1]) || end[-1] == '\r'))
		end--;
	if (end == s)
		return -ENOENT;
	*ret = s;
	*ret_len = (size_t)(end - s);
	return 0;
}

static struct http_auth_entry *find(const struct http_auth_cache *c,
				    const struct http_auth_key *k)
{
	for (size_t i = 0; i < c->n; i++)
		if (memcmp(c->e[i].key.h, k->h, sizeof(k->h)) == 0)
			return (struct http_auth_entry *)&c->e[i];
	return NULL;
}

int http_auth_lookup(const struct http_auth_cache *c,
		     const struct http_auth_key *k, uint64_t now_us,
		     bool *ret_allowed, char *user, size_t size)
{
	const struct http_auth_entry *e = find(c, k);

	if (!e || now_us >= e->expires_us)
		return 0;
	*ret_allowed = e->allowed;
	if (user && size)
		strlcpy_safe(user, e->user, size);
	return 1;
}

void http_auth_store(struct http_auth_cache *c, const struct http_auth_key *k,
		     bool allowed, const char *user, uint64_t now_us)
{
	struct http_auth_entry *e = find(c, k);

	if (!e && c->n < HTTP_AUTH_MAX) {
		e = &c->e[c->n++];
	} else if (!e) {
		/* full: the entry nearest to (or past) expiry goes */
		e = &c->e[0];
		for (size_t i = 1; i < c->n; i++)
			if (c->e[i].expires_us < e->expires_us)
				e = &c->e[i];
	}
	e->key = *k;
	e->allowed = allowed;
	e->expires_us = now_us + HTTP_AUTH_TTL_US;
	strlcpy_safe(e->user, user ? user : "", sizeof(e->user));
}
