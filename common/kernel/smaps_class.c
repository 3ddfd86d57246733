/* SPDX-License-Identifier: Apache-2.0 */
/* Mapping classes and glibc arena heaps, from smaps alone.
 *
 * glibc (64-bit) allocates each non-main arena heap as a 64 MiB
 * (HEAP_MAX_SIZE) reservation aligned to 64 MiB: the used part rw-p, the
 * rest ---p. So an arena heap is an anonymous rw-p mapping starting on a
 * 64 MiB boundary, followed by an anonymous ---p mapping ending on a
 * 64 MiB multiple from that start; or a rw-p run that is a whole multiple
 * of 64 MiB by itself (full heaps whose VMAs merged). */
#include <inttypes.h>
#include <json-c/json.h>

#include "kernel/smaps.h"
#include "base/util.h"

#define ARENA_ALIGN (64ull << 20)

static const char *const class_names[_SMAPS_C_MAX] = {
	[SMAPS_C_HEAP] = "heap",
	[SMAPS_C_ARENA] = "arena",
	[SMAPS_C_ANON] = "anon",
	[SMAPS_C_THREAD_STACK] = "thread_stack",
	[SMAPS_C_STACK] = "stack",
	[SMAPS_C_FILE_CODE] = "file_code",
	[SMAPS_C_FILE_DATA] = "file_data",
	[SMAPS_C_SHMEM] = "shmem",
	[SMAPS_C_KERNEL] = "kernel",
};

const char *smaps_class_name(enum smaps_class c)
{
	return (unsigned)c < _SMAPS_C_MAX ? class_names[c] : "unknown";
}

static bool is_anon(const struct smaps_mapping *m)
{
	return m->inode == 0 && m->perms[3] == 'p' &&
	       (m->name[0] == '\0' || startswith(m->name, "[anon:"));
}

static bool is_shmem(const struct smaps_mapping *m)
{
	static const char *const prefixes[] = {
		"/memfd:", "/dev/shm/", "/SYSV", "/dev/zero", "[anon_shmem",
	};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (startswith(m->name, prefixes[i]))
			return true;
	return m->perms[3] == 's' && m->name[0] != '/';
}

/* Everything but arenas and thread stacks, which need neighbours. */
static enum smaps_class classify_one(const struct smaps_mapping *m)
{
	if (streq(m->name, "[heap]"))
		return SMAPS_C_HEAP;
	if (streq(m->name, "[stack]"))
		return SMAPS_C_STACK;
	if (streq(m->name, "[vdso]") || startswith(m->name, "[vvar") ||
	    streq(m->name, "[vsyscall]") || streq(m->name, "[uprobes]"))
		return SMAPS_C_KERNEL;
	if (is_shmem(m))
		return SMAPS_C_SHMEM;
	if (m->name[0] == '/' || m->inode != 0)
		return m->perms[2] == 'x' ? SMAPS_C_FILE_CODE
					  : SMAPS_C_FILE_DATA;
	return SMAPS_C_ANON;
}

/* Returns how many mappings starting at i form one arena run (1 or 2),
 * 0 when i does not start one. */
static size_t arena_run(const struct smaps *s, size_t i)
{
	const struct smaps_mapping *m = &s->m[i], *g;

	if (!is_anon(m) || !streq(m->perms, "rw-p") ||
	    m->start % ARENA_ALIGN != 0)
		return 0;
	if (i + 1 < s->n) {
		g = &s->m[i + 1];
		if (is_anon(g) && streq(g->perms, "---p") &&
		    g->start == m->end &&
		    (g->end - m->start) % ARENA_ALIGN == 0)
			return 2;
	}
	return (m->end - m->start) % ARENA_ALIGN == 0 ? 1 : 0;
}

