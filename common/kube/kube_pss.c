/* SPDX-License-Identifier: Apache-2.0 */
/* kube_pss: the Pod Security Standards, one table row per upstream check
 * (the rules of k8s.io/pod-security-admission/policy at 1.36, read there
 * and in the kubernetes.io page; the code is ours). Each check reads the
 * JSON itself, typed: a field of another type than the API's is reported
 * under the check that read it, so a malformed pod is never admitted. */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube_pss.h"
#include "base/jget.h"
#include "base/strbuf.h"
#include "base/util.h"

enum { ABSENT, FOUND, BAD };

struct ctx {
	struct json_object *pod, *spec;
	bool pod_non_root; /* spec.securityContext.runAsNonRoot: true */
	bool pod_seccomp;  /* a valid spec.securityContext.seccompProfile */
	struct kube_pss_result *r;
};

typedef void pod_fn(struct ctx *c, enum kube_pss_check id);
/* o is an object, or NULL for an element that is JSON null (Go decodes
 * it to an empty struct: everything unset) */
typedef void elem_fn(struct ctx *c, enum kube_pss_check id,
		     struct json_object *o, const char *base);

/* ---- values in the result ---------------------------------------------- */

/* Keys and values come from the pod: no control bytes in a log line. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* After a snprintf into s[n] that wrote w: a cut string ends in "...". */
static void finish(char *s, size_t n, int w)
{
	if (w < 0)
		s[0] = '\0';
	else if ((size_t)w >= n && n >= 4)
		memcpy(s + n - 4, "...", 4);
	sanitize(s);
}

static void format_value(struct json_object *v, char *buf, size_t n)
{
	int w;

	switch (v ? json_object_get_type(v) : json_type_null) {
	case json_type_boolean:
		w = snprintf(buf, n, "%s",
			     json_object_get_boolean(v) ? "true" : "false");
		break;
	case json_type_int:
		if (json_object_get_int64(v) == INT64_MAX)
			w = snprintf(buf, n, "%" PRIu64,
				     json_object_get_uint64(v));
		else
			w = snprintf(buf, n, "%" PRId64,
				     json_object_get_int64(v));
		break;
	case json_type_double:
		w = snprintf(buf, n, "%.17g", json_object_get_double(v));
		break;
	case json_type_string:
		w = snprintf(buf, n, "\"%s\"", json_object_get_string(v));
		break;
	case json_type_object:
		w = snprintf(buf, n, "{...}");
		break;
	case json_type_array:
		w = snprintf(buf, n, "[...]");
		break;
	default:
		w = snprintf(buf, n, "%s", "");
		break;
	}
	finish(buf, n, w);
}

/* Records a violation of id at the path fmt names, holding v (NULL:
 * unset). The same check and path twice (a malformed parent that two
 * reads met) is one violation. */
static _printf_(4, 5) void report(struct ctx *c, enum kube_pss_check id,
				  struct json_object *v, const char *fmt, ...)
{
	struct kube_pss_result *r = c->r;
	struct kube_pss_violation x = {.check = id};
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(x.path, sizeof(x.path), fmt, ap);
	va_end(ap);
	finish(x.path, sizeof(x.path), w);
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].check == id && streq(r->v[i].path, x.path))
			return;
	if (r->n == KUBE_PSS_MAX_VIOLATIONS) {
		r->more++;
		return;
	}
	format_value(v, x.value, sizeof(x.value));
	r->v[r->n++] = x;
}

/* ---- typed reads --------------------------------------------------------- */

/* Follows rel ("securityContext.capabilities.add") down from o: every
 * component but the last must be an object, the last of type want
 * (json_type_null: any). Returns FOUND with *ret set; ABSENT when a
 * component is missing or null; BAD when one has another type, with *ret
 * that value and *ret_len the length of rel up to and including it. */
static int look(struct json_object *o, const char *rel, enum json_type want,
		struct json_object **ret, size_t *ret_len)
{
	const char *p = rel;

