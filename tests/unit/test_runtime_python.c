/* SPDX-License-Identifier: Apache-2.0 */
/* CPython (forensics/runtimes/python.c): its parsers on the captured
 * victim (tests/fixtures/python/README.md) and on hand-made edge cases;
 * its table entry rt_python, whose sidecar hooks run on a /proc/<pid>
 * made of that capture and an ELF fixture (tests/fixtures/rtelf/), whose
 * facts.json is loaded, put in the ledger before glibc's rows, judged
 * and named in report.html. No live /proc. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/report.h"
#include "forensics/runtimes/python.h"
#include "forensics/runtimes/registry.h"
#include "kernel/smaps.h"
#include "runtime_fixture.h"

#define FIX "tests/fixtures/python/rows/"
#define MIB (1ull << 20)
#define PID 12192 /* the captured victim's */
#define LIMITS_UNLIMITED                                                       \
	"Limit                     Soft Limit           Hard Limit           " \
	"Units     \n"                                                         \
	"Max address space         unlimited            unlimited            " \
	"bytes     \n"
#define LIMITS_100MIB                                                          \
	"Limit                     Soft Limit           Hard Limit           " \
	"Units     \n"                                                         \
	"Max address space         104857600            unlimited            " \
	"bytes     \n"

Test(runtime_python, detect_captured_victim_by_symbol)
{
	struct strbuf maps, syms, exe;
	struct python_detect d;

	fixture_load(FIX "maps", &maps);
	fixture_load(FIX "elf-symbols", &syms);
	fixture_load(FIX "exe", &exe);
	while (exe.len && exe.buf[exe.len - 1] == '\n')
		exe.buf[--exe.len] = '\0';
	cr_assert_str_eq(exe.buf, "/usr/bin/python3.11");
	cr_assert_eq(python_detect(exe.buf, maps.buf, maps.len,
				   fixture_has_symbol, syms.buf, &d),
		     1);
	cr_assert_eq(d.how, PYTHON_BY_SYMBOL);
	cr_assert_eq(d.minor, 11);
	/* Debian's python3.11 links libpython in: without the ELF, the
	 * mappings alone do not say Python */
	cr_assert_eq(python_detect(exe.buf, maps.buf, maps.len, NULL, NULL, &d),
		     0);
	strbuf_release(&maps);
	strbuf_release(&syms);
	strbuf_release(&exe);
}

Test(runtime_python, detect_libpython_and_others)
{
	static const char lib[] =
		"7f0000000000-7f0000100000 r-xp 00000000 fe:00 12 "
		"/usr/lib/x86_64-linux-gnu/libpython3.9.so.1.0\n";
	struct strbuf maps, syms;
	struct python_detect d;

	cr_assert_eq(python_detect(NULL, lib, sizeof(lib) - 1, NULL, NULL, &d),
		     1);
	cr_assert_eq(d.how, PYTHON_BY_LIBPYTHON);
	cr_assert_eq(d.minor, 9);
	fixture_load("tests/fixtures/node/sessions/maps", &maps);
	fixture_load("tests/fixtures/node/sessions/elf-symbols", &syms);
	cr_assert_eq(python_detect("/usr/bin/node", maps.buf, maps.len,
				   fixture_has_symbol, syms.buf, &d),
		     0);
	cr_assert_eq(python_detect(NULL, "\n\n", 2, NULL, NULL, &d), -EBADMSG);
	strbuf_release(&maps);
	strbuf_release(&syms);
}

struct minor_case {
	char name[64];
	int minor;
};

