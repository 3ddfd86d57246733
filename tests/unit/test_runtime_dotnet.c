/* SPDX-License-Identifier: Apache-2.0 */
/* .NET (forensics/runtimes/dotnet.c) on fixtures built from its
 * documented mappings and knobs (tests/fixtures/dotnet/README.md: no .NET
 * runtime on Debian 12 or npm to capture, so none is killed for real):
 * its parsers and edge cases; its table entry rt_dotnet, whose sidecar
 * hooks run on a /proc/<pid> made of those fixtures, whose facts.json is
 * loaded, its GC reservations left out of glibc's arenas, put in the
 * ledger, judged and named in report.html. No live /proc. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/report.h"
#include "forensics/runtimes/dotnet.h"
#include "forensics/runtimes/registry.h"
#include "kernel/smaps.h"
#include "runtime_fixture.h"

#define FIX "tests/fixtures/dotnet/"
#define MIB (1ull << 20)
#define PID 4242
#define GC_BASE 0x7b0000000000ull /* make.py: the regions range */

Test(runtime_dotnet, detect)
{
	static const char lookalike[] = "7f0000000000-7f0000001000 r--p "
					"00000000 fe:00 9 /data/"
					"libcoreclr.so.txt\n";
	static const char deleted[] = "7f0000000000-7f0000001000 r-xp "
				      "00000000 fe:00 9 /usr/share/dotnet/"
				      "libcoreclr.so (deleted)\n";
	struct strbuf sb;

	fixture_load(FIX "maps", &sb);
	cr_assert_eq(dotnet_detect(sb.buf, sb.len), 1);
	strbuf_release(&sb);
	fixture_load("tests/fixtures/node/sessions/maps", &sb);
	cr_assert_eq(dotnet_detect(sb.buf, sb.len), 0);
	strbuf_release(&sb);
	/* a file merely named like it, not a library of that name */
	cr_assert_eq(dotnet_detect(lookalike, sizeof(lookalike) - 1), 0);
	cr_assert_eq(dotnet_detect(deleted, sizeof(deleted) - 1), 1);
	cr_assert_eq(dotnet_detect("", 0), -EBADMSG);
}

struct knob_case {
	char env[192];
	size_t env_len;
	int hard_state;
	uint64_t hard;
	char hard_from[12];
	int pct_state;
	uint64_t pct;
	int gen0_state;
	uint64_t gen0;
	bool container;
};

#define C(s) s, sizeof(s) - 1

