/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode's kube side, shared by cluster_kube.c, cluster_watch.c and
 * cluster_publish.c. */
#pragma once

#include <pthread.h>

#include "publish/cluster.h"
#include "publish/publisher.h"
#include "publish/target_kube.h"

#define OWNER_CACHE 256

/* The Events' source.component, reportingComponent and the kill's
 * reason (docs/cluster-mode.md, Events). */
#define CLUSTER_COMPONENT "oomlens-agent"
#define CLUSTER_REPORTING_COMPONENT "oomlens.io/agent"
#define CLUSTER_KILL_REASON "OOMKilled"

struct cluster {
	struct cluster_opts o;
	/* reportingInstance: oomlens-agent-<node> */
	char reporting_instance[128];
	struct agent_counters *counters;
	struct agent_metrics *metrics; /* the run's */
	int state_fd;
	struct kube_client *client;
	struct kube_cancel *cancel;
	struct evqueue *pods;		   /* kube -> detector */
	struct evqueue *events;		   /* detector, watch -> publisher */
	struct evqueue *snapreq, *snapans; /* detector <-> publisher */
	/* the publish target (its API calls: cluster_publish.c) and the
	 * publisher thread that runs its queue */
	struct kube_target kt;
	struct publisher *pub;
	/* the publisher thread's own turns (cluster_pub_after) */
	uint64_t last_probe_ms, next_retention_us;
	pthread_t watch_th;
	bool watch_started;
	/* watch thread only: pods seen (annotation warnings once), owners */
	struct {
		char uid[KUBE_UID_MAX];
		char *owners;		/* JSON array text */
		uint64_t warned_hash;	/* OOMLensConfig sent for this text */
		bool told_not_injected; /* its OOMLensConfig, once a pod */
	} seen[OWNER_CACHE];
	size_t n_seen;
};

/* The Kubernetes target's API calls (ud: the struct cluster). */
extern const struct kube_target_api cluster_kube_api;
void *cluster_watch_main(void *ud);
/* Cluster mode's turns on the publisher thread (struct publisher_hooks,
 * ud the struct cluster): before the queue runs, the snapshots a kill
 * waits on; after it, the API probe, the counters /readyz and /metrics
 * read, the queued Events and retention when due. Block on the API. */
void cluster_pub_before(void *ud);
void cluster_pub_after(void *ud);
void cluster_owners_clear(struct cluster *c);
/* Answers the detector's snapshot requests (publisher thread; blocks on
 * the API). */
void cluster_snap_serve(struct cluster *c);
/* Posts the queued Events (publisher thread; blocks on the API). */
void cluster_events_post(struct cluster *c);
/* Deletes this node's reports beyond the limits (blocks). */
void cluster_retention(struct cluster *c);
