/* SPDX-License-Identifier: Apache-2.0 */
/* The spool: manifest.json, timeline.json (atomic rewrites) and
 * snapshots/<time>/ (made under a .tmp name, renamed when complete, the
 * newest RUN_KEEP_SNAPSHOTS kept, and the newest with a JVM's answer when
 * those have none). The agent reads it (spool.h). */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <time.h>

#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "inspect/jvm.h"
#include "base/log.h"
#include "inspect/ptcall.h"
#include "kernel/procfs_access.h"
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
	struct dirent *de;
	DIR *d;

	if (opendir_at(snap_fd, ".", &d) < 0)
		return;
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

void run_note_missing(struct run_state *st, const char *what, int pid,
		      const char *why)
{
	bool fresh;

	pthread_mutex_lock(&st->mu);
	fresh = capture_note(&st->capture, what, pid, why);
	if (fresh)
		st->manifest_dirty = true;
	pthread_mutex_unlock(&st->mu);
	if (fresh && pid)
		log_warn("not captured: %s of pid %d: %s", what, pid, why);
	else if (fresh)
		log_warn("not captured: %s: %s", what, why);
}

void run_note_denied(struct run_state *st, const char *what, int pid)
{
	_cleanup_close_ int pfd = host_open_pid(&st->h, pid);
	char why[CAPTURE_WHY_MAX];

	if (pfd < 0)
		return; /* gone: nothing to explain */
	run_note_missing(st, what, pid,
			 procfs_explain_denied(pfd, why, sizeof(why)));
}

/* manifest.json as text; st->mu held (reads st->alive). */
static int manifest_text(struct run_state *st, struct strbuf *out)
{
	struct json_object *o = json_object_new_object();
	struct json_object *pids = json_object_new_array();
	struct json_object *th = json_object_new_array();
	const struct run_cfg *c = st->cfg;
	const char *s;
	int r;

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
	json_object_object_add(o, "fast_interval_ms",
			       json_object_new_int((int)c->fast_interval_ms));
	json_object_object_add(o, "limit", json_object_new_uint64(c->limit));
	json_object_object_add(o, "sidecar_pid", json_object_new_int(getpid()));
	json_object_object_add(o, "started_ms",
			       json_object_new_uint64(st->started_us / 1000));
	json_object_object_add(
		o, "updated_ms",
		json_object_new_uint64(now_realtime_us() / 1000));
	json_object_object_add(o, "capture", capture_to_json(&st->capture));
	s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = s ? strbuf_adds(out, s) : -ENOMEM;
	json_object_put(o);
	return r;
}

int run_write_manifest(struct run_state *st)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, 1u << 20);
	pthread_mutex_lock(&st->mu);
	r = manifest_text(st, &sb);
	st->manifest_dirty = false;
	pthread_mutex_unlock(&st->mu);
	return r < 0 ? r
		     : write_file_atomic_at(st->spool_fd, SPOOL_MANIFEST,
					    sb.buf, sb.len, MODE_PRIVATE_FILE);
}

/* timeline.json is written as it is made, a chunk at a time: each made
 * under st->mu (recorder_timeline_next: whole elements, about 48 KiB),
 * written to the temp file without it. The sampler waits at most for one
 * chunk's making, and the whole text (about 3 MB with a full ring of 50
 * processes) is never in memory: it was, in json-c's buffer, and was most
 * of the sidecar's peak RSS (docs/build.md, make bench). A full ring's
 * write costs about 4.8 ms of CPU in 48 KiB chunks, 5.7 ms in 16 KiB ones
 * (four times the write calls; medians of a harness, load about 9). */
#define TIMELINE_CHUNK (48u << 10)
/* The chunk's buffer is kept from one write to the next: 64 KiB, a chunk
 * and the element that ends it (a sample of 50 processes is 5 KiB), on
 * the heap (below M_MMAP_THRESHOLD), not allocated again every second.
 * One that a larger element grew is given back after its write. */
