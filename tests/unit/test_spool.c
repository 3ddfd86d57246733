/* SPDX-License-Identifier: Apache-2.0 */
/* spool_find/spool_attach on spool trees built in a temporary directory
 * (no live /proc or /sys). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forensics/bundle.h"
#include "base/fileio.h"
#include "forensics/spool.h"
#include "base/parse.h"
#include "base/util.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512];
	char *slash;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	cr_assert_eq(mkdir_p_at(AT_FDCWD, dir, 0755), 0);
	cr_assert_eq(
		write_file_atomic_at(AT_FDCWD, path, text, strlen(text), 0644),
		0);
}

static void spool(const char *dir, const char *cgroup)
{
	char rel[256], text[512];

	snprintf(rel, sizeof(rel), "%s/manifest.json", dir);
	if (cgroup)
		snprintf(text, sizeof(text),
			 "{\"schema\":\"%s\",\"cgroup\":\"%s\",\"pids\":[1]}",
			 SPOOL_SCHEMA, cgroup);
	else
		snprintf(text, sizeof(text),
			 "{\"schema\":\"%s\",\"cgroup\":null,\"pids\":[1]}",
			 SPOOL_SCHEMA);
	put(rel, text);
	snprintf(rel, sizeof(rel), "%s/timeline.json", dir);
	put(rel, "{\"schema\":\"oomlens.io/timeline/v1\",\"samples\":[]}");
}

static void snap(const char *dir, const char *name, unsigned long t_ms, int pid)
{
	char rel[256], text[256];

	snprintf(rel, sizeof(rel), "%s/snapshots/%s/snapshot.json", dir, name);
	snprintf(text, sizeof(text),
		 "{\"reason\":\"threshold-90\",\"t_ms\":%lu}", t_ms);
	put(rel, text);
	snprintf(rel, sizeof(rel), "%s/snapshots/%s/processes/%d/pmap.txt", dir,
		 name, pid);
	put(rel, "table\n");
	snprintf(rel, sizeof(rel), "%s/snapshots/%s/processes/%d/arenas.json",
		 dir, name, pid);
	put(rel, "{\"arena_heaps\":4}");
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/oomlens-test-spool-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	rm_rf_at(AT_FDCWD, root);
}

TestSuite(spool, .init = setup, .fini = teardown);

Test(spool, cgroup_matching_rules)
{
	cr_assert(spool_cgroup_matches("/a/b", "/a/b"));
	cr_assert(spool_cgroup_matches("/a/b/c", "/a/b"), "child");
	cr_assert(spool_cgroup_matches("/a", "/a/b"), "ancestor");
	cr_assert_not(spool_cgroup_matches("/ab", "/a"));
	cr_assert_not(spool_cgroup_matches("/", "/a"), "root claims nothing");
	cr_assert_not(spool_cgroup_matches("", "/a"));
	cr_assert_not(spool_cgroup_matches(NULL, "/a"));
}

#define UID_A "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
#define UID_B "9c1185a5-c5e9-4f0c-b4d0-4d9bd7bfe6f3"
#define POD_A "/kubepods/burstable/pod" UID_A
#define POD_B "/kubepods/burstable/pod" UID_B
#define VOLS "/volumes/kubernetes.io~empty-dir/"

Test(spool, find_prefers_exact_then_child_then_ancestor)
{
	char parent[128], d1[128], pods[128];
	const char *dirs[3];
	struct spool_info info;
	struct spool_ignored ign;

	snprintf(parent, sizeof(parent), "%s/node", root);
	snprintf(d1, sizeof(d1), "%s/single", root);
	snprintf(pods, sizeof(pods), "%s/kubelet/pods", root);
	spool("kubelet/pods/" UID_A VOLS "pod", POD_A);
	spool("kubelet/pods/" UID_A VOLS "ctr", POD_A "/ctr");
	spool("kubelet/pods/" UID_B VOLS "spool", POD_B);
	spool("node/pids-only", NULL);
	spool("node/podC", "/kubepods/podC");
	put("node/not-a-spool/readme", "x");
	put("node/plain-file", "x");
	spool("single", "/demo/app");
	dirs[0] = parent;
	dirs[1] = d1;
	dirs[2] = pods;
	cr_assert_eq(spool_find(dirs, 3, POD_A, &ign, &info), 0);
	cr_assert(info.exact);
	cr_assert(strstr(info.dir, VOLS "pod"), "%s", info.dir);
	cr_assert_eq(ign.n, 0);
	/* Below the container's sidecar: its spool, found in the pod. */
	cr_assert_eq(spool_find(dirs, 3, POD_A "/ctr/leaf", &ign, &info), 0);
	cr_assert_str_eq(info.cgroup, POD_A "/ctr");
	/* The kernel blamed pod B; only its container... none: pod B's own. */
	cr_assert_eq(spool_find(dirs, 3, POD_B "/x", &ign, &info), 0);
	cr_assert_str_eq(info.cgroup, POD_B);
	cr_assert_eq(spool_find(dirs, 3, "/kubepods/podC", &ign, &info), 0);
	cr_assert_eq(spool_find(dirs, 3, "/demo/app", &ign, &info), 0);
	cr_assert_str_eq(info.dir, d1);
	cr_assert_eq(spool_find(dirs, 3, "/nothing", &ign, &info), -ENOENT);
	cr_assert_eq(spool_find(dirs, 0, "/demo/app", NULL, &info), -ENOENT);
}

