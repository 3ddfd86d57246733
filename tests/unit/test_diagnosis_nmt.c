/* SPDX-License-Identifier: Apache-2.0 */
/* jvm-native from NMT growth (jvm/nmt_history.json) and the JVM's own
 * idea of its limit (VM.info) in the java-heap verdict, on real jcmd
 * captures of tests/fixtures/jvm: a JDK 17 JVM growing 100 threads and
 * 80 MiB of direct buffers, one growing 400 threads, and VM.info of a
 * JVM with -XX:-UseContainerSupport in a 300 MiB cgroup. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/fileio.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "inspect/jvm.h"

#define MiB (1024ull * 1024)
#define KiB 1024ull
#define FIX "tests/fixtures/jvm/"
#define KILL_MS 1796127310000ull

static struct jvm_nmt *nmt_fixture(const char *name)
{
	struct jvm_nmt *n = calloc(1, sizeof(*n));
	struct strbuf sb;
	char path[256];

	strbuf_init(&sb, 1u << 20);
	snprintf(path, sizeof(path), FIX "%s", name);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 1u << 20, &sb), 0, "%s",
		     path);
	cr_assert_eq(jvm_parse_nmt(sb.buf, sb.len, n), 0, "%s", path);
	cr_assert(n->enabled);
	strbuf_release(&sb);
	return n;
}

static size_t cats_of(const struct jvm_nmt *n, struct diag_nmt_cat *c)
{
	size_t k = 0;

	for (size_t i = 0; i < n->n_categories && k < DIAG_MAX_NMT; i++, k++) {
		strlcpy_safe(c[k].name, n->categories[i].name,
			     sizeof(c[k].name));
		c[k].committed_kb = n->categories[i].committed / 1024;
	}
	return k;
}

struct growth {
	size_t n;
	uint64_t nonheap, heap;
	struct diag_nmt_growth g[DIAG_MAX_NMT_GROWTH];
};

static struct growth growth_of(const char *before, const char *after)
{
	struct jvm_nmt *a = nmt_fixture(before), *b = nmt_fixture(after);
	struct diag_nmt_cat ca[DIAG_MAX_NMT], cb[DIAG_MAX_NMT];
	size_t na = cats_of(a, ca), nb = cats_of(b, cb);
	struct growth g;

	g.n = diagnosis_nmt_growth(ca, na, cb, nb, g.g, DIAG_MAX_NMT_GROWTH,
				   &g.nonheap, &g.heap);
	free(a);
	free(b);
	return g;
}

/* Before: Thread 815KB; after: Thread 19341KB and a new Other 81920KB
 * (the direct buffers), Java Heap unchanged at 65180KB. */
Test(diagnosis_nmt, growth_of_real_direct_and_thread_captures)
{
	struct growth g = growth_of("17-grow-direct-nmt-before.txt",
				    "17-grow-direct-nmt-after.txt");

	cr_assert_geq(g.n, 2);
	cr_assert_str_eq(g.g[0].name, "Other");
	cr_assert_eq(g.g[0].from, 0);
	cr_assert_eq(g.g[0].to, 81920 * KiB);
	cr_assert_str_eq(g.g[1].name, "Thread");
	cr_assert_eq(g.g[1].from, 815 * KiB);
	cr_assert_eq(g.g[1].to, 19341 * KiB);
	cr_assert_eq(g.heap, 0);
	/* the totals went 92257KB -> 193258KB; the categories' own rises
	 * add up to 101000KB (KB rounding), all outside the heap */
	cr_assert_eq(g.nonheap, 101000 * KiB);
	for (size_t i = 1; i < g.n; i++)
		cr_assert_geq(g.g[i - 1].to - g.g[i - 1].from,
			      g.g[i].to - g.g[i].from);
}

Test(diagnosis_nmt, growth_of_real_thread_captures)
{
	struct growth g = growth_of("17-grow-threads-nmt-before.txt",
				    "17-grow-threads-nmt-after.txt");

	cr_assert_str_eq(g.g[0].name, "Thread");
	cr_assert_eq(g.g[0].to - g.g[0].from, (71437 - 815) * KiB);
	cr_assert_eq(g.heap, 0);
}

Test(diagnosis_nmt, nothing_grew_nothing_listed)
{
	struct growth g = growth_of("17-grow-direct-nmt-after.txt",
				    "17-grow-direct-nmt-after.txt");

	cr_assert_eq(g.n, 0);
	cr_assert_eq(g.nonheap, 0);
}

/* One history entry as the sidecar writes it (run_jvm.c). */
static struct json_object *entry(const char *fixture, uint64_t t_ms,
				 const char *source)
{
	struct jvm_nmt *n = nmt_fixture(fixture);
	struct json_object *e = json_object_new_object();
	struct json_object *c = json_object_new_object();

	json_object_object_add(e, "t_ms", json_object_new_uint64(t_ms));
	json_object_object_add(e, "source", json_object_new_string(source));
	json_object_object_add(e, "threads", json_object_new_int64(n->threads));
	for (size_t i = 0; i < n->n_categories; i++)
		json_object_object_add(
			c, n->categories[i].name,
			json_object_new_uint64(n->categories[i].committed));
	json_object_object_add(e, "committed", c);
	free(n);
	return e;
}

