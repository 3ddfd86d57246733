/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode, the kube side: credentials and client, the pod watch of
 * this node (a thread: it blocks in the watch), and the publisher (a
 * thread: the publish queue and retention). Neither touches the detector's
 * data: pods go out through one evqueue, kills come in through another. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "publish/cluster.h"
#include "cluster_internal.h"
#include "base/log.h"
#include "base/util.h"

static int load_config(const struct cluster_opts *o, struct kube_config **ret)
{
	struct kube_kubeconfig_options ko = {.paths = o->kubeconfig};
	struct kube_error e = {0};
	int r;

	if (o->kubeconfig) {
		r = kube_config_load_kubeconfig(&ko, ret, &e);
		if (r < 0)
			log_error("kubeconfig \"%s\": %s", o->kubeconfig,
				  e.message[0] ? e.message : strerror(-r));
		else if ((*ret)->exec) {
			/* the steady state runs under seccomp without exec
			 * (docs/cluster-mode.md) */
			log_error(
				"kubeconfig \"%s\": its user runs an exec "
				"credential plugin (\"%s\"), which the agent's "
				"seccomp filter forbids; use a token, a "
				"token file or a client certificate",
				o->kubeconfig, (*ret)->exec->command);
			kube_config_free(*ret);
			r = -EPERM;
		}
		return r;
	}
	r = kube_config_in_cluster(NULL, ret);
	if (r == -ENOENT)
		log_error("not running in a cluster: KUBERNETES_SERVICE_HOST "
			  "or the service account token "
			  "(/var/run/secrets/kubernetes.io/serviceaccount/"
			  "token) is missing; pass --kubeconfig, or "
			  "--standalone for a host without Kubernetes");
	else if (r < 0)
		log_error("in-cluster configuration: %s", strerror(-r));
	return r;
}

int cluster_new(const struct cluster_opts *o, int state_fd,
		struct agent_counters *counters, struct agent_metrics *m,
		struct cluster **ret)
{
	struct kube_client_options co = {.user_agent = "oomlens-agent/0.1"};
	struct kube_config *cfg = NULL;
	struct cluster *c;
	int r;

	if (!o->node || !*o->node) {
		log_error("NODE_NAME is not set: give the agent its node "
			  "through the Downward API (env NODE_NAME from "
			  "spec.nodeName)");
		return -EINVAL;
	}
	r = load_config(o, &cfg);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		kube_config_free(cfg);
		return -ENOMEM;
	}
	c->o = *o;
	snprintf(c->reporting_instance, sizeof(c->reporting_instance),
		 CLUSTER_COMPONENT "-%.100s", o->node ? o->node : "");
	c->counters = counters;
	c->metrics = m;
	c->state_fd = state_fd;
	r = kube_client_new(cfg, &co, &c->client);
	kube_config_free(cfg);
	if (r == 0)
		r = kube_cancel_new(&c->cancel);
	if (r == 0)
		r = evqueue_new(1024, &c->pods);
	if (r == 0)
		r = evqueue_new(256, &c->events);
	if (r == 0)
		r = evqueue_new(CLUSTER_SNAP_WAIT, &c->snapreq);
	if (r == 0)
		r = evqueue_new(CLUSTER_SNAP_WAIT, &c->snapans);
	kube_target_init(&c->kt, &cluster_kube_api, c, m);
	if (r == 0)
		r = publisher_new(state_fd, &c->kt.target, c->metrics, &c->pub);
	if (r < 0) {
		log_error("cluster mode: %s", strerror(-r));
		cluster_free(c);
		return r;
	}
	log_info("cluster mode: node \"%s\", %zu reports queued from before "
		 "(%zu of them to be finished first)",
		 o->node,
		 pubqueue_depth(publisher_queue(c->pub)) +
			 pubqueue_unfinished(publisher_queue(c->pub)),
		 pubqueue_unfinished(publisher_queue(c->pub)));
	*ret = c;
	return 0;
}

int cluster_start(struct cluster *c)
{
	struct publisher_hooks hooks = {
		.ud = c,
		.before = cluster_pub_before,
		.after = cluster_pub_after,
		.fds = {evqueue_fd(c->events), evqueue_fd(c->snapreq)},
		.n_fds = 2,
	};
	int r = pthread_create(&c->watch_th, NULL, cluster_watch_main, c);

	if (r)
		return -r;
	c->watch_started = true;
	return publisher_start(c->pub, &hooks);
}

void cluster_free(struct cluster *c)
{
	if (!c)
		return;
	/* the publisher first: its target's cancel is the client's too */
	publisher_free(c->pub);
	if (c->cancel)
		kube_cancel_trigger(c->cancel);
	if (c->client)
		kube_client_shutdown(c->client);
	if (c->watch_started)
		pthread_join(c->watch_th, NULL);
	evqueue_free(c->pods, cluster_pod_free);
	evqueue_free(c->events, free);
	evqueue_free(c->snapreq, cluster_snap_free);
	evqueue_free(c->snapans, cluster_snap_free);
	kube_cancel_free(c->cancel);
	kube_client_free(c->client);
	cluster_owners_clear(c);
	free(c);
}

struct evqueue *cluster_pods_queue(struct cluster *c)
{
	return c->pods;
}

int cluster_publish(struct cluster *c, const char *id)
{
	return publisher_hand_over(c->pub, id);
}

const struct cluster_opts *cluster_options(const struct cluster *c)
{
	return &c->o;
}

struct kube_client *cluster_client(const struct cluster *c)
{
	return c->client;
}

const struct pub_target *cluster_target(const struct cluster *c)
{
	return &c->kt.target;
}
