/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup: parsers, detection and readers on fixture roots
 * (tests/fixtures/cgroup/, see its README), and the v2 watcher on a copy of
 * a fixture tree in a temp dir (inotify on tmpfs; no live /sys). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>

#include "kernel/cgroup.h"
#include "base/host.h"
#include "base/strbuf.h"
#include "base/util.h"

#define FIX "tests/fixtures/cgroup/"
#define V1 "/oomlens-test/killed"
#define POD "/pod"
#define CTR "/pod/ctr"

static struct host h = {.root_fd = -1, .proc_fd = -1, .cgroup_fd = -1};
static struct cgroup_fs fs = {.mem_fd = -1};

static void open_case(const char *root)
{
	cr_assert_eq(host_open(root, &h), 0, "host_open %s", root);
	cr_assert_eq(cgroup_fs_open(&h, &fs), 0, "cgroup_fs_open %s", root);
}

static void close_case(void)
{
	cgroup_fs_close(&fs);
	host_close(&h);
}

/* --- pure parsers ------------------------------------------------------- */

Test(cgroup, parse_events_real_v2)
{
	static const char buf[] = "low 0\nhigh 0\nmax 37\noom 1\noom_kill 4\n"
				  "oom_group_kill 1\n";
	struct cgroup_events ev;

	cr_assert_eq(cgroup_parse_events(buf, strlen(buf), &ev), 0);
	cr_assert_eq(ev.max, 37);
	cr_assert_eq(ev.oom, 1);
	cr_assert_eq(ev.oom_kill, 4);
	cr_assert_eq(ev.oom_group_kill, 1);
	cr_assert(ev.has_oom_kill);
}

Test(cgroup, parse_events_tolerates_new_keys_and_no_final_newline)
{
	static const char buf[] = "low 1\nsock_throttled 9\noom_kill 2";
	struct cgroup_events ev;

	cr_assert_eq(cgroup_parse_events(buf, strlen(buf), &ev), 0);
	cr_assert_eq(ev.low, 1);
	cr_assert_eq(ev.oom_kill, 2);
}

Test(cgroup, parse_events_old_kernel_without_oom_kill)
{
	static const char buf[] = "low 0\nhigh 0\nmax 3\noom 1\n";
	struct cgroup_events ev;

	cr_assert_eq(cgroup_parse_events(buf, strlen(buf), &ev), 0);
	cr_assert_not(ev.has_oom_kill);
	cr_assert_eq(ev.oom, 1);
}

struct bad_case {
	char in[48];
};

