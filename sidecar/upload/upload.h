/* SPDX-License-Identifier: Apache-2.0 */
/* upload: OOMBundle snap-<pod> from the spool, each time the sidecar says a
 * snapshot is new (upload.c). */
#pragma once

#include <stdint.h>

struct kube_client;

struct upload_pod {
	const char *ns, *pod, *uid, *node, *container;
	const char *spool;  /* the spool directory */
	const char *cgroup; /* the spool manifest's cgroup */
};

/* Uploads at most every gap_us, and only after a byte came on in_fd (one
 * per new snapshot); at end of file, uploads what is pending and returns.
 * A 401 or 403 ends it at once (logged: the service account may not write
 * OOMBundles). Returns 0, or 1 when in_fd failed. */
int upload_loop(const struct upload_pod *p, struct kube_client *kube, int in_fd,
		uint64_t gap_us);
