/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <json-c/json.h>

#include "forensics/bundle.h"
#include "forensics/report.h"
#include "base/strbuf.h"

static const char diag[] =
	"{\"verdict\":\"glibc-retention\",\"summary\":\"glibc-retention, 201 "
	"MiB of the 256 MiB limit\",\"usage_bytes\":268435456,\"limit_bytes\":"
	"268435456,\"unreconciled_bytes\":0,\"ledger\":[{\"name\":\"glibc "
	"retention\",\"bytes\":210763776,\"source\":\"pid 7 <arenas>\","
	"\"estimate\":false},{\"name\":\"other anonymous\",\"bytes\":57671680,"
	"\"source\":\"rest\",\"estimate\":true}],\"verdicts\":[{\"verdict\":"
	"\"glibc-retention\",\"confidence\":94,\"bytes\":210763776,"
	"\"evidence\":"
	"[\"glibc keeps 201 "
	"MiB\"],\"recommendations\":[\"MALLOC_ARENA_MAX=2\"]},"
	"{\"verdict\":\"spike\",\"confidence\":45,\"bytes\":1,\"evidence\":"
	"[\"went up\"],\"recommendations\":[]}]}";

static const char timeline[] =
	"{\"samples\":[{\"t_ms\":1000,\"usage\":10485760,\"limit\":268435456,"
	"\"procs\":[{\"pid\":7,\"anon_kb\":9000,\"file_kb\":100,\"shmem_kb\":0}"
	"]},"
	"{\"t_ms\":2000,\"usage\":209715200,\"limit\":268435456,\"procs\":"
	"[{\"pid\":7,\"anon_kb\":200000,\"file_kb\":100,\"shmem_kb\":0}]}],"
	"\"snapshots\":[{\"t_ms\":1500,\"reason\":\"threshold-80\"}]}";

static const char pmap[] =
	"7:   ./app --token ***\n"
	"         Address Perm   Offset Device   Inode   Size    Rss Mapping\n"
	"    7f0000000000 rw-p 00000000  00:00       0  65536  53000 \n"
	"    5600000000 rw-p 00000000  00:00       0    132    100 [heap]\n"
	"    7f1000000000 r-xp 00000000  fe:00     123   1000    900 libc "
	"with space.so\n"
	"                                             ====== ====== \n"
	"                                              66668  54000 KB \n";

static const char arenas[] =
	"{\"heaps\":[{\"start\":\"0x7f0000000000\",\"rss_kb\":53000}]}";

static struct bundle *make(void)
{
	struct bundle *b;
	struct json_object *m, *victims, *v;

	cr_assert_eq(bundle_new("oom-1", &b), 0);
	m = bundle_manifest(b);
	json_object_object_add(m, "cgroup", json_object_new_string("/a<b>"));
	json_object_object_add(m, "killed_at_ms", json_object_new_int64(2500));
	victims = json_object_new_array();
	v = json_object_new_object();
	json_object_object_add(v, "pid", json_object_new_int(7));
	json_object_object_add(v, "comm",
			       json_object_new_string("x\"<script>"));
	json_object_array_add(victims, v);
	json_object_object_add(m, "victims", victims);
	bundle_add(b, "diagnosis.json", diag, sizeof(diag) - 1, 0);
	bundle_add(b, "timeline.json", timeline, sizeof(timeline) - 1, 1);
	bundle_add(b, "processes/7/pmap.txt", pmap, sizeof(pmap) - 1, 3);
	bundle_add(b, "processes/7/arenas.json", arenas, sizeof(arenas) - 1, 2);
	bundle_add(b, "kernel/oom.txt", "Killed process 7 (x<y)", 22, 0);
	return b;
}

