/* SPDX-License-Identifier: Apache-2.0 */
/* Flight recorder logic: thresholds with re-arm, growth prediction, the
 * 600-sample ring, process lifetimes, timeline JSON. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>

#include "forensics/recorder.h"

Test(recorder, thresholds_parse)
{
	struct rec_thresholds t;

	cr_assert_eq(rec_thresholds_parse("95,80,90,80", &t), 0);
	cr_assert_eq(t.n, 3);
	cr_assert_eq(t.pct[0], 80);
	cr_assert_eq(t.pct[1], 90);
	cr_assert_eq(t.pct[2], 95);
	cr_assert(t.armed[0] && t.armed[1] && t.armed[2]);
	cr_assert_eq(rec_thresholds_parse("80,,90", &t), -EINVAL);
	cr_assert_eq(rec_thresholds_parse("0", &t), -EINVAL);
	cr_assert_eq(rec_thresholds_parse("101", &t), -EINVAL);
	cr_assert_eq(rec_thresholds_parse("80,x", &t), -EINVAL);
	cr_assert_eq(rec_thresholds_parse("", &t), -EINVAL);
	cr_assert_eq(rec_thresholds_parse("1,2,3,4,5,6,7,8,9", &t), -EINVAL);
}

Test(recorder, thresholds_cross_once_and_rearm_5_points)
{
	struct rec_thresholds t;

	cr_assert_eq(rec_thresholds_parse("80,90,95", &t), 0);
	cr_assert_eq(rec_thresholds_update(&t, 50), 0);
	cr_assert_eq(rec_thresholds_update(&t, 81), 80);
	cr_assert_eq(rec_thresholds_update(&t, 85), 0, "fires once");
	cr_assert_eq(rec_thresholds_update(&t, 76), 0, "not re-armed at 76");
	cr_assert_eq(rec_thresholds_update(&t, 80), 0);
	cr_assert_eq(rec_thresholds_update(&t, 75), 0, "re-armed at 75");
	cr_assert_eq(rec_thresholds_update(&t, 80), 80, "fires again");
	/* A jump over two thresholds: one snapshot, the higher one. */
	cr_assert_eq(rec_thresholds_update(&t, 96), 95);
	cr_assert_eq(rec_thresholds_update(&t, 91), 0);
	cr_assert_eq(rec_thresholds_update(&t, 99), 0);
}

static void add(struct recorder *r, double t_s, uint64_t usage, uint64_t limit)
{
	struct rec_sample s = {.t_us = (uint64_t)(t_s * 1e6) + 1000000,
			       .mono_us = (uint64_t)(t_s * 1e6),
			       .usage = usage,
			       .limit = limit};

	s.procs = calloc(1, sizeof(*s.procs));
	s.n_procs = 1;
	s.procs[0].pid = 1;
	s.procs[0].rss_kb = usage >> 10;
	cr_assert_eq(recorder_add(r, &s), 0);
	cr_assert_null(s.procs, "ownership moved");
}

Test(recorder, predict_growth)
{
	struct recorder r;
	double eta;

	recorder_init(&r);
	cr_assert_lt(recorder_predict_s(&r, 5), 0, "no samples");
	/* 10 MB/s towards a 200 MB limit from 100 MB: 10 s left at t=4. */
	for (int i = 0; i <= 4; i++)
		add(&r, i, (60 + 10 * (uint64_t)i) << 20, 200u << 20);
	eta = recorder_predict_s(&r, 5);
	cr_assert(eta > 9.9 && eta < 10.1, "eta %f", eta);
	/* Flat usage: no prediction. */
	for (int i = 5; i <= 9; i++)
		add(&r, i, 100u << 20, 200u << 20);
	cr_assert_lt(recorder_predict_s(&r, 5), 0);
	/* Unknown limit: no prediction. */
	add(&r, 10, 150u << 20, 0);
	cr_assert_lt(recorder_predict_s(&r, 5), 0);
	recorder_release(&r);
}

