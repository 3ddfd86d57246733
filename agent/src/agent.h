/* SPDX-License-Identifier: Apache-2.0 */
/* The standalone agent's state, shared by its source files. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "kernel/cgroup.h"
#include "kernel/cgroup_mount.h"
#include "base/host.h"
#include "kernel/kmsg.h"
#include "detector/correlate.h"
#include "publish/cluster.h"

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
	/* STATE/reports/ at most: kills, bytes (kill/reports.c) */
	unsigned reports_keep;
	uint64_t reports_max_bytes;
	size_t bundle_max; /* --bundle-max-size: what a bundle is filled to */
	struct cluster_opts cluster; /* without --standalone */
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
	struct correlator *corr; /* which cgroup each kill belongs to */
	uint64_t done_seq; /* the newest report handled, maybe ahead of saved */
	bool have_done_seq;
	int64_t kmsg_offset_us; /* kmsg time − CLOCK_MONOTONIC */
	bool have_offset;
	uint64_t offset_mono; /* when it was measured */
	char probe[96];	      /* clock probe marker in flight, "" when none */
	uint64_t probe_mono;  /* when it was written */
	unsigned probes;      /* written so far */
	uint64_t reports_written, reports_ignored;
	uint64_t kills_counted_only; /* no kernel report, no bundle
					(CORR_COUNTED) */
	volatile int stop;	     /* set from the signal path */
	/* cluster mode: NULL in standalone */
	struct cluster *cluster;
	struct cluster_pods *pods;	     /* the detector's pod map */
	struct cluster_warn_gate *warn_gate; /* OOMPredicted, per container */
	/* kills waiting for their pod's snap-<pod> (kill/late_snap.c) */
	struct agent_snap_wait {
		struct bundle *b;
		struct pub_item *it;
		/* the kill's parsed report, taken over from the correlator:
		 * the bundle is diagnosed again from it, not re-parsed */
		struct oom_report report;
		uint64_t kill_ms;
		int64_t latency;
	} snap_wait[CLUSTER_SNAP_WAIT];
	size_t n_snap_wait;
	struct agent_counters counters;
	struct forecast_sampler *sampler; /* obs/forecast_sampler.h */
};

/* state.c */
int agent_state_load(struct agent *a);
int agent_state_save(struct agent *a);

/* capture.c: builds and writes the bundle of one kill the correlator
 * decided (k->state_at_notification is used, not taken); prints the report
 * line on stdout. Returns 0 or -errno (the caller logs it). */
int agent_capture(struct agent *a, struct corr_kill *k);

/* reports.c: deletes the oldest kills' files in STATE/reports/ (a kill's
 * bundle, report and node-oom.txt together) until at most
 * opts.reports_keep kills and opts.reports_max_bytes bytes remain; a
 * bundle the publish queue still needs is never deleted. One log line per
 * round that removed or had to spare something. At start and after each
 * bundle written; blocks on disk I/O only. */
void agent_reports_prune(struct agent *a);

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

/* finish.c: the one finish step of a bundle, for the first capture
 * (capture.c) and for a bundle finished later (late_snap.c). */
struct agent_verdict {
	char verdict[32];
	char summary[320];
	uint64_t usage, limit; /* the diagnosis's reconciled figures, 0: not
				* known; the OOMReport says the same */
};
/* diagnosis.json from what b holds (r may be NULL); verdict and summary
 * into man and *ret. */
void agent_bundle_diagnose(struct bundle *b, const struct oom_report *r,
			   struct json_object *man, uint64_t kill_ms,
			   struct agent_verdict *ret);
/* report.html into b, and <id>.html beside the bundles. */
void agent_bundle_report(struct agent *a, struct bundle *b, const char *id);

/* cluster_capture.c: the pod side of a capture in cluster mode. */
struct agent_kill_pod {
	struct cluster_match m;
	bool have; /* the victim's cgroup is a pod's */
};
/* Maps the kill to its pod; false when the kill is not to be reported
 * (opted out, filtered namespace; logged). */
bool agent_cluster_want(struct agent *a, const struct corr_kill *k,
			struct agent_kill_pod *ret);
/* Adds "pod" and "container" to the manifest. */
void agent_cluster_manifest(const struct agent_kill_pod *p,
			    struct json_object *man);
/* The sidecar's spool of the pod (by the UID in the host path), or NULL
 * when there is none. Writes the path into buf. */
const char *agent_cluster_spool(const struct agent *a,
				const struct agent_kill_pod *p, char *buf,
				size_t size);
struct forecast_target;
struct forecast_warning;
/* The forecast's resolver in cluster mode (forecast_resolve_fn, ud = the
 * agent): a container cgroup of a wanted pod → namespace, pod, UID and
 * container name. Detector thread; a cache lookup. */
bool agent_cluster_resolve(const char *cgroup, struct forecast_target *ret,
			   void *ud);
/* The forecast's warning sink in cluster mode (forecast_warn_fn, ud = the
 * agent): queues an OOMPredicted Event on the pod for the publisher
 * thread, at most once per container per 10 min. Never blocks. */
void agent_cluster_predicted(const struct forecast_warning *w, void *ud);
/* Stages the saved bundle's publish item (agent_cluster_item) and hands
 * it over. */
void agent_cluster_publish(struct agent *a, const struct corr_kill *k,
			   const struct agent_kill_pod *p, const char *id,
			   const struct agent_verdict *v, uint64_t kill_ms);
/* Wakes the publisher for the item staged under id: the staged file is
 * the hand-over (pubqueue_take reads it); a full hand-over is logged and
 * the item waits for the agent's next start. */
void agent_cluster_hand_over(struct agent *a, const char *id);
/* The publish item of a kill (heap), staged in the state dir's queue as
 * soon as it is made (pubqueue_stage): an agent killed before the
 * publisher took the kill publishes it at its next start. NULL when it
 * could not be staged (memory, the write: logged; nothing publishes the
 * bundle). */
struct pub_item *
agent_cluster_item(const struct agent *a, const struct corr_kill *k,
		   const struct agent_kill_pod *p, const char *id,
		   const struct agent_verdict *v, uint64_t kill_ms);

/* late_snap.c (detector thread): a kill of an opted-in pod whose spool
 * the node does not show waits for the pod's OOMBundle snap-<pod>, asked
 * of the publisher thread. True when b (already saved on the node) was
 * kept for that, with k's report (moved out of k): the kill is counted
 * and published once the answer is in (agent_cluster_snap_answers()).
 * Never blocks. */
bool agent_cluster_snap_wait(struct agent *a, struct corr_kill *k,
			     const struct agent_kill_pod *p, struct bundle *b,
			     const char *id, const struct agent_verdict *v,
			     uint64_t kill_ms, int64_t latency);
/* Takes the publisher's answers: merges a checked snapshot into its
 * bundle, diagnoses and saves it again, then publishes; a refused one is
 * logged and the bundle published as it was. */
void agent_cluster_snap_answers(struct agent *a);
/* At exit: publishes whatever still waits, without a snapshot. */
void agent_cluster_snap_flush(struct agent *a);