Test(report, html_has_every_section_and_escapes_names)
{
	struct bundle *b = make();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "x&quot;&lt;script&gt;"));
	cr_assert_null(strstr(out.buf, "<script"), "no script, not even "
						   "the victim's name");
	cr_assert(strstr(out.buf, "/a&lt;b&gt;"));
	cr_assert(strstr(out.buf, "confidence 94%"));
	cr_assert(strstr(out.buf, "MALLOC_ARENA_MAX=2"));
	cr_assert(strstr(out.buf, "201 MiB")); /* the ledger's part */
	cr_assert(strstr(out.buf, "pid 7 &lt;arenas&gt;"));
	cr_assert(strstr(out.buf, "(estimate)"));
	cr_assert(strstr(out.buf, "Timeline: the last 2 s"));
	cr_assert(strstr(out.buf, "snapshot threshold-80"));
	/* the arena heap is named, the file name with a space kept whole */
	cr_assert(strstr(out.buf, "[glibc arena heap]"));
	cr_assert(strstr(out.buf, "libc with space.so"));
	cr_assert(strstr(out.buf, "52 MiB")); /* 53000 kB RSS */
	cr_assert(strstr(out.buf, "Killed process 7 (x&lt;y)"));
	cr_assert(strstr(out.buf, "also: <b>spike</b>"));
	cr_assert(strstr(out.buf, "Content-Security-Policy"));
	bundle_free(b);
}

Test(report, text_summary_without_colour)
{
	struct bundle *b = make();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "verdict glibc-retention (confidence 94%)"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "  > MALLOC_ARENA_MAX=2"));
	cr_assert(strstr(out.buf, "glibc retention"));
	cr_assert_null(strstr(out.buf, "\033["));
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, true, &out), 0);
	cr_assert(strstr(out.buf, "\033[1m"));
	bundle_free(b);
}

Test(report, empty_bundle_still_renders)
{
	struct bundle *b;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	cr_assert_eq(bundle_new("bare", &b), 0);
	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "no diagnosis"));
	cr_assert(strstr(out.buf, "No flight recorder timeline"));
	cr_assert(strstr(out.buf, "</html>"));
	bundle_free(b);
}

/* No sidecar: the timeline card plots the agent's own cgroup samples up to
 * the kill (agent/timeline.json), the series of the cgroup whose limit was
 * hit; a sample after the kill is left out. */
static const char agent_tl[] =
	"{\"schema\":\"oomlens.io/agent-timeline/v1\",\"cgroups\":["
	"{\"cgroup\":\"/pod/ctr\",\"task_memcg\":true,\"oom_memcg\":false,"
	"\"samples\":[{\"t_ms\":1000,\"usage\":1,\"limit\":9}]},"
	"{\"cgroup\":\"/pod\",\"task_memcg\":false,\"oom_memcg\":true,"
	"\"samples\":[{\"t_ms\":5500,\"usage\":4194304,\"limit\":67108864},"
	"{\"t_ms\":6500,\"usage\":33554432,\"limit\":67108864},"
	"{\"t_ms\":7500,\"usage\":62914560,\"limit\":67108864},"
	"{\"t_ms\":8500,\"usage\":0,\"limit\":67108864}]}]}";

Test(report, agent_timeline_is_plotted_without_a_sidecar)
{
	struct bundle *b;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const char *pts;
	size_t n = 0;

	cr_assert_eq(bundle_new("oom-2", &b), 0);
	json_object_object_add(bundle_manifest(b), "killed_at_ms",
			       json_object_new_int64(8000));
	bundle_add(b, "agent/timeline.json", agent_tl, sizeof(agent_tl) - 1, 1);
	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert_null(strstr(out.buf, "No flight recorder timeline"));
	/* the oom_memcg series (from 2.5 s before the kill), not the
	 * victim's (7 s) */
	cr_assert(strstr(out.buf, "Timeline: the last 2 s"), "%s", out.buf);
	cr_assert(strstr(out.buf, "the agent's 1 Hz samples"));
	pts = strstr(out.buf, "<polyline fill=\"none\"");
	cr_assert_not_null(pts);
	/* three points: the one after the kill is not drawn */
	pts = strstr(pts, "points=\"") + strlen("points=\"");
	for (const char *c = pts; *c && *c != '"'; c++)
		n += *c == ',';
	cr_assert_eq(n, 3, "%.80s", pts);
	bundle_free(b);
}

/* ---- every field the agent's loader, report.html and `show` read, given
 * every wrong JSON type (issue: a wrong type aborted the agent) -------- */

#include "forensics/diagnosis.h"