Test(recorder, ring_keeps_last_600)
{
	struct recorder r;

	recorder_init(&r);
	for (int i = 0; i < 1000; i++)
		add(&r, i, (uint64_t)i, 0);
	cr_assert_eq(r.count, REC_RING_MAX);
	cr_assert_eq(recorder_sample(&r, 0)->usage, 400);
	cr_assert_eq(recorder_sample(&r, REC_RING_MAX - 1)->usage, 999);
	cr_assert_null(recorder_sample(&r, REC_RING_MAX));
	recorder_release(&r);
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, k, &v), "no %s", k);
	return v;
}

Test(recorder, processes_and_timeline_json)
{
	struct recorder r;
	struct json_object *o, *procs, *p0, *p1, *samples, *snaps;

	recorder_init(&r);
	cr_assert_eq(recorder_proc_seen(&r, 10, "app", "app --x", 1000000), 0);
	cr_assert_eq(recorder_proc_seen(&r, 11, "a b) (c\\nd", "", 1000000), 0);
	cr_assert_eq(recorder_proc_seen(&r, 10, NULL, NULL, 2000000), 0);
	cr_assert(recorder_proc_alive(&r, 10));
	recorder_proc_ended(&r, 11, 3000000);
	cr_assert_not(recorder_proc_alive(&r, 11));
	/* A reused pid is a new process. */
	cr_assert_eq(recorder_proc_seen(&r, 11, "new", "", 4000000), 0);
	cr_assert_eq(r.n_procs, 3);
	add(&r, 1, 5u << 20, 10u << 20);
	cr_assert_eq(recorder_note_snapshot(&r, 5000000, 1, "threshold-80",
					    "snapshots/x", 8, 10),
		     0);
	o = recorder_timeline_json(&r, "/demo/app", 1000);
	cr_assert_not_null(o);
	cr_assert_str_eq(json_object_get_string(get(o, "schema")),
			 "oomlens.io/timeline/v1");
	cr_assert_str_eq(json_object_get_string(get(o, "cgroup")), "/demo/app");
	procs = get(o, "processes");
	cr_assert_eq(json_object_array_length(procs), 3);
	p0 = json_object_array_get_idx(procs, 0);
	p1 = json_object_array_get_idx(procs, 1);
	cr_assert_eq(json_object_get_int64(get(p0, "last_ms")), 2000);
	cr_assert_null(get(p0, "end_ms"));
	cr_assert_eq(json_object_get_int64(get(p1, "end_ms")), 3000);
	cr_assert_str_eq(json_object_get_string(get(p1, "name")),
			 "a b) (c\\nd");
	samples = get(o, "samples");
	cr_assert_eq(json_object_array_length(samples), 1);
	cr_assert_eq(json_object_get_int64(get(
			     json_object_array_get_idx(samples, 0), "usage")),
		     5 << 20);
	snaps = get(o, "snapshots");
	cr_assert_str_eq(
		json_object_get_string(
			get(json_object_array_get_idx(snaps, 0), "reason")),
		"threshold-80");
	cr_assert_eq(json_object_array_length(get(o, "trims")), 0);
	json_object_put(o);
	recorder_release(&r);
}

Test(recorder, trims_are_in_the_timeline)
{
	struct recorder r;
	struct json_object *o, *t;

	recorder_init(&r);
	cr_assert_eq(recorder_note_trim(&r, 7000000, 42,
					"System.trim_native_heap", 297u << 20,
					40u << 20),
		     0);
	o = recorder_timeline_json(&r, NULL, 1000);
	t = json_object_array_get_idx(get(o, "trims"), 0);
	cr_assert_not_null(t);
	cr_assert_eq(json_object_get_int(get(t, "pid")), 42);
	cr_assert_eq(json_object_get_int64(get(t, "t_ms")), 7000);
	cr_assert_eq(json_object_get_int64(get(t, "rss_before")), 297 << 20);
	cr_assert_eq(json_object_get_int64(get(t, "rss_after")), 40 << 20);
	cr_assert_str_eq(json_object_get_string(get(t, "command")),
			 "System.trim_native_heap");
	json_object_put(o);
	recorder_release(&r);
}

