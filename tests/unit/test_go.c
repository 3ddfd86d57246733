/* SPDX-License-Identifier: Apache-2.0 */
/* Go (forensics/runtimes/go.c): detection from the executable's
 * .go.buildinfo, GOMEMLIMIT and GOGC from an environment block, the
 * heap's RSS from smaps, and the go-heap verdict, table-driven over the
 * captures of tests/fixtures/go/ (README.md says how they were taken). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/runtimes/go.h"
#include "forensics/runtimes/registry.h"
#include "kernel/smaps.h"
#include "runtime_fixture.h"

#define FIX "tests/fixtures/go/"
#define MiB (1024ull * 1024)

static size_t slurp(const char *path, struct strbuf *sb)
{
	strbuf_init(sb, 64u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 64u << 20, sb), 0, "%s",
		     path);
	return sb->len;
}

Test(go, buildinfo_table)
{
	static const struct {
		const char *file;
		int r;
		const char *version;
	} rows[] = {
		{FIX "mini-go.elf", 0, "go1.19.8"},
		{FIX "mini-nomagic.elf", -ENOENT, ""},
		{FIX "mini-nosection.elf", -ENOENT, ""},
		{FIX "mini-elf32.elf", -ENOEXEC, ""},
		{FIX "environ-set.bin", -ENOEXEC, ""}, /* not ELF */
		{FIX "smaps-set.txt", -ENOEXEC, ""},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct strbuf sb;
		struct go_buildinfo bi;
		int r;

		slurp(rows[i].file, &sb);
		r = go_buildinfo_mem(sb.buf, sb.len, &bi);
		cr_expect_eq(r, rows[i].r, "%s: %d", rows[i].file, r);
		cr_expect_str_eq(bi.version, rows[i].version, "%s",
				 rows[i].file);
		strbuf_release(&sb);
	}
}

/* Every prefix of a Go ELF is refused cleanly: the headers point beyond
 * what is there. */
Test(go, buildinfo_truncated)
{
	struct strbuf sb;
	struct go_buildinfo bi;

	slurp(FIX "mini-go.elf", &sb);
	for (size_t n = 0; n < sb.len; n++)
		cr_expect_lt(go_buildinfo_mem(sb.buf, n, &bi), 0, "%zu", n);
	strbuf_release(&sb);
}

/* Headers that lie: too many sections, a name table beyond the cap, a
 * section beyond the file. */
Test(go, buildinfo_hostile_headers)
{
	struct strbuf sb;
	struct go_buildinfo bi;
	char *c;

	slurp(FIX "mini-go.elf", &sb);
	c = malloc(sb.len);
	memcpy(c, sb.buf, sb.len);
	c[0x3c] = (char)0xff, c[0x3d] = (char)0xff; /* e_shnum 65535 */
	cr_expect_eq(go_buildinfo_mem(c, sb.len, &bi), -EBADMSG);
	memcpy(c, sb.buf, sb.len);
	c[0x3e] = 9; /* e_shstrndx beyond e_shnum */
	cr_expect_eq(go_buildinfo_mem(c, sb.len, &bi), -EBADMSG);
	memcpy(c, sb.buf, sb.len);
	c[0x3a] = 32; /* e_shentsize */
	cr_expect_eq(go_buildinfo_mem(c, sb.len, &bi), -EBADMSG);
	free(c);
	strbuf_release(&sb);
}

/* The real thing: the Go victim when it was built, and two binaries
 * that are not Go (this test, a shell). */
Test(go, buildinfo_real_binaries)
{
	static const char *const not_go[] = {"/proc/self/exe", "/bin/sh"};
	const char *victim =
		getenv("OOMLENS_BUILD") ? NULL : "build/victims/go-orders";
	struct go_buildinfo bi;
	struct strbuf sb;

	for (size_t i = 0; i < ARRAY_SIZE(not_go); i++) {
		slurp(not_go[i], &sb);
		cr_expect_eq(go_buildinfo_mem(sb.buf, sb.len, &bi), -ENOENT,
			     "%s", not_go[i]);
		strbuf_release(&sb);
	}
	if (!victim || access(victim, R_OK) != 0)
		return; /* no Go here: the fixtures above stand */
	slurp(victim, &sb);
	cr_expect_eq(go_buildinfo_mem(sb.buf, sb.len, &bi), 0);
	cr_expect(startswith(bi.version, "go1."), "%s", bi.version);
	strbuf_release(&sb);
}

