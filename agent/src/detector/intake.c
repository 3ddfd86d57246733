/* SPDX-License-Identifier: Apache-2.0 */
/* The detector's intake of the kernel log (intake.h): /dev/kmsg into the
 * report assembler, its clock probes, when the report in progress closes,
 * and each finished report into the correlator. */
#include <errno.h>
#include <string.h>

#include "agent.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "detector/intake.h"
#include "kernel/procfs.h"

/* After /dev/kmsg runs dry, wait this long for more lines of the same
 * report (an oom.group kill prints one "Killed process" per task) before
 * closing it. */
#define QUIET_US 3000
/* A memory.oom.group kill's lines come one after the other, each once the
 * console printed the last (in the TCG guest 0.3-3.5 ms apart, more on a
 * busy host): its report stays open past QUIET_US while its cgroup still
 * lists a task without its line, or one this agent cannot name (another
 * pid namespace: the DaemonSet's), up to this much quiet. */
#define GROUP_QUIET_US 250000
/* While a report is being printed (or an OOM was just notified), /dev/kmsg
 * is polled this often: the kernel defers waking its readers to the next
 * tick (up to 4 ms at HZ=250). */
#define POLL_US 500
/* kmsg clock probes tried before latencies fall back to offset 0. */
#define MAX_PROBES 12
/* The kmsg clock drifts from CLOCK_MONOTONIC (NTP slews only the latter):
 * measure again this often. */
#define REPROBE_US (600ull * 1000000)

static void save_seq(struct agent *a, uint64_t seq)
{
	int q;

	if (seq == UINT64_MAX || (a->have_last_seq && seq <= a->last_seq))
		return;
	a->last_seq = seq;
	a->have_last_seq = true;
	q = agent_state_save(a);
	if (q < 0)
		log_warn("cannot save state: %s, ignoring", strerror(-q));
}

/* Reports the correlator has not decided or handed out yet keep their
 * place: the state never moves past the oldest one. */
void intake_save_progress(struct agent *a, uint64_t seq)
{
	struct intake *in = &a->intake;
	uint64_t first = correlate_hold_seq(a->corr);

	if (seq != UINT64_MAX && (!in->have_done_seq || seq > in->done_seq)) {
		in->done_seq = seq;
		in->have_done_seq = true;
	}
	if (!in->have_done_seq)
		return;
	seq = in->done_seq;
	if (first != UINT64_MAX && first > 0 && seq >= first)
		seq = first - 1;
	save_seq(a, seq);
}

/* The kill of r on CLOCK_MONOTONIC, UINT64_MAX when unknown. */
static uint64_t kill_mono(const struct agent *a, const struct oom_report *r)
{
	if (!r->n_victims || r->victims[0].usec == UINT64_MAX ||
	    !a->intake.have_offset)
		return UINT64_MAX;
	return (uint64_t)((int64_t)r->victims[0].usec - a->kmsg_offset_us);
}

/* /proc's answer for the victim of a bare kill line: its memory cgroup,
 * then its status (which vouches for the cgroup read before it). */
static void read_proc(const struct agent *a, int pid, struct corr_proc *ret)
{
	_cleanup_close_ int fd = host_open_pid(&a->host, pid);
	char cg[KMSG_PATH_MAX];
	struct proc_status st;

	if (fd < 0 || procfs_read_cgroup(fd, cg, sizeof(cg)) != 0 ||
	    procfs_read_status(fd, &st) != 0)
		return;
	/* /proc names it from our cgroup namespace's root: make it ours.
	 * "/" and "/.." stay as read: the correlator refuses them. */
	if (streq(cg, "/") || strncmp(cg, "/..", 3) == 0)
		strlcpy_safe(ret->cgroup, cg, sizeof(ret->cgroup));
	else if (cgroup_mount_from_ns(&a->cgmount, cg, ret->cgroup,
				      sizeof(ret->cgroup)) != 0)
		return;
	strlcpy_safe(ret->comm, st.name, sizeof(ret->comm));
	ret->has_mm = st.has_mm;
	ret->read = true;
}

/* The one place a parsed kernel report comes in, with its paths as
 * mounted. */
static void handle_report(struct agent *a, struct oom_report *r,
			  const struct corr_paths *paths)
{
	struct corr_proc proc = {0};
	int q;

	if (!corr_paths_victim(paths)[0]) {
		/* A bare kill line: read every counter now (the one that grew
		 * names this kill, and every read tells later kills from
		 * it), and /proc while the victim may still be there. */
		q = cgroup_watch_recount(a->watch);
		if (q < 0)
			log_debug("re-reading the oom_kill counters: %s",
				  strerror(-q));
		if (r->n_victims)
			read_proc(a, r->victims[0].pid, &proc);
	}
	q = correlate_report(a->corr, r, paths, &proc, kill_mono(a, r),
			     now_monotonic_us());
	if (q < 0)
		log_error("kill of pid %d: %s, not reported",
			  r->n_victims ? r->victims[0].pid : 0, strerror(-q));
}

