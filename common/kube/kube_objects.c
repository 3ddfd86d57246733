/* SPDX-License-Identifier: Apache-2.0 */
/* kube: typed decoders and encoders for the objects oomlens reads and
 * writes (Pod, OOMReport, OOMBundle). Pure: JSON in, structs out. */
#include <errno.h>
#include <string.h>

#include "kube_internal.h"

struct json_object *kube_json_path(struct json_object *o, const char *a,
				   const char *b, const char *c)
{
	const char *keys[] = {a, b, c};

	for (size_t i = 0; i < ARRAY_SIZE(keys) && keys[i]; i++) {
		struct json_object *v;

		if (!o || !json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, keys[i], &v))
			return NULL;
		o = v;
	}
	return o;
}

const char *kube_json_str(struct json_object *o, const char *a, const char *b,
			  const char *c)
{
	o = kube_json_path(o, a, b, c);
	if (!o || !json_object_is_type(o, json_type_string))
		return NULL;
	return json_object_get_string(o);
}

int kube_json_dup(struct json_object *o, const char *a, const char *b,
		  const char *c, char **ret)
{
	const char *s = kube_json_str(o, a, b, c);

	if (!s) {
		*ret = NULL;
		return 0;
	}
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

int64_t kube_json_int(struct json_object *o, const char *a, const char *b,
		      const char *c)
{
	o = kube_json_path(o, a, b, c);
	if (!o || !json_object_is_type(o, json_type_int))
		return 0;
	return json_object_get_int64(o);
}

int kube_json_parse(const char *buf, size_t len, struct json_object **ret)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (!buf || len == 0 || len >= (1u << 31))
		return -EBADMSG;
	tok = json_tokener_new_ex(64);
	if (!tok)
		return -ENOMEM;
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (o && json_tokener_get_parse_end(tok) < len) {
		/* only trailing whitespace may follow */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (!strchr(" \t\r\n", buf[i])) {
				json_object_put(o);
				o = NULL;
				break;
			}
	}
	json_tokener_free(tok);
	if (!o)
		return -EBADMSG;
	*ret = o;
	return 0;
}

static struct json_object *obj_get_object(struct json_object *o, const char *a,
					  const char *b)
{
	o = kube_json_path(o, a, b, NULL);
	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_get(o);
}

static void container_release(struct kube_container *c)
{
	free(c->name);
	free(c->container_id);
	free(c->last_terminated_reason);
	free(c->last_container_id);
	free(c->image);
	free(c->limit_memory_s);
	free(c->request_memory_s);
}

/* The strings of a pod that holds each apart (kube_pod_decode()'s). */
static void strings_release(struct kube_pod *p)
{
	free(p->name);
	free(p->namespace);
	free(p->uid);
	free(p->node);
	free(p->resource_version);
	free(p->phase);
	free(p->qos_class);
	free(p->owner_kind);
	free(p->owner_name);
	free(p->owner_api_version);
	for (size_t i = 0; i < p->n_containers; i++)
		container_release(&p->containers[i]);
}

void kube_pod_free(struct kube_pod *p)
{
	if (!p)
		return;
	if (!p->strings)
		strings_release(p);
	free(p->strings);
	json_object_put(p->annotations);
	json_object_put(p->labels);
	free(p->containers);
	free(p);
}

/* res.<kind>.memory: its bytes (0 when absent or not a quantity) and its
 * text as written. */
static int memory_at(struct json_object *res, const char *kind, uint64_t *ret_v,
		     char **ret_s)
{
	const char *s = kube_json_str(res, kind, "memory", NULL);

	*ret_v = 0;
	if (s && kube_parse_quantity(s, ret_v) < 0)
		*ret_v = 0;
	*ret_s = s ? strdup(s) : NULL;
	return s && !*ret_s ? -ENOMEM : 0;
}

static int decode_container(struct json_object *spec, struct kube_container *c)
{
	struct json_object *res = kube_json_path(spec, "resources", NULL, NULL);

	if (kube_json_dup(spec, "name", NULL, NULL, &c->name) < 0)
		return -ENOMEM;
	if (!c->name)
		return -EBADMSG;
	if (kube_json_dup(spec, "image", NULL, NULL, &c->image) < 0 ||
	    memory_at(res, "limits", &c->limit_memory, &c->limit_memory_s) <
		    0 ||
	    memory_at(res, "requests", &c->request_memory,
		      &c->request_memory_s) < 0)
		return -ENOMEM;
	return 0;
}