enum { LOADER = 1, HTML = 2, TEXT = 4 };
enum kind { K_U64, K_INT, K_STR, K_ARR, K_OBJ, K_BOOL, K_LIMIT };

struct field {
	const char *file; /* "manifest" or a bundle path */
	const char *path; /* keys and indexes, '.'-separated */
	enum kind kind;
	unsigned readers;
};

static const struct field fields[] = {
	{"manifest", "cgroup_state_at_notification", K_OBJ, LOADER},
	{"manifest", "cgroup_state_at_notification.usage_bytes", K_U64, LOADER},
	{"manifest", "cgroup_state_at_notification.limit_bytes", K_LIMIT,
	 LOADER},
	{"manifest", "cgroup_state", K_OBJ, LOADER},
	{"manifest", "cgroup_mode", K_STR, LOADER},
	{"manifest", "victims", K_ARR, HTML | TEXT},
	{"manifest", "victims.0.comm", K_STR, HTML | TEXT},
	{"manifest", "victims.0.pid", K_INT, HTML | TEXT},
	{"manifest", "victims.0.anon_rss_kb", K_U64, TEXT},
	{"manifest", "pod", K_OBJ, HTML | TEXT},
	{"manifest", "pod.namespace", K_STR, HTML | TEXT},
	{"manifest", "pod.name", K_STR, HTML | TEXT},
	{"manifest", "container", K_STR, HTML | TEXT},
	{"manifest", "cgroup", K_STR, HTML | TEXT},
	{"manifest", "captured_at", K_STR, HTML | TEXT},
	{"manifest", "node", K_STR, HTML | TEXT},
	{"manifest", "id", K_STR, TEXT},
	{"manifest", "killed_at_ms", K_U64, HTML},
	{"diagnosis.json", "verdict", K_STR, HTML},
	{"diagnosis.json", "summary", K_STR, HTML | TEXT},
	{"diagnosis.json", "usage_bytes", K_U64, HTML | TEXT},
	{"diagnosis.json", "usage_source", K_STR, HTML | TEXT},
	{"diagnosis.json", "limit_bytes", K_U64, HTML | TEXT},
	{"diagnosis.json", "unreconciled_bytes", K_U64, HTML},
	{"diagnosis.json", "ledger", K_ARR, HTML | TEXT},
	{"diagnosis.json", "ledger.0.name", K_STR, HTML | TEXT},
	{"diagnosis.json", "ledger.0.bytes", K_U64, HTML | TEXT},
	{"diagnosis.json", "ledger.0.source", K_STR, HTML | TEXT},
	{"diagnosis.json", "ledger.0.estimate", K_BOOL, HTML | TEXT},
	{"diagnosis.json", "verdicts", K_ARR, HTML | TEXT},
	{"diagnosis.json", "verdicts.0.verdict", K_STR, HTML | TEXT},
	{"diagnosis.json", "verdicts.0.detail", K_STR, HTML},
	{"diagnosis.json", "verdicts.0.confidence", K_INT, HTML | TEXT},
	{"diagnosis.json", "verdicts.0.evidence", K_ARR, HTML | TEXT},
	{"diagnosis.json", "verdicts.0.evidence.0", K_STR, HTML | TEXT},
	{"diagnosis.json", "verdicts.0.recommendations", K_ARR, HTML | TEXT},
	{"diagnosis.json", "verdicts.0.recommendations.0", K_STR, HTML | TEXT},
	{"diagnosis.json", "verdicts.1.verdict", K_STR, HTML},
	{"diagnosis.json", "verdicts.1.confidence", K_INT, HTML},
	{"diagnosis.json", "verdicts.1.evidence", K_ARR, HTML},
	{"timeline.json", "samples", K_ARR, LOADER | HTML},
	{"timeline.json", "samples.0.t_ms", K_U64, LOADER | HTML},
	{"timeline.json", "samples.0.usage", K_U64, LOADER | HTML},
	{"timeline.json", "samples.0.limit", K_U64, LOADER | HTML},
	{"timeline.json", "samples.0.procs", K_ARR, LOADER | HTML},
	{"timeline.json", "samples.0.procs.0.anon_kb", K_U64, LOADER | HTML},
	{"timeline.json", "samples.0.procs.0.pid", K_INT, HTML},
	{"timeline.json", "samples.0.procs.0.file_kb", K_U64, HTML},
	{"timeline.json", "samples.0.procs.0.shmem_kb", K_U64, HTML},
	{"timeline.json", "trims", K_ARR, LOADER},
	{"timeline.json", "trims.0.pid", K_INT, LOADER},
	{"timeline.json", "trims.0.rss_before", K_U64, LOADER},
	{"timeline.json", "trims.0.rss_after", K_U64, LOADER},
	{"timeline.json", "snapshots", K_ARR, LOADER | HTML},
	{"timeline.json", "snapshots.0.t_ms", K_U64, LOADER | HTML},
	{"timeline.json", "snapshots.0.reason", K_STR, HTML},
	{"processes/7/arenas.json", "main_heap", K_OBJ, LOADER | HTML},
	{"processes/7/arenas.json", "main_heap.rss_kb", K_U64, LOADER | HTML},
	{"processes/7/arenas.json", "arena_rss_kb", K_U64, LOADER | HTML},
	{"processes/7/arenas.json", "arena_heaps", K_U64, LOADER | HTML},
	{"processes/7/arenas.json", "heaps", K_ARR, HTML},
	{"processes/7/arenas.json", "heaps.0.start", K_STR, HTML},
	{"processes/7/classes.json", "thread_stack", K_OBJ, LOADER},
	{"processes/7/classes.json", "thread_stack.rss_kb", K_U64, LOADER},
	{"processes/7/classes.json", "stack.rss_kb", K_U64, LOADER},
	{"processes/7/allocator.json", "in_use_bytes", K_U64, LOADER},
	{"processes/7/allocator.json", "system_bytes", K_U64, LOADER},
	{"processes/7/allocator.json", "mmap_bytes", K_U64, LOADER},
	{"processes/7/trim.json", "rss_before", K_U64, LOADER},
	{"processes/7/trim.json", "rss_after", K_U64, LOADER},
	{"processes/7/snapshot.json", "pid", K_INT, HTML},
	{"processes/7/snapshot.json", "name", K_STR, HTML},
	{"processes/7/snapshot.json", "rss_kb", K_U64, HTML},
};

