/* SPDX-License-Identifier: Apache-2.0 */
/* LIVE: the cgroup watcher against this host's real memory controller:
 * v1 here (/sys/fs/cgroup/memory/oomlens-test-cgroup-<pid>), v2 when
 * tests/vm/test_vm_cgroup.py runs it in the qemu guest. OOM-kills real
 * processes and checks the notifications. Needs root and a memory
 * controller (skips with the reason otherwise); always removes its
 * cgroups. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kernel/cgroup.h"
#include "base/host.h"
#include "base/parse.h"
#include "base/util.h"

/* The memory hierarchy: /sys/fs/cgroup/memory (v1) or /sys/fs/cgroup (v2,
 * run in the qemu guest by tests/vm/test_vm_cgroup.py). */
static const char *mem = "/sys/fs/cgroup/memory";
#define LIMIT (32u << 20)

static struct host h = {.root_fd = -1, .proc_fd = -1, .cgroup_fd = -1};
static struct cgroup_fs fs = {.mem_fd = -1};
static struct cgroup_watch *w;
static char top[64]; /* "/oomlens-test-cgroup-<n>" */

struct got {
	enum cgroup_event_type type[64];
	char path[64][128];
	uint64_t delta[64], mono[64], since[64];
	size_t n;
};

static void on_event(const struct cgroup_event *ev, void *ud)
{
	struct got *g = ud;

	if (g->n == ARRAY_SIZE(g->type))
		return;
	g->type[g->n] = ev->type;
	strlcpy_safe(g->path[g->n], ev->path, sizeof(g->path[0]));
	g->delta[g->n] = ev->oom_kill_delta;
	g->since[g->n] = ev->since_us;
	g->mono[g->n++] = ev->mono_us;
}

static uint64_t kills(const struct got *g, const char *path)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < g->n; i++)
		if (g->type[i] == CGE_OOM && streq(g->path[i], path))
			sum += g->delta[i];
	return sum;
}

static ssize_t find_ev(const struct got *g, enum cgroup_event_type t,
		       const char *path)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->type[i] == t && streq(g->path[i], path))
			return (ssize_t)i;
	return -1;
}

/* Dispatches for up to ms, or until done(g) holds. */
static void pump(struct got *g, int ms, bool (*done)(const struct got *g))
{
	uint64_t end = now_monotonic_us() + (uint64_t)ms * 1000;

	while (now_monotonic_us() < end && !(done && done(g))) {
		struct pollfd p = {.fd = cgroup_watch_fd(w), .events = POLLIN};

		if (poll(&p, 1, 20) > 0)
			cr_assert_geq(cgroup_watch_dispatch(w, on_event, g), 0);
	}
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s), "write %s",
		     path);
	close(fd);
}

static void mkcg(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s%s", mem, rel);
	cr_assert_eq(mkdir(p, 0755), 0, "mkdir %s: %s", p, strerror(errno));
}

/* Kills every task left in the cgroup at abs and removes it, children
 * first. Best effort: runs in .fini even after a failed assertion. */
static void remove_cg(const char *abs)
{
	char p[512];
	FILE *f;
	int pid;

	snprintf(p, sizeof(p), "find %s -mindepth 1 -depth -type d 2>/dev/null",
		 abs);
	f = popen(p, "r");
	while (f && fgets(p, sizeof(p), f)) {
		p[strcspn(p, "\n")] = '\0';
		remove_cg(p);
	}
	if (f)
		pclose(f);
	for (int tries = 0; tries < 50; tries++) {
		snprintf(p, sizeof(p), "%s/cgroup.procs", abs);
		f = fopen(p, "r");
		if (!f)
			return; /* gone */
		while (fgets(p, sizeof(p), f)) {
			p[strcspn(p, "\n")] = '\0';
			if (parse_int(p, &pid) == 0 && pid > 0)
				kill(pid, SIGKILL);
		}
		fclose(f);
		if (rmdir(abs) == 0 || errno == ENOENT)
			return;
		usleep(20000);
	}
}

/* Finds the memory controller; skips with the reason when there is none. */
static void open_host(void)
{
	int r;

	if (geteuid() != 0)
		cr_skip_test("needs root to create memory cgroups");
	cr_assert_eq(host_open("/", &h), 0);
	r = cgroup_fs_open(&h, &fs);
	if (r < 0)
		cr_skip_test("no memory cgroup controller on this host");
	if (fs.mode == CGROUP_V2) {
		mem = "/sys/fs/cgroup";
		if (access("/sys/fs/cgroup/memory.stat", F_OK) != 0)
			cr_skip_test("cgroup v2 without memory in the root's "
				     "subtree_control");
	} else if (access("/sys/fs/cgroup/memory/memory.oom_control", F_OK)) {
		cr_skip_test(
			"v1 memory controller not at /sys/fs/cgroup/memory");
	}
}

