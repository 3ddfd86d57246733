/* SPDX-License-Identifier: Apache-2.0 */
/* The OOMBundle snap-<pod>: the newest heavy snapshot of the spool with
 * its timeline, upserted through the pod's service account at most every
 * 10 s and only when the sidecar says a snapshot is new. The owner is the
 * Pod: the object goes with it. The upload is a fallback (the agent reads
 * the spool through the node) that needs a right the chart grants only on
 * request: a 401 or 403 is said once and ends the uploads for the
 * sidecar's life, without a bundle built in the spool again. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/spool.h"
#include "kube/kube.h"
#include "upload.h"

#define UPLOAD_MAX KUBE_SNAP_MAX /* what the agent reads of it */
#define TMP_NAME ".snap-upload.tar.gz"

static void add_pod(const struct upload_pod *p, struct bundle *b)
{
	struct json_object *man = bundle_manifest(b), *pod;

	pod = json_object_new_object();
	json_object_object_add(pod, "namespace", json_object_new_string(p->ns));
	json_object_object_add(pod, "name", json_object_new_string(p->pod));
	json_object_object_add(pod, "uid", json_object_new_string(p->uid));
	json_object_object_add(pod, "container",
			       json_object_new_string(p->container));
	json_object_object_add(man, "pod", pod);
	json_object_object_add(man, "node", json_object_new_string(p->node));
	json_object_object_add(man, "trigger",
			       json_object_new_string("pre-kill-snapshot"));
}

/* The bundle of the spool now, as a tar.gz in *ret (caller frees). */
static int build(const struct upload_pod *p, const char *name,
		 struct strbuf *ret)
{
	const char *dirs[] = {p->spool};
	_cleanup_close_ int fd =
		open(p->spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct spool_info si;
	struct spool_ignored ignored; /* our own spool: nothing to ignore */
	struct bundle *b;
	long size = 0;
	int r;

	r = bundle_new(name, &b);
	if (r < 0)
		return r;
	add_pod(p, b);
	r = spool_attach(b, dirs, 1, p->cgroup, 0, &ignored, &si);
	if (r == 0 && fd < 0)
		r = -errno;
	if (r == 0)
		size = bundle_write(b, fd, TMP_NAME, UPLOAD_MAX);
	bundle_free(b);
	if (r < 0)
		return r;
	if (size < 0)
		return (int)size;
	r = read_file_at(fd, TMP_NAME, UPLOAD_MAX, ret);
	(void)unlinkat(fd, TMP_NAME, 0);
	return r;
}

/* The API server will not take the object from this service account:
 * 401 (not authenticated) or 403 (no RBAC right). Anything else (the
 * network, 409, 429, 5xx, a refused size) may pass the next time. */
static bool no_right(const struct kube_error *e)
{
	return e->http_status == 401 || e->http_status == 403;
}

/* One upload of the spool as it is now; false when the service account
 * has no right to it (no more uploads then). */
static bool upload(const struct upload_pod *p, struct kube_client *kube)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char name[254];
	struct kube_owner_ref owner = {.api_version = "v1",
				       .kind = "Pod",
				       .name = p->pod,
				       .uid = p->uid};
	struct kube_write_options o = {.mode = KUBE_WRITE_APPLY,
				       .owner = &owner};
	struct kube_error err = {0};
	char sha[65];
	struct kube_oombundle kb = {
		.name = name, .namespace = (char *)p->ns, .sha256 = sha};
	int r;

	snprintf(name, sizeof(name), "snap-%s", p->pod);
	strbuf_init(&sb, UPLOAD_MAX + 1);
	r = build(p, name, &sb);
	if (r < 0) {
		log_warn("snapshot bundle for upload: %s, ignoring",
			 strerror(-r));
		return true;
	}
	kb.data = (unsigned char *)sb.buf;
	kb.size = sb.len;
	kube_sha256_hex(sb.buf, sb.len, sha);
	r = kube_oombundle_write(kube, &kb, &o, &err);
	if (r < 0 && no_right(&err)) {
		log_info("no right to write OOMBundles in %s (%ld): snapshots "
			 "stay in the spool, which the node agent reads; no "
			 "more uploads (%s)",
			 p->ns, err.http_status,
			 err.message[0] ? err.message : strerror(-r));
		return false;
	}
	if (r < 0)
		log_warn("upload of OOMBundle %s/%s (%zu bytes): %s, retrying "
			 "with the next snapshot",
			 p->ns, name, sb.len,
			 err.message[0] ? err.message : strerror(-r));
	else
		log_info("uploaded OOMBundle %s/%s (%zu bytes, sha256 %.12s)",
			 p->ns, name, sb.len, sha);
	return true;
}

int upload_loop(const struct upload_pod *p, struct kube_client *kube, int in_fd,
		uint64_t gap_us)
{
	bool pending = false, eof = false;
	uint64_t last_us = 0;

	for (;;) {
		uint64_t now = now_monotonic_us();
		struct pollfd pfd = {.fd = in_fd, .events = POLLIN};
		char buf[64];
		ssize_t n;
		int timeout = -1;

		if (pending && (eof || !last_us || now - last_us >= gap_us)) {
			pending = false;
			last_us = now;
			if (!upload(p, kube))
				return 0;
			continue;
		}
		if (eof)
			return 0;
		if (pending)
			timeout = (int)((last_us + gap_us - now + 999) / 1000);
		if (poll(&pfd, 1, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_error("waiting for the sidecar: %s",
				  strerror(errno));
			return 1;
		}
		if (!pfd.revents)
			continue;
		n = read(in_fd, buf, sizeof(buf));
		if (n > 0)
			pending = true;
		else if (n == 0 || (errno != EINTR && errno != EAGAIN))
			eof = true; /* the sidecar stops (or is gone) */
	}
}
