/* SPDX-License-Identifier: Apache-2.0 */
/* inject_review: AdmissionReviews in, the response's fields and the
 * patch's operations out. That the patch applies and yields a valid pod
 * is tests/integration/test_inject_patch.py's job (Python's jsonpatch). */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "injector/inject.h"
#include "kube/kube.h"

static struct inject_config cfg(bool native)
{
	struct inject_config c;

	inject_config_init(&c);
	c.image = "oomlens-sidecar:test";
	c.native_sidecar = native;
	return c;
}

/* The response object of the review around pod (a JSON text). */
static struct json_object *review_cfg(const char *pod, bool native)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	struct inject_config c = cfg(native);
	struct json_object *o;

	cr_assert_eq(strbuf_addf(&in,
				 "{\"apiVersion\":\"admission.k8s.io/v1\","
				 "\"kind\":\"AdmissionReview\",\"request\":{"
				 "\"uid\":\"u-1\",\"kind\":{\"group\":\"\","
				 "\"version\":\"v1\",\"kind\":\"Pod\"},"
				 "\"operation\":\"CREATE\",\"object\":%s}}",
				 pod),
		     0);
	cr_assert_eq(inject_review(in.buf, in.len, &c, &out), 0);
	o = json_tokener_parse(out.buf);
	cr_assert_not_null(o, "response is JSON: %s", out.buf);
	strbuf_release(&in);
	strbuf_release(&out);
	return o;
}

static struct json_object *review(const char *pod)
{
	return review_cfg(pod, false);
}

static struct json_object *resp(struct json_object *o)
{
	struct json_object *r = jget_obj(NULL, o, "response");
	bool allowed = false;

	cr_assert_str_eq(jget_str(NULL, o, "kind"), "AdmissionReview");
	cr_assert(jget_bool(NULL, r, "allowed", &allowed) && allowed);
	return r;
}

/* The decoded patch, or NULL when the response has none. */
static struct json_object *patch_of(struct json_object *o)
{
	struct json_object *r = resp(o);
	const char *b64 = jget_str(NULL, r, "patch");
	unsigned char *raw;
	size_t n;
	struct json_object *p;

	if (!b64) {
		cr_assert_null(jget(r, "patchType"));
		return NULL;
	}
	cr_assert_str_eq(jget_str(NULL, r, "patchType"), "JSONPatch");
	cr_assert_eq(kube_base64_decode(b64, strlen(b64), &raw, &n), 0);
	/* the decoded bytes are not NUL-terminated */
	struct json_tokener *tok = json_tokener_new();
	p = json_tokener_parse_ex(tok, (const char *)raw, (int)n);
	cr_assert_not_null(p);
	json_tokener_free(tok);
	free(raw);
	return p;
}

/* The op at path, or NULL. */
static struct json_object *op_at(struct json_object *patch, const char *path)
{
	for (size_t i = 0; i < jget_len(patch); i++) {
		const char *p = jget_str(NULL, jget_idx(patch, i), "path");

		if (p && strcmp(p, path) == 0)
			return jget_idx(patch, i);
	}
	return NULL;
}

static const char *warning0(struct json_object *o)
{
	return jget_idx_str(NULL, jget_array(NULL, resp(o), "warnings"), 0);
}

#define APP "{\"name\":\"app\",\"image\":\"busybox\"}"
#define ANNOTATED(extra_ann, spec)                      \
	"{\"metadata\":{\"annotations\":{\"oomlens.io/" \
	"capture\":\"true\"" extra_ann "}},\"spec\":{" spec "}}"

