/* SPDX-License-Identifier: Apache-2.0 */
/* Cluster mode's late snapshot (run_late_snap.c): kills whose bundle
 * waits for their pod's OOMBundle snap-<pod>. An object the cluster run
 * owns (run_cluster.c), reached from the pipeline only through the hooks
 * that file registers (agent.h, struct kill_hooks): it joins the kill
 * room's finish step and the publisher's snapshot request, so it lives
 * at the top, which may use both. Detector thread
 * only; nothing here blocks. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"
#include "publish/cluster.h"

struct late_snap;

/* A wait list of the kills of cm's node, for a; -ENOMEM. */
int late_snap_new(struct agent *a, struct cluster_mode *cm,
		  struct late_snap **ret);
/* NULL is a no-op; call late_snap_flush() first. */
void late_snap_free(struct late_snap *ls);
/* A kill of an opted-in pod whose spool the node does not show waits for
 * the pod's OOMBundle snap-<pod>, asked of the publisher thread. True
 * when b (its evidence, not yet diagnosed) was kept for that, with k's
 * report (moved out of k), saved as a case beside its publish item: the
 * bundle is written, the kill counted and published once the answer is
 * in (late_snap_answers()). */
bool late_snap_wait(struct late_snap *ls, struct corr_kill *k,
		    const struct cluster_kill_pod *p, struct bundle *b,
		    const char *id, uint64_t kill_ms, int64_t latency);
/* Takes the publisher's answers: merges a checked snapshot into its case
 * (a refused one is logged), then finishes it: the bundle's one write,
 * then the hand-over. */
void late_snap_answers(struct late_snap *ls);
/* At exit: finishes and hands over whatever still waits, without a
 * snapshot. */
void late_snap_flush(struct late_snap *ls);
/* At a start, after the publisher loaded its queue (which leaves the
 * items with a case): takes up each case the last run left, and asks for
 * its snapshot again. */
void late_snap_resume(struct late_snap *ls);
/* Whether the case of kill id waits in the state dir's queue. */
bool late_snap_has_case(const struct late_snap *ls, const char *id);
/* Calls mark for the bundle of each kill waiting. */
void late_snap_in_use(const struct late_snap *ls,
		      void (*mark)(const char *bundle_file, void *arg),
		      void *arg);
