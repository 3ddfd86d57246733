/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar run: shared state of the flight recorder loop
 * (cmd_run.c: options and loop; run_sample.c: sampling; run_spool.c: the
 * spool directory). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/cgroup.h"
#include "base/host.h"
#include "forensics/recorder.h"

#define RUN_MAX_PIDS 4096
#define RUN_KEEP_SNAPSHOTS 3
#define RUN_PREDICT_S 10.0
#define RUN_PREDICT_GAP_US (10ull * 1000 * 1000)

struct run_cfg {
	const char *spool;
	const char *cgroup; /* NULL with --pid */
	int pids[RUN_MAX_PIDS];
	size_t n_pids;
	unsigned interval_ms;
	struct rec_thresholds th;
	uint64_t limit; /* --limit; 0 = from the cgroup */
	const char *host_root;
	double predict_s; /* 0 disables the prediction trigger */
	bool redact;
	bool allocator_probe; /* --allocator-probe ptrace: allocator.json */
	enum run_trim {
		RUN_TRIM_OFF,
		RUN_TRIM_TEST,	      /* once, at the top threshold */
		RUN_TRIM_ON_PRESSURE, /* at every threshold crossing */
	} trim;
};

struct run_state {
	struct run_cfg *cfg;
	struct host h;
	struct cgroup_fs fs;
	bool have_fs;
	bool cgroup_gone;
	int spool_fd;
	struct recorder rec;
	uint64_t started_us;
	uint64_t last_timeline_mono_us;
	bool timeline_dirty;
	bool trim_tested; /* --trim test: done once */
	bool manifest_dirty;
	int alive[RUN_MAX_PIDS]; /* pids sampled in the last round */
	size_t n_alive;
	int scratch_pids[RUN_MAX_PIDS], scratch_ok[RUN_MAX_PIDS];
};

/* One sampling round: pids, their status, the cgroup. Adds a sample to
 * st->rec. Returns 0 or -errno (-ENOENT: the cgroup is gone). */
int run_sample(struct run_state *st);

/* Spool. */
int run_spool_open(struct run_state *st);
int run_write_manifest(struct run_state *st);
int run_write_timeline(struct run_state *st);
/* Takes a snapshot of every alive pid into snapshots/<time>/ and prunes to
 * the newest RUN_KEEP_SNAPSHOTS. */
int run_take_snapshot(struct run_state *st, const char *reason);