#define TIMELINE_KEEP (64u << 10)
/* The most one element may take: a sample of RUN_MAX_PIDS processes. */
#define TIMELINE_ELEM_MAX (1u << 20)

struct timeline_fill {
	struct run_state *st;
	struct rec_cursor cur;
};

static int timeline_fill(int fd, void *arg)
{
	struct timeline_fill *f = arg;
	struct strbuf *chunk = &f->st->tl_chunk;
	int more, r;

	do {
		strbuf_reset(chunk);
		pthread_mutex_lock(&f->st->mu);
		more = recorder_timeline_next(&f->st->rec, &f->cur, chunk,
					      TIMELINE_CHUNK);
		pthread_mutex_unlock(&f->st->mu);
		if (more < 0)
			return more;
		r = write_all(fd, chunk->buf, chunk->len);
		if (r < 0)
			return r;
	} while (more);
	return 0;
}

int run_write_timeline(struct run_state *st)
{
	struct timeline_fill f = {.st = st};
	int r;

	if (!st->tl_chunk.buf) {
		strbuf_init(&st->tl_chunk, TIMELINE_CHUNK + TIMELINE_ELEM_MAX);
		(void)strbuf_grow(&st->tl_chunk, TIMELINE_KEEP - 1);
	}
	rec_cursor_init(&f.cur, st->cfg->cgroup, st->cfg->interval_ms);
	pthread_mutex_lock(&st->mu);
	st->timeline_dirty = false;
	pthread_mutex_unlock(&st->mu);
	st->last_timeline_mono_us = now_monotonic_us();
	r = write_file_atomic_fill_at(st->spool_fd, SPOOL_TIMELINE,
				      MODE_PRIVATE_FILE, timeline_fill, &f);
	rec_cursor_release(&f.cur);
	if (st->tl_chunk.alloc > TIMELINE_KEEP)
		strbuf_release(&st->tl_chunk);
	return r;
}

/* The flusher: the manifest when it changed, the timeline after each
 * fast sample, else at most once a second. Each made under st->mu (the
 * timeline a chunk at a time), written outside it. */
int run_flush(struct run_state *st)
{
	bool man, tl;
	int r = 0, q;

	pthread_mutex_lock(&st->mu);
	man = st->manifest_dirty;
	tl = st->timeline_dirty &&
	     (st->flush_now || st->stop ||
	      now_monotonic_us() - st->last_timeline_mono_us >= 1000000);
	pthread_mutex_unlock(&st->mu);
	if (man && (q = run_write_manifest(st)) < 0) {
		log_warn("cannot write manifest: %s, ignoring", strerror(-q));
		r = q;
	}
	if (tl && (q = run_write_timeline(st)) < 0) {
		log_warn("cannot write timeline: %s, ignoring", strerror(-q));
		r = q;
	}
	return r;
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

/* How a snapshot went: its deadline, when each step ended, and whether
 * the kernel killed in the cgroup while it ran (after_kill: the agent
 * never uses it in place of an earlier snapshot). */
struct snap_run {
	const struct run_snap_req *req;
	uint64_t started_us, deadline_mono_us;
	uint64_t ooms_before;
	struct rec_sample last; /* usage and limit when it started */
	struct json_object *steps;
};

static uint64_t left_ms(const struct snap_run *sr)
{
	uint64_t now = now_monotonic_us();

	return now >= sr->deadline_mono_us
		       ? 0
		       : (sr->deadline_mono_us - now) / 1000;
}

/* The limit's time left at the growth seen when the snapshot was asked
 * for (its eta), UINT64_MAX when no growth predicted it. */
static uint64_t limit_ms(const struct snap_run *sr)
{
	double ms;

	if (sr->req->eta_s < 0)
		return UINT64_MAX;
	ms = sr->req->eta_s * 1000.0 -
	     (double)(now_monotonic_us() - sr->req->mono_us) / 1000.0;
	return ms > 0 ? (uint64_t)ms : 0;
}

static void step_done(struct snap_run *sr, const char *name, size_t n,
		      size_t skipped)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return;
	json_object_object_add(o, "step", json_object_new_string(name));
	json_object_object_add(
		o, "t_ms", json_object_new_uint64(now_realtime_us() / 1000));
	json_object_object_add(o, "done", json_object_new_int((int)n));
	json_object_object_add(o, "skipped_deadline",
			       json_object_new_int((int)skipped));
	json_object_array_add(sr->steps, o);
}

