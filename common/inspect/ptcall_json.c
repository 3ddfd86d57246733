/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: allocator.json for snapshots (mallinfo2 + malloc_info arenas). */
#include <json-c/json.h>
#include <stdlib.h>

#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "inspect/ptcall.h"
#include "base/util.h"

static int put_u64(struct json_object *o, const char *key, uint64_t v)
{
	struct json_object *n = json_object_new_uint64(v);

	if (!n)
		return -ENOMEM;
	if (json_object_object_add(o, key, n) < 0) {
		json_object_put(n);
		return -ENOMEM;
	}
	return 0;
}

static int put_obj(struct json_object *o, const char *key,
		   struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *mallinfo_json(const struct ptcall_mallinfo2 *mi)
{
	struct json_object *o = json_object_new_object();
	const struct {
		const char *k;
		uint64_t v;
	} f[] = {
		{"arena", mi->arena},	    {"ordblks", mi->ordblks},
		{"smblks", mi->smblks},	    {"hblks", mi->hblks},
		{"hblkhd", mi->hblkhd},	    {"usmblks", mi->usmblks},
		{"fsmblks", mi->fsmblks},   {"uordblks", mi->uordblks},
		{"fordblks", mi->fordblks}, {"keepcost", mi->keepcost},
	};

	for (size_t i = 0; o && i < ARRAY_SIZE(f); i++)
		if (put_u64(o, f[i].k, f[i].v) < 0) {
			json_object_put(o);
			return NULL;
		}
	return o;
}

static struct json_object *arena_json(const struct ptcall_arena *a)
{
	struct json_object *o = json_object_new_object();
	uint64_t free_bytes = a->fast_bytes + a->rest_bytes;
	uint64_t in_use = a->system_current > free_bytes
				  ? a->system_current - free_bytes
				  : 0;
	int r = o ? 0 : -ENOMEM;

	if (r >= 0)
		r = put_obj(o, "nr", json_object_new_int(a->nr));
	if (r >= 0)
		r = put_u64(o, "system_bytes", a->system_current);
	if (r >= 0)
		r = put_u64(o, "system_max_bytes", a->system_max);
	if (r >= 0)
		r = put_u64(o, "free_bytes", free_bytes);
	if (r >= 0)
		r = put_u64(o, "in_use_bytes", in_use);
	if (r >= 0)
		r = put_u64(o, "free_chunks", a->fast_count + a->rest_count);
	if (r >= 0)
		r = put_u64(o, "fastbin_bytes", a->fast_bytes);
	if (r >= 0)
		r = put_u64(o, "aspace_bytes", a->aspace_total);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *arenas_json(const struct ptcall_malloc_info *info)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && info && i < info->n_arenas; i++) {
		struct json_object *e = arena_json(&info->arenas[i]);

		if (!e || json_object_array_add(a, e) < 0) {
			json_object_put(e);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

static struct json_object *probe_json(const struct ptcall_report *rep)
{
	struct json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM;

	if (r >= 0 && rep)
		r = put_obj(o, "tid", json_object_new_int(rep->tid));
	if (r >= 0 && rep)
		r = put_u64(o, "stopped_us", rep->stopped_us);
	if (r >= 0 && rep)
		r = put_u64(o, "total_us", rep->total_us);
	if (r >= 0 && rep)
		r = put_u64(o, "calls", rep->calls);
	if (r < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int ptcall_allocator_json_from(const struct ptcall_mallinfo2 *mi,
			       const struct ptcall_malloc_info *info,
			       const struct ptcall_report *rep,
			       struct json_object **ret)
{
	struct json_object *o = json_object_new_object();
	int r = o ? 0 : -ENOMEM;

	if (r >= 0)
		r = put_obj(o, "source", json_object_new_string("ptrace"));
	if (r >= 0)
		r = put_obj(o, "allocator", json_object_new_string("glibc"));
	if (r >= 0)
		r = put_obj(o, "mallinfo2", mallinfo_json(mi));
	if (r >= 0)
		r = put_u64(o, "in_use_bytes", mi->uordblks + mi->hblkhd);
	if (r >= 0)
		r = put_u64(o, "system_bytes", mi->arena + mi->hblkhd);
	if (r >= 0)
		r = put_u64(o, "mmap_bytes", mi->hblkhd);
	/* held by glibc, not in use: what malloc_trim can give back */
	if (r >= 0)
		r = put_u64(o, "retained_bytes", mi->fordblks);
	if (r >= 0)
		r = put_u64(o, "releasable_top_bytes", mi->keepcost);
	if (r >= 0)
		r = put_u64(o, "arena_count", info ? info->n_arenas : 0);
	if (r >= 0)
		r = put_obj(o, "arenas", arenas_json(info));
	if (r >= 0)
		r = put_obj(o, "probe", probe_json(rep));
	if (r < 0) {
		json_object_put(o);
		return r;
	}
	*ret = o;
	return 0;
}

int ptcall_allocator_json(int pid, const struct ptcall_opts *o,
			  struct json_object **ret, struct ptcall_report *rep)
{
	struct ptcall_report own;
	struct ptcall_mallinfo2 mi;
	struct ptcall_malloc_info info = {0};
	_cleanup_free_ char *xml = NULL;
	size_t len = 0;
	int r;

	if (!rep)
		rep = &own;
	r = ptcall_malloc_stats(pid, o, &mi, &xml, &len, rep);
	if (r < 0)
		return r;
	r = ptcall_parse_malloc_info(xml, len, &info);
	if (r < 0)
		return r;
	r = ptcall_allocator_json_from(&mi, &info, rep, ret);
	ptcall_malloc_info_release(&info);
	return r;
}

static struct json_object *refusal_json(int err,
					const struct ptcall_report *rep)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (put_obj(o, "source", json_object_new_string("ptrace")) < 0 ||
	    put_obj(o, "error", json_object_new_string(strerror(-err))) < 0 ||
	    put_obj(o, "reason", json_object_new_string(rep->reason)) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int ptcall_write_allocator_json(int proc_fd, int pid, int dir_fd,
				unsigned timeout_ms)
{
	struct ptcall_opts o = {proc_fd, timeout_ms};
	struct ptcall_report rep;
	struct json_object *j = NULL;
	const char *s;
	int r = ptcall_allocator_json(pid, &o, &j, &rep);

	if (r < 0)
		j = refusal_json(r, &rep);
	if (!j)
		return -ENOMEM;
	s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY);
	r = s ? write_file_atomic_at(dir_fd, BP_P_ALLOCATOR, s, strlen(s),
				     MODE_PRIVATE_FILE)
	      : -ENOMEM;
	json_object_put(j);
	return r;
}
