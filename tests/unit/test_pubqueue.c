/* SPDX-License-Identifier: Apache-2.0 */
/* pubqueue: every transition of the publish state machine against a
 * scripted fake API — success, 409 on each step, 5xx/429/transport retries
 * with backoff, a permanent 422, a pod gone before its Event, a bundle too
 * large, and a restart that resumes from the files. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "publish/pubqueue.h"
#include "base/fileio.h"

#define OPS 7 /* report, report_uid, bundle, status, alive, event, resolve */

struct fake {
	/* answers per op, consumed in order; past the end: 0 */
	int script[OPS][8];
	size_t pos[OPS];
	unsigned calls[OPS];
	int alive;
	unsigned event_count;
	size_t bundle_len;
	char last_owner_uid[64];
};

static int next(struct fake *f, int op, struct kube_error *e)
{
	int r = f->pos[op] < 8 ? f->script[op][f->pos[op]++] : 0;

	f->calls[op]++;
	memset(e, 0, sizeof(*e));
	e->code = r;
	/* as kube_status_parse would say */
	e->retryable = r == -EAGAIN || r == -EIO || r == -ECONNRESET;
	snprintf(e->message, sizeof(e->message), "fake %d", r);
	return r;
}

static int f_report(void *ud, const struct pub_item *it, char *uid, size_t size,
		    struct kube_error *e)
{
	int r = next(ud, 0, e);

	(void)it;
	if (r == 0)
		snprintf(uid, size, "uid-created");
	return r;
}

static int f_report_uid(void *ud, const struct pub_item *it, char *uid,
			size_t size, struct kube_error *e)
{
	int r = next(ud, 1, e);

	(void)it;
	if (r == 0)
		snprintf(uid, size, "uid-existing");
	return r;
}

static int f_bundle(void *ud, const struct pub_item *it, const void *data,
		    size_t len, struct kube_error *e)
{
	struct fake *f = ud;

	(void)data;
	f->bundle_len = len;
	snprintf(f->last_owner_uid, sizeof(f->last_owner_uid), "%s",
		 it->report_uid);
	return next(ud, 2, e);
}

static int f_status(void *ud, const struct pub_item *it, struct kube_error *e)
{
	(void)it;
	return next(ud, 3, e);
}

static int f_alive(void *ud, const struct pub_item *it, struct kube_error *e)
{
	struct fake *f = ud;
	int r = next(ud, 4, e);

	(void)it;
	return r < 0 ? r : f->alive;
}

static int f_event(void *ud, const struct pub_item *it, unsigned *count,
		   struct kube_error *e)
{
	struct fake *f = ud;
	int r = next(ud, 5, e);

	(void)it;
	if (r == 0)
		*count = ++f->event_count;
	return r;
}

static int f_read(void *ud, const char *file, void **ret, size_t *len)
{
	size_t n = strstr(file, "huge") ? (1u << 20) : 1000;

	(void)ud;
	if (strstr(file, "missing"))
		return -ENOENT;
	*ret = calloc(1, n);
	*len = n;
	return 0;
}

/* The pod found by its UID (the detector's cache did not know it). */
static int f_resolve(void *ud, struct pub_item *it, struct kube_error *e)
{
	int r = next(ud, 6, e);

	if (r < 0)
		return r;
	snprintf(it->ns, sizeof(it->ns), "shop");
	snprintf(it->pod, sizeof(it->pod), "web-1");
	snprintf(it->container, sizeof(it->container), "app");
	return 0;
}

static const struct pub_ops ops = {f_report, f_report_uid, f_bundle, f_status,
				   f_alive,  f_event,	   f_read,   f_resolve};
static const struct pub_backoff bo = {.base_ms = 100, .cap_ms = 1000};

static char dir[64];
static int state_fd = -1;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-pubqueue-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(state_fd, 0);
}

static void teardown(void)
{
	rm_rf_at(AT_FDCWD, dir);
	close(state_fd);
}

TestSuite(pubqueue, .init = setup, .fini = teardown);

static struct pub_item item(const char *id, const char *file)
{
	struct pub_item it = {0};

