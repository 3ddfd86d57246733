/* SPDX-License-Identifier: Apache-2.0 */
/* The publish queue: each kill's way to a publish target (pubtarget.h:
 * the Kubernetes API in cluster mode, target_kube.c; a collector's HTTPS
 * URL in standalone mode, target_http.c), durable in the state directory
 * (queue/<id>.json, one file per item, written atomically after every
 * step) so that a restart resumes where it stopped. The queue runs an
 * item's steps, the target's, in their order; a failed step is retried
 * with exponential backoff and jitter, capped, or given up as the target
 * classifies it: then the item moves to queue/failed/ (the newest 64 are
 * kept). A target's steps repeat safely (a name or a key the server knows
 * the kill by), so a step repeated after a crash or a lost answer is not
 * a second kill. Single-threaded: the publisher thread (publisher.h).
 *
 * Metrics (obs/metrics_agent.h, docs/metrics.md): the queue's depth each
 * time it changes (loaded, added, done, given up); each failed call by
 * pub_failure_reason(); and, once a kill, the time from its killed_at_ms
 * to the target's delivering step done. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "publish/pubtarget.h"

struct corr_kill;
struct agent_verdict;
/* The kill's facts every target tells (its id, bundle file, node, time,
 * victim, cgroup, figures, verdict), into it (zeroed first): the
 * detector's, once the bundle is saved. Pure. */
void pub_item_from_kill(struct pub_item *it, const struct corr_kill *k,
			const struct agent_verdict *v, const char *id,
			const char *node, uint64_t kill_ms);
/* The verdict ("unknown" when it has none), summary and, when known, the
 * diagnosis's limit and usage into it. Pure. */
void pub_item_set_verdict(struct pub_item *it, const struct agent_verdict *v);

struct pub_backoff {
	uint64_t base_ms; /* default 500 */
	uint64_t cap_ms;  /* default 60000 */
};

struct pub_stats {
	uint64_t published, failed, retries;
};

struct pubqueue;

struct agent_metrics;
/* A file <id>.case.tar.gz beside an item: the kill's case, whose bundle
 * the detector has yet to write (../run_late_snap.c); it takes the item
 * with pubqueue_take() once the bundle is written, and removes the case. */
#define PUBQUEUE_CASE_SUFFIX ".case.tar.gz"
/* Whether the case of the id (its first id_len bytes) lies in queue_fd
 * (the queue's directory; a regular file, a symlink is not). */
bool pubqueue_has_case(int queue_fd, const char *id, size_t id_len);

/* Opens state_fd/queue (made when missing) and loads the items left by a
 * previous run for target t, in kill order (an item of another target is
 * moved to queue/failed/, logged; an item with a case beside it is left
 * to the detector, counted by pubqueue_unfinished()). t is kept, and m (the
 * run's metrics, which must outlive the queue; NULL: none), fed the queue's
 * depth, publish latencies and failures. Returns 0 or -errno. */
int pubqueue_open(int state_fd, const struct pub_target *t,
		  const struct pub_backoff *b, struct agent_metrics *m,
		  struct pubqueue **ret);
void pubqueue_free(struct pubqueue *q);
/* Saves it in state_fd/queue at t's first step (t->first), from any
 * thread and without the queue:
 * the detector stages each kill there as soon as its bundle is on disk.
 * That file is the hand-over: the publisher takes it with
 * pubqueue_take(), and an agent killed before it did loads it at its next
 * start (pubqueue_open). Returns 0, -EINVAL for an id that is no file
 * name, or -errno of the write. */
int pubqueue_stage(int state_fd, const struct pub_target *t,
		   const struct pub_item *it);
/* The item staged as queue/<id>.json in state_fd, for target t, into
 * *ret: 0, -EINVAL for an id that is no file name, -ENOENT, -EXDEV
 * (another target's), -EBADMSG, -errno of the read. */
int pubqueue_read(int state_fd, const struct pub_target *t, const char *id,
		  struct pub_item *ret);
/* Whether queue/<id>.json is staged or queued in state_fd (a regular
 * file; a symlink is not). */
