/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode: the pod watch of this node. Each change becomes a snapshot
 * for the detector (containers and their IDs, the bundle manifest's "pod"
 * object with the owner chain); bad oomlens.io/ annotations get one
 * OOMLensConfig Warning Event per pod and refused values, the injector's
 * oomlens.io/not-injected one per pod (queued for the publisher
 * thread). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"
#include "base/jget.h"
#include "base/log.h"
#include "base/util.h"

#define OWNER_DEPTH 3

static int find_seen(struct cluster *c, const char *uid)
{
	for (size_t i = 0; i < c->n_seen; i++)
		if (streq(c->seen[i].uid, uid))
			return (int)i;
	return -1;
}

void cluster_owners_clear(struct cluster *c)
{
	for (size_t i = 0; i < c->n_seen; i++)
		free(c->seen[i].owners);
	c->n_seen = 0;
}

static void forget(struct cluster *c, const char *uid)
{
	int i = find_seen(c, uid);

	if (i < 0)
		return;
	free(c->seen[i].owners);
	c->seen[i] = c->seen[--c->n_seen];
}

/* The controller reference of obj, or NULL. Borrowed. */
static struct json_object *controller_of(struct json_object *obj)
{
	struct json_object *md, *arr, *ctl;

	if (!json_object_object_get_ex(obj, "metadata", &md) ||
	    !json_object_object_get_ex(md, "ownerReferences", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);

		if (json_object_object_get_ex(o, "controller", &ctl) &&
		    json_object_get_boolean(ctl))
			return o;
	}
	return NULL;
}

static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v)
						     : NULL;
}

/* GETs the owner apiVersion av, kind, name (read-only). NULL when not
 * allowed/found. */
static struct json_object *get_owner(struct cluster *c, const char *ns,
				     const char *av, const char *kind,
				     const char *name)
{
	const char *slash;
	char group[64] = "", version[32], plural[64];
	struct kube_resource res = {.namespaced = true};
	struct kube_call k = {.namespace = ns, .cancel = c->cancel};
	struct json_object *out = NULL;
	size_t n;

	if (!av || !kind || !name || strlen(kind) + 2 > sizeof(plural))
		return NULL;
	slash = strchr(av, '/');
	if (slash)
		snprintf(group, sizeof(group), "%.*s", (int)(slash - av), av);
	snprintf(version, sizeof(version), "%s", slash ? slash + 1 : av);
	n = strlen(kind);
	for (size_t i = 0; i < n; i++)
		plural[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z'
					   ? kind[i] - 'A' + 'a'
					   : kind[i]);
	plural[n] = 's';
	plural[n + 1] = '\0';
	res = (struct kube_resource){group, version, plural, kind, true};
	k.res = &res;
	k.name = name;
	if (kube_get(c->client, &k, &out, NULL) < 0)
		return NULL;
	return out;
}

/* [{"kind":…,"name":…}, …] from the pod's controller upwards. */
static char *owner_chain(struct cluster *c, const struct kube_pod *p)
{
	struct json_object *arr = json_object_new_array(), *cur = NULL, *ref;
	const char *av = p->owner_api_version, *kind = p->owner_kind;
	const char *name = p->owner_name;
	bool more = p->owner_controller;
	char *s;

	for (int d = 0; arr && more && d < OWNER_DEPTH; d++) {
		struct json_object *o = json_object_new_object(), *next;

		if (!o || json_object_array_add(arr, o) < 0) {
			json_object_put(o);
			break;
		}
		json_object_object_add(
			o, "kind", kind ? json_object_new_string(kind) : NULL);
		json_object_object_add(
			o, "name", name ? json_object_new_string(name) : NULL);
		/* av, kind and name may be cur's: read before it goes */
		next = get_owner(c, p->namespace, av, kind, name);
		json_object_put(cur);
		cur = next;
		ref = cur ? controller_of(cur) : NULL;
		more = ref != NULL;
		av = str_of(ref, "apiVersion");
		kind = str_of(ref, "kind");
		name = str_of(ref, "name");
	}
	json_object_put(cur);
	s = arr ? strdup(json_object_to_json_string_ext(arr,
							JSON_C_TO_STRING_PLAIN))
		: NULL;
	json_object_put(arr);
	return s;
}

/* FNV-1a: the refused values of a pod, to tell a new mistake from the
 * same one seen again. */
static uint64_t text_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ? h : 1;
}

