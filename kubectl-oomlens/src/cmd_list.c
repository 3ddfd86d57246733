/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl oomlens list / describe pod: OOMReports as a table (kubectl's
 * layout), as JSON or YAML, or one pod's reports newest first. Lists carry
 * only the small reports; payloads stay in the OOMBundles. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "plugin.h"
#include "base/jget.h"
#include "base/strbuf.h"
#include "base/term.h"
#include "base/util.h"

/* A report's kill time: spec.killedAt, else its creation. */
static int64_t report_time(struct json_object *o)
{
	int64_t t;
	const char *s = jget_str(NULL, jget(o, "spec"), "killedAt");

	if (cli_parse_time(s, &t) == 0)
		return t;
	s = jget_str(NULL, jget(o, "metadata"), "creationTimestamp");
	return cli_parse_time(s, &t) == 0 ? t : 0;
}

static int newest_first(const void *a, const void *b)
{
	int64_t ta = report_time(*(struct json_object *const *)a);
	int64_t tb = report_time(*(struct json_object *const *)b);

	return ta < tb ? 1 : ta > tb ? -1 : 0;
}

/* The reports that pass -n/-A, --pod and --since, in a new array (the
 * items keep their references), newest first. */
static int fetch_reports(struct ctx *c, struct json_object **ret)
{
	struct kube_call k = {
		.res = &kube_res_oomreports,
		.namespace = c->ns,
		.all_namespaces = c->o.all_namespaces,
	};
	struct kube_list_options lo = {
		.all_pages = true,
		.limit = 500,
		.label_selector = c->o.selector,
	};
	struct kube_error err = {0};
	struct json_object *list = NULL, *items, *out;
	int64_t now = (int64_t)time(NULL);
	int r;

	r = kube_list(c->client, &k, &lo, &list, &err);
	if (r < 0) {
		r = cli_fail("list oomreports", r, &err);
		plugin_hint_crds(&err);
		return r;
	}
	items = jget_array(NULL, list, "items");
	out = json_object_new_array();
	for (size_t i = 0; out && i < jget_len(items); i++) {
		struct json_object *it = jget_idx(items, i);
		const char *pod = jget_str(NULL, jget(it, "spec"), "pod");

		if (c->o.pod && !(pod && streq(pod, c->o.pod)))
			continue;
		if (c->o.since_s &&
		    report_time(it) < now - (int64_t)c->o.since_s)
			continue;
		json_object_array_add(out, json_object_get(it));
	}
	json_object_put(list);
	if (!out)
		return cli_fail("list oomreports", -ENOMEM, NULL);
	json_object_array_sort(out, newest_first);
	*ret = out;
	return 0;
}

/* A cell: the pod's own strings (comm, verdict) go through the terminal
 * sanitiser; blanks would break the columns, "<none>" as kubectl. */
static void cell(struct strbuf *row, const char *s, int width)
{
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;
	size_t start = row->len;

	strbuf_init(&clean, 4096);
	if (!s || !*s)
		s = "<none>";
	if (term_sanitize(s, strlen(s), TERM_QUESTION, &clean) < 0 ||
	    !clean.buf)
		strbuf_adds(&clean, "?");
	for (size_t i = 0; i < clean.len; i++)
		strbuf_addch(row, clean.buf[i] == ' ' ? '_' : clean.buf[i]);
	if (width > 0)
		for (size_t n = row->len - start; n < (size_t)width + 3; n++)
			strbuf_addch(row, ' ');
}

enum {
	COL_NS,
	COL_NAME,
	COL_POD,
	COL_CONT,
	COL_PROC,
	COL_VERD,
	COL_AGE,
	COL_NODE,
	COL_PID,
	COL_LIMIT,
	COL_BUNDLE,
	NCOLS
};