ParameterizedTestParameters(cgroup, parse_events_malformed)
{
	static struct bad_case cases[] = {
		{""},
		{"\n"},
		{"oom"},
		{"oom x\n"},
		{"oom 1 2\n"},
		{"oom -1\n"},
		{" 1\n"},
		{"oom_kill 1x\n"},
		{"unknown 5\n"},
		{"oom_kill \n"},
		{"oom  1\n"},
	};
	return cr_make_param_array(struct bad_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct bad_case *c, cgroup, parse_events_malformed)
{
	struct cgroup_events ev = {.oom_kill = 777};

	cr_assert_eq(cgroup_parse_events(c->in, strlen(c->in), &ev), -EBADMSG,
		     "input '%s'", c->in);
	cr_assert_eq(ev.oom_kill, 777, "ret untouched ('%s')", c->in);
}

Test(cgroup, parse_events_respects_len_and_nul)
{
	static const char buf[] = "oom_kill 12";
	struct cgroup_events ev;

	/* Only "oom_kill 1" is given: the 2 beyond len is not read. */
	cr_assert_eq(cgroup_parse_events(buf, strlen(buf) - 1, &ev), 0);
	cr_assert_eq(ev.oom_kill, 1);
	cr_assert_eq(cgroup_parse_events("oom 1\0\n", 7, &ev), -EBADMSG);
}

Test(cgroup, parse_oom_control)
{
	static const char real[] = "oom_kill_disable 0\nunder_oom 1\n"
				   "oom_kill 3\n";
	static const char old[] = "oom_kill_disable 1\nunder_oom 0\n";
	struct cgroup_events ev = {.oom_kill = 777};

	cr_assert_eq(cgroup_parse_oom_control(real, strlen(real), &ev), 0);
	cr_assert(ev.under_oom);
	cr_assert_not(ev.oom_kill_disable);
	cr_assert_eq(ev.oom_kill, 3);
	cr_assert(ev.has_oom_kill);
	cr_assert_eq(cgroup_parse_oom_control(old, strlen(old), &ev), 0);
	cr_assert_not(ev.has_oom_kill, "pre-4.13 kernels have no oom_kill");
	cr_assert(ev.oom_kill_disable);
	cr_assert_eq(ev.oom_kill, 0);
}

Test(cgroup, parse_oom_control_malformed)
{
	struct cgroup_events ev = {.oom_kill = 777};

	cr_assert_eq(cgroup_parse_oom_control("", 0, &ev), -EBADMSG);
	cr_assert_eq(cgroup_parse_oom_control("oom_kill 1\n", 11, &ev),
		     -EBADMSG, "no under_oom: not an oom_control file");
	cr_assert_eq(cgroup_parse_oom_control("under_oom yes\n", 14, &ev),
		     -EBADMSG);
	cr_assert_eq(ev.oom_kill, 777);
}

Test(cgroup, parse_stat)
{
	static const char buf[] =
		"anon 70856704\nfile 18464768\n"
		"a_key_that_is_much_longer_than_forty_seven_characters_x 5\n"
		"pgfault 17408\n";
	struct cgroup_stat s = {0};
	uint64_t v = 0;

	cr_assert_eq(cgroup_parse_stat(buf, strlen(buf), &s), 0);
	cr_assert_eq(s.n, 3, "over-long key skipped, the rest kept");
	cr_assert(cgroup_stat_get(&s, "anon", &v));
	cr_assert_eq(v, 70856704);
	cr_assert(cgroup_stat_get(&s, "pgfault", &v));
	cr_assert_eq(v, 17408);
	cr_assert_not(cgroup_stat_get(&s, "file_dirty", &v));
	cgroup_stat_release(&s);
	cr_assert_eq(s.n, 0);
	cr_assert_null(s.e);
}

Test(cgroup, parse_stat_malformed)
{
	struct cgroup_stat s = {.n = 777};

	cr_assert_eq(cgroup_parse_stat("", 0, &s), -EBADMSG);
	cr_assert_eq(cgroup_parse_stat("cache 0\nrss 12 34\n", 18, &s),
		     -EBADMSG);
	cr_assert_eq(cgroup_parse_stat("cache\n", 6, &s), -EBADMSG);
	cr_assert_eq(s.n, 777, "ret untouched on failure");
}

struct value_case {
	char in[32];
	enum cgroup_mode mode;
	enum cgroup_value_state state;
	uint64_t v;
};

ParameterizedTestParameters(cgroup, parse_value)
{
	static struct value_case cases[] = {
		{"max\n", CGROUP_V2, CGV_UNLIMITED, 0},
		{"max", CGROUP_V1, CGV_UNLIMITED, 0},
		{"33554432\n", CGROUP_V2, CGV_OK, 33554432},
		{"0\n", CGROUP_V1, CGV_OK, 0},
		{"9223372036854771712\n", CGROUP_V1, CGV_UNLIMITED, 0},
		{"9223372036854775807\n", CGROUP_V1, CGV_UNLIMITED, 0},
		{"4611686018427387904\n", CGROUP_V1, CGV_UNLIMITED, 0},
		{"4611686018427387903\n", CGROUP_V1, CGV_OK,
		 4611686018427387903ull},
		{"9223372036854771712\n", CGROUP_V2, CGV_OK,
		 9223372036854771712ull},
		{"18446744073709551615", CGROUP_V2, CGV_OK, UINT64_MAX},
		{"18446744073709551616\n", CGROUP_V2, CGV_BAD, 0},
		{"", CGROUP_V2, CGV_BAD, 0},
		{"\n", CGROUP_V1, CGV_BAD, 0},
		{"lots\n", CGROUP_V1, CGV_BAD, 0},
		{"-1\n", CGROUP_V2, CGV_BAD, 0},
		{"12 34\n", CGROUP_V2, CGV_BAD, 0},
		{" 12\n", CGROUP_V2, CGV_BAD, 0},
		{"maximum\n", CGROUP_V2, CGV_BAD, 0},
		{"0x10\n", CGROUP_V2, CGV_BAD, 0},
	};
	return cr_make_param_array(struct value_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct value_case *c, cgroup, parse_value)
{
	struct cgroup_value v = {.state = CGV_ABSENT, .v = 777};

	cgroup_parse_value(c->in, strlen(c->in), c->mode, &v);
	cr_assert_eq(v.state, c->state, "input '%s' mode %d: state %d", c->in,
		     c->mode, v.state);
	cr_assert_eq(v.v, c->state == CGV_OK ? c->v : 0, "input '%s'", c->in);
}

/* --- paths --------------------------------------------------------------- */

struct within_case {
	char path[32];
	char subtree[32];
	bool within;
};

ParameterizedTestParameters(cgroup, path_within)
{
	static struct within_case cases[] = {
		{"/a", "/a", true},	{"/a/b", "/a", true},
		{"/a/b/c", "/a", true}, {"/ab", "/a", false},
		{"/a", "/a/b", false},	{"/b", "/a", false},
		{"/a/b", "/a/", true},	{"/anything", "/", true},
		{"/", "/", true},	{"/", "/a", false},
		{"", "/a", false},	{"/a-b", "/a", false},
	};
	return cr_make_param_array(struct within_case, cases,
				   ARRAY_SIZE(cases));
}

ParameterizedTest(struct within_case *c, cgroup, path_within)
{
	cr_assert_eq(cgroup_path_within(c->path, c->subtree), c->within,
		     "'%s' within '%s'", c->path, c->subtree);
}

/* --- detection ----------------------------------------------------------- */

struct detect_case {
	char root[64];
	int ret;
	enum cgroup_mode mode;
};

ParameterizedTestParameters(cgroup, detect)
{
	static struct detect_case cases[] = {
		{FIX "v1-6.18/root", 0, CGROUP_V1},
		{FIX "v2-6.1-single/root", 0, CGROUP_V2},
		{FIX "v2-synthetic/root", 0, CGROUP_V2},
		{FIX "v2-hybrid-unified/root", 0, CGROUP_V2},
		{FIX "none/root", -ENOENT, CGROUP_NONE},
		{FIX "none/root/sys/fs/cgroup/cpu", -ENOENT, CGROUP_NONE},
	};
	return cr_make_param_array(struct detect_case, cases,
				   ARRAY_SIZE(cases));
}

ParameterizedTest(struct detect_case *c, cgroup, detect)
{
	struct host hh;
	struct cgroup_fs f = {.mode = 99, .mem_fd = -7};

	cr_assert_eq(host_open(c->root, &hh), 0);
	cr_assert_eq(cgroup_fs_open(&hh, &f), c->ret, "%s", c->root);
	if (c->ret == 0) {
		cr_assert_eq(f.mode, c->mode, "%s", c->root);
		cr_assert_geq(f.mem_fd, 0);
		cgroup_fs_close(&f);
		cr_assert_eq(f.mem_fd, -1);
	} else {
		cr_assert_eq(f.mem_fd, -7, "ret untouched on failure");
	}
	host_close(&hh);
}

/* --- readers on fixtures -------------------------------------------------- */

/* cppcheck-suppress unknownMacro */
Test(cgroup, read_state_v1_after_kill, .fini = close_case)
{
	struct cgroup_state s = {0};
	uint64_t v = 0;

	open_case(FIX "v1-6.18/root");
	cr_assert_eq(cgroup_read_state(&fs, V1, &s), 0);
	cr_assert_eq(s.usage.state, CGV_OK);
	cr_assert_eq(s.usage.v, 131072);
	cr_assert_eq(s.limit.state, CGV_OK);
	cr_assert_eq(s.limit.v, 32u << 20);
	cr_assert_eq(s.peak.v, 32u << 20);
	cr_assert_eq(s.failcnt.state, CGV_OK);
	cr_assert_eq(s.failcnt.v, 80);
	cr_assert_eq(s.swap.state, CGV_OK);
	cr_assert_eq(s.swap.v, 0);
	cr_assert(s.events.has_oom_kill);
	cr_assert_eq(s.events.oom_kill, 1);
	cr_assert_not(s.events.under_oom);
	cr_assert_not(s.has_events_local);
	cr_assert(cgroup_stat_get(&s.stat, "hierarchical_memory_limit", &v));
	cr_assert_eq(v, 32u << 20);
	cr_assert(cgroup_stat_get(&s.stat, "pgpgin", &v));
	cr_assert_eq(v, 10240);
	cgroup_state_release(&s);
}

Test(cgroup, read_state_v1_running_and_root, .fini = close_case)
{
	struct cgroup_state s = {0};
	uint64_t v = 0;

	open_case(FIX "v1-6.18/root");
	cr_assert_eq(cgroup_read_state(&fs, "/oomlens-test/running", &s), 0);
	cr_assert_eq(s.usage.v, 8601600);
	cr_assert_eq(s.events.oom_kill, 0);
	cr_assert(cgroup_stat_get(&s.stat, "rss", &v));
	cr_assert_eq(v, 8519680);
	cgroup_state_release(&s);
	cr_assert_eq(cgroup_read_state(&fs, "/", &s), 0);
	cr_assert_eq(s.limit.state, CGV_UNLIMITED, "9223372036854771712");
	cr_assert_eq(s.limit.v, 0);
	cgroup_state_release(&s);
}

Test(cgroup, read_state_v2_pod_and_container, .fini = close_case)
{
	struct cgroup_state s = {0};

	open_case(FIX "v2-6.1-pod-ctr/root");
	cr_assert_eq(cgroup_read_state(&fs, POD, &s), 0);
	cr_assert_eq(s.limit.state, CGV_OK);
	cr_assert_eq(s.limit.v, 32u << 20);
	cr_assert_eq(s.usage.v, 126976);
	cr_assert_eq(s.failcnt.state, CGV_ABSENT, "no failcnt on v2");
	cr_assert_eq(s.events.oom, 1);
	cr_assert_eq(s.events.oom_kill, 1, "hierarchical");
	cr_assert(s.has_events_local);
	cr_assert_eq(s.events_local.oom, 1);
	cr_assert_eq(s.events_local.oom_kill, 0, "the kill is not the pod's");
	cgroup_state_release(&s);

	cr_assert_eq(cgroup_read_state(&fs, CTR, &s), 0);
	cr_assert_eq(s.limit.state, CGV_UNLIMITED);
	cr_assert_eq(s.peak.v, 33710080);
	cr_assert_eq(s.swap.state, CGV_OK);
	cr_assert_eq(s.events.oom, 0);
	cr_assert_eq(s.events_local.oom_kill, 1);
	cr_assert_not(s.oom_group);
	cr_assert_gt(s.stat.n, 20);
	cgroup_state_release(&s);
}

Test(cgroup, read_state_v2_oom_group, .fini = close_case)
{
	struct cgroup_state s = {0};

	open_case(FIX "v2-6.1-oomgroup/root");
	cr_assert_eq(cgroup_read_state(&fs, "/demo", &s), 0);
	cr_assert(s.oom_group);
	cr_assert_eq(s.events.oom_kill, 4);
	cr_assert_eq(s.events.oom_group_kill, 1);
	cgroup_state_release(&s);
}

/* One file of a cgroup by its path: the real capture's memory.oom.group
 * and its empty cgroup.procs (the group killed), -ENOENT for a missing
 * file or cgroup, -EINVAL for a path that climbs out. */
Test(cgroup, read_file_of_a_cgroup, .fini = close_case)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	open_case(FIX "v2-6.1-oomgroup/root");
	strbuf_init(&sb, 4096);
	cr_assert_eq(
		cgroup_read_file(&fs, "/demo", "memory.oom.group", 16, &sb), 0);
	cr_assert_str_eq(sb.buf, "1\n");
	strbuf_reset(&sb);
	cr_assert_eq(cgroup_read_file(&fs, "/demo", "cgroup.procs", 4095, &sb),
		     0);
	cr_assert_eq(sb.len, 0);
	cr_assert_eq(cgroup_read_file(&fs, "/demo", "memory.nope", 16, &sb),
		     -ENOENT);
	cr_assert_eq(cgroup_read_file(&fs, "/gone", "cgroup.procs", 16, &sb),
		     -ENOENT);
	cr_assert_eq(cgroup_read_file(&fs, "/demo/..", "cgroup.procs", 16, &sb),
		     -EINVAL);
}

Test(cgroup, read_state_keeps_absent_and_bad_apart, .fini = close_case)
{
	struct cgroup_state s = {0};

	open_case(FIX "v1-damaged/root");
	cr_assert_eq(cgroup_read_state(&fs, "/bad", &s), 0);
	cr_assert_eq(s.limit.state, CGV_BAD, "'lots'");
	cr_assert_eq(s.usage.state, CGV_BAD, "empty file");
	cr_assert_eq(s.peak.state, CGV_ABSENT, "no max_usage file");
	cr_assert_eq(s.failcnt.state, CGV_BAD, "overflow");
	cr_assert_eq(s.swap.state, CGV_BAD, "memsw without usage");
	cr_assert_not(s.events.has_oom_kill, "oom_control unparsable");
	cr_assert_eq(s.stat.n, 0, "memory.stat unparsable");
	cgroup_state_release(&s);
}

Test(cgroup, read_gone_and_hostile_paths, .fini = close_case)
{
	struct cgroup_state s = {.oom_group = true};
	struct cgroup_events ev = {.oom_kill = 777};

	open_case(FIX "v1-6.18/root");
	cr_assert_eq(cgroup_read_state(&fs, "/nope", &s), -ENOENT);
	cr_assert_eq(cgroup_read_events(&fs, "/nope", &ev), -ENOENT);
	cr_assert_eq(cgroup_read_state(&fs, "/oomlens-test/../..", &s),
		     -EINVAL);
	cr_assert_eq(cgroup_read_state(&fs, "oomlens-test", &s), -EINVAL);
	cr_assert_eq(cgroup_read_state(&fs, "//oomlens-test", &s), -EINVAL);
	cr_assert_eq(cgroup_read_state(&fs, "/memory.stat", &s), -ENOTDIR);
	cr_assert(s.oom_group, "ret untouched on failure");
	cr_assert_eq(ev.oom_kill, 777);
	cr_assert_eq(cgroup_read_events(&fs, V1 "/", &ev), 0);
	cr_assert_eq(ev.oom_kill, 1);
}

struct dump_seen {
	char names[32][40];
	size_t n;
	size_t stat_len;
	int fail_at;
};

static int dump_cb(const char *name, const char *data, size_t len, void *ud)
{
	struct dump_seen *d = ud;

	(void)data;
	if (d->fail_at && (int)d->n + 1 == d->fail_at)
		return -ENOSPC;
	if (streq(name, "memory.stat"))
		d->stat_len = len;
	strlcpy_safe(d->names[d->n++], name, sizeof(d->names[0]));
	return 0;
}

static bool seen(const struct dump_seen *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (streq(d->names[i], name))
			return true;
	return false;
}

Test(cgroup, dump_files_v1_and_v2, .fini = close_case)
{
	struct dump_seen d = {0};

	open_case(FIX "v1-6.18/root");
	cr_assert_eq(cgroup_dump_files(&fs, V1, dump_cb, &d), (int)d.n);
	cr_assert(seen(&d, "memory.stat") && seen(&d, "memory.oom_control"));
	cr_assert(seen(&d, "memory.failcnt") && seen(&d, "cgroup.procs"));
	cr_assert_not(seen(&d, "memory.events"));
	cr_assert_eq(d.stat_len, 734, "the whole file (734 bytes)");
	close_case();

	memset(&d, 0, sizeof(d));
	open_case(FIX "v2-6.1-pod-ctr/root");
	cr_assert_eq(cgroup_dump_files(&fs, CTR, dump_cb, &d), (int)d.n);
	cr_assert(seen(&d, "memory.events") && seen(&d, "memory.events.local"));
	cr_assert(seen(&d, "memory.max") && seen(&d, "memory.peak"));
	cr_assert_not(seen(&d, "memory.oom_control"));
	memset(&d, 0, sizeof(d));
	d.fail_at = 2;
	cr_assert_eq(cgroup_dump_files(&fs, CTR, dump_cb, &d), -ENOSPC,
		     "the callback's error stops the dump");
	cr_assert_eq(cgroup_dump_files(&fs, "/gone", dump_cb, &d), -ENOENT);
}

/* --- the v2 watcher on a writable copy of a fixture tree ------------------ */

struct got {
	enum cgroup_event_type type[32];
	char path[32][128];
	uint64_t oom_kill[32], delta[32];
	size_t n;
};

static void on_event(const struct cgroup_event *ev, void *ud)
{
	struct got *g = ud;

	if (g->n == ARRAY_SIZE(g->type))
		return;
	g->type[g->n] = ev->type;
	strlcpy_safe(g->path[g->n], ev->path, sizeof(g->path[0]));
	g->oom_kill[g->n] = ev->oom_kill;
	g->delta[g->n++] = ev->oom_kill_delta;
	cr_assert_gt(ev->mono_us, 0);
}

/* Waits for the watcher's fd and dispatches until want events arrived. */
static void pump(struct cgroup_watch *w, struct got *g, size_t want)
{
	for (int i = 0; i < 20 && g->n < want; i++) {
		struct pollfd p = {.fd = cgroup_watch_fd(w), .events = POLLIN};

		if (poll(&p, 1, 100) > 0)
			cr_assert_geq(cgroup_watch_dispatch(w, on_event, g), 0);
	}
}

static ssize_t find_ev(const struct got *g, enum cgroup_event_type t,
		       const char *path)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->type[i] == t && streq(g->path[i], path))
			return (ssize_t)i;
	return -1;
}

