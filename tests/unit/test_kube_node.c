/* SPDX-License-Identifier: Apache-2.0 */
/* kube_node: pod cgroup paths of both drivers and every runtime (shapes as
 * measured on the real node here and documented by kubelet / CRI-O /
 * containerd), container IDs, and the oomlens.io/ annotations. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "kube/kube_node.h"

/* table rows name only what they check */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define UID "3f1c2a8e-5d6b-4c1e-9a0f-7b2d4e6f8a01"
#define UID_ "3f1c2a8e_5d6b_4c1e_9a0f_7b2d4e6f8a01"
#define ID "4b5ce8a2f0c9d1e3a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4"

struct cg_case {
	const char *path;
	int ret;
	enum kube_qos qos;
	enum kube_cg_driver driver;
	const char *uid, *id, *runtime;
	bool conmon;
};

static const struct cg_case cg_cases[] = {
	/* cgroupfs (this node: containerd, v1 and v2 alike) */
	{"/kubepods/burstable/pod" UID "/" ID, 0, KUBE_QOS_BURSTABLE,
	 KUBE_CG_CGROUPFS, UID, ID, ""},
	{"/kubepods/besteffort/pod" UID "/" ID, 0, KUBE_QOS_BESTEFFORT,
	 KUBE_CG_CGROUPFS, UID, ID, ""},
	{"/kubepods/pod" UID "/" ID, 0, KUBE_QOS_GUARANTEED, KUBE_CG_CGROUPFS,
	 UID, ID, ""},
	{"/kubepods/burstable/pod" UID, 0, KUBE_QOS_BURSTABLE, KUBE_CG_CGROUPFS,
	 UID, "", ""},
	/* crun's leaf under the container */
	{"/kubepods/burstable/pod" UID "/" ID "/container", 0,
	 KUBE_QOS_BURSTABLE, KUBE_CG_CGROUPFS, UID, ID, ""},
	/* a --cgroup-root prefix */
	{"/kubelet/kubepods/pod" UID "/" ID, 0, KUBE_QOS_GUARANTEED,
	 KUBE_CG_CGROUPFS, UID, ID, ""},
	/* CRI-O with cgroupfs */
	{"/kubepods/burstable/pod" UID "/crio-" ID, 0, KUBE_QOS_BURSTABLE,
	 KUBE_CG_CGROUPFS, UID, ID, "cri-o"},
	/* static pod: the UID is an md5 */
	{"/kubepods/burstable/pod0123456789abcdef0123456789abcdef/" ID, 0,
	 KUBE_QOS_BURSTABLE, KUBE_CG_CGROUPFS,
	 "0123456789abcdef0123456789abcdef", ID, ""},
	/* systemd driver */
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/cri-containerd-" ID ".scope",
	 0, KUBE_QOS_BURSTABLE, KUBE_CG_SYSTEMD, UID, ID, "containerd"},
	{"/kubepods.slice/kubepods-besteffort.slice/"
	 "kubepods-besteffort-pod" UID_ ".slice/crio-" ID ".scope",
	 0, KUBE_QOS_BESTEFFORT, KUBE_CG_SYSTEMD, UID, ID, "cri-o"},
	{"/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope", 0,
	 KUBE_QOS_GUARANTEED, KUBE_CG_SYSTEMD, UID, ID, "docker"},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/crio-conmon-" ID ".scope",
	 0, KUBE_QOS_BURSTABLE, KUBE_CG_SYSTEMD, UID, ID, "cri-o", true},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/crio-" ID ".scope/container",
	 0, KUBE_QOS_BURSTABLE, KUBE_CG_SYSTEMD, UID, ID, "cri-o"},
	/* CRI-O with crun on v2 without .scope */
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	 ".slice/crio-" ID,
	 0, KUBE_QOS_BURSTABLE, KUBE_CG_SYSTEMD, UID, ID, "cri-o"},
	{"/kubepods.slice/kubepods-pod" UID_ ".slice", 0, KUBE_QOS_GUARANTEED,
	 KUBE_CG_SYSTEMD, UID, "", ""},
	/* not a pod */
	{"/", -ENOENT},
	{"/system.slice/containerd.service", -ENOENT},
	{"/kubepods", -ENOENT},
	{"/kubepods/burstable", -ENOENT},
	{"/kubepods.slice/kubepods-burstable.slice", -ENOENT},
	{"/oomlens-demo/hog", -ENOENT},
	{"/libpod_parent/libpod-" ID, -ENOENT},
	/* looks like one, malformed */
	{"/kubepods/burstable/podnot-a-uid/" ID, -EBADMSG},
	{"/kubepods/burstable/pod" UID "/zzzz", -EBADMSG},
	{"/kubepods/burstable/pod" UID "/abc", -EBADMSG},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-pod" UID_ ".slice",
	 -EBADMSG},
	{"/kubepods.slice/kubepods-pod" UID_ "/x", -EBADMSG},
	{"/kubepods/besteffort/something", -EBADMSG},
};

