/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode (run without --standalone): the kube side (pod watch,
 * publish queue; cluster_kube.c, its own threads) and the detector side
 * (a pod map fed by the watch, cluster_pods.c). They meet only through
 * two evqueues: pods (kube -> detector) and kills (detector -> kube). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "publish/evqueue.h"
#include "forensics/bundle.h"
#include "kube/kube_node.h"
#include "publish/pubqueue.h"

#define CLUSTER_MAX_NS 32
#define CLUSTER_MAX_CTR 32

struct cluster_opts {
	const char *kubeconfig;	  /* else the in-cluster service account */
	const char *kubelet_root; /* host path, default /var/lib/kubelet */
	const char *node;	  /* $NODE_NAME */
	const char *namespaces[CLUSTER_MAX_NS];
	int n_namespaces; /* 0 = all */
	const char *exclude[CLUSTER_MAX_NS];
	int n_exclude;
	unsigned keep_per_namespace; /* default 50 */
	uint64_t max_age_s;	     /* default 30 d */
	/* the bundles of a namespace's reports together (spec.bundleSize),
	 * default 16 MiB */
	uint64_t max_bytes_per_namespace;
	uint64_t retention_interval_s; /* a round each, default 10 min */
};

/* Counters other threads (the HTTP server's /metrics, /readyz) read. */
struct agent_counters {
	atomic_uint_fast64_t kills;	     /* kills the detector reported */
	atomic_uint_fast64_t skipped;	     /* opted out / filtered */
	atomic_uint_fast64_t published;	     /* reports fully published */
	atomic_uint_fast64_t publish_failed; /* given up (queue/failed) */
	atomic_uint_fast64_t publish_retries;
	atomic_uint_fast64_t queue_depth;
	atomic_uint_fast64_t pods;	     /* pods in the cache */
	atomic_bool pods_synced;	     /* the first list arrived */
	atomic_uint_fast64_t last_api_ok_ms; /* wall ms of the last answer */
};

/* What the detector knows of one pod (a snapshot, moved through the pods
 * queue; the detector owns it once popped). Allocated with room for its
 * n containers only (at most CLUSTER_MAX_CTR): 208 bytes a container, not
 * 6.5 KiB a pod. */
struct cluster_pod {
	char uid[KUBE_UID_MAX], ns[64], name[254];
	enum kube_capture_mode capture;
	bool deleted;	/* a tombstone: forget uid */
	char *manifest; /* the bundle manifest's "pod" object, JSON text */
	/* the top of its owner chain (a Deployment above its ReplicaSet);
	 * "" when it has none or the agent may not read the owners */
	char workload_kind[64], workload[254];
	size_t n;
	struct {
		char name[64], id[KUBE_CTR_ID_MAX], last_id[KUBE_CTR_ID_MAX];
	} ctr[];
};
void cluster_pod_free(void *p);

struct cluster;

/* Cluster mode's /readyz: the pod watch has delivered its first list and
 * the API server answered within the last minute (the publisher asks for
 * /version when nothing else reached it for CLUSTER_API_PROBE_MS). Pure:
 * writes the reason into why (size bytes). */
#define CLUSTER_API_STALE_MS 60000
#define CLUSTER_API_PROBE_MS 20000
bool cluster_ready(const struct agent_counters *k, uint64_t now_ms, char *why,
		   size_t size);

/* A Warning Event that is not a kill's, for the publisher thread to post
 * (cluster_events.c). */
struct cluster_event {
	char ns[64], pod[254], uid[KUBE_UID_MAX];
	char field_path[280]; /* "spec.containers{NAME}" or "" */
	char reason[32];      /* OOMPredicted, OOMLensConfig */
	char message[1024];
};
/* A new Event (heap; NULL on ENOMEM) on pod ns/name/uid with reason; the
 * caller fills field_path and message. */
struct cluster_event *cluster_event_new(const char *ns, const char *pod,
					const char *uid, const char *reason);
/* Hands ev (heap) to the publisher thread, which posts it. Never blocks;
 * takes ev even on failure (-EAGAIN: the queue is full, logged). Any
 * thread. */
int cluster_event_queue(struct cluster *c, struct cluster_event *ev);

