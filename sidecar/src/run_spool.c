/* SPDX-License-Identifier: Apache-2.0 */
/* The spool: manifest.json, timeline.json (atomic rewrites) and
 * snapshots/<time>/ (made under a .tmp name, renamed when complete, the
 * newest RUN_KEEP_SNAPSHOTS kept). The agent reads it (spool.h). */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <time.h>

#include "base/fileio.h"
#include "inspect/jvm.h"
#include "base/log.h"
#include "inspect/ptcall.h"
#include "forensics/snapshot.h"
#include "forensics/spool.h"
#include "base/util.h"
#include "run.h"

static int write_json_at(int dirfd, const char *path, struct json_object *o)
{
	const char *s;
	int r;

	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = s ? write_file_atomic_at(dirfd, path, s, strlen(s),
				     MODE_PRIVATE_FILE)
	      : -ENOMEM;
	json_object_put(o);
	return r;
}

/* Removes snapshot directories left half-written by a previous run. */
static void remove_stale_tmp(int snap_fd)
{
	int fd = fcntl(snap_fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		closep(&fd);
		return;
	}
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".tmp"))
			(void)rm_rf_at(snap_fd, de->d_name);
	closedir(d);
}

int run_spool_open(struct run_state *st)
{
	_cleanup_close_ int snap_fd = -1;
	int r = mkdir_p_at(AT_FDCWD, st->cfg->spool, MODE_PRIVATE_DIR);

	if (r < 0)
		return r;
	st->spool_fd = open(st->cfg->spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->spool_fd < 0)
		return -errno;
	r = mkdir_p_at(st->spool_fd, SPOOL_SNAPSHOTS_DIR, MODE_PRIVATE_DIR);
	if (r < 0)
		return r;
	snap_fd = openat(st->spool_fd, SPOOL_SNAPSHOTS_DIR,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (snap_fd >= 0)
		remove_stale_tmp(snap_fd);
	return 0;
}

int run_write_manifest(struct run_state *st)
{
	struct json_object *o = json_object_new_object();
	struct json_object *pids = json_object_new_array();
	struct json_object *th = json_object_new_array();
	const struct run_cfg *c = st->cfg;

	if (!o || !pids || !th) {
		json_object_put(o);
		json_object_put(pids);
		json_object_put(th);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n_alive; i++)
		json_object_array_add(pids, json_object_new_int(st->alive[i]));
	for (size_t i = 0; i < c->th.n; i++)
		json_object_array_add(th,
				      json_object_new_int((int)c->th.pct[i]));
	json_object_object_add(o, "schema",
			       json_object_new_string(SPOOL_SCHEMA));
	json_object_object_add(o, "cgroup",
			       c->cgroup ? json_object_new_string(c->cgroup)
					 : NULL);
	json_object_object_add(
		o, "cgroup_mode",
		json_object_new_int(st->have_fs ? (int)st->fs.mode : 0));
	json_object_object_add(o, "pids", pids);
	json_object_object_add(o, "thresholds", th);
	json_object_object_add(o, "interval_ms",
			       json_object_new_int((int)c->interval_ms));
	json_object_object_add(o, "limit", json_object_new_uint64(c->limit));
	json_object_object_add(o, "sidecar_pid", json_object_new_int(getpid()));
	json_object_object_add(o, "started_ms",
			       json_object_new_uint64(st->started_us / 1000));
	json_object_object_add(
		o, "updated_ms",
		json_object_new_uint64(now_realtime_us() / 1000));
	st->manifest_dirty = false;
	return write_json_at(st->spool_fd, SPOOL_MANIFEST, o);
}

int run_write_timeline(struct run_state *st)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, STRBUF_DEFAULT_MAX);
	st->timeline_dirty = false;
	st->last_timeline_mono_us = now_monotonic_us();
	r = recorder_timeline_write(&st->rec, st->cfg->cgroup,
				    st->cfg->interval_ms, &sb);
	if (r < 0)
		return r;
	return write_file_atomic_at(st->spool_fd, SPOOL_TIMELINE, sb.buf,
				    sb.len, MODE_PRIVATE_FILE);
}

