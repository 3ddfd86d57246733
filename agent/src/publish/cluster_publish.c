/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode on the publisher thread: the Kubernetes target's API calls
 * (struct kube_target_api, target_kube.h: the steps over them), and what
 * cluster mode does each turn beside the queue (publisher.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_internal.h"
#include "publish/event_counts.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/log.h"
#include "base/util.h"

#define EVENTS_FILE "events.json"
/* What events_load() reads, and the size the file is kept under: the
 * entries past their Event's lifetime are dropped at each kill's Event,
 * and the oldest too while the rest pass EVENTS_CAP (about 3,000 pods'
 * containers killed within an hour), so the file always reads back. */
#define EVENTS_READ_MAX (1u << 20)
#define EVENTS_CAP (512u << 10)
/* Room for the entry the Event being posted adds after the pruning: a
 * key of a UID and a container name (63), a report id (95), two numbers. */
#define EVENTS_ENTRY_MAX 1024u

static void api_ok(struct cluster *c)
{
	atomic_store(&c->counters->last_api_ok_ms, now_realtime_us() / 1000);
}

/* What `kubectl get oomreports -l` and `list -l` select on: the node, the
 * pod, the container, the verdict and the workload (all kills of a
 * Deployment, whatever its pods are called). A value the API server would
 * refuse (a pod name over 63 bytes) is left out: the report is never lost
 * to a label. */
static struct json_object *report_labels(const struct pub_item *it)
{
	const struct kube_item *k = kube_item_get(it);
	const struct {
		const char *key, *value;
	} l[] = {
		{"oomlens.io/node", it->node},
		{"oomlens.io/pod", k->pod},
		{"oomlens.io/container", k->container},
		{"oomlens.io/verdict", it->verdict},
		{"oomlens.io/workload-kind", k->workload_kind},
		{"oomlens.io/workload", k->workload},
	};
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < ARRAY_SIZE(l); i++)
		if (l[i].value[0] && kube_label_value_ok(l[i].value))
			json_object_object_add(
				o, l[i].key,
				json_object_new_string(l[i].value));
	return o;
}

static int read_bundle(void *ud, const char *file, void **ret, size_t *len);

static int create_report(void *ud, const struct pub_item *it, char *ret_uid,
			 size_t size, struct kube_error *err)
{
	struct cluster *c = ud;
	const struct kube_item *k = kube_item_get(it);
	char hex[65];
	void *data = NULL;
	size_t len = 0;
	struct kube_oomreport r = {
		.name = (char *)it->id,
		.namespace = (char *)k->ns,
		.pod = (char *)k->pod,
		.pod_uid = k->pod_uid[0] ? (char *)k->pod_uid : NULL,
		.container = (char *)k->container,
		.container_id =
			k->container_id[0] ? (char *)k->container_id : NULL,
		.node = (char *)it->node,
		.killed_at = it->killed_at[0] ? (char *)it->killed_at : NULL,
		.pid = it->pid,
		/* none without the kernel's report; the API server of the
		 * test node refuses "" for a string (as null) */
		.comm = it->comm[0] ? (char *)it->comm : NULL,
		.anon_rss = it->anon_rss,
		.file_rss = it->file_rss,
		.shmem_rss = it->shmem_rss,
		.limit = it->limit,
		.usage = it->usage,
		.verdict = (char *)it->verdict,
		.summary = (char *)it->summary,
		.bundle = (char *)it->id,
		.workload_kind =
			k->workload[0] ? (char *)k->workload_kind : NULL,
		.workload_name = k->workload[0] ? (char *)k->workload : NULL,
	};
	struct kube_write_options wo = {.mode = KUBE_WRITE_CREATE,
					.cancel = c->cancel};
	struct kube_oomreport *out = NULL;
	int q;

	/* what a reader checks the OOMBundle against: the bundle as written
	 * here, before anyone else could write an object of its name */
	if (read_bundle(c, it->bundle_file, &data, &len) == 0) {
		kube_sha256_hex(data, len, hex);
		r.bundle_sha256 = hex;
		r.bundle_size = (int64_t)len;
		free(data);
	}
	r.labels = report_labels(it);
	q = kube_oomreport_write(c->client, &r, &wo, &out, err);
	json_object_put(r.labels);
	if (q < 0)
		return q;
	api_ok(c);
	strlcpy_safe(ret_uid, out && out->uid ? out->uid : "", size);
	kube_oomreport_free(out);
	/* status is a subresource: Publishing until the bundle is in */
	q = kube_oomreport_patch_status(c->client, k->ns, it->id, "Publishing",
					"publishing the bundle", false, err);
	if (q < 0) {
		pub_count_failure(c->metrics, q,
				  err); /* ignored, failed all the same */
		log_warn("report %s: status Publishing: %s, ignoring", it->id,
			 err->message);
	}
	return 0;
}