	snprintf(it.id, sizeof(it.id), "%s", id);
	snprintf(it.ns, sizeof(it.ns), "default");
	snprintf(it.pod, sizeof(it.pod), "victim");
	snprintf(it.pod_uid, sizeof(it.pod_uid), "3f1c2a8e");
	snprintf(it.container, sizeof(it.container), "app");
	snprintf(it.bundle_file, sizeof(it.bundle_file), "%s", file);
	snprintf(it.summary, sizeof(it.summary), "a \"quoted\" summary");
	it.pid = 4242;
	it.limit = 67108864;
	return it;
}

static bool queued_file(const char *id)
{
	char p[128];

	snprintf(p, sizeof(p), "queue/%s.json", id);
	return faccessat(state_fd, p, F_OK, 0) == 0;
}

Test(pubqueue, happy_path_all_steps_once)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-1", "reports/oom-a-1.tar.gz");
	uint64_t next;

	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_add(q, &it), -EEXIST);
	cr_assert(queued_file("oom-a-1"), "saved before any API call");
	cr_assert_eq(pubqueue_run(q, 1000, &next), 1);
	cr_assert_eq(next, UINT64_MAX);
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_not(queued_file("oom-a-1"));
	for (int op = 0; op < OPS; op++)
		cr_assert_eq(f.calls[op], op == 1 || op == 6 ? 0 : 1, "op %d",
			     op);
	cr_assert_str_eq(f.last_owner_uid, "uid-created");
	cr_assert_eq(f.bundle_len, 1000);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	pubqueue_free(q);
}

Test(pubqueue, conflicts_409_count_as_done)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-2", "reports/x.tar.gz");

	f.script[0][0] = -EEXIST; /* the report exists */
	f.script[2][0] = -EEXIST; /* so does the bundle */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[1], 1, "uid fetched after the 409");
	cr_assert_str_eq(f.last_owner_uid, "uid-existing");
	cr_assert_eq(f.calls[3], 1);
	cr_assert_eq(f.calls[5], 1);
	cr_assert_eq(pubqueue_stats(q)->conflicts, 2);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	pubqueue_free(q);
}

Test(pubqueue, retries_5xx_429_transport_with_backoff)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-3", "reports/x.tar.gz");
	uint64_t next, now = 10000;

	f.script[0][0] = -EIO;	      /* 503 on the report */
	f.script[0][1] = -EAGAIN;     /* 429 */
	f.script[2][0] = -ECONNRESET; /* the API went away mid-bundle */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_REPORT);
	cr_assert(next >= now + 75 && next <= now + 125, "1st: ~100 ms, %llu",
		  (unsigned long long)(next - now));
	cr_assert_eq(pubqueue_run(q, now + 50, NULL), 0);
	cr_assert_eq(f.calls[0], 1, "not due yet: no call");
	now = next;
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert(next >= now + 150 && next <= now + 250, "2nd: ~200 ms");
	now = next;
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_BUNDLE);
	cr_assert_eq(pubqueue_item(q, 0)->attempts, 1,
		     "a new step counts anew");
	now = next;
	cr_assert_eq(pubqueue_run(q, now, NULL), 1);
	cr_assert_eq(f.calls[0], 3);
	cr_assert_eq(f.calls[2], 2);
	cr_assert_eq(pubqueue_stats(q)->retries, 3);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	pubqueue_free(q);
}

Test(pubqueue, backoff_is_capped_and_jittered)
{
	cr_assert_eq(pub_backoff_ms(&bo, 1, 1.0), 100);
	cr_assert_eq(pub_backoff_ms(&bo, 2, 1.0), 200);
	cr_assert_eq(pub_backoff_ms(&bo, 4, 1.0), 800);
	cr_assert_eq(pub_backoff_ms(&bo, 5, 1.0), 1000, "capped");
	cr_assert_eq(pub_backoff_ms(&bo, 60, 1.0), 1000, "no overflow");
	cr_assert_eq(pub_backoff_ms(&bo, 5, 0.75), 750);
	cr_assert_eq(pub_backoff_ms(&bo, 5, 9.0), 1250, "jitter clamped");
}

