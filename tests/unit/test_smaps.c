/* SPDX-License-Identifier: Apache-2.0 */
/* smaps parser, pmap -X table, classes and arenas on real captures
 * (tests/fixtures/smaps/README.md). No live /proc. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <json-c/json.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "base/util.h"
#include "kernel/smaps.h"

#define FIX "tests/fixtures/smaps/"

static void load(const char *path, struct strbuf *sb)
{
	strbuf_init(sb, 64u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 64u << 20, sb), 0,
		     "cannot read %s", path);
}

static void parse_fixture(const char *name, struct smaps *s)
{
	char path[256];
	struct strbuf sb;

	snprintf(path, sizeof(path), FIX "%s/smaps", name);
	load(path, &sb);
	smaps_init(s);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, s), 0);
	strbuf_release(&sb);
}

/* The golden's first line is "PID:   cmdline". */
static void golden_head(const struct strbuf *g, int *pid, char *cmd,
			size_t size)
{
	const char *colon = strchr(g->buf, ':');
	const char *nl = strchr(g->buf, '\n');

	cr_assert(colon && nl && colon < nl);
	cr_assert_eq(
		parse_u64_n(g->buf, (size_t)(colon - g->buf), &(uint64_t){0}),
		0);
	*pid = atoi(g->buf); /* lint: allow (test) */
	snprintf(cmd, size, "%.*s", (int)(nl - colon - 4), colon + 4);
}

/* Arrays, not pointers: Criterion may run each case in a fresh exec. */
struct fixture {
	char name[32];
};

ParameterizedTestParameters(smaps, pmap_equals_procps)
{
	static struct fixture names[] = {
		{"retention"}, {"jvm17"}, {"shell-bash"}, {"hostile"}};

	return cr_make_param_array(struct fixture, names, 4);
}

ParameterizedTest(struct fixture *fx, smaps, pmap_equals_procps)
{
	const char *const *name = &(const char *){fx->name};
	struct strbuf golden, out;
	struct smaps s;
	char path[256], cmd[4096];
	int pid;

	snprintf(path, sizeof(path), FIX "%s/pmap-X.txt", *name);
	load(path, &golden);
	golden_head(&golden, &pid, cmd, sizeof(cmd));
	parse_fixture(*name, &s);
	cr_assert_eq(s.n_malformed, 0);
	strbuf_init(&out, 64u << 20);
	cr_assert_eq(smaps_render_pmap(&s, pid, cmd, &out), 0);
	cr_assert_eq(out.len, golden.len, "%s: length %zu vs procps %zu", *name,
		     out.len, golden.len);
	cr_assert_str_eq(out.buf, golden.buf, "%s differs from pmap -X", *name);
	smaps_release(&s);
	strbuf_release(&out);
	strbuf_release(&golden);
}

static uint64_t total(const struct smaps *s, enum smaps_field f)
{
	uint64_t t = 0;

	for (size_t i = 0; i < s->n; i++)
		t += smaps_get(s, i, f);
	return t;
}

Test(smaps, rollup_matches_smaps_sum)
{
	struct smaps s, roll;
	struct strbuf sb;

	parse_fixture("retention", &s);
	load(FIX "retention/smaps_rollup", &sb);
	smaps_init(&roll);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &roll), 0);
	cr_assert_eq(roll.n, 1);
	cr_assert_str_eq(roll.m[0].name, "[rollup]");
	/* Captured with the process stopped: the same pages. */
	cr_assert_eq(smaps_get(&roll, 0, SMAPS_F_RSS), total(&s, SMAPS_F_RSS));
	cr_assert_eq(smaps_get(&roll, 0, SMAPS_F_ANONYMOUS),
		     total(&s, SMAPS_F_ANONYMOUS));
	cr_assert_gt(smaps_get(&roll, 0, SMAPS_F_PSS_ANON), 30000);
	smaps_release(&s);
	smaps_release(&roll);
	strbuf_release(&sb);
}

static uint64_t victim_field(struct json_object *o, const char *a,
			     const char *b)
{
	struct json_object *x;

	cr_assert(json_object_object_get_ex(o, a, &x));
	if (b)
		cr_assert(json_object_object_get_ex(x, b, &x));
	return (uint64_t)json_object_get_int64(x);
}

