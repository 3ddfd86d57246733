/* SPDX-License-Identifier: Apache-2.0 */
/* Standalone mode's publishing plugged into `run` (run_standalone.c):
 * with --publish-url, each kill's bundle is also POSTed to the user's
 * collector (publish/target_http.h) through the durable queue and its
 * publisher thread (publish/publisher.h), registered as the kill
 * pipeline's hooks (agent.h, struct kill_hooks). Without it, nothing:
 * standalone mode as before. */
#pragma once

#include <stdbool.h>

#include "agent.h"

struct http_target_opts;
struct run_standalone;

/* The target, the queue (the items of the last run loaded, its metrics
 * a->metrics) and the hooks, when o->url is set; *ret NULL (and 0) when
 * it is not. No thread yet. 0 or -errno (logged). a and o must outlive
 * it. */
int run_standalone_new(struct agent *a, const struct http_target_opts *o,
		       struct run_standalone **ret);
/* Starts the publisher thread (NULL: nothing); 0 or -errno. */
int run_standalone_start(struct run_standalone *rs);
/* Stops the thread (what waits stays in the state dir's queue for the
 * next start) and frees; a->hooks is NULL again. NULL is a no-op. */
void run_standalone_free(struct run_standalone *rs);