Test(recorder, ended_processes_are_capped)
{
	struct recorder r;

	recorder_init(&r);
	cr_assert_eq(recorder_proc_seen(&r, 1, "init", "", 1), 0);
	for (int pid = 2; pid < 3000; pid++) {
		cr_assert_eq(recorder_proc_seen(&r, pid, "sh", "", 2), 0);
		recorder_proc_ended(&r, pid, 3);
	}
	cr_assert_leq(r.n_procs, REC_PROCS_MAX);
	cr_assert(recorder_proc_alive(&r, 1), "live ones are never dropped");
	cr_assert_eq(r.procs[r.n_procs - 1].pid, 2999, "newest kept");
	recorder_release(&r);
}

/* The text written every second is the same document as the object. */
Test(recorder, timeline_text_equals_object)
{
	struct recorder r;
	struct json_object *o, *parsed;
	struct strbuf sb;

	recorder_init(&r);
	cr_assert_eq(recorder_proc_seen(&r, 7, "a \"b\"\\", "x --k=***", 1), 0);
	for (int i = 0; i < 700; i++)
		add(&r, i, (uint64_t)i << 20, 1u << 30);
	recorder_proc_ended(&r, 7, 5000000);
	cr_assert_eq(recorder_note_snapshot(&r, 9000000, 1, "predicted",
					    "snapshots/y", 1, 2),
		     0);
	cr_assert_eq(recorder_note_trim(&r, 9500000, 7, "malloc_trim(0)",
					300u << 20, 40u << 20),
		     0);
	strbuf_init(&sb, 64u << 20);
	cr_assert_eq(recorder_timeline_write(&r, "/a \"q\"", 250, &sb), 0);
	parsed = json_tokener_parse(sb.buf);
	cr_assert_not_null(parsed, "valid JSON");
	o = recorder_timeline_json(&r, "/a \"q\"", 250);
	cr_assert(json_object_equal(o, parsed));
	json_object_put(o);
	json_object_put(parsed);
	strbuf_release(&sb);
	recorder_release(&r);
}

/* Issue 12: a snapshot's completion and whether a kill came first, JVM
 * facts and events; the text and the object still agree. */
Test(recorder, snapshot_end_jvms_and_events)
{
	struct recorder r;
	struct json_object *o, *parsed, *s, *e, *facts;
	struct strbuf sb;

	recorder_init(&r);
	cr_assert_eq(recorder_note_snapshot_end(&r, 1, false), -ENOENT);
	cr_assert_eq(recorder_note_snapshot(&r, 9000000, 1, "time-to-limit",
					    "snapshots/z", 1, 2),
		     0);
	cr_assert_eq(recorder_note_snapshot_end(&r, 9400000, true), 0);
	facts = json_object_new_object();
	json_object_object_add(facts, "pid", json_object_new_int(42));
	json_object_object_add(facts, "max_heap",
			       json_object_new_uint64(1ull << 30));
	cr_assert_eq(recorder_note_jvm(&r, facts), 0);
	cr_assert_eq(recorder_note_event(&r, 8000000,
					 "jvm-configured-to-outgrow", 42,
					 "pid 42 is configured to outgrow"),
		     0);
	o = recorder_timeline_json(&r, "/x", 1000);
	s = json_object_array_get_idx(get(o, "snapshots"), 0);
	cr_assert_eq(json_object_get_int64(get(s, "t_ms")), 9000);
	cr_assert_eq(json_object_get_int64(get(s, "completed_ms")), 9400);
	cr_assert(json_object_get_boolean(get(s, "after_kill")));
	cr_assert_eq(json_object_get_int64(
			     get(json_object_array_get_idx(get(o, "jvms"), 0),
				 "max_heap")),
		     1ll << 30);
	e = json_object_array_get_idx(get(o, "events"), 0);
	cr_assert_str_eq(json_object_get_string(get(e, "kind")),
			 "jvm-configured-to-outgrow");
	cr_assert_eq(json_object_get_int(get(e, "pid")), 42);
	cr_assert_eq(json_object_get_int64(get(e, "t_ms")), 8000);
	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(recorder_timeline_write(&r, "/x", 1000, &sb), 0);
	parsed = json_tokener_parse(sb.buf);
	cr_assert(json_object_equal(o, parsed));
	json_object_put(o);
	json_object_put(parsed);
	strbuf_release(&sb);
	recorder_release(&r);
}
