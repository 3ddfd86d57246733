/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup watcher: one epoll fd over
 *  - one inotify fd: every watched cgroup directory (IN_CREATE/IN_DELETE/
 *    IN_MOVED_* for children), the parent of each subtree root (to see the
 *    root itself go and come back) and, on v2, each cgroup's
 *    memory.events.local (or memory.events) for IN_MODIFY;
 *  - v1: one eventfd per cgroup registered on memory.oom_control through
 *    cgroup.event_control;
 *  - a timerfd that re-reads oom_kill when a v1 notification came before the
 *    kernel counted the kill;
 *  - an eventfd that wakes the caller when cgroup_watch_rescan() queued
 *    events.
 * Measured on this host's kernfs (6.18, v1): mkdir in a watched cgroup gives
 * IN_CREATE|IN_ISDIR, rmdir gives IN_DELETE|IN_ISDIR in the parent, but the
 * removed directory's own watch gets neither IN_DELETE_SELF nor IN_IGNORED:
 * removal is seen from the parent (or the v1 eventfd), never from itself. */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <dirent.h>
#include <stdio.h>

#include "cgroup_internal.h"
#include "kernel/cgroup.h"
#include "base/util.h"

#define DIR_MASK                                               \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
	 IN_DELETE_SELF | IN_ONLYDIR)
#define MAX_DEPTH 32

enum tag { TAG_INOTIFY = 1, TAG_TIMER, TAG_WAKE, TAG_EFD };

struct cg_node {
	char *path;
	uint32_t id;
	int dir_wd; /* the directory: children come and go */
	int ev_wd;  /* v2: IN_MODIFY on the oom_kill file; -1 otherwise */
	int efd;    /* v1: eventfd on memory.oom_control; -1 otherwise */
	int oom_fd; /* v1: memory.oom_control, kept open with the eventfd */
	dev_t dev;
	ino_t ino;
	uint64_t oom_kill; /* last value reported */
	uint64_t read_us; /* CLOCK_MONOTONIC of the last read of it, 0 = none */
	int step;	  /* v1 late-count re-reads done; 0 = none pending */
	uint64_t recheck_at;
};

struct parent_watch {
	int wd;
	char *path;
};

struct qev {
	enum cgroup_event_type type;
	char *path;
	uint64_t oom_kill, delta, mono_us, since_us;
};

struct cgroup_watch {
	enum cgroup_mode mode;
	int mem_fd, ep, ino, tfd, wake;
	struct cg_node **nodes;
	size_t n, alloc;
	char **roots;
	size_t n_roots;
	struct parent_watch *pw;
	size_t n_pw;
	struct qev *q;
	size_t nq, q_alloc;
	uint32_t next_id;
	/* v1: why cgroup.event_control could not be written (EROFS: a
	 * read-only mount), 0 while notifications are registered. */
	int v1_unnotified;
};

/* Re-read schedule after a v1 notification that came before the count, in
 * µs after it. The kill normally lands within a few ms. */
static const uint64_t recheck_us[] = {2000, 10000, 50000, 250000, 1000000};

/* Room for one more element in *arr (n used, *alloc allocated). A macro
 * keeps the element type: no void ** punning. */
#define GROW(arr, alloc, n)                                         \
	({                                                          \
		int _r = 0;                                         \
		if ((n) >= (alloc)) {                               \
			size_t _na = (alloc) ? (alloc)*2 : 16;      \
			__typeof__(arr) _p =                        \
				realloc(arr, _na * sizeof(*(arr))); \
			if (_p) {                                   \
				(arr) = _p;                         \
				(alloc) = _na;                      \
			} else {                                    \
				_r = -ENOMEM;                       \
			}                                           \
		}                                                   \
		_r;                                                 \
	})

static int queue_event(struct cgroup_watch *w, enum cgroup_event_type type,
		       const char *path, uint64_t oom_kill, uint64_t delta,
		       uint64_t since_us)
{
	struct qev *e;

	if (GROW(w->q, w->q_alloc, w->nq) < 0)
		return -ENOMEM;
	e = &w->q[w->nq];
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	e->type = type;
	e->oom_kill = oom_kill;
	e->delta = delta;
	e->mono_us = now_monotonic_us();
	e->since_us = since_us;
	w->nq++;
	return 0;
}

