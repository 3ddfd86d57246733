/* SPDX-License-Identifier: Apache-2.0 */
/* A kill finished late, on the detector thread (cluster mode): an opted-in
 * pod whose spool the node does not show. The bundle is saved without the
 * pre-kill snapshot first; the pod's OOMBundle snap-<pod> is asked of the
 * publisher thread (publish/cluster_snap.c, which fetches and checks it);
 * when the answer comes back through an evqueue, its files are added, the
 * bundle finished again (finish.c, from the kill's report as parsed once)
 * and saved over the first copy, and only then is the kill counted and
 * handed to the publisher. Its publish item is staged when the wait
 * begins (an agent stopped meanwhile publishes the first bundle at its
 * next start) and staged again with the new verdict before the
 * hand-over. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_late_snap.h"
#include "publish/target_kube.h"
#include "obs/metrics_agent.h"
#include "base/jget.h"
#include "base/log.h"
#include "base/memlock.h"
#include "base/util.h"

/* A snapshot newer than the kill by more than this is not its pre-kill
 * state (a snapshot of the restarted container). */
#define SNAP_AFTER_KILL_MS 2000

/* One kill waiting for its pod's snap-<pod>. */
struct snap_wait {
	struct bundle *b;
	struct pub_item *it;
	/* the kill's parsed report, taken over from the correlator: the
	 * bundle is diagnosed again from it, not re-parsed */
	struct oom_report report;
	uint64_t kill_ms;
	int64_t latency;
};

struct late_snap {
	struct agent *a;
	struct cluster_mode *cm;
	struct snap_wait w[CLUSTER_SNAP_WAIT];
	size_t n;
};

int late_snap_new(struct agent *a, struct cluster_mode *cm,
		  struct late_snap **ret)
{
	struct late_snap *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return -ENOMEM;
	ls->a = a;
	ls->cm = cm;
	*ret = ls;
	return 0;
}

void late_snap_free(struct late_snap *ls)
{
	free(ls);
}

void late_snap_in_use(const struct late_snap *ls,
		      void (*mark)(const char *bundle_file, void *arg),
		      void *arg)
{
	for (size_t i = 0; i < ls->n; i++)
		if (ls->w[i].it)
			mark(ls->w[i].it->bundle_file, arg);
}

bool late_snap_wait(struct late_snap *ls, struct corr_kill *k,
		    const struct cluster_kill_pod *p, struct bundle *b,
		    const char *id, const struct agent_verdict *v,
		    uint64_t kill_ms, int64_t latency)
{
	struct snap_wait *w;
	struct cluster_snap *s;

	/* only opted-in pods have a sidecar; the node's spool wins */
	if (!p->have || !p->m.pod || p->m.pod->capture != KUBE_CAPTURE_ON ||
	    bundle_has(b, "spool/snapshot.json") || ls->n == CLUSTER_SNAP_WAIT)
		return false;
	s = calloc(1, sizeof(*s));
	w = &ls->w[ls->n];
	w->it = s ? cluster_kill_item(ls->cm, k, p, id, v, kill_ms) : NULL;
	if (!w->it) {
		free(s);
		return false;
	}
	strlcpy_safe(s->id, id, sizeof(s->id));
	strlcpy_safe(s->ns, p->m.pod->ns, sizeof(s->ns));
	strlcpy_safe(s->pod, p->m.pod->name, sizeof(s->pod));
	strlcpy_safe(s->uid, p->m.path.pod_uid, sizeof(s->uid));
	if (cluster_snap_request(ls->cm->cluster, s) < 0) {
		free(w->it);
		free(s);
		return false;
	}
	log_info("report %s: no spool of pod %s/%s on the node, asking for "
		 "OOMBundle %s/snap-%s",
		 id, s->ns, s->pod, s->ns, s->pod);
	w->b = b;
	w->report = k->report;
	oom_report_init(&k->report);
	w->kill_ms = kill_ms;
	w->latency = latency;
	ls->n++;
	return true;
}

static int copy_file(const char *path, const char *data, size_t len, void *ud)
{
	int prio = cluster_snap_prio(path);

	return prio < 0 ? 0
			: bundle_add(ud, path, data, len,
				     (enum bundle_prio)prio);
}

/* The snapshot's time, which must not be after the kill. */
static int snap_time(const struct bundle *files, uint64_t kill_ms,
		     uint64_t *ret)
{
	struct json_object *o = bundle_get_json(files, "spool/snapshot.json");
	uint64_t t = 0;
	bool ok = jget_u64(NULL, o, "t_ms", &t);

	json_object_put(o);
	if (!ok)
		return -EBADMSG;
	if (t > kill_ms + SNAP_AFTER_KILL_MS)
		return -ERANGE;
	*ret = t;
	return 0;
}