/* The OOMLensConfig Warning Event on pod p saying text, logged, queued
 * for the publisher. */
static void config_event(struct cluster *c, const struct kube_pod *p,
			 const char *text)
{
	struct cluster_event *ev;

	log_warn("pod %s/%s: %s", p->namespace, p->name, text);
	ev = cluster_event_new(p->namespace, p->name, p->uid, "OOMLensConfig");
	if (!ev)
		return;
	strlcpy_safe(ev->message, text, sizeof(ev->message));
	(void)cluster_event_queue(c, ev);
}

/* One OOMLensConfig Event per pod and set of refused values: a pod's
 * watch events repeat (status changes), its mistakes need saying once. */
static void check_annotations(struct cluster *c, int i,
			      const struct kube_pod *p)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_annotations a;
	uint64_t h;

	kube_annotations_parse(p->annotations, &a);
	strbuf_init(&sb, 1024);
	if (!a.n_errors || kube_annotations_errors_text(&a, &sb) < 0)
		return;
	h = text_hash(sb.buf);
	if (c->seen[i].warned_hash == h)
		return;
	c->seen[i].warned_hash = h;
	config_event(c, p, sb.buf);
}

/* The injector left the pod without the sidecar and said why in
 * oomlens.io/not-injected: one OOMLensConfig Event per pod UID. The
 * injector writes it once, at the pod's creation; whoever may annotate the
 * pod may change it afterwards, which says nothing new (and must not make
 * Events on demand): the text is the first one seen, sanitised and cut. */
static void check_not_injected(struct cluster *c, int i,
			       const struct kube_pod *p)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (c->seen[i].told_not_injected)
		return;
	strbuf_init(&sb, 512);
	if (kube_not_injected_text(p->annotations, &sb) <= 0)
		return;
	c->seen[i].told_not_injected = true;
	config_event(c, p, sb.buf);
}

static int remember(struct cluster *c, const struct kube_pod *p)
{
	int i = find_seen(c, p->uid);

	if (i < 0) {
		if (c->n_seen == OWNER_CACHE) /* a node has ~110 pods */
			forget(c, c->seen[0].uid);
		i = (int)c->n_seen++;
		memset(&c->seen[i], 0, sizeof(c->seen[i]));
		strlcpy_safe(c->seen[i].uid, p->uid, sizeof(c->seen[i].uid));
		c->seen[i].owners = owner_chain(c, p);
	}
	if (p->name) {
		check_annotations(c, i, p);
		check_not_injected(c, i, p);
	}
	return i;
}

static struct json_object *mem_json(const char *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "memory",
			       v ? json_object_new_string(v) : NULL);
	return o;
}

static struct json_object *containers_json(const struct kube_pod *p)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < p->n_containers; i++) {
		const struct kube_container *k = &p->containers[i];
		struct json_object *o = json_object_new_object();
		const char *id = kube_container_id_bare(k->container_id);
		const char *last = kube_container_id_bare(k->last_container_id);

		json_object_object_add(o, "name",
				       json_object_new_string(k->name));
		json_object_object_add(
			o, "image",
			k->image ? json_object_new_string(k->image) : NULL);
		json_object_object_add(o, "requests",
				       mem_json(k->request_memory_s));
		json_object_object_add(o, "limits",
				       mem_json(k->limit_memory_s));
		json_object_object_add(o, "restart_count",
				       json_object_new_int(k->restart_count));
		json_object_object_add(o, "container_id",
				       id ? json_object_new_string(id) : NULL);
		json_object_object_add(o, "last_container_id",
				       last ? json_object_new_string(last)
					    : NULL);
		json_object_array_add(arr, o);
	}
	return arr;
}

static char *pod_manifest(const struct kube_pod *p, const char *owners)
{
	struct json_object *o = json_object_new_object();
	char *s;

	json_object_object_add(o, "namespace",
			       json_object_new_string(p->namespace));
	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "uid", json_object_new_string(p->uid));
	json_object_object_add(
		o, "node", p->node ? json_object_new_string(p->node) : NULL);
	json_object_object_add(
		o, "qos_class",
		p->qos_class ? json_object_new_string(p->qos_class) : NULL);
	json_object_object_add(o, "owners",
			       json_tokener_parse(owners ? owners : "[]"));
	json_object_object_add(o, "containers", containers_json(p));
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

