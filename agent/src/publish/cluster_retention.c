/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode: retention per namespace, across the cluster. Each round an
 * agent lists its own reports (label oomlens.io/node) to learn the
 * namespaces it has published in, then lists each of those namespaces'
 * reports whatever their node and deletes what retention_plan() drops:
 * beyond --keep-per-namespace, beyond --max-bytes-per-namespace of
 * bundles, older than --max-age. Every agent decides the same from the
 * same list, so two agents converge; a report already deleted by another
 * is a 404. Bundles go with their report (ownerReference; where no garbage
 * collector runs they are deleted here too), and a kept report's bundle is
 * never touched. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"
#include "forensics/bundle.h"
#include "publish/retention_plan.h"
#include "base/log.h"
#include "base/util.h"

/* Lists OOMReports: of one namespace, or of this node in all of them. */
static int list_reports(struct cluster *c, const char *ns,
			struct kube_oomreport ***ret, size_t *ret_n)
{
	struct kube_call k = {.res = &kube_res_oomreports,
			      .namespace = ns,
			      .all_namespaces = !ns,
			      .cancel = c->cancel};
	char sel[300];
	struct kube_list_options lo = {.label_selector = ns ? NULL : sel,
				       .all_pages = true};
	struct json_object *list = NULL, *items;
	struct kube_oomreport **v;
	size_t n = 0;
	int r;

	snprintf(sel, sizeof(sel), "oomlens.io/node=%s", c->o.node);
	r = kube_list(c->client, &k, &lo, &list, NULL);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(list, "items", &items) ||
	    !(v = calloc(json_object_array_length(items) + 1, sizeof(*v)))) {
		json_object_put(list);
		return -EBADMSG;
	}
	for (size_t i = 0; i < json_object_array_length(items); i++)
		if (kube_oomreport_decode(json_object_array_get_idx(items, i),
					  &v[n]) >= 0 &&
		    v[n]->namespace)
			n++;
		else if (v[n])
			kube_oomreport_free(v[n]), v[n] = NULL;
	json_object_put(list);
	*ret = v;
	*ret_n = n;
	return 0;
}

static int delete_one(struct cluster *c, const struct kube_oomreport *r)
{
	int q = kube_oomreport_delete(c->client, r->namespace, r->name, r->uid,
				      NULL);

	if (q < 0 && q != -ENOENT)
		return q;
	/* another agent's delete or the garbage collector may be first */
	kube_oombundle_delete(c->client, r->namespace, r->name, NULL, NULL);
	return q < 0 ? 0 : 1;
}

/* One namespace: list, plan, delete. */
static void namespace_round(struct cluster *c, const char *ns, int64_t now)
{
	struct retention_limits l = {
		.keep = c->o.keep_per_namespace,
		.max_bytes = c->o.max_bytes_per_namespace,
		.max_age_s = c->o.max_age_s,
		.unknown_bytes = BUNDLE_MAX_BYTES,
	};
	struct kube_oomreport **v;
	struct retention_item *it;
	unsigned by[RETENTION_N_WHY] = {0};
	size_t n, planned = 0;

	if (list_reports(c, ns, &v, &n) < 0)
		return; /* the next round tries again */
	it = calloc(n + 1, sizeof(*it));
	for (size_t i = 0; it && i < n; i++)
		it[i] = (struct retention_item){
			.namespace = v[i]->namespace,
			.name = v[i]->name,
			.created_s = retention_time(v[i]->created_at),
			.bytes = v[i]->bundle_size > 0
					 ? (uint64_t)v[i]->bundle_size
					 : 0,
			.user = v[i],
		};
	if (it && (planned = retention_plan(it, n, now, &l)))
		for (size_t i = 0; i < n; i++)
			if (it[i].drop && delete_one(c, it[i].user) > 0)
				by[it[i].why]++;
	if (by[RETENTION_COUNT] + by[RETENTION_BYTES] + by[RETENTION_AGE])
		log_info("retention: namespace %s: deleted %u reports (%u "
			 "beyond %u kept, %u beyond %" PRIu64
			 " bytes of bundles, %u older than %" PRIu64 " s)",
			 ns,
			 by[RETENTION_COUNT] + by[RETENTION_BYTES] +
				 by[RETENTION_AGE],
			 by[RETENTION_COUNT], c->o.keep_per_namespace,
			 by[RETENTION_BYTES], c->o.max_bytes_per_namespace,
			 by[RETENTION_AGE], c->o.max_age_s);
	else
		log_debug("retention: namespace %s: %zu reports, %zu to drop, "
			  "none deleted here",
			  ns, n, planned);
	free(it);
	kube_oomreports_free(v, n);
}

void cluster_retention(struct cluster *c)
{
	struct kube_oomreport **own;
	int64_t now = (int64_t)(now_realtime_us() / 1000000);
	size_t n;

	if (list_reports(c, NULL, &own, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = streq(own[j]->namespace, own[i]->namespace);
		if (!seen)
			namespace_round(c, own[i]->namespace, now);
	}
	kube_oomreports_free(own, n);
}
