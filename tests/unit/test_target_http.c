/* SPDX-License-Identifier: Apache-2.0 */
/* target_http: the pure parts of the HTTP publish target — the collector's
 * URL checked and split, the Idempotency-Key, the report part, the
 * multipart body (its boundary in neither part) and what a failed POST
 * means. The POSTs themselves: tests/integration/test_publish_http.py. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "publish/target_http.h"
#include "base/strbuf.h"
#include "base/util.h"

struct url_case {
	char url[96];
	int want;
	char server[64], path[64], where[96];
};

ParameterizedTestParameters(target_http, urls_split_or_refused)
{
	static struct url_case c[] = {
		{"https://collector.example:8443/oom/in?src=a&b=2", 0,
		 "https://collector.example:8443", "/oom/in?src=a&b=2",
		 "https://collector.example:8443/oom/in"},
		{"https://c.example", 0, "https://c.example", "/",
		 "https://c.example/"},
		{"https://127.0.0.1:9/x", 0, "https://127.0.0.1:9", "/x",
		 "https://127.0.0.1:9/x"},
		{"https://[::1]:9/x", 0, "https://[::1]:9", "/x",
		 "https://[::1]:9/x"},
		{"http://c.example/oom", -EINVAL, "", "", ""},
		{"ftp://c.example/oom", -EINVAL, "", "", ""},
		{"https://user:secret@c.example/oom", -EINVAL, "", "", ""},
		{"https://user@c.example/oom", -EINVAL, "", "", ""},
		{"c.example/oom", -EINVAL, "", "", ""},
		{"", -EINVAL, "", "", ""},
		{"https://", -EINVAL, "", "", ""},
	};

	return cr_make_param_array(struct url_case, c, ARRAY_SIZE(c));
}

ParameterizedTest(struct url_case *c, target_http, urls_split_or_refused)
{
	char server[64] = "x", path[64] = "x", where[96] = "x";
	int r = http_target_split_url(c->url, server, sizeof(server), path,
				      sizeof(path), where, sizeof(where));

	cr_assert_eq(r, c->want, "%s: %d", c->url, r);
	if (r < 0)
		return;
	cr_assert_str_eq(server, c->server);
	cr_assert_str_eq(path, c->path);
	cr_assert_str_eq(where, c->where, "the query is never logged");
}

Test(target_http, a_part_too_long_for_its_buffer_is_e2big)
{
	char server[16], path[64];

	cr_assert_eq(http_target_split_url("https://collector.example/oom",
					   server, sizeof(server), path,
					   sizeof(path), NULL, 0),
		     -E2BIG);
	cr_assert_eq(http_target_split_url("https://c.example/a/long/path",
					   path, sizeof(path), server, 8, NULL,
					   0),
		     -E2BIG);
}

static struct pub_item item(const char *node, const char *id)
{
	struct pub_item it = {0};

	snprintf(it.node, sizeof(it.node), "%s", node);
	snprintf(it.id, sizeof(it.id), "%s", id);
	return it;
}

Test(target_http, the_key_names_the_host_and_the_kill)
{
	struct pub_item a = item("web-1.example", "oom-3f1c2a8e-4711");
	struct pub_item b = item("we b\"x\r\n", "oom-3f1c2a8e-m12");
	struct pub_item c = item("", "oom-3f1c2a8e-1");
	char key[128];

	http_target_key(&a, key, sizeof(key));
	cr_assert_str_eq(key, "web-1.example/oom-3f1c2a8e-4711");
	http_target_key(&b, key, sizeof(key));
	cr_assert_str_eq(key, "we_b_x__/oom-3f1c2a8e-m12",
			 "nothing that would end a header line");
	http_target_key(&c, key, sizeof(key));
	cr_assert_str_eq(key, "-/oom-3f1c2a8e-1");
}

static struct json_object *report(const struct pub_item *it, const char *sha,
				  size_t len, const char *why)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o;

	strbuf_init(&sb, 1 << 16);
	cr_assert_eq(http_target_report(it, sha, len, why, &sb), 0);
	o = json_tokener_parse(sb.buf);
	cr_assert_not_null(o, "%s", sb.buf);
	return o;
}

/* The value at "key" or "key.sub" as a string; "null" for a null, NULL
 * when absent. */