static int get_report_uid(void *ud, const struct pub_item *it, char *ret_uid,
			  size_t size, struct kube_error *err)
{
	struct cluster *c = ud;
	struct kube_oomreport *r;
	int q = kube_oomreport_get(c->client, kube_item_get(it)->ns, it->id, &r,
				   err);

	if (q < 0)
		return q;
	strlcpy_safe(ret_uid, r->uid ? r->uid : "", size);
	kube_oomreport_free(r);
	return 0;
}

static int create_bundle(void *ud, const struct pub_item *it, const void *data,
			 size_t len, struct kube_error *err)
{
	struct cluster *c = ud;
	const struct kube_item *k = kube_item_get(it);
	char hex[65];
	struct kube_owner_ref owner = {.api_version = "oomlens.io/v1alpha1",
				       .kind = "OOMReport",
				       .name = it->id,
				       .uid = k->report_uid,
				       .controller = true};
	struct kube_oombundle b = {.name = (char *)it->id,
				   .namespace = (char *)k->ns,
				   .data = (unsigned char *)data,
				   .size = len,
				   .sha256 = hex};
	struct kube_write_options wo = {.mode = KUBE_WRITE_CREATE,
					.owner = k->report_uid[0] ? &owner
								  : NULL,
					.cancel = c->cancel};
	int q;

	kube_sha256_hex(data, len, hex);
	q = kube_oombundle_write(c->client, &b, &wo, err);
	if (q >= 0)
		api_ok(c);
	return q;
}

/* The stored bundle's data against ours, not its spec's claims (whoever
 * created it wrote those). Another writer's is deleted by its uid (a
 * precondition: never a newer object of that name); one too large to be
 * ours (an answer over 2 MiB) by its name. */
static int bundle_is_ours(void *ud, const struct pub_item *it, const void *data,
			  size_t len, struct kube_error *err)
{
	struct cluster *c = ud;
	const char *ns = kube_item_get(it)->ns;
	struct kube_call k = {.res = &kube_res_oombundles,
			      .namespace = ns,
			      .name = it->id,
			      .cancel = c->cancel,
			      .max_response = 2u << 20};
	struct json_object *o = NULL;
	struct kube_oombundle *b = NULL;
	char ours[65], theirs[65] = "";
	const char *uid = NULL;
	int q = kube_get(c->client, &k, &o, err);

	if (q == -ENOENT) /* deleted meanwhile: create again */
		return 0;
	if (q < 0 && q != -E2BIG)
		return q;
	kube_sha256_hex(data, len, ours);
	if (q == 0 && kube_oombundle_decode(o, &b) == 0 && b->size == len)
		kube_sha256_hex(b->data, b->size, theirs);
	if (streq(ours, theirs)) {
		kube_oombundle_free(b);
		json_object_put(o);
		return 1;
	}
	if (o)
		uid = jget_str(NULL, jget(o, "metadata"), "uid");
	log_warn("report %s: OOMBundle %s/%s was not written by this agent "
		 "(%s; ours is %zu bytes, sha256 %.12s…); deleting it",
		 it->id, ns, it->id,
		 q == -E2BIG ? "its answer is over 2 MiB"
		 : b	     ? "its data differs"
			     : "its data is not base64 of its size",
		 len, ours);
	q = kube_oombundle_delete(c->client, ns, it->id, uid, err);
	kube_oombundle_free(b);
	json_object_put(o);
	return q == 0 || q == -ENOENT ? 0 : q;
}

static int patch_status(void *ud, const struct pub_item *it,
			struct kube_error *err)
{
	struct cluster *c = ud;
	const struct kube_item *k = kube_item_get(it);

