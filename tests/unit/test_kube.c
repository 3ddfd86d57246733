/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the pure parts on the golden bodies of a real kube-apiserver
 * (tests/fixtures/kube/, cut from the reference transcripts). */
#include <criterion/criterion.h>
#include <fcntl.h>

#include "base/fileio.h"
#include "kube/kube.h"

#define FIX "tests/fixtures/kube/"

static void load(const char *name, struct strbuf *sb)
{
	strbuf_init(sb, 1 << 22);
	cr_assert_geq(read_file_at(AT_FDCWD, name, 1 << 22, sb), 0,
		      "cannot read %s", name);
}

struct status_case {
	const char *file;
	long http;
	int code;
	const char *reason;
	bool retryable;
};

static const struct status_case status_cases[] = {
	{FIX "status-401.json", 401, -EACCES, "Unauthorized", false},
	{FIX "status-403.json", 403, -EPERM, "Forbidden", false},
	{FIX "status-404.json", 404, -ENOENT, "NotFound", false},
	{FIX "status-409-exists.json", 409, -EEXIST, "AlreadyExists", false},
	{FIX "status-409-conflict.json", 409, -EBUSY, "Conflict", false},
	{FIX "status-409-precondition.json", 409, -EBUSY, "Conflict", false},
	{FIX "status-422.json", 422, -EINVAL, "Invalid", false},
	{FIX "status-410.json", 410, -ESTALE, "Expired", false},
	{FIX "status-413.json", 413, -E2BIG, "RequestEntityTooLarge", false},
	{FIX "status-500-etcd.json", 500, -E2BIG, "", false},
	{FIX "status-500-grpc.json", 500, -E2BIG, "", false},
	{FIX "status-429.txt", 429, -EAGAIN, "", true},
};

static void check_status(const struct status_case *c)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_error e;

	load(c->file, &sb);
	cr_assert_eq(kube_status_parse(sb.buf, sb.len, c->http, &e), c->code,
		     "%s", c->file);
	cr_assert_eq(e.code, c->code);
	cr_assert_eq(e.http_status, c->http);
	cr_assert_str_eq(e.reason, c->reason, "%s", c->file);
	cr_assert_eq(e.retryable, c->retryable, "%s", c->file);
	cr_assert_neq(e.message[0], '\0', "%s has a message", c->file);
}

/* A table, not a ParameterizedTest: Criterion's parameters may not
 * carry pointers to static strings. */
Test(kube_status, golden)
{
	for (size_t i = 0; i < ARRAY_SIZE(status_cases); i++)
		check_status(&status_cases[i]);
}

Test(kube_status, message_kept_and_text_bodies)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_error e;

	load(FIX "status-404.json", &sb);
	kube_status_parse(sb.buf, sb.len, 404, &e);
	cr_assert_str_eq(e.message, "oomreports.oomlens.io "
				    "\"does-not-exist\" not found");
	strbuf_release(&sb);
	load(FIX "status-429.txt", &sb);
	kube_status_parse(sb.buf, sb.len, 429, &e);
	cr_assert_str_eq(e.message,
			 "Too many requests, please try again later.");
	cr_assert_eq(kube_status_parse("", 0, 503, &e), -EIO);
	cr_assert(e.retryable);
	cr_assert_eq(kube_status_parse("{\"kind\":\"Status\"}", 17, 200, &e),
		     0);
	cr_assert_eq(e.code, 0);
}

Test(kube_retry_after, seconds_and_dates)
{
	uint32_t s = 99;

	cr_assert_eq(kube_parse_retry_after("1", 0, &s), 0);
	cr_assert_eq(s, 1);
	cr_assert_eq(kube_parse_retry_after(" 120", 0, &s), 0);
	cr_assert_eq(s, 120);
	cr_assert_eq(kube_parse_retry_after("999999", 0, &s), 0);
	cr_assert_eq(s, 3600, "capped");
	/* Mon, 30 Nov 2026 09:31:14 GMT = 1796031074 */
	cr_assert_eq(kube_parse_retry_after("Mon, 30 Nov 2026 09:31:14 GMT",
					    1796031074 - 7, &s),
		     0);
	cr_assert_eq(s, 7);
	cr_assert_eq(kube_parse_retry_after("Mon, 30 Nov 2026 09:31:14 GMT",
					    1796031074 + 50, &s),
		     0);
	cr_assert_eq(s, 0, "a date in the past means now");
	s = 42;
	cr_assert_eq(kube_parse_retry_after("-1", 0, &s), -EINVAL);
	cr_assert_eq(kube_parse_retry_after("soon", 0, &s), -EINVAL);
	cr_assert_eq(kube_parse_retry_after("", 0, &s), -EINVAL);
	cr_assert_eq(s, 42, "untouched on failure");
}