	for (;;) {
		const char *e = strchrnul(p, '.');
		size_t n = (size_t)(e - p);
		enum json_type t = *e ? json_type_object : want;
		struct json_object *v;
		char key[40];

		if (n >= sizeof(key))
			return ABSENT; /* our own paths are shorter */
		memcpy(key, p, n);
		key[n] = '\0';
		v = jget(o, key);
		if (!v)
			return ABSENT;
		if (t != json_type_null && !json_object_is_type(v, t)) {
			*ret = v;
			*ret_len = (size_t)(e - rel);
			return BAD;
		}
		if (!*e) {
			*ret = v;
			return FOUND;
		}
		o = v;
		p = e + 1;
	}
}

/* look(), reporting a field of the wrong type as a violation of id;
 * base is the path of o ("" for the pod). *ret is NULL unless FOUND. */
static int field(struct ctx *c, enum kube_pss_check id, struct json_object *o,
		 const char *base, const char *rel, enum json_type want,
		 struct json_object **ret)
{
	struct json_object *v = NULL;
	size_t len = 0;
	int s = look(o, rel, want, &v, &len);

	if (s == BAD)
		report(c, id, v, "%s%s%.*s", base, *base ? "." : "", (int)len,
		       rel);
	*ret = s == FOUND ? v : NULL;
	return s;
}

static bool in(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (streq(s, *set))
			return true;
	return false;
}

/* The string at rel is set and not one of allowed (NULL-terminated). */
static void only(struct ctx *c, enum kube_pss_check id, struct json_object *o,
		 const char *base, const char *rel, const char *const *allowed)
{
	struct json_object *v;

	if (field(c, id, o, base, rel, json_type_string, &v) == FOUND &&
	    !in(json_object_get_string(v), allowed))
		report(c, id, v, "%s.%s", base, rel);
}

static void forbid_true(struct ctx *c, enum kube_pss_check id,
			struct json_object *o, const char *base,
			const char *rel)
{
	struct json_object *v;

	if (field(c, id, o, base, rel, json_type_boolean, &v) == FOUND &&
	    json_object_get_boolean(v))
		report(c, id, v, "%s.%s", base, rel);
}

/* Calls fn for each element of the array at rel under o (a list or an
 * element of the wrong type is a violation of id). */
static void each(struct ctx *c, enum kube_pss_check id, struct json_object *o,
		 const char *base, const char *rel, elem_fn *fn)
{
	struct json_object *a;

	if (field(c, id, o, base, rel, json_type_array, &a) != FOUND)
		return;
	for (size_t i = 0; i < jget_len(a); i++) {
		struct json_object *e = jget_idx(a, i);
		char path[KUBE_PSS_PATH_MAX];

		snprintf(path, sizeof(path), "%s.%s[%zu]", base, rel, i);
		if (e && !json_object_is_type(e, json_type_object))
			report(c, id, e, "%s", path);
		else
			fn(c, id, e, path);
	}
}

/* Upstream's visitContainers: every container kind of the spec. */
static void each_container(struct ctx *c, enum kube_pss_check id, elem_fn *fn)
{
	static const char *const kinds[] = {"initContainers", "containers",
					    "ephemeralContainers"};

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
		each(c, id, c->spec, "spec", kinds[k], fn);
}

/* A profile object at rel (…appArmorProfile, …seccompProfile) whose type
 * must be one of types. Returns ABSENT (no profile), FOUND (a valid one)
 * or BAD (reported: a missing type counts as a bad one, as upstream). */
static int profile(struct ctx *c, enum kube_pss_check id, struct json_object *o,
		   const char *base, const char *rel, const char *const *types)
{
	struct json_object *p, *t;
	char path[KUBE_PSS_PATH_MAX];
	int s = field(c, id, o, base, rel, json_type_object, &p);

	if (s != FOUND)
		return s;
	snprintf(path, sizeof(path), "%s.%s", base, rel);
	s = field(c, id, p, path, "type", json_type_string, &t);
	if (s == FOUND && in(json_object_get_string(t), types))
		return FOUND;
	if (s != BAD)
		report(c, id, t, "%s.type", path);
	return BAD;
}