Test(smaps, retention_arenas_match_victim)
{
	struct smaps s;
	struct smaps_summary sum;
	struct strbuf sb;
	struct json_object *v;
	uint64_t arenas, from_system_kb, malloc_rss;

	parse_fixture("retention", &s);
	cr_assert_eq(smaps_classify(&s, &sum), 0);
	load(FIX "retention/victim.json", &sb);
	v = json_tokener_parse(sb.buf);
	cr_assert_not_null(v);
	arenas = victim_field(v, "arenas", NULL);
	from_system_kb = victim_field(v, "mallinfo2", "arena") >> 10;
	/* malloc_info counts the main arena; smaps shows it as [heap]. */
	cr_assert_eq(sum.n_arena_heaps, arenas - 1);
	cr_assert_eq(sum.n_heaps, arenas - 1);
	cr_assert_eq(sum.arena_reserved_kb, (arenas - 1) * 65536);
	cr_assert_eq(sum.cls[SMAPS_C_HEAP].count, 1);
	/* All the memory glibc took from the system is resident (touched):
	 * within 2 % of mallinfo2.arena. */
	malloc_rss = sum.arena_rss_kb + sum.heap_rss_kb;
	cr_assert(malloc_rss * 100 >= from_system_kb * 98 &&
			  malloc_rss * 100 <= from_system_kb * 102,
		  "arena+heap rss %lu kB vs mallinfo2.arena %lu kB",
		  (unsigned long)malloc_rss, (unsigned long)from_system_kb);
	cr_assert_eq(sum.cls[SMAPS_C_THREAD_STACK].count, 4);
	cr_assert_eq(sum.cls[SMAPS_C_STACK].count, 1);
	cr_assert_eq(sum.total_rss_kb, total(&s, SMAPS_F_RSS));
	json_object_put(v);
	strbuf_release(&sb);
	smaps_summary_release(&sum);
	smaps_release(&s);
}

Test(smaps, jvm_classes)
{
	struct smaps s;
	struct smaps_summary sum;
	uint64_t rss = 0;

	parse_fixture("jvm17", &s);
	cr_assert_eq(smaps_classify(&s, &sum), 0);
	cr_assert_gt(sum.cls[SMAPS_C_FILE_CODE].count, 10); /* libjvm… */
	cr_assert_gt(sum.cls[SMAPS_C_THREAD_STACK].count, 5);
	cr_assert_eq(sum.cls[SMAPS_C_STACK].count, 1);
	cr_assert_gt(sum.cls[SMAPS_C_ANON].rss_kb, 1000); /* Java heap */
	for (size_t c = 0; c < _SMAPS_C_MAX; c++)
		rss += sum.cls[c].rss_kb;
	cr_assert_eq(rss, total(&s, SMAPS_F_RSS));
	smaps_summary_release(&sum);
	smaps_release(&s);
}

Test(smaps, hostile_names)
{
	struct smaps s;
	struct smaps_summary sum;
	bool nl = false, deleted = false;

	parse_fixture("hostile", &s);
	for (size_t i = 0; i < s.n; i++) {
		nl |= strstr(s.m[i].name, "new\\012line) (") != NULL;
		deleted |= strstr(s.m[i].name, "lib name (deleted).so "
					       "(deleted)") != NULL;
	}
	cr_assert(nl, "escaped newline name kept as printed");
	cr_assert(deleted);
	cr_assert_eq(smaps_classify(&s, &sum), 0);
	cr_assert_geq(sum.cls[SMAPS_C_FILE_DATA].count, 3);
	smaps_summary_release(&sum);
	smaps_release(&s);
}

Test(smaps, malformed_lines_counted_and_skipped)
{
	struct smaps s, ref;

	parse_fixture("malformed", &s);
	parse_fixture("shell-bash", &ref);
	cr_assert_eq(s.n, 43);
	cr_assert_eq(s.n_malformed, 6);
	cr_assert_eq(total(&s, SMAPS_F_SIZE), total(&ref, SMAPS_F_SIZE));
	cr_assert_eq(total(&s, SMAPS_F_ANONYMOUS),
		     total(&ref, SMAPS_F_ANONYMOUS));
	smaps_release(&s);
	smaps_release(&ref);
}

