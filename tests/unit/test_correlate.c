/* SPDX-License-Identifier: Apache-2.0 */
/* The kill correlator replayed on event sequences: each case is what the
 * agent's loop reads, in the order it reads it (notifications, kernel
 * reports, ticks), with the CLOCK_MONOTONIC stamps of its reads; and the
 * decisions it must come to, in order. The cases are those the real-kill
 * tests (tests/integration/test_agent_kills.py) and their history found:
 * rate-limited bursts, a late (starved) agent, kills counted while away, a
 * report read before its notification, the v1 eventfd firing before the
 * count moves, /proc's "/" for an exiting task on v1. Times are in ms. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "detector/correlate.h"

/* ms in a case → CLOCK_MONOTONIC µs (far from 0: windows reach back) */
#define T(ms) (1000000000ull + (uint64_t)(ms)*1000)

enum op {
	NOTE, /* a notification (delta 0: the v1 eventfd before the count) */
	AWAY, /* a count grown while the agent was away (read at start) */
	FULL, /* a full kernel report: it names its cgroup */
	BARE, /* a rate-limited "Killed process" line */
	TICK,
};

struct step {
	enum op op;
	unsigned t;	   /* ms: when read (NOTE, AWAY: the count's read) */
	const char *path;  /* NOTE, AWAY: the cgroup; FULL: task_memcg */
	unsigned since;	   /* NOTE: the read before (0: none) */
	unsigned delta;	   /* NOTE, AWAY */
	int pids[3];	   /* NOTE: tasks listed; FULL, BARE: the victim */
	unsigned limit_mb; /* NOTE, AWAY: limit read then (0: no state) */
	unsigned anon_mb;  /* FULL, BARE: the victim's anon RSS */
	unsigned shmem_mb; /* FULL, BARE */
	unsigned file_mb;  /* FULL, BARE */
	unsigned kill;	   /* FULL, BARE: the kill (0: clock unknown) */
	const char *proc;  /* BARE: /proc's cgroup (NULL: not read) */
	bool proc_exiting; /* BARE: status shows no memory */
	const char *proc_comm; /* BARE: status Name (NULL: "hog") */
	const char *oom_memcg; /* FULL (NULL: task_memcg) */
	bool group;	       /* FULL: memory.oom.group, a victim per pid */
	unsigned repeated;     /* FULL group: kill lines naming one again */
};

struct want {
	int pid; /* 0: a kill with no report */
	const char *cgroup;
	enum corr_outcome outcome;
	enum corr_how how;
	enum corr_confidence conf;
	unsigned state_mb; /* limit read at notification, 0: none */
	unsigned kills;	   /* the kills it stands for (0: 1) */
	unsigned since_ms; /* CORR_COUNTED: after the cgroup's bundle */
};

#define MAX_STEPS 16
#define MAX_WANT 8
/* CORR_COUNTED's since_ms when no bundle is remembered */
#define NONE_MS 0xffffffffu

struct scenario {
	const char *name;
	struct step steps[MAX_STEPS];
	struct want want[MAX_WANT];
};

/* Positional tables: the fields left out are 0. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
/* clang-format off */
static const struct scenario scenarios[] = {
{ "full report claims its notification and its state",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {FULL, 101, "/w/app", .pids = {500}, .anon_mb = 15, .kill = 99},
    {TICK, 3000} },
  { {500, "/w/app", CORR_CAPTURE, CORR_KERNEL_REPORT, CORR_HIGH, 16} } },

{ "a report read before its notification answers it (v1 count lags)",
  { {FULL, 100, "/w/app", .pids = {500}, .anon_mb = 15, .kill = 99},
    {NOTE, 137, "/w/app", 60, 1, {0}, 16},
    {TICK, 140}, {TICK, 3000} },
  { {500, "/w/app"} } },

{ "two kills of one cgroup claim its notifications oldest first",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {NOTE, 300, "/w/app", 100, 1, {0}, 32},
    {FULL, 301, "/w/app", .pids = {500}, .kill = 99},
    {FULL, 302, "/w/app", .pids = {501}, .kill = 299},
    {TICK, 3000} },
  { {500, "/w/app", .state_mb = 16}, {501, "/w/app", .state_mb = 32} } },

