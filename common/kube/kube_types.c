/* SPDX-License-Identifier: Apache-2.0 */
/* kube: typed helpers for what oomlens uses — pods, Events, OOMReport,
 * OOMBundle, TokenReview, SubjectAccessReview. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "kube_internal.h"

void kube_now_rfc3339(char buf[32])
{
	time_t t = (time_t)(now_realtime_us() / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- pods ---- */

int kube_pod_get(struct kube_client *c, const char *ns, const char *name,
		 struct kube_pod **ret, struct kube_error *err)
{
	struct kube_call k = {
		.res = &kube_res_pods, .namespace = ns, .name = name};
	struct json_object *o;
	int r;

	r = kube_get(c, &k, &o, err);
	if (r < 0)
		return r;
	r = kube_pod_decode(o, ret);
	json_object_put(o);
	return r;
}

static int node_selector(const char *node, char **ret)
{
	*ret = NULL;
	if (!node)
		return 0;
	return asprintf(ret, "spec.nodeName=%s", node) < 0 ? -ENOMEM : 0;
}

static int decode_items(struct json_object *list,
			int (*dec)(struct json_object *, void **), void ***ret,
			size_t *ret_n)
{
	struct json_object *items;
	size_t n;
	void **v;

	if (!json_object_object_get_ex(list, "items", &items) ||
	    !json_object_is_type(items, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(items);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r = dec(json_object_array_get_idx(items, i), &v[i]);

		if (r < 0) {
			*ret_n = i; /* the caller frees what was decoded */
			*ret = v;
			return r;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Lists every page of res and decodes each item with dec; on failure
 * frees what was decoded with free_all. ret/ret_n set only on success. */
static int list_decoded(struct kube_client *c, const struct kube_resource *res,
			const char *ns, const char *label_selector,
			unsigned page,
			int (*dec)(struct json_object *, void **),
			void (*free_all)(void **, size_t), void ***ret,
			size_t *ret_n, struct kube_error *err)
{
	struct kube_call k = {.res = res, .namespace = ns};
	struct kube_list_options lo = {.label_selector = label_selector,
				       .limit = page,
				       .all_pages = true};
	struct json_object *list;
	void **v = NULL;
	size_t n = 0;
	int r;

	r = kube_list(c, &k, &lo, &list, err);
	if (r < 0)
		return r;
	r = decode_items(list, dec, &v, &n);
	json_object_put(list);
	if (r < 0) {
		free_all(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int dec_pod(struct json_object *o, void **ret)
{
	return kube_pod_decode(o, (struct kube_pod **)ret);
}

int kube_pod_list(struct kube_client *c, const struct kube_pod_list_options *o,
		  struct kube_pod ***ret_pods, size_t *ret_n,
		  char **ret_resource_version, struct kube_error *err)
{
	struct kube_call k = {.res = &kube_res_pods,
			      .namespace = o ? o->namespace : NULL,
			      .all_namespaces = !o || !o->namespace,
			      .cancel = o ? o->cancel : NULL};
	struct kube_list_options lo = {.limit = 500, .all_pages = true};
	_cleanup_free_ char *fs = NULL;
	struct json_object *list;
	void **v = NULL;
	size_t n = 0;
	int r;

	if (node_selector(o ? o->node : NULL, &fs) < 0)
		return -ENOMEM;
	lo.field_selector = fs;
	lo.label_selector = o ? o->label_selector : NULL;
	r = kube_list(c, &k, &lo, &list, err);
	if (r < 0)
		return r;
	r = decode_items(list, dec_pod, &v, &n);
	if (r == 0 && ret_resource_version)
		r = kube_json_dup(list, "metadata", "resourceVersion", NULL,
				  ret_resource_version);
	json_object_put(list);
	if (r < 0) {
		kube_pods_free((struct kube_pod **)v, n);
		return r;
	}
	*ret_pods = (struct kube_pod **)v;
	*ret_n = n;
	return 0;
}

int kube_pod_watch(struct kube_client *c,
		   const struct kube_pod_watch_options *o,
		   struct kube_error *err)
{
	_cleanup_free_ char *fs = NULL;
	struct kube_watch_options wo = {
		.call = {.res = &kube_res_pods,
			 .namespace = o->list.namespace,
			 .all_namespaces = !o->list.namespace,
			 .cancel = o->list.cancel},
		.label_selector = o->list.label_selector,
		.timeout_s = o->timeout_s,
		.pod_fn = o->fn,
		.userdata = o->userdata,
		.stats = o->stats,
	};

	if (node_selector(o->list.node, &fs) < 0)
		return -ENOMEM;
	wo.field_selector = fs;
	return kube_watch(c, &wo, err);
}

/* ---- events ---- */

static void event_key(const struct kube_event_options *o, char *buf,
		      size_t size)
{
	/* FNV-1a of the message keeps the key short */
	uint64_t h = 1469598103934665603ull;

	for (const char *p = o->message ? o->message : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	snprintf(buf, size, "%s|%s|%s|%016llx",
		 o->involved_uid ? o->involved_uid : "",
		 o->involved_name ? o->involved_name : "",
		 o->reason ? o->reason : "", (unsigned long long)h);
}

struct json_object *kube_event_object(const struct kube_event_options *o,
				      const char *name, const char *now)
{
	const char *ns = o->namespace;
	struct json_object *e, *io, *src;

	if (!ns)
		return NULL;
	e = kube_object_new(&kube_res_events, name, ns, NULL, NULL);
	if (!e)
		return NULL;
	io = kube_json_add_obj(e, "involvedObject");
	src = kube_json_add_obj(e, "source");
	if (!io || !src ||
	    kube_json_set_str(io, "kind",
			      o->involved_kind ? o->involved_kind : "Pod") <
		    0 ||
	    kube_json_set_str(io, "apiVersion", "v1") < 0 ||
	    kube_json_set_str(io, "namespace", ns) < 0 ||
	    kube_json_set_str(io, "name", o->involved_name) < 0 ||
	    kube_json_set_str(io, "uid", o->involved_uid) < 0 ||
	    kube_json_set_str(io, "fieldPath", o->field_path) < 0 ||
	    kube_json_set_str(e, "reason", o->reason) < 0 ||
	    kube_json_set_str(e, "message", o->message) < 0 ||
	    kube_json_set_str(e, "type", o->type ? o->type : "Warning") < 0 ||
	    kube_json_set_str(src, "component",
			      o->component ? o->component : "oomlens") < 0 ||
	    kube_json_set_str(src, "host", o->host) < 0 ||
	    kube_json_set_str(e, "reportingComponent", o->reporting_component) <
		    0 ||
	    kube_json_set_str(e, "reportingInstance", o->reporting_instance) <
		    0 ||
	    kube_json_set_str(e, "firstTimestamp", now) < 0 ||
	    kube_json_set_str(e, "lastTimestamp", now) < 0 ||
	    kube_json_set_int(e, "count", 1) < 0) {
		json_object_put(e);
		return NULL;
	}
	return e;
}

#define EVENT_REPEAT_US (600ull * 1000000)

/* Finds a recent event with key; returns its slot (count bumped) or
 * NULL. Copies name into name_out under the lock. */
static bool cache_bump(struct kube_event_cache *ec, const char *key,
		       const char *ns, char *name_out, unsigned *ret_count)
{
	uint64_t now = now_monotonic_us();
	bool hit = false;

	pthread_mutex_lock(&ec->lock);
	for (size_t i = 0; i < KUBE_EVENT_CACHE && !hit; i++) {
		struct kube_event_cache_entry *e = &ec->e[i];

		if (!e->count || !streq(e->key, key) || !streq(e->ns, ns) ||
		    now - e->last_us > EVENT_REPEAT_US)
			continue;
		e->count++;
		e->last_us = now;
		*ret_count = e->count;
		strlcpy_safe(name_out, e->name, 256);
		hit = true;
	}
	pthread_mutex_unlock(&ec->lock);
	return hit;
}

static void cache_put(struct kube_event_cache *ec, const char *key,
		      const char *ns, const char *name, unsigned count)
{
	struct kube_event_cache_entry *old = &ec->e[0];

	pthread_mutex_lock(&ec->lock);
	for (size_t i = 0; i < KUBE_EVENT_CACHE; i++)
		if (ec->e[i].last_us < old->last_us)
			old = &ec->e[i];
	strlcpy_safe(old->key, key, sizeof(old->key));
	strlcpy_safe(old->ns, ns, sizeof(old->ns));
	strlcpy_safe(old->name, name, sizeof(old->name));
	old->count = count;
	old->last_us = now_monotonic_us();
	pthread_mutex_unlock(&ec->lock);
}

static int event_patch(struct kube_client *c,
		       const struct kube_event_options *o, const char *ns,
		       const char *name, unsigned count, const char *now,
		       struct kube_error *err)
{
	struct kube_call k = {.res = &kube_res_events,
			      .namespace = ns,
			      .name = name,
			      .cancel = o->cancel};
	struct json_object *p = json_object_new_object();
	int r = -ENOMEM;

	if (p && kube_json_set_int(p, "count", count) == 0 &&
	    kube_json_set_str(p, "lastTimestamp", now) == 0)
		r = kube_merge_patch(c, &k, p, NULL, err);
	json_object_put(p);
	return r;
}

int kube_event_post(struct kube_client *c, const struct kube_event_options *o,
		    unsigned *ret_count, struct kube_error *err)
{
	struct kube_event_cache *ec = kube_client_events(c);
	const char *ns = o->namespace ? o->namespace : kube_client_namespace(c);
	struct kube_call k = {
		.res = &kube_res_events, .namespace = ns, .cancel = o->cancel};
	char key[256], name[256], now[32];
	struct json_object *e;
	unsigned count = 1;
	int r;

	if (!o->involved_name || !o->reason || !o->message)
		return -EINVAL;
	kube_now_rfc3339(now);
	event_key(o, key, sizeof(key));
	if (cache_bump(ec, key, ns, name, &count)) {
		r = event_patch(c, o, ns, name, count, now, err);
		if (r != -ENOENT) {
			if (r == 0 && ret_count)
				*ret_count = count;
			return r;
		}
		count = 1; /* expired on the server: start a new one */
	}
	snprintf(name, sizeof(name), "%.200s.%llx", o->involved_name,
		 (unsigned long long)now_realtime_us() * 1000);
	struct kube_event_options on = *o;

	on.namespace = ns;
	e = kube_event_object(&on, name, now);
	if (!e)
		return -ENOMEM;
	r = kube_create(c, &k, e, NULL, err);
	json_object_put(e);
	if (r < 0)
		return r;
	cache_put(ec, key, ns, name, count);
	if (ret_count)
		*ret_count = count;
	return 0;
}

/* ---- OOMReport / OOMBundle ---- */

static int write_obj(struct kube_client *c, const struct kube_resource *res,
		     const char *ns, const char *name, struct json_object *obj,
		     const struct kube_write_options *o,
		     struct json_object **ret, struct kube_error *err)
{
	struct kube_call k = {.res = res,
			      .namespace = ns,
			      .name = name,
			      .cancel = o ? o->cancel : NULL};
	struct kube_apply_options ao = {.force = true};

	if (!o || o->mode == KUBE_WRITE_CREATE)
		return kube_create(c, &k, obj, ret, err);
	ao.field_manager = o->field_manager ? o->field_manager : "oomlens";
	return kube_apply(c, &k, obj, &ao, ret, err);
}

int kube_oomreport_write(struct kube_client *c, const struct kube_oomreport *r,
			 const struct kube_write_options *o,
			 struct kube_oomreport **ret, struct kube_error *err)
{
	struct json_object *obj, *out = NULL;
	int rc;

	if (!r->name || !r->pod || !r->container)
		return -EINVAL;
	obj = kube_oomreport_encode(r, o ? o->owner : NULL);
	if (!obj)
		return -ENOMEM;
	rc = write_obj(c, &kube_res_oomreports, r->namespace, r->name, obj, o,
		       ret ? &out : NULL, err);
	json_object_put(obj);
	if (rc == 0 && ret)
		rc = kube_oomreport_decode(out, ret);
	json_object_put(out);
	return rc;
}

int kube_oomreport_get(struct kube_client *c, const char *ns, const char *name,
		       struct kube_oomreport **ret, struct kube_error *err)
{
	struct kube_call k = {
		.res = &kube_res_oomreports, .namespace = ns, .name = name};
	struct json_object *o;
	int r;

	r = kube_get(c, &k, &o, err);
	if (r < 0)
		return r;
	r = kube_oomreport_decode(o, ret);
	json_object_put(o);
	return r;
}

static int dec_report(struct json_object *o, void **ret)
{
	return kube_oomreport_decode(o, (struct kube_oomreport **)ret);
}

static void free_reports(void **v, size_t n)
{
	kube_oomreports_free((struct kube_oomreport **)v, n);
}

int kube_oomreport_list(struct kube_client *c, const char *ns,
			const char *label_selector,
			struct kube_oomreport ***ret, size_t *ret_n,
			struct kube_error *err)
{
	return list_decoded(c, &kube_res_oomreports, ns, label_selector, 500,
			    dec_report, free_reports, (void ***)ret, ret_n,
			    err);
}

static bool label_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

bool kube_label_value_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	if (!v || n > 63)
		return false;
	if (n && (!label_alnum(v[0]) || !label_alnum(v[n - 1])))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!label_alnum(v[i]) && v[i] != '-' && v[i] != '_' &&
		    v[i] != '.')
			return false;
	return true;
}

/* {type, status, reason, message, lastTransitionTime}, appended to a. */
static int condition_add(struct json_object *a, const char *type, bool status,
			 const char *reason, const char *message,
			 const char *now)
{
	struct json_object *c = json_object_new_object();

	if (!c || json_object_array_add(a, c) < 0) {
		json_object_put(c);
		return -ENOMEM;
	}
	if (kube_json_set_str(c, "type", type) < 0 ||
	    kube_json_set_str(c, "status", status ? "True" : "False") < 0 ||
	    kube_json_set_str(c, "reason", reason) < 0 ||
	    kube_json_set_str(c, "message", message) < 0 ||
	    kube_json_set_str(c, "lastTransitionTime", now) < 0)
		return -ENOMEM;
	return 0;
}

int kube_oomreport_patch_status(struct kube_client *c, const char *ns,
				const char *name, const char *phase,
				const char *message, bool bundle_stored,
				struct kube_error *err)
{
	struct kube_call k = {.res = &kube_res_oomreports,
			      .namespace = ns,
			      .name = name,
			      .subresource = "status"};
	struct json_object *p = json_object_new_object(), *st, *conds;
	bool ready = phase && streq(phase, "Ready");
	char now[32];
	int r = -ENOMEM;

	kube_now_rfc3339(now);
	st = p ? kube_json_add_obj(p, "status") : NULL;
	conds = json_object_new_array();
	if (st && conds && json_object_object_add(st, "conditions", conds) < 0)
		json_object_put(conds), conds = NULL;
	if (st && conds && kube_json_set_str(st, "phase", phase) == 0 &&
	    kube_json_set_str(st, "message", message) == 0 &&
	    json_object_object_add(st, "bundleStored",
				   json_object_new_boolean(bundle_stored)) ==
		    0 &&
	    condition_add(conds, "Ready", ready,
			  ready ? "Published" : "Publishing", message,
			  now) == 0 &&
	    condition_add(conds, "BundleStored", bundle_stored,
			  bundle_stored ? "Stored"
			  : ready	? "NotStored"
					: "Publishing",
			  message, now) == 0)
		r = kube_merge_patch(c, &k, p, NULL, err);
	json_object_put(p);
	return r;
}

int kube_oomreport_patch(struct kube_client *c, const char *ns,
			 const char *name, struct json_object *patch,
			 struct kube_oomreport **ret, struct kube_error *err)
{
	struct kube_call k = {
		.res = &kube_res_oomreports, .namespace = ns, .name = name};
	struct json_object *out = NULL;
	int r;

	r = kube_merge_patch(c, &k, patch, ret ? &out : NULL, err);
	if (r == 0 && ret)
		r = kube_oomreport_decode(out, ret);
	json_object_put(out);
	return r;
}

static int delete_named(struct kube_client *c, const struct kube_resource *res,
			const char *ns, const char *name, const char *uid,
			struct kube_error *err)
{
	struct kube_call k = {.res = res, .namespace = ns, .name = name};
	struct kube_delete_options d = {.precondition_uid = uid};

	return kube_delete(c, &k, &d, NULL, err);
}

int kube_oomreport_delete(struct kube_client *c, const char *ns,
			  const char *name, const char *uid,
			  struct kube_error *err)
{
	return delete_named(c, &kube_res_oomreports, ns, name, uid, err);
}

int kube_oombundle_write(struct kube_client *c, const struct kube_oombundle *b,
			 const struct kube_write_options *o,
			 struct kube_error *err)
{
	struct json_object *obj;
	int r;

	if (!b->name)
		return -EINVAL;
	obj = kube_oombundle_encode(b, o ? o->owner : NULL);
	if (!obj)
		return -ENOMEM;
	r = write_obj(c, &kube_res_oombundles, b->namespace, b->name, obj, o,
		      NULL, err);
	json_object_put(obj);
	return r;
}

int kube_oombundle_get(struct kube_client *c, const char *ns, const char *name,
		       struct kube_oombundle **ret, struct kube_error *err)
{
	struct kube_call k = {
		.res = &kube_res_oombundles, .namespace = ns, .name = name};
	struct json_object *o;
	int r;

	r = kube_get(c, &k, &o, err);
	if (r < 0)
		return r;
	r = kube_oombundle_decode(o, ret);
	json_object_put(o);
	return r;
}

static int dec_bundle(struct json_object *o, void **ret)
{
	return kube_oombundle_decode(o, (struct kube_oombundle **)ret);
}

void kube_oombundles_free(struct kube_oombundle **b, size_t n)
{
	for (size_t i = 0; b && i < n; i++)
		kube_oombundle_free(b[i]);
	free(b);
}

static void free_bundles(void **v, size_t n)
{
	kube_oombundles_free((struct kube_oombundle **)v, n);
}

/* Bundles are up to 1.2 MB each: small pages. */
int kube_oombundle_list(struct kube_client *c, const char *ns,
			const char *label_selector,
			struct kube_oombundle ***ret, size_t *ret_n,
			struct kube_error *err)
{
	return list_decoded(c, &kube_res_oombundles, ns, label_selector, 50,
			    dec_bundle, free_bundles, (void ***)ret, ret_n,
			    err);
}

int kube_oombundle_delete(struct kube_client *c, const char *ns,
			  const char *name, const char *uid,
			  struct kube_error *err)
{
	return delete_named(c, &kube_res_oombundles, ns, name, uid, err);
}

/* ---- reviews ---- */

void kube_token_review_release(struct kube_token_review *t)
{
	free(t->username);
	free(t->uid);
	for (size_t i = 0; t->groups && t->groups[i]; i++)
		free(t->groups[i]);
	free(t->groups);
	free(t->error);
	memset(t, 0, sizeof(*t));
}

static int decode_groups(struct json_object *arr, char ***ret)
{
	size_t n = arr && json_object_is_type(arr, json_type_array)
			   ? json_object_array_length(arr)
			   : 0;
	char **g = calloc(n + 1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	for (size_t i = 0, k = 0; i < n; i++) {
		const char *s = json_object_get_string(
			json_object_array_get_idx(arr, i));

		if (s && !(g[k++] = strdup(s))) {
			for (size_t j = 0; j < k; j++)
				free(g[j]);
			free(g);
			return -ENOMEM;
		}
	}
	*ret = g;
	return 0;
}

static int decode_token_review(struct json_object *o,
			       struct kube_token_review *ret)
{
	struct kube_token_review t = {0};
	struct json_object *a =
		kube_json_path(o, "status", "authenticated", NULL);

	t.authenticated = a && json_object_is_type(a, json_type_boolean) &&
			  json_object_get_boolean(a);
	if (kube_json_dup(o, "status", "user", "username", &t.username) < 0 ||
	    kube_json_dup(o, "status", "user", "uid", &t.uid) < 0 ||
	    kube_json_dup(o, "status", "error", NULL, &t.error) < 0 ||
	    decode_groups(kube_json_path(o, "status", "user", "groups"),
			  &t.groups) < 0) {
		kube_token_review_release(&t);
		return -ENOMEM;
	}
	*ret = t;
	return 0;
}

int kube_token_review(struct kube_client *c, const char *token,
		      struct kube_token_review *ret, struct kube_error *err)
{
	struct kube_call k = {.res = &kube_res_tokenreviews};
	struct json_object *tr, *spec, *out = NULL;
	int r = -ENOMEM;

	if (!token)
		return -EINVAL;
	tr = kube_object_new(&kube_res_tokenreviews, NULL, NULL, NULL, NULL);
	spec = tr ? kube_json_add_obj(tr, "spec") : NULL;
	if (spec && kube_json_set_str(spec, "token", token) == 0)
		r = kube_create(c, &k, tr, &out, err);
	json_object_put(tr);
	if (r == 0)
		r = decode_token_review(out, ret);
	json_object_put(out);
	return r;
}

static struct json_object *sar_new(const struct kube_access_review *a)
{
	struct json_object *s, *spec, *ra, *g;

	s = kube_object_new(&kube_res_subjectaccessreviews, NULL, NULL, NULL,
			    NULL);
	spec = s ? kube_json_add_obj(s, "spec") : NULL;
	ra = spec ? kube_json_add_obj(spec, "resourceAttributes") : NULL;
	if (!ra || kube_json_set_str(spec, "user", a->user) < 0 ||
	    kube_json_set_str(ra, "verb", a->verb) < 0 ||
	    kube_json_set_str(ra, "group", a->group) < 0 ||
	    kube_json_set_str(ra, "resource", a->resource) < 0 ||
	    kube_json_set_str(ra, "subresource", a->subresource) < 0 ||
	    kube_json_set_str(ra, "namespace", a->namespace) < 0 ||
	    kube_json_set_str(ra, "name", a->name) < 0)
		goto fail;
	if (a->groups) {
		g = json_object_new_array();
		if (!g || json_object_object_add(spec, "groups", g) < 0) {
			json_object_put(g);
			goto fail;
		}
		for (size_t i = 0; a->groups[i]; i++)
			if (json_object_array_add(g, json_object_new_string(
							     a->groups[i])) < 0)
				goto fail;
	}
	return s;
fail:
	json_object_put(s);
	return NULL;
}

int kube_subject_access_review(struct kube_client *c,
			       const struct kube_access_review *a,
			       bool *ret_allowed, char **ret_reason,
			       struct kube_error *err)
{
	struct kube_call k = {.res = &kube_res_subjectaccessreviews};
	struct json_object *s, *out = NULL, *al;
	char *reason = NULL;
	int r;

	if (!a || !a->user || !a->verb || !a->resource)
		return -EINVAL;
	s = sar_new(a);
	if (!s)
		return -ENOMEM;
	r = kube_create(c, &k, s, &out, err);
	json_object_put(s);
	if (r == 0 && ret_reason)
		r = kube_json_dup(out, "status", "reason", NULL, &reason);
	if (r == 0) {
		al = kube_json_path(out, "status", "allowed", NULL);
		*ret_allowed = al &&
			       json_object_is_type(al, json_type_boolean) &&
			       json_object_get_boolean(al);
		if (ret_reason)
			*ret_reason = reason;
	}
	json_object_put(out);
	return r;
}
