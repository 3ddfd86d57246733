/* SPDX-License-Identifier: Apache-2.0 */
/* kube: a pod watch line straight to a struct kube_pod, without a json-c
 * tree of the pod. The strict scanner of kube_scan.h validates every byte
 * and reads what kube_pod_decode() reads, with the same answer: a member
 * repeated, a kept key with an escape, a type kube_pod_decode() would
 * have to convert, a text that is not a plain pod (no name, another kind,
 * an ERROR or BOOKMARK event, json-c's extensions) is refused, and the
 * caller takes the projection and kube_pod_decode() for that line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube_scan.h"

struct pod_scan {
	struct kube_scan s;
	struct kube_pod *p;
	/* every string copied, one after the other: p->strings. A string of
	 * the pod's text is copied once, unescaped no longer than it was,
	 * and its quotes leave room for its NUL: the text's length is
	 * enough. */
	size_t used, cap;
	char *kind;
	bool spec_seen;
};

/* an owner reference as decode_owner() reads it */
struct owner {
	char *api_version, *kind, *name;
	bool controller;
};

/* a container status as decode_container_status() reads it */
struct cstatus {
	char *name, *container_id, *reason, *last_container_id;
	int64_t restart_count, exit_code;
};
/* (their strings in p->strings, as every string of the pod) */

typedef int (*member_fn)(struct pod_scan *ps, const char **pp, unsigned depth,
			 unsigned idx, void *ud);

/* a member name and its length: most keys differ from it in length */
struct kname {
	const char *s;
	size_t n;
};
#define K(name)                        \
	{                              \
		name, sizeof(name) - 1 \
	}

static int name_index(const struct kname *names, const char *key, size_t n)
{
	for (unsigned i = 0; names[i].s; i++)
		if (names[i].n == n && !memcmp(names[i].s, key, n))
			return (int)i;
	return -1;
}

/* *pp at '{' inside depth containers: each member names lists handed to
 * fn (*pp at its value, its depth depth + 1), the others checked and
 * skipped. A name met twice or a key with an escape: -EBADMSG. */
static int scan_object(struct pod_scan *ps, const char **pp, unsigned depth,
		       const struct kname *names, member_fn fn, void *ud)
{
	const char *p = *pp, *key, *end = ps->s.end;
	uint32_t seen = 0;
	bool esc;
	int r = kube_scan_open(&ps->s, &p, depth, '}'), i;

	while (r == 0) {
		if (p >= end || *p != '"')
			return -EBADMSG;
		key = p + 1;
		p = skip_string(key, end, &esc);
		if (!p || esc)
			return -EBADMSG;
		i = name_index(names, key, (size_t)(p - 1 - key));
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return -EBADMSG;
		p = skip_ws(p + 1, end);
		if (i < 0) {
			/* most skipped members are strings */
			p = p < end && *p == '"'
				    ? skip_string(p + 1, end, NULL)
				    : kube_scan_skip_value(p, end, depth + 1);
			r = p ? 0 : -EBADMSG;
		} else if (seen & 1u << i) {
			r = -EBADMSG;
		} else {
			seen |= 1u << i;
			r = p < end ? fn(ps, &p, depth + 1, (unsigned)i, ud)
				    : -EBADMSG;
		}
		if (r == 0)
			r = kube_scan_next(&ps->s, &p, '}');
	}
	if (r < 0)
		return r;
	*pp = p;
	return 0;
}

static int skip(struct pod_scan *ps, const char **pp, unsigned depth)
{
	*pp = kube_scan_skip_value(*pp, ps->s.end, depth);
	return *pp ? 0 : -EBADMSG;
}

/* The value at *pp scanned as scan_object() does when it is an object,
 * else checked and skipped: what kube_json_path() does not go through. */
static int object_or_skip(struct pod_scan *ps, const char **pp, unsigned depth,
			  const struct kname *names, member_fn fn, void *ud)
{
	if (**pp != '{')
		return skip(ps, pp, depth);
	return scan_object(ps, pp, depth, names, fn, ud);
}