static char tmp[64];

static void copy_fixture(void)
{
	char cmd[256];

	strlcpy_safe(tmp, "/tmp/oomlens-test-cgroup-XXXXXX", sizeof(tmp));
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(cmd, sizeof(cmd), "cp -a %s %s/", FIX "v2-6.1-pod-ctr/root",
		 tmp);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/root", tmp);
	open_case(cmd);
}

static void remove_copy(void)
{
	char cmd[128];

	close_case();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (tmp[0])
		cr_assert_eq(system(cmd), 0);
}

static void write_at(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/root/sys/fs/cgroup%s", tmp, rel);
	f = fopen(p, "r+"); /* in place: IN_MODIFY, as the kernel does */
	if (!f)
		f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static const char ev_local_2[] =
	"low 0\nhigh 0\nmax 0\noom 0\noom_kill 2\noom_group_kill 0\n";

Test(cgroup_watch, v2_oom_kill_growth_is_reported_once, .init = copy_fixture,
     .fini = remove_copy)
{
	struct cgroup_watch *w = NULL;
	struct got g = {0};

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, POD), 0);
	cr_assert_eq(cgroup_watch_count(w), 3, "pod, pod/ctr, pod/pause");
	cr_assert_eq(cgroup_watch_add_tree(w, CTR "/"), 0);
	cr_assert_eq(cgroup_watch_count(w), 3, "no cgroup watched twice");
	cr_assert_eq(cgroup_watch_dispatch(w, on_event, &g), 0);

	write_at(CTR "/memory.events.local", ev_local_2);
	pump(w, &g, 1);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.type[0], CGE_OOM);
	cr_assert_str_eq(g.path[0], CTR);
	cr_assert_eq(g.oom_kill[0], 2);
	cr_assert_eq(g.delta[0], 1, "the fixture already counted 1");

	/* The pod's hierarchical memory.events changes too: no event, the
	 * kill is the container's (events.local is what is watched). */
	write_at(POD "/memory.events",
		 "low 0\nhigh 0\nmax 40\noom 2\noom_kill 2\n");
	write_at(CTR "/memory.events.local", ev_local_2);
	pump(w, &g, 2);
	cr_assert_eq(g.n, 1, "same count again: nothing new");
	cgroup_watch_free(w);
}