Test(spool, cgroup_in_pod_both_drivers)
{
	cr_assert(spool_cgroup_in_pod(POD_A "/ctr", UID_A));
	cr_assert(spool_cgroup_in_pod(
		"/kubepods.slice/kubepods-burstable.slice/"
		"kubepods-burstable-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427."
		"slice/cri-containerd-abc.scope",
		UID_A));
	cr_assert_not(spool_cgroup_in_pod("/kubepods/burstable", UID_A));
	cr_assert_not(spool_cgroup_in_pod(POD_B, UID_A));
	cr_assert_not(spool_cgroup_in_pod(POD_A "x/ctr", UID_A));
	cr_assert_not(spool_cgroup_in_pod("/x" UID_A, UID_A));
}

/* Finding: a spool's manifest naming an ancestor attached that spool to
 * every kill below it, another pod's included. */
Test(spool, claim_of_an_ancestor_is_not_believed)
{
	char pods[128], node[128];
	const char *dirs[2] = {pods, node};
	struct spool_info info;
	struct spool_ignored ign;

	snprintf(pods, sizeof(pods), "%s/kubelet/pods", root);
	snprintf(node, sizeof(node), "%s/node", root);
	/* In pod A's volume, claiming the QoS class (every pod below). */
	spool("kubelet/pods/" UID_A VOLS "spool", "/kubepods/burstable");
	/* Anywhere else, claiming the parent of pod B. */
	spool("node/evil", "/kubepods");
	cr_assert_eq(spool_find(dirs, 2, POD_B "/ctr", &ign, &info), -ENOENT);
	cr_assert_eq(ign.n, 2);
	cr_assert(strstr(ign.why[0], "claims \"/kubepods") ||
		  strstr(ign.why[1], "claims \"/kubepods"));
	/* A claim outside its own pod: pod A's volume speaking for pod B. */
	spool("kubelet/pods/" UID_A VOLS "spool", POD_B);
	cr_assert_eq(spool_find(dirs, 2, POD_B, &ign, &info), -ENOENT);
	cr_assert_geq(ign.n, 1);
	cr_assert(strstr(ign.dir[0], UID_A) || strstr(ign.dir[1], UID_A));
}

/* A sidecar behind a cgroup namespace sees its pod as "/": its spool in the
 * pod's volume is the pod's by location, and no other pod's. */
