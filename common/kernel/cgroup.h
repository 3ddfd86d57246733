/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup: the memory controller, v1 or v2, read through the host root.
 * Paths ("/demo/app") are relative to the directory cgroup_fs_open()
 * opened: the hierarchy's root on a host, a subtree inside a container.
 * The kernel prints them from the root of the whole hierarchy: map them
 * with cgroup_mount.h first. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/host.h"

enum cgroup_mode {
	CGROUP_NONE = 0, /* no memory controller found */
	CGROUP_V1 = 1,	 /* <root>/sys/fs/cgroup/memory */
	CGROUP_V2 = 2,	 /* unified, "memory" in cgroup.controllers */
};

struct cgroup_fs {
	enum cgroup_mode mode;
	int mem_fd; /* directory fd of the memory hierarchy's root */
};

/* Finds the memory hierarchy under h. Returns 0 (ret->mode set), -ENOENT
 * when there is none. ret->mem_fd is owned by ret: cgroup_fs_close(). */
int cgroup_fs_open(const struct host *h, struct cgroup_fs *ret);
void cgroup_fs_close(struct cgroup_fs *fs);

/* A value that may be absent, unlimited or unparsable is kept apart. */
enum cgroup_value_state {
	CGV_ABSENT = 0, /* file does not exist in this mode/kernel */
	CGV_OK,
	CGV_UNLIMITED, /* "max" (v2) or the v1 PAGE_COUNTER_MAX value */
	CGV_BAD,       /* unparsable */
};

struct cgroup_value {
	enum cgroup_value_state state;
	uint64_t v; /* bytes or count; 0 unless CGV_OK */
};

struct cgroup_events {
	/* v2 memory.events (or .local); v1: oom_kill from memory.oom_control,
	 * oom = under_oom transitions are not counted (0). */
	uint64_t low, high, max, oom, oom_kill, oom_group_kill;
	bool under_oom;	       /* v1 memory.oom_control under_oom */
	bool oom_kill_disable; /* v1 memory.oom_control oom_kill_disable */
	bool has_oom_kill; /* the kernel reports oom_kill at all (v1 ≥ 4.13) */
};

struct cgroup_stat_entry {
	char name[48];
	uint64_t value;
};

struct cgroup_stat {
	struct cgroup_stat_entry *e;
	size_t n;
};

struct cgroup_state {
	struct cgroup_value usage; /* memory.current | memory.usage_in_bytes */
	struct cgroup_value limit; /* memory.max | memory.limit_in_bytes */
	struct cgroup_value peak;  /* memory.peak | memory.max_usage_in_bytes */
	struct cgroup_value swap;  /* memory.swap.current | memsw − usage */
	struct cgroup_value failcnt; /* v1 memory.failcnt */
	struct cgroup_events events;
	struct cgroup_events events_local; /* v2 memory.events.local */
	bool has_events_local;
	struct cgroup_stat stat; /* memory.stat */
	bool oom_group;		 /* v2 memory.oom.group */
};

void cgroup_stat_release(struct cgroup_stat *s);
void cgroup_state_release(struct cgroup_state *s);
/* Value of a memory.stat key; false when absent. */
bool cgroup_stat_get(const struct cgroup_stat *s, const char *name,
		     uint64_t *ret);

/* Pure parsers (no I/O). Return 0, -EBADMSG on malformed input. */
int cgroup_parse_events(const char *buf, size_t len, struct cgroup_events *ret);
int cgroup_parse_oom_control(const char *buf, size_t len,
			     struct cgroup_events *ret);
int cgroup_parse_stat(const char *buf, size_t len, struct cgroup_stat *ret);
/* cgroup.procs: appends each pid (1..INT32_MAX) not already in pids, up to
 * max in all; malformed lines are skipped. Returns the number added. */
size_t cgroup_parse_procs(const char *buf, size_t len, int *pids, size_t *n,
			  size_t max);
