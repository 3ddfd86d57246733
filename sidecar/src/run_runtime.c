/* SPDX-License-Identifier: Apache-2.0 */
/* The runtimes' sidecar hooks (forensics/runtimes/runtime.h): detect and
 * first sight when a process appears, the snapshot hook at each
 * snapshot. The JVM's stateful half (attach retries, heap ranges, NMT
 * history) is run_jvm.c; its table entry leaves these hooks NULL. Worker
 * thread only. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "forensics/runtimes/registry.h"
#include "run.h"

static struct run_rt *rt_slot(struct run_state *st, int pid, bool add)
{
	for (size_t i = 0; i < st->n_rts; i++)
		if (st->rts[i].pid == pid)
			return &st->rts[i];
	if (!add)
		return NULL;
	if (st->n_rts == RUN_MAX_RTS) { /* the oldest makes room */
		memmove(&st->rts[0], &st->rts[1],
			(RUN_MAX_RTS - 1) * sizeof(st->rts[0]));
		st->n_rts--;
	}
	st->rts[st->n_rts] = (struct run_rt){.pid = pid};
	return &st->rts[st->n_rts++];
}

static uint64_t current_limit(struct run_state *st)
{
	uint64_t lim = 0;

	pthread_mutex_lock(&st->mu);
	if (st->rec.count)
		lim = recorder_sample(&st->rec, st->rec.count - 1)->limit;
	pthread_mutex_unlock(&st->mu);
	return lim == UINT64_MAX ? 0 : lim;
}

static void note(struct run_state *st, const struct rt_sight *s)
{
	if (!s->event_kind[0])
		return;
	pthread_mutex_lock(&st->mu);
	(void)recorder_note_event(&st->rec, now_realtime_us(), s->event_kind,
				  s->pid, s->event_text);
	st->timeline_dirty = true;
	pthread_mutex_unlock(&st->mu);
	log_warn("%s", s->event_text);
}

/* Detects the runtimes pid runs that are not known yet, and takes each
 * one's first-sight facts. */
static void sight(struct run_state *st, int pid, int proc_fd)
{
	struct run_rt *slot = rt_slot(st, pid, false);
	/* the process's maps, read once for every runtime's detect */
	struct rt_sight_cache cache = RT_SIGHT_CACHE_INIT;
	struct rt_sight s = {
		.h = &st->h, .pid = pid, .proc_fd = proc_fd, .cache = &cache};

	s.limit = current_limit(st);
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);
		int r;

		if (!rt->detect || (slot && (slot->mask & 1u << i)))
			continue;
		r = rt->detect(&s);
		if (r <= 0)
			continue;
		/* only a process that runs one has a slot: the others are
		 * looked at again (a few preads) at each snapshot */
		if (!slot)
			slot = rt_slot(st, pid, true);
		slot->mask |= 1u << i;
		log_info("pid %d runs %s", pid, rt->name);
		if (!rt->first_sight)
			continue;
		s.event_kind[0] = s.event_text[0] = '\0';
		r = rt->first_sight(&s);
		if (r < 0)
			log_info("%s pid %d: no facts at first sight: %s",
				 rt->name, pid, strerror(-r));
		else
			note(st, &s);
	}
	rt_sight_cache_release(&cache);
}

void run_runtimes_first_sight(struct run_state *st, int pid)
{
	_cleanup_close_ int fd = host_open_pid(&st->h, pid);

	if (fd >= 0)
		sight(st, pid, fd);
}

size_t run_runtimes_snapshot(struct run_state *st, int pid, int pid_dirfd)
{
	_cleanup_close_ int fd = host_open_pid(&st->h, pid);
	struct rt_sight_cache cache = RT_SIGHT_CACHE_INIT;
	struct rt_sight s = {
		.h = &st->h, .pid = pid, .proc_fd = fd, .cache = &cache};
	const struct run_rt *slot;
	size_t done = 0;

	if (fd < 0)
		return 0;
	sight(st, pid, fd);
	slot = rt_slot(st, pid, false);
	s.limit = current_limit(st);
	for (size_t i = 0; slot && i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);
		int r;

		if (!rt->snapshot || !(slot->mask & 1u << i))
			continue;
		r = rt->snapshot(&s, pid_dirfd);
		if (r < 0)
			log_warn("%s snapshot of pid %d: %s, ignoring",
				 rt->name, pid, strerror(-r));
		else
			done++;
	}
	rt_sight_cache_release(&cache);
	return done;
}