static const struct {
	const char *name, *json;
} wrong_values[] = {
	{"object", "{\"x\":1}"}, {"array", "[1]"},   {"string", "\"12\""},
	{"number", "12"},	 {"double", "1.5"},  {"bool", "true"},
	{"null", "null"},	 {"negative", "-5"},
};

/* Whether the reader must say it dropped value for a field of kind k. */
static bool must_note(enum kind k, const char *value)
{
	static const char *const right[] = {
		[K_U64] = "number",	     [K_INT] = "number negative",
		[K_STR] = "string",	     [K_ARR] = "array",
		[K_OBJ] = "object",	     [K_BOOL] = "bool",
		[K_LIMIT] = "number string",
	};

	if (!strcmp(value, "null")) /* null is absent, by design */
		return false;
	for (const char *r = right[k]; *r;) {
		size_t n = strcspn(r, " ");

		if (n == strlen(value) && !strncmp(r, value, n))
			return false;
		r += n + (r[n] == ' ');
	}
	return true;
}

static const char base_manifest[] =
	"{\"id\":\"oom-t\",\"cgroup\":\"/t\",\"node\":\"n\",\"pod\":"
	"{\"namespace\":\"ns\",\"name\":\"p\",\"uid\":\"u\"},\"container\":"
	"\"c\","
	"\"captured_at\":\"2026-12-01T00:00:00Z\",\"killed_at_ms\":3000,"
	"\"cgroup_mode\":\"v1\",\"victims\":[{\"pid\":7,\"comm\":\"app\","
	"\"anon_rss_kb\":1000}],\"cgroup_state_at_notification\":"
	"{\"usage_bytes\":268435456,\"limit_bytes\":268435456},"
	"\"cgroup_state\":{\"peak_bytes\":268435456,\"limit_bytes\":"
	"268435456}}";

