/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's metric families on one registry, and its health flags. */
#include <json-c/json.h>
#include <pthread.h>
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

static struct metrics *reg;
static struct metric *m_dropped, *m_kills, *m_detect, *m_publish, *m_pubfail,
	*m_depth, *m_watched, *m_kmsg, *m_trims, *m_trim_bytes, *m_build,
	*m_tto, *m_unreported;

/* Detection is sub-second when things go well; publishing includes API
 * round trips and retries. */
static const double detect_buckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
					0.25,  0.5,   1,    2.5,   5,	 10};
static const double publish_buckets[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
					 2.5,  5,    10,  30,	60,  300};

static struct metric *add(const char *name, const char *help,
			  enum metric_type t, const char *const *labels)
{
	return metrics_add(reg, name, help, t, labels, NULL, 0);
}

#define SERIES_CAP STR_OF(METRICS_MAX_SERIES)
static const char dropped_help[] =
	"Series a metric family could not create (its cap of " SERIES_CAP
	" label sets reached, or no memory): updates not counted.";

static int add_all(void)
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

	/* first: every family after it has its count there from the start */
	m_dropped = metrics_add_dropped(
		reg, "oomlens_metrics_series_dropped_total", dropped_help);
	m_kills = add("oomlens_oom_kills_total",
		      "OOM kills reported, by the victim's namespace, "
		      "container, verdict and the top of its pod's owners.",
		      METRIC_COUNTER, kill_l);
	m_detect = metrics_add(reg, "oomlens_detect_latency_seconds",
			       "From the kernel's kill to the bundle written.",
			       METRIC_HISTOGRAM, NULL, detect_buckets,
			       ARRAY_SIZE(detect_buckets));
	m_publish = metrics_add(
		reg, "oomlens_publish_latency_seconds",
		"From the kill to its report and bundle stored in the API.",
		METRIC_HISTOGRAM, NULL, publish_buckets,
		ARRAY_SIZE(publish_buckets));
	m_pubfail = add("oomlens_publish_failures_total",
			"Failed API calls of the publish queue, by reason.",
			METRIC_COUNTER, reason_l);
	m_depth = add("oomlens_publish_queue_depth",
		      "Kills saved on the node and not yet published.",
		      METRIC_GAUGE, NULL);
	m_watched = add("oomlens_watched_cgroups",
			"Memory cgroups watched for OOM kills.", METRIC_GAUGE,
			NULL);
	m_kmsg = add("oomlens_kmsg_reports_total",
		     "Kernel OOM reports read from /dev/kmsg, by whether every "
		     "line of them was read.",
		     METRIC_COUNTER, complete_l);
	m_unreported = add("oomlens_unreported_kills_total",
			   "OOM kills a cgroup counted whose kernel report was "
			   "not read, by whether a bundle was written for "
			   "them.",
			   METRIC_COUNTER, bundled_l);
	m_trims = add("oomlens_trims_total",
		      "Heap trims the sidecars recorded (oomlens.io/trim).",
		      METRIC_COUNTER, NULL);
	m_trim_bytes =
		add("oomlens_trim_reclaimed_bytes_total",
		    "RSS the sidecars' trims gave back.", METRIC_COUNTER, NULL);
	m_build = add("oomlens_build_info", "The agent's version.",
		      METRIC_GAUGE, version_l);
	m_tto = add("oomlens_time_to_oom_seconds",
		    "Predicted seconds until the container's memory usage "
		    "reaches its limit at the current growth; only while it "
		    "grows.",
		    METRIC_GAUGE, pod_l);
	if (!m_dropped || !m_kills || !m_detect || !m_publish || !m_pubfail ||
	    !m_depth || !m_watched || !m_kmsg || !m_trims || !m_trim_bytes ||
	    !m_build || !m_tto || !m_unreported)
		return -ENOMEM;
	return metric_set(m_build, version_v, 1);
}

int agent_metrics_init(void)
{
	int r;

	if (reg)
		return 0;
	r = metrics_new(&reg);
	if (r < 0)
		return r;
	r = add_all();
	if (r < 0)
		agent_metrics_free();
	return r;
}

void agent_metrics_free(void)
{
	metrics_free(reg);
	reg = NULL;
	m_dropped = m_kills = m_detect = m_publish = m_pubfail = m_depth =
		m_watched = m_kmsg = m_trims = m_trim_bytes = m_build = m_tto =
			m_unreported = NULL;
}

int agent_metrics_render(struct strbuf *out)
{
	return reg ? metrics_render(reg, out) : -ENODEV;
}

