/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <string.h>

#include "base/fileio.h"
#include "base/jget.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/manifest.h"
#include "forensics/report.h"

#define CLUSTER "tests/fixtures/bundle/v1-cluster-jvm-heap"
#define STANDALONE "tests/fixtures/bundle/v1-6.18-agent-timeline-growth"

static struct json_object *load(const char *dir)
{
	char path[256];
	struct json_object *m;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = json_object_from_file(path);
	cr_assert_not_null(m, "%s", path);
	return m;
}

static bool noted(const struct jget_notes *n, const char *needle)
{
	for (size_t i = 0; i < n->n; i++)
		if (strstr(n->text[i], needle))
			return true;
	return false;
}

/* The agent's real manifests, a cluster one and a standalone one, are as
 * the description says (the cluster one's "pod" object was what the
 * readers used to drop). */
Test(manifest, real_manifests_match_the_description)
{
	static const char *const dirs[] = {CLUSTER, STANDALONE};

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		struct json_object *m = load(dirs[i]);
		struct jget_notes n = {0};

		cr_assert_eq(manifest_check(m, &n), 0, "%s: %s", dirs[i],
			     n.n ? n.text[0] : "");
		json_object_put(m);
	}
}

/* Every field of a type the description does not allow is named; a
 * double fits none of them. */
Test(manifest, each_field_of_a_wrong_type_is_named)
{
	for (size_t i = 0; i < manifest_n_fields; i++) {
		struct json_object *m = load(CLUSTER);
		struct jget_notes n = {0};
		char want[96];

		json_object_object_add(m, manifest_fields[i].name,
				       json_object_new_double(1.5));
		cr_assert_eq(manifest_check(m, &n), 1, "%s",
			     manifest_fields[i].name);
		snprintf(want, sizeof(want), "\"%s\" is a",
			 manifest_fields[i].name);
		cr_assert(noted(&n, want), "%s: %s", manifest_fields[i].name,
			  n.text[0]);
		json_object_put(m);
	}
}

Test(manifest, pod_fields_and_required_ones_are_checked)
{
	struct json_object *m = load(CLUSTER), *pod;
	struct jget_notes n = {0};

	cr_assert(json_object_object_get_ex(m, "pod", &pod));
	json_object_object_add(pod, "name", json_object_new_int(3));
	json_object_object_del(pod, "uid");
	json_object_object_del(m, "victims");
	json_object_object_add(m, "container", json_object_new_array());
	cr_assert_eq(manifest_check(m, &n), 4);
	cr_assert(noted(&n, "\"pod.name\" is an integer, not a string"), "%s",
		  n.text[0]);
	cr_assert(noted(&n, "\"pod.uid\" is missing"));
	cr_assert(noted(&n, "\"victims\" is missing"));
	cr_assert(noted(&n, "\"container\" is an array, not a string or null"));
	cr_assert(noted(&n, "manifest.json: "));
	json_object_put(m);
	n = (struct jget_notes){0};
	cr_assert_eq(manifest_check(NULL, &n), 1);
	cr_assert(noted(&n, "not a JSON object"));
}

Test(manifest, who_names_the_pod_in_a_cluster_and_the_cgroup_alone)
{
	struct json_object *m = load(CLUSTER);
	struct manifest_who w;
	char buf[256];

	manifest_who(m, NULL, &w);
	cr_assert(w.in_pod);
	cr_assert_str_eq(w.namespace, "oomlens-inject-apps");
	cr_assert_str_eq(w.pod, "jvm-heap");
	cr_assert_str_eq(w.container, "app");
	cr_assert_str_eq(w.node, "oomlens-node");
	cr_assert_str_eq(manifest_who_label(&w, buf, sizeof(buf)),
			 "oomlens-inject-apps/jvm-heap/app");
	/* a pod not in the agent's cache yet: only its uid, so the cgroup */
	json_object_object_add(m, "pod", json_tokener_parse("{\"uid\":\"u\"}"));
	manifest_who(m, NULL, &w);
	cr_assert(w.in_pod);
	cr_assert_str_eq(manifest_who_label(&w, buf, sizeof(buf)), w.cgroup);
	cr_assert(startswith(w.cgroup, "/kubepods/burstable/pod"));
	json_object_put(m);

	m = load(STANDALONE);
	manifest_who(m, NULL, &w);
	cr_assert_not(w.in_pod);
	cr_assert_str_eq(w.namespace, "");
	cr_assert_str_eq(manifest_who_label(&w, buf, sizeof(buf)), w.cgroup);
	cr_assert_str_eq(manifest_who_label(&w, buf, 4), "/oo");
	json_object_put(m);
}

static struct bundle *cluster_bundle(void)
{
	static const char *const files[] = {"diagnosis.json",
					    "processes/6/snapshot.json"};
	struct json_object *m = load(CLUSTER);
	struct bundle *b;

