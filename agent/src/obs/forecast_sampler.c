/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "agent.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "obs/forecast.h"
#include "obs/forecast_sampler.h"
#include "obs/metrics_agent.h"

#define TICK_MS 1000
#define RESCAN_TICKS 5
#define MAX_CGROUPS 4096
#define MAX_DEPTH 16
#define RETIRED_MAX 8

/* A timeline as kept per cgroup: forecast_history packed to 12 bytes a
 * sample instead of 24 (times as ms after the oldest sample's; usage and
 * limit in 4 KiB units, which is exact: the kernel counts a memory
 * cgroup's usage and limit in pages, values above 16 TiB are held as
 * 16 TiB). Unpacked into a forecast_history to push, fit and copy. */
#define UNIT_SHIFT 12
struct packed_ring {
	uint64_t t0_ms;
	uint32_t dt_ms[FORECAST_RING_LEN];
	uint32_t usage[FORECAST_RING_LEN];
	uint32_t limit[FORECAST_RING_LEN];
	uint8_t head, n;
};

struct tracked {
	char *path;
	uint32_t hash;	/* of path: a rescan compares it first */
	int usage_fd;	/* memory.usage_in_bytes | memory.current, or -1 */
	uint64_t limit; /* read every RESCAN_TICKS ticks (have_limit) */
	struct packed_ring ring;
	struct forecast_target *target; /* allocated at the first forecast */
	uint64_t last_warn_ms;
	bool have_limit;
	bool exported; /* a time_to_oom_seconds series exists */
	bool seen;     /* in the last scan */
};

struct forecast_sampler {
	struct agent *a;
	int tfd;
	unsigned ticks;
	uint32_t watch_gen; /* cgroup_watch_generation() at the last walk */
	struct tracked *t;
	size_t n;
	/* usage fds held open: at most a quarter of RLIMIT_NOFILE, the rest
	 * is the OOM watcher's (two per cgroup on v1); beyond, a cgroup's
	 * usage is opened and closed each tick as before */
	size_t fds, max_fds;
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
	struct forecast_history cur, before; /* a tick's unpacked ring */
	struct forecast_target resolved;     /* a tick's resolver answer */
	struct forecast_history live;	     /* history()'s unpacked ring */
};

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

void forecast_sampler_set_resolver(struct forecast_sampler *s,
				   forecast_resolve_fn fn, void *ud)
{
	s->resolve = fn ? fn : resolve_standalone;
	s->resolve_ud = ud;
}

void forecast_sampler_set_warn(struct forecast_sampler *s, forecast_warn_fn fn,
			       void *ud)
{
	s->warn = fn ? fn : warn_log;
	s->warn_ud = ud;
}

static uint32_t to_units(uint64_t bytes)
{
	uint64_t u =
		(bytes >> UNIT_SHIFT) + !!(bytes & ((1u << UNIT_SHIFT) - 1));

	return u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
}

static void unpack(const struct packed_ring *p, struct forecast_history *h)
{
	memset(h, 0, sizeof(*h));
	for (unsigned k = 0; k < p->n; k++) {
		unsigned i = (p->head + FORECAST_RING_LEN - 1 - k) %
			     FORECAST_RING_LEN;

		h->ring.t_ms[i] = p->t0_ms + p->dt_ms[i];
		h->ring.usage[i] = (uint64_t)p->usage[i] << UNIT_SHIFT;
		h->limit[i] = (uint64_t)p->limit[i] << UNIT_SHIFT;
	}
	h->ring.head = p->head;
	h->ring.n = p->n;
}

/* The ring's times never go back (forecast_ring_push starts over when
 * they do): the oldest sample is the base. A ring spanning more than
 * 49 days (a tick that stalled that long) keeps its newest sample. */
static void pack(const struct forecast_history *h, struct packed_ring *p)
{
	const uint64_t *t = h->ring.t_ms;
	unsigned n = h->ring.n;
	unsigned newest =
		(h->ring.head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN;
	unsigned oldest =
		(h->ring.head + FORECAST_RING_LEN - n) % FORECAST_RING_LEN;

	if (n && t[newest] - t[oldest] > UINT32_MAX) {
		n = 1;
		oldest = newest;
	}
	p->t0_ms = n ? h->ring.t_ms[oldest] : 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = (oldest + k) % FORECAST_RING_LEN;

		p->dt_ms[i] = (uint32_t)(h->ring.t_ms[i] - p->t0_ms);
		p->usage[i] = to_units(h->ring.usage[i]);
		p->limit[i] = to_units(h->limit[i]);
	}
	p->head = (uint8_t)h->ring.head;
	p->n = (uint8_t)n;
}

