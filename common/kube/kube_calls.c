/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the generic verbs (get, list, create, update, merge patch,
 * server-side apply, delete) on top of kube_request. */
#include <errno.h>
#include <string.h>

#include "kube_internal.h"

int kube_call_path(struct kube_client *c, const struct kube_call *k,
		   struct strbuf *sb)
{
	const char *ns = NULL;

	if (!k || !k->res)
		return -EINVAL;
	if (k->res->namespaced && !k->all_namespaces)
		ns = k->namespace ? k->namespace : kube_client_namespace(c);
	return kube_build_path(sb, k->res, ns, k->name, k->subresource);
}

/* Sends a request and decodes the JSON answer into *ret (optional). */
static int call_json(struct kube_client *c, const struct kube_request *r,
		     struct json_object **ret, struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	struct json_object *o;
	int ret_code;

	strbuf_init(&body, r->max_response ? r->max_response
					   : kube_client_max_response(c));
	ret_code = kube_request(c, r, NULL, &body, err);
	if (ret_code < 0)
		return ret_code;
	if (!ret)
		return 0;
	ret_code = kube_json_parse(body.buf, body.len, &o);
	if (ret_code < 0)
		return kube_error_set(err, -EBADMSG,
				      "%s %s: answer is not JSON", r->method,
				      r->path);
	*ret = o;
	return 0;
}

/* Encodes obj and sends it with method + content type to the call's path
 * (+ an optional query already in path_sb). */
static int send_obj(struct kube_client *c, const char *method,
		    const char *ctype, const char *path,
		    struct kube_cancel *cancel, struct json_object *obj,
		    struct json_object **ret, struct kube_error *err)
{
	size_t len;
	const char *body = json_object_to_json_string_length(
		obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		&len);
	struct kube_request r = {.method = method,
				 .path = path,
				 .content_type = ctype,
				 .body = body,
				 .body_len = len,
				 .cancel = cancel};

	if (!body)
		return -ENOMEM;
	return call_json(c, &r, ret, err);
}

int kube_get(struct kube_client *c, const struct kube_call *k,
	     struct json_object **ret, struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	struct kube_request r = {.method = "GET",
				 .cancel = k->cancel,
				 .max_response = k->max_response};
	int ret_code;

	strbuf_init(&path, 4096);
	ret_code = kube_call_path(c, k, &path);
	if (ret_code < 0)
		return ret_code;
	r.path = path.buf;
	return call_json(c, &r, ret, err);
}

static int list_page(struct kube_client *c, const struct kube_call *k,
		     const struct kube_list_options *o, const char *cont,
		     struct json_object **ret, struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	struct kube_request r = {.method = "GET", .cancel = k->cancel};
	char lim[24];
	int ret_code;

	strbuf_init(&path, 8192);
	snprintf(lim, sizeof(lim), "%u", o ? o->limit : 0);
	ret_code = kube_call_path(c, k, &path);
	if (ret_code == 0 && o)
		ret_code = kube_query_add(&path, "labelSelector",
					  o->label_selector);
	if (ret_code == 0 && o)
		ret_code = kube_query_add(&path, "fieldSelector",
					  o->field_selector);
	if (ret_code == 0 && o && o->limit)
		ret_code = kube_query_add(&path, "limit", lim);
	if (ret_code == 0)
		ret_code = kube_query_add(&path, "continue", cont);
	if (ret_code == 0 && o && !cont)
		ret_code = kube_query_add(&path, "resourceVersion",
					  o->resource_version);
	if (ret_code < 0)
		return ret_code;
	r.path = path.buf;
	return call_json(c, &r, ret, err);
}

/* Appends the items of page to acc's items and moves its metadata. */
static int merge_page(struct json_object *acc, struct json_object *page)
{
	struct json_object *ai, *pi, *md;

	if (!json_object_object_get_ex(acc, "items", &ai) ||
	    !json_object_is_type(ai, json_type_array))
		return -EBADMSG;
	if (json_object_object_get_ex(page, "items", &pi) &&
	    json_object_is_type(pi, json_type_array))
		for (size_t i = 0; i < json_object_array_length(pi); i++)
			if (json_object_array_add(
				    ai,
				    json_object_get(json_object_array_get_idx(
					    pi, i))) < 0)
				return -ENOMEM;
	if (json_object_object_get_ex(page, "metadata", &md))
		json_object_object_add(acc, "metadata", json_object_get(md));
	return 0;
}

int kube_list(struct kube_client *c, const struct kube_call *k,
	      const struct kube_list_options *o, struct json_object **ret,
	      struct kube_error *err)
{
	struct json_object *acc = NULL, *page = NULL, *items;
	const char *cont = o ? o->continue_token : NULL;
	_cleanup_free_ char *next = NULL;
	int r;

