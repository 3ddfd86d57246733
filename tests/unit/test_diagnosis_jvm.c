/* SPDX-License-Identifier: Apache-2.0 */
/* The verdicts from the sidecar's JVM facts: a JVM whose growth is its
 * heap is java-heap with a computed -Xmx, never native-growth; every
 * ledger line carries its data's age. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/runtimes/jvm.h"
#include "forensics/runtimes/registry.h"

#define MiB (1024ull * 1024)

/* The kill: -Xmx1g in 300 MiB, growing 16 MiB/s linearly for
 * 20 s; the last snapshot 3 s before the kill saw 200 MiB of heap RSS
 * and 60 MiB native. */
static void jvm_input(struct diag_input *in, bool with_facts)
{
	size_t n = 80;

	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 300 * MiB;
	in->tl = calloc(n, sizeof(*in->tl));
	in->n_tl = n;
	for (size_t i = 0; i < n; i++) {
		in->tl[i].t = -(double)(n - 1 - i) * 0.25;
		in->tl[i].usage = 60 * MiB + (240 * MiB) * i / (n - 1);
		in->tl[i].nprocs = 1;
	}
	in->have_snapshot = true;
	in->snapshot_age_s = 3.0;
	if (!with_facts)
		return;
	in->jvms[0] = (struct diag_jvm){
		.pid = 42,
		.have_flags = true,
		.max_heap = 1024 * MiB,
		.native_baseline = 55 * MiB,
		.limit = 300 * MiB,
		.outgrows = true,
		.heap_outgrows = true,
		.flags_age_s = 20.0,
		.have_heap_rss = true,
		.heap_rss = 200 * MiB,
		.native_rss = 60 * MiB,
		.heap_rss_age_s = 3.0,
		.have_rss = true,
		.rss_last = 296 * MiB,
		.rss_last_age_s = 0.1,
		.rss_at_snapshot = 260 * MiB,
	};
	in->n_jvms = 1;
}

static bool has_kind(const struct diagnosis *d, enum diag_kind k)
{
	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == k)
			return true;
	return false;
}

Test(diagnosis_jvm, without_facts_the_growth_looks_native)
{
	struct diag_input in;
	struct diagnosis d;

	jvm_input(&in, false);
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	diag_input_release(&in);
}

Test(diagnosis_jvm, heap_growth_is_java_heap_with_a_computed_xmx)
{
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;

	jvm_input(&in, true);
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert_not(has_kind(&d, DIAG_NATIVE_GROWTH),
		      "never heaptrack for a JVM heap");
	/* 300 MiB − 60 MiB native − 30 MiB headroom = 210 → 208 (16 MiB) */
	cr_assert(strstr(v->recommend[0], "-Xmx208M"), "%s", v->recommend[0]);
	cr_assert(strstr(v->recommend[0], "MaxRAMPercentage=69"), "%s",
		  v->recommend[0]);
	cr_assert(strstr(v->evidence[0], "configured to outgrow"), "%s",
		  v->evidence[0]);
	cr_assert(strstr(v->evidence[1], "3.0 s before the kill"), "%s",
		  v->evidence[1]);
	cr_assert(strstr(v->evidence[2], "grew by 36 MiB"), "%s",
		  v->evidence[2]);
	diag_input_release(&in);
}

Test(diagnosis_jvm, a_native_heavy_jvm_is_not_called_java_heap)
{
	struct diag_input in;
	struct diagnosis d;

	jvm_input(&in, true);
	in.jvms[0].heap_outgrows = false;
	in.jvms[0].heap_rss = 40 * MiB;
	in.jvms[0].native_rss = 220 * MiB;
	diagnosis_run(&in, &d);
	cr_assert_not(has_kind(&d, DIAG_JAVA_HEAP), "%s", d.summary);
	diag_input_release(&in);
}

Test(diagnosis_jvm, every_ledger_line_has_its_age)
{
	struct diag_input in;
	struct diagnosis d;
	bool snap_part = false;

	jvm_input(&in, true);
	in.have_stats = true;
	in.anon = 290 * MiB;
	in.file = 10 * MiB;
	diagnosis_run(&in, &d);
	for (size_t i = 0; i < d.n_parts; i++) {
		const struct diag_part *p = &d.parts[i];

		cr_assert(p->age_s >= 0, "%s", p->name);
		if (streq(p->name, "other anonymous")) {
			snap_part = true;
			cr_assert_float_eq(p->age_s, 3.0, 1e-9);
			cr_assert(strstr(p->source, "(3.0 s before the kill)"),
				  "%s", p->source);
		}
		if (streq(p->name, "file cache"))
			cr_assert_float_eq(p->age_s, 0.0, 1e-9,
					   "memcg stats: at the kill");
	}
	cr_assert(snap_part);
	diag_input_release(&in);
}

