/* SPDX-License-Identifier: Apache-2.0 */
/* pod_upload: OOMBundle snap-<pod> from the spool, by the program
 * oomlens-sidecar-upload beside this one (pod_upload.c). */
#pragma once

#include "base/cli.h"

struct pod_upload_info {
	const char *ns, *pod, *uid, *node, *container;
	const char *spool;  /* the spool directory */
	const char *cgroup; /* the spool manifest's cgroup */
};

struct pod_upload;

/* Starts oomlens-sidecar-upload (found beside this program) into *ret,
 * with g's logging and seccomp options; it says itself whether the pod
 * has a service account to upload with. *ret is NULL when the program is
 * not there or could not start (logged: snapshots stay in the spool).
 * Returns 0: failures are not fatal. Call before the seccomp filter (it
 * spawns a process). */
int pod_upload_start(const struct pod_upload_info *info,
		     const struct cli_globals *g, struct pod_upload **ret);
/* A new snapshot is in the spool: uploaded now, or 10 s after the last
 * upload. Never blocks. NULL: nothing. */
void pod_upload_request(struct pod_upload *u);
/* Uploads what is pending (the uploader is given up to 25 s, then
 * killed), waits for the uploader, and frees u (NULL: nothing). */
void pod_upload_stop(struct pod_upload *u);
