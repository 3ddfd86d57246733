/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg: records, dmesg text, the assembler and the JSON, on the captured
 * fixtures in tests/fixtures/kmsg/ (real 6.18 cgroup v1 and 6.1 cgroup v2
 * reports, synthetic pre-5.0/global/wrapped/malformed ones: see README). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "kernel/kmsg_internal.h"
#include "base/fileio.h"
#include "kernel/kmsg.h"
#include "base/util.h"

#define FIX "tests/fixtures/kmsg/"
#define MAX_REPORTS 8

struct collected {
	struct oom_report r[MAX_REPORTS];
	size_t n;
};

static int collect(struct oom_report *r, void *userdata)
{
	struct collected *c = userdata;

	if (c->n == MAX_REPORTS)
		return -E2BIG;
	c->r[c->n++] = *r;
	oom_report_init(r);
	return 0;
}

static void collected_release(struct collected *c)
{
	for (size_t i = 0; i < c->n; i++)
		oom_report_release(&c->r[i]);
	c->n = 0;
}

static int parse_str(const char *s, size_t len, struct collected *c)
{
	c->n = 0;
	return kmsg_parse_buffer(s, len, collect, c);
}

/* Reads a fixture and parses it; asserts it parsed. */
static size_t parse_file(const char *path, struct collected *c)
{
	struct strbuf sb;
	int n;

	strbuf_init(&sb, 1u << 24);
	cr_assert_geq(read_file_at(AT_FDCWD, path, 1u << 24, &sb), 0,
		      "fixture '%s' readable (run from the top dir)", path);
	n = parse_str(sb.buf, sb.len, c);
	cr_assert_geq(n, 0, "'%s' parses: %d", path, n);
	cr_assert_eq((size_t)n, c->n);
	strbuf_release(&sb);
	return c->n;
}

static const struct kmsg_stat *stat_of(const struct oom_report *r,
				       const char *name)
{
	for (size_t i = 0; i < r->n_stats; i++)
		if (streq(r->stats[i].name, name))
			return &r->stats[i];
	return NULL;
}

static uint64_t stat_val(const struct oom_report *r, const char *name)
{
	const struct kmsg_stat *s = stat_of(r, name);

	cr_assert_not_null(s, "stat '%s' present", name);
	return s->value;
}

/* --- records -------------------------------------------------------- */

Test(kmsg, record_basic_and_escapes)
{
	static const char in[] =
		"6,593,437870369,-;[  10319]     0 10319 a) (b\\x0ac\\x5cx\n";
	struct strbuf sb;
	struct kmsg_record rec;

	strbuf_init(&sb, 0);
	cr_assert_eq(kmsg_parse_record(in, strlen(in), &sb, &rec), 0);
	cr_assert_eq(rec.prio, 6);
	cr_assert_eq(rec.seq, 593);
	cr_assert_eq(rec.usec, 437870369);
	cr_assert_not(rec.continuation);
	cr_assert_eq(rec.text_len, strlen("[  10319]     0 10319 a) (b\nc\\x"));
	cr_assert_eq(memcmp(rec.text, "[  10319]     0 10319 a) (b\nc\\x",
			    rec.text_len),
		     0);
	strbuf_release(&sb);
}

Test(kmsg, record_dictionary_and_cont_flag)
{
	static const char in[] = "12,7,99,c,caller=T1;hello\n SUBSYSTEM=x\n";
	struct strbuf sb;
	struct kmsg_record rec;

	strbuf_init(&sb, 0);
	cr_assert_eq(kmsg_parse_record(in, strlen(in), &sb, &rec), 0);
	cr_assert(rec.continuation);
	cr_assert_eq(rec.prio, 12);
	cr_assert_eq(rec.text_len, 5);
	cr_assert_eq(memcmp(rec.text, "hello", 5), 0);
	strbuf_release(&sb);
}

struct bad_record {
	char in[64];
};