bool pubqueue_staged(int state_fd, const char *id);
/* Queues the staged item <id> (queue/<id>.json, read as pubqueue_open
 * reads it; nothing written). Returns 0, -EEXIST when that id is already
 * queued (loaded at the start, then handed over), -ENOENT when nothing is
 * staged under it, -ENOSPC past the most items (the file stays for a
 * later start), -errno of the read; an item that cannot be parsed is
 * moved to queue/failed/ and logged. */
int pubqueue_take(struct pubqueue *q, const char *id);
/* pubqueue_stage() into the queue's directory, then pubqueue_take(): for
 * callers that hold the item (tests, tools). -EEXIST when queued. */
int pubqueue_add(struct pubqueue *q, const struct pub_item *it);
/* Calls fn with the bundle_file (state-dir relative, "reports/<id>.tar.gz")
 * of every item saved in state_fd/queue, staged or taken by the publisher:
 * the bundles the queue still needs, which node-local retention spares
 * (kill/reports.c). Items in queue/failed/ are not read: nothing publishes
 * them again. An item that cannot be read is skipped (the queue moves it
 * to failed/ when it loads). Any thread; reads the directory, blocks on
 * disk I/O only. Returns the number of items read or -errno (the
 * directory cannot be opened; -ENOENT before the first kill). */
int pubqueue_bundles(int state_fd,
		     void (*fn)(const char *bundle_file, void *ud), void *ud);
/* Runs every item that is due at now_ms until it is done or waits.
 * *ret_next_ms (optional): when the next one is due, UINT64_MAX for none.
 * Returns the number of items finished (published or failed). Blocks in
 * the target's steps. */
int pubqueue_run(struct pubqueue *q, uint64_t now_ms, uint64_t *ret_next_ms);
size_t pubqueue_depth(const struct pubqueue *q);
/* The items the start left to the detector: their case beside them. */
size_t pubqueue_unfinished(const struct pubqueue *q);
/* state_fd/queue (made when missing, never through a link), an O_PATH
 * descriptor (mkdir_p_open_at) for the files a caller keeps beside the
 * items: an fd or -errno. */
int pubqueue_dir_open(int state_fd);
/* The item at index i (0 = oldest), for tests and metrics; NULL past the
 * end. */
const struct pub_item *pubqueue_item(const struct pubqueue *q, size_t i);
const struct pub_stats *pubqueue_stats(const struct pubqueue *q);
/* The name of item it's step in q's target ("done" past the last). */
const char *pubqueue_step_name(const struct pubqueue *q,
			       const struct pub_item *it);
/* The label oomlens_publish_failures_total counts a failed call under:
 * one of "timeout", "connect" (refused, reset, unreachable), "tls",
 * "unauthorized" (401), "forbidden" (403), "not_found" (404), "conflict"
 * (409 Conflict), "throttled" (429), "too_large" (413, etcd's size
 * limit), "http_4xx", "http_5xx" (the other statuses), "other" (no call:
 * memory, a local error); NULL for -ECANCELED (the agent stopping, not a
 * failure). From r (the -errno of kube.h's table) and e's HTTP status,
 * never from a message: a small, fixed set. Pure; e may be NULL. */
const char *pub_failure_reason(int r, const struct kube_error *e);
/* One failed call of a target (r < 0, e as the call filled it) in
 * oomlens_publish_failures_total under pub_failure_reason(); nothing for
 * -ECANCELED. The queue counts each step's failed try itself (retried or
 * given up); a step that ignores a failure of its own (the Kubernetes
 * target: a bundle refused as too large, a status it goes on without)
 * calls this. Any thread. */
void pub_count_failure(struct agent_metrics *m, int r,
		       const struct kube_error *e);
/* The bundle file (state_fd relative, "reports/<id>.tar.gz"; never
 * through a symlink), at most max bytes, into a malloc'd buffer: 0 or
 * -errno (-E2BIG over max). Blocks on disk I/O. */
int pub_read_bundle(int state_fd, const char *file, size_t max, void **ret,
		    size_t *ret_len);
/* The delay after the n-th failure (n >= 1): base * 2^(n-1), capped,
 * times a jitter factor j in [0.75, 1.25]. Pure. */
uint64_t pub_backoff_ms(const struct pub_backoff *b, unsigned n, double j);