ParameterizedTestParameters(runtime_python, minor)
{
	static struct minor_case cases[] = {
		{"/usr/bin/python3.11", 11},
		{"python3.9", 9},
		{"/usr/lib/libpython3.12.so.1.0", 12},
		{"/usr/bin/python3.11 (deleted)", 11},
		{"/usr/bin/python3", -1},
		{"python3.", -1},
		{"python3.1234", -1},
		{"python2.7", -1},
		{"", -1},
	};

	return cr_make_param_array(struct minor_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct minor_case *c, runtime_python, minor)
{
	cr_assert_eq(python_minor_from_name(c->name), c->minor, "%s", c->name);
}

struct facts_case {
	char cmd[96];
	size_t cmd_len;
	char env[128];
	size_t env_len;
	char pymalloc_env[24];
	bool pymalloc;
	unsigned trace;
};

#define C(s) s, sizeof(s) - 1

ParameterizedTestParameters(runtime_python, facts)
{
	static struct facts_case cases[] = {
		/* the victim's cmdline; its environ had none of the keys */
		{C("/usr/bin/python3\0rows.py\0"
		   "32\0"
		   "0\0"
		   "100\0"),
		 C(""), "", true, 0},
		{C("python3\0app.py\0"), C("PYTHONMALLOC=malloc\0"), "malloc",
		 false, 0},
		{C("python3\0app.py\0"), C("PYTHONMALLOC=pymalloc_debug\0"),
		 "pymalloc_debug", true, 0},
		{C("python3\0app.py\0"), C("PYTHONMALLOC=debug\0"), "debug",
		 true, 0},
		{C("python3\0app.py\0"), C("PYTHONMALLOC=mimalloc\0"),
		 "mimalloc", false, 0},
		{C("python3\0app.py\0"), C("PYTHONTRACEMALLOC=25\0"), "", true,
		 25},
		{C("python3\0-X\0tracemalloc=5\0app.py\0"), C(""), "", true, 5},
		{C("python3\0-Xtracemalloc\0app.py\0"), C(""), "", true, 1},
		/* the command line overrides the environment */
		{C("python3\0-X\0tracemalloc=0\0app.py\0"),
		 C("PYTHONTRACEMALLOC=9\0"), "", true, 0},
		/* after the script: the script's arguments */
		{C("python3\0app.py\0-X\0tracemalloc=3\0"), C(""), "", true, 0},
		{C("python3\0-c\0pass\0-X\0tracemalloc\0"), C(""), "", true, 0},
		/* hostile values: cut and masked, and no number */
		{C("python3\0a\0"),
		 C("PYTHONMALLOC=\x1b[31mmalloc_with_a_very_long_name\0"),
		 "????mmalloc_with_a_very", false, 0},
		{C("python3\0a\0"),
		 C("PYTHONTRACEMALLOC=99999999999999999999\0"), "", true, 0},
		{C("python3\0a\0"), C("PYTHONTRACEMALLOC=70000\0"), "", true,
		 0},
		/* the last entry without its NUL (a cut read) still counts */
		{C("python3\0a\0"), C("A=1\0PYTHONTRACEMALLOC=3"), "", true, 3},
		{C(""), C(""), "", true, 0},
	};

	return cr_make_param_array(struct facts_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct facts_case *c, runtime_python, facts)
{
	struct python_facts f;

	cr_assert_eq(
		python_parse_facts(c->cmd, c->cmd_len, c->env, c->env_len, &f),
		0);
	cr_assert_str_eq(f.pymalloc_env, c->pymalloc_env);
	cr_assert_eq(f.pymalloc, c->pymalloc, "%s", c->env);
	cr_assert_eq(f.tracemalloc, c->trace, "%s / %s", c->cmd, c->env);
}

static void classify_fixture(struct python_rss *r, int minor,
			     const struct python_facts *f)
{
	struct strbuf sb;
	struct smaps s;

	fixture_load(FIX "smaps", &sb);
	smaps_init(&s);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &s), 0);
	cr_assert_eq(python_classify(&s, minor, f, NULL, r), 0);
	smaps_release(&s);
	strbuf_release(&sb);
}

Test(runtime_python, classify_captured_victim)
{
	struct python_rss r;
	struct python_facts malloc_only = {.pymalloc = false};

	classify_fixture(&r, 11, NULL);
	/* summed by hand from the file (README.md) */
	cr_assert_eq(r.total_kb, 110320);
	cr_assert_eq(r.glibc_heap_kb, 39240);
	cr_assert_eq(r.pymalloc_kb, 48744, "%lu", (unsigned long)r.pymalloc_kb);
	cr_assert_eq(r.arenas, 49);
	cr_assert_eq(r.mmap_kb, 15224, "%lu", (unsigned long)r.mmap_kb);
	cr_assert_eq(r.pymalloc_kb + r.glibc_heap_kb + r.mmap_kb + r.other_kb +
			     r.file_kb,
		     r.total_kb - 4, "the parts add up, but [vdso]'s 4 kB");
	/* PYTHONMALLOC=malloc: no arenas, the same runs are buffers */
	classify_fixture(&r, 11, &malloc_only);
	cr_assert_eq(r.pymalloc_kb, 0);
	cr_assert_eq(r.arenas, 0);
	cr_assert_eq(r.mmap_kb, 15224 + 48744);
	/* 256 KiB arenas (before 3.10): every 1 MiB run is 4 of them */
	classify_fixture(&r, 9, NULL);
	cr_assert_eq(r.arenas, 49 * 4);
}