static void setup(void)
{
	char p[256];
	char lim[32];

	open_host();
	snprintf(top, sizeof(top), "/oomlens-test-cgroup-%d", (int)getpid());
	snprintf(p, sizeof(p), "%s%s", mem, top);
	remove_cg(p);
	mkcg(top);
	snprintf(p, sizeof(p), "%s%s/%s", mem, top,
		 fs.mode == CGROUP_V1 ? "memory.limit_in_bytes" : "memory.max");
	snprintf(lim, sizeof(lim), "%u", LIMIT);
	write_str(p, lim);
	cr_assert_eq(cgroup_watch_new(&fs, &w), 0);
	cr_assert_eq(cgroup_watch_add_tree(w, top), 0);
}

/* v2: children get memory files only when the parent delegates memory
 * (which it can only while it has no processes of its own). */
static void delegate(const char *rel)
{
	char p[512];

	if (fs.mode != CGROUP_V2)
		return;
	snprintf(p, sizeof(p), "%s%s/cgroup.subtree_control", mem, rel);
	write_str(p, "+memory");
}

static void teardown(void)
{
	char p[256];

	cgroup_watch_free(w);
	w = NULL;
	cgroup_fs_close(&fs);
	host_close(&h);
	if (top[0]) {
		snprintf(p, sizeof(p), "%s%s", mem, top);
		remove_cg(p);
	}
}

/* A child that joins the cgroup at rel and touches 64 MiB (twice the
 * limit): the kernel OOM-kills it. Returns its wait status. */
static int run_victim(const char *rel)
{
	char p[256];
	int status;
	pid_t pid;

	snprintf(p, sizeof(p), "%s%s/cgroup.procs", mem, rel);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(p, O_WRONLY);

		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(3);
		close(fd);
		for (int i = 0; i < 64; i++) {
			char *m = malloc(1 << 20);

			if (!m)
				_exit(4);
			memset(m, 1, 1 << 20);
		}
		_exit(5); /* not killed: the limit did not hold */
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static char want[256];

static bool one_kill(const struct got *g)
{
	return kills(g, want) >= 1;
}

/* cppcheck-suppress unknownMacro */
Test(cgroup_live, oom_kill_is_notified_with_delta_1, .init = setup,
     .fini = teardown, .timeout = 30)
{
	struct got g = {0};
	uint64_t t0 = now_monotonic_us();
	int st;

	st = run_victim(top);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
		  "victim not OOM-killed (status 0x%x)", st);
	strlcpy_safe(want, top, sizeof(want));
	pump(&g, 3000, one_kill);
	cr_assert_geq(find_ev(&g, CGE_OOM, top), 0, "no CGE_OOM for %s", top);
	cr_log_info("first CGE_OOM: delta %" PRIu64 ", %" PRIu64
		    " us after the victim started",
		    g.delta[0], g.mono[0] - t0);
	cr_assert_eq(kills(&g, top), 1, "sum of deltas");
	/* No more: the late re-reads must not count the kill twice. */
	pump(&g, 1200, NULL);
	cr_assert_eq(kills(&g, top), 1, "counted once");
	cr_assert_eq(find_ev(&g, CGE_REMOVED, top), -1);
}

/* The agent re-reads every counter when the kernel prints a kill without
 * its cgroup: growth is queued, and each read bounds the next kill. */
