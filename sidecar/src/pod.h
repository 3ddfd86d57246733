/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar run without --standalone: the sidecar inside a pod
 * (docs/sidecar-pod.md). Hooks called by cmd_run.c; each is a no-op when
 * the run is standalone. */
#pragma once

#include <stdbool.h>

#include "base/cli.h"
#include "run.h"

#define POD_DEFAULT_SPOOL "/var/run/oomlens-spool"
#define POD_DEFAULT_ANNOTATIONS "/etc/oomlens/annotations"
/* How long to wait for the app containers' processes at start. */
#define POD_WAIT_APP_S 30

/* After option parsing, when --standalone was not given: pod mode. --pid
 * and --cgroup are refused (the pod says what to watch); --spool defaults
 * to POD_DEFAULT_SPOOL; c->pod is made (the pod's state, owned by the run
 * until pod_stop()). Returns 0, -EINVAL (message on stderr) or -ENOMEM. */
int pod_args(struct run_cfg *c);

/* True in pod mode (c->pod, made by pod_args()). */
bool pod_mode(const struct run_cfg *c);

/* Reads the Downward API env and annotations, checks the shared PID
 * namespace (exits the program with status 2 and what to add to the pod
 * spec when it is missing), finds the app container and points c at its
 * cgroup (c->host_root = /proc/<pid>/root, c->cgroup = "/"), or at its
 * pids with the Downward API limit when its cgroup cannot be read.
 * root is the host root (--host-root) /proc is read under. Returns 0 or
 * -errno (logged). Blocks up to POD_WAIT_APP_S for the app to appear. */
int pod_setup(struct run_cfg *c, const struct cli_globals *g);

/* Each round: re-reads the annotations file when it changed. */
void pod_tick(struct run_state *st);

/* A heavy snapshot was just written to the spool: the OOMBundle
 * snap-<pod> is refreshed (at most every 10 s; by the uploader,
 * pod_upload.c). */
void pod_on_snapshot(struct run_state *st);

/* Stops the uploader, which uploads a pending snapshot first, and frees
 * c->pod (c's host root and cgroup, when they were the pod's, reset). */
void pod_stop(struct run_cfg *c);