/* One anonymous mapping the kernel merged from three: two 1 MiB arenas,
 * a glibc mmap'd chunk of 8 MiB + 8 KiB, one more arena; fully resident. */
#define MERGED_AT 0x7f0000000000ull
#define MERGED_CHUNK (8 * MIB + 8192)
#define MERGED_SIZE (3 * MIB + MERGED_CHUNK)

struct fake_mem {
	uint64_t chunk_at; /* where the chunk's header is */
	uint64_t header;   /* its size field */
	uint64_t fail_at;  /* a read there fails (0: none) */
	unsigned reads;
};

static int fake_peek(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct fake_mem *m = ctx;
	/* an arena starts with a pool header: its count, a free pointer */
	uint64_t h[2] = {3, 0x7f0000001230};

	m->reads++;
	cr_assert_eq(n, sizeof(h));
	if (addr == m->fail_at)
		return -EIO;
	if (addr == m->chunk_at) {
		h[0] = 0;
		h[1] = m->header;
	}
	memcpy(buf, h, sizeof(h));
	return 0;
}

static void classify_merged(struct fake_mem *m, struct python_rss *r)
{
	char text[512];
	struct smaps s;
	struct python_peek peek = {.fn = fake_peek, .ctx = m};
	unsigned long long kb = MERGED_SIZE / 1024;

	snprintf(text, sizeof(text),
		 "%llx-%llx rw-p 00000000 00:00 0 \nSize: %llu kB\n"
		 "Rss: %llu kB\n",
		 MERGED_AT, MERGED_AT + MERGED_SIZE, kb, kb);
	smaps_init(&s);
	cr_assert_eq(smaps_parse(text, strlen(text), &s), 0);
	cr_assert_eq(python_classify(&s, 11, NULL, &peek, r), 0);
	smaps_release(&s);
}

/* Split at the chunk's header: the arenas around it are arenas again. */
Test(runtime_python, classify_splits_a_merged_mapping_at_glibc_header)
{
	struct fake_mem m = {.chunk_at = MERGED_AT + 2 * MIB,
			     .header = MERGED_CHUNK | 2};
	struct python_rss r;

	classify_merged(&m, &r);
	cr_assert(r.peeked);
	cr_assert_eq(r.split, 1);
	cr_assert_eq(r.arenas, 3);
	cr_assert_eq(r.mmap_kb, MERGED_CHUNK / 1024, "%lu",
		     (unsigned long)r.mmap_kb);
	cr_assert_eq(r.pymalloc_kb, 3 * 1024);
	cr_assert_eq(m.reads, 4, "one read a piece");
	/* the range goes with the larger part */
	cr_assert_eq(r.buffers.n, 1);
	cr_assert_eq(r.arena_runs.n, 0);
}

/* What is not an mmap'd chunk's header (other flags, a size past the
 * mapping's end, not whole pages) leaves arenas while one fits, the rest
 * a buffer; a failed read leaves the mapping to the size rule. */
Test(runtime_python, classify_merged_mapping_without_a_header)
{
	static const uint64_t headers[] = {
		MERGED_CHUNK | 3,	      /* PREV_INUSE: a heap chunk */
		MERGED_CHUNK | 6,	      /* NON_MAIN_ARENA */
		(MERGED_CHUNK + 2 * MIB) | 2, /* past the end */
		(MERGED_CHUNK - 16) | 2,      /* not whole pages */
	};
	struct python_rss r;

	for (size_t i = 0; i < sizeof(headers) / sizeof(*headers); i++) {
		struct fake_mem m = {.chunk_at = MERGED_AT + 2 * MIB,
				     .header = headers[i]};

		classify_merged(&m, &r);
		cr_assert(r.peeked);
		cr_assert_eq(r.split, 1, "header %zu", i);
		cr_assert_eq(r.arenas, 11, "header %zu: %lu", i,
			     (unsigned long)r.arenas);
		cr_assert_eq(r.mmap_kb, 8, "the last 8 KiB");
	}
	{
		struct fake_mem m = {.chunk_at = MERGED_AT + 2 * MIB,
				     .header = MERGED_CHUNK | 2,
				     .fail_at = MERGED_AT + 2 * MIB};

		classify_merged(&m, &r);
		cr_assert_eq(r.split, 0);
		cr_assert_eq(r.arenas, 0);
		cr_assert_eq(r.mmap_kb, MERGED_SIZE / 1024, "by size");
	}
}

