/* SPDX-License-Identifier: Apache-2.0 */
/* The /metrics authorization cache: bearer parsing, positive and negative
 * answers live for a minute, the bound, keys are token hashes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "obs/http_auth.h"

Test(http_auth, bearer)
{
	const char *t;
	size_t n;

	cr_assert_eq(http_auth_parse_bearer("Bearer abc.def", &t, &n), 0);
	cr_assert_eq(n, 7);
	cr_assert_eq(strncmp(t, "abc.def", n), 0);
	cr_assert_eq(http_auth_parse_bearer("  bearer\t xyz \r", &t, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_eq(strncmp(t, "xyz", n), 0);
	cr_assert_eq(http_auth_parse_bearer("Basic dXNlcjpwYXNz", &t, &n),
		     -ENOENT);
	cr_assert_eq(http_auth_parse_bearer("Bearer   ", &t, &n), -ENOENT);
	cr_assert_eq(http_auth_parse_bearer("Bearerxyz", &t, &n), -ENOENT);
	cr_assert_eq(http_auth_parse_bearer("", &t, &n), -ENOENT);
}

Test(http_auth, ttl_positive_and_negative)
{
	static struct http_auth_cache c;
	struct http_auth_key good, bad;
	bool allowed = false;
	char user[64] = "";
	const uint64_t t0 = 1000000000;

	http_auth_key_of("good", 4, &good);
	http_auth_key_of("bad", 3, &bad);
	cr_assert_neq(memcmp(good.h, bad.h, sizeof(good.h)), 0);
	cr_assert_eq(http_auth_lookup(&c, &good, t0, &allowed, NULL, 0), 0);
	http_auth_store(&c, &good, true, "system:serviceaccount:m:prom", t0);
	http_auth_store(&c, &bad, false, "", t0);
	cr_assert_eq(http_auth_lookup(&c, &good, t0 + 59000000, &allowed, user,
				      sizeof(user)),
		     1);
	cr_assert(allowed);
	cr_assert_str_eq(user, "system:serviceaccount:m:prom");
	cr_assert_eq(
		http_auth_lookup(&c, &bad, t0 + 59000000, &allowed, NULL, 0),
		1);
	cr_assert_not(allowed);
	cr_assert_eq(http_auth_lookup(&c, &good, t0 + HTTP_AUTH_TTL_US,
				      &allowed, NULL, 0),
		     0);
	/* a fresh answer replaces the entry, not a second one */
	http_auth_store(&c, &bad, true, "now-ok", t0 + HTTP_AUTH_TTL_US);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(http_auth_lookup(&c, &bad, t0 + HTTP_AUTH_TTL_US + 1,
				      &allowed, NULL, 0),
		     1);
	cr_assert(allowed);
}

Test(http_auth, bounded)
{
	static struct http_auth_cache c;
	struct http_auth_key k;
	char tok[32];
	bool allowed;

	for (unsigned i = 0; i < HTTP_AUTH_MAX + 10; i++) {
		snprintf(tok, sizeof(tok), "t%u", i);
		http_auth_key_of(tok, strlen(tok), &k);
		http_auth_store(&c, &k, true, tok, 1000 + i);
	}
	cr_assert_eq(c.n, HTTP_AUTH_MAX);
	/* the oldest went, the newest stayed */
	http_auth_key_of("t0", 2, &k);
	cr_assert_eq(http_auth_lookup(&c, &k, 2000, &allowed, NULL, 0), 0);
	snprintf(tok, sizeof(tok), "t%u", HTTP_AUTH_MAX + 9);
	http_auth_key_of(tok, strlen(tok), &k);
	cr_assert_eq(http_auth_lookup(&c, &k, 2000, &allowed, NULL, 0), 1);
}