/* ---- baseline ------------------------------------------------------------ */

#define HOST_PROCESS "securityContext.windowsOptions.hostProcess"
#define CAPS_ADD "securityContext.capabilities.add"
#define CAPS_DROP "securityContext.capabilities.drop"
#define APPARMOR "securityContext.appArmorProfile"
#define SECCOMP "securityContext.seccompProfile"
#define PROC_MOUNT "securityContext.procMount"

static const char *const profile_types[] = {"RuntimeDefault", "Localhost",
					    NULL};

static void pod_host_process(struct ctx *c, enum kube_pss_check id)
{
	forbid_true(c, id, c->spec, "spec", HOST_PROCESS);
}

static void ctr_host_process(struct ctx *c, enum kube_pss_check id,
			     struct json_object *o, const char *base)
{
	forbid_true(c, id, o, base, HOST_PROCESS);
}

static void pod_host_namespaces(struct ctx *c, enum kube_pss_check id)
{
	forbid_true(c, id, c->spec, "spec", "hostNetwork");
	forbid_true(c, id, c->spec, "spec", "hostPID");
	forbid_true(c, id, c->spec, "spec", "hostIPC");
}

static void ctr_privileged(struct ctx *c, enum kube_pss_check id,
			   struct json_object *o, const char *base)
{
	forbid_true(c, id, o, base, "securityContext.privileged");
}

/* Each capabilities.add[] must be one of allowed. */
static void caps_add_within(struct ctx *c, enum kube_pss_check id,
			    struct json_object *o, const char *base,
			    const char *const *allowed)
{
	struct json_object *a;

	if (field(c, id, o, base, CAPS_ADD, json_type_array, &a) != FOUND)
		return;
	for (size_t i = 0; i < jget_len(a); i++) {
		struct json_object *v = jget_idx(a, i);

		if (!v || !json_object_is_type(v, json_type_string) ||
		    !in(json_object_get_string(v), allowed))
			report(c, id, v, "%s." CAPS_ADD "[%zu]", base, i);
	}
}

static void ctr_caps_baseline(struct ctx *c, enum kube_pss_check id,
			      struct json_object *o, const char *base)
{
	/* the container runtimes' default set */
	static const char *const caps[] = {
		"AUDIT_WRITE", "CHOWN",	 "DAC_OVERRIDE", "FOWNER",
		"FSETID",      "KILL",	 "MKNOD",	 "NET_BIND_SERVICE",
		"SETFCAP",     "SETGID", "SETPCAP",	 "SETUID",
		"SYS_CHROOT",  NULL,
	};

	caps_add_within(c, id, o, base, caps);
}

static void vol_host_path(struct ctx *c, enum kube_pss_check id,
			  struct json_object *o, const char *base)
{
	struct json_object *v;

	if (field(c, id, o, base, "hostPath", json_type_null, &v) == FOUND)
		report(c, id, v, "%s.hostPath", base);
}

static void pod_host_path(struct ctx *c, enum kube_pss_check id)
{
	each(c, id, c->spec, "spec", "volumes", vol_host_path);
}

static void port_host(struct ctx *c, enum kube_pss_check id,
		      struct json_object *o, const char *base)
{
	struct json_object *v;

	if (field(c, id, o, base, "hostPort", json_type_int, &v) == FOUND &&
	    json_object_get_int64(v) != 0)
		report(c, id, v, "%s.hostPort", base);
}

static void ctr_host_ports(struct ctx *c, enum kube_pss_check id,
			   struct json_object *o, const char *base)
{
	each(c, id, o, base, "ports", port_host);
}