Test(smaps, garbage_is_ebadmsg)
{
	struct smaps s;

	smaps_init(&s);
	cr_assert_eq(smaps_parse("hello\nworld\n", 12, &s), -EBADMSG);
	smaps_init(&s);
	cr_assert_eq(smaps_parse("", 0, &s), -EBADMSG);
	smaps_init(&s);
	cr_assert_eq(smaps_parse("ffff-0000 rw-p 0 00:00 0\n", 25, &s),
		     -EBADMSG, "end before start");
}

/* Feeding in chunks of every size gives the same table as one buffer. */
Test(smaps, streaming_chunks_equal_whole)
{
	struct strbuf sb, a, b;
	struct smaps whole;

	load(FIX "shell-bash/smaps", &sb);
	smaps_init(&whole);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &whole), 0);
	strbuf_init(&a, 1u << 20);
	cr_assert_eq(smaps_render_pmap(&whole, 1, "x", &a), 0);
	for (size_t chunk = 1; chunk < 200; chunk += 7) {
		struct smaps s;

		smaps_init(&s);
		for (size_t off = 0; off < sb.len; off += chunk) {
			size_t n = sb.len - off < chunk ? sb.len - off : chunk;

			cr_assert_eq(smaps_feed(&s, sb.buf + off, n), 0);
		}
		cr_assert_eq(smaps_finish(&s), 0);
		strbuf_init(&b, 1u << 20);
		cr_assert_eq(smaps_render_pmap(&s, 1, "x", &b), 0);
		cr_assert_str_eq(a.buf, b.buf, "chunk %zu", chunk);
		strbuf_release(&b);
		smaps_release(&s);
	}
	strbuf_release(&a);
	strbuf_release(&sb);
	smaps_release(&whole);
}

static const char *const many_fields[] = {
	"Size",		 "KernelPageSize", "MMUPageSize",     "Rss",
	"Pss",		 "Pss_Dirty",	   "Shared_Clean",    "Shared_Dirty",
	"Private_Clean", "Private_Dirty",  "Referenced",      "Anonymous",
	"KSM",		 "LazyFree",	   "AnonHugePages",   "ShmemPmdMapped",
	"FilePmdMapped", "Shared_Hugetlb", "Private_Hugetlb", "Swap",
	"SwapPss",	 "Locked",
};

/* 20,000 mappings (~14 MB of text) parse and render in well under a
 * second: linear, no quadratic step. */
struct chunks {
	struct strbuf all;
	size_t n, biggest, fail_after;
};

static int keep_chunk(struct strbuf *out, void *ud)
{
	struct chunks *c = ud;

	cr_assert_eq(out->buf[out->len - 1], '\n', "a chunk of whole lines");
	if (out->len > c->biggest)
		c->biggest = out->len;
	if (c->fail_after && c->n++ == c->fail_after)
		return -EPIPE;
	if (!c->fail_after)
		c->n++;
	cr_assert_eq(strbuf_add(&c->all, out->buf, out->len), 0);
	strbuf_reset(out);
	return 0;
}

