/* SPDX-License-Identifier: Apache-2.0 */
/* The injector's mutation: AdmissionReview in, AdmissionReview out, built
 * with json-c so every string is escaped by one well-tested encoder. The
 * patch only ever adds (or, for JAVA_TOOL_OPTIONS, replaces one value it
 * extends): it never removes what the user wrote. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/types.h>

#include "base/jget.h"
#include "base/parse.h"
#include "base/util.h"
#include "injector/inject.h"
#include "kube/kube.h"
#include "kube/kube_node.h"

/* Deeper than any pod; bounds json-c's recursion on hostile input. */
#define REVIEW_MAX_DEPTH 64

/* The sidecar a level admits (docs/injector.md, Pod Security). */
enum shape_kind {
	SHAPE_PRIVILEGED, /* root, the five capabilities */
	SHAPE_ROOT_SETID, /* root, SETUID SETGID KILL: baseline, uid unknown */
	SHAPE_APP_UID,	  /* the app's uid (and gid), no capability */
};

struct shape {
	enum shape_kind kind;
	int64_t uid, gid; /* SHAPE_APP_UID; gid < 0: not stated */
};

struct patch {
	struct json_object *ops;      /* the JSONPatch array */
	struct json_object *warnings; /* strings */
	/* the pod with each op applied as it is pushed: what the level is
	 * checked on; NULL when an op could not be applied (a bug: the
	 * patch is then not sent) */
	struct json_object *mutated;
	const struct inject_config *cfg;
	struct shape shape;
	int err; /* the first -ENOMEM / -E2BIG */
};

void inject_config_init(struct inject_config *cfg)
{
	*cfg = (struct inject_config){
		.pull_policy = "IfNotPresent",
		.cpu_request = "20m",
		.memory_request = "32Mi",
		.memory_limit = "128Mi",
		.spool_size = "256Mi",
	};
}

static void warn_add(struct patch *p, const char *msg)
{
	if (json_object_array_add(p->warnings, json_object_new_string(msg)))
		p->err = -ENOMEM;
}

/* RFC 6901: '~' is "~0" and '/' is "~1" inside a reference token. */
static int ptr_token(struct strbuf *sb, const char *tok)
{
	int r = strbuf_addch(sb, '/');

	for (; r == 0 && *tok; tok++)
		r = *tok == '~'	  ? strbuf_adds(sb, "~0")
		    : *tok == '/' ? strbuf_adds(sb, "~1")
				  : strbuf_addch(sb, *tok);
	return r;
}

/* Appends {"op": op, "path": path, "value": value}; takes value. */
static void op_push(struct patch *p, const char *op, const struct strbuf *path,
		    struct json_object *value)
{
	struct json_object *o = json_object_new_object();

	if (!o || p->err) {
		json_object_put(value);
		json_object_put(o);
		p->err = p->err ? p->err : -ENOMEM;
		return;
	}
	json_object_object_add(o, "op", json_object_new_string(op));
	json_object_object_add(
		o, "path", json_object_new_string_len(path->buf, path->len));
	json_object_object_add(o, "value", value);
	if (json_object_array_add(p->ops, o)) {
		json_object_put(o);
		p->err = -ENOMEM;
	}
}

/* The member or element tok of o (a decimal index for an array). */
static struct json_object *child(struct json_object *o, const char *tok)
{
	uint64_t i;

	if (json_object_is_type(o, json_type_array))
		return parse_u64(tok, &i) == 0 && i < jget_len(o)
			       ? jget_idx(o, (size_t)i)
			       : NULL;
	return jget(o, tok);
}

/* RFC 6902 "add" of a copy of value at tokens into p->mutated: a member
 * set (replaced when present) or "-" appended to an array, the two kinds
 * of add the patch makes. */
static void mutated_add(struct patch *p, struct json_object *value,
			const char *const *tokens)
{
	struct json_object *at = p->mutated, *copy = NULL;
	size_t n = 0;

	while (tokens[n])
		n++;
	for (size_t i = 0; at && i + 1 < n; i++)
		at = child(at, tokens[i]);
	if (at && n > 0 && json_object_deep_copy(value, &copy, NULL) == 0) {
		const char *last = tokens[n - 1];

		if (json_object_is_type(at, json_type_object) &&
		    json_object_object_add(at, last, copy) == 0)
			return;
		if (json_object_is_type(at, json_type_array) &&
		    streq(last, "-") && json_object_array_add(at, copy) == 0)
			return;
	}
	json_object_put(copy);
	json_object_put(p->mutated);
	p->mutated = NULL;
}

