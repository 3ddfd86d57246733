/* SPDX-License-Identifier: Apache-2.0 */
/* kube: list-then-watch that never misses or repeats a change. A map of
 * what was delivered (namespace/name → resourceVersion) filters the
 * replays of a resumed watch and turns a relist (after a 410) into the
 * ADDED / MODIFIED / DELETED that happened meanwhile. */
#include <errno.h>
#include <string.h>

#include "kube_internal.h"

struct watch {
	struct kube_client *c;
	const struct kube_watch_options *o;
	struct kube_watch_stats st;
	struct json_object *store; /* key → minimal object {metadata…} */
	struct kube_line_splitter split;
	struct kube_event_decoder *dec; /* o->keep of each object */
	char rv[32];
	bool expired; /* an ERROR 410 event came */
	bool lost;    /* an event was dropped (oversized): relist */
	int stop;     /* fn's stop value */
	struct kube_error ev_err;
	bool ev_failed; /* an ERROR event other than 410 */
	uint64_t rnd;
};

static void publish_stats(struct watch *w)
{
	strlcpy_safe(w->st.resource_version, w->rv, sizeof(w->rv));
	if (w->o->stats)
		*w->o->stats = w->st;
}

/* What the watch reads of an object: from its json-c tree, or from a
 * pod read straight from its text (kind "Pod", no apiVersion: the store
 * keeps it only to deliver the pod's deletion). Borrowed. */
struct ident {
	const char *kind, *api_version, *ns, *name, *uid, *rv;
};

static void ident_of(struct json_object *obj, const struct kube_pod *p,
		     struct ident *id)
{
	if (p) {
		*id = (struct ident){"Pod",   NULL,   p->namespace,
				     p->name, p->uid, p->resource_version};
		return;
	}
	*id = (struct ident){
		kube_json_str(obj, "kind", NULL, NULL),
		kube_json_str(obj, "apiVersion", NULL, NULL),
		kube_json_str(obj, "metadata", "namespace", NULL),
		kube_json_str(obj, "metadata", "name", NULL),
		kube_json_str(obj, "metadata", "uid", NULL),
		kube_json_str(obj, "metadata", "resourceVersion", NULL),
	};
}

static int object_key(const struct ident *id, char *buf, size_t size)
{
	if (!id->name)
		return -EBADMSG;
	if ((size_t)snprintf(buf, size, "%s/%s", id->ns ? id->ns : "",
			     id->name) >= size)
		return -E2BIG;
	return 0;
}

/* {kind, apiVersion, metadata:{name, namespace, uid, resourceVersion}} */
static struct json_object *minimal(const struct ident *id)
{
	struct json_object *m = json_object_new_object(), *md;

	if (!m)
		return NULL;
	md = kube_json_add_obj(m, "metadata");
	if (!md || kube_json_set_str(m, "kind", id->kind) < 0 ||
	    kube_json_set_str(m, "apiVersion", id->api_version) < 0 ||
	    kube_json_set_str(md, "name", id->name) < 0 ||
	    kube_json_set_str(md, "namespace", id->ns) < 0 ||
	    kube_json_set_str(md, "uid", id->uid) < 0 ||
	    kube_json_set_str(md, "resourceVersion", id->rv) < 0) {
		json_object_put(m);
		return NULL;
	}
	return m;
}

/* obj to fn, or the pod (p, else decoded from obj) to pod_fn: an object
 * that is not a pod is not delivered. */
static int deliver(struct watch *w, enum kube_event_type t,
		   struct json_object *obj, const struct kube_pod *p)
{
	const struct kube_watch_options *o = w->o;
	struct kube_pod *own = NULL;
	int r = 0;

	w->st.events++;
	if (o->pod_fn && !p && kube_pod_decode(obj, &own) == 0)
		p = own;
	if (o->pod_fn)
		r = p ? o->pod_fn(o->userdata, t, p) : 0;
	else if (o->fn)
		r = o->fn(o->userdata, t, obj);
	kube_pod_free(own);
	if (r < 0)
		w->stop = r;
	return r;
}

