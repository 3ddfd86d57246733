/* SPDX-License-Identifier: Apache-2.0 */
/* The Kubernetes publish target: its steps over the API calls it is
 * given, what their failures mean, and its fields of an item
 * (target_kube.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish/pubqueue.h"
#include "publish/target_kube.h"
#include "base/log.h"
#include "base/util.h"

/* The API's limit for one object, less room for the rest of it. */
#define BUNDLE_MAX (900u << 10)

static int do_resolve(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct kube_target *kt = ud;

	return kt->api->resolve ? kt->api->resolve(kt->ud, it, err) : 0;
}

static int do_report(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct kube_target *kt = ud;
	struct kube_item *k = kube_item_of(it);
	char uid[64] = "";
	int r = kt->api->create_report(kt->ud, it, uid, sizeof(uid), err);

	if (r == -EEXIST) {
		/* created before a crash or a lost answer: done, but the
		 * bundle's ownerReference needs the uid */
		kt->stats.conflicts++;
		r = kt->api->get_report_uid(kt->ud, it, uid, sizeof(uid), err);
	}
	if (r >= 0)
		strlcpy_safe(k->report_uid, uid, sizeof(k->report_uid));
	return r;
}

static void no_bundle(struct pub_item *it, const char *why)
{
	kube_item_of(it)->bundle_stored = false;
	snprintf(it->last_error, sizeof(it->last_error), "bundle: %s", why);
	log_warn("report %s: %s, publishing the report without it", it->id,
		 why);
}

static int do_bundle(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct kube_target *kt = ud;
	void *data = NULL;
	size_t len = 0;
	int r = kt->api->read_bundle(kt->ud, it->bundle_file, &data, &len);

	if (r < 0) {
		no_bundle(it, strerror(-r));
		return 0;
	}
	if (len > BUNDLE_MAX) {
		free(data);
		no_bundle(it, "larger than 900 KiB");
		return 0;
	}
	r = kt->api->create_bundle(kt->ud, it, data, len, err);
	if (r == -EEXIST) {
		/* stored before this call, or planted under our name by
		 * someone who may create OOMBundles here: the data decides */
		kt->stats.conflicts++;
		r = kt->api->bundle_is_ours(kt->ud, it, data, len, err);
		if (r == 0) { /* the call said why, and deleted it */
			kt->stats.planted++;
			r = kt->api->create_bundle(kt->ud, it, data, len, err);
		}
	}
	free(data);
	if (r == -E2BIG) {
		pub_count_failure(kt->metrics, r, err);
		no_bundle(it, "refused by the API server as too large");
		return 0;
	}
	return r;
}

static int do_status(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct kube_target *kt = ud;

	return kt->api->patch_status(kt->ud, it, err);
}

static int do_event(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct kube_target *kt = ud;
	struct kube_item *k = kube_item_of(it);
	unsigned count = 0;
	int r;

	if (k->pod_uid[0]) {
		r = kt->api->pod_alive(kt->ud, it, err);
		if (r < 0)
			return r;
		k->pod_gone = r == 0;
	} else {
		k->pod_gone = true;
	}
	if (k->pod_gone) {
		kt->stats.pod_gone++;
		log_info("pod %s/%s is gone: report %s published without its "
			 "Event",
			 k->ns, k->pod, it->id);
		return 0;
	}
	r = kt->api->post_event(kt->ud, it, &count, err);
	if (r >= 0)
		k->event_count = count;
	return r;
}

/* The names are in the files of every agent before: never renamed. */
static const struct pub_step steps[] = {
	[KUBE_STEP_RESOLVE] = {"resolve", do_resolve},
	[KUBE_STEP_REPORT] = {"report", do_report},
	[KUBE_STEP_BUNDLE] = {"bundle", do_bundle},
	[KUBE_STEP_STATUS] = {"status", do_status},
	[KUBE_STEP_EVENT] = {"event", do_event},
};
_Static_assert(ARRAY_SIZE(steps) == KUBE_STEP_DONE, "a name a step");

static enum pub_outcome classify_errno(int r, const struct kube_error *e)
{
	if (e->retryable)
		return PUB_RETRY;
	switch (r) {
	case -EAGAIN: /* 429 */
	case -EIO:    /* 5xx */
	case -EBUSY:  /* 409 Conflict: try again */
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -EPROTO:
	case -EACCES: /* 401: a token being rotated */
	case -EPERM:  /* 403: RBAC may be fixed while we wait */
	case -ECANCELED:
	case -ENOMEM:
		return PUB_RETRY;
	default:
		return PUB_GIVE_UP;
	}
}

/* 404 on a create: the collection is not served (yet). An API server
 * that has just started answers "404 page not found" for a
 * CustomResourceDefinition's path until that resource's handler is up
 * (seen on the test node a few seconds after a restart); a chart being
 * upgraded, likewise. Retried for about two minutes of backoff, then the
 * item fails as any other 4xx would (a deleted namespace never comes
 * back). */
#define NOT_SERVED_RETRIES 8

static enum pub_outcome classify(const struct pub_item *it, int r,
				 const struct kube_error *e)
{
	if (r == -ENOENT &&
	    (it->step == KUBE_STEP_REPORT || it->step == KUBE_STEP_BUNDLE))
		return it->attempts < NOT_SERVED_RETRIES ? PUB_RETRY
							 : PUB_GIVE_UP;
	return classify_errno(r, e);
}

/* A kill whose pod or container the detector could not name starts by
 * resolving it; the bundle is stored until a step says otherwise. */
static size_t first(struct pub_item *it)
{
	struct kube_item *k = kube_item_of(it);

	k->bundle_stored = true;
	return k->pod[0] && k->container[0] ? KUBE_STEP_REPORT
					    : KUBE_STEP_RESOLVE;
}

static void cancel(void *ud)
{
	struct kube_target *kt = ud;

	if (kt->api->cancel)
		kt->api->cancel(kt->ud);
}

#define STR(f)                                                      \
	{                                                           \
#f, offsetof(struct kube_item, f),                  \
			sizeof(((struct kube_item *)0)->f), PUB_STR \
	}
#define FIELD(f, kind)                                     \
	{                                                  \
#f, offsetof(struct kube_item, f), 0, kind \
	}

/* Names as the files of every agent before have them. */
static const struct pub_field fields[] = {
	STR(ns),
	STR(pod),
	STR(pod_uid),
	STR(container),
	STR(container_id),
	STR(workload_kind),
	STR(workload),
	STR(report_uid),
	FIELD(bundle_stored, PUB_BOOL),
	FIELD(pod_gone, PUB_BOOL),
	FIELD(event_count, PUB_UINT),
};

void kube_target_init(struct kube_target *kt, const struct kube_target_api *api,
		      void *ud, struct agent_metrics *m)
{
	memset(kt, 0, sizeof(*kt));
	kt->api = api;
	kt->ud = ud;
	kt->metrics = m;
	kt->target = (struct pub_target){
		.name = "kubernetes",
		.ud = kt,
		.steps = steps,
		.n_steps = ARRAY_SIZE(steps),
		/* the report and its bundle are in the API */
		.delivered = KUBE_STEP_BUNDLE,
		.first = first,
		.classify = classify,
		.cancel = cancel,
		.fields = fields,
		.n_fields = ARRAY_SIZE(fields),
	};
}
