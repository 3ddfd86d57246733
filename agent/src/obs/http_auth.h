/* SPDX-License-Identifier: Apache-2.0 */
/* http_auth: the cache of /metrics authorization decisions, keyed by the
 * SHA-256 of the bearer token (tokens themselves are never kept). Both
 * answers are cached for HTTP_AUTH_TTL_US, as kubelet's delegated authn/
 * authz caches them; the cache is bounded (the entry nearest to expiry
 * makes room). Pure but for the hash: the caller passes the clock.
 * Not thread safe: the HTTP thread owns it (http.c locks around it). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_AUTH_TTL_US (60ull * 1000000)
#define HTTP_AUTH_MAX 256

struct http_auth_key {
	unsigned char h[32];
};

struct http_auth_entry {
	struct http_auth_key key;
	bool allowed;
	uint64_t expires_us;
	char user[128];
};

struct http_auth_cache {
	struct http_auth_entry e[HTTP_AUTH_MAX];
	size_t n;
};

/* The key of a token (SHA-256). */
void http_auth_key_of(const char *token, size_t len, struct http_auth_key *ret);

/* The token of an Authorization header value ("Bearer <t>", scheme case
 * insensitive, surrounding spaces skipped). Returns 0 with *ret and *ret_len
 * pointing into value, -ENOENT for another scheme or an empty token. */
int http_auth_parse_bearer(const char *value, const char **ret,
			   size_t *ret_len);

/* 1 and *ret_allowed (and user, when size > 0) for a live entry, 0 when
 * there is none (expired entries count as none). */
int http_auth_lookup(const struct http_auth_cache *c,
		     const struct http_auth_key *k, uint64_t now_us,
		     bool *ret_allowed, char *user, size_t size);

/* Stores a decision made at now_us (replacing an entry of the same key). */
void http_auth_store(struct http_auth_cache *c, const struct http_auth_key *k,
		     bool allowed, const char *user, uint64_t now_us);