Test(smaps, twenty_thousand_mappings, .timeout = 20)
{
	struct strbuf sb, out;
	struct smaps s;
	uint64_t t0;
	size_t n = 20000;

	strbuf_init(&sb, 64u << 20);
	for (size_t i = 0; i < n; i++) {
		uint64_t start = 0x7f0000000000ull + i * 0x2000;

		strbuf_addf(&sb, "%012llx-%012llx %s 00000000 00:00 0 %s\n",
			    (unsigned long long)start,
			    (unsigned long long)start + 0x1000,
			    i % 2 ? "r--p" : "rw-p", i % 3 ? "" : "[anon:x]");
		for (size_t f = 0; f < 22; f++)
			strbuf_addf(&sb, "%s:%12u kB\n", many_fields[f],
				    f == 0   ? 4u
				    : f == 3 ? (unsigned)(i % 2) * 4
					     : 0u);
		strbuf_adds(&sb,
			    "THPeligible:    0\nVmFlags: rd mr mw me ac\n");
	}
	cr_assert_gt(sb.len, 12u << 20);
	t0 = now_monotonic_us();
	smaps_init(&s);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &s), 0);
	strbuf_init(&out, 64u << 20);
	cr_assert_eq(smaps_render_pmap(&s, 42, "many", &out), 0);
	cr_assert_lt(now_monotonic_us() - t0, 2000000,
		     "parse+render of 20k mappings took %llu us",
		     (unsigned long long)(now_monotonic_us() - t0));
	cr_assert_eq(s.n, n);
	cr_assert_eq(s.n_fields, 23);
	cr_assert_eq(total(&s, SMAPS_F_SIZE), 4 * n);
	cr_assert_eq(total(&s, SMAPS_F_RSS), 4 * n / 2);
	cr_assert(strstr(out.buf, " 80000 ") != NULL, "Size total column");
	/* a chunk at a time: the same bytes, never more than a chunk and a
	 * row held, each chunk whole lines */
	{
		struct chunks c = {.all = STRBUF_INIT};
		struct strbuf part = STRBUF_INIT;

		strbuf_init(&c.all, 64u << 20);
		strbuf_init(&part, 1u << 20);
		cr_assert_eq(smaps_render_pmap_each(&s, 42, "many", &part,
						    keep_chunk, &c),
			     0);
		cr_assert_eq(part.len, 0);
		cr_assert_eq(c.all.len, out.len);
		cr_assert_eq(memcmp(c.all.buf, out.buf, out.len), 0);
		cr_assert_gt(c.n, out.len / SMAPS_RENDER_CHUNK - 1);
		cr_assert_lt(c.biggest, SMAPS_RENDER_CHUNK + 4096);
		/* a failing flush stops the render with its error */
		c.fail_after = 2;
		c.n = 0;
		cr_assert_eq(smaps_render_pmap_each(&s, 42, "many", &part,
						    keep_chunk, &c),
			     -EPIPE);
		cr_assert_eq(c.n, 3);
		strbuf_release(&c.all);
		strbuf_release(&part);
	}
	smaps_release(&s);
	strbuf_release(&sb);
	strbuf_release(&out);
}

Test(smaps, json_view)
{
	struct smaps s;
	struct json_object *o, *maps, *tot, *rss;

	parse_fixture("shell-bash", &s);
	o = smaps_to_json(&s, 7);
	cr_assert_not_null(o);
	cr_assert(json_object_object_get_ex(o, "mappings", &maps));
	cr_assert_eq(json_object_array_length(maps), s.n);
	cr_assert(json_object_object_get_ex(o, "totals", &tot));
	cr_assert(json_object_object_get_ex(tot, "Rss", &rss));
	cr_assert_eq((uint64_t)json_object_get_int64(rss),
		     total(&s, SMAPS_F_RSS));
	json_object_put(o);
	smaps_release(&s);
}

/* The sink: every mapping handed on complete, none kept. */
struct seen {
	size_t n, fail_at;
	uint64_t rss, first_start, last_end;
	char last_name[64];
};

static int count_mapping(const struct smaps *s, const struct smaps_mapping *m,
			 void *ud)
{
	struct seen *c = ud;

	cr_assert_leq(s->n, 1, "at most the mapping being parsed is kept");
	if (c->fail_at && c->n == c->fail_at)
		return -EPIPE;
	if (c->n++ == 0)
		c->first_start = m->start;
	c->last_end = m->end;
	c->rss += m->v && s->idx[SMAPS_F_RSS] >= 0 ? m->v[s->idx[SMAPS_F_RSS]]
						   : 0;
	snprintf(c->last_name, sizeof(c->last_name), "%s", m->name);
	return 0;
}

