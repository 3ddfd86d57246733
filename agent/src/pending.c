/* SPDX-License-Identifier: Apache-2.0 */
/* Cgroup OOM notifications waiting for their kernel report, and kernel
 * reports waiting for a notification.
 *
 * The watcher counts kills locally (v1 memory.oom_control, v2
 * memory.events.local): one kill is one notification with a delta, for the
 * victim's own cgroup. A report claims, per cgroup path related to it, the
 * oldest notification: later kills of the same cgroup keep theirs. When the
 * kernel rate-limits its OOM reports (10 per 5 s), a kill is printed as a bare
 * "Killed process" line with no cgroup. Kills in other cgroups print such
 * lines too, so a notification names one when it knew the victim's pid (the
 * cgroup's tasks are listed at every notification: the OOM is signalled
 * before the kill), when /proc still places the victim in its cgroup, or
 * when the kill's time falls between the counter's read that did not count
 * it and the one that did (the kernel counts a kill just after printing it,
 * and serialises all OOM kills). Kills counted while the agent was away are
 * taken in order. */
#include <fcntl.h>

#include "agent.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/parse.h"
#include "kernel/procfs.h"
#include "base/strbuf.h"

/* Notifications within this window are one kill seen from several cgroups. */
#define SAME_KILL_US 20000
/* A report that came first waits this long for its notification. */
#define OWED_US 2000000
/* Tasks seen at a notification are kept this long for the next one. */
#define SEEN_US 2000000
/* The kernel counts a kill after printing its line: a slow (serial)
 * console stretches that to tens of ms. */
#define COUNT_LAG_US 250000
/* The kmsg clock against CLOCK_MONOTONIC: the measured offset's error,
 * and its drift until measured again. */
#define CLOCK_SLACK_US 20000

/* The cgroup's tasks now, while the victim may still be among them. */
static bool has_pid(const int *pids, size_t n, int pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Adds the tasks of cgroup path to pids (a set). */
static void read_pids(struct agent *a, const char *cgroup, int *pids, size_t *n)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char path[4096];

	snprintf(path, sizeof(path), "%s/cgroup.procs",
		 streq(cgroup, "/") ? "." : cgroup + 1);
	strbuf_init(&sb, 65536);
	(void)read_file_at(a->cgfs.mem_fd, path, 65535, &sb);
	cgroup_parse_procs(sb.buf, sb.len, pids, n, PENDING_MAX_PIDS);
}

void pending_note(struct agent *a, const struct cgroup_event *ev)
{
	struct seen_pids *e = NULL;

	for (size_t i = 0; i < AGENT_MAX_SEEN && !e; i++)
		if (streq(a->seen[i].path, ev->path) &&
		    ev->mono_us - a->seen[i].mono_us < SEEN_US)
			e = &a->seen[i];
	if (!e) {
		e = &a->seen[a->n_seen++ % AGENT_MAX_SEEN];
		memset(e, 0, sizeof(*e));
		strlcpy_safe(e->path, ev->path, sizeof(e->path));
	}
	e->mono_us = ev->mono_us;
	read_pids(a, ev->path, e->pids, &e->n_pids);
}

/* The tasks seen at this cgroup's notifications just before (the OOM is
 * signalled before the kill, the count after it). */
static void merge_seen(struct agent *a, struct pending_oom *p)
{
	for (size_t i = 0; i < AGENT_MAX_SEEN; i++) {
		const struct seen_pids *e = &a->seen[i];

		if (!streq(e->path, p->path) ||
		    p->mono_us - e->mono_us > SEEN_US)
			continue;
		for (size_t j = 0;
		     j < e->n_pids && p->n_pids < PENDING_MAX_PIDS; j++)
			if (!has_pid(p->pids, p->n_pids, e->pids[j]))
				p->pids[p->n_pids++] = e->pids[j];
	}
}

/* The report came before its notification (the v1 count can lag by tens
 * of ms): remember that the next notification of victim is answered. */
static void owe(struct agent *a, const char *victim)
{
	struct owed_kill *o = &a->owed[a->n_owed++ % AGENT_MAX_OWED];

	strlcpy_safe(o->path, victim, sizeof(o->path));
	o->mono_us = now_monotonic_us();
}