Test(go, memlimit_table)
{
	static const struct {
		const char *s;
		int r;
		uint64_t v;
	} rows[] = {
		{"180MiB", 0, 180 * MiB},
		{"1GiB", 0, 1ull << 30},
		{"2TiB", 0, 2ull << 40},
		{"4096KiB", 0, 4 * MiB},
		{"123B", 0, 123},
		{"123", 0, 123},
		{"off", 0, UINT64_MAX},
		{"", -EINVAL, 0},
		{"MiB", -EINVAL, 0},
		{"180M", -EINVAL, 0},
		{"180 MiB", -EINVAL, 0},
		{"-1", -EINVAL, 0},
		{"99999999999999999999", -EINVAL, 0},
		{"17179869184TiB", -EINVAL, 0}, /* 2^64 bytes */
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t v = 0;
		int r = go_parse_memlimit(rows[i].s, &v);

		cr_expect_eq(r, rows[i].r, "%s", rows[i].s);
		if (r == 0)
			cr_expect_eq(v, rows[i].v, "%s", rows[i].s);
	}
}

Test(go, env_table)
{
	static const struct {
		const char *env;
		size_t len;
		bool set, valid;
		uint64_t limit;
		int gogc;
	} rows[] = {
#define E(s) s, sizeof(s) - 1
		{E("PATH=/bin\0HOME=/\0"), false, false, 0, 100},
		{E("GOMEMLIMIT=180MiB\0GOGC=50\0"), true, true, 180 * MiB, 50},
		{E("GOGC=off\0GOMEMLIMIT=off"), true, true, UINT64_MAX, -1},
		{E("GOMEMLIMIT=lots\0GOGC=-5\0"), true, false, 0, 100},
		{E("GOMEMLIMIT=\0"), true, false, 0, 100},
		/* the first one counts, as the runtime's gogetenv and getenv */
		{E("GOMEMLIMIT=1GiB\0GOMEMLIMIT=64MiB\0"), true, true,
		 1024 * MiB, 100},
		{E("GOGC=50\0GOGC=off\0GOMEMLIMIT=\0GOMEMLIMIT=1GiB\0"), true,
		 false, 0, 50},
		/* a key only at the start of an entry */
		{E("XGOMEMLIMIT=1GiB\0NOTGOGC=1\0"), false, false, 0, 100},
		/* a value longer than any limit is unreadable, not cut */
		{E("GOMEMLIMIT=1000000000000000000000000000000000000000MiB"),
		 true, false, 0, 100},
#undef E
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct go_env e;

		cr_assert_eq(go_env_parse(rows[i].env, rows[i].len, &e), 0);
		cr_expect_eq(e.memlimit_set, rows[i].set, "row %zu", i);
		cr_expect_eq(e.memlimit_valid, rows[i].valid, "row %zu", i);
		if (rows[i].valid)
			cr_expect_eq(e.memlimit, rows[i].limit, "row %zu", i);
		cr_expect_eq(e.gogc, rows[i].gogc, "row %zu", i);
	}
}

