/* SPDX-License-Identifier: Apache-2.0 */
/* pubqueue with the Kubernetes target (target_kube.c): every transition
 * of the publish state machine against a scripted fake API — success, 409
 * on each step, 5xx/429/transport retries with backoff, a permanent 422, a
 * pod gone before its Event, a bundle too large, and a restart that
 * resumes from the files; and the metrics it feeds (publish latency once a
 * kill, failures by reason, queue depth) as /metrics renders them. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "publish/pubqueue.h"
#include "publish/target_kube.h"
#include "obs/metrics_agent.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/util.h"

/* the metrics the module under test feeds (NULL: none) */
static struct agent_metrics *M;

#define OPS                                                             \
	8 /* report, report_uid, bundle, status, alive, event, resolve, \
	   bundle_is_ours */

struct fake {
	/* answers per op, consumed in order; past the end: 0 */
	int script[OPS][8];
	size_t pos[OPS];
	unsigned calls[OPS];
	int alive;
	bool planted; /* the bundle after a 409 is not ours */
	unsigned event_count;
	size_t bundle_len;
	char last_owner_uid[64];
};

/* The HTTP status behind an -errno of kube.h's table (0: no answer). */
static long status_of(int r)
{
	switch (r) {
	case -EINVAL:
		return 422;
	case -EACCES:
		return 401;
	case -EPERM:
		return 403;
	case -ENOENT:
		return 404;
	case -EEXIST:
	case -EBUSY:
		return 409;
	case -E2BIG:
		return 413;
	case -EAGAIN:
		return 429;
	case -EIO:
		return 503;
	default:
		return 0;
	}
}

static int next(struct fake *f, int op, struct kube_error *e)
{
	int r = f->pos[op] < 8 ? f->script[op][f->pos[op]++] : 0;

	f->calls[op]++;
	memset(e, 0, sizeof(*e));
	e->code = r;
	e->http_status = status_of(r);
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
		 kube_item_get(it)->report_uid);
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
	snprintf(kube_item_of(it)->ns, sizeof(kube_item_of(it)->ns), "shop");
	snprintf(kube_item_of(it)->pod, sizeof(kube_item_of(it)->pod), "web-1");
	snprintf(kube_item_of(it)->container,
		 sizeof(kube_item_of(it)->container), "app");
	return 0;
}

static int f_ours(void *ud, const struct pub_item *it, const void *data,
		  size_t len, struct kube_error *e)
{
	struct fake *f = ud;
	int r = next(ud, 7, e);

	(void)it, (void)data, (void)len;
	return r < 0 ? r : !f->planted;
}

static const struct kube_target_api api = {
	.create_report = f_report,
	.get_report_uid = f_report_uid,
	.create_bundle = f_bundle,
	.bundle_is_ours = f_ours,
	.patch_status = f_status,
	.pod_alive = f_alive,
	.post_event = f_event,
	.read_bundle = f_read,
	.resolve = f_resolve,
};
static const struct pub_backoff bo = {.base_ms = 100, .cap_ms = 1000};

static char dir[64];
static int state_fd = -1;
/* the target under test, over the test's fake */
static struct kube_target KT;

static int open_q(struct fake *f, struct pubqueue **q)
{
	kube_target_init(&KT, &api, f, M);
	return pubqueue_open(state_fd, &KT.target, &bo, M, q);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-pubqueue-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	state_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(state_fd, 0);
	kube_target_init(&KT, &api, NULL, M);
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
	struct kube_item *k = kube_item_of(&it);

	snprintf(it.id, sizeof(it.id), "%s", id);
	snprintf(k->ns, sizeof(k->ns), "default");
	snprintf(k->pod, sizeof(k->pod), "victim");
	snprintf(k->pod_uid, sizeof(k->pod_uid), "3f1c2a8e");
	snprintf(k->container, sizeof(k->container), "app");
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

	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_add(q, &it), -EEXIST);
	cr_assert(queued_file("oom-a-1"), "saved before any API call");
	cr_assert_eq(pubqueue_run(q, 1000, &next), 1);
	cr_assert_eq(next, UINT64_MAX);
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_not(queued_file("oom-a-1"));
	for (int op = 0; op < OPS; op++)
		cr_assert_eq(f.calls[op], op == 1 || op >= 6 ? 0 : 1, "op %d",
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
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[1], 1, "uid fetched after the 409");
	cr_assert_str_eq(f.last_owner_uid, "uid-existing");
	cr_assert_eq(f.calls[3], 1);
	cr_assert_eq(f.calls[5], 1);
	cr_assert_eq(KT.stats.conflicts, 2);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	pubqueue_free(q);
}