/* A pod's uploaded pre-kill snapshot (OOMBundle <ns>/snap-<pod>), asked
 * by the detector when the node shows no spool, fetched and checked by the
 * publisher thread (cluster_snap.c). At most CLUSTER_SNAP_WAIT at once. */
#define CLUSTER_SNAP_WAIT 16
struct cluster_snap {
	char id[96]; /* the report waiting for it */
	char ns[64], pod[254], uid[KUBE_UID_MAX];
	/* the answer: the snapshot's files (paths as in a report bundle:
	 * timeline.json, spool/…, processes/…), or NULL and why */
	struct bundle *files;
	size_t n_files;
	char why[300];
};
void cluster_snap_free(void *s);
/* The priority of a snapshot file in a report bundle, as spool_attach()
 * gives them; -1 for what a snapshot has no business giving (its own
 * manifest, diagnosis, report, kernel files). Pure. */
int cluster_snap_prio(const char *path);
/* Asks for s (heap; taken on success). -EAGAIN when the queue is full.
 * Never blocks. */
int cluster_snap_request(struct cluster *c, struct cluster_snap *s);
/* The answers (each a request with files or why filled), for the
 * detector's epoll. */
struct evqueue *cluster_snap_answers(struct cluster *c);

/* At most one OOMPredicted Event per container (pod UID + container name)
 * per FORECAST_WARN_EVERY_MS, for every container of a node (the one
 * warned longest ago is forgotten beyond CLUSTER_WARN_GATE). */
#define CLUSTER_WARN_GATE 512
struct cluster_warn_gate {
	struct {
		char key[320];
		uint64_t last_ms;
	} e[CLUSTER_WARN_GATE];
	size_t n;
};
/* True (and the time noted) when an Event for uid/container may go out
 * at now_ms. Pure; detector thread. */
bool cluster_warn_gate_pass(struct cluster_warn_gate *g, const char *uid,
			    const char *container, uint64_t now_ms);
/* The OOMPredicted message: usage, limit, growth and seconds left.
 * Returns its length or -E2BIG. Pure. */
int cluster_predicted_message(char *buf, size_t size, const char *container,
			      uint64_t usage, uint64_t limit, double slope,
			      double seconds);

struct agent_metrics;
/* Loads credentials (kubeconfig or in-cluster), checks NODE_NAME, makes
 * the client. counters and m (the run's metrics: the publish queue's
 * families) must outlive it. Logs and returns -errno with a message that
 * names the missing piece. No thread yet. */
int cluster_new(const struct cluster_opts *o, int state_fd,
		struct agent_counters *counters, struct agent_metrics *m,
		struct cluster **ret);
/* Starts the watch and publisher threads. */
int cluster_start(struct cluster *c);
/* Stops the threads (cancels blocking calls) and frees. */
void cluster_free(struct cluster *c);
/* The queue the detector polls for pod snapshots. */
struct evqueue *cluster_pods_queue(struct cluster *c);
/* Wakes the publisher for the kill staged as queue/<id>.json
 * (pubqueue_stage): it takes the item from that file. Never blocks;
 * -EAGAIN when the hand-over is full, -ENOMEM (the item stays staged for
 * the agent's next start). */
int cluster_publish(struct cluster *c, const char *id);
const struct cluster_opts *cluster_options(const struct cluster *c);
/* The API client (shared by threads: kube.h), for /metrics' reviews. */
struct kube_client *cluster_client(const struct cluster *c);
/* The Kubernetes publish target (target_kube.h), for staging items. */
const struct pub_target *cluster_target(const struct cluster *c);

/* ---- the detector side (cluster_pods.c) ---- */

struct cluster_pods;
int cluster_pods_new(struct cluster_pods **ret);
void cluster_pods_free(struct cluster_pods *m);
/* Takes p (an update or a tombstone). */
void cluster_pods_apply(struct cluster_pods *m, struct cluster_pod *p);
size_t cluster_pods_count(const struct cluster_pods *m);

struct cluster_match {
	struct kube_cgpath path;       /* from the victim's cgroup */
	const struct cluster_pod *pod; /* NULL: not (yet) in the cache */
	const char *container;	       /* NULL: unknown */
	bool last_instance;	       /* matched lastState's containerID */
};
/* Maps a victim's memory cgroup (task_memcg, under our mount) to its pod
 * and container. -ENOENT when the path is not a pod's. */