Test(kube_cgpath, table)
{
	for (size_t i = 0; i < sizeof(cg_cases) / sizeof(cg_cases[0]); i++) {
		const struct cg_case *c = &cg_cases[i];
		struct kube_cgpath r;

		memset(&r, 0x5a, sizeof(r));
		cr_assert_eq(kube_cgpath_parse(c->path, &r), c->ret,
			     "case %zu %s", i, c->path);
		if (c->ret < 0) {
			cr_assert_eq(r.pod_uid[0], 0x5a, "untouched");
			continue;
		}
		cr_assert_eq(r.qos, c->qos, "qos %zu", i);
		cr_assert_eq(r.driver, c->driver, "driver %zu", i);
		cr_assert_str_eq(r.pod_uid, c->uid, "uid %zu", i);
		cr_assert_str_eq(r.container_id, c->id, "id %zu", i);
		cr_assert_str_eq(r.runtime, c->runtime, "runtime %zu", i);
		cr_assert_eq(r.conmon, c->conmon, "conmon %zu", i);
	}
}

Test(kube_cgpath, qos_names)
{
	cr_assert_str_eq(kube_qos_name(KUBE_QOS_GUARANTEED), "Guaranteed");
	cr_assert_str_eq(kube_qos_name(KUBE_QOS_BESTEFFORT), "BestEffort");
	cr_assert_str_eq(kube_qos_name(KUBE_QOS_BURSTABLE), "Burstable");
}

Test(kube_cgpath, container_id_bare)
{
	cr_assert_str_eq(kube_container_id_bare("containerd://abc"), "abc");
	cr_assert_str_eq(kube_container_id_bare("cri-o://abc"), "abc");
	cr_assert_str_eq(kube_container_id_bare("docker://abc"), "abc");
	cr_assert_str_eq(kube_container_id_bare("abc"), "abc");
	cr_assert_null(kube_container_id_bare(""));
	cr_assert_null(kube_container_id_bare(NULL));
	cr_assert_null(kube_container_id_bare("containerd://"));
}

/* A pod whose container "app" was killed and restarted: the new instance
 * is containerID, the killed one lastState.terminated.containerID. */