ParameterizedTestParameters(kmsg, record_malformed)
{
	static struct bad_record cases[] = {
		{""},
		{"6,1,2"},
		{"6,1,2;x"},
		{"6,abc,1,-;x"},
		{";;;"},
		{"6,99999999999999999999999,1,-;x"},
		{"99999,1,1,-;x"},
		{"6,1,1,x;x"},
		{"6,1,1,;x"},
		{"-6,1,1,-;x"},
		{"\xff\xfe,1,1,-;x"},
	};
	return cr_make_param_array(struct bad_record, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct bad_record *c, kmsg, record_malformed)
{
	struct strbuf sb;
	struct kmsg_record rec = {.seq = 4242};

	strbuf_init(&sb, 0);
	cr_assert_eq(kmsg_parse_record(c->in, strlen(c->in), &sb, &rec),
		     -EBADMSG, "'%s' rejected", c->in);
	cr_assert_eq(rec.seq, 4242, "ret untouched");
	strbuf_release(&sb);
}

Test(kmsg, dmesg_lines)
{
	struct strbuf sb;
	struct kmsg_record rec;
	const char *l;

	strbuf_init(&sb, 0);
	l = "[  431.103494] hog invoked oom-killer: x\n";
	cr_assert_eq(kmsg_parse_dmesg_line(l, strlen(l), &sb, &rec), 0);
	cr_assert_eq(rec.usec, 431103494);
	cr_assert_eq(rec.seq, UINT64_MAX);
	cr_assert_str_eq(sb.buf, "hog invoked oom-killer: x");
	l = "<3>[    7.000001] Killed";
	cr_assert_eq(kmsg_parse_dmesg_line(l, strlen(l), &sb, &rec), 0);
	cr_assert_eq(rec.prio, 3);
	cr_assert_eq(rec.usec, 7000001);
	cr_assert_str_eq(sb.buf, "Killed");
	l = "kern  :err   : [    2.5] Killed";
	cr_assert_eq(kmsg_parse_dmesg_line(l, strlen(l), &sb, &rec), 0);
	cr_assert_eq(rec.usec, 2500000);
	cr_assert_str_eq(sb.buf, "Killed");
	/* A task row of `dmesg -t` is text, not a timestamp. */
	l = "[  10133]     0 10133 hog";
	cr_assert_eq(kmsg_parse_dmesg_line(l, strlen(l), &sb, &rec), 0);
	cr_assert_eq(rec.usec, UINT64_MAX);
	cr_assert_str_eq(sb.buf, l);
	strbuf_release(&sb);
}

/* --- every fixture: concrete values -------------------------------- */

struct fixture_case {
	char file[64];
	unsigned n_reports;
	unsigned idx; /* which report the rest describes */
	uint64_t seq_first, seq_last;
	char trigger_comm[24];
	int trigger_pid;
	char victim_comm[24];
	int victim_pid;
	uint64_t anon_rss_kb, file_rss_kb, pgtables_kb;
	char oom_memcg[48], task_memcg[48];
	uint64_t usage_kb, limit_kb, failcnt;
	unsigned n_stats;
	char stat[32];
	uint64_t stat_value;
	unsigned n_tasks, n_victims;
	bool complete, group_kill, global, stats_truncated;
	unsigned kills_repeated; /* the oom.group line naming a victim again */
};

#define U UINT64_MAX
#define KB_MAX 9007199254740988ull

ParameterizedTestParameters(kmsg, fixtures)
{
	/* clang-format off */
	static struct fixture_case cases[] = {
		{ .file = "v1-6.18-single/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 358, .seq_last = 436,
		  .trigger_comm = "hog", .trigger_pid = 10133,
		  .victim_comm = "hog", .victim_pid = 10133, .n_victims = 1,
		  .anon_rss_kb = 32640, .file_rss_kb = 972, .pgtables_kb = 108,
		  .oom_memcg = "/oomlens-test-kmsg-1",
		  .task_memcg = "/oomlens-test-kmsg-1",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 19,
		  .n_stats = 42, .stat = "rss", .stat_value = 33427456,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v1-6.18-single/dmesg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = U, .seq_last = U,
		  .trigger_comm = "hog", .trigger_pid = 10133,
		  .victim_comm = "hog", .victim_pid = 10133, .n_victims = 1,
		  .anon_rss_kb = 32640, .file_rss_kb = 972, .pgtables_kb = 108,
		  .oom_memcg = "/oomlens-test-kmsg-1",
		  .task_memcg = "/oomlens-test-kmsg-1",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 19,
		  .n_stats = 42, .stat = "total_pgfault", .stat_value = 8188,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v1-6.18-single/dmesg-notime.txt", .n_reports = 1, .idx = 0,
		  .seq_first = U, .seq_last = U,
		  .trigger_comm = "hog", .trigger_pid = 10133,
		  .victim_comm = "hog", .victim_pid = 10133, .n_victims = 1,
		  .anon_rss_kb = 32640, .file_rss_kb = 972, .pgtables_kb = 108,
		  .oom_memcg = "/oomlens-test-kmsg-1",
		  .task_memcg = "/oomlens-test-kmsg-1",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 19,
		  .n_stats = 42, .stat = "hierarchical_memory_limit", .stat_value = 33554432,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v1-6.18-single/dmesg-x.txt", .n_reports = 1, .idx = 0,
		  .seq_first = U, .seq_last = U,
		  .trigger_comm = "hog", .trigger_pid = 10133,
		  .victim_comm = "hog", .victim_pid = 10133, .n_victims = 1,
		  .anon_rss_kb = 32640, .file_rss_kb = 972, .pgtables_kb = 108,
		  .oom_memcg = "/oomlens-test-kmsg-1",
		  .task_memcg = "/oomlens-test-kmsg-1",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 19,
		  .n_stats = 42, .stat = "pgpgin", .stat_value = 8161,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v1-6.18-child/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 437, .seq_last = 516,
		  .trigger_comm = "oomchild", .trigger_pid = 10269,
		  .victim_comm = "oomchild", .victim_pid = 10269, .n_victims = 1,
		  .anon_rss_kb = 32512, .file_rss_kb = 788, .pgtables_kb = 116,
		  .oom_memcg = "/oomlens-test-kmsg-2",
		  .task_memcg = "/oomlens-test-kmsg-2",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 20,
		  .n_stats = 42, .stat = "rss", .stat_value = 33341440,
		  .n_tasks = 2, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v1-6.18-multi/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 596, .seq_last = 677,
		  .trigger_comm = "worker", .trigger_pid = 10368,
		  .victim_comm = "worker", .victim_pid = 10368, .n_victims = 1,
		  .anon_rss_kb = 36224, .file_rss_kb = 1200, .pgtables_kb = 116,
		  .oom_memcg = "/oomlens-test-kmsg-4",
		  .task_memcg = "/oomlens-test-kmsg-4",
		  .usage_kb = 49152, .limit_kb = 49152, .failcnt = 67,
		  .n_stats = 42, .stat = "cache", .stat_value = 0,
		  .n_tasks = 4, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v1-6.18-nested/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 757, .seq_last = 835,
		  .trigger_comm = "nested", .trigger_pid = 10897,
		  .victim_comm = "nested", .victim_pid = 10897, .n_victims = 1,
		  .anon_rss_kb = 32512, .file_rss_kb = 996, .pgtables_kb = 104,
		  .oom_memcg = "/oomlens-test-kmsg-5",
		  .task_memcg = "/oomlens-test-kmsg-5/sub",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 84,
		  .n_stats = 42, .stat = "swap", .stat_value = 0,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v2-6.1-single/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 373, .seq_last = 408,
		  .trigger_comm = "hog", .trigger_pid = 134,
		  .victim_comm = "hog", .victim_pid = 134, .n_victims = 1,
		  .anon_rss_kb = 32412, .file_rss_kb = 4, .pgtables_kb = 104,
		  .oom_memcg = "/demo",
		  .task_memcg = "/demo",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 21,
		  .n_stats = 51, .stat = "anon", .stat_value = 33427456,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v2-6.1-oomgroup/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 374, .seq_last = 415,
		  .trigger_comm = "hog", .trigger_pid = 138,
		  .victim_comm = "hog", .victim_pid = 138, .n_victims = 3,
		  .anon_rss_kb = 23964, .file_rss_kb = 4, .pgtables_kb = 88,
		  .oom_memcg = "/demo",
		  .task_memcg = "/demo",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 57,
		  .n_stats = 51, .stat = "thp_collapse_alloc", .stat_value = 0,
		  .n_tasks = 3, .complete = true, .group_kill = true,
		  .global = false, .stats_truncated = false,
		  .kills_repeated = 1 },
		{ .file = "v2-6.1-pod-ctr/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 374, .seq_last = 410,
		  .trigger_comm = "hog", .trigger_pid = 176,
		  .victim_comm = "hog", .victim_pid = 176, .n_victims = 1,
		  .anon_rss_kb = 32412, .file_rss_kb = 4, .pgtables_kb = 100,
		  .oom_memcg = "/pod",
		  .task_memcg = "/pod/ctr",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 124,
		  .n_stats = 51, .stat = "percpu", .stat_value = 14272,
		  .n_tasks = 2, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "synthetic-v2-6.1-stats-cut/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 373, .seq_last = 408,
		  .trigger_comm = "hog", .trigger_pid = 134,
		  .victim_comm = "hog", .victim_pid = 134, .n_victims = 1,
		  .anon_rss_kb = 32412, .file_rss_kb = 4, .pgtables_kb = 104,
		  .oom_memcg = "/demo",
		  .task_memcg = "/demo",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 21,
		  .n_stats = 36, .stat = "anon", .stat_value = 33427456,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = true },
		{ .file = "synthetic-v1-4.14-task-in/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 2001, .seq_last = 2020,
		  .trigger_comm = "hog", .trigger_pid = 4242,
		  .victim_comm = "hog", .victim_pid = 4242, .n_victims = 1,
		  .anon_rss_kb = 63488, .file_rss_kb = 112, .pgtables_kb = 0,
		  .oom_memcg = "/kubepods/burstable/pod1234",
		  .task_memcg = "/kubepods/burstable/pod1234/abcd",
		  .usage_kb = 65536, .limit_kb = 65536, .failcnt = 42,
		  .n_stats = 13, .stat = "rss", .stat_value = 0,
		  .n_tasks = 2, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "synthetic-global-6.18/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 5001, .seq_last = 5020,
		  .trigger_comm = "stress", .trigger_pid = 7777,
		  .victim_comm = "stress", .victim_pid = 7777, .n_victims = 1,
		  .anon_rss_kb = 1920000, .file_rss_kb = 400, .pgtables_kb = 3860,
		  .oom_memcg = "",
		  .task_memcg = "/user.slice/user-0.slice/session-1.scope",
		  .usage_kb = 0, .limit_kb = 0, .failcnt = 0,
		  .n_stats = 0, .stat = "", .stat_value = 0,
		  .n_tasks = 2, .complete = true, .group_kill = false,
		  .global = true, .stats_truncated = false },
		{ .file = "synthetic-interleaved/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 1001, .seq_last = 1086,
		  .trigger_comm = "worker", .trigger_pid = 10368,
		  .victim_comm = "worker", .victim_pid = 10368, .n_victims = 1,
		  .anon_rss_kb = 36224, .file_rss_kb = 1200, .pgtables_kb = 116,
		  .oom_memcg = "/oomlens-test-kmsg-4",
		  .task_memcg = "/oomlens-test-kmsg-4",
		  .usage_kb = 49152, .limit_kb = 49152, .failcnt = 67,
		  .n_stats = 42, .stat = "cache", .stat_value = 0,
		  .n_tasks = 4, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "synthetic-wrapped/kmsg.txt", .n_reports = 2, .idx = 0,
		  .seq_first = 3029, .seq_last = 3033,
		  .trigger_comm = "", .trigger_pid = 0,
		  .victim_comm = "hog", .victim_pid = 10133, .n_victims = 1,
		  .anon_rss_kb = 32640, .file_rss_kb = 972, .pgtables_kb = 108,
		  .oom_memcg = "/oomlens-test-kmsg-1",
		  .task_memcg = "/oomlens-test-kmsg-1",
		  .usage_kb = 0, .limit_kb = 0, .failcnt = 0,
		  .n_stats = 0, .stat = "", .stat_value = 0,
		  .n_tasks = 1, .complete = false, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "synthetic-wrapped/kmsg.txt", .n_reports = 2, .idx = 1,
		  .seq_first = 3035, .seq_last = 3114,
		  .trigger_comm = "oomchild", .trigger_pid = 10269,
		  .victim_comm = "oomchild", .victim_pid = 10269, .n_victims = 1,
		  .anon_rss_kb = 32512, .file_rss_kb = 788, .pgtables_kb = 116,
		  .oom_memcg = "/oomlens-test-kmsg-2",
		  .task_memcg = "/oomlens-test-kmsg-2",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 20,
		  .n_stats = 42, .stat = "rss", .stat_value = 33341440,
		  .n_tasks = 2, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "synthetic-gap/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 4000, .seq_last = 4081,
		  .trigger_comm = "worker", .trigger_pid = 10368,
		  .victim_comm = "worker", .victim_pid = 10368, .n_victims = 1,
		  .anon_rss_kb = 36224, .file_rss_kb = 1200, .pgtables_kb = 116,
		  .oom_memcg = "/oomlens-test-kmsg-4",
		  .task_memcg = "/oomlens-test-kmsg-4",
		  .usage_kb = 49152, .limit_kb = 49152, .failcnt = 67,
		  .n_stats = 0, .stat = "", .stat_value = 0,
		  .n_tasks = 4, .complete = false, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "synthetic-malformed/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 7000, .seq_last = 7078,
		  .trigger_comm = "hog", .trigger_pid = 10133,
		  .victim_comm = "hog", .victim_pid = 10133, .n_victims = 1,
		  .anon_rss_kb = 32640, .file_rss_kb = 972, .pgtables_kb = 108,
		  .oom_memcg = "/oomlens-test-kmsg-1",
		  .task_memcg = "/oomlens-test-kmsg-1",
		  .usage_kb = 32768, .limit_kb = 32768, .failcnt = 19,
		  .n_stats = 42, .stat = "rss", .stat_value = 33427456,
		  .n_tasks = 1, .complete = true, .group_kill = false,
		  .global = false, .stats_truncated = false },
		{ .file = "v2-6.1-global/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 380, .seq_last = 433,
		  .trigger_comm = "hog", .trigger_pid = 109,
		  .victim_comm = "hog", .victim_pid = 109, .n_victims = 1,
		  .anon_rss_kb = 432372, .file_rss_kb = 4, .pgtables_kb = 884,
		  .oom_memcg = "", .task_memcg = "/",
		  .n_stats = 0, .n_tasks = 2, .complete = true, .global = true },
		{ .file = "v2-6.1-hostile/kmsg.txt", .n_reports = 1, .idx = 0,
		  .seq_first = 378, .seq_last = 413,
		  .trigger_comm = "evil) (x\nUID:9", .trigger_pid = 155,
		  .victim_comm = "evil) (x\nUID:9", .victim_pid = 155,
		  .n_victims = 1,
		  .anon_rss_kb = 32148, .file_rss_kb = 4, .pgtables_kb = 100,
		  .oom_memcg = "/demo", .task_memcg = "/demo/a b,task=x",
		  .usage_kb = 32520, .limit_kb = 32768, .failcnt = 21,
		  .n_stats = 51, .stat = "anon", .stat_value = 33169408,
		  .n_tasks = 1, .complete = true },
	};
	/* clang-format on */
	return cr_make_param_array(struct fixture_case, cases,
				   ARRAY_SIZE(cases));
}

static void check_counters(const struct fixture_case *c,
			   const struct oom_report *r)
{
	cr_assert_eq(r->memcg.present, c->limit_kb != 0, "%s", c->file);
	if (!r->memcg.present)
		return;
	cr_assert_eq(r->memcg.usage_kb, c->usage_kb, "%s", c->file);
	cr_assert_eq(r->memcg.limit_kb, c->limit_kb, "%s", c->file);
	cr_assert_eq(r->memcg.failcnt, c->failcnt, "%s", c->file);
	/* v1 prints memory+swap and kmem, v2 swap. */
	cr_assert(r->memsw.present != r->swap.present, "%s", c->file);
	if (r->swap.present)
		cr_assert_eq(r->swap.limit_kb, KB_MAX);
	else
		cr_assert_eq(r->memsw.limit_kb, KB_MAX);
}

ParameterizedTest(struct fixture_case *c, kmsg, fixtures)
{
	struct collected col;
	const struct oom_report *r;
	char path[128];

	snprintf(path, sizeof(path), FIX "%s", c->file);
	cr_assert_eq(parse_file(path, &col), c->n_reports, "%s: reports",
		     c->file);
	r = &col.r[c->idx];
	cr_assert_eq(r->seq_first, c->seq_first, "%s", c->file);
	cr_assert_eq(r->seq_last, c->seq_last, "%s", c->file);
	cr_assert_eq(r->trigger.present, c->trigger_comm[0] != '\0');
	cr_assert_str_eq(r->trigger.comm, c->trigger_comm, "%s", c->file);
	cr_assert_eq(r->trigger.pid, c->trigger_pid, "%s", c->file);
	cr_assert_eq(r->n_victims, c->n_victims, "%s: victims", c->file);
	cr_assert_eq(r->kills_repeated, c->kills_repeated,
		     "%s: kill lines naming a victim again", c->file);
	cr_assert_eq(r->victims[0].pid, c->victim_pid, "%s", c->file);
	cr_assert_str_eq(r->victims[0].comm, c->victim_comm, "%s", c->file);
	cr_assert_eq(r->victims[0].anon_rss_kb, c->anon_rss_kb, "%s", c->file);
	cr_assert_eq(r->victims[0].file_rss_kb, c->file_rss_kb, "%s", c->file);
	cr_assert_eq(r->victims[0].pgtables_kb, c->pgtables_kb, "%s", c->file);
	cr_assert_str_eq(r->oom_memcg, c->oom_memcg, "%s", c->file);
	cr_assert_str_eq(r->task_memcg, c->task_memcg, "%s", c->file);
	check_counters(c, r);
	cr_assert_eq(r->n_stats, c->n_stats, "%s: stats", c->file);
	if (c->stat[0])
		cr_assert_eq(stat_val(r, c->stat), c->stat_value, "%s: %s",
			     c->file, c->stat);
	cr_assert_eq(r->n_tasks, c->n_tasks, "%s: tasks", c->file);
	cr_assert_eq(r->complete, c->complete, "%s: complete", c->file);
	cr_assert_eq(r->group_kill, c->group_kill, "%s", c->file);
	cr_assert_eq(r->global, c->global, "%s", c->file);
	cr_assert_eq(r->stats_truncated, c->stats_truncated, "%s", c->file);
	cr_assert_not(r->raw_truncated);
	collected_release(&col);
}

/* --- details -------------------------------------------------------- */

Test(kmsg, dmesg_equals_kmsg)
{
	static const char *cases[] = {"v1-6.18-single", "v1-6.18-child",
				      "v1-6.18-multi", "v1-6.18-nested",
				      "v1-6.18-hostile"};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct collected k, d;
		char p[128];

		snprintf(p, sizeof(p), FIX "%s/kmsg.txt", cases[i]);
		cr_assert_eq(parse_file(p, &k), 1);
		snprintf(p, sizeof(p), FIX "%s/dmesg.txt", cases[i]);
		cr_assert_eq(parse_file(p, &d), 1);
		cr_assert_eq(k.r[0].usec, d.r[0].usec, "%s", cases[i]);
		cr_assert_eq(k.r[0].victims[0].usec, d.r[0].victims[0].usec);
		cr_assert_str_eq(k.r[0].victims[0].comm,
				 d.r[0].victims[0].comm);
		cr_assert_eq(k.r[0].n_tasks, d.r[0].n_tasks);
		cr_assert_eq(k.r[0].n_stats, d.r[0].n_stats);
		for (size_t j = 0; j < k.r[0].n_tasks; j++) {
			cr_assert_eq(k.r[0].tasks[j].pid, d.r[0].tasks[j].pid);
			cr_assert_str_eq(k.r[0].tasks[j].name,
					 d.r[0].tasks[j].name);
		}
		collected_release(&k);
		collected_release(&d);
	}
}