Test(spool, pod_volume_spool_with_a_namespace_view_is_the_pods)
{
	char pods[128];
	const char *dirs[1] = {pods};
	struct spool_info info;
	struct spool_ignored ign;

	snprintf(pods, sizeof(pods), "%s/kubelet/pods", root);
	spool("kubelet/pods/" UID_A VOLS "spool", "/");
	cr_assert_eq(spool_find(dirs, 1, POD_A "/ctr", &ign, &info), 0);
	cr_assert_eq(ign.n, 0);
	cr_assert(strstr(info.dir, UID_A));
	cr_assert_eq(spool_find(dirs, 1, POD_B "/ctr", &ign, &info), -ENOENT);
}

/* Finding (the real node, a root JVM under baseline): a sidecar that may
 * not read the app's cgroup records it by its pids and its spool claims
 * no cgroup; the agent then found no spool for the kill and the bundle
 * lost what the sidecar recorded and why. In the pod's volume it is the
 * pod's by location, the weakest match; elsewhere it speaks for nothing. */
Test(spool, pids_only_spool_in_a_pod_volume_is_the_pods)
{
	char pods[128], node[128];
	const char *dirs[2] = {pods, node};
	struct spool_info info;
	struct spool_ignored ign;

	snprintf(pods, sizeof(pods), "%s/kubelet/pods", root);
	snprintf(node, sizeof(node), "%s/node", root);
	spool("kubelet/pods/" UID_A VOLS "spool", NULL);
	spool("node/pids-only", NULL);
	cr_assert_eq(spool_find(dirs, 2, POD_A "/ctr", &ign, &info), 0);
	cr_assert(strstr(info.dir, UID_A), "%s", info.dir);
	cr_assert_str_eq(info.cgroup, "");
	cr_assert_not(info.exact);
	cr_assert_eq(ign.n, 0);
	cr_assert_eq(spool_find(dirs, 2, POD_B "/ctr", &ign, &info), -ENOENT);
	cr_assert_eq(spool_find(dirs, 2, "/demo/app", &ign, &info), -ENOENT);
	/* a spool of the pod that names the container wins */
	spool("kubelet/pods/" UID_A VOLS "ctr", POD_A "/ctr");
	cr_assert_eq(spool_find(dirs, 2, POD_A "/ctr", &ign, &info), 0);
	cr_assert(info.exact);
	cr_assert(strstr(info.dir, VOLS "ctr"), "%s", info.dir);
}

/* Finding: a spool whose snapshots/ was a symlink to another pod's spool
 * put that pod's cmdline.txt (a database password) in this bundle. */