static const char pod_json[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"v\",\"namespace\":\"d\","
	"\"uid\":\"" UID "\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\","
	"\"name\":\"v-7d9\",\"controller\":true,\"apiVersion\":\"apps/v1\","
	"\"uid\":\"u\"}]},"
	"\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"hog:1\","
	"\"resources\":{\"limits\":{\"memory\":\"64Mi\"}}},{\"name\":\"side\","
	"\"image\":\"s\"}]},"
	"\"status\":{\"qosClass\":\"Burstable\",\"containerStatuses\":["
	"{\"name\":\"app\",\"restartCount\":1,\"containerID\":"
	"\"containerd://aaaa000000000000\",\"lastState\":{\"terminated\":{"
	"\"reason\":\"OOMKilled\",\"exitCode\":137,\"containerID\":"
	"\"containerd://bbbb000000000000\"}}},"
	"{\"name\":\"side\",\"restartCount\":0,\"containerID\":"
	"\"containerd://cccc000000000000\",\"lastState\":{}}]}}";

Test(kube_cgpath, find_container_current_and_last)
{
	struct kube_pod *p;
	const struct kube_container *c;
	bool last = true;

	cr_assert_eq(kube_pod_parse(pod_json, sizeof(pod_json) - 1, &p), 0);
	c = kube_pod_find_container(p, "aaaa000000000000", &last);
	cr_assert_not_null(c);
	cr_assert_str_eq(c->name, "app");
	cr_assert_not(last);
	c = kube_pod_find_container(p, "bbbb000000000000", &last);
	cr_assert_not_null(c);
	cr_assert_str_eq(c->name, "app");
	cr_assert(last);
	cr_assert_eq(c->restart_count, 1);
	cr_assert_str_eq(c->image, "hog:1");
	cr_assert_str_eq(c->limit_memory_s, "64Mi");
	c = kube_pod_find_container(p, "cccc000000000000", NULL);
	cr_assert_str_eq(c->name, "side");
	cr_assert_null(kube_pod_find_container(p, "dddd000000000000", NULL));
	cr_assert_str_eq(p->owner_kind, "ReplicaSet");
	cr_assert_str_eq(p->owner_name, "v-7d9");
	kube_pod_free(p);
}

/* ---- real captures (tests/fixtures/cgpath/, each with a README) ------- */

#define CGFIX "tests/fixtures/cgpath/"

/* The memory controller's path in a /proc/PID/cgroup fixture: the
 * "N:memory:" line's on v1 (a line per hierarchy), the "0::" line's on v2
 * (the only one); "" when absent. */
static void fix_memory_path(const char *dir, const char *name, char *buf,
			    size_t n)
{
	char path[256], line[512];
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), CGFIX "%s/%s", dir, name);
	buf[0] = '\0';
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strstr(line, ":memory:")))
			snprintf(buf, n, "%s", p + strlen(":memory:"));
		else if (!buf[0] && strncmp(line, "0::", 3) == 0)
			snprintf(buf, n, "%s", line + 3);
	}
	fclose(f);
}

/* The fixture file's first line, without its newline; "" when absent. */
static void fix_line(const char *dir, const char *name, char *buf, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), CGFIX "%s/%s", dir, name);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* key=value from the fixture's expect file */
static void fix_expect(const char *dir, const char *file, const char *key,
		       char *buf, size_t n)
{
	char path[256], line[256];
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), CGFIX "%s/%s", dir, file);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, n, "%s", line + kl + 1);
		}
	fclose(f);
}

static void check_capture(const char *dir, const char *file, const char *path,
			  bool sandbox)
{
	char uid[64], id[96], qos[32], driver[32];
	struct kube_cgpath r;

	fix_expect(dir, file, "uid", uid, sizeof(uid));
	fix_expect(dir, file, "id", id, sizeof(id));
	fix_expect(dir, file, "qos", qos, sizeof(qos));
	fix_expect(dir, file, "driver", driver, sizeof(driver));
	cr_assert_eq(kube_cgpath_parse(path, &r), 0, "%s: %s", dir, path);
	cr_assert_eq(r.driver,
		     strcmp(driver, "systemd") == 0 ? KUBE_CG_SYSTEMD
						    : KUBE_CG_CGROUPFS,
		     "%s: %s", dir, driver);
	cr_assert(strcmp(driver, "systemd") == 0 ||
			  strcmp(driver, "cgroupfs") == 0,
		  "%s: %s", dir, driver);
	cr_assert_str_eq(kube_qos_name(r.qos), qos, "%s", dir);
	cr_assert_str_eq(r.pod_uid, uid, "%s", dir);
	/* systemd names the runtime in the scope (cri-containerd-<id>);
	 * cgroupfs's /kubepods/…/<id> does not */
	cr_assert_str_eq(r.runtime,
			 strcmp(driver, "systemd") == 0 ? "containerd" : "",
			 "%s", dir);
	cr_assert_not(r.conmon);
	if (sandbox) /* the pause container: same pod, another ID */
		cr_assert(r.container_id[0] && strcmp(r.container_id, id), "%s",
			  dir);
	else
		cr_assert_str_eq(r.container_id, id, "%s", dir);
}