	return kube_oomreport_patch_status(c->client, k->ns, it->id, "Ready",
					   k->bundle_stored ? "bundle stored"
							    : it->last_error,
					   k->bundle_stored, err);
}

static int pod_alive(void *ud, const struct pub_item *it,
		     struct kube_error *err)
{
	struct cluster *c = ud;
	const struct kube_item *k = kube_item_get(it);
	struct kube_pod *p;
	int q = kube_pod_get(c->client, k->ns, k->pod, &p, err);

	if (q == -ENOENT)
		return 0;
	if (q < 0)
		return q;
	q = p->uid && streq(p->uid, k->pod_uid);
	kube_pod_free(p);
	return q;
}

static int read_bundle(void *ud, const char *file, void **ret, size_t *len)
{
	struct cluster *c = ud;

	return pub_read_bundle(c->state_fd, file, 4u << 20, ret, len);
}

/* Events: one per (pod uid, container), named after them so that repeated
 * kills bump its count; the count and the last report counted live in
 * the state dir (the agent may not read Events back). */
static struct json_object *events_load(struct cluster *c)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o = NULL;
	int r;

	strbuf_init(&sb, EVENTS_READ_MAX);
	r = read_file_at_nofollow(c->state_fd, EVENTS_FILE, EVENTS_READ_MAX,
				  &sb);
	if (r >= 0)
		o = json_tokener_parse(sb.buf);
	if (!o || !json_object_is_type(o, json_type_object)) {
		/* each Event's next kill then creates it again (count 1,
		 * or 2 after the 409 of one still there) */
		if (r != -ENOENT)
			log_warn("\"%s\" unreadable (%s): the kill Events' "
				 "counts start again",
				 EVENTS_FILE,
				 r < 0 ? strerror(-r) : "not a JSON object");
		json_object_put(o);
		o = json_object_new_object();
	}
	return o;
}

/* Drops the entries whose Events the API server has deleted, and the
 * oldest while the file would pass EVENTS_CAP (event_counts.h). */
static void events_prune(struct json_object *all)
{
	struct event_counts_pruned p;
	int64_t now_ms = (int64_t)(now_realtime_us() / 1000);

	if (event_counts_prune(all, now_ms, EVENTS_CAP - EVENTS_ENTRY_MAX, &p) <
	    0)
		return; /* -ENOMEM: kept whole, the next Event tries again */
	if (p.expired)
		log_debug("\"%s\": %u entries past their Event's %lld s "
			  "lifetime dropped",
			  EVENTS_FILE, p.expired,
			  (long long)(EVENT_COUNTS_TTL_MS / 1000));
	if (p.over_cap)
		log_warn("\"%s\" over %u bytes: dropped its %u oldest "
			 "entries; those containers' next kill restarts its "
			 "Event's count",
			 EVENTS_FILE, EVENTS_CAP, p.over_cap);
}