ParameterizedTestParameters(runtime_dotnet, facts)
{
	static struct knob_case cases[] = {
		{C("DOTNET_RUNNING_IN_CONTAINER=true\0"
		   "COMPlus_GCgen0size=0x4000000\0"),
		 0, 0, "", 0, 0, DOTNET_KNOB_SET, 0x4000000, true},
		/* DOTNET_ wins over COMPlus_ */
		{C("COMPlus_GCHeapHardLimit=0x1000000\0"
		   "DOTNET_GCHeapHardLimit=0x10000000\0"
		   "DOTNET_GCHeapHardLimitPercent=0x1E\0"),
		 DOTNET_KNOB_SET, 0x10000000, "DOTNET_", DOTNET_KNOB_SET, 30, 0,
		 0, false},
		/* hex without 0x, as the docs also write it */
		{C("COMPlus_GCHeapHardLimit=C800000\0"), DOTNET_KNOB_SET,
		 0xC800000, "COMPlus_", 0, 0, 0, 0, false},
		{C("DOTNET_GCHeapHardLimit=200MB\0"), DOTNET_KNOB_BAD, 0,
		 "DOTNET_", 0, 0, 0, 0, false},
		{C("DOTNET_GCHeapHardLimit=0x\0"), DOTNET_KNOB_BAD, 0,
		 "DOTNET_", 0, 0, 0, 0, false},
		{C("DOTNET_GCHeapHardLimit=0x10000000000000000\0"),
		 DOTNET_KNOB_BAD, 0, "DOTNET_", 0, 0, 0, 0, false},
		{C("DOTNET_GCHeapHardLimit=-1\0"), DOTNET_KNOB_BAD, 0,
		 "DOTNET_", 0, 0, 0, 0, false},
		/* a key that only starts like one */
		{C("DOTNET_GCHeapHardLimitSOH=0x100\0"), 0, 0, "", 0, 0, 0, 0,
		 false},
		{C("DOTNET_RUNNING_IN_CONTAINER=false\0"), 0, 0, "", 0, 0, 0, 0,
		 false},
		/* cut: the last entry without its NUL */
		{C("A=B\0DOTNET_GCgen0size=10"), 0, 0, "", 0, 0,
		 DOTNET_KNOB_SET, 0x10, false},
		{C(""), 0, 0, "", 0, 0, 0, 0, false},
	};

	return cr_make_param_array(struct knob_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct knob_case *c, runtime_dotnet, facts)
{
	struct dotnet_facts f;

	cr_assert_eq(dotnet_parse_facts(c->env, c->env_len, &f), 0);
	cr_assert_eq((int)f.hard_limit.state, c->hard_state, "%s", c->env);
	cr_assert_eq(f.hard_limit.v, c->hard);
	cr_assert_str_eq(f.hard_limit.from, c->hard_from);
	cr_assert_eq((int)f.limit_pct.state, c->pct_state);
	cr_assert_eq(f.limit_pct.v, c->pct);
	cr_assert_eq((int)f.gen0size.state, c->gen0_state);
	cr_assert_eq(f.gen0size.v, c->gen0);
	cr_assert_eq(f.in_container, c->container);
}

struct limit_case {
	uint64_t hard, pct;
	uint64_t limit;
	int from;
	uint64_t bytes;
};

ParameterizedTestParameters(runtime_dotnet, gc_limit)
{
	static struct limit_case cases[] = {
		/* the default: 75 % of the container's limit, 20 MiB at
		 * least */
		{0, 0, 200 * MIB, DOTNET_LIMIT_DEFAULT, 150 * MIB},
		{0, 0, 16 * MIB, DOTNET_LIMIT_DEFAULT, 20 * MIB},
		{0, 30, 200 * MIB, DOTNET_LIMIT_PERCENT, 60 * MIB},
		/* the hard limit wins over the percentage */
		{256 * MIB, 30, 200 * MIB, DOTNET_LIMIT_HARD, 256 * MIB},
		{256 * MIB, 0, 0, DOTNET_LIMIT_HARD, 256 * MIB},
		/* out of range: ignored, the default applies */
		{0, 101, 200 * MIB, DOTNET_LIMIT_DEFAULT, 150 * MIB},
		{0, 0, 0, DOTNET_LIMIT_NONE, 0},
		{0, 50, UINT64_MAX, DOTNET_LIMIT_NONE, 0},
		/* huge limits do not overflow */
		{0, 100, UINT64_MAX - 1, DOTNET_LIMIT_PERCENT, UINT64_MAX - 1},
		{0, 0, UINT64_MAX - 1, DOTNET_LIMIT_DEFAULT,
		 (UINT64_MAX - 1) / 4 * 3 + 1},
	};

	return cr_make_param_array(struct limit_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct limit_case *c, runtime_dotnet, gc_limit)
{
	struct dotnet_facts f = {0};
	struct dotnet_gc_limit g;

	if (c->hard)
		f.hard_limit = (struct dotnet_knob){DOTNET_KNOB_SET, c->hard,
						    "DOTNET_"};
	if (c->pct)
		f.limit_pct = (struct dotnet_knob){DOTNET_KNOB_SET, c->pct,
						   "DOTNET_"};
	dotnet_gc_limit(&f, c->limit, &g);
	cr_assert_eq((int)g.from, c->from);
	cr_assert_eq(g.bytes, c->bytes, "%lu", (unsigned long)g.bytes);
}

static void classify_fixture(struct dotnet_rss *d)
{
	struct strbuf sb;
	struct smaps s;

	fixture_load(FIX "smaps", &sb);
	smaps_init(&s);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &s), 0);
	cr_assert_eq(dotnet_classify(&s, d), 0);
	smaps_release(&s);
	strbuf_release(&sb);
}