/* Every case of one node: the app's and the sandbox's paths, and the
 * kernel's words for a kill there (the Burstable case): task_memcg is
 * the container's cgroup, oom_memcg the pod's (pod and container limits
 * equal). */
static void check_node(const char *const dirs[3])
{
	char line[1024], *p, *e;
	struct kube_cgpath r;

	for (size_t i = 0; i < 3; i++) {
		fix_memory_path(dirs[i], "proc-cgroup", line, sizeof(line));
		cr_assert(line[0] == '/', "%s: %s", dirs[i], line);
		check_capture(dirs[i], "expect", line, false);
		fix_memory_path(dirs[i], "proc-cgroup-sandbox", line,
				sizeof(line));
		check_capture(dirs[i], "expect", line, true);
	}
	fix_line(dirs[1], "oom-kill.txt", line, sizeof(line));
	p = strstr(line, "task_memcg=");
	cr_assert_not_null(p, "%s", line);
	p += strlen("task_memcg=");
	e = strchr(p, ',');
	cr_assert_not_null(e);
	*e = '\0';
	check_capture(dirs[1], "expect-oom-kill", p, false);
	p = strstr(line, "oom_memcg=") + strlen("oom_memcg=");
	*strchr(p, ',') = '\0';
	cr_assert_eq(kube_cgpath_parse(p, &r), 0, "%s", p);
	cr_assert_str_eq(r.container_id, "");
}

Test(kube_cgpath, real_v2_systemd_containerd)
{
	static const char *const dirs[] = {
		"v2-systemd-containerd-guaranteed",
		"v2-systemd-containerd-burstable",
		"v2-systemd-containerd-besteffort",
	};
	char line[512];

	fix_line(dirs[0], "proc-cgroup", line, sizeof(line));
	cr_assert(strncmp(line, "0::/", 4) == 0, "%s", line);
	check_node(dirs);
}

Test(kube_cgpath, real_v1_cgroupfs_containerd)
{
	static const char *const dirs[] = {
		"v1-cgroupfs-containerd-guaranteed",
		"v1-cgroupfs-containerd-burstable",
		"v1-cgroupfs-containerd-besteffort",
	};

	check_node(dirs);
}

static void annot(const char *json, struct kube_annotations *a)
{
	struct json_object *o = json_tokener_parse(json);

	cr_assert_not_null(o, "%s", json);
	kube_annotations_parse(o, a);
	json_object_put(o);
}

Test(kube_annot, defaults)
{
	struct kube_annotations a;

	kube_annotations_parse(NULL, &a);
	cr_assert_eq(a.capture, KUBE_CAPTURE_DEFAULT);
	cr_assert_eq(a.n_thresholds, 3);
	cr_assert_eq(a.thresholds[0], 80);
	cr_assert_eq(a.thresholds[2], 95);
	cr_assert_eq(a.jvm, KUBE_JVM_AUTO);
	cr_assert_eq(a.trim, KUBE_TRIM_OFF);
	cr_assert_eq(a.n_containers, 0);
	cr_assert_eq(a.n_errors, 0);
}