int cluster_pods_match(const struct cluster_pods *m, const char *cgroup,
		       struct cluster_match *ret);
/* Whether a kill in this pod is reported (annotation, namespaces). */
bool cluster_wanted(const struct cluster_opts *o, const struct cluster_pod *p);

/* ---- cluster mode on the detector thread (cluster_capture.c) ---- */

/* Cluster mode's state beside the detector: an object the run owns
 * (../run_cluster.c makes it and plugs it into the kill pipeline's hooks
 * and the loop); the detector's own state (struct agent) knows nothing
 * of it. */
struct cluster_mode {
	struct cluster_opts opts;
	/* what other threads (/readyz, the publisher) count */
	struct agent_counters counters;
	struct cluster *cluster;	     /* the kube side, its threads */
	struct cluster_pods *pods;	     /* the detector's pod map */
	struct cluster_warn_gate *warn_gate; /* OOMPredicted, per container */
	const char *host_root;		     /* --host-root, for spools */
	int state_fd;			     /* the publish queue's home */
};

/* The pod of a kill. */
struct cluster_kill_pod {
	struct cluster_match m;
	bool have; /* the victim's cgroup is a pod's */
};
/* Maps the kill of cgroup to its pod (counted in counters.kills); false
 * when the kill is not to be reported (opted out, filtered namespace;
 * logged and counted as skipped). */
bool cluster_kill_want(struct cluster_mode *cm, const char *cgroup,
		       struct cluster_kill_pod *ret);
/* Adds "pod", "container" and "container_id" to the manifest. */
void cluster_kill_manifest(const struct cluster_kill_pod *p,
			   struct json_object *man);
/* The sidecar's spool of the pod (by the UID in the host path), or NULL
 * when there is none. Writes the path into buf. */
const char *cluster_kill_spool(const struct cluster_mode *cm,
			       const struct cluster_kill_pod *p, char *buf,
			       size_t size);
/* Whether a task whose /proc/<pid>/cgroup is proc_cgroup is of p's pod. */
bool cluster_kill_pod_task(const struct cluster_kill_pod *p,
			   const char *proc_cgroup);
struct corr_kill;
struct agent_verdict;
/* The publish item of a kill (heap), staged in the state dir's queue as
 * soon as it is made (pubqueue_stage): an agent killed before the
 * publisher took the kill publishes it at its next start. NULL when it
 * could not be staged (memory, the write: logged; nothing publishes the
 * bundle). */
struct pub_item *
cluster_kill_item(const struct cluster_mode *cm, const struct corr_kill *k,
		  const struct cluster_kill_pod *p, const char *id,
		  const struct agent_verdict *v, uint64_t kill_ms);
/* Stages it (a kill's item, with its Kubernetes part: target_kube.h) in
 * the state dir's queue for the Kubernetes target: pubqueue_stage(). */
int cluster_kill_stage(const struct cluster_mode *cm,
		       const struct pub_item *it);
/* Stages the saved bundle's publish item (cluster_kill_item) and hands
 * it over; nothing for a kill outside a pod. */
void cluster_kill_publish(struct cluster_mode *cm, const struct corr_kill *k,
			  const struct cluster_kill_pod *p, const char *id,
			  const struct agent_verdict *v, uint64_t kill_ms);
/* Wakes the publisher for the item staged under id: the staged file is
 * the hand-over (pubqueue_take reads it); a full hand-over is logged and
 * the item waits for the agent's next start. */
void cluster_kill_hand_over(struct cluster_mode *cm, const char *id);
struct forecast_target;
struct forecast_warning;
/* The forecast's resolver in cluster mode (forecast_resolve_fn, ud = the
 * cluster_mode): a container cgroup of a wanted pod → namespace, pod, UID
 * and container name. Detector thread; a cache lookup. */
bool cluster_kill_resolve(const char *cgroup, struct forecast_target *ret,
			  void *ud);
/* The forecast's warning sink in cluster mode (forecast_warn_fn, ud = the
 * cluster_mode): queues an OOMPredicted Event on the pod for the
 * publisher thread, at most once per container per 10 min. Never
 * blocks. */
void cluster_kill_predicted(const struct forecast_warning *w, void *ud);
