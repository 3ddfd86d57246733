/* SPDX-License-Identifier: Apache-2.0 */
/* A kill finished late, on the detector thread (cluster mode): an opted-in
 * pod whose spool the node does not show. Its bundle is written once,
 * when the pod's snapshot is in or known not to come: until then the kill
 * is a case, its evidence as collected and not yet diagnosed, kept in
 * memory and saved beside its publish item (queue/<id>.case.tar.gz, then
 * queue/<id>.json staged without a verdict), so that an agent stopped
 * while it waits, by force or not, loses nothing. The pod's OOMBundle
 * snap-<pod> is asked of the publisher thread (publish/cluster_snap.c,
 * which fetches and checks it); when the answer comes back through an
 * evqueue, its files are added and the case finished (kill/finish.c, from
 * the kill's report as parsed once): diagnosed, rendered and written; the
 * item gets its verdict, the case goes, and only then is the kill counted
 * and handed to the publisher. The next start takes up each case left by
 * the last one: it reads the kernel's report back from the case and asks
 * for the snapshot again. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_late_snap.h"
#include "publish/pubqueue.h"
#include "publish/target_kube.h"
#include "obs/metrics_agent.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/log.h"
#include "base/memlock.h"
#include "base/util.h"
#include "kernel/kmsg.h"

/* A snapshot newer than the kill by more than this is not its pre-kill
 * state (a snapshot of the restarted container). */
#define SNAP_AFTER_KILL_MS 2000

/* One kill waiting for its pod's snap-<pod>. */
struct snap_wait {
	struct bundle *b;    /* the case: evidence, not diagnosed */
	struct pub_item *it; /* staged without its verdict */
	/* the kill's parsed report, taken over from the correlator (or read
	 * back from the case at a start): the case is diagnosed from it */
	struct oom_report report;
	uint64_t kill_ms;
	int64_t latency;
};

struct late_snap {
	struct agent *a;
	struct cluster_mode *cm;
	int queue_fd; /* state_dir/queue, where cases lie; -1: no waits */
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
	ls->queue_fd = pubqueue_dir_open(cm->state_fd);
	if (ls->queue_fd < 0)
		log_warn("cannot open the state dir's queue (%s): kills are "
			 "finished without waiting for their pod's snapshot",
			 strerror(-ls->queue_fd));
	*ret = ls;
	return 0;
}

