/* SPDX-License-Identifier: Apache-2.0 */
/* kube: what a node agent needs to tie the kernel's world to the API's —
 * a pod's cgroup path to its UID and container ID (both cgroup drivers,
 * containerd / CRI-O / docker, v1 and v2), container IDs as the API writes
 * them, and the oomlens.io/ annotations of a pod. All pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kube/kube.h"

enum kube_qos {
	KUBE_QOS_UNKNOWN,
	KUBE_QOS_GUARANTEED,
	KUBE_QOS_BURSTABLE,
	KUBE_QOS_BESTEFFORT,
};

enum kube_cg_driver {
	KUBE_CG_CGROUPFS, /* /kubepods/burstable/pod<uid>/<id> */
	KUBE_CG_SYSTEMD,  /* kubepods.slice/…-pod<uid_>.slice/…<id>.scope */
};

#define KUBE_UID_MAX 40
#define KUBE_CTR_ID_MAX 72

struct kube_cgpath {
	enum kube_qos qos;
	enum kube_cg_driver driver;
	char pod_uid[KUBE_UID_MAX]; /* with dashes, as in metadata.uid */
	char container_id[KUBE_CTR_ID_MAX]; /* bare id; "" = the pod's own */
	const char *runtime; /* "containerd", "cri-o", "docker", "" (bare) */
	bool conmon; /* crio-conmon-<id>: CRI-O's monitor, not the app */
};

/* Finds the pod and container a memory cgroup path belongs to: the path as
 * the kernel prints task_memcg (any prefix before kubepods, e.g. a
 * --cgroup-root, is allowed; components below the container, such as
 * crun's "/container" leaf, are ignored). Returns 0 and fills *ret,
 * -ENOENT when the path is not a pod's (no kubepods component, or only
 * the QoS level), -EBADMSG when it looks like one but a part is malformed.
 * ret untouched on failure. */
int kube_cgpath_parse(const char *path, struct kube_cgpath *ret);

const char *kube_qos_name(enum kube_qos q);

/* "containerd://abc…" → "abc…" (any "<scheme>://" prefix); a bare ID is
 * returned as is. Returns a pointer into id, or NULL for NULL/empty. */
const char *kube_container_id_bare(const char *id);

/* The container of pod whose current or last-terminated instance has
 * this bare ID (the killed instance is "last" once the status catches
 * up). NULL when none. *ret_last (optional) says which matched. */
const struct kube_container *kube_pod_find_container(const struct kube_pod *p,
						     const char *bare_id,
						     bool *ret_last);

/* ---- annotations (DESIGN "Opt-in annotations on a pod") -------------- */

enum kube_capture_mode {
	KUBE_CAPTURE_DEFAULT, /* no annotation: kernel + cgroup data */
	KUBE_CAPTURE_ON,      /* "true": the sidecar's snapshots too */
	KUBE_CAPTURE_OFF,     /* "false": no reports for this pod */
};
enum kube_jvm_mode { KUBE_JVM_AUTO, KUBE_JVM_OFF };
enum kube_trim_mode { KUBE_TRIM_OFF, KUBE_TRIM_TEST, KUBE_TRIM_ON_PRESSURE };

#define KUBE_ANNOT_MAX_CONTAINERS 16
#define KUBE_ANNOT_MAX_THRESHOLDS 8
#define KUBE_ANNOT_MAX_ERRORS 6

struct kube_annot_error {
	char key[40];
	char value[64]; /* cut */
	char why[96];
	char dflt[48]; /* the value used instead, as a user would write it */
};

struct kube_annotations {
	enum kube_capture_mode capture;
	size_t n_containers; /* 0 = all but the sidecar */
	char containers[KUBE_ANNOT_MAX_CONTAINERS][64];
	size_t n_thresholds;
	unsigned thresholds[KUBE_ANNOT_MAX_THRESHOLDS]; /* % of the limit */
	enum kube_jvm_mode jvm;
	bool jvm_nmt;
	enum kube_trim_mode trim;
	bool jvm_histogram;		     /* oomlens.io/jvm-histogram */
	unsigned jvm_histogram_max_pause_ms; /* 0: the sidecar's default */
	/* Values refused (each then has its default); a pod gets one
	 * Warning Event (OOMLensConfig) listing them. */
	size_t n_errors;
	struct kube_annot_error errors[KUBE_ANNOT_MAX_ERRORS];
};

/* Reads the oomlens.io/ annotations from a pod's metadata.annotations
 * object (NULL = none). Never fails: a bad value keeps its default and
 * is listed in ret->errors. Pure. */
void kube_annotations_parse(struct json_object *annotations,
			    struct kube_annotations *ret);

/* One line for the OOMLensConfig Event, each refused value with the
 * default used instead: "oomlens.io/trim: \"x\" must be off, test or
 * on-pressure; using the default \"off\"". Returns sb's length or -E2BIG. */
int kube_annotations_errors_text(const struct kube_annotations *a,
				 struct strbuf *sb);

/* The injector's mark on a pod it left without the sidecar (no sidecar a
 * Pod Security level admits could do useful work there): its value is the
 * reason, a sentence. The agent turns it into an OOMLensConfig Event. */
#define KUBE_ANNOT_NOT_INJECTED "oomlens.io/not-injected"
/* The most of that reason an Event carries, in bytes. */
#define KUBE_NOT_INJECTED_MAX 256

/* When annotations (a pod's metadata.annotations, NULL = none) hold
 * oomlens.io/not-injected, appends "oomlens sidecar not injected:
 * <reason>" to sb. Whoever may annotate the pod writes that value, so it
 * is untrusted: C0 controls, DEL, C1 controls and bytes that are not UTF-8
 * become '?', a value over KUBE_NOT_INJECTED_MAX bytes is cut at a
 * character boundary to end in "..." within that many bytes, an empty one
 * (or not a string) reads "(no reason given)". Returns 1 when appended, 0
 * when the annotation is absent, -E2BIG / -ENOMEM from sb. Pure. */
int kube_not_injected_text(struct json_object *annotations, struct strbuf *sb);
