/* SPDX-License-Identifier: Apache-2.0 */
/* recorder: the sidecar's flight recorder. A ring of the last 600 samples
 * (per process RSS anon/file/shmem, swap, threads; the cgroup's usage and
 * limit), the processes seen (with their end time once gone), threshold
 * crossings with re-arm, and a growth prediction. Pure logic: the caller
 * samples /proc and the cgroup, and writes the JSON it gets back. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

struct json_object;

#define REC_RING_MAX 600
#define REC_MAX_THRESHOLDS 8
#define REC_REARM_POINTS 5.0 /* re-armed 5 points below the threshold */
#define REC_PREDICT_WINDOW 5 /* samples used for the growth rate */
#define REC_PROCS_MAX 1024   /* ended processes beyond this are dropped */

struct rec_thresholds {
	unsigned pct[REC_MAX_THRESHOLDS]; /* ascending, 1..100 */
	bool armed[REC_MAX_THRESHOLDS];
	size_t n;
};

/* Parses "80,90,95" (ascending after sorting, duplicates dropped, each
 * 1..100, at most REC_MAX_THRESHOLDS). All armed. Returns 0 or -EINVAL. */
int rec_thresholds_parse(const char *s, struct rec_thresholds *ret);

/* Feeds the current usage in percent of the limit. Returns the highest
 * threshold crossed upward since it was last armed (all crossed ones are
 * disarmed: one snapshot for a jump over several), or 0 when none. A
 * threshold is re-armed when pct falls REC_REARM_POINTS below it. */
unsigned rec_thresholds_update(struct rec_thresholds *t, double pct);

struct rec_proc_sample {
	int pid;
	int threads;
	uint64_t rss_kb, anon_kb, file_kb, shmem_kb, swap_kb;
};

/* A sample as recorder_add() takes it. */
struct rec_sample {
	uint64_t t_us;	  /* CLOCK_REALTIME */
	uint64_t mono_us; /* CLOCK_MONOTONIC */
	uint64_t usage;	  /* bytes: the cgroup's, else the RSS sum */
	uint64_t limit;	  /* bytes; 0 when unknown or unlimited */
	const struct rec_proc_sample *procs; /* the caller's, copied */
	size_t n_procs;
};

/* A sample as the ring keeps it. Its processes' figures are not kept as
 * they are (48 bytes a process) nor as text (about 96 bytes): each is
 * encoded against the same place in the sample before (recorder.c, a tag
 * byte and the figures that changed, as varints of the difference: one
 * byte for a process whose figures did not change), and text is made
 * only when the timeline is written. */
struct rec_slot {
	uint64_t t_us, mono_us, usage, limit;
	uint8_t *enc;	  /* malloc'd; unused for the oldest (in base) */
	uint32_t enc_len; /* bytes at enc */
	uint32_t n_procs;
};

/* The processes of one sample, decoded. */
struct rec_procs {
	struct rec_proc_sample *v;
	size_t n, cap;
};

struct rec_proc {
	int pid;
	char name[64];
	char *cmdline; /* redacted; owned */
	uint64_t first_us, last_us;
	uint64_t end_us; /* 0 while alive */
	uint64_t serial; /* the order seen in: a streamed write's place */
};

struct recorder {
	struct rec_slot ring[REC_RING_MAX];
	size_t head, count; /* oldest at head */
	uint64_t seq_first; /* the oldest sample's number (samples dropped) */
	struct rec_procs base; /* the oldest sample's processes */
	struct rec_procs last; /* the newest's: what the next is encoded on */
	struct rec_proc *procs;
	size_t n_procs;
	uint64_t next_serial;
	struct json_object *snapshots; /* array: what was taken and why */
	struct json_object *trims;     /* array: trims done (--trim) */
	struct json_object *jvms;      /* array: JVM facts at first sight */
	struct json_object *events;    /* array: findings before any kill */
	uint64_t last_snapshot_mono_us;
	bool any_snapshot;
};

void recorder_init(struct recorder *r);
void recorder_release(struct recorder *r);

/* Appends a sample (its processes copied, encoded) and drops the oldest
 * beyond REC_RING_MAX. Returns 0, or -ENOMEM with the ring as it was. */
int recorder_add(struct recorder *r, const struct rec_sample *s);

/* The i-th sample, 0 = oldest; NULL when out of range. */
const struct rec_slot *recorder_sample(const struct recorder *r, size_t i);

/* Notes a process as alive at t_us (adds it when new; name and cmdline
 * copied). Beyond REC_PROCS_MAX entries the oldest ended process is
 * forgotten (a shell loop must not grow the timeline forever). Returns 0
 * or -ENOMEM. */
