/* SPDX-License-Identifier: Apache-2.0 */
/* The sampler and flusher threads, the adaptive rate and the snapshot
 * triggers. The sampler never waits on the worker: a snapshot is a
 * request queued in st->req the worker picks up (see request()). */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/memlock.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "run.h"

/* Samples used for the growth rate: about 2 s of samples, at least the
 * recorder's default window. */
static size_t predict_window(const struct run_state *st)
{
	unsigned ms =
		st->fast ? st->cfg->fast_interval_ms : st->cfg->interval_ms;
	size_t w = ms ? 2000 / ms : REC_PREDICT_WINDOW;

	if (w < REC_PREDICT_WINDOW)
		w = REC_PREDICT_WINDOW;
	return w > 30 ? 30 : w;
}

/* Queues a request for the worker. Every threshold crossing gets its own
 * snapshot (in order); a time-to-limit or predicted one only when nothing
 * else is waiting. */
static void request(struct run_state *st, const char *reason, double eta)
{
	const struct rec_slot *s = recorder_sample(&st->rec, st->rec.count - 1);
	struct run_snap_req *q;

	if (!startswith(reason, "threshold-") && st->n_req)
		return;
	/* the usage the time-to-limit re-arm counts from: any snapshot is
	 * as fresh as its own (a second one right after a threshold's
	 * would record what that one's --trim test left) */
	st->ttl_usage = s ? s->usage : 0;
	if (st->n_req == ARRAY_SIZE(st->req))
		st->n_req--; /* full: the newest replaces the last */
	q = &st->req[st->n_req++];
	q->pending = true;
	strlcpy_safe(q->reason, reason, sizeof(q->reason));
	q->eta_s = eta;
	q->mono_us = now_monotonic_us();
	q->oom_kills = st->oom_kills;
	pthread_cond_signal(&st->wake);
}

/* Fast when above the first threshold or the growth predicts the limit
 * within predict_s; back to the normal rate below the first threshold
 * minus the re-arm margin with no prediction (hysteresis). */
static void adapt(struct run_state *st, double pct, double eta)
{
	const struct run_cfg *c = st->cfg;
	double first = c->th.n ? c->th.pct[0] : 80.0;
	bool near = eta >= 0 && c->predict_s > 0 && eta < c->predict_s;
	bool fast = st->fast;

	if (!c->fast_interval_ms || c->fast_interval_ms >= c->interval_ms)
		return;
	/* Fast for at least 2 s after the last reason for it: a growth in
	 * steps must not flip the rate at every step. */
	if (pct >= first || near) {
		fast = true;
		st->fast_until_mono_us = now_monotonic_us() + 2000000;
	} else if (pct < first - REC_REARM_POINTS &&
		   now_monotonic_us() >= st->fast_until_mono_us) {
		fast = false;
	}
	if (fast != st->fast)
		log_info("sampling every %u ms (usage %.0f%% of the limit%s)",
			 fast ? c->fast_interval_ms : c->interval_ms, pct,
			 near ? ", limit predicted" : "");
	st->fast = fast;
	st->flush_now = fast;
}

