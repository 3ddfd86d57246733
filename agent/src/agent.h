/* SPDX-License-Identifier: Apache-2.0 */
/* The detector's state and the kill pipeline's hooks, shared by the
 * agent's rooms. Nothing here is a mode's: a mode that does more with a
 * kill (cluster mode: its pod, the publisher; standalone mode with
 * --publish-url: the publisher) registers hooks (struct kill_hooks) and
 * keeps its own state (publish/cluster.h, ../run_standalone.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "kernel/cgroup.h"
#include "kernel/cgroup_mount.h"
#include "base/host.h"
#include "kernel/kmsg.h"
#include "detector/correlate.h"
#include "detector/intake.h"

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
};

struct agent_metrics;
struct agent_kill_labels;
struct bundle;
struct forecast_sampler;

/* finish.c: the verdict of a finished bundle. */
struct agent_verdict {
	char verdict[32];
	char summary[320];
	uint64_t usage, limit; /* the diagnosis's reconciled figures, 0: not
				* known; the OOMReport says the same */
};

/* Whom a kill belongs to, as a mode knows it (cluster mode: its pod);
 * the hooks' own type, opaque to the pipeline. */
struct kill_owner;

/* What a mode adds to the kill pipeline (kill/capture.c, kill/reports.c),
 * registered by its run in struct agent (cluster mode: ../run_cluster.c;
 * standalone publishing: ../run_standalone.c). Without hooks (standalone)
 * a kill belongs to nobody, its spools are --spool-dir's and its bundle
 * stays on the node. Detector thread; none blocks. Every member is set. */
struct kill_hooks {
	void *ud;
	/* Whether the kill of cgroup (under our mount) is reported, and whom
	 * it belongs to: *ret (the hooks', given back by owner_free once the
	 * capture is done) or NULL when nobody's. false: not reported
	 * (logged). */
	bool (*want)(void *ud, const char *cgroup, struct kill_owner **ret);
	void (*owner_free)(struct kill_owner *o);
	/* True when the kill id was captured before the agent's last stop
	 * (saved: its bundle is on disk) and is in the mode's hands: handed
	 * over, or kept to be finished. Not captured again then. */
	bool (*captured)(void *ud, const char *id, bool saved);
	/* Whether a task whose /proc/<pid>/cgroup reads proc_cgroup is o's
	 * (o may be NULL: nobody's). Its bundle leaves the node, so a
	 * node-wide OOM's task dump is cut to the victim and o's tasks. */
	bool (*owner_task)(const struct kill_owner *o, const char *proc_cgroup);
	/* o's fields of the manifest ("pod", "container", ...). */
	void (*manifest)(const struct kill_owner *o, struct json_object *man);
	/* o's sidecar spool (written into buf), or NULL. */
	const char *(*spool)(void *ud, const struct kill_owner *o, char *buf,
			     size_t size);
	/* o's labels of oomlens_oom_kills_total (the verdict is set). */
	void (*labels)(const struct kill_owner *o, struct agent_kill_labels *l);
	/* Once the kill's evidence is in b, before it is diagnosed: true
	 * when the hooks keep b (and take k's report) to finish it later
	 * (agent_bundle_finish(), the bundle's one write); they count the
	 * kill and hand it over then. */
	bool (*keep)(void *ud, struct corr_kill *k, const struct kill_owner *o,
		     struct bundle *b, const char *id, uint64_t kill_ms,
		     int64_t latency);
	/* After the kill is counted: hands it over (its bundle saved). */
	void (*hand_over)(void *ud, const struct corr_kill *k,
			  const struct kill_owner *o, const char *id,
			  const struct agent_verdict *v, uint64_t kill_ms);
	/* Calls mark for each bundle (state-dir relative, "reports/<id>
	 * .tar.gz") the mode still needs. 0 or -errno (nothing is known to
	 * be free then). */
	int (*in_use)(void *ud,
		      void (*mark)(const char *bundle_file, void *arg),
		      void *arg);
	/* True when the bundle is read by others than the node's owner
	 * (cluster mode: the victim's namespace): a node-wide OOM's task
	 * dump is cut to the victim and its owner's tasks (owner_task). */
	bool cut_node_tasks;
};

/* An event source a mode adds to run's loop: ready(ud) when fd is
 * readable, on the detector thread. */
struct agent_source {
	int fd;
	void (*ready)(void *ud);
	void *ud;
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
	struct intake intake; /* /dev/kmsg into the correlator */
	int state_fd;	      /* the state directory */
	int reports_fd;	      /* state_dir/reports */
	char node[256];
	char boot_id[40];
	uint64_t last_seq; /* last kmsg seq of a handled report */
	bool have_last_seq;
	struct correlator *corr; /* which cgroup each kill belongs to */
	/* kmsg time − CLOCK_MONOTONIC, measured by the intake (0 until) */
	int64_t kmsg_offset_us;
	uint64_t reports_written, reports_ignored;
	uint64_t kills_counted_only; /* no kernel report, no bundle
					(CORR_COUNTED) */
	/* the run's; never NULL once the run set up */
	struct agent_metrics *metrics;
	struct forecast_sampler *sampler; /* obs/forecast_sampler.h */
	/* the mode's hooks of the kill pipeline; NULL: standalone without
	 * publishing */
	const struct kill_hooks *hooks;
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
/* The cgroup paths of a report just read as they lie under our mount,
 * into *ret, beside the report (left as the kernel printed it). False
 * (logged once per cgroup, with both paths) when the victim's cgroup lies
 * outside what is mounted: the caller drops the report. Paths that cannot
 * be mapped (a hidden cgroup namespace root) are kept as the kernel
 * printed them. */
bool agent_map_report(struct agent *a, const struct oom_report *r,
		      struct corr_paths *ret);
/* The kernel's path of our path into buf; false when it cannot be known. */
bool agent_kernel_path(const struct agent *a, const char *path, char *buf,
		       size_t size);

/* finish.c: the one finish step of a bundle, for the first capture
 * (capture.c) and for a bundle finished later (run_late_snap.c). */
/* diagnosis.json from what b holds (r may be NULL); verdict and summary
 * into man and *ret. */
void agent_bundle_diagnose(struct bundle *b, const struct oom_report *r,
			   struct json_object *man, uint64_t kill_ms,
			   struct agent_verdict *ret);
/* report.html into b, and <id>.html beside the bundles. */
void agent_bundle_report(struct agent *a, struct bundle *b, const char *id);
/* Both, then b written to reports/<id>.tar.gz: the bundle's one write.
 * Its size, or -errno. */
long agent_bundle_finish(struct agent *a, struct bundle *b,
			 const struct oom_report *r, uint64_t kill_ms,
			 const char *id, struct agent_verdict *ret);
/* The verdict, figures and kill time of reports/<id>.tar.gz as it was
 * written (its manifest and diagnosis.json), read through the bounded
 * reader: 0, -EBADMSG (no manifest), or bundle_read()'s errors. */
int agent_bundle_verdict(struct agent *a, const char *id,
			 struct agent_verdict *ret, uint64_t *ret_kill_ms);
