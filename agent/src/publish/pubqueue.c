/* SPDX-License-Identifier: Apache-2.0 */
/* The publish queue's files and the loop that runs a target's steps
 * (pubqueue.h, pubtarget.h). */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
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
	const struct pub_target *t;
	struct agent_metrics *metrics; /* the run's; NULL: none */
	struct pub_backoff b;
	struct pub_item **items;
	size_t n;
	size_t unfinished; /* left at the start: their bundle to be written */
	struct pub_stats stats;
	unsigned seed;
};

const char *pubqueue_step_name(const struct pubqueue *q,
			       const struct pub_item *it)
{
	return it->step < q->t->n_steps ? q->t->steps[it->step].name : "done";
}

/* ---- files ---- */

#define STR(f)                                                     \
	{                                                          \
#f, offsetof(struct pub_item, f),                  \
			sizeof(((struct pub_item *)0)->f), PUB_STR \
	}
#define I64(f)                                               \
	{                                                    \
#f, offsetof(struct pub_item, f), 0, PUB_I64 \
	}

/* The kill's fields, every target's; names as the files of every agent
 * before have them. */
static const struct pub_field fields[] = {
	STR(id),	STR(node),	  STR(killed_at),  STR(comm),
	STR(cgroup),	I64(pid),	  I64(anon_rss),   I64(file_rss),
	I64(shmem_rss), I64(limit),	  I64(usage),	   STR(verdict),
	STR(summary),	STR(bundle_file), STR(last_error), I64(killed_at_ms),
};

static struct json_object *field_json(const struct pub_field *f,
				      const unsigned char *base)
{
	const void *p = base + f->off;

	switch (f->kind) {
	case PUB_STR:
		return json_object_new_string(p);
	case PUB_I64:
		return json_object_new_int64(*(const int64_t *)p);
	case PUB_U64:
		return json_object_new_uint64(*(const uint64_t *)p);
	case PUB_UINT:
		return json_object_new_int64(*(const unsigned *)p);
	case PUB_BOOL:
		return json_object_new_boolean(*(const bool *)p);
	}
	return NULL;
}

/* A field read back; a value of another JSON type leaves it as it was. */
static void field_parse(const struct pub_field *f, unsigned char *base,
			struct json_object *v)
{
	void *p = base + f->off;
	bool num = json_object_is_type(v, json_type_int);

	switch (f->kind) {
	case PUB_STR:
		if (json_object_is_type(v, json_type_string))
			strlcpy_safe(p, json_object_get_string(v), f->size);
		break;
	case PUB_I64:
		if (num)
			*(int64_t *)p = json_object_get_int64(v);
		break;
	case PUB_U64:
		if (num)
			*(uint64_t *)p = json_object_get_uint64(v);
		break;
	case PUB_UINT:
		if (num)
			*(unsigned *)p = (unsigned)json_object_get_int64(v);
		break;
	case PUB_BOOL:
		if (json_object_is_type(v, json_type_boolean))
			*(bool *)p = json_object_get_boolean(v);
		break;
	}
}

static void fields_json(struct json_object *o, const struct pub_field *f,
			size_t n, const unsigned char *base)
{
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, f[i].name, field_json(&f[i], base));
}

static void fields_parse(struct json_object *o, const struct pub_field *f,
			 size_t n, unsigned char *base)
{
	struct json_object *v;

	for (size_t i = 0; i < n; i++)
		if (json_object_object_get_ex(o, f[i].name, &v))
			field_parse(&f[i], base, v);
}

static struct json_object *item_json(const struct pub_target *t,
				     const struct pub_item *it)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	fields_json(o, fields, ARRAY_SIZE(fields), (const unsigned char *)it);
	fields_json(o, t->fields, t->n_fields, it->ext);
	json_object_object_add(
		o, "step",
		json_object_new_string(it->step < t->n_steps
					       ? t->steps[it->step].name
					       : "done"));
	json_object_object_add(o, "target", json_object_new_string(t->name));
	json_object_object_add(o, "added_ms",
			       json_object_new_uint64(it->added_ms));
	return o;
}

/* The target's name in an item's file; an agent before targets wrote
 * none, and published to Kubernetes only. */
#define TARGET_BEFORE "kubernetes"

/* An item of t read back from o; t NULL: its kill's fields only (who
 * needs its bundle). -EBADMSG for an item without an id, one whose id is
 * no file name and one whose step t does not have; -EXDEV for one
 * another target staged. */
static int item_parse(struct json_object *o, const struct pub_target *t,
		      struct pub_item *ret)
{
	struct pub_item it = {0};
	struct json_object *v;
	const char *s;