Test(runtime_dotnet, classify_documented_layout)
{
	struct dotnet_rss d;

	classify_fixture(&d);
	/* make.py: 118 + 24 MiB committed in the 256 GiB regions range, 3
	 * MiB in the 1 GiB bookkeeping reservation */
	cr_assert_eq(d.reservations, 2);
	cr_assert_eq(d.gc_heap_kb, (118 + 24 + 3) << 10);
	cr_assert_eq(d.gc_reserved_kb, (256ull << 20) + (1 << 20));
	/* the glibc arena (5 MiB), [heap] (9), stacks (40 + 96 + 64 kB) and
	 * the exe's and libraries' rw-p data are not the GC's */
	cr_assert(d.native_kb >= (14 << 10) + 200, "%lu",
		  (unsigned long)d.native_kb);
	cr_assert_eq(d.gc_heap_kb + d.native_kb + d.file_kb, d.total_kb);
}

Test(runtime_dotnet, verdict_default_limit_leaves_room)
{
	struct strbuf env;
	struct dotnet_facts f;
	struct dotnet_figures fig = {.limit = 200 * MIB,
				     .usage = 200 * MIB,
				     .gc_heap_rss = 145 * MIB,
				     .nonheap_rss = 40 * MIB,
				     .facts = &f};
	struct rtproc_verdict v;

	fixture_load(FIX "environ-default", &env);
	dotnet_parse_facts(env.buf, env.len, &f);
	dotnet_gc_limit(&f, fig.limit, &fig.gc);
	cr_assert(dotnet_verdict(&fig, &v));
	cr_assert_str_eq(v.kind, "dotnet-heap");
	/* 150 MiB + 40 MiB fits in 200 MiB */
	cr_assert_eq(v.confidence, 65);
	cr_assert(strstr(v.evidence[1], "75% of the container's limit"), "%s",
		  v.evidence[1]);
	/* 180 - 40 = 140 MiB = 0x8c00000, 70 % = 0x46 */
	cr_assert(strstr(v.remedies[0], "DOTNET_GCHeapHardLimit=0x8c00000 "
					"(140 MiB"),
		  "%s", v.remedies[0]);
	cr_assert(strstr(v.remedies[0], "GCHeapHardLimitPercent=0x46"), "%s",
		  v.remedies[0]);
	cr_assert(strstr(v.remedies[1], "dotnet-gcdump collect -p PID"));
	strbuf_release(&env);
}

Test(runtime_dotnet, verdict_hard_limit_over_the_container)
{
	struct strbuf env;
	struct dotnet_facts f;
	struct dotnet_figures fig = {.limit = 200 * MIB,
				     .usage = 200 * MIB,
				     .gc_heap_rss = 160 * MIB,
				     .nonheap_rss = 40 * MIB,
				     .facts = &f};
	struct rtproc_verdict v = {0};

	fixture_load(FIX "environ-hardlimit", &env);
	dotnet_parse_facts(env.buf, env.len, &f);
	dotnet_gc_limit(&f, fig.limit, &fig.gc);
	cr_assert_eq(fig.gc.bytes, 256 * MIB);
	cr_assert(dotnet_verdict(&fig, &v));
	cr_assert_eq(v.confidence, 80);
	cr_assert(strstr(v.evidence[1], "DOTNET_GCHeapHardLimit=0x10000000 "
					"(256 MiB)"),
		  "%s", v.evidence[1]);
	/* a GC heap that is not most of the usage: no verdict */
	fig.gc_heap_rss = 50 * MIB;
	cr_assert_not(dotnet_verdict(&fig, &v));
	strbuf_release(&env);
	/* the non-heap part alone fills the limit */
	cr_assert_eq(dotnet_recommend_limit(200 * MIB, 170 * MIB), 0);
	cr_assert_eq(dotnet_recommend_limit(UINT64_MAX, 0),
		     UINT64_MAX / 10 * 9 / MIB * MIB);
}

/* ---- the table's entry ---- */

/* The built .NET process as a /proc/<pid>, with one of the environ
 * fixtures (NULL: an empty environment). */
