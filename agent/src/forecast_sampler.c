/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "agent.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forecast.h"
#include "forecast_sampler.h"
#include "metrics_agent.h"

#define TICK_MS 1000
#define RESCAN_TICKS 5
#define MAX_CGROUPS 4096
#define MAX_DEPTH 16
#define RETIRED_MAX 8

struct tracked {
	char path[1024];
	struct forecast_ring ring;
	uint64_t limit[FORECAST_RING_LEN]; /* read with ring's slot i */
	struct forecast_target target;
	uint64_t last_warn_ms;
	bool exported; /* a seconds_to_oom series exists */
	bool seen;     /* in the last scan */
};

static struct {
	struct agent *a;
	int tfd;
	unsigned ticks;
	uint32_t watch_gen; /* cgroup_watch_generation() at the last walk */
	struct tracked *t;
	size_t n;
	forecast_resolve_fn resolve;
	void *resolve_ud;
	forecast_warn_fn warn;
	void *warn_ud;
	/* Timelines that started over or whose cgroup vanished: a kill
	 * empties its cgroup, and its capture may come after the next tick
	 * or rescan (the correlator waits up to 2 s for a kernel report). */
	struct {
		char path[1024];
		struct forecast_history h;
	} retired[RETIRED_MAX];
	unsigned retired_next;
} S = {.tfd = -1};

void forecast_sampler_set_resolver(forecast_resolve_fn fn, void *ud)
{
	S.resolve = fn;
	S.resolve_ud = ud;
}

void forecast_sampler_set_warn(forecast_warn_fn fn, void *ud)
{
	S.warn = fn;
	S.warn_ud = ud;
}

static bool resolve_standalone(const char *cgroup, struct forecast_target *ret,
			       void *ud)
{
	(void)ud;
	memset(ret, 0, sizeof(*ret));
	strlcpy_safe(ret->container, cgroup, sizeof(ret->container));
	return true;
}

static void warn_log(const struct forecast_warning *w, void *ud)
{
	(void)ud;
	log_warn("oom predicted in %.0f s for \"%s\" (usage %llu of %llu "
		 "bytes, growing %.0f bytes/s)",
		 w->seconds, w->cgroup, (unsigned long long)w->usage,
		 (unsigned long long)w->limit, w->slope);
}

static void retire(const char *path, const struct forecast_ring *r,
		   const uint64_t *limit)
{
	unsigned i = S.retired_next++ % RETIRED_MAX;

	if (!r->n)
		return;
	strlcpy_safe(S.retired[i].path, path, sizeof(S.retired[i].path));
	S.retired[i].h.ring = *r;
	memcpy(S.retired[i].h.limit, limit, sizeof(S.retired[i].h.limit));
}

static void drop_series(struct tracked *t)
{
	if (t->exported)
		agent_metrics_seconds_to_oom(t->target.namespace, t->target.pod,
					     t->target.container, -1);
	t->exported = false;
}

static void note_cgroup(const char *path)
{
	struct tracked *t;

	for (size_t i = 0; i < S.n; i++)
		if (streq(S.t[i].path, path)) {
			S.t[i].seen = true;
			return;
		}
	if (S.n == MAX_CGROUPS || strlen(path) >= sizeof(t->path))
		return;
	t = &S.t[S.n++];
	memset(t, 0, sizeof(*t));
	strlcpy_safe(t->path, path, sizeof(t->path));
	t->seen = true;
}

/* Every cgroup directory under dfd (path: its cgroup path). */
static void walk(int dfd, char *path, size_t len, size_t size, int depth)
{
	DIR *d;
	struct dirent *e;

	note_cgroup(len ? path : "/");
	if (depth == MAX_DEPTH || !(d = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		int cfd;

		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    len + n + 2 > size)
			continue;
		cfd = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, n + 1);
		walk(cfd, path, len + 1 + n, size, depth + 1);
		path[len] = '\0';
	}
	closedir(d);
}

