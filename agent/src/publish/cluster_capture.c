/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode in the detector thread: which pod a kill belongs to, the
 * pod in the bundle manifest, the sidecar's spool by the pod's UID, and
 * the hand-over to the publisher. Never waits on the network. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "obs/forecast_sampler.h"
#include "publish/cluster.h"
#include "publish/target_kube.h"
#include "base/log.h"
#include "base/util.h"

bool cluster_kill_want(struct cluster_mode *cm, const char *cgroup,
		       struct cluster_kill_pod *ret)
{
	const struct cluster_opts *o = &cm->opts;
	int r;

	memset(ret, 0, sizeof(*ret));
	atomic_fetch_add(&cm->counters.kills, 1);
	/* task_memcg: the victim's container; oom_memcg may be the pod */
	r = cluster_pods_match(cm->pods, cgroup, &ret->m);
	if (r < 0) {
		log_info("kill in \"%s\": not a pod's cgroup (%s), bundle "
			 "kept on the node only",
			 cgroup, strerror(-r));
		return true;
	}
	ret->have = true;
	if (ret->m.pod && !cluster_wanted(o, ret->m.pod)) {
		atomic_fetch_add(&cm->counters.skipped, 1);
		log_info("kill in pod %s/%s not reported (%s)", ret->m.pod->ns,
			 ret->m.pod->name,
			 ret->m.pod->capture == KUBE_CAPTURE_OFF
				 ? "oomlens.io/capture: \"false\""
				 : "namespace filtered");
		return false;
	}
	if (ret->m.path.conmon)
		log_warn("kill in CRI-O's conmon of container %.12s",
			 ret->m.path.container_id);
	return true;
}

void cluster_kill_manifest(const struct cluster_kill_pod *p,
			   struct json_object *man)
{
	struct json_object *pod = NULL;

	if (!p->have)
		return;
	if (p->m.pod && p->m.pod->manifest)
		pod = json_tokener_parse(p->m.pod->manifest);
	if (!pod) { /* not in the cache yet: what the path says */
		pod = json_object_new_object();
		json_object_object_add(
			pod, "uid", json_object_new_string(p->m.path.pod_uid));
		json_object_object_add(
			pod, "qos_class",
			json_object_new_string(kube_qos_name(p->m.path.qos)));
	}
	json_object_object_add(man, "pod", pod);
	json_object_object_add(
		man, "container",
		p->m.container ? json_object_new_string(p->m.container) : NULL);
	json_object_object_add(
		man, "container_id",
		p->m.path.container_id[0]
			? json_object_new_string(p->m.path.container_id)
			: NULL);
}

const char *cluster_kill_spool(const struct cluster_mode *cm,
			       const struct cluster_kill_pod *p, char *buf,
			       size_t size)
{
	/* TODO(fileio): open through the O_NOFOLLOW walkers when they land;
	 * the path is built from the UID of the victim's cgroup, never from
	 * what a spool says about itself. */
	if (!p->have)
		return NULL;
	snprintf(buf, size,
		 "%s/%s/pods/%s/volumes/kubernetes.io~empty-dir/oomlens-spool",
		 streq(cm->host_root, "/") ? "" : cm->host_root,
		 cm->opts.kubelet_root + (cm->opts.kubelet_root[0] == '/'),
		 p->m.path.pod_uid);
	return buf;
}

bool cluster_kill_pod_task(const struct cluster_kill_pod *p,
			   const char *proc_cgroup)
{
	struct kube_cgpath cp;

	return p && p->have && p->m.path.pod_uid[0] &&
	       kube_cgpath_parse(proc_cgroup, &cp) == 0 &&
	       streq(cp.pod_uid, p->m.path.pod_uid);
}

void cluster_kill_hand_over(struct cluster_mode *cm, const char *id)
{
	if (cluster_publish(cm->cluster, id) < 0)
		log_error("report %s: the publisher's hand-over is full; "
			  "the report waits in the state dir's queue for the "
			  "agent's next start",
			  id);
}