Test(pubqueue, permanent_422_moves_to_failed)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-a-4", "reports/x.tar.gz");
	struct pub_item b = item("oom-a-5", "reports/y.tar.gz");

	f.script[0][0] = -EINVAL; /* 422 */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_add(q, &b), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 2, "one failed, one done");
	cr_assert_eq(pubqueue_stats(q)->failed, 1);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	cr_assert_not(queued_file("oom-a-4"));
	cr_assert_eq(faccessat(state_fd, "queue/failed/oom-a-4.json", F_OK, 0),
		     0);
	pubqueue_free(q);
}

Test(pubqueue, pod_gone_skips_event_only)
{
	struct fake f = {.alive = 0};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-6", "reports/x.tar.gz");

	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[0], 1, "report published");
	cr_assert_eq(f.calls[2], 1, "bundle published");
	cr_assert_eq(f.calls[3], 1, "status patched");
	cr_assert_eq(f.calls[5], 0, "no Event for a gone pod");
	cr_assert_eq(pubqueue_stats(q)->pod_gone, 1);
	pubqueue_free(q);
}

Test(pubqueue, pod_lookup_failure_retries_event)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-7", "reports/x.tar.gz");
	uint64_t next;

	f.script[4][0] = -ECONNRESET;
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_EVENT);
	cr_assert_eq(pubqueue_run(q, next, NULL), 1);
	cr_assert_eq(f.calls[5], 1);
	pubqueue_free(q);
}

Test(pubqueue, bundle_too_large_or_missing_still_reports)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-a-8", "reports/huge.tar.gz");
	struct pub_item b = item("oom-a-9", "reports/missing.tar.gz");
	struct pub_item c = item("oom-a-10", "reports/x.tar.gz");

	f.script[2][0] = -E2BIG; /* c: the server refuses its size */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_add(q, &b), 0);
	cr_assert_eq(pubqueue_add(q, &c), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 3);
	cr_assert_eq(f.calls[2], 1, "only c's bundle was sent");
	cr_assert_eq(f.calls[3], 3, "every report gets its status");
	cr_assert_eq(pubqueue_stats(q)->published, 3);
	pubqueue_free(q);
}

Test(pubqueue, restart_resumes_from_files)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-b-1", "reports/x.tar.gz");
	struct pub_item b = item("oom-b-2", "reports/x.tar.gz");

	a.added_ms = 1;
	b.added_ms = 2;
	f.script[3][0] = -EIO; /* a: status fails, then the agent stops */
	f.script[0][1] = -EIO; /* b: report fails */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_add(q, &b), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 0);
	pubqueue_free(q);
	/* a garbage file is set aside, not fatal */
	cr_assert_eq(
		write_file_atomic_at(state_fd, "queue/bad.json", "{", 1, 0600),
		0);
	memset(&f, 0, sizeof(f));
	f.alive = 1;
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 2);
	cr_assert_str_eq(pubqueue_item(q, 0)->id, "oom-b-1", "kill order");
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_STATUS);
	cr_assert_str_eq(pubqueue_item(q, 0)->report_uid, "uid-created");
	cr_assert_str_eq(pubqueue_item(q, 0)->summary, "a \"quoted\" summary");
	cr_assert_eq(pubqueue_item(q, 0)->pid, 4242);
	cr_assert_eq(pubqueue_item(q, 1)->step, PUB_REPORT);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 2);
	cr_assert_eq(f.calls[0], 1, "a's report is not created again");
	cr_assert_eq(f.calls[2], 1, "nor its bundle");
	cr_assert_eq(f.calls[3], 2);
	cr_assert_eq(f.calls[5], 2);
	cr_assert_eq(faccessat(state_fd, "queue/failed/bad.json", F_OK, 0), 0);
	pubqueue_free(q);
}

Test(pubqueue, event_count_recorded)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-c-1", "reports/x.tar.gz");
	struct pub_item b = item("oom-c-2", "reports/x.tar.gz");

	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_add(q, &b), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 2);
	cr_assert_eq(f.event_count, 2);
	pubqueue_free(q);
}

/* A kill in a pod the cache did not know: the pod is named before the
 * report; a failed list (the API server away) is retried, never taken for
 * "gone"; the step survives a restart. */