/* Probes and lifecycle handlers must not point at another host (1.34). */
static void ctr_host_probes(struct ctx *c, enum kube_pss_check id,
			    struct json_object *o, const char *base)
{
	static const char *const handlers[] = {
		"livenessProbe",       "readinessProbe",    "startupProbe",
		"lifecycle.postStart", "lifecycle.preStop",
	};
	static const char *const actions[] = {"httpGet", "tcpSocket"};

	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++)
		for (size_t j = 0; j < ARRAY_SIZE(actions); j++) {
			struct json_object *v;
			char rel[64];

			snprintf(rel, sizeof(rel), "%s.%s.host", handlers[i],
				 actions[j]);
			if (field(c, id, o, base, rel, json_type_string, &v) ==
				    FOUND &&
			    *json_object_get_string(v))
				report(c, id, v, "%s.%s", base, rel);
		}
}

#define APPARMOR_KEY "container.apparmor.security.beta.kubernetes.io/"

static void pod_apparmor(struct ctx *c, enum kube_pss_check id)
{
	struct json_object *ann;

	profile(c, id, c->spec, "spec", APPARMOR, profile_types);
	if (field(c, id, c->pod, "", "metadata.annotations", json_type_object,
		  &ann) != FOUND)
		return;
	json_object_object_foreach (ann, key, val) {
		const char *s;

		if (!startswith(key, APPARMOR_KEY))
			continue;
		s = val && json_object_is_type(val, json_type_string)
			    ? json_object_get_string(val)
			    : NULL;
		if (!s || !(streq(s, "") || streq(s, "runtime/default") ||
			    startswith(s, "localhost/")))
			report(c, id, val, "metadata.annotations[%s]", key);
	}
}

static void ctr_apparmor(struct ctx *c, enum kube_pss_check id,
			 struct json_object *o, const char *base)
{
	profile(c, id, o, base, APPARMOR, profile_types);
}

/* seLinuxOptions (pod or container): a container type, no user, no role. */
static void selinux(struct ctx *c, enum kube_pss_check id,
		    struct json_object *o, const char *base)
{
	static const char *const types[] = {
		"",
		"container_t",
		"container_init_t",
		"container_kvm_t",
		"container_engine_t",
		NULL,
	};
	static const char *const none[] = {"", NULL};
	struct json_object *opts;
	char path[KUBE_PSS_PATH_MAX];

	if (field(c, id, o, base, "securityContext.seLinuxOptions",
		  json_type_object, &opts) != FOUND)
		return;
	snprintf(path, sizeof(path), "%s.securityContext.seLinuxOptions", base);
	only(c, id, opts, path, "type", types);
	only(c, id, opts, path, "user", none);
	only(c, id, opts, path, "role", none);
}

static void pod_selinux(struct ctx *c, enum kube_pss_check id)
{
	selinux(c, id, c->spec, "spec");
}

static void ctr_proc_mount(struct ctx *c, enum kube_pss_check id,
			   struct json_object *o, const char *base)
{
	static const char *const dflt[] = {"Default", NULL};

	only(c, id, o, base, PROC_MOUNT, dflt);
}

static void pod_seccomp_baseline(struct ctx *c, enum kube_pss_check id)
{
	profile(c, id, c->spec, "spec", SECCOMP, profile_types);
}

static void ctr_seccomp_baseline(struct ctx *c, enum kube_pss_check id,
				 struct json_object *o, const char *base)
{
	profile(c, id, o, base, SECCOMP, profile_types);
}

static void sysctl_name(struct ctx *c, enum kube_pss_check id,
			struct json_object *o, const char *base)
{
	/* namespaced and isolated from other pods: 1.0, 1.27, 1.29, 1.32 */
	static const char *const safe[] = {
		"kernel.shm_rmid_forced",
		"net.ipv4.ip_local_port_range",
		"net.ipv4.tcp_syncookies",
		"net.ipv4.ping_group_range",
		"net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_fin_timeout",
		"net.ipv4.tcp_keepalive_intvl",
		"net.ipv4.tcp_keepalive_probes",
		"net.ipv4.tcp_rmem",
		"net.ipv4.tcp_wmem",
		NULL,
	};
	struct json_object *v;
	int s = field(c, id, o, base, "name", json_type_string, &v);