static void dotnet_proc(struct fixture_proc *p, const char *environ)
{
	fixture_proc_make(p);
	fixture_proc_copy(p, "maps", FIX "maps");
	fixture_proc_copy(p, "smaps", FIX "smaps");
	fixture_proc_copy(p, "cmdline", FIX "cmdline");
	if (environ)
		fixture_proc_copy(p, "environ", environ);
	else
		fixture_proc_put(p, "environ", "", 0);
}

Test(runtime_dotnet, sidecar_hooks_on_the_fixture)
{
	struct fixture_proc p;
	struct rt_sight s;
	struct json_object *o, *r;

	dotnet_proc(&p, FIX "environ-default");
	s = fixture_proc_sight(&p, PID, 200 * MIB);
	cr_assert_eq(rt_dotnet.detect(&s), 1);
	cr_assert_eq(rt_dotnet.snapshot(&s, p.out_fd), 0);
	o = fixture_proc_json(&p, "dotnet/facts.json");
#define U(k) json_object_get_uint64(json_object_object_get(o, k))
#define S(k) json_object_get_string(json_object_object_get(o, k))
	cr_expect_null(json_object_object_get(o, "gc_heap_hard_limit"));
	cr_expect_eq(U("gc_gen0size"), 0x4000000);
	cr_expect_str_eq(S("gc_gen0size_from"), "COMPlus_");
	cr_expect(json_object_get_boolean(
		json_object_object_get(o, "running_in_container")));
	cr_expect_str_eq(S("gc_limit_from"), "default");
	cr_expect_eq(U("gc_limit"), 150 * MIB);
	/* make.py: 118 + 24 MiB in the regions range, 3 in the bookkeeping */
	cr_expect_eq(U("gc_heap_rss"), 145 * MIB);
	cr_expect_eq(U("reservations"), 2);
	/* and 35,340 kB besides (make.py's RSS, summed by hand) */
	cr_expect_eq(U("rss"), (145 * 1024 + 35340) * 1024ull);
	r = json_object_object_get(o, "gc_ranges");
	cr_assert_eq(json_object_array_length(r), 2);
	/* the most committed first: the 256 GiB regions range */
	cr_expect_eq(json_object_get_uint64(json_object_array_get_idx(
			     json_object_array_get_idx(r, 0), 0)),
		     GC_BASE);
	cr_expect_eq(json_object_get_uint64(json_object_array_get_idx(
			     json_object_array_get_idx(r, 0), 1)),
		     GC_BASE + (256ull << 30));
#undef U
#undef S
	json_object_put(o);
	fixture_proc_done(&p);
}

Test(runtime_dotnet, first_sight_table)
{
	static const struct {
		const char *environ;
		const char *env_text;
		uint64_t limit;
		const char *kind, *text;
	} rows[] = {
		{FIX "environ-default", NULL, 200 * MIB,
		 "dotnet-gc-limit-unset",
		 "pid 4242 (.NET): no GCHeapHardLimit in its environment: the "
		 "GC takes the runtime's default, 75% of the memory limit it "
		 "reads from its cgroup (150 MiB of the 200 MiB limit"},
		{FIX "environ-hardlimit", NULL, 200 * MIB,
		 "dotnet-gc-limit-above-limit",
		 "pid 4242 (.NET): DOTNET_GCHeapHardLimit=0x10000000 (256 MiB) "
		 "is above the container's limit (200 MiB)"},
		/* 256 MiB within 512 MiB: nothing to say */
		{FIX "environ-hardlimit", NULL, 512 * MIB, "", ""},
		/* a percentage is of the limit: within it */
		{NULL, "DOTNET_GCHeapHardLimitPercent=0x32", 200 * MIB, "", ""},
		{NULL, "DOTNET_GCHeapHardLimit=lots", 200 * MIB,
		 "dotnet-gc-limit-unset",
		 "(one is set but is no hexadecimal number: the runtime "
		 "ignores "
		 "it)"},
		{FIX "environ-default", NULL, 0, "", ""},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fixture_proc p;
		struct rt_sight s;

		dotnet_proc(&p, rows[i].environ);
		if (rows[i].env_text)
			fixture_proc_put(&p, "environ", rows[i].env_text,
					 strlen(rows[i].env_text));
		s = fixture_proc_sight(&p, PID, rows[i].limit);
		cr_assert_eq(rt_dotnet.first_sight(&s), 0);
		cr_expect_str_eq(s.event_kind, rows[i].kind, "row %zu", i);
		cr_expect(strstr(s.event_text, rows[i].text), "row %zu: %s", i,
			  s.event_text);
		fixture_proc_done(&p);
	}
}

