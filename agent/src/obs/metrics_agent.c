/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's metric families on one registry, and its health flags. */
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/spool.h"
#include "obs/metrics.h"
#include "obs/metrics_agent.h"

#ifndef OOMLENS_VERSION
#define OOMLENS_VERSION "0.1.0"
#endif

/* Trims already counted, by (pid, t_ms): the sidecar's timeline holds its
 * whole history, and each later bundle of the same pod carries it again. */
#define TRIMS_SEEN 256

struct agent_metrics {
	struct metrics *reg;
	struct metric *m_dropped, *m_kills, *m_detect, *m_publish, *m_pubfail,
		*m_depth, *m_watched, *m_kmsg, *m_trims, *m_trim_bytes,
		*m_build, *m_tto, *m_unreported;
	pthread_mutex_t trims_lock;
	struct {
		int64_t pid, t_ms;
	} trims_seen[TRIMS_SEEN];
	size_t n_trims_seen, trims_next;
	/* health */
	_Atomic uint64_t last_beat_us;
	atomic_bool ready;
	pthread_mutex_t why_lock;
	char ready_why[128];
};

/* Detection is sub-second when things go well; publishing includes API
 * round trips and retries. */
static const double detect_buckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
					0.25,  0.5,   1,    2.5,   5,	 10};
static const double publish_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
					 2.5,  5,    10,  30,	60,  300};

static struct metric *add(struct agent_metrics *m, const char *name,
			  const char *help, enum metric_type t,
			  const char *const *labels)
{
	return metrics_add(m->reg, name, help, t, labels, NULL, 0);
}

#define SERIES_CAP STR_OF(METRICS_MAX_SERIES)
static const char dropped_help[] =
	"Series a metric family could not create (its cap of " SERIES_CAP
	" label sets reached, or no memory): updates not counted.";

static int add_all(struct agent_metrics *m)
{
	static const char *const kill_l[] = {"namespace", "container",
					     "verdict",	  "owner_kind",
					     "owner",	  NULL};
	static const char *const pod_l[] = {"namespace", "pod", "container",
					    NULL};
	static const char *const reason_l[] = {"reason", NULL};
	static const char *const complete_l[] = {"complete", NULL};
	static const char *const bundled_l[] = {"bundled", NULL};
	static const char *const version_l[] = {"version", NULL};
	static const char *const version_v[] = {OOMLENS_VERSION, NULL};
	struct metrics *reg = m->reg;

	/* first: every family after it has its count there from the start */
	m->m_dropped = metrics_add_dropped(
		reg, "oomlens_metrics_series_dropped_total", dropped_help);
	m->m_kills = add(m, "oomlens_oom_kills_total",
			 "OOM kills reported, by the victim's namespace, "
			 "container, verdict and the top of its pod's owners.",
			 METRIC_COUNTER, kill_l);
	m->m_detect =
		metrics_add(reg, "oomlens_detect_latency_seconds",
			    "From the kernel's kill to the bundle written.",
			    METRIC_HISTOGRAM, NULL, detect_buckets,
			    ARRAY_SIZE(detect_buckets));
	m->m_publish = metrics_add(
		reg, "oomlens_publish_latency_seconds",
		"From the kill to its report and bundle stored in the API.",
		METRIC_HISTOGRAM, NULL, publish_buckets,
		ARRAY_SIZE(publish_buckets));
	m->m_pubfail = add(m, "oomlens_publish_failures_total",
			   "Failed API calls of the publish queue, by reason.",
			   METRIC_COUNTER, reason_l);
	m->m_depth = add(m, "oomlens_publish_queue_depth",
			 "Kills saved on the node and not yet published.",
			 METRIC_GAUGE, NULL);
	m->m_watched = add(m, "oomlens_watched_cgroups",
			   "Memory cgroups watched for OOM kills.",
			   METRIC_GAUGE, NULL);
	m->m_kmsg =
		add(m, "oomlens_kmsg_reports_total",
		    "Kernel OOM reports read from /dev/kmsg, by whether every "
		    "line of them was read.",
		    METRIC_COUNTER, complete_l);
	m->m_unreported =
		add(m, "oomlens_unreported_kills_total",
		    "OOM kills a cgroup counted whose kernel report was "
		    "not read, by whether a bundle was written for "
		    "them.",
		    METRIC_COUNTER, bundled_l);
	m->m_trims = add(m, "oomlens_trims_total",
			 "Heap trims the sidecars recorded (oomlens.io/trim).",
			 METRIC_COUNTER, NULL);
	m->m_trim_bytes =
		add(m, "oomlens_trim_reclaimed_bytes_total",
		    "RSS the sidecars' trims gave back.", METRIC_COUNTER, NULL);
	m->m_build = add(m, "oomlens_build_info", "The agent's version.",
			 METRIC_GAUGE, version_l);
	m->m_tto = add(m, "oomlens_time_to_oom_seconds",
		       "Predicted seconds until the container's memory usage "
		       "reaches its limit at the current growth; only while it "
		       "grows.",
		       METRIC_GAUGE, pod_l);
	if (!m->m_dropped || !m->m_kills || !m->m_detect || !m->m_publish ||
	    !m->m_pubfail || !m->m_depth || !m->m_watched || !m->m_kmsg ||
	    !m->m_trims || !m->m_trim_bytes || !m->m_build || !m->m_tto ||
	    !m->m_unreported)
		return -ENOMEM;
	return metric_set(m->m_build, version_v, 1);
}