int recorder_proc_seen(struct recorder *r, int pid, const char *name,
		       const char *cmdline, uint64_t t_us);
/* Marks a process as gone at t_us (no-op when unknown or already gone). */
void recorder_proc_ended(struct recorder *r, int pid, uint64_t t_us);
/* True when pid is known and not ended. */
bool recorder_proc_alive(const struct recorder *r, int pid);

/* Seconds until usage reaches the limit at the growth rate of the last
 * `window` samples (least squares), or a negative value when the limit is
 * unknown, usage is not growing, or there are fewer than 3 samples. */
double recorder_predict_s(const struct recorder *r, size_t window);

/* Records a snapshot in the timeline ("reason": "threshold-90",
 * "predicted", …; dir relative to the spool). */
int recorder_note_snapshot(struct recorder *r, uint64_t t_us, uint64_t mono_us,
			   const char *reason, const char *dir, uint64_t usage,
			   uint64_t limit);

/* Completes the newest snapshot entry: "completed_ms" and "after_kill"
 * (the cgroup saw an OOM kill while it ran: not pre-kill data). Returns
 * 0, or -ENOENT when no snapshot was noted. */
int recorder_note_snapshot_end(struct recorder *r, uint64_t t_us,
			       bool after_kill);

/* Takes facts (a JSON object, reference taken) about a JVM into "jvms". */
int recorder_note_jvm(struct recorder *r, struct json_object *facts);

/* A finding made before any kill, "events":[{"t_ms","kind","pid","text"}]
 * (kind e.g. "jvm-configured-to-outgrow"). */
int recorder_note_event(struct recorder *r, uint64_t t_us, const char *kind,
			int pid, const char *text);

/* Records a trim of pid (--trim): the command and VmRSS before/after in
 * bytes, "trims":[{"t_ms","pid","command","rss_before","rss_after"}]. */
int recorder_note_trim(struct recorder *r, uint64_t t_us, int pid,
		       const char *command, uint64_t rss_before,
		       uint64_t rss_after);

/* Builds timeline.json: {"schema":"oomlens.io/timeline/v1", "cgroup",
 * "interval_ms", "samples":[{"t_ms","usage","limit","procs":[…]}],
 * "processes":[{"pid","name","cmdline","first_ms","last_ms","end_ms"}],
 * "snapshots":[…], "trims":[…], "jvms":[…], "events":[…]}. New reference, NULL
 * on allocation failure. */
struct json_object *recorder_timeline_json(const struct recorder *r,
					   const char *cgroup,
					   unsigned interval_ms);

/* The same document as text, appended to out whole (tests; the sidecar
 * streams it, below). Returns 0, -ENOMEM or -E2BIG. */
int recorder_timeline_write(const struct recorder *r, const char *cgroup,
			    unsigned interval_ms, struct strbuf *out);

/* Where a streamed timeline.json is. Caller-owned: rec_cursor_init(),
 * recorder_timeline_next() until it returns 0, rec_cursor_release(). */
struct rec_cursor {
	const char *cgroup; /* borrowed: lives until the release */
	unsigned interval_ms;
	unsigned part;		/* the text's section (recorder.c) */
	bool any;		/* the section has an element written */
	uint64_t seq;		/* samples: the next one's number */
	uint64_t serial;	/* processes: the next one's serial, at least */
	size_t idx;		/* snapshots, trims, jvms, events: next index */
	struct rec_procs procs; /* the last sample written, decoded */
};

void rec_cursor_init(struct rec_cursor *c, const char *cgroup,
		     unsigned interval_ms);
void rec_cursor_release(struct rec_cursor *c);

/* timeline.json piece by piece, the same bytes as recorder_timeline_json()
 * printed by json-c (JSON_C_TO_STRING_PLAIN | NOSLASHESCAPE): appends
 * whole elements (a sample, a process, a snapshot...) to out until it
 * holds at least want bytes or the text is complete. For the sidecar's
 * rewrite once a second: call it with r locked, write out with r
 * unlocked, and again; no more than a chunk of the text is in memory.
 * Between two calls r may change: a sample dropped from the ring before
 * its turn is left out, one added before the samples' end is written,
 * every process is written once, in the order seen, and one forgotten
 * before its turn is left out. Does not block. Returns 1 while more
 * follows, 0 once the text is complete, -ENOMEM, or -E2BIG when an
 * element does not fit out's max (out then as it was before it). */
int recorder_timeline_next(const struct recorder *r, struct rec_cursor *c,
			   struct strbuf *out, size_t want);
