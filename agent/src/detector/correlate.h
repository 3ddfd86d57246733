/* SPDX-License-Identifier: Apache-2.0 */
/* The kill correlator: which memory cgroup each OOM kill belongs to.
 *
 * Pure: no I/O, no clock reads, no logging. The caller reads /dev/kmsg,
 * the cgroups' counters and task lists and /proc, stamps each read with
 * CLOCK_MONOTONIC, and feeds the results in as events (a notification, a
 * kernel report, a tick). The correlator answers with decisions, queued
 * for the caller to take with correlate_pop(): one struct corr_kill per
 * kill, saying how its cgroup was found; and with the time it next wants
 * a tick (correlate_next_tick()).
 *
 * The kernel counts kills locally (v1 memory.oom_control, v2
 * memory.events.local): one kill is one notification with a delta, for
 * the victim's own cgroup. A full kernel report names its cgroup. After
 * 10 reports in 5 s the kernel prints a kill as a bare "Killed process"
 * line, with no cgroup; kills in other cgroups print such lines too. A
 * bare line is given a cgroup by evidence first (the victim's pid listed
 * among a notified cgroup's tasks: the OOM is signalled before the kill;
 * else the cgroup /proc still gave for it while it held its memory), else
 * by the counter reads around it: the kill falls between the read that did
 * not count it and the one that did, less the count's lag behind the
 * printed line; a notification names the latest such lines, up to its
 * kill count, whose victim fits its limit. Kills counted while the agent
 * was away are taken in order.
 *
 * A kill with no kernel report (no /dev/kmsg, a lost record) is its
 * notification's own, never merged into a neighbour's: every kill counted
 * is decided. The first of a cgroup is bundled; those that follow within
 * CORR_UNREPORTED_GAP_US of that bundle, and the rest of a count of
 * several, are CORR_COUNTED (their bundle would repeat it: no victim, the
 * same cgroup's counters), for the caller to count and log. Not thread-safe:
 * one thread owns it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/cgroup.h"
#include "kernel/cgroup_mount.h"
#include "kernel/kmsg.h"

#define CORR_MAX_PIDS 64
/* At most one bundle of kills with no kernel report per cgroup in this
 * long (CLOCK_MONOTONIC µs); the kills in between are CORR_COUNTED. */
#define CORR_UNREPORTED_GAP_US 10000000ull

/* How a kill's cgroup was found (manifest.json how_found). */
enum corr_how {
	CORR_KERNEL_REPORT,	  /* the kernel printed it */
	CORR_PID_AT_NOTIFICATION, /* the cgroup listed the victim's pid */
	CORR_PROC,		  /* /proc/<pid>/cgroup while it held memory */
	CORR_COUNTER_WINDOW,	  /* the counter reads around the kill */
	CORR_NOTIFICATION,	  /* a counted kill whose report was not read */
};

enum corr_confidence {
	CORR_HIGH,   /* printed by the kernel, or direct evidence */
	CORR_MEDIUM, /* counted in a time window around the kill */
	CORR_LOW,    /* counted while away, or the kill time is unknown */
};

enum corr_outcome {
	CORR_CAPTURE,	/* write a bundle */
	CORR_UNWATCHED, /* the kill's cgroup is outside the watched trees */
	CORR_UNMATCHED, /* a bare line no watched cgroup counted in time */
	CORR_COUNTED,	/* no kernel report, and its cgroup had a bundle
			 * without one less than CORR_UNREPORTED_GAP_US
			 * before: counted and logged, not bundled */
};

/* A kernel report's cgroup paths under the agent's memory cgroup mount,
 * carried beside the report, whose own paths stay as the kernel printed
 * them (the kernel's namespace): "" where the kernel printed none. */
struct corr_paths {
	char task[KMSG_PATH_MAX]; /* the victim's memcg (task_memcg) */
	char oom[KMSG_PATH_MAX];  /* the one whose limit was hit (oom_memcg) */
};

/* One decision. The caller owns it after correlate_pop(). */
struct corr_kill {
	enum corr_outcome outcome;
	/* As read from the kernel log, never rewritten: a bare line keeps
	 * its empty task_memcg. CORR_NOTIFICATION: no victim, usec = the
	 * tick. */
	struct oom_report report;
	struct corr_paths paths;    /* the report's paths, as mounted */
	char cgroup[KMSG_PATH_MAX]; /* the victim's memcg; "" unmatched */
	enum corr_how how_found;
	enum corr_confidence confidence;
	/* The victim cgroup read at its notification (moved from it). */
	struct cgroup_state state_at_notification;
	bool have_state;
	const char *reason; /* static text when not CORR_CAPTURE */
	/* The kills it stands for: 1; a memory.oom.group report's victims;
	 * CORR_COUNTED: the kills of one count after its first. */
	uint64_t kills;
	/* CORR_COUNTED: how long after its cgroup's last bundle without a
	 * kernel report (µs; 0 for the rest of a count whose first kill was
	 * bundled; UINT64_MAX when none is remembered) */
	uint64_t since_bundle_us;
};

