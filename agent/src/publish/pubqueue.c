/* SPDX-License-Identifier: Apache-2.0 */
/* The publish queue's state machine and its files (pubqueue.h). */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "publish/pubqueue.h"
#include "obs/metrics_agent.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

#define QUEUE_DIR "queue"
#define FAILED_DIR "queue/failed"
#define ITEM_MAX (64u << 10)
#define MAX_ITEMS 4096
/* Items given up on, kept for whoever looks into why: the newest ones
 * (at most FAILED_KEEP * ITEM_MAX bytes; items are a few hundred). */
#define FAILED_KEEP 64

struct pubqueue {
	int dir_fd, failed_fd;
	const struct pub_ops *ops;
	void *ud;
	struct agent_metrics *metrics; /* the run's; NULL: none */
	struct pub_backoff b;
	struct pub_item **items;
	size_t n;
	struct pub_stats stats;
	unsigned seed;
};

static const char *const step_names[] = {"resolve", "report", "bundle",
					 "status",  "event",  "done"};

const char *pub_step_name(enum pub_step s)
{
	return s <= PUB_DONE ? step_names[s] : "?";
}

/* ---- files ---- */

#define STR(f)                                               \
	{                                                    \
#f, offsetof(struct pub_item, f),            \
			sizeof(((struct pub_item *)0)->f), 0 \
	}
#define I64(f)                                         \
	{                                              \
#f, offsetof(struct pub_item, f), 0, 1 \
	}

static const struct field {
	const char *name;
	size_t off, size;
	int kind; /* 0 string, 1 int64 */
} fields[] = {
	STR(id),	 STR(ns),	    STR(pod),
	STR(pod_uid),	 STR(container),    STR(container_id),
	STR(node),	 STR(killed_at),    STR(comm),
	I64(pid),	 I64(anon_rss),	    I64(file_rss),
	I64(shmem_rss),	 I64(limit),	    I64(usage),
	STR(verdict),	 STR(summary),	    STR(bundle_file),
	STR(report_uid), STR(last_error),   STR(workload_kind),
	STR(workload),	 I64(killed_at_ms),
};

static struct json_object *item_json(const struct pub_item *it)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; o && i < ARRAY_SIZE(fields); i++) {
		const char *p = (const char *)it + fields[i].off;

		json_object_object_add(
			o, fields[i].name,
			fields[i].kind ? json_object_new_int64(*(int64_t *)p)
				       : json_object_new_string(p));
	}
	json_object_object_add(o, "step",
			       json_object_new_string(pub_step_name(it->step)));
	json_object_object_add(o, "bundle_stored",
			       json_object_new_boolean(it->bundle_stored));
	json_object_object_add(o, "pod_gone",
			       json_object_new_boolean(it->pod_gone));
	json_object_object_add(o, "added_ms",
			       json_object_new_uint64(it->added_ms));
	json_object_object_add(o, "event_count",
			       json_object_new_int64(it->event_count));
	return o;
}

static int item_parse(struct json_object *o, struct pub_item *ret)
{
	struct pub_item it = {0};
	struct json_object *v;
	const char *s;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		char *p = (char *)&it + fields[i].off;

		if (!json_object_object_get_ex(o, fields[i].name, &v))
			continue;
		if (fields[i].kind)
			*(int64_t *)p = json_object_get_int64(v);
		else
			strlcpy_safe(p, json_object_get_string(v),
				     fields[i].size);
	}
	s = json_object_object_get_ex(o, "step", &v) ? json_object_get_string(v)
						     : "";
	for (it.step = PUB_RESOLVE; it.step < PUB_DONE; it.step++)
		if (streq(s, step_names[it.step]))
			break;
	if (it.step == PUB_DONE || !it.id[0] || strchr(it.id, '/'))
		return -EBADMSG;
	it.bundle_stored = json_object_object_get_ex(o, "bundle_stored", &v) &&
			   json_object_get_boolean(v);
	it.pod_gone = json_object_object_get_ex(o, "pod_gone", &v) &&
		      json_object_get_boolean(v);
	if (json_object_object_get_ex(o, "added_ms", &v))
		it.added_ms = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "event_count", &v))
		it.event_count = (unsigned)json_object_get_int64(v);
	*ret = it;
	return 0;
}