/* A bundle planted under the report's name (anyone who may create
 * OOMBundles in the namespace can guess the next one) is not taken as
 * ours: it is deleted (by bundle_is_ours) and ours created. */
Test(pubqueue, a_planted_bundle_is_replaced_not_trusted)
{
	struct fake f = {.alive = 1, .planted = true};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-9", "reports/x.tar.gz");

	f.script[2][0] = -EEXIST; /* a bundle of that name is there */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[7], 1, "the stored bundle's data checked");
	cr_assert_eq(f.calls[2], 2, "ours created after the planted one");
	cr_assert_eq(KT.stats.planted, 1);
	cr_assert_eq(KT.stats.conflicts, 1);
	cr_assert_eq(pubqueue_stats(q)->published, 1);
	pubqueue_free(q);
}

/* Not known whether the stored one is ours (the GET failed): retried,
 * never called stored. */
Test(pubqueue, a_409_whose_bundle_cannot_be_read_is_retried)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-10", "reports/x.tar.gz");
	uint64_t next;

	f.script[2][0] = -EEXIST;
	f.script[7][0] = -EIO; /* 503 on the GET */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, &next), 0);
	cr_assert_eq(pubqueue_stats(q)->published, 0);
	cr_assert_eq(f.calls[3], 0, "no status before the bundle is known");
	cr_assert_eq(pubqueue_run(q, next, NULL), 1);
	cr_assert_eq(f.calls[7], 1, "the retry's create succeeded");
	cr_assert_eq(f.calls[2], 2);
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
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_REPORT);
	cr_assert(next >= now + 75 && next <= now + 125, "1st: ~100 ms, %llu",
		  (unsigned long long)(next - now));
	cr_assert_eq(pubqueue_run(q, now + 50, NULL), 0);
	cr_assert_eq(f.calls[0], 1, "not due yet: no call");
	now = next;
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert(next >= now + 150 && next <= now + 250, "2nd: ~200 ms");
	now = next;
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_BUNDLE);
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
	cr_assert_eq(open_q(&f, &q), 0);
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

/* queue/failed/ holds the newest 64 items: older ones planted there go at
 * open, and again after each item given up on; other files and symlinks
 * stay. */
Test(pubqueue, failed_items_kept_newest_64)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-new", "reports/x.tar.gz");
	char name[64];
	int dfd;

	cr_assert_eq(mkdir_p_at(state_fd, "queue/failed", 0750), 0);
	dfd = openat(state_fd, "queue/failed", O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	for (int i = 0; i < 70; i++) {
		/* oom-00 oldest, oom-69 newest, a second apart */
		struct timespec t[2] = {{.tv_sec = 1000000 + i},
					{.tv_sec = 1000000 + i}};

		snprintf(name, sizeof(name), "oom-%02d.json", i);
		cr_assert_eq(write_file_atomic_at(dfd, name, "{}", 2, 0640), 0);
		cr_assert_eq(utimensat(dfd, name, t, 0), 0);
	}
	cr_assert_eq(write_file_atomic_at(dfd, "notes.txt", "x", 1, 0640), 0);
	cr_assert_eq(symlinkat("oom-00.json", dfd, "link.json"), 0);
	cr_assert_eq(open_q(&f, &q), 0);
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "oom-%02d.json", i);
		cr_assert_eq(faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) ==
				     0,
			     i >= 6, "%s", name);
	}
	cr_assert_eq(faccessat(dfd, "notes.txt", F_OK, 0), 0);
	cr_assert_eq(faccessat(dfd, "link.json", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	f.script[0][0] = -EINVAL; /* 422: given up on, the newest */
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(faccessat(dfd, "oom-new.json", F_OK, 0), 0);
	cr_assert_neq(faccessat(dfd, "oom-06.json", F_OK, 0), 0);
	cr_assert_eq(faccessat(dfd, "oom-07.json", F_OK, 0), 0);
	pubqueue_free(q);
	close(dfd);
}

/* More items on disk than the queue holds (4096: an API away for long):
 * the rest stay in queue/ for a later start, never moved to failed/ as
 * if unreadable, and their bundles are still the queue's. */
Test(pubqueue, items_past_the_most_stay_queued)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-0", "reports/0.tar.gz");
	struct strbuf sb = STRBUF_INIT;
	char name[64];
	int dfd, n = 0;
	DIR *d;
	struct dirent *de;

	cr_assert_eq(mkdir_p_at(state_fd, "queue", 0750), 0);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &it), 0);
	dfd = openat(state_fd, "queue", O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	strbuf_init(&sb, 1 << 16);
	cr_assert_geq(read_file_at(dfd, "oom-0.json", 1 << 16, &sb), 0);
	for (int i = 1; i <= 4096; i++) {
		int fd;

		snprintf(name, sizeof(name), "oom-%d.json", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
		cr_assert_geq(fd, 0);
		cr_assert_eq(write_all(fd, sb.buf, sb.len), 0);
		close(fd);
	}
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 4096);
	cr_assert_eq(opendir_at(dfd, ".", &d), 0);
	while ((de = readdir(d)))
		n += strstr(de->d_name, ".json") != NULL;
	closedir(d);
	cr_assert_eq(n, 4097, "every item still in queue/");
	cr_assert_eq(opendir_at(state_fd, "queue/failed", &d), 0);
	n = 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	cr_assert_eq(n, 0, "nothing taken for unreadable");
	pubqueue_free(q);
	strbuf_release(&sb);
	close(dfd);
}