/* A JVM killed in its memcg: the trigger is a thread ("VM Thread", a
 * comm with a space; its pid is the thread's), the victim the process.
 * `dmesg -r` ("<4>[ ts] text") gives the same report. */
Test(kmsg, jvm_thread_trigger_and_dmesg_r)
{
	struct collected k, d;

	cr_assert_eq(parse_file(FIX "v1-6.18-jvm/kmsg.txt", &k), 1);
	cr_assert_eq(parse_file(FIX "v1-6.18-jvm/dmesg-r.txt", &d), 1);
	for (int i = 0; i < 2; i++) {
		const struct oom_report *r = i ? &d.r[0] : &k.r[0];

		cr_assert_str_eq(r->trigger.comm, "VM Thread");
		cr_assert_eq(r->trigger.pid, 23446);
		cr_assert_eq(r->victims[0].pid, 23442);
		cr_assert_str_eq(r->victims[0].comm, "java");
		cr_assert_eq(r->victims[0].anon_rss_kb, 162816);
		cr_assert_eq(r->memcg.limit_kb, 163840);
		cr_assert_eq(r->tasks[0].rss_file, 5002);
		cr_assert_str_eq(r->task_memcg, "/oomlens-test-jvm-1");
		cr_assert_eq(r->usec, 1308952017);
		cr_assert(r->complete);
	}
	cr_assert_eq(k.r[0].seq_first, 15204);
	cr_assert_eq(k.r[0].seq_last, 15282);
	collected_release(&k);
	collected_release(&d);
}

Test(kmsg, hostile_comm)
{
	static const char comm[] = "a) (b,pid=1\nc";
	struct collected c;
	const struct oom_report *r;

	cr_assert_eq(parse_file(FIX "v1-6.18-hostile/kmsg.txt", &c), 1);
	r = &c.r[0];
	cr_assert_str_eq(r->trigger.comm, comm);
	cr_assert_eq(r->trigger.pid, 10835);
	cr_assert_str_eq(r->victims[0].comm, comm);
	cr_assert_eq(r->victims[0].pid, 10835);
	cr_assert_eq(r->victims[0].total_vm_kb, 35372);
	cr_assert_eq(r->victims[0].oom_score_adj, 0);
	cr_assert_str_eq(r->tasks[0].name, comm);
	cr_assert_eq(r->tasks[0].rss_anon, 8160);
	cr_assert_str_eq(r->task_memcg, "/oomlens-test-kmsg-3");
	cr_assert(r->complete);
	collected_release(&c);

	cr_assert_eq(parse_file(FIX "v1-6.18-hostile/dmesg.txt", &c), 1);
	cr_assert_str_eq(c.r[0].victims[0].comm, comm);
	cr_assert_eq(c.r[0].victims[0].anon_rss_kb, 32640);
	cr_assert_str_eq(c.r[0].tasks[0].name, comm);
	collected_release(&c);

	/* dmesg -t cannot show where a record ends: the pid and the comm's
	 * first line survive. */
	cr_assert_eq(parse_file(FIX "v1-6.18-hostile/dmesg-notime.txt", &c), 1);
	cr_assert_eq(c.r[0].victims[0].pid, 10835);
	cr_assert_str_eq(c.r[0].victims[0].comm, "a) (b,pid=1");
	cr_assert_str_eq(c.r[0].task_memcg, "/oomlens-test-kmsg-3");
	collected_release(&c);
}

Test(kmsg, oom_group_victims_once_each)
{
	struct collected c;
	const struct oom_report *r;

	cr_assert_eq(parse_file(FIX "v2-6.1-oomgroup/kmsg.txt", &c), 1);
	r = &c.r[0];
	cr_assert(r->group_kill);
	cr_assert_str_eq(r->group_memcg, "/demo");
	cr_assert_eq(r->n_victims, 3);
	cr_assert_eq(r->victims[0].pid, 138);
	cr_assert_eq(r->victims[0].seq, 411);
	cr_assert_eq(r->victims[1].pid, 110);
	cr_assert_eq(r->victims[1].anon_rss_kb, 3900);
	cr_assert_eq(r->victims[1].shmem_rss_kb, 644);
	cr_assert_eq(r->victims[2].pid, 111);
	cr_assert_eq(r->victims[2].usec, 4847246);
	cr_assert_eq(r->task_columns & KMSG_COL_RSS_ANON, 0, "6.1 table");
	cr_assert_eq(r->tasks[2].pgtables_bytes, 90112);
	collected_release(&c);
}

Test(kmsg, pod_container_victim_memcg)
{
	struct collected c;

	cr_assert_eq(parse_file(FIX "v2-6.1-pod-ctr/kmsg.txt", &c), 1);
	cr_assert_str_eq(oom_report_victim_memcg(&c.r[0]), "/pod/ctr");
	cr_assert_str_eq(c.r[0].stats_memcg, "/pod");
	cr_assert_str_eq(c.r[0].tasks[0].name, "sleep");
	cr_assert_eq(c.r[0].tasks[0].rss, 1);
	collected_release(&c);
}

Test(kmsg, stats_one_record_6_1)
{
	struct collected c;
	const struct oom_report *r;

	cr_assert_eq(parse_file(FIX "v2-6.1-single/kmsg.txt", &c), 1);
	r = &c.r[0];
	cr_assert_eq(r->n_stats, 51);
	cr_assert_str_eq(r->stats[0].name, "anon");
	cr_assert_eq(stat_val(r, "file"), 4096);
	cr_assert_eq(stat_val(r, "inactive_anon"), 33423360);
	cr_assert_str_eq(r->stats[50].name, "thp_collapse_alloc");
	cr_assert_not(r->stats_truncated);
	collected_release(&c);

	/* Cut by printk at 991 bytes: the partial last line is dropped. */
	cr_assert_eq(parse_file(FIX "synthetic-v2-6.1-stats-cut/kmsg.txt", &c),
		     1);
	r = &c.r[0];
	cr_assert(r->stats_truncated);
	cr_assert_eq(r->n_stats, 36);
	cr_assert_eq(stat_val(r, "kernel"), 12345678901234);
	cr_assert_str_eq(r->stats[35].name, "pgsteal");
	collected_release(&c);
}

