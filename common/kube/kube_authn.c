/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>

#include "kube/kube_authn.h"
#include "kube_internal.h"

static int add_groups(struct json_object *spec, const char *const *groups)
{
	struct json_object *g;

	if (!groups)
		return 0;
	g = json_object_new_array();
	if (!g || json_object_object_add(spec, "groups", g) < 0) {
		json_object_put(g);
		return -ENOMEM;
	}
	for (size_t i = 0; groups[i]; i++)
		if (json_object_array_add(
			    g, json_object_new_string(groups[i])) < 0)
			return -ENOMEM;
	return 0;
}

struct json_object *
kube_nonresource_review_encode(const struct kube_nonresource_review *a)
{
	struct json_object *s, *spec, *nra;

	s = kube_object_new(&kube_res_subjectaccessreviews, NULL, NULL, NULL,
			    NULL);
	spec = s ? kube_json_add_obj(s, "spec") : NULL;
	nra = spec ? kube_json_add_obj(spec, "nonResourceAttributes") : NULL;
	if (!nra || kube_json_set_str(spec, "user", a->user) < 0 ||
	    (a->uid && kube_json_set_str(spec, "uid", a->uid) < 0) ||
	    kube_json_set_str(nra, "path", a->path) < 0 ||
	    kube_json_set_str(nra, "verb", a->verb) < 0 ||
	    add_groups(spec, a->groups) < 0) {
		json_object_put(s);
		return NULL;
	}
	return s;
}

int kube_nonresource_access_review(struct kube_client *c,
				   const struct kube_nonresource_review *a,
				   bool *ret_allowed, struct kube_error *err)
{
	struct kube_call k = {.res = &kube_res_subjectaccessreviews};
	struct json_object *s, *out = NULL, *al;
	int r;

	if (!a || !a->user || !a->path || !a->verb)
		return -EINVAL;
	s = kube_nonresource_review_encode(a);
	if (!s)
		return -ENOMEM;
	r = kube_create(c, &k, s, &out, err);
	json_object_put(s);
	if (r == 0) {
		al = kube_json_path(out, "status", "allowed", NULL);
		*ret_allowed = al &&
			       json_object_is_type(al, json_type_boolean) &&
			       json_object_get_boolean(al);
	}
	json_object_put(out);
	return r;
}