static int snapshot_meta(int dir_fd, struct snap_run *sr, bool after_kill,
			 struct json_object *pids)
{
	struct json_object *o = json_object_new_object();
	uint64_t now = now_realtime_us();

	if (!o) {
		json_object_put(pids);
		return -ENOMEM;
	}
	json_object_object_add(o, "reason",
			       json_object_new_string(sr->req->reason));
	/* t_ms: when it completed (the agent compares it with the kill) */
	json_object_object_add(o, "t_ms", json_object_new_uint64(now / 1000));
	json_object_object_add(o, "started_ms",
			       json_object_new_uint64(sr->started_us / 1000));
	json_object_object_add(o, "after_kill",
			       json_object_new_boolean(after_kill));
	json_object_object_add(o, "eta_s",
			       sr->req->eta_s >= 0
				       ? json_object_new_double(sr->req->eta_s)
				       : NULL);
	json_object_object_add(
		o, "budget_ms",
		json_object_new_uint64(
			(sr->deadline_mono_us - sr->req->mono_us) / 1000));
	json_object_object_add(o, "usage",
			       json_object_new_uint64(sr->last.usage));
	json_object_object_add(o, "limit",
			       json_object_new_uint64(sr->last.limit));
	json_object_object_add(o, "pids", pids);
	json_object_object_add(o, "steps", json_object_get(sr->steps));
	return write_json_at(dir_fd, BP_SNAP_META, o);
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
		     : write_file_atomic_at(pfd, BP_P_TRIM, sb.buf, sb.len,
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
		pthread_mutex_lock(&st->mu);
		recorder_note_trim(&st->rec, now_realtime_us(), pid, t.command,
				   t.rss_before, t.rss_after);
		st->timeline_dirty = true;
		pthread_mutex_unlock(&st->mu);
	}
	if (r >= 0)
		log_info("trimmed pid %d: rss %llu -> %llu KiB", pid,
			 (unsigned long long)(t.rss_before >> 10),
			 (unsigned long long)(t.rss_after >> 10));
}

