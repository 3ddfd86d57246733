/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's metrics (docs/metrics.md) and health, process-wide. Every
 * function is thread safe and returns at once: the detector and kube
 * threads update, the HTTP thread renders. Before agent_metrics_init()
 * (or when it failed) the updates do nothing. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "base/strbuf.h"

struct bundle;

/* Registers every family. Returns 0 or -ENOMEM. */
int agent_metrics_init(void);
void agent_metrics_free(void);
/* Appends the exposition text (metrics_render). */
int agent_metrics_render(struct strbuf *out);

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
void agent_metrics_kill(const struct agent_kill_labels *l, double latency_s);
/* After a bundle is built: the kill, its latency, and the sidecar's trim
 * records in its timeline (each trim counted once across bundles). */
void agent_metrics_on_capture(const struct agent_kill_labels *l,
			      int64_t latency_us, const struct bundle *b);
void agent_metrics_kmsg_report(bool complete);
/* n kills counted by a cgroup whose kernel report was not read:
 * oomlens_unreported_kills_total{bundled}. */
void agent_metrics_unreported_kills(bool bundled, uint64_t n);
void agent_metrics_publish(double latency_s);
void agent_metrics_publish_failure(const char *reason);
void agent_metrics_queue_depth(unsigned n);
void agent_metrics_watched(unsigned n);
/* seconds < 0 removes the series (no prediction now, the cgroup gone):
 * the forecast sampler keeps one only while a container's forecast
 * exists. */
void agent_metrics_time_to_oom(const char *ns, const char *pod,
			       const char *container, double seconds);

/* Health. The detector loop beats at least once a second (its 1 Hz
 * timeline tick); /healthz fails when the last beat is older than
 * AGENT_HEALTH_STALE_US. Readiness is set by whoever decides it (cluster
 * mode: pod watch synced and the API answered within a minute;
 * standalone: the detector runs). */
#define AGENT_HEALTH_STALE_US (10ull * 1000000)
void agent_health_beat(uint64_t mono_us);
bool agent_health_live(uint64_t now_mono_us, uint64_t *ret_age_us);
void agent_health_set_ready(bool ready, const char *why);
/* why (optional) receives the reason given with the last change. */
bool agent_health_ready(char *why, size_t size);