	if (s == ABSENT || (s == FOUND && !in(json_object_get_string(v), safe)))
		report(c, id, v, "%s.name", base);
}

static void pod_sysctls(struct ctx *c, enum kube_pss_check id)
{
	each(c, id, c->spec, "spec", "securityContext.sysctls", sysctl_name);
}

/* ---- restricted ---------------------------------------------------------- */

/* Every key of a volume but its name is its source (API validation allows
 * one); a volume without any is an emptyDir once the API server has
 * applied its defaults. */
static void vol_restricted(struct ctx *c, enum kube_pss_check id,
			   struct json_object *o, const char *base)
{
	static const char *const sources[] = {
		"configMap", "csi",   "downwardAPI",	       "emptyDir",
		"ephemeral", "image", "persistentVolumeClaim", "projected",
		"secret",    NULL,
	};

	if (!o)
		return;
	json_object_object_foreach (o, key, val) {
		if (!val || streq(key, "name"))
			continue;
		if (!in(key, sources) ||
		    !json_object_is_type(val, json_type_object))
			report(c, id, val, "%s.%s", base, key);
	}
}

static void pod_volumes(struct ctx *c, enum kube_pss_check id)
{
	each(c, id, c->spec, "spec", "volumes", vol_restricted);
}

static void ctr_priv_escalation(struct ctx *c, enum kube_pss_check id,
				struct json_object *o, const char *base)
{
	struct json_object *v;
	int s = field(c, id, o, base,
		      "securityContext.allowPrivilegeEscalation",
		      json_type_boolean, &v);

	/* must be false, explicitly: unset means allowed */
	if (s == ABSENT || (s == FOUND && json_object_get_boolean(v)))
		report(c, id, v, "%s.securityContext.allowPrivilegeEscalation",
		       base);
}

static void pod_non_root(struct ctx *c, enum kube_pss_check id)
{
	struct json_object *v;
	int s = field(c, id, c->spec, "spec", "securityContext.runAsNonRoot",
		      json_type_boolean, &v);

	if (s == FOUND && json_object_get_boolean(v))
		c->pod_non_root = true;
	else if (s == FOUND)
		report(c, id, v, "spec.securityContext.runAsNonRoot");
}

/* A container's own setting wins; unset, the pod's must be true. */
static void ctr_non_root(struct ctx *c, enum kube_pss_check id,
			 struct json_object *o, const char *base)
{
	struct json_object *v;
	int s = field(c, id, o, base, "securityContext.runAsNonRoot",
		      json_type_boolean, &v);

	if ((s == FOUND && !json_object_get_boolean(v)) ||
	    (s == ABSENT && !c->pod_non_root))
		report(c, id, v, "%s.securityContext.runAsNonRoot", base);
}

static void run_as_user(struct ctx *c, enum kube_pss_check id,
			struct json_object *o, const char *base)
{
	struct json_object *v;

	if (field(c, id, o, base, "securityContext.runAsUser", json_type_int,
		  &v) == FOUND &&
	    json_object_get_int64(v) == 0)
		report(c, id, v, "%s.securityContext.runAsUser", base);
}

static void pod_run_as_user(struct ctx *c, enum kube_pss_check id)
{
	run_as_user(c, id, c->spec, "spec");
}

static void pod_seccomp_restricted(struct ctx *c, enum kube_pss_check id)
{
	c->pod_seccomp = profile(c, id, c->spec, "spec", SECCOMP,
				 profile_types) == FOUND;
}

/* Set on the container, or validly on the pod. */
static void ctr_seccomp_restricted(struct ctx *c, enum kube_pss_check id,
				   struct json_object *o, const char *base)
{
	if (profile(c, id, o, base, SECCOMP, profile_types) == ABSENT &&
	    !c->pod_seccomp)
		report(c, id, NULL, "%s." SECCOMP, base);
}

static void ctr_caps_restricted(struct ctx *c, enum kube_pss_check id,
				struct json_object *o, const char *base)
{
	static const char *const caps[] = {"NET_BIND_SERVICE", NULL};
	struct json_object *d;
	bool all = false;

