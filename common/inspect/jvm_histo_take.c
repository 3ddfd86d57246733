/* SPDX-License-Identifier: Apache-2.0 */
/* Taking a class histogram near an OOM: the heap's used size first
 * (GC.heap_info), the walk's estimate against the budget, then
 * GC.class_histogram with its wall time and the JVM's own count of its
 * pause (hsperfdata's safepoint time, read before and after). */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "jvm_internal.h"
#include "base/util.h"

/* GC.heap_info answers in milliseconds; a JVM that takes longer is not
 * one to stop for a walk. */
#define HEAP_INFO_TIMEOUT_MS 2000u

/* hsperfdata's safepoint time (ticks), its count and the tick rate. */
struct pause_mark {
	bool ok;
	int64_t ticks, count, freq;
};

static void pause_mark(const struct jvm_target *t, struct pause_mark *m)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 1u << 20);
	m->ok = jvm_perfdata_read(t->host, &t->info, &sb) == 0 &&
		jvm_perfdata_long(sb.buf, sb.len, "sun.rt.safepointTime",
				  &m->ticks) == 0 &&
		jvm_perfdata_long(sb.buf, sb.len, "sun.rt.safepoints",
				  &m->count) == 0 &&
		jvm_perfdata_long(sb.buf, sb.len, "sun.os.hrt.frequency",
				  &m->freq) == 0 &&
		m->freq > 0 && m->ticks >= 0 && m->count >= 0;
}

static void pause_between(const struct pause_mark *a,
			  const struct pause_mark *b, struct jvm_histo_take *t)
{
	if (!a->ok || !b->ok || b->freq != a->freq || b->ticks < a->ticks ||
	    b->count < a->count)
		return;
	t->have_pause = true;
	t->pause_us = (uint64_t)((double)(b->ticks - a->ticks) * 1e6 /
				 (double)a->freq);
	t->safepoints = (uint64_t)(b->count - a->count);
}

static int heap_used(struct jvm_target *t, uint64_t *ret)
{
	struct jvm_reply rep = {0};
	struct jvm_heap_info hi;
	int r = jvm_jcmd(t, "GC.heap_info", &rep);

	if (r < 0)
		return r;
	r = rep.status != 0
		    ? -JVM_E_NO_COMMAND
		    : jvm_parse_heap_info(rep.text.buf, rep.text.len, &hi);
	jvm_reply_release(&rep);
	if (r == 0)
		*ret = hi.used;
	return r;
}

/* The JVM's first line of a failed reply, cleaned, into why. */
static void failed_reply(const struct jvm_reply *rep, struct jvm_histo_take *t)
{
	char line[120];
	size_t n = strcspn(rep->text.buf, "\n");

	jvm_histo_clean_name(rep->text.buf, n, line, sizeof(line));
	snprintf(t->why, sizeof(t->why),
		 "GC.class_histogram failed (status %d): %s", rep->status,
		 line);
}

/* ms to the deadline (UINT32_MAX none, 0 passed). */
static unsigned until(uint64_t deadline)
{
	uint64_t now = now_monotonic_us();

	if (!deadline)
		return UINT32_MAX;
	return deadline > now ? (unsigned)((deadline - now) / 1000) : 0;
}

/* The command itself, bounded by the budget and the deadline. */
static void walk(struct jvm_target *t, struct jvm_histo_take *res,
		 uint64_t deadline)
{
	struct pause_mark before, after;
	struct jvm_reply rep = {0};
	unsigned left = until(deadline);
	uint64_t t0;
	int r;

	if (left < res->budget_ms)
		res->budget_ms = left ? left : 1;
	t->opts.reply_timeout_ms = (unsigned)res->budget_ms;
	t->opts.reply_max = JVM_HISTO_REPLY_MAX;
	pause_mark(t, &before);
	t0 = now_monotonic_us();
	r = jvm_jcmd(t, "GC.class_histogram", &rep);
	res->wall_us = now_monotonic_us() - t0;
	pause_mark(t, &after);
	if (r == -JVM_E_TIMEOUT) {
		snprintf(res->why, sizeof(res->why),
			 "no reply within the %" PRIu64 " ms bound (estimate "
			 "%" PRIu64 " ms): the JVM may still be walking its "
			 "heap; it was left to finish",
			 res->budget_ms, res->estimate_ms);
		return;
	}
	if (r < 0) {
		snprintf(res->why, sizeof(res->why), "GC.class_histogram: %s",
			 jvm_strerror(r));
		return;
	}
	res->reply_bytes = rep.text.len;
	res->truncated = rep.truncated;
	if (rep.status != 0)
		failed_reply(&rep, res);
	else if (jvm_parse_class_histogram(rep.text.buf, rep.text.len,
					   rep.truncated, &res->h) < 0)
		snprintf(res->why, sizeof(res->why),
			 "unparsable GC.class_histogram reply (%zu bytes)",
			 rep.text.len);
	else
		res->taken = true;
	jvm_reply_release(&rep);
	if (res->taken)
		pause_between(&before, &after, res);
}