/* True (and forgotten) when a report already answered this notification. */
static bool paid(struct agent *a, const char *path, uint64_t now)
{
	for (size_t i = 0; i < AGENT_MAX_OWED && i < a->n_owed; i++) {
		struct owed_kill *o = &a->owed[i];

		if (o->path[0] && streq(o->path, path) &&
		    now - o->mono_us < OWED_US) {
			o->path[0] = '\0';
			return true;
		}
	}
	return false;
}

void pending_add(struct agent *a, const struct cgroup_event *ev, bool away)
{
	uint64_t kills = ev->oom_kill_delta;
	struct pending_oom *p;
	void *grown;

	while (kills && !away && paid(a, ev->path, now_monotonic_us()))
		kills--;
	if (!kills)
		return;
	grown = realloc(a->pending, (a->n_pending + 1) * sizeof(*a->pending));
	if (!grown)
		return;
	a->pending = grown;
	p = &a->pending[a->n_pending];
	memset(p, 0, sizeof(*p));
	p->path = strdup(ev->path);
	if (!p->path)
		return;
	p->mono_us = ev->mono_us;
	p->since_us = ev->since_us;
	p->oom_kill = ev->oom_kill;
	p->kills = kills;
	p->away = away;
	if (!away) {
		read_pids(a, p->path, p->pids, &p->n_pids);
		merge_seen(a, p);
	}
	/* Read the counters now: the cgroup may be removed soon after. */
	p->have_state = cgroup_read_state(&a->cgfs, ev->path, &p->state) >= 0;
	a->n_pending++;
}