Test(diagnosis_jvm, heap_rss_stands_in_for_heap_info_in_the_ledger)
{
	struct diag_input in;
	struct diagnosis d;
	uint64_t heap = 0;

	jvm_input(&in, true);
	in.have_stats = true;
	in.anon = 290 * MiB;
	in.procs = calloc(1, sizeof(*in.procs));
	in.n_procs = 1;
	in.procs[0].pid = 42; /* no GC.heap_info: the attach did not answer */
	diagnosis_run(&in, &d);
	for (size_t i = 0; i < d.n_parts; i++)
		if (streq(d.parts[i].name, "jvm heap"))
			heap = d.parts[i].bytes;
	cr_assert_eq(heap, 200 * MiB);
	diag_input_release(&in);
}

/* ---- the class histogram (jvm/class_histogram.json) ---- */

/* As the sidecar wrote it for HeapHog 64 (JDK 17), cut to three rows. */
static const char histo_json[] =
	"{\"pid\":42,\"t_ms\":1796226280101,\"trigger\":\"threshold-80\","
	"\"taken\":true,\"heap_used\":135475200,\"estimate_ms\":536,"
	"\"budget_ms\":1000,\"wall_us\":5662,\"pause_us\":5314,"
	"\"safepoints\":1,\"reply_bytes\":21310,\"truncated\":false,"
	"\"classes\":243,\"total_instances\":25027,\"total_bytes\":68242152,"
	"\"total_known\":true,\"top\":["
	"{\"class\":\"[B\",\"module\":\"java.base@17.0.15\",\"instances\":"
	"7336,\"bytes\":67445088},"
	"{\"class\":\"java.lang.Class\",\"module\":\"java.base@17.0.15\","
	"\"instances\":1431,\"bytes\":176384},"
	"{\"class\":\"java.lang.String\",\"module\":\"java.base@17.0.15\","
	"\"instances\":7185,\"bytes\":172440}]}";

static struct json_object *parse_json(const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	cr_assert_not_null(o, "%s", s);
	return o;
}

Test(diagnosis_jvm, histogram_loads_with_its_figures)
{
	struct json_object *o = parse_json(histo_json);
	struct jget_notes notes = {0};
	struct jvm_rt_histo h;

	cr_assert_eq(jvm_rt_histo_from_json(o, 1796226283101ull, &notes, &h),
		     0);
	cr_assert_eq(notes.n, 0, "%s", notes.text[0]);
	cr_assert(h.taken);
	cr_assert_eq(h.pid, 42);
	cr_assert_str_eq(h.trigger, "threshold-80");
	cr_assert_float_eq(h.age_s, 3.0, 1e-9);
	cr_assert(h.have_pause);
	cr_assert_eq(h.pause_us, 5314);
	cr_assert_eq(h.wall_us, 5662);
	cr_assert_eq(h.classes, 243);
	cr_assert_eq(h.total_bytes, 68242152);
	cr_assert(h.total_known);
	cr_assert_eq(h.n, 3);
	cr_assert_str_eq(h.top[0].name, "[B");
	cr_assert_eq(h.top[0].bytes, 67445088);
	cr_assert_eq(h.top[2].instances, 7185);
	json_object_put(o);
}

struct wrong_case {
	char json[400];
	int r;	     /* what the loader returns */
	size_t rows; /* rows kept */
	bool notes;  /* something was noted */
	char first[48];
};