/* One value file: "max" → CGV_UNLIMITED; v1 limits ≥ 2^62 → CGV_UNLIMITED. */
void cgroup_parse_value(const char *buf, size_t len, enum cgroup_mode mode,
			struct cgroup_value *ret);

/* Reads everything above for the cgroup at path ("/" for the root).
 * -ENOENT when the cgroup is gone; files that are missing leave their
 * field CGV_ABSENT. Blocks on file reads only. */
int cgroup_read_state(const struct cgroup_fs *fs, const char *path,
		      struct cgroup_state *ret);
int cgroup_read_events(const struct cgroup_fs *fs, const char *path,
		       struct cgroup_events *ret);

/* One file of the cgroup at path (name: "cgroup.procs",
 * "memory.oom.group"…) into sb, at most max bytes: 0, -ENOENT when the
 * cgroup or the file is gone, or read_file_at's errors. */
struct strbuf;
int cgroup_read_file(const struct cgroup_fs *fs, const char *path,
		     const char *name, size_t max, struct strbuf *sb);

/* Copies the raw cgroup files (memory.stat, memory.events[.local],
 * memory.current/max/peak/oom_control/… whichever exist) of path, calling
 * fn(name, data, len) for each; for the bundle's cgroup/ directory. */
int cgroup_dump_files(const struct cgroup_fs *fs, const char *path,
		      int (*fn)(const char *name, const char *data, size_t len,
				void *userdata),
		      void *userdata);

/* Notifications. One watcher per process, driven from an epoll loop:
 * v2 inotify IN_MODIFY on memory.events.local (memory.events on kernels
 * without it); v1 eventfd registered through cgroup.event_control on
 * memory.oom_control (needs a writable cgroup mount; on a read-only one
 * the cgroups are watched without it: cgroup_watch_unnotified());
 * inotify IN_CREATE/IN_DELETE/IN_MOVED_* on every watched directory and on
 * the parent of each subtree root, so cgroups created later (at any depth)
 * are watched too. Not thread-safe: one thread owns it. Costs per cgroup:
 * one inotify watch (two on v2), and on v1 two fds (eventfd +
 * memory.oom_control) — mind RLIMIT_NOFILE and max_user_watches.
 *
 * Counting kills. oom_kill is read per cgroup, LOCAL to it (v1
 * memory.oom_control oom_kill; v2 memory.events.local), so a kill is
 * counted in the cgroup of the killed task, not in the ancestor that hit
 * its limit. The sum of oom_kill_delta over all CGE_OOM events of a cgroup
 * equals the kills the kernel counted there since it was first watched.
 * Use delta > 0 events to trigger a bundle, then match the kmsg report by
 * task_memcg. */
struct cgroup_watch;

enum cgroup_event_type {
	/* The OOM notification fired for path, or its oom_kill grew.
	 * oom_kill_delta 0 (v1 only) means the kernel signalled an OOM here but
	 * counted no kill (yet): v1 signals the cgroup that hit its limit AND
	 * all its descendants, and sometimes before oom_kill is incremented.
	 * The agent needs to do nothing for 0: the watcher re-reads oom_kill by
	 * itself (its own timerfd, at +2, +10, +50, +250 ms and +1 s) and
	 * reports the late count as another CGE_OOM with delta > 0. No such
	 * event after ~1 s: the OOM ended without a kill in this cgroup. */
	CGE_OOM,
	CGE_ADDED,   /* a new cgroup under a watched subtree (not for the
			cgroups present at cgroup_watch_add_tree()) */
	CGE_REMOVED, /* a watched cgroup went away (rmdir/rename); on v1 the
			eventfd's rmdir signal is turned into this, never into
			CGE_OOM */
};

struct cgroup_event {
	enum cgroup_event_type type;
	const char *path;	 /* valid during the callback */
	uint64_t oom_kill;	 /* counter after the event (CGE_OOM) */
	uint64_t oom_kill_delta; /* since the last event for this cgroup */
	uint64_t mono_us;	 /* CLOCK_MONOTONIC when noticed */
	/* CLOCK_MONOTONIC of the read before, which still gave the old count
	 * (0 = none): the kills counted in oom_kill_delta came after it. */
	uint64_t since_us;
};