Test(kube_limiter, burst_then_qps)
{
	struct kube_limiter l;
	uint64_t t = 1000000;

	kube_limiter_init(&l, 5, 3, t);
	cr_assert_eq(kube_limiter_reserve(&l, t), 0);
	cr_assert_eq(kube_limiter_reserve(&l, t), 0);
	cr_assert_eq(kube_limiter_reserve(&l, t), 0);
	/* bucket empty: the 4th waits 1/5 s, the 5th 2/5 s */
	cr_assert_eq(kube_limiter_reserve(&l, t), 200000);
	cr_assert_eq(kube_limiter_reserve(&l, t), 400000);
	/* a second later 5 tokens came back, 2 were owed */
	cr_assert_eq(kube_limiter_reserve(&l, t + 1000000), 0);
	cr_assert_eq(kube_limiter_reserve(&l, t + 1000000), 0);
	cr_assert_eq(kube_limiter_reserve(&l, t + 1000000), 0);
	cr_assert_eq(kube_limiter_reserve(&l, t + 1000000), 200000);
	/* long idle never gives more than burst */
	t += 100000000;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(kube_limiter_reserve(&l, t), 0);
	cr_assert_gt(kube_limiter_reserve(&l, t), 0);
	kube_limiter_init(&l, 0, 1, t);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(kube_limiter_reserve(&l, t), 0, "unlimited");
}

Test(kube_path, core_crd_cluster_scoped_and_escaping)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 0);
	cr_assert_eq(kube_build_path(&sb, &kube_res_pods, NULL, NULL, NULL), 0);
	cr_assert_str_eq(sb.buf, "/api/v1/pods");
	strbuf_reset(&sb);
	kube_build_path(&sb, &kube_res_oomreports, "default", "r-1", "status");
	cr_assert_str_eq(sb.buf, "/apis/oomlens.io/v1alpha1/namespaces/"
				 "default/oomreports/r-1/status");
	strbuf_reset(&sb);
	kube_build_path(&sb, &kube_res_tokenreviews, "ignored", NULL, NULL);
	cr_assert_str_eq(sb.buf, "/apis/authentication.k8s.io/v1/tokenreviews");
	strbuf_reset(&sb);
	kube_build_path(&sb, &kube_res_pods, "a/b", "x y?", NULL);
	cr_assert_str_eq(sb.buf, "/api/v1/namespaces/a%2Fb/pods/x%20y%3F");
	cr_assert_eq(kube_build_path(&sb, &kube_res_pods, "ns", "", NULL),
		     -EINVAL);
	strbuf_reset(&sb);
	strbuf_adds(&sb, "/api/v1/pods");
	kube_query_add(&sb, "fieldSelector", "spec.nodeName=node1");
	kube_query_add(&sb, "labelSelector", NULL);
	kube_query_add(&sb, "labelSelector", "oomlens.io/node=node1");
	kube_query_add(&sb, "limit", "1");
	cr_assert_str_eq(sb.buf, "/api/v1/pods?fieldSelector=spec.nodeName%"
				 "3Dnode1&labelSelector=oomlens.io%2Fnode%"
				 "3Dnode1&limit=1");
}

struct lines {
	char got[16][64];
	int n;
	int oversized;
};

static int collect_line(const char *line, size_t len, void *ud)
{
	struct lines *l = ud;

	if (!line) {
		l->oversized++;
		return 0;
	}
	cr_assert_lt(l->n, 16);
	snprintf(l->got[l->n++], 64, "%.*s", (int)len, line);
	return 0;
}

Test(kube_lines, any_chunking_gives_the_same_lines)
{
	const char *in = "{\"a\":1}\n\n{\"b\":2}\nxyz\n{\"c\"";

	for (size_t step = 1; step <= strlen(in); step++) {
		struct kube_line_splitter s;
		struct lines l = {0};

		kube_line_splitter_init(&s, 64);
		for (size_t i = 0; i < strlen(in); i += step) {
			size_t n =
				strlen(in) - i < step ? strlen(in) - i : step;

			kube_line_splitter_feed(&s, in + i, n, collect_line,
						&l);
		}
		cr_assert_eq(l.n, 3, "step %zu", step);
		cr_assert_str_eq(l.got[0], "{\"a\":1}");
		cr_assert_str_eq(l.got[1], "{\"b\":2}");
		cr_assert_str_eq(l.got[2], "xyz");
		cr_assert_eq(s.buf.len, 4, "partial line kept");
		kube_line_splitter_release(&s);
	}
}