static void time_name(uint64_t t_us, char *buf, size_t size)
{
	time_t sec = (time_t)(t_us / 1000000);
	struct tm tm;
	char base[32];

	gmtime_r(&sec, &tm);
	strftime(base, sizeof(base), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, size, "%s.%03uZ", base, (unsigned)(t_us / 1000 % 1000));
}

/* Keeps the newest `keep` complete snapshot directories. */
static void prune(int snap_fd, size_t keep)
{
	char *names[256];
	size_t n = spool_list_snapshots(snap_fd, names, ARRAY_SIZE(names));

	for (size_t i = 0; i < n; i++) {
		if (i + keep < n)
			(void)rm_rf_at(snap_fd, names[i]);
		free(names[i]);
	}
}

static int snapshot_meta(int dir_fd, const char *reason,
			 const struct rec_sample *s, struct json_object *pids)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		json_object_put(pids);
		return -ENOMEM;
	}
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(
		o, "t_ms", json_object_new_uint64(now_realtime_us() / 1000));
	json_object_object_add(o, "usage",
			       json_object_new_uint64(s ? s->usage : 0));
	json_object_object_add(o, "limit",
			       json_object_new_uint64(s ? s->limit : 0));
	json_object_object_add(o, "pids", pids);
	return write_json_at(dir_fd, "snapshot.json", o);
}

/* --trim: whether this snapshot is followed by a trim of each JVM. */
static bool trim_now(const struct run_state *st, const char *reason)
{
	const struct rec_thresholds *th = &st->cfg->th;
	char top[32];

	if (st->cfg->trim == RUN_TRIM_OFF || !startswith(reason, "threshold-"))
		return false;
	if (st->cfg->trim == RUN_TRIM_ON_PRESSURE)
		return true;
	snprintf(top, sizeof(top), "threshold-%u",
		 th->n ? th->pct[th->n - 1] : 0);
	return !st->trim_tested && streq(reason, top);
}

/* Any other glibc process: malloc_trim(0) through ptrace (--allocator-probe
 * ptrace allows touching it), recorded as jvm_trim_snapshot() does, in
 * <pid>/trim.json. */
static int glibc_trim_snapshot(struct run_state *st, int pid, int pfd,
			       struct jvm_trim_result *ret)
{
	struct ptcall_opts o = {st->h.proc_fd, 0};
	struct ptcall_report rep;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int released = 0, r;

	memset(ret, 0, sizeof(*ret));
	strlcpy_safe(ret->command, "malloc_trim(0)", sizeof(ret->command));
	(void)jvm_read_rss(&st->h, pid, &ret->rss_before);
	r = ptcall_malloc_trim(pid, &o, &released, &rep);
	if (r < 0)
		return r;
	(void)jvm_read_rss(&st->h, pid, &ret->rss_after);
	ret->duration_us = rep.total_us;
	snprintf(ret->output, sizeof(ret->output), "malloc_trim returned %d",
		 released);
	strbuf_init(&sb, 65536);
	r = jvm_trim_to_json(ret, &sb);
	return r < 0 ? r
		     : write_file_atomic_at(pfd, "trim.json", sb.buf, sb.len,
					    MODE_PRIVATE_FILE);
}

/* After the snapshot recorded the state, trim and record the RSS before
 * and after in <pid>/jvm/trim.json (nothing for a non-JVM). */