Test(kmsg, pre_5_0_report)
{
	struct collected c;
	const struct oom_report *r;

	cr_assert_eq(parse_file(FIX "synthetic-v1-4.14-task-in/kmsg.txt", &c),
		     1);
	r = &c.r[0];
	cr_assert_str_eq(r->constraint, "");
	cr_assert_str_eq(oom_report_victim_memcg(r),
			 "/kubepods/burstable/pod1234/abcd");
	cr_assert_str_eq(r->trigger.gfp_mask, "0x14000c0(GFP_KERNEL)");
	cr_assert_str_eq(r->stats_memcg, "/kubepods/burstable/pod1234");
	cr_assert_eq(stat_val(r, "unevictable"), 0);
	cr_assert(r->task_columns & KMSG_COL_NR_PTES);
	cr_assert_eq(r->tasks[0].oom_score_adj, -998);
	cr_assert_str_eq(r->tasks[0].name, "pause");
	cr_assert_eq(r->tasks[1].uid, 1000);
	cr_assert_eq(r->tasks[1].pgtables_bytes, 40, "nr_ptes as printed");
	cr_assert_eq(r->victims[0].total_vm_kb, 68000);
	collected_release(&c);
}

Test(kmsg, global_oom)
{
	struct collected c;
	const struct oom_report *r;

	cr_assert_eq(parse_file(FIX "synthetic-global-6.18/kmsg.txt", &c), 1);
	r = &c.r[0];
	cr_assert_str_eq(r->constraint, "CONSTRAINT_NONE");
	cr_assert_str_eq(r->trigger.gfp_mask,
			 "0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP)");
	cr_assert_eq(r->tasks[0].oom_score_adj, -1000);
	cr_assert_str_eq(r->tasks[0].name, "systemd-udevd");
	cr_assert_eq(r->tasks[1].pgtables_bytes, 3952640);
	cr_assert_eq(r->seq_last, 5020, "oom_reaper line belongs to it");
	collected_release(&c);
}

/* Every prefix of a real capture, cut at record boundaries and inside
 * records: never a crash; a report cut before its kill is incomplete. */
Test(kmsg, truncated_input)
{
	struct strbuf sb;
	struct collected c;
	size_t kill_at;

	strbuf_init(&sb, 1u << 20);
	cr_assert_geq(read_file_at(AT_FDCWD, FIX "v1-6.18-multi/kmsg.txt",
				   1u << 20, &sb),
		      0);
	kill_at = (size_t)(strstr(sb.buf, "3,677,") - sb.buf);
	for (size_t cut = 0; cut <= sb.len; cut += 13) {
		int n = parse_str(sb.buf, cut, &c);

		cr_assert_geq(n, 0);
		cr_assert_leq(n, 1);
		if (n == 1 && cut <= kill_at) {
			cr_assert_not(c.r[0].complete, "cut at %zu", cut);
			cr_assert_eq(c.r[0].n_victims, 0);
		}
		if (cut == sb.len)
			cr_assert(c.r[0].complete);
		collected_release(&c);
	}
	strbuf_release(&sb);
}

Test(kmsg, empty_and_garbage_input)
{
	struct collected c;
	static const char junk[] = "\n\n\x01\x02[[[[]]]] ;;;\n6,1,1,-;\n"
				   "Killed process\nKilled process x (y\n"
				   "[  pid  ] name\n[ 1] 2 name\n";

	cr_assert_eq(parse_str("", 0, &c), 0);
	cr_assert_eq(parse_str(junk, sizeof(junk) - 1, &c), 0);
}

/* The raw text kept for kernel/oom.txt parses back to the same report. */
Test(kmsg, raw_round_trip)
{
	static const char *files[] = {"v1-6.18-hostile/kmsg.txt",
				      "v1-6.18-hostile/dmesg.txt",
				      "v2-6.1-oomgroup/kmsg.txt"};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct collected a, b;
		char p[128];

		snprintf(p, sizeof(p), FIX "%s", files[i]);
		cr_assert_eq(parse_file(p, &a), 1);
		cr_assert_eq(parse_str(a.r[0].raw.buf, a.r[0].raw.len, &b), 1,
			     "%s", files[i]);
		cr_assert_eq(a.r[0].seq_first, b.r[0].seq_first);
		cr_assert_eq(a.r[0].seq_last, b.r[0].seq_last);
		cr_assert_eq(a.r[0].usec, b.r[0].usec);
		cr_assert_eq(a.r[0].n_victims, b.r[0].n_victims);
		cr_assert_str_eq(a.r[0].victims[0].comm,
				 b.r[0].victims[0].comm);
		cr_assert_eq(a.r[0].n_stats, b.r[0].n_stats);
		cr_assert_eq(a.r[0].n_tasks, b.r[0].n_tasks);
		cr_assert_str_eq(a.r[0].raw.buf, b.r[0].raw.buf);
		collected_release(&a);
		collected_release(&b);
	}
}

/* --- the assembler API, record by record ---------------------------- */

static int feed_text(struct kmsg_assembler *a, uint64_t seq, const char *t)
{
	struct kmsg_record rec = {
		.seq = seq,
		.usec = seq * 10,
		.prio = 6,
		.text = t,
		.text_len = strlen(t),
	};

	return kmsg_assembler_feed(a, &rec);
}

Test(kmsg, assembler_ready_rules)
{
	struct kmsg_assembler *a = kmsg_assembler_new();
	struct oom_report r;

	cr_assert_not_null(a);
	cr_assert_eq(feed_text(a, 1, "unrelated"), 0);
	cr_assert_eq(
		feed_text(a, 2,
			  "x invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL),"
			  " order=0, oom_score_adj=5"),
		0);
	/* No victim yet: a soft flush keeps waiting. */
	cr_assert_eq(kmsg_assembler_flush(a, false), 0);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 0);
	cr_assert_eq(feed_text(a, 3,
			       "Memory cgroup out of memory: Killed process 9 "
			       "(x) total-vm:1kB, anon-rss:2kB, file-rss:3kB, "
			       "shmem-rss:4kB, UID:5 pgtables:6kB "
			       "oom_score_adj:-7"),
		     0);
	cr_assert_eq(feed_text(a, 4,
			       "oom_reaper: reaped process 9 (x), now "
			       "anon-rss:0kB"),
		     0);
	/* A record that is not a kill line closes it. */
	cr_assert_eq(feed_text(a, 5, "eth0: link up"), 1);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 1);
	cr_assert_eq(r.seq_first, 2);
	cr_assert_eq(r.seq_last, 4);
	cr_assert_eq(r.usec, 20);
	cr_assert_eq(r.trigger.oom_score_adj, 5);
	cr_assert_eq(r.victims[0].uid, 5);
	cr_assert_eq(r.victims[0].shmem_rss_kb, 4);
	cr_assert_eq(r.victims[0].pgtables_kb, 6);
	cr_assert_eq(r.victims[0].oom_score_adj, -7);
	cr_assert(r.complete);
	cr_assert_str_eq(r.raw.buf,
			 "6,2,20,-;x invoked oom-killer: "
			 "gfp_mask=0xcc0(GFP_KERNEL), order=0, "
			 "oom_score_adj=5\n"
			 "6,3,30,-;Memory cgroup out of memory: "
			 "Killed process 9 (x) total-vm:1kB, "
			 "anon-rss:2kB, file-rss:3kB, shmem-rss:4kB, "
			 "UID:5 pgtables:6kB oom_score_adj:-7\n"
			 "6,4,40,-;oom_reaper: reaped process 9 (x), "
			 "now anon-rss:0kB\n");
	oom_report_release(&r);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 0);

	/* A trigger with nothing after it: soft flush waits, force emits an
	 * incomplete report; the next trigger also closes the previous. */
	cr_assert_eq(feed_text(a, 6, "y invoked oom-killer: order=1"), 0);
	cr_assert_eq(feed_text(a, 7, "z invoked oom-killer: order=2"), 1);
	cr_assert_eq(kmsg_assembler_flush(a, true), 1);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 1);
	cr_assert_str_eq(r.trigger.comm, "y");
	cr_assert_eq(r.trigger.order, 1);
	cr_assert_not(r.complete);
	oom_report_release(&r);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 1);
	cr_assert_str_eq(r.trigger.comm, "z");
	oom_report_release(&r);
	kmsg_assembler_free(a);
	kmsg_assembler_free(NULL);
}

#define KILLED(pid)                                                         \
	"Memory cgroup out of memory: Killed process " #pid " (hog) "       \
	"total-vm:5100kB, anon-rss:3900kB, file-rss:4kB, shmem-rss:644kB, " \
	"UID:0 pgtables:44kB oom_score_adj:0"

/* A memory.oom.group kill is walked once every task its cgroup still
 * lists has its line, the first victim its second one (the order of
 * v2-6.1-oomgroup); a pid the reader cannot name (0) or a malformed line
 * is a task whose line may still come. */
