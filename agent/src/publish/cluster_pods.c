/* SPDX-License-Identifier: Apache-2.0 */
/* The detector's pod map: snapshots the watch thread sends, looked up by
 * the pod UID in a victim's cgroup path. Detector thread only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish/cluster.h"
#include "base/util.h"

#define MAX_PODS 2048

struct cluster_pods {
	struct cluster_pod *p[MAX_PODS];
	size_t n;
};

void cluster_pod_free(void *ptr)
{
	struct cluster_pod *p = ptr;

	if (!p)
		return;
	free(p->manifest);
	free(p);
}

int cluster_pods_new(struct cluster_pods **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void cluster_pods_free(struct cluster_pods *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		cluster_pod_free(m->p[i]);
	free(m);
}

static size_t find(const struct cluster_pods *m, const char *uid)
{
	for (size_t i = 0; i < m->n; i++)
		if (streq(m->p[i]->uid, uid))
			return i;
	return SIZE_MAX;
}

void cluster_pods_apply(struct cluster_pods *m, struct cluster_pod *p)
{
	size_t i = find(m, p->uid);

	if (p->deleted) {
		/* a kill races the deletion: keep nothing, the publisher
		 * resolves what it can */
		if (i != SIZE_MAX) {
			cluster_pod_free(m->p[i]);
			m->p[i] = m->p[--m->n];
		}
		cluster_pod_free(p);
		return;
	}
	if (i != SIZE_MAX) {
		cluster_pod_free(m->p[i]);
		m->p[i] = p;
	} else if (m->n < MAX_PODS) {
		m->p[m->n++] = p;
	} else {
		cluster_pod_free(p); /* a node has at most ~110 pods */
	}
}

size_t cluster_pods_count(const struct cluster_pods *m)
{
	return m->n;
}

int cluster_pods_match(const struct cluster_pods *m, const char *cgroup,
		       struct cluster_match *ret)
{
	struct cluster_match r = {0};
	size_t i;
	int q;

	q = kube_cgpath_parse(cgroup, &r.path);
	if (q < 0)
		return q;
	i = find(m, r.path.pod_uid);
	if (i != SIZE_MAX) {
		const struct cluster_pod *p = m->p[i];

		r.pod = p;
		for (size_t j = 0; j < p->n && r.path.container_id[0]; j++) {
			if (streq(p->ctr[j].id, r.path.container_id)) {
				r.container = p->ctr[j].name;
			} else if (streq(p->ctr[j].last_id,
					 r.path.container_id)) {
				r.container = p->ctr[j].name;
				r.last_instance = true;
			}
			if (r.container)
				break;
		}
		/* A container killed within a second of its start is not in
		 * the kubelet's status yet (it reports containerIDs ~0.8 s
		 * late; a restarted one still shows the previous ID). With
		 * one container the kill is its: the pause sibling runs at
		 * oom_score_adj -998 and is never chosen while it is. */
		if (!r.container && p->n == 1 && r.path.container_id[0])
			r.container = p->ctr[0].name;
	}
	*ret = r;
	return 0;
}

static bool listed(const char *const *l, int n, const char *ns)
{
	for (int i = 0; i < n; i++)
		if (streq(l[i], ns))
			return true;
	return false;
}

bool cluster_wanted(const struct cluster_opts *o, const struct cluster_pod *p)
{
	if (p->capture == KUBE_CAPTURE_OFF)
		return false;
	if (o->n_namespaces && !listed(o->namespaces, o->n_namespaces, p->ns))
		return false;
	return !listed(o->exclude, o->n_exclude, p->ns);
}

bool cluster_ready(const struct agent_counters *k, uint64_t now_ms, char *why,
		   size_t size)
{
	uint64_t ok = atomic_load(&k->last_api_ok_ms);

	if (!atomic_load(&k->pods_synced)) {
		snprintf(why, size, "the pod watch has not listed yet");
		return false;
	}
	if (!ok || now_ms > ok + CLUSTER_API_STALE_MS) {
		snprintf(why, size, "no answer from the API server for %llu s",
			 ok ? (unsigned long long)(now_ms - ok) / 1000 : 0ull);
		return false;
	}
	snprintf(why, size, "pod watch synced, API server answering");
	return true;
}