Test(runtime_python, verdict_on_the_victim)
{
	struct python_rss r;
	struct python_facts f = {.pymalloc = true};
	struct python_figures fig = {
		.limit = 200 * MIB, .rss = &r, .facts = &f};
	struct rtproc_verdict v;

	classify_fixture(&r, 11, &f);
	cr_assert(python_verdict(&fig, &v));
	cr_assert_str_eq(v.kind, "python-heap");
	cr_assert_eq(v.confidence, 70);
	cr_assert_eq(v.bytes, (39240ull + 48744 + 15224) * 1024);
	cr_assert(strstr(v.summary, "pymalloc arenas 48 MiB, glibc heap 38 "
				    "MiB, mmap'd buffers 15 MiB"),
		  "%s", v.summary);
	cr_assert(strstr(v.remedies[0], "PYTHONTRACEMALLOC=25"));
	cr_assert(strstr(v.remedies[1], "memray run"));
	/* pymalloc is the larger part: no glibc advice */
	cr_assert_eq(v.n_remedies, 2);
}

Test(runtime_python, verdict_glibc_dominates_and_tracemalloc_on)
{
	struct python_rss r = {.pymalloc_kb = 10 << 10,
			       .glibc_heap_kb = 150 << 10,
			       .mmap_kb = 10 << 10,
			       .total_kb = 190 << 10};
	struct python_facts f = {.pymalloc = true, .tracemalloc = 10};
	struct python_figures fig = {
		.limit = 200 * MIB, .usage = 200 * MIB, .rss = &r, .facts = &f};
	struct rtproc_verdict v;

	cr_assert(python_verdict(&fig, &v));
	cr_assert(strstr(v.remedies[0], "tracemalloc is on (10 frames)"));
	cr_assert(strstr(v.remedies[2], "MALLOC_ARENA_MAX=2"), "%s",
		  v.remedies[2]);
	cr_assert(strstr(v.remedies[3], "malloc_trim(0)"));
	/* mostly buffers: less sure */
	r = (struct python_rss){.mmap_kb = 150 << 10, .total_kb = 160 << 10};
	cr_assert(python_verdict(&fig, &v));
	cr_assert_eq(v.confidence, 60);
	/* a small heap beside a large rest: no verdict */
	r = (struct python_rss){.pymalloc_kb = 20 << 10, .total_kb = 190 << 10};
	cr_assert_not(python_verdict(&fig, &v));
	r = (struct python_rss){0};
	fig.usage = 0;
	cr_assert_not(python_verdict(&fig, &v));
}

/* ---- the table's entry ---- */

/* The captured victim as a /proc/<pid>: its maps, smaps and cmdline, env
 * as its environ, limits, and an exe defining _PyRuntime named
 * python3.11 (the rtelf fixture). */
static void victim_proc(struct fixture_proc *p, const char *env, size_t len,
			const char *limits)
{
	fixture_proc_make(p);
	fixture_proc_copy(p, "maps", FIX "maps");
	fixture_proc_copy(p, "smaps", FIX "smaps");
	fixture_proc_copy(p, "cmdline", FIX "cmdline");
	fixture_proc_put(p, "environ", env, len);
	if (limits)
		fixture_proc_put(p, "limits", limits, strlen(limits));
	fixture_proc_exe(p, "tests/fixtures/rtelf/sysv-python.so",
			 "python3.11");
}

