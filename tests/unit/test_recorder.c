/* SPDX-License-Identifier: Apache-2.0 */
/* Flight recorder logic: thresholds with re-arm, growth prediction, the
 * 600-sample ring (its samples encoded), process lifetimes, timeline JSON
 * whole and streamed. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>

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

	struct rec_proc_sample p = {.pid = 1, .rss_kb = usage >> 10};

	s.procs = &p;
	s.n_procs = 1;
	cr_assert_eq(recorder_add(r, &s), 0);
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

/* ---- the ring's encoding and the streamed timeline ---- */

/* The figures of process k of the sample taken at t: some change at every
 * sample, some now and then, the pid of one slot changes (a process
 * replaced), extreme values included. */
static struct rec_proc_sample fig(uint64_t t, size_t k)
{
	struct rec_proc_sample p = {
		.pid = (int)(1000 + k + (k == 2 ? t / 7 : 0)),
		.threads = (int)(k == 3 ? -1 : 1 + (int)(t % 5 == 0)),
		.rss_kb = 1000 * k + t * (k & 1),
		.anon_kb = k == 4 ? UINT64_MAX - t : 700 * k,
		.file_kb = t % 11 == 0 ? t * 3 : 300,
		.shmem_kb = k == 0 ? (uint64_t)1 << 63 : 0,
		.swap_kb = t > 650 ? t - 650 : 0,
	};

	if (k == 5)
		p.pid = INT32_MIN + (int)(t % 3);
	return p;
}

/* The number of processes at t: varies, sometimes none. */
static size_t nprocs(uint64_t t)
{
	return t % 13 == 0 ? 0 : 3 + t % 4;
}

static void add_fig(struct recorder *r, uint64_t t)
{
	struct rec_proc_sample p[8];
	struct rec_sample s = {.t_us = t * 1000000 + 123456,
			       .mono_us = t * 1000000,
			       .usage = t << 20,
			       .limit = t % 2 ? 0 : UINT64_MAX - t,
			       .procs = p,
			       .n_procs = nprocs(t)};

	for (size_t k = 0; k < s.n_procs; k++)
		p[k] = fig(t, k);
	cr_assert_eq(recorder_add(r, &s), 0);
}

static uint64_t u64_at(struct json_object *o, const char *k)
{
	return (uint64_t)json_object_get_uint64(get(o, k));
}

/* Sample o is the one added at t, every figure as it was. */
static void expect_sample(struct json_object *o, uint64_t t)
{
	struct json_object *procs = get(o, "procs");

	cr_assert_eq(u64_at(o, "t_ms"), t * 1000 + 123);
	cr_assert_eq(u64_at(o, "usage"), t << 20);
	cr_assert_eq(u64_at(o, "limit"), t % 2 ? 0 : UINT64_MAX - t);
	cr_assert_eq(json_object_array_length(procs), nprocs(t), "t %lu",
		     (unsigned long)t);
	for (size_t k = 0; k < nprocs(t); k++) {
		struct json_object *p = json_object_array_get_idx(procs, k);
		struct rec_proc_sample w = fig(t, k);

		cr_assert_eq(json_object_get_int(get(p, "pid")), w.pid);
		cr_assert_eq(json_object_get_int(get(p, "threads")), w.threads);
		cr_assert_eq(u64_at(p, "rss_kb"), w.rss_kb);
		cr_assert_eq(u64_at(p, "anon_kb"), w.anon_kb, "t %lu k %zu",
			     (unsigned long)t, k);
		cr_assert_eq(u64_at(p, "file_kb"), w.file_kb);
		cr_assert_eq(u64_at(p, "shmem_kb"), w.shmem_kb);
		cr_assert_eq(u64_at(p, "swap_kb"), w.swap_kb);
	}
}

