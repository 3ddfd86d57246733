/* SPDX-License-Identifier: Apache-2.0 */
/* The detector's 1 Hz cgroup timeline: a timerfd in the detector's epoll;
 * each tick reads usage and limit of every memory cgroup under the watched
 * subtrees (the set is refreshed every 5 s), feeds forecast.h, exports
 * oomlens_time_to_oom_seconds while a prediction exists, and hands OOMPredicted
 * warnings to a callback. The tick also beats the /healthz heartbeat.
 * Detector thread only, except where said. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "obs/forecast.h"

struct agent;
/* One per agent, owned by its run (struct agent's sampler). */
struct forecast_sampler;

/* Whom a cgroup belongs to. Standalone: namespace and pod "", container =
 * the cgroup path. */
struct forecast_target {
	char namespace[254];
	char pod[254];
	char pod_uid[64];
	char container[254];
};

/* Maps a cgroup path to its target; false: not forecast (not a container
 * cgroup, an opted-out pod). Called on the detector thread for every
 * cgroup each tick: it must not block (a cache lookup). */
typedef bool (*forecast_resolve_fn)(const char *cgroup,
				    struct forecast_target *ret, void *ud);

struct forecast_warning {
	const char *cgroup;
	const struct forecast_target *target;
	double seconds;
	double slope; /* bytes/s */
	uint64_t usage, limit;
};
/* Called on the detector thread when a warning is due (below 60 s, at most
 * once per container per 10 min): cluster mode queues an OOMPredicted
 * Event for its kube thread; it must not block. */
typedef void (*forecast_warn_fn)(const struct forecast_warning *w, void *ud);

/* Creates the sampler: the 1 Hz timerfd, the metrics registered; in
 * standalone mode marks the agent ready. Returns 0 or -errno (logged). */
int forecast_sampler_new(struct agent *a, struct forecast_sampler **ret);
/* Sets the resolver / warning sink (NULL: the standalone defaults, which
 * a new sampler has; the default sink logs). */
void forecast_sampler_set_resolver(struct forecast_sampler *s,
				   forecast_resolve_fn fn, void *ud);
void forecast_sampler_set_warn(struct forecast_sampler *s, forecast_warn_fn fn,
			       void *ud);
/* The timerfd: the caller's loop calls forecast_sampler_tick() when it is
 * readable. */
int forecast_sampler_fd(const struct forecast_sampler *s);
void forecast_sampler_tick(struct forecast_sampler *s);
/* Drops its series, closes its files; NULL is a no-op. */
void forecast_sampler_free(struct forecast_sampler *s);

/* A cgroup's timeline as the sampler keeps it: the ring (CLOCK_MONOTONIC
 * ms) and, slot by slot, the limit read with each sample. */
struct forecast_history {
	struct forecast_ring ring;
	uint64_t limit[FORECAST_RING_LEN];
};

/* Copies the timeline of cgroup (a path under the agent's memory mount,
 * the form the correlator gives a kill) into *ret: of the live ring and
 * the last one it held before it started over (a kill that emptied the
 * cgroup, read before the capture) or before the cgroup vanished, the one
 * whose newest sample at or before upto_ms (CLOCK_MONOTONIC) is latest.
 * Returns the samples at or before upto_ms it holds (> 0), or -ENOENT.
 * Detector thread only: it reads the sampler's state unlocked. */
int forecast_sampler_history(struct forecast_sampler *s, const char *cgroup,
			     uint64_t upto_ms, struct forecast_history *ret);