Test(kube_lines, oversized_line_skipped_once)
{
	struct kube_line_splitter s;
	struct lines l = {0};
	char big[100];

	memset(big, 'x', sizeof(big));
	kube_line_splitter_init(&s, 16);
	kube_line_splitter_feed(&s, "ok\n", 3, collect_line, &l);
	kube_line_splitter_feed(&s, big, 10, collect_line, &l);
	kube_line_splitter_feed(&s, big, sizeof(big), collect_line, &l);
	kube_line_splitter_feed(&s, "tail\nnext\n", 10, collect_line, &l);
	cr_assert_eq(l.oversized, 1);
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(l.got[0], "ok");
	cr_assert_str_eq(l.got[1], "next");
	kube_line_splitter_release(&s);
}

struct evs {
	char types[16][16];
	char rvs[16][32];
	int n;
};

static int collect_event(const char *line, size_t len, void *ud)
{
	struct evs *e = ud;
	struct kube_watch_event ev;

	cr_assert_not_null(line);
	cr_assert_eq(kube_watch_event_parse(line, len, &ev), 0);
	strlcpy_safe(e->types[e->n], kube_event_type_name(ev.type), 16);
	strlcpy_safe(e->rvs[e->n], ev.resource_version, 32);
	cr_assert_not_null(ev.object);
	e->n++;
	kube_watch_event_release(&ev);
	return 0;
}

Test(kube_watch_event, golden_stream_in_order)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_line_splitter s;
	struct evs e = {0};
	static const char *types[] = {"ADDED",	  "MODIFIED", "MODIFIED",
				      "MODIFIED", "MODIFIED", "DELETED",
				      "BOOKMARK", "BOOKMARK"};
	static const char *rvs[] = {"223", "225", "226", "227",
				    "228", "229", "229", "229"};

	load(FIX "watch-pods.jsonl", &sb);
	kube_line_splitter_init(&s, 0);
	/* 7-byte pieces: events straddle every feed */
	for (size_t i = 0; i < sb.len; i += 7)
		kube_line_splitter_feed(&s, sb.buf + i,
					sb.len - i < 7 ? sb.len - i : 7,
					collect_event, &e);
	kube_line_splitter_release(&s);
	cr_assert_eq(e.n, 8);
	for (int i = 0; i < 8; i++) {
		cr_assert_str_eq(e.types[i], types[i], "event %d", i);
		cr_assert_str_eq(e.rvs[i], rvs[i], "event %d", i);
	}
}

Test(kube_watch_event, expired_error_and_garbage)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_watch_event ev = {0};
	struct kube_error err;
	const char *s;

	load(FIX "watch-expired.jsonl", &sb);
	cr_assert_eq(kube_watch_event_parse(sb.buf, sb.len - 1, &ev), 0);
	cr_assert_eq(ev.type, KUBE_EVENT_ERROR);
	s = json_object_to_json_string(ev.object);
	cr_assert_eq(kube_status_parse(s, strlen(s), 410, &err), -ESTALE);
	cr_assert_str_eq(err.reason, "Expired");
	kube_watch_event_release(&ev);
	cr_assert_eq(kube_watch_event_parse("{}", 2, &ev), -EBADMSG);
	cr_assert_eq(kube_watch_event_parse("{\"type\":\"ADDED\"}", 16, &ev),
		     -EBADMSG);
	cr_assert_eq(kube_watch_event_parse("{\"type\":\"NEW\",\"object\":{}}",
					    26, &ev),
		     -EBADMSG);
	cr_assert_eq(kube_watch_event_parse("{\"type\":\"ADDED\",\"object\":{}}"
					    " junk",
					    33, &ev),
		     -EBADMSG);
	cr_assert_null(ev.object, "untouched on failure");
}