void agent_metrics_kill(const struct agent_kill_labels *l, double latency_s)
{
	const char *const v[] = {l->ns,		l->container, l->verdict,
				 l->owner_kind, l->owner,     NULL};

	if (!reg)
		return;
	(void)metric_inc(m_kills, v, 1);
	if (latency_s >= 0)
		(void)metric_observe(m_detect, NULL, latency_s);
}

void agent_metrics_kmsg_report(bool complete)
{
	const char *const v[] = {complete ? "true" : "false", NULL};

	if (reg)
		(void)metric_inc(m_kmsg, v, 1);
}

void agent_metrics_unreported_kills(bool bundled, uint64_t n)
{
	const char *const v[] = {bundled ? "true" : "false", NULL};

	if (reg)
		(void)metric_inc(m_unreported, v, (double)n);
}

void agent_metrics_publish(double latency_s)
{
	if (reg)
		(void)metric_observe(m_publish, NULL, latency_s);
}

void agent_metrics_publish_failure(const char *reason)
{
	const char *const v[] = {reason, NULL};

	if (reg)
		(void)metric_inc(m_pubfail, v, 1);
}

void agent_metrics_queue_depth(unsigned n)
{
	if (reg)
		(void)metric_set(m_depth, NULL, n);
}

void agent_metrics_watched(unsigned n)
{
	if (reg)
		(void)metric_set(m_watched, NULL, n);
}

void agent_metrics_time_to_oom(const char *ns, const char *pod,
			       const char *container, double seconds)
{
	const char *const v[] = {ns, pod, container, NULL};

	if (!reg)
		return;
	if (seconds < 0)
		(void)metric_remove(m_tto, v);
	else
		(void)metric_set(m_tto, v, seconds);
}

/* Trims already counted, by (pid, t_ms): the sidecar's timeline holds its
 * whole history, and each later bundle of the same pod carries it again. */
#define TRIMS_SEEN 256
static struct {
	int64_t pid, t_ms;
} trims_seen[TRIMS_SEEN];
static size_t n_trims_seen, trims_next;
static pthread_mutex_t trims_lock = PTHREAD_MUTEX_INITIALIZER;

static bool trim_is_new(int64_t pid, int64_t t_ms)
{
	bool fresh = true;

	pthread_mutex_lock(&trims_lock);
	for (size_t i = 0; i < n_trims_seen && fresh; i++)
		fresh = !(trims_seen[i].pid == pid &&
			  trims_seen[i].t_ms == t_ms);
	if (fresh) {
		trims_seen[trims_next].pid = pid;
		trims_seen[trims_next].t_ms = t_ms;
		trims_next = (trims_next + 1) % TRIMS_SEEN;
		if (n_trims_seen < TRIMS_SEEN)
			n_trims_seen++;
	}
	pthread_mutex_unlock(&trims_lock);
	return fresh;
}

static int64_t get_i64(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v)
						     : 0;
}

static void count_trims(const struct bundle *b)
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

		if (!trim_is_new(get_i64(t, "pid"), get_i64(t, "t_ms")))
			continue;
		(void)metric_inc(m_trims, NULL, 1);
		if (before > after)
			(void)metric_inc(m_trim_bytes, NULL,
					 (double)(before - after));
	}
	json_object_put(tl);
}

void agent_metrics_on_capture(const struct agent_kill_labels *l,
			      int64_t latency_us, const struct bundle *b)
{
	if (!reg)
		return;
	agent_metrics_kill(l, latency_us >= 0 ? (double)latency_us / 1e6 : -1);
	if (b)
		count_trims(b);
}

/* ---- health ---- */

static _Atomic uint64_t last_beat_us;
static atomic_bool ready;
static pthread_mutex_t why_lock = PTHREAD_MUTEX_INITIALIZER;
static char ready_why[128];

void agent_health_beat(uint64_t mono_us)
{
	atomic_store(&last_beat_us, mono_us);
}

bool agent_health_live(uint64_t now_mono_us, uint64_t *ret_age_us)
{
	uint64_t beat = atomic_load(&last_beat_us);
	uint64_t age = beat && now_mono_us > beat ? now_mono_us - beat : 0;

	if (ret_age_us)
		*ret_age_us = age;
	return beat && age <= AGENT_HEALTH_STALE_US;
}

void agent_health_set_ready(bool r, const char *why)
{
	pthread_mutex_lock(&why_lock);
	strlcpy_safe(ready_why, why ? why : "", sizeof(ready_why));
	atomic_store(&ready, r);
	pthread_mutex_unlock(&why_lock);
}

bool agent_health_ready(char *why, size_t size)
{
	bool r;

	pthread_mutex_lock(&why_lock);
	r = atomic_load(&ready);
	if (why && size)
		strlcpy_safe(why, ready_why, size);
	pthread_mutex_unlock(&why_lock);
	return r;
}