static void add_json(struct bundle *b, const char *path, struct json_object *o)
{
	const char *s = json_object_to_json_string(o);

	cr_assert_eq(bundle_add(b, path, s, strlen(s), 1), 0);
	json_object_put(o);
}

/* A bundle with the direct-buffer JVM's history (first sight 20 s, the
 * snapshot 2 s before the kill; an entry after the kill that must be
 * ignored) and its first-sight facts with the VM.info of the JVM run
 * with -XX:-UseContainerSupport. */
static struct bundle *direct_bundle(bool with_after_kill)
{
	struct json_object *h = json_object_new_object();
	struct json_object *a = json_object_new_array();
	struct json_object *tl = json_object_new_object();
	struct json_object *jv = json_object_new_array();
	struct json_object *f = json_object_new_object();
	struct jvm_container ct;
	struct strbuf sb;
	struct bundle *b;

	json_object_array_add(a, entry("17-grow-direct-nmt-before.txt",
				       KILL_MS - 20000, "first-sight"));
	json_object_array_add(a, entry("17-grow-direct-nmt-after.txt",
				       KILL_MS - 2000, "snapshot"));
	if (with_after_kill) /* would show no growth at all */
		json_object_array_add(a, entry("17-grow-direct-nmt-before.txt",
					       KILL_MS + 500, "snapshot"));
	json_object_object_add(h, "pid", json_object_new_int(77));
	json_object_object_add(h, "entries", a);
	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, FIX "17-v1-nocontainer-VM.info.txt",
				  1u << 20, &sb),
		     0);
	cr_assert_eq(jvm_parse_container(sb.buf, sb.len, &ct), 0);
	strbuf_release(&sb);
	json_object_object_add(f, "pid", json_object_new_int(77));
	json_object_object_add(f, "t_ms",
			       json_object_new_uint64(KILL_MS - 20000));
	json_object_object_add(f, "limit", json_object_new_uint64(300 * MiB));
	json_object_object_add(f, "container", jvm_container_json(&ct));
	json_object_array_add(jv, f);
	json_object_object_add(tl, "jvms", jv);
	cr_assert_eq(bundle_new("t", &b), 0);
	add_json(b, "processes/77/jvm/nmt_history.json", h);
	add_json(b, "timeline.json", tl);
	return b;
}

static const struct diag_jvm *jvm77(const struct diag_input *in)
{
	for (size_t i = 0; i < in->n_jvms; i++)
		if (in->jvms[i].pid == 77)
			return &in->jvms[i];
	cr_assert_fail("no jvm 77");
	return NULL;
}

Test(diagnosis_nmt, loader_reads_history_and_believed_limit)
{
	struct bundle *b = direct_bundle(true);
	struct diag_input in;
	const struct diag_jvm *j;

	cr_assert_eq(diagnosis_load_bundle(b, NULL, KILL_MS, &in), 0);
	j = jvm77(&in);
	cr_assert(j->have_nmt_growth);
	cr_assert_float_eq(j->nmt_from_age_s, 20.0, 1e-9);
	cr_assert_float_eq(j->nmt_to_age_s, 2.0, 1e-9, "after the kill: out");
	cr_assert_str_eq(j->growth[0].name, "Other");
	cr_assert_eq(j->nmt_nonheap_growth, 101000 * KiB);
	cr_assert_eq(j->threads_from, 14);
	cr_assert_eq(j->threads_to, 114);
	cr_assert(j->have_jvm_limit);
	cr_assert_eq(j->jvm_limit, 24683584 * KiB);
	cr_assert_not(j->jvm_limit_from_container);
	cr_assert_eq(in.notes.n, 0);
	diag_input_release(&in);
	bundle_free(b);
}

/* 99 MiB of non-heap growth in a JVM killed at 150 MiB, its usage having
 * grown linearly: jvm-native naming Other and Thread with their fixes,
 * never native-growth's "profile with heaptrack". */