/* inotify has no *at() variant: reach the hierarchy through our own fd. */
static int proc_path(const struct cgroup_watch *w, const char *path,
		     const char *file, char *buf, size_t size)
{
	char rel[4096];
	int r = cgroup_relpath(path, rel, sizeof(rel));
	int n;

	if (r < 0)
		return r;
	n = snprintf(buf, size, "/proc/self/fd/%d/%s%s%s", w->mem_fd, rel,
		     file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static struct cg_node *find_node(const struct cgroup_watch *w, const char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (streq(w->nodes[i]->path, path))
			return w->nodes[i];
	return NULL;
}

static bool within_roots(const struct cgroup_watch *w, const char *path)
{
	for (size_t i = 0; i < w->n_roots; i++)
		if (cgroup_path_within(path, w->roots[i]))
			return true;
	return false;
}

static bool wd_in_use(const struct cgroup_watch *w, int wd,
		      const struct cg_node *except)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->nodes[i] != except && w->nodes[i]->dir_wd == wd)
			return true;
	for (size_t i = 0; i < w->n_pw; i++)
		if (w->pw[i].wd == wd)
			return true;
	return false;
}

static void node_free(struct cgroup_watch *w, struct cg_node *nd)
{
	if (nd->dir_wd >= 0 && !wd_in_use(w, nd->dir_wd, nd))
		inotify_rm_watch(w->ino, nd->dir_wd);
	if (nd->ev_wd >= 0)
		inotify_rm_watch(w->ino, nd->ev_wd);
	closep(&nd->efd); /* closing drops it from the epoll set */
	closep(&nd->oom_fd);
	free(nd->path);
	free(nd);
}

/* v1: eventfd + "<efd> <fd of memory.oom_control>" to cgroup.event_control.
 * The kernel then signals the eventfd once per OOM and when the cgroup is
 * removed. */
static int register_v1(struct cgroup_watch *w, struct cg_node *nd, int dfd)
{
	_cleanup_close_ int ctl = -1;
	struct epoll_event ev = {.events = EPOLLIN};
	char line[64];
	int n;

	nd->oom_fd = openat(dfd, "memory.oom_control", O_RDONLY | O_CLOEXEC);
	if (nd->oom_fd < 0)
		return -errno;
	nd->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (nd->efd < 0)
		return -errno;
	ctl = openat(dfd, "cgroup.event_control", O_WRONLY | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%d %d", nd->efd, nd->oom_fd);
	if (write(ctl, line, (size_t)n) != n)
		return errno ? -errno : -EIO;
	ev.data.u64 = ((uint64_t)TAG_EFD << 32) | nd->id;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, nd->efd, &ev) < 0)
		return -errno;
	return 0;
}

/* v2: IN_MODIFY on the file that counts this cgroup's kills. A fixture tree
 * may lack it; cgroup_watch_rescan() tries again. */