Test(runtime_dotnet, detect_refuses_others)
{
	struct fixture_proc p;
	struct rt_sight s;

	fixture_proc_make(&p);
	fixture_proc_copy(&p, "maps", "tests/fixtures/node/sessions/maps");
	s = fixture_proc_sight(&p, 1, 0);
	cr_expect_eq(rt_dotnet.detect(&s), 0);
	fixture_proc_done(&p);
	/* no maps (a zombie, another user's without access) */
	fixture_proc_make(&p);
	s = fixture_proc_sight(&p, 1, 0);
	cr_expect_eq(rt_dotnet.detect(&s), 0);
	fixture_proc_done(&p);
}

static const char status[] = "Name:\tdotnet\nPid:\t4242\nPPid:\t1\n"
			     "RssAnon:\t170000 kB\nRssFile:\t14000 kB\n";

Test(runtime_dotnet, load_from_bundle)
{
	static const struct {
		const char *facts;
		bool loaded;
		enum dotnet_knob_state hard;
		uint64_t hard_v, heap;
		const char *from;
		size_t ranges;
		bool notes;
	} rows[] = {
		{"{\"t_ms\":1796031079000,\"gc_heap_hard_limit\":268435456,"
		 "\"gc_heap_hard_limit_from\":\"DOTNET_\",\"gc_heap_rss\":"
		 "152043520,\"rss\":188231680,\"gc_ranges\":[[135239930216448,"
		 "135514808123392]]}",
		 true, DOTNET_KNOB_SET, 268435456, 152043520, "DOTNET_", 1,
		 false},
		{"{\"gc_heap_hard_limit\":null,\"gc_heap_hard_limit_bad\":true,"
		 "\"gc_heap_hard_limit_from\":\"COMPlus_\"}",
		 true, DOTNET_KNOB_BAD, 0, 0, "COMPlus_", 0, false},
		/* a pod's prefix is not trusted; ranges of the wrong shape
		 * are left out */
		{"{\"gc_heap_hard_limit\":1,\"gc_heap_hard_limit_from\":\"X_\","
		 "\"gc_ranges\":[[5,1],[1],\"a\",[1,2,3],[-4,9],[16,32]]}",
		 true, DOTNET_KNOB_SET, 1, 0, "DOTNET_", 1, true},
		{"{\"gc_heap_hard_limit\":\"0x10\",\"gc_heap_rss\":true,"
		 "\"gc_ranges\":{}}",
		 true, DOTNET_KNOB_UNSET, 0, 0, "DOTNET_", 0, true},
		{"7", false, DOTNET_KNOB_UNSET, 0, 0, "", 0, true},
	};
	int row = diag_runtime_index("dotnet");

	cr_assert_geq(row, 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct bundle *b;
		const struct dotnet_procs *f;

		cr_assert_eq(bundle_new("t", &b), 0);
		bundle_add(b, "processes/4242/status", status,
			   sizeof(status) - 1, 1);
		bundle_add(b, "processes/4242/dotnet/facts.json", rows[i].facts,
			   strlen(rows[i].facts), 1);
		cr_assert_eq(
			diagnosis_load_bundle(b, NULL, 1796031080000ull, &in),
			0);
		f = in.rt_data[row];
		cr_expect_eq(f != NULL, rows[i].loaded, "row %zu", i);
		cr_expect_eq(in.procs[0].n_foreign, rows[i].ranges, "row %zu",
			     i);
		if (f) {
			const struct dotnet_knob *k = &f->p[0].facts.hard_limit;

			cr_expect_eq(k->state, rows[i].hard, "row %zu", i);
			cr_expect_eq(k->v, rows[i].hard_v, "row %zu", i);
			cr_expect_str_eq(k->from, rows[i].from, "row %zu", i);
			cr_expect_eq(f->p[0].gc_heap_rss, rows[i].heap);
		}
		cr_expect_eq(in.notes.n > 0, rows[i].notes,
			     "row %zu: %zu notes", i, in.notes.n);
		diag_input_release(&in);
		bundle_free(b);
	}
}