/* *pp at '[': fn(…, 0, ud) for each element (*pp at it). */
static int scan_array(struct pod_scan *ps, const char **pp, unsigned depth,
		      member_fn fn, void *ud)
{
	const char *p = *pp;
	int r = kube_scan_open(&ps->s, &p, depth, ']');

	while (r == 0) {
		/* a ',' may end the text */
		r = p < ps->s.end ? fn(ps, &p, depth + 1, 0, ud) : -EBADMSG;
		if (r == 0)
			r = kube_scan_next(&ps->s, &p, ']');
	}
	if (r < 0)
		return r;
	*pp = p;
	return 0;
}

/* A string's copy in p->strings (cut at a NUL, as strdup() of json-c's
 * string cuts it); another type: NULL, as kube_json_str() has it. */
static int scan_str(struct pod_scan *ps, const char **pp, unsigned depth,
		    char **ret)
{
	const char *p = *pp, *e, *src;
	size_t n;
	bool esc;

	if (*p != '"')
		return skip(ps, pp, depth);
	e = skip_string(p + 1, ps->s.end, &esc);
	if (!e)
		return -EBADMSG;
	if (esc && kube_scan_unescape(&ps->s, p + 1, e - 1) < 0)
		return -ENOMEM;
	src = esc ? ps->s.text.buf : p + 1;
	n = esc ? strlen(src) : (size_t)(e - 1 - (p + 1));
	if (n >= ps->cap - ps->used)
		return -EBADMSG; /* cannot be: the bound above */
	*ret = ps->p->strings + ps->used;
	memcpy(*ret, src, n);
	(*ret)[n] = '\0';
	ps->used += n + 1;
	*pp = e;
	return 0;
}

/* An integer as kube_json_int() reads it: 0 for another type or for a
 * number json-c keeps as a double; one json-c might saturate, refused. */
static int scan_int(struct pod_scan *ps, const char **pp, unsigned depth,
		    int64_t *ret)
{
	const char *p = *pp, *e;
	int r;

	if (*p != '-' && (*p < '0' || *p > '9'))
		return skip(ps, pp, depth);
	e = skip_number(p, ps->s.end);
	if (!e)
		return -EBADMSG;
	*pp = e;
	r = scan_integer(p, e, ret);
	/* a fraction or an exponent: a double, read as 0 */
	return r == -ERANGE ? -EBADMSG : 0;
}

/* An object built whole (labels, annotations); another type: NULL. */
static int scan_json_object(struct pod_scan *ps, const char **pp,
			    unsigned depth, struct json_object **ret)
{
	if (**pp != '{')
		return skip(ps, pp, depth);
	return kube_scan_whole(&ps->s, pp, depth, ret);
}

/* ---- metadata ---- */

static const struct kname owner_names[] = {
	K("apiVersion"), K("kind"), K("name"), K("controller"), {NULL, 0}};

static int owner_member(struct pod_scan *ps, const char **pp, unsigned depth,
			unsigned idx, void *ud)
{
	struct owner *o = ud;
	const char *p = *pp;

	switch (idx) {
	case 0:
		return scan_str(ps, pp, depth, &o->api_version);
	case 1:
		return scan_str(ps, pp, depth, &o->kind);
	case 2:
		return scan_str(ps, pp, depth, &o->name);
	}
	/* json_object_get_boolean() would read numbers and strings too */
	if ((p = skip_literal(*pp, ps->s.end, "true", 4)))
		o->controller = true;
	else if (!(p = skip_literal(*pp, ps->s.end, "false", 5)) &&
		 !(p = skip_literal(*pp, ps->s.end, "null", 4)))
		return -EBADMSG;
	*pp = p;
	return 0;
}

/* decode_owner(): the last controller, else the first reference. */
static int owner_ref(struct pod_scan *ps, const char **pp, unsigned depth,
		     unsigned idx, void *ud)
{
	struct kube_pod *p = ps->p;
	bool *any = ud;
	struct owner o = {0};
	int r;

	(void)idx;
	if (**pp != '{')
		return -EBADMSG; /* decode_owner() would pick it: left to it */
	r = scan_object(ps, pp, depth, owner_names, owner_member, &o);
	if (r < 0 || (*any && !o.controller))
		return r;
	p->owner_api_version = o.api_version;
	p->owner_kind = o.kind;
	p->owner_name = o.name;
	p->owner_controller = o.controller;
	*any = true;
	return 0;
}

