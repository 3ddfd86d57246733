/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>

#include "kill/cgtimeline.h"

static struct json_object *sample_json(uint64_t t_ms, uint64_t usage,
				       uint64_t limit)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "t_ms", json_object_new_uint64(t_ms));
	json_object_object_add(o, "usage", json_object_new_uint64(usage));
	/* the sampler keeps no sample of a cgroup without a limit */
	json_object_object_add(
		o, "limit",
		limit == UINT64_MAX ? NULL : json_object_new_uint64(limit));
	return o;
}

static struct json_object *series_json(const struct cgtimeline_series *s,
				       int64_t wall_minus_mono_ms)
{
	const struct forecast_ring *r = &s->h->ring;
	struct json_object *o = json_object_new_object();
	struct json_object *a = json_object_new_array();
	unsigned n = r->n <= FORECAST_RING_LEN ? r->n : FORECAST_RING_LEN;
	unsigned oldest = (r->head + FORECAST_RING_LEN - n) % FORECAST_RING_LEN;

	json_object_object_add(o, "cgroup", json_object_new_string(s->cgroup));
	json_object_object_add(o, "task_memcg",
			       json_object_new_boolean(s->task_memcg));
	json_object_object_add(o, "oom_memcg",
			       json_object_new_boolean(s->oom_memcg));
	for (unsigned k = 0; a && k < n; k++) {
		unsigned i = (oldest + k) % FORECAST_RING_LEN;
		int64_t t = (int64_t)r->t_ms[i] + wall_minus_mono_ms;

		json_object_array_add(a,
				      sample_json(t > 0 ? (uint64_t)t : 0,
						  r->usage[i], s->h->limit[i]));
	}
	json_object_object_add(o, "samples", a);
	return o;
}

struct json_object *cgtimeline_to_json(const struct cgtimeline_series *s,
				       size_t n, int64_t wall_minus_mono_ms,
				       uint64_t killed_at_ms)
{
	struct json_object *o = json_object_new_object();
	struct json_object *a = json_object_new_array();

	if (!o || !a) {
		json_object_put(o);
		json_object_put(a);
		return NULL;
	}
	json_object_object_add(o, "schema",
			       json_object_new_string(CGTIMELINE_SCHEMA));
	json_object_object_add(o, "source",
			       json_object_new_string(CGTIMELINE_SOURCE));
	json_object_object_add(o, "interval_ms", json_object_new_int(1000));
	json_object_object_add(o, "killed_at_ms",
			       json_object_new_uint64(killed_at_ms));
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a,
				      series_json(&s[i], wall_minus_mono_ms));
	json_object_object_add(o, "cgroups", a);
	return o;
}
