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
						 .rss_last_age_s = -1};
	return &in->jvms[in->n_jvms++];
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
		load_rss(tl, kill_ms, &in->jvms[i]);
	}
	json_object_put(tl);
}