Test(inject, annotated_pod_gets_everything)
{
	struct json_object *o =
		review(ANNOTATED("", "\"containers\":[" APP "]"));
	struct json_object *p = patch_of(o), *v, *s, *sc;

	cr_assert_str_eq(jget_str(NULL, resp(o), "uid"), "u-1");
	cr_assert_null(jget(resp(o), "warnings"));
	cr_assert_not_null(p);
	v = op_at(p, "/spec/shareProcessNamespace");
	cr_assert_str_eq(jget_str(NULL, v, "op"), "add");
	cr_assert(json_object_get_boolean(jget(v, "value")));
	/* absent arrays are added whole */
	v = jget(op_at(p, "/spec/volumes"), "value");
	cr_assert_eq(jget_len(v), 2);
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 0), "name"),
			 "oomlens-spool");
	cr_assert_str_eq(jget_str(NULL,
				  jget_obj(NULL, jget_idx(v, 0), "emptyDir"),
				  "sizeLimit"),
			 "256Mi");
	cr_assert_not_null(jget_obj(NULL, jget_idx(v, 1), "downwardAPI"));
	v = jget(op_at(p, "/spec/containers/0/env"), "value");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 0), "name"),
			 "OOMLENS_CONTAINER");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 0), "value"), "app");
	s = jget(op_at(p, "/spec/containers/-"), "value");
	cr_assert_str_eq(jget_str(NULL, s, "name"), "oomlens-sidecar");
	cr_assert_str_eq(jget_str(NULL, s, "image"), "oomlens-sidecar:test");
	cr_assert_null(jget(s, "restartPolicy"));
	sc = jget_obj(NULL, s, "securityContext");
	cr_assert_str_eq(
		json_object_to_json_string_ext(jget(sc, "capabilities"),
					       JSON_C_TO_STRING_PLAIN),
		"{\"drop\":[\"ALL\"],\"add\":[\"SYS_PTRACE\",\"SETUID\","
		"\"SETGID\",\"KILL\",\"DAC_READ_SEARCH\"]}");
	cr_assert(json_object_get_boolean(jget(sc, "readOnlyRootFilesystem")));
	v = jget_array(NULL, s, "env");
	cr_assert_eq(jget_len(v), 6,
		     "POD_NAME/NAMESPACE/UID, NODE_NAME, limit, level");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 3), "name"), "NODE_NAME");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 4), "name"),
			 "OOMLENS_LIMIT_APP");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 5), "name"),
			 "OOMLENS_POD_SECURITY");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 5), "value"), "privileged");
	cr_assert_null(jget(sc, "seccompProfile"));
	/* '/' in the key escaped as ~1 (RFC 6901) */
	v = op_at(p, "/metadata/annotations/oomlens.io~1injected");
	cr_assert_str_eq(jget_str(NULL, v, "value"), "oomlens-sidecar");
	cr_assert_eq(jget_len(p), 5);
	json_object_put(p);
	json_object_put(o);
}

Test(inject, native_sidecar_is_an_init_container)
{
	struct json_object *o =
		review_cfg(ANNOTATED("", "\"containers\":[" APP "]"), true);
	struct json_object *p = patch_of(o);
	struct json_object *v = jget(op_at(p, "/spec/initContainers"), "value");

	cr_assert_eq(jget_len(v), 1);
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 0), "restartPolicy"),
			 "Always");
	cr_assert_null(op_at(p, "/spec/containers/-"));
	json_object_put(p);
	json_object_put(o);
}

Test(inject, init_containers_present_get_appended)
{
	struct json_object *o = review_cfg(
		ANNOTATED("",
			  "\"initContainers\":[{\"name\":\"init\"}],"
			  "\"volumes\":[{\"name\":\"data\",\"emptyDir\":{}}],"
			  "\"containers\":[" APP "]"),
		true);
	struct json_object *p = patch_of(o);

	cr_assert_not_null(op_at(p, "/spec/initContainers/-"));
	cr_assert_null(op_at(p, "/spec/initContainers"));
	cr_assert_null(op_at(p, "/spec/volumes"));
	cr_assert_not_null(op_at(p, "/spec/volumes/-"));
	cr_assert_null(op_at(p, "/spec/initContainers/0/env"),
		       "init containers are not app containers");
	json_object_put(p);
	json_object_put(o);
	/* without native sidecars the init containers are left alone */
	o = review(ANNOTATED("", "\"initContainers\":[{\"name\":\"init\"}],"
				 "\"containers\":[" APP "]"));
	p = patch_of(o);
	cr_assert_null(op_at(p, "/spec/initContainers/-"));
	cr_assert_not_null(op_at(p, "/spec/containers/-"));
	json_object_put(p);
	json_object_put(o);
}

Test(inject, unannotated_or_false_untouched)
{
	static const char *const pods[] = {
		"{\"metadata\":{},\"spec\":{\"containers\":[" APP "]}}",
		"{\"metadata\":{\"annotations\":{\"oomlens.io/capture\":"
		"\"false\"}},\"spec\":{\"containers\":[" APP "]}}",
		"{\"metadata\":{\"annotations\":{\"oomlens.io/capture\":"
		"\"True\"}},\"spec\":{\"containers\":[" APP "]}}",
	};

	for (size_t i = 0; i < 3; i++) {
		struct json_object *o = review(pods[i]);

		cr_assert_null(patch_of(o), "pod %zu", i);
		cr_assert_null(jget(resp(o), "warnings"));
		json_object_put(o);
	}
}

