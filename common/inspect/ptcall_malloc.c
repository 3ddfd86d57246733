/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: glibc allocator figures from outside — mallinfo2, malloc_info,
 * malloc_trim — and allocator.json. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/util.h"
#include "ptcall_internal.h"

#define XML_MAX (16u << 20)
#define MAX_ARENAS 4096u

/* glibc's struct mallinfo2: ten size_t */
struct target_mallinfo2 {
	uint64_t f[10];
};

static int session_begin(int pid, const struct ptcall_opts *o,
			 struct ptcall_session **ret, struct ptcall_report *rep)
{
	struct ptcall_session *s;
	int r = ptcall_open(pid, o, &s, rep);

	if (r < 0)
		return r;
	r = ptcall_check_glibc_malloc(s);
	if (r < 0) {
		ptcall_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

static int session_end(struct ptcall_session *s, int r)
{
	int rc = ptcall_close(s);

	return r < 0 ? r : rc;
}

static int call_mallinfo2(struct ptcall_session *s, uint64_t fn,
			  struct ptcall_mallinfo2 *ret)
{
	struct target_mallinfo2 t;
	uint64_t buf, args[1], v;
	int r;

	r = ptcall_scratch(s, sizeof(t), &buf);
	if (r < 0)
		return r;
	args[0] = buf; /* the hidden pointer for the struct return */
	r = ptcall_call(s, fn, args, 1, &v);
	if (r < 0)
		return r;
	r = ptcall_read_mem(s, buf, &t, sizeof(t));
	if (r < 0)
		return r;
	*ret = (struct ptcall_mallinfo2){
		t.f[0], t.f[1], t.f[2], t.f[3], t.f[4],
		t.f[5], t.f[6], t.f[7], t.f[8], t.f[9],
	};
	return 0;
}

int ptcall_mallinfo2(int pid, const struct ptcall_opts *o,
		     struct ptcall_mallinfo2 *ret, struct ptcall_report *rep)
{
	struct ptcall_session *s;
	struct ptcall_mallinfo2 mi = {0};
	uint64_t fn;
	int r;

	r = session_begin(pid, o, &s, rep);
	if (r < 0)
		return r;
	r = ptcall_resolve(s, "mallinfo2", &fn);
	if (r >= 0)
		r = ptcall_attach(s);
	if (r >= 0)
		r = call_mallinfo2(s, fn, &mi);
	r = session_end(s, r);
	if (r >= 0)
		*ret = mi;
	return r;
}

int ptcall_malloc_trim(int pid, const struct ptcall_opts *o, int *ret_released,
		       struct ptcall_report *rep)
{
	struct ptcall_session *s;
	uint64_t fn, args[1] = {0}, v = 0;
	int r;

	r = session_begin(pid, o, &s, rep);
	if (r < 0)
		return r;
	r = ptcall_resolve(s, "malloc_trim", &fn);
	if (r >= 0)
		r = ptcall_attach(s);
	if (r >= 0)
		r = ptcall_call(s, fn, args, 1, &v);
	r = session_end(s, r);
	if (r >= 0)
		*ret_released = (int)(uint32_t)v;
	return r;
}

struct info_fns {
	uint64_t malloc, free, open_memstream, malloc_info, fclose;
};

static int resolve_info_fns(struct ptcall_session *s, struct info_fns *f)
{
	int r = ptcall_resolve(s, "malloc", &f->malloc);

	if (r >= 0)
		r = ptcall_resolve(s, "free", &f->free);
	if (r >= 0)
		r = ptcall_resolve(s, "open_memstream", &f->open_memstream);
	if (r >= 0)
		r = ptcall_resolve(s, "malloc_info", &f->malloc_info);
	if (r >= 0)
		r = ptcall_resolve(s, "fclose", &f->fclose);
	return r;
}

static int call1(struct ptcall_session *s, uint64_t fn, uint64_t a0,
		 uint64_t a1, uint64_t *ret)
{
	uint64_t args[2] = {a0, a1};

	return ptcall_call(s, fn, args, 2, ret);
}

/* Reads the memstream's buffer out of the target and frees it there. */
static int fetch_buffer(struct ptcall_session *s, const struct info_fns *f,
			uint64_t cell, char **ret, size_t *ret_len)
{
	uint64_t loc[2], v;
	_cleanup_free_ char *xml = NULL;
	int r = ptcall_read_mem(s, cell, loc, sizeof(loc));

	if (r < 0)
		return r;
	if (loc[0] == 0)
		return -EFAULT;
	if (loc[1] > XML_MAX) {
		ptcall_why(s, true, "malloc_info output too large");
		r = -E2BIG;
	} else {
		xml = malloc(loc[1] + 1);
		r = xml ? ptcall_read_mem(s, loc[0], xml, loc[1]) : -ENOMEM;
	}
	/* the buffer came from the target's malloc: free it there */
	if (call1(s, f->free, loc[0], 0, &v) < 0 && r == 0)
		r = -EFAULT;
	if (r < 0)
		return r;
	xml[loc[1]] = '\0';
	*ret_len = loc[1];
	*ret = TAKE_PTR(xml);
	return 0;
}

/* malloc_info(0, open_memstream(&buf, &len)) in the target. The two
 * out-pointers live in a malloc'd cell, not on the stack: if a deadline
 * abandons the FILE, a later flush writes into a leaked block, not into
 * someone's stack. */
static int call_malloc_info(struct ptcall_session *s, const struct info_fns *f,
			    char **ret, size_t *ret_len)
{
	uint64_t cell = 0, fp = 0, v, zero[2] = {0, 0};
	int r;

	r = call1(s, f->malloc, sizeof(zero), 0, &cell);
	if (r < 0)
		return r;
	if (cell == 0)
		return -ENOMEM;
	r = ptcall_write_mem(s, cell, zero, sizeof(zero));
	if (r >= 0)
		r = call1(s, f->open_memstream, cell, cell + 8, &fp);
	if (r >= 0 && fp == 0)
		r = -ENOMEM;
	if (r >= 0)
		r = call1(s, f->malloc_info, 0, fp, &v);
	if (r >= 0 && (int)(uint32_t)v != 0)
		r = -EIO;
	if (fp && r != -ETIMEDOUT && call1(s, f->fclose, fp, 0, &v) < 0)
		r = r < 0 ? r : -EFAULT;
	if (r >= 0)
		r = fetch_buffer(s, f, cell, ret, ret_len);
	if (r != -ETIMEDOUT && r != -ESRCH)
		call1(s, f->free, cell, 0, &v);
	return r;
}

int ptcall_malloc_stats(int pid, const struct ptcall_opts *o,
			struct ptcall_mallinfo2 *ret_mi, char **ret_xml,
			size_t *ret_len, struct ptcall_report *rep)
{
	struct ptcall_session *s;
	struct ptcall_mallinfo2 mi = {0};
	struct info_fns f;
	uint64_t fn = 0;
	char *xml = NULL;
	size_t len = 0;
	int r;

	r = session_begin(pid, o, &s, rep);
	if (r < 0)
		return r;
	if (ret_mi)
		r = ptcall_resolve(s, "mallinfo2", &fn);
	if (r >= 0 && ret_xml)
		r = resolve_info_fns(s, &f);
	if (r >= 0)
		r = ptcall_attach(s);
	if (r >= 0 && ret_mi)
		r = call_mallinfo2(s, fn, &mi);
	if (r >= 0 && ret_xml)
		r = call_malloc_info(s, &f, &xml, &len);
	r = session_end(s, r);
	if (r < 0) {
		free(xml);
		return r;
	}
	if (ret_mi)
		*ret_mi = mi;
	if (ret_xml)
		*ret_xml = xml;
	if (ret_len)
		*ret_len = len;
	return 0;
}

/* ---- malloc_info XML ---- */

/* The value of attribute name="…" inside the tag [p, end). */
static int xml_attr(const char *p, const char *end, const char *name,
		    uint64_t *ret)
{
	size_t n = strlen(name);

	for (const char *q = p; q + n + 2 < end; q++) {
		if (strncmp(q, name, n) == 0 && q[n] == '=' &&
		    q[n + 1] == '"' && (q == p || q[-1] == ' ')) {
			const char *v = q + n + 2;
			const char *close = memchr(v, '"', (size_t)(end - v));

			if (!close)
				return -EBADMSG;
			return parse_u64_n(v, (size_t)(close - v), ret) < 0
				       ? -EBADMSG
				       : 0;
		}
	}
	return -ENOENT;
}

static bool tag_is(const char *p, const char *end, const char *tag,
		   const char *type)
{
	size_t n = strlen(tag);
	char want[32];
	int w;

	if ((size_t)(end - p) < n + 1 || strncmp(p, tag, n) != 0 || p[n] != ' ')
		return false;
	w = snprintf(want, sizeof(want), "type=\"%s\"", type);
	if (w < 0 || (size_t)w >= sizeof(want))
		return false;
	return memmem(p, (size_t)(end - p), want, (size_t)w) != NULL;
}

static int xml_tag(struct ptcall_arena *a, const char *p, const char *end,
		   struct ptcall_malloc_info *mi, bool in_heap)
{
	static const struct {
		const char *tag, *type, *attr;
		size_t off;
	} rules[] = {
#define R(t, ty, at, f) {t, ty, at, offsetof(struct ptcall_arena, f)}
		R("total", "fast", "count", fast_count),
		R("total", "fast", "size", fast_bytes),
		R("total", "rest", "count", rest_count),
		R("total", "rest", "size", rest_bytes),
		R("system", "current", "size", system_current),
		R("system", "max", "size", system_max),
		R("aspace", "total", "size", aspace_total),
		R("aspace", "mprotect", "size", aspace_mprotect),
		R("aspace", "subheaps", "size", subheaps),
#undef R
	};
	int r;

	if (!in_heap && tag_is(p, end, "total", "mmap")) {
		r = xml_attr(p, end, "count", &mi->mmap_count);
		return r < 0 ? r : xml_attr(p, end, "size", &mi->mmap_bytes);
	}
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
		if (!tag_is(p, end, rules[i].tag, rules[i].type))
			continue;
		r = xml_attr(p, end, rules[i].attr,
			     (uint64_t *)((char *)a + rules[i].off));
		if (r < 0)
			return r;
	}
	return 0;
}

static int push_arena(struct ptcall_malloc_info *mi, size_t *alloc,
		      const char *p, const char *end)
{
	uint64_t nr;

	if (mi->n_arenas >= MAX_ARENAS)
		return -E2BIG;
	if (mi->n_arenas == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 8;
		struct ptcall_arena *a =
			reallocarray(mi->arenas, na, sizeof(*a));

		if (!a)
			return -ENOMEM;
		mi->arenas = a;
		*alloc = na;
	}
	if (xml_attr(p, end, "nr", &nr) < 0 || nr > MAX_ARENAS)
		return -EBADMSG;
	memset(&mi->arenas[mi->n_arenas], 0, sizeof(mi->arenas[0]));
	mi->arenas[mi->n_arenas++].nr = (int)nr;
	return 0;
}

static int parse_tags(const char *xml, size_t len,
		      struct ptcall_malloc_info *mi)
{
	const char *p = xml, *end = xml + len;
	bool in_heap = false, seen_malloc = false;
	size_t alloc = 0;
	int r = 0;

