/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's state directory: the last kmsg sequence handled, so that a
 * restart neither loses nor repeats a report; and each watched cgroup's
 * oom_kill counter, so that kills that happened while the agent was away
 * can be given their cgroup when the kernel's report did not print one. */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>

#include "agent.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"

#define STATE_FILE "state.json"
#define STATE_MAX (4u << 20)
#define WALK_DEPTH 16

typedef void (*count_fn)(struct agent *a, const char *path, uint64_t kills,
			 void *ud);

static void walk(struct agent *a, const char *path, int depth, count_fn fn,
		 void *ud)
{
	struct cgroup_events ev;
	DIR *d;
	struct dirent *de;

	if (cgroup_read_events(&a->cgfs, path, &ev) >= 0)
		fn(a, path, ev.oom_kill, ud);
	if (depth >= WALK_DEPTH)
		return;
	if (opendir_at(a->cgfs.mem_fd, streq(path, "/") ? "." : path + 1, &d) <
	    0)
		return;
	while ((de = readdir(d))) {
		char sub[4096];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s",
			 streq(path, "/") ? "" : path, de->d_name);
		walk(a, sub, depth + 1, fn, ud);
	}
	closedir(d);
}

/* Calls fn for every cgroup under the watched subtrees. */
static void for_each_watched(struct agent *a, count_fn fn, void *ud)
{
	for (int i = 0; i < a->opts.n_watch; i++)
		walk(a, a->opts.watch[i], 0, fn, ud);
}

static void add_count(struct agent *a, const char *path, uint64_t kills,
		      void *ud)
{
	(void)a;
	json_object_object_add(ud, path, json_object_new_uint64(kills));
}

/* A kill while we were away: one notification standing for it. */
static void compare_count(struct agent *a, const char *path, uint64_t kills,
			  void *ud)
{
	struct json_object *v;
	struct corr_notification n = {.path = path, .away = true};
	struct cgroup_state state;
	uint64_t before;

	if (!json_object_object_get_ex(ud, path, &v))
		return;
	before = (uint64_t)json_object_get_int64(v);
	if (kills <= before)
		return;
	n.oom_kill = kills;
	n.delta = kills - before;
	n.mono_us = now_monotonic_us();
	log_info("%llu kill(s) in \"%s\" while the agent was away",
		 (unsigned long long)n.delta, path);
	if (cgroup_read_state(&a->cgfs, path, &state) >= 0)
		n.state = &state;
	if (correlate_notify(a->corr, &n, n.mono_us) < 0)
		log_error("kills in \"%s\": out of memory, ignoring", path);
}

int agent_state_load(struct agent *a)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *o, *v;
	uint64_t seq;
	int r;

	strbuf_init(&sb, STATE_MAX);
	r = read_file_at(a->state_fd, STATE_FILE, STATE_MAX, &sb);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	o = json_tokener_parse(sb.buf);
	if (!o)
		return -EBADMSG;
	r = -EBADMSG;
	/* After a reboot the kernel counts from 0 again: the old sequence
	 * means nothing, read the new boot's ring buffer from its start. */
	if (json_object_object_get_ex(o, "boot_id", &v) &&
	    !streq(json_object_get_string(v), a->boot_id)) {
		r = 0;
	} else if (json_object_object_get_ex(o, "last_seq", &v) &&
		   parse_u64(json_object_get_string(v), &seq) == 0) {
		a->last_seq = seq;
		a->have_last_seq = true;
		r = 1;
		if (json_object_object_get_ex(o, "oom_kill", &v))
			for_each_watched(a, compare_count, v);
	}
	json_object_put(o);
	return r;
}

int agent_state_save(struct agent *a)
{
	struct json_object *o, *counts;
	const char *s;
	size_t len;
	char seq[32];
	int r;

	if (!a->have_last_seq)
		return 0;
	o = json_object_new_object();
	counts = json_object_new_object();
	if (!o || !counts) {
		json_object_put(o);
		json_object_put(counts);
		return -ENOMEM;
	}
	/* The sequence is a string: JSON numbers lose precision past 2^53. */
	snprintf(seq, sizeof(seq), "%llu", (unsigned long long)a->last_seq);
	json_object_object_add(o, "last_seq", json_object_new_string(seq));
	json_object_object_add(o, "boot_id",
			       json_object_new_string(a->boot_id));
	for_each_watched(a, add_count, counts);
	json_object_object_add(o, "oom_kill", counts);
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY, &len);
	r = write_file_atomic_at(a->state_fd, STATE_FILE, s, len, 0600);
	json_object_put(o);
	return r;
}