Test(kube_pod, golden_oomkilled_pod)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_pod *p = NULL;

	load(FIX "pod-oomkilled.json", &sb);
	cr_assert_eq(kube_pod_parse(sb.buf, sb.len, &p), 0);
	cr_assert_str_eq(p->name, "victim-3");
	cr_assert_str_eq(p->namespace, "default");
	cr_assert_str_eq(p->uid, "8ecffab6-8dbd-4b41-a315-be47b2bdc4d0");
	cr_assert_str_eq(p->node, "node1");
	cr_assert_str_eq(p->resource_version, "225");
	cr_assert_str_eq(p->qos_class, "Burstable");
	cr_assert_str_eq(kube_pod_annotation(p, "oomlens.io/capture"), "true");
	cr_assert_null(kube_pod_annotation(p, "oomlens.io/jvm"));
	cr_assert_eq(p->n_containers, 1);
	cr_assert_str_eq(p->containers[0].name, "c");
	cr_assert_eq(p->containers[0].limit_memory, 16u << 20);
	cr_assert_eq(p->containers[0].request_memory, 16u << 20);
	cr_assert_eq(p->containers[0].restart_count, 1);
	cr_assert_eq(p->containers[0].last_exit_code, 137);
	cr_assert_str_eq(p->containers[0].last_terminated_reason, "OOMKilled");
	cr_assert_str_eq(p->containers[0].container_id,
			 "containerd://"
			 "11111111111111111111111111111111111111111111111111111"
			 "11111111111");
	cr_assert(!p->deleting);
	kube_pod_free(p);
}

Test(kube_pod, list_items_and_bad_objects)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *l, *items;
	struct kube_pod *p = (void *)1;

	load(FIX "pod-list.json", &sb);
	l = json_tokener_parse(sb.buf);
	cr_assert_not_null(l);
	cr_assert(json_object_object_get_ex(l, "items", &items));
	cr_assert_eq(json_object_array_length(items), 2);
	for (size_t i = 0; i < 2; i++) {
		struct kube_pod *q;

		cr_assert_eq(kube_pod_decode(
				     json_object_array_get_idx(items, i), &q),
			     0);
		cr_assert_eq(q->n_containers, 1);
		cr_assert_null(q->containers[0].container_id, "pending pod");
		cr_assert_str_eq(q->phase, "Pending");
		kube_pod_free(q);
	}
	json_object_put(l);
	cr_assert_eq(kube_pod_parse("{\"kind\":\"Status\"}", 17, &p), -EBADMSG);
	cr_assert_eq(kube_pod_parse("{\"metadata\":{}}", 15, &p), -EBADMSG);
	cr_assert_eq(kube_pod_parse("not json", 8, &p), -EBADMSG);
	cr_assert_eq(kube_pod_parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{"
				    "\"containers\":[{\"resources\":{}}]}}",
				    63, &p),
		     -EBADMSG, "container without a name");
	cr_assert_eq(p, (void *)1, "untouched on failure");
}

Test(kube_quantity, suffixes)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{"16Mi", 16ull << 20},	  {"1Gi", 1ull << 30},
		{"500M", 500000000},	  {"1k", 1000},
		{"128974848", 128974848}, {"1e3", 1000},
		{"1.5Gi", 3ull << 29},	  {"100m", 1},
		{"0.5Ki", 512},		  {"+2Ki", 2048},
	};
	static const char *bad[] = {"",	    "Mi",   "1X",  "-1Mi",
				    "1 Mi", "1e99", "1Kii"};
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		cr_assert_eq(kube_parse_quantity(ok[i].s, &v), 0, "%s",
			     ok[i].s);
		cr_assert_eq(v, ok[i].v, "%s", ok[i].s);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_assert_lt(kube_parse_quantity(bad[i], &v), 0, "%s", bad[i]);
}

