/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar run: shared state of the flight recorder (cmd_run.c:
 * options, start-up and the snapshot worker; run_sampler.c: the sampler
 * thread, the adaptive rate and the triggers; run_sample.c: one cheap
 * sample; run_spool.c: the spool directory; run_jvm.c: JVM facts;
 * run_runtime.c: the runtimes' table hooks).
 *
 * Three threads meet in struct run_state, under st->mu:
 * - the sampler (raised priority when permitted) samples every interval
 *   (fast_interval_ms near the limit) and only ever holds st->mu while it
 *   reads the cheap files and updates st->rec; it never waits on anything
 *   else;
 * - the flusher rewrites timeline.json and manifest.json after each fast
 *   sample (else once a second): each made under st->mu (the timeline a
 *   48 KiB chunk at a time), written outside it;
 * - the main thread is the worker: heavy snapshots, JVM attach, ptrace
 *   probes, each step with a deadline, none of it under st->mu. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/cgroup.h"
#include "base/host.h"
#include "base/strbuf.h"
#include "forensics/capture.h"
#include "forensics/recorder.h"

#define RUN_MAX_PIDS 4096
#define RUN_KEEP_SNAPSHOTS 3
#define RUN_PREDICT_S 10.0
#define RUN_PREDICT_GAP_US (10ull * 1000 * 1000)
#define RUN_FAST_INTERVAL_MS 100
#define RUN_TTL_S 5.0		  /* time to limit that fires a snapshot */
#define RUN_SNAP_BUDGET_MS 10000u /* a snapshot's deadline far from it */
/* The least a snapshot gets near the limit: under a loaded node (load 30
 * on 2 cores here) attach and the ptrace probe took over a second; one
 * that ends after the kill is labelled and the previous one is used. */
#define RUN_SNAP_MIN_MS 2000u
#define RUN_MAX_JVMS 16
#define RUN_MAX_RTS 64		       /* processes whose runtimes are known */
#define RUN_MEMLOCK_MAX (128ull << 20) /* RLIMIT_MEMLOCK wanted */

struct pod;
struct run_cfg {
	struct pod *pod; /* pod mode (pod.h); NULL with --standalone */
	const char *spool;
	const char *cgroup; /* NULL with --pid */
	int pids[RUN_MAX_PIDS];
	size_t n_pids;
	unsigned interval_ms;
	unsigned fast_interval_ms; /* near the limit; 0 disables */
	double ttl_s;		   /* time-to-limit trigger; 0 disables */
	struct rec_thresholds th;
	uint64_t limit; /* --limit; 0 = from the cgroup */
	const char *host_root;
	double predict_s; /* 0 disables the prediction trigger */
	bool redact;
	bool allocator_probe; /* --allocator-probe ptrace: allocator.json */
	bool no_mlock;	      /* --no-mlock */
	/* pod mode (pod.c): the app's root, opened with the fsuid retry
	 * (-1: open host_root by its path); the Pod Security level of
	 * OOMLENS_POD_SECURITY (NULL unknown); why the container's cgroup
	 * could not be read ("" when it was, or not pod mode) */
	int host_root_fd;
	const char *pod_security;
	char cgroup_why[CAPTURE_WHY_MAX];
	/* --jvm-histogram: GC.class_histogram once per JVM, at the first
	 * threshold's snapshot, its pause bounded by the snapshot's time
	 * left and by jvm_histogram_max_pause_ms (0: the default), which
	 * histogram_knob names in the reason a walk was skipped */
	bool jvm_histogram;
	unsigned jvm_histogram_max_pause_ms;
	const char *histogram_knob;
	enum run_trim {
		RUN_TRIM_OFF,
		RUN_TRIM_TEST,	      /* once, at the top threshold */
		RUN_TRIM_ON_PRESSURE, /* at every threshold crossing */
	} trim;
};

/* A snapshot the sampler asks the worker for. */
struct run_snap_req {
	bool pending;
	char reason[32];
	double eta_s; /* seconds to the limit at the request, < 0 unknown */
	uint64_t oom_kills; /* the cgroup's count then: a kill since voids it */
	uint64_t mono_us;   /* when asked */
};

/* One NMT summary of a JVM, committed bytes per category. */
#define RUN_NMT_CATS 32
#define RUN_NMT_POINTS 6 /* the first one and the newest five */
struct run_nmt_point {
	uint64_t t_ms;
	bool first_sight; /* taken at first sight, else at a snapshot */
	int64_t threads;
	size_t n;
	char name[RUN_NMT_CATS][32];
	uint64_t committed[RUN_NMT_CATS];
};

/* What the worker learned of one JVM (run_jvm.c). */
struct run_jvm {
	int pid;
	bool done;	 /* facts taken (or given up) */
	size_t n_ranges; /* heap address ranges from GC.heap_info */
	uint64_t start[4], end[4];
	char name[4][40]; /* the space: "garbage-first heap", "tenured ..." */
	size_t n_nmt;	  /* NMT summaries kept (jvm/nmt_history.json) */
	struct run_nmt_point nmt[RUN_NMT_POINTS];
	bool histo_tried; /* --jvm-histogram: taken, or skipped for good */
	char *histo_json; /* jvm/class_histogram.json, written again into
			   * every later snapshot; malloc'd */
	size_t histo_len;
	char histo_why[CAPTURE_WHY_MAX]; /* when it was not taken */
};

struct run_state {
	struct run_cfg *cfg;
	struct host h;
	struct cgroup_fs fs;
	bool have_fs;
	int spool_fd;
	uint64_t started_us;
	/* ---- under mu ---- */
	pthread_mutex_t mu;
	pthread_cond_t wake;  /* worker: a snapshot request or stop */
	pthread_cond_t flush; /* flusher: a sample to write */
	struct recorder rec;
	bool cgroup_gone;
	bool stop;
	bool timeline_dirty, manifest_dirty;
	bool flush_now;		     /* fast mode: write after each sample */
	bool fast;		     /* sampling at fast_interval_ms */
	uint64_t fast_until_mono_us; /* fast at least until then */
	bool ttl_armed;	    /* the time-to-limit trigger, re-armed on retreat */
	uint64_t ttl_usage; /* usage at the last snapshot asked for */
	bool snapping;	    /* the worker is in a snapshot */
	uint64_t oom_kills; /* the cgroup's oom_kill count, last sample */
	uint64_t ooms_at_start;	    /* at the snapshot's start */
	struct run_snap_req req[4]; /* FIFO: each threshold gets its own */
	size_t n_req;
	int alive[RUN_MAX_PIDS]; /* pids sampled in the last round */
	size_t n_alive;
	int new_pids[64]; /* first seen, for the worker's JVM check */
	size_t n_new;
	struct capture_notes capture; /* manifest.json "capture" */
	/* ---- sampler only ---- */
	int cg_fd; /* the watched cgroup's directory, -1 without */
	int scratch_pids[RUN_MAX_PIDS], scratch_ok[RUN_MAX_PIDS];
	struct rec_proc_sample scratch_procs[RUN_MAX_PIDS]; /* one round's */
	/* ---- worker only ---- */
	bool trim_tested; /* --trim test: done once */
	struct run_jvm jvms[RUN_MAX_JVMS];
	size_t n_jvms;
	struct run_jvm_retry {
		int pid;
		unsigned tries;
		uint64_t at_mono_us;
	} jvm_retry[RUN_MAX_JVMS];
	size_t n_retry;
	/* the runtimes each process was found to run (run_runtime.c): bit
	 * i for row i of the table (forensics/runtimes/registry.c) */
	struct run_rt {
		int pid;
		uint32_t mask;
	} rts[RUN_MAX_RTS];
	size_t n_rts;
	uint64_t last_timeline_mono_us; /* flusher only */
	struct strbuf tl_chunk;		/* flusher only: the timeline's */
};

/* One sampling round: pids, their status, the cgroup's usage, limit and
 * oom_kill count. Adds a sample to st->rec. Called with st->mu held.
 * Returns 0 or -errno. */
int run_sample(struct run_state *st);
/* The cgroup's oom_kill count now (any thread; 0 when unreadable). */
uint64_t run_read_oom_kills(struct run_state *st);
/* Opens the watched cgroup's directory for the cheap reads (st->cg_fd). */
int run_sample_open(struct run_state *st);

/* The sampler and flusher threads (run_sampler.c). */
int run_threads_start(struct run_state *st, pthread_t *sampler,
		      pthread_t *flusher);
/* Decides, after a sample (mu held), whether to sample fast and whether
 * to ask for a snapshot; queues it in st->req. Exposed for the worker's loop.
 */
void run_after_sample(struct run_state *st);
/* Sleeps until the monotonic time, or until st->stop. */
void run_sleep_until(struct run_state *st, uint64_t mono_us);

/* Records, under st->mu, that what (of pid, 0: none) was not captured
 * and why: the manifest's "capture" (forensics/capture.h), logged once
 * when new. */
void run_note_missing(struct run_state *st, const char *what, int pid,
		      const char *why);
/* The same for a read the kernel refused (EACCES/EPERM) on pid's /proc
 * files: why comes from the ids and capabilities of both sides. */
void run_note_denied(struct run_state *st, const char *what, int pid);

/* Spool. run_flush: the flusher's write (manifest when dirty, timeline
 * after each fast sample or once a second). */
int run_flush(struct run_state *st);
int run_spool_open(struct run_state *st);
int run_write_manifest(struct run_state *st);
int run_write_timeline(struct run_state *st);
/* Takes a snapshot of every alive pid into snapshots/<time>/ and prunes to
 * the newest RUN_KEEP_SNAPSHOTS (and the newest with a JVM's answer when
 * those have none). Called by the worker without st->mu:
 * steps in order of cost (status and smaps of each process, the JVMs'
 * heap RSS by address, then attach and the ptrace probe), each bounded
 * by the deadline derived from req->eta_s. */
int run_take_snapshot(struct run_state *st, const struct run_snap_req *req);

/* JVM facts (run_jvm.c), worker only: the first sight of a process. A
 * JVM not ready yet (the launcher before libjvm, no attach listener) is
 * tried again by run_jvm_poll(), up to 10 times over ~10 s. */
void run_jvm_first_sight(struct run_state *st, int pid);
void run_jvm_poll(struct run_state *st);
/* The heap ranges known for pid, NULL when none. */
const struct run_jvm *run_jvm_find(const struct run_state *st, int pid);
/* Writes <pid>/jvm/heap_rss.json: the RSS of the heap ranges, read from
 * smaps by address (no attach). */
void run_jvm_heap_rss(struct run_state *st, int pid, int pid_dirfd);
/* After a snapshot's attach: adds the NMT summary it wrote
 * (<pid>/jvm/native_memory.txt) to the JVM's history and writes the
 * history, first sight included, to <pid>/jvm/nmt_history.json, so the
 * bundle's one snapshot carries the growth per category. */
void run_jvm_nmt_history(struct run_state *st, int pid, int pid_dirfd);

/* The class histogram (--jvm-histogram, run_jvm.c), worker only, after
 * a snapshot's attach (attached: it answered) and heap RSS: at the first
 * threshold's snapshot of a JVM whose facts were taken, GC.class_histogram
 * once (inspect/jvm.h jvm_histo_take), bounded by the max pause, left_ms
 * (the snapshot's time left) and limit_ms (the limit's at the growth
 * seen; UINT64_MAX unknown); taken or not, its JSON is kept and
 * written to <pid>/jvm/class_histogram.json of that snapshot and of every
 * later one (the bundle carries the newest). Returns why, when it was
 * tried now and not taken (for the manifest's capture), else NULL. */
const char *run_jvm_histogram(struct run_state *st, int pid, int pid_dirfd,
			      const char *reason, bool attached,
			      uint64_t left_ms, uint64_t limit_ms);
/* Frees what the worker kept of each JVM. */
void run_jvm_release(struct run_state *st);

/* The runtimes' sidecar hooks (run_runtime.c, the table of
 * forensics/runtimes/registry.c), worker only. At first sight: each
 * runtime's detect, then its first_sight (an event in the timeline). At
 * a snapshot (pid_dirfd: the snapshot's processes/<pid>/): the snapshot
 * hook of each runtime pid runs, detected again for a process first seen
 * before its exec. */
void run_runtimes_first_sight(struct run_state *st, int pid);
size_t run_runtimes_snapshot(struct run_state *st, int pid, int pid_dirfd);