/* Creates a watcher on fs (fs->mem_fd is duplicated: fs may be closed
 * first). Returns 0 or -errno (-EINVAL when fs has no memory controller). */
int cgroup_watch_new(const struct cgroup_fs *fs, struct cgroup_watch **ret);
/* Frees w and closes every fd it owns; NULL is a no-op. */
void cgroup_watch_free(struct cgroup_watch *w);

/* Watches every memory cgroup under subtree (subtree included), now and
 * later. -ENOENT when subtree does not exist, -EINVAL for a path with
 * "..", "." or empty components. Adding a subtree twice (or one inside
 * another) watches each cgroup once. Emits no CGE_ADDED for what exists
 * now. If the subtree root is removed and created again, it and its
 * children come back as CGE_ADDED. */
int cgroup_watch_add_tree(struct cgroup_watch *w, const char *subtree);

/* One fd to poll for readability (an epoll fd of the watcher's own). */
int cgroup_watch_fd(const struct cgroup_watch *w);

/* Handles whatever is ready without blocking, calling fn per event (also
 * the events queued by cgroup_watch_rescan()). Returns the number of
 * events, or -errno when nothing was delivered and something failed (e.g.
 * a new cgroup could not be watched: log it; a rescan retries). */
int cgroup_watch_dispatch(struct cgroup_watch *w,
			  void (*fn)(const struct cgroup_event *ev,
				     void *userdata),
			  void *userdata);

/* A safety net for the agent's timer (every few seconds is plenty): walks
 * the subtrees again (cgroups missed, e.g. after an inotify queue overflow,
 * become CGE_ADDED; vanished ones CGE_REMOVED) and re-reads every oom_kill
 * (growth becomes CGE_OOM). Queues the events and makes cgroup_watch_fd()
 * readable; they are delivered by the next cgroup_watch_dispatch().
 * Returns the number of events queued, or -errno. Not needed for normal
 * operation: inotify delivers IN_CREATE for mkdir on cgroupfs (measured on
 * v1 6.18 and v2 6.1). Needed when kernfs says nothing: on v2 a cgroup's
 * memory files appear only when its parent delegates memory
 * (cgroup.subtree_control), with no inotify event; the watcher retries by
 * itself for ~1 s after the mkdir, a later delegation is found only here.
 * Reads one file per cgroup. */
int cgroup_watch_rescan(struct cgroup_watch *w);

/* Re-reads every watched oom_kill now, without walking the tree: growth
 * is queued as CGE_OOM (delivered by the next cgroup_watch_dispatch()), and
 * every read bounds the since_us of the next event. For the moment a kill
 * is seen in the kernel log without its cgroup. Returns the number of
 * events queued, or -errno. */
int cgroup_watch_recount(struct cgroup_watch *w);

/* v1 only: an errno (EROFS: the cgroup mount is read-only) when
 * cgroup.event_control could not be written, 0 otherwise. The cgroups are
 * then watched for coming and going only: a kill is seen from the kernel
 * log, or counted by the next cgroup_watch_rescan() or
 * cgroup_watch_recount() (no CGE_OOM of its own). */
int cgroup_watch_unnotified(const struct cgroup_watch *w);

/* Number of cgroups currently watched (for /metrics and tests). */
size_t cgroup_watch_count(const struct cgroup_watch *w);

/* Changes each time a cgroup is added to the watch (inotify or rescan):
 * lets a periodic walker of the same tree (the agent's forecast) pick up
 * a new container at once instead of at its next walk. 0 for NULL. */
uint32_t cgroup_watch_generation(const struct cgroup_watch *w);

/* True when path equals subtree or lies below it ("/a" covers "/a/b",
 * not "/ab"). */
bool cgroup_path_within(const char *path, const char *subtree);