Test(inject, already_injected_is_left_alone)
{
	struct json_object *o = review(ANNOTATED(
		"", "\"containers\":[" APP ",{\"name\":\"oomlens-sidecar\"}]"));

	cr_assert_null(patch_of(o));
	cr_assert_null(jget(resp(o), "warnings"));
	json_object_put(o);
	o = review(ANNOTATED("",
			     "\"initContainers\":[{\"name\":"
			     "\"oomlens-sidecar\"}],\"containers\":[" APP "]"));
	cr_assert_null(patch_of(o));
	json_object_put(o);
}

/* A pod that asked and is not injected: the one op is the annotation,
 * whose value is the warning's reason. */
static void assert_not_injected(struct json_object *o, const char *why)
{
	struct json_object *p = patch_of(o);
	struct json_object *a =
		op_at(p, "/metadata/annotations/oomlens.io~1not-injected");
	const char *w = warning0(o);

	cr_assert_not_null(p);
	cr_assert_eq(jget_len(p), 1, "only the annotation: %s",
		     json_object_to_json_string(p));
	cr_assert_str_eq(jget_str(NULL, a, "op"), "add");
	cr_assert(strstr(w, why), "%s", w);
	cr_assert_eq(strncmp(w, "oomlens: ", 9), 0, "%s", w);
	cr_assert_str_eq(jget_str(NULL, a, "value"), w + 9);
	json_object_put(p);
}

Test(inject, host_pid_and_explicit_no_sharing_warn)
{
	struct json_object *o = review(
		ANNOTATED("", "\"hostPID\":true,\"containers\":[" APP "]"));

	assert_not_injected(o, "hostPID");
	json_object_put(o);
	o = review(ANNOTATED("", "\"shareProcessNamespace\":false,"
				 "\"containers\":[" APP "]"));
	assert_not_injected(o, "shareProcessNamespace: false");
	json_object_put(o);
	/* explicit true: nothing to add there, the rest is injected */
	o = review(ANNOTATED("", "\"shareProcessNamespace\":true,"
				 "\"containers\":[" APP "]"));
	struct json_object *p = patch_of(o);
	cr_assert_null(op_at(p, "/spec/shareProcessNamespace"));
	cr_assert_not_null(op_at(p, "/spec/containers/-"));
	json_object_put(p);
	json_object_put(o);
}

/* A volume of the pod's own under the names the sidecar uses: a hostPath
 * oomlens-spool would have the sidecar write its snapshots to the node's
 * disk, a configMap oomlens-podinfo feed it annotations. Refused; one of
 * the kind the injector adds is the pod's and kept. */
Test(inject, pod_volumes_under_the_sidecars_names)
{
	struct json_object *o = review(ANNOTATED(
		"", "\"volumes\":[{\"name\":\"oomlens-spool\",\"hostPath\":"
		    "{\"path\":\"/etc\"}}],\"containers\":[" APP "]"));

	assert_not_injected(o, "own volume oomlens-spool (hostPath)");
	json_object_put(o);
	o = review(ANNOTATED("", "\"volumes\":[{\"name\":\"oomlens-podinfo\","
				 "\"configMap\":{\"name\":\"x\"}}],"
				 "\"containers\":[" APP "]"));
	assert_not_injected(o, "own volume oomlens-podinfo (configMap)");
	json_object_put(o);
	o = review(ANNOTATED("", "\"volumes\":[{\"name\":\"oomlens-spool\"}],"
				 "\"containers\":[" APP "]"));
	assert_not_injected(o, "(no source)");
	json_object_put(o);
	o = review(ANNOTATED("", "\"volumes\":[{\"name\":\"oomlens-spool\","
				 "\"emptyDir\":{}}],\"containers\":[" APP "]"));
	struct json_object *p = patch_of(o);
	cr_assert_not_null(op_at(p, "/spec/containers/-"));
	cr_assert_null(jget(resp(o), "warnings"));
	json_object_put(p);
	json_object_put(o);
}

