/* SPDX-License-Identifier: Apache-2.0 */
/* spool: the sidecar's output directory, read by the agent.
 *
 *   DIR/manifest.json            {"schema":SPOOL_SCHEMA,"cgroup":"/demo/app"
 *                                 or null,"pids":[…],…}
 *   DIR/timeline.json            flight recorder (recorder.h), rewritten
 *                                atomically at most once a second
 *   DIR/snapshots/<time>/        newest 3; <time> = 20261130T101500.123Z
 *       snapshot.json            {"reason","t_ms","usage","limit","pids"}
 *       processes/<pid>/…        snapshot.h files
 *
 * A snapshot directory appears by rename once complete; names ending in
 * ".tmp" are in progress and never read. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_SCHEMA "oomlens.io/spool/v1"
#define SPOOL_MANIFEST "manifest.json"
#define SPOOL_TIMELINE "timeline.json"
#define SPOOL_SNAPSHOTS_DIR "snapshots"
#define SPOOL_PROCESSES_DIR "processes"

struct bundle;

struct spool_info {
	char dir[4096];	      /* the spool that matched */
	char cgroup[4096];    /* its manifest's cgroup ("" when pids only) */
	char snapshot[64];    /* newest snapshot name, "" when none */
	uint64_t snapshot_ms; /* its time (from snapshot.json), 0 if none */
	size_t n_files;	      /* files added to the bundle */
	bool exact;	      /* cgroup equal, not ancestor/descendant */
};

/* Fills names (at most max, caller frees each) with the complete
 * snapshots in the snapshots directory snap_fd, oldest first (names sort by
 * time; ".tmp" and hidden entries left out). Returns the count. */
size_t spool_list_snapshots(int snap_fd, char **names, size_t max);

/* True when the spool's cgroup and the killed one are the same, or one
 * lies below the other ("/a" ~ "/a/b", not "/ab"). Pure. */
bool spool_cgroup_matches(const char *spool_cgroup, const char *killed);

/* Finds, among dirs (each a spool, or a directory whose subdirectories are
 * spools), the spool whose manifest cgroup matches cgroup_path (exact
 * match preferred, then the deepest related one). Returns 0 with
 * ret->dir/cgroup set, -ENOENT when none matches. Reads manifests only. */
int spool_find(const char *const *dirs, size_t n_dirs, const char *cgroup_path,
	       struct spool_info *ret);

/* spool_find() + adds to the bundle: "timeline.json" (BUNDLE_HIGH), the
 * newest snapshot's processes/<pid>/… (BUNDLE_NORMAL; pmap.txt
 * BUNDLE_LOW) and "spool/snapshot.json" + "spool/manifest.json". A
 * snapshot newer than not_after_ms (the kill; 0 = no bound) is skipped for
 * the newest one before it. Returns 0, -ENOENT (no spool matches) or
 * -errno; ret (may be NULL) says what was added. Blocks on file reads. */
int spool_attach(struct bundle *b, const char *const *dirs, size_t n_dirs,
		 const char *cgroup_path, uint64_t not_after_ms,
		 struct spool_info *ret);