void run_after_sample(struct run_state *st)
{
	const struct rec_slot *s = recorder_sample(&st->rec, st->rec.count - 1);
	const struct run_cfg *c = st->cfg;
	uint64_t now = now_monotonic_us();
	unsigned crossed;
	double pct, eta;
	char reason[32];

	if (!s || !s->limit)
		return;
	pct = 100.0 * (double)s->usage / (double)s->limit;
	eta = recorder_predict_s(&st->rec, predict_window(st));
	adapt(st, pct, eta);
	/* Nothing to snapshot (the victim is gone, memory not yet freed). */
	if (st->n_alive == 0)
		return;
	crossed = rec_thresholds_update(&st->cfg->th, pct);
	if (crossed) {
		snprintf(reason, sizeof(reason), "threshold-%u", crossed);
		request(st, reason, eta);
		return;
	}
	/* Time to limit: once per approach, re-armed when the limit is
	 * twice as far again. Beats the percentages on fast growth. */
	if (c->ttl_s > 0 && eta >= 0 && eta <= c->ttl_s && st->ttl_armed) {
		st->ttl_armed = false;
		request(st, "time-to-limit", eta);
		return;
	}
	/* ... and when usage grew by a quarter of the limit since the last
	 * snapshot asked for:
	 * a start-up burst fires it early, and a final jump (a JVM's young
	 * collection copying eden, 70 % to the kill in one 100 ms sample)
	 * skips every threshold, leaving only that early snapshot. */
	if (eta < 0 || eta > 2 * c->ttl_s ||
	    s->usage >= st->ttl_usage + s->limit / 4)
		st->ttl_armed = true;
	if (c->predict_s <= 0 || eta < 0 || eta >= c->predict_s)
		return;
	if (st->rec.any_snapshot &&
	    now - st->rec.last_snapshot_mono_us < RUN_PREDICT_GAP_US)
		return;
	if (st->snapping || st->n_req)
		return;
	request(st, "predicted", eta);
}

void run_sleep_until(struct run_state *st, uint64_t mono_us)
{
	struct timespec ts = {.tv_sec = (time_t)(mono_us / 1000000),
			      .tv_nsec = (long)(mono_us % 1000000) * 1000};

	(void)st;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static bool finished_locked(const struct run_state *st)
{
	if (st->stop)
		return true;
	if (st->cfg->cgroup)
		return st->cgroup_gone;
	return st->n_alive == 0 && st->rec.count > 0;
}

static void *sampler_main(void *arg)
{
	struct run_state *st = arg;
	uint64_t next = now_monotonic_us();
	bool done = false;

	/* a real-time priority only makes its wake-up punctual under a
	 * CPU hog: it sleeps nearly all the time */
	(void)memlock_raise_priority("sampler thread");
	while (!done) {
		unsigned ms;
		int r;

		pthread_mutex_lock(&st->mu);
		r = run_sample(st);
		if (r < 0)
			log_warn("sampling failed: %s, ignoring", strerror(-r));
		else
			run_after_sample(st);
		ms = st->fast ? st->cfg->fast_interval_ms
			      : st->cfg->interval_ms;
		done = finished_locked(st);
		if (done)
			st->stop = true;
		pthread_cond_signal(&st->flush);
		if (done)
			pthread_cond_broadcast(&st->wake);
		pthread_mutex_unlock(&st->mu);
		next += (uint64_t)ms * 1000;
		if (next < now_monotonic_us())
			next = now_monotonic_us();
		if (!done)
			run_sleep_until(st, next);
	}
	return NULL;
}

static void *flusher_main(void *arg)
{
	struct run_state *st = arg;
	bool stop = false;

	while (!stop) {
		struct timespec ts;

		pthread_mutex_lock(&st->mu);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		if (!st->stop && !(st->flush_now && st->timeline_dirty))
			pthread_cond_timedwait(&st->flush, &st->mu, &ts);
		stop = st->stop;
		pthread_mutex_unlock(&st->mu);
		(void)run_flush(st);
	}
	return NULL;
}

int run_threads_start(struct run_state *st, pthread_t *sampler,
		      pthread_t *flusher)
{
	pthread_attr_t a;
	int r;

	/* Small stacks: with mlockall every touched page stays resident. */
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256u << 10);
	r = pthread_create(sampler, &a, sampler_main, st);
	if (r == 0) {
		r = pthread_create(flusher, &a, flusher_main, st);
		if (r != 0) {
			pthread_mutex_lock(&st->mu);
			st->stop = true;
			pthread_mutex_unlock(&st->mu);
			pthread_join(*sampler, NULL);
		}
	}
	pthread_attr_destroy(&a);
	return -r;
}