static const char base_timeline[] =
	"{\"samples\":[{\"t_ms\":1000,\"usage\":10485760,\"limit\":268435456,"
	"\"procs\":[{\"pid\":7,\"anon_kb\":9000,\"file_kb\":100,\"shmem_kb\":0}"
	"]},{\"t_ms\":2000,\"usage\":209715200,\"limit\":268435456,\"procs\":"
	"[{\"pid\":7,\"anon_kb\":200000,\"file_kb\":100,\"shmem_kb\":0}]}],"
	"\"snapshots\":[{\"t_ms\":1500,\"reason\":\"threshold-80\"}],"
	"\"trims\":[{\"pid\":8,\"rss_before\":100,\"rss_after\":50}]}";

static const struct {
	const char *path, *json;
} base_files[] = {
	{"diagnosis.json", diag},
	{"timeline.json", base_timeline},
	{"processes/7/arenas.json",
	 "{\"main_heap\":{\"rss_kb\":100},\"arena_rss_kb\":53000,"
	 "\"arena_heaps\":1,\"heaps\":[{\"start\":\"0x7f0000000000\","
	 "\"rss_kb\":53000}]}"},
	{"processes/7/classes.json",
	 "{\"thread_stack\":{\"rss_kb\":10},\"stack\":{\"rss_kb\":5}}"},
	{"processes/7/allocator.json",
	 "{\"in_use_bytes\":1000,\"system_bytes\":2000,\"mmap_bytes\":0}"},
	{"processes/7/trim.json", "{\"rss_before\":1000,\"rss_after\":500}"},
	{"processes/7/snapshot.json",
	 "{\"pid\":7,\"name\":\"app\",\"rss_kb\":9000}"},
};

/* Puts value at path ("a.0.b") inside o; the path's parents exist. */
static void put_at(struct json_object *o, const char *path,
		   struct json_object *value)
{
	char buf[128], *key = buf, *dot;

	snprintf(buf, sizeof(buf), "%s", path);
	while ((dot = strchr(key, '.'))) {
		*dot = '\0';
		o = json_object_is_type(o, json_type_array)
			    ? json_object_array_get_idx(o, strtoul(key, 0, 10))
			    : json_object_object_get(o, key);
		cr_assert_not_null(o, "%s", path);
		key = dot + 1;
	}
	if (json_object_is_type(o, json_type_array))
		json_object_array_put_idx(o, strtoul(key, 0, 10), value);
	else
		json_object_object_add(o, key, value);
}

static struct bundle *hostile_bundle(const struct field *f, const char *val)
{
	struct bundle *b;
	struct json_object *o;

	cr_assert_eq(bundle_new("oom-t", &b), 0);
	o = json_tokener_parse(base_manifest);
	if (!strcmp(f->file, "manifest"))
		put_at(o, f->path, json_tokener_parse(val));
	json_object_object_foreach (o, k, v)
		json_object_object_add(bundle_manifest(b), k,
				       json_object_get(v));
	json_object_put(o);
	bundle_add(b, "processes/7/status", "Name:\tapp\nPid:\t7\n", 17, 2);
	bundle_add(b, "processes/8/status", "Name:\tsh\nPid:\t8\n", 16, 2);
	bundle_add(b, "processes/7/pmap.txt", pmap, sizeof(pmap) - 1, 3);
	for (size_t i = 0; i < ARRAY_SIZE(base_files); i++) {
		o = json_tokener_parse(base_files[i].json);
		cr_assert_not_null(o, "%s", base_files[i].path);
		if (!strcmp(f->file, base_files[i].path))
			put_at(o, f->path, json_tokener_parse(val));
		cr_assert_eq(bundle_add_json(b, base_files[i].path, o, 1), 0);
		json_object_put(o);
	}
	return b;
}

/* What a note about path says: its last key in quotes, or an element. */
static void note_for(const struct field *f, bool html, char *buf, size_t n)
{
	const char *last = strrchr(f->path, '.');

	last = last ? last + 1 : f->path;
	if (*last >= '0' && *last <= '9')
		snprintf(buf, n, "an element is");
	else if (html)
		snprintf(buf, n, "&quot;%s&quot; is", last);
	else
		snprintf(buf, n, "\"%s\" is", last);
}