Test(smaps, sink_sees_every_mapping_keeps_none)
{
	struct smaps full, s;
	struct strbuf sb;
	struct seen c = {0};

	parse_fixture("shell-bash", &full);
	load(FIX "shell-bash/smaps", &sb);
	smaps_init(&s);
	smaps_set_sink(&s, count_mapping, &c);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &s), 0);
	cr_assert_eq(s.n, 0);
	cr_assert_eq(s.n_seen, full.n);
	cr_assert_eq(c.n, full.n);
	cr_assert_eq(s.n_fields, full.n_fields);
	cr_assert_eq(c.rss, total(&full, SMAPS_F_RSS));
	cr_assert_eq(c.first_start, full.m[0].start);
	cr_assert_eq(c.last_end, full.m[full.n - 1].end);
	cr_assert_str_eq(c.last_name, full.m[full.n - 1].name);
	smaps_release(&s);
	/* a sink's error stops the parse with it */
	c = (struct seen){.fail_at = 3};
	smaps_init(&s);
	smaps_set_sink(&s, count_mapping, &c);
	cr_assert_eq(smaps_parse(sb.buf, sb.len, &s), -EPIPE);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(s.n, 0, "released on failure");
	smaps_release(&full);
	strbuf_release(&sb);
}

/* Fills t from the fixture's smaps through the sink, fed chunk bytes at a
 * time (0: whole). */
static int add_row(const struct smaps *s, const struct smaps_mapping *m,
		   void *ud)
{
	return smaps_pmap_add(ud, s, m);
}

static void table_of(const char *text, size_t len, size_t chunk,
		     struct smaps_pmap *t)
{
	struct smaps s;

	smaps_init(&s);
	smaps_set_sink(&s, add_row, t);
	for (size_t off = 0; off < len; off += chunk ? chunk : len) {
		size_t n = chunk && len - off > chunk ? chunk : len - off;

		cr_assert_eq(smaps_feed(&s, text + off, n), 0);
	}
	cr_assert_eq(smaps_finish(&s), 0);
	smaps_release(&s);
}

static size_t column_of(const struct smaps_pmap *t, const char *name)
{
	for (size_t k = 0; k < t->n_shown; k++)
		if (streq(t->fields[k], name))
			return k;
	cr_assert_fail("no column %s", name);
	return 0;
}

static size_t widest_start(const struct smaps *s)
{
	char b[32];
	size_t w = 0;

	for (size_t i = 0; i < s->n; i++) {
		size_t n = (size_t)snprintf(b, sizeof(b), "%08llx",
					    (unsigned long long)s->m[i].start);

		w = n > w ? n : w;
	}
	return w;
}

ParameterizedTestParameters(smaps, pmap_table_equals_procps)
{
	static struct fixture names[] = {
		{"retention"}, {"jvm17"}, {"shell-bash"}, {"hostile"}};

	return cr_make_param_array(struct fixture, names, 4);
}

ParameterizedTest(struct fixture *fx, smaps, pmap_table_equals_procps)
{
	struct strbuf golden, text, out;
	struct smaps_pmap t;
	struct smaps s;
	char path[256], cmd[4096];
	size_t held;
	int pid;

	snprintf(path, sizeof(path), FIX "%s/pmap-X.txt", fx->name);
	load(path, &golden);
	golden_head(&golden, &pid, cmd, sizeof(cmd));
	snprintf(path, sizeof(path), FIX "%s/smaps", fx->name);
	load(path, &text);
	parse_fixture(fx->name, &s);
	for (size_t chunk = 0; chunk < 4000; chunk += 997) {
		smaps_pmap_init(&t);
		table_of(text.buf, text.len, chunk, &t);
		cr_assert_eq(t.n, s.n);
		cr_assert_eq(t.total[column_of(&t, "Rss")],
			     total(&s, SMAPS_F_RSS));
		cr_assert_eq(t.total[column_of(&t, "Size")],
			     total(&s, SMAPS_F_SIZE));
		cr_assert_eq(t.w_addr, widest_start(&s));
		strbuf_init(&out, 64u << 20);
		cr_assert_eq(
			smaps_pmap_render_each(&t, pid, cmd, &out, NULL, NULL),
			0);
		cr_assert_str_eq(out.buf, golden.buf, "%s, chunk %zu", fx->name,
				 chunk);
		strbuf_release(&out);
		/* what a row holds: a quarter of struct smaps' at most */
		held = s.n * (sizeof(struct smaps_mapping) + 8 * s.n_fields);
		cr_assert_lt(t.rows.len * 4, held, "%zu bytes for %zu rows",
			     t.rows.len, t.n);
		smaps_pmap_release(&t);
		cr_assert_eq(t.n, 0);
		cr_assert_eq(t.rows.len, 0);
	}
	smaps_release(&s);
	strbuf_release(&text);
	strbuf_release(&golden);
}