static void retire(struct forecast_sampler *s, const char *path,
		   const struct forecast_history *h)
{
	unsigned i = s->retired_next++ % RETIRED_MAX;

	if (!h->ring.n)
		return;
	strlcpy_safe(s->retired[i].path, path, sizeof(s->retired[i].path));
	s->retired[i].h = *h;
}

static void drop_series(struct forecast_sampler *s, struct tracked *t)
{
	if (t->exported)
		agent_metrics_time_to_oom(s->a->metrics, t->target->namespace,
					  t->target->pod, t->target->container,
					  -1);
	t->exported = false;
}

static void close_usage(struct forecast_sampler *s, struct tracked *t)
{
	if (t->usage_fd < 0)
		return;
	close(t->usage_fd);
	t->usage_fd = -1;
	s->fds--;
}

static void untrack(struct forecast_sampler *s, struct tracked *t)
{
	drop_series(s, t);
	close_usage(s, t);
	free(t->path);
	free(t->target);
	t->path = NULL;
	t->target = NULL;
}

/* FNV-1a */
static uint32_t path_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void note_cgroup(struct forecast_sampler *s, const char *path)
{
	uint32_t h = path_hash(path);
	struct tracked *t;

	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].hash == h && streq(s->t[i].path, path)) {
			s->t[i].seen = true;
			return;
		}
	if (s->n == MAX_CGROUPS || strlen(path) >= sizeof(s->retired[0].path))
		return;
	t = &s->t[s->n];
	memset(t, 0, sizeof(*t));
	t->path = strdup(path);
	if (!t->path)
		return;
	t->hash = h;
	t->usage_fd = -1;
	t->limit = UINT64_MAX;
	t->seen = true;
	s->n++;
}

/* A directory without subdirectories, by its link count (2 + its
 * subdirectories on kernfs, as on most file systems; 1 where unknown). A
 * container's cgroup is one: noted without opening and reading it (a
 * cgroup directory lists some 30 files; six syscalls saved per leaf). */
static bool is_leaf(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode) && st.st_nlink == 2;
}

/* Every cgroup directory under dfd (path: its cgroup path). */
static void walk(struct forecast_sampler *s, int dfd, char *path, size_t len,
		 size_t size, int depth)
{
	DIR *d;
	struct dirent *e;

	note_cgroup(s, len ? path : "/");
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
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, n + 1);
		if (is_leaf(dirfd(d), e->d_name))
			note_cgroup(s, path);
		else if ((cfd = openat(dirfd(d), e->d_name,
				       O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >=
			 0)
			walk(s, cfd, path, len + 1 + n, size, depth + 1);
		path[len] = '\0';
	}
	closedir(d);
}

static void rescan(struct forecast_sampler *s)
{
	char path[1024];
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		s->t[i].seen = false;
		s->t[i].have_limit = false; /* re-read at the next sample */
	}
	for (int i = 0; i < s->a->opts.n_watch; i++) {
		const char *w = s->a->opts.watch[i];
		int fd = openat(s->a->cgfs.mem_fd, streq(w, "/") ? "." : w + 1,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		strlcpy_safe(path, streq(w, "/") ? "" : w, sizeof(path));
		walk(s, fd, path, strlen(path), sizeof(path), 0);
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!s->t[i].seen) {
			unpack(&s->t[i].ring, &s->before);
			retire(s, s->t[i].path, &s->before);
			untrack(s, &s->t[i]);
			continue;
		}
		if (kept != i)
			s->t[kept] = s->t[i];
		kept++;
	}
	s->n = kept;
	if (s->a->watch)
		agent_metrics_watched(
			s->a->metrics,
			(unsigned)cgroup_watch_count(s->a->watch));
}

static int parse_value(struct forecast_sampler *s, const char *buf, size_t len,
		       uint64_t *ret)
{
	struct cgroup_value v;

	cgroup_parse_value(buf, len, s->a->cgfs.mode, &v);
	if (v.state == CGV_UNLIMITED)
		*ret = UINT64_MAX;
	else if (v.state == CGV_OK)
		*ret = v.v;
	else
		return -EBADMSG;
	return 0;
}

/* cgroup cg's file, relative to the memory hierarchy's fd. */
static void cg_file(char *buf, size_t size, const char *cg, const char *file)
{
	snprintf(buf, size, "%s/%s", streq(cg, "/") ? "." : cg + 1, file);
}