/* "add" at the path made of the tokens (NULL-terminated). */
static void op_add_path(struct patch *p, struct json_object *value,
			const char *const *tokens)
{
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	int r = 0;

	for (const char *const *t = tokens; r == 0 && *t; t++)
		r = ptr_token(&path, *t);
	if (r < 0 && !p->err)
		p->err = r;
	if (p->mutated && value)
		mutated_add(p, value, tokens);
	op_push(p, "add", &path, value);
}
#define op_add(p, value, ...) \
	op_add_path(p, value, (const char *const[]){__VA_ARGS__})

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *field_env(const char *name, const char *field)
{
	struct json_object *e = json_object_new_object();
	struct json_object *vf = json_object_new_object();
	struct json_object *fr = json_object_new_object();

	json_object_object_add(fr, "fieldPath", jstr(field));
	json_object_object_add(vf, "fieldRef", fr);
	json_object_object_add(e, "name", jstr(name));
	json_object_object_add(e, "valueFrom", vf);
	return e;
}

static struct json_object *value_env(const char *name, const char *value)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "name", jstr(name));
	json_object_object_add(e, "value", jstr(value));
	return e;
}

/* OOMLENS_LIMIT_<NAME>: the app container's memory limit, for when the
 * sidecar cannot read its cgroup (sidecar/src/pod_parse.h). */
static struct json_object *limit_env(const char *container)
{
	char name[160] = "OOMLENS_LIMIT_";
	size_t n = strlen(name);
	struct json_object *e = json_object_new_object();
	struct json_object *vf = json_object_new_object();
	struct json_object *rf = json_object_new_object();

	for (const char *c = container; *c && n + 1 < sizeof(name); c++)
		name[n++] = (*c == '-' || *c == '.')   ? '_'
			    : (*c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A')
						       : *c;
	name[n] = '\0';
	json_object_object_add(rf, "containerName", jstr(container));
	json_object_object_add(rf, "resource", jstr("limits.memory"));
	json_object_object_add(vf, "resourceFieldRef", rf);
	json_object_object_add(e, "name", jstr(name));
	json_object_object_add(e, "valueFrom", vf);
	return e;
}

static struct json_object *sidecar_env(const struct inject_config *c,
				       struct json_object *containers)
{
	struct json_object *env = json_object_new_array();

	json_object_array_add(env, field_env("POD_NAME", "metadata.name"));
	json_object_array_add(env,
			      field_env("POD_NAMESPACE", "metadata.namespace"));
	json_object_array_add(env, field_env("POD_UID", "metadata.uid"));
	json_object_array_add(env, field_env("NODE_NAME", "spec.nodeName"));
	for (size_t i = 0; i < jget_len(containers); i++) {
		const char *n = jget_str(NULL, jget_idx(containers, i), "name");

		if (n)
			json_object_array_add(env, limit_env(n));
	}
	json_object_array_add(env, value_env(INJECT_LEVEL_ENV,
					     kube_pss_level_name(c->level)));
	return env;
}

static struct json_object *sidecar_resources(const struct inject_config *c)
{
	struct json_object *res = json_object_new_object();
	struct json_object *req = json_object_new_object();
	struct json_object *lim = json_object_new_object();

	if (c->cpu_request)
		json_object_object_add(req, "cpu", jstr(c->cpu_request));
	if (c->memory_request)
		json_object_object_add(req, "memory", jstr(c->memory_request));
	if (c->memory_limit)
		json_object_object_add(lim, "memory", jstr(c->memory_limit));
	json_object_object_add(res, "requests", req);
	json_object_object_add(res, "limits", lim);
	return res;
}

static void add_caps(struct json_object *sc, const char *const *add)
{
	struct json_object *caps = json_object_new_object();
	struct json_object *d = json_object_new_array();

	json_object_array_add(d, jstr("ALL"));
	json_object_object_add(caps, "drop", d);
	if (add) {
		struct json_object *a = json_object_new_array();

		for (; *add; add++)
			json_object_array_add(a, jstr(*add));
		json_object_object_add(caps, "add", a);
	}
	json_object_object_add(sc, "capabilities", caps);
}

/* The sidecar's needs, docs/privileges.md, as far as the level allows.
 * Privileged: root in its own container even when the pod says
 * runAsNonRoot (the capabilities of a non-root process would stay in the
 * bounding set only). Baseline without the app's uid: root with the
 * capabilities of the JVM switch, all on baseline's list. The app's uid:
 * same-uid reads need no capability, and restricted's settings. */
static struct json_object *sidecar_security(const struct shape *sh)
{
	static const char *const all[] = {"SYS_PTRACE",	     "SETUID",
					  "SETGID",	     "KILL",
					  "DAC_READ_SEARCH", NULL};
	static const char *const setid[] = {"SETUID", "SETGID", "KILL", NULL};
	struct json_object *sc = json_object_new_object();