int agent_metrics_new(struct agent_metrics **ret)
{
	struct agent_metrics *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->trims_lock, NULL);
	pthread_mutex_init(&m->why_lock, NULL);
	r = metrics_new(&m->reg);
	if (r == 0)
		r = add_all(m);
	if (r < 0) {
		agent_metrics_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

void agent_metrics_free(struct agent_metrics *m)
{
	if (!m)
		return;
	metrics_free(m->reg);
	pthread_mutex_destroy(&m->trims_lock);
	pthread_mutex_destroy(&m->why_lock);
	free(m);
}

int agent_metrics_render(struct agent_metrics *m, struct strbuf *out)
{
	return m ? metrics_render(m->reg, out) : -ENODEV;
}

void agent_metrics_kill(struct agent_metrics *m,
			const struct agent_kill_labels *l, double latency_s)
{
	const char *const v[] = {l->ns,		l->container, l->verdict,
				 l->owner_kind, l->owner,     NULL};

	if (!m)
		return;
	(void)metric_inc(m->m_kills, v, 1);
	if (latency_s >= 0)
		(void)metric_observe(m->m_detect, NULL, latency_s);
}

void agent_metrics_kmsg_report(struct agent_metrics *m, bool complete)
{
	const char *const v[] = {complete ? "true" : "false", NULL};

	if (m)
		(void)metric_inc(m->m_kmsg, v, 1);
}

void agent_metrics_unreported_kills(struct agent_metrics *m, bool bundled,
				    uint64_t n)
{
	const char *const v[] = {bundled ? "true" : "false", NULL};

	if (m)
		(void)metric_inc(m->m_unreported, v, (double)n);
}

void agent_metrics_publish(struct agent_metrics *m, double latency_s)
{
	if (m)
		(void)metric_observe(m->m_publish, NULL, latency_s);
}

void agent_metrics_publish_failure(struct agent_metrics *m, const char *reason)
{
	const char *const v[] = {reason, NULL};

	if (m)
		(void)metric_inc(m->m_pubfail, v, 1);
}

void agent_metrics_queue_depth(struct agent_metrics *m, unsigned n)
{
	if (m)
		(void)metric_set(m->m_depth, NULL, n);
}

void agent_metrics_watched(struct agent_metrics *m, unsigned n)
{
	if (m)
		(void)metric_set(m->m_watched, NULL, n);
}

void agent_metrics_time_to_oom(struct agent_metrics *m, const char *ns,
			       const char *pod, const char *container,
			       double seconds)
{
	const char *const v[] = {ns, pod, container, NULL};

	if (!m)
		return;
	if (seconds < 0)
		(void)metric_remove(m->m_tto, v);
	else
		(void)metric_set(m->m_tto, v, seconds);
}

static bool trim_is_new(struct agent_metrics *m, int64_t pid, int64_t t_ms)
{
	bool fresh = true;

	pthread_mutex_lock(&m->trims_lock);
	for (size_t i = 0; i < m->n_trims_seen && fresh; i++)
		fresh = !(m->trims_seen[i].pid == pid &&
			  m->trims_seen[i].t_ms == t_ms);
	if (fresh) {
		m->trims_seen[m->trims_next].pid = pid;
		m->trims_seen[m->trims_next].t_ms = t_ms;
		m->trims_next = (m->trims_next + 1) % TRIMS_SEEN;
		if (m->n_trims_seen < TRIMS_SEEN)
			m->n_trims_seen++;
	}
	pthread_mutex_unlock(&m->trims_lock);
	return fresh;
}

static int64_t get_i64(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v)
						     : 0;
}

