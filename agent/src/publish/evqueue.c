/* SPDX-License-Identifier: Apache-2.0 */
/* The detector, kube and http threads meet only here (evqueue.h). The
 * eventfd is written and drained under the same mutex as the ring, so
 * "readable" and "not empty" never disagree. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "publish/evqueue.h"

struct evqueue {
	pthread_mutex_t lock;
	int efd;
	size_t head, len, max;
	void **items;
};

int evqueue_new(size_t max, struct evqueue **ret)
{
	struct evqueue *q;

	if (max == 0)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->items = calloc(max, sizeof(*q->items));
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!q->items || q->efd < 0) {
		int r = q->items ? -errno : -ENOMEM;

		if (q->efd >= 0)
			close(q->efd);
		free(q->items);
		free(q);
		return r;
	}
	q->max = max;
	pthread_mutex_init(&q->lock, NULL);
	*ret = q;
	return 0;
}

void evqueue_free(struct evqueue *q, void (*free_item)(void *))
{
	void *it;

	if (!q)
		return;
	while (free_item && evqueue_pop(q, &it) == 1)
		free_item(it);
	close(q->efd);
	pthread_mutex_destroy(&q->lock);
	free(q->items);
	free(q);
}

int evqueue_fd(const struct evqueue *q)
{
	return q->efd;
}

int evqueue_push(struct evqueue *q, void *item)
{
	uint64_t one = 1;
	int r = 0;

	pthread_mutex_lock(&q->lock);
	if (q->len == q->max) {
		r = -EAGAIN;
	} else {
		q->items[(q->head + q->len++) % q->max] = item;
		/* cannot fail: the counter stays far below its maximum */
		if (write(q->efd, &one, sizeof(one)) < 0)
			r = 0;
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

int evqueue_pop(struct evqueue *q, void **ret)
{
	uint64_t v;
	int r = 0;

	pthread_mutex_lock(&q->lock);
	if (q->len) {
		*ret = q->items[q->head];
		q->head = (q->head + 1) % q->max;
		q->len--;
		r = 1;
	}
	if (!q->len && read(q->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: already drained */
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

size_t evqueue_len(struct evqueue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->len;
	pthread_mutex_unlock(&q->lock);
	return n;
}
