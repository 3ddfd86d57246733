/* SPDX-License-Identifier: Apache-2.0 */
/* Node.js (forensics/runtimes/node.c): its parsers on the captured victim
 * (tests/fixtures/node/README.md) and on hand-made edge cases; its table
 * entry rt_node, whose sidecar hooks run on a /proc/<pid> made of that
 * capture and an ELF fixture (tests/fixtures/rtelf/), whose facts.json
 * is loaded, put in the ledger, judged and named in report.html. No live
 * /proc. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/report.h"
#include "forensics/runtimes/node.h"
#include "forensics/runtimes/registry.h"
#include "kernel/smaps.h"
#include "runtime_fixture.h"

#define FIX "tests/fixtures/node/sessions/"
#define MIB (1ull << 20)
#define PID 11895 /* the captured victim's */
/* this machine's (README.md): 24105 MiB */
#define MEMINFO "MemTotal:       24683592 kB\nMemFree:  1 kB\n"

Test(runtime_node, detect_captured_victim_by_symbol)
{
	struct strbuf maps, syms;
	struct node_detect d;

	fixture_load(FIX "maps", &maps);
	fixture_load(FIX "elf-symbols", &syms);
	cr_assert_eq(node_detect(maps.buf, maps.len, fixture_has_symbol,
				 syms.buf, &d),
		     1);
	cr_assert_eq(d.how, NODE_BY_SYMBOL);
	/* 262 V8 pages: the 265 aligned anonymous mappings less two glibc
	 * arenas and a thread stack (counted by hand from the file) */
	cr_assert_eq(d.v8_pages, 262, "%zu", d.v8_pages);
	/* never by the mappings' look alone: no ELF read, no Node */
	cr_assert_eq(node_detect(maps.buf, maps.len, NULL, NULL, &d), 0);
	cr_assert_eq(d.how, NODE_NOT);
	strbuf_release(&maps);
	strbuf_release(&syms);
}

Test(runtime_node, detect_others_and_libnode)
{
	static const char libnode[] =
		"7f0000000000-7f0000100000 r-xp 00000000 fe:00 12 "
		"/usr/lib/x86_64-linux-gnu/libnode.so.108\n";
	struct strbuf maps, syms;
	struct node_detect d;

	fixture_load("tests/fixtures/python/rows/maps", &maps);
	fixture_load("tests/fixtures/python/rows/elf-symbols", &syms);
	cr_assert_eq(node_detect(maps.buf, maps.len, fixture_has_symbol,
				 syms.buf, &d),
		     0);
	cr_assert_eq(node_detect(libnode, sizeof(libnode) - 1, NULL, NULL, &d),
		     1);
	cr_assert_eq(d.how, NODE_BY_LIBNODE);
	cr_assert_eq(node_detect("garbage\n", 8, NULL, NULL, &d), -EBADMSG);
	cr_assert_eq(node_detect("", 0, NULL, NULL, &d), -EBADMSG);
	strbuf_release(&maps);
	strbuf_release(&syms);
}

struct facts_case {
	char cmd[160];
	size_t cmd_len; /* 0: sizeof - 1 of the literal, computed below */
	char env[160];
	bool has;
	uint64_t mib;
	char from[16];
	bool near, bad;
};

#define C(s) s, sizeof(s) - 1

