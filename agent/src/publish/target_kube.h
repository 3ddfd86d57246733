/* SPDX-License-Identifier: Apache-2.0 */
/* The Kubernetes publish target (target_kube.c): each kill in the API
 * of its cluster as an OOMReport, an OOMBundle and a Warning Event on its
 * pod. Steps, in order:
 *
 *   resolve the pod and container of a kill the detector's pod cache did
 *           not know yet (a pod created and killed while the watch was
 *           away): found among the node's pods by UID; a failed list is
 *           retried like any step, only a list without it says "gone"
 *   report  create OOMReport <id> (status phase Publishing)
 *   bundle  create OOMBundle <id> (owner: the report; from the bundle file
 *           already saved on the node)
 *   status  patch the report's status: phase Ready, bundle name
 *   event   the Warning Event on the pod (skipped when the pod is gone)
 *
 * Names are deterministic, so a step repeated after a crash or a lost
 * answer gets 409 AlreadyExists, which counts as done. Retryable failures
 * (transport, 429, 5xx, 401/403 while RBAC is fixed) back off; anything
 * else (400, 422) gives the item up into queue/failed/. The API calls come
 * through struct kube_target_api (cluster mode's are in cluster_publish.c)
 * so the steps are tested without a server. The publisher thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "publish/pubtarget.h"

enum kube_step {
	KUBE_STEP_RESOLVE,
	KUBE_STEP_REPORT,
	KUBE_STEP_BUNDLE,
	KUBE_STEP_STATUS,
	KUBE_STEP_EVENT,
	KUBE_STEP_DONE
};

/* What an item carries for Kubernetes (struct pub_item's ext). */
struct kube_item {
	char ns[64], pod[254], pod_uid[40], container[64], container_id[72];
	/* the pod's top controller (cluster_pod); "" when not known */
	char workload_kind[64], workload[254];
	/* progress */
	char report_uid[64];
	bool bundle_stored; /* false: too large, the report says so */
	bool pod_gone;
	unsigned event_count;
};
_Static_assert(sizeof(struct kube_item) <= PUB_EXT_MAX,
	       "struct kube_item fits an item's ext");

/* it's Kubernetes part. */
static inline struct kube_item *kube_item_of(struct pub_item *it)
{
	return (struct kube_item *)(void *)it->ext;
}
static inline const struct kube_item *kube_item_get(const struct pub_item *it)
{
	return (const struct kube_item *)(const void *)it->ext;
}

/* The API calls the steps make; ud is the caller's. */
struct kube_target_api {
	/* Create the report; fill ret_uid (metadata.uid). */
	int (*create_report)(void *ud, const struct pub_item *it, char *ret_uid,
			     size_t size, struct kube_error *err);
	/* The stored report's uid (after a 409). */
	int (*get_report_uid)(void *ud, const struct pub_item *it,
			      char *ret_uid, size_t size,
			      struct kube_error *err);
	/* Create the bundle from data (the file's bytes). */
	int (*create_bundle)(void *ud, const struct pub_item *it,
			     const void *data, size_t len,
			     struct kube_error *err);
	/* After a 409 on the bundle: 1 the stored one's data is data (ours,
	 * from before a crash or a lost answer), 0 it is not (another
	 * writer's, planted under the name: logged and deleted by its uid,
	 * so that the next create stores ours; or gone meanwhile), < 0 not
	 * known (retried). */
	int (*bundle_is_ours)(void *ud, const struct pub_item *it,
			      const void *data, size_t len,
			      struct kube_error *err);
	int (*patch_status)(void *ud, const struct pub_item *it,
			    struct kube_error *err);
	/* 1 the pod (by uid) is there, 0 it is gone, < 0 unknown. */
	int (*pod_alive)(void *ud, const struct pub_item *it,
			 struct kube_error *err);
	/* Create or bump the pod's Event; *ret_count the count now. */
	int (*post_event)(void *ud, const struct pub_item *it,
			  unsigned *ret_count, struct kube_error *err);
	/* Reads the bundle file (state-dir relative) into a malloc'd buffer. */
	int (*read_bundle)(void *ud, const char *file, void **ret,
			   size_t *ret_len);
	/* Names the item's ns, pod and container from its pod_uid and
	 * container_id (the pod gone: the caller's fallback names).
	 * < 0 when the pods could not be listed (retried). NULL: skipped. */
	int (*resolve)(void *ud, struct pub_item *it, struct kube_error *err);
	/* Makes the calls return -ECANCELED (the agent stopping). NULL:
	 * nothing to cancel. */
	void (*cancel)(void *ud);
};

struct agent_metrics;

struct kube_target_stats {
	uint64_t pod_gone, conflicts;
	uint64_t planted; /* bundles under our name not ours, replaced */
};

/* The target over api: its struct pub_target is kt->target. Caller-owned
 * (cluster mode's struct cluster holds it). */
struct kube_target {
	struct pub_target target;
	const struct kube_target_api *api;
	void *ud;		       /* api's */
	struct agent_metrics *metrics; /* the run's; NULL: none */
	struct kube_target_stats stats;
};

/* Sets kt up over api and ud; m (the run's metrics, NULL: none) counts
 * the failures a step goes on without. */
void kube_target_init(struct kube_target *kt, const struct kube_target_api *api,
		      void *ud, struct agent_metrics *m);
