/* SPDX-License-Identifier: Apache-2.0 */
/* JSON renderings of the parsed jcmd replies (bytes, not KB), built with
 * json-c and printed compact, as one line. */
#include <json-c/json.h>

#include "inspect/jvm.h"

#define ADD(o, k, v) json_object_object_add((o), (k), (v))

static struct json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

int jvm_json_append(struct json_object *o, struct strbuf *sb)
{
	size_t len;
	const char *s;
	int r;

	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_length(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		&len);
	r = s ? strbuf_add(sb, s, len) : -ENOMEM;
	json_object_put(o);
	return r;
}

static struct json_object *nmt_category_json(const struct jvm_nmt_category *c)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	ADD(o, "name", json_object_new_string(c->name));
	ADD(o, "reserved", u64(c->reserved));
	ADD(o, "committed", u64(c->committed));
	if (c->has_malloc) {
		ADD(o, "malloc", u64(c->malloc));
		ADD(o, "malloc_count", u64(c->malloc_count));
	}
	if (c->has_mmap) {
		ADD(o, "mmap_reserved", u64(c->mmap_reserved));
		ADD(o, "mmap_committed", u64(c->mmap_committed));
	}
	if (c->has_arena) {
		ADD(o, "arena", u64(c->arena));
		ADD(o, "arena_count", u64(c->arena_count));
	}
	if (c->has_stack) {
		ADD(o, "stack_reserved", u64(c->stack_reserved));
		ADD(o, "stack_committed", u64(c->stack_committed));
	}
	if (c->threads >= 0)
		ADD(o, "threads", json_object_new_int64(c->threads));
	return o;
}

int jvm_nmt_to_json(const struct jvm_nmt *n, struct strbuf *sb)
{
	struct json_object *o = json_object_new_object(), *cats;

	if (!o)
		return -ENOMEM;
	if (!n->enabled) {
		ADD(o, "enabled", json_object_new_boolean(false));
		ADD(o, "note",
		    json_object_new_string(
			    "NMT is not enabled: start the JVM with "
			    "-XX:NativeMemoryTracking=summary"));
		return jvm_json_append(o, sb);
	}
	ADD(o, "enabled", json_object_new_boolean(true));
	ADD(o, "unit", json_object_new_string("bytes"));
	ADD(o, "reserved", u64(n->reserved));
	ADD(o, "committed", u64(n->committed));
	ADD(o, "malloc", u64(n->malloc));
	ADD(o, "malloc_count", u64(n->malloc_count));
	ADD(o, "mmap_reserved", u64(n->mmap_reserved));
	ADD(o, "mmap_committed", u64(n->mmap_committed));
	ADD(o, "threads", json_object_new_int64(n->threads));
	cats = json_object_new_array();
	for (size_t i = 0; cats && i < n->n_categories; i++)
		json_object_array_add(cats,
				      nmt_category_json(&n->categories[i]));
	ADD(o, "categories", cats);
	return jvm_json_append(o, sb);
}

static struct json_object *space_usage(uint64_t used, uint64_t committed,
				       uint64_t reserved)
{
	struct json_object *o = json_object_new_object();

	if (o) {
		ADD(o, "used", u64(used));
		ADD(o, "committed", u64(committed));
		ADD(o, "reserved", u64(reserved));
	}
	return o;
}

int jvm_heap_info_to_json(const struct jvm_heap_info *hi, struct strbuf *sb)
{
	struct json_object *o = json_object_new_object(), *spaces;

	if (!o)
		return -ENOMEM;
	ADD(o, "unit", json_object_new_string("bytes"));
	ADD(o, "collector", json_object_new_string(hi->collector));
	ADD(o, "committed", u64(hi->committed));
	ADD(o, "used", u64(hi->used));
	ADD(o, "max", u64(hi->reserved));
	ADD(o, "region_size", u64(hi->region_size));
	if (hi->has_metaspace) {
		ADD(o, "metaspace",
		    space_usage(hi->metaspace_used, hi->metaspace_committed,
				hi->metaspace_reserved));
		ADD(o, "class_space",
		    space_usage(hi->class_used, hi->class_committed,
				hi->class_reserved));
	}
	spaces = json_object_new_array();
	for (size_t i = 0; spaces && i < hi->n_spaces; i++) {
		const struct jvm_heap_space *s = &hi->spaces[i];
		struct json_object *so = json_object_new_object();

		if (!so)
			break;
		ADD(so, "name", json_object_new_string(s->name));
		ADD(so, "committed", u64(s->committed));
		ADD(so, "used", u64(s->used));
		ADD(so, "max", u64(s->reserved));
		ADD(so, "start", u64(s->start));
		ADD(so, "end", u64(s->end));
		json_object_array_add(spaces, so);
	}
	ADD(o, "spaces", spaces);
	return jvm_json_append(o, sb);
}

static struct json_object *arena_json(const struct jvm_malloc_arena *a)
{
	struct json_object *o = json_object_new_object();