/* The captures of the victim's /proc/<pid>/environ and smaps. */
Test(go, captured_proc)
{
	static const struct {
		const char *environ, *smaps;
		bool valid;
		uint64_t limit;
		int gogc;
		uint64_t heap_kb;
	} rows[] = {
		{FIX "environ-unset.bin", FIX "smaps-unset.txt", false, 0, 100,
		 0},
		{FIX "environ-set.bin", FIX "smaps-set.txt", true, 180 * MiB,
		 50, 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct strbuf env, sm;
		struct smaps s;
		struct go_env e;
		uint64_t heap, rss, want = 0;
		size_t n;

		slurp(rows[i].environ, &env);
		go_env_parse(env.buf, env.len, &e);
		cr_expect_eq(e.memlimit_valid, rows[i].valid, "%s",
			     rows[i].environ);
		if (rows[i].valid)
			cr_expect_eq(e.memlimit, rows[i].limit);
		cr_expect_eq(e.gogc, rows[i].gogc);
		slurp(rows[i].smaps, &sm);
		smaps_init(&s);
		cr_assert_eq(smaps_parse(sm.buf, sm.len, &s), 0);
		go_heap_rss(&s, &heap, &rss, &n);
		/* the arena mappings by hand: c000000000-… anonymous */
		for (size_t k = 0; k < s.n; k++)
			if (s.m[k].start >= 0xc000000000ull &&
			    s.m[k].start < 0x10000000000ull && !s.m[k].name[0])
				want += smaps_get(&s, k, SMAPS_F_RSS) * 1024;
		cr_expect_eq(heap, want);
		cr_expect_gt(heap, 4 * MiB, "%s: the heap holds the orders",
			     rows[i].smaps);
		cr_expect_lt(heap, rss);
		cr_expect_geq(n, 1);
		smaps_release(&s);
		strbuf_release(&env);
		strbuf_release(&sm);
	}
}

Test(go, fitting_memlimit)
{
	cr_expect_eq(go_fitting_memlimit(200 * MiB, 8 * MiB), 172 * MiB);
	cr_expect_eq(go_fitting_memlimit(200 * MiB, 500 * MiB), 16 * MiB);
	cr_expect_eq(go_fitting_memlimit(1ull << 30, 0), 921 * MiB);
}

/* The go-heap verdict from a loaded input: the kill (200 MiB, a
 * map of orders, no GOMEMLIMIT), a Go process that knows its limit, and
 * one whose heap is not most of it. */
static void go_input(struct diag_input *in, struct go_facts **f, uint64_t heap,
		     uint64_t rss, bool memlimit)
{
	int row = diag_runtime_index("go");

	cr_assert_geq(row, 0);
	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 200 * MiB;
	in->have_stats = true;
	in->anon = 196 * MiB;
	in->have_snapshot = true;
	in->snapshot_age_s = 1.5;
	in->procs = calloc(1, sizeof(*in->procs));
	in->n_procs = 1;
	in->procs[0] =
		(struct diag_proc){.pid = 7, .comm = "orders", .victim = true};
	in->victim_pid = 7;
	*f = calloc(1, sizeof(**f));
	(*f)->n = 1;
	(*f)->p[0] = (struct go_proc){
		.pid = 7,
		.version = "go1.19.8",
		.env = {.memlimit_set = memlimit,
			.memlimit_valid = memlimit,
			.memlimit = memlimit ? 150 * MiB : 0,
			.gogc = 100},
		.heap_rss = heap,
		.rss = rss,
		.age_s = 1.5,
	};
	in->rt_data[row] = *f;
}

Test(go, verdict_table)
{
	static const struct {
		uint64_t heap, rss;
		bool memlimit;
		const char *verdict, *detail, *reco0;
	} rows[] = {
		{170 * MiB, 180 * MiB, false, "go-heap", "GOMEMLIMIT unset",
		 "GOMEMLIMIT=170MiB (90% of the 200 MiB limit minus the 10 MiB "
		 "non-heap RSS measured)"},
		{170 * MiB, 180 * MiB, true, "go-heap", "",
		 "take a heap profile: import _ \"net/http/pprof\", then go "
		 "tool pprof"},
		/* the heap is not most of the process: no go-heap */
		{40 * MiB, 180 * MiB, false, NULL, NULL, NULL},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct diagnosis d;
		struct go_facts *f;
		const struct diag_verdict *v = NULL;

		go_input(&in, &f, rows[i].heap, rows[i].rss, rows[i].memlimit);
		diagnosis_run(&in, &d);
		for (size_t k = 0; k < d.n_verdicts; k++)
			if (d.verdicts[k].kind == DIAG_GO_HEAP)
				v = &d.verdicts[k];
		if (!rows[i].verdict) {
			cr_expect_null(v, "row %zu: %s", i, d.summary);
			diag_input_release(&in);
			continue;
		}
		cr_assert_not_null(v, "row %zu: %s", i, d.summary);
		cr_expect_eq(d.verdicts[0].kind, DIAG_GO_HEAP, "%s", d.summary);
		cr_expect_str_eq(diag_kind_name(v->kind), rows[i].verdict);
		cr_expect_str_eq(v->detail, rows[i].detail);
		cr_expect_eq(v->basis, DIAG_BASIS_MEASURED);
		cr_expect_eq(v->bytes, rows[i].heap);
		cr_expect(startswith(v->recommend[0], rows[i].reco0), "%s",
			  v->recommend[0]);
		cr_expect_eq(d.parts[0].bytes, rows[i].heap);
		cr_expect_str_eq(d.parts[0].name, "go heap");
		diag_input_release(&in); /* frees f through the table */
	}
}

/* processes/<pid>/go/facts.json from a bundle: the sidecar's own, and
 * one a pod wrote with every field of the wrong type (absent and noted,
 * never trusted). */
Test(go, load_from_bundle)
{
	static const char status[] = "Name:\torders\nPid:\t7\nPPid:\t1\n"
				     "RssAnon:\t180000 kB\n";
	static const struct {
		const char *facts;
		bool loaded, valid;
		uint64_t heap, memlimit;
		int gogc;
		bool notes;
	} rows[] = {
		{"{\"t_ms\":1796031079000,\"pid\":7,\"version\":\"go1.19.8\","
		 "\"gomemlimit_set\":false,\"gomemlimit\":null,"
		 "\"gomemlimit_off\":false,\"gogc\":100,\"heap_rss\":157286400,"
		 "\"rss\":167772160}",
		 true, false, 150 * MiB, 0, 100, false},
		{"{\"gomemlimit_set\":true,\"gomemlimit\":188743680,\"gogc\":"
		 "50,"
		 "\"heap_rss\":1,\"rss\":2}",
		 true, true, 1, 180 * MiB, 50, false},
		{"{\"gomemlimit_set\":true,\"gomemlimit_off\":true}", true,
		 true, 0, UINT64_MAX, 100, false},
		{"{\"version\":7,\"gomemlimit\":\"1GiB\",\"gogc\":\"off\","
		 "\"heap_rss\":-5,\"rss\":1.5,\"t_ms\":[]}",
		 true, false, 0, 0, 100, true},
		{"[1,2]", true, false, 0, 0, 100, false},
		{"not json", false, false, 0, 0, 100, false},
	};
	int row = diag_runtime_index("go");

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct diag_input in;
		struct bundle *b;
		const struct go_facts *f;

		cr_assert_eq(bundle_new("t", &b), 0);
		bundle_add(b, "processes/7/status", status, sizeof(status) - 1,
			   1);
		bundle_add(b, "processes/7/go/facts.json", rows[i].facts,
			   strlen(rows[i].facts), 1);
		cr_assert_eq(
			diagnosis_load_bundle(b, NULL, 1796031080000ull, &in),
			0);
		f = in.rt_data[row];
		cr_expect_eq(f != NULL, rows[i].loaded, "row %zu", i);
		if (f) {
			cr_expect_eq(f->n, 1);
			cr_expect_eq(f->p[0].pid, 7);
			cr_expect_eq(f->p[0].heap_rss, rows[i].heap, "row %zu",
				     i);
			cr_expect_eq(f->p[0].env.memlimit_valid, rows[i].valid,
				     "row %zu", i);
			if (rows[i].valid)
				cr_expect_eq(f->p[0].env.memlimit,
					     rows[i].memlimit, "row %zu", i);
			cr_expect_eq(f->p[0].env.gogc, rows[i].gogc, "row %zu",
				     i);
		}
		cr_expect_eq(in.notes.n > 0, rows[i].notes,
			     "row %zu: %zu notes", i, in.notes.n);
		if (i == 0) {
			cr_expect_str_eq(f->p[0].version, "go1.19.8");
			cr_expect(f->p[0].age_s > 0.9 && f->p[0].age_s < 1.1);
		}
		diag_input_release(&in);
		bundle_free(b);
	}
}

