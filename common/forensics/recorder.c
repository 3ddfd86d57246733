/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>

#include "base/parse.h"
#include "forensics/recorder.h"
#include "base/util.h"

int rec_thresholds_parse(const char *s, struct rec_thresholds *ret)
{
	struct rec_thresholds t = {0};
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		uint64_t v;
		size_t k;

		if (scan_u64(&p, &v) < 0 || v < 1 || v > 100)
			return -EINVAL;
		for (k = 0; k < t.n && t.pct[k] != v; k++)
			;
		if (k == t.n) {
			if (t.n == REC_MAX_THRESHOLDS)
				return -EINVAL;
			t.pct[t.n] = (unsigned)v;
			t.armed[t.n++] = true;
		}
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	/* Insertion sort: at most 8 entries. */
	for (size_t i = 1; i < t.n; i++)
		for (size_t j = i; j > 0 && t.pct[j - 1] > t.pct[j]; j--) {
			unsigned x = t.pct[j];

			t.pct[j] = t.pct[j - 1];
			t.pct[j - 1] = x;
		}
	*ret = t;
	return 0;
}

unsigned rec_thresholds_update(struct rec_thresholds *t, double pct)
{
	unsigned crossed = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->armed[i] && pct >= t->pct[i]) {
			t->armed[i] = false;
			crossed = t->pct[i];
		} else if (!t->armed[i] &&
			   pct <= t->pct[i] - REC_REARM_POINTS) {
			t->armed[i] = true;
		}
	}
	return crossed;
}

void recorder_init(struct recorder *r)
{
	memset(r, 0, sizeof(*r));
	r->snapshots = json_object_new_array();
	r->trims = json_object_new_array();
	r->jvms = json_object_new_array();
	r->events = json_object_new_array();
}

static struct json_object *sample_json(const struct rec_sample *s);

static void sample_release(struct rec_sample *s)
{
	free(s->procs);
	free(s->json);
	s->procs = NULL;
	s->json = NULL;
}

void recorder_release(struct recorder *r)
{
	for (size_t i = 0; i < r->count; i++)
		sample_release(&r->ring[(r->head + i) % REC_RING_MAX]);
	for (size_t i = 0; i < r->n_procs; i++)
		free(r->procs[i].cmdline);
	free(r->procs);
	json_object_put(r->snapshots);
	json_object_put(r->trims);
	json_object_put(r->jvms);
	json_object_put(r->events);
	memset(r, 0, sizeof(*r));
}

int recorder_add(struct recorder *r, struct rec_sample *s)
{
	struct json_object *o = sample_json(s);
	const char *text =
		o ? json_object_to_json_string_ext(
			    o, JSON_C_TO_STRING_PLAIN |
				       JSON_C_TO_STRING_NOSLASHESCAPE)
		  : NULL;
	size_t slot;

	s->json = text ? strdup(text) : NULL;
	json_object_put(o);
	if (!s->json) {
		free(s->procs);
		s->procs = NULL;
		return -ENOMEM;
	}
	if (r->count == REC_RING_MAX) {
		sample_release(&r->ring[r->head]);
		r->head = (r->head + 1) % REC_RING_MAX;
		r->count--;
	}
	slot = (r->head + r->count) % REC_RING_MAX;
	r->ring[slot] = *s;
	r->count++;
	s->procs = NULL;
	s->json = NULL;
	return 0;
}

const struct rec_sample *recorder_sample(const struct recorder *r, size_t i)
{
	if (i >= r->count)
		return NULL;
	return &r->ring[(r->head + i) % REC_RING_MAX];
}

static struct rec_proc *find_proc(const struct recorder *r, int pid)
{
	/* The newest entry for a pid wins: pids can be reused. */
	for (size_t i = r->n_procs; i > 0; i--)
		if (r->procs[i - 1].pid == pid)
			return &r->procs[i - 1];
	return NULL;
}

static void forget_oldest_ended(struct recorder *r)
{
	for (size_t i = 0; i < r->n_procs; i++) {
		if (!r->procs[i].end_us)
			continue;
		free(r->procs[i].cmdline);
		memmove(&r->procs[i], &r->procs[i + 1],
			(r->n_procs - i - 1) * sizeof(r->procs[0]));
		r->n_procs--;
		return;
	}
}