Test(diagnosis_nmt, non_heap_growth_is_jvm_native_with_the_fix)
{
	struct bundle *b = direct_bundle(false);
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;
	size_t n = 60;

	cr_assert_eq(diagnosis_load_bundle(b, NULL, KILL_MS, &in), 0);
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 150 * MiB;
	in.tl = calloc(n, sizeof(*in.tl));
	in.n_tl = n;
	for (size_t i = 0; i < n; i++) {
		in.tl[i].t = -(double)(n - 1 - i) * 0.5;
		in.tl[i].usage = 50 * MiB + (100 * MiB) * i / (n - 1);
		in.tl[i].nprocs = 1;
	}
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JVM_NATIVE, "%s", d.summary);
	cr_assert_str_eq(v->detail, "Other");
	for (size_t i = 0; i < d.n_verdicts; i++)
		cr_assert_neq(d.verdicts[i].kind, DIAG_NATIVE_GROWTH, "%s",
			      d.summary);
	cr_assert(strstr(v->evidence[0], "grew by 99 MiB (66% of the 150 MiB"),
		  "%s", v->evidence[0]);
	cr_assert(strstr(v->evidence[0], "from 20 s to 2.0 s before"), "%s",
		  v->evidence[0]);
	cr_assert(strstr(v->evidence[1], "Other +80 MiB (0 KiB -> 80 MiB)"),
		  "%s", v->evidence[1]);
	cr_assert(strstr(v->evidence[1], "Thread +18 MiB (815 KiB -> 19 MiB)"),
		  "%s", v->evidence[1]);
	cr_assert(strstr(v->recommend[0], "-XX:MaxDirectMemorySize=40M"), "%s",
		  v->recommend[0]);
	cr_assert(strstr(v->recommend[1], "114 threads"), "%s",
		  v->recommend[1]);
	cr_assert(strstr(v->recommend[1], "-Xss512k"), "%s", v->recommend[1]);
	diag_input_release(&in);
	bundle_free(b);
}

/* The same growth in a 1 GiB container at the kill: 10 % of usage, not
 * the explanation. */
Test(diagnosis_nmt, small_growth_is_not_a_verdict)
{
	struct bundle *b = direct_bundle(false);
	struct diag_input in;
	struct diagnosis d;

	cr_assert_eq(diagnosis_load_bundle(b, NULL, KILL_MS, &in), 0);
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 1024 * MiB;
	diagnosis_run(&in, &d);
	for (size_t i = 0; i < d.n_verdicts; i++)
		cr_assert_neq(d.verdicts[i].kind, DIAG_JVM_NATIVE, "%s",
			      d.summary);
	diag_input_release(&in);
	bundle_free(b);
}

static bool any_line(const struct diag_verdict *v, const char *s, bool reco)
{
	size_t n = reco ? v->n_recommend : v->n_evidence;

	for (size_t i = 0; i < n; i++)
		if (strstr(reco ? v->recommend[i] : v->evidence[i], s))
			return true;
	return false;
}

/* The java-heap kill, by a JVM that believes it has the host's
 * 23.5 GiB (VM.info of the -XX:-UseContainerSupport capture). */
static void heap_input(struct diag_input *in, uint64_t jvm_limit, bool from_ct)
{
	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 300 * MiB;
	in->jvms[0] = (struct diag_jvm){
		.pid = 42,
		.have_flags = true,
		.max_heap = 6028 * MiB,
		.native_baseline = 40 * MiB,
		.limit = 300 * MiB,
		.outgrows = true,
		.heap_outgrows = true,
		.flags_age_s = 20.0,
		.have_heap_rss = true,
		.heap_rss = 220 * MiB,
		.native_rss = 60 * MiB,
		.heap_rss_age_s = 1.0,
		.have_jvm_limit = jvm_limit != 0,
		.jvm_limit = jvm_limit,
		.jvm_limit_from_container = from_ct,
		.nmt_from_age_s = -1,
		.nmt_to_age_s = -1,
		.threads_from = -1,
		.threads_to = -1,
	};
	in->n_jvms = 1;
}

Test(diagnosis_nmt, java_heap_says_the_jvm_sees_no_limit)
{
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;

	heap_input(&in, 24683584 * KiB, false);
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert(any_line(v,
			   "pid 42 believes its memory limit is 24 GiB "
			   "(physical memory: it sees no container limit) but "
			   "the cgroup's limit is 300 MiB",
			   false),
		  "%s", v->evidence[v->n_evidence - 1]);
	cr_assert(any_line(v, "UseContainerSupport", true));
	/* a percentage of 24 GiB would not fit: -Xmx alone */
	cr_assert(any_line(v, "not MaxRAMPercentage", true));
	cr_assert_not(any_line(v, "-XX:MaxRAMPercentage=", true));
	diag_input_release(&in);
}

Test(diagnosis_nmt, java_heap_says_the_jvm_read_another_limit)
{
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;

	heap_input(&in, 1024 * MiB, true);
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert(any_line(v,
			   "believes its memory limit is 1.0 GiB (the "
			   "container limit it read)",
			   false));
	cr_assert(any_line(v, "another cgroup's limit", true));
	diag_input_release(&in);
}

/* The JVM saw its 300 MiB (VM.info printed 307200 k): nothing to say. */
Test(diagnosis_nmt, java_heap_quiet_when_the_jvm_sees_the_limit)
{
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;

	heap_input(&in, 307200 * KiB, true);
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert_not(any_line(v, "believes", false));
	cr_assert_not(any_line(v, "UseContainerSupport", true));
	cr_assert(any_line(v, "-XX:MaxRAMPercentage=", true));
	diag_input_release(&in);
}