ParameterizedTestParameters(runtime_node, facts)
{
	static struct facts_case cases[] = {
		/* the captured victim's cmdline, as the file holds it */
		{C("node\0--max-old-space-size=4096\0sessions.js\0"
		   "32\0000\000100\0"),
		 "", true, 4096, "command line", false, false},
		/* the script's own arguments are not Node's */
		{C("node\0app.js\0--max-old-space-size=1\0"), "", false, 0, "",
		 false, false},
		{C("node\0--max_old_space_size=512\0app.js\0"), "", true, 512,
		 "command line", false, false},
		{C("node\0--max-old-space-size\0"
		   "768\0app.js\0"),
		 "", true, 768, "command line", false, false},
		/* -r takes the next argument: a module, not an option */
		{C("node\0-r\0--max-old-space-size=5\0app.js\0"), "", false, 0,
		 "", false, false},
		{C("node\0app.js\0"),
		 "NODE_OPTIONS=--max-old-space-size=2048 "
		 "--heapsnapshot-near-heap-limit=2",
		 true, 2048, "NODE_OPTIONS", true, false},
		/* the command line overrides NODE_OPTIONS */
		{C("node\0--max-old-space-size=1024\0app.js\0"),
		 "NODE_OPTIONS=--max-old-space-size=2048", true, 1024,
		 "command line", false, false},
		{C("node\0app.js\0"),
		 "NODE_OPTIONS=\"--max-old-space-size=300\"", true, 300,
		 "NODE_OPTIONS", false, false},
		{C("node\0app.js\0"), "NODE_OPTIONS=--max-old-space-size 640",
		 true, 640, "NODE_OPTIONS", false, false},
		{C("node\0--max-old-space-size=lots\0app.js\0"), "", false, 0,
		 "", false, true},
		{C("node\0--max-old-space-size=99999999999999999999999\0a\0"),
		 "", false, 0, "", false, true},
		{C("node\0--max-old-space-size=0\0a\0"), "", false, 0, "",
		 false, true},
		/* cut: no NUL after the last argument */
		{C("node\0--max-old-space-size=12"), "", true, 12,
		 "command line", false, false},
		{C(""), "", false, 0, "", false, false},
		/* only the key NODE_OPTIONS: a look-alike is not it */
		{C("node\0a\0"), "XNODE_OPTIONS=--max-old-space-size=9", false,
		 0, "", false, false},
	};

	return cr_make_param_array(struct facts_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct facts_case *c, runtime_node, facts)
{
	struct node_facts f;
	size_t env_len = strlen(c->env);

	cr_assert_eq(node_parse_facts(c->cmd, c->cmd_len, c->env, env_len, &f),
		     0);
	cr_assert_eq(f.has_max_old, c->has, "%s", c->cmd + 5);
	cr_assert_eq(f.max_old_mib, c->mib);
	cr_assert_str_eq(f.max_old_from, c->from);
	cr_assert_eq(f.near_limit_snapshot, c->near);
	cr_assert_eq(f.bad_value, c->bad);
	cr_assert_eq(f.node_options, env_len > 0 && c->env[0] == 'N');
}

struct limit_case {
	uint64_t limit_mib, host_mib;
	unsigned major;
	uint64_t flag_mib;
	uint64_t total_mib; /* heap_size_limit, MiB */
	bool ok;
};

/* heap_size_limit as node 20.20.2 printed it (v8.getHeapStatistics()) in
 * cgroups of these limits on a 24105 MiB machine (README.md). */
ParameterizedTestParameters(runtime_node, heap_limit_as_measured)
{
	static struct limit_case cases[] = {
		{64, 24105, 20, 0, 259, true},
		{128, 24105, 20, 0, 259, true},
		{200, 24105, 20, 0, 259, true},
		{256, 24105, 20, 0, 259, true},
		{512, 24105, 20, 0, 259, true},
		{1024, 24105, 20, 0, 524, true},
		{2048, 24105, 20, 0, 1048, true},
		{4096, 24105, 20, 0, 2096, true},
		{8192, 24105, 20, 0, 2096, true},
		{16384, 24105, 20, 0, 4144, true},
		{32768, 24105, 0, 0, 4144, true},
		/* no limit: the machine's memory */
		{0, 24105, 20, 0, 4144, true},
		/* the victim's flag in a 200 MiB cgroup */
		{200, 24105, 20, 4096, 4099, true},
		/* before Node 12: 1400 MiB whatever the cgroup */
		{200, 24105, 10, 0, 1403, true},
		{0, 0, 20, 0, 0, false},
	};

	return cr_make_param_array(struct limit_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct limit_case *c, runtime_node, heap_limit_as_measured)
{
	struct node_facts f = {.has_max_old = c->flag_mib != 0,
			       .max_old_mib = c->flag_mib};
	struct node_heap_limit h;
	bool ok = node_heap_limit(&f, c->limit_mib * MIB, c->host_mib * MIB,
				  c->major, &h);

	cr_assert_eq(ok, c->ok);
	if (ok)
		cr_assert_eq(h.total / MIB, c->total_mib,
			     "limit %lu MiB: %lu MiB",
			     (unsigned long)c->limit_mib,
			     (unsigned long)(h.total / MIB));
}

Test(runtime_node, classify_captured_victim)
{
	struct strbuf sb;
	struct smaps s;
	struct node_rss r;

	fixture_load(FIX "smaps", &sb);
	smaps_init(&s);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &s), 0);
	cr_assert_eq(node_classify(&s, &r), 0);
	/* summed by hand from the file (README.md) */
	cr_assert_eq(r.total_kb, 111200);
	cr_assert_eq(r.v8_heap_kb, 67144, "%lu", (unsigned long)r.v8_heap_kb);
	cr_assert_eq(r.v8_pages, 262);
	cr_assert_eq(
		r.v8_heap_kb + r.native_kb + r.file_kb +
			(r.total_kb - r.v8_heap_kb - r.native_kb - r.file_kb),
		r.total_kb);
	cr_assert(r.file_kb > 30000, "%lu", (unsigned long)r.file_kb);
	smaps_release(&s);
	strbuf_release(&sb);
}