Test(pubqueue, pod_gone_skips_event_only)
{
	struct fake f = {.alive = 0};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-6", "reports/x.tar.gz");

	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[0], 1, "report published");
	cr_assert_eq(f.calls[2], 1, "bundle published");
	cr_assert_eq(f.calls[3], 1, "status patched");
	cr_assert_eq(f.calls[5], 0, "no Event for a gone pod");
	cr_assert_eq(KT.stats.pod_gone, 1);
	pubqueue_free(q);
}

Test(pubqueue, pod_lookup_failure_retries_event)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item it = item("oom-a-7", "reports/x.tar.gz");
	uint64_t next;

	f.script[4][0] = -ECONNRESET;
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, 0, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_EVENT);
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
	cr_assert_eq(open_q(&f, &q), 0);
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
	cr_assert_eq(open_q(&f, &q), 0);
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
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 2);
	cr_assert_str_eq(pubqueue_item(q, 0)->id, "oom-b-1", "kill order");
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_STATUS);
	cr_assert_str_eq(kube_item_get(pubqueue_item(q, 0))->report_uid,
			 "uid-created");
	cr_assert_str_eq(pubqueue_item(q, 0)->summary, "a \"quoted\" summary");
	cr_assert_eq(pubqueue_item(q, 0)->pid, 4242);
	cr_assert_eq(pubqueue_item(q, 1)->step, KUBE_STEP_REPORT);
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

	cr_assert_eq(open_q(&f, &q), 0);
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

	kube_item_of(&it)->ns[0] = kube_item_of(&it)->pod[0] = '\0';
	kube_item_of(&it)->container[0] = '\0';
	f.script[6][0] = -ECONNREFUSED;
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &it), 0);
	cr_assert_eq(pubqueue_run(q, now, &next), 0);
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_RESOLVE);
	cr_assert_eq(f.calls[0], 0, "no report before the pod is named");
	pubqueue_free(q);
	/* a restart: the item is read back at its step */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_RESOLVE);
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

	cr_assert_eq(open_q(&f, &q), 0);
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
	cr_assert_eq(open_q(&f, &q), 0);
	pubqueue_free(q);
	a.step = KUBE_STEP_EVENT; /* what the detector holds must not leak in */
	a.attempts = 3;
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &a), 0);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &bad), -EINVAL);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &none), -EINVAL);
	cr_assert(queued_file("oom-s-1"));
	/* the agent died before its publisher took the kill; it starts again */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_REPORT);
	cr_assert_eq(pubqueue_item(q, 0)->attempts, 0);
	cr_assert(kube_item_get(pubqueue_item(q, 0))->bundle_stored);
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

/* An item whose case lies beside it (its bundle not written yet) is left
 * by the start's load to the detector, counted, read as it was staged,
 * and taken once the case is gone; a case that is a symlink does not
 * hold an item back. */