int recorder_proc_seen(struct recorder *r, int pid, const char *name,
		       const char *cmdline, uint64_t t_us)
{
	struct rec_proc *p = find_proc(r, pid), *np;

	if (p && !p->end_us) {
		p->last_us = t_us;
		return 0;
	}
	if (r->n_procs >= REC_PROCS_MAX)
		forget_oldest_ended(r);
	np = realloc(r->procs, (r->n_procs + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	r->procs = np;
	p = &np[r->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	strlcpy_safe(p->name, name ? name : "", sizeof(p->name));
	p->cmdline = strdup(cmdline ? cmdline : "");
	if (!p->cmdline)
		return -ENOMEM;
	p->first_us = p->last_us = t_us;
	r->n_procs++;
	return 0;
}

void recorder_proc_ended(struct recorder *r, int pid, uint64_t t_us)
{
	struct rec_proc *p = find_proc(r, pid);

	if (p && !p->end_us)
		p->end_us = t_us;
}

bool recorder_proc_alive(const struct recorder *r, int pid)
{
	struct rec_proc *p = find_proc(r, pid);

	return p && !p->end_us;
}

double recorder_predict_s(const struct recorder *r, size_t window)
{
	const struct rec_sample *last;
	double st = 0, su = 0, stt = 0, stu = 0, n, slope, t0;
	size_t first;

	if (r->count < 3 || window < 3)
		return -1;
	last = recorder_sample(r, r->count - 1);
	if (!last->limit)
		return -1;
	if (last->usage >= last->limit)
		return 0;
	first = r->count > window ? r->count - window : 0;
	n = (double)(r->count - first);
	t0 = (double)recorder_sample(r, first)->mono_us / 1e6;
	for (size_t i = first; i < r->count; i++) {
		const struct rec_sample *s = recorder_sample(r, i);
		double t = (double)s->mono_us / 1e6 - t0, u = (double)s->usage;

		st += t;
		su += u;
		stt += t * t;
		stu += t * u;
	}
	if (n * stt - st * st <= 0)
		return -1;
	slope = (n * stu - st * su) / (n * stt - st * st);
	if (slope <= 0)
		return -1;
	return (double)(last->limit - last->usage) / slope;
}

int recorder_note_snapshot(struct recorder *r, uint64_t t_us, uint64_t mono_us,
			   const char *reason, const char *dir, uint64_t usage,
			   uint64_t limit)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "t_ms", json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(o, "dir", json_object_new_string(dir));
	json_object_object_add(o, "usage", json_object_new_uint64(usage));
	json_object_object_add(o, "limit", json_object_new_uint64(limit));
	json_object_array_add(r->snapshots, o);
	r->last_snapshot_mono_us = mono_us;
	r->any_snapshot = true;
	return 0;
}

int recorder_note_snapshot_end(struct recorder *r, uint64_t t_us,
			       bool after_kill)
{
	size_t n = json_object_array_length(r->snapshots);
	struct json_object *o =
		n ? json_object_array_get_idx(r->snapshots, n - 1) : NULL;

	if (!o)
		return -ENOENT;
	json_object_object_add(o, "completed_ms",
			       json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "after_kill",
			       json_object_new_boolean(after_kill));
	return 0;
}

int recorder_note_jvm(struct recorder *r, struct json_object *facts)
{
	if (!facts)
		return -ENOMEM;
	return json_object_array_add(r->jvms, facts) < 0 ? -ENOMEM : 0;
}

int recorder_note_event(struct recorder *r, uint64_t t_us, const char *kind,
			int pid, const char *text)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "t_ms", json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "text", json_object_new_string(text));
	json_object_array_add(r->events, o);
	return 0;
}

int recorder_note_trim(struct recorder *r, uint64_t t_us, int pid,
		       const char *command, uint64_t rss_before,
		       uint64_t rss_after)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "t_ms", json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "command", json_object_new_string(command));
	json_object_object_add(o, "rss_before",
			       json_object_new_uint64(rss_before));
	json_object_object_add(o, "rss_after",
			       json_object_new_uint64(rss_after));
	json_object_array_add(r->trims, o);
	return 0;
}

static struct json_object *proc_sample_json(const struct rec_proc_sample *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "rss_kb", json_object_new_uint64(p->rss_kb));
	json_object_object_add(o, "anon_kb",
			       json_object_new_uint64(p->anon_kb));
	json_object_object_add(o, "file_kb",
			       json_object_new_uint64(p->file_kb));
	json_object_object_add(o, "shmem_kb",
			       json_object_new_uint64(p->shmem_kb));
	json_object_object_add(o, "swap_kb",
			       json_object_new_uint64(p->swap_kb));
	json_object_object_add(o, "threads", json_object_new_int(p->threads));
	return o;
}

