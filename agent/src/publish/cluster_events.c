/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode: the Warning Events that are not a kill's (OOMPredicted
 * from the detector's forecast, OOMLensConfig from the pod watch). Their
 * makers only queue them; the publisher thread posts them, so neither the
 * detector nor the watch waits on the API for an Event. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"
#include "obs/forecast.h"
#include "base/log.h"
#include "base/util.h"

#define MiB (1024.0 * 1024.0)

struct cluster_event *cluster_event_new(const char *ns, const char *pod,
					const char *uid, const char *reason)
{
	struct cluster_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	strlcpy_safe(ev->ns, ns, sizeof(ev->ns));
	strlcpy_safe(ev->pod, pod, sizeof(ev->pod));
	strlcpy_safe(ev->uid, uid, sizeof(ev->uid));
	strlcpy_safe(ev->reason, reason, sizeof(ev->reason));
	return ev;
}

int cluster_event_queue(struct cluster *c, struct cluster_event *ev)
{
	int r = evqueue_push(c->events, ev);

	if (r < 0) {
		log_warn("event queue full: %s Event on %s/%s dropped",
			 ev->reason, ev->ns, ev->pod);
		free(ev);
	}
	return r;
}

void cluster_events_post(struct cluster *c)
{
	void *p;

	while (evqueue_pop(c->events, &p) == 1) {
		struct cluster_event *ev = p;
		struct kube_event_options eo = {
			.namespace = ev->ns,
			.involved_name = ev->pod,
			.involved_uid = ev->uid[0] ? ev->uid : NULL,
			.field_path = ev->field_path[0] ? ev->field_path : NULL,
			.reason = ev->reason,
			.message = ev->message,
			.component = CLUSTER_COMPONENT,
			.host = c->o.node,
			.reporting_component = CLUSTER_REPORTING_COMPONENT,
			.reporting_instance = c->reporting_instance,
			.cancel = c->cancel,
		};
		struct kube_error e = {0};
		int r = kube_event_post(c->client, &eo, NULL, &e);

		if (r < 0)
			log_warn("%s Event on %s/%s: %s, ignoring", ev->reason,
				 ev->ns, ev->pod,
				 e.message[0] ? e.message : strerror(-r));
		else
			log_info("%s Event on pod %s/%s", ev->reason, ev->ns,
				 ev->pod);
		free(ev);
	}
}

bool cluster_warn_gate_pass(struct cluster_warn_gate *g, const char *uid,
			    const char *container, uint64_t now_ms)
{
	char key[sizeof(g->e[0].key)];
	size_t i, oldest = 0;

	snprintf(key, sizeof(key), "%s/%s", uid, container);
	for (i = 0; i < g->n; i++) {
		if (streq(g->e[i].key, key))
			return forecast_should_warn(0, now_ms,
						    &g->e[i].last_ms);
		if (g->e[i].last_ms < g->e[oldest].last_ms)
			oldest = i;
	}
	/* a node's containers fit; beyond, the one warned longest ago goes */
	i = g->n < CLUSTER_WARN_GATE ? g->n++ : oldest;
	strlcpy_safe(g->e[i].key, key, sizeof(g->e[i].key));
	g->e[i].last_ms = 0;
	return forecast_should_warn(0, now_ms, &g->e[i].last_ms);
}

int cluster_predicted_message(char *buf, size_t size, const char *container,
			      uint64_t usage, uint64_t limit, double slope,
			      double seconds)
{
	int n = snprintf(buf, size,
			 "container %s is predicted to reach its memory limit "
			 "in %.0f s: usage %.1f MiB of %.1f MiB, growing "
			 "%.2f MiB/s (oomlens forecast over the last 30 s)",
			 container, seconds, (double)usage / MiB,
			 (double)limit / MiB, slope / MiB);

	return n < 0 || (size_t)n >= size ? -E2BIG : n;
}
