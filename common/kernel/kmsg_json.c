/* SPDX-License-Identifier: Apache-2.0 */
/* oom_report_to_json(): the `parse-kmsg` object (issue 2 field list). */
#include <json-c/json.h>

#include "kernel/kmsg.h"
#include "base/strbuf.h"
#include "base/util.h"

/* Comm and path bytes are untrusted and need not be UTF-8: invalid bytes
 * become "\xNN" text, as the kernel would print them. */
static struct json_object *jstr(const char *s)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)s;

	strbuf_init(&sb, 4096);
	while (*p) {
		size_t n = *p < 0x80		 ? 1
			   : (*p & 0xe0) == 0xc0 ? 2
			   : (*p & 0xf0) == 0xe0 ? 3
			   : (*p & 0xf8) == 0xf0 ? 4
						 : 0;
		bool ok = n > 0;

		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (ok) {
			if (strbuf_add(&sb, p, n) < 0)
				return NULL;
			p += n;
		} else {
			if (strbuf_addf(&sb, "\\x%02x", *p) < 0)
				return NULL;
			p++;
		}
	}
	return json_object_new_string_len(sb.buf, (int)sb.len);
}

static struct json_object *jnum(uint64_t v)
{
	return json_object_new_uint64(v);
}

static struct json_object *jseq(uint64_t v)
{
	return v == UINT64_MAX ? NULL : json_object_new_uint64(v);
}

#define ADD(o, k, v) json_object_object_add((o), (k), (v))

static struct json_object *trigger_json(const struct oom_report *r)
{
	struct json_object *t;

	if (!r->trigger.present)
		return NULL;
	t = json_object_new_object();
	if (!t)
		return NULL;
	ADD(t, "comm", jstr(r->trigger.comm));
	ADD(t, "pid",
	    r->trigger.pid ? json_object_new_int(r->trigger.pid) : NULL);
	ADD(t, "gfp_mask", jstr(r->trigger.gfp_mask));
	ADD(t, "order", json_object_new_int(r->trigger.order));
	ADD(t, "oom_score_adj", json_object_new_int(r->trigger.oom_score_adj));
	return t;
}

struct json_object *kmsg_victim_to_json(const struct kmsg_victim *v)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	ADD(o, "pid", json_object_new_int(v->pid));
	ADD(o, "comm", jstr(v->comm));
	ADD(o, "uid", jnum(v->uid));
	ADD(o, "total_vm_kb", jnum(v->total_vm_kb));
	ADD(o, "anon_rss_kb", jnum(v->anon_rss_kb));
	ADD(o, "file_rss_kb", jnum(v->file_rss_kb));
	ADD(o, "shmem_rss_kb", jnum(v->shmem_rss_kb));
	ADD(o, "pgtables_kb", jnum(v->pgtables_kb));
	ADD(o, "oom_score_adj", json_object_new_int(v->oom_score_adj));
	ADD(o, "seq", jseq(v->seq));
	ADD(o, "usec", jseq(v->usec));
	return o;
}

static struct json_object *task_json(const struct kmsg_task *t, unsigned cols)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	ADD(o, "pid", json_object_new_int(t->pid));
	if (cols & KMSG_COL_UID)
		ADD(o, "uid", jnum(t->uid));
	if (cols & KMSG_COL_TGID)
		ADD(o, "tgid", json_object_new_int(t->tgid));
	if (cols & KMSG_COL_TOTAL_VM)
		ADD(o, "total_vm", jnum(t->total_vm));
	if (cols & KMSG_COL_RSS)
		ADD(o, "rss", jnum(t->rss));
	if (cols & KMSG_COL_RSS_ANON)
		ADD(o, "rss_anon", jnum(t->rss_anon));
	if (cols & KMSG_COL_RSS_FILE)
		ADD(o, "rss_file", jnum(t->rss_file));
	if (cols & KMSG_COL_RSS_SHMEM)
		ADD(o, "rss_shmem", jnum(t->rss_shmem));
	if (cols & KMSG_COL_PGTABLES_BYTES)
		ADD(o, "pgtables_bytes", jnum(t->pgtables_bytes));
	if (cols & KMSG_COL_NR_PTES)
		ADD(o, "nr_ptes", jnum(t->pgtables_bytes));
	if (cols & KMSG_COL_SWAPENTS)
		ADD(o, "swapents", jnum(t->swapents));
	if (cols & KMSG_COL_OOM_SCORE_ADJ)
		ADD(o, "oom_score_adj", json_object_new_int(t->oom_score_adj));
	ADD(o, "name", jstr(t->name));
	return o;
}

static struct json_object *counter_json(bool present, uint64_t usage,
					uint64_t limit, uint64_t failcnt)
{
	struct json_object *o;

	if (!present)
		return NULL;
	o = json_object_new_object();
	if (!o)
		return NULL;
	ADD(o, "usage_kb", jnum(usage));
	ADD(o, "limit_kb", jnum(limit));
	ADD(o, "failcnt", jnum(failcnt));
	return o;
}

#define COUNTER(r, f)                                                  \
	counter_json((r)->f.present, (r)->f.usage_kb, (r)->f.limit_kb, \
		     (r)->f.failcnt)

static int add_arrays(struct json_object *o, const struct oom_report *r)
{
	struct json_object *v = json_object_new_array();
	struct json_object *t = json_object_new_array();
	struct json_object *s = json_object_new_object();

	ADD(o, "victims", v);
	ADD(o, "memcg_stat", s);
	ADD(o, "tasks", t);
	if (!v || !t || !s)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_victims; i++)
		if (json_object_array_add(
			    v, kmsg_victim_to_json(&r->victims[i])) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < r->n_stats; i++)
		ADD(s, r->stats[i].name, jnum(r->stats[i].value));
	for (size_t i = 0; i < r->n_tasks; i++)
		if (json_object_array_add(
			    t, task_json(&r->tasks[i], r->task_columns)) < 0)
			return -ENOMEM;
	return 0;
}

struct json_object *oom_report_to_json(const struct oom_report *r)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	ADD(o, "seq_first", jseq(r->seq_first));
	ADD(o, "seq_last", jseq(r->seq_last));
	ADD(o, "usec", jseq(r->usec));
	ADD(o, "complete", json_object_new_boolean(r->complete));
	ADD(o, "global", json_object_new_boolean(r->global));
	ADD(o, "ratelimited", json_object_new_boolean(r->ratelimited));
	ADD(o, "trigger", trigger_json(r));
	ADD(o, "constraint", r->constraint[0] ? jstr(r->constraint) : NULL);
	ADD(o, "oom_memcg", jstr(r->oom_memcg));
	ADD(o, "task_memcg", jstr(r->task_memcg));
	ADD(o, "memcg_ambiguous", json_object_new_boolean(r->memcg_ambiguous));
	ADD(o, "victim_memcg", jstr(oom_report_victim_memcg(r)));
	ADD(o, "group_kill", json_object_new_boolean(r->group_kill));
	ADD(o, "group_memcg", r->group_kill ? jstr(r->group_memcg) : NULL);
	ADD(o, "memcg", COUNTER(r, memcg));
	ADD(o, "memsw", COUNTER(r, memsw));
	ADD(o, "swap", COUNTER(r, swap));
	ADD(o, "kmem", COUNTER(r, kmem));
	ADD(o, "stats_memcg", jstr(r->stats_memcg));
	ADD(o, "stats_truncated", json_object_new_boolean(r->stats_truncated));
	if (add_arrays(o, r) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