Test(cgroup_watch, v2_nested_cgroups_added_later_and_removed,
     .init = copy_fixture, .fini = remove_copy)
{
	struct cgroup_watch *w = NULL;
	struct got g = {0};
	char cmd[256];
	ssize_t i;

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, POD), 0);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/root/sys/fs/cgroup/pod/new/a/b/c", tmp);
	cr_assert_eq(system(cmd), 0);
	pump(w, &g, 4);
	cr_assert_eq(g.n, 4, "got %zu events", g.n);
	cr_assert_geq(find_ev(&g, CGE_ADDED, "/pod/new"), 0);
	cr_assert_geq(find_ev(&g, CGE_ADDED, "/pod/new/a/b/c"), 0);
	cr_assert_eq(cgroup_watch_count(w), 7);

	/* A counter file appearing later and growing in the deepest one. */
	write_at("/pod/new/a/b/c/memory.events.local", "oom_kill 0\n");
	cr_assert_geq(cgroup_watch_rescan(w), 0);
	write_at("/pod/new/a/b/c/memory.events.local", "oom_kill 1\n");
	pump(w, &g, 5);
	i = find_ev(&g, CGE_OOM, "/pod/new/a/b/c");
	cr_assert_geq(i, 0);
	cr_assert_eq(g.delta[i], 1);

	g.n = 0;
	snprintf(cmd, sizeof(cmd), "rm -rf %s/root/sys/fs/cgroup/pod/new", tmp);
	cr_assert_eq(system(cmd), 0);
	pump(w, &g, 4);
	cr_assert_geq(find_ev(&g, CGE_REMOVED, "/pod/new"), 0);
	cr_assert_geq(find_ev(&g, CGE_REMOVED, "/pod/new/a/b/c"), 0);
	cr_assert_eq(find_ev(&g, CGE_OOM, "/pod/new"), -1);
	cr_assert_eq(cgroup_watch_count(w), 3);
	cgroup_watch_free(w);
}