static void rescan(void)
{
	char path[1024];
	size_t kept = 0;

	for (size_t i = 0; i < S.n; i++)
		S.t[i].seen = false;
	for (int i = 0; i < S.a->opts.n_watch; i++) {
		const char *w = S.a->opts.watch[i];
		int fd = openat(S.a->cgfs.mem_fd, streq(w, "/") ? "." : w + 1,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		strlcpy_safe(path, streq(w, "/") ? "" : w, sizeof(path));
		walk(fd, path, strlen(path), sizeof(path), 0);
	}
	for (size_t i = 0; i < S.n; i++) {
		if (!S.t[i].seen) {
			retire(S.t[i].path, &S.t[i].ring, S.t[i].limit);
			drop_series(&S.t[i]);
			continue;
		}
		if (kept != i)
			S.t[kept] = S.t[i];
		kept++;
	}
	S.n = kept;
	if (S.a->watch)
		agent_metrics_watched((unsigned)cgroup_watch_count(S.a->watch));
}

static int read_value(const char *cg, const char *file, uint64_t *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct cgroup_value v;
	char p[1200];
	int r;

	snprintf(p, sizeof(p), "%s/%s", streq(cg, "/") ? "." : cg + 1, file);
	strbuf_init(&sb, 64);
	r = read_file_at(S.a->cgfs.mem_fd, p, 63, &sb);
	if (r < 0)
		return r;
	cgroup_parse_value(sb.buf, sb.len, S.a->cgfs.mode, &v);
	if (v.state == CGV_UNLIMITED)
		*ret = UINT64_MAX;
	else if (v.state == CGV_OK)
		*ret = v.v;
	else
		return -EBADMSG;
	return 0;
}

/* What the kernel would reclaim before killing: the inactive page cache.
 * Read only when a prediction exists (memory.stat is the big file). */
static uint64_t reclaimable(const char *cg)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct cgroup_stat st = {0};
	uint64_t v = 0;
	char p[1200];

	snprintf(p, sizeof(p), "%s/memory.stat", streq(cg, "/") ? "." : cg + 1);
	strbuf_init(&sb, 65536);
	if (read_file_at(S.a->cgfs.mem_fd, p, 65535, &sb) < 0 ||
	    cgroup_parse_stat(sb.buf, sb.len, &st) < 0)
		return 0;
	if (!cgroup_stat_get(&st, "total_inactive_file", &v))
		(void)cgroup_stat_get(&st, "inactive_file", &v);
	cgroup_stat_release(&st);
	return v;
}

/* Pushes a sample and its limit; a timeline that starts over because
 * usage fell (forecast_ring_push) is kept as retired first. */