Test(runtime_python, sidecar_hooks_on_the_captured_victim)
{
	static const char env[] = "HOME=/root\0ROWS_DB_PASSWORD=hunter2\0"
				  "PYTHONTRACEMALLOC=5\0";
	struct fixture_proc p;
	struct rt_sight s;
	struct json_object *o;
	struct strbuf txt;

	victim_proc(&p, env, sizeof(env) - 1, LIMITS_UNLIMITED);
	s = fixture_proc_sight(&p, PID, 200 * MIB);
	cr_assert_eq(rt_python.detect(&s), 1);
	cr_assert_eq(rt_python.first_sight(&s), 0);
	cr_expect_str_eq(s.event_kind, "python-heap-unbounded");
	cr_expect(strstr(s.event_text,
			 "pid 12192 (CPython 3.11): nothing bounds its heap "
			 "below the container's limit (200 MiB)"),
		  "%s", s.event_text);
	cr_expect(strstr(s.event_text, "tracemalloc on (5 frames)"), "%s",
		  s.event_text);
	cr_assert_eq(rt_python.snapshot(&s, p.out_fd), 0);
	o = fixture_proc_json(&p, "python/facts.json");
#define U(k) json_object_get_uint64(json_object_object_get(o, k))
#define S(k) json_object_get_string(json_object_object_get(o, k))
	cr_expect_str_eq(S("version"), "3.11");
	cr_expect_str_eq(S("detected_by"), "symbol");
	cr_expect(
		json_object_get_boolean(json_object_object_get(o, "pymalloc")));
	cr_expect_eq(U("tracemalloc"), 5);
	cr_expect_null(json_object_object_get(o, "address_space_limit"));
	/* summed by hand from the capture (README.md) */
	cr_expect_eq(U("pymalloc_rss"), 48744ull * 1024);
	cr_expect_eq(U("arenas"), 49);
	cr_expect_eq(U("glibc_heap_rss"), 39240ull * 1024);
	cr_expect_eq(U("mmap_rss"), 15224ull * 1024);
	cr_expect_eq(U("rss"), 110320ull * 1024);
	/* a /proc made of files has no mem: sizes alone split it */
	cr_expect_str_eq(S("split"), "sizes");
	cr_expect_eq(U("split_mappings"), 0);
#undef U
#undef S
	json_object_put(o);
	strbuf_init(&txt, 1u << 20);
	cr_assert_eq(
		read_file_at(p.out_fd, "python/facts.json", 1u << 20, &txt), 0);
	cr_expect_null(strstr(txt.buf, "hunter2"));
	cr_expect_null(strstr(txt.buf, "PASSWORD"));
	strbuf_release(&txt);
	fixture_proc_done(&p);
}

/* An address-space limit below the container's makes malloc fail first
 * (MemoryError): no event; none without a known limit either. */
Test(runtime_python, first_sight_table)
{
	static const struct {
		const char *limits;
		uint64_t limit;
		const char *kind;
	} rows[] = {
		{LIMITS_UNLIMITED, 200 * MIB, "python-heap-unbounded"},
		{NULL, 200 * MIB, "python-heap-unbounded"},
		{LIMITS_100MIB, 200 * MIB, ""},
		{LIMITS_100MIB, 64 * MIB, "python-heap-unbounded"},
		{LIMITS_UNLIMITED, 0, ""},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fixture_proc p;
		struct rt_sight s;

		victim_proc(&p, "", 0, rows[i].limits);
		s = fixture_proc_sight(&p, PID, rows[i].limit);
		cr_assert_eq(rt_python.first_sight(&s), 0);
		cr_expect_str_eq(s.event_kind, rows[i].kind, "row %zu", i);
		fixture_proc_done(&p);
	}
}

Test(runtime_python, detect_refuses_others)
{
	struct fixture_proc p;
	struct rt_sight s;

	fixture_proc_make(&p);
	fixture_proc_copy(&p, "maps", "tests/fixtures/node/sessions/maps");
	fixture_proc_exe(&p, "tests/fixtures/rtelf/gnu-node.so", "node");
	s = fixture_proc_sight(&p, 1, 0);
	cr_expect_eq(rt_python.detect(&s), 0);
	fixture_proc_done(&p);
	/* an exe that imports _PyRuntime does not define it */
	fixture_proc_make(&p);
	fixture_proc_copy(&p, "maps", FIX "maps");
	fixture_proc_exe(&p, "tests/fixtures/rtelf/imports.so", "python3.11");
	s = fixture_proc_sight(&p, 1, 0);
	cr_expect_eq(rt_python.detect(&s), 0);
	fixture_proc_done(&p);
}