Test(runtime_node, verdict_on_the_victim_at_200mib)
{
	struct node_facts f = {.has_max_old = true, .max_old_mib = 4096};
	struct node_figures fig = {
		.limit = 200 * MIB,
		.usage = 200 * MIB,
		.heap_rss = 160 * MIB,
		.nonheap_rss = 40 * MIB,
		.have_limit_rule = true,
		.facts = &f,
	};
	struct rtproc_verdict v;

	strlcpy_safe(f.max_old_from, "command line", sizeof(f.max_old_from));
	cr_assert(node_heap_limit(&f, fig.limit, 24105 * MIB, 20, &fig.heap));
	cr_assert(node_verdict(&fig, &v));
	cr_assert_str_eq(v.kind, "node-heap");
	cr_assert_eq(v.confidence, 85);
	cr_assert_eq(v.bytes, 160 * MIB);
	cr_assert(strstr(v.summary, "4099 MiB, 20.5x the 200 MiB limit"), "%s",
		  v.summary);
	cr_assert(strstr(v.evidence[1], "--max-old-space-size=4096 (command "
					"line)"),
		  "%s", v.evidence[1]);
	/* 90 % of 200 MiB = 180, less 40 measured, less 3 young = 137 */
	cr_assert(strstr(v.remedies[0], "--max-old-space-size=137 "), "%s",
		  v.remedies[0]);
	cr_assert(strstr(v.remedies[1], "--heapsnapshot-near-heap-limit"));
	cr_assert(strstr(v.remedies[2], "--heap-prof"));
	cr_assert_eq(v.n_remedies, 3);
}

Test(runtime_node, verdict_holds_only_for_a_heap_that_dominates)
{
	struct node_figures fig = {.limit = 200 * MIB,
				   .usage = 200 * MIB,
				   .heap_rss = 99 * MIB,
				   .nonheap_rss = 101 * MIB};
	struct rtproc_verdict v = {.confidence = -1};

	cr_assert_not(node_verdict(&fig, &v));
	cr_assert_eq(v.confidence, -1, "ret written on false");
	fig.heap_rss = 100 * MIB;
	cr_assert(node_verdict(&fig, &v));
	/* no limit rule known: the heap hit its own limit, not proven to
	 * outgrow */
	cr_assert_eq(v.confidence, 60);
	fig.heap_rss = 0;
	cr_assert_not(node_verdict(&fig, &v));
	/* usage unknown: the process's RSS is the base */
	fig = (struct node_figures){.heap_rss = 70 * MIB,
				    .nonheap_rss = 30 * MIB};
	cr_assert(node_verdict(&fig, &v));
	cr_assert_eq(v.n_remedies, 2, "no limit: no figure to set");
}

struct reco_case {
	uint64_t limit, nonheap, young, mib;
};

