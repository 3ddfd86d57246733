/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode: the pre-kill snapshot from the API when the node does not
 * show the pod's spool (another kubelet root, a spool not on an emptyDir).
 * The sidecar uploads it as OOMBundle <ns>/snap-<pod>; anything in the pod
 * can write that object, so it is untrusted: checked by kube_snap_check()
 * (types, owner, size, sha256), unpacked by the bounded bundle reader
 * (one top directory, no "..", no links, inflate caps) and attributed by
 * where it was found: the killed pod's namespace, name and UID.
 *
 * This is the publisher thread's side: the request and answer queues,
 * the fetch and the check. The detector never waits on the network: it
 * saves the bundle without the snapshot first, asks through
 * cluster_snap_request(), and finishes the bundle when the answer comes
 * back (run_late_snap.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_internal.h"
#include "base/fileio.h"
#include "forensics/spool.h"
#include "base/log.h"
#include "base/util.h"

/* The most of the API's answer read for a snap-<pod>: KUBE_SNAP_MAX of
 * data is 1.2 MB as base64, with its metadata well within this. */
#define SNAP_ANSWER_MAX (2u << 20)
/* The most it may inflate to: the sidecar filled it from its spool within
 * SPOOL_POD_BUDGET and added its manifest. */
#define SNAP_INFLATED_MAX (SPOOL_POD_BUDGET + (2u << 20))

void cluster_snap_free(void *p)
{
	struct cluster_snap *s = p;

	if (!s)
		return;
	bundle_free(s->files);
	free(s);
}

int cluster_snap_request(struct cluster *c, struct cluster_snap *s)
{
	return evqueue_push(c->snapreq, s);
}

struct evqueue *cluster_snap_answers(struct cluster *c)
{
	return c->snapans;
}

int cluster_snap_prio(const char *path)
{
	size_t n = strlen(path);

	if (streq(path, "timeline.json") ||
	    streq(path, "spool/snapshot.json") ||
	    streq(path, "spool/manifest.json"))
		return BUNDLE_HIGH;
	if (strncmp(path, "processes/", 10) != 0)
		return -1;
	if (n >= 9 && streq(path + n - 9, "/pmap.txt"))
		return BUNDLE_LOW;
	return BUNDLE_NORMAL;
}

/* ---- the publisher thread ---- */

struct take_ctx {
	const char *top; /* "snap-<pod>" */
	struct bundle *files;
	size_t n;
};

static int take_file(const char *name, const char *data, size_t len, void *ud)
{
	struct take_ctx *t = ud;
	size_t n = strlen(t->top);
	int prio;

	/* bundle_read() checked "<one top>/<relative path without ..>" */
	if (strncmp(name, t->top, n) != 0 || name[n] != '/')
		return -EXDEV;
	prio = cluster_snap_prio(name + n + 1);
	if (prio < 0)
		return 0;
	t->n++;
	return bundle_add(t->files, name + n + 1, data, len,
			  (enum bundle_prio)prio);
}

/* Unpacks data (checked) into s->files through the bounded reader. */
static int unpack(struct cluster *c, struct cluster_snap *s, const char *top,
		  const unsigned char *data, size_t len)
{
	struct take_ctx t = {.top = top};
	char tmp[160];
	int r;

	snprintf(tmp, sizeof(tmp), ".snap-%s.tar.gz", s->id);
	r = write_file_atomic_at(c->state_fd, tmp, data, len, 0600);
	if (r < 0)
		return snprintf(s->why, sizeof(s->why), "%s", strerror(-r)), r;
	r = bundle_new(s->id, &t.files);
	if (r == 0)
		r = bundle_read_max(c->state_fd, tmp, SNAP_INFLATED_MAX,
				    take_file, &t);
	(void)unlinkat(c->state_fd, tmp, 0);
	if (r == 0 && !bundle_has(t.files, "spool/snapshot.json"))
		r = -ENOENT;
	if (r < 0) {
		strlcpy_safe(s->why,
			     r == -ENOENT ? "it holds no spool/snapshot.json"
					  : bundle_strerror(r),
			     sizeof(s->why));
		bundle_free(t.files);
		return r;
	}
	s->files = t.files;
	s->n_files = t.n;
	return 0;
}

static void fetch(struct cluster *c, struct cluster_snap *s)
{
	struct kube_snap_want w = {
		.ns = s->ns, .pod = s->pod, .pod_uid = s->uid};
	/* the pod writes this object: its 900 KiB of data as base64 plus
	 * metadata fit in 2 MiB; a planted larger one is not read */
	struct kube_call k = {.res = &kube_res_oombundles,
			      .namespace = s->ns,
			      .cancel = c->cancel,
			      .max_response = SNAP_ANSWER_MAX};
	struct kube_error e = {0};
	struct json_object *obj = NULL;
	unsigned char *data = NULL;
	char name[300];
	size_t len = 0;
	int r;

	snprintf(name, sizeof(name), "snap-%s", s->pod);
	w.name = k.name = name;
	r = kube_get(c->client, &k, &obj, &e);
	if (r == -E2BIG) {
		snprintf(s->why, sizeof(s->why),
			 "larger than %u KiB: the API's answer is over %u KiB, "
			 "not read further",
			 KUBE_SNAP_MAX >> 10, SNAP_ANSWER_MAX >> 10);
		return;
	}
	if (r < 0) {
		strlcpy_safe(s->why,
			     r == -ENOENT   ? "there is none"
			     : e.message[0] ? e.message
					    : strerror(-r),
			     sizeof(s->why));
		return;
	}
	r = kube_snap_check(obj, &w, &data, &len, s->why, sizeof(s->why));
	json_object_put(obj);
	if (r == 0)
		(void)unpack(c, s, name, data, len);
	free(data);
}

void cluster_snap_serve(struct cluster *c)
{
	void *p;

	while (evqueue_pop(c->snapreq, &p) == 1) {
		struct cluster_snap *s = p;

		fetch(c, s);
		/* the queues are as long as the detector's waiting list:
		 * an answer always fits */
		if (evqueue_push(c->snapans, s) < 0) {
			log_error("report %s: snapshot answer lost", s->id);
			cluster_snap_free(s);
		}
	}
}
