/* SPDX-License-Identifier: Apache-2.0 */
/* The publish queue: each kill's way into the API, durable in the state
 * directory (queue/<id>.json, one file per item, written atomically after
 * every step) so that a restart resumes where it stopped. Steps, in order:
 *
 *   RESOLVE the pod and container of a kill the detector's pod cache did
 *           not know yet (a pod created and killed while the watch was
 *           away): found among the node's pods by UID; a failed list is
 *           retried like any step, only a list without it says "gone"
 *   REPORT  create OOMReport <id> (status phase Publishing)
 *   BUNDLE  create OOMBundle <id> (owner: the report; from the bundle file
 *           already saved on the node)
 *   STATUS  patch the report's status: phase Ready, bundle name
 *   EVENT   the Warning Event on the pod (skipped when the pod is gone)
 *   DONE    the file is removed
 *
 * Names are deterministic, so a step repeated after a crash or a lost
 * answer gets 409 AlreadyExists, which counts as done. Retryable failures
 * (transport, 429, 5xx, 401/403 while RBAC is fixed) back off exponentially
 * with jitter, capped; anything else (400, 422) moves the item to
 * queue/failed/. The API calls come through struct pub_ops so the state
 * machine is tested without a server. Single-threaded: the kube thread.
 *
 * Metrics (obs/metrics_agent.h, docs/metrics.md): the queue's depth each
 * time it changes (loaded, added, done, given up); each failed call by
 * pub_failure_reason(); and, once a kill, the time from its killed_at_ms
 * to its report and bundle stored (the BUNDLE step done). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/kube.h"

enum pub_step {
	PUB_RESOLVE,
	PUB_REPORT,
	PUB_BUNDLE,
	PUB_STATUS,
	PUB_EVENT,
	PUB_DONE
};

struct pub_item {
	char id[96]; /* report, bundle and file name */
	char ns[64], pod[254], pod_uid[40], container[64], container_id[72];
	char node[254], killed_at[32], comm[32];
	int64_t killed_at_ms; /* the kill, wall ms; 0 unknown */
	int64_t pid, anon_rss, file_rss, shmem_rss, limit, usage;
	char verdict[32], summary[320];
	/* the pod's top controller (cluster_pod); "" when not known */
	char workload_kind[64], workload[254];
	char bundle_file[128]; /* under the state dir: reports/<id>.tar.gz */
	/* progress */
	enum pub_step step;
	char report_uid[64];
	bool bundle_stored; /* false: too large, the report says so */
	bool pod_gone;
	unsigned attempts; /* failures of the current step */
	uint64_t next_ms;  /* not before (monotonic ms); not persisted */
	uint64_t added_ms; /* wall ms, keeps the kill order across restarts */
	unsigned event_count;
	char last_error[160];
};

struct pub_ops {
	/* Create the report; fill ret_uid (metadata.uid). */
	int (*create_report)(void *ud, const struct pub_item *it, char *ret_uid,
			     size_t size, struct kube_error *err);
	/* The stored report's uid (after a 409). */
	int (*get_report_uid)(void *ud, const struct pub_item *it,
			      char *ret_uid, size_t size,
			      struct kube_error *err);
	/* Create the bundle from data (the file's bytes). */
	int (*create_bundle)(void *ud, const struct pub_item *it,
			     const void *data, size_t len,
			     struct kube_error *err);
	/* After a 409 on the bundle: 1 the stored one's data is data (ours,
	 * from before a crash or a lost answer), 0 it is not (another
	 * writer's, planted under the name: logged and deleted by its uid,
	 * so that the next create stores ours; or gone meanwhile), < 0 not
	 * known (retried). */
	int (*bundle_is_ours)(void *ud, const struct pub_item *it,
			      const void *data, size_t len,
			      struct kube_error *err);
	int (*patch_status)(void *ud, const struct pub_item *it,
			    struct kube_error *err);
	/* 1 the pod (by uid) is there, 0 it is gone, < 0 unknown. */
	int (*pod_alive)(void *ud, const struct pub_item *it,
			 struct kube_error *err);
	/* Create or bump the pod's Event; *ret_count the count now. */
	int (*post_event)(void *ud, const struct pub_item *it,
			  unsigned *ret_count, struct kube_error *err);
	/* Reads the bundle file (state-dir relative) into a malloc'd buffer. */
	int (*read_bundle)(void *ud, const char *file, void **ret,
			   size_t *ret_len);
	/* Names it->ns, it->pod and it->container from it->pod_uid and
	 * it->container_id (the pod gone: the caller's fallback names).
	 * < 0 when the pods could not be listed (retried). NULL: skipped. */
	int (*resolve)(void *ud, struct pub_item *it, struct kube_error *err);
};

