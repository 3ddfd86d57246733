/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode plugged into `run` (run_cluster.c): the publish room's
 * state (publish/cluster.h, struct cluster_mode) and the kills waiting
 * for their pod's snapshot (run_late_snap.h), made, registered as the
 * kill pipeline's hooks and the loop's sources, and freed by the run
 * (cmd_run.c). The detector and the pipeline reach cluster mode only
 * through what this file registers. */
#pragma once

#include <stddef.h>

#include "agent.h"

struct cluster_opts;
struct forecast_sampler;
struct kube_client;
struct run_cluster;

/* Cluster mode for a's run: credentials, the API client and the publish
 * queue (cluster_new(), its metrics a->metrics), the pod map and the
 * late snapshots' list; a->hooks set to cluster mode's. No thread yet.
 * Returns 0 or -errno (logged). a and o must outlive it. */
int run_cluster_new(struct agent *a, const struct cluster_opts *o,
		    struct run_cluster **ret);
/* Each call but run_cluster_new() takes rc NULL (standalone) as "no
 * cluster mode": nothing to add, nothing to do. */

/* The loop's sources cluster mode adds (pods from the watch, snapshots
 * from the publisher) into ret (at most max); their number. */
size_t run_cluster_sources(struct run_cluster *rc, struct agent_source *ret,
			   size_t max);
/* The forecast by pod, with OOMPredicted as Events. */
void run_cluster_forecast(struct run_cluster *rc, struct forecast_sampler *s);
/* The API client (/metrics' token reviews); NULL without. */
struct kube_client *run_cluster_client(struct run_cluster *rc);
/* Judges /readyz (once a second, on the sampler's tick). */
void run_cluster_tick(struct run_cluster *rc);
/* Starts the watch and publisher threads; 0 or -errno. */
int run_cluster_start(struct run_cluster *rc);
/* Publishes whatever still waits for a snapshot, stops the threads and
 * frees; a->hooks is NULL again. NULL is a no-op. */
void run_cluster_free(struct run_cluster *rc);