Test(inject, java_tool_options_created_extended_or_left)
{
	struct json_object *o = review(ANNOTATED(
		",\"oomlens.io/jvm-nmt\":\"true\"",
		"\"containers\":["
		"{\"name\":\"a\"},"
		"{\"name\":\"b\",\"env\":[{\"name\":\"X\",\"value\":\"1\"},"
		"{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"-Xmx1g\"}]},"
		"{\"name\":\"c\",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\","
		"\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"m\",\"key\":"
		"\"k\"}}}]},"
		"{\"name\":\"d\",\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\","
		"\"value\":\"-XX:NativeMemoryTracking=detail\"}]},"
		"{\"name\":\"e\",\"envFrom\":[{\"configMapRef\":{\"name\":"
		"\"m\"}}]}"
		"]"));
	struct json_object *p = patch_of(o), *v;

	v = jget(op_at(p, "/spec/containers/0/env"), "value");
	cr_assert_eq(jget_len(v), 2);
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 1), "value"),
			 INJECT_NMT_FLAG);
	v = op_at(p, "/spec/containers/1/env/1/value");
	cr_assert_str_eq(jget_str(NULL, v, "value"), "-Xmx1g " INJECT_NMT_FLAG);
	cr_assert_null(op_at(p, "/spec/containers/2/env/0/value"));
	cr_assert_null(op_at(p, "/spec/containers/3/env/0/value"),
		       "a level chosen by the user stays");
	v = jget(op_at(p, "/spec/containers/4/env"), "value");
	cr_assert_eq(jget_len(v), 1,
		     "a new JAVA_TOOL_OPTIONS would hide envFrom's");
	cr_assert_str_eq(jget_str(NULL, jget_idx(v, 0), "name"),
			 "OOMLENS_CONTAINER");
	struct json_object *w = jget_array(NULL, resp(o), "warnings");
	cr_assert_eq(jget_len(w), 2);
	cr_assert(strstr(jget_idx_str(NULL, w, 0), "container c takes "
						   "JAVA_TOOL_OPTIONS from "
						   "valueFrom"));
	cr_assert(strstr(jget_idx_str(NULL, w, 1), "container e has envFrom"));
	json_object_put(p);
	json_object_put(o);
}

Test(inject, malformed_reviews_are_allowed_with_a_warning)
{
	static const char *const bad[] = {
		"",
		"{",
		"[]",
		"null",
		"{\"request\":{}}",
		"{\"request\":{\"uid\":\"x\"}} trailing",
		"{\"request\":{\"uid\":5}}",
	};
	struct inject_config c = cfg(false);

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct strbuf out = STRBUF_INIT;
		struct json_object *o;

		cr_assert_eq(inject_review(bad[i], strlen(bad[i]), &c, &out),
			     0);
		o = json_tokener_parse(out.buf);
		cr_assert_null(patch_of(o), "case %zu", i);
		cr_assert(strstr(warning0(o), "could not be read"));
		json_object_put(o);
		strbuf_release(&out);
	}
	/* deep nesting stops at the parser's depth, no recursion blow-up */
	struct strbuf deep = STRBUF_INIT, out = STRBUF_INIT;
	for (int i = 0; i < 100000; i++)
		strbuf_addch(&deep, '[');
	cr_assert_eq(inject_review(deep.buf, deep.len, &c, &out), 0);
	cr_assert(strstr(out.buf, "could not be read"));
	strbuf_release(&deep);
	strbuf_release(&out);
}

Test(inject, not_a_pod_create_is_ignored)
{
	const char *upd =
		"{\"request\":{\"uid\":\"u\",\"kind\":{\"kind\":\"Pod\"},"
		"\"operation\":\"UPDATE\",\"object\":" ANNOTATED(
			"", "\"containers\":[" APP "]") "}}";
	struct inject_config c = cfg(false);
	struct strbuf out = STRBUF_INIT;
	struct json_object *o;

	cr_assert_eq(inject_review(upd, strlen(upd), &c, &out), 0);
	o = json_tokener_parse(out.buf);
	cr_assert_null(patch_of(o));
	cr_assert_null(jget(resp(o), "warnings"));
	cr_assert_str_eq(jget_str(NULL, resp(o), "uid"), "u");
	json_object_put(o);
	strbuf_release(&out);
}

/* A pod of env_per x 300 containers' environment variables, annotated
 * for capture with the JVM's NMT. */
