/* SPDX-License-Identifier: Apache-2.0 */
/* forecast: seconds until a cgroup's memory usage reaches its limit at the
 * current growth, from a 1 Hz usage timeline. Pure: no I/O, no clock, no
 * globals; the agent's sampler (forecast_sampler.c) feeds it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The timeline kept per cgroup: 64 samples, more than the fit window. */
#define FORECAST_RING_LEN 64

struct forecast_ring {
	uint64_t t_ms[FORECAST_RING_LEN];  /* CLOCK_MONOTONIC ms */
	uint64_t usage[FORECAST_RING_LEN]; /* bytes */
	unsigned head;			   /* next slot written */
	unsigned n;			   /* samples held */
};

struct forecast_params {
	uint64_t window_ms;	      /* fit over the samples this recent */
	unsigned min_samples;	      /* fewer: no prediction */
	uint64_t min_span_ms;	      /* the samples must span this much */
	uint64_t min_growth;	      /* bytes over the window: less is flat */
	unsigned min_growth_permille; /* ... or this share of the limit */
	double max_horizon_s;	      /* further than this: no prediction */
	uint64_t short_window_ms;     /* 0: none; else also fit this window */
	unsigned short_min_samples;
};

/* 30 s window, ≥ 10 samples over ≥ 10 s, growth ≥ max(256 KiB, 0.5 % of
 * the limit) per 30 s, horizon 24 h; a 10 s window (≥ 8 samples over ≥
 * 7 s) too, whose fit is taken when it is steeper. */
extern const struct forecast_params forecast_default_params;

struct forecast {
	double seconds; /* until usage reaches the limit, ≥ 0 */
	double slope;	/* bytes per second, > 0 */
	double fit_now; /* fitted usage at the newest sample, bytes */
	uint64_t t_ms;	/* the newest sample's time */
};

#define FORECAST_RESET_DROP (1u << 20)

/* Appends a sample; the oldest one goes when the ring is full. A time
 * that goes backwards (a new cgroup at the same path) or usage falling
 * below half of the lower of the last two samples, by more than
 * FORECAST_RESET_DROP (a kill, a restart) starts
 * the timeline over with this sample. */
void forecast_ring_push(struct forecast_ring *r, uint64_t t_ms, uint64_t usage);

/* Theil–Sen fit (median of the pairwise slopes, median intercept) over the
 * samples of the last window (and of the short one, when steeper: growth
 * that just began): robust to a few outliers (a page-cache
 * drop, one late read). base is subtracted from the fitted usage before
 * the distance to limit is taken (0, or what the kernel can reclaim, e.g.
 * inactive_file). Returns 1 and *ret while usage grows towards a finite
 * limit; 0 while flat, shrinking, too few samples, beyond the horizon or
 * limit is UINT64_MAX. p NULL: the defaults. */
int forecast_predict(const struct forecast_ring *r, uint64_t limit,
		     uint64_t reclaimable, const struct forecast_params *p,
		     struct forecast *ret);

/* Below this many seconds a prediction is worth a Warning Event. */
#define FORECAST_WARN_S 60.0
/* At most one Event per container per this long. */
#define FORECAST_WARN_EVERY_MS (10ull * 60 * 1000)

/* Whether a prediction of seconds at now_ms warrants an OOMPredicted
 * Event, given when the last one for this container was sent
 * (*last_warn_ms, 0 = never). On true, *last_warn_ms becomes now_ms. */
bool forecast_should_warn(double seconds, uint64_t now_ms,
			  uint64_t *last_warn_ms);