static const char status[] = "Name:\tpython3\nPid:\t12192\nPPid:\t1\n"
			     "RssAnon:\t104532 kB\nRssFile:\t5788 kB\n";

Test(runtime_python, load_from_bundle)
{
	static const struct {
		const char *facts;
		bool loaded;
		int minor;
		uint64_t pymalloc, glibc;
		bool pymalloc_on;
		const char *env;
		bool notes;
	} rows[] = {
		{"{\"t_ms\":1796031079000,\"version\":\"3.11\",\"pymalloc\":"
		 "true,\"pythonmalloc\":\"\",\"tracemalloc\":0,"
		 "\"pymalloc_rss\":49913856,\"arenas\":49,"
		 "\"glibc_heap_rss\":40181760,\"mmap_rss\":15589376,"
		 "\"rss\":112967680}",
		 true, 11, 49913856, 40181760, true, "", false},
		{"{\"version\":\"2.7\",\"pymalloc\":false,\"pythonmalloc\":"
		 "\"malloc\"}",
		 true, -1, 0, 0, false, "malloc", false},
		/* a pod's PYTHONMALLOC value, masked as the parser masks it */
		{"{\"pythonmalloc\":\"\\u001b[31mx\",\"version\":\"3.x\"}",
		 true, -1, 0, 0, true, "????mx", false},
		{"{\"version\":311,\"pymalloc\":\"yes\",\"pymalloc_rss\":-1,"
		 "\"glibc_heap_rss\":\"1\",\"tracemalloc\":1e9}",
		 true, -1, 0, 0, true, "", true},
		{"\"a string\"", false, 0, 0, 0, true, "", true},
		{"", false, 0, 0, 0, true, "", false},
	};
	int row = diag_runtime_index("python");

	cr_assert_geq(row, 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct bundle *b;
		const struct python_procs *f;

		cr_assert_eq(bundle_new("t", &b), 0);
		bundle_add(b, "processes/12192/status", status,
			   sizeof(status) - 1, 1);
		bundle_add(b, "processes/12192/python/facts.json",
			   rows[i].facts, strlen(rows[i].facts), 1);
		cr_assert_eq(
			diagnosis_load_bundle(b, NULL, 1796031080000ull, &in),
			0);
		f = in.rt_data[row];
		cr_expect_eq(f != NULL, rows[i].loaded, "row %zu", i);
		if (f) {
			cr_expect_eq(f->p[0].pid, PID);
			cr_expect_eq(f->p[0].minor, rows[i].minor, "row %zu",
				     i);
			cr_expect_eq(f->p[0].pymalloc_rss, rows[i].pymalloc);
			cr_expect_eq(f->p[0].glibc_heap_rss, rows[i].glibc);
			cr_expect_eq(f->p[0].facts.pymalloc,
				     rows[i].pymalloc_on, "row %zu", i);
			cr_expect_str_eq(f->p[0].facts.pymalloc_env,
					 rows[i].env, "row %zu", i);
		}
		cr_expect_eq(in.notes.n > 0, rows[i].notes,
			     "row %zu: %zu notes", i, in.notes.n);
		diag_input_release(&in);
		bundle_free(b);
	}
}

/* One CPython process in a 200 MiB input: its pymalloc arenas, buffers
 * and glibc heap (arenas.json's [heap], in-use unknown), with a steady
 * climb in the timeline; tracemalloc frames. */
