/* SPDX-License-Identifier: Apache-2.0 */
/* The sidecar's JVM facts for the diagnosis: the configuration check made
 * at first sight (timeline "jvms"), the heap's RSS by address at the last
 * snapshot (jvm/heap_rss.json) and the JVM's RSS in the timeline after
 * it: together they say whether a JVM's growth was its heap, even when
 * the last attach did not answer. */
#include <json-c/json.h>
#include <stdio.h>

#include "base/util.h"
#include "forensics/bundle.h"
#include "base/jget.h"
#include "forensics/diagnosis.h"

static uint64_t jnum(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, k, &v))
		return 0;
	return (uint64_t)json_object_get_int64(v);
}

/* A count that may be -1 (unknown); -1 when absent. */
static int64_t jint(struct json_object *o, const char *k)
{
	struct json_object *v = jget(o, k);

	return v && json_object_is_type(v, json_type_int)
		       ? json_object_get_int64(v)
		       : -1;
}

static bool jbool(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) &&
	       json_object_get_boolean(v);
}

static double age(uint64_t kill_ms, uint64_t t_ms)
{
	return t_ms ? ((double)kill_ms - (double)t_ms) / 1000.0 : -1;
}

static struct diag_jvm *jvm_of(struct diag_input *in, int pid, bool add)
{
	for (size_t i = 0; i < in->n_jvms; i++)
		if (in->jvms[i].pid == pid)
			return &in->jvms[i];
	if (!add || in->n_jvms == DIAG_MAX_JVMS)
		return NULL;
	in->jvms[in->n_jvms] = (struct diag_jvm){.pid = pid,
						 .flags_age_s = -1,
						 .heap_rss_age_s = -1,
						 .rss_last_age_s = -1,
						 .nmt_from_age_s = -1,
						 .nmt_to_age_s = -1,
						 .threads_from = -1,
						 .threads_to = -1};
	return &in->jvms[in->n_jvms++];
}

/* What the JVM believes its limit is: "container" {believed_limit,
 * believed_from} of its facts (VM.info at first sight). */
static void load_container(struct diag_input *in, struct json_object *facts,
			   struct diag_jvm *j)
{
	struct json_object *c = jget_obj(&in->notes, facts, "container");
	const char *from = jget_str(&in->notes, c, "believed_from");

	if (!c || !jget_u64(&in->notes, c, "believed_limit", &j->jvm_limit) ||
	    !j->jvm_limit)
		return;
	j->have_jvm_limit = true;
	j->jvm_limit_from_container = from && streq(from, "container");
}

static void load_flags(struct json_object *tl, uint64_t kill_ms,
		       struct diag_input *in)
{
	struct json_object *a;

	if (!(a = jget_array(NULL, tl, "jvms")))
		return;
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		struct diag_jvm *j = jvm_of(in, (int)jnum(o, "pid"), true);

		if (!j)
			return;
		j->have_flags = true;
		j->max_heap = jnum(o, "max_heap");
		j->max_direct = jnum(o, "max_direct");
		j->configured_total = jnum(o, "configured_total");
		j->native_baseline = jnum(o, "native_baseline");
		j->limit = jnum(o, "limit");
		j->outgrows = jbool(o, "outgrows");
		j->heap_outgrows = jbool(o, "heap_outgrows");
		j->flags_age_s = age(kill_ms, jnum(o, "t_ms"));
		load_container(in, o, j);
	}
}

static void load_heap_rss(const struct bundle *b, uint64_t kill_ms,
			  struct diag_jvm *j)
{
	char path[96];
	struct json_object *o;

	snprintf(path, sizeof(path), "processes/%d/jvm/heap_rss.json", j->pid);
	o = bundle_get_json(b, path);
	if (!o)
		return;
	j->have_heap_rss = true;
	j->heap_rss = jnum(o, "heap_rss");
	j->native_rss = jnum(o, "native_rss");
	j->heap_rss_age_s = age(kill_ms, jnum(o, "t_ms"));
	json_object_put(o);
}

/* RSS of pid in sample s (bytes), 0 when absent. */
static uint64_t rss_in(struct json_object *s, int pid)
{
	struct json_object *procs;

	if (!(procs = jget_array(NULL, s, "procs")))
		return 0;
	for (size_t k = 0; k < json_object_array_length(procs); k++) {
		struct json_object *p = json_object_array_get_idx(procs, k);

		if ((int)jnum(p, "pid") == pid)
			return jnum(p, "rss_kb") * 1024;
	}
	return 0;
}

static void load_rss(struct json_object *tl, uint64_t kill_ms,
		     struct diag_jvm *j)
{
	struct json_object *samples;
	double best = 1e9;
	size_t n;

	if (!(samples = jget_array(NULL, tl, "samples")))
		return;
	n = json_object_array_length(samples);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(samples, i);
		uint64_t t = jnum(s, "t_ms"), rss = rss_in(s, j->pid);
		double a = age(kill_ms, t), d;

		if (!rss || t > kill_ms)
			continue;
		j->have_rss = true;
		j->rss_last = rss;
		j->rss_last_age_s = a;
		d = a - j->heap_rss_age_s;
		if (j->have_heap_rss && (d < 0 ? -d : d) < best) {
			best = d < 0 ? -d : d;
			j->rss_at_snapshot = rss;
		}
	}
}