static void row_cells(struct json_object *it, int64_t now, const char **v,
		      char *age, size_t agelen, char *pid, char *limit)
{
	struct json_object *spec = jget(it, "spec");
	struct json_object *proc = jget(spec, "process");
	int64_t n;

	v[COL_NS] = jget_str(NULL, jget(it, "metadata"), "namespace");
	v[COL_NAME] = jget_str(NULL, jget(it, "metadata"), "name");
	v[COL_POD] = jget_str(NULL, spec, "pod");
	v[COL_CONT] = jget_str(NULL, spec, "container");
	v[COL_PROC] = jget_str(NULL, proc, "comm");
	v[COL_VERD] = jget_str(NULL, spec, "verdict");
	cli_format_age(now - report_time(it), age, agelen);
	v[COL_AGE] = age;
	v[COL_NODE] = jget_str(NULL, spec, "node");
	n = json_object_get_int64(jget(proc, "pid"));
	snprintf(pid, 24, "%lld", (long long)n);
	v[COL_PID] = n ? pid : NULL;
	n = json_object_get_int64(jget(spec, "limit"));
	snprintf(limit, 24, "%lldMi", (long long)(n >> 20));
	v[COL_LIMIT] = n ? limit : NULL;
	v[COL_BUNDLE] = jget_str(NULL, spec, "bundle");
}

static void print_table(struct ctx *c, struct json_object *items, bool wide)
{
	static const char *const head[NCOLS] = {
		"NAMESPACE", "NAME", "POD", "CONTAINER", "PROCESS", "VERDICT",
		"AGE",	     "NODE", "PID", "LIMIT",	 "BUNDLE"};
	int width[NCOLS] = {0};
	size_t n = jget_len(items);
	int64_t now = (int64_t)time(NULL);
	int first = c->o.all_namespaces ? COL_NS : COL_NAME;
	int last = wide ? NCOLS : COL_NODE;

	for (size_t i = 0; i <= n; i++) {
		const char *v[NCOLS] = {0};
		char age[16], pid[24], limit[24];

		if (i < n)
			row_cells(jget_idx(items, i), now, v, age, sizeof(age),
				  pid, limit);
		for (int k = first; k < last; k++) {
			const char *s = i < n ? v[k] : head[k];
			int len = s ? (int)strlen(s) : 6;

			if (len > width[k])
				width[k] = len;
		}
	}
	for (size_t i = 0; i <= n; i++) {
		_cleanup_strbuf_ struct strbuf row = STRBUF_INIT;
		const char *v[NCOLS] = {0};
		char age[16], pid[24], limit[24];

		strbuf_init(&row, 1u << 16);
		if (i > 0)
			row_cells(jget_idx(items, i - 1), now, v, age,
				  sizeof(age), pid, limit);
		for (int k = first; k < last; k++)
			cell(&row, i ? v[k] : head[k],
			     k == last - 1 ? 0 : width[k]);
		if (row.buf)
			printf("%s\n", row.buf);
	}
}