Test(kube_annot, good_values)
{
	struct kube_annotations a;

	annot("{\"oomlens.io/capture\":\"false\",\"oomlens.io/containers\":"
	      "\"app, worker\",\"oomlens.io/thresholds\":\"50,75\","
	      "\"oomlens.io/jvm\":\"off\",\"oomlens.io/jvm-nmt\":\"true\","
	      "\"oomlens.io/trim\":\"on-pressure\",\"app.kubernetes.io/x\":"
	      "\"1\",\"oomlens.io/jvm-histogram\":\"true\","
	      "\"oomlens.io/jvm-histogram-max-pause-ms\":\"2500\",\"x\":"
	      "\"1\",\"oomlens.io/injected\":\"yes\"}",
	      &a);
	cr_assert_eq(a.capture, KUBE_CAPTURE_OFF);
	cr_assert_eq(a.n_containers, 2);
	cr_assert_str_eq(a.containers[0], "app");
	cr_assert_str_eq(a.containers[1], "worker");
	cr_assert_eq(a.n_thresholds, 2);
	cr_assert_eq(a.thresholds[1], 75);
	cr_assert_eq(a.jvm, KUBE_JVM_OFF);
	cr_assert(a.jvm_nmt);
	cr_assert_eq(a.trim, KUBE_TRIM_ON_PRESSURE);
	cr_assert(a.jvm_histogram);
	cr_assert_eq(a.jvm_histogram_max_pause_ms, 2500);
	cr_assert_eq(a.n_errors, 0);
}

struct bad_case {
	const char *json, *key;
};

static const struct bad_case bad_cases[] = {
	{"{\"oomlens.io/capture\":\"yes\"}", "oomlens.io/capture"},
	{"{\"oomlens.io/capture\":\"TRUE\"}", "oomlens.io/capture"},
	{"{\"oomlens.io/capture\":5}", "oomlens.io/capture"},
	{"{\"oomlens.io/thresholds\":\"90,80\"}", "oomlens.io/thresholds"},
	{"{\"oomlens.io/thresholds\":\"0,50\"}", "oomlens.io/thresholds"},
	{"{\"oomlens.io/thresholds\":\"80,,95\"}", "oomlens.io/thresholds"},
	{"{\"oomlens.io/thresholds\":\"101\"}", "oomlens.io/thresholds"},
	{"{\"oomlens.io/thresholds\":\"\"}", "oomlens.io/thresholds"},
	{"{\"oomlens.io/thresholds\":\"1,2,3,4,5,6,7,8,9\"}",
	 "oomlens.io/thresholds"},
	{"{\"oomlens.io/containers\":\"App\"}", "oomlens.io/containers"},
	{"{\"oomlens.io/containers\":\"a,,b\"}", "oomlens.io/containers"},
	{"{\"oomlens.io/containers\":\"\"}", "oomlens.io/containers"},
	{"{\"oomlens.io/jvm\":\"on\"}", "oomlens.io/jvm"},
	{"{\"oomlens.io/jvm-nmt\":\"summary\"}", "oomlens.io/jvm-nmt"},
	{"{\"oomlens.io/trim\":\"always\"}", "oomlens.io/trim"},
	{"{\"oomlens.io/jvm-histogram\":\"yes\"}", "oomlens.io/jvm-histogram"},
	{"{\"oomlens.io/jvm-histogram\":true}", "oomlens.io/jvm-histogram"},
	{"{\"oomlens.io/jvm-histogram-max-pause-ms\":\"0\"}",
	 "oomlens.io/jvm-histogram-max-pause-ms"},
	{"{\"oomlens.io/jvm-histogram-max-pause-ms\":\"1s\"}",
	 "oomlens.io/jvm-histogram-max-pause-ms"},
	{"{\"oomlens.io/jvm-histogram-max-pause-ms\":\"600001\"}",
	 "oomlens.io/jvm-histogram-max-pause-ms"},
};

Test(kube_annot, bad_values_keep_defaults)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct kube_annotations a;

		annot(bad_cases[i].json, &a);
		cr_assert_eq(a.n_errors, 1, "case %zu", i);
		cr_assert_str_eq(a.errors[0].key, bad_cases[i].key);
		cr_assert_neq(a.errors[0].dflt[0], '\0', "case %zu", i);
		cr_assert_eq(a.capture, KUBE_CAPTURE_DEFAULT, "case %zu", i);
		cr_assert_eq(a.n_thresholds, 3, "case %zu", i);
		cr_assert_eq(a.thresholds[0], 80, "case %zu", i);
		cr_assert_eq(a.n_containers, 0, "case %zu", i);
		cr_assert_eq(a.jvm, KUBE_JVM_AUTO);
		cr_assert_not(a.jvm_nmt);
		cr_assert_eq(a.trim, KUBE_TRIM_OFF);
		cr_assert_not(a.jvm_histogram, "case %zu", i);
		cr_assert_eq(a.jvm_histogram_max_pause_ms, 0, "case %zu", i);
	}
}