	if (o) {
		ADD(o, "nr", json_object_new_int(a->nr));
		ADD(o, "system_current", u64(a->system_current));
		ADD(o, "system_max", u64(a->system_max));
		ADD(o, "free", u64(a->free_fast + a->free_rest));
		ADD(o, "free_chunks", u64(a->free_count));
	}
	return o;
}

int jvm_malloc_info_to_json(const struct jvm_malloc_info *m, struct strbuf *sb)
{
	uint64_t free_b = m->free_fast + m->free_rest;
	uint64_t in_use =
		m->system_current > free_b ? m->system_current - free_b : 0;
	struct json_object *o = json_object_new_object(), *arenas;

	if (!o)
		return -ENOMEM;
	ADD(o, "unit", json_object_new_string("bytes"));
	ADD(o, "system_current", u64(m->system_current));
	ADD(o, "system_max", u64(m->system_max));
	ADD(o, "free", u64(free_b));
	ADD(o, "free_chunks", u64(m->free_count));
	ADD(o, "in_use", u64(in_use));
	ADD(o, "mmap_count", u64(m->mmap_count));
	ADD(o, "mmap_bytes", u64(m->mmap_bytes));
	ADD(o, "arena_count", u64(m->n_arenas));
	arenas = json_object_new_array();
	for (size_t i = 0; arenas && i < m->n_arenas; i++)
		json_object_array_add(arenas, arena_json(&m->arenas[i]));
	ADD(o, "arenas", arenas);
	return jvm_json_append(o, sb);
}

int jvm_trim_to_json(const struct jvm_trim_result *t, struct strbuf *sb)
{
	int64_t diff = (int64_t)t->rss_after - (int64_t)t->rss_before;
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	ADD(o, "unit", json_object_new_string("bytes"));
	ADD(o, "rss_before", u64(t->rss_before));
	ADD(o, "rss_after", u64(t->rss_after));
	ADD(o, "rss_diff", json_object_new_int64(diff));
	ADD(o, "duration_us", u64(t->duration_us));
	ADD(o, "command", json_object_new_string(t->command));
	ADD(o, "output", json_object_new_string(t->output));
	return jvm_json_append(o, sb);
}

int jvm_flags_to_json(const struct jvm_flags *f, struct strbuf *sb)
{
	int r = strbuf_addf(sb, "{\"unit\":\"bytes\",\"MaxHeapSize\":%" PRIu64,
			    f->max_heap);

	if (r == 0 && f->has_max_direct)
		r = strbuf_addf(sb, ",\"MaxDirectMemorySize\":%" PRIu64,
				f->max_direct);
	if (r == 0 && f->has_max_metaspace)
		r = strbuf_addf(sb, ",\"MaxMetaspaceSize\":%" PRIu64,
				f->max_metaspace);
	if (r == 0 && f->has_code_cache)
		r = strbuf_addf(sb, ",\"ReservedCodeCacheSize\":%" PRIu64,
				f->code_cache);
	if (r == 0 && f->has_thread_stack)
		r = strbuf_addf(sb, ",\"ThreadStackSize\":%" PRIu64,
				f->thread_stack);
	if (r == 0 && f->has_max_ram_pct)
		r = strbuf_addf(sb, ",\"MaxRAMPercentage\":%" PRIu64,
				f->max_ram_pct);
	return r == 0 ? strbuf_addch(sb, '}') : r;
}

/* A value of the container section: bytes, or the word the JVM printed;
 * NULL (key left out) when absent. */
static struct json_object *cval(const struct jvm_cval *v)
{
	switch (v->state) {
	case JVM_CVAL_VALUE:
		return u64(v->v);
	case JVM_CVAL_UNLIMITED:
		return json_object_new_string("unlimited");
	case JVM_CVAL_NOT_SUPPORTED:
		return json_object_new_string("not supported");
	default:
		return NULL;
	}
}

struct json_object *jvm_container_json(const struct jvm_container *c)
{
	struct json_object *o = json_object_new_object();
	const struct {
		const char *k;
		const struct jvm_cval *v;
	} vals[] = {
		{"memory_limit", &c->memory_limit},
		{"memory_and_swap_limit", &c->memory_and_swap_limit},
		{"memory_soft_limit", &c->memory_soft_limit},
		{"memory_usage", &c->memory_usage},
		{"memory_max_usage", &c->memory_max_usage},
		{"active_processor_count", &c->active_processor_count},
		{"cpu_quota", &c->cpu_quota},
	};
	uint64_t lim;
	bool from_container;

	if (!o)
		return NULL;
	ADD(o, "found", json_object_new_boolean(c->found));
	if (c->type[0])
		ADD(o, "type", json_object_new_string(c->type));
	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		struct json_object *v = cval(vals[i].v);

		if (v)
			ADD(o, vals[i].k, v);
	}
	if (c->has_physical)
		ADD(o, "physical_memory", u64(c->physical));
	if (jvm_container_believed_limit(c, &lim, &from_container)) {
		ADD(o, "believed_limit", u64(lim));
		ADD(o, "believed_from",
		    json_object_new_string(from_container ? "container"
							  : "physical memory"));
	}
	return o;
}