static void huge_pod_text(struct strbuf *pod, int env_per)
{
	strbuf_adds(pod, "{\"metadata\":{\"annotations\":{\"oomlens.io/"
			 "capture\":\"true\",\"oomlens.io/jvm-nmt\":\"true\"}},"
			 "\"spec\":{\"containers\":[");
	for (int i = 0; i < 300; i++) {
		strbuf_addf(pod, "%s{\"name\":\"c%d\",\"env\":[", i ? "," : "",
			    i);
		for (int j = 0; j < env_per; j++)
			strbuf_addf(pod,
				    "%s{\"name\":\"V%d\",\"value\":\"%d\"}",
				    j ? "," : "", j, j);
		strbuf_adds(pod, "]}");
	}
	strbuf_adds(pod, "]}}");
}

/* 300 containers of 40 variables each (340 KB, a 13 MiB tree): read and
 * patched whole. */
Test(inject, huge_pod)
{
	struct strbuf pod = STRBUF_INIT;
	struct json_object *o, *p;

	huge_pod_text(&pod, 40);
	cr_assert_leq(jget_tree_cost(pod.buf, pod.len), INJECT_MAX_TREE);
	o = review(pod.buf);
	p = patch_of(o);
	/* per container: OOMLENS_CONTAINER + JAVA_TOOL_OPTIONS appended */
	cr_assert_eq(jget_len(p), 1 + 1 + 600 + 1 + 1);
	cr_assert_not_null(op_at(p, "/spec/containers/299/env/-"));
	cr_assert_eq(
		jget_len(jget_array(
			NULL, jget(op_at(p, "/spec/containers/-"), "value"),
			"env")),
		4 + 300 + 1);
	json_object_put(p);
	json_object_put(o);
	strbuf_release(&pod);
}

/* Over INJECT_MAX_TREE the review is not parsed: answered from its uid,
 * the pod admitted as is and told why; without a uid, -EFBIG. 3 MB of
 * "{}," (a 780 MiB tree) is refused as fast. */
Test(inject, a_review_too_costly_to_parse_is_answered_unread)
{
	struct strbuf pod = STRBUF_INIT, in = STRBUF_INIT, out = STRBUF_INIT;
	struct inject_config c = cfg(false);
	struct json_object *o, *r;

	huge_pod_text(&pod, 80);
	strbuf_addf(
		&in,
		"{\"apiVersion\":\"admission.k8s.io/v1beta1\","
		"\"request\":{\"kind\":{\"kind\":\"Pod\"},"
		"\"operation\":\"CREATE\",\"object\":%s,\"uid\":\"u-big\"}}",
		pod.buf);
	cr_assert_gt(jget_tree_cost(in.buf, in.len), INJECT_MAX_TREE);
	cr_assert_eq(inject_review(in.buf, in.len, &c, &out), INJECT_TOO_LARGE);
	o = json_tokener_parse(out.buf);
	cr_assert_not_null(o, "%s", out.buf);
	cr_assert_str_eq(jget_str(NULL, o, "apiVersion"),
			 "admission.k8s.io/v1beta1");
	r = resp(o);
	cr_assert_str_eq(jget_str(NULL, r, "uid"), "u-big");
	cr_assert_null(patch_of(o));
	cr_assert(strstr(warning0(o), "too large to read"), "%s", warning0(o));
	cr_assert(strstr(warning0(o), "not injected"));
	json_object_put(o);

	/* no uid to answer: nothing written */
	strbuf_reset(&in);
	strbuf_reset(&out);
	strbuf_adds(&in, "{\"request\":{\"x\":[");
	for (int i = 0; i < 1000000; i++)
		strbuf_adds(&in, "{},");
	strbuf_adds(&in, "{}],\"uid\":\"a\\\"b\"}}");
	cr_assert_eq(inject_review(in.buf, in.len, &c, &out), -EFBIG);
	cr_assert_eq(out.len, 0);
	strbuf_release(&in);
	strbuf_release(&out);
	strbuf_release(&pod);
}