/* Applies one change (obj, or the pod p read from its text; id what
 * ident_of() reads of it) to the store and delivers it unless it is a
 * replay of something already delivered. */
static int apply_change(struct watch *w, struct json_object *store,
			enum kube_event_type t, struct json_object *obj,
			const struct kube_pod *p, const struct ident *id)
{
	struct json_object *prev = NULL, *m;
	const char *prv;
	char key[512];

	if (object_key(id, key, sizeof(key)) < 0)
		return 0; /* nameless: not ours to track */
	json_object_object_get_ex(store, key, &prev);
	prv = kube_json_str(prev, "metadata", "resourceVersion", NULL);
	if (t == KUBE_EVENT_DELETED) {
		if (!prev)
			return 0;
		json_object_object_del(store, key);
		return deliver(w, t, obj, p);
	}
	if (prev && prv && id->rv && streq(prv, id->rv))
		return 0;
	m = minimal(id);
	if (!m || json_object_object_add(store, key, m) < 0) {
		json_object_put(m);
		return -ENOMEM;
	}
	return deliver(w, prev ? KUBE_EVENT_MODIFIED : KUBE_EVENT_ADDED, obj,
		       p);
}

/* Diffs one page of a relist into the store; fresh collects what the
 * list holds. */
static int relist_page(struct watch *w, struct json_object *page,
		       struct json_object *fresh)
{
	struct json_object *items;
	int r = 0;

	if (!json_object_object_get_ex(page, "items", &items) ||
	    !json_object_is_type(items, json_type_array))
		return -EBADMSG;
	for (size_t i = 0; r >= 0 && i < json_object_array_length(items); i++) {
		struct json_object *it = json_object_array_get_idx(items, i);
		struct json_object *m;
		struct ident id;
		char key[512];

		ident_of(it, NULL, &id);
		r = apply_change(w, w->store, KUBE_EVENT_ADDED, it, NULL, &id);
		if (r >= 0 && object_key(&id, key, sizeof(key)) == 0 &&
		    json_object_object_get_ex(w->store, key, &m) &&
		    json_object_object_add(fresh, key, json_object_get(m)) < 0)
			r = -ENOMEM;
	}
	return r;
}

/* Objects per LIST page. A page is parsed into one json-c tree of about
 * 40 KiB per small pod (every object has its own hash table), 150 KiB
 * per pod with managedFields and env; the watching thread's malloc arena
 * keeps its high-water mark for good (the agent mlockall()s: freed arena
 * pages cannot be given back). 100 pods a page cost the agent 3.1 MiB of
 * resident memory more than 20, measured with 110 small pods; 10 keeps a
 * page below 2 MiB even for big pods, at a request per 10 objects. */
#define RELIST_PAGE 10

/* Lists page by page (a page at a time in memory), delivers the
 * difference to what was delivered before, and takes the list's RV. */
static int relist(struct watch *w, struct kube_error *err)
{
	const struct kube_watch_options *o = w->o;
	struct kube_list_options lo = {.label_selector = o->label_selector,
				       .field_selector = o->field_selector,
				       .limit = RELIST_PAGE};
	struct json_object *page = NULL, *fresh = json_object_new_object();
	char rv[sizeof(w->rv)] = "";
	_cleanup_free_ char *cont = NULL;
	int r = 0;

	w->st.relists++;
	if (!fresh)
		return -ENOMEM;
	do {
		const char *v;

		r = kube_list(w->c, &o->call, &lo, &page, err);
		if (r < 0)
			break;
		r = relist_page(w, page, fresh);
		v = kube_json_str(page, "metadata", "resourceVersion", NULL);
		if (v && !rv[0])
			strlcpy_safe(rv, v, sizeof(rv));
		free(cont);
		cont = NULL;
		if (r >= 0 && kube_json_dup(page, "metadata", "continue", NULL,
					    &cont) < 0)
			r = -ENOMEM;
		json_object_put(page);
		lo.continue_token = cont;
	} while (r >= 0 && cont && *cont);
	/* what the store has and the list lacks was deleted meanwhile */
	json_object_object_foreach (w->store, key, val) {
		if (r < 0)
			break;
		if (!json_object_object_get_ex(fresh, key, NULL))
			r = deliver(w, KUBE_EVENT_DELETED, val, NULL);
	}
	if (r < 0) {
		json_object_put(fresh);
		return r;
	}
	strlcpy_safe(w->rv, rv, sizeof(w->rv));
	json_object_put(w->store);
	w->store = fresh;
	return 0;
}