Test(pubqueue, an_item_with_its_case_beside_it_waits_for_the_detector)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-c-1", "reports/oom-c-1.tar.gz");
	struct pub_item b = item("oom-c-2", "reports/oom-c-2.tar.gz");
	struct pub_item got;
	int qfd = pubqueue_dir_open(state_fd);

	cr_assert_geq(qfd, 0);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &a), 0);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &b), 0);
	cr_assert_eq(write_file_atomic_at(qfd, "oom-c-1" PUBQUEUE_CASE_SUFFIX,
					  "x", 1, 0600),
		     0);
	cr_assert_eq(symlinkat("oom-c-1" PUBQUEUE_CASE_SUFFIX, qfd,
			       "oom-c-2" PUBQUEUE_CASE_SUFFIX),
		     0);
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_unfinished(q), 1);
	cr_assert_str_eq(pubqueue_item(q, 0)->id, "oom-c-2");
	cr_assert_eq(pubqueue_read(state_fd, &KT.target, "oom-c-1", &got), 0);
	cr_assert_str_eq(got.bundle_file, "reports/oom-c-1.tar.gz");
	cr_assert_str_eq(kube_item_get(&got)->pod, "victim");
	cr_assert_eq(pubqueue_read(state_fd, &KT.target, "oom-c-9", &got),
		     -ENOENT);
	cr_assert_eq(pubqueue_read(state_fd, &KT.target, "../x", &got),
		     -EINVAL);
	/* the detector wrote the bundle and removed the case: its take */
	cr_assert_eq(unlinkat(qfd, "oom-c-1" PUBQUEUE_CASE_SUFFIX, 0), 0);
	cr_assert_eq(pubqueue_take(q, "oom-c-1"), 0);
	cr_assert_eq(pubqueue_depth(q), 2);
	pubqueue_free(q);
	close(qfd);
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
	cr_assert_eq(open_q(&f, &q), 0);
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

/* ---- the metrics it feeds (obs/metrics_agent.c) ---- */

static void metrics_setup(void)
{
	setup();
	cr_assert_eq(agent_metrics_new(&M), 0);
}

static void metrics_teardown(void)
{
	agent_metrics_free(M);
	teardown();
}

TestSuite(pubqueue_metrics, .init = metrics_setup, .fini = metrics_teardown);

/* The value of the sample line "<series> <value>" in /metrics' text; -1
 * when the series is not there. */
static double sample(const char *series)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(series);
	double v = -1;

	strbuf_init(&sb, 1 << 20);
	cr_assert_eq(agent_metrics_render(M, &sb), 0);
	for (const char *l = sb.buf; l && *l;
	     l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (!strncmp(l, series, n) && l[n] == ' ') {
			v = strtod(l + n + 1, NULL);
			break;
		}
	strbuf_release(&sb);
	return v;
}

#define COUNT "oomlens_publish_latency_seconds_count"
#define SUM "oomlens_publish_latency_seconds_sum"
#define DEPTH "oomlens_publish_queue_depth"
#define FAILS "oomlens_publish_failures_total"

static uint64_t now_ms(void)
{
	return now_realtime_us() / 1000;
}

Test(pubqueue_metrics, latency_from_the_kill_once_and_depth_each_change)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-m-1", "reports/x.tar.gz");
	double sum;

	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(sample(DEPTH), 0, "an empty queue: 0, and present");
	cr_assert_eq(sample(COUNT), 0, "no kill published yet");
	a.killed_at_ms = (int64_t)now_ms() - 2500;
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(sample(DEPTH), 1);
	cr_assert_eq(pubqueue_add(q, &a), -EEXIST);
	cr_assert_eq(sample(DEPTH), 1, "a duplicate adds nothing");
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(sample(DEPTH), 0);
	cr_assert_eq(sample(COUNT), 1);
	sum = sample(SUM);
	cr_assert(sum >= 2.5 && sum < 4, "from killed_at_ms: %g s", sum);
	/* an item without its kill's time (an older agent's file): the
	 * latency is not known, nothing is observed */
	a = item("oom-m-2", "reports/x.tar.gz");
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(sample(COUNT), 1);
	cr_assert_eq(sample(SUM), sum);
	pubqueue_free(q);
}

/* A bundle already in the API at the first try was stored (and counted)
 * before: the same kill queued again, or a run that stopped before it
 * saved the step. After a failed try of this run, a 409 is this run's own
 * answer lost on the way: that kill counts. */