static struct json_object *sample_json(const struct rec_sample *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *procs = json_object_new_array();

	json_object_object_add(o, "t_ms",
			       json_object_new_uint64(s->t_us / 1000));
	json_object_object_add(o, "usage", json_object_new_uint64(s->usage));
	json_object_object_add(o, "limit", json_object_new_uint64(s->limit));
	for (size_t i = 0; i < s->n_procs; i++)
		json_object_array_add(procs, proc_sample_json(&s->procs[i]));
	json_object_object_add(o, "procs", procs);
	return o;
}

static struct json_object *proc_json(const struct rec_proc *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "cmdline",
			       json_object_new_string(p->cmdline));
	json_object_object_add(o, "first_ms",
			       json_object_new_uint64(p->first_us / 1000));
	json_object_object_add(o, "last_ms",
			       json_object_new_uint64(p->last_us / 1000));
	json_object_object_add(
		o, "end_ms",
		p->end_us ? json_object_new_uint64(p->end_us / 1000) : NULL);
	return o;
}

/* Prints a sample's JSON text, serialized by json-c when it was added. */
static int cached_sample_print(struct json_object *jso, struct printbuf *pb,
			       int level, int flags)
{
	const char *text = json_object_get_userdata(jso);

	(void)level, (void)flags;
	return printbuf_memappend(pb, text, (int)strlen(text));
}

/* A json-c node that prints s->json as it is (s outlives the node). */
static struct json_object *cached_sample(const struct rec_sample *s)
{
	struct json_object *o = json_object_new_object();

	if (o)
		json_object_set_serializer(o, cached_sample_print, s->json,
					   NULL);
	return o;
}

static struct json_object *timeline_json(const struct recorder *r,
					 const char *cgroup,
					 unsigned interval_ms, bool cached)
{
	struct json_object *o = json_object_new_object();
	struct json_object *samples = json_object_new_array();
	struct json_object *procs = json_object_new_array();

	if (!o || !samples || !procs) {
		json_object_put(o);
		json_object_put(samples);
		json_object_put(procs);
		return NULL;
	}
	json_object_object_add(
		o, "schema", json_object_new_string("oomlens.io/timeline/v1"));
	json_object_object_add(o, "cgroup",
			       cgroup ? json_object_new_string(cgroup) : NULL);
	json_object_object_add(o, "interval_ms",
			       json_object_new_uint64(interval_ms));
	for (size_t i = 0; i < r->count; i++) {
		const struct rec_sample *s = recorder_sample(r, i);

		json_object_array_add(samples, cached ? cached_sample(s)
						      : sample_json(s));
	}
	for (size_t i = 0; i < r->n_procs; i++)
		json_object_array_add(procs, proc_json(&r->procs[i]));
	json_object_object_add(o, "samples", samples);
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "snapshots", json_object_get(r->snapshots));
	json_object_object_add(o, "trims", json_object_get(r->trims));
	json_object_object_add(o, "jvms", json_object_get(r->jvms));
	json_object_object_add(o, "events", json_object_get(r->events));
	return o;
}

struct json_object *recorder_timeline_json(const struct recorder *r,
					   const char *cgroup,
					   unsigned interval_ms)
{
	return timeline_json(r, cgroup, interval_ms, false);
}

int recorder_timeline_text(const struct recorder *r, const char *cgroup,
			   unsigned interval_ms, struct json_object **keep,
			   const char **text, size_t *len)
{
	struct json_object *o = timeline_json(r, cgroup, interval_ms, true);

	*keep = NULL;
	if (!o)
		return -ENOMEM;
	*text = json_object_to_json_string_length(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		len);
	if (!*text) {
		json_object_put(o);
		return -ENOMEM;
	}
	*keep = o;
	return 0;
}

int recorder_timeline_write(const struct recorder *r, const char *cgroup,
			    unsigned interval_ms, struct strbuf *out)
{
	struct json_object *keep;
	const char *text;
	size_t len;
	int q;

	q = recorder_timeline_text(r, cgroup, interval_ms, &keep, &text, &len);
	if (q == 0)
		q = strbuf_add(out, text, len);
	json_object_put(keep);
	return q;
}