Test(cgroup_watch, new_cgroup_with_a_kill_before_its_watch,
     .init = copy_fixture, .fini = remove_copy)
{
	struct cgroup_watch *w = NULL;
	struct got g = {0};
	char cmd[256];
	ssize_t i;

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, POD), 0);
	/* Created and killed in before the watcher looked: still counted. */
	snprintf(cmd, sizeof(cmd), "mkdir %s/root/sys/fs/cgroup/pod/fast", tmp);
	cr_assert_eq(system(cmd), 0);
	write_at("/pod/fast/memory.events.local", "oom 0\noom_kill 1\n");
	pump(w, &g, 2);
	cr_assert_geq(find_ev(&g, CGE_ADDED, "/pod/fast"), 0);
	i = find_ev(&g, CGE_OOM, "/pod/fast");
	cr_assert_geq(i, 0);
	cr_assert_eq(g.delta[i], 1);
	/* The cgroups present at add_tree keep their old kills uncounted. */
	cr_assert_eq(find_ev(&g, CGE_OOM, CTR), -1);
	cgroup_watch_free(w);
}

Test(cgroup_watch, v2_counter_file_appearing_after_mkdir_is_watched,
     .init = copy_fixture, .fini = remove_copy)
{
	struct cgroup_watch *w = NULL;
	struct got g = {0};
	char cmd[256];
	ssize_t i;

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, POD), 0);
	snprintf(cmd, sizeof(cmd), "mkdir %s/root/sys/fs/cgroup/pod/late", tmp);
	cr_assert_eq(system(cmd), 0);
	pump(w, &g, 1);
	cr_assert_geq(find_ev(&g, CGE_ADDED, "/pod/late"), 0);
	/* The parent delegates memory a moment later: the files appear,
	 * with no inotify event for them. No rescan is called here. */
	write_at("/pod/late/memory.events.local", "oom 0\noom_kill 0\n");
	pump(w, &g, 99); /* 2 s: the watcher's re-reads find the file */
	write_at("/pod/late/memory.events.local", "oom 1\noom_kill 1\n");
	pump(w, &g, 2);
	i = find_ev(&g, CGE_OOM, "/pod/late");
	cr_assert_geq(i, 0, "the kill after the late delegation is seen");
	cr_assert_eq(g.delta[i], 1);
	cgroup_watch_free(w);
}