enum intake_pop intake_pop(struct agent *a, bool *ret_complete)
{
	enum intake_pop ret = INTAKE_TAKEN;
	struct oom_report r;
	struct corr_paths paths;

	if (kmsg_assembler_pop(a->intake.asm_, &r) != 1)
		return INTAKE_NONE;
	*ret_complete = r.complete;
	/* The kernel's cgroup paths as ours, beside them, before anything
	 * compares them with what we watch. */
	if (agent_map_report(a, &r, &paths)) {
		handle_report(a, &r, &paths);
	} else {
		a->reports_ignored++;
		intake_save_progress(a, r.seq_last);
		ret = INTAKE_DROPPED;
	}
	oom_report_release(&r);
	return ret;
}

/* Measures the kmsg clock: the marker comes back through the main reader
 * (intake_read). */
void intake_probe(struct agent *a)
{
	struct intake *in = &a->intake;
	int r;

	if (!in->kmsg ||
	    (in->have_offset &&
	     now_monotonic_us() - in->offset_mono < REPROBE_US) ||
	    in->probes >= MAX_PROBES)
		return;
	in->probes++;
	r = kmsg_clock_probe(a->host.root_fd, in->probe, sizeof(in->probe),
			     &in->probe_mono);
	if (r < 0) {
		in->probe[0] = '\0';
		in->probes = MAX_PROBES; /* not writable: not worth retrying */
		log_warn("cannot write \"%s/dev/kmsg\" to measure its clock "
			 "(%s): latencies assume it is CLOCK_MONOTONIC",
			 a->host.root, strerror(-r));
	}
}

static void check_probe(struct agent *a, const struct kmsg_record *rec)
{
	struct intake *in = &a->intake;
	size_t n = strlen(in->probe);

	if (!n || rec->text_len != n || memcmp(rec->text, in->probe, n) != 0)
		return;
	a->kmsg_offset_us = (int64_t)rec->usec - (int64_t)in->probe_mono;
	in->have_offset = true;
	in->offset_mono = in->probe_mono;
	in->probes = 0; /* the next measurement gets its own tries */
	in->probe[0] = '\0';
	log_debug("kmsg clock offset %lld us", (long long)a->kmsg_offset_us);
}

int intake_read(struct agent *a, size_t *n_read)
{
	struct intake *in = &a->intake;
	struct kmsg_record rec;
	int r;

	while (in->kmsg) {
		r = kmsg_reader_next(in->kmsg, &rec);
		if (r == 0)
			break;
		if (r == -EPIPE) {
			log_warn("kmsg overrun: the kernel dropped records "
				 "before they were read, continuing");
			continue;
		}
		if (r < 0) {
			log_error("reading kmsg: %s", strerror(-r));
			break;
		}
		(*n_read)++;
		check_probe(a, &rec);
		if (kmsg_assembler_feed(in->asm_, &rec) > 0)
			return 1;
	}
	return 0;
}

int intake_fd(const struct agent *a)
{
	return a->intake.kmsg ? kmsg_reader_fd(a->intake.kmsg) : -1;
}

/* First start with no state: remember where the ring buffer ends so that a
 * later restart resumes from here. History is not reported unless asked. */
int intake_open(struct agent *a)
{
	struct intake *in = &a->intake;
	bool fresh = !a->have_last_seq && !a->opts.from_start;
	struct kmsg_record rec;
	int r;

	r = kmsg_reader_open(a->host.root_fd, false, a->have_last_seq,
			     a->last_seq, &in->kmsg);
	if (r == -ENOENT || r == -EACCES || r == -EPERM) {
		/* the chart's privileged: false (the device cgroup of an
		 * unprivileged container denies c 1:11): kills are still
		 * counted by the cgroups, reported without the kernel's
		 * words (manifest how_found "notification") */
		log_warn("cannot open \"%s/dev/kmsg\" (%s): running without "
			 "the kernel log; kills are seen from the cgroups' "
			 "counters only, without victims' names or the task "
			 "dump",
			 a->host.root, strerror(-r));
		in->kmsg = NULL;
		in->asm_ = kmsg_assembler_new();
		return in->asm_ ? 0 : -ENOMEM;
	}
	if (r < 0) {
		log_error("cannot open \"%s/dev/kmsg\": %s", a->host.root,
			  strerror(-r));
		return r;
	}
	while (fresh && (r = kmsg_reader_next(in->kmsg, &rec)) != 0) {
		if (r > 0 && rec.seq != UINT64_MAX) {
			a->last_seq = rec.seq;
			a->have_last_seq = true;
		} else if (r < 0 && r != -EPIPE) {
			return r;
		}
	}
	if (fresh)
		agent_state_save(a);
	intake_probe(a);
	in->asm_ = kmsg_assembler_new();
	return in->asm_ ? 0 : -ENOMEM;
}