/* ev, its object in ev->object or read into p */
static int on_event(struct watch *w, struct kube_watch_event *ev,
		    const struct kube_pod *p)
{
	struct ident id;
	long code;

	switch (ev->type) {
	case KUBE_EVENT_ERROR:
		code = (long)kube_json_int(ev->object, "code", NULL, NULL);
		if (code == 410) {
			w->expired = true;
			w->st.expired++;
		} else {
			const char *s = json_object_to_json_string(ev->object);

			kube_status_parse(s, strlen(s), code ? code : 500,
					  &w->ev_err);
			w->ev_failed = true;
		}
		return -ESTALE; /* ends this stream */
	case KUBE_EVENT_BOOKMARK:
		w->st.bookmarks++;
		break;
	default:
		ident_of(ev->object, p, &id);
		if (apply_change(w, w->store, ev->type, ev->object, p, &id) < 0)
			return w->stop ? w->stop : -ENOMEM;
	}
	if (ev->resource_version[0])
		strlcpy_safe(w->rv, ev->resource_version, sizeof(w->rv));
	publish_stats(w);
	return 0;
}

static int on_line(const char *line, size_t len, void *ud)
{
	struct watch *w = ud;
	struct kube_watch_event ev;
	struct kube_pod *p = NULL;
	int r;

	if (!line) {
		w->lost = true; /* oversized: the relist will bring it */
		return 0;
	}
	r = w->o->pod_fn
		    ? kube_event_decoder_parse_pod(w->dec, line, len, &ev, &p)
		    : kube_event_decoder_parse(w->dec, line, len, &ev);
	if (r < 0) {
		w->lost = true;
		return 0;
	}
	r = on_event(w, &ev, p);
	kube_watch_event_release(&ev);
	kube_pod_free(p);
	return r;
}

static int on_data(const char *data, size_t len, void *ud)
{
	struct watch *w = ud;

	return kube_line_splitter_feed(&w->split, data, len, on_line, w);
}

static int watch_once(struct watch *w, struct kube_error *err)
{
	const struct kube_watch_options *o = w->o;
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	struct kube_request r = {.method = "GET", .cancel = o->call.cancel};
	char tmo[16];
	int ret;

	strbuf_init(&path, 8192);
	snprintf(tmo, sizeof(tmo), "%u", o->timeout_s ? o->timeout_s : 300);
	ret = kube_call_path(w->c, &o->call, &path);
	if (ret == 0)
		ret = kube_query_add(&path, "watch", "1");
	if (ret == 0)
		ret = kube_query_add(&path, "resourceVersion", w->rv);
	if (ret == 0 && !o->no_bookmarks)
		ret = kube_query_add(&path, "allowWatchBookmarks", "true");
	if (ret == 0)
		ret = kube_query_add(&path, "timeoutSeconds", tmo);
	if (ret == 0)
		ret = kube_query_add(&path, "labelSelector", o->label_selector);
	if (ret == 0)
		ret = kube_query_add(&path, "fieldSelector", o->field_selector);
	if (ret < 0)
		return ret;
	r.path = path.buf;
	strbuf_reset(&w->split.buf);
	w->split.overflow = false;
	w->st.connects++;
	return kube_request_stream(w->c, &r, on_data, w, err);
}