/* -o json / yaml: a List, as kubectl prints one. */
static void print_list(struct json_object *items, bool yaml)
{
	struct json_object *list = json_object_new_object();

	if (!list)
		return;
	json_object_object_add(list, "apiVersion",
			       json_object_new_string("v1"));
	json_object_object_add(list, "kind", json_object_new_string("List"));
	json_object_object_add(list, "items", json_object_get(items));
	if (yaml)
		cli_print_yaml(list);
	else
		printf("%s\n",
		       json_object_to_json_string_ext(
			       list, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(list);
}

/* -o name: kubectl's resource/name, one a line. */
static void print_names(struct json_object *items)
{
	for (size_t i = 0; i < jget_len(items); i++) {
		_cleanup_strbuf_ struct strbuf row = STRBUF_INIT;

		strbuf_init(&row, 4096);
		strbuf_adds(&row, "oomreport.oomlens.io/");
		cell(&row,
		     jget_str(NULL, jget(jget_idx(items, i), "metadata"),
			      "name"),
		     0);
		if (row.buf)
			printf("%s\n", row.buf);
	}
}

static void print_reports(struct ctx *c, struct json_object *items)
{
	const char *out = c->o.output;

	if (out && (streq(out, "json") || streq(out, "yaml")))
		print_list(items, streq(out, "yaml"));
	else if (out && streq(out, "name"))
		print_names(items);
	else if (jget_len(items))
		print_table(c, items, out != NULL);
}

int cmd_list(struct ctx *c)
{
	struct json_object *items = NULL;
	int rc;

	rc = fetch_reports(c, &items);
	if (rc)
		return rc;
	if (jget_len(items) == 0 &&
	    !(c->o.output &&
	      (streq(c->o.output, "json") || streq(c->o.output, "yaml"))))
		fprintf(stderr, "No OOM reports found in %s.\n",
			c->o.all_namespaces ? "any namespace" : c->ns);
	print_reports(c, items);
	json_object_put(items);
	return EXIT_OK;
}

/* get REPORT...: each named report (kubectl get's way: the found ones
 * printed, an error for each missing one, exit 3 if any was); none named:
 * every report, as `kubectl get oomreports` and list print them. */
int cmd_get(struct ctx *c)
{
	struct json_object *items;
	int rc = EXIT_OK;

	if (c->o.argc == 1)
		return cmd_list(c);

	items = json_object_new_array();
	if (!items)
		return cli_fail("get oomreports", -ENOMEM, NULL);
	for (int i = 1; i < c->o.argc; i++) {
		struct kube_call k = {.res = &kube_res_oomreports,
				      .namespace = c->ns,
				      .name = c->o.argv[i]};
		struct kube_error err = {0};
		struct json_object *o = NULL;
		int r = kube_get(c->client, &k, &o, &err);

		if (r == 0) {
			json_object_array_add(items, o);
			continue;
		}
		r = cli_fail("get oomreport", r, &err);
		plugin_hint_crds(&err);
		if (rc == EXIT_OK || rc == EXIT_NOTFOUND)
			rc = r;
	}
	print_reports(c, items);
	json_object_put(items);
	return rc;
}

static void field(const char *key, const char *v)
{
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;

	strbuf_init(&clean, 1u << 16);
	if (!v || !*v)
		v = "<none>";
	if (term_sanitize(v, strlen(v), TERM_QUESTION, &clean) < 0 ||
	    !clean.buf)
		return;
	printf("  %-12s%s\n", key, clean.buf);
}

int cmd_describe(struct ctx *c)
{
	struct json_object *items = NULL;
	int rc;

	if (!streq(c->o.argv[1], "pod")) {
		fprintf(stderr, "usage: kubectl oomlens describe pod POD "
				"[-n NS]\n");
		return EXIT_USAGE;
	}
	c->o.pod = c->o.argv[2];
	c->o.all_namespaces = false;
	rc = fetch_reports(c, &items);
	if (rc)
		return rc;
	printf("Pod:        %s/%s\nOOM kills:  %zu\n", c->ns, c->o.pod,
	       jget_len(items));
	for (size_t i = 0; i < jget_len(items); i++) {
		struct json_object *it = jget_idx(items, i);
		struct json_object *spec = jget(it, "spec");
		char age[16], buf[96];

		cli_format_age((int64_t)time(NULL) - report_time(it), age,
			       sizeof(age));
		printf("\nReport %s (%s ago)\n",
		       jget_str(NULL, jget(it, "metadata"), "name"), age);
		field("Killed at:", jget_str(NULL, spec, "killedAt"));
		field("Container:", jget_str(NULL, spec, "container"));
		snprintf(buf, sizeof(buf), "%s (pid %lld)",
			 jget_str(NULL, jget(spec, "process"), "comm") ?: "?",
			 (long long)json_object_get_int64(
				 jget(jget(spec, "process"), "pid")));
		field("Process:", buf);
		field("Verdict:", jget_str(NULL, spec, "verdict"));
		field("Summary:", jget_str(NULL, spec, "summary"));
		field("Node:", jget_str(NULL, spec, "node"));
		field("Bundle:", jget_str(NULL, spec, "bundle"));
	}
	if (jget_len(items))
		printf("\nDetails: kubectl oomlens show REPORT -n %s\n", c->ns);
	json_object_put(items);
	return EXIT_OK;
}