{ "the limit held by an ancestor: its notification is claimed too",
  { {NOTE, 100, "/w/pod", 50, 1, {0}, 32},
    {NOTE, 102, "/w/pod/ctr", 50, 1, {0}, 0},
    {FULL, 103, "/w/pod/ctr", .pids = {500}, .kill = 99,
     .oom_memcg = "/w/pod"},
    {TICK, 3000} },
  { {500, "/w/pod/ctr"} } },

{ "a notification with no report is a kill of its own after 2 s",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {TICK, 2099}, {TICK, 2100}, {TICK, 5000} },
  { {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16} } },

{ "no report: a second kill 1 s later is decided too, counted not bundled",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {NOTE, 1100, "/w/app", 100, 1, {0}, 24},
    {TICK, 2100}, {TICK, 3100}, {TICK, 9000} },
  { {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16},
    {0, "/w/app", CORR_COUNTED, CORR_NOTIFICATION, CORR_HIGH, 24,
     .since_ms = 1000} } },

{ "no report: a kill just after a bundle is not taken as paid for",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {TICK, 2100},
    {NOTE, 2600, "/w/app", 2500, 1, {0}, 16},
    {TICK, 4600} },
  { {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16},
    {0, "/w/app", CORR_COUNTED, CORR_NOTIFICATION, CORR_HIGH, 16,
     .since_ms = 2500} } },

{ "no report: a count of three is one bundle and two kills counted",
  { {NOTE, 100, "/w/app", 50, 3, {0}, 16},
    {TICK, 2100}, {TICK, 5000} },
  { {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16},
    {0, "/w/app", CORR_COUNTED, CORR_NOTIFICATION, CORR_HIGH, 0,
     .kills = 2} } },

{ "no report: 10 s after the last such bundle, the next is bundled",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {TICK, 2100},
    {NOTE, 12100, "/w/app", 12000, 1, {0}, 16},
    {TICK, 14100} },
  { {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16},
    {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16} } },

{ "no report: each cgroup has its own bundle",
  { {NOTE, 100, "/w/a", 50, 1, {0}, 16},
    {NOTE, 200, "/w/b", 50, 1, {0}, 32},
    {TICK, 2100}, {TICK, 2200} },
  { {0, "/w/a", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16},
    {0, "/w/b", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 32} } },

{ "no report, a pod limit: the pod's count of the kill is claimed",
  { {NOTE, 102, "/w/pod/ctr", 50, 1, {0}, 0},
    {NOTE, 105, "/w/pod", 50, 1, {0}, 32},
    {TICK, 2103}, {TICK, 2200}, {TICK, 5000} },
  { {0, "/w/pod/ctr", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 0} } },

{ "a report after a no-report kill claims its own notification",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {NOTE, 1500, "/w/app", 100, 1, {0}, 32},
    {TICK, 2100},
    {FULL, 2101, "/w/app", .pids = {500}, .kill = 1499},
    {TICK, 5000} },
  { {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, CORR_HIGH, 16},
    {500, "/w/app", CORR_CAPTURE, CORR_KERNEL_REPORT, CORR_HIGH, 32} } },

{ "a memory.oom.group report claims one kill per victim",
  { {NOTE, 100, "/w/app", 50, 3, {0}, 16},
    {FULL, 101, "/w/app", .pids = {500, 501, 502}, .kill = 99,
     .group = true},
    {TICK, 3000}, {TICK, 6000} },
  { {500, "/w/app", CORR_CAPTURE, CORR_KERNEL_REPORT, CORR_HIGH, 16,
     .kills = 3} } },

{ "cgroup v2's oom.group kills the first victim twice and counts it twice",
  { {NOTE, 100, "/w/app", 50, 4, {0}, 16},
    {FULL, 101, "/w/app", .pids = {500, 501, 502}, .kill = 99,
     .group = true, .repeated = 1},
    {TICK, 3000}, {TICK, 12000} },
  { {500, "/w/app", CORR_CAPTURE, CORR_KERNEL_REPORT, CORR_HIGH, 16,
     .kills = 4} } },