ParameterizedTestParameters(runtime_node, recommend)
{
	static struct reco_case cases[] = {
		{200 * MIB, 40 * MIB, 3 * MIB, 137},
		{200 * MIB, 180 * MIB, 3 * MIB, 0},
		{200 * MIB, 161 * MIB, 3 * MIB, 16},
		{200 * MIB, 162 * MIB, 3 * MIB, 0},
		{0, 0, 0, 0},
		{UINT64_MAX, 0, 48 * MIB,
		 (UINT64_MAX / 10 * 9 - 48 * MIB) / MIB},
		{UINT64_MAX, UINT64_MAX, UINT64_MAX, 0},
	};

	return cr_make_param_array(struct reco_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct reco_case *c, runtime_node, recommend)
{
	cr_assert_eq(node_recommend_old_mib(c->limit, c->nonheap, c->young),
		     c->mib);
}

/* ---- the table's entry ---- */

/* The captured victim as a /proc/<pid>: its maps, smaps, cmdline and
 * environ, an exe exporting napi_create_object (the rtelf fixture), the
 * host's meminfo; env replaces the (empty) captured environ. */
static void victim_proc(struct fixture_proc *p, const char *env, size_t len,
			const char *cmdline, size_t cmd_len)
{
	fixture_proc_make(p);
	fixture_proc_copy(p, "maps", FIX "maps");
	fixture_proc_copy(p, "smaps", FIX "smaps");
	if (cmdline)
		fixture_proc_put(p, "cmdline", cmdline, cmd_len);
	else
		fixture_proc_copy(p, "cmdline", FIX "cmdline");
	fixture_proc_put(p, "environ", env, len);
	fixture_proc_put(p, "meminfo", MEMINFO, sizeof(MEMINFO) - 1);
	fixture_proc_exe(p, "tests/fixtures/rtelf/gnu-node.so", "node");
}

Test(runtime_node, sidecar_hooks_on_the_captured_victim)
{
	static const char env[] = "HOME=/root\0SESSIONS_DB_PASSWORD=hunter2\0";
	struct fixture_proc p;
	struct rt_sight s;
	struct json_object *o;
	struct strbuf txt;

	victim_proc(&p, env, sizeof(env) - 1, NULL, 0);
	s = fixture_proc_sight(&p, PID, 200 * MIB);
	cr_assert_eq(rt_node.detect(&s), 1);
	cr_assert_eq(rt_node.first_sight(&s), 0);
	cr_expect_str_eq(s.event_kind, "node-heap-limit-above-limit");
	cr_expect(strstr(s.event_text,
			 "pid 11895 (Node.js): V8's heap limit 4099 MiB "
			 "(--max-old-space-size=4096 from the command line) is "
			 "above the container's limit (200 MiB)"),
		  "%s", s.event_text);
	cr_assert_eq(rt_node.snapshot(&s, p.out_fd), 0);
	o = fixture_proc_json(&p, "node/facts.json");
#define U(k) json_object_get_uint64(json_object_object_get(o, k))
#define S(k) json_object_get_string(json_object_object_get(o, k))
	cr_expect_str_eq(S("detected_by"), "symbol");
	cr_expect_eq(U("max_old_space_size"), 4096);
	cr_expect_str_eq(S("max_old_from"), "command line");
	cr_expect_eq(U("heap_limit"), 4099 * MIB);
	cr_expect_eq(U("heap_limit_young"), 3 * MIB);
	cr_expect_eq(U("host_mem"), 24683592ull * 1024);
	/* summed by hand from the capture (README.md) */
	cr_expect_eq(U("v8_heap_rss"), 67144ull * 1024);
	cr_expect_eq(U("v8_pages"), 262);
	cr_expect_eq(U("rss"), 111200ull * 1024);
	cr_expect_eq(U("limit"), 200 * MIB);
	cr_expect_eq(U("pid"), PID);
	cr_expect_eq(json_object_array_length(
			     json_object_object_get(o, "heap_ranges")),
		     RTPROC_MAX_RANGES);
#undef U
#undef S
	json_object_put(o);
	/* nothing of the environment but what NODE_OPTIONS says */
	strbuf_init(&txt, 1u << 20);
	cr_assert_eq(read_file_at(p.out_fd, "node/facts.json", 1u << 20, &txt),
		     0);
	cr_expect_null(strstr(txt.buf, "hunter2"));
	cr_expect_null(strstr(txt.buf, "PASSWORD"));
	strbuf_release(&txt);
	fixture_proc_done(&p);
}

/* NODE_OPTIONS bounding the heap below the limit: no event; the same in
 * a cgroup without a known limit; V8's default at 200 MiB outgrows it. */
Test(runtime_node, first_sight_table)
{
	static const struct {
		const char *env;
		size_t env_len;
		const char *cmd;
		size_t cmd_len;
		uint64_t limit;
		const char *kind, *text;
	} rows[] = {
#define E(x) x, sizeof(x) - 1
		{E("NODE_OPTIONS=--max-old-space-size=150\0"),
		 E("node\0app.js\0"), 200 * MIB, "", ""},
		{E(""), E("node\0--max-old-space-size=4096\0app.js\0"), 0, "",
		 ""},
		{E(""), E("node\0app.js\0"), 200 * MIB,
		 "node-heap-limit-above-limit",
		 "V8's heap limit 259 MiB (V8's default for the 200 MiB of "
		 "memory Node sees)"},
		{E("NODE_OPTIONS=--max-old-space-size=1024\0"),
		 E("node\0app.js\0"), 512 * MIB, "node-heap-limit-above-limit",
		 "V8's heap limit 1027 MiB (--max-old-space-size=1024 from the "
		 "NODE_OPTIONS)"},
#undef E
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fixture_proc p;
		struct rt_sight s;

		victim_proc(&p, rows[i].env, rows[i].env_len, rows[i].cmd,
			    rows[i].cmd_len);
		s = fixture_proc_sight(&p, PID, rows[i].limit);
		cr_assert_eq(rt_node.first_sight(&s), 0);
		cr_expect_str_eq(s.event_kind, rows[i].kind, "row %zu", i);
		cr_expect(strstr(s.event_text, rows[i].text), "row %zu: %s", i,
			  s.event_text);
		fixture_proc_done(&p);
	}
}

/* Not Node: the Python victim's mappings and an exe without the symbol;
 * a process whose maps cannot be read. */
Test(runtime_node, detect_refuses_others)
{
	struct fixture_proc p;
	struct rt_sight s;

	fixture_proc_make(&p);
	fixture_proc_copy(&p, "maps", "tests/fixtures/python/rows/maps");
	fixture_proc_exe(&p, "tests/fixtures/rtelf/sysv-python.so",
			 "python3.11");
	s = fixture_proc_sight(&p, 1, 0);
	cr_expect_eq(rt_node.detect(&s), 0);
	fixture_proc_done(&p);
	fixture_proc_make(&p);
	s = fixture_proc_sight(&p, 1, 0);
	cr_expect_eq(rt_node.detect(&s), 0);
	fixture_proc_done(&p);
}

static const char status[] = "Name:\tnode\nPid:\t11895\nPPid:\t1\n"
			     "RssAnon:\t71692 kB\nRssFile:\t39508 kB\n";

/* processes/<pid>/node/facts.json from a bundle: the sidecar's own, and
 * files a pod wrote with fields of the wrong types (absent and noted). */
Test(runtime_node, load_from_bundle)
{
	static const struct {
		const char *facts;
		bool loaded, has_max;
		uint64_t mib, heap;
		const char *from;
		bool notes;
	} rows[] = {
		{"{\"t_ms\":1796031079000,\"max_old_space_size\":4096,"
		 "\"max_old_from\":\"command line\",\"host_mem\":25275990016,"
		 "\"v8_heap_rss\":68755456,\"rss\":113868800}",
		 true, true, 4096, 68755456, "command line", false},
		{"{\"max_old_space_size\":512,\"max_old_from\":\"elsewhere\"}",
		 true, true, 512, 0, "?", false},
		{"{\"max_old_space_size\":0,\"v8_heap_rss\":5}", true, false, 0,
		 5, "", false},
		{"{\"max_old_space_size\":\"4096\",\"v8_heap_rss\":-1,"
		 "\"rss\":1.5,\"t_ms\":[],\"max_old_bad\":1}",
		 true, false, 0, 0, "", true},
		{"[1,2]", false, false, 0, 0, "", true},
		{"not json", false, false, 0, 0, "", false},
	};
	int row = diag_runtime_index("node");

	cr_assert_geq(row, 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct bundle *b;
		const struct node_procs *f;

		cr_assert_eq(bundle_new("t", &b), 0);
		bundle_add(b, "processes/11895/status", status,
			   sizeof(status) - 1, 1);
		bundle_add(b, "processes/11895/node/facts.json", rows[i].facts,
			   strlen(rows[i].facts), 1);
		cr_assert_eq(
			diagnosis_load_bundle(b, NULL, 1796031080000ull, &in),
			0);
		f = in.rt_data[row];
		cr_expect_eq(f != NULL, rows[i].loaded, "row %zu", i);
		if (f) {
			cr_expect_eq(f->n, 1);
			cr_expect_eq(f->p[0].pid, PID);
			cr_expect_eq(f->p[0].facts.has_max_old, rows[i].has_max,
				     "row %zu", i);
			cr_expect_eq(f->p[0].facts.max_old_mib, rows[i].mib);
			cr_expect_str_eq(f->p[0].facts.max_old_from,
					 rows[i].from, "row %zu", i);
			cr_expect_eq(f->p[0].heap_rss, rows[i].heap, "row %zu",
				     i);
		}
		cr_expect_eq(in.notes.n > 0, rows[i].notes,
			     "row %zu: %zu notes", i, in.notes.n);
		if (i == 0) {
			cr_expect_eq(f->p[0].host_mem, 25275990016ull);
			cr_expect(f->p[0].age_s > 0.9 && f->p[0].age_s < 1.1);
		}
		diag_input_release(&in);
		bundle_free(b);
	}
}

/* One Node process's facts in an input of 200 MiB: the V8 heap's RSS,
 * the process's, its --max-old-space-size (0: none), the host's memory;
 * with a steady 10 s climb in the timeline. */
static void node_input(struct diag_input *in, uint64_t heap, uint64_t rss,
		       uint64_t max_old, uint64_t host)
{
	int row = diag_runtime_index("node");
	struct node_procs *f = calloc(1, sizeof(*f));

	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 200 * MIB;
	in->have_stats = true;
	in->anon = 196 * MIB;
	in->have_snapshot = true;
	in->snapshot_age_s = 0.9;
	in->procs = calloc(1, sizeof(*in->procs));
	in->n_procs = 1;
	in->procs[0] = (struct diag_proc){.pid = PID, .comm = "node"};
	in->victim_pid = PID;
	in->tl = calloc(12, sizeof(*in->tl));
	in->n_tl = 12;
	for (size_t i = 0; i < 12; i++)
		in->tl[i] = (struct diag_sample){.t = -11.0 + (double)i,
						 .usage = (30 + 15 * i) * MIB,
						 .nprocs = 1};
	f->n = 1;
	f->p[0] = (struct node_proc){.pid = PID,
				     .host_mem = host,
				     .heap_rss = heap,
				     .rss = rss,
				     .age_s = 0.9};
	if (max_old) {
		f->p[0].facts.has_max_old = true;
		f->p[0].facts.max_old_mib = max_old;
		strlcpy_safe(f->p[0].facts.max_old_from, "command line",
			     sizeof(f->p[0].facts.max_old_from));
	}
	in->rt_data[row] = f;
}

Test(runtime_node, verdict_table)
{
	static const struct {
		uint64_t heap, rss, max_old, host;
		int confidence;
		const char *detail, *reco0, *ev0;
	} rows[] = {
		/* the kill: --max-old-space-size=4096 at 200 MiB;
		 * 90 % of 200 = 180, less 20 outside the heap, less 3 young */
		{170 * MIB, 190 * MIB, 4096, 24105 * MIB, 85,
		 "--max-old-space-size above the limit",
		 "--max-old-space-size=157 (command line or NODE_OPTIONS): "
		 "90% of the 200 MiB limit less 20.0 MiB measured outside",
		 "pid 11895 (Node.js): the V8 heap (170 MiB) outgrew the "
		 "container: Node may grow it to 4099 MiB, 20.5x the 200 MiB "
		 "limit (smaps, 0.9 s before the kill)"},
		/* V8's default for a 200 MiB cgroup, 259 MiB, cannot fit */
		{170 * MIB, 190 * MIB, 0, 24105 * MIB, 85,
		 "V8's default heap limit above the limit",
		 "--max-old-space-size=157 ",
		 "pid 11895 (Node.js): the V8 heap"},
		/* a flag that fits: V8 hit its own limit first */
		{150 * MIB, 170 * MIB, 150, 24105 * MIB, 60, "",
		 "--max-old-space-size=157 ",
		 "pid 11895 (Node.js): the V8 heap (150 MiB) is most of the "
		 "usage (200 MiB)"},
		/* the heap is not most of the usage: no node-heap */
		{60 * MIB, 190 * MIB, 4096, 24105 * MIB, -1, NULL, NULL, NULL},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct diagnosis d;
		struct diag_verdict *v;

		node_input(&in, rows[i].heap, rows[i].rss, rows[i].max_old,
			   rows[i].host);
		diagnosis_run(&in, &d);
		v = diag_verdict_find(&d, DIAG_NODE_HEAP);
		cr_expect_str_eq(d.parts[0].name, "node heap");
		cr_expect_eq(d.parts[0].bytes, rows[i].heap, "row %zu", i);
		if (rows[i].confidence < 0) {
			cr_expect_null(v, "row %zu: %s", i, d.summary);
			diag_input_release(&in);
			continue;
		}
		cr_assert_not_null(v, "row %zu: %s", i, d.summary);
		cr_expect_eq(d.verdicts[0].kind, DIAG_NODE_HEAP, "%s",
			     d.summary);
		cr_expect_eq(v->basis, DIAG_BASIS_MEASURED);
		cr_expect_eq(v->confidence, rows[i].confidence, "row %zu", i);
		cr_expect_str_eq(v->detail, rows[i].detail, "row %zu", i);
		cr_expect_eq(v->bytes, rows[i].heap);
		cr_expect(startswith(v->recommend[0], rows[i].reco0),
			  "row %zu: %s", i, v->recommend[0]);
		cr_expect(startswith(v->evidence[0], rows[i].ev0),
			  "row %zu: %s", i, v->evidence[0]);
		cr_expect(strstr(v->recommend[1],
				 "--heapsnapshot-near-heap-limit"));
		cr_expect(strstr(v->recommend[2], "--heap-prof"));
		cr_expect(startswith(v->recommend[3], "or raise the limit to"));
		/* the steady climb was the V8 heap's: no native-growth */
		cr_expect_null(diag_verdict_find(&d, DIAG_NATIVE_GROWTH));
		diag_input_release(&in);
	}
}

/* The whole path on the capture: the sidecar's hooks write facts.json,
 * the snapshot's status, arenas.json and pmap.txt beside it; the bundle
 * is diagnosed and rendered: the node-heap verdict with the summary's
 * prefix, the ledger's row, and report.html naming the V8 pages among
 * the largest mappings. */
Test(runtime_node, captured_victim_end_to_end)
{
	struct fixture_proc p;
	struct rt_sight s;
	struct strbuf facts, sm, pmap, html;
	struct smaps m;
	struct smaps_summary sum;
	struct json_object *ar, *dj;
	struct diag_input in;
	struct diagnosis d;
	struct bundle *b;
	const char *ar_txt;

	victim_proc(&p, "", 0, NULL, 0);
	s = fixture_proc_sight(&p, PID, 200 * MIB);
	cr_assert_eq(rt_node.snapshot(&s, p.out_fd), 0);
	strbuf_init(&facts, 1u << 20);
	cr_assert_eq(
		read_file_at(p.out_fd, "node/facts.json", 1u << 20, &facts), 0);
	fixture_load(FIX "smaps", &sm);
	smaps_init(&m);
	cr_assert_eq(smaps_parse(sm.buf, sm.len, &m), 0);
	cr_assert_eq(smaps_classify(&m, &sum), 0);
	ar = smaps_summary_arenas_json(&sum);
	ar_txt = json_object_to_json_string(ar);
	strbuf_init(&pmap, 4u << 20);
	cr_assert_eq(smaps_render_pmap(&m, PID, "node", &pmap), 0);
	cr_assert_eq(bundle_new("t", &b), 0);
	bundle_add(b, "processes/11895/status", status, sizeof(status) - 1, 1);
	bundle_add(b, "processes/11895/node/facts.json", facts.buf, facts.len,
		   1);
	bundle_add(b, "processes/11895/arenas.json", ar_txt, strlen(ar_txt), 1);
	bundle_add(b, "processes/11895/pmap.txt", pmap.buf, pmap.len, 1);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 0, &in), 0);
	/* the cgroup at the capture (README.md: 77 MB of 200 MiB) */
	in.have_usage = true;
	in.usage_bytes = 76980224;
	in.limit_bytes = 200 * MIB;
	in.have_stats = true;
	in.anon = 71692 * 1024;
	diagnosis_run(&in, &d);
	cr_expect_str_eq(diag_kind_name(d.verdicts[0].kind), "node-heap", "%s",
			 d.summary);
	cr_expect(startswith(d.summary, "node-heap:--max-old-space-size above "
					"the limit, 66 MiB of the 200 MiB "
					"limit; --max-old-space-size=133 "),
		  "%s", d.summary);
	cr_expect_str_eq(d.parts[0].name, "node heap");
	cr_expect_eq(d.parts[0].bytes, 67144 * 1024);
	dj = diagnosis_to_json(&d);
	bundle_add_json(b, "diagnosis.json", dj, 1);
	strbuf_init(&html, 16u << 20);
	cr_assert_eq(report_render_html(b, &html), 0);
	cr_expect(strstr(html.buf, "node heap (V8 pages)"));
	cr_expect(strstr(html.buf, "--max-old-space-size=133"));
	json_object_put(dj);
	json_object_put(ar);
	diag_input_release(&in);
	bundle_free(b);
	smaps_summary_release(&sum);
	smaps_release(&m);
	strbuf_release(&html);
	strbuf_release(&pmap);
	strbuf_release(&sm);
	strbuf_release(&facts);
	fixture_proc_done(&p);
}