static int add_heap(struct smaps_summary *sum, const struct smaps *s, size_t i,
		    size_t run)
{
	const struct smaps_mapping *m = &s->m[i];
	uint64_t end = s->m[i + run - 1].end;
	struct smaps_arena_heap *h, *nh;

	nh = realloc(sum->heaps, (sum->n_heaps + 1) * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	sum->heaps = nh;
	h = &nh[sum->n_heaps++];
	h->start = m->start;
	h->reserved_kb = (end - m->start) >> 10;
	h->size_kb = (m->end - m->start) >> 10;
	h->rss_kb = smaps_get(s, i, SMAPS_F_RSS);
	h->swap_kb = smaps_get(s, i, SMAPS_F_SWAP);
	sum->n_arena_heaps += (end - m->start) / ARENA_ALIGN;
	sum->arena_reserved_kb += h->reserved_kb;
	sum->arena_size_kb += h->size_kb;
	sum->arena_rss_kb += h->rss_kb;
	sum->arena_swap_kb += h->swap_kb;
	return 0;
}

static bool is_thread_stack(const struct smaps *s, size_t i,
			    const enum smaps_class *cls)
{
	const struct smaps_mapping *m = &s->m[i], *g;

	if (i == 0 || !is_anon(m) || !streq(m->perms, "rw-p"))
		return false;
	g = &s->m[i - 1];
	return cls[i - 1] == SMAPS_C_ANON && is_anon(g) &&
	       streq(g->perms, "---p") && g->end == m->start;
}

static void add_to_class(struct smaps_summary *sum, const struct smaps *s,
			 size_t i)
{
	struct smaps_class_sum *c = &sum->cls[sum->class_of[i]];
	uint64_t size = (s->m[i].end - s->m[i].start) >> 10;
	uint64_t rss = smaps_get(s, i, SMAPS_F_RSS);
	uint64_t swap = smaps_get(s, i, SMAPS_F_SWAP);

	c->count++;
	c->size_kb += size;
	c->rss_kb += rss;
	c->swap_kb += swap;
	sum->total_size_kb += size;
	sum->total_rss_kb += rss;
	sum->total_swap_kb += swap;
	sum->total_pss_kb += smaps_get(s, i, SMAPS_F_PSS);
	if (sum->class_of[i] == SMAPS_C_HEAP) {
		sum->heap_size_kb += size;
		sum->heap_rss_kb += rss;
	}
}

int smaps_classify(const struct smaps *s, struct smaps_summary *ret)
{
	struct smaps_summary sum = {0};
	int r;

	sum.class_of = calloc(s->n ? s->n : 1, sizeof(*sum.class_of));
	if (!sum.class_of)
		return -ENOMEM;
	for (size_t i = 0; i < s->n;) {
		size_t run = arena_run(s, i);

		if (run == 0) {
			sum.class_of[i] = classify_one(&s->m[i]);
			i++;
			continue;
		}
		r = add_heap(&sum, s, i, run);
		if (r < 0) {
			smaps_summary_release(&sum);
			return r;
		}
		for (size_t k = 0; k < run; k++)
			sum.class_of[i + k] = SMAPS_C_ARENA;
		i += run;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (sum.class_of[i] == SMAPS_C_ANON &&
		    is_thread_stack(s, i, sum.class_of))
			sum.class_of[i] = SMAPS_C_THREAD_STACK;
		add_to_class(&sum, s, i);
	}
	*ret = sum;
	return 0;
}

void smaps_summary_release(struct smaps_summary *sum)
{
	free(sum->heaps);
	free(sum->class_of);
	memset(sum, 0, sizeof(*sum));
}

struct json_object *smaps_summary_classes_json(const struct smaps_summary *s)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	for (size_t c = 0; c < _SMAPS_C_MAX; c++) {
		struct json_object *e = json_object_new_object();
		const struct smaps_class_sum *cs = &s->cls[c];

		json_object_object_add(e, "count",
				       json_object_new_uint64(cs->count));
		json_object_object_add(e, "size_kb",
				       json_object_new_uint64(cs->size_kb));
		json_object_object_add(e, "rss_kb",
				       json_object_new_uint64(cs->rss_kb));
		json_object_object_add(e, "swap_kb",
				       json_object_new_uint64(cs->swap_kb));
		json_object_object_add(o, class_names[c], e);
	}
	json_object_object_add(o, "total_size_kb",
			       json_object_new_uint64(s->total_size_kb));
	json_object_object_add(o, "total_rss_kb",
			       json_object_new_uint64(s->total_rss_kb));
	json_object_object_add(o, "total_pss_kb",
			       json_object_new_uint64(s->total_pss_kb));
	json_object_object_add(o, "total_swap_kb",
			       json_object_new_uint64(s->total_swap_kb));
	return o;
}

static struct json_object *heap_json(const struct smaps_arena_heap *h)
{
	struct json_object *e = json_object_new_object();
	char b[32];

	snprintf(b, sizeof(b), "0x%" PRIx64, h->start);
	json_object_object_add(e, "start", json_object_new_string(b));
	json_object_object_add(e, "reserved_kb",
			       json_object_new_uint64(h->reserved_kb));
	json_object_object_add(e, "committed_kb",
			       json_object_new_uint64(h->size_kb));
	json_object_object_add(e, "rss_kb", json_object_new_uint64(h->rss_kb));
	json_object_object_add(e, "swap_kb",
			       json_object_new_uint64(h->swap_kb));
	return e;
}

struct json_object *smaps_summary_arenas_json(const struct smaps_summary *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *main_heap = json_object_new_object();
	struct json_object *heaps = json_object_new_array();

	if (!o || !main_heap || !heaps) {
		json_object_put(o);
		json_object_put(main_heap);
		json_object_put(heaps);
		return NULL;
	}
	json_object_object_add(main_heap, "size_kb",
			       json_object_new_uint64(s->heap_size_kb));
	json_object_object_add(main_heap, "rss_kb",
			       json_object_new_uint64(s->heap_rss_kb));
	json_object_object_add(o, "main_heap", main_heap);
	json_object_object_add(o, "arena_heaps",
			       json_object_new_uint64(s->n_arena_heaps));
	json_object_object_add(o, "arena_reserved_kb",
			       json_object_new_uint64(s->arena_reserved_kb));
	json_object_object_add(o, "arena_committed_kb",
			       json_object_new_uint64(s->arena_size_kb));
	json_object_object_add(o, "arena_rss_kb",
			       json_object_new_uint64(s->arena_rss_kb));
	json_object_object_add(o, "arena_swap_kb",
			       json_object_new_uint64(s->arena_swap_kb));
	json_object_object_add(
		o, "malloc_rss_kb",
		json_object_new_uint64(s->heap_rss_kb + s->arena_rss_kb));
	for (size_t i = 0; i < s->n_heaps; i++)
		json_object_array_add(heaps, heap_json(&s->heaps[i]));
	json_object_object_add(o, "heaps", heaps);
	json_object_object_add(
		o, "rule",
		json_object_new_string("64 MiB-aligned anonymous rw-p (+ ---p "
				       "rest) = one glibc arena heap"));
	return o;
}
