/* SPDX-License-Identifier: Apache-2.0 */
/* One round of the flight recorder: who is in the cgroup, what each
 * process holds, the cgroup's usage and limit. */
#include <dirent.h>
#include <fcntl.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/parse.h"
#include "kernel/procfs.h"
#include "base/util.h"
#include "run.h"

#define CGROUP_DEPTH_MAX 8

/* Appends the pids of dir_fd/cgroup.procs. */
static int procs_of(int dir_fd, int *pids, size_t *n)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, 1u << 20);
	r = read_file_at(dir_fd, "cgroup.procs", 1u << 20, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	cgroup_parse_procs(sb.buf, sb.len, pids, n, RUN_MAX_PIDS);
	return 0;
}

/* The cgroup and its descendants (a pod's containers sit below it; v1 and
 * v2 usage counts them too). Takes ownership of dir_fd. */
static int subtree_pids(int dir_fd, int depth, int *pids, size_t *n)
{
	DIR *d;
	struct dirent *de;
	int r = procs_of(dir_fd, pids, n);

	if (r < 0 || depth >= CGROUP_DEPTH_MAX) {
		close(dir_fd);
		return r;
	}
	d = fdopendir(dir_fd);
	if (!d) {
		close(dir_fd);
		return 0;
	}
	while ((de = readdir(d)) && *n < RUN_MAX_PIDS) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A child removed meanwhile is not an error. */
		if (sub >= 0)
			(void)subtree_pids(sub, depth + 1, pids, n);
	}
	closedir(d);
	return 0;
}

/* Reads the pids of the watched cgroup's subtree. -ENOENT when gone. */
static int cgroup_pids(struct run_state *st, int *pids, size_t *n)
{
	const char *rel = st->cfg->cgroup;
	int fd;

	while (*rel == '/')
		rel++;
	fd = openat(st->fs.mem_fd, *rel ? rel : ".",
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*n = 0;
	return subtree_pids(fd, 0, pids, n);
}

/* Samples one pid; 0 with *ret filled, -ESRCH when it is gone. */
static int sample_pid(struct run_state *st, int pid, uint64_t t_us,
		      struct rec_proc_sample *ret)
{
	_cleanup_close_ int fd = host_open_pid(&st->h, pid);
	struct proc_status ps;
	int r;

	if (fd < 0)
		return fd;
	r = procfs_read_status(fd, &ps);
	if (r < 0)
		return r;
	if (!ps.has_mm)
		return -ESRCH; /* zombie: its memory is gone already */
	if (!recorder_proc_alive(&st->rec, pid)) {
		_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;

		strbuf_init(&cmd, 4096);
		(void)procfs_read_cmdline(fd, st->cfg->redact, &cmd);
		r = recorder_proc_seen(&st->rec, pid, ps.name, cmd.buf, t_us);
		st->manifest_dirty = true;
		if (st->n_new < ARRAY_SIZE(st->new_pids))
			st->new_pids[st->n_new++] = pid;
	} else {
		r = recorder_proc_seen(&st->rec, pid, NULL, NULL, t_us);
	}
	*ret = (struct rec_proc_sample){
		.pid = pid,
		.threads = ps.threads,
		.rss_kb = ps.vm_rss_kb,
		.anon_kb = ps.rss_anon_kb,
		.file_kb = ps.rss_file_kb,
		.shmem_kb = ps.rss_shmem_kb,
		.swap_kb = ps.vm_swap_kb,
	};
	return r;
}

static void note_ended(struct run_state *st, const int *now, size_t n,
		       uint64_t t_us)
{
	for (size_t i = 0; i < st->n_alive; i++) {
		bool found = false;

		for (size_t k = 0; k < n && !found; k++)
			found = now[k] == st->alive[i];
		if (!found) {
			recorder_proc_ended(&st->rec, st->alive[i], t_us);
			st->manifest_dirty = true;
		}
	}
	memcpy(st->alive, now, n * sizeof(*now));
	st->n_alive = n;
}

/* One value file of the watched cgroup; false when absent/unreadable. */
static bool cg_value(struct run_state *st, const char *name,
		     struct cgroup_value *ret)
{
	char buf[64];
	ssize_t n;
	_cleanup_close_ int fd =
		openat(st->cg_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT || errno == ENODEV)
			st->cgroup_gone = true;
		return false;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	cgroup_parse_value(buf, (size_t)n, st->fs.mode, ret);
	return true;
}

uint64_t run_read_oom_kills(struct run_state *st)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct cgroup_events ev = {0};
	bool v2 = st->fs.mode == CGROUP_V2;
	int r;

	if (st->cg_fd < 0)
		return 0;
	strbuf_init(&sb, 4096);
	r = read_file_at(st->cg_fd, v2 ? "memory.events" : "memory.oom_control",
			 4096, &sb);
	if (r < 0)
		return 0;
	r = v2 ? cgroup_parse_events(sb.buf, sb.len, &ev)
	       : cgroup_parse_oom_control(sb.buf, sb.len, &ev);
	return r == 0 ? ev.oom_kill : 0;
}