static int read_value(struct forecast_sampler *s, const char *cg,
		      const char *file, uint64_t *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, 64);
	r = cgroup_read_file(&s->a->cgfs, cg, file, 63, &sb);
	if (r < 0)
		return r;
	return parse_value(s, sb.buf, sb.len, ret);
}

static const char *usage_file(struct forecast_sampler *s)
{
	return s->a->cgfs.mode == CGROUP_V2 ? "memory.current"
					    : "memory.usage_in_bytes";
}

/* Usage with one pread of a file kept open (1 syscall a tick instead of
 * openat, read, read, close); a failed read (the cgroup was removed:
 * ENODEV) closes it and falls back to the path once. */
static int read_usage(struct forecast_sampler *s, struct tracked *t,
		      uint64_t *ret)
{
	char buf[64], p[1200];
	ssize_t n;

	if (t->usage_fd < 0 && s->fds < s->max_fds) {
		cg_file(p, sizeof(p), t->path, usage_file(s));
		t->usage_fd =
			openat(s->a->cgfs.mem_fd, p, O_RDONLY | O_CLOEXEC);
		if (t->usage_fd >= 0)
			s->fds++;
	}
	if (t->usage_fd >= 0) {
		n = pread(t->usage_fd, buf, sizeof(buf) - 1, 0);
		if (n >= 0) {
			buf[n] = '\0';
			return parse_value(s, buf, (size_t)n, ret);
		}
		close_usage(s, t);
	}
	return read_value(s, t->path, usage_file(s), ret);
}

/* The limit, read at a cgroup's first sample and after each rescan (every
 * RESCAN_TICKS ticks): a changed limit shows within 5 s. */
static int read_limit(struct forecast_sampler *s, struct tracked *t)
{
	int r;

	if (t->have_limit)
		return 0;
	r = read_value(s, t->path,
		       s->a->cgfs.mode == CGROUP_V2 ? "memory.max"
						    : "memory.limit_in_bytes",
		       &t->limit);
	t->have_limit = r == 0;
	return r;
}

/* What the kernel would reclaim before killing: the inactive page cache.
 * Read only when a prediction exists (memory.stat is the big file). */
static uint64_t reclaimable(struct forecast_sampler *s, const char *cg)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct cgroup_stat st = {0};
	uint64_t v = 0;

	strbuf_init(&sb, 65536);
	if (cgroup_read_file(&s->a->cgfs, cg, "memory.stat", 65535, &sb) < 0 ||
	    cgroup_parse_stat(sb.buf, sb.len, &st) < 0)
		return 0;
	if (!cgroup_stat_get(&st, "total_inactive_file", &v))
		(void)cgroup_stat_get(&st, "inactive_file", &v);
	cgroup_stat_release(&st);
	return v;
}

/* Pushes a sample and its limit (unpacked into s->cur, packed back); a
 * timeline that starts over because usage fell (forecast_ring_push) is
 * kept as retired first. */