Test(spool, symlinked_snapshots_dir_is_not_followed)
{
	char d[128];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;

	snprintf(d, sizeof(d), "%s/node", root);
	spool("node/victim", "/kubepods/podV");
	snap("node/victim", "20261130T100000.000Z", 1000, 9);
	put("node/victim/snapshots/20261130T100000.000Z/processes/9/"
	    "cmdline.txt",
	    "psql --password=secret");
	spool("node/thief", "/kubepods/podT");
	{
		char link[256];

		snprintf(link, sizeof(link), "%s/node/thief/snapshots", root);
		cr_assert_eq(symlink("../victim/snapshots", link), 0);
	}
	/* And a whole spool entry that is a symlink to the victim's. */
	{
		char link[256];

		snprintf(link, sizeof(link), "%s/node/alias", root);
		cr_assert_eq(symlink("victim", link), 0);
	}
	cr_assert_eq(bundle_new("sym", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/kubepods/podT", 0, NULL, &info),
		     0);
	cr_assert(bundle_has(b, "timeline.json"));
	cr_assert_str_eq(info.snapshot, "");
	cr_assert_not(bundle_has(b, "processes/9/cmdline.txt"));
	cr_assert_not(bundle_has(b, "spool/snapshot.json"));
	bundle_free(b);
	/* The victim's own kill still finds its spool, not the alias. */
	cr_assert_eq(bundle_new("own", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/kubepods/podV", 0, NULL, &info),
		     0);
	cr_assert(strstr(info.dir, "/victim"), "%s", info.dir);
	cr_assert(bundle_has(b, "processes/9/cmdline.txt"));
	bundle_free(b);
}

/* A FIFO or a wrong JSON type where the agent expects a file or a string:
 * skipped, never waited on, never trusted. */
Test(spool, fifo_and_wrong_types_are_skipped, .timeout = 20)
{
	char d[128], path[256];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;

	snprintf(d, sizeof(d), "%s/node", root);
	spool("node/s", "/kubepods/podF");
	snap("node/s", "20261130T100000.000Z", 1000, 5);
	snprintf(path, sizeof(path), "%s/node/s/timeline.json", root);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path),
		 "%s/node/s/snapshots/20261130T100000.000Z/processes/5/status",
		 root);
	cr_assert_eq(mkfifo(path, 0600), 0);
	put("node/typed/manifest.json",
	    "{\"schema\":\"" SPOOL_SCHEMA "\",\"cgroup\":{\"x\":1}}");
	put("node/array/manifest.json", "[\"/kubepods/podF\"]");
	cr_assert_eq(bundle_new("fifo", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/kubepods/podF", 0, NULL, &info),
		     0);
	cr_assert(strstr(info.dir, "node/s"), "%s", info.dir);
	cr_assert_not(bundle_has(b, "timeline.json"));
	cr_assert_not(bundle_has(b, "processes/5/status"));
	cr_assert(bundle_has(b, "processes/5/pmap.txt"));
	bundle_free(b);
}

Test(spool, attach_newest_snapshot_before_the_kill)
{
	char d[128];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/app");
	snap("s", "20261130T100000.000Z", 1000, 41);
	snap("s", "20261130T100001.000Z", 2000, 42);
	snap("s", "20261130T100002.000Z", 3000, 43);
	put("s/snapshots/20261130T100003.000Z.tmp/snapshot.json",
	    "{\"t_ms\":2500}");
	cr_assert_eq(bundle_new("t1", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app", 2500, NULL, &info),
		     0);
	cr_assert_str_eq(info.snapshot, "20261130T100001.000Z");
	cr_assert_eq(info.snapshot_ms, 2000);
	cr_assert(bundle_has(b, "timeline.json"));
	cr_assert(bundle_has(b, "spool/manifest.json"));
	cr_assert(bundle_has(b, "spool/snapshot.json"));
	cr_assert(bundle_has(b, "processes/42/pmap.txt"));
	cr_assert(bundle_has(b, "processes/42/arenas.json"));
	cr_assert_not(bundle_has(b, "processes/43/pmap.txt"));
	cr_assert_eq(info.n_files, 5);
	bundle_free(b);
	/* No bound: the newest complete one, never the .tmp. */
	cr_assert_eq(bundle_new("t2", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app", 0, NULL, &info), 0);
	cr_assert_str_eq(info.snapshot, "20261130T100002.000Z");
	cr_assert(bundle_has(b, "processes/43/pmap.txt"));
	bundle_free(b);
}

Test(spool, attach_without_snapshots_or_match)
{
	char d[128];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/app");
	cr_assert_eq(bundle_new("t3", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app", 0, NULL, &info), 0);
	cr_assert_str_eq(info.snapshot, "");
	cr_assert(bundle_has(b, "timeline.json"));
	cr_assert_eq(spool_attach(b, dirs, 1, "/other", 0, NULL, &info),
		     -ENOENT);
	/* Outside a kubelet pod volume, a spool never speaks for the kills
	 * below the cgroup it names. */
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app/x", 0, NULL, &info),
		     -ENOENT);
	bundle_free(b);
}

Test(spool, symlinked_files_are_not_followed)
{
	char d[128], target[256], link[256];
	const char *dirs[1] = {d};
	struct bundle *b;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/app");
	snap("s", "20261130T100000.000Z", 1000, 7);
	snprintf(target, sizeof(target), "/etc/hostname");
	snprintf(link, sizeof(link),
		 "%s/s/snapshots/20261130T100000.000Z/processes/7/status",
		 root);
	cr_assert_eq(symlink(target, link), 0);
	cr_assert_eq(bundle_new("t4", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app", 0, NULL, NULL), 0);
	cr_assert_not(bundle_has(b, "processes/7/status"));
	cr_assert(bundle_has(b, "processes/7/pmap.txt"));
	bundle_free(b);
}

Test(spool, jvm_outputs_from_an_earlier_snapshot_when_the_jvm_stalled)
{
	char d[128];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;
	const char *heap, *attach;
	size_t len;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/jvm");
	snap("s", "20261130T100000.000Z", 1000, 7);
	put("s/snapshots/20261130T100000.000Z/processes/7/jvm/attach.json",
	    "{\"attached\":true,\"pid\":7}");
	put("s/snapshots/20261130T100000.000Z/processes/7/jvm/heap_info.txt",
	    "7:\n def new generation   total 4928K, used 100K\n");
	snap("s", "20261130T100001.000Z", 2000, 7);
	put("s/snapshots/20261130T100001.000Z/processes/7/jvm/heap_info.txt",
	    "old");
	snap("s", "20261130T100002.000Z", 3000, 7);
	put("s/snapshots/20261130T100002.000Z/processes/7/jvm/attach.json",
	    "{\"attached\":false,\"error\":\"the JVM did not answer\"}");
	cr_assert_eq(bundle_new("t", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/jvm", 0, NULL, &info), 0);
	cr_assert_str_eq(info.snapshot, "20261130T100002.000Z");
	/* The middle snapshot has no attach.json: not one where it answered. */
	heap = bundle_get(b, "processes/7/jvm/heap_info.txt", &len);
	cr_assert_not_null(heap);
	cr_assert(strstr(heap, "def new generation"));
	attach = bundle_get(b, "processes/7/jvm/attach.json", &len);
	cr_assert(strstr(attach, "\"attached\":true"));
	cr_assert(bundle_has(b, "processes/7/pmap.txt"), "the rest is newest");
	bundle_free(b);
}

/* A JVM at its limit attaches but answers no command in time: its
 * attach.json (as a sidecar wrote it on the test node, a 256 MiB JVM pod
 * collecting at its limit) says attached, with the command's error. That
 * is no answer: jvm/ comes from the newest earlier snapshot with one, and
 * one that answered a command among others that failed is an answer. */
Test(spool, jvm_attached_but_mute_is_no_answer)
{
	static const char mute[] =
		"{\"attached\":true,\"pid\":7,\"nspid\":7,\"uid\":0,"
		"\"protocol\":1,\"commands\":[{\"command\":\"GC.heap_info\","
		"\"error\":\"the JVM did not answer before the deadline\"}]}\n";
	static const char some[] =
		"{\"attached\":true,\"pid\":7,\"commands\":["
		"{\"command\":\"GC.heap_info\",\"status\":0,\"bytes\":1207,"
		"\"truncated\":false},"
		"{\"command\":\"VM.flags\",\"error\":\"deadline\"}]}";
	char d[128], p[256];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;
	const char *heap, *attach;
	size_t len;
	int fd;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/jvm");
	snap("s", "20261130T100000.000Z", 1000, 7);
	put("s/snapshots/20261130T100000.000Z/processes/7/jvm/attach.json",
	    some);
	put("s/snapshots/20261130T100000.000Z/processes/7/jvm/heap_info.txt",
	    "7:\n def new generation   total 4928K, used 100K\n");
	snap("s", "20261130T100001.000Z", 2000, 7);
	put("s/snapshots/20261130T100001.000Z/processes/7/jvm/attach.json",
	    mute);
	cr_assert_eq(bundle_new("t", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/jvm", 0, NULL, &info), 0);
	cr_assert_str_eq(info.snapshot, "20261130T100001.000Z");
	heap = bundle_get(b, "processes/7/jvm/heap_info.txt", &len);
	cr_assert_not_null(heap, "the earlier answer fills the gap");
	cr_assert(strstr(heap, "def new generation"));
	attach = bundle_get(b, "processes/7/jvm/attach.json", &len);
	cr_assert_str_eq(attach, some);
	bundle_free(b);

	snprintf(p, sizeof(p), "%s/s/snapshots", root);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert(spool_snapshot_jvm_answered(fd, "20261130T100000.000Z"));
	cr_assert_not(spool_snapshot_jvm_answered(fd, "20261130T100001.000Z"));
	/* not JSON, attached not a boolean, commands not an array */
	put("s/snapshots/20261130T100001.000Z/processes/7/jvm/attach.json",
	    "{\"attached\":true,\"commands\":{}}");
	cr_assert_not(spool_snapshot_jvm_answered(fd, "20261130T100001.000Z"));
	put("s/snapshots/20261130T100001.000Z/processes/7/jvm/attach.json",
	    "{\"attached\":\"true\"}");
	cr_assert_not(spool_snapshot_jvm_answered(fd, "20261130T100001.000Z"));
	put("s/snapshots/20261130T100001.000Z/processes/7/jvm/attach.json",
	    "\"attached\":true");
	cr_assert_not(spool_snapshot_jvm_answered(fd, "20261130T100001.000Z"));
	close(fd);
}

/* Issue 12: a snapshot that completed after a kill in its cgroup says so
 * (after_kill) and never replaces an earlier pre-kill one, even when its
 * completion time is not after the kill time the agent has. */
Test(spool, after_kill_snapshot_is_never_picked)
{
	char d[128];
	const char *dirs[1] = {d};
	struct bundle *b;
	struct spool_info info;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/app");
	snap("s", "20261130T100000.000Z", 1000, 41);
	put("s/snapshots/20261130T100001.000Z/snapshot.json",
	    "{\"reason\":\"threshold-90\",\"t_ms\":2000,\"after_kill\":true}");
	put("s/snapshots/20261130T100001.000Z/processes/42/pmap.txt", "x\n");
	cr_assert_eq(bundle_new("t1", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app", 2500, NULL, &info),
		     0);
	cr_assert_str_eq(info.snapshot, "20261130T100000.000Z");
	cr_assert_not(bundle_has(b, "processes/42/pmap.txt"));
	bundle_free(b);
}

/* The pure manifest reader (tests/fuzz/fuzz_spool.c): bytes a pod wrote,
 * not NUL-terminated; what it cannot believe leaves ret as it was. */
Test(spool, parse_manifest_typed_and_bounded)
{
	static const struct {
		const char *in;
		int r;
		const char *cg;
	} t[] = {
		{"{\"schema\":\"s\",\"cgroup\":\"/demo/app\"}\n", 0,
		 "/demo/app"},
		{"{\"schema\":\"s\",\"cgroup\":null}", 0, ""},
		{"{\"cgroup\":\"\"}", 0, ""},
		{"{\"cgroup\":[\"/a\"],\"schema\":7}", -ENOENT, NULL},
		{"{\"cgroup\":\"/a\\u0000/b\"}", -ENOENT, NULL},
		{"{\"cgroup\":\"/0123456789abcdef0123456789\"}", -ENOENT, NULL},
		{"{\"cgroup\":\"/a\"} {}", -EBADMSG, NULL},
		{"[\"/a\"]", -EBADMSG, NULL},
		{"{\"cgroup\":\"/a\"", -EBADMSG, NULL},
		{"", -EBADMSG, NULL},
	};
	char cg[16];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(cg, sizeof(cg), "untouched");
		cr_assert_eq(spool_parse_manifest(t[i].in, strlen(t[i].in), cg,
						  sizeof(cg)),
			     t[i].r, "case %zu", i);
		cr_assert_str_eq(cg, t[i].cg ? t[i].cg : "untouched",
				 "case %zu", i);
	}
	/* the length is the bound, not a NUL */
	cr_assert_eq(spool_parse_manifest("{\"cgroup\":\"/a\"}XX", 15, cg,
					  sizeof(cg)),
		     0);
	cr_assert_str_eq(cg, "/a");
}

Test(spool, parse_snapshot_time)
{
	static const char ok[] = "{\"reason\":\"threshold-90\",\"t_ms\":1234}";
	static const char after[] = "{\"t_ms\":1234,\"after_kill\":true}";
	static const char neg[] = "{\"t_ms\":-5}";
	static const char str[] = "{\"t_ms\":\"12x\"}";

	cr_assert_eq(spool_parse_snapshot_time(ok, strlen(ok)), 1234);
	cr_assert_eq(spool_parse_snapshot_time(ok, strlen(ok) - 1), 0);
	cr_assert_eq(spool_parse_snapshot_time(after, strlen(after)), 0);
	cr_assert_eq(spool_parse_snapshot_time(neg, strlen(neg)), 0);
	cr_assert_eq(spool_parse_snapshot_time(str, strlen(str)), 0);
	cr_assert_eq(spool_parse_snapshot_time("[1]", 3), 0);
}

static int budget_count(const char *path, const char *data, size_t len,
			void *ud)
{
	size_t *n = ud;

	(void)data;
	n[0] += len;
	n[1] += strncmp(path, "processes/", 10) == 0;
	return 0;
}

/* Six sparse 8 MiB files (no disk used) and two small ones: the pod's
 * files are read within SPOOL_POD_BUDGET together, the first file past
 * it listed, the one it cut kept as read, the rest counted in one line;
 * the manifest, the timeline and the snapshot's metadata come first. */
Test(spool, a_pods_files_are_read_within_its_budget, .timeout = 30)
{
	char d[128], path[512];
	const char *dirs[1] = {d};
	struct json_object *trunc;
	struct bundle *b;
	struct spool_info info;
	size_t n[2] = {0, 0}; /* bytes, files under processes/ */
	int cut = 0, left = 0, more = -1;

	snprintf(d, sizeof(d), "%s/s", root);
	spool("s", "/demo/app");
	snap("s", "20261130T100000.000Z", 1000, 42);
	for (int i = 0; i < 6; i++) {
		int fd;

		snprintf(path, sizeof(path),
			 "%s/s/snapshots/20261130T100000.000Z/processes/42/"
			 "big%d",
			 root, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		cr_assert_geq(fd, 0);
		cr_assert_eq(ftruncate(fd, 8u << 20), 0);
		close(fd);
	}
	cr_assert_eq(bundle_new("budget", &b), 0);
	cr_assert_eq(spool_attach(b, dirs, 1, "/demo/app", 0, NULL, &info), 0);
	cr_assert(bundle_has(b, "spool/manifest.json"));
	cr_assert(bundle_has(b, "timeline.json"));
	cr_assert(bundle_has(b, "spool/snapshot.json"));
	bundle_foreach(b, budget_count, n);
	cr_assert_leq(n[0], SPOOL_POD_BUDGET);
	cr_assert_gt(n[0], SPOOL_POD_BUDGET - 8192u);
	trunc = bundle_truncated(b);
	for (size_t i = 0; i < json_object_array_length(trunc); i++) {
		struct json_object *t = json_object_array_get_idx(trunc, i);
		struct json_object *p, *w;
		const char *why;

		json_object_object_get_ex(t, "path", &p);
		json_object_object_get_ex(t, "reason", &w);
		why = json_object_get_string(w);
		cr_assert(strstr(why, "SPOOL_POD_BUDGET"), "%s", why);
		cut += startswith(why, "cut short");
		left += startswith(why, "left out");
		if (streq(json_object_get_string(p), "spool/")) {
			uint64_t v;

			cr_assert_eq(scan_u64(&why, &v), 0);
			cr_assert(startswith(why, " more files left out"));
			more = (int)v;
		}
	}
	cr_assert_eq(cut, 1);
	cr_assert_eq(left, 1);
	/* 8 files in processes/42: those read, one listed, the rest counted */
	cr_assert_eq(n[1] + 1 + (size_t)(more < 0 ? 0 : more), 8);
	bundle_free(b);
}

static bool snap_there(const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/s/snapshots/%s", root, name);
	return stat(p, &st) == 0;
}

/* The writer keeps the newest three, and the newest older one where the
 * JVM answered when none of those three holds an answer (a JVM at its
 * limit stops answering while snapshots come every second); with an
 * answer among the newest three, nothing more is kept. */
Test(spool, prune_keeps_the_last_jvm_answer)
{
	static const char *const names[] = {
		"20261130T100000.000Z", "20261130T100001.000Z",
		"20261130T100002.000Z", "20261130T100003.000Z",
		"20261130T100004.000Z", "20261130T100005.000Z"};
	char p[512];
	int fd;

	spool("s", "/demo/jvm");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snap("s", names[i], 1000 + i, 7);
		snprintf(p, sizeof(p),
			 "s/snapshots/%s/processes/7/jvm/attach.json",
			 names[i]);
		put(p, i < 2 ? "{\"attached\":true,\"pid\":7}"
			     : "{\"attached\":false,\"errno\":110}");
	}
	snprintf(p, sizeof(p), "%s/s/snapshots", root);
	fd = open(p, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert(spool_snapshot_jvm_answered(fd, names[1]));
	cr_assert_not(spool_snapshot_jvm_answered(fd, names[2]));
	spool_prune(fd, 3);
	cr_assert_not(snap_there(names[0]));
	cr_assert(snap_there(names[1]), "the newest answer, spared");
	cr_assert_not(snap_there(names[2]));
	for (size_t i = 3; i < 6; i++)
		cr_assert(snap_there(names[i]));
	/* an answer among the newest three: the spared one goes */
	put("s/snapshots/20261130T100005.000Z/processes/7/jvm/attach.json",
	    "{\"attached\":true,\"pid\":7}");
	spool_prune(fd, 3);
	cr_assert_not(snap_there(names[1]));
	for (size_t i = 3; i < 6; i++)
		cr_assert(snap_there(names[i]));
	close(fd);
}

static void add_status(struct bundle *b, int pid, const char *name,
		       unsigned anon_kb)
{
	char path[64], text[256];

	snprintf(path, sizeof(path), "processes/%d/status", pid);
	snprintf(text, sizeof(text),
		 "Name:\t%s\nPid:\t%d\nPPid:\t1\nVmRSS:\t%u kB\n"
		 "RssAnon:\t%u kB\nRssFile:\t0 kB\nRssShmem:\t0 kB\n",
		 name, pid, anon_kb, anon_kb);
	cr_assert_eq(bundle_add(b, path, text, strlen(text), BUNDLE_NORMAL), 0);
}

/* The kernel's pid is the node's; the snapshot's the pod's. */
Test(spool, victim_is_found_by_pid_then_name_and_rss)
{
	struct bundle *b;

	cr_assert_eq(bundle_new("v", &b), 0);
	add_status(b, 7, "java", 900000);
	add_status(b, 12, "java", 40000);
	add_status(b, 30, "sh", 1000);
	cr_assert_eq(bundle_add(b, "processes/31/jvm/status",
				"Name:\tjava\n"
				"Pid:\t31\n",
				20, BUNDLE_NORMAL),
		     0);
	/* in a pid namespace: by name, the nearest RSS */
	cr_assert_eq(spool_victim_pid(b, 10247, "java", 880000), 7);
	cr_assert_eq(spool_victim_pid(b, 10247, "java", 50000), 12);
	/* the same pid with the same name wins over a nearer RSS */
	cr_assert_eq(spool_victim_pid(b, 12, "java", 900000), 12);
	/* the same pid with another name is not the victim */
	cr_assert_eq(spool_victim_pid(b, 30, "java", 1000), 12);
	/* no process of that name: nothing guessed */
	cr_assert_eq(spool_victim_pid(b, 7, "python3", 900000), -1);
	cr_assert_eq(spool_victim_pid(b, 7, "", 900000), -1);
	cr_assert_eq(spool_victim_pid(b, 7, NULL, 900000), -1);
	bundle_free(b);
}
