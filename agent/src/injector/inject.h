/* SPDX-License-Identifier: Apache-2.0 */
/* inject: the sidecar injector's mutation (docs/injector.md), a pure
 * function from an admission.k8s.io/v1 AdmissionReview request to the
 * AdmissionReview response the webhook sends back. No I/O, no globals:
 * the webhook server (webhook.c) and `oomlens-agent inject-review` call
 * it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "kube/kube_pss.h"

#define INJECT_SIDECAR_NAME "oomlens-sidecar"
#define INJECT_SPOOL_VOLUME "oomlens-spool"
#define INJECT_PODINFO_VOLUME "oomlens-podinfo"
/* The sidecar's pod-mode defaults (sidecar/src/pod.h). */
#define INJECT_SPOOL_PATH "/var/run/oomlens-spool"
#define INJECT_PODINFO_PATH "/etc/oomlens"
#define INJECT_NMT_FLAG "-XX:NativeMemoryTracking=summary"
/* The sidecar's env naming the level it was shaped for. */
#define INJECT_LEVEL_ENV "OOMLENS_POD_SECURITY"
struct inject_config {
	const char *image;	 /* the sidecar's image; required */
	const char *pull_policy; /* NULL: the cluster's default */
	const char *cpu_request; /* Kubernetes quantities; NULL: unset */
	const char *memory_request;
	const char *memory_limit;
	const char *spool_size; /* the emptyDir's sizeLimit; NULL: none */
	/* the cluster runs native sidecars (1.29+): an init container
	 * with restartPolicy: Always instead of a regular container */
	bool native_sidecar;
	/* the Pod Security level the pod's namespace enforces (the
	 * webhook's path says it, docs/injector.md): the sidecar is shaped
	 * to be admitted at it, or not injected */
	enum kube_pss_level level;
};

/* The most a review's json-c tree may take (jget_tree_cost): with the
 * copy a baseline or restricted injection checks, twice that over the
 * webhook's ~16 MiB at rest stays under the chart's 64 MiB limit. json-c
 * takes ~37 bytes for each byte of a pod's environment variables: a
 * review of 420 KB of them takes 15 MiB, 1.3 MB (near etcd's 1.5 MiB
 * object limit) 44 MiB; 3 MB of "{}," would take 780 MiB. Pods over it
 * are admitted as they are, with a warning. (The checked copy shares the
 * scalars and leaves out env, envFrom, command and args.) */
#define INJECT_MAX_TREE (16u << 20)

/* The defaults the webhook starts from (no image: the caller sets it;
 * level privileged). */
void inject_config_init(struct inject_config *cfg);

/* Reads the AdmissionReview review_json[0..len) and appends the
 * AdmissionReview response to ret_response (on success only; it is left
 * as it was on failure). The response always allows the pod: a pod with
 * oomlens.io/capture: "true", not yet injected, gets a JSONPatch (base64,
 * patchType JSONPatch) adding the sidecar, shareProcessNamespace, the
 * spool and podinfo volumes, and with oomlens.io/jvm-nmt: "true" the NMT
 * flag in each app container's JAVA_TOOL_OPTIONS. The sidecar is the most
 * capable one cfg->level admits (privileged: root with its five
 * capabilities; baseline and restricted: the app container's uid and gid
 * with none, or under baseline, when the uid is not stated or 0, root
 * with SETUID, SETGID and KILL); the mutated pod is checked with
 * kube_pss_check() at that level and the patch is dropped when it adds a
 * violation. A pod that asked for capture and is not injected (hostPID,
 * an explicit shareProcessNamespace: false, no admissible sidecar) gets
 * only the oomlens.io/not-injected annotation saying why, and the same as
 * a warning. Everything else (not a pod, not CREATE, not annotated,
 * already injected, a malformed review) is allowed as is, with a warning
 * when the review could not be read or its tree would take more than
 * INJECT_MAX_TREE (jget_tree_cost: such a review is not parsed, its uid
 * read by jget_scan_str). Returns 0, INJECT_TOO_LARGE (answered so,
 * unread), -ENOMEM, -E2BIG (ret_response's max) or -EFBIG: too large,
 * and no request.uid to answer. */
#define INJECT_TOO_LARGE 1
int inject_review(const char *review_json, size_t len,
		  const struct inject_config *cfg, struct strbuf *ret_response);

/* Whether the API server's /version body (major "1", minor "29" or
 * "29+") is new enough for native sidecars (1.29+). Returns 0 and sets
 * *ret, or -EBADMSG when the body does not say. Pure. */
int inject_parse_version(const char *body, size_t len, bool *ret);