Test(kmsg, oom_group_walk_done_when_every_listed_task_has_its_line)
{
	struct kmsg_assembler *a = kmsg_assembler_new();
	const struct oom_report *r;

	cr_assert_eq(feed_text(a, 1, "hog invoked oom-killer: order=0"), 0);
	cr_assert_eq(feed_text(a, 2, KILLED(138)), 0);
	r = kmsg_assembler_current(a);
	cr_assert_not_null(r);
	cr_assert_not(oom_report_group_walked(r, "", 0), "not a group kill");
	cr_assert(kmsg_assembler_may_grow(a) == false);
	cr_assert_eq(feed_text(a, 3,
			       "Tasks in /demo are going to be killed due to "
			       "memory.oom.group set"),
		     0);
	cr_assert(kmsg_assembler_may_grow(a));
	cr_assert(oom_report_group_walked(r, "", 0), "nobody left");
	cr_assert_not(oom_report_group_walked(r, "138\n", 4), "no 2nd line");
	cr_assert_eq(feed_text(a, 4, KILLED(110)), 0);
	cr_assert(oom_report_group_walked(r, "110\n", 4));
	cr_assert_not(oom_report_group_walked(r, "110\n111\n", 8));
	cr_assert_eq(feed_text(a, 5, KILLED(111)), 0);
	cr_assert(oom_report_group_walked(r, "110\n111", 7), "no last \\n");
	cr_assert_not(oom_report_group_walked(r, "110\n0\n", 6), "pid ns");
	cr_assert_not(oom_report_group_walked(r, "110\nx\n", 6));
	cr_assert_not(oom_report_group_walked(r, "99999999999\n", 12));
	cr_assert_not(oom_report_group_walked(r, "110\n138\n111\n", 12));
	cr_assert_eq(feed_text(a, 6, KILLED(138)), 0);
	cr_assert(oom_report_group_walked(r, "110\n138\n111\n\n", 13));
	cr_assert_eq(r->kills_repeated, 1);
	cr_assert_eq(kmsg_assembler_flush(a, false), 1);
	cr_assert_null(kmsg_assembler_current(a));
	kmsg_assembler_free(a);
}

Test(kmsg, assembler_seq_gap_is_incomplete)
{
	struct kmsg_assembler *a = kmsg_assembler_new();
	struct oom_report r;

	feed_text(a, 10, "x invoked oom-killer: order=0");
	feed_text(a, 14, "Killed process 3 (x) total-vm:1kB");
	cr_assert_eq(kmsg_assembler_flush(a, false), 1);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 1);
	cr_assert_not(r.complete);
	cr_assert_eq(r.victims[0].pid, 3);
	oom_report_release(&r);
	kmsg_assembler_free(a);
}

/* --- single lines: hostile comms, varying columns ------------------- */

Test(kmsg, killed_line_comm_tricks)
{
	struct kmsg_victim v;

	cr_assert_eq(kmsg_parse_killed("Killed process 5 (x) total-vm:) "
				       "total-vm:11kB, anon-rss:2kB, "
				       "file-rss:3kB, shmem-rss:0kB",
				       &v),
		     0);
	cr_assert_str_eq(v.comm, "x) total-vm:");
	cr_assert_eq(v.total_vm_kb, 11);
	cr_assert_eq(kmsg_parse_killed("Out of memory: Killed process 6 ( "
				       "(a b)) ) total-vm:1kB",
				       &v),
		     0);
	cr_assert_str_eq(v.comm, " (a b)) ");
	cr_assert_eq(
		kmsg_parse_killed("Killed process -1 (x) total-vm:1kB", &v),
		-EBADMSG);
	cr_assert_eq(kmsg_parse_killed("Killed process 99999999999 (x)", &v),
		     -EBADMSG);
	cr_assert_eq(kmsg_parse_killed("Killed process 7", &v), -EBADMSG);
}

struct oom_kill_case {
	char line[300];
	char comm[16]; /* the victim's, "" when unknown */
	char oom_memcg[40], task_memcg[40];
	int pid;
	bool global;
	/* FITS: one split; AMBIGUOUS: several (memcg_ambiguous, both
	 * memcgs ""); REFUSED: none (-EBADMSG) */
	enum { FITS, AMBIGUOUS, REFUSED } split;
};

ParameterizedTestParameters(kmsg, oom_kill_lines)
{
	static struct oom_kill_case cases[] = {
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task=,global_oo"
		 "m,x,pid=3,uid=0",
		 "", "/a", "/a/b", 3, false, FITS},
		/* cgroup name with ",task=" (real: v2-6.1-hostile) */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/demo,task_memcg=/demo/a b,task=x,"
		 "task=evil) (x\nUID:9,pid=155,uid=0",
		 "", "/demo", "/demo/a b,task=x", 155, false, FITS},
		/* both hold ",task=": only the victim's comm tells */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/x,task_memcg=/x/y,task=z,task=a,p"
		 "id=1,uid=0",
		 "a", "/x", "/x/y,task=z", 1, false, FITS},
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/x,task_memcg=/x/y,task=z,task=a,p"
		 "id=1,uid=0",
		 "z,task=a", "/x", "/x/y", 1, false, FITS},
		/* an oom_memcg holding ",task_memcg=" */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/p,task_memcg=/q,task_memcg=/p,tas"
		 "k_memcg=/q/r,task=c,pid=7,uid=0",
		 "c", "/p,task_memcg=/q", "/p,task_memcg=/q/r", 7, false, FITS},
		{"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,"
		 "mems_allowed=0,global_oom,task_memcg=/,task=hog,pid=109,uid="
		 "0",
		 "", "", "/", 109, true, FITS},
		/* Issue 13 finding 9: a delegated cpuset's name repeats the
		 * keys after it (real: pasted/v1-6.18-hostile-cpuset). A
		 * cgroup name holds no '/', so no split can take a path from
		 * it. */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x"
		 ",mems_allowed=0,global_oom,oom_memcg=podV,task_memcg=podV,mem"
		 "s_allowed=0,oom_memcg=/oomlens-paste-24757,task_memcg=/oomlen"
		 "s-paste-24757,task=a,task=b,pid=1,pid=24842,uid=0",
		 "", "/oomlens-paste-24757", "/oomlens-paste-24757", 24842,
		 false, FITS},
		/* the name, with paths: mkdir cannot make it, so no
		 * kernel printed this line: refused */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=x"
		 ",oom_memcg=/kubepods/podV,task_memcg=/kubepods/podV/ctr,mems_"
		 "allowed=0,oom_memcg=/kubepods/podA,task_memcg=/kubepods/podA/"
		 "c,task=app,pid=9,uid=0",
		 "", "", "", 9, false, REFUSED},
		/* a cpuset name that ends the line early: "global_oom" */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=0-1,3,cpuset=a,"
		 "mems_allowed=0,global_oom,task_memcg=,mems_allowed=0-1,3,oom_"
		 "memcg=/p,task_memcg=/p/c,task=app,pid=9,uid=0",
		 "", "/p", "/p/c", 9, false, FITS},
		/* a hostile comm: keys, a fake pid/uid tail */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/p,task_memcg=/p/c,task=,pid=1,uid="
		 "2,pid=9,uid=0",
		 "", "/p", "/p/c", 9, false, FITS},
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/p,task_memcg=/p/c,task=x,oom_memc"
		 "g=/q,pid=9,uid=0",
		 "", "/p", "/p/c", 9, false, FITS},
		/* two splits fit and the comm is unknown: refused ... */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/x,task_memcg=/x/y,task=z,task=a,p"
		 "id=1,uid=0",
		 "", "", "", 1, false, AMBIGUOUS},
		/* ... an oom_memcg name holding ",task_memcg=/…" twice ... */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		 ",mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task_memcg=/a,t"
		 "ask_memcg=/a/b/c,task=t,pid=2,uid=0",
		 "t", "", "", 2, false, AMBIGUOUS},
		/* ... a cpuset name holding a whole memcg part (its paths
		 * below the one that ooms) */
		{"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=a"
		 ",mems_allowed=0,oom_memcg=,mems_allowed=0,oom_memcg=/p,task_m"
		 "emcg=/p/c,task=t,pid=2,uid=0",
		 "t", "/p", "/p/c", 2, false, FITS},
	};
	return cr_make_param_array(struct oom_kill_case, cases,
				   ARRAY_SIZE(cases));
}

ParameterizedTest(struct oom_kill_case *c, kmsg, oom_kill_lines)
{
	struct oom_report r;
	int pid = 0;

	oom_report_init(&r);
	cr_assert_eq(kmsg_parse_oom_kill(c->line, c->comm[0] ? c->comm : NULL,
					 &r, &pid),
		     c->split == REFUSED ? -EBADMSG : 0, "%s", c->line);
	cr_assert_str_eq(r.oom_memcg, c->oom_memcg, "%s", c->line);
	cr_assert_str_eq(r.task_memcg, c->task_memcg, "%s", c->line);
	cr_assert_eq(pid, c->pid);
	cr_assert_eq(r.global, c->global, "%s", c->line);
	cr_assert_eq(r.memcg_ambiguous, c->split == AMBIGUOUS, "%s", c->line);
	if (c->split != REFUSED) {
		/* the JSON says so too */
		struct json_object *j = oom_report_to_json(&r), *v;

		cr_assert(json_object_object_get_ex(j, "memcg_ambiguous", &v));
		cr_assert_eq(json_object_get_boolean(v), c->split == AMBIGUOUS);
		json_object_put(j);
	}
	oom_report_release(&r);
}

Test(kmsg, oom_kill_line_malformed)
{
	struct oom_report r;
	int pid;

	oom_report_init(&r);
	cr_assert_eq(
		kmsg_parse_oom_kill("oom-kill:nodemask=(null)", NULL, &r, &pid),
		-EBADMSG);
	/* Cut short: what is there is kept, the pid is unknown. */
	cr_assert_eq(kmsg_parse_oom_kill("oom-kill:constraint=CONSTRAINT_MEMCG,"
					 "nodemask=(null),cpuset=/,mems_allowe"
					 "d=0,oom_memcg=/,task_memcg=/a,task=a"
					 ",pid=1,uid=",
					 NULL, &r, &pid),
		     0);
	cr_assert_str_eq(r.task_memcg, "/a");
	cr_assert_eq(pid, 0);
	oom_report_release(&r);
}