Test(inject, native_sidecars_from_version)
{
	static const struct {
		const char *body;
		int r;
		bool native;
	} t[] = {
		{"{\"major\":\"1\",\"minor\":\"20\",\"gitVersion\":\"v1.20."
		 "15\"}",
		 0, false},
		{"{\"major\":\"1\",\"minor\":\"29\"}", 0, true},
		{"{\"major\":\"1\",\"minor\":\"28+\"}", 0, false},
		{"{\"major\":\"1\",\"minor\":\"30+\"}", 0, true},
		{"{\"major\":\"2\",\"minor\":\"0\"}", 0, true},
		{"{\"major\":\"1\",\"minor\":\"+\"}", -EBADMSG, false},
		{"{\"major\":1,\"minor\":\"29\"}", -EBADMSG, false},
		{"<html>", -EBADMSG, false},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		bool native = !t[i].native;

		cr_assert_eq(inject_parse_version(t[i].body, strlen(t[i].body),
						  &native),
			     t[i].r, "%s", t[i].body);
		if (t[i].r == 0)
			cr_assert_eq(native, t[i].native, "%s", t[i].body);
	}
}

/* The review of pod at a Pod Security level. */
static struct json_object *review_level(const char *pod,
					enum kube_pss_level level)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	struct inject_config c = cfg(false);
	struct json_object *o;

	c.level = level;
	cr_assert_eq(strbuf_addf(&in,
				 "{\"request\":{\"uid\":\"u-1\",\"kind\":{"
				 "\"kind\":\"Pod\"},\"operation\":\"CREATE\","
				 "\"object\":%s}}",
				 pod),
		     0);
	cr_assert_eq(inject_review(in.buf, in.len, &c, &out), 0);
	o = json_tokener_parse(out.buf);
	cr_assert_not_null(o);
	strbuf_release(&in);
	strbuf_release(&out);
	return o;
}

/* The pod with the patch's sidecar and volumes in it (the parts Pod
 * Security looks at that the patch adds), checked at level: the
 * violations' text, "" when admitted. */
static void pss_of_patched(const char *pod_text, struct json_object *patch,
			   enum kube_pss_level level, struct strbuf *ret)
{
	struct json_object *pod = json_tokener_parse(pod_text);
	struct json_object *spec = jget_obj(NULL, pod, "spec");
	struct json_object *side =
		jget(op_at(patch, "/spec/containers/-"), "value");
	struct json_object *vols = jget(op_at(patch, "/spec/volumes"), "value");
	struct kube_pss_result r;

	cr_assert_not_null(side);
	cr_assert_not_null(vols);
	json_object_array_add(jget_array(NULL, spec, "containers"),
			      json_object_get(side));
	json_object_object_add(spec, "volumes", json_object_get(vols));
	if (kube_pss_check(pod, level, &r) == 1)
		kube_pss_result_text(&r, ret);
	json_object_put(pod);
}