static void trim_after_snapshot(struct run_state *st, int proc_fd, int pid)
{
	_cleanup_close_ int pfd = -1;
	struct jvm_trim_result t;
	char name[32];
	int r;

	snprintf(name, sizeof(name), "%d", pid);
	pfd = openat(proc_fd, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return;
	r = jvm_trim_snapshot(&st->h, pid, pfd, NULL, &t);
	if (r == -JVM_E_NOT_JVM && st->cfg->allocator_probe) {
		r = glibc_trim_snapshot(st, pid, pfd, &t);
		if (r < 0 && r != -ESRCH)
			log_warn("malloc_trim of pid %d: %s, ignoring", pid,
				 strerror(-r));
	} else if (r < 0 && r != -JVM_E_NOT_JVM && r != -ESRCH) {
		log_warn("trim of pid %d: %s, ignoring", pid, jvm_strerror(r));
	}
	if (r >= 0) {
		/* In the timeline too: a later snapshot replaces this one. */
		recorder_note_trim(&st->rec, now_realtime_us(), pid, t.command,
				   t.rss_before, t.rss_after);
		st->timeline_dirty = true;
	}
	if (r >= 0)
		log_info("trimmed pid %d: rss %llu -> %llu KiB", pid,
			 (unsigned long long)(t.rss_before >> 10),
			 (unsigned long long)(t.rss_after >> 10));
}

static int snapshot_into(struct run_state *st, int dir_fd, const char *reason)
{
	bool trim = trim_now(st, reason);
	const struct rec_sample *last = recorder_sample(
		&st->rec, st->rec.count ? st->rec.count - 1 : 0);
	struct snapshot_opts o = {.no_redact = !st->cfg->redact,
				  .allocator_probe = st->cfg->allocator_probe};
	struct json_object *pids = json_object_new_array();
	_cleanup_close_ int proc_fd = -1;
	int r = mkdir_p_at(dir_fd, SPOOL_PROCESSES_DIR, MODE_PRIVATE_DIR);

	if (r < 0 || !pids) {
		json_object_put(pids);
		return r < 0 ? r : -ENOMEM;
	}
	proc_fd = openat(dir_fd, SPOOL_PROCESSES_DIR,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (size_t i = 0; proc_fd >= 0 && i < st->n_alive; i++) {
		struct snapshot_result res;

		r = snapshot_process(&st->h, st->alive[i], proc_fd, &o, &res);
		if (r < 0) {
			log_warn("snapshot of pid %d failed: %s, ignoring",
				 st->alive[i], strerror(-r));
			continue;
		}
		json_object_array_add(pids, json_object_new_int(res.pid));
		if (trim)
			trim_after_snapshot(st, proc_fd, st->alive[i]);
	}
	if (trim && st->cfg->trim == RUN_TRIM_TEST)
		st->trim_tested = true;
	return snapshot_meta(dir_fd, reason, last, pids);
}

int run_take_snapshot(struct run_state *st, const char *reason)
{
	_cleanup_close_ int snap_fd = -1, dir_fd = -1;
	char name[64], tmp[80], rel[128];
	uint64_t t = now_realtime_us();
	const struct rec_sample *last;
	int r;

	snap_fd = openat(st->spool_fd, SPOOL_SNAPSHOTS_DIR,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (snap_fd < 0)
		return -errno;
	time_name(t, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	if (mkdirat(snap_fd, tmp, MODE_PRIVATE_DIR) < 0)
		return -errno;
	dir_fd = openat(snap_fd, tmp,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = dir_fd < 0 ? -errno : snapshot_into(st, dir_fd, reason);
	if (r >= 0 && renameat(snap_fd, tmp, snap_fd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)rm_rf_at(snap_fd, tmp);
		return r;
	}
	prune(snap_fd, RUN_KEEP_SNAPSHOTS);
	last = recorder_sample(&st->rec, st->rec.count - 1);
	snprintf(rel, sizeof(rel), "%s/%s", SPOOL_SNAPSHOTS_DIR, name);
	st->timeline_dirty = true;
	return recorder_note_snapshot(&st->rec, t, now_monotonic_us(), reason,
				      rel, last ? last->usage : 0,
				      last ? last->limit : 0);
}
