/* SPDX-License-Identifier: Apache-2.0 */
/* manifest.json's fields and who a bundle is about (manifest.h). */
#include <json-c/json.h>
#include <stdio.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "base/util.h"
#include "forensics/manifest.h"

#define S MANIFEST_T_STRING
#define I MANIFEST_T_INT
#define B MANIFEST_T_BOOL
#define O MANIFEST_T_OBJECT
#define A MANIFEST_T_ARRAY
#define N MANIFEST_T_NULL

/* docs/manifest.md, in its order. */
const struct manifest_field manifest_fields[] = {
	{"schema", S, true},
	{"id", S, true},
	{"node", S, true},
	{"cgroup", S, true},
	{"how_found", S, false},
	{"confidence", S, false},
	{"oom_memcg", S, false},
	{"cgroup_kernel", S | N, false},
	{"oom_memcg_kernel", S | N, false},
	{"cgroup_mount", O, false},
	{"cgroup_mode", S, false},
	{"pod", O | N, false},
	{"container", S | N, false},
	{"container_id", S | N, false},
	{"captured_at", S, true},
	{"captured_at_ms", I, true},
	{"killed_at_ms", I, false},
	{"detect_latency_us", I, false},
	{"trigger", S, true},
	{"kernel_report_complete", B, false},
	{"kmsg_seq", I, false},
	{"victims", A, true},
	{"cgroup_state", O, false},
	{"cgroup_state_at_notification", O, false},
	{"sidecar", O, false},
	{"capture", O, false},
	{"verdict", S, false},
	{"summary", S, false},
	{"files", A, false},
	{"truncated", A, false},
};
const size_t manifest_n_fields = ARRAY_SIZE(manifest_fields);

/* "pod" in cluster mode: the pod as the agent's watch saw it; only uid
 * and qos_class when the pod was not in its cache yet (the cgroup path
 * gives those two). */
const struct manifest_field manifest_pod_fields[] = {
	{"namespace", S, false},
	{"name", S, false},
	{"uid", S, true},
	{"node", S | N, false},
	{"qos_class", S | N, false},
	{"owners", A, false},
	{"containers", A, false},
};
const size_t manifest_n_pod_fields = ARRAY_SIZE(manifest_pod_fields);

/* "capture": what the sidecar could not capture (forensics/capture.h);
 * absent in bundles without a sidecar and in those of older ones. */
const struct manifest_field manifest_capture_fields[] = {
	{"pod_security", S | N, false},
	{"uid", I, false},
	{"gid", I, false},
	{"capabilities", A, true},
	{"not_captured", A, true},
	{"not_captured_more", I, false},
};
const size_t manifest_n_capture_fields = ARRAY_SIZE(manifest_capture_fields);

/* Each element of "capture.not_captured". */
const struct manifest_field manifest_miss_fields[] = {
	{"what", S, true},
	{"pid", I, false},
	{"why", S, true},
};
const size_t manifest_n_miss_fields = ARRAY_SIZE(manifest_miss_fields);

#undef S
#undef I
#undef B
#undef O
#undef A
#undef N

static unsigned type_bit(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return MANIFEST_T_NULL;
	case json_type_string:
		return MANIFEST_T_STRING;
	case json_type_int:
		return MANIFEST_T_INT;
	case json_type_boolean:
		return MANIFEST_T_BOOL;
	case json_type_object:
		return MANIFEST_T_OBJECT;
	case json_type_array:
		return MANIFEST_T_ARRAY;
	default:
		return 0; /* a double: no field is one */
	}
}

/* "a string or null": the allowed types, the value's own when one bit;
 * t 0 is a double, which no field is. */
static const char *types_name(unsigned t, char *buf, size_t size)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{MANIFEST_T_STRING, "a string"},
		{MANIFEST_T_INT, "an integer"},
		{MANIFEST_T_BOOL, "a boolean"},
		{MANIFEST_T_OBJECT, "an object"},
		{MANIFEST_T_ARRAY, "an array"},
		{MANIFEST_T_NULL, "null"},
	};
	size_t len = 0;

	snprintf(buf, size, "%s", t ? "" : "a number");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if ((t & names[i].bit) && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						len ? " or " : "",
						names[i].name);
	return buf;
}

static size_t check_fields(struct json_object *o,
			   const struct manifest_field *f, size_t n,
			   const char *prefix, struct jget_notes *notes)
{
	size_t bad = 0;
	char want[64];

	for (size_t i = 0; i < n; i++) {
		struct json_object *v = NULL;

		if (!json_object_object_get_ex(o, f[i].name, &v)) {
			if (f[i].required) {
				jget_note(notes, "\"%s%s\" is missing", prefix,
					  f[i].name);
				bad++;
			}
			continue;
		}
		if (type_bit(v) & f[i].types)
			continue;
		jget_note(notes, "\"%s%s\" is %s, not %s", prefix, f[i].name,
			  types_name(type_bit(v), (char[32]){0}, 32),
			  types_name(f[i].types, want, sizeof(want)));
		bad++;
	}
	return bad;
}

static size_t check_capture(struct json_object *cap, struct jget_notes *notes)
{
	struct json_object *miss;
	size_t bad;

	if (!json_object_is_type(cap, json_type_object))
		return 0;
	bad = check_fields(cap, manifest_capture_fields,
			   manifest_n_capture_fields, "capture.", notes);
	miss = jget(cap, "not_captured");
	for (size_t i = 0; i < jget_len(miss); i++) {
		struct json_object *e = jget_idx(miss, i);

		if (!json_object_is_type(e, json_type_object)) {
			jget_note(notes,
				  "\"capture.not_captured[%zu]\" is not "
				  "an object",
				  i);
			bad++;
			continue;
		}
		bad += check_fields(e, manifest_miss_fields,
				    manifest_n_miss_fields,
				    "capture.not_captured[].", notes);
	}
	return bad;
}

size_t manifest_check(struct json_object *man, struct jget_notes *notes)
{
	struct json_object *pod;
	size_t bad;

	jget_where(notes, BP_MANIFEST);
	if (!json_object_is_type(man, json_type_object)) {
		jget_note(notes, "not a JSON object");
		return 1;
	}
	bad = check_fields(man, manifest_fields, manifest_n_fields, "", notes);
	pod = jget(man, "pod");
	if (json_object_is_type(pod, json_type_object))
		bad += check_fields(pod, manifest_pod_fields,
				    manifest_n_pod_fields, "pod.", notes);
	return bad + check_capture(jget(man, "capture"), notes);
}

static const char *str_or_empty(struct jget_notes *notes, struct json_object *o,
				const char *key)
{
	const char *s = jget_str(notes, o, key);

	return s ? s : "";
}

void manifest_who(struct json_object *man, struct jget_notes *notes,
		  struct manifest_who *w)
{
	struct json_object *pod = jget_obj(notes, man, "pod");

	w->in_pod = pod != NULL;
	w->namespace = str_or_empty(notes, pod, "namespace");
	w->pod = str_or_empty(notes, pod, "name");
	w->container = str_or_empty(notes, man, "container");
	w->node = str_or_empty(notes, man, "node");
	w->cgroup = str_or_empty(notes, man, "cgroup");
}

const char *manifest_who_label(const struct manifest_who *w, char *buf,
			       size_t size)
{
	if (!size)
		return buf;
	if (w->in_pod && w->pod[0])
		snprintf(buf, size, "%s/%s%s%s", w->namespace, w->pod,
			 w->container[0] ? "/" : "", w->container);
	else
		snprintf(buf, size, "%s", w->cgroup);
	return buf;
}