static const struct kname metadata_names[] = {K("name"),
					      K("namespace"),
					      K("uid"),
					      K("resourceVersion"),
					      K("labels"),
					      K("annotations"),
					      K("ownerReferences"),
					      K("deletionTimestamp"),
					      {NULL, 0}};

static int metadata_member(struct pod_scan *ps, const char **pp, unsigned depth,
			   unsigned idx, void *ud)
{
	struct kube_pod *p = ps->p;
	bool any = false;

	(void)ud;
	switch (idx) {
	case 0:
		return scan_str(ps, pp, depth, &p->name);
	case 1:
		return scan_str(ps, pp, depth, &p->namespace);
	case 2:
		return scan_str(ps, pp, depth, &p->uid);
	case 3:
		return scan_str(ps, pp, depth, &p->resource_version);
	case 4:
		return scan_json_object(ps, pp, depth, &p->labels);
	case 5:
		return scan_json_object(ps, pp, depth, &p->annotations);
	case 6:
		if (**pp != '[')
			return skip(ps, pp, depth);
		return scan_array(ps, pp, depth, owner_ref, &any);
	}
	p->deleting = **pp != 'n'; /* any value but null */
	return skip(ps, pp, depth);
}

/* ---- spec ---- */

static int memory_member(struct pod_scan *ps, const char **pp, unsigned depth,
			 unsigned idx, void *ud)
{
	(void)idx;
	return scan_str(ps, pp, depth, ud);
}

/* resources.limits and .requests: their memory, as memory_at() reads it */
static int resources_member(struct pod_scan *ps, const char **pp,
			    unsigned depth, unsigned idx, void *ud)
{
	static const struct kname names[] = {K("memory"), {NULL, 0}};
	struct kube_container *c = ud;
	char **s = idx == 0 ? &c->limit_memory_s : &c->request_memory_s;
	uint64_t *v = idx == 0 ? &c->limit_memory : &c->request_memory;
	int r = object_or_skip(ps, pp, depth, names, memory_member, s);

	if (r == 0 && *s && kube_parse_quantity(*s, v) < 0)
		*v = 0;
	return r;
}

static int container_member(struct pod_scan *ps, const char **pp,
			    unsigned depth, unsigned idx, void *ud)
{
	static const struct kname names[] = {
		K("limits"), K("requests"), {NULL, 0}};
	struct kube_container *c = ud;

	switch (idx) {
	case 0:
		return scan_str(ps, pp, depth, &c->name);
	case 1:
		return scan_str(ps, pp, depth, &c->image);
	}
	return object_or_skip(ps, pp, depth, names, resources_member, c);
}

static int container(struct pod_scan *ps, const char **pp, unsigned depth,
		     unsigned idx, void *ud)
{
	static const struct kname names[] = {
		K("name"), K("image"), K("resources"), {NULL, 0}};
	struct kube_pod *p = ps->p;
	struct kube_container *c;
	size_t *cap = ud;
	int r;

	(void)idx;
	if (**pp != '{')
		return -EBADMSG; /* a pod kube_pod_decode() refuses */
	if (p->n_containers == *cap) {
		size_t n = *cap * 2; /* spec_member() made room for one */

		c = reallocarray(p->containers, n, sizeof(*c));
		if (!c)
			return -ENOMEM;
		p->containers = c;
		*cap = n;
	}
	c = &p->containers[p->n_containers++];
	memset(c, 0, sizeof(*c));
	r = scan_object(ps, pp, depth, names, container_member, c);
	return r == 0 && !c->name ? -EBADMSG : r;
}