	caps_add_within(c, id, o, base, caps);
	if (field(c, id, o, base, CAPS_DROP, json_type_array, &d) == BAD)
		return;
	for (size_t i = 0; i < jget_len(d); i++) {
		struct json_object *v = jget_idx(d, i);

		if (v && json_object_is_type(v, json_type_string))
			all = all || streq(json_object_get_string(v), "ALL");
		else
			report(c, id, v, "%s." CAPS_DROP "[%zu]", base, i);
	}
	if (!all)
		report(c, id, d, "%s." CAPS_DROP, base);
}

/* ---- the table ----------------------------------------------------------- */

#define NONE (-1)

struct check {
	const char *name; /* upstream's check ID */
	enum kube_pss_level level;
	int replaces; /* the baseline check it stands for there, or NONE */
	pod_fn *pod;  /* the pod-level part, run first; or NULL */
	elem_fn *ctr; /* run on every container; or NULL */
};

/* Upstream's 1.35 user-namespace relaxations (hostUsers: false) and 1.25
 * Windows exemptions (spec.os.name: windows) are left out on purpose:
 * neither field exists on the API servers this stands in for, which drop
 * them, so a pod could claim either and still run as it is. */
static const struct check checks[KUBE_PSS_CHECK_COUNT] = {
	[KUBE_PSS_C_HOST_PROCESS] = {"windowsHostProcess", KUBE_PSS_BASELINE,
				     NONE, pod_host_process, ctr_host_process},
	[KUBE_PSS_C_HOST_NAMESPACES] = {"hostNamespaces", KUBE_PSS_BASELINE,
					NONE, pod_host_namespaces, NULL},
	[KUBE_PSS_C_PRIVILEGED] = {"privileged", KUBE_PSS_BASELINE, NONE, NULL,
				   ctr_privileged},
	[KUBE_PSS_C_CAPS_BASELINE] = {"capabilities_baseline",
				      KUBE_PSS_BASELINE, NONE, NULL,
				      ctr_caps_baseline},
	[KUBE_PSS_C_HOST_PATH] = {"hostPathVolumes", KUBE_PSS_BASELINE, NONE,
				  pod_host_path, NULL},
	[KUBE_PSS_C_HOST_PORTS] = {"hostPorts", KUBE_PSS_BASELINE, NONE, NULL,
				   ctr_host_ports},
	[KUBE_PSS_C_HOST_PROBES] = {"hostProbesAndHostLifecycle",
				    KUBE_PSS_BASELINE, NONE, NULL,
				    ctr_host_probes},
	[KUBE_PSS_C_APPARMOR] = {"appArmorProfile", KUBE_PSS_BASELINE, NONE,
				 pod_apparmor, ctr_apparmor},
	[KUBE_PSS_C_SELINUX] = {"seLinuxOptions", KUBE_PSS_BASELINE, NONE,
				pod_selinux, selinux},
	[KUBE_PSS_C_PROC_MOUNT] = {"procMount", KUBE_PSS_BASELINE, NONE, NULL,
				   ctr_proc_mount},
	[KUBE_PSS_C_SECCOMP_BASELINE] = {"seccompProfile_baseline",
					 KUBE_PSS_BASELINE, NONE,
					 pod_seccomp_baseline,
					 ctr_seccomp_baseline},
	[KUBE_PSS_C_SYSCTLS] = {"sysctls", KUBE_PSS_BASELINE, NONE, pod_sysctls,
				NULL},
	[KUBE_PSS_C_VOLUMES] = {"restrictedVolumes", KUBE_PSS_RESTRICTED,
				KUBE_PSS_C_HOST_PATH, pod_volumes, NULL},
	[KUBE_PSS_C_PRIV_ESCALATION] = {"allowPrivilegeEscalation",
					KUBE_PSS_RESTRICTED, NONE, NULL,
					ctr_priv_escalation},
	[KUBE_PSS_C_RUN_AS_NON_ROOT] = {"runAsNonRoot", KUBE_PSS_RESTRICTED,
					NONE, pod_non_root, ctr_non_root},
	[KUBE_PSS_C_RUN_AS_USER] = {"runAsUser", KUBE_PSS_RESTRICTED, NONE,
				    pod_run_as_user, run_as_user},
	[KUBE_PSS_C_SECCOMP_RESTRICTED] = {"seccompProfile_restricted",
					   KUBE_PSS_RESTRICTED,
					   KUBE_PSS_C_SECCOMP_BASELINE,
					   pod_seccomp_restricted,
					   ctr_seccomp_restricted},
	[KUBE_PSS_C_CAPS_RESTRICTED] = {"capabilities_restricted",
					KUBE_PSS_RESTRICTED,
					KUBE_PSS_C_CAPS_BASELINE, NULL,
					ctr_caps_restricted},
	/* the same rule as procMount until hostUsers relaxes that one */
	[KUBE_PSS_C_PROC_MOUNT_RESTRICTED] = {"procMount_restricted",
					      KUBE_PSS_RESTRICTED,
					      KUBE_PSS_C_PROC_MOUNT, NULL,
					      ctr_proc_mount},
};