{ "a full report outside the watched trees is left out",
  { {FULL, 100, "/other", .pids = {500}, .kill = 99}, {TICK, 3000} },
  { {500, "/other", CORR_UNWATCHED} } },

{ "a kill elsewhere does not claim ours, which expires alone",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {FULL, 101, "/other", .pids = {600}, .kill = 99},
    {TICK, 2100} },
  { {600, "/other", CORR_UNWATCHED},
    {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, .state_mb = 16} } },

{ "bare line: the victim's pid listed at the notification",
  { {NOTE, 100, "/w/app", 50, 1, {500, 501}, 16},
    {BARE, 101, .pids = {500}, .anon_mb = 15, .kill = 99},
    {TICK, 3000} },
  { {500, "/w/app", CORR_CAPTURE, CORR_PID_AT_NOTIFICATION, CORR_HIGH,
     16} } },

{ "v1 eventfd before the count: tasks kept for the counting event",
  { {NOTE, 90, "/w/app", 0, 0, {500}},
    {BARE, 100, .pids = {500}, .anon_mb = 15, .kill = 95},
    {NOTE, 140, "/w/app", 60, 1, {0}, 16},
    {TICK, 141} },
  { {500, "/w/app", CORR_CAPTURE, CORR_PID_AT_NOTIFICATION, CORR_HIGH,
     16} } },

{ "bare line: /proc places the victim, the notification is then paid",
  { {BARE, 100, .pids = {500}, .anon_mb = 15, .kill = 99,
     .proc = "/w/app"},
    {NOTE, 130, "/w/app", 60, 1, {0}, 16},
    {TICK, 131}, {TICK, 3000} },
  { {500, "/w/app", CORR_CAPTURE, CORR_PROC, CORR_HIGH, 0} } },

{ "v1: an exiting task shows / in /proc, never evidence",
  { {BARE, 100, .pids = {500}, .anon_mb = 15, .kill = 95, .proc = "/"},
    {NOTE, 130, "/w/app", 90, 1, {0}, 16},
    {TICK, 131} },
  { {500, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM,
     16} } },

{ "/proc refused: another process took the pid, or it let go its memory",
  { {BARE, 100, .pids = {500}, .kill = 95, .proc = "/other",
     .proc_comm = "bash"},
    {BARE, 200, .pids = {501}, .kill = 195, .proc = "/other",
     .proc_exiting = true},
    {BARE, 300, .pids = {502}, .kill = 295, .proc = "/../elsewhere"},
    {TICK, 1300}, {TICK, 1400}, {TICK, 1500} },
  { {500, "", CORR_UNMATCHED}, {501, "", CORR_UNMATCHED},
    {502, "", CORR_UNMATCHED} } },

{ "/proc in an unwatched cgroup: left out, ours expires alone",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {BARE, 101, .pids = {600}, .kill = 99, .proc = "/other"},
    {TICK, 2100} },
  { {600, "/other", CORR_UNWATCHED},
    {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, .state_mb = 16} } },

{ "counter window: the count lags its line by up to 250 ms",
  { {BARE, 110, .pids = {500}, .kill = 100},
    {NOTE, 400, "/w/app", 350, 1, {0}, 16},
    {TICK, 401} },
  { {500, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM,
     16} } },

{ "counter window: a kill more than 250 ms before the read is not it",
  { {BARE, 110, .pids = {500}, .kill = 99},
    {NOTE, 400, "/w/app", 350, 1, {0}, 16},
    {TICK, 401}, {TICK, 1310}, {TICK, 2400} },
  { {500, "", CORR_UNMATCHED},
    {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, .state_mb = 16} } },

{ "counter window: a kill after the counting read is a later one's",
  { {NOTE, 100, "/w/app", 50, 1, {0}, 16},
    {BARE, 130, .pids = {500}, .kill = 121},
    {TICK, 131},
    {NOTE, 200, "/w/app", 100, 1, {0}, 32},
    {TICK, 201} },
  { {500, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16} } },