Test(kmsg, task_table_columns)
{
	unsigned cols[KMSG_MAX_COLS], mask;
	size_t n;
	struct kmsg_task t;

	cr_assert_eq(kmsg_parse_task_header("[  pid  ]   uid  tgid total_vm   "
					    "   rss future_col oom_score_adj "
					    "name",
					    cols, &n, &mask),
		     0);
	cr_assert_eq(n, 6);
	cr_assert_eq(mask, KMSG_COL_UID | KMSG_COL_TGID | KMSG_COL_TOTAL_VM |
				   KMSG_COL_RSS | KMSG_COL_OOM_SCORE_ADJ);
	cr_assert_eq(kmsg_parse_task_row("[   42]  1000    41      100       "
					 "50   77       -17  my prog (1)",
					 cols, n, &t),
		     0);
	cr_assert_eq(t.pid, 42);
	cr_assert_eq(t.tgid, 41);
	cr_assert_eq(t.uid, 1000);
	cr_assert_eq(t.rss, 50);
	cr_assert_eq(t.oom_score_adj, -17);
	cr_assert_str_eq(t.name, " my prog (1)",
			 "name verbatim after one "
			 "space");
	cr_assert_eq(kmsg_parse_task_row("[   42]  1000    41", cols, n, &t),
		     -EBADMSG);
	cr_assert_eq(kmsg_parse_task_header("[ pid ] uid", cols, &n, &mask),
		     -EBADMSG);
}

Test(kmsg, usage_lines)
{
	struct oom_report r;

	oom_report_init(&r);
	cr_assert_eq(
		kmsg_parse_usage("kmem: usage 1kB, limit 2kB, failcnt 3", &r),
		0);
	cr_assert(r.kmem.present);
	cr_assert_eq(r.kmem.failcnt, 3);
	cr_assert_eq(
		kmsg_parse_usage("memory: usage kB, limit 2kB, failcnt 3", &r),
		-EBADMSG);
	cr_assert_not(r.memcg.present);
	oom_report_release(&r);
}

/* --- JSON ------------------------------------------------------------ */

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;

	cr_assert(json_object_object_get_ex(o, k, &v), "key '%s'", k);
	return v;
}

Test(kmsg, json_fields)
{
	struct collected c;
	struct json_object *o, *v, *t;

	cr_assert_eq(parse_file(FIX "v1-6.18-hostile/kmsg.txt", &c), 1);
	o = oom_report_to_json(&c.r[0]);
	cr_assert_not_null(o);
	cr_assert_eq(json_object_get_uint64(get(o, "seq_first")), 678);
	cr_assert_eq(json_object_get_uint64(get(o, "seq_last")), 756);
	cr_assert_eq(json_object_get_uint64(get(o, "usec")), 448113174);
	cr_assert(json_object_get_boolean(get(o, "complete")));
	t = get(o, "trigger");
	cr_assert_str_eq(json_object_get_string(get(t, "comm")),
			 "a) (b,pid=1\nc");
	cr_assert_eq(json_object_get_int(get(t, "pid")), 10835);
	cr_assert_str_eq(json_object_get_string(get(t, "gfp_mask")),
			 "0xcc0(GFP_KERNEL)");
	cr_assert_str_eq(json_object_get_string(get(o, "constraint")),
			 "CONSTRAINT_MEMCG");
	cr_assert_str_eq(json_object_get_string(get(o, "task_memcg")),
			 "/oomlens-test-kmsg-3");
	v = json_object_array_get_idx(get(o, "victims"), 0);
	cr_assert_eq(json_object_get_int(get(v, "pid")), 10835);
	cr_assert_eq(json_object_get_uint64(get(v, "anon_rss_kb")), 32640);
	cr_assert_eq(json_object_get_uint64(get(v, "file_rss_kb")), 968);
	cr_assert_eq(json_object_get_uint64(get(v, "uid")), 0);
	cr_assert_eq(json_object_get_uint64(get(get(o, "memcg"), "limit_kb")),
		     32768);
	cr_assert(json_object_is_type(get(o, "swap"), json_type_null));
	cr_assert_eq(json_object_get_uint64(get(get(o, "memcg_stat"), "rss")),
		     33427456);
	t = json_object_array_get_idx(get(o, "tasks"), 0);
	cr_assert_eq(json_object_get_uint64(get(t, "rss_file")), 242);
	cr_assert_str_eq(json_object_get_string(get(t, "name")),
			 "a) (b,pid=1\nc");
	cr_assert_not(json_object_get_boolean(get(o, "group_kill")));
	json_object_put(o);
	collected_release(&c);
}

Test(kmsg, json_invalid_utf8_comm)
{
	struct oom_report r;
	struct json_object *o;

	oom_report_init(&r);
	memcpy(r.trigger.comm, "\xff\xc3\xa9x", 5);
	r.trigger.present = true;
	o = oom_report_to_json(&r);
	cr_assert_not_null(o);
	cr_assert_str_eq(json_object_get_string(get(get(o, "trigger"), "comm")),
			 "\\xff\xc3\xa9x");
	cr_assert(json_object_is_type(get(o, "seq_first"), json_type_null));
	cr_assert_eq(json_object_array_length(get(o, "victims")), 0);
	json_object_put(o);
	oom_report_release(&r);
}

/* Quick kills in a row: the kernel suppressed 15 report headers; each
 * bare kill line is a kill of its own, never a victim of the report
 * before it. */
Test(kmsg, ratelimited_headers)
{
	struct collected c;
	struct strbuf sb;
	int n;

	strbuf_init(&sb, 1u << 20);
	cr_assert_geq(read_file_at(AT_FDCWD, FIX "v1-6.18-ratelimited/kmsg.txt",
				   1u << 20, &sb),
		      0);
	c.n = 0;
	n = kmsg_parse_buffer(sb.buf, sb.len, collect, &c);
	cr_assert_eq(n, -E2BIG, "more than %d reports", MAX_REPORTS);
	cr_assert_eq(c.n, MAX_REPORTS);
	cr_assert_eq(c.r[0].n_victims, 1);
	cr_assert_eq(c.r[0].victims[0].pid, 32530);
	cr_assert(c.r[0].complete);
	cr_assert_not(c.r[0].ratelimited);
	cr_assert_eq(c.r[1].n_victims, 1);
	cr_assert_eq(c.r[1].victims[0].pid, 32533);
	cr_assert_eq(c.r[1].seq_first, 11014);
	cr_assert_eq(c.r[1].victims[0].usec, 954854985);
	cr_assert(c.r[1].ratelimited);
	cr_assert_not(c.r[1].complete);
	cr_assert_not(c.r[1].trigger.present);
	cr_assert_eq(c.r[7].victims[0].pid, 32560);
	collected_release(&c);
	strbuf_release(&sb);
}

static int count_reports(struct oom_report *r, void *userdata)
{
	size_t *counts = userdata;

	counts[0]++;
	counts[1] += r->ratelimited;
	counts[2] += r->n_victims;
	return 0;
}

Test(kmsg, ratelimited_count)
{
	struct strbuf sb;
	size_t counts[3] = {0};

	strbuf_init(&sb, 1u << 20);
	cr_assert_geq(read_file_at(AT_FDCWD, FIX "v1-6.18-ratelimited/kmsg.txt",
				   1u << 20, &sb),
		      0);
	cr_assert_eq(kmsg_parse_buffer(sb.buf, sb.len, count_reports, counts),
		     17);
	cr_assert_eq(counts[0], 17);
	cr_assert_eq(counts[1], 15);
	cr_assert_eq(counts[2], 17, "one victim each");
	strbuf_release(&sb);
}

static int feed_prio(struct kmsg_assembler *a, int prio, uint64_t seq,
		     const char *t)
{
	struct kmsg_record rec = {
		.seq = seq,
		.usec = seq,
		.prio = prio,
		.text = t,
		.text_len = strlen(t),
	};

	return kmsg_assembler_feed(a, &rec);
}

/* Records written to /dev/kmsg from user space (facility != kernel) never
 * start, end or join a report. */
Test(kmsg, user_space_records_cannot_fake_reports)
{
	struct kmsg_assembler *a = kmsg_assembler_new();
	struct oom_report r;

	cr_assert_eq(feed_prio(a, 14, 1, "evil invoked oom-killer: order=0"),
		     0);
	cr_assert_eq(feed_prio(a, 11, 2,
			       "Killed process 1 (init) "
			       "total-vm:1kB"),
		     0);
	cr_assert_eq(kmsg_assembler_flush(a, true), 0);
	cr_assert_eq(feed_prio(a, 4, 3, "x invoked oom-killer: order=0"), 0);
	cr_assert_eq(feed_prio(a, 3, 4, "Killed process 5 (x) total-vm:1kB"),
		     0);
	/* An unrelated record: it closes the report, it does not join it. */
	cr_assert_eq(feed_prio(a, 11, 5,
			       "Killed process 1 (init) "
			       "total-vm:1kB"),
		     1);
	cr_assert_eq(feed_prio(a, 6, 6, "eth0: up"), 0);
	cr_assert_eq(kmsg_assembler_pop(a, &r), 1);
	cr_assert_eq(r.n_victims, 1);
	cr_assert_eq(r.victims[0].pid, 5);
	oom_report_release(&r);
	kmsg_assembler_free(a);
}

/* --- the reader, on a FIFO standing in for <root>/dev/kmsg ------------ */

static char fifo_root[64];