/* A cgroup's OOM notification (CGE_OOM), as the caller read it. */
struct corr_notification {
	const char *path;
	uint64_t mono_us;  /* the counter read that gave oom_kill */
	uint64_t since_us; /* the read before, with the old count (0: none) */
	uint64_t oom_kill, delta;
	bool away; /* a count grown while the agent was not running */
	/* the cgroup's tasks listed at this notification (not when away) */
	const int *pids;
	size_t n_pids;
	/* the cgroup read at notification (delta > 0), or NULL: moved in,
	 * released by the correlator */
	struct cgroup_state *state;
};

/* What /proc/<pid> gave for a bare line's victim, read when the line was
 * read (later the victim is gone): the memory cgroup first, then status. */
struct corr_proc {
	bool read; /* both files were read */
	char cgroup[KMSG_PATH_MAX];
	char comm[KMSG_COMM_MAX]; /* status Name: */
	bool has_mm;		  /* status shows memory */
};

struct correlator;

/* A correlator for kills under the watched subtrees (copied). Returns 0 or
 * -ENOMEM. */
int correlate_new(const char *const *watch, size_t n_watch,
		  struct correlator **ret);
/* Frees c and every decision not taken; NULL is a no-op. */
void correlate_free(struct correlator *c);

/* Feeds one notification at now. delta 0 (the v1 eventfd fired before the
 * count moved) only remembers the tasks listed. Returns 0 or -ENOMEM (the
 * notification is lost; its state is released either way). */
int correlate_notify(struct correlator *c, const struct corr_notification *n,
		     uint64_t now);

/* The report's victim and limit cgroups under mount m, into *ret (the
 * report is left as the kernel printed it). Returns 0; -EXDEV when the
 * victim's cgroup lies outside the mount (the kill is none of ours). A
 * limit above the mount (a pod's, seen from a container) is "". A path
 * the mount cannot place (its base unknown, -ENXIO) is kept as printed.
 * Pure. */
int correlate_map_paths(const struct cgroup_mount *m,
			const struct oom_report *r, struct corr_paths *ret);

/* The victim's cgroup of p: its task's, else the limit's (as
 * oom_report_victim_memcg() is of the report). */
const char *corr_paths_victim(const struct corr_paths *p);

/* Feeds one kernel report, read at now, with its paths as mounted
 * (correlate_map_paths()). kill_mono: its kill on CLOCK_MONOTONIC
 * (UINT64_MAX unknown). proc: /proc's answer for the victim of a bare line
 * (NULL when not asked). Takes r over (leaves it empty) and returns 0;
 * -ENOMEM leaves r with the caller. */
int correlate_report(struct correlator *c, struct oom_report *r,
		     const struct corr_paths *paths,
		     const struct corr_proc *proc, uint64_t kill_mono,
		     uint64_t now);

/* Time passes: retries the bare lines waiting, gives up on those past
 * their deadline, and turns notifications no report claimed in time into
 * kills of their own. Call after feeding everything already read. */
void correlate_tick(struct correlator *c, uint64_t now);

/* Shutting down: decides at now everything still waiting, as if its
 * time were up (a bare line without a cgroup is unmatched, a notification
 * without a report a kill of its own). */
void correlate_flush(struct correlator *c, uint64_t now);

/* When the correlator next wants a tick (CLOCK_MONOTONIC µs), UINT64_MAX
 * when nothing waits. */
uint64_t correlate_next_tick(const struct correlator *c, uint64_t now);

/* Moves the oldest decision into *ret (release with corr_kill_release).
 * Returns 1, or 0 when none. */
int correlate_pop(struct correlator *c, struct corr_kill *ret);
void corr_kill_release(struct corr_kill *k);

/* The first kmsg sequence of the oldest report not decided or not taken
 * yet (the saved kmsg position stays behind it), UINT64_MAX when none. */
uint64_t correlate_hold_seq(const struct correlator *c);

/* Names for the manifest: "kernel-report", "pid-at-notification", "proc",
 * "counter-window", "notification"; "high", "medium", "low". */
const char *corr_how_name(enum corr_how how);
const char *corr_confidence_name(enum corr_confidence c);