static int watch_events_v2(struct cgroup_watch *w, struct cg_node *nd, int dfd)
{
	char p[4300];
	int r;

	r = proc_path(w, nd->path, cgroup_oom_kill_file(dfd, w->mode), p,
		      sizeof(p));
	if (r < 0)
		return r;
	nd->ev_wd = inotify_add_watch(w->ino, p, IN_MODIFY);
	if (nd->ev_wd < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static void arm_timer(struct cgroup_watch *w)
{
	struct itimerspec its = {0};
	uint64_t at = 0;

	for (size_t i = 0; i < w->n; i++) {
		const struct cg_node *nd = w->nodes[i];

		if (nd->step && (!at || nd->recheck_at < at))
			at = nd->recheck_at;
	}
	/* at == 0 disarms. */
	its.it_value.tv_sec = (time_t)(at / 1000000);
	its.it_value.tv_nsec = (long)(at % 1000000) * 1000;
	timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Looks at nd again at +2 ms, +10 ms, … +1 s (recheck_us). */
static void schedule_recheck(struct cgroup_watch *w, struct cg_node *nd)
{
	nd->step = 1;
	nd->recheck_at = now_monotonic_us() + recheck_us[0];
	arm_timer(w);
}

static int node_setup(struct cgroup_watch *w, struct cg_node *nd, int dfd)
{
	char p[4300];
	struct stat st;
	uint64_t t;
	int r;

	if (fstat(dfd, &st) < 0)
		return -errno;
	nd->dev = st.st_dev;
	nd->ino = st.st_ino;
	r = proc_path(w, nd->path, NULL, p, sizeof(p));
	if (r < 0)
		return r;
	nd->dir_wd = inotify_add_watch(w->ino, p, DIR_MASK);
	if (nd->dir_wd < 0)
		return -errno;
	if (w->mode == CGROUP_V1)
		r = register_v1(w, nd, dfd);
	else
		r = watch_events_v2(w, nd, dfd);
	if (r == -EROFS && w->mode == CGROUP_V1) {
		/* A read-only mount (the chart's cgroupReadOnly on a v1 node):
		 * no notification, the counter is re-read by every rescan
		 * and recount instead. */
		closep(&nd->efd);
		closep(&nd->oom_fd);
		w->v1_unnotified = -r;
		r = 0;
	}
	if (r < 0)
		return r;
	/* v2: the memory files appear only once the parent delegates memory
	 * (cgroup.subtree_control), maybe just after the mkdir, and kernfs
	 * sends no IN_CREATE for them: try again shortly. */
	if (w->mode == CGROUP_V2 && nd->ev_wd < 0)
		schedule_recheck(w, nd);
	/* Unreadable counters start at 0: the first read reports all kills.
	 * Stamped before the read, as in check_oom(). */
	t = now_monotonic_us();
	if (cgroup_read_oom_kill(dfd, w->mode, &nd->oom_kill) >= 0)
		nd->read_us = t;
	return 0;
}

static int check_oom(struct cgroup_watch *w, struct cg_node *nd,
		     bool report_zero);

/* Starts watching the cgroup at path (its directory open as dfd). */
static int node_add(struct cgroup_watch *w, const char *path, int dfd,
		    bool emit)
{
	struct cg_node *nd;
	int r;

	r = GROW(w->nodes, w->alloc, w->n);
	if (r < 0)
		return r;
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	*nd = (struct cg_node){.id = ++w->next_id,
			       .dir_wd = -1,
			       .ev_wd = -1,
			       .efd = -1,
			       .oom_fd = -1};
	nd->path = strdup(path);
	r = nd->path ? node_setup(w, nd, dfd) : -ENOMEM;
	if (r < 0) {
		node_free(w, nd);
		return r;
	}
	w->nodes[w->n++] = nd;
	if (nd->step)
		arm_timer(w); /* now that nd is in the list */
	if (!emit)
		return 0;
	r = queue_event(w, CGE_ADDED, path, 0, 0, 0);
	if (r < 0)
		return r;
	/* Created after the watch began: a kill before the registration (a
	 * victim that started at once) is new too, so count from 0. */
	nd->oom_kill = 0;
	nd->read_us = 0;
	r = check_oom(w, nd, false);
	return r < 0 && r != -ENOENT ? r : 0;
}

static int join_path(const char *dir, const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s%s", dir, streq(dir, "/") ? "" : "/",
			 name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int walk(struct cgroup_watch *w, const char *path, bool emit, int depth);

static int walk_children(struct cgroup_watch *w, const char *path, int dfd,
			 bool emit, int depth)
{
	DIR *d;
	struct dirent *de;
	int fd, r = 0;

	fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (r >= 0 && (de = readdir(d))) {
		char child[4096];

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		r = join_path(path, de->d_name, child, sizeof(child));
		if (r >= 0)
			r = walk(w, child, emit, depth + 1);
		/* Gone already, or not a directory (DT_UNKNOWN): fine. */
		if (r == -ENOENT || r == -ENOTDIR)
			r = 0;
	}
	closedir(d);
	return r;
}

/* Watches path and everything below it; new nodes are reported as
 * CGE_ADDED when emit. Existing nodes are kept, their children re-checked. */
static int walk(struct cgroup_watch *w, const char *path, bool emit, int depth)
{
	struct cgroup_fs fs = {.mode = w->mode, .mem_fd = w->mem_fd};
	_cleanup_close_ int dfd = -1;
	int r;

	if (depth > MAX_DEPTH)
		return -ELOOP;
	dfd = cgroup_open_dir(&fs, path);
	if (dfd < 0)
		return dfd;
	if (!find_node(w, path)) {
		r = node_add(w, path, dfd, emit);
		if (r < 0)
			return r;
	}
	return walk_children(w, path, dfd, emit, depth);
}

/* Drops path and every node below it, reporting each as CGE_REMOVED. */
static int remove_tree(struct cgroup_watch *w, const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	int r = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = w->n; i-- > 0;) {
		struct cg_node *nd = w->nodes[i];

		if (!cgroup_path_within(nd->path, p))
			continue;
		if (queue_event(w, CGE_REMOVED, nd->path, nd->oom_kill, 0, 0) <
		    0)
			r = -ENOMEM;
		w->nodes[i] = w->nodes[--w->n];
		node_free(w, nd);
	}
	return r;
}

/* The node's directory still exists and is the one we watch. */
static bool node_alive(const struct cgroup_watch *w, const struct cg_node *nd)
{
	char rel[4096];
	struct stat st;

	if (cgroup_relpath(nd->path, rel, sizeof(rel)) < 0)
		return false;
	if (fstatat(w->mem_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno != ENOENT && errno != ENOTDIR;
	return st.st_ino == nd->ino && st.st_dev == nd->dev;
}

/* Re-reads oom_kill of nd and reports growth as CGE_OOM. With report_zero,
 * a notification without growth is reported too (delta 0). Returns 1 when
 * the counter grew, 0 when not, -errno. */
static int check_oom(struct cgroup_watch *w, struct cg_node *nd,
		     bool report_zero)
{
	struct cgroup_fs fs = {.mode = w->mode, .mem_fd = w->mem_fd};
	_cleanup_close_ int dfd = -1;
	uint64_t now = nd->oom_kill, delta, since = nd->read_us, t;
	int r;

	dfd = cgroup_open_dir(&fs, nd->path);
	if (dfd < 0)
		return dfd;
	/* Every read bounds the kills counted next: they come after it (the
	 * time is taken before the read, so that it never runs late). */
	t = now_monotonic_us();
	r = cgroup_read_oom_kill(dfd, w->mode, &now);
	if (r < 0 && r != -EOPNOTSUPP && r != -EBADMSG)
		return r;
	if (r >= 0)
		nd->read_us = t;
	delta = now > nd->oom_kill ? now - nd->oom_kill : 0;
	nd->oom_kill = now;
	if (delta == 0 && !report_zero)
		return 0;
	r = queue_event(w, CGE_OOM, nd->path, now, delta, since);
	return r < 0 ? r : delta > 0;
}

static int on_eventfd(struct cgroup_watch *w, uint32_t id)
{
	struct cg_node *nd = NULL;
	uint64_t cnt;
	int r;

	for (size_t i = 0; i < w->n && !nd; i++)
		if (w->nodes[i]->id == id)
			nd = w->nodes[i];
	if (!nd)
		return 0; /* removed earlier in this round */
	if (read(nd->efd, &cnt, sizeof(cnt)) < 0 && errno == EAGAIN)
		return 0;
	/* The kernel also signals on rmdir: that is not an OOM. */
	if (!node_alive(w, nd))
		return remove_tree(w, nd->path);
	r = check_oom(w, nd, true);
	if (r == 0) /* fired before oom_kill counted the kill */
		schedule_recheck(w, nd);
	return r == -ENOENT ? remove_tree(w, nd->path) : (r < 0 ? r : 0);
}

/* One scheduled look at nd. True when nothing more is to be waited for:
 * the late kill was counted (or nd is gone); on v2, the counter file
 * appeared and is watched now. */
static bool recheck(struct cgroup_watch *w, struct cg_node *nd)
{
	struct cgroup_fs fs = {.mode = w->mode, .mem_fd = w->mem_fd};

	if (w->mode == CGROUP_V2 && nd->ev_wd < 0) {
		_cleanup_close_ int dfd = cgroup_open_dir(&fs, nd->path);

		if (dfd < 0 || watch_events_v2(w, nd, dfd) < 0 || nd->ev_wd < 0)
			return dfd == -ENOENT;
		check_oom(w, nd, false);
		return true;
	}
	return check_oom(w, nd, false) != 0;
}

static int on_timer(struct cgroup_watch *w)
{
	uint64_t exp, now = now_monotonic_us();

	if (read(w->tfd, &exp, sizeof(exp)) < 0 && errno == EAGAIN)
		return 0;
	for (size_t i = 0; i < w->n; i++) {
		struct cg_node *nd = w->nodes[i];

		if (!nd->step || nd->recheck_at > now)
			continue;
		if (recheck(w, nd) ||
		    (size_t)nd->step >= ARRAY_SIZE(recheck_us)) {
			nd->step = 0; /* done, or nothing came: rescan's job */
			continue;
		}
		nd->recheck_at +=
			recheck_us[nd->step] - recheck_us[nd->step - 1];
		nd->step++;
	}
	arm_timer(w);
	return 0;
}

/* The directory path behind an inotify wd (a node or a root's parent). */
static const char *wd_dir(const struct cgroup_watch *w, int wd)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->nodes[i]->dir_wd == wd)
			return w->nodes[i]->path;
	for (size_t i = 0; i < w->n_pw; i++)
		if (w->pw[i].wd == wd)
			return w->pw[i].path;
	return NULL;
}

static int on_child(struct cgroup_watch *w, const struct inotify_event *e)
{
	const char *dir = wd_dir(w, e->wd);
	char child[4096];
	int r;

	if (!dir || !(e->mask & IN_ISDIR) || !e->len)
		return 0;
	r = join_path(dir, e->name, child, sizeof(child));
	if (r < 0)
		return r;
	if (e->mask & (IN_DELETE | IN_MOVED_FROM))
		return remove_tree(w, child);
	if (!within_roots(w, child))
		return 0; /* a sibling of a subtree root */
	r = walk(w, child, true, 0);
	return r == -ENOENT ? 0 : r;
}

static int on_inotify_event(struct cgroup_watch *w,
			    const struct inotify_event *e)
{
	if (e->mask & IN_Q_OVERFLOW)
		return cgroup_watch_rescan(w);
	if (e->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
		return on_child(w, e);
	for (size_t i = 0; i < w->n; i++) {
		struct cg_node *nd = w->nodes[i];

		if (nd->ev_wd == e->wd && (e->mask & IN_IGNORED)) {
			nd->ev_wd = -1; /* file gone; a rescan retries */
			return 0;
		}
		if (nd->ev_wd == e->wd && (e->mask & IN_MODIFY)) {
			int r = check_oom(w, nd, false);

			return r == -ENOENT ? remove_tree(w, nd->path)
					    : (r < 0 ? r : 0);
		}
		if (nd->dir_wd == e->wd &&
		    (e->mask & (IN_DELETE_SELF | IN_IGNORED))) {
			if (e->mask & IN_IGNORED)
				nd->dir_wd = -1; /* the kernel dropped it */
			return node_alive(w, nd) ? 0 : remove_tree(w, nd->path);
		}
	}
	return 0;
}

static int on_inotify(struct cgroup_watch *w)
{
	char buf[8192]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	int err = 0;

	for (;;) {
		ssize_t n = read(w->ino, buf, sizeof(buf));

		if (n < 0)
			return errno == EAGAIN ? err
					       : (errno == EINTR ? 0 : -errno);
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;
			int r = on_inotify_event(w, e);

			if (r < 0 && !err)
				err = r;
			p += sizeof(*e) + e->len;
		}
	}
}

static int handle(struct cgroup_watch *w, uint64_t tag)
{
	uint64_t v;

	switch ((enum tag)(tag >> 32)) {
	case TAG_INOTIFY:
		return on_inotify(w);
	case TAG_TIMER:
		return on_timer(w);
	case TAG_WAKE:
		if (read(w->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		return 0;
	case TAG_EFD:
		return on_eventfd(w, (uint32_t)tag);
	}
	return 0;
}

static int deliver(struct cgroup_watch *w,
		   void (*fn)(const struct cgroup_event *ev, void *userdata),
		   void *userdata)
{
	/* Take the queue: fn may call back into the watcher. */
	struct qev *q = TAKE_PTR(w->q);
	size_t nq = w->nq;

	w->nq = w->q_alloc = 0;
	for (size_t i = 0; i < nq; i++) {
		struct cgroup_event ev = {
			.type = q[i].type,
			.path = q[i].path,
			.oom_kill = q[i].oom_kill,
			.oom_kill_delta = q[i].delta,
			.mono_us = q[i].mono_us,
			.since_us = q[i].since_us,
		};

		if (fn)
			fn(&ev, userdata);
		free(q[i].path);
	}
	free(q);
	return (int)nq;
}

int cgroup_watch_dispatch(struct cgroup_watch *w,
			  void (*fn)(const struct cgroup_event *ev,
				     void *userdata),
			  void *userdata)
{
	struct epoll_event evs[32];
	int n, err = 0, delivered;

	if (!w)
		return -EINVAL;
	do {
		n = epoll_wait(w->ep, evs, ARRAY_SIZE(evs), 0);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		for (int i = 0; i < n; i++) {
			int r = handle(w, evs[i].data.u64);

			if (r < 0 && !err)
				err = r;
		}
	} while (n == (int)ARRAY_SIZE(evs) || (n < 0 && errno == EINTR));
	delivered = deliver(w, fn, userdata);
	return delivered > 0 || !err ? delivered : err;
}

static int add_fd(int ep, int fd, enum tag tag)
{
	struct epoll_event ev = {.events = EPOLLIN,
				 .data.u64 = (uint64_t)tag << 32};

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int cgroup_watch_new(const struct cgroup_fs *fs, struct cgroup_watch **ret)
{
	struct cgroup_watch *w;
	int r = -errno;

	if (!fs || fs->mem_fd < 0 || fs->mode == CGROUP_NONE)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->mode = fs->mode;
	w->mem_fd = fcntl(fs->mem_fd, F_DUPFD_CLOEXEC, 3);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	w->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->mem_fd < 0 || w->ep < 0 || w->ino < 0 || w->tfd < 0 ||
	    w->wake < 0) {
		r = -errno;
		goto fail;
	}
	r = add_fd(w->ep, w->ino, TAG_INOTIFY);
	if (r >= 0)
		r = add_fd(w->ep, w->tfd, TAG_TIMER);
	if (r >= 0)
		r = add_fd(w->ep, w->wake, TAG_WAKE);
	if (r < 0)
		goto fail;
	*ret = w;
	return 0;
fail:
	cgroup_watch_free(w);
	return r;
}

void cgroup_watch_free(struct cgroup_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++) {
		/* Watches die with the inotify fd; only fds need closing. */
		closep(&w->nodes[i]->efd);
		closep(&w->nodes[i]->oom_fd);
		free(w->nodes[i]->path);
		free(w->nodes[i]);
	}
	for (size_t i = 0; i < w->n_roots; i++)
		free(w->roots[i]);
	for (size_t i = 0; i < w->n_pw; i++)
		free(w->pw[i].path);
	for (size_t i = 0; i < w->nq; i++)
		free(w->q[i].path);
	free(w->nodes);
	free(w->roots);
	free(w->pw);
	free(w->q);
	closep(&w->mem_fd);
	closep(&w->ep);
	closep(&w->ino);
	closep(&w->tfd);
	closep(&w->wake);
	free(w);
}

/* Watches the parent of a subtree root, so that the root's own removal
 * (and re-creation) is seen: kernfs reports it only to the parent. */
static int watch_parent(struct cgroup_watch *w, const char *root)
{
	const char *slash = strrchr(root, '/');
	struct parent_watch *pw;
	char parent[4096], p[4300];
	int wd, r;

	if (!slash || streq(root, "/"))
		return 0;
	if ((size_t)(slash - root) >= sizeof(parent))
		return -ENAMETOOLONG;
	/* "/a" → "/", "/a/b" → "/a" */
	if (slash == root)
		strlcpy_safe(parent, "/", sizeof(parent));
	else
		strlcpy_safe(parent, root, (size_t)(slash - root) + 1);
	r = proc_path(w, parent, NULL, p, sizeof(p));
	if (r < 0)
		return r;
	wd = inotify_add_watch(w->ino, p, DIR_MASK);
	if (wd < 0)
		return -errno;
	pw = realloc(w->pw, (w->n_pw + 1) * sizeof(*pw));
	if (!pw)
		return -ENOMEM;
	w->pw = pw;
	w->pw[w->n_pw].path = strdup(parent);
	if (!w->pw[w->n_pw].path)
		return -ENOMEM;
	w->pw[w->n_pw++].wd = wd;
	return 0;
}

static int add_root(struct cgroup_watch *w, const char *subtree)
{
	char **roots;

	for (size_t i = 0; i < w->n_roots; i++)
		if (streq(w->roots[i], subtree))
			return 0;
	roots = realloc(w->roots, (w->n_roots + 1) * sizeof(*roots));
	if (!roots)
		return -ENOMEM;
	w->roots = roots;
	w->roots[w->n_roots] = strdup(subtree);
	if (!w->roots[w->n_roots])
		return -ENOMEM;
	w->n_roots++;
	return watch_parent(w, subtree);
}

int cgroup_watch_add_tree(struct cgroup_watch *w, const char *subtree)
{
	char rel[4096];
	_cleanup_free_ char *canon = NULL;
	int r;

	if (!w)
		return -EINVAL;
	r = cgroup_relpath(subtree, rel, sizeof(rel));
	if (r < 0)
		return r;
	/* Canonical form: "/" or "/a/b" without a trailing slash. */
	r = asprintf(&canon, "/%s", streq(rel, ".") ? "" : rel);
	if (r < 0)
		return -ENOMEM;
	r = walk(w, canon, false, 0);
	if (r < 0)
		return r;
	return add_root(w, canon);
}

int cgroup_watch_fd(const struct cgroup_watch *w)
{
	return w ? w->ep : -EBADF;
}

int cgroup_watch_unnotified(const struct cgroup_watch *w)
{
	return w ? w->v1_unnotified : 0;
}

size_t cgroup_watch_count(const struct cgroup_watch *w)
{
	return w ? w->n : 0;
}

uint32_t cgroup_watch_generation(const struct cgroup_watch *w)
{
	return w ? w->next_id : 0;
}

/* Re-reads every node's oom_kill (growth is queued) and wakes the loop
 * when anything was queued since before. Returns the number queued, or err
 * (or the first read error) when negative. */
static int recount_from(struct cgroup_watch *w, size_t before, int err)
{
	uint64_t one = 1;

	for (size_t i = 0; i < w->n; i++) {
		int r = check_oom(w, w->nodes[i], false);

		if (r < 0 && r != -ENOENT && !err)
			err = r;
	}
	if (w->nq > before && write(w->wake, &one, sizeof(one)) < 0)
		err = err ? err : -errno;
	return err < 0 ? err : (int)(w->nq - before);
}

int cgroup_watch_rescan(struct cgroup_watch *w)
{
	struct cgroup_fs fs;
	size_t before;
	int err = 0;

	if (!w)
		return -EINVAL;
	fs = (struct cgroup_fs){.mode = w->mode, .mem_fd = w->mem_fd};
	before = w->nq;
	for (size_t i = w->n; i-- > 0;) {
		if (i < w->n && !node_alive(w, w->nodes[i]))
			err = remove_tree(w, w->nodes[i]->path);
	}
	for (size_t i = 0; i < w->n_roots; i++) {
		int r = walk(w, w->roots[i], true, 0);

		if (r < 0 && r != -ENOENT && !err)
			err = r;
	}
	for (size_t i = 0; i < w->n; i++) {
		struct cg_node *nd = w->nodes[i];

		if (w->mode == CGROUP_V2 && nd->ev_wd < 0) {
			_cleanup_close_ int dfd =
				cgroup_open_dir(&fs, nd->path);

			if (dfd >= 0)
				watch_events_v2(w, nd, dfd);
		}
	}
	return recount_from(w, before, err);
}

int cgroup_watch_recount(struct cgroup_watch *w)
{
	return w ? recount_from(w, w->nq, 0) : -EINVAL;
}