	for (;;) {
		r = list_page(c, k, o, cont, &page, err);
		if (r < 0)
			break;
		if (!json_object_object_get_ex(page, "items", &items) ||
		    !json_object_is_type(items, json_type_array)) {
			r = kube_error_set(err, -EBADMSG, "list without items");
			break;
		}
		if (!acc)
			acc = json_object_get(page);
		else if ((r = merge_page(acc, page)) < 0)
			break;
		free(next);
		next = NULL;
		if (kube_json_dup(page, "metadata", "continue", NULL, &next) <
		    0) {
			r = -ENOMEM;
			break;
		}
		json_object_put(page);
		page = NULL;
		if (!o || !o->all_pages || !next || !*next)
			break;
		cont = next;
	}
	json_object_put(page);
	if (r < 0) {
		json_object_put(acc);
		return r;
	}
	*ret = acc;
	return 0;
}

static int write_call(struct kube_client *c, const struct kube_call *k,
		      const char *method, const char *ctype, bool with_name,
		      const char *query_k, const char *query_v,
		      struct json_object *obj, struct json_object **ret,
		      struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	struct kube_call kk = *k;
	int r;

	if (!with_name)
		kk.name = NULL;
	strbuf_init(&path, 4096);
	r = kube_call_path(c, &kk, &path);
	if (r == 0 && query_k)
		r = kube_query_add(&path, query_k, query_v);
	if (r < 0)
		return r;
	return send_obj(c, method, ctype, path.buf, k->cancel, obj, ret, err);
}

int kube_create(struct kube_client *c, const struct kube_call *k,
		struct json_object *obj, struct json_object **ret,
		struct kube_error *err)
{
	return write_call(c, k, "POST", "application/json", false, NULL, NULL,
			  obj, ret, err);
}

int kube_update(struct kube_client *c, const struct kube_call *k,
		struct json_object *obj, struct json_object **ret,
		struct kube_error *err)
{
	if (!k->name)
		return -EINVAL;
	return write_call(c, k, "PUT", "application/json", true, NULL, NULL,
			  obj, ret, err);
}

int kube_merge_patch(struct kube_client *c, const struct kube_call *k,
		     struct json_object *patch, struct json_object **ret,
		     struct kube_error *err)
{
	if (!k->name)
		return -EINVAL;
	return write_call(c, k, "PATCH", "application/merge-patch+json", true,
			  NULL, NULL, patch, ret, err);
}

int kube_apply(struct kube_client *c, const struct kube_call *k,
	       struct json_object *obj, const struct kube_apply_options *o,
	       struct json_object **ret, struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	int r;

	if (!k->name || !o || !o->field_manager || !*o->field_manager)
		return -EINVAL;
	strbuf_init(&path, 4096);
	r = kube_call_path(c, k, &path);
	if (r == 0)
		r = kube_query_add(&path, "fieldManager", o->field_manager);
	if (r == 0 && o->force)
		r = kube_query_add(&path, "force", "true");
	if (r < 0)
		return r;
	return send_obj(c, "PATCH", "application/apply-patch+yaml", path.buf,
			k->cancel, obj, ret, err);
}

static struct json_object *delete_body(const struct kube_delete_options *o)
{
	struct json_object *b = kube_object_new(
		&(struct kube_resource){"", "v1", "", "DeleteOptions", false},
		NULL, NULL, NULL, NULL);
	struct json_object *pre;

	if (!b)
		return NULL;
	json_object_object_del(b, "metadata");
	if (o->precondition_uid || o->precondition_rv) {
		pre = kube_json_add_obj(b, "preconditions");
		if (!pre ||
		    kube_json_set_str(pre, "uid", o->precondition_uid) < 0 ||
		    kube_json_set_str(pre, "resourceVersion",
				      o->precondition_rv) < 0)
			goto fail;
	}
	if (o->set_grace_period &&
	    kube_json_set_int(b, "gracePeriodSeconds", o->grace_period_s) < 0)
		goto fail;
	if (kube_json_set_str(b, "propagationPolicy", o->propagation) < 0)
		goto fail;
	return b;
fail:
	json_object_put(b);
	return NULL;
}

int kube_delete(struct kube_client *c, const struct kube_call *k,
		const struct kube_delete_options *o, struct json_object **ret,
		struct kube_error *err)
{
	static const struct kube_delete_options none;
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	struct json_object *body;
	int r;

	if (!k->name)
		return -EINVAL;
	strbuf_init(&path, 4096);
	r = kube_call_path(c, k, &path);
	if (r < 0)
		return r;
	body = delete_body(o ? o : &none);
	if (!body)
		return -ENOMEM;
	r = send_obj(c, "DELETE", "application/json", path.buf, k->cancel, body,
		     ret, err);
	json_object_put(body);
	return r;
}