static void python_input(struct diag_input *in, uint64_t pym, uint64_t buf,
			 uint64_t glibc, unsigned trace)
{
	int row = diag_runtime_index("python");
	struct python_procs *f = calloc(1, sizeof(*f));

	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 200 * MIB;
	in->have_stats = true;
	in->anon = 196 * MIB;
	in->have_snapshot = true;
	in->snapshot_age_s = 0.5;
	in->procs = calloc(1, sizeof(*in->procs));
	in->n_procs = 1;
	in->procs[0] = (struct diag_proc){.pid = PID,
					  .comm = "python3",
					  .have_smaps = true,
					  .heap_rss_kb = glibc / 1024};
	in->victim_pid = PID;
	in->tl = calloc(12, sizeof(*in->tl));
	in->n_tl = 12;
	for (size_t i = 0; i < 12; i++)
		in->tl[i] = (struct diag_sample){.t = -11.0 + (double)i,
						 .usage = (30 + 15 * i) * MIB,
						 .nprocs = 1};
	f->n = 1;
	f->p[0] = (struct python_proc){
		.pid = PID,
		.minor = 11,
		.facts = {.pymalloc = true, .tracemalloc = trace},
		.pymalloc_rss = pym,
		.arenas = pym / MIB,
		.glibc_heap_rss = glibc,
		.mmap_rss = buf,
		.rss = pym + buf + glibc + 8 * MIB,
		.age_s = 0.5,
	};
	in->rt_data[row] = f;
}

Test(runtime_python, verdict_table)
{
	static const struct {
		uint64_t pym, buf, glibc;
		unsigned trace;
		int confidence;
		const char *detail, *reco0;
		bool glibc_advice;
	} rows[] = {
		/* the victim's shape at the kill: arenas first */
		{100 * MIB, 18 * MIB, 75 * MIB, 0, 70, "pymalloc arenas",
		 "tracemalloc: PYTHONTRACEMALLOC=25", false},
		/* glibc's heap the larger part: its advice too */
		{20 * MIB, 10 * MIB, 160 * MIB, 10, 70, "glibc heap",
		 "tracemalloc is on (10 frames)", true},
		/* mostly buffers: less sure */
		{20 * MIB, 150 * MIB, 10 * MIB, 0, 60, "mmap'd buffers",
		 "tracemalloc: ", false},
		/* not most of the usage: no python-heap */
		{20 * MIB, 10 * MIB, 20 * MIB, 0, -1, NULL, NULL, false},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct diagnosis d;
		struct diag_verdict *v;
		bool advice = false;

		python_input(&in, rows[i].pym, rows[i].buf, rows[i].glibc,
			     rows[i].trace);
		diagnosis_run(&in, &d);
		/* the interpreter's rows come before glibc's */
		cr_expect_str_eq(d.parts[0].name, "python heap");
		cr_expect_eq(d.parts[0].bytes, rows[i].pym);
		cr_expect_str_eq(d.parts[1].name, "python buffers");
		cr_expect_eq(d.parts[1].bytes, rows[i].buf);
		cr_expect_str_eq(d.parts[2].name,
				 "glibc arenas (in-use unknown)");
		cr_expect_eq(d.parts[2].bytes, rows[i].glibc);
		v = diag_verdict_find(&d, DIAG_PYTHON_HEAP);
		if (rows[i].confidence < 0) {
			cr_expect_null(v, "row %zu: %s", i, d.summary);
			diag_input_release(&in);
			continue;
		}
		cr_assert_not_null(v, "row %zu: %s", i, d.summary);
		cr_expect_eq(d.verdicts[0].kind, DIAG_PYTHON_HEAP,
			     "row %zu: %s", i, d.summary);
		cr_expect_eq(v->basis, DIAG_BASIS_MEASURED);
		cr_expect_eq(v->confidence, rows[i].confidence, "row %zu", i);
		cr_expect_str_eq(v->detail, rows[i].detail, "row %zu", i);
		cr_expect_eq(v->bytes,
			     rows[i].pym + rows[i].buf + rows[i].glibc);
		cr_expect(startswith(v->recommend[0], rows[i].reco0),
			  "row %zu: %s", i, v->recommend[0]);
		cr_expect(startswith(v->recommend[1], "memray: "));
		for (size_t k = 0; k < v->n_recommend; k++)
			advice |= strstr(v->recommend[k],
					 "MALLOC_ARENA_MAX=2") != NULL;
		cr_expect_eq(advice, rows[i].glibc_advice, "row %zu", i);
		cr_expect(startswith(v->evidence[0],
				     "pid 12192 (CPython 3.11): "
				     "the Python heap"),
			  "%s", v->evidence[0]);
		cr_expect(startswith(v->recommend[v->n_recommend - 1],
				     "or raise the limit to"));
		cr_expect_null(diag_verdict_find(&d, DIAG_NATIVE_GROWTH));
		diag_input_release(&in);
	}
}

