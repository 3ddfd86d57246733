/* SPDX-License-Identifier: Apache-2.0 */
/* Cgroup OOM notifications waiting for their kernel report, and kernel
 * reports waiting for a notification.
 *
 * The watcher counts kills locally (v1 memory.oom_control, v2
 * memory.events.local): one kill is one notification with a delta, for the
 * victim's own cgroup. A report claims, per cgroup path related to it, the
 * oldest notification: later kills of the same cgroup keep theirs. When the
 * kernel rate-limits its OOM reports (10 per 5 s), a kill is printed as a bare
 * "Killed process" line with no cgroup: the oldest unclaimed notification names
 * it (the deepest path, when several came together, is the victim's own
 * cgroup). */
#include "agent.h"
#include "oomlens/log.h"

/* Notifications within this window are one kill seen from several cgroups. */
#define SAME_KILL_US 20000

void pending_add(struct agent *a, const struct cgroup_event *ev)
{
	struct pending_oom *p;
	void *grown;

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
	p->kills = ev->oom_kill_delta;
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

const char *pending_guess_memcg(struct agent *a)
{
	const struct pending_oom *best = NULL;

	for (size_t i = 0; i < a->n_pending; i++) {
		const struct pending_oom *p = &a->pending[i];

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
	bool have = false;

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
		if (a->pending[i].claimed && --a->pending[i].kills == 0)
			drop_at(a, i);
		else
			a->pending[i++].claimed = false;
	}
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