Test(kube_oomreport, golden_decode_and_round_trip)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o, *enc;
	struct kube_oomreport *r, *r2;

	load(FIX "oomreport.json", &sb);
	o = json_tokener_parse(sb.buf);
	cr_assert_eq(kube_oomreport_decode(o, &r), 0);
	json_object_put(o);
	cr_assert_str_eq(r->name, "victim-1-c-20261130t092200z");
	cr_assert_str_eq(r->pod, "victim-1");
	cr_assert_str_eq(r->comm, "java");
	cr_assert_eq(r->pid, 4242);
	cr_assert_eq(r->anon_rss, 15990784);
	cr_assert_eq(r->limit, 16777216);
	cr_assert_str_eq(r->verdict, "heap-growth");
	cr_assert_null(r->phase, "status was dropped on create");
	enc = kube_oomreport_encode(
		r,
		&(struct kube_owner_ref){"v1", "Pod", "victim-1", "u-1", true});
	cr_assert_not_null(enc);
	cr_assert_str_eq(json_object_get_string(
				 json_object_object_get(enc, "apiVersion")),
			 "oomlens.io/v1alpha1");
	cr_assert_eq(kube_oomreport_decode(enc, &r2), 0);
	cr_assert_str_eq(r2->summary, r->summary);
	cr_assert_eq(r2->usage, r->usage);
	cr_assert_null(r2->workload_kind, "no workload: no spec.workload");
	cr_assert_null(r2->bundle_sha256, "none given: none written");
	cr_assert_null(json_object_object_get(
		json_object_object_get(enc, "spec"), "bundleSize"));
	cr_assert_null(json_object_object_get(
		json_object_object_get(enc, "spec"), "workload"));
	{
		struct kube_oomreport w = *r;
		struct kube_oomreport *r3;
		struct json_object *e2;

		w.workload_kind = "Deployment";
		w.workload_name = "web";
		w.bundle_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b"
				  "822cd15d6c15b0f00a08";
		w.bundle_size = 123456;
		e2 = kube_oomreport_encode(&w, NULL);
		cr_assert_eq(kube_oomreport_decode(e2, &r3), 0);
		cr_assert_str_eq(r3->workload_kind, "Deployment");
		cr_assert_str_eq(r3->workload_name, "web");
		cr_assert_str_eq(r3->bundle_sha256, w.bundle_sha256);
		cr_assert_eq(r3->bundle_size, 123456);
		json_object_put(e2);
		kube_oomreport_free(r3);
	}
	{
		struct json_object *md =
			json_object_object_get(enc, "metadata");
		struct json_object *refs =
			json_object_object_get(md, "ownerReferences");

		cr_assert_str_eq(
			json_object_get_string(json_object_object_get(
				json_object_array_get_idx(refs, 0), "uid")),
			"u-1");
	}
	json_object_put(enc);
	kube_oomreport_free(r);
	kube_oomreport_free(r2);
}

Test(kube_oombundle, base64_round_trip_and_size_check)
{
	unsigned char data[300];
	struct kube_oombundle b = {.name = "b",
				   .namespace = "ns",
				   .data = data,
				   .size = sizeof(data),
				   .sha256 = "ab"};
	struct kube_oombundle *d;
	struct json_object *o, *spec;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7);
	for (size_t n = 0; n < 5; n++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		unsigned char *out;
		size_t len;

		strbuf_init(&sb, 0);
		kube_base64_encode("abcd", n, &sb);
		cr_assert_eq(kube_base64_decode(sb.buf, sb.len, &out, &len), 0);
		cr_assert_eq(len, n);
		cr_assert_eq(memcmp(out, "abcd", n), 0);
		free(out);
	}
	o = kube_oombundle_encode(&b, NULL);
	cr_assert_eq(kube_oombundle_decode(o, &d), 0);
	cr_assert_eq(d->size, sizeof(data));
	cr_assert_eq(memcmp(d->data, data, sizeof(data)), 0);
	cr_assert_str_eq(d->sha256, "ab");
	kube_oombundle_free(d);
	spec = json_object_object_get(o, "spec");
	json_object_object_add(spec, "size", json_object_new_int(3));
	cr_assert_eq(kube_oombundle_decode(o, &d), -EBADMSG);
	json_object_object_add(spec, "data", json_object_new_string("!!!!"));
	cr_assert_eq(kube_oombundle_decode(o, &d), -EBADMSG);
	json_object_put(o);
}

/* The report's label values (agent/src/publish/cluster_publish.c): what
 * the API server's IsValidLabelValue takes, nothing it refuses. */
Test(kube_label, value_rules)
{
	static const char *const ok[] = {
		"",
		"a",
		"web-1",
		"java-heap",
		"A.b_c-9",
		"oomlens-node",
		"0123456789012345678901234567890123456789012345678901234567890a"
		"b",
	};
	static const char *const bad[] = {
		"-a",
		"a-",
		"_a",
		"a.",
		"a b",
		"a/b",
		"é",
		"a\n",
		"0123456789012345678901234567890123456789012345678901234567890a"
		"bc",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_assert(kube_label_value_ok(ok[i]), "%s", ok[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_not(kube_label_value_ok(bad[i]), "%s", bad[i]);
	cr_assert_not(kube_label_value_ok(NULL));
}