/* A ring that wrapped, with hostile strings everywhere one can be. */
static void fill_hostile(struct recorder *r)
{
	struct json_object *facts = json_object_new_object();

	recorder_init(r);
	cr_assert_eq(recorder_proc_seen(r, 7, "q\"uote\\", "a\x01\x1f\x7f", 1),
		     0);
	cr_assert_eq(recorder_proc_seen(r, 8, "bad \xff\xfe \xc3(", "</x>", 2),
		     0);
	recorder_proc_ended(r, 8, 3000);
	for (uint64_t t = 0; t < 700; t++)
		add_fig(r, t);
	cr_assert_eq(recorder_note_snapshot(r, 9000000, 1, "threshold-80",
					    "snapshots/a\"b", 1, 2),
		     0);
	cr_assert_eq(recorder_note_snapshot_end(r, 9500000, false), 0);
	cr_assert_eq(recorder_note_trim(r, 9600000, 7, "malloc_trim(0)", 3, 2),
		     0);
	json_object_object_add(facts, "pid", json_object_new_int(7));
	json_object_object_add(facts, "heap_ranges", json_object_new_array());
	cr_assert_eq(recorder_note_jvm(r, facts), 0);
	cr_assert_eq(recorder_note_event(r, 9700000, "kind", 7,
					 "\"}],\"x\":[\"\n\t\\/"),
		     0);
	cr_assert_eq(recorder_note_event(r, 9800000, "k2", 8, ""), 0);
}

/* What json-c prints of recorder_timeline_json(): the text the sidecar
 * wrote before it streamed, byte for byte. */
static char *json_c_text(const struct recorder *r, const char *cgroup)
{
	struct json_object *o = recorder_timeline_json(r, cgroup, 250);
	char *t;

	cr_assert_not_null(o);
	t = strdup(json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return t;
}

Test(recorder, streamed_text_is_json_c_text)
{
	static const char *const cgroups[] = {"/a \"q\"\\/\x01\xff", NULL};
	static const size_t wants[] = {SIZE_MAX, 16384, 1};

	for (size_t g = 0; g < 2; g++) {
		struct recorder r;
		char *want;

		fill_hostile(&r);
		want = json_c_text(&r, cgroups[g]);
		for (size_t w = 0; w < 3; w++) {
			struct strbuf all, chunk;
			struct rec_cursor c;
			size_t chunks = 0;
			int q;

			strbuf_init(&all, 64u << 20);
			strbuf_init(&chunk, 1u << 20);
			rec_cursor_init(&c, cgroups[g], 250);
			do {
				strbuf_reset(&chunk);
				q = recorder_timeline_next(&r, &c, &chunk,
							   wants[w]);
				cr_assert_geq(q, 0);
				cr_assert_eq(
					strbuf_add(&all, chunk.buf, chunk.len),
					0);
				chunks++;
			} while (q > 0);
			rec_cursor_release(&c);
			cr_assert_str_eq(all.buf, want, "want %zu", wants[w]);
			/* a chunk holds whole elements: one a call at 1 */
			if (wants[w] == 1)
				cr_assert_gt(chunks, 600 + 2 + 6);
			strbuf_release(&all);
			strbuf_release(&chunk);
		}
		free(want);
		recorder_release(&r);
	}
}

/* Every figure survives the encoding, across the ring's wrap (the oldest
 * sample re-based at each drop); a process whose figures did not change
 * costs one byte. */
Test(recorder, encoded_samples_round_trip)
{
	struct recorder r;
	struct json_object *o, *samples;
	struct rec_proc_sample steady[50];
	struct rec_sample s = {.procs = steady, .n_procs = 50};

	fill_hostile(&r);
	cr_assert_eq(r.count, REC_RING_MAX);
	o = recorder_timeline_json(&r, NULL, 250);
	samples = get(o, "samples");
	cr_assert_eq(json_object_array_length(samples), REC_RING_MAX);
	for (size_t i = 0; i < REC_RING_MAX; i++)
		expect_sample(json_object_array_get_idx(samples, i), 100 + i);
	json_object_put(o);
	recorder_release(&r);

	recorder_init(&r);
	for (int k = 0; k < 50; k++)
		steady[k] = (struct rec_proc_sample){.pid = 4000000 + k,
						     .threads = 1,
						     .rss_kb = 3000,
						     .anon_kb = 2100,
						     .file_kb = 900};
	cr_assert_eq(recorder_add(&r, &s), 0);
	steady[3].rss_kb += 4; /* + 4: zigzag 8, one byte */
	cr_assert_eq(recorder_add(&r, &s), 0);
	cr_assert_eq(recorder_add(&r, &s), 0);
	cr_assert_eq(recorder_sample(&r, 1)->enc_len, 50 + 1);
	cr_assert_eq(recorder_sample(&r, 2)->enc_len, 50);
	recorder_release(&r);
}

/* Appends exactly one piece: the head, an element, a section's end. */
static void step(const struct recorder *r, struct rec_cursor *c,
		 struct strbuf *sb)
{
	size_t len = sb->len;

	cr_assert_eq(recorder_timeline_next(r, c, sb, len + 1), 1);
	cr_assert_gt(sb->len, len);
}

static bool ends_with(const struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);

	return sb->len >= n && memcmp(sb->buf + sb->len - n, s, n) == 0;
}