static void fifo_cleanup(void)
{
	char p[96];

	snprintf(p, sizeof(p), "%s/dev/kmsg", fifo_root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/dev", fifo_root);
	rmdir(p);
	rmdir(fifo_root);
}

/* cppcheck-suppress unknownMacro */
Test(kmsg, reader_records_and_malformed, .fini = fifo_cleanup)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char p[96];
	int root, w;

	snprintf(fifo_root, sizeof(fifo_root), "/tmp/oomlens-test-kmsg-XXXXXX");
	cr_assert_not_null(mkdtemp(fifo_root));
	snprintf(p, sizeof(p), "%s/dev", fifo_root);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/dev/kmsg", fifo_root);
	cr_assert_eq(mkfifo(p, 0600), 0);
	root = open(fifo_root, O_PATH | O_DIRECTORY);
	cr_assert_geq(root, 0);
	cr_assert_eq(kmsg_reader_open(root, false, false, 0, &r), 0);
	w = open(p, O_WRONLY | O_NONBLOCK);
	cr_assert_geq(w, 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 0, "nothing yet");
	/* One write, one read: as /dev/kmsg hands out one record per read. */
	cr_assert_eq(write(w, "6,abc,1,-;bad\n", 14), 14);
	cr_assert_eq(kmsg_reader_next(r, &rec), 0, "malformed: skipped");
	cr_assert_eq(kmsg_reader_malformed(r), 1);
	cr_assert_eq(write(w, "3,42,77,-;a\\x0ab\n", 17), 17);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(rec.seq, 42);
	cr_assert_eq(rec.usec, 77);
	cr_assert_eq(rec.prio, 3);
	cr_assert_eq(rec.text_len, 3);
	cr_assert_eq(memcmp(rec.text, "a\nb", 3), 0);
	cr_assert_geq(kmsg_reader_fd(r), 0);
	close(w);
	kmsg_reader_free(r);
	kmsg_reader_free(NULL);
	close(root);
	cr_assert_eq(kmsg_reader_open(root, false, false, 0, &r), -EBADF);
}

/* --- pasted text: journalctl, syslog, dmesg -T, CRLF ---------------- */

struct prefix_case {
	char line[120];
	unsigned flags;
	char text[48]; /* what is left: the kernel's text */
	uint64_t usec; /* UINT64_MAX: none */
	bool foreign;
};

#define NO_TIME UINT64_MAX

ParameterizedTestParameters(kmsg, text_prefix)
{
	static struct prefix_case cases[] = {
		{"[  114.181234] x y", 0, "x y", 114181234, false},
		{"<4>[  114.18] x", 0, "x", 114180000, false},
		{"kern  :warn  : [  114.181234] x", 0, "x", 114181234, false},
		{"[Tue Dec  1 08:55:47 2026] x", 0, "x", NO_TIME, false},
		{"2026-12-01T08:55:47,123456+00:00 x", 0, "x", NO_TIME, false},
		{"Dec 01 08:55:47 node-a kernel: envoy invoked", 0,
		 "envoy invoked", NO_TIME, false},
		{"Jan  5 02:12:02 node-a kernel: envoy", 0, "envoy", NO_TIME,
		 false},
		{"Dec 01 08:55:47.123456 node-a kernel: x", 0, "x", NO_TIME,
		 false},
		{"Dec 01 08:55:47 kernel: x", 0, "x", NO_TIME, false},
		{"[  114.181234] node-a kernel: x", 0, "x", 114181234, false},
		{"[  114.181234] node-a kernel: x", KMSG_TEXT_NO_MONO_HOST,
		 "node-a kernel: x", 114181234, false},
		{"[  114.181234] node-a systemd[1]: x", 0, "", 114181234, true},
		/* a kernel line that starts with two words and a colon */
		{"[  114.181234] Hardware name: QEMU", 0, "Hardware name: QEMU",
		 114181234, false},
		{"2026-12-01T08:55:47.123456+00:00 node-a kernel: x", 0, "x",
		 NO_TIME, false},
		{"2026-12-01T08:55:47+0000 node-a kernel: x", 0, "x", NO_TIME,
		 false},
		{"2026-12-01T08:55:47Z node-a kernel: x", 0, "x", NO_TIME,
		 false},
		{"Dec  1 08:55:47 node-a kernel: [  114.18] x", 0, "x",
		 114180000, false},
		{"Dec  1 08:55:47 node-a kernel: [  114.18] x",
		 KMSG_TEXT_NO_INNER_STAMP, "[  114.18] x", NO_TIME, false},
		{"Dec  1 08:55:47 node-a containerd[640]: x invoked "
		 "oom-killer:",
		 0, "", NO_TIME, true},
		{"Dec  1 08:55:47 node-a last message repeated 2 times", 0, "",
		 NO_TIME, true},
		{"oom_reaper: reaped process 5", 0,
		 "oom_reaper: reaped process 5", NO_TIME, false},
		/* not stamps: kept as text */
		{"Dec 1x 08:55:47 node-a kernel: x", 0,
		 "Dec 1x 08:55:47 node-a kernel: x", NO_TIME, false},
		{"[  10133]     0 10133 hog", 0, "[  10133]     0 10133 hog",
		 NO_TIME, false},
	};
	return cr_make_param_array(struct prefix_case, cases,
				   ARRAY_SIZE(cases));
}

ParameterizedTest(struct prefix_case *c, kmsg, text_prefix)
{
	struct strbuf sb;
	struct kmsg_record rec = {0};
	int r;

	strbuf_init(&sb, 4096);
	r = kmsg_parse_text_line(c->line, strlen(c->line), c->flags, &sb, &rec);
	cr_assert_eq(r, c->foreign ? 0 : 1, "%s", c->line);
	if (!c->foreign) {
		cr_assert_eq(rec.text_len, strlen(c->text), "%s", c->line);
		cr_assert_arr_eq(rec.text, c->text, rec.text_len, "%s",
				 c->line);
		cr_assert_eq(rec.usec, c->usec, "%s", c->line);
		cr_assert_eq(rec.seq, UINT64_MAX);
	}
	strbuf_release(&sb);
}

#define PASTED FIX "pasted/"

static const struct {
	const char *file;
	bool mono; /* carries the kernel's monotonic stamps */
} pasted_forms[] = {
	{"dmesg.txt", true},
	{"dmesg-T.txt", false},
	{"journal-short.txt", false},
	{"journal-short-precise.txt", false},
	{"journal-short-monotonic.txt", true},
	{"journal-short-iso.txt", false},
	{"journal-short-iso-precise.txt", false},
	{"syslog-kern.log", true},
	{"syslog-messages.txt", false},
	{"rsyslog-iso.txt", false},
	{"kubectl-dmesg-crlf.txt", true},
};

/* The report's JSON without the time fields (seq_first, seq_last, usec,
 * victims[].seq, victims[].usec), which depend on the form. */
static char *json_untimed(const struct oom_report *r)
{
	struct json_object *o = oom_report_to_json(r), *v;
	char *s;

	cr_assert_not_null(o);
	json_object_object_del(o, "seq_first");
	json_object_object_del(o, "seq_last");
	json_object_object_del(o, "usec");
	v = json_object_object_get(o, "victims");
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object_object_del(json_object_array_get_idx(v, i), "seq");
		json_object_object_del(json_object_array_get_idx(v, i), "usec");
	}
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

/* s with every line end made LF (eol "\n") or CRLF. */
static void set_eol(struct strbuf *out, const char *s, size_t len,
		    const char *eol)
{
	strbuf_reset(out);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
			continue;
		cr_assert_geq(s[i] == '\n' ? strbuf_adds(out, eol)
					   : strbuf_addch(out, s[i]),
			      0);
	}
}

static void check_form(const char *kase, const char *form, const char *text,
		       size_t len, const char *want, const struct oom_report *k,
		       bool mono)
{
	struct collected c;
	char *got;

	cr_assert_eq(parse_str(text, len, &c), 1, "%s/%s", kase, form);
	got = json_untimed(&c.r[0]);
	cr_assert_str_eq(got, want, "%s/%s", kase, form);
	cr_assert_eq(c.r[0].seq_first, UINT64_MAX);
	cr_assert_eq(c.r[0].usec, mono ? k->usec : UINT64_MAX, "%s/%s", kase,
		     form);
	cr_assert_eq(c.r[0].victims[0].usec,
		     mono ? k->victims[0].usec : UINT64_MAX);
	free(got);
	collected_release(&c);
}

/* Every form of the same real report gives the same JSON (time fields
 * aside), with LF, with CRLF, and between unrelated lines. */
Test(kmsg, pasted_forms_same_json)
{
	static const char *cases[] = {"v1-6.18-hog", "v1-6.18-hostile-cpuset"};
	static const char noise[] =
		"Creating debugging pod node-debugger-vm-x with container "
		"debugger on node vm.\n"
		"Dec  1 09:20:15 vm sshd[99]: Accepted publickey for root\n"
		"2026-12-01T09:20:15.1+00:00 vm kubelet[812]: Killed process 1 "
		"(init) total-vm:1kB\n"
		"-- Boot 3d1219c7c4c5404aaa1f6d2a48adfda4 --\n";

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb, eol;
		struct collected k;
		char p[160], *want;

		snprintf(p, sizeof(p), PASTED "%s/kmsg.txt", cases[i]);
		cr_assert_eq(parse_file(p, &k), 1);
		cr_assert(k.r[0].complete);
		cr_assert_neq(k.r[0].usec, UINT64_MAX);
		want = json_untimed(&k.r[0]);
		strbuf_init(&sb, 1u << 20);
		strbuf_init(&eol, 1u << 21);
		for (size_t f = 0; f < ARRAY_SIZE(pasted_forms); f++) {
			const char *form = pasted_forms[f].file;
			bool mono = pasted_forms[f].mono;

			snprintf(p, sizeof(p), PASTED "%s/%s", cases[i], form);
			strbuf_reset(&sb);
			cr_assert_geq(read_file_at(AT_FDCWD, p, 1u << 20, &sb),
				      0, "%s", p);
			set_eol(&eol, sb.buf, sb.len, "\n");
			check_form(cases[i], form, eol.buf, eol.len, want,
				   &k.r[0], mono);
			set_eol(&eol, sb.buf, sb.len, "\r\n");
			check_form(cases[i], form, eol.buf, eol.len, want,
				   &k.r[0], mono);
			strbuf_reset(&eol);
			cr_assert_geq(strbuf_adds(&eol, noise), 0);
			cr_assert_geq(strbuf_add(&eol, sb.buf, sb.len), 0);
			cr_assert_geq(strbuf_adds(&eol, noise), 0);
			check_form(cases[i], form, eol.buf, eol.len, want,
				   &k.r[0], mono);
		}
		free(want);
		strbuf_release(&sb);
		strbuf_release(&eol);
		collected_release(&k);
	}
}