ParameterizedTestParameters(diagnosis_jvm, histogram_of_wrong_types)
{
	static struct wrong_case cases[] = {
		{"[1,2]", -ENOENT, 0, false, ""},
		{"{\"taken\":\"true\"}", -EBADMSG, 0, true, ""},
		{"{\"pid\":1}", -EBADMSG, 0, false, ""},
		{"{\"taken\":false,\"why\":\"heap too "
		 "big\",\"top\":[{\"class\":"
		 "\"[B\",\"instances\":1,\"bytes\":1}]}",
		 0, 0, false, ""},
		{"{\"taken\":true,\"pid\":\"42\",\"total_bytes\":100,\"top\":"
		 "{\"class\":\"[B\"}}",
		 0, 0, true, ""},
		{"{\"taken\":true,\"total_bytes\":100,\"top\":[{\"class\":"
		 "\"A\","
		 "\"instances\":1,\"bytes\":\"50\"},{\"class\":\"B\","
		 "\"instances\":1,\"bytes\":40}]}",
		 0, 1, true, "B"},
		{"{\"taken\":true,\"total_bytes\":100,\"top\":[{\"class\":"
		 "\"A\","
		 "\"instances\":1,\"bytes\":101},{\"class\":\"B\","
		 "\"instances\":"
		 "-1,\"bytes\":40},{\"instances\":1,\"bytes\":30},"
		 "{\"class\":\"\",\"instances\":1,\"bytes\":20},"
		 "{\"class\":\"C\",\"instances\":2,\"bytes\":10}]}",
		 0, 1, true, "C"},
		{"{\"taken\":true,\"total_bytes\":100,\"top\":[{\"class\":"
		 "\"A\","
		 "\"instances\":1,\"bytes\":10},{\"class\":\"B\",\"instances\":"
		 "1,\"bytes\":20}]}",
		 0, 1, true, "A"},
		{"{\"taken\":true,\"total_bytes\":100,\"top\":[{\"class\":"
		 "\"E\\u001b[2J\\u202e\",\"instances\":1,\"bytes\":10}]}",
		 0, 1, false, "E?[2J???"},
		{"{\"taken\":true,\"total_bytes\":100,\"wall_us\":-1,\"pause_"
		 "us\":"
		 "1.5,\"t_ms\":\"soon\",\"trigger\":7,\"top\":[]}",
		 0, 0, true, ""},
	};

	return cr_make_param_array(struct wrong_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct wrong_case *c, diagnosis_jvm, histogram_of_wrong_types)
{
	struct json_object *o = parse_json(c->json);
	struct jget_notes notes = {0};
	struct jvm_rt_histo h;

	memset(&h, 0x5a, sizeof(h));
	cr_assert_eq(jvm_rt_histo_from_json(o, 0, &notes, &h), c->r, "%s",
		     c->json);
	cr_assert_eq(h.n, c->rows, "%s", c->json);
	cr_assert_eq(notes.n > 0, c->notes, "%s: %zu notes (%s)", c->json,
		     notes.n, notes.text[0]);
	if (c->rows)
		cr_assert_str_eq(h.top[0].name, c->first);
	cr_assert_lt(h.age_s, 0);
	if (strstr(c->json, "wall_us\":-1")) {
		cr_assert_not(h.have_wall);
		cr_assert_not(h.have_pause);
		cr_assert_str_eq(h.trigger, "");
	}
	json_object_put(o);
}

/* From a bundle: the java-heap verdict names the top class and its share
 * of the live heap, and says where to look next. */
Test(diagnosis_jvm, java_heap_names_the_top_class)
{
	static const char status[] = "Name:\tjava\nPid:\t42\nPPid:\t1\n"
				     "RssAnon:\t280000 kB\n";
	struct diag_input in;
	struct diagnosis d;
	struct bundle *b;
	const struct diag_verdict *v;
	bool ev = false, reco = false;

	cr_assert_eq(bundle_new("t", &b), 0);
	bundle_add(b, "processes/42/status", status, sizeof(status) - 1, 1);
	bundle_add(b, "processes/42/jvm/class_histogram.json", histo_json,
		   sizeof(histo_json) - 1, 1);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 1796226283101ull, &in), 0);
	bundle_free(b);
	cr_assert_not_null(in.rt_data[diag_runtime_index("jvm")]);
	/* the sidecar's facts of the kill (jvm_input) */
	{
		struct diag_input facts;

		jvm_input(&facts, true);
		in.have_usage = true;
		in.usage_bytes = in.limit_bytes = facts.usage_bytes;
		free(in.tl);
		in.tl = facts.tl;
		in.n_tl = facts.n_tl;
		facts.tl = NULL;
		in.jvms[0] = facts.jvms[0];
		in.n_jvms = 1;
		diag_input_release(&facts);
	}
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JAVA_HEAP, "%s", d.summary);
	for (size_t i = 0; i < v->n_evidence; i++)
		ev = ev ||
		     (strstr(v->evidence[i],
			     "class histogram pid 42 (threshold-80, 3.0 s "
			     "before the kill): the top class is byte[] "
			     "([B), 64 MiB in 7336 instances, 99% of the "
			     "65 MiB of live objects") &&
		      strstr(v->evidence[i], "paused 5 ms"));
	for (size_t i = 0; i < v->n_recommend; i++)
		reco = reco || strstr(v->recommend[i],
				      "find what holds the byte[] instances");
	cr_assert(ev, "%s", v->evidence[v->n_evidence - 1]);
	cr_assert(reco, "%s", v->recommend[v->n_recommend - 1]);
	diag_input_release(&in);
}

/* A histogram not taken adds nothing to the verdict. */
Test(diagnosis_jvm, a_histogram_not_taken_names_no_class)
{
	static const char skipped[] =
		"{\"pid\":42,\"taken\":false,\"why\":\"heap 900 MiB used\"}";
	static const char status[] = "Name:\tjava\nPid:\t42\nPPid:\t1\n";
	struct diag_input in;
	struct diagnosis d;
	struct bundle *b;

	cr_assert_eq(bundle_new("t", &b), 0);
	bundle_add(b, "processes/42/status", status, sizeof(status) - 1, 1);
	bundle_add(b, "processes/42/jvm/class_histogram.json", skipped,
		   sizeof(skipped) - 1, 1);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 0, &in), 0);
	bundle_free(b);
	{
		struct diag_input facts;

		jvm_input(&facts, true);
		in.have_usage = true;
		in.usage_bytes = in.limit_bytes = facts.usage_bytes;
		in.jvms[0] = facts.jvms[0];
		in.n_jvms = 1;
		diag_input_release(&facts);
	}
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_JAVA_HEAP, "%s", d.summary);
	for (size_t i = 0; i < d.verdicts[0].n_evidence; i++)
		cr_assert_null(
			strstr(d.verdicts[0].evidence[i], "class histogram"));
	diag_input_release(&in);
}