static bool notes_have(const struct jget_notes *n, const char *s)
{
	for (size_t i = 0; i < n->n; i++)
		if (strstr(n->text[i], s))
			return true;
	return false;
}

static void one_wrong_type(const struct field *f, const char *name,
			   const char *val)
{
	struct bundle *b = hostile_bundle(f, val);
	bool note = must_note(f->kind, name);
	struct diag_input in;
	struct diagnosis d;
	struct json_object *dj;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	char want[96];

	/* the agent at the kill: load, diagnose, write diagnosis.json */
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 3000, &in), 0);
	diagnosis_run(&in, &d);
	dj = diagnosis_to_json(&d);
	cr_assert_not_null(dj);
	json_object_put(dj);
	note_for(f, false, want, sizeof(want));
	if (f->readers & LOADER)
		cr_assert_eq(notes_have(&d.notes, want), note,
			     "loader, %s %s = %s: notes %zu, first \"%s\"",
			     f->file, f->path, name, d.notes.n,
			     d.notes.n ? d.notes.text[0] : "");
	diag_input_release(&in);
	/* report.html and `show` on the same bundle */
	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "</html>"));
	note_for(f, true, want, sizeof(want));
	if (f->readers & HTML)
		cr_assert_eq(strstr(out.buf, want) != NULL, note,
			     "html, %s %s = %s", f->file, f->path, name);
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "bundle  oom-t") || !strcmp(f->path, "id"));
	note_for(f, false, want, sizeof(want));
	if (f->readers & TEXT)
		cr_assert_eq(strstr(out.buf, want) != NULL, note,
			     "text, %s %s = %s:\n%s", f->file, f->path, name,
			     out.buf);
	bundle_free(b);
}

Test(report, every_field_of_every_wrong_type_is_dropped_with_a_note)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		for (size_t j = 0; j < ARRAY_SIZE(wrong_values); j++, n++)
			one_wrong_type(&fields[i], wrong_values[j].name,
				       wrong_values[j].json);
	cr_assert_eq(n, ARRAY_SIZE(fields) * 8);
}

static void add_str(struct bundle *b, const char *path, const char *s)
{
	cr_assert_eq(bundle_add(b, path, s, strlen(s), 2), 0);
}

/* The reproduction: this timeline.json killed the agent with SIGABRT. */
Test(report, samples_as_an_object_neither_aborts_nor_loses_the_rest)
{
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	static const char tl[] = "{\"samples\":{\"x\":1}}";

	cr_assert_eq(bundle_new("oom-x", &b), 0);
	bundle_add(b, "timeline.json", tl, sizeof(tl) - 1, 1);
	add_str(b, "processes/7/status",
		"Name:\tapp\nPid:\t7\nRssAnon:\t2048 kB\n");
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 0, &in), 0);
	cr_assert_eq(in.n_tl, 0);
	cr_assert_eq(in.n_procs, 1, "the snapshot is still read");
	diagnosis_run(&in, &d);
	cr_assert_eq(d.notes.n, 1);
	cr_assert_str_eq(d.notes.text[0],
			 "timeline.json: \"samples\" is an object, not an "
			 "array: ignored");
	cr_assert_eq(d.usage_bytes, 2048 * 1024);
	diag_input_release(&in);
	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "Ignored in this bundle"));
	cr_assert(strstr(out.buf, "No flight recorder timeline"));
	bundle_free(b);
}

/* A JVM's class histogram (jvm/class_histogram.json, the pod's): a card
 * of the top classes in report.html, the same rows in the text summary,
 * names escaped and cleaned; one not taken says why, without rows. */
static const char histo[] =
	"{\"pid\":7,\"t_ms\":1500,\"trigger\":\"threshold-80\",\"taken\":true,"
	"\"wall_us\":5662,\"pause_us\":5314,\"classes\":243,"
	"\"total_instances\":25027,\"total_bytes\":68242152,"
	"\"total_known\":true,\"top\":["
	"{\"class\":\"[B\",\"instances\":7336,\"bytes\":67445088},"
	"{\"class\":\"<script>x\\u001b]0;t\\u0007\",\"instances\":3,"
	"\"bytes\":176384}]}";

