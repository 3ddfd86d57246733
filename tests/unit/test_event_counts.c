/* SPDX-License-Identifier: Apache-2.0 */
/* event_counts_plan(): which entries of STATE/events.json are dropped, as
 * a table of files, clocks and caps. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "publish/event_counts.h"
#include "base/util.h"

#define H (3600ll * 1000) /* ms */
#define NOW (100 * H)
#define MAX_ENTRIES 8

/* Criterion's workers may not share the table's address space: every
 * string lives in the case itself. */
struct case_entry {
	char key[32];
	int64_t sent_ms;
	size_t bytes;
};

struct counts_case {
	char what[80];
	struct case_entry e[MAX_ENTRIES];
	size_t max_bytes;
	/* the keys dropped, space-separated, in the order of e */
	char dropped[128];
	unsigned expired, over_cap;
};

#define E(k, ago, b)                                         \
	{                                                    \
		.key = k, .sent_ms = NOW - (ago), .bytes = b \
	}

ParameterizedTestParameters(event_counts, plan)
{
	static struct counts_case cases[] = {
		{.what = "all live, under the cap: nothing",
		 .e = {E("u1/app", 10, 100), E("u2/app", H - 1, 100)},
		 .max_bytes = 1000},
		{.what = "an Event past its hour goes, one at the hour stays",
		 .e = {E("u1/app", H + 1, 100), E("u2/app", H, 100),
		       E("u3/app", 5, 100)},
		 .max_bytes = 1000,
		 .dropped = "u1/app",
		 .expired = 1},
		{.what = "over the cap: the oldest live ones until it fits",
		 .e = {E("u3/app", 30, 400), E("u1/app", 10, 400),
		       E("u2/app", 20, 400)},
		 .max_bytes = 500,
		 .dropped = "u3/app u2/app",
		 .over_cap = 2},
		{.what = "exactly at the cap keeps all",
		 .e = {E("u1/app", 10, 250), E("u2/app", 20, 250)},
		 .max_bytes = 500},
		{.what = "expired first: what is left may fit without more",
		 .e = {E("u1/app", 2 * H, 600), E("u2/app", 20, 400),
		       E("u3/app", 10, 100)},
		 .max_bytes = 500,
		 .dropped = "u1/app",
		 .expired = 1},
		{.what = "both: expired, then the oldest live over the cap",
		 .e = {E("u1/app", 3 * H, 100), E("u2/app", 20, 400),
		       E("u3/app", 10, 400)},
		 .max_bytes = 500,
		 .dropped = "u1/app u2/app",
		 .expired = 1,
		 .over_cap = 1},
		{.what = "the same second: the key decides",
		 .e = {E("b/app", 10, 300), E("a/app", 10, 300)},
		 .max_bytes = 400,
		 .dropped = "a/app",
		 .over_cap = 1},
		{.what = "sent in the future (a clock set back): kept",
		 .e = {E("u1/app", -5 * H, 100)},
		 .max_bytes = 1000},
		{.what = "one entry over the cap alone goes",
		 .e = {E("u1/app", 1, 2000)},
		 .max_bytes = 1000,
		 .dropped = "u1/app",
		 .over_cap = 1},
		{.what = "no entries", .max_bytes = 1},
	};
	return cr_make_param_array(struct counts_case, cases,
				   ARRAY_SIZE(cases));
}