Test(kube_annot, errors_text_and_many_errors)
{
	struct kube_annotations a;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	annot("{\"oomlens.io/trim\":\"always\",\"oomlens.io/capture\":\"y\","
	      "\"oomlens.io/jvm\":\"x\"}",
	      &a);
	cr_assert_eq(a.n_errors, 3);
	strbuf_init(&sb, 4096);
	cr_assert_gt(kube_annotations_errors_text(&a, &sb), 0);
	cr_assert(strstr(sb.buf, "oomlens.io/trim: \"always\" must be off, "
				 "test or on-pressure"),
		  "%s", sb.buf);
	cr_assert(strstr(sb.buf, "oomlens.io/trim: \"always\" must be off, "
				 "test or on-pressure; using the default "
				 "\"off\""),
		  "%s", sb.buf);
	cr_assert(strstr(sb.buf, "oomlens.io/jvm: \"x\" must be auto or off; "
				 "using the default \"auto\""),
		  "%s", sb.buf);
	cr_assert(strstr(sb.buf, "oomlens.io/capture: \"y\" must be \"true\" "
				 "or \"false\"; using the default \"unset: "
				 "kernel and cgroup data only\""),
		  "%s", sb.buf);
	/* a huge value is cut, not overflowed */
	{
		char big[2048];

		memset(big, 'x', sizeof(big));
		snprintf(big, sizeof(big), "{\"oomlens.io/trim\":\"%01000d\"}",
			 0);
		annot(big, &a);
		cr_assert_eq(a.n_errors, 1);
		cr_assert_eq(strlen(a.errors[0].value),
			     sizeof(a.errors[0].value) - 1);
	}
}

/* kube_not_injected_text() of {"oomlens.io/not-injected": v}; v given as
 * bytes (any, not only UTF-8). Returns the call's value; *out the text. */
static int not_injected(const char *v, size_t n, struct strbuf *out)
{
	struct json_object *o = json_object_new_object();
	int r;

	json_object_object_add(o, KUBE_ANNOT_NOT_INJECTED,
			       json_object_new_string_len(v, (int)n));
	json_object_object_add(o, "oomlens.io/capture",
			       json_object_new_string("true"));
	r = kube_not_injected_text(o, out);
	json_object_put(o);
	return r;
}

#define NI "oomlens sidecar not injected: "

Test(kube_annot, not_injected_absent_is_nothing)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o =
		json_tokener_parse("{\"oomlens.io/capture\":\"true\","
				   "\"oomlens.io/injected\":\"yes\"}");
	struct kube_annotations a;

	strbuf_init(&sb, 4096);
	cr_assert_eq(kube_not_injected_text(NULL, &sb), 0);
	cr_assert_eq(kube_not_injected_text(o, &sb), 0);
	cr_assert_eq(sb.len, 0);
	json_object_put(o);
	/* the mark is the injector's: never a refused value */
	annot("{\"oomlens.io/not-injected\":\"the namespace enforces "
	      "restricted\",\"oomlens.io/capture\":\"true\"}",
	      &a);
	cr_assert_eq(a.n_errors, 0);
	cr_assert_eq(a.capture, KUBE_CAPTURE_ON);
}

Test(kube_annot, not_injected_reason_as_given)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *why = "the namespace enforces Pod Security \"restricted\": "
			  "no sidecar without SYS_PTRACE sees the app — "
			  "none added";

	strbuf_init(&sb, 4096);
	cr_assert_eq(not_injected(why, strlen(why), &sb), 1);
	cr_assert_str_eq(sb.buf, NI "the namespace enforces Pod Security "
				    "\"restricted\": no sidecar without "
				    "SYS_PTRACE sees the app — none added");
}

