/* SPDX-License-Identifier: Apache-2.0 */
/* The publisher: a thread that runs the durable publish queue
 * (pubqueue.h) for one target (pubtarget.h), fed by the detector's
 * hand-overs. The detector stages a kill's item in the state dir
 * (pubqueue_stage) and hands its id over here (publisher_hand_over); the
 * thread takes it from that file, runs the queue and sleeps until the
 * next item is due, a hand-over or one of the mode's own fds wakes it. A
 * mode that does more on that thread (cluster mode: the pods' snapshots,
 * Events, retention, the API probe) adds it through struct
 * publisher_hooks. The detector never waits on it. */
#pragma once

#include <stddef.h>

#include "publish/pubqueue.h"

#define PUBLISHER_MAX_FDS 4

/* What a mode does on the publisher thread beside the queue, each turn:
 * before (cluster mode: the snapshots a kill waits on), then the
 * hand-overs taken and the queue run, then after (the rest). Each fd
 * wakes the thread when readable. */
struct publisher_hooks {
	void *ud;
	void (*before)(void *ud); /* NULL: nothing */
	void (*after)(void *ud);  /* NULL: nothing */
	int fds[PUBLISHER_MAX_FDS];
	size_t n_fds;
};

struct publisher;
struct agent_metrics;

/* The queue of state_fd for t (pubqueue_open: the items left by the last
 * run loaded; m the run's metrics, NULL: none), and the hand-over ring.
 * t, its ud and m must outlive it. No thread yet. 0 or -errno (logged). */
int publisher_new(int state_fd, const struct pub_target *t,
		  struct agent_metrics *m, struct publisher **ret);
/* Starts the thread, with h (copied; NULL: none). 0 or -errno. */
int publisher_start(struct publisher *p, const struct publisher_hooks *h);
/* Stops the thread (t->cancel first: its steps return at once), takes the
 * hand-overs it had not taken into the queue's files (the next start
 * publishes them) and frees. NULL is a no-op. */
void publisher_free(struct publisher *p);
/* Wakes the publisher for the kill staged as queue/<id>.json: it takes
 * the item from that file. Never blocks; -EAGAIN when the hand-over is
 * full, -ENOMEM (the item stays staged for the agent's next start). Any
 * thread. */
int publisher_hand_over(struct publisher *p, const char *id);
/* The queue (its depth and stats, for the hooks on the publisher thread;
 * the run's metrics have the same for every other thread). */
struct pubqueue *publisher_queue(struct publisher *p);
