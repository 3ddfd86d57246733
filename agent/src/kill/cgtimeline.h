/* SPDX-License-Identifier: Apache-2.0 */
/* agent/timeline.json: the agent's own 1 Hz cgroup timeline of a killed
 * container (forecast_sampler.c keeps it for every cgroup), written into
 * the bundle so that a kill without a sidecar still has the seconds
 * before it. Pure: no I/O, no clock; the schema is in docs/timeline.md. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obs/forecast_sampler.h"

struct json_object;

#define CGTIMELINE_SCHEMA "oomlens.io/agent-timeline/v1"
#define CGTIMELINE_SOURCE "agent 1 Hz cgroup sampler"

/* One cgroup's timeline: the victim's (task_memcg), the one whose limit
 * was hit (oom_memcg), or both. */
struct cgtimeline_series {
	const char *cgroup; /* as mounted, the manifest's form */
	bool task_memcg, oom_memcg;
	const struct forecast_history *h;
};

/* The JSON of n series (new reference; NULL on allocation failure).
 * Each series' samples oldest first, as {t_ms, usage, limit}; t_ms is
 * the ring's CLOCK_MONOTONIC ms plus wall_minus_mono_ms (wall clock, the
 * bundle's other times). At most FORECAST_RING_LEN samples per series. */
struct json_object *cgtimeline_to_json(const struct cgtimeline_series *s,
				       size_t n, int64_t wall_minus_mono_ms,
				       uint64_t killed_at_ms);