Test(cgroup_watch, v2_root_removed_and_recreated, .init = copy_fixture,
     .fini = remove_copy)
{
	struct cgroup_watch *w = NULL;
	struct got g = {0};
	char cmd[256];

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, CTR), 0);
	cr_assert_eq(cgroup_watch_count(w), 1);
	snprintf(cmd, sizeof(cmd), "mv %s/root/sys/fs/cgroup/pod/ctr %s/old",
		 tmp, tmp);
	cr_assert_eq(system(cmd), 0);
	pump(w, &g, 1);
	cr_assert_geq(find_ev(&g, CGE_REMOVED, CTR), 0);
	cr_assert_eq(cgroup_watch_count(w), 0);
	/* A sibling of the root is not ours. */
	snprintf(cmd, sizeof(cmd), "mkdir %s/root/sys/fs/cgroup/pod/other",
		 tmp);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "mkdir %s/root/sys/fs/cgroup/pod/ctr", tmp);
	cr_assert_eq(system(cmd), 0);
	pump(w, &g, 2);
	cr_assert_geq(find_ev(&g, CGE_ADDED, CTR), 0);
	cr_assert_eq(find_ev(&g, CGE_ADDED, "/pod/other"), -1);
	cr_assert_eq(cgroup_watch_count(w), 1);
	cgroup_watch_free(w);
}