	fields_parse(o, fields, ARRAY_SIZE(fields), (unsigned char *)&it);
	if (!it.id[0] || strchr(it.id, '/'))
		return -EBADMSG;
	if (json_object_object_get_ex(o, "added_ms", &v) &&
	    json_object_is_type(v, json_type_int))
		it.added_ms = (uint64_t)json_object_get_int64(v);
	if (t) {
		s = json_object_object_get_ex(o, "target", &v)
			    ? json_object_get_string(v)
			    : TARGET_BEFORE;
		if (!s || !streq(s, t->name))
			return -EXDEV;
		fields_parse(o, t->fields, t->n_fields, it.ext);
		s = json_object_object_get_ex(o, "step", &v)
			    ? json_object_get_string(v)
			    : NULL;
		for (it.step = 0; s && it.step < t->n_steps; it.step++)
			if (streq(s, t->steps[it.step].name))
				break;
		if (!s || it.step == t->n_steps)
			return -EBADMSG;
	}
	*ret = it;
	return 0;
}

/* Writes it as dir_fd/<id>.json (a temporary name, then rename: a reader
 * never sees half an item). */
static int item_save(int dir_fd, const char *dir, const struct pub_target *t,
		     const struct pub_item *it)
{
	struct json_object *o = item_json(t, it);
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
static int read_item(int dir_fd, const char *name, const struct pub_target *t,
		     struct pub_item *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o;
	int r;

	strbuf_init(&sb, ITEM_MAX);
	r = read_file_at_nofollow(dir_fd, name, ITEM_MAX, &sb);
	if (r < 0)
		return r;
	o = json_tokener_parse(sb.buf);
	r = o && json_object_is_type(o, json_type_object)
		    ? item_parse(o, t, ret)
		    : -EBADMSG;
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
	int r = q->n < MAX_ITEMS ? read_item(q->dir_fd, name, q->t, &it)
				 : -ENOSPC;

	if (r == 0)
		return push(q, &it);
	if (r == -EXDEV) {
		log_warn("queue item \"%s\" is another publish target's, not "
			 "%s's: moved to %s",
			 name, q->t->name, FAILED_DIR);
		renameat(q->dir_fd, name, q->failed_fd, name);
	} else if (r != -ENOENT && r != -ENOSPC && r != -ENOMEM) {
		log_warn("queue item \"%s\" unreadable (%s), moved to %s", name,
			 strerror(-r), FAILED_DIR);
		renameat(q->dir_fd, name, q->failed_fd, name);
	}
	return r;
}

bool pubqueue_has_case(int queue_fd, const char *id, size_t id_len)
{
	char name[160];

	snprintf(name, sizeof(name), "%.*s" PUBQUEUE_CASE_SUFFIX, (int)id_len,
		 id);
	return is_regular_at(queue_fd, name);
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
		/* "<id>.json" */
		if (pubqueue_has_case(q->dir_fd, de->d_name,
				      strlen(de->d_name) - strlen(".json"))) {
			q->unfinished++;
			continue;
		}
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
		    read_item(dirfd(d), de->d_name, NULL, &it) >= 0) {
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

int pubqueue_open(int state_fd, const struct pub_target *t,
		  const struct pub_backoff *b, struct agent_metrics *m,
		  struct pubqueue **ret)
{
	struct pubqueue *q = calloc(1, sizeof(*q));
	int r;

	if (!q)
		return -ENOMEM;
	q->dir_fd = q->failed_fd = -1;
	q->t = t;
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

/* A new item as the queue first holds it: at t's first step. */
static void item_first(const struct pub_target *t, const struct pub_item *it,
		       struct pub_item *ret)
{
	*ret = *it;
	ret->step = t->first ? (unsigned)t->first(ret) : 0;
	ret->attempts = 0;
	ret->next_ms = 0;
	if (!ret->added_ms)
		ret->added_ms = now_realtime_us() / 1000;
}

static bool id_ok(const char *id)
{
	return id[0] && !strchr(id, '/') &&
	       strlen(id) < sizeof(((struct pub_item *)0)->id);
}

int pubqueue_stage(int state_fd, const struct pub_target *t,
		   const struct pub_item *it)
{
	struct pub_item first;

	if (!id_ok(it->id))
		return -EINVAL;
	item_first(t, it, &first);
	return item_save(state_fd, QUEUE_DIR, t, &first);
}

int pubqueue_read(int state_fd, const struct pub_target *t, const char *id,
		  struct pub_item *ret)
{
	char name[160];

	if (!id_ok(id))
		return -EINVAL;
	snprintf(name, sizeof(name), QUEUE_DIR "/%s.json", id);
	return read_item(state_fd, name, t, ret);
}

bool pubqueue_staged(int state_fd, const char *id)
{
	char name[160];

	snprintf(name, sizeof(name), QUEUE_DIR "/%s.json", id);
	return id_ok(id) && is_regular_at(state_fd, name);
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

	if (!id_ok(id))
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
	item_first(q->t, it, &first);
	r = item_save(q->dir_fd, "", q->t, &first);
	return r < 0 ? r : pubqueue_take(q, it->id);
}

size_t pubqueue_depth(const struct pubqueue *q)
{
	return q->n;
}

size_t pubqueue_unfinished(const struct pubqueue *q)
{
	return q->unfinished;
}

int pubqueue_dir_open(int state_fd)
{
	return mkdir_p_open_at(state_fd, QUEUE_DIR, 0750);
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

int pub_read_bundle(int state_fd, const char *file, size_t max, void **ret,
		    size_t *ret_len)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, max);
	r = read_file_at_nofollow(state_fd, file, max, &sb);
	if (r < 0)
		return r;
	*ret_len = sb.len;
	*ret = strbuf_detach(&sb, NULL);
	return *ret ? 0 : -ENOMEM;
}

void pub_item_from_kill(struct pub_item *it, const struct corr_kill *k,
			const struct agent_verdict *v, const char *id,
			const char *node, uint64_t kill_ms)
{
	const struct oom_report *r = &k->report;
	time_t t = (time_t)(kill_ms / 1000);
	struct tm tm;

	memset(it, 0, sizeof(*it));
	strlcpy_safe(it->id, id, sizeof(it->id));
	snprintf(it->bundle_file, sizeof(it->bundle_file), "reports/%s.tar.gz",
		 id);
	strlcpy_safe(it->cgroup, k->cgroup, sizeof(it->cgroup));
	gmtime_r(&t, &tm);
	strftime(it->killed_at, sizeof(it->killed_at), "%Y-%m-%dT%H:%M:%SZ",
		 &tm);
	it->killed_at_ms = (int64_t)kill_ms; /* the publish latency's start */
	strlcpy_safe(it->node, node, sizeof(it->node));
	if (r->n_victims) {
		const struct kmsg_victim *vi = &r->victims[0];

		it->pid = vi->pid;
		strlcpy_safe(it->comm, vi->comm, sizeof(it->comm));
		it->anon_rss = (int64_t)vi->anon_rss_kb * 1024;
		it->file_rss = (int64_t)vi->file_rss_kb * 1024;
		it->shmem_rss = (int64_t)vi->shmem_rss_kb * 1024;
	}
	if (k->have_state) {
		const struct cgroup_state *s = &k->state_at_notification;

		if (s->limit.state == CGV_OK)
			it->limit = (int64_t)s->limit.v;
		if (s->usage.state == CGV_OK)
			it->usage = (int64_t)s->usage.v;
	}
	pub_item_set_verdict(it, v);
	it->added_ms = now_realtime_us() / 1000;
}

void pub_item_set_verdict(struct pub_item *it, const struct agent_verdict *v)
{
	strlcpy_safe(it->verdict, v->verdict[0] ? v->verdict : "unknown",
		     sizeof(it->verdict));
	strlcpy_safe(it->summary, v->summary, sizeof(it->summary));
	/* the diagnosis's figures, reconciled from every source (the cgroup
	 * read at the notification may be missing, or the pod's when the
	 * container's own cgroup was killed) */
	if (v->limit)
		it->limit = (int64_t)v->limit;
	if (v->usage)
		it->usage = (int64_t)v->usage;
}

/* ---- the failures ---- */

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

/* ---- the loop ---- */

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
		 pubqueue_step_name(q, it), e->message[0] ? e->message : "",
		 strerror(-r));
	log_error("report %s: %s; giving up, kept in %s", it->id,
		  it->last_error, FAILED_DIR);
	if (item_save(q->failed_fd, "", q->t, it) >= 0)
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
		 pubqueue_step_name(q, it), e->message, strerror(-r));
	log_warn("report %s: %s; retry %u in %llu ms", it->id, it->last_error,
		 it->attempts, (unsigned long long)(it->next_ms - now_ms));
}