/* Go's arenas are laid out as glibc's arena heaps (64 MiB-aligned rw-p +
 * ---p; the sidecar's arenas.json counts them): with go/facts.json beside
 * them they are Go's heap, never glibc's arenas or its retention. */
Test(go, arenas_are_not_glibc)
{
	static const char status[] = "Name:\torders\nPid:\t7\nPPid:\t1\n"
				     "RssAnon:\t180000 kB\n";
	static const char arenas[] =
		"{\"main_heap\":{\"size_kb\":0,\"rss_kb\":0},\"arena_heaps\":4,"
		"\"arena_rss_kb\":174080,\"heaps\":[{\"start\":"
		"\"0xc000000000\","
		"\"rss_kb\":174080}]}";
	static const char facts[] =
		"{\"t_ms\":1796031079000,\"version\":\"go1.19.8\","
		"\"gomemlimit_set\":false,\"gogc\":100,\"heap_rss\":178257920,"
		"\"rss\":188743680}";

	for (int with_go = 0; with_go < 2; with_go++) {
		struct diag_input in;
		struct diagnosis d;
		struct bundle *b;

		cr_assert_eq(bundle_new("t", &b), 0);
		bundle_add(b, "processes/7/status", status, sizeof(status) - 1,
			   1);
		bundle_add(b, "processes/7/arenas.json", arenas,
			   sizeof(arenas) - 1, 1);
		if (with_go)
			bundle_add(b, "processes/7/go/facts.json", facts,
				   sizeof(facts) - 1, 1);
		cr_assert_eq(
			diagnosis_load_bundle(b, NULL, 1796031080000ull, &in),
			0);
		in.have_usage = true;
		in.usage_bytes = in.limit_bytes = 200 * MiB;
		in.have_stats = true;
		in.anon = 196 * MiB;
		cr_expect_eq(in.procs[0].arenas_not_glibc, with_go);
		diagnosis_run(&in, &d);
		cr_expect_str_eq(d.parts[0].name,
				 with_go ? "go heap"
					 : "glibc arenas (in-use unknown)");
		cr_expect_eq(d.parts[0].bytes, 170 * MiB);
		for (size_t i = 0; with_go && i < d.n_parts; i++)
			cr_expect(!startswith(d.parts[i].name, "glibc"), "%s",
				  d.parts[i].name);
		cr_expect_str_eq(diag_kind_name(d.verdicts[0].kind),
				 with_go ? "go-heap" : "glibc-retention", "%s",
				 d.summary);
		diag_input_release(&in);
		bundle_free(b);
	}
}