static uint64_t backoff_us(struct watch *w, unsigned failures)
{
	uint64_t lo = w->o->backoff_min_ms ? w->o->backoff_min_ms : 200;
	uint64_t hi = w->o->backoff_max_ms ? w->o->backoff_max_ms : 30000;
	uint64_t ms = lo;

	for (unsigned i = 1; i < failures && ms < hi; i++)
		ms *= 2;
	if (ms > hi)
		ms = hi;
	w->rnd ^= w->rnd << 13;
	w->rnd ^= w->rnd >> 7;
	w->rnd ^= w->rnd << 17;
	/* ±25 % jitter so that many agents do not reconnect in step */
	return ms * 1000 * (750 + w->rnd % 501) / 1000;
}

/* One round: relist when needed, then one watch request. Returns 0 to go
 * on at once, 1 to go on after a backoff, < 0 to stop. */
static int round_once(struct watch *w, bool *need_list, struct kube_error *e)
{
	unsigned seen;
	uint64_t t0;
	bool idle;
	int r;

	if (*need_list) {
		r = relist(w, e);
		publish_stats(w);
		if (w->stop)
			return w->stop;
		if (r == -ECANCELED)
			return r;
		if (r < 0)
			return 1;
		*need_list = false;
		if (w->o->synced)
			w->o->synced(w->o->userdata);
	}
	w->expired = w->lost = w->ev_failed = false;
	seen = w->st.events + w->st.bookmarks;
	t0 = now_monotonic_us();
	r = watch_once(w, e);
	if (w->stop)
		return w->stop;
	if (r == -ECANCELED)
		return r;
	/* a stream that ends at once with nothing in it is a failure, or a
	 * broken server would have us reconnect in a tight loop */
	idle = w->st.events + w->st.bookmarks == seen &&
	       now_monotonic_us() - t0 < 500000;
	if (w->ev_failed) {
		*e = w->ev_err;
		return 1;
	}
	if (w->expired || w->lost || r == -ESTALE) {
		if (r == -ESTALE && !w->expired)
			w->st.expired++;
		*need_list = true;
		return w->lost || idle ? 1 : 0;
	}
	return r < 0 || idle ? 1 : 0;
}

int kube_watch(struct kube_client *c, const struct kube_watch_options *o,
	       struct kube_error *err)
{
	struct watch w = {.c = c, .o = o};
	struct kube_error e = {0};
	bool need_list = true;
	unsigned failures = 0;
	int r;

	if (!o || !o->call.res)
		return -EINVAL;
	w.rnd = now_monotonic_us() | 1;
	w.store = json_object_new_object();
	if (!w.store ||
	    kube_event_decoder_new(o->pod_fn ? kube_pod_keep : o->keep,
				   &w.dec) < 0) {
		json_object_put(w.store);
		return -ENOMEM;
	}
	kube_line_splitter_init(&w.split, o->max_event);
	for (;;) {
		r = round_once(&w, &need_list, &e);
		publish_stats(&w);
		if (r < 0)
			break;
		failures = r ? failures + 1 : 0;
		if (o->max_failures && failures >= o->max_failures) {
			r = e.code ? e.code : -EIO;
			break;
		}
		if (r) {
			uint64_t us = backoff_us(&w, failures);

			if (e.retry_after_s &&
			    e.retry_after_s * 1000000ull > us)
				us = e.retry_after_s * 1000000ull;
			r = kube_client_sleep(c, o->call.cancel, us);
		}
		if (r < 0)
			break;
	}
	if (err && r == -ECANCELED)
		kube_error_set(err, r, "cancelled");
	else if (err && r < 0)
		*err = e;
	kube_line_splitter_release(&w.split);
	kube_event_decoder_free(w.dec);
	json_object_put(w.store);
	return r;
}