/* ---- entry points -------------------------------------------------------- */

static const char *const level_names[] = {
	[KUBE_PSS_PRIVILEGED] = "privileged",
	[KUBE_PSS_BASELINE] = "baseline",
	[KUBE_PSS_RESTRICTED] = "restricted",
};

int kube_pss_level_parse(const char *s, enum kube_pss_level *ret)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(level_names); i++)
		if (streq(s, level_names[i])) {
			*ret = (enum kube_pss_level)i;
			return 0;
		}
	return -EINVAL;
}

const char *kube_pss_level_name(enum kube_pss_level level)
{
	return (size_t)level < ARRAY_SIZE(level_names) ? level_names[level]
						       : "";
}

const char *kube_pss_check_name(enum kube_pss_check check)
{
	return (size_t)check < ARRAY_SIZE(checks) ? checks[check].name : "";
}

int kube_pss_check(const struct json_object *pod, enum kube_pss_level level,
		   struct kube_pss_result *ret)
{
	/* json-c's readers take non-const pointers; nothing here writes */
	struct json_object *p = (struct json_object *)pod;
	struct kube_pss_result r = {0};
	struct ctx c = {.pod = p, .r = &r};
	bool off[KUBE_PSS_CHECK_COUNT] = {false};

	if (!ret || (size_t)level >= ARRAY_SIZE(level_names))
		return -EINVAL;
	if (!p || !json_object_is_type(p, json_type_object))
		return -EBADMSG;
	c.spec = jget(p, "spec");
	if (!c.spec || !json_object_is_type(c.spec, json_type_object))
		return -EBADMSG;
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++)
		if (checks[i].level <= level && checks[i].replaces != NONE)
			off[checks[i].replaces] = true;
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		if (checks[i].level > level || off[i])
			continue;
		if (checks[i].pod)
			checks[i].pod(&c, (enum kube_pss_check)i);
		if (checks[i].ctr)
			each_container(&c, (enum kube_pss_check)i,
				       checks[i].ctr);
	}
	*ret = r;
	return r.n ? 1 : 0;
}

int kube_pss_result_text(const struct kube_pss_result *r, struct strbuf *sb)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	int q = 0;

	strbuf_init(&line, sb->max - sb->len);
	for (size_t i = 0; i < r->n && q >= 0; i++)
		q = strbuf_addf(&line, "%s%s %s=%s", i ? "; " : "",
				kube_pss_check_name(r->v[i].check),
				r->v[i].path, r->v[i].value);
	if (q >= 0 && r->more)
		q = strbuf_addf(&line, "; and %zu more", r->more);
	if (q >= 0)
		q = strbuf_add(sb, line.buf, line.len);
	return q < 0 ? q : (int)sb->len;
}
