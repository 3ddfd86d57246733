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
 * lines too, so a notification names one only when it knew the victim's pid
 * (the cgroup's tasks are listed at every notification: the OOM is
 * signalled before the kill), or, when its tasks could not be read, came
 * close enough in time; kills counted while the agent was away are taken
 * in order. */
#include <fcntl.h>

#include "agent.h"
#include "oomlens/fileio.h"
#include "oomlens/log.h"
#include "oomlens/parse.h"
#include "oomlens/strbuf.h"

/* Notifications within this window are one kill seen from several cgroups. */
#define SAME_KILL_US 20000
/* A report that came first waits this long for its notification. */
#define OWED_US 2000000
/* Tasks seen at a notification are kept this long for the next one. */
#define SEEN_US 2000000
/* A notification and a kill further apart than this are not the same. */
#define KILL_WINDOW_US 250000

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

static bool knows_pid(const struct pending_oom *p, int pid)
{
	return has_pid(p->pids, p->n_pids, pid);
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* A victim holding more anonymous memory than the cgroup's limit was not
 * killed in it. */
static bool fits(const struct pending_oom *p, uint64_t rss_bytes)
{
	const struct cgroup_value *lim = &p->state.limit;

	return !p->have_state || lim->state != CGV_OK ||
	       rss_bytes <= lim->v + lim->v / 8;
}

const char *pending_guess_memcg(struct agent *a, int pid, uint64_t rss_bytes,
				uint64_t kill_mono)
{
	const struct pending_oom *best = NULL;

	for (size_t i = 0; i < a->n_pending; i++)
		if (knows_pid(&a->pending[i], pid))
			return a->pending[i].path;
	for (size_t i = 0; i < a->n_pending; i++) {
		const struct pending_oom *p = &a->pending[i];

		if (!fits(p, rss_bytes))
			continue;
		/* Its tasks were read and the victim was not among them:
		 * another cgroup's kill. */
		if (!p->away &&
		    (p->n_pids || kill_mono == UINT64_MAX ||
		     distance(p->mono_us, kill_mono) > KILL_WINDOW_US))
			continue;
		if (!best)
			best = p;
		else if (p->mono_us - best->mono_us <= SAME_KILL_US &&
			 cgroup_path_within(p->path, best->path))
			best = p; /* deeper: the victim's own cgroup */
	}
	return best ? best->path : NULL;
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
