/* SPDX-License-Identifier: Apache-2.0 */
/* The standalone agent's state, shared by its source files. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cgroup.h"
#include "kernel/cgroup_mount.h"
#include "base/host.h"
#include "kernel/kmsg.h"

#define AGENT_MAX_WATCH 32
#define AGENT_MAX_SPOOL 32

struct agent_opts {
	const char *host_root;
	const char *state_dir;
	const char *watch[AGENT_MAX_WATCH];
	int n_watch;
	const char *spool[AGENT_MAX_SPOOL];
	int n_spool;
	bool standalone;
	bool from_start; /* first start: report what the ring buffer holds */
};

#define PENDING_MAX_PIDS 64

/* A cgroup OOM notification waiting for its kernel report. */
struct pending_oom {
	char *path;
	uint64_t mono_us;
	uint64_t since_us;	   /* the counter's read before: kills after */
	uint64_t oom_kill;	   /* the counter after the notification */
	uint64_t kills;		   /* kills it stands for, not yet claimed */
	struct cgroup_state state; /* read at once on notification */
	bool have_state;
	bool away;    /* counted while the agent was not running */
	bool claimed; /* scratch for pending_claim() */
	int pids[PENDING_MAX_PIDS]; /* the cgroup's tasks at notification */
	size_t n_pids;
};

/* The tasks of a cgroup at its latest OOM notification. */
struct seen_pids {
	char path[KMSG_PATH_MAX];
	uint64_t mono_us;
	int pids[PENDING_MAX_PIDS];
	size_t n_pids;
};

#define AGENT_MAX_SEEN 8

/* A kill reported before the cgroup counted it. */
struct owed_kill {
	char path[KMSG_PATH_MAX];
	uint64_t mono_us;
};

#define AGENT_MAX_OWED 16

/* A kernel report that names no cgroup, waiting for a notification. */
struct deferred_report {
	struct oom_report r;
	uint64_t mono_us; /* when it was read */
	uint64_t
		kill_mono; /* its kill on CLOCK_MONOTONIC, UINT64_MAX unknown */
};

#define AGENT_MAX_OUTSIDE 16

struct agent {
	struct agent_opts opts;
	struct host host;
	struct cgroup_fs cgfs;
	struct cgroup_mount cgmount; /* kernel paths <-> ours (cgmap.c) */
	/* Kernel paths of kills outside our mount already logged (a ring). */
	char outside[AGENT_MAX_OUTSIDE][KMSG_PATH_MAX];
	size_t n_outside;
	struct cgroup_watch *watch;
	struct kmsg_reader *kmsg;
	struct kmsg_assembler *asm_;
	int state_fd;	/* the state directory */
	int reports_fd; /* state_dir/reports */
	char node[256];
	char boot_id[40];
	uint64_t last_seq; /* last kmsg seq of a handled report */
	bool have_last_seq;
	struct pending_oom *pending;
	size_t n_pending;
	struct seen_pids seen[AGENT_MAX_SEEN];
	size_t n_seen;
	struct owed_kill owed[AGENT_MAX_OWED];
	size_t n_owed;
	struct deferred_report *deferred;
	size_t n_deferred;
	uint64_t done_seq; /* the newest report handled, maybe ahead of saved */
	bool have_done_seq;
	int64_t kmsg_offset_us; /* kmsg time − CLOCK_MONOTONIC */
	bool have_offset;
	uint64_t offset_mono; /* when it was measured */
	char probe[96];	      /* clock probe marker in flight, "" when none */
	uint64_t probe_mono;  /* when it was written */
	unsigned probes;      /* written so far */
	uint64_t reports_written, reports_ignored;
	volatile int stop; /* set from the signal path */
};

/* state.c */
int agent_state_load(struct agent *a);
int agent_state_save(struct agent *a);

/* capture.c: builds and writes the bundle of one report; prints the report
 * line on stdout. Returns 0 or -errno (the report is then logged). */
int agent_capture(struct agent *a, struct oom_report *r);

/* cgmap.c: learns where the memory hierarchy we read sits in the kernel's
 * and logs it (a warning when the kernel's paths cannot be mapped). */
void agent_mount_setup(struct agent *a);
/* Turns the kernel's cgroup paths in a report just read into paths under
 * our mount, in place. False (logged once per cgroup, with both paths)
 * when the victim's cgroup lies outside what is mounted: the caller drops
 * the report. Paths that cannot be mapped (a hidden cgroup namespace root)
 * are kept as the kernel printed them. */
bool agent_map_report(struct agent *a, struct oom_report *r);
/* The kernel's path of our path into buf; false when it cannot be known. */
bool agent_kernel_path(const struct agent *a, const char *path, char *buf,
		       size_t size);

/* pending.c */
void pending_add(struct agent *a, const struct cgroup_event *ev, bool away);
/* Every OOM notification: lists the cgroup's tasks while the victim is
 * still among them. */
void pending_note(struct agent *a, const struct cgroup_event *ev);
/* The notification's cgroup that listed pid among its tasks, or NULL. */
const char *pending_knows_pid(struct agent *a, int pid);
/* The cgroup of a kill whose report names none, by evidence: the
 * notification that listed the victim's pid, else the memory cgroup /proc
 * gives for it while the victim still holds its memory (ask when the
 * report is read: later it is gone). Copies it into ret (left alone when
 * there is none); false when there is none. */
bool pending_evidence(struct agent *a, const struct kmsg_victim *v, char *ret,
		      size_t size);
/* Names, for the notification at index i, which of the reports d[0..n)
 * (kernel order) it counted: at most its unclaimed kills, the latest of
 * those whose kill falls between the counter's read that did not count it
 * and the one that did (any, when counted while away or the time is
 * unknown), and whose victim fits its limit. Returns how many. */
size_t pending_name_counted(struct agent *a, size_t i,
			    struct deferred_report *d, size_t n);
/* Claims the notifications answered by a report on victim (and oom_memcg);
 * moves the victim cgroup's state read at notification into *ret_state
 * and returns true when there was one. */
bool pending_claim(struct agent *a, const char *victim, const char *oom_memcg,
		   struct cgroup_state *ret_state);
char *pending_expire_one(struct agent *a, uint64_t now, uint64_t timeout_us);