{ "the latest lines in the window, up to the kill count, in kernel order",
  { {BARE, 101, .pids = {501}, .kill = 100},
    {BARE, 111, .pids = {502}, .kill = 110},
    {BARE, 121, .pids = {503}, .kill = 120},
    {NOTE, 200, "/w/app", 50, 2, {0}, 16},
    {TICK, 201}, {TICK, 1400} },
  { {502, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {503, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 0},
    {501, "", CORR_UNMATCHED} } },

{ "the victim must fit the limit: anon + shmem, not file pages",
  { {BARE, 101, .pids = {501}, .anon_mb = 40, .kill = 100},
    {BARE, 111, .pids = {502}, .anon_mb = 10, .shmem_mb = 8,
     .file_mb = 100, .kill = 110},
    {NOTE, 200, "/w/app", 50, 2, {0}, 16},
    {TICK, 201}, {TICK, 1400}, {TICK, 2300} },
  { {502, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {501, "", CORR_UNMATCHED},
    {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION} } },

{ "kills counted while away: any time, only when the victim fits",
  { {AWAY, 10, "/w/app", .delta = 2, .limit_mb = 16},
    {BARE, 20, .pids = {501}, .anon_mb = 15, .kill = 1},
    {BARE, 21, .pids = {502}, .anon_mb = 64, .kill = 2},
    {BARE, 22, .pids = {503}, .anon_mb = 12, .kill = 3},
    {TICK, 23}, {TICK, 1300} },
  { {501, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_LOW, 16},
    {503, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_LOW, 0},
    {502, "", CORR_UNMATCHED} } },

{ "kmsg clock unknown: the notification names its latest lines",
  { {BARE, 101, .pids = {501}},
    {NOTE, 600, "/w/app", 500, 1, {0}, 16},
    {TICK, 601} },
  { {501, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_LOW, 16} } },

{ "an ancestor's count of a deeper kill does not name it",
  { {BARE, 101, .pids = {501}, .kill = 100},
    {NOTE, 120, "/w", 50, 1, {0}, 64},
    {NOTE, 125, "/w/app", 50, 1, {0}, 16},
    {TICK, 126}, {TICK, 3000} },
  { {501, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM,
     16} } },

{ "rate-limited kills elsewhere are not taken for ours",
  { {BARE, 101, .pids = {601}, .kill = 100},
    {BARE, 301, .pids = {602}, .kill = 300},
    {BARE, 501, .pids = {500}, .kill = 500},
    {NOTE, 510, "/w/app", 480, 1, {0}, 16},
    {TICK, 511},
    {BARE, 701, .pids = {603}, .kill = 700},
    {TICK, 2000}, {TICK, 3000} },
  { {500, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {601, "", CORR_UNMATCHED}, {602, "", CORR_UNMATCHED},
    {603, "", CORR_UNMATCHED} } },

{ "a next victim listed at a notification does not refuse the kill",
  { {NOTE, 150, "/w/app", 50, 1, {502}, 16},
    {BARE, 160, .pids = {501}, .kill = 100},
    {TICK, 161},
    {BARE, 310, .pids = {502}, .kill = 300},
    {NOTE, 320, "/w/app", 160, 1, {0}, 16},
    {TICK, 321} },
  { {501, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {502, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16} } },

{ "a kill counted before it was printed (its killer preempted) is named",
  { {BARE, 101, .pids = {501}, .kill = 100},
    {NOTE, 200, "/w/app", 50, 2, {0}, 16},
    {BARE, 261, .pids = {502}, .kill = 260},
    {TICK, 262}, {TICK, 3000} },
  { {501, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {502, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_LOW, 0} } },

{ "a line printed after a read is another notification's when in its window",
  { {NOTE, 200, "/w/app", 50, 1, {0}, 16},
    {NOTE, 262, "/w/db", 150, 1, {0}, 32},
    {BARE, 263, .pids = {502}, .kill = 260},
    {TICK, 264}, {TICK, 3000} },
  { {502, "/w/db", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 32},
    {0, "/w/app", CORR_CAPTURE, CORR_NOTIFICATION, .state_mb = 16} } },

{ "a starved agent counts three kills at once and names all of them",
  { {BARE, 305, .pids = {501}, .kill = 100},
    {BARE, 306, .pids = {502}, .kill = 200},
    {BARE, 307, .pids = {503}, .kill = 300},
    {NOTE, 320, "/w/app", 50, 3, {504}, 16},
    {TICK, 321}, {TICK, 3000} },
  { {501, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {502, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 0},
    {503, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 0} } },

{ "a rate-limited burst: full reports, then bare lines, each once",
  { {NOTE, 100, "/w/app", 50, 1, {501}, 16},
    {FULL, 101, "/w/app", .pids = {501}, .kill = 99},
    {NOTE, 200, "/w/app", 100, 1, {502}, 16},
    {BARE, 201, .pids = {502}, .kill = 199},
    {BARE, 300, .pids = {503}, .kill = 299},
    {NOTE, 310, "/w/app", 200, 1, {0}, 16},
    {TICK, 311},
    {NOTE, 400, "/w/app", 310, 1, {504}, 16},
    {BARE, 401, .pids = {504}, .kill = 399},
    {TICK, 3000} },
  { {501, "/w/app", .state_mb = 16},
    {502, "/w/app", CORR_CAPTURE, CORR_PID_AT_NOTIFICATION, CORR_HIGH, 16},
    {503, "/w/app", CORR_CAPTURE, CORR_COUNTER_WINDOW, CORR_MEDIUM, 16},
    {504, "/w/app", CORR_CAPTURE, CORR_PID_AT_NOTIFICATION, CORR_HIGH,
     16} } },
};
/* clang-format on */

/* The parameter is an index: Criterion copies parameters into a process
 * of its own, where the table's string pointers would not hold. */
ParameterizedTestParameters(correlate, replay)
{
	static size_t idx[ARRAY_SIZE(scenarios)];

	for (size_t i = 0; i < ARRAY_SIZE(idx); i++)
		idx[i] = i;
	return cr_make_param_array(size_t, idx, ARRAY_SIZE(idx));
}

static void make_report(const struct step *s, unsigned seq,
			struct oom_report *r)
{
	size_t n = 1;
	struct kmsg_victim *v;

	while (s->group && n < ARRAY_SIZE(s->pids) && s->pids[n])
		n++;
	v = calloc(n, sizeof(*v));
	cr_assert_not_null(v);
	oom_report_init(r);
	r->seq_first = r->seq_last = seq;
	r->victims = v;
	r->n_victims = n;
	r->group_kill = s->group;
	r->kills_repeated = s->repeated;
	for (size_t i = 0; i < n; i++) {
		v[i].pid = s->pids[i];
		strlcpy_safe(v[i].comm, "hog", sizeof(v[i].comm));
		v[i].anon_rss_kb = s->anon_mb * 1024ull;
		v[i].shmem_rss_kb = s->shmem_mb * 1024ull;
		v[i].file_rss_kb = s->file_mb * 1024ull;
		v[i].usec = s->kill ? T(s->kill) : UINT64_MAX;
	}
	if (s->op == FULL) {
		strlcpy_safe(r->task_memcg, s->path, sizeof(r->task_memcg));
		strlcpy_safe(r->oom_memcg,
			     s->oom_memcg ? s->oom_memcg : s->path,
			     sizeof(r->oom_memcg));
		r->complete = true;
	}
}

static void feed_report(struct correlator *c, const struct step *s,
			unsigned seq)
{
	struct corr_proc proc = {0};
	struct corr_paths paths = {0};
	struct oom_report r;

	make_report(s, seq, &r);
	/* the steps' paths are the mount's own (a mount at the root) */
	strlcpy_safe(paths.task, r.task_memcg, sizeof(paths.task));
	strlcpy_safe(paths.oom, r.oom_memcg, sizeof(paths.oom));
	if (s->proc) {
		proc.read = true;
		strlcpy_safe(proc.cgroup, s->proc, sizeof(proc.cgroup));
		strlcpy_safe(proc.comm, s->proc_comm ? s->proc_comm : "hog",
			     sizeof(proc.comm));
		proc.has_mm = !s->proc_exiting;
	}
	cr_assert_eq(
		correlate_report(c, &r, &paths, s->op == BARE ? &proc : NULL,
				 s->kill ? T(s->kill) : UINT64_MAX, T(s->t)),
		0);
	cr_assert_eq(r.n_victims, 0, "the report is taken over");
}

static void feed_notification(struct correlator *c, const struct step *s)
{
	struct cgroup_state st = {0};
	size_t n_pids = 0;
	struct corr_notification n = {
		.path = s->path,
		.mono_us = T(s->t),
		.since_us = s->since ? T(s->since) : 0,
		.delta = s->delta,
		.away = s->op == AWAY,
		.pids = s->pids,
	};

	while (n_pids < ARRAY_SIZE(s->pids) && s->pids[n_pids])
		n_pids++;
	n.n_pids = n_pids;
	if (s->limit_mb) {
		st.limit.state = CGV_OK;
		st.limit.v = (uint64_t)s->limit_mb << 20;
		n.state = &st;
	}
	cr_assert_eq(correlate_notify(c, &n, T(s->t)), 0);
}

static void check(const struct scenario *sc, size_t i,
		  const struct corr_kill *k)
{
	const struct want *w = &sc->want[i];
	int pid = k->report.n_victims ? k->report.victims[0].pid : 0;

	cr_assert(w->cgroup, "%s: unexpected decision %zu (pid %d in \"%s\")",
		  sc->name, i, pid, k->cgroup);
	cr_expect_eq(pid, w->pid, "%s: decision %zu: pid %d", sc->name, i, pid);
	cr_expect_str_eq(k->cgroup, w->cgroup, "%s: decision %zu: \"%s\"",
			 sc->name, i, k->cgroup);
	cr_expect_eq(k->outcome, w->outcome, "%s: decision %zu", sc->name, i);
	/* kernel/oom.json keeps only what the kernel printed */
	if (k->how_found != CORR_KERNEL_REPORT)
		cr_expect_str_eq(k->report.task_memcg, "", "%s", sc->name);
	cr_expect_eq(k->kills, w->kills ? w->kills : 1,
		     "%s: decision %zu: %llu kills", sc->name, i,
		     (unsigned long long)k->kills);
	if (w->outcome == CORR_COUNTED) {
		uint64_t want = w->since_ms == NONE_MS
					? UINT64_MAX
					: (uint64_t)w->since_ms * 1000;

		cr_expect_not_null(k->reason, "%s", sc->name);
		cr_expect_eq(k->since_bundle_us, want,
			     "%s: decision %zu: since %llu us", sc->name, i,
			     (unsigned long long)k->since_bundle_us);
	}
	if (w->outcome != CORR_CAPTURE && w->outcome != CORR_COUNTED)
		return;
	cr_expect_eq(k->how_found, w->how, "%s: decision %zu: %s", sc->name, i,
		     corr_how_name(k->how_found));
	cr_expect_eq(k->confidence, w->conf, "%s: decision %zu: %s", sc->name,
		     i, corr_confidence_name(k->confidence));
	cr_expect_eq(k->have_state, w->state_mb != 0, "%s: decision %zu: state",
		     sc->name, i);
	if (k->have_state && w->state_mb)
		cr_expect_eq(k->state_at_notification.limit.v,
			     (uint64_t)w->state_mb << 20, "%s: decision %zu",
			     sc->name, i);
}

ParameterizedTest(size_t *i_sc, correlate, replay)
{
	static const char *const watch[] = {"/w"};
	const struct scenario *sc = &scenarios[*i_sc];
	struct correlator *c = NULL;
	struct corr_kill k;
	size_t got = 0;

	cr_assert_eq(correlate_new(watch, 1, &c), 0);
	for (size_t i = 0; i < MAX_STEPS && sc->steps[i].t; i++) {
		const struct step *s = &sc->steps[i];

		if (s->op == NOTE || s->op == AWAY)
			feed_notification(c, s);
		else if (s->op == FULL || s->op == BARE)
			feed_report(c, s, 100 + (unsigned)i);
		else
			correlate_tick(c, T(s->t));
		while (correlate_pop(c, &k) == 1) {
			cr_assert_lt(got, MAX_WANT);
			check(sc, got++, &k);
			corr_kill_release(&k);
		}
	}
	cr_expect_null(got < MAX_WANT ? sc->want[got].cgroup : NULL,
		       "%s: %zu decisions, more wanted", sc->name, got);
	correlate_free(c);
}

Test(correlate, next_tick_polls_while_anything_waits)
{
	static const char *const watch[] = {"/w"};
	struct correlator *c = NULL;
	struct step bare = {BARE, 100, .pids = {500}, .kill = 99};
	struct step note = {NOTE, 100, "/w/app", 50, 1, {0}, 16};

	cr_assert_eq(correlate_new(watch, 1, &c), 0);
	cr_expect_eq(correlate_next_tick(c, T(100)), UINT64_MAX);
	cr_expect_eq(correlate_hold_seq(c), UINT64_MAX);
	feed_notification(c, &note);
	cr_expect_eq(correlate_next_tick(c, T(100)), T(600));
	feed_report(c, &bare, 42); /* kill at 99 is in the window: named */
	cr_expect_eq(correlate_hold_seq(c), 42, "held until taken");
	correlate_free(c); /* frees the decision not taken */
}

Test(correlate, a_waiting_line_holds_the_saved_position)
{
	static const char *const watch[] = {"/w"};
	struct correlator *c = NULL;
	struct step bare = {BARE, 100, .pids = {500}, .kill = 99};
	struct step full = {FULL, 110, "/w/b", .pids = {501}, .kill = 109};
	struct corr_kill k;

	cr_assert_eq(correlate_new(watch, 1, &c), 0);
	feed_report(c, &bare, 7);
	cr_expect_eq(correlate_next_tick(c, T(100)), T(150));
	feed_report(c, &full, 9);
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_eq(k.report.victims[0].pid, 501);
	corr_kill_release(&k);
	cr_expect_eq(correlate_hold_seq(c), 7, "the bare line still waits");
	correlate_tick(c, T(1300));
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_eq(k.outcome, CORR_UNMATCHED);
	cr_expect_not_null(k.reason);
	corr_kill_release(&k);
	cr_expect_eq(correlate_hold_seq(c), UINT64_MAX);
	correlate_free(c);
}

Test(correlate, flush_decides_what_waits_at_shutdown)
{
	static const char *const watch[] = {"/w"};
	struct correlator *c = NULL;
	struct step note = {NOTE, 100, "/w/app", 50, 2, {0}, 16};
	struct step bare = {BARE, 110, .pids = {600}, .anon_mb = 40,
			    .kill = 99};
	struct corr_kill k;

	cr_assert_eq(correlate_new(watch, 1, &c), 0);
	feed_notification(c, &note);
	feed_report(c, &bare, 3); /* over the limit: not ours, waits */
	cr_expect_eq(correlate_pop(c, &k), 0);
	correlate_flush(c, T(120));
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_eq(k.outcome, CORR_UNMATCHED);
	corr_kill_release(&k);
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_eq(k.outcome, CORR_CAPTURE);
	cr_expect_eq(k.how_found, CORR_NOTIFICATION);
	cr_expect(k.have_state);
	corr_kill_release(&k);
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_eq(k.outcome, CORR_COUNTED);
	cr_expect_eq(k.kills, 1);
	corr_kill_release(&k);
	cr_expect_eq(correlate_pop(c, &k), 0);
	cr_expect_eq(correlate_next_tick(c, T(120)), UINT64_MAX);
	correlate_free(c);
}

Test(correlate, more_cgroups_than_remembered_bundle_more_never_less)
{
	static const char *const watch[] = {"/w"};
	struct correlator *c = NULL;
	struct corr_kill k;
	char path[40][16];
	size_t bundled = 0;

	cr_assert_eq(correlate_new(watch, 1, &c), 0);
	for (unsigned i = 0; i < 40; i++) {
		struct step note = {NOTE, 100 + i, path[i], 50, 1, {0}, 16};

		snprintf(path[i], sizeof(path[i]), "/w/c%u", i);
		feed_notification(c, &note);
	}
	correlate_tick(c, T(2200));
	while (correlate_pop(c, &k) == 1) {
		bundled += k.outcome == CORR_CAPTURE;
		corr_kill_release(&k);
	}
	cr_expect_eq(bundled, 40);
	/* /w/c0's slot went to a later cgroup: bundled again, 2 s after;
	 * /w/c39, remembered, is counted */
	for (unsigned i = 0; i < 2; i++) {
		struct step note = {NOTE, 2300, i ? "/w/c0" : "/w/c39", 2200, 1,
				    {0},  16};

		feed_notification(c, &note);
	}
	correlate_tick(c, T(4400));
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_str_eq(k.cgroup, "/w/c39");
	cr_expect_eq(k.outcome, CORR_COUNTED, "remembered: counted");
	corr_kill_release(&k);
	cr_assert_eq(correlate_pop(c, &k), 1);
	cr_expect_str_eq(k.cgroup, "/w/c0");
	cr_expect_eq(k.outcome, CORR_CAPTURE, "forgotten: bundled");
	corr_kill_release(&k);
	correlate_free(c);
}

Test(correlate, names)
{
	cr_expect_str_eq(corr_how_name(CORR_KERNEL_REPORT), "kernel-report");
	cr_expect_str_eq(corr_how_name(CORR_PID_AT_NOTIFICATION),
			 "pid-at-notification");
	cr_expect_str_eq(corr_how_name(CORR_PROC), "proc");
	cr_expect_str_eq(corr_how_name(CORR_COUNTER_WINDOW), "counter-window");
	cr_expect_str_eq(corr_how_name(CORR_NOTIFICATION), "notification");
	cr_expect_str_eq(corr_confidence_name(CORR_MEDIUM), "medium");
}

/* A report's paths as mounted, beside it: the report keeps the kernel's.
 * The mount is a container's view of the v1 memory hierarchy (podman's
 * libpod_parent/libpod-<id> subtree, as tests/unit/test_cgroup_mount.c). */
Test(correlate, paths_are_mapped_beside_the_report)
{
	static const char base[] = "/libpod_parent/libpod-8d33";
	struct cgroup_mount m;
	struct corr_paths p;
	struct oom_report r;

	cgroup_mount_resolve(base, false, 1, &m);
	cr_assert_eq(m.state, CGROUP_BASE_KNOWN);
	oom_report_init(&r);
	snprintf(r.task_memcg, sizeof(r.task_memcg), "%s/pod/app", base);
	snprintf(r.oom_memcg, sizeof(r.oom_memcg), "%s/pod", base);
	cr_assert_eq(correlate_map_paths(&m, &r, &p), 0);
	cr_assert_str_eq(p.task, "/pod/app");
	cr_assert_str_eq(p.oom, "/pod");
	cr_assert_str_eq(corr_paths_victim(&p), "/pod/app");
	cr_assert_str_eq(r.task_memcg, "/libpod_parent/libpod-8d33/pod/app",
			 "the report is left as the kernel printed it");
	cr_assert_str_eq(r.oom_memcg, "/libpod_parent/libpod-8d33/pod");

	/* a limit above the mount (the pod's, seen from a container) */
	snprintf(r.oom_memcg, sizeof(r.oom_memcg), "/libpod_parent");
	cr_assert_eq(correlate_map_paths(&m, &r, &p), 0);
	cr_assert_str_eq(p.task, "/pod/app");
	cr_assert_str_eq(p.oom, "");
	cr_assert_str_eq(r.oom_memcg, "/libpod_parent");

	/* the victim outside the mount: none of ours */
	snprintf(r.task_memcg, sizeof(r.task_memcg), "/user.slice/x");
	cr_assert_eq(correlate_map_paths(&m, &r, &p), -EXDEV);

	/* no task_memcg (a kernel before 5.0 names one cgroup): the limit's
	 * is the victim's */
	r.task_memcg[0] = '\0';
	snprintf(r.oom_memcg, sizeof(r.oom_memcg), "%s/hog", base);
	cr_assert_eq(correlate_map_paths(&m, &r, &p), 0);
	cr_assert_str_eq(p.task, "");
	cr_assert_str_eq(corr_paths_victim(&p), "/hog");

	/* a bare line: nothing printed, nothing mapped */
	r.oom_memcg[0] = '\0';
	cr_assert_eq(correlate_map_paths(&m, &r, &p), 0);
	cr_assert_str_eq(corr_paths_victim(&p), "");
	oom_report_release(&r);
}