Test(pubqueue_metrics, a_bundle_stored_before_is_not_counted_again)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item again = item("oom-m-3", "reports/x.tar.gz");
	struct pub_item lost = item("oom-m-4", "reports/x.tar.gz");
	uint64_t next;

	again.killed_at_ms = lost.killed_at_ms = (int64_t)now_ms() - 1000;
	again.added_ms = 1;
	lost.added_ms = 2;
	f.script[0][0] = -EEXIST;    /* again: the report is there */
	f.script[2][0] = -EEXIST;    /* and its bundle */
	f.script[2][1] = -ETIMEDOUT; /* lost: the answer never came */
	f.script[2][2] = -EEXIST;    /* its retry: stored after all */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &again), 0);
	cr_assert_eq(pubqueue_add(q, &lost), 0);
	cr_assert_eq(pubqueue_run(q, 0, &next), 1);
	cr_assert_eq(sample(COUNT), 0, "the kill published before: none");
	cr_assert_eq(sample(DEPTH), 1, "lost waits for its retry");
	cr_assert_eq(sample(FAILS "{reason=\"timeout\"}"), 1);
	cr_assert_eq(pubqueue_run(q, next, NULL), 1);
	cr_assert_eq(sample(COUNT), 1, "the lost answer's kill");
	cr_assert_eq(sample(DEPTH), 0);
	cr_assert_eq(pubqueue_stats(q)->published, 2);
	pubqueue_free(q);
}

/* An agent restart: a kill that never reached the API is published by the
 * next run with its whole wait as latency; one whose report and bundle
 * were stored before the restart (it stopped at its status) is not
 * counted by the next run. */
Test(pubqueue_metrics, replayed_after_a_restart_counts_the_whole_wait)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item old = item("oom-m-5", "reports/x.tar.gz");
	struct pub_item half = item("oom-m-6", "reports/x.tar.gz");
	double sum;

	old.killed_at_ms = (int64_t)now_ms() - 90000; /* 90 s ago */
	half.killed_at_ms = (int64_t)now_ms() - 1000;
	old.added_ms = 1;
	half.added_ms = 2;
	f.script[0][0] = -ECONNREFUSED; /* old: the API is away */
	f.script[3][0] = -EIO;		/* half: its status fails */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &old), 0);
	cr_assert_eq(pubqueue_add(q, &half), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 0);
	cr_assert_eq(sample(COUNT), 1, "half's report and bundle are in");
	cr_assert_eq(sample(DEPTH), 2);
	pubqueue_free(q);
	/* the next process: a new registry, the queue from the files */
	agent_metrics_free(M);
	cr_assert_eq(agent_metrics_new(&M), 0);
	memset(&f, 0, sizeof(f));
	f.alive = 1;
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(sample(DEPTH), 2, "set from the files at start");
	cr_assert_eq(pubqueue_item(q, 0)->killed_at_ms, old.killed_at_ms,
		     "the kill's time is in the file");
	cr_assert_eq(pubqueue_run(q, 0, NULL), 2);
	cr_assert_eq(sample(DEPTH), 0);
	cr_assert_eq(sample(COUNT), 1, "old only");
	sum = sample(SUM);
	cr_assert(sum >= 90 && sum < 92, "the whole wait: %g s", sum);
	cr_assert_eq(f.calls[2], 1, "only old's bundle was sent again");
	pubqueue_free(q);
}

/* One increment per failed call, by a reason from the fixed set; a step
 * given up counts its last try too; a cancelled call (the agent stopping)
 * is none. */
Test(pubqueue_metrics, failures_by_reason)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-m-7", "reports/x.tar.gz");
	struct pub_item b = item("oom-m-8", "reports/x.tar.gz");
	uint64_t now = 0, next = 0;

	a.killed_at_ms = b.killed_at_ms = (int64_t)now_ms();
	f.script[0][0] = -EIO;		/* a: 503 */
	f.script[0][1] = -ECONNREFUSED; /* a: down */
	f.script[0][3] = -EINVAL;	/* b: 422, given up */
	f.script[2][0] = -EAGAIN;	/* a: 429 */
	f.script[2][1] = -E2BIG;	/* a: refused as too large */
	f.script[3][0] = -EPERM;	/* a: 403 */
	f.script[4][0] = -ECANCELED;	/* a: the agent stopping */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	for (int i = 0; i < 10 && pubqueue_depth(q); i++) {
		pubqueue_run(q, now, &next);
		now = next == UINT64_MAX ? now : next;
	}
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_eq(f.calls[0], 3);
	cr_assert_eq(pubqueue_add(q, &b), 0);
	cr_assert_eq(pubqueue_run(q, now, NULL), 1);
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_eq(sample(DEPTH), 0, "given up leaves the queue too");
	cr_assert_eq(pubqueue_stats(q)->failed, 1);
	cr_assert_eq(sample(FAILS "{reason=\"http_5xx\"}"), 1);
	cr_assert_eq(sample(FAILS "{reason=\"connect\"}"), 1);
	cr_assert_eq(sample(FAILS "{reason=\"http_4xx\"}"), 1);
	cr_assert_eq(sample(FAILS "{reason=\"throttled\"}"), 1);
	cr_assert_eq(sample(FAILS "{reason=\"too_large\"}"), 1);
	cr_assert_eq(sample(FAILS "{reason=\"forbidden\"}"), 1);
	cr_assert_eq(sample(FAILS "{reason=\"other\"}"), -1);
	/* a published without its bundle (refused as too large) counts; b,
	 * given up, has no latency */
	cr_assert_eq(sample(COUNT), 1);
	pubqueue_free(q);
}

