/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: kube_json_project() held to json-c. The whole input is
 * (1) projected with kube_keep_all, which must build json-c's own tree of
 * the same text or refuse it, never take what json-c refuses; (2) decoded
 * as a watch line by a pod watch's decoder, by kube_watch_event_parse()
 * and read straight into a pod (kube_event_decoder_parse_pod): the same
 * answer, and the same pod from all three. */
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

/* The pod a line's event ev holds: read straight (p), else decoded from
 * its object. -EBADMSG when there is none. */
static int pod_of(struct kube_watch_event *ev, struct kube_pod *p,
		  struct kube_pod **ret)
{
	if (p) {
		if (ev->object)
			__builtin_trap();
		*ret = p;
		return 0;
	}
	return kube_pod_decode(ev->object, ret);
}

static void check_event(const char *s, size_t n)
{
	struct kube_event_decoder *d;
	struct kube_watch_event a, b, c;
	struct kube_pod *pa, *pb, *pc = NULL, *qc;
	int ra, rb, rc, da, db, dc;

	if (kube_event_decoder_new(kube_pod_keep, &d) < 0)
		return;
	ra = kube_event_decoder_parse(d, s, n, &a);
	rb = kube_watch_event_parse(s, n, &b);
	rc = kube_event_decoder_parse_pod(d, s, n, &c, &pc);
	if (ra != rb || rc != rb)
		__builtin_trap();
	if (ra == 0) {
		if (a.type != b.type || c.type != b.type ||
		    strcmp(a.resource_version, b.resource_version) ||
		    strcmp(c.resource_version, b.resource_version))
			__builtin_trap();
		da = kube_pod_decode(a.object, &pa);
		db = kube_pod_decode(b.object, &pb);
		dc = pod_of(&c, pc, &qc);
		if (da != db || dc != db ||
		    (da == 0 &&
		     (!kube_pod_equal(pa, pb) || !kube_pod_equal(qc, pb))))
			__builtin_trap();
		if (da == 0) {
			kube_pod_free(pa);
			kube_pod_free(pb);
			kube_pod_free(qc);
		}
		kube_watch_event_release(&a);
		kube_watch_event_release(&b);
		kube_watch_event_release(&c);
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