static int open_pid_dir(int proc_fd, int pid)
{
	char name[32];

	snprintf(name, sizeof(name), "%d", pid);
	return openat(proc_fd, name,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A JVM the sidecar's credentials cannot reach, in the manifest. */
static void note_jvm(struct run_state *st, int pid, int r)
{
	char why[CAPTURE_WHY_MAX];

	if (r == -EACCES) {
		_cleanup_close_ int pfd = host_open_pid(&st->h, pid);

		if (pfd >= 0)
			run_note_missing(
				st, "jvm attach", pid,
				procfs_explain_denied(pfd, why, sizeof(why)));
	} else if (r == -JVM_E_OWNER || r == -JVM_E_DROPPED) { /* EPERM too */
		run_note_missing(st, "jvm attach", pid, jvm_strerror(r));
	}
}

/* Step 3 for one process: attach (a JVM), then the ptrace probe, each
 * bounded by what is left of the deadline. */
static void snapshot_slow(struct run_state *st, struct snap_run *sr,
			  int proc_fd, int pid, size_t *skipped)
{
	_cleanup_close_ int pfd = open_pid_dir(proc_fd, pid);
	struct jvm_snapshot_opts jo = {0};
	uint64_t left = left_ms(sr);
	const char *why = NULL;
	int r = -JVM_E_NOT_JVM;

	if (pfd < 0)
		return;
	if (left < 50) {
		(*skipped)++;
		return;
	}
	jo.attach.timeout_ms = (unsigned)(left < 5000 ? left : 5000);
	jo.attach.reply_timeout_ms = (unsigned)left;
	jo.deadline_mono_us = sr->deadline_mono_us;
	r = jvm_snapshot(&st->h, pid, pfd, &jo);
	if (r == 0)
		run_jvm_nmt_history(st, pid, pfd);
	note_jvm(st, pid, r);
	if (r != -JVM_E_NOT_JVM)
		run_jvm_heap_rss(st, pid, pfd);
	/* after the heap's RSS: the histogram's full collection may shrink
	 * the heap */
	if (r != -JVM_E_NOT_JVM)
		why = run_jvm_histogram(st, pid, pfd, sr->req->reason, r == 0,
					left_ms(sr), limit_ms(sr));
	if (why)
		run_note_missing(st, "jvm class histogram", pid, why);
	left = left_ms(sr);
	if (r == -JVM_E_NOT_JVM && st->cfg->allocator_probe && left >= 50)
		(void)ptcall_write_allocator_json(st->h.proc_fd, pid, pfd,
						  (unsigned)left);
	else if (r == -JVM_E_NOT_JVM && st->cfg->allocator_probe)
		(*skipped)++;
}

/* Returns 1 when the cgroup saw a kill while it ran, 0, or -errno. */
static int snapshot_into(struct run_state *st, int dir_fd, struct snap_run *sr,
			 const int *pids, size_t n)
{
	bool trim = trim_now(st, sr->req->reason), after_kill;
	struct snapshot_opts o = {.no_redact = !st->cfg->redact,
				  .skip_jvm = true};
	struct json_object *jp = json_object_new_array();
	_cleanup_close_ int proc_fd = -1;
	size_t done = 0, skipped = 0;
	int r = mkdir_p_at(dir_fd, SPOOL_PROCESSES_DIR, MODE_PRIVATE_DIR);

	if (r < 0 || !jp) {
		json_object_put(jp);
		return r < 0 ? r : -ENOMEM;
	}
	proc_fd = openat(dir_fd, SPOOL_PROCESSES_DIR,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* 1: status and smaps of every process, the cheap part. */
	for (size_t i = 0; proc_fd >= 0 && i < n; i++) {
		struct snapshot_result res;

		r = snapshot_process(&st->h, pids[i], proc_fd, &o, &res);
		if (r < 0) {
			log_warn("snapshot of pid %d failed: %s, ignoring",
				 pids[i], strerror(-r));
			continue;
		}
		if (res.smaps_err == -EACCES || res.smaps_err == -EPERM)
			run_note_denied(st, "smaps", pids[i]);
		json_object_array_add(jp, json_object_new_int(res.pid));
		done++;
	}
	step_done(sr, "smaps", done, 0);
	/* 2: the heap ranges' RSS of the JVMs known (smaps, no attach). */
	done = 0;
	for (size_t i = 0; proc_fd >= 0 && i < n; i++) {
		_cleanup_close_ int pfd = -1;

		if (!run_jvm_find(st, pids[i]))
			continue;
		pfd = open_pid_dir(proc_fd, pids[i]);
		if (pfd >= 0) {
			run_jvm_heap_rss(st, pids[i], pfd);
			done++;
		}
	}
	step_done(sr, "jvm-heap-rss", done, 0);
	/* 2b: each runtime's part (Go: GOMEMLIMIT, the heap's RSS). */
	done = 0;
	for (size_t i = 0; proc_fd >= 0 && i < n; i++) {
		_cleanup_close_ int pfd = open_pid_dir(proc_fd, pids[i]);

		if (pfd >= 0)
			done += run_runtimes_snapshot(st, pids[i], pfd) > 0;
	}
	step_done(sr, "runtimes", done, 0);
	/* 3: attach and the ptrace probe, within the deadline. */
	for (size_t i = 0; proc_fd >= 0 && i < n; i++)
		snapshot_slow(st, sr, proc_fd, pids[i], &skipped);
	step_done(sr, "attach", n - skipped, skipped);
	for (size_t i = 0; trim && proc_fd >= 0 && i < n; i++)
		trim_after_snapshot(st, proc_fd, pids[i]);
	if (trim && st->cfg->trim == RUN_TRIM_TEST)
		st->trim_tested = true;
	after_kill =
		st->cfg->cgroup && run_read_oom_kills(st) > sr->ooms_before;
	r = snapshot_meta(dir_fd, sr, after_kill, jp);
	return r < 0 ? r : after_kill;
}

/* The deadline: 80 % of the time left at the growth rate, between
 * RUN_SNAP_MIN_MS and RUN_SNAP_BUDGET_MS. */
static uint64_t budget_ms(const struct run_snap_req *req)
{
	double ms = req->eta_s >= 0 ? req->eta_s * 800.0 : RUN_SNAP_BUDGET_MS;

	if (ms < RUN_SNAP_MIN_MS)
		ms = RUN_SNAP_MIN_MS;
	return ms > RUN_SNAP_BUDGET_MS ? RUN_SNAP_BUDGET_MS : (uint64_t)ms;
}

/* Takes the pids and the newest sample under st->mu. */
static size_t snap_begin(struct run_state *st, struct snap_run *sr, int *pids)
{
	const struct rec_slot *last;
	size_t n;

	pthread_mutex_lock(&st->mu);
	n = st->n_alive;
	memcpy(pids, st->alive, n * sizeof(*pids));
	last = recorder_sample(&st->rec, st->rec.count ? st->rec.count - 1 : 0);
	sr->last.usage = last ? last->usage : 0;
	sr->last.limit = last ? last->limit : 0;
	pthread_mutex_unlock(&st->mu);
	sr->ooms_before = st->cfg->cgroup ? run_read_oom_kills(st) : 0;
	return n;
}

int run_take_snapshot(struct run_state *st, const struct run_snap_req *req)
{
	_cleanup_close_ int snap_fd = -1, dir_fd = -1;
	struct snap_run sr = {.req = req,
			      .started_us = now_realtime_us(),
			      .deadline_mono_us =
				      req->mono_us + budget_ms(req) * 1000};
	char name[64], tmp[80], rel[128];
	int *pids = calloc(RUN_MAX_PIDS, sizeof(int));
	size_t n = 0;
	bool after_kill = false;
	int r;

	sr.steps = json_object_new_array();
	snap_fd = openat(st->spool_fd, SPOOL_SNAPSHOTS_DIR,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = !pids || !sr.steps ? -ENOMEM : snap_fd < 0 ? -errno : 0;
	if (r == 0) {
		n = snap_begin(st, &sr, pids);
		time_name(sr.started_us, name, sizeof(name));
		snprintf(tmp, sizeof(tmp), "%s.tmp", name);
		if (mkdirat(snap_fd, tmp, MODE_PRIVATE_DIR) < 0)
			r = -errno;
	}
	if (r == 0) {
		dir_fd =
			openat(snap_fd, tmp,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = dir_fd < 0 ? -errno
			       : snapshot_into(st, dir_fd, &sr, pids, n);
		after_kill = r > 0;
		if (r >= 0 && renameat(snap_fd, tmp, snap_fd, name) < 0)
			r = -errno;
		if (r < 0)
			(void)rm_rf_at(snap_fd, tmp);
	}
	free(pids);
	if (r < 0) {
		json_object_put(sr.steps);
		return r;
	}
	spool_prune(snap_fd, RUN_KEEP_SNAPSHOTS);
	snprintf(rel, sizeof(rel), "%s/%s", SPOOL_SNAPSHOTS_DIR, name);
	pthread_mutex_lock(&st->mu);
	st->timeline_dirty = true;
	r = recorder_note_snapshot(&st->rec, sr.started_us, now_monotonic_us(),
				   req->reason, rel, sr.last.usage,
				   sr.last.limit);
	if (r >= 0)
		r = recorder_note_snapshot_end(&st->rec, now_realtime_us(),
					       after_kill);
	pthread_mutex_unlock(&st->mu);
	json_object_put(sr.steps);
	return r;
}