/* Values at their limits, a NUL in the perms, a name past pmap's 127
 * bytes: what the table printed before it was packed (the expected text
 * is that renderer's output). */
Test(smaps, pmap_table_extremes)
{
	static const char in[] =
		"ffffffffff600000-ffffffffff601000 --xp ffffffffffffffff "
		"ffffffff:ffffffff 18446744073709551615   [vsyscall]\n"
		"Size: 4 kB\nRss: 18446744073709551615 kB\nPss: 0 kB\n"
		"VmFlags: ex\n"
		"00001000-00002000 r\0-p 00000000 00:00 0 /a/b/"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"\nSize: 18446744073709551615 kB\nRss: 1 kB\nPss: 128 kB\n";
	static const char want[] =
		"1:   prog --flag\n"
		"         Address Perm           Offset            Device"
		"                Inode Size Rss Pss Mapping\n"
		"ffffffffff600000 --xp ffffffffffffffff ffffffff:ffffffff "
		"18446744073709551615    4 18446744073709551615   0 "
		"[vsyscall]\n"
		"        00001000    r         00000000             00:00"
		"                    0 18446744073709551615   1 128 "
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
		"                                                           "
		"                   ==== === === \n"
		"                                                           "
		"                      3   0 128 KB \n";
	struct smaps_pmap t;
	struct smaps s;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	smaps_pmap_init(&t);
	table_of(in, sizeof(in) - 1, 0, &t);
	cr_assert_eq(t.n, 2);
	cr_assert_eq(t.n_shown, 3);
	cr_assert_eq(t.w_addr, 16);
	cr_assert_eq(t.w_dev, 17);
	cr_assert_eq(t.w_ino, 20);
	cr_assert_eq(t.total[column_of(&t, "Size")], 3, "wraps as before");
	cr_assert_eq(
		smaps_pmap_render_each(&t, 1, "prog --flag", &a, NULL, NULL),
		0);
	cr_assert_str_eq(a.buf, want);
	/* the struct smaps path renders through the same table */
	smaps_init(&s);
	cr_assert_eq(smaps_parse(in, sizeof(in) - 1, &s), 0);
	cr_assert_eq(smaps_render_pmap(&s, 1, "prog --flag", &b), 0);
	cr_assert_str_eq(b.buf, want);
	smaps_release(&s);
	smaps_pmap_release(&t);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* The reader: a fixture directory stands for /proc/<pid>. */
Test(smaps, read_pmap_at_fixture)
{
	_cleanup_close_ int dir =
		open(FIX "shell-bash", O_RDONLY | O_DIRECTORY);
	struct strbuf golden, out;
	struct smaps_pmap t;
	struct smaps s;
	char cmd[4096];
	int pid;

	cr_assert_geq(dir, 0);
	load(FIX "shell-bash/pmap-X.txt", &golden);
	golden_head(&golden, &pid, cmd, sizeof(cmd));
	parse_fixture("shell-bash", &s);
	smaps_pmap_init(&t);
	cr_assert_eq(smaps_read_pmap_at(dir, "smaps", &t), 0);
	cr_assert_eq(t.n, s.n);
	cr_assert_not(t.truncated);
	strbuf_init(&out, 1u << 20);
	cr_assert_eq(smaps_pmap_render_each(&t, pid, cmd, &out, NULL, NULL), 0);
	cr_assert_str_eq(out.buf, golden.buf);
	smaps_pmap_release(&t);
	/* absent is -ESRCH, as smaps_read_at() says; released empty */
	smaps_pmap_init(&t);
	cr_assert_eq(smaps_read_pmap_at(dir, "no-such-file", &t), -ESRCH);
	cr_assert_eq(t.n, 0);
	cr_assert_eq(t.rows.len, 0);
	smaps_pmap_release(&t);
	smaps_release(&s);
	strbuf_release(&out);
	strbuf_release(&golden);
}