	add_caps(sc, sh->kind == SHAPE_PRIVILEGED   ? all
		     : sh->kind == SHAPE_ROOT_SETID ? setid
						    : NULL);
	json_object_object_add(sc, "readOnlyRootFilesystem",
			       json_object_new_boolean(1));
	json_object_object_add(sc, "allowPrivilegeEscalation",
			       json_object_new_boolean(0));
	json_object_object_add(
		sc, "runAsUser",
		json_object_new_int64(sh->kind == SHAPE_APP_UID ? sh->uid : 0));
	if (sh->kind == SHAPE_APP_UID && sh->gid >= 0)
		json_object_object_add(sc, "runAsGroup",
				       json_object_new_int64(sh->gid));
	json_object_object_add(
		sc, "runAsNonRoot",
		json_object_new_boolean(sh->kind == SHAPE_APP_UID));
	if (sh->kind != SHAPE_PRIVILEGED) {
		struct json_object *sp = json_object_new_object();

		json_object_object_add(sp, "type", jstr("RuntimeDefault"));
		json_object_object_add(sc, "seccompProfile", sp);
	}
	return sc;
}

static struct json_object *mount(const char *name, const char *path, bool ro)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "name", jstr(name));
	json_object_object_add(m, "mountPath", jstr(path));
	if (ro)
		json_object_object_add(m, "readOnly",
				       json_object_new_boolean(1));
	return m;
}

static struct json_object *sidecar_container(const struct inject_config *c,
					     const struct shape *sh,
					     struct json_object *containers)
{
	struct json_object *s = json_object_new_object();
	struct json_object *args = json_object_new_array();
	struct json_object *mounts = json_object_new_array();

	json_object_array_add(args, jstr("run"));
	json_object_array_add(
		mounts, mount(INJECT_SPOOL_VOLUME, INJECT_SPOOL_PATH, false));
	json_object_array_add(mounts, mount(INJECT_PODINFO_VOLUME,
					    INJECT_PODINFO_PATH, true));
	json_object_object_add(s, "name", jstr(INJECT_SIDECAR_NAME));
	json_object_object_add(s, "image", jstr(c->image ? c->image : ""));
	if (c->pull_policy)
		json_object_object_add(s, "imagePullPolicy",
				       jstr(c->pull_policy));
	json_object_object_add(s, "args", args);
	json_object_object_add(s, "env", sidecar_env(c, containers));
	json_object_object_add(s, "resources", sidecar_resources(c));
	json_object_object_add(s, "securityContext", sidecar_security(sh));
	json_object_object_add(s, "volumeMounts", mounts);
	if (c->native_sidecar)
		json_object_object_add(s, "restartPolicy", jstr("Always"));
	return s;
}

static struct json_object *volume_spool(const struct inject_config *c)
{
	struct json_object *v = json_object_new_object();
	struct json_object *ed = json_object_new_object();

	if (c->spool_size)
		json_object_object_add(ed, "sizeLimit", jstr(c->spool_size));
	json_object_object_add(v, "name", jstr(INJECT_SPOOL_VOLUME));
	json_object_object_add(v, "emptyDir", ed);
	return v;
}

static struct json_object *podinfo_item(const char *path, const char *field)
{
	struct json_object *it = json_object_new_object();
	struct json_object *fr = json_object_new_object();

	json_object_object_add(fr, "fieldPath", jstr(field));
	json_object_object_add(it, "path", jstr(path));
	json_object_object_add(it, "fieldRef", fr);
	return it;
}

/* The Downward API files the sidecar reloads when they change. */
static struct json_object *volume_podinfo(void)
{
	struct json_object *v = json_object_new_object();
	struct json_object *da = json_object_new_object();
	struct json_object *items = json_object_new_array();

	json_object_array_add(
		items, podinfo_item("annotations", "metadata.annotations"));
	json_object_array_add(items, podinfo_item("labels", "metadata.labels"));
	json_object_object_add(da, "items", items);
	json_object_object_add(v, "name", jstr(INJECT_PODINFO_VOLUME));
	json_object_object_add(v, "downwardAPI", da);
	return v;
}

/* The element of array a whose "name" is name, or -1. */
static ssize_t find_named(struct json_object *a, const char *name)
{
	for (size_t i = 0; i < jget_len(a); i++) {
		const char *n = jget_str(NULL, jget_idx(a, i), "name");

		if (n && streq(n, name))
			return (ssize_t)i;
	}
	return -1;
}

/* Adds the volumes the pod does not have yet (the array when absent). */
static void patch_volumes(struct patch *p, struct json_object *spec)
{
	struct json_object *vols = jget_array(NULL, spec, "volumes");
	struct json_object *want[2] = {volume_spool(p->cfg), volume_podinfo()};
	const char *names[2] = {INJECT_SPOOL_VOLUME, INJECT_PODINFO_VOLUME};

	if (!vols) {
		struct json_object *a = json_object_new_array();

		json_object_array_add(a, want[0]);
		json_object_array_add(a, want[1]);
		op_add(p, a, "spec", "volumes", NULL);
		return;
	}
	for (size_t i = 0; i < 2; i++) {
		if (find_named(vols, names[i]) >= 0)
			json_object_put(want[i]);
		else
			op_add(p, want[i], "spec", "volumes", "-", NULL);
	}
}