/* The cheap part of the cgroup: usage, limit, oom_kill; three small
 * reads through a directory fd kept open (memory.stat is for snapshots). */
static void cgroup_usage(struct run_state *st, struct rec_sample *s)
{
	bool v2 = st->fs.mode == CGROUP_V2;
	struct cgroup_value v;

	if (st->cg_fd < 0)
		return;
	if (cg_value(st, v2 ? "memory.current" : "memory.usage_in_bytes", &v) &&
	    v.state == CGV_OK)
		s->usage = v.v;
	if (cg_value(st, v2 ? "memory.max" : "memory.limit_in_bytes", &v) &&
	    v.state == CGV_OK)
		s->limit = v.v;
	st->oom_kills = run_read_oom_kills(st);
}

int run_sample_open(struct run_state *st)
{
	const char *rel = st->cfg->cgroup;

	st->cg_fd = -1;
	if (!st->have_fs || !rel)
		return 0;
	while (*rel == '/')
		rel++;
	st->cg_fd = openat(st->fs.mem_fd, *rel ? rel : ".",
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return st->cg_fd < 0 ? -errno : 0;
}

int run_sample(struct run_state *st)
{
	int *pids = st->scratch_pids, *ok = st->scratch_ok;
	struct rec_proc_sample *procs = st->scratch_procs;
	struct rec_sample s = {.t_us = now_realtime_us(),
			       .mono_us = now_monotonic_us(),
			       .procs = procs};
	size_t n = 0, n_ok = 0;
	uint64_t rss_sum = 0;
	int r = 0;

	if (st->cfg->cgroup) {
		r = cgroup_pids(st, pids, &n);
		if (r == -ENOENT)
			st->cgroup_gone = true;
	} else {
		memcpy(pids, st->cfg->pids, st->cfg->n_pids * sizeof(int));
		n = st->cfg->n_pids;
	}
	for (size_t i = 0; i < n; i++) {
		r = sample_pid(st, pids[i], s.t_us, &procs[n_ok]);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			continue;
		rss_sum += procs[n_ok].rss_kb << 10;
		ok[n_ok++] = pids[i];
	}
	s.n_procs = n_ok;
	note_ended(st, ok, n_ok, s.t_us);
	s.usage = rss_sum;
	cgroup_usage(st, &s);
	/* The cgroup went away during this sample (its files after its task
	 * list): nothing of it is left, so every process has ended. */
	if (st->cgroup_gone && st->n_alive)
		note_ended(st, ok, 0, s.t_us);
	if (st->cfg->limit)
		s.limit = st->cfg->limit;
	st->timeline_dirty = true;
	return recorder_add(&st->rec, &s);
}
