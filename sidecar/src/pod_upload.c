/* SPDX-License-Identifier: Apache-2.0 */
/* The OOMBundle snap-<pod>: the newest heavy snapshot of the spool with
 * its timeline, upserted through the pod's service account by a thread of
 * its own (the sampler never waits on the network), at most every 10 s and
 * only when a snapshot is new. The owner is the Pod: the object goes with
 * it. The upload is a fallback (the agent reads the spool through the
 * node) that needs a right the chart grants only on request: a 401 or
 * 403 is said once and ends the uploads for the sidecar's life, without a
 * bundle built in the spool again. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <json-c/json.h>
#include <nss.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/spool.h"
#include "kube/kube.h"
#include "pod_upload.h"

#define UPLOAD_GAP_US (10ull * 1000000)
#define UPLOAD_MAX KUBE_SNAP_MAX /* what the agent reads of it */
#define TMP_NAME ".snap-upload.tar.gz"

struct pod_upload {
	struct kube_client *kube;
	struct pod_upload_info info;
	char bundle_name[254];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, pending;
	bool refused; /* 401/403: no more uploads */
	uint64_t last_us;
};

static void add_pod(const struct pod_upload *u, struct bundle *b)
{
	struct json_object *man = bundle_manifest(b), *pod;

	pod = json_object_new_object();
	json_object_object_add(pod, "namespace",
			       json_object_new_string(u->info.ns));
	json_object_object_add(pod, "name",
			       json_object_new_string(u->info.pod));
	json_object_object_add(pod, "uid", json_object_new_string(u->info.uid));
	json_object_object_add(pod, "container",
			       json_object_new_string(u->info.container));
	json_object_object_add(man, "pod", pod);
	json_object_object_add(man, "node",
			       json_object_new_string(u->info.node));
	json_object_object_add(man, "trigger",
			       json_object_new_string("pre-kill-snapshot"));
}

/* The bundle of the spool now, as a tar.gz in *ret (caller frees). */
static int build(struct pod_upload *u, struct strbuf *ret)
{
	const char *dirs[] = {u->info.spool};
	_cleanup_close_ int fd =
		open(u->info.spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct spool_info si;
	struct spool_ignored ignored; /* our own spool: nothing to ignore */
	struct bundle *b;
	long size = 0;
	int r;

	r = bundle_new(u->bundle_name, &b);
	if (r < 0)
		return r;
	add_pod(u, b);
	r = spool_attach(b, dirs, 1, u->info.cgroup, 0, &ignored, &si);
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

static void upload(struct pod_upload *u)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_owner_ref owner = {.api_version = "v1",
				       .kind = "Pod",
				       .name = u->info.pod,
				       .uid = u->info.uid};
	struct kube_write_options o = {.mode = KUBE_WRITE_APPLY,
				       .owner = &owner};
	struct kube_error err = {0};
	char sha[65];
	struct kube_oombundle kb = {.name = u->bundle_name,
				    .namespace = (char *)u->info.ns,
				    .sha256 = sha};
	int r;

	strbuf_init(&sb, UPLOAD_MAX + 1);
	r = build(u, &sb);
	if (r < 0) {
		log_warn("snapshot bundle for upload: %s, ignoring",
			 strerror(-r));
		return;
	}
	kb.data = (unsigned char *)sb.buf;
	kb.size = sb.len;
	kube_sha256_hex(sb.buf, sb.len, sha);
	r = kube_oombundle_write(u->kube, &kb, &o, &err);
	if (r < 0 && no_right(&err)) {
		pthread_mutex_lock(&u->lock);
		u->refused = true;
		pthread_mutex_unlock(&u->lock);
		log_info("no right to write OOMBundles in %s (%ld): snapshots "
			 "stay in the spool, which the node agent reads; no "
			 "more uploads (%s)",
			 u->info.ns, err.http_status,
			 err.message[0] ? err.message : strerror(-r));
	} else if (r < 0) {
		log_warn("upload of OOMBundle %s/%s (%zu bytes): %s, retrying "
			 "with the next snapshot",
			 u->info.ns, u->bundle_name, sb.len,
			 err.message[0] ? err.message : strerror(-r));
	} else {
		log_info("uploaded OOMBundle %s/%s (%zu bytes, sha256 %.12s)",
			 u->info.ns, u->bundle_name, sb.len, sha);
	}
}

static void *upload_main(void *ud)
{
	struct pod_upload *u = ud;

	pthread_mutex_lock(&u->lock);
	for (;;) {
		uint64_t now = now_monotonic_us();

		if (u->refused)
			u->pending = false;
		if (u->pending && (u->stop || !u->last_us ||
				   now - u->last_us >= UPLOAD_GAP_US)) {
			u->pending = false;
			u->last_us = now;
			pthread_mutex_unlock(&u->lock);
			upload(u);
			pthread_mutex_lock(&u->lock);
			continue;
		}
		if (u->stop)
			break;
		if (u->pending) {
			struct timespec ts;
			uint64_t wait = u->last_us + UPLOAD_GAP_US - now;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)(wait / 1000000);
			ts.tv_nsec += (long)(wait % 1000000) * 1000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&u->wake, &u->lock, &ts);
		} else {
			pthread_cond_wait(&u->wake, &u->lock);
		}
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

int pod_upload_start(const struct pod_upload_info *info,
		     struct pod_upload **ret)
{
	struct kube_config *cfg = NULL;
	struct pod_upload *u;
	int r;

	*ret = NULL;
	/* The sidecar's one name lookup, the API server's (an IP in a pod:
	 * none at all then), only through files and dns, which glibc has
	 * built in: the sidecar is static (docs/build.md), and a static
	 * glibc would load another module nsswitch.conf names (systemd,
	 * mdns) from the host, built for the host's glibc. */
	__nss_configure_lookup("hosts", "files dns");
	r = kube_config_in_cluster(NULL, &cfg);
	if (r == -ENOENT) {
		log_info("no service account in this pod: snapshots stay in "
			 "the spool (the agent reads it through the node)");
		return 0;
	}
	u = r == 0 ? calloc(1, sizeof(*u)) : NULL;
	if (r == 0 && !u)
		r = -ENOMEM;
	if (u) {
		u->info = *info;
		snprintf(u->bundle_name, sizeof(u->bundle_name), "snap-%s",
			 info->pod);
		pthread_mutex_init(&u->lock, NULL);
		pthread_cond_init(&u->wake, NULL);
		r = kube_client_new(cfg, NULL, &u->kube);
	}
	kube_config_free(cfg);
	if (r == 0)
		r = -pthread_create(&u->thread, NULL, upload_main, u);
	if (r < 0) {
		log_warn("cannot upload snapshots: %s, ignoring", strerror(-r));
		if (u) {
			kube_client_free(u->kube);
			pthread_mutex_destroy(&u->lock);
			pthread_cond_destroy(&u->wake);
			free(u);
		}
		return 0;
	}
	log_info("snapshots go to OOMBundle %s/%s as well, if this service "
		 "account may write it (the chart's upload fallback)",
		 info->ns, u->bundle_name);
	*ret = u;
	return 0;
}

void pod_upload_request(struct pod_upload *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	u->pending = !u->refused;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
}

void pod_upload_stop(struct pod_upload *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&u->lock);
	u->stop = true;
	pthread_cond_signal(&u->wake);
	pthread_mutex_unlock(&u->lock);
	pthread_join(u->thread, NULL);
	kube_client_free(u->kube);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->wake);
	free(u);
}