#define SC_APP_1000                                                      \
	"{\"name\":\"app\",\"image\":\"x\",\"securityContext\":{"        \
	"\"runAsUser\":1000,\"runAsGroup\":2000,\"runAsNonRoot\":true,"  \
	"\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":" \
	"[\"ALL\"]},\"seccompProfile\":{\"type\":\"RuntimeDefault\"}}}"

Test(inject, baseline_and_restricted_run_as_the_app)
{
	const char *pod = ANNOTATED("", "\"containers\":[" SC_APP_1000 "]");
	enum kube_pss_level levels[] = {KUBE_PSS_BASELINE, KUBE_PSS_RESTRICTED};

	for (size_t i = 0; i < 2; i++) {
		struct json_object *o = review_level(pod, levels[i]);
		struct json_object *p = patch_of(o);
		struct json_object *s =
			jget(op_at(p, "/spec/containers/-"), "value");
		struct json_object *sc = jget_obj(NULL, s, "securityContext");
		struct json_object *env = jget_array(NULL, s, "env");
		struct strbuf v = STRBUF_INIT;
		bool b = true;
		int id = 0;

		cr_assert_null(jget(resp(o), "warnings"));
		cr_assert(jget_int(NULL, sc, "runAsUser", &id) && id == 1000);
		cr_assert(jget_int(NULL, sc, "runAsGroup", &id) && id == 2000);
		cr_assert(jget_bool(NULL, sc, "runAsNonRoot", &b) && b);
		cr_assert(jget_bool(NULL, sc, "allowPrivilegeEscalation", &b) &&
			  !b);
		cr_assert_str_eq(
			json_object_to_json_string_ext(jget(sc, "capabilities"),
						       JSON_C_TO_STRING_PLAIN),
			"{\"drop\":[\"ALL\"]}");
		cr_assert_str_eq(jget_str(NULL,
					  jget_obj(NULL, sc, "seccompProfile"),
					  "type"),
				 "RuntimeDefault");
		cr_assert_str_eq(jget_str(NULL,
					  jget_idx(env, jget_len(env) - 1),
					  "value"),
				 kube_pss_level_name(levels[i]));
		pss_of_patched(pod, p, levels[i], &v);
		cr_assert_eq(v.len, 0, "%s", v.buf);
		strbuf_release(&v);
		json_object_put(p);
		json_object_put(o);
	}
}

Test(inject, the_pods_uid_and_the_recorded_containers)
{
	/* the pod's uid; container b (selected) overrides it; a's differs */
	const char *pod = ANNOTATED(
		",\"oomlens.io/containers\":\" b \"",
		"\"securityContext\":{\"runAsUser\":1000,\"runAsGroup\":1000},"
		"\"containers\":[{\"name\":\"a\"},{\"name\":\"b\","
		"\"securityContext\":{\"runAsUser\":1500}}]");
	struct json_object *o = review_level(pod, KUBE_PSS_BASELINE);
	struct json_object *p = patch_of(o);
	struct json_object *sc =
		jget_obj(NULL, jget(op_at(p, "/spec/containers/-"), "value"),
			 "securityContext");
	int id = 0;

	cr_assert(jget_int(NULL, sc, "runAsUser", &id) && id == 1500);
	cr_assert(jget_int(NULL, sc, "runAsGroup", &id) && id == 1000);
	/* a is not selected: no warning about its ids */
	cr_assert_null(jget(resp(o), "warnings"));
	json_object_put(p);
	json_object_put(o);
	/* both selected, ids differ: said */
	o = review_level(ANNOTATED("", "\"containers\":[{\"name\":\"a\","
				       "\"securityContext\":{\"runAsUser\":7,"
				       "\"runAsGroup\":7}},{\"name\":\"b\"}]"),
			 KUBE_PSS_RESTRICTED);
	cr_assert(strstr(warning0(o), "container b's differ"), "%s",
		  warning0(o));
	json_object_put(o);
}

Test(inject, baseline_without_a_uid_is_root_with_setid_only)
{
	const char *shapes[] = {
		ANNOTATED("", "\"containers\":[" APP "]"),
		ANNOTATED("", "\"securityContext\":{\"runAsUser\":0},"
			      "\"containers\":[" APP "]"),
	};

	for (size_t i = 0; i < 2; i++) {
		struct json_object *o =
			review_level(shapes[i], KUBE_PSS_BASELINE);
		struct json_object *p = patch_of(o);
		struct json_object *sc = jget_obj(
			NULL, jget(op_at(p, "/spec/containers/-"), "value"),
			"securityContext");
		struct strbuf v = STRBUF_INIT;
		int id = -1;

		cr_assert_str_eq(
			json_object_to_json_string_ext(jget(sc, "capabilities"),
						       JSON_C_TO_STRING_PLAIN),
			"{\"drop\":[\"ALL\"],\"add\":[\"SETUID\","
			"\"SETGID\",\"KILL\"]}");
		cr_assert(jget_int(NULL, sc, "runAsUser", &id) && id == 0);
		cr_assert(strstr(warning0(o), "without SYS_PTRACE"));
		pss_of_patched(shapes[i], p, KUBE_PSS_BASELINE, &v);
		cr_assert_eq(v.len, 0, "%s", v.buf);
		/* the same sidecar would not pass restricted */
		strbuf_reset(&v);
		pss_of_patched(shapes[i], p, KUBE_PSS_RESTRICTED, &v);
		cr_assert(strstr(v.buf, "runAsNonRoot"), "%s", v.buf);
		strbuf_release(&v);
		json_object_put(p);
		json_object_put(o);
	}
}

Test(inject, restricted_without_a_uid_is_not_injected)
{
	const char *shapes[] = {
		ANNOTATED("", "\"containers\":[" APP "]"),
		ANNOTATED("", "\"securityContext\":{\"runAsNonRoot\":true},"
			      "\"containers\":[" APP "]"),
		ANNOTATED("", "\"containers\":[{\"name\":\"app\","
			      "\"securityContext\":{\"runAsUser\":0}}]"),
	};

	for (size_t i = 0; i < ARRAY_SIZE(shapes); i++) {
		struct json_object *o =
			review_level(shapes[i], KUBE_PSS_RESTRICTED);

		assert_not_injected(o, "Pod Security restricted: container "
				       "app states no runAsUser");
		json_object_put(o);
	}
}
