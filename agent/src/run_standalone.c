/* SPDX-License-Identifier: Apache-2.0 */
/* Standalone mode's publishing (run_standalone.h): the kill pipeline's
 * hooks for a host whose kills go to a collector. A kill is nobody's (no
 * pod: its spools are --spool-dir's, its bundle and manifest are as
 * without publishing, a node-wide OOM's task dump whole: the collector is
 * the host owner's); once its bundle is saved its item is staged in the
 * state dir's queue and handed to the publisher thread. Detector thread,
 * but for run_standalone_start(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run_standalone.h"
#include "base/log.h"
#include "base/util.h"
#include "publish/publisher.h"
#include "publish/target_http.h"

struct run_standalone {
	struct agent *a;
	struct http_target *target;
	struct publisher *pub;
	struct kill_hooks hooks;
};

static bool want(void *ud, const char *cgroup, struct kill_owner **ret)
{
	(void)ud, (void)cgroup;
	*ret = NULL; /* nobody's */
	return true;
}

static void owner_free(struct kill_owner *o)
{
	(void)o;
}

/* Its item is staged too: else nothing would post the bundle. */
static bool captured(void *ud, const char *id, bool saved)
{
	struct run_standalone *rs = ud;

	return saved && pubqueue_staged(rs->a->state_fd, id);
}

static bool owner_task(const struct kill_owner *o, const char *proc_cgroup)
{
	(void)o, (void)proc_cgroup;
	return false;
}

static void manifest(const struct kill_owner *o, struct json_object *man)
{
	(void)o, (void)man;
}

static const char *spool(void *ud, const struct kill_owner *o, char *buf,
			 size_t size)
{
	(void)ud, (void)o, (void)buf, (void)size;
	return NULL; /* --spool-dir's only */
}

static void labels(const struct kill_owner *o, struct agent_kill_labels *l)
{
	(void)o, (void)l;
}

static bool keep(void *ud, struct corr_kill *k, const struct kill_owner *o,
		 struct bundle *b, const char *id, uint64_t kill_ms,
		 int64_t latency)
{
	(void)ud, (void)k, (void)o, (void)b, (void)id;
	(void)kill_ms, (void)latency;
	return false;
}

/* The kill's item staged (the hand-over: an agent stopped before the
 * publisher took it posts it at its next start), then the publisher
 * woken. */
static void hand_over(void *ud, const struct corr_kill *k,
		      const struct kill_owner *o, const char *id,
		      const struct agent_verdict *v, uint64_t kill_ms)
{
	struct run_standalone *rs = ud;
	struct pub_item *it = malloc(sizeof(*it));
	int r;

	(void)o;
	if (!it) {
		log_error("report %s: out of memory: not posted; its bundle "
			  "stays in \"reports/%s.tar.gz\"",
			  id, id);
		return;
	}
	pub_item_from_kill(it, k, v, id, rs->a->node, kill_ms);
	r = pubqueue_stage(rs->a->state_fd, http_target_target(rs->target), it);
	if (r < 0)
		log_error("report %s: cannot stage it in the publish queue "
			  "(%s): not posted; its bundle stays in \"%s\"",
			  id, strerror(-r), it->bundle_file);
	else if (publisher_hand_over(rs->pub, id) < 0)
		log_error("report %s: the publisher's hand-over is full; "
			  "the report waits in the state dir's queue for the "
			  "agent's next start",
			  id);
	free(it);
}

static int in_use(void *ud, void (*mark)(const char *bundle_file, void *arg),
		  void *arg)
{
	struct run_standalone *rs = ud;
	int r = pubqueue_bundles(rs->a->state_fd, mark, arg);

	return r == -ENOENT ? 0 : r;
}

int run_standalone_new(struct agent *a, const struct http_target_opts *o,
		       struct run_standalone **ret)
{
	struct run_standalone *rs;
	int r;

	*ret = NULL;
	if (!o->url)
		return 0;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->a = a;
	r = http_target_new(o, a->state_fd, &rs->target);
	if (r == 0)
		r = publisher_new(a->state_fd, http_target_target(rs->target),
				  a->metrics, &rs->pub);
	if (r < 0) {
		run_standalone_free(rs);
		return r;
	}
	rs->hooks = (struct kill_hooks){
		.ud = rs,
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
		.cut_node_tasks = false,
	};
	a->hooks = &rs->hooks;
	log_info("publishing each kill to %s, %zu reports queued from before",
		 http_target_where(rs->target),
		 pubqueue_depth(publisher_queue(rs->pub)));
	*ret = rs;
	return 0;
}

int run_standalone_start(struct run_standalone *rs)
{
	return rs ? publisher_start(rs->pub, NULL) : 0;
}

void run_standalone_free(struct run_standalone *rs)
{
	if (!rs)
		return;
	publisher_free(rs->pub);
	http_target_free(rs->target);
	if (rs->a->hooks == &rs->hooks)
		rs->a->hooks = NULL;
	free(rs);
}
