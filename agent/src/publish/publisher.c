/* SPDX-License-Identifier: Apache-2.0 */
/* The publisher thread over the durable queue (publisher.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "publish/evqueue.h"
#include "publish/publisher.h"
#include "base/log.h"
#include "base/util.h"

struct publisher {
	const struct pub_target *t;
	struct pubqueue *queue;
	struct evqueue *kills; /* detector -> publisher: staged ids */
	struct publisher_hooks h;
	int stop_fd; /* readable once publisher_free() asks */
	atomic_bool stop;
	pthread_t th;
	bool started;
};

int publisher_new(int state_fd, const struct pub_target *t,
		  struct agent_metrics *m, struct publisher **ret)
{
	struct publisher *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->t = t;
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r = p->stop_fd < 0 ? -errno : evqueue_new(256, &p->kills);
	if (r == 0)
		r = pubqueue_open(state_fd, t, NULL, m, &p->queue);
	if (r < 0) {
		log_error("publish queue (%s): %s", t->name, strerror(-r));
		publisher_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* Moves the kills handed over by the detector into the queue (a file each
 * in the state dir; no network): each turn, and once more after the
 * thread stopped, so a kill handed over at shutdown is published by the
 * next start. */
static void take_kills(struct publisher *p)
{
	void *v;

	while (evqueue_pop(p->kills, &v) == 1) {
		char *id = v;
		int r = pubqueue_take(p->queue, id);

		if (r == -ENOSPC)
			log_error("report %s: the queue is full; it stays in "
				  "the state dir's queue for the agent's next "
				  "start",
				  id);
		else if (r < 0 && r != -EEXIST)
			log_error("report %s: cannot take it from the state "
				  "dir's queue (%s); its bundle stays in "
				  "\"reports/%s.tar.gz\"",
				  id, strerror(-r), id);
		free(id);
	}
}

static void *main_loop(void *ud)
{
	struct publisher *p = ud;
	struct pollfd fds[2 + PUBLISHER_MAX_FDS];
	size_t n = 0;
	uint64_t next_ms = 0;

	fds[n++] = (struct pollfd){.fd = p->stop_fd, .events = POLLIN};
	fds[n++] =
		(struct pollfd){.fd = evqueue_fd(p->kills), .events = POLLIN};
	for (size_t i = 0; i < p->h.n_fds; i++)
		fds[n++] = (struct pollfd){.fd = p->h.fds[i], .events = POLLIN};
	while (!atomic_load(&p->stop)) {
		uint64_t now = now_monotonic_us() / 1000, wait;

		if (p->h.before)
			p->h.before(p->h.ud);
		take_kills(p);
		pubqueue_run(p->queue, now, &next_ms);
		if (p->h.after)
			p->h.after(p->h.ud);
		now = now_monotonic_us() / 1000;
		wait = next_ms > now ? next_ms - now : 0;
		/* a mode's periodic work (cluster mode: the API probe,
		 * retention) wants a turn at least each second */
		if (wait > 1000 || next_ms == UINT64_MAX)
			wait = 1000;
		if (poll(fds, n, (int)wait) < 0 && errno != EINTR)
			break;
	}
	return NULL;
}

int publisher_start(struct publisher *p, const struct publisher_hooks *h)
{
	int r;

	if (h)
		p->h = *h;
	if (p->h.n_fds > PUBLISHER_MAX_FDS)
		return -EINVAL;
	r = pthread_create(&p->th, NULL, main_loop, p);
	if (r)
		return -r;
	p->started = true;
	return 0;
}

void publisher_free(struct publisher *p)
{
	uint64_t one = 1;

	if (!p)
		return;
	atomic_store(&p->stop, true);
	if (p->t->cancel)
		p->t->cancel(p->t->ud);
	if (p->stop_fd >= 0 && write(p->stop_fd, &one, sizeof(one)) < 0) {
		/* the counter is set already: still readable */
	}
	if (p->started)
		pthread_join(p->th, NULL);
	if (p->queue && p->kills)
		take_kills(p);
	pubqueue_free(p->queue);
	evqueue_free(p->kills, free);
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	free(p);
}

int publisher_hand_over(struct publisher *p, const char *id)
{
	char *copy = strdup(id);
	int r;

	if (!copy)
		return -ENOMEM;
	r = evqueue_push(p->kills, copy);
	if (r < 0)
		free(copy);
	return r;
}

struct pubqueue *publisher_queue(struct publisher *p)
{
	return p->queue;
}