/* The ring moves while a timeline is streamed: samples dropped before
 * their turn are left out, samples added before the samples' end are
 * written, each with its own figures; a process forgotten before its
 * turn is left out and none is written twice. */
Test(recorder, streamed_while_the_ring_moves)
{
	struct recorder r;
	struct rec_cursor c;
	struct strbuf sb;
	struct json_object *o, *samples, *procs;

	recorder_init(&r);
	cr_assert_eq(recorder_proc_seen(&r, 1, "init", "", 1), 0);
	for (int pid = 2; pid < 1000; pid++)
		cr_assert_eq(recorder_proc_seen(&r, pid, "sh", "", 2), 0);
	for (uint64_t t = 0; t < 600; t++)
		add_fig(&r, t);
	strbuf_init(&sb, 64u << 20);
	rec_cursor_init(&c, "/x", 1000);
	/* the head and samples 0..9 */
	for (int i = 0; i < 11; i++)
		step(&r, &c, &sb);
	for (uint64_t t = 600; t < 700; t++) /* drops 0..99 */
		add_fig(&r, t);
	/* samples 100..699, then the first 10 processes: pids 1..10 */
	while (!ends_with(&sb, "],\"processes\":["))
		step(&r, &c, &sb);
	for (int i = 0; i < 10; i++)
		step(&r, &c, &sb);
	/* pids 2..59 end, and 50 new ones push out the 25 oldest ended
	 * (2..26): 11..26 go before their turn */
	for (int pid = 2; pid < 60; pid++)
		recorder_proc_ended(&r, pid, 3);
	for (int pid = 1000; pid < 1050; pid++)
		cr_assert_eq(recorder_proc_seen(&r, pid, "sh", "", 4), 0);
	cr_assert_eq(r.n_procs, REC_PROCS_MAX);
	cr_assert_eq(r.procs[1].pid, 27);
	cr_assert_eq(recorder_timeline_next(&r, &c, &sb, SIZE_MAX), 0);
	rec_cursor_release(&c);

	o = json_tokener_parse(sb.buf);
	cr_assert_not_null(o, "JSON: %.200s", sb.buf);
	samples = get(o, "samples");
	cr_assert_eq(json_object_array_length(samples), 10 + 600);
	for (size_t i = 0; i < 10; i++)
		expect_sample(json_object_array_get_idx(samples, i), i);
	for (size_t i = 10; i < 610; i++)
		expect_sample(json_object_array_get_idx(samples, i), 90 + i);
	procs = get(o, "processes");
	cr_assert_eq(json_object_array_length(procs), 10 + (1049 - 27 + 1));
	for (size_t i = 0, want = 1; i < json_object_array_length(procs);
	     i++, want++) {
		if (want == 11)
			want = 27;
		cr_assert_eq(
			json_object_get_int(get(
				json_object_array_get_idx(procs, i), "pid")),
			(int)want, "process %zu", i);
	}
	json_object_put(o);
	strbuf_release(&sb);
	recorder_release(&r);
}

/* An element that does not fit: -E2BIG, and what came before it stays. */
Test(recorder, streamed_element_over_the_cap)
{
	struct recorder r;
	struct rec_cursor c;
	struct strbuf sb;
	size_t head;

	recorder_init(&r);
	add_fig(&r, 1);
	strbuf_init(&sb, 100);
	rec_cursor_init(&c, NULL, 1000);
	cr_assert_eq(recorder_timeline_next(&r, &c, &sb, 1), 1);
	head = sb.len;
	cr_assert_str_eq(sb.buf, "{\"schema\":\"oomlens.io/timeline/v1\","
				 "\"cgroup\":null,\"interval_ms\":1000,"
				 "\"samples\":[");
	cr_assert_eq(recorder_timeline_next(&r, &c, &sb, SIZE_MAX), -E2BIG);
	cr_assert_eq(sb.len, head);
	cr_assert_eq(strlen(sb.buf), head);
	rec_cursor_release(&c);
	strbuf_release(&sb);
	recorder_release(&r);
}