	cr_assert_eq(bundle_new("oom-f23c4783-50650", &b), 0);
	json_object_object_foreach (m, key, val)
		json_object_object_add(bundle_manifest(b), key,
				       json_object_get(val));
	json_object_put(m);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char path[256];
		struct strbuf sb;

		snprintf(path, sizeof(path), "%s/%s", CLUSTER, files[i]);
		strbuf_init(&sb, 0);
		cr_assert_eq(read_file_at(AT_FDCWD, path, 1 << 20, &sb), 0);
		cr_assert_eq(bundle_add(b, files[i], sb.buf, sb.len, 1), 0);
		strbuf_release(&sb);
	}
	return b;
}

/* The page of a real cluster bundle: titled with the namespace, pod and
 * container; the kernel's pid said to be the node's, the sidecar's the
 * pod's; nothing of the manifest ignored. */
Test(manifest, cluster_page_names_the_pod_and_labels_each_pid)
{
	struct bundle *b = cluster_bundle();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "<h1><code>oomlens-inject-apps/jvm-heap/"
				  "app</code>: OOM kill of java (pid 29561 "
				  "on the node)</h1>"),
		  "%.600s", strstr(out.buf, "<h1>"));
	cr_assert(strstr(out.buf, "<title>oomlens: oomlens-inject-apps/"
				  "jvm-heap/app — "),
		  "%.300s", strstr(out.buf, "<title>"));
	cr_assert(strstr(out.buf, "<th class=\"n\">pid in the pod</th>"));
	cr_assert(strstr(out.buf, "<td class=\"n\">6</td><td>java</td>"));
	cr_assert_null(strstr(out.buf, "Ignored in this bundle"));
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "pod     oomlens-inject-apps/jvm-heap/app\n"
				  "cgroup  /kubepods/burstable/pod"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "killed  pid 29561 on the node (java)"));
	cr_assert(strstr(out.buf, "verdict java-heap"));
	cr_assert_null(strstr(out.buf, "note:"), "%s", out.buf);
	bundle_free(b);
}

static struct json_object *capture_section(void)
{
	return json_tokener_parse(
		"{\"pod_security\":\"restricted\",\"uid\":1000,\"gid\":1000,"
		"\"capabilities\":[],\"not_captured\":[{\"what\":\"smaps\","
		"\"pid\":6,\"why\":\"permission denied: uid 0 differs from the "
		"sidecar's 1000 and no CAP_SYS_PTRACE\"},{\"what\":"
		"\"allocator probe\",\"why\":\"off in pod mode\"}],"
		"\"not_captured_more\":2}");
}

/* "capture" is optional (older bundles have none: the real manifests
 * above pass), and when present its fields and entries are checked. */
Test(manifest, capture_section_is_checked)
{
	struct json_object *m = load(CLUSTER), *cap = capture_section(), *e;
	struct jget_notes n = {0};

	json_object_object_add(m, "capture", cap);
	cr_assert_eq(manifest_check(m, &n), 0, "%s", n.n ? n.text[0] : "");
	json_object_object_add(cap, "uid", json_object_new_string("1000"));
	json_object_object_del(cap, "capabilities");
	e = jget_idx(jget(cap, "not_captured"), 0);
	json_object_object_add(e, "pid", json_object_new_double(6.5));
	json_object_array_add(jget(cap, "not_captured"),
			      json_object_new_int(3));
	cr_assert_eq(manifest_check(m, &n), 4);
	cr_assert(noted(&n, "\"capture.uid\" is a string, not an integer"));
	cr_assert(noted(&n, "\"capture.capabilities\" is missing"));
	cr_assert(noted(&n, "\"capture.not_captured[].pid\" is a number"));
	cr_assert(noted(&n, "\"capture.not_captured[2]\" is not an object"));
	json_object_put(m);
}

/* The page and the text summary (`oomlens-agent show`, `kubectl oomlens
 * show`) say what the sidecar ran as and what it could not capture. */
Test(manifest, capture_section_is_shown)
{
	struct bundle *b = cluster_bundle();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	json_object_object_add(bundle_manifest(b), "capture",
			       capture_section());
	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "<h2>What the sidecar could not capture"
				  "</h2><div class=\"sub\">sidecar ran as uid "
				  "1000, gid 1000, capabilities none, pod "
				  "security restricted</div><ul><li><b>smaps "
				  "of pid 6 (in the pod)</b>: permission "
				  "denied: uid 0 differs from the sidecar&#39;s"
				  " 1000 and no CAP_SYS_PTRACE</li>"),
		  "%.900s", strstr(out.buf, "What the sidecar") ?: out.buf);
	cr_assert(strstr(out.buf, "<li>and 2 more</li>"));
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "sidecar uid 1000, gid 1000, capabilities "
				  "none, pod security restricted\n  not "
				  "captured: smaps of pid 6 (in the pod): "
				  "permission denied: uid 0 differs"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "  not captured: allocator probe: off in "
				  "pod mode\n  and 2 more not captured\n"));
	cr_assert_null(strstr(out.buf, "note:"), "%s", out.buf);
	bundle_free(b);
}