/* One .NET process in a 200 MiB input: its GC heap's RSS, the rest, and
 * DOTNET_GCHeapHardLimit (0: unset). */
static void dotnet_input(struct diag_input *in, uint64_t heap, uint64_t rss,
			 uint64_t hard)
{
	int row = diag_runtime_index("dotnet");
	struct dotnet_procs *f = calloc(1, sizeof(*f));

	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 200 * MIB;
	in->have_stats = true;
	in->anon = 196 * MIB;
	in->have_snapshot = true;
	in->snapshot_age_s = 1.0;
	in->procs = calloc(1, sizeof(*in->procs));
	in->n_procs = 1;
	in->procs[0] = (struct diag_proc){.pid = PID, .comm = "dotnet"};
	in->victim_pid = PID;
	f->n = 1;
	f->p[0] = (struct dotnet_proc){
		.pid = PID, .gc_heap_rss = heap, .rss = rss, .age_s = 1.0};
	if (hard)
		f->p[0].facts.hard_limit = (struct dotnet_knob){
			.state = DOTNET_KNOB_SET, .v = hard, .from = "DOTNET_"};
	in->rt_data[row] = f;
}

Test(runtime_dotnet, verdict_table)
{
	static const struct {
		uint64_t heap, rss, hard;
		int confidence;
		const char *detail, *reco0;
	} rows[] = {
		/* the default, 150 MiB, and 60 MiB besides: over 200 MiB;
		 * 180 - 60 = 120 MiB = 0x7800000, 60 % = 0x3c */
		{150 * MIB, 210 * MIB, 0, 80, "GCHeapHardLimit unset",
		 "DOTNET_GCHeapHardLimit=0x7800000 (120 MiB: 90% of the 200 "
		 "MiB "
		 "limit less 60.0 MiB outside the GC heap), or "
		 "DOTNET_GCHeapHardLimitPercent=0x3c"},
		/* the default beside 40 MiB fits: the live heap reached it */
		{150 * MIB, 190 * MIB, 0, 65, "",
		 "DOTNET_GCHeapHardLimit=0x8c00000 (140 MiB"},
		/* 180 - 30 = 150 MiB = 0x9600000 */
		{160 * MIB, 190 * MIB, 256 * MIB, 80,
		 "GCHeapHardLimit above the limit",
		 "DOTNET_GCHeapHardLimit=0x9600000 "},
		{120 * MIB, 150 * MIB, 128 * MIB, 65, "",
		 "DOTNET_GCHeapHardLimit=0x9600000 "},
		{60 * MIB, 190 * MIB, 0, -1, NULL, NULL},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct diagnosis d;
		struct diag_verdict *v;

		dotnet_input(&in, rows[i].heap, rows[i].rss, rows[i].hard);
		diagnosis_run(&in, &d);
		cr_expect_str_eq(d.parts[0].name, ".NET heap");
		cr_expect_eq(d.parts[0].bytes, rows[i].heap);
		v = diag_verdict_find(&d, DIAG_DOTNET_HEAP);
		if (rows[i].confidence < 0) {
			cr_expect_null(v, "row %zu: %s", i, d.summary);
			diag_input_release(&in);
			continue;
		}
		cr_assert_not_null(v, "row %zu: %s", i, d.summary);
		cr_expect_eq(d.verdicts[0].kind, DIAG_DOTNET_HEAP);
		cr_expect_eq(v->basis, DIAG_BASIS_MEASURED);
		cr_expect_eq(v->confidence, rows[i].confidence, "row %zu", i);
		cr_expect_str_eq(v->detail, rows[i].detail, "row %zu", i);
		cr_expect(startswith(v->recommend[0], rows[i].reco0),
			  "row %zu: %s", i, v->recommend[0]);
		cr_expect(startswith(v->recommend[1], "dotnet-gcdump collect"));
		cr_expect(startswith(v->evidence[0],
				     "pid 4242 (.NET): the .NET "
				     "GC heap"),
			  "%s", v->evidence[0]);
		diag_input_release(&in);
	}
}

