/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's metrics (docs/metrics.md) and health: an object the run
 * makes and frees (cmd_run.c), handed to whoever updates or reads it.
 * Every function is thread safe and returns at once: the detector and
 * kube threads update, the HTTP thread renders. On a NULL object the
 * updates do nothing (a test of a module that feeds metrics need not
 * make one). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"

struct bundle;
struct agent_metrics;

/* A registry with every family, and the health flags (not live, not
 * ready). Returns 0 or -ENOMEM. */
int agent_metrics_new(struct agent_metrics **ret);
/* NULL is a no-op. No other thread may hold it any more. */
void agent_metrics_free(struct agent_metrics *m);
/* Appends the exposition text (metrics_render); -ENODEV on NULL. */
int agent_metrics_render(struct agent_metrics *m, struct strbuf *out);

/* Whom oomlens_oom_kills_total counts a kill for; NULL counts as "".
 * Cluster mode: the victim's namespace and container name, and the top of
 * its pod's owner chain (a Deployment above its ReplicaSet; "" and "" for
 * a pod without an owner). Never a pod's name: a Deployment's pods are
 * named anew at each rollout and eviction, and a family of pod names grows
 * for the agent's whole life. A kill outside a pod, and every kill in
 * standalone mode, has only its verdict. */
struct agent_kill_labels {
	const char *ns, *container, *verdict, *owner_kind, *owner;
};

/* One kill reported: oomlens_oom_kills_total; latency_s < 0 = unknown. */
void agent_metrics_kill(struct agent_metrics *m,
			const struct agent_kill_labels *l, double latency_s);
/* After a bundle is built: the kill, its latency, and the sidecar's trim
 * records in its timeline (each trim counted once across bundles). */
void agent_metrics_on_capture(struct agent_metrics *m,
			      const struct agent_kill_labels *l,
			      int64_t latency_us, const struct bundle *b);
void agent_metrics_kmsg_report(struct agent_metrics *m, bool complete);
/* n kills counted by a cgroup whose kernel report was not read:
 * oomlens_unreported_kills_total{bundled}. */
void agent_metrics_unreported_kills(struct agent_metrics *m, bool bundled,
				    uint64_t n);
void agent_metrics_publish(struct agent_metrics *m, double latency_s);
void agent_metrics_publish_failure(struct agent_metrics *m, const char *reason);
void agent_metrics_queue_depth(struct agent_metrics *m, unsigned n);
void agent_metrics_watched(struct agent_metrics *m, unsigned n);
/* seconds < 0 removes the series (no prediction now, the cgroup gone):
 * the forecast sampler keeps one only while a container's forecast
 * exists. */
void agent_metrics_time_to_oom(struct agent_metrics *m, const char *ns,
			       const char *pod, const char *container,
			       double seconds);

/* Health. The detector loop beats at least once a second (its 1 Hz
 * timeline tick); /healthz fails when the last beat is older than
 * AGENT_HEALTH_STALE_US. Readiness is set by whoever decides it (cluster
 * mode: pod watch synced and the API answered within a minute;
 * standalone: the detector runs). */
#define AGENT_HEALTH_STALE_US (10ull * 1000000)
void agent_health_beat(struct agent_metrics *m, uint64_t mono_us);
bool agent_health_live(struct agent_metrics *m, uint64_t now_mono_us,
		       uint64_t *ret_age_us);
void agent_health_set_ready(struct agent_metrics *m, bool ready,
			    const char *why);
/* why (optional) receives the reason given with the last change. */
bool agent_health_ready(struct agent_metrics *m, char *why, size_t size);
