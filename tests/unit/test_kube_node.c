/* SPDX-License-Identifier: Apache-2.0 */
/* kube_node: pod cgroup paths of both drivers and every runtime (shapes as
 * measured on the real node here and documented by kubelet / CRI-O /
 * containerd), container IDs, and the oomlens.io/ annotations. */
#include <criterion/criterion.h>
#include <errno.h>
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
