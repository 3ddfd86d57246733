/* SPDX-License-Identifier: Apache-2.0 */
/* The injector's mutation: AdmissionReview in, AdmissionReview out, built
 * with json-c so every string is escaped by one well-tested encoder. The
 * patch only ever adds (or, for JAVA_TOOL_OPTIONS, replaces one value it
 * extends): it never removes what the user wrote. */
#include <errno.h>
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

/* Deeper than any pod; bounds json-c's recursion on hostile input. */
#define REVIEW_MAX_DEPTH 64

struct patch {
	struct json_object *ops;      /* the JSONPatch array */
	struct json_object *warnings; /* strings */
	const struct inject_config *cfg;
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

/* "add" at the path made of the tokens (NULL-terminated). */
static void op_add_path(struct patch *p, struct json_object *value,
			const char *const *tokens)
{
	_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;
	int r = 0;

	for (; r == 0 && *tokens; tokens++)
		r = ptr_token(&path, *tokens);
	if (r < 0 && !p->err)
		p->err = r;
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

static struct json_object *sidecar_env(struct json_object *containers)
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

/* The sidecar's needs, docs/privileges.md; root in its own container
 * even when the pod says runAsNonRoot (the capabilities of a non-root
 * process would stay in the bounding set only). */
static struct json_object *sidecar_security(void)
{
	static const char *const add[] = {"SYS_PTRACE", "SETUID", "SETGID",
					  "KILL", "DAC_READ_SEARCH"};
	struct json_object *sc = json_object_new_object();
	struct json_object *caps = json_object_new_object();
	struct json_object *a = json_object_new_array();
	struct json_object *d = json_object_new_array();

	for (size_t i = 0; i < ARRAY_SIZE(add); i++)
		json_object_array_add(a, jstr(add[i]));
	json_object_array_add(d, jstr("ALL"));
	json_object_object_add(caps, "drop", d);
	json_object_object_add(caps, "add", a);
	json_object_object_add(sc, "capabilities", caps);
	json_object_object_add(sc, "readOnlyRootFilesystem",
			       json_object_new_boolean(1));
	json_object_object_add(sc, "allowPrivilegeEscalation",
			       json_object_new_boolean(0));
	json_object_object_add(sc, "runAsUser", json_object_new_int(0));
	json_object_object_add(sc, "runAsNonRoot", json_object_new_boolean(0));
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
	json_object_object_add(s, "env", sidecar_env(containers));
	json_object_object_add(s, "resources", sidecar_resources(c));
	json_object_object_add(s, "securityContext", sidecar_security());
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
	struct json_object *s = sidecar_container(p->cfg, cs);

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

/* Whether the pod gets the sidecar; a refusal the user should hear about
 * becomes a warning. */
static bool pod_wants(struct patch *p, struct json_object *pod)
{
	struct json_object *ann =
		jget_obj(NULL, jget(pod, "metadata"), "annotations");
	struct json_object *spec = jget_obj(NULL, pod, "spec");
	const char *cap = jget_str(NULL, ann, "oomlens.io/capture");
	bool b = false;

	if (!cap || !streq(cap, "true"))
		return false;
	if (find_named(jget_array(NULL, spec, "containers"),
		       INJECT_SIDECAR_NAME) >= 0 ||
	    find_named(jget_array(NULL, spec, "initContainers"),
		       INJECT_SIDECAR_NAME) >= 0)
		return false; /* reinvoked, or injected by hand */
	if (jget_len(jget_array(NULL, spec, "containers")) == 0) {
		warn_add(p, "oomlens: the pod has no containers: not injected");
		return false;
	}
	if (jget_bool(NULL, spec, "hostPID", &b) && b) {
		warn_add(p, "oomlens: hostPID pod: the sidecar would see every "
			    "process of the node, not injected; the node agent "
			    "still reports its kills");
		return false;
	}
	if (jget_bool(NULL, spec, "shareProcessNamespace", &b) && !b) {
		warn_add(p,
			 "oomlens: shareProcessNamespace: false is explicit: "
			 "the sidecar needs it true, not injected; remove "
			 "it to get pre-kill snapshots");
		return false;
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
	/* for people reading the pod; pod_wants looks at the container */
	op_add(p, jstr(INJECT_SIDECAR_NAME), "metadata", "annotations",
	       "oomlens.io/injected", NULL);
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

static int response_build(struct json_object *review, struct patch *p,
			  struct strbuf *out)
{
	struct json_object *req = jget_obj(NULL, review, "request");
	const char *uid = jget_str(NULL, req, "uid");
	const char *api = jget_str(NULL, review, "apiVersion");
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
	struct json_object *review = review_parse(review_json, len);
	struct json_object *req = jget_obj(NULL, review, "request");
	struct json_object *pod = review_pod(req);
	struct patch p = {.ops = json_object_new_array(),
			  .warnings = json_object_new_array(),
			  .cfg = cfg};
	int r;

	if (!review || !req || !jget_str(NULL, req, "uid"))
		warn_add(&p,
			 "oomlens: the AdmissionReview could not be read "
			 "(not JSON, or no request.uid): pod admitted as is");
	else if (pod && pod_wants(&p, pod))
		patch_pod(&p, pod);
	r = p.err;
	if (r == 0)
		r = response_build(review, &p, ret_response);
	json_object_put(p.ops);
	json_object_put(p.warnings);
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