static int spec_member(struct pod_scan *ps, const char **pp, unsigned depth,
		       unsigned idx, void *ud)
{
	struct kube_pod *p = ps->p;
	const char *e;
	size_t cap = 1;

	(void)ud;
	switch (idx) {
	case 0:
		return scan_str(ps, pp, depth, &p->node);
	case 1:
		e = skip_literal(*pp, ps->s.end, "true", 4);
		p->share_process_namespace = e != NULL;
		if (e)
			*pp = e;
		return e ? 0 : skip(ps, pp, depth);
	}
	if (**pp != '[')
		return skip(ps, pp, depth);
	/* decode_containers(): a list, even an empty one */
	p->containers = calloc(cap, sizeof(*p->containers));
	if (!p->containers)
		return -ENOMEM;
	return scan_array(ps, pp, depth, container, &cap);
}

/* ---- status ---- */

static int terminated_member(struct pod_scan *ps, const char **pp,
			     unsigned depth, unsigned idx, void *ud)
{
	struct cstatus *cs = ud;

	switch (idx) {
	case 0:
		return scan_int(ps, pp, depth, &cs->exit_code);
	case 1:
		return scan_str(ps, pp, depth, &cs->reason);
	}
	return scan_str(ps, pp, depth, &cs->last_container_id);
}

static int last_state_member(struct pod_scan *ps, const char **pp,
			     unsigned depth, unsigned idx, void *ud)
{
	static const struct kname names[] = {
		K("exitCode"), K("reason"), K("containerID"), {NULL, 0}};

	(void)idx;
	return object_or_skip(ps, pp, depth, names, terminated_member, ud);
}

static int status_member(struct pod_scan *ps, const char **pp, unsigned depth,
			 unsigned idx, void *ud)
{
	static const struct kname names[] = {K("terminated"), {NULL, 0}};
	struct cstatus *cs = ud;

	switch (idx) {
	case 0:
		return scan_str(ps, pp, depth, &cs->name);
	case 1:
		return scan_int(ps, pp, depth, &cs->restart_count);
	case 2:
		return scan_str(ps, pp, depth, &cs->container_id);
	}
	return object_or_skip(ps, pp, depth, names, last_state_member, cs);
}

/* decode_container_status(): joined into the containers of its name. */
static void join_status(struct kube_pod *p, const struct cstatus *cs)
{
	for (size_t i = 0; cs->name && i < p->n_containers; i++) {
		struct kube_container *c = &p->containers[i];

		if (!streq(c->name, cs->name))
			continue;
		c->restart_count = (int)cs->restart_count;
		c->last_exit_code = (int)cs->exit_code;
		c->container_id = cs->container_id;
		c->last_terminated_reason = cs->reason;
		c->last_container_id = cs->last_container_id;
	}
}

static int container_status(struct pod_scan *ps, const char **pp,
			    unsigned depth, unsigned idx, void *ud)
{
	static const struct kname names[] = {K("name"),
					     K("restartCount"),
					     K("containerID"),
					     K("lastState"),
					     {NULL, 0}};
	struct cstatus cs = {0};
	int r;

	(void)idx;
	(void)ud;
	if (**pp != '{')
		return skip(ps, pp, depth); /* nameless: joins nothing */
	r = scan_object(ps, pp, depth, names, status_member, &cs);
	if (r == 0)
		join_status(ps->p, &cs);
	return r;
}

static int pod_status_member(struct pod_scan *ps, const char **pp,
			     unsigned depth, unsigned idx, void *ud)
{
	struct kube_pod *p = ps->p;

	(void)ud;
	switch (idx) {
	case 0:
		return scan_str(ps, pp, depth, &p->phase);
	case 1:
		return scan_str(ps, pp, depth, &p->qos_class);
	}
	if (**pp != '[')
		return skip(ps, pp, depth);
	/* the statuses join the containers: a spec after them is left to
	 * kube_pod_decode() (the API server writes spec first) */
	if (!ps->spec_seen)
		return -EBADMSG;
	return scan_array(ps, pp, depth, container_status, NULL);
}

/* ---- the pod ---- */