/* Adds the snapshot to w->b, diagnoses again and saves it over the first
 * copy. 0, or -errno with s->why set. */
static int merge(struct agent *a, struct snap_wait *w, struct cluster_snap *s,
		 struct agent_verdict *v)
{
	struct json_object *man = bundle_manifest(w->b), *o;
	char name[400];
	uint64_t t = 0;
	long size;
	int r = snap_time(s->files, w->kill_ms, &t);

	if (r < 0) {
		snprintf(s->why, sizeof(s->why), "%s",
			 r == -ERANGE ? "its snapshot was taken after the kill"
				      : "spool/snapshot.json has no t_ms "
					"integer");
		return r;
	}
	r = bundle_foreach(s->files, copy_file, w->b);
	if (r < 0)
		return snprintf(s->why, sizeof(s->why), "%s", strerror(-r)), r;
	o = json_object_new_object();
	json_object_object_add(o, "source",
			       json_object_new_string("oombundle"));
	snprintf(name, sizeof(name), "%s/snap-%s", s->ns, s->pod);
	json_object_object_add(o, "oombundle", json_object_new_string(name));
	json_object_object_add(o, "snapshot_ms", json_object_new_uint64(t));
	json_object_object_add(
		o, "snapshot_age_s",
		json_object_new_double((double)(w->kill_ms - t) / 1000.0));
	json_object_object_add(man, "spool", o);
	agent_bundle_diagnose(w->b, &w->report, man, w->kill_ms, v);
	agent_bundle_report(a, w->b, s->id);
	snprintf(name, sizeof(name), "%s.tar.gz", s->id);
	size = bundle_write(w->b, a->reports_fd, name, a->opts.bundle_max);
	if (size < 0)
		return snprintf(s->why, sizeof(s->why), "%s",
				strerror((int)-size)),
		       (int)size;
	return 0;
}

/* Counts the kill and hands it to the publisher (its item staged again
 * when the snapshot changed the verdict); w is emptied. */
static void release(struct late_snap *ls, struct snap_wait *w,
		    const struct agent_verdict *v)
{
	struct pub_item *it = w->it;
	const struct kube_item *k = kube_item_get(it);
	int r;

	if (v) {
		strlcpy_safe(it->verdict,
			     v->verdict[0] ? v->verdict : "unknown",
			     sizeof(it->verdict));
		strlcpy_safe(it->summary, v->summary, sizeof(it->summary));
		if (v->limit)
			it->limit = (int64_t)v->limit;
		if (v->usage)
			it->usage = (int64_t)v->usage;
		r = cluster_kill_stage(ls->cm, it);
		if (r < 0)
			log_warn(
				"report %s: cannot stage its new verdict (%s); "
				"published with the first one",
				it->id, strerror(-r));
	}
	agent_metrics_on_capture(
		ls->a->metrics,
		&(struct agent_kill_labels){.ns = k->ns,
					    .container = k->container,
					    .verdict = it->verdict,
					    .owner_kind = k->workload_kind,
					    .owner = k->workload},
		w->latency, w->b);
	bundle_free(w->b);
	oom_report_release(&w->report);
	cluster_kill_hand_over(ls->cm, it->id);
	free(it);
	*w = ls->w[--ls->n];
}

void late_snap_answers(struct late_snap *ls)
{
	void *p;

	while (evqueue_pop(cluster_snap_answers(ls->cm->cluster), &p) == 1) {
		struct cluster_snap *s = p;
		struct agent_verdict v;
		size_t i;

		memset(&v, 0, sizeof(v));
		for (i = 0; i < ls->n; i++)
			if (streq(ls->w[i].it->id, s->id))
				break;
		if (i == ls->n) {
			cluster_snap_free(s);
			continue;
		}
		if (s->files && merge(ls->a, &ls->w[i], s, &v) == 0) {
			log_info("report %s: pre-kill snapshot from OOMBundle "
				 "%s/snap-%s (%zu files)",
				 s->id, s->ns, s->pod, s->n_files);
			release(ls, &ls->w[i], &v);
		} else {
			log_warn("report %s: OOMBundle %s/snap-%s not used: "
				 "%s; published without the pre-kill snapshot",
				 s->id, s->ns, s->pod, s->why);
			release(ls, &ls->w[i], NULL);
		}
		cluster_snap_free(s);
		memlock_give_back();
	}
}

void late_snap_flush(struct late_snap *ls)
{
	while (ls->n) {
		log_warn("report %s: stopping before its pod's snapshot came; "
			 "published without it",
			 ls->w[0].it->id);
		release(ls, &ls->w[0], NULL);
	}
}