struct reason_case {
	int r;
	long status;
	char want[16]; /* "": not counted */
};

ParameterizedTestParameters(pubqueue, failure_reason_is_a_fixed_label)
{
	static struct reason_case c[] = {
		{-ETIMEDOUT, 0, "timeout"},
		{-ECONNREFUSED, 0, "connect"},
		{-ECONNRESET, 0, "connect"},
		{-EHOSTUNREACH, 0, "connect"},
		{-EPROTO, 0, "tls"},
		{-EACCES, 401, "unauthorized"},
		{-EPERM, 403, "forbidden"},
		{-ENOENT, 404, "not_found"},
		{-EBUSY, 409, "conflict"},
		{-EAGAIN, 429, "throttled"},
		{-E2BIG, 413, "too_large"},
		{-E2BIG, 500, "too_large"}, /* etcd's size limit */
		{-E2BIG, 200, "too_large"}, /* an answer over the cap */
		{-EINVAL, 400, "http_4xx"},
		{-EINVAL, 422, "http_4xx"},
		{-ESTALE, 410, "http_4xx"},
		{-EIO, 418, "http_4xx"},
		{-EIO, 500, "http_5xx"},
		{-EIO, 503, "http_5xx"},
		{-EIO, 0, "http_5xx"},
		{-EIO, 302, "other"},
		{-ENOMEM, 0, "other"},
		{-EINVAL, 0, "other"}, /* a request never sent */
		{-ECANCELED, 0, ""},
	};

	return cr_make_param_array(struct reason_case, c, ARRAY_SIZE(c));
}

ParameterizedTest(struct reason_case *c, pubqueue,
		  failure_reason_is_a_fixed_label)
{
	struct kube_error e = {.http_status = c->status, .code = c->r};
	const char *got = pub_failure_reason(c->r, &e);

	snprintf(e.message, sizeof(e.message), "free text never a label");
	if (!c->want[0])
		cr_assert_null(got, "%d: %s", c->r, got);
	else
		cr_assert_str_eq(got ? got : "(null)", c->want, "%d/%ld", c->r,
				 c->status);
	cr_assert_str_eq(pub_failure_reason(-EIO, NULL), "http_5xx");
}

static void collect_bundle(const char *bundle_file, void *ud)
{
	struct strbuf *sb = ud;

	strbuf_addf(sb, "%s;", bundle_file);
}

Test(pubqueue, bundles_lists_staged_and_queued_not_failed)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-b-1", "reports/oom-b-1.tar.gz");
	struct pub_item b = item("oom-b-2", "reports/oom-b-2.tar.gz");
	struct pub_item c = item("oom-b-3", "reports/oom-b-3.tar.gz");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 4096);
	cr_assert_eq(pubqueue_bundles(state_fd, collect_bundle, &sb), -ENOENT,
		     "no queue before the first start");
	f.script[0][0] = -EINVAL; /* a: 422, to queue/failed/ */
	f.script[0][1] = -EIO;	  /* b: waits for its retry */
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_add(q, &a), 0);
	cr_assert_eq(pubqueue_add(q, &b), 0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &c), 0,
		     "the detector's");
	cr_assert_eq(
		write_file_atomic_at(state_fd, "queue/junk.json", "{", 1, 0600),
		0);
	cr_assert_eq(pubqueue_bundles(state_fd, collect_bundle, &sb), 2);
	cr_assert(strstr(sb.buf, "reports/oom-b-2.tar.gz;"), "%s", sb.buf);
	cr_assert(strstr(sb.buf, "reports/oom-b-3.tar.gz;"), "%s", sb.buf);
	cr_assert_not(strstr(sb.buf, "oom-b-1"), "%s", sb.buf);
	pubqueue_free(q);
}

