/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl-oomlens: errors, times and YAML output shared by the commands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "plugin.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"

#ifndef OOMLENS_VERSION
#define OOMLENS_VERSION "0.0.0"
#endif

int cli_fail(const char *what, int r, const struct kube_error *err)
{
	const char *msg = err && err->message[0] ? err->message : strerror(-r);

	if (err && err->http_status)
		fprintf(stderr, "Error from server (%s): %s\n",
			err->reason[0] ? err->reason : "Unknown", msg);
	else
		fprintf(stderr, "kubectl-oomlens: %s: %s\n", what, msg);
	switch (r) {
	case -ENOENT:
		return EXIT_NOTFOUND;
	case -EACCES:
	case -EPERM:
		return EXIT_DENIED;
	default:
		return EXIT_FAIL;
	}
}

/* n digits at s as a number; -EINVAL otherwise. */
static int digits(const char *s, size_t n, int *ret)
{
	uint64_t v;

	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	if (parse_u64_n(s, n, &v) < 0)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

int cli_parse_time(const char *s, int64_t *ret)
{
	struct tm tm = {0};
	const char *p;
	int off = 0, oh, om;
	time_t t;

	if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
		return -EINVAL;
	if (digits(s, 4, &tm.tm_year) < 0 || digits(s + 5, 2, &tm.tm_mon) < 0 ||
	    digits(s + 8, 2, &tm.tm_mday) < 0 ||
	    digits(s + 11, 2, &tm.tm_hour) < 0 ||
	    digits(s + 14, 2, &tm.tm_min) < 0 ||
	    digits(s + 17, 2, &tm.tm_sec) < 0)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	p = s + 19;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
		   digits(p + 1, 2, &oh) == 0 && digits(p + 4, 2, &om) == 0) {
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*ret = (int64_t)t - off;
	return 0;
}

int cli_parse_duration(const char *s, uint64_t *ret_s)
{
	uint64_t total = 0, v;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		uint64_t unit;

		if (scan_u64(&p, &v) < 0)
			return -EINVAL;
		switch (*p++) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		default:
			return -EINVAL;
		}
		if (v > UINT32_MAX)
			return -EINVAL;
		total += v * unit;
	}
	*ret_s = total;
	return 0;
}

void cli_format_age(int64_t s, char *buf, size_t n)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, n, "%llds", (long long)s);
	else if (s < 3 * 3600)
		snprintf(buf, n, "%lldm", (long long)(s / 60));
	else if (s < 2 * 86400)
		snprintf(buf, n, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, n, "%lldd", (long long)(s / 86400));
}

static void yaml_scalar(struct json_object *v)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *s;

	if (json_object_get_type(v) != json_type_string) {
		/* numbers, booleans, null: JSON's spelling is YAML's */
		fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
		      stdout);
		return;
	}
	/* a double-quoted JSON string is a YAML one: one rule for all text */
	s = json_object_get_string(v);
	strbuf_init(&sb, 64u << 20);
	if (strbuf_add_json_str(&sb, s, (size_t)json_object_get_string_len(v)) <
	    0)
		return;
	fwrite(sb.buf, 1, sb.len, stdout);
}

static bool yaml_block(struct json_object *v)
{
	enum json_type t = json_object_get_type(v);

	return (t == json_type_object && json_object_object_length(v) > 0) ||
	       (t == json_type_array && json_object_array_length(v) > 0);
}

static void yaml_value(struct json_object *v, int indent);

static void yaml_object(struct json_object *v, int indent, bool first_inline)
{
	json_object_object_foreach (v, key, val) {
		if (!first_inline)
			printf("%*s", indent, "");
		first_inline = false;
		printf("%s:", key);
		if (yaml_block(val)) {
			putchar('\n');
			yaml_value(val, indent + 2);
		} else {
			putchar(' ');
			yaml_value(val, indent);
			putchar('\n');
		}
	}
}

