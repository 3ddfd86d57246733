/* SPDX-License-Identifier: Apache-2.0 */
/* A small queue between the agent's threads: a mutex-guarded ring of
 * pointers and an eventfd that is readable while the queue holds items,
 * so the consumer sleeps in its own epoll/poll. Push never blocks. */
#pragma once

#include <stddef.h>

struct evqueue;

/* A queue of at most max items. Returns 0, -ENOMEM, -errno of eventfd. */
int evqueue_new(size_t max, struct evqueue **ret);
/* Frees q and, with free_item, every item left in it. NULL is a no-op. */
void evqueue_free(struct evqueue *q, void (*free_item)(void *));
/* Readable (POLLIN) while the queue is not empty. Owned by q. */
int evqueue_fd(const struct evqueue *q);
/* Appends item (ownership moves to the queue on success). Returns 0, or
 * -EAGAIN when full (the item stays the caller's). Thread safe. */
int evqueue_push(struct evqueue *q, void *item);
/* Takes the oldest item: 1 and *ret, 0 when empty (the fd is then no
 * longer readable until the next push). Thread safe, never blocks. */
int evqueue_pop(struct evqueue *q, void **ret);
/* Items now (a snapshot). */
size_t evqueue_len(struct evqueue *q);