/* smaps read while the heap grew: the kernel printed a mapping again,
 * overlapping the one before; it is counted once. */
Test(go, heap_rss_overlap_counted_once)
{
	static const char sm[] =
		"c000000000-c001000000 rw-p 00000000 00:00 0 \nRss: 16384 kB\n"
		"c000000000-c002000000 rw-p 00000000 00:00 0 \nRss: 32768 kB\n"
		"c002000000-c004000000 ---p 00000000 00:00 0 \nRss: 0 kB\n"
		"7f0000000000-7f0000100000 rw-p 00000000 00:00 0 \nRss: 1024 "
		"kB\n";
	struct smaps s;
	uint64_t heap, rss;
	size_t n;

	smaps_init(&s);
	cr_assert_eq(smaps_parse(sm, sizeof(sm) - 1, &s), 0);
	cr_assert_eq(s.n, 4);
	go_heap_rss(&s, &heap, &rss, &n);
	cr_expect_eq(heap, 16 * MiB);
	cr_expect_eq(rss, 17 * MiB);
	cr_expect_eq(n, 2);
	smaps_release(&s);
}

/* The sidecar's first sight on a /proc/<pid> of fixtures: the captured
 * environments beside a Go executable (mini-go.elf, .go.buildinfo). A
 * GOMEMLIMIT within the limit is no event; unset, or above, is. (The
 * environment once went unread: every Go program was "unset".) */
Test(go, first_sight_reads_the_environment)
{
	static const struct {
		const char *environ;
		uint64_t limit;
		const char *kind;
	} rows[] = {
		{FIX "environ-set.bin", 200 * MiB, ""},
		{FIX "environ-set.bin", 128 * MiB, "go-memlimit-above-limit"},
		{FIX "environ-unset.bin", 200 * MiB, "go-memlimit-unset"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct fixture_proc p;
		struct rt_sight s;

		fixture_proc_make(&p);
		fixture_proc_copy(&p, "environ", rows[i].environ);
		fixture_proc_exe(&p, FIX "mini-go.elf", "orders");
		s = fixture_proc_sight(&p, 7, rows[i].limit);
		cr_assert_eq(rt_go.detect(&s), 1);
		cr_assert_eq(rt_go.first_sight(&s), 0);
		cr_expect_str_eq(s.event_kind, rows[i].kind, "row %zu: %s", i,
				 s.event_text);
		fixture_proc_done(&p);
	}
}