/* Moves each element of adds to the end of the container's env, or the
 * whole array when the container has none. Takes adds. */
static void env_append(struct patch *p, struct json_object *env,
		       const char *idx, struct json_object *adds)
{
	if (jget_len(adds) == 0) {
		json_object_put(adds);
	} else if (!env) {
		op_add(p, adds, "spec", "containers", idx, "env", NULL);
	} else {
		for (size_t i = 0; i < jget_len(adds); i++)
			op_add(p, json_object_get(jget_idx(adds, i)), "spec",
			       "containers", idx, "env", "-", NULL);
		json_object_put(adds);
	}
}

/* JAVA_TOOL_OPTIONS with the NMT flag: created, or extended in place;
 * never replaced, never taken from where the patch cannot see it. */
static void patch_nmt(struct patch *p, struct json_object *c, const char *idx,
		      struct json_object *adds)
{
	struct json_object *env = jget_array(NULL, c, "env");
	const char *name = jget_str(NULL, c, "name");
	ssize_t j = find_named(env, "JAVA_TOOL_OPTIONS");
	char msg[256], jidx[24];
	const char *old;

	if (j < 0 && jget(c, "envFrom")) {
		snprintf(msg, sizeof(msg),
			 "oomlens: container %.63s has envFrom: "
			 "JAVA_TOOL_OPTIONS left alone, add " INJECT_NMT_FLAG
			 " to it yourself",
			 name ? name : "?");
		warn_add(p, msg);
		return;
	}
	if (j < 0) {
		json_object_array_add(
			adds, value_env("JAVA_TOOL_OPTIONS", INJECT_NMT_FLAG));
		return;
	}
	if (jget(jget_idx(env, (size_t)j), "valueFrom")) {
		snprintf(msg, sizeof(msg),
			 "oomlens: container %.63s takes JAVA_TOOL_OPTIONS "
			 "from valueFrom: left alone, add " INJECT_NMT_FLAG
			 " to it yourself",
			 name ? name : "?");
		warn_add(p, msg);
		return;
	}
	old = jget_str(NULL, jget_idx(env, (size_t)j), "value");
	if (old && strstr(old, "-XX:NativeMemoryTracking"))
		return; /* the user chose a level already */
	_cleanup_strbuf_ struct strbuf v = STRBUF_INIT;
	if ((old && *old && strbuf_addf(&v, "%s ", old) < 0) ||
	    strbuf_adds(&v, INJECT_NMT_FLAG) < 0) {
		p->err = -E2BIG;
		return;
	}
	snprintf(jidx, sizeof(jidx), "%zd", j);
	op_add(p, json_object_new_string_len(v.buf, v.len), "spec",
	       "containers", idx, "env", jidx, "value", NULL);
}

/* Each app container: OOMLENS_CONTAINER (how the sidecar names its
 * processes), and the NMT flag when asked for. */
static void patch_app_containers(struct patch *p, struct json_object *cs,
				 bool nmt)
{
	for (size_t i = 0; i < jget_len(cs); i++) {
		struct json_object *c = jget_idx(cs, i);
		struct json_object *env = jget_array(NULL, c, "env");
		struct json_object *adds = json_object_new_array();
		const char *name = jget_str(NULL, c, "name");
		char idx[24];

		snprintf(idx, sizeof(idx), "%zu", i);
		if (name && find_named(env, "OOMLENS_CONTAINER") < 0)
			json_object_array_add(
				adds, value_env("OOMLENS_CONTAINER", name));
		if (nmt)
			patch_nmt(p, c, idx, adds);
		env_append(p, env, idx, adds);
	}
}

static void patch_sidecar(struct patch *p, struct json_object *spec)
{
	struct json_object *cs = jget_array(NULL, spec, "containers");
	struct json_object *s = sidecar_container(p->cfg, &p->shape, cs);

	if (!p->cfg->native_sidecar) {
		op_add(p, s, "spec", "containers", "-", NULL);
	} else if (jget_array(NULL, spec, "initContainers")) {
		op_add(p, s, "spec", "initContainers", "-", NULL);
	} else {
		struct json_object *a = json_object_new_array();

		json_object_array_add(a, s);
		op_add(p, a, "spec", "initContainers", NULL);
	}
}

