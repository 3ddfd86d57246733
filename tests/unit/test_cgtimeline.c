/* SPDX-License-Identifier: Apache-2.0 */
/* agent/timeline.json from the sampler's rings: oldest sample first across
 * the ring's wrap, monotonic times made wall-clock, each sample's own
 * limit, the roles of each cgroup, at most the ring's 64 samples. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <string.h>

#include "kill/cgtimeline.h"

#define MiB (1024ull * 1024ull)

static uint64_t u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	cr_assert(json_object_object_get_ex(o, key, &v), "%s", key);
	cr_assert(json_object_is_type(v, json_type_int), "%s", key);
	return json_object_get_uint64(v);
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, key, &v), "%s", key);
	return v;
}

/* A full ring that has wrapped: 100 samples pushed, the last 64 kept;
 * sample i at 5000 + 1000 i ms, 1 MiB × i, limit 64 MiB then 96 MiB. */
static void full_ring(struct forecast_history *h)
{
	memset(h, 0, sizeof(*h));
	for (unsigned i = 0; i < 100; i++) {
		unsigned slot = i % FORECAST_RING_LEN;

		h->ring.t_ms[slot] = 5000 + 1000ull * i;
		h->ring.usage[slot] = MiB * i;
		h->limit[slot] = i < 90 ? 64 * MiB : 96 * MiB;
	}
	h->ring.head = 100 % FORECAST_RING_LEN;
	h->ring.n = FORECAST_RING_LEN;
}

Test(cgtimeline, wrapped_ring_is_written_oldest_first_in_wall_clock)
{
	struct forecast_history h;
	struct cgtimeline_series s = {.cgroup = "/kubepods/pod1/ctr",
				      .task_memcg = true,
				      .oom_memcg = true,
				      .h = &h};
	struct json_object *o, *c, *a, *first, *last;

	full_ring(&h);
	/* wall = monotonic + 1 700 000 000 000 ms */
	o = cgtimeline_to_json(&s, 1, 1700000000000ll, 1700000105000ull);
	cr_assert_not_null(o);
	cr_assert_str_eq(json_object_get_string(member(o, "schema")),
			 "oomlens.io/agent-timeline/v1");
	cr_assert_str_eq(json_object_get_string(member(o, "source")),
			 "agent 1 Hz cgroup sampler");
	cr_assert_eq(u64(o, "interval_ms"), 1000);
	cr_assert_eq(u64(o, "killed_at_ms"), 1700000105000ull);
	cr_assert_eq(json_object_array_length(member(o, "cgroups")), 1);
	c = json_object_array_get_idx(member(o, "cgroups"), 0);
	cr_assert_str_eq(json_object_get_string(member(c, "cgroup")),
			 "/kubepods/pod1/ctr");
	cr_assert(json_object_get_boolean(member(c, "task_memcg")));
	cr_assert(json_object_get_boolean(member(c, "oom_memcg")));
	a = member(c, "samples");
	cr_assert_eq(json_object_array_length(a), 64);
	first = json_object_array_get_idx(a, 0);
	last = json_object_array_get_idx(a, 63);
	/* pushed 36 … 99 */
	cr_assert_eq(u64(first, "t_ms"), 1700000000000ull + 5000 + 36000);
	cr_assert_eq(u64(first, "usage"), 36 * MiB);
	cr_assert_eq(u64(first, "limit"), 64 * MiB);
	cr_assert_eq(u64(last, "t_ms"), 1700000000000ull + 5000 + 99000);
	cr_assert_eq(u64(last, "usage"), 99 * MiB);
	cr_assert_eq(u64(last, "limit"), 96 * MiB, "each sample its limit");
	for (size_t i = 1; i < 64; i++)
		cr_assert_eq(u64(json_object_array_get_idx(a, i), "t_ms") -
				     u64(json_object_array_get_idx(a, i - 1),
					 "t_ms"),
			     1000);
	json_object_put(o);
}

Test(cgtimeline, two_cgroups_short_ring_and_unlimited)
{
	struct forecast_history h[2];
	struct cgtimeline_series s[2] = {
		{.cgroup = "/pod/ctr", .task_memcg = true, .h = &h[0]},
		{.cgroup = "/pod", .oom_memcg = true, .h = &h[1]},
	};
	struct json_object *o, *cgs, *a;

	memset(h, 0, sizeof(h));
	for (unsigned i = 0; i < 3; i++) {
		h[0].ring.t_ms[i] = 1000 * (i + 1);
		h[0].ring.usage[i] = MiB * (10 + i);
		h[0].limit[i] = UINT64_MAX;
	}
	h[0].ring.head = h[0].ring.n = 3;
	h[1].ring.t_ms[0] = 3000;
	h[1].ring.usage[0] = 20 * MiB;
	h[1].limit[0] = 64 * MiB;
	h[1].ring.head = h[1].ring.n = 1;
	o = cgtimeline_to_json(s, 2, 500, 4000);
	cgs = member(o, "cgroups");
	cr_assert_eq(json_object_array_length(cgs), 2);
	cr_assert_not(json_object_get_boolean(
		member(json_object_array_get_idx(cgs, 0), "oom_memcg")));
	cr_assert_not(json_object_get_boolean(
		member(json_object_array_get_idx(cgs, 1), "task_memcg")));
	a = member(json_object_array_get_idx(cgs, 0), "samples");
	cr_assert_eq(json_object_array_length(a), 3);
	cr_assert_eq(u64(json_object_array_get_idx(a, 0), "t_ms"), 1500);
	cr_assert_eq(u64(json_object_array_get_idx(a, 2), "usage"), 12 * MiB);
	/* no limit is null, not 2^64 − 1 */
	cr_assert_null(member(json_object_array_get_idx(a, 2), "limit"));
	a = member(json_object_array_get_idx(cgs, 1), "samples");
	cr_assert_eq(json_object_array_length(a), 1);
	cr_assert_eq(u64(json_object_array_get_idx(a, 0), "limit"), 64 * MiB);
	/* ≤ 64 samples × 2 cgroups: a few KiB in the bundle */
	cr_assert_lt(strlen(json_object_to_json_string(o)), 1024);
	json_object_put(o);
}