/* Joins status.containerStatuses[] into the containers by name. */
static int decode_container_status(struct kube_pod *p, struct json_object *st)
{
	const char *name = kube_json_str(st, "name", NULL, NULL);
	struct json_object *term;

	for (size_t i = 0; name && i < p->n_containers; i++) {
		struct kube_container *c = &p->containers[i];

		if (!streq(c->name, name))
			continue;
		c->restart_count =
			(int)kube_json_int(st, "restartCount", NULL, NULL);
		term = kube_json_path(st, "lastState", "terminated", NULL);
		c->last_exit_code =
			(int)kube_json_int(term, "exitCode", NULL, NULL);
		free(c->container_id);
		free(c->last_terminated_reason);
		free(c->last_container_id);
		c->container_id = c->last_terminated_reason =
			c->last_container_id = NULL;
		if (kube_json_dup(st, "containerID", NULL, NULL,
				  &c->container_id) < 0 ||
		    kube_json_dup(term, "reason", NULL, NULL,
				  &c->last_terminated_reason) < 0 ||
		    kube_json_dup(term, "containerID", NULL, NULL,
				  &c->last_container_id) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* spec.containers[] with status.containerStatuses[] joined. */
static int decode_containers(struct kube_pod *p, struct json_object *spec,
			     struct json_object *status)
{
	struct json_object *arr =
		kube_json_path(spec, "containers", NULL, NULL);
	struct json_object *sts =
		kube_json_path(status, "containerStatuses", NULL, NULL);
	size_t n;
	int r;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return 0;
	n = json_object_array_length(arr);
	p->containers = calloc(n ? n : 1, sizeof(*p->containers));
	if (!p->containers)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		r = decode_container(json_object_array_get_idx(arr, i),
				     &p->containers[i]);
		p->n_containers = i + 1;
		if (r < 0)
			return r;
	}
	if (!sts || !json_object_is_type(sts, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(sts); i++) {
		r = decode_container_status(p,
					    json_object_array_get_idx(sts, i));
		if (r < 0)
			return r;
	}
	return 0;
}

/* The controller among metadata.ownerReferences (else the first). */
static int decode_owner(struct kube_pod *p, struct json_object *md)
{
	struct json_object *arr =
		kube_json_path(md, "ownerReferences", NULL, NULL);
	struct json_object *pick = NULL, *o, *ctl;
	size_t n;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return 0;
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		o = json_object_array_get_idx(arr, i);
		ctl = kube_json_path(o, "controller", NULL, NULL);
		if (!pick || (ctl && json_object_get_boolean(ctl)))
			pick = o;
	}
	if (!pick)
		return 0;
	ctl = kube_json_path(pick, "controller", NULL, NULL);
	p->owner_controller = ctl && json_object_get_boolean(ctl);
	if (kube_json_dup(pick, "kind", NULL, NULL, &p->owner_kind) < 0 ||
	    kube_json_dup(pick, "name", NULL, NULL, &p->owner_name) < 0 ||
	    kube_json_dup(pick, "apiVersion", NULL, NULL,
			  &p->owner_api_version) < 0)
		return -ENOMEM;
	return 0;
}

/* Each part looked up once: a watch decodes every pod of the node at
 * every change. */
int kube_pod_decode(struct json_object *obj, struct kube_pod **ret)
{
	struct kube_pod *p;
	const char *kind = kube_json_str(obj, "kind", NULL, NULL);
	struct json_object *md = kube_json_path(obj, "metadata", NULL, NULL);
	struct json_object *spec = kube_json_path(obj, "spec", NULL, NULL);
	struct json_object *st = kube_json_path(obj, "status", NULL, NULL);
	struct json_object *spn;
	int r = -ENOMEM;

	if ((kind && !streq(kind, "Pod")) ||
	    !kube_json_str(md, "name", NULL, NULL))
		return -EBADMSG;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (kube_json_dup(md, "name", NULL, NULL, &p->name) < 0 ||
	    kube_json_dup(md, "namespace", NULL, NULL, &p->namespace) < 0 ||
	    kube_json_dup(md, "uid", NULL, NULL, &p->uid) < 0 ||
	    kube_json_dup(md, "resourceVersion", NULL, NULL,
			  &p->resource_version) < 0 ||
	    kube_json_dup(spec, "nodeName", NULL, NULL, &p->node) < 0 ||
	    kube_json_dup(st, "phase", NULL, NULL, &p->phase) < 0 ||
	    kube_json_dup(st, "qosClass", NULL, NULL, &p->qos_class) < 0)
		goto fail;
	p->deleting =
		kube_json_path(md, "deletionTimestamp", NULL, NULL) != NULL;
	spn = kube_json_path(spec, "shareProcessNamespace", NULL, NULL);
	p->share_process_namespace =
		spn && json_object_is_type(spn, json_type_boolean) &&
		json_object_get_boolean(spn);
	p->annotations = obj_get_object(md, "annotations", NULL);
	p->labels = obj_get_object(md, "labels", NULL);
	r = decode_owner(p, md);
	if (r == 0)
		r = decode_containers(p, spec, st);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	kube_pod_free(p);
	return r;
}

/* What kube_pod_decode() and its helpers read, and kube_watch(): kept in
 * step with them (tests/unit/test_kube_project.c decodes every fixture
 * both ways). */
static const struct kube_keep memory_keep[] = {{"memory", NULL, false},
					       {NULL, NULL, false}};
static const struct kube_keep resources_keep[] = {
	{"limits", memory_keep, false},
	{"requests", memory_keep, false},
	{NULL, NULL, false}};
static const struct kube_keep container_keep[] = {
	{"name", NULL, false},
	{"image", NULL, false},
	{"resources", resources_keep, false},
	{NULL, NULL, false}};
static const struct kube_keep terminated_keep[] = {{"exitCode", NULL, false},
						   {"reason", NULL, false},
						   {"containerID", NULL, false},
						   {NULL, NULL, false}};
static const struct kube_keep last_state_keep[] = {
	{"terminated", terminated_keep, false}, {NULL, NULL, false}};
static const struct kube_keep container_status_keep[] = {
	{"name", NULL, false},
	{"restartCount", NULL, false},
	{"lastState", last_state_keep, false},
	{"containerID", NULL, false},
	{NULL, NULL, false}};
/* decode_owner() reads controller, kind and name, the agent's owner
 * chain apiVersion too */
static const struct kube_keep owner_keep[] = {{"apiVersion", NULL, false},
					      {"kind", NULL, false},
					      {"name", NULL, false},
					      {"controller", NULL, false},
					      {NULL, NULL, false}};
static const struct kube_keep pod_metadata_keep[] = {
	{"name", NULL, false},
	{"namespace", NULL, false},
	{"uid", NULL, false},
	{"resourceVersion", NULL, false},
	{"deletionTimestamp", NULL, false},
	{"labels", NULL, false},
	{"annotations", NULL, false},
	{"ownerReferences", owner_keep, true},
	{NULL, NULL, false}};
static const struct kube_keep pod_spec_keep[] = {
	{"nodeName", NULL, false},
	{"shareProcessNamespace", NULL, false},
	{"containers", container_keep, true},
	{NULL, NULL, false}};
static const struct kube_keep pod_status_keep[] = {
	{"phase", NULL, false},
	{"qosClass", NULL, false},
	{"containerStatuses", container_status_keep, true},
	{NULL, NULL, false}};
const struct kube_keep kube_pod_keep[] = {
	{"kind", NULL, false},
	{"apiVersion", NULL, false},
	{"metadata", pod_metadata_keep, false},
	{"spec", pod_spec_keep, false},
	{"status", pod_status_keep, false},
	{NULL, NULL, false}};

int kube_pod_parse(const char *buf, size_t len, struct kube_pod **ret)
{
	struct json_object *o;
	int r = kube_json_parse(buf, len, &o);

	if (r < 0)
		return r;
	r = kube_pod_decode(o, ret);
	json_object_put(o);
	return r;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && streq(a, b));
}

static bool same_json(struct json_object *a, struct json_object *b)
{
	return (!a && !b) || (a && b && json_object_equal(a, b));
}

static bool container_equal(const struct kube_container *a,
			    const struct kube_container *b)
{
	return same_str(a->name, b->name) &&
	       same_str(a->container_id, b->container_id) &&
	       a->limit_memory == b->limit_memory &&
	       a->request_memory == b->request_memory &&
	       a->restart_count == b->restart_count &&
	       same_str(a->last_terminated_reason, b->last_terminated_reason) &&
	       a->last_exit_code == b->last_exit_code &&
	       same_str(a->last_container_id, b->last_container_id) &&
	       same_str(a->image, b->image) &&
	       same_str(a->limit_memory_s, b->limit_memory_s) &&
	       same_str(a->request_memory_s, b->request_memory_s);
}

bool kube_pod_equal(const struct kube_pod *a, const struct kube_pod *b)
{
	if (!same_str(a->name, b->name) ||
	    !same_str(a->namespace, b->namespace) ||
	    !same_str(a->uid, b->uid) || !same_str(a->node, b->node) ||
	    !same_str(a->resource_version, b->resource_version) ||
	    !same_str(a->phase, b->phase) ||
	    !same_str(a->qos_class, b->qos_class) ||
	    a->deleting != b->deleting ||
	    a->share_process_namespace != b->share_process_namespace ||
	    !same_json(a->annotations, b->annotations) ||
	    !same_json(a->labels, b->labels) ||
	    !same_str(a->owner_kind, b->owner_kind) ||
	    !same_str(a->owner_name, b->owner_name) ||
	    !same_str(a->owner_api_version, b->owner_api_version) ||
	    a->owner_controller != b->owner_controller ||
	    a->n_containers != b->n_containers)
		return false;
	for (size_t i = 0; i < a->n_containers; i++)
		if (!container_equal(&a->containers[i], &b->containers[i]))
			return false;
	return true;
}

const char *kube_pod_annotation(const struct kube_pod *p, const char *key)
{
	return kube_json_str(p->annotations, key, NULL, NULL);
}

void kube_pods_free(struct kube_pod **pods, size_t n)
{
	for (size_t i = 0; pods && i < n; i++)
		kube_pod_free(pods[i]);
	free(pods);
}

/* ---- building objects ---- */

int kube_json_set_str(struct json_object *o, const char *key, const char *v)
{
	struct json_object *s;

	if (!v)
		return 0;
	s = json_object_new_string(v);
	if (!s || json_object_object_add(o, key, s) < 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

int kube_json_set_int(struct json_object *o, const char *key, int64_t v)
{
	struct json_object *n = json_object_new_int64(v);

	if (!n || json_object_object_add(o, key, n) < 0) {
		json_object_put(n);
		return -ENOMEM;
	}
	return 0;
}

/* Adds a new empty object under key and returns it (borrowed). */
struct json_object *kube_json_add_obj(struct json_object *o, const char *key)
{
	struct json_object *n = json_object_new_object();

	if (!n || json_object_object_add(o, key, n) < 0) {
		json_object_put(n);
		return NULL;
	}
	return n;
}

static int add_owner(struct json_object *md, const struct kube_owner_ref *ow)
{
	struct json_object *arr, *ref;

	if (!ow)
		return 0;
	arr = json_object_new_array();
	ref = json_object_new_object();
	if (!arr || !ref || json_object_array_add(arr, ref) < 0) {
		json_object_put(arr);
		json_object_put(ref);
		return -ENOMEM;
	}
	if (json_object_object_add(md, "ownerReferences", arr) < 0) {
		json_object_put(arr);
		return -ENOMEM;
	}
	if (kube_json_set_str(ref, "apiVersion", ow->api_version) < 0 ||
	    kube_json_set_str(ref, "kind", ow->kind) < 0 ||
	    kube_json_set_str(ref, "name", ow->name) < 0 ||
	    kube_json_set_str(ref, "uid", ow->uid) < 0 ||
	    (ow->controller &&
	     json_object_object_add(ref, "controller",
				    json_object_new_boolean(1)) < 0))
		return -ENOMEM;
	return 0;
}

/* {"apiVersion","kind","metadata":{name,namespace,labels,owner}} */
struct json_object *kube_object_new(const struct kube_resource *res,
				    const char *name, const char *ns,
				    struct json_object *labels,
				    const struct kube_owner_ref *owner)
{
	struct json_object *o = json_object_new_object(), *md;
	char api[128];

	if (!o)
		return NULL;
	if (res->group && *res->group)
		snprintf(api, sizeof(api), "%s/%s", res->group, res->version);
	else
		snprintf(api, sizeof(api), "%s", res->version);
	md = json_object_new_object();
	if (!md || json_object_object_add(o, "metadata", md) < 0) {
		json_object_put(md);
		goto fail;
	}
	if (kube_json_set_str(o, "apiVersion", api) < 0 ||
	    kube_json_set_str(o, "kind", res->kind) < 0 ||
	    kube_json_set_str(md, "name", name) < 0 ||
	    kube_json_set_str(md, "namespace", ns) < 0 ||
	    add_owner(md, owner) < 0)
		goto fail;
	if (labels &&
	    json_object_object_add(md, "labels", json_object_get(labels)) < 0) {
		json_object_put(labels);
		goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static int oomreport_spec(struct json_object *spec,
			  const struct kube_oomreport *r)
{
	struct json_object *proc = kube_json_add_obj(spec, "process");

	if (!proc || kube_json_set_str(spec, "pod", r->pod) < 0 ||
	    kube_json_set_str(spec, "podUID", r->pod_uid) < 0 ||
	    kube_json_set_str(spec, "container", r->container) < 0 ||
	    kube_json_set_str(spec, "containerID", r->container_id) < 0 ||
	    kube_json_set_str(spec, "node", r->node) < 0 ||
	    kube_json_set_str(spec, "killedAt", r->killed_at) < 0 ||
	    kube_json_set_int(proc, "pid", r->pid) < 0 ||
	    kube_json_set_str(proc, "comm", r->comm) < 0 ||
	    kube_json_set_int(proc, "anonRSS", r->anon_rss) < 0 ||
	    kube_json_set_int(proc, "fileRSS", r->file_rss) < 0 ||
	    kube_json_set_int(proc, "shmemRSS", r->shmem_rss) < 0 ||
	    kube_json_set_int(spec, "limit", r->limit) < 0 ||
	    kube_json_set_int(spec, "usage", r->usage) < 0 ||
	    kube_json_set_str(spec, "verdict", r->verdict) < 0 ||
	    kube_json_set_str(spec, "summary", r->summary) < 0 ||
	    kube_json_set_str(spec, "bundle", r->bundle) < 0 ||
	    kube_json_set_str(spec, "bundleSHA256", r->bundle_sha256) < 0)
		return -ENOMEM;
	if (r->bundle_size > 0 &&
	    kube_json_set_int(spec, "bundleSize", r->bundle_size) < 0)
		return -ENOMEM;
	if (r->workload_kind && r->workload_name) {
		struct json_object *w = kube_json_add_obj(spec, "workload");

		if (!w || kube_json_set_str(w, "kind", r->workload_kind) < 0 ||
		    kube_json_set_str(w, "name", r->workload_name) < 0)
			return -ENOMEM;
	}
	return 0;
}

struct json_object *kube_oomreport_encode(const struct kube_oomreport *r,
					  const struct kube_owner_ref *owner)
{
	struct json_object *o, *spec;

	o = kube_object_new(&kube_res_oomreports, r->name, r->namespace,
			    r->labels, owner);
	if (!o)
		return NULL;
	spec = kube_json_add_obj(o, "spec");
	if (!spec || oomreport_spec(spec, r) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void kube_oomreport_free(struct kube_oomreport *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->namespace);
	free(r->uid);
	free(r->resource_version);
	free(r->created_at);
	free(r->pod);
	free(r->pod_uid);
	free(r->container);
	free(r->container_id);
	free(r->node);
	free(r->killed_at);
	free(r->comm);
	free(r->verdict);
	free(r->summary);
	free(r->bundle);
	free(r->bundle_sha256);
	free(r->workload_kind);
	free(r->workload_name);
	free(r->phase);
	json_object_put(r->labels);
	free(r);
}

static int oomreport_strings(struct json_object *o, struct kube_oomreport *r)
{
	const struct {
		const char *a, *b, *c;
		char **dst;
	} f[] = {
		{"metadata", "name", NULL, &r->name},
		{"metadata", "namespace", NULL, &r->namespace},
		{"metadata", "uid", NULL, &r->uid},
		{"metadata", "resourceVersion", NULL, &r->resource_version},
		{"metadata", "creationTimestamp", NULL, &r->created_at},
		{"spec", "pod", NULL, &r->pod},
		{"spec", "podUID", NULL, &r->pod_uid},
		{"spec", "container", NULL, &r->container},
		{"spec", "containerID", NULL, &r->container_id},
		{"spec", "node", NULL, &r->node},
		{"spec", "killedAt", NULL, &r->killed_at},
		{"spec", "process", "comm", &r->comm},
		{"spec", "verdict", NULL, &r->verdict},
		{"spec", "summary", NULL, &r->summary},
		{"spec", "bundle", NULL, &r->bundle},
		{"spec", "bundleSHA256", NULL, &r->bundle_sha256},
		{"spec", "workload", "kind", &r->workload_kind},
		{"spec", "workload", "name", &r->workload_name},
		{"status", "phase", NULL, &r->phase},
	};

	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (kube_json_dup(o, f[i].a, f[i].b, f[i].c, f[i].dst) < 0)
			return -ENOMEM;
	return 0;
}

int kube_oomreport_decode(struct json_object *obj, struct kube_oomreport **ret)
{
	struct kube_oomreport *r;
	const char *kind = kube_json_str(obj, "kind", NULL, NULL);

	if ((kind && !streq(kind, "OOMReport")) ||
	    !kube_json_str(obj, "metadata", "name", NULL))
		return -EBADMSG;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (oomreport_strings(obj, r) < 0) {
		kube_oomreport_free(r);
		return -ENOMEM;
	}
	r->pid = kube_json_int(obj, "spec", "process", "pid");
	r->anon_rss = kube_json_int(obj, "spec", "process", "anonRSS");
	r->file_rss = kube_json_int(obj, "spec", "process", "fileRSS");
	r->shmem_rss = kube_json_int(obj, "spec", "process", "shmemRSS");
	r->limit = kube_json_int(obj, "spec", "limit", NULL);
	r->usage = kube_json_int(obj, "spec", "usage", NULL);
	r->bundle_size = kube_json_int(obj, "spec", "bundleSize", NULL);
	r->labels = obj_get_object(obj, "metadata", "labels");
	*ret = r;
	return 0;
}

void kube_oomreports_free(struct kube_oomreport **r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		kube_oomreport_free(r[i]);
	free(r);
}

struct json_object *kube_oombundle_encode(const struct kube_oombundle *b,
					  const struct kube_owner_ref *owner)
{
	struct json_object *o, *spec, *data;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t len;
	char *s;

	strbuf_init(&sb, 0);
	if (kube_base64_encode(b->data, b->size, &sb) < 0)
		return NULL;
	o = kube_object_new(&kube_res_oombundles, b->name, b->namespace,
			    b->labels, owner);
	if (!o)
		return NULL;
	spec = kube_json_add_obj(o, "spec");
	s = strbuf_detach(&sb, &len);
	data = s ? json_object_new_string_len(s, (int)len) : NULL;
	free(s);
	if (!spec || !data || json_object_object_add(spec, "data", data) < 0 ||
	    kube_json_set_str(spec, "sha256", b->sha256 ? b->sha256 : "") < 0 ||
	    kube_json_set_int(spec, "size", (int64_t)b->size) < 0) {
		json_object_put(data);
		json_object_put(o);
		return NULL;
	}
	return o;
}

void kube_oombundle_free(struct kube_oombundle *b)
{
	if (!b)
		return;
	free(b->name);
	free(b->namespace);
	free(b->uid);
	free(b->resource_version);
	free(b->data);
	free(b->sha256);
	json_object_put(b->labels);
	free(b);
}

int kube_oombundle_decode(struct json_object *obj, struct kube_oombundle **ret)
{
	struct kube_oombundle *b;
	struct json_object *d = kube_json_path(obj, "spec", "data", NULL);
	int r;

	if (!kube_json_str(obj, "metadata", "name", NULL) || !d ||
	    !json_object_is_type(d, json_type_string))
		return -EBADMSG;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	r = kube_base64_decode(json_object_get_string(d),
			       (size_t)json_object_get_string_len(d), &b->data,
			       &b->size);
	if (r == 0 &&
	    (int64_t)b->size != kube_json_int(obj, "spec", "size", NULL))
		r = -EBADMSG;
	if (r == 0 &&
	    (kube_json_dup(obj, "metadata", "name", NULL, &b->name) < 0 ||
	     kube_json_dup(obj, "metadata", "namespace", NULL, &b->namespace) <
		     0 ||
	     kube_json_dup(obj, "metadata", "uid", NULL, &b->uid) < 0 ||
	     kube_json_dup(obj, "metadata", "resourceVersion", NULL,
			   &b->resource_version) < 0 ||
	     kube_json_dup(obj, "spec", "sha256", NULL, &b->sha256) < 0))
		r = -ENOMEM;
	if (r < 0) {
		kube_oombundle_free(b);
		return r;
	}
	b->labels = obj_get_object(obj, "metadata", "labels");
	*ret = b;
	return 0;
}