/* Whether the pod asks for the sidecar and does not have it yet. */
static bool pod_asks(struct json_object *pod)
{
	struct json_object *ann =
		jget_obj(NULL, jget(pod, "metadata"), "annotations");
	struct json_object *spec = jget_obj(NULL, pod, "spec");
	const char *cap = jget_str(NULL, ann, "oomlens.io/capture");

	return cap && streq(cap, "true") &&
	       find_named(jget_array(NULL, spec, "containers"),
			  INJECT_SIDECAR_NAME) < 0 &&
	       /* reinvoked, or injected by hand */
	       find_named(jget_array(NULL, spec, "initContainers"),
			  INJECT_SIDECAR_NAME) < 0;
}

/* Why a pod that asks cannot have the sidecar at all, into why; false
 * when it can. */
/* The source of the pod's own volume named name when it is not of the
 * kind the injector would add ("emptyDir", "downwardAPI"): the sidecar
 * would write its snapshots to, or read its annotations from, wherever
 * the pod chose (a hostPath: the node's disk). "" when it is of that
 * kind or absent. */
static const char *volume_foreign(struct json_object *spec, const char *name,
				  const char *kind)
{
	struct json_object *vols = jget_array(NULL, spec, "volumes");
	ssize_t i = find_named(vols, name);
	const char *other = "";

	if (i < 0)
		return "";
	json_object_object_foreach (jget_idx(vols, (size_t)i), k, v) {
		(void)v;
		if (streq(k, kind))
			return "";
		if (!streq(k, "name") && !*other)
			other = k;
	}
	return *other ? other : "no source";
}

static bool pod_refused(struct json_object *pod, char *why, size_t n)
{
	struct json_object *spec = jget_obj(NULL, pod, "spec");
	const char *spool =
		volume_foreign(spec, INJECT_SPOOL_VOLUME, "emptyDir");
	const char *info =
		volume_foreign(spec, INJECT_PODINFO_VOLUME, "downwardAPI");
	bool b = false;

	if (*spool || *info)
		snprintf(why, n,
			 "the pod has its own volume %s (%.40s), not the %s "
			 "the sidecar needs: not injected; rename that volume",
			 *spool ? INJECT_SPOOL_VOLUME : INJECT_PODINFO_VOLUME,
			 *spool ? spool : info,
			 *spool ? "emptyDir" : "downwardAPI");
	else if (jget_len(jget_array(NULL, spec, "containers")) == 0)
		snprintf(why, n, "the pod has no containers: not injected");
	else if (jget_bool(NULL, spec, "hostPID", &b) && b)
		snprintf(why, n,
			 "hostPID pod: the sidecar would see every process of "
			 "the node, not injected; the node agent still reports "
			 "its kills");
	else if (jget_bool(NULL, spec, "shareProcessNamespace", &b) && !b)
		snprintf(
			why, n,
			"shareProcessNamespace: false is explicit: the sidecar "
			"needs it true, not injected; remove it to get "
			"pre-kill snapshots");
	else
		return false;
	return true;
}

/* Whether name is in the comma list (oomlens.io/containers, spaces
 * around names allowed, as the sidecar reads it). */
static bool name_listed(const char *list, const char *name)
{
	size_t l = strlen(name);

	for (const char *v = list; *v;) {
		const char *end = strchr(v, ',');
		size_t k = end ? (size_t)(end - v) : strlen(v);

		while (k && *v == ' ')
			v++, k--;
		while (k && v[k - 1] == ' ')
			k--;
		if (k == l && memcmp(v, name, l) == 0)
			return true;
		v = end ? end + 1 : v + strlen(v);
	}
	return false;
}

static bool container_selected(const char *list, struct json_object *c)
{
	const char *name = jget_str(NULL, c, "name");

	return !list || (name && name_listed(list, name));
}

/* runAsUser or runAsGroup (key) of container c, else of the pod; -1 when
 * neither states one. */
static int64_t run_as(struct json_object *c, struct json_object *spec,
		      const char *key)
{
	uint64_t v;

	if (jget_u64(NULL, jget_obj(NULL, c, "securityContext"), key, &v) ||
	    jget_u64(NULL, jget_obj(NULL, spec, "securityContext"), key, &v))
		return v <= INT64_MAX ? (int64_t)v : -1;
	return -1;
}

/* The most capable sidecar cfg->level admits, into p->shape, with a
 * warning for what it will not read; false, with why, when no admissible
 * sidecar could read the app's memory. The uid is the recorded
 * container's (sidecar/src/pod.c: the first one oomlens.io/containers
 * selects). */
