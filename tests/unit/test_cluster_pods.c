/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_pods_match: a victim's cgroup path to its pod and container. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "publish/cluster.h"

#define UID "3fdde710-67e5-4ea7-ad68-312e053be572"
#define ID_A "a6f60f7ed8ba5b93a640208495a2e50fd3233c8cc989268c8d394abc296a2815"
#define ID_B "e4046f4b59c41c089b89afb0bf300eca25b0a78f4b31c2505919cadf509b1e60"
#define PATH_B "/kubepods/burstable/pod" UID "/" ID_B

static struct cluster_pods *with_pod(size_t n, const char *id0)
{
	struct cluster_pods *m;
	struct cluster_pod *p = calloc(1, sizeof(*p) + 2 * sizeof(p->ctr[0]));

	cr_assert_eq(cluster_pods_new(&m), 0);
	strlcpy_safe(p->uid, UID, sizeof(p->uid));
	strlcpy_safe(p->ns, "ns", sizeof(p->ns));
	strlcpy_safe(p->name, "victim", sizeof(p->name));
	p->n = n;
	strlcpy_safe(p->ctr[0].name, "hog", sizeof(p->ctr[0].name));
	strlcpy_safe(p->ctr[0].id, id0, sizeof(p->ctr[0].id));
	if (n > 1)
		strlcpy_safe(p->ctr[1].name, "side", sizeof(p->ctr[1].name));
	cluster_pods_apply(m, p);
	return m;
}

Test(cluster_pods, matches_the_container_by_id)
{
	struct cluster_pods *m = with_pod(2, ID_B);
	struct cluster_match r;

	cr_assert_eq(cluster_pods_match(m, PATH_B, &r), 0);
	cr_assert_str_eq(r.container, "hog");
	cr_assert_not(r.last_instance);
	cluster_pods_free(m);
}

/* Killed before the kubelet reported its ID (or a restart still showing
 * the previous instance's): the pod's one container is the victim. */
Test(cluster_pods, one_container_pod_names_it_before_the_status_has_the_id)
{
	struct cluster_pods *m = with_pod(1, "");
	struct cluster_match r;

	cr_assert_eq(cluster_pods_match(m, PATH_B, &r), 0);
	cr_assert_not_null(r.pod);
	cr_assert_str_eq(r.container, "hog");
	cluster_pods_free(m);
	m = with_pod(1, ID_A);
	cr_assert_eq(cluster_pods_match(m, PATH_B, &r), 0);
	cr_assert_str_eq(r.container, "hog");
	cr_assert_str_eq(r.path.container_id, ID_B);
	cluster_pods_free(m);
}

/* With two containers an unknown ID names none. */
Test(cluster_pods, two_container_pod_unknown_id_names_none)
{
	struct cluster_pods *m = with_pod(2, ID_A);
	struct cluster_match r;

	cr_assert_eq(cluster_pods_match(m, PATH_B, &r), 0);
	cr_assert_not_null(r.pod);
	cr_assert_null(r.container);
	cluster_pods_free(m);
}

/* /readyz in cluster mode: watch listed, and an API answer in the last
 * minute; the reason says which part is missing. */
Test(cluster_pods, ready_needs_the_list_and_a_recent_answer)
{
	struct agent_counters k = {0};
	char why[128];
	uint64_t now = 1000000;

	cr_assert_not(cluster_ready(&k, now, why, sizeof(why)));
	cr_assert_str_eq(why, "the pod watch has not listed yet");
	atomic_store(&k.pods_synced, true);
	cr_assert_not(cluster_ready(&k, now, why, sizeof(why)));
	cr_assert_str_eq(why, "no answer from the API server for 0 s");
	atomic_store(&k.last_api_ok_ms, now - CLUSTER_API_STALE_MS);
	cr_assert(cluster_ready(&k, now, why, sizeof(why)));
	cr_assert_str_eq(why, "pod watch synced, API server answering");
	cr_assert_not(cluster_ready(&k, now + 1, why, sizeof(why)));
	cr_assert_str_eq(why, "no answer from the API server for 60 s");
}
