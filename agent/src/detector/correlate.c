/* SPDX-License-Identifier: Apache-2.0 */
/* The kill correlator (correlate.h): notifications waiting for their
 * kernel report, and bare kill lines waiting for a notification.
 *
 * A report claims, per cgroup path related to it, the oldest notification:
 * later kills of the same cgroup keep theirs. A report read before its
 * notification (the v1 count can lag by tens of ms) answers the next one
 * of its cgroup. A notification no report claimed is a kill of its own
 * and claims only its ancestors' counts of it: its cgroup's other
 * notifications are other kills, and it is owed nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "detector/correlate.h"

/* Notifications within this window are one kill seen from several cgroups. */
#define SAME_KILL_US 20000
/* A report that came first waits this long for its notification. */
#define OWED_US 2000000
/* Tasks seen at a notification are kept this long for the next one. */
#define SEEN_US 2000000
/* The kernel counts a kill after printing its line: a slow (serial)
 * console stretches that to tens of ms (measured: 37 ms). */
#define COUNT_LAG_US 250000
/* The kmsg clock against CLOCK_MONOTONIC: the measured offset's error,
 * and its drift until measured again. */
#define CLOCK_SLACK_US 20000
/* A notification with no kernel report after this long is a kill of its
 * own, written with what we have: nothing counted is lost. */
#define PENDING_TIMEOUT_US 2000000
/* A bare line waits this long for a notification (they come 0-10 ms
 * apart; a late v1 count is re-read for 1 s); a kill in a cgroup we do not
 * watch never gets one. */
#define DEFERRED_TIMEOUT_US 1200000
/* Ticks while a bare line waits, and while a notification waits. */
#define DEFERRED_TICK_US 50000
#define PENDING_TICK_US (PENDING_TIMEOUT_US / 4)

#define MAX_SEEN 8
#define MAX_OWED 16
/* Cgroups whose last bundle without a kernel report is remembered; past
 * that, the oldest is forgotten (its next such kill is bundled: more
 * bundles, never a kill lost). */
#define MAX_UNREPORTED 32

/* A notification waiting for its kernel report. */
struct waiting_oom {
	char *path;
	uint64_t mono_us, since_us, oom_kill;
	uint64_t kills; /* kills it stands for, not yet claimed */
	struct cgroup_state state;
	bool have_state;
	/* the limit read then, kept when the state moves to a kill: the
	 * kills not claimed yet must still fit it */
	struct cgroup_value limit;
	bool away;
	bool claimed; /* scratch for claim() */
	int pids[CORR_MAX_PIDS];
	size_t n_pids;
};

/* The tasks of a cgroup at its latest notification without a count. */
struct seen_pids {
	char path[KMSG_PATH_MAX];
	uint64_t mono_us;
	int pids[CORR_MAX_PIDS];
	size_t n_pids;
};

/* A kill reported before the cgroup counted it. */
struct owed_kill {
	char path[KMSG_PATH_MAX];
	uint64_t mono_us;
};

/* A cgroup's last bundle of a kill without a kernel report. */
struct unreported_bundle {
	char path[KMSG_PATH_MAX]; /* "" unused */
	uint64_t mono_us;
};

/* A bare line waiting, in kernel order, until its cgroup is known. */
struct deferred {
	struct oom_report r;
	uint64_t mono_us;	    /* when it was read */
	uint64_t kill_mono;	    /* UINT64_MAX unknown */
	char cgroup[KMSG_PATH_MAX]; /* "" until named */
	enum corr_how how;
	enum corr_confidence conf;
};

struct correlator {
	char **watch;
	size_t n_watch;
	struct waiting_oom *pending;
	size_t n_pending;
	struct seen_pids seen[MAX_SEEN];
	size_t n_seen;
	struct owed_kill owed[MAX_OWED];
	size_t n_owed;
	struct unreported_bundle unreported[MAX_UNREPORTED];
	struct deferred *deferred;
	size_t n_deferred;
	struct corr_kill *out;
	size_t n_out;
};