/* The detector's staged file is the hand-over: the publisher takes the
 * item from it and writes nothing; a second hand-over of the same id, an
 * id with nothing staged and an id that is no file name are refused, and
 * a staged file that does not parse goes to queue/failed/. */
Test(pubqueue, take_reads_the_staged_file_and_writes_nothing)
{
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	struct pub_item a = item("oom-t-1", "reports/oom-t-1.tar.gz");
	struct stat before, after;

	cr_assert_eq(open_q(&f, &q), 0);
	a.limit = 123456789;
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &a), 0);
	cr_assert_eq(fstatat(state_fd, "queue/oom-t-1.json", &before, 0), 0);
	cr_assert_eq(pubqueue_depth(q), 0, "staged is not yet taken");
	cr_assert_eq(pubqueue_take(q, "oom-t-1"), 0);
	cr_assert_eq(fstatat(state_fd, "queue/oom-t-1.json", &after, 0), 0);
	cr_assert_eq(before.st_ino, after.st_ino, "not written again");
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_item(q, 0)->limit, 123456789, "from the file");
	cr_assert_eq(pubqueue_item(q, 0)->step, KUBE_STEP_REPORT);
	cr_assert_eq(pubqueue_take(q, "oom-t-1"), -EEXIST);
	cr_assert_eq(pubqueue_take(q, "oom-t-2"), -ENOENT);
	cr_assert_eq(pubqueue_take(q, "../oom-t-1"), -EINVAL);
	cr_assert_eq(pubqueue_take(q, ""), -EINVAL);
	cr_assert_eq(write_file_atomic_at(state_fd, "queue/oom-t-3.json",
					  "{\"id\":", 6, 0600),
		     0);
	cr_assert_eq(pubqueue_take(q, "oom-t-3"), -EBADMSG);
	cr_assert_not(queued_file("oom-t-3"));
	cr_assert_eq(faccessat(state_fd, "queue/failed/oom-t-3.json", F_OK, 0),
		     0, "kept for whoever looks");
	cr_assert_eq(pubqueue_depth(q), 1);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[0], 1, "one report");
	cr_assert_not(queued_file("oom-t-1"));
	pubqueue_free(q);
}

/* An item file as the agent before publish targets wrote it (no "target",
 * no "cgroup": every item was Kubernetes'), waiting at its status step:
 * loaded with every field, run from that step on. */
Test(pubqueue, an_older_agents_item_loads_as_kubernetes)
{
	static const char old[] =
		"{\"id\":\"oom-o-1\",\"ns\":\"shop\",\"pod\":\"web-1\","
		"\"pod_uid\":\"3f1c2a8e\",\"container\":\"app\","
		"\"container_id\":\"4b5ce8a2\",\"node\":\"n1\","
		"\"killed_at\":\"2026-12-07T03:00:00Z\",\"comm\":\"java\","
		"\"pid\":4242,\"anon_rss\":1048576,\"file_rss\":0,"
		"\"shmem_rss\":0,\"limit\":67108864,\"usage\":66060288,"
		"\"verdict\":\"heap\",\"summary\":\"s\","
		"\"bundle_file\":\"reports/oom-o-1.tar.gz\","
		"\"report_uid\":\"uid-old\",\"last_error\":\"\","
		"\"workload_kind\":\"Deployment\",\"workload\":\"web\","
		"\"killed_at_ms\":1796612400000,\"step\":\"status\","
		"\"bundle_stored\":false,\"pod_gone\":false,"
		"\"added_ms\":1796612400100,\"event_count\":3}";
	struct fake f = {.alive = 1};
	struct pubqueue *q;
	const struct pub_item *it;
	const struct kube_item *k;

	cr_assert_eq(mkdir_p_at(state_fd, "queue", 0750), 0);
	cr_assert_eq(write_file_atomic_at(state_fd, "queue/oom-o-1.json", old,
					  strlen(old), 0600),
		     0);
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 1);
	it = pubqueue_item(q, 0);
	k = kube_item_get(it);
	cr_assert_eq(it->step, KUBE_STEP_STATUS);
	cr_assert_str_eq(it->node, "n1");
	cr_assert_str_eq(it->comm, "java");
	cr_assert_eq(it->pid, 4242);
	cr_assert_eq(it->limit, 67108864);
	cr_assert_eq(it->killed_at_ms, 1796612400000);
	cr_assert_eq(it->added_ms, 1796612400100);
	cr_assert_str_eq(k->ns, "shop");
	cr_assert_str_eq(k->pod, "web-1");
	cr_assert_str_eq(k->pod_uid, "3f1c2a8e");
	cr_assert_str_eq(k->container_id, "4b5ce8a2");
	cr_assert_str_eq(k->report_uid, "uid-old");
	cr_assert_str_eq(k->workload_kind, "Deployment");
	cr_assert_str_eq(k->workload, "web");
	cr_assert_not(k->bundle_stored);
	cr_assert_eq(k->event_count, 3);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 1);
	cr_assert_eq(f.calls[0], 0, "not created again");
	cr_assert_eq(f.calls[2], 0);
	cr_assert_eq(f.calls[3], 1, "its status");
	cr_assert_eq(f.calls[5], 1, "its Event");
	pubqueue_free(q);
}