static struct bundle *make_histo(const char *json)
{
	struct bundle *b = make();
	static const char snap[] = "{\"pid\":7,\"name\":\"java\",\"rss_kb\":1}";

	bundle_add(b, "processes/7/snapshot.json", snap, sizeof(snap) - 1, 2);
	bundle_add(b, "processes/7/jvm/class_histogram.json", json,
		   strlen(json), 2);
	return b;
}

Test(report, class_histogram_card_and_text)
{
	struct bundle *b = make_histo(histo);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "<h2>Class histogram of pid 7</h2>"), "%s",
		  out.buf);
	cr_assert(strstr(out.buf, "GC.class_histogram at threshold-80, 1.0 s "
				  "before the kill: the JVM paused 5.3 ms, "
				  "5.7 ms wall; 243 classes, 65 MiB of live "
				  "objects in 25027 instances; the 2 largest "
				  "by bytes"));
	cr_assert(strstr(out.buf, "<th>class</th><th class=\"n\">instances"
				  "</th><th class=\"n\">bytes</th>"));
	cr_assert(strstr(out.buf, "<tr><td class=\"n\">1</td><td>byte[] "
				  "([B)</td><td class=\"n\">7336</td><td "
				  "class=\"n\">64 MiB</td><td class=\"n\">"
				  "98.8%</td></tr>"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "<td>&lt;script&gt;x?]0;t?</td>"));
	cr_assert_null(strstr(out.buf, "<script"));
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "\nClass histogram of pid 7\n"), "%s",
		  out.buf);
	cr_assert(strstr(out.buf, "\n  # class           instances   bytes "
				  "of live\n"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "\n  1 byte[] ([B)          7336  64 MiB   "
				  "98.8%\n"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "\n  2 <script>x?]0;t?         3 172 KiB "
				  "   0.3%\n"),
		  "%s", out.buf);
	bundle_free(b);
}

Test(report, class_histogram_not_taken_says_why)
{
	static const char skipped[] =
		"{\"pid\":7,\"t_ms\":1500,\"trigger\":\"threshold-80\","
		"\"taken\":false,\"why\":\"heap 900 MiB used: its walk would "
		"take about 3620 ms\",\"top\":[{\"class\":\"[B\",\"instances\":"
		"1,\"bytes\":1}]}";
	struct bundle *b = make_histo(skipped);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "not taken (threshold-80, 1.0 s before the "
				  "kill): heap 900 MiB used: its walk would "
				  "take about 3620 ms"));
	cr_assert_null(strstr(out.buf, "byte[] ([B)"), "no rows");
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "  not taken (threshold-80"), "%s", out.buf);
	bundle_free(b);
}

/* What the budget cut is on the page and in the text, escaped, from the
 * bundle being built (the agent renders before it writes) and from the
 * manifest of a bundle read back. */
Test(report, what_was_left_out_is_listed)
{
	struct bundle *b = make();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const char man[] = "{\"truncated\":[{\"path\":\"processes/9/pmap.txt\","
			   "\"reason\":\"dropped to fit the bundle size "
			   "cap\"}]}";

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert_null(strstr(out.buf, "Left out of this bundle"));
	bundle_note_truncated(b, "spool/<x>", "cut short: 8 MiB");
	strbuf_reset(&out);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "Left out of this bundle"));
	cr_assert(strstr(out.buf, "<li><code>spool/&lt;x&gt;</code>: cut "
				  "short: 8 MiB</li>"),
		  "%s", out.buf);
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "Left out of this bundle (1)\n"
				  "  spool/<x>: cut short: 8 MiB\n"));
	/* a bundle read back: its manifest.json's list, not the notes */
	bundle_add(b, "manifest.json", man, sizeof(man) - 1, BUNDLE_ESSENTIAL);
	strbuf_reset(&out);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "<code>processes/9/pmap.txt</code>: dropped "
				  "to fit the bundle size cap"));
	cr_assert_null(strstr(out.buf, "spool/&lt;x&gt;"));
	bundle_free(b);
}