struct pub_backoff {
	uint64_t base_ms; /* default 500 */
	uint64_t cap_ms;  /* default 60000 */
};

struct pub_stats {
	uint64_t published, failed, retries, pod_gone, conflicts;
	uint64_t planted; /* bundles under our name not ours, replaced */
};

struct pubqueue;

struct agent_metrics;
/* Opens state_fd/queue (made when missing) and loads the items left by a
 * previous run, in kill order. ops/ud are kept, and m (the run's metrics,
 * which must outlive the queue; NULL: none), fed the queue's depth,
 * publish latencies and failures. Returns 0 or -errno. */
int pubqueue_open(int state_fd, const struct pub_ops *ops, void *ud,
		  const struct pub_backoff *b, struct agent_metrics *m,
		  struct pubqueue **ret);
void pubqueue_free(struct pubqueue *q);
/* Saves it in state_fd/queue (step REPORT, or RESOLVE when its pod or
 * container is not named yet), from any thread and without the queue:
 * the detector stages each kill there as soon as its bundle is on disk.
 * That file is the hand-over: the publisher takes it with
 * pubqueue_take(), and an agent killed before it did loads it at its next
 * start (pubqueue_open). Returns 0, -EINVAL for an id that is no file
 * name, or -errno of the write. */
int pubqueue_stage(int state_fd, const struct pub_item *it);
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
 * the ops. */
int pubqueue_run(struct pubqueue *q, uint64_t now_ms, uint64_t *ret_next_ms);
size_t pubqueue_depth(const struct pubqueue *q);
/* The item at index i (0 = oldest), for tests and metrics; NULL past the
 * end. */
const struct pub_item *pubqueue_item(const struct pubqueue *q, size_t i);
const struct pub_stats *pubqueue_stats(const struct pubqueue *q);
const char *pub_step_name(enum pub_step s);
/* The label oomlens_publish_failures_total counts a failed call under:
 * one of "timeout", "connect" (refused, reset, unreachable), "tls",
 * "unauthorized" (401), "forbidden" (403), "not_found" (404), "conflict"
 * (409 Conflict), "throttled" (429), "too_large" (413, etcd's size
 * limit), "http_4xx", "http_5xx" (the other statuses), "other" (no call:
 * memory, a local error); NULL for -ECANCELED (the agent stopping, not a
 * failure). From r (the -errno of kube.h's table) and e's HTTP status,
 * never from a message: a small, fixed set. Pure; e may be NULL. */
const char *pub_failure_reason(int r, const struct kube_error *e);
/* One failed API call of the queue (r < 0, e as the call filled it) in
 * oomlens_publish_failures_total under pub_failure_reason(); nothing for
 * -ECANCELED. The queue counts each step's failed try itself (retried or
 * given up), and a bundle refused as too large; an ops call that ignores
 * a failure of its own calls this. Any thread. */
void pub_count_failure(struct agent_metrics *m, int r,
		       const struct kube_error *e);
/* The delay after the n-th failure (n >= 1): base * 2^(n-1), capped,
 * times a jitter factor j in [0.75, 1.25]. Pure. */
uint64_t pub_backoff_ms(const struct pub_backoff *b, unsigned n, double j);
