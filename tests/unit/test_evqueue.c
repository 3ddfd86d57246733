/* SPDX-License-Identifier: Apache-2.0 */
/* evqueue: order, capacity, the eventfd readable exactly while items wait,
 * and two threads pushing while one pops. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>

#include "publish/evqueue.h"

static bool readable(struct evqueue *q)
{
	struct pollfd p = {.fd = evqueue_fd(q), .events = POLLIN};

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

Test(evqueue, fifo_full_and_fd)
{
	struct evqueue *q;
	void *it;
	int a = 1, b = 2, c = 3;

	cr_assert_eq(evqueue_new(0, &q), -EINVAL);
	cr_assert_eq(evqueue_new(2, &q), 0);
	cr_assert_not(readable(q));
	cr_assert_eq(evqueue_pop(q, &it), 0);
	cr_assert_eq(evqueue_push(q, &a), 0);
	cr_assert(readable(q));
	cr_assert_eq(evqueue_push(q, &b), 0);
	cr_assert_eq(evqueue_push(q, &c), -EAGAIN, "full: never blocks");
	cr_assert_eq(evqueue_len(q), 2);
	cr_assert_eq(evqueue_pop(q, &it), 1);
	cr_assert_eq(it, &a);
	cr_assert(readable(q), "one left");
	cr_assert_eq(evqueue_push(q, &c), 0, "wraps around");
	cr_assert_eq(evqueue_pop(q, &it), 1);
	cr_assert_eq(it, &b);
	cr_assert_eq(evqueue_pop(q, &it), 1);
	cr_assert_eq(it, &c);
	cr_assert_not(readable(q), "drained: the fd is quiet");
	cr_assert_eq(evqueue_pop(q, &it), 0);
	evqueue_free(q, NULL);
	evqueue_free(NULL, NULL);
}

static void count_free(void *p)
{
	(*(int *)p)++;
}

Test(evqueue, free_releases_items)
{
	struct evqueue *q;
	int n = 0;

	cr_assert_eq(evqueue_new(4, &q), 0);
	cr_assert_eq(evqueue_push(q, &n), 0);
	cr_assert_eq(evqueue_push(q, &n), 0);
	evqueue_free(q, count_free);
	cr_assert_eq(n, 2);
}

#define PER_THREAD 20000

struct producer {
	struct evqueue *q;
	uintptr_t base;
};

static void *produce(void *ud)
{
	struct producer *p = ud;

	for (uintptr_t i = 1; i <= PER_THREAD; i++)
		while (evqueue_push(p->q, (void *)(p->base + i)) == -EAGAIN)
			sched_yield();
	return NULL;
}

Test(evqueue, two_producers_one_consumer)
{
	struct evqueue *q;
	struct producer p1, p2;
	pthread_t t1, t2;
	uintptr_t last1 = 0, last2 = 0;
	size_t got = 0;

	cr_assert_eq(evqueue_new(64, &q), 0);
	p1 = (struct producer){q, 0};
	p2 = (struct producer){q, 1000000};
	pthread_create(&t1, NULL, produce, &p1);
	pthread_create(&t2, NULL, produce, &p2);
	while (got < 2 * PER_THREAD) {
		struct pollfd pf = {.fd = evqueue_fd(q), .events = POLLIN};
		void *it;

		cr_assert_geq(poll(&pf, 1, 5000), 1, "woken by the eventfd");
		while (evqueue_pop(q, &it) == 1) {
			uintptr_t v = (uintptr_t)it;

			/* each producer's items come in its order */
			if (v > 1000000) {
				cr_assert_eq(v, 1000000 + last2 + 1);
				last2++;
			} else {
				cr_assert_eq(v, last1 + 1);
				last1++;
			}
			got++;
		}
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	cr_assert_eq(last1, PER_THREAD);
	cr_assert_eq(last2, PER_THREAD);
	cr_assert_not(readable(q));
	evqueue_free(q, NULL);
}
