/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode's kube side, shared by cluster_kube.c, cluster_watch.c and
 * cluster_publish.c. */
#pragma once

#include <pthread.h>

#include "publish/cluster.h"

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
	struct evqueue *kills;		   /* detector -> kube */
	struct evqueue *events;		   /* detector, watch -> publisher */
	struct evqueue *snapreq, *snapans; /* detector <-> publisher */
	struct pubqueue *queue;
	pthread_t watch_th, pub_th;
	bool watch_started, pub_started;
	/* watch thread only: pods seen (annotation warnings once), owners */
	struct {
		char uid[KUBE_UID_MAX];
		char *owners;		/* JSON array text */
		uint64_t warned_hash;	/* OOMLensConfig sent for this text */
		bool told_not_injected; /* its OOMLensConfig, once a pod */
	} seen[OWNER_CACHE];
	size_t n_seen;
};

extern const struct pub_ops cluster_pub_ops;
void *cluster_watch_main(void *ud);
void *cluster_pub_main(void *ud);
/* Moves the kills handed over by the detector into the durable queue (a
 * file each in the state dir; no network). The publisher does it each
 * turn; cluster_free() once more after the threads stopped, so a kill
 * handed over at shutdown is published by the next start. */
void cluster_take_kills(struct cluster *c);
void cluster_owners_clear(struct cluster *c);
/* Answers the detector's snapshot requests (publisher thread; blocks on
 * the API). */
void cluster_snap_serve(struct cluster *c);
/* Posts the queued Events (publisher thread; blocks on the API). */
void cluster_events_post(struct cluster *c);
/* Deletes this node's reports beyond the limits (blocks). */
void cluster_retention(struct cluster *c);