/* The file of the kernel's cgroup kpath (an OOM report's path), read into
 * sb, at most max bytes: cgroup_read_file()'s answer, -EXDEV when it lies
 * outside what is mounted. */
static int read_report_cgroup_file(const struct agent *a, const char *kpath,
				   const char *file, size_t max,
				   struct strbuf *sb)
{
	char cg[KMSG_PATH_MAX];

	if (cgroup_mount_from_kernel(&a->cgmount, kpath, cg, sizeof(cg)) != 0)
		return -EXDEV;
	return cgroup_read_file(&a->cgfs, cg, file, max, sb);
}

/* Whether the kernel is about to announce a memory.oom.group kill after
 * the report's first "Killed process" line: memory.oom.group is 1 in the
 * victim's cgroup or an ancestor up to the one whose limit was hit (the
 * kernel kills the highest such). Only on cgroup v2. */
static bool group_kill_coming(const struct agent *a, const struct oom_report *r)
{
	char kpath[KMSG_PATH_MAX];

	if (r->group_kill || r->global || r->n_victims != 1 ||
	    !r->oom_memcg[0] || !r->task_memcg[0] ||
	    !cgroup_path_within(r->task_memcg, r->oom_memcg))
		return false;
	strlcpy_safe(kpath, r->task_memcg, sizeof(kpath));
	for (;;) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		char *slash;

		if (read_report_cgroup_file(a, kpath, "memory.oom.group", 16,
					    &sb) == 0 &&
		    sb.len && sb.buf[0] == '1')
			return true;
		if (streq(kpath, r->oom_memcg) ||
		    !(slash = strrchr(kpath, '/')))
			return false;
		if (slash == kpath)
			slash[1] = '\0'; /* "/" */
		else
			*slash = '\0';
	}
}

/* Whether the report in progress may still gain "Killed process" lines of
 * a memory.oom.group kill: the announcement is coming, or the group's
 * cgroup lists a task without its line (oom_report_group_walked). A cgroup
 * that cannot be read counts as pending: wait for GROUP_QUIET_US. */
static bool group_walk_pending(const struct agent *a)
{
	const struct oom_report *r = kmsg_assembler_current(a->intake.asm_);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int ret;

	if (!r || !r->n_victims)
		return false;
	if (!r->group_kill)
		return group_kill_coming(a, r);
	strbuf_init(&sb, 65536);
	ret = read_report_cgroup_file(a, r->group_memcg, "cgroup.procs", 65535,
				      &sb);
	if (ret == -ENOENT)
		return false; /* gone: nobody left to kill */
	return ret < 0 || !oom_report_group_walked(r, sb.buf, sb.len);
}

/* kmsg ran dry: close the report in progress once it stays quiet. */
bool intake_settle(struct agent *a, size_t n_read)
{
	struct intake *in = &a->intake;
	uint64_t now = now_monotonic_us();

	if (n_read) {
		/* A plain kill's report ends with its "Killed process" line:
		 * close it now. Wait only for what may still come. */
		if (!kmsg_assembler_may_grow(in->asm_) &&
		    !group_walk_pending(a) &&
		    kmsg_assembler_flush(in->asm_, false) > 0) {
			in->quiet_since = 0;
			return true;
		}
		in->quiet_since = now;
		return false;
	}
	if (in->quiet_since && now - in->quiet_since >= QUIET_US) {
		if (now - in->quiet_since < GROUP_QUIET_US &&
		    group_walk_pending(a))
			return false;
		in->quiet_since = 0;
		return kmsg_assembler_flush(in->asm_, false) > 0;
	}
	return false;
}

bool intake_close(struct agent *a)
{
	return kmsg_assembler_flush(a->intake.asm_, false) > 0;
}

void intake_expect(struct agent *a)
{
	if (!a->intake.quiet_since)
		a->intake.quiet_since = now_monotonic_us();
}

uint64_t intake_poll_us(const struct agent *a)
{
	return a->intake.quiet_since ? POLL_US : 0;
}