/* rtproc's readings node.c uses: MemTotal for V8's default, the largest
 * mappings of a heap for report.html. */
Test(runtime_node, rtproc_meminfo_and_ranges)
{
	static const struct {
		const char *text;
		int r;
		uint64_t v;
	} rows[] = {
		{MEMINFO, 0, 24683592ull * 1024},
		{"MemFree: 1 kB\nMemTotal:\t 8 kB\n", 0, 8192},
		{"MemTotal: 8 MB\n", -EBADMSG, 0},
		{"MemTotal: lots kB\n", -EBADMSG, 0},
		{"MemTotal: 99999999999999999999 kB\n", -EBADMSG, 0},
		{"XMemTotal: 8 kB\n", -ENOENT, 0},
		{"", -ENOENT, 0},
	};
	struct rtproc_ranges r = {0};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t v = 0;

		cr_expect_eq(rtproc_parse_meminfo(rows[i].text,
						  strlen(rows[i].text), &v),
			     rows[i].r, "row %zu", i);
		if (!rows[i].r)
			cr_expect_eq(v, rows[i].v, "row %zu", i);
	}
	/* 40 mappings of RSS 1..40 kB: the 16 largest stay */
	for (uint64_t k = 1; k <= 40; k++)
		rtproc_ranges_add(&r, k << 20, (k << 20) + 4096, k);
	cr_assert_eq(r.n, RTPROC_MAX_RANGES);
	for (size_t i = 0; i < r.n; i++)
		cr_expect_gt(r.r[i].rss_kb, 40 - RTPROC_MAX_RANGES, "%zu", i);
}