static void push_sample(struct forecast_sampler *s, struct tracked *t,
			uint64_t now_ms, uint64_t usage, uint64_t limit)
{
	struct forecast_ring *r = &s->cur.ring;
	unsigned last;
	bool fell;

	unpack(&t->ring, &s->cur);
	last = (r->head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN;
	fell = r->n > 1 && usage < r->usage[last];
	if (fell)
		s->before = s->cur;
	forecast_ring_push(r, now_ms, usage);
	s->cur.limit[(r->head + FORECAST_RING_LEN - 1) % FORECAST_RING_LEN] =
		limit;
	if (fell && r->n < s->before.ring.n)
		retire(s, t->path, &s->before);
	pack(&s->cur, &t->ring);
}

static bool same_target(const struct forecast_target *a,
			const struct forecast_target *b)
{
	return streq(a->namespace, b->namespace) && streq(a->pod, b->pod) &&
	       streq(a->container, b->container);
}

/* t's target, resolved again each tick. A series exported under other
 * labels (the container's id until the pod cache had its name) is removed
 * first: nothing else would remove it, the sampler drops the series it
 * knows by its current labels. */
static bool resolve(struct forecast_sampler *s, struct tracked *t)
{
	if (!t->target && !(t->target = calloc(1, sizeof(*t->target))))
		return false;
	if (!s->resolve(t->path, &s->resolved, s->resolve_ud))
		return false;
	if (t->exported && !same_target(t->target, &s->resolved))
		drop_series(s, t);
	*t->target = s->resolved;
	return true;
}

static void sample_one(struct forecast_sampler *s, struct tracked *t,
		       uint64_t now_ms)
{
	struct forecast f;
	uint64_t usage;

	if (read_usage(s, t, &usage) < 0 || read_limit(s, t) < 0 ||
	    t->limit == UINT64_MAX) {
		drop_series(s, t);
		return;
	}
	push_sample(s, t, now_ms, usage, t->limit);
	if (!forecast_predict(&s->cur.ring, t->limit, 0, NULL, &f) ||
	    forecast_predict(&s->cur.ring, t->limit, reclaimable(s, t->path),
			     NULL, &f) < 1 ||
	    !resolve(s, t)) {
		drop_series(s, t);
		return;
	}
	agent_metrics_time_to_oom(s->a->metrics, t->target->namespace,
				  t->target->pod, t->target->container,
				  f.seconds);
	t->exported = true;
	if (forecast_should_warn(f.seconds, now_ms, &t->last_warn_ms)) {
		struct forecast_warning w = {
			.cgroup = t->path,
			.target = t->target,
			.seconds = f.seconds,
			.slope = f.slope,
			.usage = usage,
			.limit = t->limit,
		};

		s->warn(&w, s->warn_ud);
	}
}

void forecast_sampler_tick(struct forecast_sampler *s)
{
	uint64_t exp, now_us = now_monotonic_us();

	if (read(s->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_warn("timeline timerfd: %s, ignoring", strerror(errno));
	agent_health_beat(s->a->metrics, now_us);
	/* a container the watch just found (inotify) is sampled from this
	 * tick on, not up to RESCAN_TICKS later: a quick kill keeps its
	 * timeline */
	if (s->ticks++ % RESCAN_TICKS == 0 ||
	    cgroup_watch_generation(s->a->watch) != s->watch_gen) {
		s->watch_gen = cgroup_watch_generation(s->a->watch);
		rescan(s);
	}
	for (size_t i = 0; i < s->n; i++)
		sample_one(s, &s->t[i], now_us / 1000);
}

int forecast_sampler_fd(const struct forecast_sampler *s)
{
	return s->tfd;
}

int forecast_sampler_new(struct agent *a, struct forecast_sampler **ret)
{
	struct forecast_sampler *s;
	struct itimerspec its = {
		.it_value = {0, 1000000},
		.it_interval = {TICK_MS / 1000, (TICK_MS % 1000) * 1000000L},
	};
	struct rlimit rl;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->a = a;
	s->tfd = -1;
	s->resolve = resolve_standalone;
	s->warn = warn_log;
	s->t = calloc(MAX_CGROUPS, sizeof(*s->t));
	s->max_fds = getrlimit(RLIMIT_NOFILE, &rl) < 0 ? 0
		     : rl.rlim_cur == RLIM_INFINITY    ? MAX_CGROUPS
						       : rl.rlim_cur / 4;
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!s->t || s->tfd < 0) {
		r = s->t ? -errno : -ENOMEM;
		goto fail;
	}
	if (timerfd_settime(s->tfd, 0, &its, NULL) < 0) {
		r = -errno;
		goto fail;
	}
	agent_health_beat(a->metrics, now_monotonic_us());
	if (a->opts.standalone)
		agent_health_set_ready(a->metrics, true, "detector running");
	*ret = s;
	return 0;
fail:
	log_error("cgroup timeline timer: %s", strerror(-r));
	forecast_sampler_free(s);
	return r;
}

void forecast_sampler_free(struct forecast_sampler *s)
{
	if (!s)
		return;
	if (s->tfd >= 0)
		close(s->tfd);
	s->tfd = -1;
	for (size_t i = 0; s->t && i < s->n; i++)
		untrack(s, &s->t[i]);
	free(s->t);
	free(s);
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

int forecast_sampler_history(struct forecast_sampler *s, const char *cgroup,
			     uint64_t upto_ms, struct forecast_history *ret)
{
	struct forecast_history *live = &s->live;
	const struct forecast_history *best = NULL;
	uint64_t best_t = 0, t;
	int best_n = 0, n;

	for (size_t i = 0; i < s->n; i++) {
		if (!streq(s->t[i].path, cgroup))
			continue;
		unpack(&s->t[i].ring, live);
		if ((t = newest_upto(&live->ring, upto_ms, &n)) > best_t) {
			best = live;
			best_t = t;
			best_n = n;
		}
		break; /* a path is tracked once */
	}
	for (size_t i = 0; i < RETIRED_MAX; i++)
		if (streq(s->retired[i].path, cgroup) &&
		    (t = newest_upto(&s->retired[i].h.ring, upto_ms, &n)) >
			    best_t) {
			best = &s->retired[i].h;
			best_t = t;
			best_n = n;
		}
	if (!best)
		return -ENOENT;
	*ret = *best;
	return best_n;
}