static bool has_pid(const int *pids, size_t n, int pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Adds pids[0..n) to the set set[0..*n_set). */
static void add_pids(int *set, size_t *n_set, const int *pids, size_t n)
{
	for (size_t i = 0; i < n && *n_set < CORR_MAX_PIDS; i++)
		if (pids[i] > 0 && !has_pid(set, *n_set, pids[i]))
			set[(*n_set)++] = pids[i];
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static bool watched(const struct correlator *c, const char *path)
{
	for (size_t i = 0; i < c->n_watch; i++)
		if (cgroup_path_within(path, c->watch[i]))
			return true;
	return false;
}

int correlate_new(const char *const *watch, size_t n_watch,
		  struct correlator **ret)
{
	struct correlator *c = calloc(1, sizeof(*c));

	if (!c || !(c->watch = calloc(n_watch + 1, sizeof(char *)))) {
		free(c);
		return -ENOMEM;
	}
	for (; c->n_watch < n_watch; c->n_watch++) {
		c->watch[c->n_watch] = strdup(watch[c->n_watch]);
		if (!c->watch[c->n_watch]) {
			correlate_free(c);
			return -ENOMEM;
		}
	}
	*ret = c;
	return 0;
}

void corr_kill_release(struct corr_kill *k)
{
	oom_report_release(&k->report);
	if (k->have_state)
		cgroup_state_release(&k->state_at_notification);
	k->have_state = false;
}

static void drop_pending(struct correlator *c, size_t i)
{
	struct waiting_oom *p = &c->pending[i];

	free(p->path);
	if (p->have_state)
		cgroup_state_release(&p->state);
	memmove(p, p + 1, (c->n_pending - i - 1) * sizeof(*p));
	c->n_pending--;
}

void correlate_free(struct correlator *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_watch; i++)
		free(c->watch[i]);
	free(c->watch);
	while (c->n_pending)
		drop_pending(c, 0);
	free(c->pending);
	for (size_t i = 0; i < c->n_deferred; i++)
		oom_report_release(&c->deferred[i].r);
	free(c->deferred);
	for (size_t i = 0; i < c->n_out; i++)
		corr_kill_release(&c->out[i]);
	free(c->out);
	free(c);
}

/* The report came before its notification: the next notification of
 * victim is answered. */
static void owe(struct correlator *c, const char *victim, uint64_t now)
{
	struct owed_kill *o = &c->owed[c->n_owed++ % MAX_OWED];

	strlcpy_safe(o->path, victim, sizeof(o->path));
	o->mono_us = now;
}

/* True (and forgotten) when a report already answered this notification. */
static bool paid(struct correlator *c, const char *path, uint64_t now)
{
	for (size_t i = 0; i < MAX_OWED && i < c->n_owed; i++) {
		struct owed_kill *o = &c->owed[i];

		if (o->path[0] && streq(o->path, path) &&
		    now - o->mono_us < OWED_US) {
			o->path[0] = '\0';
			return true;
		}
	}
	return false;
}

static bool related(const char *p, const char *victim, const char *oom_memcg)
{
	return cgroup_path_within(victim, p) ||
	       (oom_memcg[0] && cgroup_path_within(p, oom_memcg));
}

/* Takes up to n kills from path's notifications, oldest first, dropping
 * those left with none; the first state found goes to *ret_state (when
 * asked and not *have yet). Returns how many were taken. */
static uint64_t take_kills(struct correlator *c, const char *path, uint64_t n,
			   struct cgroup_state *ret_state, bool *have)
{
	uint64_t got = 0;

	for (size_t i = 0; i < c->n_pending && got < n;) {
		struct waiting_oom *p = &c->pending[i];
		uint64_t t;

		if (!streq(p->path, path)) {
			i++;
			continue;
		}
		if (ret_state && !*have && p->have_state) {
			*ret_state = p->state;
			p->have_state = false; /* moved */
			*have = true;
		}
		t = p->kills < n - got ? p->kills : n - got;
		p->kills -= t;
		got += t;
		if (!p->kills)
			drop_pending(c, i);
		else
			i++;
	}
	return got;
}

/* The first notification related to the kill whose path is not done
 * yet, or NULL; own: the kill is victim's own notification, whose other
 * notifications are other kills. */
static const struct waiting_oom *next_related(const struct correlator *c,
					      const char *victim,
					      const char *oom_memcg, bool own)
{
	for (size_t i = 0; i < c->n_pending; i++) {
		const struct waiting_oom *p = &c->pending[i];

		if (!p->claimed && related(p->path, victim, oom_memcg) &&
		    !(own && streq(p->path, victim)))
			return p;
	}
	return NULL;
}

/* Claims kills (one per victim: a memory.oom.group kill counts each) from
 * every path related to the kill, oldest notifications first; moves the
 * victim cgroup's state read at notification into *ret_state and returns
 * true when there was one. A reported kill of victim that found no
 * notification of its own is owed one; a notification's own kill (own)
 * claims only the others' counts of it and is owed nothing. */
static bool claim(struct correlator *c, const char *victim,
		  const char *oom_memcg, uint64_t kills, bool own,
		  struct cgroup_state *ret_state, uint64_t now)
{
	const struct waiting_oom *p;
	uint64_t mine = 0;
	bool have = false;

	for (size_t i = 0; i < c->n_pending; i++)
		c->pending[i].claimed = false; /* scratch: path done */
	while ((p = next_related(c, victim, oom_memcg, own))) {
		char path[KMSG_PATH_MAX];
		bool is_victim = streq(p->path, victim);

		strlcpy_safe(path, p->path, sizeof(path));
		for (size_t i = 0; i < c->n_pending; i++)
			if (streq(c->pending[i].path, path))
				c->pending[i].claimed = true;
		if (is_victim)
			mine = take_kills(c, path, kills, ret_state, &have);
		else
			take_kills(c, path, kills, NULL, NULL);
	}
	for (; !own && mine < kills; mine++)
		owe(c, victim, now);
	return have;
}

/* A kill's place in the decisions, or NULL (out of memory). */
static struct corr_kill *push(struct correlator *c)
{
	struct corr_kill *grown;

	grown = realloc(c->out, (c->n_out + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	c->out = grown;
	return memset(&c->out[c->n_out++], 0, sizeof(*grown));
}

/* The kills a report stands for, as the cgroup counts them: each
 * "Killed process" line of a memory.oom.group kill, the first victim's
 * second one included (the kernel kills it again in the group's walk). */
static uint64_t report_kills(const struct oom_report *r)
{
	return r->group_kill && r->n_victims
		       ? (uint64_t)r->n_victims + r->kills_repeated
		       : 1;
}

/* Queues a decision; takes r over, with its mounted paths (NULL: a bare
 * line's, none). A kill to capture claims its notifications now, so that
 * the next kill finds them taken. */
static void emit(struct correlator *c, struct oom_report *r,
		 const struct corr_paths *paths, const char *cgroup,
		 enum corr_how how, enum corr_confidence conf, uint64_t now)
{
	struct corr_kill *k = push(c);

	if (!k) {
		oom_report_release(r);
		return;
	}
	*k = (struct corr_kill){.report = *r,
				.how_found = how,
				.confidence = conf,
				.kills = report_kills(r)};
	oom_report_init(r); /* moved */
	if (paths)
		k->paths = *paths;
	strlcpy_safe(k->cgroup, cgroup, sizeof(k->cgroup));
	if (!cgroup[0]) {
		k->outcome = CORR_UNMATCHED;
		k->reason = "the kernel printed no cgroup and no watched "
			    "cgroup counted it";
	} else if (!watched(c, cgroup)) {
		k->outcome = CORR_UNWATCHED;
		k->reason = "oom kill in an unwatched cgroup";
	} else {
		k->outcome = CORR_CAPTURE;
		k->have_state =
			claim(c, cgroup, k->paths.oom, report_kills(&k->report),
			      false, &k->state_at_notification, now);
	}
}

/* How long before now path's last bundle of a kill without a kernel
 * report was, UINT64_MAX when none is remembered. */
static uint64_t unreported_age(const struct correlator *c, const char *path,
			       uint64_t now)
{
	for (size_t i = 0; i < MAX_UNREPORTED; i++)
		if (c->unreported[i].path[0] &&
		    streq(c->unreported[i].path, path))
			return now - c->unreported[i].mono_us;
	return UINT64_MAX;
}

/* Remembers path's bundle at now: in its slot, else an unused or the
 * oldest one. */
static void unreported_note(struct correlator *c, const char *path,
			    uint64_t now)
{
	struct unreported_bundle *slot = NULL;

	for (size_t i = 0; i < MAX_UNREPORTED && !slot; i++)
		if (streq(c->unreported[i].path, path))
			slot = &c->unreported[i];
	for (size_t i = 0; i < MAX_UNREPORTED && !slot; i++)
		if (!c->unreported[i].path[0])
			slot = &c->unreported[i];
	if (!slot) {
		slot = &c->unreported[0];
		for (size_t i = 1; i < MAX_UNREPORTED; i++)
			if (c->unreported[i].mono_us < slot->mono_us)
				slot = &c->unreported[i];
	}
	strlcpy_safe(slot->path, path, sizeof(slot->path));
	slot->mono_us = now;
}

/* n kills of path that no report claimed, counted by its cgroup; the
 * state read at their notification moved from *state when have. One kill
 * is bundled unless the cgroup had such a bundle less than
 * CORR_UNREPORTED_GAP_US before; more (the rest of one count) never are:
 * they are the moment of the first. */
static void emit_unreported(struct correlator *c, const char *path,
			    struct cgroup_state *state, bool have, uint64_t n,
			    uint64_t now)
{
	struct corr_kill *k = push(c);
	uint64_t age;

	if (!k) {
		if (have)
			cgroup_state_release(state);
		return;
	}
	oom_report_init(&k->report);
	k->report.usec = now;
	strlcpy_safe(k->cgroup, path, sizeof(k->cgroup));
	k->how_found = CORR_NOTIFICATION;
	k->confidence = CORR_HIGH;
	k->kills = n;
	if (have) {
		k->state_at_notification = *state; /* moved */
		k->have_state = true;
	}
	age = unreported_age(c, path, now);
	if (n == 1 && age >= CORR_UNREPORTED_GAP_US) {
		k->outcome = CORR_CAPTURE;
		unreported_note(c, path, now);
	} else {
		k->since_bundle_us = age;
		k->outcome = CORR_COUNTED;
		k->reason = "no kernel report, and its cgroup had a bundle "
			    "without one less than 10 s before: counted, not "
			    "bundled";
	}
	claim(c, path, "", n, true, NULL, now);
}

/* Remembers the tasks listed at a notification that counted nothing yet:
 * the OOM is signalled before the kill, the count after it. */
static void note_seen(struct correlator *c, const struct corr_notification *n)
{
	struct seen_pids *e = NULL;

	for (size_t i = 0; i < MAX_SEEN && !e; i++)
		if (streq(c->seen[i].path, n->path) &&
		    n->mono_us - c->seen[i].mono_us < SEEN_US)
			e = &c->seen[i];
	if (!e) {
		e = &c->seen[c->n_seen++ % MAX_SEEN];
		memset(e, 0, sizeof(*e));
		strlcpy_safe(e->path, n->path, sizeof(e->path));
	}
	e->mono_us = n->mono_us;
	add_pids(e->pids, &e->n_pids, n->pids, n->n_pids);
}

/* The tasks seen at this cgroup's notifications just before. */
static void merge_seen(const struct correlator *c, struct waiting_oom *p)
{
	for (size_t i = 0; i < MAX_SEEN; i++) {
		const struct seen_pids *e = &c->seen[i];

		if (streq(e->path, p->path) &&
		    p->mono_us - e->mono_us <= SEEN_US)
			add_pids(p->pids, &p->n_pids, e->pids, e->n_pids);
	}
}

static void release_state(const struct corr_notification *n)
{
	if (n->state)
		cgroup_state_release(n->state);
}

int correlate_notify(struct correlator *c, const struct corr_notification *n,
		     uint64_t now)
{
	uint64_t kills = n->delta;
	struct waiting_oom *p, *grown;

	if (!kills && !n->away)
		note_seen(c, n);
	while (kills && !n->away && paid(c, n->path, now))
		kills--;
	if (!kills) {
		release_state(n);
		return 0;
	}
	grown = realloc(c->pending, (c->n_pending + 1) * sizeof(*grown));
	if (!grown) {
		release_state(n);
		return -ENOMEM;
	}
	c->pending = grown;
	p = &c->pending[c->n_pending];
	memset(p, 0, sizeof(*p));
	p->path = strdup(n->path);
	if (!p->path) {
		release_state(n);
		return -ENOMEM;
	}
	p->mono_us = n->mono_us;
	p->since_us = n->since_us;
	p->oom_kill = n->oom_kill;
	p->kills = kills;
	p->away = n->away;
	if (!n->away) {
		add_pids(p->pids, &p->n_pids, n->pids, n->n_pids);
		merge_seen(c, p);
	}
	if (n->state) {
		p->state = *n->state; /* moved */
		p->have_state = true;
		p->limit = p->state.limit;
	}
	c->n_pending++;
	return 0;
}

/* The notification whose cgroup listed pid among its tasks, or NULL. */
static const char *knows_pid(const struct correlator *c, int pid)
{
	for (size_t i = 0; i < c->n_pending; i++)
		if (has_pid(c->pending[i].pids, c->pending[i].n_pids, pid))
			return c->pending[i].path;
	return NULL;
}

/* /proc's memory cgroup for the victim vouches for it when it is the same
 * process (its name matches) and still holds memory: the kernel leaves the
 * cgroup after releasing the memory, and the status was read after the
 * cgroup. Paths outside the reader's cgroup namespace ("/..") say
 * nothing, nor does "/": on v1 an exiting task shows it whatever its
 * cgroup (and no memcg OOM happens at the root). */
static bool proc_vouches(const struct corr_proc *proc,
			 const struct kmsg_victim *v)
{
	return proc && proc->read && proc->has_mm &&
	       streq(proc->comm, v->comm) &&
	       strncmp(proc->cgroup, "/..", 3) != 0 &&
	       !streq(proc->cgroup, "/") && proc->cgroup[0] == '/';
}

/* A victim holding more anonymous memory than the cgroup's limit was not
 * killed in it. */
static bool fits(const struct waiting_oom *p, uint64_t rss_bytes)
{
	const struct cgroup_value *lim = &p->limit;

	return lim->state != CGV_OK || rss_bytes <= lim->v + lim->v / 8;
}

/* The kills p counted happened before its read and, but for the count's
 * lag, after the read before it (0: none, then the read itself bounds). */
static bool counted_around(const struct waiting_oom *p, uint64_t kill_mono)
{
	uint64_t from = p->since_us ? p->since_us : p->mono_us;

	from = from > COUNT_LAG_US ? from - COUNT_LAG_US : 0;
	return kill_mono >= from && kill_mono <= p->mono_us + CLOCK_SLACK_US;
}

/* The kernel counts a kill before it prints it (__oom_kill_process):
 * with the killing task preempted in between, a kill p counted can be
 * printed after p's read. Taken only for a line that no notification's
 * own window claimed by its deadline (a later notification may yet). */
static bool printed_after(const struct waiting_oom *p, uint64_t kill_mono)
{
	return kill_mono > p->mono_us + CLOCK_SLACK_US &&
	       kill_mono <= p->mono_us + COUNT_LAG_US;
}

/* p is an ancestor's notification of a deeper one's kill (the kernel
 * counts kills in ancestors too where memory.events.local is missing). */
static bool ancestor_of_another(const struct correlator *c,
				const struct waiting_oom *p)
{
	for (size_t i = 0; i < c->n_pending; i++) {
		const struct waiting_oom *q = &c->pending[i];

		if (q != p && !streq(q->path, p->path) &&
		    cgroup_path_within(q->path, p->path) &&
		    distance(q->mono_us, p->mono_us) <= SAME_KILL_US)
			return true;
	}
	return false;
}

static void name(struct deferred *d, const char *cgroup, enum corr_how how,
		 enum corr_confidence conf)
{
	strlcpy_safe(d->cgroup, cgroup, sizeof(d->cgroup));
	d->how = how;
	d->conf = conf;
}

/* anon and shmem are charged to the victim's cgroup; shared library pages
 * may belong to another one. */
static uint64_t charged_rss(const struct oom_report *r)
{
	if (!r->n_victims)
		return 0;
	return (r->victims[0].anon_rss_kb + r->victims[0].shmem_rss_kb) * 1024;
}

/* Names, for notification i, the bare lines it counted: at most its
 * unclaimed kills, latest first (a notification is read soon after its
 * kill; an earlier kill in the window is more likely another cgroup's),
 * those whose kill falls in its counter window (any, when counted while
 * away or the time is unknown) and whose victim fits its limit. Returns
 * how many. */
static size_t name_counted(struct correlator *c, size_t i)
{
	const struct waiting_oom *p = &c->pending[i];
	size_t done = 0;

	if (ancestor_of_another(c, p))
		return 0;
	for (size_t j = c->n_deferred; j-- > 0 && done < p->kills;) {
		struct deferred *d = &c->deferred[j];
		bool timed = !p->away && d->kill_mono != UINT64_MAX;

		if (d->cgroup[0] || !fits(p, charged_rss(&d->r)))
			continue;
		if (timed && !counted_around(p, d->kill_mono))
			continue;
		name(d, p->path, CORR_COUNTER_WINDOW,
		     timed ? CORR_MEDIUM : CORR_LOW);
		done++;
	}
	return done;
}

static void drop_deferred(struct correlator *c, size_t i)
{
	struct deferred *d = &c->deferred[i];

	memmove(d, d + 1, (c->n_deferred - i - 1) * sizeof(*d));
	c->n_deferred--;
}

/* Decides, in kernel order, the bare lines that have a cgroup now. */
static void emit_named(struct correlator *c, uint64_t now)
{
	for (size_t i = 0; i < c->n_deferred;) {
		struct deferred d = c->deferred[i];

		if (!d.cgroup[0]) {
			i++;
			continue;
		}
		drop_deferred(c, i);
		emit(c, &d.r, NULL, d.cgroup, d.how, d.conf, now);
	}
}

/* A line no notification's window took by its deadline: into buf, the
 * cgroup of the oldest notification with kills still unclaimed that read
 * its count shortly before the line was printed (printed_after()); ""
 * when none. A copy: claiming the notification moves the pending list. */
static const char *late_claim(const struct correlator *c,
			      const struct deferred *d, char *buf, size_t size)
{
	buf[0] = '\0';
	if (d->kill_mono == UINT64_MAX)
		return buf;
	for (size_t i = 0; i < c->n_pending; i++) {
		const struct waiting_oom *p = &c->pending[i];

		if (p->kills && !p->away && !ancestor_of_another(c, p) &&
		    fits(p, charged_rss(&d->r)) &&
		    printed_after(p, d->kill_mono)) {
			strlcpy_safe(buf, p->path, size);
			break;
		}
	}
	return buf;
}

static void retry(struct correlator *c, uint64_t now)
{
	char cg[KMSG_PATH_MAX];

	/* A notification that came since may have listed the victim. */
	for (size_t i = 0; i < c->n_deferred; i++) {
		struct deferred *d = &c->deferred[i];
		const char *known;

		if (d->r.n_victims && !d->cgroup[0] &&
		    (known = knows_pid(c, d->r.victims[0].pid)))
			name(d, known, CORR_PID_AT_NOTIFICATION, CORR_HIGH);
	}
	emit_named(c, now);
	/* Each kill claims a notification: look again from the first. */
	for (size_t i = 0; i < c->n_pending && c->n_deferred;) {
		if (name_counted(c, i)) {
			emit_named(c, now);
			i = 0;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < c->n_deferred;) {
		struct deferred d = c->deferred[i];

		if (now - d.mono_us < DEFERRED_TIMEOUT_US) {
			i++;
			continue;
		}
		drop_deferred(c, i);
		emit(c, &d.r, NULL, late_claim(c, &d, cg, sizeof(cg)),
		     CORR_COUNTER_WINDOW, CORR_LOW, now);
	}
}

/* One path: -EXDEV (outside) clears it; -ENXIO keeps it as printed. */
static int map_one(const struct cgroup_mount *m, const char *kpath, char *buf,
		   size_t size)
{
	int r;

	buf[0] = '\0';
	if (!kpath[0])
		return 0;
	r = cgroup_mount_from_kernel(m, kpath, buf, size);
	if (r == -EXDEV)
		buf[0] = '\0';
	else if (r != 0)
		strlcpy_safe(buf, kpath, size);
	return r;
}

int correlate_map_paths(const struct cgroup_mount *m,
			const struct oom_report *r, struct corr_paths *ret)
{
	int rt = map_one(m, r->task_memcg, ret->task, sizeof(ret->task));
	int ro = map_one(m, r->oom_memcg, ret->oom, sizeof(ret->oom));

	return (r->task_memcg[0] ? rt : ro) == -EXDEV ? -EXDEV : 0;
}

const char *corr_paths_victim(const struct corr_paths *p)
{
	return p->task[0] ? p->task : p->oom;
}

int correlate_report(struct correlator *c, struct oom_report *r,
		     const struct corr_paths *paths,
		     const struct corr_proc *proc, uint64_t kill_mono,
		     uint64_t now)
{
	const char *memcg = corr_paths_victim(paths);
	struct deferred *grown;

	if (memcg[0]) {
		char cg[KMSG_PATH_MAX];

		strlcpy_safe(cg, memcg, sizeof(cg));
		emit(c, r, paths, cg, CORR_KERNEL_REPORT, CORR_HIGH, now);
		return 0;
	}
	/* Evidence first, while the victim may still be there. */
	if (r->n_victims) {
		const char *known = knows_pid(c, r->victims[0].pid);

		if (known) {
			char cg[KMSG_PATH_MAX];

			strlcpy_safe(cg, known, sizeof(cg));
			emit(c, r, NULL, cg, CORR_PID_AT_NOTIFICATION,
			     CORR_HIGH, now);
			return 0;
		}
		if (proc_vouches(proc, &r->victims[0])) {
			emit(c, r, NULL, proc->cgroup, CORR_PROC, CORR_HIGH,
			     now);
			return 0;
		}
	}
	grown = realloc(c->deferred, (c->n_deferred + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->deferred = grown;
	grown[c->n_deferred++] = (struct deferred){
		.r = *r, .mono_us = now, .kill_mono = kill_mono};
	oom_report_init(r); /* moved */
	retry(c, now);
	return 0;
}

/* Notifications no report claimed in time: the kills were counted by the
 * cgroup but their reports were not read (ring buffer overrun, kmsg not
 * readable). The first kill of each is decided as one of its cgroup with
 * no report, with the state read at the notification; more kills of the
 * same count are one CORR_COUNTED decision. Each claims its ancestors'
 * counts of it, as a report of that cgroup would. */
static void expire(struct correlator *c, uint64_t now)
{
	for (size_t i = 0; i < c->n_pending;) {
		struct waiting_oom *p = &c->pending[i];
		struct cgroup_state state = {0};
		bool have = p->have_state;
		uint64_t kills = p->kills;
		char *path;

		if (now - p->mono_us < PENDING_TIMEOUT_US) {
			i++;
			continue;
		}
		path = p->path;
		p->path = NULL;
		if (have)
			state = p->state;
		p->have_state = false; /* moved */
		drop_pending(c, i);
		emit_unreported(c, path, &state, have, 1, now);
		/* the rest of one count: the same cgroup, the same moment */
		if (kills > 1)
			emit_unreported(c, path, NULL, false, kills - 1, now);
		free(path);
		i = 0; /* the claims may have dropped others */
	}
}

void correlate_tick(struct correlator *c, uint64_t now)
{
	retry(c, now);
	expire(c, now);
}

void correlate_flush(struct correlator *c, uint64_t now)
{
	retry(c, now + DEFERRED_TIMEOUT_US);
	expire(c, now + PENDING_TIMEOUT_US);
}

uint64_t correlate_next_tick(const struct correlator *c, uint64_t now)
{
	if (c->n_deferred)
		return now + DEFERRED_TICK_US;
	if (c->n_pending)
		return now + PENDING_TICK_US;
	return UINT64_MAX;
}

int correlate_pop(struct correlator *c, struct corr_kill *ret)
{
	if (!c->n_out)
		return 0;
	*ret = c->out[0];
	memmove(c->out, c->out + 1, (c->n_out - 1) * sizeof(*c->out));
	c->n_out--;
	return 1;
}

uint64_t correlate_hold_seq(const struct correlator *c)
{
	uint64_t first = UINT64_MAX;

	for (size_t i = 0; i < c->n_deferred; i++)
		if (c->deferred[i].r.seq_first < first)
			first = c->deferred[i].r.seq_first;
	for (size_t i = 0; i < c->n_out; i++)
		if (c->out[i].report.seq_first < first)
			first = c->out[i].report.seq_first;
	return first;
}

const char *corr_how_name(enum corr_how how)
{
	static const char *const names[] = {
		[CORR_KERNEL_REPORT] = "kernel-report",
		[CORR_PID_AT_NOTIFICATION] = "pid-at-notification",
		[CORR_PROC] = "proc",
		[CORR_COUNTER_WINDOW] = "counter-window",
		[CORR_NOTIFICATION] = "notification",
	};

	return (unsigned)how < ARRAY_SIZE(names) ? names[how] : "unknown";
}

const char *corr_confidence_name(enum corr_confidence conf)
{
	static const char *const names[] = {[CORR_HIGH] = "high",
					    [CORR_MEDIUM] = "medium",
					    [CORR_LOW] = "low"};

	return (unsigned)conf < ARRAY_SIZE(names) ? names[conf] : "unknown";
}