static const char *str(struct json_object *o, const char *path)
{
	const char *dot = strchr(path, '.');
	char key[64];
	struct json_object *v;

	snprintf(key, sizeof(key), "%.*s",
		 (int)(dot ? (size_t)(dot - path) : strlen(path)), path);
	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	if (dot)
		return v ? str(v, dot + 1) : NULL;
	return v ? json_object_get_string(v) : "null";
}

Test(target_http, the_report_part_says_the_kill_and_its_bundle)
{
	struct pub_item it = item("web-1", "oom-3f1c2a8e-4711");
	char sha[65];
	struct json_object *o;

	memset(sha, 'a', 64);
	sha[64] = '\0';
	snprintf(it.cgroup, sizeof(it.cgroup), "/system.slice/app.service");
	snprintf(it.killed_at, sizeof(it.killed_at), "2026-12-07T03:00:00Z");
	it.killed_at_ms = 1796612400123;
	it.pid = 4242;
	snprintf(it.comm, sizeof(it.comm), "java");
	it.anon_rss = 1 << 20;
	it.limit = 64 << 20;
	it.usage = 63 << 20;
	snprintf(it.verdict, sizeof(it.verdict), "heap");
	snprintf(it.summary, sizeof(it.summary),
		 "a \"quoted\" summary, ünïcode and a / slash");
	o = report(&it, sha, 12345, NULL);
	cr_assert_str_eq(str(o, "schema"), "oomlens.io/kill/v1");
	cr_assert_str_eq(str(o, "id"), "oom-3f1c2a8e-4711");
	cr_assert_str_eq(str(o, "node"), "web-1");
	cr_assert_str_eq(str(o, "cgroup"), "/system.slice/app.service");
	cr_assert_str_eq(str(o, "killed_at"), "2026-12-07T03:00:00Z");
	cr_assert_str_eq(str(o, "killed_at_ms"), "1796612400123");
	cr_assert_str_eq(str(o, "victim.pid"), "4242");
	cr_assert_str_eq(str(o, "victim.comm"), "java");
	cr_assert_str_eq(str(o, "victim.anon_rss"), "1048576");
	cr_assert_str_eq(str(o, "limit"), "67108864");
	cr_assert_str_eq(str(o, "usage"), "66060288");
	cr_assert_str_eq(str(o, "verdict"), "heap");
	cr_assert_str_eq(str(o, "summary"),
			 "a \"quoted\" summary, ünïcode and a / slash");
	cr_assert_str_eq(str(o, "bundle.name"), "oom-3f1c2a8e-4711.tar.gz");
	cr_assert_str_eq(str(o, "bundle.size"), "12345");
	cr_assert_str_eq(str(o, "bundle.sha256"), sha);
	cr_assert_null(str(o, "bundle_error"));
	json_object_put(o);
}

/* No kernel report (no victim), no bundle file: nulls and why. */
Test(target_http, what_is_not_known_is_null)
{
	struct pub_item it = item("web-1", "oom-3f1c2a8e-m9");
	struct json_object *o =
		report(&it, NULL, 0, "No such file or directory");

	cr_assert_str_eq(str(o, "victim"), "null");
	cr_assert_str_eq(str(o, "limit"), "null");
	cr_assert_str_eq(str(o, "killed_at_ms"), "null");
	cr_assert_str_eq(str(o, "bundle"), "null");
	cr_assert_str_eq(str(o, "bundle_error"), "No such file or directory");
	json_object_put(o);
}

/* The body of report and bundle; its boundary from ctype. */
static void body(const char *rep, const void *bun, size_t blen,
		 struct strbuf *sb, char *b, size_t bsize)
{
	char ctype[128];
	const char *pre = "multipart/form-data; boundary=";

	strbuf_init(sb, 1 << 20);
	cr_assert_eq(http_target_body(rep, strlen(rep), bun, blen, "x.tar.gz",
				      sb, ctype, sizeof(ctype)),
		     0);
	cr_assert_eq(strncmp(ctype, pre, strlen(pre)), 0, "%s", ctype);
	snprintf(b, bsize, "%s", ctype + strlen(pre));
}