static void now_rfc3339(char buf[32])
{
	time_t t = (time_t)(now_realtime_us() / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The kill's Event: reason OOMKilled, what alert rules and event
 * exporters match on (docs/cluster-mode.md, Events). */
static struct json_object *event_object(struct cluster *c,
					const struct pub_item *it,
					const char *name, const char *msg,
					unsigned count)
{
	const struct kube_item *k = kube_item_get(it);
	char now[32], fp[96];
	struct kube_event_options eo = {
		.namespace = k->ns,
		.involved_name = k->pod,
		.involved_uid = k->pod_uid,
		.field_path = fp,
		.reason = CLUSTER_KILL_REASON,
		.message = msg,
		.component = CLUSTER_COMPONENT,
		.host = c->o.node,
		.reporting_component = CLUSTER_REPORTING_COMPONENT,
		.reporting_instance = c->reporting_instance,
	};
	struct json_object *e;

	now_rfc3339(now);
	snprintf(fp, sizeof(fp), "spec.containers{%s}", k->container);
	e = kube_event_object(&eo, name, now);
	if (e && json_object_object_add(e, "count",
					json_object_new_int((int)count)) < 0) {
		json_object_put(e);
		e = NULL;
	}
	return e;
}

static int event_send(struct cluster *c, const struct pub_item *it,
		      const char *name, unsigned count, struct kube_error *err)
{
	const struct kube_item *ki = kube_item_get(it);
	struct kube_call k = {.res = &kube_res_events,
			      .namespace = ki->ns,
			      .cancel = c->cancel};
	/* every field bounded by its own size: the command at the end is
	 * whole whatever the summary holds (under 800 bytes in all) */
	char msg[800];
	struct json_object *e;
	int q;

	snprintf(msg, sizeof(msg),
		 "container %.63s OOM-killed (pid %lld %.31s): %.31s: %.400s; "
		 "kubectl oomlens show -n %.63s %.95s",
		 ki->container, (long long)it->pid, it->comm, it->verdict,
		 it->summary, ki->ns, it->id);
	e = event_object(c, it, name, msg, count);
	if (!e)
		return -ENOMEM;
	if (count == 1) {
		q = kube_create(c->client, &k, e, NULL, err);
	} else {
		/* keep firstTimestamp: patch what changes */
		json_object_object_del(e, "firstTimestamp");
		json_object_object_del(e, "involvedObject");
		k.name = name;
		q = kube_merge_patch(c->client, &k, e, NULL, err);
	}
	json_object_put(e);
	return q;
}

static int post_event(void *ud, const struct pub_item *it, unsigned *ret_count,
		      struct kube_error *err)
{
	struct cluster *c = ud;
	const struct kube_item *k = kube_item_get(it);
	struct json_object *all = events_load(c), *ent, *v;
	char key[128], name[160];
	unsigned count = 1;
	const char *s;
	size_t len;
	int q;

	snprintf(key, sizeof(key), "%s/%s", k->pod_uid, k->container);
	snprintf(name, sizeof(name), "oomlens-%s-%s", k->pod_uid, k->container);
	events_prune(all);
	if (json_object_object_get_ex(all, key, &ent)) {
		if (json_object_object_get_ex(ent, "report", &v) &&
		    streq(json_object_get_string(v), it->id)) {
			/* counted before a crash: done */
			json_object_object_get_ex(ent, "count", &v);
			*ret_count = (unsigned)json_object_get_int(v);
			json_object_put(all);
			return 0;
		}
		json_object_object_get_ex(ent, "count", &v);
		count = (unsigned)json_object_get_int(v) + 1;
	}
	q = event_send(c, it, name, count, err);
	if (q == -ENOENT && count > 1) /* expired (1 h TTL): a new one */
		q = event_send(c, it, name, count = 1, err);
	if (q == -EEXIST && count == 1) /* our state was lost */
		q = event_send(c, it, name, count = 2, err);
	if (q >= 0) {
		ent = json_object_new_object();
		json_object_object_add(ent, "count",
				       json_object_new_int((int)count));
		json_object_object_add(ent, "report",
				       json_object_new_string(it->id));
		/* the Event's lifetime runs from its last write */
		json_object_object_add(
			ent, "sent_ms",
			json_object_new_int64(
				(int64_t)(now_realtime_us() / 1000)));
		json_object_object_add(all, key, ent);
		s = json_object_to_json_string_length(
			all, JSON_C_TO_STRING_PLAIN, &len);
		if (write_file_atomic_at(c->state_fd, EVENTS_FILE, s, len,
					 0600) < 0)
			log_warn("cannot save \"%s\", ignoring", EVENTS_FILE);
		*ret_count = count;
		api_ok(c);
	}
	json_object_put(all);
	return q;
}

/* A kill whose pod the detector did not know yet (created and killed
 * while the pod watch was away), or whose container it could not name
 * (the pod's status did not have the container's ID yet: seen on the slow
 * v2 test node for a JVM killed seconds after its start): find it among
 * the node's pods by UID. A failed list is retried by the queue; only a
 * list without the pod says it is gone: then the report goes to the
 * agent's own namespace, named by the UID. */
static int resolve(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct cluster *c = ud;
	struct kube_item *ki = kube_item_of(it);
	struct kube_pod_list_options lo = {.node = c->o.node,
					   .cancel = c->cancel};
	struct kube_pod **pods = NULL;
	size_t n = 0;
	int r;

	/* a container no list names still gets one (the CRD requires
	 * one): the ID's prefix below */
	if ((!ki->pod[0] || (!ki->container[0] && ki->container_id[0])) &&
	    ki->pod_uid[0]) {
		r = kube_pod_list(c->client, &lo, &pods, &n, NULL, err);
		if (r < 0)
			return r;
		api_ok(c);
		for (size_t i = 0; i < n; i++) {
			const struct kube_container *ctr;

			if (!pods[i]->uid || !streq(pods[i]->uid, ki->pod_uid))
				continue;
			strlcpy_safe(ki->ns, pods[i]->namespace,
				     sizeof(ki->ns));
			strlcpy_safe(ki->pod, pods[i]->name, sizeof(ki->pod));
			ctr = kube_pod_find_container(pods[i], ki->container_id,
						      NULL);
			if (ctr && !ki->container[0])
				strlcpy_safe(ki->container, ctr->name,
					     sizeof(ki->container));
		}
		kube_pods_free(pods, n);
	}
	if (!ki->pod[0]) {
		log_info("report %s: pod %s not found on the node, published "
			 "in namespace %s",
			 it->id, ki->pod_uid[0] ? ki->pod_uid : "(none)",
			 kube_client_namespace(c->client));
		strlcpy_safe(ki->ns, kube_client_namespace(c->client),
			     sizeof(ki->ns));
		snprintf(ki->pod, sizeof(ki->pod), "uid-%s",
			 ki->pod_uid[0] ? ki->pod_uid : "unknown");
	}
	if (!ki->container[0])
		snprintf(ki->container, sizeof(ki->container), "%.12s",
			 ki->container_id[0] ? ki->container_id : "unknown");
	return 0;
}

/* The agent stopping: every call of the client returns -ECANCELED. */
static void cancel(void *ud)
{
	struct cluster *c = ud;

	if (c->cancel)
		kube_cancel_trigger(c->cancel);
	if (c->client)
		kube_client_shutdown(c->client);
}

const struct kube_target_api cluster_kube_api = {
	.resolve = resolve,
	.create_report = create_report,
	.get_report_uid = get_report_uid,
	.create_bundle = create_bundle,
	.bundle_is_ours = bundle_is_ours,
	.patch_status = patch_status,
	.pod_alive = pod_alive,
	.post_event = post_event,
	.read_bundle = read_bundle,
	.cancel = cancel,
};

static void update_counters(struct cluster *c)
{
	const struct pubqueue *q = publisher_queue(c->pub);
	const struct pub_stats *s = pubqueue_stats(q);

	atomic_store(&c->counters->published, s->published);
	atomic_store(&c->counters->publish_failed, s->failed);
	atomic_store(&c->counters->publish_retries, s->retries);
	atomic_store(&c->counters->queue_depth, pubqueue_depth(q));
}

/* /readyz wants an answer from the API server within the last minute; a
 * quiet node (no pod changes, nothing to publish) asks for /version, which
 * every authenticated identity may read. */
static void probe_api(struct cluster *c)
{
	uint64_t now = now_realtime_us() / 1000;
	uint64_t ok = atomic_load(&c->counters->last_api_ok_ms);
	struct kube_request rq = {
		.method = "GET", .path = "/version", .cancel = c->cancel};
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	struct kube_error e = {0};
	long status = 0;

	if (now < ok + CLUSTER_API_PROBE_MS ||
	    now < c->last_probe_ms + CLUSTER_API_PROBE_MS)
		return;
	c->last_probe_ms = now;
	strbuf_init(&body, 64 * 1024);
	if (kube_request(c->client, &rq, &status, &body, &e) == 0)
		api_ok(c);
	else
		log_debug("API server probe (/version): %s",
			  e.message[0] ? e.message : "no answer");
}

void cluster_pub_before(void *ud)
{
	cluster_snap_serve(ud); /* a kill waits on each */
}

void cluster_pub_after(void *ud)
{
	struct cluster *c = ud;

	probe_api(c);
	update_counters(c);
	cluster_events_post(c); /* after the kills: those come first */
	if (now_monotonic_us() >= c->next_retention_us) {
		cluster_retention(c);
		c->next_retention_us = now_monotonic_us() +
				       c->o.retention_interval_s * 1000000;
	}
}