static bool shape_choose(struct patch *p, struct json_object *pod, char *why,
			 size_t n)
{
	struct json_object *spec = jget_obj(NULL, pod, "spec");
	struct json_object *cs = jget_array(NULL, spec, "containers");
	const char *list = jget_str(
		NULL, jget_obj(NULL, jget(pod, "metadata"), "annotations"),
		"oomlens.io/containers");
	const char *level = kube_pss_level_name(p->cfg->level);
	struct json_object *c = jget_idx(cs, 0);
	const char *name;
	char msg[400];
	int64_t uid;

	for (size_t i = 0; i < jget_len(cs); i++)
		if (container_selected(list, jget_idx(cs, i))) {
			c = jget_idx(cs, i);
			break;
		}
	name = jget_str(NULL, c, "name");
	name = name ? name : "?";
	uid = run_as(c, spec, "runAsUser");
	if (p->cfg->level == KUBE_PSS_PRIVILEGED) {
		p->shape = (struct shape){.kind = SHAPE_PRIVILEGED};
		return true;
	}
	if (uid <= 0 && p->cfg->level == KUBE_PSS_RESTRICTED) {
		snprintf(why, n,
			 "Pod Security restricted: container %.63s states no "
			 "runAsUser other than 0 (in its securityContext or "
			 "the pod's), and a sidecar that reads its memory must "
			 "run as its uid: not injected; state runAsUser and "
			 "runAsGroup to get pre-kill snapshots",
			 name);
		return false;
	}
	if (uid <= 0) {
		p->shape = (struct shape){.kind = SHAPE_ROOT_SETID};
		snprintf(msg, sizeof(msg),
			 "oomlens: Pod Security %s: container %.63s states no "
			 "runAsUser other than 0: the sidecar runs as root "
			 "without SYS_PTRACE and reads the memory of non-root "
			 "processes only; state runAsUser and runAsGroup for "
			 "a sidecar with the app's ids",
			 level, name);
		warn_add(p, msg);
		return true;
	}
	p->shape = (struct shape){.kind = SHAPE_APP_UID,
				  .uid = uid,
				  .gid = run_as(c, spec, "runAsGroup")};
	if (p->shape.gid < 0) {
		snprintf(msg, sizeof(msg),
			 "oomlens: Pod Security %s: container %.63s states no "
			 "runAsGroup: the sidecar runs as uid %lld with gid 0 "
			 "and reads its memory only if its gid is 0 too; state "
			 "runAsGroup",
			 level, name, (long long)uid);
		warn_add(p, msg);
	}
	for (size_t i = 0; i < jget_len(cs); i++) {
		struct json_object *o = jget_idx(cs, i);
		const char *on = jget_str(NULL, o, "name");

		if (o == c || !container_selected(list, o) ||
		    (run_as(o, spec, "runAsUser") == uid &&
		     run_as(o, spec, "runAsGroup") == p->shape.gid))
			continue;
		snprintf(msg, sizeof(msg),
			 "oomlens: Pod Security %s: the sidecar runs with "
			 "container %.63s's ids; container %.63s's differ, "
			 "its memory will not be readable",
			 level, name, on ? on : "?");
		warn_add(p, msg);
	}
	return true;
}

static void patch_pod(struct patch *p, struct json_object *pod)
{
	struct json_object *spec = jget_obj(NULL, pod, "spec");
	struct json_object *ann =
		jget_obj(NULL, jget(pod, "metadata"), "annotations");
	const char *nmt = jget_str(NULL, ann, "oomlens.io/jvm-nmt");

	if (!jget(spec, "shareProcessNamespace"))
		op_add(p, json_object_new_boolean(1), "spec",
		       "shareProcessNamespace", NULL);
	patch_volumes(p, spec);
	patch_app_containers(p, jget_array(NULL, spec, "containers"),
			     nmt && streq(nmt, "true"));
	patch_sidecar(p, spec);
	/* for people reading the pod; pod_asks looks at the container */
	op_add(p, jstr(INJECT_SIDECAR_NAME), "metadata", "annotations",
	       "oomlens.io/injected", NULL);
}

/* Whether the mutated pod meets the level wherever the pod itself did:
 * a violation that is not the pod's own is the patch's, and the patch is
 * dropped (why says which). */
static bool level_kept(struct patch *p, struct json_object *pod, char *why,
		       size_t n)
{
	struct kube_pss_result before, after, added = {0};
	const char *level = kube_pss_level_name(p->cfg->level);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (p->cfg->level == KUBE_PSS_PRIVILEGED)
		return true;
	if (!p->mutated || kube_pss_check(pod, p->cfg->level, &before) < 0 ||
	    kube_pss_check(p->mutated, p->cfg->level, &after) < 0) {
		snprintf(why, n,
			 "the patch could not be checked against Pod Security "
			 "%s (an oomlens bug): not injected",
			 level);
		return false;
	}
	for (size_t i = 0; i < after.n; i++) {
		bool old = false;

		for (size_t j = 0; !old && j < before.n; j++)
			old = after.v[i].check == before.v[j].check &&
			      streq(after.v[i].path, before.v[j].path);
		if (!old)
			added.v[added.n++] = after.v[i];
	}
	added.more = after.more > before.more ? after.more - before.more : 0;
	if (added.n == 0 && added.more == 0)
		return true;
	kube_pss_result_text(&added, &sb);
	snprintf(why, n,
		 "the sidecar would not be admitted under Pod Security %s "
		 "(%.300s): not injected",
		 level, sb.len ? sb.buf : "?");
	return false;
}

