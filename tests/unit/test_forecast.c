/* SPDX-License-Identifier: Apache-2.0 */
/* The forecast on synthetic 1 Hz timelines: steady growth gives the exact
 * time to the limit, outliers do not move it, flat/shrinking/short/unlimited
 * timelines give none; the Event decision fires below 60 s at most once per
 * 10 min per container. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "obs/forecast.h"

#define MiB (1024.0 * 1024.0)

static void fill(struct forecast_ring *r, unsigned n, double start,
		 double per_s)
{
	for (unsigned i = 0; i < n; i++)
		forecast_ring_push(r, 1000000 + i * 1000ull,
				   (uint64_t)(start + per_s * i));
}

Test(forecast, steady_growth)
{
	struct forecast_ring r = {0};
	struct forecast f;

	/* 10 MiB + 1 MiB/s for 31 s: 40 MiB now, 100 MiB limit → 60 s */
	fill(&r, 31, 10 * MiB, MiB);
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     1);
	cr_assert_float_eq(f.seconds, 60.0, 1e-6);
	cr_assert_float_eq(f.slope, MiB, 1e-3);
	cr_assert_float_eq(f.fit_now, 40 * MiB, 1);
	cr_assert_eq(f.t_ms, 1030000);
	/* reclaimable page cache leaves more room */
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB),
				      (uint64_t)(10 * MiB), NULL, &f),
		     1);
	cr_assert_float_eq(f.seconds, 70.0, 1e-6);
}

Test(forecast, window_is_the_last_30s)
{
	struct forecast_ring r = {0};
	struct forecast f;

	/* 40 s flat at 50 MiB, then 20 s of 2 MiB/s: only the recent part
	 * is fitted after the ring wrapped */
	for (unsigned i = 0; i < 100; i++)
		forecast_ring_push(&r, i * 1000ull, (uint64_t)(50 * MiB));
	for (unsigned i = 1; i <= 30; i++)
		forecast_ring_push(&r, (99 + i) * 1000ull,
				   (uint64_t)(50 * MiB + 2 * MiB * i));
	cr_assert_eq(forecast_predict(&r, (uint64_t)(200 * MiB), 0, NULL, &f),
		     1);
	cr_assert_float_eq(f.slope, 2 * MiB, 1e-3);
	cr_assert_float_eq(f.seconds, 45.0, 1e-6); /* 110 → 200 MiB */
}

Test(forecast, growth_onset_uses_the_short_window)
{
	struct forecast_ring r = {0};
	struct forecast_params p = forecast_default_params;
	struct forecast f, g;

	/* 22 s flat at 10 MiB, then 9 s of 2 MiB/s: 28 MiB now */
	for (unsigned i = 0; i < 22; i++)
		forecast_ring_push(&r, i * 1000ull, (uint64_t)(10 * MiB));
	for (unsigned i = 1; i <= 9; i++)
		forecast_ring_push(&r, (21 + i) * 1000ull,
				   (uint64_t)(10 * MiB + 2 * MiB * i));
	cr_assert_eq(forecast_predict(&r, (uint64_t)(64 * MiB), 0, NULL, &f),
		     1);
	cr_assert_float_eq(f.slope, 2 * MiB, 1e-3);
	cr_assert_float_eq(f.seconds, 18.0, 1e-6);
	/* the 30 s fit alone is late: half its pairs are flat */
	p.short_window_ms = 0;
	cr_assert_eq(forecast_predict(&r, (uint64_t)(64 * MiB), 0, &p, &g), 1);
	cr_assert_gt(g.seconds, 2 * f.seconds);
}

Test(forecast, outliers_do_not_move_it)
{
	struct forecast_ring r = {0};
	struct forecast f;

	for (unsigned i = 0; i < 31; i++) {
		double u = 10 * MiB + MiB * i;

		if (i == 5 || i == 17)
			u = 95 * MiB; /* spikes */
		if (i == 25)
			u = 20 * MiB; /* a cache drop (not to half) */
		forecast_ring_push(&r, i * 1000ull, (uint64_t)u);
	}
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     1);
	cr_assert_float_eq(f.seconds, 60.0, 1.0);
}

Test(forecast, none_when_flat_shrinking_short_or_unlimited)
{
	struct forecast_ring r = {0};
	struct forecast f = {.seconds = -1};

	fill(&r, 31, 50 * MiB, 0);
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     0);
	memset(&r, 0, sizeof(r));
	/* noise of ±4 KiB around a flat line */
	for (unsigned i = 0; i < 31; i++)
		forecast_ring_push(&r, i * 1000ull,
				   (uint64_t)(50 * MiB + (i % 2 ? 4096 : 0)));
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     0);
	memset(&r, 0, sizeof(r));
	fill(&r, 31, 90 * MiB, -MiB);
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     0);
	memset(&r, 0, sizeof(r));
	fill(&r, 7, 10 * MiB, MiB); /* 7 samples over 6 s: too few */
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     0);
	memset(&r, 0, sizeof(r));
	fill(&r, 31, 10 * MiB, MiB);
	cr_assert_eq(forecast_predict(&r, UINT64_MAX, 0, NULL, &f), 0);
	/* 0.1 % of a 1 TiB limit per window is below its 0.5 %: flat */
	cr_assert_eq(forecast_predict(&r, 1ull << 40, 0, NULL, &f), 0);
	cr_assert_eq(f.seconds, -1); /* untouched */
}

Test(forecast, horizon_and_past_the_limit)
{
	struct forecast_ring r = {0};
	struct forecast_params p = forecast_default_params;
	struct forecast f;

	fill(&r, 31, 10 * MiB, MiB);
	p.max_horizon_s = 30;
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, &p, &f), 0);
	cr_assert_eq(forecast_predict(&r, (uint64_t)(30 * MiB), 0, NULL, &f),
		     1);
	cr_assert_float_eq(f.seconds, 0.0, 1e-9);
}

Test(forecast, time_backwards_resets)
{
	struct forecast_ring r = {0};

	fill(&r, 31, 10 * MiB, MiB);
	forecast_ring_push(&r, 5, 1);
	cr_assert_eq(r.n, 1);
}

Test(forecast, a_kill_starts_over)
{
	struct forecast_ring r = {0};
	struct forecast f;

	fill(&r, 31, 10 * MiB, MiB); /* 40 MiB at t = 1030 s */
	forecast_ring_push(&r, 1031000, (uint64_t)(25 * MiB)); /* not half */
	cr_assert_eq(r.n, 32);
	forecast_ring_push(&r, 1032000, (uint64_t)(1.5 * MiB)); /* killed */
	cr_assert_eq(r.n, 1);
	cr_assert_eq(forecast_predict(&r, (uint64_t)(100 * MiB), 0, NULL, &f),
		     0);
	/* halved, but by less than 1 MiB */
	forecast_ring_push(&r, 1033000, (uint64_t)(0.6 * MiB));
	cr_assert_eq(r.n, 2);
}

Test(forecast, warn_decision)
{
	uint64_t last = 0;
	const uint64_t t0 = 5000000;

	cr_assert_not(forecast_should_warn(60.0, t0, &last));
	cr_assert_eq(last, 0);
	cr_assert(forecast_should_warn(59.5, t0, &last));
	cr_assert_eq(last, t0);
	cr_assert_not(forecast_should_warn(10, t0 + 9 * 60000, &last));
	cr_assert_not(forecast_should_warn(10, t0 + 600000 - 1, &last));
	cr_assert(forecast_should_warn(10, t0 + 600000, &last));
	cr_assert_eq(last, t0 + 600000);
}