	while (r >= 0 && (p = memchr(p, '<', (size_t)(end - p)))) {
		const char *close = memchr(p, '>', (size_t)(end - p));

		if (!close)
			return -EBADMSG;
		p++;
		if (startswith(p, "malloc ") || startswith(p, "malloc>"))
			seen_malloc = true;
		else if (startswith(p, "heap "))
			in_heap = true, r = push_arena(mi, &alloc, p, close);
		else if (startswith(p, "/heap"))
			in_heap = false;
		else if (seen_malloc)
			r = xml_tag(in_heap ? &mi->arenas[mi->n_arenas - 1]
					    : &mi->total,
				    p, close, mi, in_heap);
		p = close + 1;
	}
	if (r >= 0 && !seen_malloc)
		r = -EBADMSG;
	return r;
}

int ptcall_parse_malloc_info(const char *xml, size_t len,
			     struct ptcall_malloc_info *ret)
{
	struct ptcall_malloc_info mi = {0};
	int r;

	mi.total.nr = -1;
	r = parse_tags(xml, len, &mi);
	if (r < 0) {
		ptcall_malloc_info_release(&mi);
		return r;
	}
	*ret = mi;
	return 0;
}

void ptcall_malloc_info_release(struct ptcall_malloc_info *mi)
{
	free(mi->arenas);
	mi->arenas = NULL;
	mi->n_arenas = 0;
}