/* The pod as it came, with the annotation and a warning saying why (the
 * agent's pod watch posts it as an Event, cut to KUBE_NOT_INJECTED_MAX). */
static void not_injected(struct patch *p, const char *why)
{
	char msg[700];

	op_add(p, jstr(why), "metadata", "annotations", KUBE_ANNOT_NOT_INJECTED,
	       NULL);
	snprintf(msg, sizeof(msg), "oomlens: %s", why);
	warn_add(p, msg);
}

/* What Pod Security reads of a pod, for the patch to be applied to and
 * checked (level_kept): objects and arrays copied, scalars shared (the
 * patch only adds to objects and arrays), and the arrays no check reads
 * (a container's env, envFrom, command, args: most of a large pod) left
 * empty, so that the copy costs little more than the pod's shape. NULL
 * when out of memory. */
static struct json_object *pss_copy(struct json_object *o)
{
	static const char *const unread[] = {"env", "envFrom", "command",
					     "args"};
	struct json_object *c;

	if (json_object_is_type(o, json_type_array)) {
		size_t n = jget_len(o);

		if (!(c = json_object_new_array_ext((int)n)))
			return NULL;
		for (size_t i = 0; i < n; i++) {
			struct json_object *e = jget_idx(o, i);
			struct json_object *ec = e ? pss_copy(e) : NULL;

			if ((e && !ec) || json_object_array_add(c, ec) < 0) {
				json_object_put(ec);
				json_object_put(c);
				return NULL;
			}
		}
		return c;
	}
	if (!json_object_is_type(o, json_type_object))
		return json_object_get(o);
	if (!(c = json_object_new_object()))
		return NULL;
	json_object_object_foreach (o, k, v) {
		struct json_object *vc = NULL;
		bool skip = false;

		for (size_t i = 0; i < ARRAY_SIZE(unread); i++)
			skip |= streq(k, unread[i]);
		if (skip && json_object_is_type(v, json_type_array))
			vc = json_object_new_array();
		else if (v)
			vc = pss_copy(v);
		if ((v && !vc) || json_object_object_add(c, k, vc) < 0) {
			json_object_put(vc);
			json_object_put(c);
			return NULL;
		}
	}
	return c;
}

static void inject_pod(struct patch *p, struct json_object *pod)
{
	char why[600] = "";

	if (!pod_refused(pod, why, sizeof(why)) &&
	    shape_choose(p, pod, why, sizeof(why))) {
		if (p->cfg->level != KUBE_PSS_PRIVILEGED)
			p->mutated = pss_copy(pod);
		patch_pod(p, pod);
		if (level_kept(p, pod, why, sizeof(why)))
			return;
		/* nothing of it goes: the warnings were about that sidecar */
		json_object_put(p->ops);
		json_object_put(p->warnings);
		p->ops = json_object_new_array();
		p->warnings = json_object_new_array();
		if (!p->ops || !p->warnings)
			p->err = -ENOMEM;
	}
	json_object_put(p->mutated);
	p->mutated = NULL;
	if (!p->err)
		not_injected(p, why);
}