/* The real hostile cpuset (issue 13 finding 9) in every form: the victim
 * memcg is the one the kernel named, not the one the name claims. */
Test(kmsg, pasted_hostile_cpuset_values)
{
	struct collected c;

	cr_assert_eq(parse_file(PASTED "v1-6.18-hostile-cpuset/"
				       "syslog-messages.txt",
				&c),
		     1);
	cr_assert_str_eq(c.r[0].oom_memcg, "/oomlens-paste-24757");
	cr_assert_str_eq(c.r[0].task_memcg, "/oomlens-paste-24757");
	cr_assert_not(c.r[0].memcg_ambiguous);
	cr_assert_not(c.r[0].global);
	cr_assert_str_eq(c.r[0].trigger.comm, "a,task=b,pid=1");
	cr_assert_eq(c.r[0].victims[0].pid, 24842);
	cr_assert_eq(c.n, 1, "the other programs' kill line is no kill");
	collected_release(&c);
}

/* Replaces the first "from" in s by "to" (test data only). */
static void replace_first(struct strbuf *sb, const char *from, const char *to)
{
	char *at = strstr(sb->buf, from);
	struct strbuf out;

	cr_assert_not_null(at, "'%s' in the fixture", from);
	strbuf_init(&out, sb->max);
	cr_assert_geq(strbuf_add(&out, sb->buf, (size_t)(at - sb->buf)), 0);
	cr_assert_geq(strbuf_adds(&out, to), 0);
	cr_assert_geq(strbuf_adds(&out, at + strlen(from)), 0);
	strbuf_reset(sb);
	cr_assert_geq(strbuf_add(sb, out.buf, out.len), 0);
	strbuf_release(&out);
}

/* A comm that looks like a prefix ("a kernel: b", "[1.5] b") is kept
 * whole: the paste's other lines tell which form it is. */
Test(kmsg, pasted_comm_like_a_prefix)
{
	static const struct {
		const char *file, *from, *to, *comm;
	} cases[] = {
		{"dmesg.txt", "] hog invoked", "] a kernel: b invoked",
		 "a kernel: b"},
		{"journal-short-monotonic.txt", "vm kernel: hog invoked",
		 "vm kernel: a kernel: b invoked", "a kernel: b"},
		{"syslog-messages.txt", "vm kernel: hog invoked",
		 "vm kernel: [1.5] b invoked", "[1.5] b"},
		{"syslog-kern.log", "] hog invoked", "] [1.5] b invoked",
		 "[1.5] b"},
		{"journal-short.txt", "vm kernel: hog invoked",
		 "vm kernel: Jan  5 02:12:02 node-a kernel: b invoked",
		 "Jan  5 02:12:02 node-a kernel: b"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct collected c;
		struct strbuf sb;
		char p[160];

		snprintf(p, sizeof(p), PASTED "v1-6.18-hog/%s", cases[i].file);
		strbuf_init(&sb, 1u << 20);
		cr_assert_geq(read_file_at(AT_FDCWD, p, 1u << 20, &sb), 0);
		replace_first(&sb, cases[i].from, cases[i].to);
		cr_assert_eq(parse_str(sb.buf, sb.len, &c), 1, "%s", p);
		cr_assert_str_eq(c.r[0].trigger.comm, cases[i].comm, "%s", p);
		cr_assert_str_eq(c.r[0].victims[0].comm, "hog");
		/* kernel/oom.txt reads back the same */
		strbuf_reset(&sb);
		cr_assert_geq(strbuf_add(&sb, c.r[0].raw.buf, c.r[0].raw.len),
			      0);
		collected_release(&c);
		cr_assert_eq(parse_str(sb.buf, sb.len, &c), 1, "%s", sb.buf);
		cr_assert_str_eq(c.r[0].trigger.comm, cases[i].comm, "%s raw",
				 p);
		collected_release(&c);
		strbuf_release(&sb);
	}
}

/* journalctl prints a record holding newlines (6.1's one-record memcg
 * stats, a comm with a newline) as lines indented to the text's column.
 * Built from the raw records of the 6.1 captures, in the short and the
 * short-monotonic forms: the same JSON as the records. */
Test(kmsg, pasted_journal_multiline_records)
{
	static const char *cases[] = {"v2-6.1-single", "v2-6.1-hostile"};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb, scratch, out;
		struct collected k;
		char p[160], *want;

		snprintf(p, sizeof(p), FIX "%s/kmsg.txt", cases[i]);
		cr_assert_eq(parse_file(p, &k), 1);
		want = json_untimed(&k.r[0]);
		strbuf_init(&sb, 1u << 20);
		strbuf_init(&scratch, 1u << 20);
		strbuf_init(&out, 1u << 21);
		cr_assert_geq(read_file_at(AT_FDCWD, p, 1u << 20, &sb), 0);
		for (int mono = 0; mono < 2; mono++) {
			struct collected c;

			strbuf_reset(&out);
			for (const char *l = sb.buf; *l;) {
				const char *nl = strchr(l, '\n');
				size_t n = nl ? (size_t)(nl - l) : strlen(l);
				struct kmsg_record rec;
				size_t col = out.len;

				cr_assert_eq(
					kmsg_parse_record(l, n, &scratch, &rec),
					0);
				l += n + (nl != NULL);
				if (rec.prio >= 8)
					continue; /* not in journalctl -k */
				if (mono)
					strbuf_addf(&out,
						    "[%5lu.%06lu] vm kernel: ",
						    (unsigned long)(rec.usec /
								    1000000),
						    (unsigned long)(rec.usec %
								    1000000));
				else
					strbuf_adds(&out, "Dec 01 09:20:15 vm "
							  "kernel: ");
				col = out.len - col;
				for (size_t j = 0; j < rec.text_len; j++) {
					strbuf_addch(&out, rec.text[j]);
					for (size_t s = 0;
					     rec.text[j] == '\n' && s < col;
					     s++)
						strbuf_addch(&out, ' ');
				}
				cr_assert_geq(strbuf_addch(&out, '\n'), 0);
			}
			check_form(cases[i], mono ? "short-monotonic" : "short",
				   out.buf, out.len, want, &k.r[0], mono);
			cr_assert_eq(parse_str(out.buf, out.len, &c), 1);
			cr_assert_eq(c.r[0].n_stats, k.r[0].n_stats);
			cr_assert_str_eq(c.r[0].victims[0].comm,
					 k.r[0].victims[0].comm);
			collected_release(&c);
		}
		free(want);
		strbuf_release(&sb);
		strbuf_release(&scratch);
		strbuf_release(&out);
		collected_release(&k);
	}
}

static bool keep_pid(int pid, void *arg)
{
	return pid == *(int *)arg;
}

/* A global OOM's task dump cut to the victim's: the other task's line
 * leaves the raw text, whose parse is the same report with one task;
 * in kmsg records and in dmesg text with and without stamps alike. */
Test(kmsg, global_task_dump_cut_to_the_kept_tasks)
{
	static const char *const files[] = {FIX "v2-6.1-global/kmsg.txt", FIX
					    "synthetic-global-6.18/kmsg.txt"};
	static const int victims[] = {109, 7777};
	static const uint64_t other_rss[] = {1, 900};

	for (size_t f = 0; f < 2; f++) {
		struct collected c, again;
		struct oom_tasks_cut cut;
		struct strbuf raw;
		int victim = victims[f];

		parse_file(files[f], &c);
		cr_assert(c.r[0].global);
		cr_assert_eq(c.r[0].n_tasks, 2);
		strbuf_init(&raw, 1u << 24);
		cr_assert_eq(oom_report_cut_tasks(&c.r[0], keep_pid, &victim,
						  &raw, &cut),
			     0);
		cr_assert_eq(cut.kept, 1);
		cr_assert_eq(cut.left_out, 1);
		cr_assert_eq(cut.left_out_rss, other_rss[f]);
		cr_assert_lt(raw.len, c.r[0].raw.len);
		cr_assert_eq(parse_str(raw.buf, raw.len, &again), 1);
		cr_assert_eq(again.r[0].n_tasks, 1);
		cr_assert_eq(again.r[0].tasks[0].pid, victim);
		cr_assert(again.r[0].global);
		cr_assert_eq(again.r[0].n_victims, 1);
		cr_assert_eq(again.r[0].victims[0].pid, victim);
		collected_release(&again);
		strbuf_release(&raw);
		collected_release(&c);
	}

	/* dmesg text: "[sec.usec] [  pid]" and bare "[  pid]" lines */
	static const char dmesg[] =
		"[ 25.594147] hog invoked oom-killer: gfp_mask=0x140dca(GFP_"
		"HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, "
		"oom_score_adj=0\n"
		"[ 25.623291] Tasks state (memory values in pages):\n"
		"[ 25.623310] [  pid  ]   uid  tgid total_vm      rss "
		"pgtables_bytes swapents oom_score_adj name\n"
		"[ 25.623606] [    108]     0   108      565        1    "
		"28672        0             0 sh\n"
		"[    109]     0   109   108444   108256   905216        0    "
		"         0 hog\n";
	struct oom_report r;
	struct oom_tasks_cut cut;
	struct strbuf raw = STRBUF_INIT;
	int victim = 109;

	oom_report_init(&r);
	strbuf_adds(&r.raw, dmesg);
	cr_assert_eq(oom_report_cut_tasks(&r, keep_pid, &victim, &raw, &cut),
		     0);
	cr_assert_eq(cut.kept, 1);
	cr_assert_eq(cut.left_out, 1);
	cr_assert_null(strstr(raw.buf, " sh\n"));
	cr_assert_not_null(strstr(raw.buf, " hog\n"));
	cr_assert_not_null(strstr(raw.buf, "[  pid  ]"), "the header stays");
	cr_assert_eq(raw.len,
		     sizeof(dmesg) - 1 -
			     strlen(strstr(dmesg, "[ 25.623606] [    108]")) +
			     strlen(strstr(dmesg, "[    109]")));
	strbuf_release(&raw);
	oom_report_release(&r);
}
