/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include "obs/forecast.h"

const struct forecast_params forecast_default_params = {
	.window_ms = 30000,
	.min_samples = 10,
	.min_span_ms = 10000,
	.min_growth = 256 << 10,
	.min_growth_permille = 5,
	.max_horizon_s = 86400,
	.short_window_ms = 10000,
	.short_min_samples = 8,
};

void forecast_ring_push(struct forecast_ring *r, uint64_t t_ms, uint64_t usage)
{
	unsigned last = (r->head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN;
	uint64_t prev = r->n ? r->usage[last] : 0;

	/* the lower of the last two: one high outlier resets nothing */
	if (r->n >= 2) {
		unsigned before =
			(last + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN;

		if (r->usage[before] < prev)
			prev = r->usage[before];
	}
	/* Time going back: another cgroup at this path; usage halved by more
	 * than 1 MiB: a kill or a restart. Either way the old samples say
	 * nothing about the growth from here. */
	if (r->n && (t_ms < r->t_ms[last] ||
		     (usage < prev / 2 && prev - usage > FORECAST_RESET_DROP)))
		r->n = r->head = 0;
	r->t_ms[r->head] = t_ms;
	r->usage[r->head] = usage;
	r->head = (r->head + 1) % FORECAST_RING_LEN;
	if (r->n < FORECAST_RING_LEN)
		r->n++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The window's samples, oldest first, times relative to the newest (s). */
static size_t window(const struct forecast_ring *r, uint64_t window_ms,
		     double *t, double *y)
{
	unsigned newest = (r->head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN;
	uint64_t t_new = r->t_ms[newest];
	size_t k = 0, n = 0;

	while (k < r->n) {
		unsigned i =
			(newest + FORECAST_RING_LEN - k) % FORECAST_RING_LEN;

		if (t_new - r->t_ms[i] > window_ms)
			break;
		k++;
	}
	for (size_t j = k; j-- > 0;) {
		unsigned i =
			(newest + FORECAST_RING_LEN - j) % FORECAST_RING_LEN;

		t[n] = -(double)(t_new - r->t_ms[i]) / 1000.0;
		y[n] = (double)r->usage[i];
		n++;
	}
	return n;
}

/* Median slope of all pairs, then the median intercept at t = 0 (the
 * newest sample). */
static void theil_sen(const double *t, const double *y, size_t n,
		      double *ret_slope, double *ret_at0)
{
	/* 16 KiB, zeroed for cppcheck: only growing cgroups get here */
	double s[FORECAST_RING_LEN * (FORECAST_RING_LEN - 1) / 2] = {0};
	double b[FORECAST_RING_LEN] = {0};
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (t[j] > t[i])
				s[m++] = (y[j] - y[i]) / (t[j] - t[i]);
	*ret_slope = m ? median(s, m) : 0;
	for (size_t i = 0; i < n; i++)
		b[i] = y[i] - *ret_slope * t[i];
	*ret_at0 = median(b, n);
}

/* The fit over one window: false when it holds too few samples or
 * usage does not grow by rate (bytes/s) on average. */
static bool fit(const struct forecast_ring *r, uint64_t window_ms,
		unsigned min_samples, uint64_t min_span_ms, double rate,
		double *ret_slope, double *ret_at0)
{
	double t[FORECAST_RING_LEN], y[FORECAST_RING_LEN], span;
	size_t n = window(r, window_ms, t, y);

	if (n < min_samples || n < 2)
		return false;
	span = -t[0];
	/* The cheap test first: an idle container costs no fit. */
	if (span * 1000.0 < (double)min_span_ms ||
	    y[n - 1] - y[0] < rate * span)
		return false;
	theil_sen(t, y, n, ret_slope, ret_at0);
	return *ret_slope >= rate;
}

int forecast_predict(const struct forecast_ring *r, uint64_t limit,
		     uint64_t reclaimable, const struct forecast_params *p,
		     struct forecast *ret)
{
	double slope = 0, at0 = 0, s2, a2, growth, room;
	bool any;

	if (!p)
		p = &forecast_default_params;
	if (limit == UINT64_MAX || limit == 0)
		return 0;
	growth = (double)p->min_growth;
	if ((double)limit * p->min_growth_permille / 1000.0 > growth)
		growth = (double)limit * p->min_growth_permille / 1000.0;
	growth /= (double)p->window_ms / 1000.0; /* as a rate */
	any = fit(r, p->window_ms, p->min_samples, p->min_span_ms, growth,
		  &slope, &at0);
	/* Growth that started within the long window is underestimated by
	 * it (the flat part holds half the pairs): the short window's fit
	 * wins when it is steeper, so the warning is not late. */
	if (p->short_window_ms &&
	    fit(r, p->short_window_ms, p->short_min_samples,
		p->short_window_ms * 7 / 10, growth, &s2, &a2) &&
	    (!any || s2 > slope)) {
		slope = s2;
		at0 = a2;
		any = true;
	}
	if (!any)
		return 0;
	room = (double)limit - (at0 - (double)reclaimable);
	if (room < 0)
		room = 0;
	if (room / slope > p->max_horizon_s)
		return 0;
	*ret = (struct forecast){
		.seconds = room / slope,
		.slope = slope,
		.fit_now = at0,
		.t_ms = r->t_ms[(r->head + FORECAST_RING_LEN - 1) %
				FORECAST_RING_LEN],
	};
	return 1;
}

bool forecast_should_warn(double seconds, uint64_t now_ms,
			  uint64_t *last_warn_ms)
{
	if (!(seconds < FORECAST_WARN_S))
		return false;
	if (*last_warn_ms && now_ms - *last_warn_ms < FORECAST_WARN_EVERY_MS)
		return false;
	*last_warn_ms = now_ms ? now_ms : 1;
	return true;
}