Test(target_http, the_body_is_two_parts_byte_for_byte)
{
	const char rep[] = "{\"id\":\"oom-1\"}";
	const unsigned char bun[] = {0x1f, 0x8b, 0, '\r', '\n', '-', '-', 0xff};
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf want = STRBUF_INIT;
	char b[128];

	body(rep, bun, sizeof(bun), &sb, b, sizeof(b));
	cr_assert_eq(strncmp(b, "oomlens-", 8), 0, "%s", b);
	strbuf_init(&want, 1 << 16);
	strbuf_addf(&want,
		    "--%s\r\nContent-Disposition: form-data; name=\"report\""
		    "\r\nContent-Type: application/json\r\n\r\n%s\r\n--%s\r\n"
		    "Content-Disposition: form-data; name=\"bundle\"; "
		    "filename=\"x.tar.gz\"\r\nContent-Type: application/gzip"
		    "\r\n\r\n",
		    b, rep, b);
	strbuf_add(&want, bun, sizeof(bun));
	strbuf_addf(&want, "\r\n--%s--\r\n", b);
	cr_assert_eq(sb.len, want.len);
	cr_assert_eq(memcmp(sb.buf, want.buf, sb.len), 0);
}

Test(target_http, the_same_kill_gets_the_same_body_and_no_bundle_one_part)
{
	const char rep[] = "{\"id\":\"oom-2\"}";
	_cleanup_strbuf_ struct strbuf a = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;
	char b1[128], b2[128];

	body(rep, "data", 4, &a, b1, sizeof(b1));
	body(rep, NULL, 0, &c, b2, sizeof(b2));
	cr_assert_str_eq(b1, b2, "the boundary comes from the report");
	cr_assert_null(strstr(c.buf, "name=\"bundle\""));
	cr_assert_not_null(strstr(c.buf, "name=\"report\""));
}

/* A bundle that holds the first boundary tried gets another one. */
Test(target_http, a_boundary_found_in_a_part_is_not_used)
{
	const char rep[] = "{\"id\":\"oom-3\"}";
	_cleanup_strbuf_ struct strbuf first = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char b[128], b2[128], planted[160];

	body(rep, NULL, 0, &first, b, sizeof(b));
	snprintf(planted, sizeof(planted), "xx--%s--yy", b);
	body(rep, planted, strlen(planted), &sb, b2, sizeof(b2));
	cr_assert_str_neq(b, b2);
	cr_assert_null(memmem(planted, strlen(planted), b2, strlen(b2)));
}

Test(target_http, a_body_over_its_cap_is_e2big)
{
	struct strbuf sb = STRBUF_INIT;
	char big[4096], ctype[128];

	memset(big, 'z', sizeof(big));
	strbuf_init(&sb, 1024);
	cr_assert_eq(http_target_body("{}", 2, big, sizeof(big), "b.tar.gz",
				      &sb, ctype, sizeof(ctype)),
		     -E2BIG);
	strbuf_release(&sb);
}

struct outcome_case {
	int r;
	long status;
	enum pub_outcome want;
};

ParameterizedTestParameters(target_http, what_a_failed_post_means)
{
	static struct outcome_case c[] = {
		{-EIO, 500, PUB_RETRY},	       {-EIO, 503, PUB_RETRY},
		{-EAGAIN, 429, PUB_RETRY},     {-EIO, 408, PUB_RETRY},
		{-EBUSY, 409, PUB_RETRY},      {-EEXIST, 409, PUB_RETRY},
		{-EIO, 425, PUB_RETRY},	       {-EIO, 301, PUB_RETRY},
		{-EINVAL, 400, PUB_GIVE_UP},   {-EACCES, 401, PUB_GIVE_UP},
		{-EPERM, 403, PUB_GIVE_UP},    {-ENOENT, 404, PUB_GIVE_UP},
		{-E2BIG, 413, PUB_GIVE_UP},    {-EINVAL, 422, PUB_GIVE_UP},
		{-ECONNREFUSED, 0, PUB_RETRY}, {-ETIMEDOUT, 0, PUB_RETRY},
		{-EPROTO, 0, PUB_RETRY},       {-ECONNRESET, 0, PUB_RETRY},
		{-ENOENT, 0, PUB_RETRY},       {-ECANCELED, 0, PUB_RETRY},
		{-ENOMEM, 0, PUB_RETRY},       {-EINVAL, 0, PUB_GIVE_UP},
	};

	return cr_make_param_array(struct outcome_case, c, ARRAY_SIZE(c));
}

ParameterizedTest(struct outcome_case *c, target_http, what_a_failed_post_means)
{
	struct kube_error e = {.http_status = c->status, .code = c->r};

	cr_assert_eq(http_target_classify(NULL, c->r, &e), c->want, "%d/%ld",
		     c->r, c->status);
}