static void yaml_value(struct json_object *v, int indent)
{
	enum json_type t = json_object_get_type(v);

	if (t == json_type_object && json_object_object_length(v) > 0) {
		yaml_object(v, indent, false);
	} else if (t == json_type_array && json_object_array_length(v) > 0) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			struct json_object *e = json_object_array_get_idx(v, i);

			printf("%*s- ", indent, "");
			if (json_object_get_type(e) == json_type_object &&
			    json_object_object_length(e) > 0) {
				yaml_object(e, indent + 2, true);
			} else if (yaml_block(e)) {
				putchar('\n');
				yaml_value(e, indent + 2);
			} else {
				yaml_value(e, indent);
				putchar('\n');
			}
		}
	} else if (t == json_type_object) {
		fputs("{}", stdout);
	} else if (t == json_type_array) {
		fputs("[]", stdout);
	} else {
		yaml_scalar(v);
	}
}

void cli_print_yaml(struct json_object *v)
{
	yaml_value(v, 0);
}

void plugin_hint_download(void)
{
	fputs("kubectl-oomlens: `get` prints reports, as kubectl get does; to "
	      "save a bundle:\n  kubectl oomlens download REPORT [FILE|-] "
	      "[--extract DIR]\n",
	      stderr);
}

/* The API server's answers for a path of a type it does not serve: a
 * plain "404 page not found" for an API group it does not know, a Status
 * saying "the server could not find the requested resource" for a type
 * missing from a group it knows. A missing object of a served type names
 * the object instead. */
void plugin_hint_crds(const struct kube_error *err)
{
	if (err && err->http_status == 404 &&
	    (startswith(err->message, "404 page not found") ||
	     streq(err->message, "the server could not find the requested "
				 "resource")))
		fputs("kubectl-oomlens: the oomlens CRDs are not installed in "
		      "this cluster (it does not serve oomreports.oomlens.io): "
		      "helm install oomlens helm/oomlens -n oomlens-system "
		      "--create-namespace, or kubectl apply -k manifests/\n",
		      stderr);
}

/* kubectl's order: the kubeconfig (flag, $KUBECONFIG, ~/.kube/config),
 * and only without one the pod's service account. */
int plugin_client(struct ctx *c)
{
	struct kube_kubeconfig_options ko = {
		.paths = c->o.kubeconfig,
		.context = c->o.context,
		.namespace = c->o.namespace,
	};
	struct kube_client_options co = {
		.user_agent = "kubectl-oomlens/" OOMLENS_VERSION,
		/* --request-timeout bounds the command's wait: one attempt
		 * each, no retry after a timeout or a 429 */
		.timeout_ms = c->o.timeout_ms,
		.no_retries = c->o.timeout_ms != 0,
		.impersonate_user = c->o.as_user,
		.impersonate_groups = c->o.as_groups,
		.n_impersonate_groups = c->o.n_as_groups,
	};
	struct kube_config *cfg = NULL;
	struct kube_error err = {0};
	int r;

	r = kube_config_load_kubeconfig(&ko, &cfg, &err);
	if (r == -ENOENT && !c->o.kubeconfig && !c->o.context) {
		struct kube_incluster_options io = {0};

		r = kube_config_in_cluster(&io, &cfg);
		if (r == 0 && c->o.namespace) {
			free(cfg->namespace);
			cfg->namespace = strdup(c->o.namespace);
		}
	}
	if (r < 0) {
		fprintf(stderr, "kubectl-oomlens: error: %s\n",
			err.message[0] ? err.message
			: r == -ENOENT ? "no kubeconfig (or no such context) "
					 "and not inside a cluster"
				       : strerror(-r));
		return EXIT_FAIL;
	}
	r = kube_client_new(cfg, &co, &c->client);
	kube_config_free(cfg);
	if (r < 0) {
		fprintf(stderr, "kubectl-oomlens: error: %s\n",
			r == -EINVAL ? "--as/--as-group: a value with a "
				       "control character"
				     : strerror(-r));
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	c->ns = c->o.namespace ? c->o.namespace
			       : kube_client_namespace(c->client);
	return 0;
}