static struct json_object *review_parse(const char *buf, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(REVIEW_MAX_DEPTH);
	struct json_object *o;
	size_t end;

	if (!tok || len > INT32_MAX) {
		json_tokener_free(tok);
		return NULL;
	}
	o = json_tokener_parse_ex(tok, buf, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (json_tokener_get_error(tok) != json_tokener_success)
		end = 0, json_object_put(o), o = NULL;
	for (; o && end < len; end++)
		if (!strchr(" \t\r\n", buf[end])) {
			json_object_put(o); /* trailing garbage */
			o = NULL;
		}
	json_tokener_free(tok);
	return o;
}

/* The patch as base64 of its JSON text, into the response r. */
static int response_patch(struct json_object *r, struct json_object *ops)
{
	_cleanup_strbuf_ struct strbuf b = STRBUF_INIT;
	size_t n;
	const char *s = json_object_to_json_string_length(
		ops, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		&n);
	int e;

	if (!s)
		return -ENOMEM;
	e = kube_base64_encode(s, n, &b);
	if (e < 0)
		return e;
	json_object_object_add(r, "patchType", jstr("JSONPatch"));
	json_object_object_add(r, "patch",
			       json_object_new_string_len(b.buf, (int)b.len));
	return 0;
}

/* The AdmissionReview answering request uid (api: the review's own
 * apiVersion, or NULL), allowing the pod with p's patch and warnings. */
static int response_build(const char *uid, const char *api, struct patch *p,
			  struct strbuf *out)
{
	struct json_object *top = json_object_new_object();
	struct json_object *r = json_object_new_object();
	const char *s;
	size_t n;
	int e = 0;

	if (!api || !startswith(api, "admission.k8s.io/"))
		api = "admission.k8s.io/v1";
	json_object_object_add(top, "apiVersion", jstr(api));
	json_object_object_add(top, "kind", jstr("AdmissionReview"));
	json_object_object_add(r, "uid", jstr(uid ? uid : ""));
	json_object_object_add(r, "allowed", json_object_new_boolean(1));
	if (jget_len(p->ops) > 0)
		e = response_patch(r, p->ops);
	if (jget_len(p->warnings) > 0)
		json_object_object_add(r, "warnings",
				       json_object_get(p->warnings));
	json_object_object_add(top, "response", r);
	s = json_object_to_json_string_length(
		top, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		&n);
	if (e == 0)
		e = s ? strbuf_add(out, s, n) : -ENOMEM;
	json_object_put(top);
	return e;
}

/* A review whose tree would cost over INJECT_MAX_TREE: not parsed; its
 * request.uid read from the text, and the pod admitted as is with a
 * warning saying why: INJECT_TOO_LARGE; -EFBIG when it has no uid to
 * answer. */
static int review_too_large(const char *buf, size_t len, uint64_t cost,
			    struct patch *p, struct strbuf *out)
{
	static const char *const uid_at[] = {"request", "uid", NULL};
	static const char *const api_at[] = {"apiVersion", NULL};
	char uid[128], api[64], msg[300];
	int r;

	if (jget_scan_str(buf, len, uid_at, uid, sizeof(uid)) < 0)
		return -EFBIG;
	if (jget_scan_str(buf, len, api_at, api, sizeof(api)) < 0)
		api[0] = '\0';
	snprintf(msg, sizeof(msg),
		 "oomlens: the AdmissionReview is too large to read (%zu "
		 "bytes, a %" PRIu64 " MiB tree, over the injector's %u MiB): "
		 "pod admitted as is, not injected",
		 len, cost >> 20, INJECT_MAX_TREE >> 20);
	warn_add(p, msg);
	if (p->err)
		return p->err;
	r = response_build(uid, api, p, out);
	return r < 0 ? r : INJECT_TOO_LARGE;
}

/* The request's pod when it is a pod being created; NULL otherwise. */
static struct json_object *review_pod(struct json_object *req)
{
	struct json_object *kind = jget_obj(NULL, req, "kind");
	const char *k = jget_str(NULL, kind, "kind");
	const char *op = jget_str(NULL, req, "operation");

	if (!k || !streq(k, "Pod") || !op || !streq(op, "CREATE"))
		return NULL;
	return jget_obj(NULL, req, "object");
}

int inject_review(const char *review_json, size_t len,
		  const struct inject_config *cfg, struct strbuf *ret_response)
{
	uint64_t cost = jget_tree_cost(review_json, len);
	struct json_object *review = NULL, *req, *pod;
	struct patch p = {.cfg = cfg,
			  .ops = json_object_new_array(),
			  .warnings = json_object_new_array()};
	int r;

	if (!p.ops || !p.warnings) {
		r = -ENOMEM;
		goto out;
	}
	if (cost > INJECT_MAX_TREE) {
		r = review_too_large(review_json, len, cost, &p, ret_response);
		goto out;
	}
	review = review_parse(review_json, len);
	req = jget_obj(NULL, review, "request");
	pod = review_pod(req);
	if (!review || !req || !jget_str(NULL, req, "uid"))
		warn_add(&p,
			 "oomlens: the AdmissionReview could not be read "
			 "(not JSON, or no request.uid): pod admitted as is");
	else if (pod && pod_asks(pod))
		inject_pod(&p, pod);
	r = p.err;
	if (r == 0)
		r = response_build(jget_str(NULL, req, "uid"),
				   jget_str(NULL, review, "apiVersion"), &p,
				   ret_response);
out:
	json_object_put(p.ops);
	json_object_put(p.warnings);
	json_object_put(p.mutated);
	json_object_put(review);
	return r;
}

int inject_parse_version(const char *body, size_t len, bool *ret)
{
	struct json_object *o = review_parse(body, len);
	const char *maj = jget_str(NULL, o, "major");
	const char *min = jget_str(NULL, o, "minor");
	char digits[16] = "";
	uint64_t a, b;
	size_t n = 0;
	int r = -EBADMSG;

	/* providers append '+' (GKE "29+") */
	for (; min && min[n] >= '0' && min[n] <= '9' && n + 1 < sizeof(digits);
	     n++)
		digits[n] = min[n];
	digits[n] = '\0';
	if (maj && parse_u64(maj, &a) == 0 && parse_u64(digits, &b) == 0) {
		*ret = a > 1 || (a == 1 && b >= 29);
		r = 0;
	}
	json_object_put(o);
	return r;
}