/* The whole path on the capture, as for Node.js: facts.json from the
 * hooks beside status, arenas.json and pmap.txt; the python-heap verdict,
 * its rows before glibc's, and report.html naming pymalloc's arenas. */
Test(runtime_python, captured_victim_end_to_end)
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

	victim_proc(&p, "", 0, LIMITS_UNLIMITED);
	s = fixture_proc_sight(&p, PID, 200 * MIB);
	cr_assert_eq(rt_python.snapshot(&s, p.out_fd), 0);
	strbuf_init(&facts, 1u << 20);
	cr_assert_eq(
		read_file_at(p.out_fd, "python/facts.json", 1u << 20, &facts),
		0);
	fixture_load(FIX "smaps", &sm);
	smaps_init(&m);
	cr_assert_eq(smaps_parse(sm.buf, sm.len, &m), 0);
	cr_assert_eq(smaps_classify(&m, &sum), 0);
	ar = smaps_summary_arenas_json(&sum);
	ar_txt = json_object_to_json_string(ar);
	strbuf_init(&pmap, 4u << 20);
	cr_assert_eq(smaps_render_pmap(&m, PID, "python3", &pmap), 0);
	cr_assert_eq(bundle_new("t", &b), 0);
	bundle_add(b, "processes/12192/status", status, sizeof(status) - 1, 1);
	bundle_add(b, "processes/12192/python/facts.json", facts.buf, facts.len,
		   1);
	bundle_add(b, "processes/12192/arenas.json", ar_txt, strlen(ar_txt), 1);
	bundle_add(b, "processes/12192/pmap.txt", pmap.buf, pmap.len, 1);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 0, &in), 0);
	/* the cgroup at the capture (README.md: 108 MB of 200 MiB) */
	in.have_usage = true;
	in.usage_bytes = 107728896;
	in.limit_bytes = 200 * MIB;
	in.have_stats = true;
	in.anon = 104532 * 1024;
	diagnosis_run(&in, &d);
	cr_expect_str_eq(diag_kind_name(d.verdicts[0].kind), "python-heap",
			 "%s", d.summary);
	cr_expect(startswith(d.summary, "python-heap:pymalloc arenas, 101 MiB "
					"of the 200 MiB limit; tracemalloc: "),
		  "%s", d.summary);
	cr_expect_str_eq(d.parts[0].name, "python heap");
	cr_expect_eq(d.parts[0].bytes, 48744 * 1024);
	cr_expect_str_eq(d.parts[1].name, "python buffers");
	cr_expect_eq(d.parts[1].bytes, 15224 * 1024);
	cr_expect_str_eq(d.parts[2].name, "glibc arenas (in-use unknown)");
	cr_expect_eq(d.parts[2].bytes, 39240 * 1024);
	dj = diagnosis_to_json(&d);
	bundle_add_json(b, "diagnosis.json", dj, 1);
	strbuf_init(&html, 16u << 20);
	cr_assert_eq(report_render_html(b, &html), 0);
	cr_expect(strstr(html.buf, "python heap (pymalloc arenas)"));
	cr_expect(strstr(html.buf, "python buffer (mmap)"));
	cr_expect(strstr(html.buf, "memray"));
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

/* rtproc_parse_limit, which python.c reads RLIMIT_AS with, on the
 * kernel's /proc/<pid>/limits layout. */
Test(runtime_python, rtproc_limits)
{
	static const struct {
		const char *text, *name;
		int r;
		uint64_t v;
	} rows[] = {
		{LIMITS_UNLIMITED, "Max address space", 0, UINT64_MAX},
		{LIMITS_100MIB, "Max address space", 0, 100 * MIB},
		{LIMITS_100MIB, "Max address", -ENOENT, 0},
		{LIMITS_100MIB, "Max open files", -ENOENT, 0},
		{"Max address space         -1  unlimited bytes\n",
		 "Max address space", -EBADMSG, 0},
		{"Max address spaces 1 1\n", "Max address space", -ENOENT, 0},
		{"", "Max address space", -ENOENT, 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t v = 0;

		cr_expect_eq(rtproc_parse_limit(rows[i].text,
						strlen(rows[i].text),
						rows[i].name, &v),
			     rows[i].r, "row %zu", i);
		if (!rows[i].r)
			cr_expect_eq(v, rows[i].v, "row %zu", i);
	}
}