void late_snap_free(struct late_snap *ls)
{
	if (!ls)
		return;
	if (ls->queue_fd >= 0)
		close(ls->queue_fd);
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

static void case_name(const char *id, char *buf, size_t size)
{
	snprintf(buf, size, "%s" PUBQUEUE_CASE_SUFFIX, id);
}

bool late_snap_has_case(const struct late_snap *ls, const char *id)
{
	return ls->queue_fd >= 0 &&
	       pubqueue_has_case(ls->queue_fd, id, strlen(id));
}

static void case_remove(const struct late_snap *ls, const char *id)
{
	char name[160];

	case_name(id, name, sizeof(name));
	if (unlinkat(ls->queue_fd, name, 0) < 0 && errno != ENOENT)
		log_warn("report %s: cannot remove its case queue/%s (%s)", id,
			 name, strerror(errno));
}

/* Asks the publisher for its pod's snap-<pod> and keeps the case in
 * a free slot (the caller checked there is one): false when the request
 * cannot be made. */
static bool ask(struct late_snap *ls, struct bundle *b, struct pub_item *it,
		struct oom_report *report, uint64_t kill_ms, int64_t latency)
{
	const struct kube_item *k = kube_item_get(it);
	struct cluster_snap *s = calloc(1, sizeof(*s));
	struct snap_wait *w = &ls->w[ls->n];

	if (!s)
		return false;
	strlcpy_safe(s->id, it->id, sizeof(s->id));
	strlcpy_safe(s->ns, k->ns, sizeof(s->ns));
	strlcpy_safe(s->pod, k->pod, sizeof(s->pod));
	strlcpy_safe(s->uid, k->pod_uid, sizeof(s->uid));
	if (cluster_snap_request(ls->cm->cluster, s) < 0) {
		free(s);
		return false;
	}
	log_info("report %s: no spool of pod %s/%s on the node, asking for "
		 "OOMBundle %s/snap-%s",
		 it->id, k->ns, k->pod, k->ns, k->pod);
	w->b = b;
	w->it = it;
	w->report = *report;
	oom_report_init(report);
	w->kill_ms = kill_ms;
	w->latency = latency;
	ls->n++;
	return true;
}

bool late_snap_wait(struct late_snap *ls, struct corr_kill *k,
		    const struct cluster_kill_pod *p, struct bundle *b,
		    const char *id, uint64_t kill_ms, int64_t latency)
{
	static const struct agent_verdict none;
	struct pub_item *it;
	char name[160];
	long r;

	/* only opted-in pods have a sidecar; the node's spool wins */
	if (!p->have || !p->m.pod || p->m.pod->capture != KUBE_CAPTURE_ON ||
	    bundle_has(b, "spool/snapshot.json") ||
	    ls->n == CLUSTER_SNAP_WAIT || ls->queue_fd < 0)
		return false;
	/* the case first: one without its item is finished at the next
	 * start (and kept on the node), an item without its bundle or
	 * case could only fail */
	case_name(id, name, sizeof(name));
	r = bundle_save_unfinished(b, ls->queue_fd, name);
	if (r < 0) {
		log_warn("report %s: cannot save its case (%s): finished "
			 "without its pod's snapshot",
			 id, strerror((int)-r));
		return false;
	}
	it = cluster_kill_item(ls->cm, k, p, id, &none, kill_ms);
	if (it && ask(ls, b, it, &k->report, kill_ms, latency))
		return true;
	free(it);
	case_remove(ls, id);
	return false;
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

/* Adds the snapshot to w's case, and where it came from to its manifest.
 * 0, or -errno with s->why set. */
static int merge(struct snap_wait *w, struct cluster_snap *s)
{
	struct json_object *o;
	char name[400];
	uint64_t t = 0;
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
	json_object_object_add(bundle_manifest(w->b), "spool", o);
	return 0;
}

/* Finishes w's case: the bundle's one write, then its item given the
 * verdict, the case removed, the kill counted and handed to the
 * publisher; what w holds is freed. A bundle that cannot be written keeps
 * its case for the next start. */
static void finish(struct late_snap *ls, struct snap_wait *w)
{
	struct pub_item *it = w->it;
	const struct kube_item *k = kube_item_get(it);
	struct agent_verdict v = {0};
	long size = agent_bundle_finish(ls->a, w->b, &w->report, w->kill_ms,
					it->id, &v);
	int r = 0;

	if (size >= 0) {
		pub_item_set_verdict(it, &v);
		r = cluster_kill_stage(ls->cm, it);
		log_info("report %s: bundle written (%ld bytes): %s", it->id,
			 size, it->verdict);
	} else {
		log_error("report %s: cannot write its bundle (%s); its case "
			  "stays in the state dir's queue for the agent's "
			  "next start",
			  it->id, strerror((int)-size));
	}
	if (r < 0)
		log_warn("report %s: cannot stage its verdict (%s); published "
			 "as \"unknown\"",
			 it->id, strerror(-r));
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
	if (size >= 0) {
		case_remove(ls, it->id);
		cluster_kill_hand_over(ls->cm, it->id);
	}
	free(it);
}

/* finish(), and w's slot given up. */
static void release(struct late_snap *ls, struct snap_wait *w)
{
	finish(ls, w);
	*w = ls->w[--ls->n];
}

void late_snap_answers(struct late_snap *ls)
{
	void *p;

	while (evqueue_pop(cluster_snap_answers(ls->cm->cluster), &p) == 1) {
		struct cluster_snap *s = p;
		size_t i;

		for (i = 0; i < ls->n; i++)
			if (streq(ls->w[i].it->id, s->id))
				break;
		if (i == ls->n) {
			cluster_snap_free(s);
			continue;
		}
		if (s->files && merge(&ls->w[i], s) == 0)
			log_info("report %s: pre-kill snapshot from OOMBundle "
				 "%s/snap-%s (%zu files)",
				 s->id, s->ns, s->pod, s->n_files);
		else
			log_warn("report %s: OOMBundle %s/snap-%s not used: "
				 "%s; published without the pre-kill snapshot",
				 s->id, s->ns, s->pod, s->why);
		release(ls, &ls->w[i]);
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
		release(ls, &ls->w[0]);
	}
}

/* ---- a start: the cases the last one left ---- */

struct first_report {
	struct oom_report r;
	bool have;
};

static int take_report(struct oom_report *r, void *ud)
{
	struct first_report *f = ud;

	if (f->have)
		return 0; /* the first report is the kill's */
	f->r = *r;
	f->have = true;
	oom_report_init(r);
	return 0;
}

/* The kernel's report in case b, read back from its kernel/oom.txt, into
 * *ret (initialised); logged when it cannot be. */
static void read_report(struct bundle *b, struct oom_report *ret)
{
	struct first_report f = {.have = false};
	size_t len = 0;
	const char *raw = bundle_get(b, "kernel/oom.txt", &len);
	int r;

	oom_report_init(&f.r);
	r = raw ? kmsg_parse_buffer(raw, len, take_report, &f) : -ENOENT;
	if (r <= 0 || !f.have)
		log_warn("report %s: the kernel's report in its case cannot "
			 "be read (%s); diagnosed from the rest",
			 bundle_id(b), r < 0 ? strerror(-r) : "no report");
	*ret = f.r;
}

/* A wait of case b (its item it, NULL: none) as the manifest and the
 * kernel's report read back from it give it. */
static struct snap_wait case_wait(struct bundle *b, struct pub_item *it)
{
	struct json_object *man = bundle_manifest(b);
	struct json_object *lat = jget(man, "detect_latency_us");
	struct snap_wait w = {.b = b, .it = it, .latency = -1};

	read_report(b, &w.report);
	w.kill_ms = jget_u64_or0(NULL, man, "killed_at_ms");
	if (json_object_is_type(lat, json_type_int))
		w.latency = json_object_get_int64(lat);
	return w;
}

/* The case of item it (read from queue/<name>) back in a slot, and its
 * pod's snapshot asked again; finished at once when that cannot be. */
static void resume(struct late_snap *ls, const char *name, struct bundle *b,
		   struct pub_item *it)
{
	struct snap_wait w = case_wait(b, it);

	log_info("report %s: its case (queue/%s) was left by the agent's "
		 "last stop; finishing it",
		 it->id, name);
	if (ls->n < CLUSTER_SNAP_WAIT &&
	    ask(ls, b, it, &w.report, w.kill_ms, w.latency))
		return;
	finish(ls, &w);
}

/* A case whose item was never staged (the agent stopped between the two
 * writes): its bundle written and kept on the node. */
static void finish_unpublished(struct late_snap *ls, struct bundle *b)
{
	struct agent_verdict v = {0};
	struct snap_wait w = case_wait(b, NULL);
	long size = agent_bundle_finish(ls->a, b, &w.report, w.kill_ms,
					bundle_id(b), &v);

	if (size >= 0)
		log_warn("report %s: its case had no publish item (the agent "
			 "stopped between the two); its bundle is written, %s, "
			 "and stays on the node",
			 bundle_id(b), v.verdict);
	else
		log_error("report %s: cannot write its bundle (%s): lost",
			  bundle_id(b), strerror((int)-size));
	oom_report_release(&w.report);
}

/* One queue/<id>.case.tar.gz at a start. */
static void take_up(struct late_snap *ls, const char *name)
{
	const struct pub_target *t = cluster_target(ls->cm->cluster);
	size_t n = strlen(name) - strlen(PUBQUEUE_CASE_SUFFIX);
	struct pub_item *it = calloc(1, sizeof(*it));
	struct bundle *b = NULL;
	char id[96];
	int r, q;

	snprintf(id, sizeof(id), "%.*s", (int)n, name);
	if (!it)
		return;
	r = pubqueue_read(ls->cm->state_fd, t, id, it);
	if (r == 0 && is_regular_at(ls->cm->state_fd, it->bundle_file)) {
		/* stopped after the write: only the hand-over is left */
		case_remove(ls, id);
		cluster_kill_hand_over(ls->cm, id);
		free(it);
		return;
	}
	q = bundle_load_unfinished(ls->queue_fd, name, &b);
	if (q == 0 && !streq(bundle_id(b), id))
		q = -EBADMSG;
	if (q < 0) {
		/* its item, if any, is published without a bundle */
		log_error("report %s: its case queue/%s cannot be read back "
			  "(%s): its evidence is lost",
			  id, name, bundle_strerror(q));
		bundle_free(b);
		case_remove(ls, id);
		if (r == 0)
			cluster_kill_hand_over(ls->cm, id);
		free(it);
		return;
	}
	if (r == 0) {
		resume(ls, name, b, it);
		return;
	}
	finish_unpublished(ls, b);
	bundle_free(b);
	free(it);
	case_remove(ls, id);
}

void late_snap_resume(struct late_snap *ls)
{
	struct dirent *de;
	DIR *d;
	int r;

	if (ls->queue_fd < 0)
		return;
	r = opendir_at(ls->queue_fd, ".", &d);
	if (r < 0) {
		log_warn("cannot list the state dir's queue (%s): cases left "
			 "by the last stop wait for the next",
			 strerror(-r));
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name),
		       sl = strlen(PUBQUEUE_CASE_SUFFIX);

		if (len > sl && len - sl < 96 &&
		    streq(de->d_name + len - sl, PUBQUEUE_CASE_SUFFIX) &&
		    (de->d_type == DT_REG || de->d_type == DT_UNKNOWN))
			take_up(ls, de->d_name);
	}
	closedir(d);
}