static void count_trims(struct agent_metrics *m, const struct bundle *b)
{
	struct json_object *tl = bundle_get_json(b, SPOOL_TIMELINE), *trims;
	size_t n;

	if (!tl || !json_object_object_get_ex(tl, "trims", &trims) ||
	    !json_object_is_type(trims, json_type_array)) {
		json_object_put(tl);
		return;
	}
	n = json_object_array_length(trims);
	for (size_t i = 0; i < n; i++) {
		struct json_object *t = json_object_array_get_idx(trims, i);
		int64_t before = get_i64(t, "rss_before"),
			after = get_i64(t, "rss_after");

		if (!trim_is_new(m, get_i64(t, "pid"), get_i64(t, "t_ms")))
			continue;
		(void)metric_inc(m->m_trims, NULL, 1);
		if (before > after)
			(void)metric_inc(m->m_trim_bytes, NULL,
					 (double)(before - after));
	}
	json_object_put(tl);
}

void agent_metrics_on_capture(struct agent_metrics *m,
			      const struct agent_kill_labels *l,
			      int64_t latency_us, const struct bundle *b)
{
	if (!m)
		return;
	agent_metrics_kill(m, l,
			   latency_us >= 0 ? (double)latency_us / 1e6 : -1);
	if (b)
		count_trims(m, b);
}

/* ---- health ---- */

void agent_health_beat(struct agent_metrics *m, uint64_t mono_us)
{
	if (m)
		atomic_store(&m->last_beat_us, mono_us);
}

bool agent_health_live(struct agent_metrics *m, uint64_t now_mono_us,
		       uint64_t *ret_age_us)
{
	uint64_t beat = m ? atomic_load(&m->last_beat_us) : 0;
	uint64_t age = beat && now_mono_us > beat ? now_mono_us - beat : 0;

	if (ret_age_us)
		*ret_age_us = age;
	return beat && age <= AGENT_HEALTH_STALE_US;
}

void agent_health_set_ready(struct agent_metrics *m, bool r, const char *why)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->why_lock);
	strlcpy_safe(m->ready_why, why ? why : "", sizeof(m->ready_why));
	atomic_store(&m->ready, r);
	pthread_mutex_unlock(&m->why_lock);
}

bool agent_health_ready(struct agent_metrics *m, char *why, size_t size)
{
	bool r;

	if (!m) {
		if (why && size)
			why[0] = '\0';
		return false;
	}
	pthread_mutex_lock(&m->why_lock);
	r = atomic_load(&m->ready);
	if (why && size)
		strlcpy_safe(why, m->ready_why, size);
	pthread_mutex_unlock(&m->why_lock);
	return r;
}
