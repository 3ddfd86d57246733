/* SPDX-License-Identifier: Apache-2.0 */
/* kube_pss: the Pod Security Standards (privileged, baseline, restricted)
 * as one pure function over a Pod's JSON, as Pod Security admission
 * (Kubernetes 1.23+) applies them at its "latest" version — the checks of
 * 1.36 — for clusters that have no such admission (the test node's 1.20).
 * docs/security.md says what is checked and where we are stricter. No
 * I/O, no globals, no allocation; it never blocks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;
struct strbuf;

enum kube_pss_level {
	KUBE_PSS_PRIVILEGED, /* admits everything */
	KUBE_PSS_BASELINE,   /* prevents known privilege escalations */
	KUBE_PSS_RESTRICTED, /* baseline plus the hardening practices */
};

/* One row per upstream check; kube_pss_check_name() is its ID. */
enum kube_pss_check {
	/* baseline */
	KUBE_PSS_C_HOST_PROCESS,     /* windowsHostProcess */
	KUBE_PSS_C_HOST_NAMESPACES,  /* hostNamespaces */
	KUBE_PSS_C_PRIVILEGED,	     /* privileged */
	KUBE_PSS_C_CAPS_BASELINE,    /* capabilities_baseline */
	KUBE_PSS_C_HOST_PATH,	     /* hostPathVolumes */
	KUBE_PSS_C_HOST_PORTS,	     /* hostPorts */
	KUBE_PSS_C_HOST_PROBES,	     /* hostProbesAndHostLifecycle */
	KUBE_PSS_C_APPARMOR,	     /* appArmorProfile */
	KUBE_PSS_C_SELINUX,	     /* seLinuxOptions */
	KUBE_PSS_C_PROC_MOUNT,	     /* procMount */
	KUBE_PSS_C_SECCOMP_BASELINE, /* seccompProfile_baseline */
	KUBE_PSS_C_SYSCTLS,	     /* sysctls */
	/* restricted; at that level, four of them replace a baseline one */
	KUBE_PSS_C_VOLUMES,	    /* restrictedVolumes, for hostPathVolumes */
	KUBE_PSS_C_PRIV_ESCALATION, /* allowPrivilegeEscalation */
	KUBE_PSS_C_RUN_AS_NON_ROOT, /* runAsNonRoot */
	KUBE_PSS_C_RUN_AS_USER,	    /* runAsUser */
	KUBE_PSS_C_SECCOMP_RESTRICTED, /* seccompProfile_restricted, for
					  _baseline */
	KUBE_PSS_C_CAPS_RESTRICTED, /* capabilities_restricted, for _baseline */
	KUBE_PSS_C_PROC_MOUNT_RESTRICTED, /* procMount_restricted, for procMount
					   */
	KUBE_PSS_CHECK_COUNT,		  /* not a check: how many there are */
};

#define KUBE_PSS_MAX_VIOLATIONS 32
#define KUBE_PSS_PATH_MAX 160
#define KUBE_PSS_VALUE_MAX 48

struct kube_pss_violation {
	enum kube_pss_check check;
	/* the field, as the API names it:
	 * "spec.containers[1].securityContext.privileged",
	 * "metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]";
	 * a longer one is cut and ends in "..." */
	char path[KUBE_PSS_PATH_MAX];
	/* what it holds, as JSON: true, 0, "SYS_PTRACE", {...} for an object,
	 * [...] for an array; "" when the field is unset (a value the level
	 * requires is missing). Cut with "..."; control bytes become '?'. */
	char value[KUBE_PSS_VALUE_MAX];
};

struct kube_pss_result {
	size_t n;    /* violations in v[] */
	size_t more; /* further ones, counted only */
	struct kube_pss_violation v[KUBE_PSS_MAX_VIOLATIONS];
};

/* "privileged", "baseline" or "restricted" (the namespace label's values)
 * → *ret. Returns 0, or -EINVAL for anything else (NULL too); *ret is
 * untouched then. */
int kube_pss_level_parse(const char *s, enum kube_pss_level *ret);

/* The level's name as kube_pss_level_parse() takes it; "" when unknown. */
const char *kube_pss_level_name(enum kube_pss_level level);

/* The upstream check ID ("capabilities_baseline"); "" when unknown. */
const char *kube_pss_check_name(enum kube_pss_check check);

/* Checks the Pod object pod (apiVersion v1, kind Pod: metadata for the
 * AppArmor annotations, spec for the rest) against level, as admission
 * would on create. Every container check covers containers,
 * initContainers and ephemeralContainers. A field of the wrong JSON type
 * violates each check that reads it (nothing is guessed); absent and null
 * fields are unset. Returns 0 when the pod is admitted, 1 when not, with
 * the violations in *ret, in check order, then pod before containers;
 * -EBADMSG when pod is NULL, not a JSON object or without a spec object
 * (at every level), -EINVAL for a bad level or a NULL ret. *ret is written
 * only when 0 or 1 is returned. Pure; pod is only read; kind is not
 * looked at. */
int kube_pss_check(const struct json_object *pod, enum kube_pss_level level,
		   struct kube_pss_result *ret);

/* Appends one line naming each violation, for a warning or a log:
 * "capabilities_baseline spec.containers[1].securityContext.capabilities
 * .add[0]=\"SYS_PTRACE\"; ...; and 3 more" ("=" alone when unset). Returns
 * sb's length, or -E2BIG with sb as it was. */
int kube_pss_result_text(const struct kube_pss_result *r, struct strbuf *sb);
