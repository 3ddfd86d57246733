/* SPDX-License-Identifier: Apache-2.0 */
/* kube: pod cgroup paths, container IDs and the oomlens.io/ annotations.
 * Pure functions (see kube_node.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube_node.h"
#include "base/parse.h"
#include "base/util.h"

#define MAX_PARTS 32

const char *kube_qos_name(enum kube_qos q)
{
	switch (q) {
	case KUBE_QOS_GUARANTEED:
		return "Guaranteed";
	case KUBE_QOS_BURSTABLE:
		return "Burstable";
	case KUBE_QOS_BESTEFFORT:
		return "BestEffort";
	default:
		return "";
	}
}

static bool all_of(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

/* A pod UID as the cgroup writes it: 36 with '-' (cgroupfs) or '_'
 * (systemd), or 32 hex (static pods: an md5). Stored with dashes. */
static int take_uid(const char *s, size_t n, char ret[KUBE_UID_MAX])
{
	if ((n != 36 && n != 32) || !all_of(s, n, "0123456789abcdef-_"))
		return -EBADMSG;
	for (size_t i = 0; i < n; i++)
		ret[i] = s[i] == '_' ? '-' : s[i];
	ret[n] = '\0';
	return 0;
}

struct runtime_prefix {
	const char *prefix, *runtime;
	bool conmon;
};

static const struct runtime_prefix runtimes[] = {
	{"cri-containerd-", "containerd", false},
	{"crio-conmon-", "cri-o", true},
	{"crio-", "cri-o", false},
	{"docker-", "docker", false},
};

/* The container level: "<id>", "cri-containerd-<id>.scope",
 * "crio-<id>[.scope]", "crio-conmon-<id>.scope", "docker-<id>.scope". */
static int take_container(const char *s, size_t n, struct kube_cgpath *r)
{
	r->runtime = "";
	if (n > 6 && memcmp(s + n - 6, ".scope", 6) == 0)
		n -= 6;
	for (size_t i = 0; i < ARRAY_SIZE(runtimes); i++) {
		size_t pl = strlen(runtimes[i].prefix);

		if (n > pl && memcmp(s, runtimes[i].prefix, pl) == 0) {
			r->runtime = runtimes[i].runtime;
			r->conmon = runtimes[i].conmon;
			s += pl;
			n -= pl;
			break;
		}
	}
	if (n < 12 || n >= KUBE_CTR_ID_MAX || !all_of(s, n, "0123456789abcdef"))
		return -EBADMSG;
	memcpy(r->container_id, s, n);
	r->container_id[n] = '\0';
	return 0;
}

struct part {
	const char *s;
	size_t n;
};

static bool part_is(const struct part *p, const char *lit)
{
	return p->n == strlen(lit) && memcmp(p->s, lit, p->n) == 0;
}

static size_t split(const char *path, struct part *parts)
{
	size_t n = 0;

	while (*path && n < MAX_PARTS) {
		const char *e = strchrnul(path, '/');

		if (e > path)
			parts[n++] = (struct part){path, (size_t)(e - path)};
		path = *e ? e + 1 : e;
	}
	return n;
}

static enum kube_qos qos_of(const char *s, size_t n, bool systemd)
{
	static const char *const fs[] = {"burstable", "besteffort"};
	static const char *const sd[] = {"kubepods-burstable.slice",
					 "kubepods-besteffort.slice"};

	for (size_t i = 0; i < 2; i++) {
		const char *w = systemd ? sd[i] : fs[i];

		if (n == strlen(w) && memcmp(s, w, n) == 0)
			return i == 0 ? KUBE_QOS_BURSTABLE
				      : KUBE_QOS_BESTEFFORT;
	}
	return KUBE_QOS_GUARANTEED;
}

/* The pod level: "pod<uid>" or "kubepods[-<qos>]-pod<uid_>.slice". */
static int take_pod(const struct part *p, struct kube_cgpath *r)
{
	const char *s = p->s;
	size_t n = p->n;
	char want[40];

	if (r->driver == KUBE_CG_SYSTEMD) {
		snprintf(want, sizeof(want), "kubepods-%spod",
			 r->qos == KUBE_QOS_BURSTABLE	 ? "burstable-"
			 : r->qos == KUBE_QOS_BESTEFFORT ? "besteffort-"
							 : "");
		if (n < 6 || memcmp(s + n - 6, ".slice", 6) != 0)
			return -EBADMSG;
		n -= 6;
	} else {
		strlcpy_safe(want, "pod", sizeof(want));
	}
	if (n <= strlen(want) || memcmp(s, want, strlen(want)) != 0)
		return -EBADMSG;
	return take_uid(s + strlen(want), n - strlen(want), r->pod_uid);
}

int kube_cgpath_parse(const char *path, struct kube_cgpath *ret)
{
	struct part parts[MAX_PARTS];
	struct kube_cgpath r = {.runtime = ""};
	size_t n, i;
	int q;

	if (!path)
		return -ENOENT;
	n = split(path, parts);
	for (i = 0; i < n; i++)
		if (part_is(&parts[i], "kubepods") ||
		    part_is(&parts[i], "kubepods.slice"))
			break;
	if (i + 1 >= n)
		return -ENOENT;
	r.driver = part_is(&parts[i], "kubepods") ? KUBE_CG_CGROUPFS
						  : KUBE_CG_SYSTEMD;
	i++;
	r.qos = qos_of(parts[i].s, parts[i].n, r.driver == KUBE_CG_SYSTEMD);
	if (r.qos != KUBE_QOS_GUARANTEED && ++i >= n)
		return -ENOENT; /* the QoS level itself */
	q = take_pod(&parts[i], &r);
	if (q < 0)
		return q;
	if (++i < n) {
		q = take_container(parts[i].s, parts[i].n, &r);
		if (q < 0)
			return q;
	}
	*ret = r;
	return 0;
}

const char *kube_container_id_bare(const char *id)
{
	const char *p;

	if (!id || !*id)
		return NULL;
	p = strstr(id, "://");
	return p ? (p[3] ? p + 3 : NULL) : id;
}

const struct kube_container *kube_pod_find_container(const struct kube_pod *p,
						     const char *bare_id,
						     bool *ret_last)
{
	if (!p || !bare_id || !*bare_id)
		return NULL;
	for (size_t i = 0; i < p->n_containers; i++) {
		const struct kube_container *c = &p->containers[i];
		const char *cur = kube_container_id_bare(c->container_id);
		const char *last = kube_container_id_bare(c->last_container_id);

		if ((cur && streq(cur, bare_id)) ||
		    (last && streq(last, bare_id))) {
			if (ret_last)
				*ret_last = !(cur && streq(cur, bare_id));
			return c;
		}
	}
	return NULL;
}