ParameterizedTest(struct counts_case *c, event_counts, plan)
{
	struct event_count e[MAX_ENTRIES];
	struct event_counts_pruned p;
	bool drop[MAX_ENTRIES];
	char got[256] = "";
	size_t n = 0, len = 0;

	for (; n < MAX_ENTRIES && c->e[n].key[0]; n++)
		e[n] = (struct event_count){.key = c->e[n].key,
					    .sent_ms = c->e[n].sent_ms,
					    .bytes = c->e[n].bytes};
	memset(drop, 0xff, sizeof(drop));
	cr_assert_eq(event_counts_plan(e, n, NOW, EVENT_COUNTS_TTL_MS,
				       c->max_bytes, drop, &p),
		     0);
	for (size_t i = 0; i < n; i++)
		if (drop[i])
			len += (size_t)snprintf(got + len, sizeof(got) - len,
						"%s%s", len ? " " : "",
						e[i].key);
	cr_assert_str_eq(got, c->dropped, "%s", c->what);
	cr_assert_eq(p.expired, c->expired, "%s: expired %u", c->what,
		     p.expired);
	cr_assert_eq(p.over_cap, c->over_cap, "%s: over the cap %u", c->what,
		     p.over_cap);
}

static struct json_object *entry(int count, const char *report, int64_t sent_ms)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_int(count));
	json_object_object_add(o, "report", json_object_new_string(report));
	if (sent_ms)
		json_object_object_add(o, "sent_ms",
				       json_object_new_int64(sent_ms));
	return o;
}

Test(event_counts, prune_json_expired_and_unstamped)
{
	struct json_object *all = json_object_new_object(), *v;
	struct event_counts_pruned p;

	json_object_object_add(all, "u1/app", entry(3, "oom-1", NOW - 2 * H));
	json_object_object_add(all, "u2/app", entry(1, "oom-2", 0));
	json_object_object_add(all, "u3/app", entry(7, "oom-3", NOW - 60000));
	cr_assert_eq(event_counts_prune(all, NOW, 1 << 20, &p), 0);
	cr_assert_eq(p.expired, 1);
	cr_assert_eq(p.over_cap, 0);
	cr_assert_eq(json_object_object_length(all), 2);
	cr_assert_not(json_object_object_get_ex(all, "u1/app", NULL));
	/* an entry of an earlier agent lives one lifetime from now */
	cr_assert(json_object_object_get_ex(all, "u2/app", &v));
	cr_assert(json_object_object_get_ex(v, "sent_ms", &v));
	cr_assert_eq(json_object_get_int64(v), NOW);
	cr_assert(json_object_object_get_ex(all, "u3/app", &v));
	json_object_put(all);
}

Test(event_counts, prune_json_fits_the_cap_oldest_first)
{
	struct json_object *all = json_object_new_object();
	struct event_counts_pruned p;
	char key[64], id[64];
	size_t len = 0;

	/* 1000 containers killed within the hour, the newest last */
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "0d6f2c4e-9a1b-4c3d-8e7f-%012d/app",
			 i);
		snprintf(id, sizeof(id), "oom-7c1d9e2f-%d", i);
		json_object_object_add(all, key,
				       entry(i % 9 + 1, id, NOW - 1000 + i));
	}
	cr_assert_eq(event_counts_prune(all, NOW, 32768, &p), 0);
	cr_assert_eq(p.expired, 0);
	cr_assert_gt(p.over_cap, 0);
	json_object_to_json_string_length(all, JSON_C_TO_STRING_PLAIN, &len);
	cr_assert_leq(len, 32768, "the file as written fits: %zu", len);
	cr_assert_gt(len, 32768 - 200, "and no more than one entry under");
	cr_assert_eq(json_object_object_length(all), 1000 - (int)p.over_cap);
	/* the newest kept, the oldest gone */
	cr_assert(json_object_object_get_ex(
		all, "0d6f2c4e-9a1b-4c3d-8e7f-000000000999/app", NULL));
	cr_assert_not(json_object_object_get_ex(
		all, "0d6f2c4e-9a1b-4c3d-8e7f-000000000000/app", NULL));
	snprintf(key, sizeof(key), "0d6f2c4e-9a1b-4c3d-8e7f-%012u/app",
		 p.over_cap);
	cr_assert(json_object_object_get_ex(all, key, NULL),
		  "exactly the oldest %u dropped", p.over_cap);
	json_object_put(all);
}