Test(cgroup_watch, rescan_reports_what_inotify_missed, .init = copy_fixture,
     .fini = remove_copy)
{
	struct cgroup_watch *w = NULL;
	struct got g = {0};
	char cmd[384];

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, POD), 0);
	/* Replaced by rename: no IN_MODIFY on the watched inode. */
	snprintf(cmd, sizeof(cmd),
		 "printf 'oom_kill 3\\n' >%s/x && mv %s/x "
		 "%s/root/sys/fs/cgroup/pod/pause/memory.events.local",
		 tmp, tmp, tmp);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(cgroup_watch_rescan(w), 1);
	pump(w, &g, 1);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.type[0], CGE_OOM);
	cr_assert_str_eq(g.path[0], "/pod/pause");
	cr_assert_eq(g.delta[0], 3);
	cr_assert_eq(cgroup_watch_rescan(w), 0, "nothing new");
	cgroup_watch_free(w);
}

Test(cgroup_watch, v2_oom_group_kill_real_before_after, .fini = remove_copy)
{
	static const char *after = FIX
		"v2-6.1-oomgroup/root/sys/fs/cgroup/demo/memory.events.local";
	struct cgroup_watch *w = NULL;
	struct got g = {0};
	char cmd[384];

	strlcpy_safe(tmp, "/tmp/oomlens-test-cgroup-XXXXXX", sizeof(tmp));
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(cmd, sizeof(cmd), "cp -a %s %s/",
		 FIX "v2-6.1-oomgroup-before/root", tmp);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/root", tmp);
	open_case(cmd);
	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, "/demo"), 0);
	/* The kernel's file after the group kill, written over the before
	 * file in place: 3 tasks, oom_kill 4 (the first victim twice). */
	snprintf(cmd, sizeof(cmd),
		 "cat %s >%s/root/sys/fs/cgroup/demo/memory.events.local",
		 after, tmp);
	cr_assert_eq(system(cmd), 0);
	pump(w, &g, 1);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.type[0], CGE_OOM);
	cr_assert_str_eq(g.path[0], "/demo");
	cr_assert_eq(g.oom_kill[0], 4);
	cr_assert_eq(g.delta[0], 4);
	cgroup_watch_free(w);
}