struct ni_case {
	const char *v;
	size_t n;
	const char *want; /* after NI */
};

static const struct ni_case ni_cases[] = {
	/* C0 (newline, ESC, NUL), DEL, C1 CSI (c2 9b): each byte '?' */
	{"a\nb\033[31mc\177d", 11, "a?b?[31mc?d"},
	{"x\0y", 3, "x?y"},
	{"\302\233"
	 "2J",
	 4, "??2J"},
	/* not UTF-8: a lone continuation, a lead without its tail */
	{"\377\376 \200 \303", 6, "?? ? ?"},
	/* empty */
	{"", 0, "(no reason given)"},
};

Test(kube_annot, not_injected_controls_replaced)
{
	for (size_t i = 0; i < sizeof(ni_cases) / sizeof(ni_cases[0]); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		char want[512];

		strbuf_init(&sb, 4096);
		cr_assert_eq(not_injected(ni_cases[i].v, ni_cases[i].n, &sb), 1,
			     "case %zu", i);
		snprintf(want, sizeof(want), NI "%s", ni_cases[i].want);
		cr_assert_str_eq(sb.buf, want, "case %zu", i);
		cr_assert_eq(sb.len, strlen(sb.buf), "case %zu", i);
	}
}

Test(kube_annot, not_injected_not_a_string)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o =
		json_tokener_parse("{\"oomlens.io/not-injected\":{\"a\":1}}");

	strbuf_init(&sb, 4096);
	cr_assert_eq(kube_not_injected_text(o, &sb), 1);
	cr_assert_str_eq(sb.buf, NI "(no reason given)");
	json_object_put(o);
}

Test(kube_annot, not_injected_cut_at_256_bytes)
{
	char v[4096], want[512];
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 4096);
	/* exactly the cap: as it is */
	memset(v, 'x', KUBE_NOT_INJECTED_MAX);
	cr_assert_eq(not_injected(v, KUBE_NOT_INJECTED_MAX, &sb), 1);
	cr_assert_eq(sb.len, strlen(NI) + KUBE_NOT_INJECTED_MAX);
	cr_assert_eq(strstr(sb.buf, "..."), NULL);
	/* one more, and much more: 253 bytes and "..." */
	for (size_t n = KUBE_NOT_INJECTED_MAX + 1; n <= sizeof(v); n *= 4) {
		memset(v, 'x', sizeof(v));
		strbuf_reset(&sb);
		cr_assert_eq(
			not_injected(v, n < sizeof(v) ? n : sizeof(v), &sb), 1);
		cr_assert_eq(sb.len, strlen(NI) + KUBE_NOT_INJECTED_MAX, "%zu",
			     n);
		memset(want, 'x', KUBE_NOT_INJECTED_MAX - 3);
		memcpy(want + KUBE_NOT_INJECTED_MAX - 3, "...", 4);
		cr_assert_str_eq(sb.buf + strlen(NI), want);
	}
	/* never inside a character: "é" is c3 a9, byte 253 is a tail */
	for (size_t i = 0; i < 300; i += 2)
		memcpy(v + i, "\303\251", 2);
	strbuf_reset(&sb);
	cr_assert_eq(not_injected(v, 300, &sb), 1);
	cr_assert_eq(sb.len, strlen(NI) + 252 + 3);
	cr_assert_eq(memcmp(sb.buf + strlen(NI), v, 252), 0);
	cr_assert_str_eq(sb.buf + strlen(NI) + 252, "...");
	/* a 4-byte character straddling the cut */
	memset(v, 'x', 251);
	memcpy(v + 251, "\360\237\230\200", 4); /* U+1F600 at 251..254 */
	memset(v + 255, 'y', 100);
	strbuf_reset(&sb);
	cr_assert_eq(not_injected(v, 355, &sb), 1);
	cr_assert_eq(sb.len, strlen(NI) + 251 + 3);
	cr_assert_str_eq(sb.buf + strlen(NI) + 251, "...");
}