/* The delivering step done with r: the kill is at its target (for
 * Kubernetes: its report and bundle are in the API, or the bundle is
 * known not to fit, and the report says so). Its publish latency, once a
 * kill: a step that was done already at this run's first try (r 1: a 409
 * AlreadyExists, a duplicate) was done, and counted, by a run that
 * stopped before it saved the step, or is the same kill queued again;
 * after a failed try in this run it is this run's own answer, lost on the
 * way, and counts. An item replayed from the files after a restart counts
 * the whole wait, outage and restart included. */
static void delivered(const struct pubqueue *q, const struct pub_item *it,
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
	const struct pub_target *t = q->t;

	while (it->step < t->n_steps) {
		struct kube_error e = {0};
		int r = t->steps[it->step].run(t->ud, it, &e);

		switch (r >= 0 ? PUB_ADVANCE : t->classify(it, r, &e)) {
		case PUB_RETRY:
			pub_count_failure(q->metrics, r, &e);
			retry_item(q, it, r, &e, now_ms);
			return false;
		case PUB_GIVE_UP:
			pub_count_failure(q->metrics, r, &e);
			fail_item(q, i, r, &e);
			return true;
		case PUB_ADVANCE:
			break;
		}
		if (it->step == t->delivered)
			delivered(q, it, r);
		it->step++;
		it->attempts = 0;
		if (it->step < t->n_steps &&
		    item_save(q->dir_fd, "", t, it) < 0)
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
