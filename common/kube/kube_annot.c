/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the oomlens.io/ annotations of a pod (DESIGN "Opt-in annotations"),
 * parsed without ever failing: a bad value keeps its default and is
 * remembered so the agent can tell the pod's owner in an Event. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube_node.h"
#include "base/parse.h"
#include "base/term.h"
#include "base/util.h"

/* What each key means when it is absent (DESIGN "Opt-in annotations"). */
static const char *default_of(const char *key)
{
	static const char *const d[][2] = {
		{"oomlens.io/capture", "unset: kernel and cgroup data only"},
		{"oomlens.io/containers", "every container but the sidecar"},
		{"oomlens.io/thresholds", "80,90,95"},
		{"oomlens.io/jvm", "auto"},
		{"oomlens.io/jvm-nmt", "false"},
		{"oomlens.io/trim", "off"},
		{"oomlens.io/jvm-histogram", "false"},
		{"oomlens.io/jvm-histogram-max-pause-ms", "1000"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(d); i++)
		if (streq(key, d[i][0]))
			return d[i][1];
	return "";
}

static void refuse(struct kube_annotations *a, const char *key,
		   const char *value, const char *why)
{
	struct kube_annot_error *e;

	if (a->n_errors == KUBE_ANNOT_MAX_ERRORS)
		return;
	e = &a->errors[a->n_errors++];
	strlcpy_safe(e->key, key, sizeof(e->key));
	strlcpy_safe(e->value, value, sizeof(e->value));
	strlcpy_safe(e->why, why, sizeof(e->why));
	strlcpy_safe(e->dflt, default_of(key), sizeof(e->dflt));
}

/* One of words (NULL-terminated); its index, or -1. */
static int pick(const char *v, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (streq(v, words[i]))
			return i;
	return -1;
}

static void parse_capture(struct kube_annotations *a, const char *v)
{
	static const char *const w[] = {"true", "false", NULL};
	int i = pick(v, w);

	if (i < 0)
		refuse(a, "oomlens.io/capture", v,
		       "must be \"true\" or \"false\"");
	else
		a->capture = i == 0 ? KUBE_CAPTURE_ON : KUBE_CAPTURE_OFF;
}

static void parse_containers(struct kube_annotations *a, const char *v)
{
	struct kube_annotations tmp = *a;
	const char *p = v;

	tmp.n_containers = 0;
	while (*p) {
		const char *e = strchrnul(p, ',');
		const char *s = p;
		size_t n;

		while (s < e && *s == ' ')
			s++;
		n = (size_t)(e - s);
		while (n && s[n - 1] == ' ')
			n--;
		/* container names are DNS labels */
		if (!dns_label_ok(s, n) ||
		    tmp.n_containers == KUBE_ANNOT_MAX_CONTAINERS) {
			refuse(a, "oomlens.io/containers", v,
			       "must be a comma list of container names");
			return;
		}
		memcpy(tmp.containers[tmp.n_containers], s, n);
		tmp.containers[tmp.n_containers++][n] = '\0';
		p = *e ? e + 1 : e;
	}
	if (!tmp.n_containers) {
		refuse(a, "oomlens.io/containers", v, "names no container");
		return;
	}
	memcpy(a->containers, tmp.containers, sizeof(a->containers));
	a->n_containers = tmp.n_containers;
}

static void parse_thresholds(struct kube_annotations *a, const char *v)
{
	unsigned t[KUBE_ANNOT_MAX_THRESHOLDS];
	size_t n = 0;
	const char *p = v;

	while (*p) {
		const char *e = strchrnul(p, ',');
		uint64_t x;

		if (n == KUBE_ANNOT_MAX_THRESHOLDS ||
		    parse_u64_n(p, (size_t)(e - p), &x) < 0 || x < 1 ||
		    x > 100 || (n && x <= t[n - 1])) {
			refuse(a, "oomlens.io/thresholds", v,
			       "must be rising percentages 1-100, e.g. "
			       "80,90,95");
			return;
		}
		t[n++] = (unsigned)x;
		p = *e ? e + 1 : e;
	}
	if (!n) {
		refuse(a, "oomlens.io/thresholds", v, "is empty");
		return;
	}
	memcpy(a->thresholds, t, n * sizeof(t[0]));
	a->n_thresholds = n;
}

static void parse_enum(struct kube_annotations *a, const char *key,
		       const char *v)
{
	static const char *const jvm[] = {"auto", "off", NULL};
	static const char *const tf[] = {"false", "true", NULL};
	static const char *const trim[] = {"off", "test", "on-pressure", NULL};
	int i;

	if (streq(key, "oomlens.io/jvm")) {
		if ((i = pick(v, jvm)) < 0)
			refuse(a, key, v, "must be auto or off");
		else
			a->jvm = i ? KUBE_JVM_OFF : KUBE_JVM_AUTO;
	} else if (streq(key, "oomlens.io/jvm-nmt")) {
		if ((i = pick(v, tf)) < 0)
			refuse(a, key, v, "must be \"true\" or \"false\"");
		else
			a->jvm_nmt = i == 1;
	} else if (streq(key, "oomlens.io/jvm-histogram")) {
		if ((i = pick(v, tf)) < 0)
			refuse(a, key, v, "must be \"true\" or \"false\"");
		else
			a->jvm_histogram = i == 1;
	} else if (streq(key, "oomlens.io/trim")) {
		if ((i = pick(v, trim)) < 0)
			refuse(a, key, v, "must be off, test or on-pressure");
		else
			a->trim = (enum kube_trim_mode)i;
	}
}

static void parse_pause(struct kube_annotations *a, const char *v)
{
	unsigned ms;

	if (parse_uint(v, &ms) < 0 || ms < 1 || ms > 600000)
		refuse(a, "oomlens.io/jvm-histogram-max-pause-ms", v,
		       "must be milliseconds, 1-600000");
	else
		a->jvm_histogram_max_pause_ms = ms;
}

static void defaults(struct kube_annotations *a)
{
	memset(a, 0, sizeof(*a));
	a->thresholds[0] = 80;
	a->thresholds[1] = 90;
	a->thresholds[2] = 95;
	a->n_thresholds = 3;
}

void kube_annotations_parse(struct json_object *annotations,
			    struct kube_annotations *ret)
{
	struct kube_annotations a;

	defaults(&a);
	if (annotations && json_object_is_type(annotations, json_type_object)) {
		json_object_object_foreach (annotations, key, val) {
			const char *v =
				json_object_is_type(val, json_type_string)
					? json_object_get_string(val)
					: "";

			if (strncmp(key, "oomlens.io/", 11) != 0)
				continue;
			if (streq(key, "oomlens.io/capture"))
				parse_capture(&a, v);
			else if (streq(key, "oomlens.io/containers"))
				parse_containers(&a, v);
			else if (streq(key, "oomlens.io/thresholds"))
				parse_thresholds(&a, v);
			else if (streq(key, "oomlens.io/jvm") ||
				 streq(key, "oomlens.io/jvm-nmt") ||
				 streq(key, "oomlens.io/jvm-histogram") ||
				 streq(key, "oomlens.io/trim"))
				parse_enum(&a, key, v);
			else if (streq(key,
				       "oomlens.io/jvm-histogram-max-pause-ms"))
				parse_pause(&a, v);
			/* other oomlens.io/ keys (the injector's own marks,
			 * newer versions') are not ours to judge */
		}
	}
	*ret = a;
}

int kube_annotations_errors_text(const struct kube_annotations *a,
				 struct strbuf *sb)
{
	int r = 0;

	for (size_t i = 0; i < a->n_errors && r >= 0; i++) {
		const struct kube_annot_error *e = &a->errors[i];

		r = strbuf_addf(sb, "%s%s: \"%s\" %s; using the default \"%s\"",
				i ? "; " : "", e->key, e->value, e->why,
				e->dflt);
	}
	return r < 0 ? r : (int)sb->len;
}

int kube_not_injected_text(struct json_object *annotations, struct strbuf *sb)
{
	struct json_object *v;
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	const char *s = NULL;
	size_t n = 0, cut;
	int r;

	if (!annotations ||
	    !json_object_is_type(annotations, json_type_object) ||
	    !json_object_object_get_ex(annotations, KUBE_ANNOT_NOT_INJECTED,
				       &v))
		return 0;
	if (json_object_is_type(v, json_type_string)) {
		s = json_object_get_string(v);
		n = (size_t)json_object_get_string_len(v);
	}
	if (!n)
		r = strbuf_adds(&why, "(no reason given)");
	else /* '?' for '?': as long as what it read, which stays UTF-8 */
		r = term_sanitize(
			s,
			n < KUBE_NOT_INJECTED_MAX ? n : KUBE_NOT_INJECTED_MAX,
			TERM_QUESTION, &why);
	if (r < 0)
		return r;
	if (n > KUBE_NOT_INJECTED_MAX) {
		cut = KUBE_NOT_INJECTED_MAX - 3;
		while (cut && ((unsigned char)why.buf[cut] & 0xc0) == 0x80)
			cut--;
		why.len = cut;
		why.buf[cut] = '\0';
		r = strbuf_adds(&why, "...");
		if (r < 0)
			return r;
	}
	r = strbuf_addf(sb, "oomlens sidecar not injected: %s", why.buf);
	return r < 0 ? r : 1;
}