Test(cgroup_watch, symlinks_are_not_followed_and_odd_names_kept,
     .init = copy_fixture, .fini = remove_copy)
{
	static const char odd[] = "/pod/we ird\n\"name\" (x)";
	struct cgroup_watch *w = NULL;
	struct cgroup_state st = {0};
	struct got g = {0};
	char cmd[512];
	int r;

	/* A symlinked cgroup and a symlinked value file in a real one. */
	snprintf(cmd, sizeof(cmd),
		 "cd %s/root/sys/fs/cgroup/pod && ln -s ctr link && "
		 "rm pause/memory.max && ln -s /etc/hostname pause/memory.max",
		 tmp);
	cr_assert_eq(system(cmd), 0);
	r = cgroup_read_state(&fs, "/pod/link", &st);
	cr_assert(r == -ENOTDIR || r == -ELOOP, "symlinked cgroup: %d", r);
	cr_assert_eq(cgroup_read_state(&fs, "/pod/pause", &st), 0);
	cr_assert_eq(st.limit.state, CGV_BAD, "symlinked file not followed");
	cr_assert_eq(st.usage.state, CGV_OK);
	cgroup_state_release(&st);

	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, POD), 0);
	cr_assert_eq(cgroup_watch_count(w), 3, "the symlink is no cgroup");
	snprintf(cmd, sizeof(cmd), "%s/root/sys/fs/cgroup%s", tmp, odd);
	cr_assert_eq(mkdir(cmd, 0755), 0);
	pump(w, &g, 1);
	cr_assert_geq(find_ev(&g, CGE_ADDED, odd), 0);
	cgroup_watch_free(w);
}

Test(cgroup_watch, bad_arguments, .fini = close_case)
{
	struct cgroup_watch *w = NULL;
	struct cgroup_fs none = {.mode = CGROUP_NONE, .mem_fd = -1};

	cr_assert_eq(cgroup_watch_new(&none, &w), -EINVAL);
	cr_assert_null(w);
	open_case(FIX "v2-6.1-pod-ctr/root");
	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, "/nope"), -ENOENT);
	cr_assert_eq(cgroup_watch_add_tree(w, "/pod/../pod"), -EINVAL);
	cr_assert_eq(cgroup_watch_add_tree(w, "pod"), -EINVAL);
	cr_assert_eq(cgroup_watch_count(w), 0);
	cgroup_watch_free(w);
	cgroup_watch_free(NULL);
}

Test(cgroup, parse_procs_appends_a_set_within_max)
{
	static const char procs[] = "12\n7\ngarbage\n0\n12\n99999999999\n30";
	int pids[4] = {7};
	size_t n = 1;

	cr_assert_eq(cgroup_parse_procs(procs, sizeof(procs) - 1, pids, &n, 4),
		     2);
	cr_assert_eq(n, 3);
	cr_assert_eq(pids[0], 7);
	cr_assert_eq(pids[1], 12);
	cr_assert_eq(pids[2], 30, "the last line needs no newline");
	n = 0;
	cr_assert_eq(cgroup_parse_procs(procs, sizeof(procs) - 1, pids, &n, 1),
		     1);
	cr_assert_eq(pids[0], 12);
	cr_assert_eq(cgroup_parse_procs("", 0, pids, &n, 4), 0);
}
