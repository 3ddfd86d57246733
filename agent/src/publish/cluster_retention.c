/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode: each agent deletes its own reports (label oomlens.io/node)
 * beyond --keep-per-namespace per namespace and older than --max-age.
 * Bundles go with their report (ownerReference; where no garbage
 * collector runs they are deleted here too). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_internal.h"
#include "base/log.h"
#include "base/util.h"

static int64_t when(const struct kube_oomreport *r)
{
	struct tm tm = {0};
	const char *end;

	if (!r->killed_at)
		return 0;
	end = strptime(r->killed_at, "%Y-%m-%dT%H:%M:%S", &tm);
	return end ? (int64_t)timegm(&tm) : 0;
}

/* Newest first within a namespace. */
static int cmp(const void *a, const void *b)
{
	const struct kube_oomreport *x = *(struct kube_oomreport *const *)a;
	const struct kube_oomreport *y = *(struct kube_oomreport *const *)b;
	int n = strcmp(x->namespace ? x->namespace : "",
		       y->namespace ? y->namespace : "");

	if (n)
		return n;
	return when(x) < when(y) ? 1 : when(x) > when(y) ? -1 : 0;
}

static int list_own(struct cluster *c, struct kube_oomreport ***ret,
		    size_t *ret_n)
{
	struct kube_call k = {.res = &kube_res_oomreports,
			      .all_namespaces = true,
			      .cancel = c->cancel};
	char sel[300];
	struct kube_list_options lo = {.label_selector = sel,
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
					  &v[n]) >= 0)
			n++;
	json_object_put(list);
	*ret = v;
	*ret_n = n;
	return 0;
}

void cluster_retention(struct cluster *c)
{
	struct kube_oomreport **v;
	int64_t now = (int64_t)(now_realtime_us() / 1000000);
	unsigned kept = 0, deleted = 0;
	const char *ns = "";
	size_t n;

	if (list_own(c, &v, &n) < 0)
		return; /* the next round tries again */
	qsort(v, n, sizeof(*v), cmp);
	for (size_t i = 0; i < n; i++) {
		const char *rns = v[i]->namespace ? v[i]->namespace : "";

		if (!streq(rns, ns)) {
			ns = rns;
			kept = 0;
		}
		if (kept < c->o.keep_per_namespace &&
		    (when(v[i]) == 0 ||
		     now - when(v[i]) <= (int64_t)c->o.max_age_s)) {
			kept++;
			continue;
		}
		if (kube_oomreport_delete(c->client, rns, v[i]->name, v[i]->uid,
					  NULL) >= 0) {
			kube_oombundle_delete(c->client, rns, v[i]->name, NULL,
					      NULL);
			deleted++;
		}
	}
	if (deleted)
		log_info("retention: deleted %u old reports of this node",
			 deleted);
	kube_oomreports_free(v, n);
}