/* The whole path on the fixture: facts.json from the hooks beside the
 * snapshot's arenas.json (whose "arena heaps" include the GC's
 * reservations: they start 64 MiB-aligned, rw-p before ---p) and
 * pmap.txt. glibc keeps only its own arena and [heap]; the dotnet-heap
 * verdict leads, and report.html names the GC heap's mappings. */
Test(runtime_dotnet, fixture_end_to_end)
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

	dotnet_proc(&p, FIX "environ-default");
	s = fixture_proc_sight(&p, PID, 200 * MIB);
	cr_assert_eq(rt_dotnet.snapshot(&s, p.out_fd), 0);
	strbuf_init(&facts, 1u << 20);
	cr_assert_eq(
		read_file_at(p.out_fd, "dotnet/facts.json", 1u << 20, &facts),
		0);
	fixture_load(FIX "smaps", &sm);
	smaps_init(&m);
	cr_assert_eq(smaps_parse(sm.buf, sm.len, &m), 0);
	cr_assert_eq(smaps_classify(&m, &sum), 0);
	/* what glibc would take without .NET's ranges: 4 "arena heaps",
	 * 150 MiB, of which 145 are the GC's */
	cr_assert_eq(sum.arena_rss_kb, 150 << 10);
	ar = smaps_summary_arenas_json(&sum);
	ar_txt = json_object_to_json_string(ar);
	strbuf_init(&pmap, 4u << 20);
	cr_assert_eq(smaps_render_pmap(&m, PID, "dotnet", &pmap), 0);
	cr_assert_eq(bundle_new("t", &b), 0);
	bundle_add(b, "processes/4242/status", status, sizeof(status) - 1, 1);
	bundle_add(b, "processes/4242/dotnet/facts.json", facts.buf, facts.len,
		   1);
	bundle_add(b, "processes/4242/arenas.json", ar_txt, strlen(ar_txt), 1);
	bundle_add(b, "processes/4242/pmap.txt", pmap.buf, pmap.len, 1);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 0, &in), 0);
	cr_expect_eq(in.procs[0].n_foreign, 2);
	cr_expect_eq(in.procs[0].arena_rss_kb, 5 << 10);
	cr_expect_eq(in.procs[0].n_arenas, 1);
	in.have_usage = true;
	in.usage_bytes = 190 * MIB;
	in.limit_bytes = 200 * MIB;
	in.have_stats = true;
	in.anon = 175 * MIB;
	diagnosis_run(&in, &d);
	cr_expect_str_eq(diag_kind_name(d.verdicts[0].kind), "dotnet-heap",
			 "%s", d.summary);
	/* the default limit, 150 MiB, beside 35,340 kB fits in 200 MiB:
	 * the heap itself reached it; 180 MiB - 35,340 kB = 145 MiB */
	cr_expect_eq(d.verdicts[0].confidence, 65);
	cr_expect(startswith(d.summary,
			     "dotnet-heap, 145 MiB of the 200 MiB limit; "
			     "DOTNET_GCHeapHardLimit=0x9100000 (145 MiB"),
		  "%s", d.summary);
	cr_expect_str_eq(d.parts[0].name, ".NET heap");
	cr_expect_eq(d.parts[0].bytes, 145 * MIB);
	cr_expect_str_eq(d.parts[1].name, "glibc arenas (in-use unknown)");
	cr_expect_eq(d.parts[1].bytes, (9 + 5) * MIB);
	cr_expect_null(diag_verdict_find(&d, DIAG_GLIBC_RETENTION));
	dj = diagnosis_to_json(&d);
	bundle_add_json(b, "diagnosis.json", dj, 1);
	strbuf_init(&html, 16u << 20);
	cr_assert_eq(report_render_html(b, &html), 0);
	cr_expect(strstr(html.buf, ".NET GC heap"));
	cr_expect(strstr(html.buf, "dotnet-gcdump"));
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