/* Whether the walk fits the budget; why not in res->why. */
static bool fits(struct jvm_target *t, const struct jvm_histo_opts *o,
		 struct jvm_histo_take *res)
{
	uint64_t rate = o->rate ? o->rate : JVM_HISTO_RATE_DEFAULT;
	const char *what = o->budget_what ? o->budget_what : "allowed";
	unsigned left = until(o->deadline_mono_us);
	int r;

	t->opts.reply_timeout_ms =
		left < HEAP_INFO_TIMEOUT_MS ? left : HEAP_INFO_TIMEOUT_MS;
	r = t->opts.reply_timeout_ms ? heap_used(t, &res->heap_used)
				     : -JVM_E_TIMEOUT;

	if (r < 0) {
		snprintf(res->why, sizeof(res->why),
			 "the heap's size is unknown (GC.heap_info: %s): its "
			 "walk cannot be bounded",
			 jvm_strerror(r));
		return false;
	}
	res->estimate_ms = jvm_histo_estimate_ms(res->heap_used, rate);
	left = until(o->deadline_mono_us);
	if (left < res->budget_ms) {
		res->budget_ms = left;
		what = "left before the deadline";
	}
	if (res->estimate_ms <= res->budget_ms)
		return true;
	snprintf(res->why, sizeof(res->why),
		 "heap %" PRIu64 " MiB used: its walk would take about %" PRIu64
		 " ms at %" PRIu64 " MiB/s, more than the %" PRIu64 " ms %s",
		 res->heap_used >> 20, res->estimate_ms, rate * 1000 >> 20,
		 res->budget_ms, what);
	return false;
}

int jvm_histo_take(const struct host *h, int pid,
		   const struct jvm_histo_opts *o, struct jvm_histo_take *ret)
{
	struct jvm_histo_opts opts = o ? *o : (struct jvm_histo_opts){0};
	struct jvm_histo_take *res = calloc(1, sizeof(*res));
	struct jvm_target t;
	int r;

	if (!res)
		return -ENOMEM;
	res->budget_ms =
		opts.budget_ms ? opts.budget_ms : JVM_HISTO_BUDGET_MS_DEFAULT;
	if (opts.deadline_mono_us) {
		unsigned left = until(opts.deadline_mono_us);

		if (!opts.attach.timeout_ms || opts.attach.timeout_ms > left)
			opts.attach.timeout_ms = left ? left : 1;
		opts.attach.reply_timeout_ms = opts.attach.timeout_ms;
	}
	r = jvm_attach(h, pid, &opts.attach, &t);
	if (r == -JVM_E_NOT_JVM || r == -ESRCH || r == -EACCES) {
		free(res);
		return r;
	}
	if (r < 0)
		snprintf(res->why, sizeof(res->why), "attach: %s",
			 jvm_strerror(r));
	else if (fits(&t, &opts, res))
		walk(&t, res, opts.deadline_mono_us);
	*ret = *res;
	free(res);
	return 0;
}

#define U(o, k, v) json_object_object_add(o, k, json_object_new_uint64(v))

static struct json_object *top_json(const struct jvm_histo *h)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < h->n; i++) {
		const struct jvm_histo_class *c = &h->top[i];
		struct json_object *e = json_object_new_object();

		if (!e)
			break;
		json_object_object_add(e, "class",
				       json_object_new_string(c->name));
		json_object_object_add(e, "module",
				       json_object_new_string(c->module));
		U(e, "instances", c->instances);
		U(e, "bytes", c->bytes);
		json_object_array_add(a, e);
	}
	return a;
}

int jvm_histo_take_to_json(const struct jvm_histo_take *t, int pid,
			   uint64_t t_ms, const char *trigger,
			   struct strbuf *sb)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "pid", json_object_new_int(pid));
	U(o, "t_ms", t_ms);
	json_object_object_add(o, "trigger",
			       json_object_new_string(trigger ? trigger : ""));
	json_object_object_add(o, "taken", json_object_new_boolean(t->taken));
	if (!t->taken)
		json_object_object_add(o, "why",
				       json_object_new_string(t->why));
	U(o, "heap_used", t->heap_used);
	U(o, "estimate_ms", t->estimate_ms);
	U(o, "budget_ms", t->budget_ms);
	if (t->taken) {
		U(o, "wall_us", t->wall_us);
		json_object_object_add(
			o, "pause_us",
			t->have_pause ? json_object_new_uint64(t->pause_us)
				      : NULL);
		json_object_object_add(
			o, "safepoints",
			t->have_pause ? json_object_new_uint64(t->safepoints)
				      : NULL);
		U(o, "reply_bytes", t->reply_bytes);
		json_object_object_add(o, "truncated",
				       json_object_new_boolean(t->truncated));
		U(o, "classes", t->h.n_classes);
		U(o, "total_instances", t->h.total_instances);
		U(o, "total_bytes", t->h.total_bytes);
		json_object_object_add(
			o, "total_known",
			json_object_new_boolean(t->h.total_known));
		json_object_object_add(o, "top", top_json(&t->h));
	}
	return jvm_json_append(o, sb);
}
#undef U