void cluster_kill_publish(struct cluster_mode *cm, const struct corr_kill *k,
			  const struct cluster_kill_pod *p, const char *id,
			  const struct agent_verdict *v, uint64_t kill_ms)
{
	struct pub_item *it;

	if (!p->have)
		return;
	it = cluster_kill_item(cm, k, p, id, v, kill_ms);
	if (it)
		cluster_kill_hand_over(cm, id);
	free(it);
}

int cluster_kill_stage(const struct cluster_mode *cm, const struct pub_item *it)
{
	return pubqueue_stage(cm->state_fd, cluster_target(cm->cluster), it);
}

struct pub_item *
cluster_kill_item(const struct cluster_mode *cm, const struct corr_kill *k,
		  const struct cluster_kill_pod *p, const char *id,
		  const struct agent_verdict *v, uint64_t kill_ms)
{
	struct pub_item *it = malloc(sizeof(*it));
	struct kube_item *ki;
	int r;

	if (!it)
		return NULL;
	pub_item_from_kill(it, k, v, id, cm->opts.node, kill_ms);
	ki = kube_item_of(it);
	strlcpy_safe(ki->pod_uid, p->m.path.pod_uid, sizeof(ki->pod_uid));
	strlcpy_safe(ki->container_id, p->m.path.container_id,
		     sizeof(ki->container_id));
	if (p->m.pod) {
		strlcpy_safe(ki->ns, p->m.pod->ns, sizeof(ki->ns));
		strlcpy_safe(ki->pod, p->m.pod->name, sizeof(ki->pod));
		strlcpy_safe(ki->workload_kind, p->m.pod->workload_kind,
			     sizeof(ki->workload_kind));
		strlcpy_safe(ki->workload, p->m.pod->workload,
			     sizeof(ki->workload));
	}
	if (p->m.container)
		strlcpy_safe(ki->container, p->m.container,
			     sizeof(ki->container));
	r = cluster_kill_stage(cm, it);
	if (r < 0) {
		log_error("report %s: cannot stage it in the publish queue "
			  "(%s): not published; its bundle stays in \"%s\"",
			  id, strerror(-r), it->bundle_file);
		free(it);
		return NULL;
	}
	return it;
}

bool cluster_kill_resolve(const char *cgroup, struct forecast_target *ret,
			  void *ud)
{
	struct cluster_mode *cm = ud;
	struct cluster_match m;

	/* pod-level cgroups and unknown or unwanted pods are not forecast:
	 * an Event needs the pod's name */
	if (cluster_pods_match(cm->pods, cgroup, &m) < 0 ||
	    !m.path.container_id[0] || !m.pod ||
	    !cluster_wanted(&cm->opts, m.pod))
		return false;
	memset(ret, 0, sizeof(*ret));
	strlcpy_safe(ret->namespace, m.pod->ns, sizeof(ret->namespace));
	strlcpy_safe(ret->pod, m.pod->name, sizeof(ret->pod));
	strlcpy_safe(ret->pod_uid, m.path.pod_uid, sizeof(ret->pod_uid));
	if (m.container)
		strlcpy_safe(ret->container, m.container,
			     sizeof(ret->container));
	else
		snprintf(ret->container, sizeof(ret->container), "%.12s",
			 m.path.container_id);
	return true;
}

void cluster_kill_predicted(const struct forecast_warning *w, void *ud)
{
	struct cluster_mode *cm = ud;
	const struct forecast_target *t = w->target;
	struct cluster_event *ev;

	if (!cm->warn_gate)
		cm->warn_gate = calloc(1, sizeof(*cm->warn_gate));
	if (!cm->warn_gate ||
	    !cluster_warn_gate_pass(cm->warn_gate, t->pod_uid, t->container,
				    now_monotonic_us() / 1000))
		return;
	ev = cluster_event_new(t->namespace, t->pod, t->pod_uid,
			       "OOMPredicted");
	if (!ev)
		return;
	snprintf(ev->field_path, sizeof(ev->field_path), "spec.containers{%s}",
		 t->container);
	(void)cluster_predicted_message(ev->message, sizeof(ev->message),
					t->container, w->usage, w->limit,
					w->slope, w->seconds);
	log_warn("pod %s/%s: %s", ev->ns, ev->pod, ev->message);
	(void)cluster_event_queue(cm->cluster, ev);
}
