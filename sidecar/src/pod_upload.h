/* SPDX-License-Identifier: Apache-2.0 */
/* pod_upload: OOMBundle snap-<pod> from the spool, by a thread of its own
 * (pod_upload.c). */
#pragma once

struct pod_upload_info {
	const char *ns, *pod, *uid, *node, *container;
	const char *spool;  /* the spool directory */
	const char *cgroup; /* the spool manifest's cgroup */
};

struct pod_upload;

/* Starts the upload thread when the pod has an in-cluster service account
 * (else logs that snapshots stay in the spool) into *ret (NULL when there
 * is none, or it could not start). The strings must outlive the thread.
 * Returns 0 (failures are logged, not fatal). Call before the seccomp
 * filter. */
int pod_upload_start(const struct pod_upload_info *info,
		     struct pod_upload **ret);
/* A new snapshot is in the spool: uploaded now, or 10 s after the last
 * upload. Never blocks on the network. NULL: nothing. */
void pod_upload_request(struct pod_upload *u);
/* Uploads what is pending, then stops and joins the thread, and frees u
 * (NULL: nothing). */
void pod_upload_stop(struct pod_upload *u);
