/* SPDX-License-Identifier: Apache-2.0 */
/* JSON renderings of the parsed jcmd replies (bytes, not KB). */
#include <inttypes.h>

#include "inspect/jvm.h"

static int nmt_category_json(const struct jvm_nmt_category *c,
			     struct strbuf *sb)
{
	int r = strbuf_adds(sb, "{\"name\":");

	if (r == 0)
		r = strbuf_add_json_str(sb, c->name, strlen(c->name));
	if (r == 0)
		r = strbuf_addf(
			sb, ",\"reserved\":%" PRIu64 ",\"committed\":%" PRIu64,
			c->reserved, c->committed);
	if (r == 0 && c->has_malloc)
		r = strbuf_addf(
			sb, ",\"malloc\":%" PRIu64 ",\"malloc_count\":%" PRIu64,
			c->malloc, c->malloc_count);
	if (r == 0 && c->has_mmap)
		r = strbuf_addf(sb,
				",\"mmap_reserved\":%" PRIu64
				",\"mmap_committed\":%" PRIu64,
				c->mmap_reserved, c->mmap_committed);
	if (r == 0 && c->has_arena)
		r = strbuf_addf(
			sb, ",\"arena\":%" PRIu64 ",\"arena_count\":%" PRIu64,
			c->arena, c->arena_count);
	if (r == 0 && c->has_stack)
		r = strbuf_addf(sb,
				",\"stack_reserved\":%" PRIu64
				",\"stack_committed\":%" PRIu64,
				c->stack_reserved, c->stack_committed);
	if (r == 0 && c->threads >= 0)
		r = strbuf_addf(sb, ",\"threads\":%" PRId64, c->threads);
	if (r == 0)
		r = strbuf_addch(sb, '}');
	return r;
}

int jvm_nmt_to_json(const struct jvm_nmt *n, struct strbuf *sb)
{
	int r;

	if (!n->enabled)
		return strbuf_adds(
			sb, "{\"enabled\":false,\"note\":\"NMT is not enabled: "
			    "start the JVM with "
			    "-XX:NativeMemoryTracking=summary\"}");
	r = strbuf_addf(
		sb,
		"{\"enabled\":true,\"unit\":\"bytes\",\"reserved\":%" PRIu64
		",\"committed\":%" PRIu64 ",\"malloc\":%" PRIu64
		",\"malloc_count\":%" PRIu64 ",\"mmap_reserved\":%" PRIu64
		",\"mmap_committed\":%" PRIu64 ",\"threads\":%" PRId64
		",\"categories\":[",
		n->reserved, n->committed, n->malloc, n->malloc_count,
		n->mmap_reserved, n->mmap_committed, n->threads);
	for (size_t i = 0; r == 0 && i < n->n_categories; i++) {
		if (i)
			r = strbuf_addch(sb, ',');
		if (r == 0)
			r = nmt_category_json(&n->categories[i], sb);
	}
	if (r == 0)
		r = strbuf_adds(sb, "]}");
	return r;
}

int jvm_heap_info_to_json(const struct jvm_heap_info *hi, struct strbuf *sb)
{
	int r = strbuf_addf(sb,
			    "{\"unit\":\"bytes\",\"collector\":\"%s\","
			    "\"committed\":%" PRIu64 ",\"used\":%" PRIu64
			    ",\"max\":%" PRIu64 ",\"region_size\":%" PRIu64,
			    hi->collector, hi->committed, hi->used,
			    hi->reserved, hi->region_size);

	if (r == 0 && hi->has_metaspace)
		r = strbuf_addf(
			sb,
			",\"metaspace\":{\"used\":%" PRIu64
			",\"committed\":%" PRIu64 ",\"reserved\":%" PRIu64
			"},\"class_space\":{\"used\":%" PRIu64
			",\"committed\":%" PRIu64 ",\"reserved\":%" PRIu64 "}",
			hi->metaspace_used, hi->metaspace_committed,
			hi->metaspace_reserved, hi->class_used,
			hi->class_committed, hi->class_reserved);
	if (r == 0)
		r = strbuf_adds(sb, ",\"spaces\":[");
	for (size_t i = 0; r == 0 && i < hi->n_spaces; i++) {
		const struct jvm_heap_space *s = &hi->spaces[i];

		r = strbuf_adds(sb, i ? ",{\"name\":" : "{\"name\":");
		if (r == 0)
			r = strbuf_add_json_str(sb, s->name, strlen(s->name));
		if (r == 0)
			r = strbuf_addf(sb,
					",\"committed\":%" PRIu64
					",\"used\":%" PRIu64 ",\"max\":%" PRIu64
					",\"start\":%" PRIu64
					",\"end\":%" PRIu64 "}",
					s->committed, s->used, s->reserved,
					s->start, s->end);
	}
	if (r == 0)
		r = strbuf_adds(sb, "]}");
	return r;
}

int jvm_malloc_info_to_json(const struct jvm_malloc_info *m, struct strbuf *sb)
{
	uint64_t free_b = m->free_fast + m->free_rest;
	uint64_t in_use =
		m->system_current > free_b ? m->system_current - free_b : 0;
	int r = strbuf_addf(
		sb,
		"{\"unit\":\"bytes\",\"system_current\":%" PRIu64
		",\"system_max\":%" PRIu64 ",\"free\":%" PRIu64
		",\"free_chunks\":%" PRIu64 ",\"in_use\":%" PRIu64
		",\"mmap_count\":%" PRIu64 ",\"mmap_bytes\":%" PRIu64
		",\"arena_count\":%zu,\"arenas\":[",
		m->system_current, m->system_max, free_b, m->free_count, in_use,
		m->mmap_count, m->mmap_bytes, m->n_arenas);

	for (size_t i = 0; r == 0 && i < m->n_arenas; i++) {
		const struct jvm_malloc_arena *a = &m->arenas[i];

		r = strbuf_addf(sb,
				"%s{\"nr\":%d,\"system_current\":%" PRIu64
				",\"system_max\":%" PRIu64 ",\"free\":%" PRIu64
				",\"free_chunks\":%" PRIu64 "}",
				i ? "," : "", a->nr, a->system_current,
				a->system_max, a->free_fast + a->free_rest,
				a->free_count);
	}
	if (r == 0)
		r = strbuf_adds(sb, "]}");
	return r;
}

int jvm_trim_to_json(const struct jvm_trim_result *t, struct strbuf *sb)
{
	int64_t diff = (int64_t)t->rss_after - (int64_t)t->rss_before;
	int r = strbuf_addf(sb,
			    "{\"unit\":\"bytes\",\"rss_before\":%" PRIu64
			    ",\"rss_after\":%" PRIu64 ",\"rss_diff\":%" PRId64
			    ",\"duration_us\":%" PRIu64 ",\"command\":",
			    t->rss_before, t->rss_after, diff, t->duration_us);

	if (r == 0)
		r = strbuf_add_json_str(sb, t->command, strlen(t->command));
	if (r == 0)
		r = strbuf_adds(sb, ",\"output\":");
	if (r == 0)
		r = strbuf_add_json_str(sb, t->output, strlen(t->output));
	if (r == 0)
		r = strbuf_addch(sb, '}');
	return r;
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