static int by_growth(const void *a, const void *b)
{
	const struct diag_nmt_growth *x = a, *y = b;
	uint64_t gx = x->to - x->from, gy = y->to - y->from;

	return gx < gy ? 1 : gx > gy ? -1 : strcmp(x->name, y->name);
}

size_t diagnosis_nmt_growth(const struct diag_nmt_cat *from, size_t n_from,
			    const struct diag_nmt_cat *to, size_t n_to,
			    struct diag_nmt_growth *ret, size_t max,
			    uint64_t *ret_nonheap, uint64_t *ret_heap)
{
	struct diag_nmt_growth all[DIAG_MAX_NMT];
	uint64_t nonheap = 0, heap = 0;
	size_t n = 0;

	memset(all, 0, sizeof(all));
	for (size_t i = 0; i < n_to && n < DIAG_MAX_NMT; i++) {
		uint64_t was = 0, now = to[i].committed_kb * 1024;

		for (size_t k = 0; k < n_from; k++)
			if (streq(from[k].name, to[i].name))
				was = from[k].committed_kb * 1024;
		if (now <= was)
			continue;
		if (streq(to[i].name, "Java Heap"))
			heap += now - was;
		else
			nonheap += now - was;
		all[n] = (struct diag_nmt_growth){.from = was, .to = now};
		strlcpy_safe(all[n++].name, to[i].name, sizeof(all[0].name));
	}
	qsort(all, n, sizeof(all[0]), by_growth);
	if (n > max)
		n = max;
	memcpy(ret, all, n * sizeof(all[0]));
	*ret_nonheap = nonheap;
	*ret_heap = heap;
	return n;
}

/* One entry of nmt_history.json into cats (committed, KiB). */
static size_t history_cats(struct diag_input *in, struct json_object *e,
			   struct diag_nmt_cat *cats)
{
	struct json_object *c = jget_obj(&in->notes, e, "committed");
	size_t n = 0;

	if (!c)
		return 0;
	json_object_object_foreach (c, k, v) {
		if (n == DIAG_MAX_NMT ||
		    !json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0)
			continue;
		strlcpy_safe(cats[n].name, k, sizeof(cats[n].name));
		cats[n].committed_kb =
			(uint64_t)json_object_get_int64(v) / 1024;
		cats[n++].malloc_kb = 0;
	}
	return n;
}

/* jvm/nmt_history.json: growth from its first entry to its newest one
 * taken before the kill. */
static void load_nmt_history(const struct bundle *b, uint64_t kill_ms,
			     struct diag_input *in, struct diag_jvm *j)
{
	struct diag_nmt_cat *from = calloc(2 * DIAG_MAX_NMT, sizeof(*from));
	struct json_object *o, *a, *first = NULL, *last = NULL;
	char path[96];
	size_t nf, nt;

	snprintf(path, sizeof(path), "processes/%d/jvm/nmt_history.json",
		 j->pid);
	o = bundle_get_json(b, path);
	jget_where(&in->notes, path);
	a = jget_array(&in->notes, o, "entries");
	for (size_t i = 0; from && a && i < jget_len(a); i++) {
		struct json_object *e = jget_idx(a, i);

		if (!jnum(e, "t_ms") || (kill_ms && jnum(e, "t_ms") > kill_ms))
			continue;
		if (!first)
			first = e;
		else
			last = e;
	}
	if (first && last && (nf = history_cats(in, first, from)) &&
	    (nt = history_cats(in, last, from + DIAG_MAX_NMT))) {
		j->n_growth = diagnosis_nmt_growth(
			from, nf, from + DIAG_MAX_NMT, nt, j->growth,
			DIAG_MAX_NMT_GROWTH, &j->nmt_nonheap_growth,
			&j->nmt_heap_growth);
		j->have_nmt_growth = true;
		j->nmt_from_age_s = age(kill_ms, jnum(first, "t_ms"));
		j->nmt_to_age_s = age(kill_ms, jnum(last, "t_ms"));
		j->threads_from = jint(first, "threads");
		j->threads_to = jint(last, "threads");
	}
	jget_where(&in->notes, "");
	free(from);
	json_object_put(o);
}

void diagnosis_load_jvm_facts(const struct bundle *b, uint64_t kill_ms,
			      struct diag_input *in)
{
	struct json_object *tl = bundle_get_json(b, "timeline.json");
	struct json_object *snap = bundle_get_json(b, "spool/snapshot.json");

	struct json_object *samples;
	size_t n;

	if (!kill_ms && tl && (samples = jget_array(NULL, tl, "samples")) &&
	    (n = json_object_array_length(samples)))
		kill_ms =
			jnum(json_object_array_get_idx(samples, n - 1), "t_ms");
	if (snap && kill_ms && jnum(snap, "t_ms"))
		in->snapshot_age_s = age(kill_ms, jnum(snap, "t_ms"));
	json_object_put(snap);
	if (!tl)
		return;
	load_flags(tl, kill_ms, in);
	/* a JVM seen only in a snapshot (no facts at first sight) */
	for (size_t i = 0; i < in->n_procs; i++)
		if (in->procs[i].jvm)
			(void)jvm_of(in, in->procs[i].pid, true);
	for (size_t i = 0; i < in->n_jvms; i++) {
		load_heap_rss(b, kill_ms, &in->jvms[i]);
		load_nmt_history(b, kill_ms, in, &in->jvms[i]);
		load_rss(tl, kill_ms, &in->jvms[i]);
	}
	json_object_put(tl);
}
