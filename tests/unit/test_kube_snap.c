/* SPDX-License-Identifier: Apache-2.0 */
/* kube_snap_check(): the OOMBundle snap-<pod> a pod uploads is checked in
 * every field the agent reads (a table of wrong types, missing, huge,
 * bad base64, size and sha256 mismatches, wrong owners); only a good one
 * decodes, and every refusal says why. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"

#define UID "0b6f1f6e-2f4a-4f7e-9d31-6a1f3b2c9d10"
#define PAYLOAD "\x1f\x8b pretend tar.gz"

static const struct kube_snap_want want = {
	.ns = "shop", .name = "snap-web-1", .pod = "web-1", .pod_uid = UID};

static void sha_hex(const void *d, size_t n, char out[65])
{
	unsigned char h[SHA256_DIGEST_LENGTH];

	SHA256(d, n, h);
	for (size_t i = 0; i < sizeof(h); i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

/* A good object for PAYLOAD as the sidecar uploads it. */
static struct json_object *good(void)
{
	char sha[65], text[2048];
	struct strbuf b64 = STRBUF_INIT;
	struct json_object *o;

	strbuf_init(&b64, 1024);
	cr_assert_eq(kube_base64_encode(PAYLOAD, strlen(PAYLOAD), &b64), 0);
	sha_hex(PAYLOAD, strlen(PAYLOAD), sha);
	snprintf(text, sizeof(text),
		 "{\"apiVersion\":\"oomlens.io/"
		 "v1alpha1\",\"kind\":\"OOMBundle\","
		 "\"metadata\":{\"name\":\"snap-web-1\",\"namespace\":\"shop\","
		 "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
		 "\"name\":\"web-1\",\"uid\":\"" UID "\"}]},"
		 "\"spec\":{\"data\":\"%s\",\"size\":%zu,\"sha256\":\"%s\"}}",
		 b64.buf, strlen(PAYLOAD), sha);
	strbuf_release(&b64);
	o = json_tokener_parse(text);
	cr_assert_not_null(o);
	return o;
}

static struct json_object *at(struct json_object *o, const char *a,
			      const char *b)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, a, &v);
	if (b)
		json_object_object_get_ex(v, b, &v);
	return v;
}

/* Sets parent.key (parent: "", "metadata", "spec", "owner") to the JSON
 * text value, or removes it when value is NULL. */
static void mutate(struct json_object *o, const char *parent, const char *key,
		   const char *value)
{
	struct json_object *p = o;

	if (!strcmp(parent, "metadata") || !strcmp(parent, "spec"))
		p = at(o, parent, NULL);
	else if (!strcmp(parent, "owner"))
		p = json_object_array_get_idx(
			at(o, "metadata", "ownerReferences"), 0);
	if (value)
		json_object_object_add(p, key, json_tokener_parse(value));
	else
		json_object_object_del(p, key);
}

struct bad {
	const char *parent, *key, *value; /* value NULL: removed */
	int err;
	const char *why; /* a piece of the sentence */
};

