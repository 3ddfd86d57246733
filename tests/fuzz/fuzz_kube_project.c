/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: kube_json_project() held to json-c. The whole input is
 * (1) projected with kube_keep_all, which must build json-c's own tree of
 * the same text or refuse it, never take what json-c refuses; (2) decoded
 * as a watch line by a pod watch's decoder and by kube_watch_event_parse():
 * the same answer, and the same pod from both objects. */
#include <stdint.h>
#include <string.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct json_object *json_c_tree(const char *s, size_t n, bool *ok)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = json_tokener_parse_ex(tok, s, (int)n);

	*ok = json_tokener_get_error(tok) == json_tokener_success &&
	      json_tokener_get_parse_end(tok) == n;
	json_tokener_free(tok);
	return o;
}

static void check_tree(const char *s, size_t n)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *p = NULL, *t;
	bool ok;

	if (kube_json_project(tok, s, n, kube_keep_all, &p) == 0) {
		t = json_c_tree(s, n, &ok);
		if (!ok || !json_object_equal(p, t))
			__builtin_trap();
		json_object_put(t);
		json_object_put(p);
	}
	json_tokener_free(tok);
}

static void check_event(const char *s, size_t n)
{
	struct kube_event_decoder *d;
	struct kube_watch_event a, b;
	struct kube_pod *pa, *pb;
	int ra, rb, da, db;

	if (kube_event_decoder_new(kube_pod_keep, &d) < 0)
		return;
	ra = kube_event_decoder_parse(d, s, n, &a);
	rb = kube_watch_event_parse(s, n, &b);
	if (ra != rb)
		__builtin_trap();
	if (ra == 0) {
		if (a.type != b.type ||
		    strcmp(a.resource_version, b.resource_version))
			__builtin_trap();
		da = kube_pod_decode(a.object, &pa);
		db = kube_pod_decode(b.object, &pb);
		if (da != db || (da == 0 && !kube_pod_equal(pa, pb)))
			__builtin_trap();
		if (da == 0) {
			kube_pod_free(pa);
			kube_pod_free(pb);
		}
		kube_watch_event_release(&a);
		kube_watch_event_release(&b);
	}
	kube_event_decoder_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	check_tree((const char *)data, size);
	check_event((const char *)data, size);
	return 0;
}