/* Writes it as dir_fd/<id>.json (a temporary name, then rename: a reader
 * never sees half an item). */
static int item_save(int dir_fd, const char *dir, const struct pub_item *it)
{
	struct json_object *o = item_json(it);
	char name[160];
	const char *s;
	size_t len;
	int r;

	if (!o)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s%s%s.json", dir, dir[0] ? "/" : "",
		 it->id);
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	r = write_file_atomic_at(dir_fd, name, s, len, 0600);
	json_object_put(o);
	return r;
}

static void item_unlink(struct pubqueue *q, const struct pub_item *it)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.json", it->id);
	if (unlinkat(q->dir_fd, name, 0) < 0 && errno != ENOENT)
		log_warn("cannot remove queue item \"%s\": %s, ignoring", name,
			 strerror(errno));
}

/* ---- the queue ---- */

static int cmp_added(const void *a, const void *b)
{
	const struct pub_item *x = *(struct pub_item *const *)a;
	const struct pub_item *y = *(struct pub_item *const *)b;

	if (x->added_ms != y->added_ms)
		return x->added_ms < y->added_ms ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* oomlens_publish_queue_depth, kills saved on the node and not yet in:
 * each push (the files loaded at start, a kill added) and each drop (done,
 * given up). */
static void depth_changed(const struct pubqueue *q)
{
	agent_metrics_queue_depth(q->metrics, (unsigned)q->n);
}

static int push(struct pubqueue *q, const struct pub_item *it)
{
	struct pub_item *copy;

	if (q->n == MAX_ITEMS)
		return -ENOSPC;
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *it;
	q->items[q->n++] = copy;
	depth_changed(q);
	return 0;
}

/* The item in dir_fd/name, or -errno. */
static int read_item(int dir_fd, const char *name, struct pub_item *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o;
	int r;

	strbuf_init(&sb, ITEM_MAX);
	r = read_file_at_nofollow(dir_fd, name, ITEM_MAX, &sb);
	if (r < 0)
		return r;
	o = json_tokener_parse(sb.buf);
	r = o ? item_parse(o, ret) : -EBADMSG;
	json_object_put(o);
	return r;
}

static bool is_item_name(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	/* DT_UNKNOWN on file systems that do not fill d_type: the read
	 * (O_NOFOLLOW, regular files only) decides; an item skipped here
	 * would lose its bundle to retention (kill/reports.c) */
	return (de->d_type == DT_REG || de->d_type == DT_UNKNOWN) && len >= 6 &&
	       streq(de->d_name + len - 5, ".json");
}

/* Queues the item in file name, at start (load) and at a hand-over
 * (pubqueue_take): -ENOSPC past MAX_ITEMS (the file stays for a later
 * start), -ENOENT when it is gone, -ENOMEM; a file that cannot be read as
 * an item is moved to queue/failed/, logged. */
static int load_one(struct pubqueue *q, const char *name)
{
	struct pub_item it;
	int r = q->n < MAX_ITEMS ? read_item(q->dir_fd, name, &it) : -ENOSPC;

	if (r == 0)
		return push(q, &it);
	if (r != -ENOENT && r != -ENOSPC && r != -ENOMEM) {
		log_warn("queue item \"%s\" unreadable (%s), moved to %s", name,
			 strerror(-r), FAILED_DIR);
		renameat(q->dir_fd, name, q->failed_fd, name);
	}
	return r;
}

static int load(struct pubqueue *q)
{
	struct dirent *de;
	DIR *d;
	int r = opendir_at(q->dir_fd, ".", &d);

	if (r < 0)
		return r;
	size_t left = 0; /* past MAX_ITEMS: kept on disk for a later start */

	while ((de = readdir(d))) {
		if (!is_item_name(de))
			continue;
		if (load_one(q, de->d_name) == -ENOSPC)
			left++;
	}
	closedir(d);
	if (left)
		log_warn("the queue holds %u items, the most: %zu more stay in "
			 "%s for a later start",
			 MAX_ITEMS, left, QUEUE_DIR);
	qsort(q->items, q->n, sizeof(*q->items), cmp_added);
	return 0;
}

int pubqueue_bundles(int state_fd,
		     void (*fn)(const char *bundle_file, void *ud), void *ud)
{
	struct dirent *de;
	struct pub_item it;
	int n = 0;
	DIR *d;
	int r = opendir_at(state_fd, QUEUE_DIR, &d);

	if (r < 0)
		return r;
	while ((de = readdir(d)))
		if (is_item_name(de) &&
		    read_item(dirfd(d), de->d_name, &it) >= 0) {
			fn(it.bundle_file, ud);
			n++;
		}
	closedir(d);
	return n;
}

struct failed_file {
	char name[256];
	int64_t mtime_ns;
};

static int oldest_first(const void *pa, const void *pb)
{
	const struct failed_file *a = pa, *b = pb;

	if (a->mtime_ns != b->mtime_ns)
		return a->mtime_ns < b->mtime_ns ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* queue/failed/ down to its newest FAILED_KEEP items, the rest logged. */
static void prune_failed(struct pubqueue *q)
{
	struct failed_file *v = NULL, *nv;
	size_t n = 0, cap = 0, removed = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (opendir_at(q->failed_fd, ".", &d) < 0)
		return;
	while ((de = readdir(d))) {
		if (!is_item_name(de) ||
		    strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(q->failed_fd, de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : FAILED_KEEP * 2;
			if (!(nv = realloc(v, cap * sizeof(*v))))
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n++].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
				  st.st_mtim.tv_nsec;
	}
	closedir(d);
	if (n > FAILED_KEEP) {
		qsort(v, n, sizeof(*v), oldest_first);
		for (size_t i = 0; i < n - FAILED_KEEP; i++)
			removed += unlinkat(q->failed_fd, v[i].name, 0) == 0;
		log_warn("removed the %zu oldest of %zu items in %s (%u kept)",
			 removed, n, FAILED_DIR, FAILED_KEEP);
	}
	free(v);
}

int pubqueue_open(int state_fd, const struct pub_ops *ops, void *ud,
		  const struct pub_backoff *b, struct agent_metrics *m,
		  struct pubqueue **ret)
{
	struct pubqueue *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	q->dir_fd = q->failed_fd = -1;
	q->ops = ops;
	q->ud = ud;
	q->metrics = m;
	q->b.base_ms = b && b->base_ms ? b->base_ms : 500;
	q->b.cap_ms = b && b->cap_ms ? b->cap_ms : 60000;
	q->seed = (unsigned)now_monotonic_us();
	q->items = calloc(MAX_ITEMS, sizeof(*q->items));
	r = q->items ? mkdir_p_at(state_fd, FAILED_DIR, 0750) : -ENOMEM;
	if (r >= 0) {
		q->dir_fd = openat(state_fd, QUEUE_DIR,
				   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		q->failed_fd = openat(state_fd, FAILED_DIR,
				      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = q->dir_fd < 0 || q->failed_fd < 0 ? -errno : load(q);
		if (r >= 0)
			prune_failed(q);
	}
	if (r < 0) {
		pubqueue_free(q);
		return r;
	}
	*ret = q;
	return 0;
}

void pubqueue_free(struct pubqueue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		free(q->items[i]);
	free(q->items);
	if (q->dir_fd >= 0)
		close(q->dir_fd);
	if (q->failed_fd >= 0)
		close(q->failed_fd);
	free(q);
}

/* A new item as the queue first holds it. */
static void item_first(const struct pub_item *it, struct pub_item *ret)
{
	*ret = *it;
	ret->step = it->pod[0] && it->container[0] ? PUB_REPORT : PUB_RESOLVE;
	ret->attempts = 0;
	ret->next_ms = 0;
	ret->bundle_stored = true;
	if (!ret->added_ms)
		ret->added_ms = now_realtime_us() / 1000;
}

int pubqueue_stage(int state_fd, const struct pub_item *it)
{
	struct pub_item first;

	if (!it->id[0] || strchr(it->id, '/'))
		return -EINVAL;
	item_first(it, &first);
	return item_save(state_fd, QUEUE_DIR, &first);
}

static bool queued(const struct pubqueue *q, const char *id)
{
	for (size_t i = 0; i < q->n; i++)
		if (streq(q->items[i]->id, id))
			return true;
	return false;
}

int pubqueue_take(struct pubqueue *q, const char *id)
{
	char name[128];

	if (!id[0] || strchr(id, '/') ||
	    strlen(id) >= sizeof(((struct pub_item *)0)->id))
		return -EINVAL;
	if (queued(q, id))
		return -EEXIST;
	snprintf(name, sizeof(name), "%s.json", id);
	return load_one(q, name);
}

int pubqueue_add(struct pubqueue *q, const struct pub_item *it)
{
	struct pub_item first;
	int r;

	if (queued(q, it->id))
		return -EEXIST;
	item_first(it, &first);
	r = item_save(q->dir_fd, "", &first);
	return r < 0 ? r : pubqueue_take(q, it->id);
}

size_t pubqueue_depth(const struct pubqueue *q)
{
	return q->n;
}

const struct pub_item *pubqueue_item(const struct pubqueue *q, size_t i)
{
	return i < q->n ? q->items[i] : NULL;
}

const struct pub_stats *pubqueue_stats(const struct pubqueue *q)
{
	return &q->stats;
}

uint64_t pub_backoff_ms(const struct pub_backoff *b, unsigned n, double j)
{
	uint64_t d = b->base_ms;

	for (unsigned i = 1; i < n && d < b->cap_ms; i++)
		d *= 2;
	if (d > b->cap_ms)
		d = b->cap_ms;
	if (j < 0.75)
		j = 0.75;
	if (j > 1.25)
		j = 1.25;
	return (uint64_t)((double)d * j);
}

/* ---- the steps ---- */

/* The API's limit for one object, less room for the rest of it. */
#define BUNDLE_MAX (900u << 10)

enum outcome { ADVANCE, RETRY, FAIL };

static enum outcome classify(int r, const struct kube_error *e)
{
	if (r >= 0)
		return ADVANCE;
	if (e->retryable)
		return RETRY;
	switch (r) {
	case -EAGAIN: /* 429 */
	case -EIO:    /* 5xx */
	case -EBUSY:  /* 409 Conflict: try again */
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -EPROTO:
	case -EACCES: /* 401: a token being rotated */
	case -EPERM:  /* 403: RBAC may be fixed while we wait */
	case -ECANCELED:
	case -ENOMEM:
		return RETRY;
	default:
		return FAIL;
	}
}

const char *pub_failure_reason(int r, const struct kube_error *e)
{
	long status = e ? e->http_status : 0;

	switch (r) {
	case -ECANCELED:
		return NULL;
	case -ETIMEDOUT:
		return "timeout";
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -EHOSTUNREACH:
		return "connect";
	case -EPROTO:
		return "tls";
	case -EACCES:
		return "unauthorized";
	case -EPERM:
		return "forbidden";
	case -ENOENT:
		return "not_found";
	case -EBUSY:
		return "conflict";
	case -EAGAIN:
		return "throttled";
	case -E2BIG:
		return "too_large";
	default:
		break;
	}
	if (status >= 500 || (!status && r == -EIO)) /* -EIO: other 5xx */
		return "http_5xx";
	return status >= 400 ? "http_4xx" : "other";
}

void pub_count_failure(struct agent_metrics *m, int r,
		       const struct kube_error *e)
{
	const char *why = pub_failure_reason(r, e);

	if (why)
		agent_metrics_publish_failure(m, why);
}

static int do_report(struct pubqueue *q, struct pub_item *it,
		     struct kube_error *err)
{
	char uid[64] = "";
	int r = q->ops->create_report(q->ud, it, uid, sizeof(uid), err);

	if (r == -EEXIST) {
		/* created before a crash or a lost answer: done, but the
		 * bundle's ownerReference needs the uid */
		q->stats.conflicts++;
		r = q->ops->get_report_uid(q->ud, it, uid, sizeof(uid), err);
	}
	if (r >= 0)
		strlcpy_safe(it->report_uid, uid, sizeof(it->report_uid));
	return r;
}

static void no_bundle(struct pub_item *it, const char *why)
{
	it->bundle_stored = false;
	snprintf(it->last_error, sizeof(it->last_error), "bundle: %s", why);
	log_warn("report %s: %s, publishing the report without it", it->id,
		 why);
}

static int do_bundle(struct pubqueue *q, struct pub_item *it,
		     struct kube_error *err)
{
	void *data = NULL;
	size_t len = 0;
	int r = q->ops->read_bundle(q->ud, it->bundle_file, &data, &len);

	if (r < 0) {
		no_bundle(it, strerror(-r));
		return 0;
	}
	if (len > BUNDLE_MAX) {
		free(data);
		no_bundle(it, "larger than 900 KiB");
		return 0;
	}
	r = q->ops->create_bundle(q->ud, it, data, len, err);
	if (r == -EEXIST) {
		/* stored before this call, or planted under our name by
		 * someone who may create OOMBundles here: the data decides */
		q->stats.conflicts++;
		r = q->ops->bundle_is_ours(q->ud, it, data, len, err);
		if (r == 0) { /* the op said why, and deleted it */
			q->stats.planted++;
			r = q->ops->create_bundle(q->ud, it, data, len, err);
		}
	}
	free(data);
	if (r == -E2BIG) {
		pub_count_failure(q->metrics, r, err);
		no_bundle(it, "refused by the API server as too large");
		return 0;
	}
	return r;
}

static int do_event(struct pubqueue *q, struct pub_item *it,
		    struct kube_error *err)
{
	unsigned count = 0;
	int r;

	if (it->pod_uid[0]) {
		r = q->ops->pod_alive(q->ud, it, err);
		if (r < 0)
			return r;
		it->pod_gone = r == 0;
	} else {
		it->pod_gone = true;
	}
	if (it->pod_gone) {
		q->stats.pod_gone++;
		log_info("pod %s/%s is gone: report %s published without its "
			 "Event",
			 it->ns, it->pod, it->id);
		return 0;
	}
	r = q->ops->post_event(q->ud, it, &count, err);
	if (r >= 0)
		it->event_count = count;
	return r;
}

static int step_once(struct pubqueue *q, struct pub_item *it,
		     struct kube_error *err)
{
	switch (it->step) {
	case PUB_RESOLVE:
		return q->ops->resolve ? q->ops->resolve(q->ud, it, err) : 0;
	case PUB_REPORT:
		return do_report(q, it, err);
	case PUB_BUNDLE:
		return do_bundle(q, it, err);
	case PUB_STATUS:
		return q->ops->patch_status(q->ud, it, err);
	case PUB_EVENT:
		return do_event(q, it, err);
	default:
		return 0;
	}
}

static void drop(struct pubqueue *q, size_t i)
{
	free(q->items[i]);
	memmove(&q->items[i], &q->items[i + 1],
		(q->n - i - 1) * sizeof(*q->items));
	q->n--;
	depth_changed(q);
}

static void fail_item(struct pubqueue *q, size_t i, int r,
		      const struct kube_error *e)
{
	struct pub_item *it = q->items[i];

	snprintf(it->last_error, sizeof(it->last_error), "%s: %.100s (%s)",
		 pub_step_name(it->step), e->message[0] ? e->message : "",
		 strerror(-r));
	log_error("report %s: %s; giving up, kept in %s", it->id,
		  it->last_error, FAILED_DIR);
	if (item_save(q->failed_fd, "", it) >= 0)
		item_unlink(q, it);
	q->stats.failed++;
	drop(q, i);
	prune_failed(q);
}

static void retry_item(struct pubqueue *q, struct pub_item *it, int r,
		       const struct kube_error *e, uint64_t now_ms)
{
	double j = 0.75 + 0.5 * ((double)rand_r(&q->seed) / RAND_MAX);

	it->attempts++;
	q->stats.retries++;
	it->next_ms = now_ms + pub_backoff_ms(&q->b, it->attempts, j);
	snprintf(it->last_error, sizeof(it->last_error), "%s: %.100s (%s)",
		 pub_step_name(it->step), e->message, strerror(-r));
	log_warn("report %s: %s; retry %u in %llu ms", it->id, it->last_error,
		 it->attempts, (unsigned long long)(it->next_ms - now_ms));
}

/* 404 on a create: the collection is not served (yet). An API server
 * that has just started answers "404 page not found" for a
 * CustomResourceDefinition's path until that resource's handler is up
 * (seen on the test node a few seconds after a restart); a chart being
 * upgraded, likewise. Retried for about two minutes of backoff, then the
 * item fails as any other 4xx would (a deleted namespace never comes
 * back). */
#define NOT_SERVED_RETRIES 8

static enum outcome classify_step(const struct pub_item *it, int r,
				  const struct kube_error *e)
{
	if (r == -ENOENT && (it->step == PUB_REPORT || it->step == PUB_BUNDLE))
		return it->attempts < NOT_SERVED_RETRIES ? RETRY : FAIL;
	return classify(r, e);
}

/* The BUNDLE step done with r: the kill's report and bundle are in the
 * API (or the bundle is known not to fit, and the report says so). Its
 * publish latency, once a kill: a bundle that was there already at this
 * run's first try (r 1: 409 AlreadyExists) was stored, and counted, by a
 * run that stopped before it saved the step, or is the same kill queued
 * again; after a failed try in this run a 409 is this run's own answer,
 * lost on the way, and counts. An item replayed from the files after a
 * restart counts the whole wait, outage and restart included. */
static void bundle_done(const struct pubqueue *q, const struct pub_item *it,
			int r)
{
	uint64_t now = now_realtime_us() / 1000;
	uint64_t kill = it->killed_at_ms > 0 ? (uint64_t)it->killed_at_ms : 0;

	/* no kill time (an item of an older agent), or a clock set back */
	if ((r == 1 && it->attempts == 0) || !kill || now < kill)
		return;
	agent_metrics_publish(q->metrics, (double)(now - kill) / 1000.0);
}

/* Runs item i until it waits or leaves. True when it left the queue. */
static bool run_item(struct pubqueue *q, size_t i, uint64_t now_ms)
{
	struct pub_item *it = q->items[i];

	while (it->step < PUB_DONE) {
		struct kube_error e = {0};
		int r = step_once(q, it, &e);

		switch (classify_step(it, r, &e)) {
		case RETRY:
			pub_count_failure(q->metrics, r, &e);
			retry_item(q, it, r, &e, now_ms);
			return false;
		case FAIL:
			pub_count_failure(q->metrics, r, &e);
			fail_item(q, i, r, &e);
			return true;
		case ADVANCE:
			break;
		}
		if (it->step == PUB_BUNDLE)
			bundle_done(q, it, r);
		it->step++;
		it->attempts = 0;
		if (it->step < PUB_DONE && item_save(q->dir_fd, "", it) < 0)
			log_warn("report %s: cannot save its progress, "
				 "ignoring",
				 it->id);
	}
	item_unlink(q, it);
	q->stats.published++;
	drop(q, i);
	return true;
}

int pubqueue_run(struct pubqueue *q, uint64_t now_ms, uint64_t *ret_next_ms)
{
	uint64_t next = UINT64_MAX;
	int finished = 0;

	for (size_t i = 0; i < q->n;) {
		struct pub_item *it = q->items[i];

		if (it->next_ms > now_ms) {
			next = it->next_ms < next ? it->next_ms : next;
			i++;
			continue;
		}
		if (run_item(q, i, now_ms)) {
			finished++;
			continue;
		}
		next = it->next_ms < next ? it->next_ms : next;
		i++;
	}
	if (ret_next_ms)
		*ret_next_ms = next;
	return finished;
}