Test(pubqueue, unknown_pod_resolved_first_and_retried)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-9", "reports/x.tar.gz");
	uint64_t next, now = 5000;

	it.ns[0] = it.pod[0] = it.container[0] = '\0';
	f.script[6][0] = -ECONNREFUSED;
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_RESOLVE);
	cr_assert_eq(f.calls[0], 0, "no report before the pod is named");
	pubqueue_free(q);
	/* a restart: the item is read back at its step */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_RESOLVE);
	cr_assert_eq(pubqueue_run(q, now + 2000, NULL), 1);
	cr_assert_eq(f.calls[6], 2);
	cr_assert_eq(f.calls[0], 1);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	pubqueue_free(q);
}

/* A kill whose pod and container were known is not resolved again. */
Test(pubqueue, known_pod_skips_resolve)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-10", "reports/x.tar.gz");

	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[6], 0);
	pubqueue_free(q);
}

Test(pubqueue, staged_kill_is_loaded_by_the_next_start_and_published_once)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-s-1", "reports/oom-s-1.tar.gz");
	struct pub_item bad = item("../oom-s-2", "reports/x.tar.gz");
	struct pub_item none = item("", "reports/x.tar.gz");

	/* the queue dir exists: the agent opened it before any kill */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	pubqueue_free(q);
	a.step = PUB_EVENT; /* what the detector holds must not leak in */
	a.attempts = 3;
	cr_assert_eq(pubqueue_stage(state_fd, &a), 0);
	cr_assert_eq(pubqueue_stage(state_fd, &bad), -EINVAL);
	cr_assert_eq(pubqueue_stage(state_fd, &none), -EINVAL);
	cr_assert(queued_file("oom-s-1"));
	/* the agent died before its publisher took the kill; it starts again */
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_item(q, 0)->step, PUB_REPORT);
	cr_assert_eq(pubqueue_item(q, 0)->attempts, 0);
	cr_assert(pubqueue_item(q, 0)->bundle_stored);
	cr_assert_neq(pubqueue_item(q, 0)->added_ms, 0);
	cr_assert_str_eq(pubqueue_item(q, 0)->summary, "a \"quoted\" summary");
	/* the hand-over of the same kill after a restart is a duplicate */
	cr_assert_eq(pubqueue_add(q, &a), -EEXIST);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[0], 1, "one report");
	cr_assert_eq(f.calls[2], 1, "one bundle");
	cr_assert_not(queued_file("oom-s-1"));
	pubqueue_free(q);
}

Test(pubqueue, create_404_retried_while_the_resource_is_not_served)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-n-1", "reports/x.tar.gz");
	struct pub_item b = item("oom-n-2", "reports/x.tar.gz");
	uint64_t now = 0, next = 0;

	/* a: an API server just started; 404 twice on the report, once on
	 * the bundle, then served */
	f.script[0][0] = f.script[0][1] = -ENOENT;
	f.script[2][0] = -ENOENT;
	cr_assert_eq(pubqueue_open(state_fd, &ops, &f, &bo, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	for (int i = 0; i < 10 && pubqueue_depth(q); i++) {
		pubqueue_run(q, now, &next);
		now = next == UINT64_MAX ? now : next;
	}
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	cr_assert_eq(pubqueue_stats(q)->failed, 0);
	cr_assert_eq(f.calls[0], 3);
	cr_assert_eq(f.calls[2], 2);
	/* b: never served (the CRD is gone): fails after the retries */
	memset(f.script, 0, sizeof(f.script));
	memset(f.pos, 0, sizeof(f.pos));
	memset(f.calls, 0, sizeof(f.calls));
	for (int i = 0; i < 8; i++)
		f.script[0][i] = -ENOENT;
	cr_assert_eq(pubqueue_add(q, &b), 0);
	for (int i = 0; i < 20 && pubqueue_depth(q); i++) {
		pubqueue_run(q, now, &next);
		now = next == UINT64_MAX ? now : next;
		if (f.pos[0] == 8) /* past the script: make it keep failing */
			f.script[0][7] = -ENOENT, f.pos[0] = 7;
	}
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_eq(pubqueue_stats(q)->failed, 1);
	cr_assert_eq(f.calls[0], 9, "8 retries, then it fails");
	cr_assert_eq(faccessat(state_fd, "queue/failed/oom-n-2.json", F_OK, 0),
		     0);
	pubqueue_free(q);
}