static const struct bad bad_cases[] = {
	{"", "metadata", NULL, -EBADMSG, "metadata"},
	{"", "metadata", "\"x\"", -EBADMSG, "metadata"},
	{"", "metadata", "[]", -EBADMSG, "metadata"},
	{"metadata", "name", NULL, -EBADMSG, "metadata.name"},
	{"metadata", "name", "7", -EBADMSG, "metadata.name"},
	{"metadata", "name", "\"snap-other\"", -EBADMSG, "metadata.name"},
	{"metadata", "namespace", "\"kube-system\"", -EBADMSG, "namespace"},
	{"metadata", "namespace", "{}", -EBADMSG, "namespace"},
	{"metadata", "ownerReferences", NULL, -EPERM, "not owned by pod"},
	{"metadata", "ownerReferences", "{\"kind\":\"Pod\"}", -EPERM, "owned"},
	{"metadata", "ownerReferences", "[\"Pod\",null,3]", -EPERM, "owned"},
	{"owner", "uid", "\"11111111-2222-3333-4444-555555555555\"", -EPERM,
	 UID},
	{"owner", "uid", "42", -EPERM, "owned"},
	{"owner", "name", "\"web-2\"", -EPERM, "owned"},
	{"owner", "kind", "\"ReplicaSet\"", -EPERM, "owned"},
	{"", "spec", NULL, -EBADMSG, "spec.data"},
	{"", "spec", "[1]", -EBADMSG, "spec.data"},
	{"spec", "data", NULL, -EBADMSG, "spec.data"},
	{"spec", "data", "12", -EBADMSG, "spec.data"},
	{"spec", "data", "{\"a\":1}", -EBADMSG, "spec.data"},
	{"spec", "data", "\"@@@@\"", -EBADMSG, "base64"},
	{"spec", "data", "\"abc\"", -EBADMSG, "base64"},
	{"spec", "data", "\"a=bc\"", -EBADMSG, "base64"},
	{"spec", "size", NULL, -EBADMSG, "spec.size"},
	{"spec", "size", "\"17\"", -EBADMSG, "spec.size"},
	{"spec", "size", "17.0", -EBADMSG, "spec.size"},
	{"spec", "size", "-1", -EBADMSG, "spec.size"},
	{"spec", "size", "true", -EBADMSG, "spec.size"},
	{"spec", "size", "16", -EBADMSG, "bytes of data"},
	{"spec", "size", "1099511627776", -EFBIG, "larger than"},
	{"spec", "sha256", NULL, -EBADMSG, "sha256"},
	{"spec", "sha256", "[]", -EBADMSG, "sha256"},
	{"spec", "sha256", "\"abc\"", -EBADMSG, "sha256"},
	{"spec", "sha256",
	 "\"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\"",
	 -EBADMSG, "sha256"},
	{"spec", "sha256",
	 "\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"",
	 -EBADMSG, "sha256 of the data"},
};

Test(kube_snap, good_one_decodes)
{
	struct json_object *o = good();
	unsigned char *d = NULL;
	size_t n = 0;
	char why[256] = "";

	cr_assert_eq(kube_snap_check(o, &want, &d, &n, why, sizeof(why)), 0,
		     "%s", why);
	cr_assert_eq(n, strlen(PAYLOAD));
	cr_assert_eq(memcmp(d, PAYLOAD, n), 0);
	free(d);
	/* another owner besides the pod (a garbage collector's) is fine */
	json_object_array_add(at(o, "metadata", "ownerReferences"),
			      json_tokener_parse("{\"kind\":\"X\"}"));
	cr_assert_eq(kube_snap_check(o, &want, &d, &n, why, sizeof(why)), 0,
		     "%s", why);
	free(d);
	json_object_put(o);
}

Test(kube_snap, every_bad_field_is_refused_with_a_reason)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad *c = &bad_cases[i];
		struct json_object *o = good();
		unsigned char *d = (unsigned char *)"untouched";
		size_t n = 12345;
		char why[256] = "";
		int r;

		mutate(o, c->parent, c->key, c->value);
		r = kube_snap_check(o, &want, &d, &n, why, sizeof(why));
		cr_assert_eq(r, c->err, "case %zu (%s.%s=%s): %d %s", i,
			     c->parent, c->key, c->value ? c->value : "-", r,
			     why);
		cr_assert(strstr(why, c->why), "case %zu: \"%s\"", i, why);
		cr_assert_eq(n, 12345, "case %zu: ret_len touched", i);
		cr_assert_str_eq((char *)d, "untouched");
		json_object_put(o);
	}
}

Test(kube_snap, not_an_object)
{
	struct json_object *o = json_tokener_parse("[1,2]");
	unsigned char *d;
	size_t n;
	char why[128];

	cr_assert_eq(kube_snap_check(o, &want, &d, &n, why, sizeof(why)),
		     -EBADMSG);
	cr_assert_eq(kube_snap_check(NULL, &want, &d, &n, why, sizeof(why)),
		     -EBADMSG);
	json_object_put(o);
}

Test(kube_snap, huge_data_refused_before_decoding)
{
	struct json_object *o = good();
	size_t big = (KUBE_SNAP_MAX + 2) / 3 * 4 + 4;
	char *s = malloc(big + 1);
	unsigned char *d;
	size_t n;
	char why[256] = "";

	memset(s, 'A', big);
	s[big] = '\0';
	json_object_object_add(at(o, "spec", NULL), "data",
			       json_object_new_string(s));
	cr_assert_eq(kube_snap_check(o, &want, &d, &n, why, sizeof(why)),
		     -EFBIG, "%s", why);
	cr_assert(strstr(why, "900 KiB"), "%s", why);
	free(s);
	json_object_put(o);
}