static void push_sample(struct tracked *t, uint64_t now_ms, uint64_t usage,
			uint64_t limit)
{
	struct forecast_ring *r = &t->ring;
	unsigned last = (r->head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN;
	bool fell = r->n > 1 && usage < r->usage[last];
	struct forecast_ring before;
	uint64_t before_limit[FORECAST_RING_LEN];

	if (fell) {
		before = *r;
		memcpy(before_limit, t->limit, sizeof(before_limit));
	}
	forecast_ring_push(r, now_ms, usage);
	t->limit[(r->head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN] = limit;
	if (fell && r->n < before.n)
		retire(t->path, &before, before_limit);
}

static void sample_one(struct tracked *t, uint64_t now_ms)
{
	bool v2 = S.a->cgfs.mode == CGROUP_V2;
	struct forecast f;
	uint64_t usage, limit;

	if (read_value(t->path, v2 ? "memory.current" : "memory.usage_in_bytes",
		       &usage) < 0 ||
	    read_value(t->path, v2 ? "memory.max" : "memory.limit_in_bytes",
		       &limit) < 0 ||
	    limit == UINT64_MAX) {
		drop_series(t);
		return;
	}
	push_sample(t, now_ms, usage, limit);
	if (!forecast_predict(&t->ring, limit, 0, NULL, &f) ||
	    forecast_predict(&t->ring, limit, reclaimable(t->path), NULL, &f) <
		    1 ||
	    !S.resolve(t->path, &t->target, S.resolve_ud)) {
		drop_series(t);
		return;
	}
	agent_metrics_seconds_to_oom(t->target.namespace, t->target.pod,
				     t->target.container, f.seconds);
	t->exported = true;
	if (forecast_should_warn(f.seconds, now_ms, &t->last_warn_ms)) {
		struct forecast_warning w = {
			.cgroup = t->path,
			.target = &t->target,
			.seconds = f.seconds,
			.slope = f.slope,
			.usage = usage,
			.limit = limit,
		};

		S.warn(&w, S.warn_ud);
	}
}

void forecast_sampler_tick(void)
{
	uint64_t exp, now_us = now_monotonic_us();

	if (read(S.tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_warn("timeline timerfd: %s, ignoring", strerror(errno));
	agent_health_beat(now_us);
	/* a container the watch just found (inotify) is sampled from this
	 * tick on, not up to RESCAN_TICKS later: a quick kill keeps its
	 * timeline */
	if (S.ticks++ % RESCAN_TICKS == 0 ||
	    cgroup_watch_generation(S.a->watch) != S.watch_gen) {
		S.watch_gen = cgroup_watch_generation(S.a->watch);
		rescan();
	}
	for (size_t i = 0; i < S.n; i++)
		sample_one(&S.t[i], now_us / 1000);
}

int forecast_sampler_fd(void)
{
	return S.tfd;
}

int forecast_sampler_start(struct agent *a, int ep)
{
	struct itimerspec its = {
		.it_value = {0, 1000000},
		.it_interval = {TICK_MS / 1000, (TICK_MS % 1000) * 1000000L},
	};
	struct epoll_event ev = {.events = EPOLLIN};
	int r = agent_metrics_init();

	if (r < 0)
		return r;
	S.a = a;
	if (!S.resolve)
		S.resolve = resolve_standalone;
	if (!S.warn)
		S.warn = warn_log;
	S.t = calloc(MAX_CGROUPS, sizeof(*S.t));
	S.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!S.t || S.tfd < 0) {
		r = S.t ? -errno : -ENOMEM;
		goto fail;
	}
	ev.data.fd = S.tfd;
	if (timerfd_settime(S.tfd, 0, &its, NULL) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, S.tfd, &ev) < 0) {
		r = -errno;
		goto fail;
	}
	agent_health_beat(now_monotonic_us());
	if (a->opts.standalone)
		agent_health_set_ready(true, "detector running");
	return 0;
fail:
	log_error("cgroup timeline timer: %s", strerror(-r));
	forecast_sampler_stop();
	return r;
}

void forecast_sampler_stop(void)
{
	if (S.tfd >= 0)
		close(S.tfd);
	S.tfd = -1;
	free(S.t);
	S.t = NULL;
	S.n = 0;
}

/* The newest sample at or before upto_ms (0: none) and how many are. */
static uint64_t newest_upto(const struct forecast_ring *r, uint64_t upto_ms,
			    int *ret_n)
{
	uint64_t newest = 0;

	*ret_n = 0;
	for (unsigned k = 0; k < r->n; k++) {
		unsigned i = (r->head + FORECAST_RING_LEN - 1 - k) %
			     FORECAST_RING_LEN;

		if (r->t_ms[i] > upto_ms)
			continue;
		if (r->t_ms[i] > newest)
			newest = r->t_ms[i];
		(*ret_n)++;
	}
	return newest;
}

int forecast_sampler_history(const char *cgroup, uint64_t upto_ms,
			     struct forecast_history *ret)
{
	const struct forecast_ring *best = NULL;
	const uint64_t *best_limit = NULL;
	uint64_t best_t = 0, t;
	int best_n = 0, n;

	for (size_t i = 0; i < S.n; i++)
		if (streq(S.t[i].path, cgroup) &&
		    (t = newest_upto(&S.t[i].ring, upto_ms, &n)) > best_t) {
			best = &S.t[i].ring;
			best_limit = S.t[i].limit;
			best_t = t;
			best_n = n;
		}
	for (size_t i = 0; i < RETIRED_MAX; i++)
		if (streq(S.retired[i].path, cgroup) &&
		    (t = newest_upto(&S.retired[i].h.ring, upto_ms, &n)) >
			    best_t) {
			best = &S.retired[i].h.ring;
			best_limit = S.retired[i].h.limit;
			best_t = t;
			best_n = n;
		}
	if (!best)
		return -ENOENT;
	ret->ring = *best;
	memcpy(ret->limit, best_limit, sizeof(ret->limit));
	return best_n;
}