Test(cgroup_live, recount_finds_the_kill_and_bounds_the_next, .init = setup,
     .fini = teardown, .timeout = 30)
{
	struct got g = {0};
	uint64_t t0 = now_monotonic_us(), t1, t2, t3;
	ssize_t i;
	int st;

	st = run_victim(top);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	t1 = now_monotonic_us();
	cr_assert_eq(cgroup_watch_recount(w), 1, "the kill, counted once");
	cr_assert_eq(cgroup_watch_recount(w), 0, "nothing new");
	cr_assert_geq(cgroup_watch_dispatch(w, on_event, &g), 1);
	t2 = now_monotonic_us(); /* the last read before the next kill */
	i = find_ev(&g, CGE_OOM, top);
	cr_assert_geq(i, 0);
	cr_assert_eq(g.delta[i], 1);
	/* counted after the read at setup, before the recount */
	cr_assert_lt(g.since[i], t0);
	cr_assert_gt(g.since[i], 0);
	cr_assert_geq(g.mono[i], t1);
	st = run_victim(top);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	t3 = now_monotonic_us();
	cr_assert_eq(cgroup_watch_recount(w), 1);
	memset(&g, 0, sizeof(g));
	cr_assert_geq(cgroup_watch_dispatch(w, on_event, &g), 1);
	i = find_ev(&g, CGE_OOM, top);
	cr_assert_geq(i, 0);
	/* since: a read that found nothing new, between t1 and t2 */
	cr_assert(g.since[i] >= t1 && g.since[i] <= t2,
		  "since %" PRIu64 " not in [%" PRIu64 ", %" PRIu64 "]",
		  g.since[i], t1, t2);
	cr_assert_geq(g.mono[i], t3);
	cr_assert_eq(kills(&g, top), 1);
}

Test(cgroup_live, three_kills_in_a_row_count_three, .init = setup,
     .fini = teardown, .timeout = 30)
{
	struct got g = {0};

	for (int i = 0; i < 3; i++) {
		int st = run_victim(top);

		cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	pump(&g, 1500, NULL);
	cr_assert_eq(kills(&g, top), 3);
}

Test(cgroup_live, nested_cgroups_created_later_are_watched, .init = setup,
     .fini = teardown, .timeout = 30)
{
	struct got g = {0};
	char a[128], c[128];
	int st;

	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(c, sizeof(c), "%s/a/b/c", top);
	delegate(top);
	mkcg(a);
	delegate(a);
	snprintf(want, sizeof(want), "%s/a/b", top);
	mkcg(want);
	delegate(want);
	mkcg(c);
	pump(&g, 500, NULL);
	cr_assert_geq(find_ev(&g, CGE_ADDED, a), 0);
	cr_assert_geq(find_ev(&g, CGE_ADDED, want), 0);
	cr_assert_geq(find_ev(&g, CGE_ADDED, c), 0);
	cr_assert_eq(cgroup_watch_count(w), 4);

	/* The kill is counted where the victim ran, not where the limit is. */
	st = run_victim(c);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	strlcpy_safe(want, c, sizeof(want));
	pump(&g, 3000, one_kill);
	pump(&g, 300, NULL);
	cr_assert_eq(kills(&g, c), 1);
	cr_assert_eq(kills(&g, top), 0, "the limit holder killed nothing");
	cr_assert_eq(kills(&g, a), 0);
}

Test(cgroup_live, kill_in_a_cgroup_delegated_after_its_mkdir, .init = setup,
     .fini = teardown, .timeout = 30)
{
	struct got g = {0};
	int st;

	/* v2: the child has no memory files until the parent delegates
	 * memory, and kernfs reports no inotify event when they appear. */
	snprintf(want, sizeof(want), "%s/late", top);
	mkcg(want);
	pump(&g, 300, NULL);
	cr_assert_geq(find_ev(&g, CGE_ADDED, want), 0);
	delegate(top);
	st = run_victim(want);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	pump(&g, 3000, one_kill);
	cr_assert_eq(kills(&g, want), 1);
}

Test(cgroup_live, rmdir_is_removed_not_oom, .init = setup, .fini = teardown,
     .timeout = 30)
{
	struct got g = {0};
	char child[128], abs[256];

	snprintf(child, sizeof(child), "%s/gone", top);
	delegate(top);
	mkcg(child);
	pump(&g, 300, NULL);
	cr_assert_geq(find_ev(&g, CGE_ADDED, child), 0);
	g.n = 0;
	snprintf(abs, sizeof(abs), "%s%s", mem, child);
	cr_assert_eq(rmdir(abs), 0);
	pump(&g, 500, NULL);
	cr_assert_geq(find_ev(&g, CGE_REMOVED, child), 0);
	cr_assert_eq(find_ev(&g, CGE_OOM, child), -1,
		     "the eventfd's rmdir signal is not an OOM");
	cr_assert_eq(cgroup_watch_count(w), 1);

	/* The watched root itself: seen from its parent (and its eventfd). */
	g.n = 0;
	snprintf(abs, sizeof(abs), "%s%s", mem, top);
	cr_assert_eq(rmdir(abs), 0);
	pump(&g, 500, NULL);
	cr_assert_geq(find_ev(&g, CGE_REMOVED, top), 0);
	cr_assert_eq(find_ev(&g, CGE_OOM, top), -1);
	cr_assert_eq(cgroup_watch_count(w), 0);
}
