/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the OOMBundle snap-<pod> a sidecar uploads, checked as the
 * untrusted input it is (anything in the pod can write it): every JSON
 * type, the size before decoding, the digest after, and the owner. The
 * object is attributed by where it was found (namespace, name, the owning
 * Pod's UID), never by what its data says. */
#include <errno.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "base/jget.h"
#include "base/util.h"

static int refuse(char *why, size_t size, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(char *why, size_t size, int r, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* The Pod owner reference with this name and UID, among any others. */
static bool owned_by(struct json_object *md, const struct kube_snap_want *w)
{
	struct json_object *refs = jget_array(NULL, md, "ownerReferences");
	size_t n = refs ? json_object_array_length(refs) : 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(refs, i);
		const char *kind = jget_str(NULL, o, "kind");
		const char *name = jget_str(NULL, o, "name");
		const char *uid = jget_str(NULL, o, "uid");

		if (kind && name && uid && streq(kind, "Pod") &&
		    streq(name, w->pod) && streq(uid, w->pod_uid))
			return true;
	}
	return false;
}

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

static int check_meta(struct json_object *obj, const struct kube_snap_want *w,
		      char *why, size_t size)
{
	struct json_object *md = jget_obj(NULL, obj, "metadata");
	const char *name = jget_str(NULL, md, "name");
	const char *ns = jget_str(NULL, md, "namespace");

	if (!md)
		return refuse(why, size, -EBADMSG, "no metadata object");
	if (!name || !streq(name, w->name))
		return refuse(why, size, -EBADMSG,
			      "metadata.name is not the string \"%s\"",
			      w->name);
	if (jget(md, "namespace") && (!ns || !streq(ns, w->ns)))
		return refuse(why, size, -EBADMSG,
			      "metadata.namespace is not \"%s\"", w->ns);
	if (!owned_by(md, w))
		return refuse(why, size, -EPERM,
			      "not owned by pod %s/%s with uid %s", w->ns,
			      w->pod, w->pod_uid);
	return 0;
}

void kube_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char h[SHA256_DIGEST_LENGTH];

	SHA256(data, len, h);
	for (size_t i = 0; i < sizeof(h); i++)
		snprintf(hex + 2 * i, 3, "%02x", h[i]);
}

int kube_snap_check(struct json_object *obj, const struct kube_snap_want *w,
		    unsigned char **ret, size_t *ret_len, char *why,
		    size_t why_size)
{
	struct json_object *spec, *data;
	const char *sha;
	unsigned char *bytes = NULL;
	char hex[2 * SHA256_DIGEST_LENGTH + 1];
	uint64_t size;
	size_t n, len;
	int r;

	if (!obj || !json_object_is_type(obj, json_type_object))
		return refuse(why, why_size, -EBADMSG, "not a JSON object");
	r = check_meta(obj, w, why, why_size);
	if (r < 0)
		return r;
	spec = jget_obj(NULL, obj, "spec");
	data = spec ? jget(spec, "data") : NULL;
	sha = jget_str(NULL, spec, "sha256");
	if (!spec || !data || !json_object_is_type(data, json_type_string))
		return refuse(why, why_size, -EBADMSG,
			      "spec.data is not a string");
	if (!jget_u64(NULL, spec, "size", &size))
		return refuse(why, why_size, -EBADMSG,
			      "spec.size is not an integer >= 0");
	if (!sha || !is_hex64(sha))
		return refuse(why, why_size, -EBADMSG,
			      "spec.sha256 is not 64 lower-case hex digits");
	/* the caps before a byte is decoded */
	n = (size_t)json_object_get_string_len(data);
	if (size > KUBE_SNAP_MAX || n > (KUBE_SNAP_MAX + 2) / 3 * 4)
		return refuse(why, why_size, -EFBIG,
			      "larger than %u KiB (size %llu, %zu base64 "
			      "bytes)",
			      KUBE_SNAP_MAX >> 10, (unsigned long long)size, n);
	r = kube_base64_decode(json_object_get_string(data), n, &bytes, &len);
	if (r < 0)
		return refuse(why, why_size, r, "spec.data is not base64");
	if (len != size) {
		free(bytes);
		return refuse(why, why_size, -EBADMSG,
			      "spec.size %llu but %zu bytes of data",
			      (unsigned long long)size, len);
	}
	kube_sha256_hex(bytes, len, hex);
	if (!streq(hex, sha)) {
		free(bytes);
		return refuse(why, why_size, -EBADMSG,
			      "sha256 of the data is %.12s…, spec.sha256 "
			      "says %.12s…",
			      hex, sha);
	}
	*ret = bytes;
	*ret_len = len;
	return 0;
}