static int pod_member(struct pod_scan *ps, const char **pp, unsigned depth,
		      unsigned idx, void *ud)
{
	static const struct kname spec[] = {K("nodeName"),
					    K("shareProcessNamespace"),
					    K("containers"),
					    {NULL, 0}};
	static const struct kname status[] = {
		K("phase"), K("qosClass"), K("containerStatuses"), {NULL, 0}};

	(void)ud;
	if (idx == 0)
		return scan_str(ps, pp, depth, &ps->kind);
	if (**pp != '{')
		return -EBADMSG; /* kube_pod_decode() may refuse the pod */
	switch (idx) {
	case 1:
		return scan_object(ps, pp, depth, metadata_names,
				   metadata_member, NULL);
	case 2:
		ps->spec_seen = true;
		return scan_object(ps, pp, depth, spec, spec_member, NULL);
	}
	return scan_object(ps, pp, depth, status, pod_status_member, NULL);
}

/* *pp at the pod object's '{' inside depth containers. */
static int scan_pod(struct pod_scan *ps, const char **pp, unsigned depth)
{
	static const struct kname names[] = {
		K("kind"), K("metadata"), K("spec"), K("status"), {NULL, 0}};
	int r;

	ps->p = calloc(1, sizeof(*ps->p));
	if (!ps->p)
		return -ENOMEM;
	ps->cap = (size_t)(ps->s.end - *pp);
	ps->p->strings = malloc(ps->cap);
	if (!ps->p->strings)
		return -ENOMEM;
	r = scan_object(ps, pp, depth, names, pod_member, NULL);
	/* not a pod to kube_pod_decode(): its answer is the caller's */
	if (r == 0 && ((ps->kind && !streq(ps->kind, "Pod")) || !ps->p->name))
		r = -EBADMSG;
	return r;
}

static int event_member(struct pod_scan *ps, const char **pp, unsigned depth,
			unsigned idx, void *ud)
{
	enum kube_event_type *t = ud;
	const char *p = *pp, *e;
	bool esc;

	if (idx == 1)
		return *p == '{' ? scan_pod(ps, pp, depth) : -EBADMSG;
	if (*p != '"')
		return -EBADMSG;
	e = skip_string(p + 1, ps->s.end, &esc);
	if (!e || esc || kube_event_type_parse(p + 1, (size_t)(e - p - 2), t))
		return -EBADMSG;
	*pp = e;
	return 0;
}

static int pod_event_scan(struct json_tokener *tok, const char *line,
			  size_t len, enum kube_event_type *ret_type,
			  struct kube_pod **ret_pod)
{
	static const struct kname names[] = {K("type"), K("object"), {NULL, 0}};
	struct pod_scan ps = {.s = {.tok = tok, .text = STRBUF_INIT}};
	enum kube_event_type t = KUBE_EVENT_ERROR;
	const char *p;
	int r = -EBADMSG;

	if (!line || len >= (1u << 30))
		return -EBADMSG;
	ps.s.end = line + len;
	p = skip_ws(line, ps.s.end);
	if (p < ps.s.end && *p == '{')
		r = scan_object(&ps, &p, 0, names, event_member, &t);
	if (r == 0 && (skip_ws(p, ps.s.end) != ps.s.end || !ps.p ||
		       t == KUBE_EVENT_ERROR || t == KUBE_EVENT_BOOKMARK))
		r = -EBADMSG;
	strbuf_release(&ps.s.text);
	if (r < 0) {
		kube_pod_free(ps.p);
		return r;
	}
	*ret_type = t;
	*ret_pod = ps.p;
	return 0;
}

int kube_event_decoder_parse_pod(struct kube_event_decoder *d, const char *line,
				 size_t len, struct kube_watch_event *ret,
				 struct kube_pod **ret_pod)
{
	enum kube_event_type t;
	struct kube_pod *p;
	int r = -EBADMSG;

	*ret_pod = NULL;
	if (d->top[1].members == kube_pod_keep)
		r = pod_event_scan(d->tok, line, len, &t, &p);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return kube_event_decoder_parse(d, line, len, ret);
	ret->type = t;
	ret->object = NULL;
	strlcpy_safe(ret->resource_version,
		     p->resource_version ? p->resource_version : "",
		     sizeof(ret->resource_version));
	*ret_pod = p;
	return 0;
}