/* Another target's item (standalone's HTTP target staged it, then the
 * agent ran in cluster mode on the same state dir) is not run by this
 * one: set aside in queue/failed/ as it was; an item whose step its
 * target does not have likewise. */
Test(pubqueue, another_targets_item_is_set_aside_not_run)
{
	static const char http[] =
		"{\"id\":\"oom-h-1\",\"bundle_file\":\"reports/"
		"oom-h-1.tar.gz\","
		"\"target\":\"http\",\"step\":\"post\",\"added_ms\":1}";
	static const char nostep[] =
		"{\"id\":\"oom-h-2\",\"target\":\"kubernetes\","
		"\"step\":\"post\",\"added_ms\":2}";
	struct fake f = {.alive = 1};
	struct pubqueue *q;

	cr_assert_eq(mkdir_p_at(state_fd, "queue", 0750), 0);
	cr_assert_eq(write_file_atomic_at(state_fd, "queue/oom-h-1.json", http,
					  strlen(http), 0600),
		     0);
	cr_assert_eq(write_file_atomic_at(state_fd, "queue/oom-h-2.json",
					  nostep, strlen(nostep), 0600),
		     0);
	cr_assert_eq(open_q(&f, &q), 0);
	cr_assert_eq(pubqueue_depth(q), 0);
	cr_assert_not(queued_file("oom-h-1"));
	cr_assert_eq(faccessat(state_fd, "queue/failed/oom-h-1.json", F_OK, 0),
		     0);
	cr_assert_eq(faccessat(state_fd, "queue/failed/oom-h-2.json", F_OK, 0),
		     0);
	cr_assert_eq(pubqueue_run(q, 0, NULL), 0);
	cr_assert_eq(f.calls[0], 0);
	pubqueue_free(q);
}

/* What a staged item's file holds: the target's name, its first step, the
 * kill's fields and the target's own, and nothing of the progress held in
 * memory only. */
Test(pubqueue, a_staged_file_names_its_target_and_first_step)
{
	struct pub_item a = item("oom-f-1", "reports/oom-f-1.tar.gz");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o, *v;

	snprintf(a.cgroup, sizeof(a.cgroup), "/kubepods.slice/x");
	a.next_ms = 99;
	cr_assert_eq(mkdir_p_at(state_fd, "queue", 0750), 0);
	cr_assert_eq(pubqueue_stage(state_fd, &KT.target, &a), 0);
	cr_assert(pubqueue_staged(state_fd, "oom-f-1"));
	cr_assert_not(pubqueue_staged(state_fd, "oom-f-2"));
	cr_assert_not(pubqueue_staged(state_fd, "../queue/oom-f-1"));
	strbuf_init(&sb, 1 << 16);
	cr_assert_geq(
		read_file_at(state_fd, "queue/oom-f-1.json", 1 << 16, &sb), 0);
	o = json_tokener_parse(sb.buf);
	cr_assert_not_null(o);
	cr_assert(json_object_object_get_ex(o, "target", &v));
	cr_assert_str_eq(json_object_get_string(v), "kubernetes");
	cr_assert(json_object_object_get_ex(o, "step", &v));
	cr_assert_str_eq(json_object_get_string(v), "report");
	cr_assert(json_object_object_get_ex(o, "cgroup", &v));
	cr_assert_str_eq(json_object_get_string(v), "/kubepods.slice/x");
	cr_assert(json_object_object_get_ex(o, "pod", &v));
	cr_assert_str_eq(json_object_get_string(v), "victim");
	cr_assert(json_object_object_get_ex(o, "bundle_stored", &v));
	cr_assert(json_object_get_boolean(v));
	cr_assert_not(json_object_object_get_ex(o, "next_ms", &v));
	json_object_put(o);
}