/* The top of the owner chain (JSON text, owner_chain()) into s. */
static void workload_of(const char *owners, struct cluster_pod *s)
{
	struct json_object *a = owners ? json_tokener_parse(owners) : NULL;
	size_t n = jget_len(a);
	struct json_object *top = n ? jget_idx(a, n - 1) : NULL;
	const char *kind = jget_str(NULL, top, "kind");
	const char *name = jget_str(NULL, top, "name");

	if (kind && name) {
		strlcpy_safe(s->workload_kind, kind, sizeof(s->workload_kind));
		strlcpy_safe(s->workload, name, sizeof(s->workload));
	}
	json_object_put(a);
}

static struct cluster_pod *snapshot(const struct kube_pod *p,
				    const char *owners)
{
	size_t n = p->n_containers < CLUSTER_MAX_CTR ? p->n_containers
						     : CLUSTER_MAX_CTR;
	struct cluster_pod *s = calloc(1, sizeof(*s) + n * sizeof(s->ctr[0]));
	struct kube_annotations a;

	if (!s)
		return NULL;
	strlcpy_safe(s->uid, p->uid, sizeof(s->uid));
	strlcpy_safe(s->ns, p->namespace, sizeof(s->ns));
	strlcpy_safe(s->name, p->name, sizeof(s->name));
	kube_annotations_parse(p->annotations, &a);
	s->capture = a.capture;
	for (size_t i = 0; i < n; i++) {
		const struct kube_container *k = &p->containers[i];
		const char *id = kube_container_id_bare(k->container_id);
		const char *last = kube_container_id_bare(k->last_container_id);

		strlcpy_safe(s->ctr[s->n].name, k->name,
			     sizeof(s->ctr[s->n].name));
		strlcpy_safe(s->ctr[s->n].id, id ? id : "",
			     sizeof(s->ctr[s->n].id));
		strlcpy_safe(s->ctr[s->n].last_id, last ? last : "",
			     sizeof(s->ctr[s->n].last_id));
		s->n++;
	}
	s->manifest = pod_manifest(p, owners);
	workload_of(owners, s);
	return s;
}

struct watch_ctx {
	struct cluster *c;
	struct kube_watch_stats stats;
};

static void send_pod(struct cluster *c, struct cluster_pod *s)
{
	if (evqueue_push(c->pods, s) < 0) {
		log_warn("pod queue full, pod %s dropped", s->uid);
		cluster_pod_free(s);
	}
}

static int on_pod(void *ud, enum kube_event_type t, const struct kube_pod *p)
{
	struct watch_ctx *w = ud;
	struct cluster *c = w->c;
	struct cluster_pod *s;
	int i;

	atomic_store(&c->counters->last_api_ok_ms, now_realtime_us() / 1000);
	if (t == KUBE_EVENT_BOOKMARK || !p->uid || !p->namespace)
		return 0;
	if (t == KUBE_EVENT_DELETED) {
		forget(c, p->uid);
		s = calloc(1, sizeof(*s));
		if (s) {
			strlcpy_safe(s->uid, p->uid, sizeof(s->uid));
			s->deleted = true;
			send_pod(c, s);
		}
	} else {
		i = remember(c, p);
		s = snapshot(p, c->seen[i].owners);
		if (s)
			send_pod(c, s);
	}
	atomic_store(&c->counters->pods, c->n_seen);
	return 0;
}

/* The first complete list: the pod cache has every pod of the node. */
static void on_synced(void *ud)
{
	struct watch_ctx *w = ud;

	atomic_store(&w->c->counters->pods_synced, true);
	atomic_store(&w->c->counters->last_api_ok_ms, now_realtime_us() / 1000);
}

void *cluster_watch_main(void *ud)
{
	struct cluster *c = ud;
	struct watch_ctx w = {.c = c};
	char sel[300];
	struct kube_error e = {0};
	struct kube_watch_options o = {
		.call = {.res = &kube_res_pods,
			 .all_namespaces = true,
			 .cancel = c->cancel},
		.field_selector = sel,
		/* each pod read straight from its watch line */
		.pod_fn = on_pod,
		.userdata = &w,
		.stats = &w.stats,
		.synced = on_synced,
	};
	int r;

	snprintf(sel, sizeof(sel), "spec.nodeName=%s", c->o.node);
	r = kube_watch(c->client, &o, &e);
	if (r != -ECANCELED)
		log_error("pod watch ended: %s (%s)",
			  e.message[0] ? e.message : "", strerror(-r));
	return NULL;
}
