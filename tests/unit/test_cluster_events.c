/* SPDX-License-Identifier: Apache-2.0 */
/* The OOMPredicted Event's gate (at most one per container per 10 min,
 * counted per pod UID + container, across a whole node's containers) and
 * its message (usage, limit, growth, seconds). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "publish/cluster.h"
#include "obs/forecast.h"

#define MIN (60ull * 1000)

Test(cluster_events, gate_once_per_container_per_10_min)
{
	struct cluster_warn_gate *g = calloc(1, sizeof(*g));
	uint64_t t = 5 * MIN;

	cr_assert(cluster_warn_gate_pass(g, "uid-a", "app", t));
	cr_assert_not(cluster_warn_gate_pass(g, "uid-a", "app", t + 1));
	cr_assert_not(cluster_warn_gate_pass(g, "uid-a", "app", t + 9 * MIN));
	/* another container of the pod, the same name in another pod */
	cr_assert(cluster_warn_gate_pass(g, "uid-a", "side", t + 1));
	cr_assert(cluster_warn_gate_pass(g, "uid-b", "app", t + 1));
	cr_assert(cluster_warn_gate_pass(g, "uid-a", "app",
					 t + FORECAST_WARN_EVERY_MS));
	cr_assert_not(cluster_warn_gate_pass(g, "uid-a", "app",
					     t + FORECAST_WARN_EVERY_MS + 1));
	cr_assert_eq(g->n, 3);
	free(g);
}

Test(cluster_events, gate_full_forgets_the_oldest)
{
	struct cluster_warn_gate *g = calloc(1, sizeof(*g));
	char uid[32];

	for (unsigned i = 0; i < CLUSTER_WARN_GATE; i++) {
		snprintf(uid, sizeof(uid), "uid-%u", i);
		cr_assert(cluster_warn_gate_pass(g, uid, "c", MIN + i));
	}
	cr_assert_eq(g->n, CLUSTER_WARN_GATE);
	/* one more: uid-0 (warned first) is forgotten, the rest kept */
	cr_assert(cluster_warn_gate_pass(g, "uid-new", "c", 2 * MIN));
	cr_assert_eq(g->n, CLUSTER_WARN_GATE);
	cr_assert_not(cluster_warn_gate_pass(g, "uid-1", "c", 2 * MIN));
	cr_assert_not(cluster_warn_gate_pass(g, "uid-new", "c", 2 * MIN + 1));
	cr_assert(cluster_warn_gate_pass(g, "uid-0", "c", 2 * MIN));
	free(g);
}

Test(cluster_events, predicted_message)
{
	char buf[1024];
	int n = cluster_predicted_message(buf, sizeof(buf), "app", 80u << 20,
					  100u << 20, 512.0 * 1024, 39.6);

	cr_assert_eq((size_t)n, strlen(buf));
	cr_assert_str_eq(buf, "container app is predicted to reach its memory "
			      "limit in 40 s: usage 80.0 MiB of 100.0 MiB, "
			      "growing 0.50 MiB/s (oomlens forecast over the "
			      "last 30 s)");
	cr_assert_eq(cluster_predicted_message(buf, 20, "app", 1, 2, 1, 1),
		     -E2BIG);
}
