/* SPDX-License-Identifier: Apache-2.0 */
/* spool: the sidecar's output directory, read by the agent.
 *
 *   DIR/manifest.json            {"schema":SPOOL_SCHEMA,"cgroup":"/demo/app"
 *                                 or null,"pids":[…],…}
 *   DIR/timeline.json            flight recorder (recorder.h), rewritten
 *                                atomically at most once a second
 *   DIR/snapshots/<time>/        newest 3 (and the newest with a JVM's
 *                                answer when those have none);
 *                                <time> = 20261130T101500.123Z
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

/* What one kill may make the agent read from a pod: the files of its
 * spool together (a sparse file counts by its size: its zeros are read),
 * or its uploaded snap-<pod> once inflated. Past it, files are left out
 * and listed in the manifest's truncated[]; each file also has its cap. */
#define SPOOL_POD_BUDGET (16u << 20)

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

/* Whether snapshot name (in the snapshots directory snap_fd) holds the
 * jvm/ outputs of a JVM that answered its attach. A JVM at its limit often
 * stops answering: the writer keeps the newest such snapshot for the
 * reader's fill (spool_attach takes jvm/ from it). */
bool spool_snapshot_jvm_answered(int snap_fd, const char *name);

/* The writer's pruning: keeps the newest `keep` complete snapshots, and,
 * when none of those holds a JVM's answer, the newest older one that
 * does — a JVM near its limit stops answering, snapshots then come every
 * second or two, and its last answer (heap, class histogram) would be
 * pruned before the kill that needs it. */
void spool_prune(int snap_fd, size_t keep);

/* Parses a spool's manifest.json, buf[0..len) (a pod wrote it; need not
 * end in NUL): copies its "cgroup" string to ret (size bytes), or "" for a
 * pids-only spool (no "cgroup" string but a "schema" string). Returns 0,
 * -EBADMSG (not one JSON object) or -ENOENT (not a spool's manifest, or a
 * cgroup that holds a NUL or does not fit); ret untouched on failure.
 * Pure. */
int spool_parse_manifest(const char *buf, size_t len, char *ret, size_t size);

/* "t_ms" of a snapshot's snapshot.json, buf[0..len) (a pod wrote it); 0
 * when it is not a JSON object, has no unsigned t_ms, or says
 * "after_kill": true (taken after a kill: never the pre-kill one). Pure. */
uint64_t spool_parse_snapshot_time(const char *buf, size_t len);

/* True when the spool's cgroup and the killed one are the same, or one
 * lies below the other ("/a" ~ "/a/b", not "/ab"). Pure. */
bool spool_cgroup_matches(const char *spool_cgroup, const char *killed);

/* Spools looked at and not believed (their claim disagrees with where
 * they were found). Filled by spool_find/spool_attach whatever they return;
 * n counts them all, the first ARRAY_SIZE(dir) are named. */
struct spool_ignored {
	size_t n;
	char dir[4][512];
	char why[4][256];
};

/* True when a component of cgroup names the pod with this UID: "pod<uid>"
 * (cgroupfs driver) or "…-pod<uid with '_'>.slice" (systemd). Pure. */
bool spool_cgroup_in_pod(const char *cgroup, const char *uid);

/* Finds, among dirs (each a spool, a directory whose subdirectories are
 * spools, or the kubelet's pods directory: <uid>/volumes/
 * kubernetes.io~empty-dir/<spool>), the spool for cgroup_path (exact match
 * preferred, then the deepest related one). The dirs are the operator's;
 * everything below them is a pod's: opened without following a symlink,
 * read with caps and a deadline, and attributed by where it was found. A
 * spool under a kubelet pod directory matches only kills in that pod, and
 * its manifest's "cgroup" must name a cgroup of that pod (else it is
 * ignored and listed in ignored, which may be NULL). Elsewhere a manifest
 * claiming an ancestor of cgroup_path is ignored the same way. Returns 0
 * with ret->dir/cgroup set, -ENOENT when none matches. Reads manifests
 * only; bounded by a 10 s deadline. */
int spool_find(const char *const *dirs, size_t n_dirs, const char *cgroup_path,
	       struct spool_ignored *ignored, struct spool_info *ret);

/* spool_find() + adds to the bundle: "timeline.json" (BUNDLE_HIGH), the
 * newest snapshot's processes/<pid>/… (BUNDLE_NORMAL; pmap.txt
 * BUNDLE_LOW) and "spool/snapshot.json" + "spool/manifest.json". A
 * snapshot newer than not_after_ms (the kill; 0 = no bound) is skipped for
 * the newest one before it. Only regular files are copied (symlinks, FIFOs
 * and devices are skipped), at most 2048 files 4 levels below processes/,
 * 8 MiB each, within a 10 s deadline. Returns 0, -ENOENT (no spool
 * matches) or -errno; ret (may be NULL) says what was added. */
int spool_attach(struct bundle *b, const char *const *dirs, size_t n_dirs,
		 const char *cgroup_path, uint64_t not_after_ms,
		 struct spool_ignored *ignored, struct spool_info *ret);

/* The directory processes/<pid>/ of a bundle's snapshot that is the
 * kernel's victim: its pid and comm (the kernel's pid is the node's, the
 * snapshot's the pod's: equal only outside a pid namespace) and rss_kb,
 * its anon + file + shmem RSS at the kill. The same pid with the same
 * name wins; else, among the processes of that name, the one whose RSS
 * is nearest. Returns the snapshot's pid, or -1 when no process has the
 * name (nothing is guessed). */
int spool_victim_pid(const struct bundle *b, int pid, const char *comm,
		     uint64_t rss_kb);