static void drop_at(struct agent *a, size_t i)
{
	struct pending_oom *p = &a->pending[i];

	free(p->path);
	if (p->have_state)
		cgroup_state_release(&p->state);
	memmove(p, p + 1, (a->n_pending - i - 1) * sizeof(*p));
	a->n_pending--;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static bool knows_pid(const struct pending_oom *p, int pid)
{
	return has_pid(p->pids, p->n_pids, pid);
}

/* A victim holding more anonymous memory than the cgroup's limit was not
 * killed in it. */
static bool fits(const struct pending_oom *p, uint64_t rss_bytes)
{
	const struct cgroup_value *lim = &p->state.limit;

	return !p->have_state || lim->state != CGV_OK ||
	       rss_bytes <= lim->v + lim->v / 8;
}

/* The kills p counted happened before its read and, but for the count's
 * lag, after the read before it (0: none, then the read itself bounds). */
static bool counted_around(const struct pending_oom *p, uint64_t kill_mono)
{
	uint64_t from = p->since_us ? p->since_us : p->mono_us;

	from = from > COUNT_LAG_US ? from - COUNT_LAG_US : 0;
	return kill_mono >= from && kill_mono <= p->mono_us + CLOCK_SLACK_US;
}

/* The victim's memory cgroup as /proc still gives it, when it is the same
 * process (its name matches) and has not got far in exiting: the kernel
 * leaves the cgroup after releasing the memory, so a status that still
 * shows memory, read after the cgroup, vouches for it. Paths outside our
 * cgroup namespace ("/..") say nothing, nor does "/": on v1 an exiting
 * task shows it whatever its cgroup (and no memcg OOM happens at the
 * root). */
static bool proc_memcg(struct agent *a, const struct kmsg_victim *v, char *ret,
		       size_t size)
{
	_cleanup_close_ int fd = host_open_pid(&a->host, v->pid);
	char cg[KMSG_PATH_MAX];
	struct proc_status st;

	if (fd < 0 || procfs_read_cgroup(fd, cg, sizeof(cg)) != 0 ||
	    procfs_read_status(fd, &st) != 0 || !st.has_mm ||
	    !streq(st.name, v->comm) || strncmp(cg, "/..", 3) == 0 ||
	    streq(cg, "/"))
		return false;
	/* /proc names it from our cgroup namespace's root: make it ours. */
	return cgroup_mount_from_ns(&a->cgmount, cg, ret, size) == 0;
}

const char *pending_knows_pid(struct agent *a, int pid)
{
	for (size_t i = 0; i < a->n_pending; i++)
		if (knows_pid(&a->pending[i], pid))
			return a->pending[i].path;
	return NULL;
}

bool pending_evidence(struct agent *a, const struct kmsg_victim *v, char *ret,
		      size_t size)
{
	const char *known = pending_knows_pid(a, v->pid);

	if (known) {
		strlcpy_safe(ret, known, size);
		return true;
	}
	return proc_memcg(a, v, ret, size);
}

static bool named(const struct deferred_report *d)
{
	return oom_report_victim_memcg(&d->r)[0] != '\0';
}

/* The notification of the victim's own cgroup, when the kernel counts a
 * kill in its ancestors too (memory.events without .local): p is one of
 * those ancestors when a deeper notification came with it. */
static bool ancestor_of_another(const struct agent *a,
				const struct pending_oom *p)
{
	for (size_t i = 0; i < a->n_pending; i++) {
		const struct pending_oom *q = &a->pending[i];

		if (q != p && !streq(q->path, p->path) &&
		    cgroup_path_within(q->path, p->path) &&
		    distance(q->mono_us, p->mono_us) <= SAME_KILL_US)
			return true;
	}
	return false;
}

size_t pending_name_counted(struct agent *a, size_t i,
			    struct deferred_report *d, size_t n)
{
	const struct pending_oom *p = &a->pending[i];
	size_t done = 0;

	if (ancestor_of_another(a, p))
		return 0;
	/* Latest first: a notification is read soon after its kill, an
	 * earlier kill in the window is more likely another cgroup's. */
	for (size_t j = n; j-- > 0 && done < p->kills;) {
		const struct oom_report *r = &d[j].r;
		/* anon and shmem are charged to the victim's cgroup; shared
		 * library pages may belong to another one */
		uint64_t rss = r->n_victims ? (r->victims[0].anon_rss_kb +
					       r->victims[0].shmem_rss_kb) *
						      1024
					    : 0;

		if (named(&d[j]) || !fits(p, rss))
			continue;
		if (!p->away && d[j].kill_mono != UINT64_MAX &&
		    !counted_around(p, d[j].kill_mono))
			continue;
		strlcpy_safe(d[j].r.task_memcg, p->path,
			     sizeof(d[j].r.task_memcg));
		done++;
	}
	return done;
}

static bool related(const char *p, const char *victim, const char *oom_memcg)
{
	return cgroup_path_within(victim, p) ||
	       (oom_memcg[0] && cgroup_path_within(p, oom_memcg));
}

bool pending_claim(struct agent *a, const char *victim, const char *oom_memcg,
		   struct cgroup_state *ret_state)
{
	bool have = false, owed = true;

	for (size_t i = 0; i < a->n_pending; i++) {
		struct pending_oom *p = &a->pending[i];
		bool older_same = false;

		if (!related(p->path, victim, oom_memcg))
			continue;
		for (size_t j = 0; j < i; j++)
			older_same |= streq(a->pending[j].path, p->path) &&
				      a->pending[j].claimed;
		if (older_same || p->claimed)
			continue;
		p->claimed = true;
		if (streq(p->path, victim) && p->have_state && !have) {
			*ret_state = p->state;
			p->have_state = false; /* moved */
			have = true;
		}
	}
	for (size_t i = 0; i < a->n_pending;) {
		if (a->pending[i].claimed && streq(a->pending[i].path, victim))
			owed = false;
		if (a->pending[i].claimed && --a->pending[i].kills == 0)
			drop_at(a, i);
		else
			a->pending[i++].claimed = false;
	}
	if (owed)
		owe(a, victim);
	return have;
}

/* A notification no report claimed in time: the kill was counted by the
 * cgroup but its report was not read (ring buffer overrun, kmsg not
 * readable). Returns the entry's path (caller frees) or NULL. */
char *pending_expire_one(struct agent *a, uint64_t now, uint64_t timeout_us)
{
	for (size_t i = 0; i < a->n_pending; i++) {
		struct pending_oom *p = &a->pending[i];
		char *path;

		if (now - p->mono_us < timeout_us)
			continue;
		path = TAKE_PTR(p->path);
		drop_at(a, i);
		return path;
	}
	return NULL;
}
