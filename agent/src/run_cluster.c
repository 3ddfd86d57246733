/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode plugged into `run`: the kill pipeline's hooks (agent.h,
 * struct kill_hooks) over the publish room's pod side
 * (publish/cluster_capture.c) and the kill room's late snapshots
 * (run_late_snap.c), the loop's sources, and /readyz. Detector thread,
 * but for run_cluster_start(), which starts the kube threads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_cluster.h"
#include "base/log.h"
#include "base/util.h"
#include "run_late_snap.h"
#include "obs/forecast_sampler.h"
#include "obs/metrics_agent.h"
#include "publish/cluster.h"
#include "publish/pubqueue.h"

struct run_cluster {
	struct agent *a;
	struct cluster_mode cm;
	struct late_snap *late;
	struct kill_hooks hooks;
	/* the kill being captured (one at a time, on the detector thread;
	 * what outlives the capture is copied: run_late_snap.c) */
	struct kill_owner {
		struct cluster_kill_pod p;
	} owner;
};

static bool want(void *ud, const char *cgroup, struct kill_owner **ret)
{
	struct run_cluster *rc = ud;
	struct cluster_kill_pod p;

	*ret = NULL;
	if (!cluster_kill_want(&rc->cm, cgroup, &p))
		return false;
	if (p.have) {
		rc->owner.p = p;
		*ret = &rc->owner;
	}
	return true;
}

static void owner_free(struct kill_owner *o)
{
	(void)o; /* the one slot, rc->owner */
}

/* Its publish item is staged too (queue/<id>.json): else nothing would
 * publish the bundle; or its case waits to be finished. */
static bool captured(void *ud, const char *id, bool saved)
{
	struct run_cluster *rc = ud;

	return pubqueue_staged(rc->cm.state_fd, id) &&
	       (saved || late_snap_has_case(rc->late, id));
}

static bool owner_task(const struct kill_owner *o, const char *proc_cgroup)
{
	return o && cluster_kill_pod_task(&o->p, proc_cgroup);
}

static void manifest(const struct kill_owner *o, struct json_object *man)
{
	cluster_kill_manifest(&o->p, man);
}

static const char *spool(void *ud, const struct kill_owner *o, char *buf,
			 size_t size)
{
	struct run_cluster *rc = ud;

	return cluster_kill_spool(&rc->cm, &o->p, buf, size);
}

/* As the OOMReport says it (cluster_capture.c). */
static void labels(const struct kill_owner *o, struct agent_kill_labels *l)
{
	const struct cluster_pod *p = o->p.m.pod;

	if (!p)
		return;
	l->ns = p->ns;
	l->container = o->p.m.container;
	l->owner_kind = p->workload_kind;
	l->owner = p->workload;
}

static bool keep(void *ud, struct corr_kill *k, const struct kill_owner *o,
		 struct bundle *b, const char *id, uint64_t kill_ms,
		 int64_t latency)
{
	struct run_cluster *rc = ud;

	return o && late_snap_wait(rc->late, k, &o->p, b, id, kill_ms, latency);
}

static void hand_over(void *ud, const struct corr_kill *k,
		      const struct kill_owner *o, const char *id,
		      const struct agent_verdict *v, uint64_t kill_ms)
{
	struct run_cluster *rc = ud;

	if (o)
		cluster_kill_publish(&rc->cm, k, &o->p, id, v, kill_ms);
}

/* What the publish queue holds (staged or taken), and the kills waiting
 * for their pod's snapshot, kept in memory too. */
static int in_use(void *ud, void (*mark)(const char *bundle_file, void *arg),
		  void *arg)
{
	struct run_cluster *rc = ud;
	int r;

	late_snap_in_use(rc->late, mark, arg);
	r = pubqueue_bundles(rc->cm.state_fd, mark, arg);
	return r == -ENOENT ? 0 : r;
}

int run_cluster_new(struct agent *a, const struct cluster_opts *o,
		    struct run_cluster **ret)
{
	struct run_cluster *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return -ENOMEM;
	rc->a = a;
	rc->cm.opts = *o;
	rc->cm.host_root = a->host.root;
	rc->cm.state_fd = a->state_fd;
	if (cluster_new(&rc->cm.opts, a->state_fd, &rc->cm.counters, a->metrics,
			&rc->cm.cluster) < 0 ||
	    cluster_pods_new(&rc->cm.pods) < 0 ||
	    late_snap_new(a, &rc->cm, &rc->late) < 0) {
		run_cluster_free(rc);
		return -EINVAL;
	}
	rc->hooks = (struct kill_hooks){
		.ud = rc,
		.want = want,
		.owner_free = owner_free,
		.captured = captured,
		.owner_task = owner_task,
		.manifest = manifest,
		.spool = spool,
		.labels = labels,
		.keep = keep,
		.hand_over = hand_over,
		.in_use = in_use,
		/* a bundle is read in the victim's namespace */
		.cut_node_tasks = true,
	};
	a->hooks = &rc->hooks;
	/* the publisher loaded its queue (cluster_new), leaving the items
	 * with a case to this */
	late_snap_resume(rc->late);
	*ret = rc;
	return 0;
}

/* Pod snapshots from the watch thread. */
static void on_pods(void *ud)
{
	struct run_cluster *rc = ud;
	void *p;

	while (evqueue_pop(cluster_pods_queue(rc->cm.cluster), &p) == 1)
		cluster_pods_apply(rc->cm.pods, p);
}

/* The publisher's answers to the snapshots asked (run_late_snap.c). */
static void on_snap_answers(void *ud)
{
	struct run_cluster *rc = ud;

	late_snap_answers(rc->late);
}

size_t run_cluster_sources(struct run_cluster *rc, struct agent_source *ret,
			   size_t max)
{
	size_t n = 0;

	if (rc && n < max)
		ret[n++] = (struct agent_source){
			evqueue_fd(cluster_pods_queue(rc->cm.cluster)), on_pods,
			rc};
	if (rc && n < max)
		ret[n++] = (struct agent_source){
			evqueue_fd(cluster_snap_answers(rc->cm.cluster)),
			on_snap_answers, rc};
	return n;
}

void run_cluster_forecast(struct run_cluster *rc, struct forecast_sampler *s)
{
	if (!rc)
		return;
	forecast_sampler_set_resolver(s, cluster_kill_resolve, &rc->cm);
	forecast_sampler_set_warn(s, cluster_kill_predicted, &rc->cm);
}

struct kube_client *run_cluster_client(struct run_cluster *rc)
{
	return rc ? cluster_client(rc->cm.cluster) : NULL;
}

void run_cluster_tick(struct run_cluster *rc)
{
	char why[128];
	bool r;

	if (!rc)
		return;
	r = cluster_ready(&rc->cm.counters, now_realtime_us() / 1000, why,
			  sizeof(why));
	agent_health_set_ready(rc->a->metrics, r, why);
}

int run_cluster_start(struct run_cluster *rc)
{
	return rc ? cluster_start(rc->cm.cluster) : 0;
}

void run_cluster_free(struct run_cluster *rc)
{
	if (!rc)
		return;
	/* the publisher keeps its queue on disk: the next start resumes */
	if (rc->late)
		late_snap_flush(rc->late);
	late_snap_free(rc->late);
	cluster_free(rc->cm.cluster);
	cluster_pods_free(rc->cm.pods);
	free(rc->cm.warn_gate);
	if (rc->a->hooks == &rc->hooks)
		rc->a->hooks = NULL;
	free(rc);
}
