/* SPDX-License-Identifier: Apache-2.0 */
/* Fills a diag_input from what a bundle holds: the kernel report, the
 * cgroup state in the manifest, the sidecar's timeline and snapshot. */
#include <json-c/json.h>
#include <stdio.h>

#include "forensics/bundle.h"
#include "kernel/cgroup.h"
#include "forensics/diagnosis.h"
#include "inspect/jvm.h"
#include "kernel/kmsg.h"
#include "base/parse.h"
#include "kernel/procfs.h"
#include "base/util.h"

/* memcg statistics from the kernel report, or from memory.stat. */
struct stats_view {
	const struct kmsg_stat *k;
	size_t nk;
	const struct cgroup_stat *c;
};

static bool stat_get(const struct stats_view *s, const char *name,
		     uint64_t *ret)
{
	for (size_t i = 0; i < s->nk; i++)
		if (streq(s->k[i].name, name)) {
			*ret = s->k[i].value;
			return true;
		}
	return s->c && cgroup_stat_get(s->c, name, ret);
}

/* v1 prints hierarchical totals as total_*; prefer them. */
static uint64_t stat_any(const struct stats_view *s, const char *v2,
			 const char *v1_total, const char *v1)
{
	uint64_t v = 0;

	if (v2 && stat_get(s, v2, &v))
		return v;
	if (v1_total && stat_get(s, v1_total, &v))
		return v;
	if (v1 && stat_get(s, v1, &v))
		return v;
	return 0;
}

static void fill_stats(const struct stats_view *s, struct diag_input *in)
{
	uint64_t v;

	in->have_stats = true;
	in->anon = stat_any(s, "anon", "total_rss", "rss");
	in->file = stat_any(s, "file", "total_cache", "cache");
	in->shmem = stat_any(s, "shmem", "total_shmem", "shmem");
	in->kernel_stack = stat_any(s, "kernel_stack", NULL, NULL);
	in->pagetables = stat_any(s, "pagetables", NULL, NULL);
	in->slab = stat_any(s, "slab", NULL, NULL);
	in->sock = stat_any(s, "sock", NULL, NULL);
	in->percpu = stat_any(s, "percpu", NULL, NULL);
	in->vmalloc = stat_any(s, "vmalloc", NULL, NULL);
	if (stat_get(s, "kernel", &v)) {
		in->kernel = v;
		in->have_kernel_total = true;
	}
}

static void load_report(const struct oom_report *r, struct diag_input *in)
{
	struct stats_view view = {r->stats, r->n_stats, NULL};

	if (r->memcg.present) {
		in->have_usage = true;
		in->usage_bytes = r->memcg.usage_kb * 1024;
		/* v1 prints PAGE_COUNTER_MAX in kB for "no limit" */
		in->limit_bytes = r->memcg.limit_kb >= (1ull << 52)
					  ? UINT64_MAX
					  : r->memcg.limit_kb * 1024;
		strlcpy_safe(in->usage_source, "kernel report at the kill",
			     sizeof(in->usage_source));
	}
	if (r->n_stats) {
		fill_stats(&view, in);
		if (!in->have_kernel_total && r->kmem.present) {
			in->kernel = r->kmem.usage_kb * 1024;
			in->have_kernel_total = true;
		}
	}
	in->group_kill = r->group_kill;
	if (r->n_victims)
		in->victim_pid = r->victims[0].pid;
}

/* The kernel rate-limits its OOM reports (10 per 5 s): a kill may come
 * with no usage and no statistics. The cgroup read the moment its OOM was
 * notified (before the kill) stands in. */
static void load_notification(const struct bundle *b, struct diag_input *in)
{
	struct json_object *man = bundle_manifest((struct bundle *)b), *st, *v;
	struct cgroup_stat stat = {0};
	const char *data;
	size_t len;

	if (!in->have_usage &&
	    json_object_object_get_ex(man, "cgroup_state_at_notification",
				      &st) &&
	    json_object_object_get_ex(st, "usage_bytes", &v) &&
	    json_object_is_type(v, json_type_int)) {
		in->have_usage = true;
		in->usage_bytes = (uint64_t)json_object_get_int64(v);
		strlcpy_safe(in->usage_source, "cgroup at the OOM notification",
			     sizeof(in->usage_source));
		if (json_object_object_get_ex(st, "limit_bytes", &v) &&
		    json_object_is_type(v, json_type_int))
			in->limit_bytes = (uint64_t)json_object_get_int64(v);
	}
	data = bundle_get(b, "cgroup/at-notification/memory.stat", &len);
	if (!in->have_stats && data &&
	    cgroup_parse_stat(data, len, &stat) == 0) {
		struct stats_view view = {NULL, 0, &stat};

		fill_stats(&view, in);
		cgroup_stat_release(&stat);
	}
}

/* Victims the snapshot does not know get a row from the kernel's figures. */
static int add_victims(const struct oom_report *r, struct diag_input *in)
{
	for (size_t i = 0; i < r->n_victims; i++) {
		const struct kmsg_victim *kv = &r->victims[i];
		struct diag_proc *p = NULL;
		void *grown;

		for (size_t j = 0; j < in->n_procs; j++)
			if (in->procs[j].pid == kv->pid)
				p = &in->procs[j];
		if (!p) {
			grown = realloc(in->procs,
					(in->n_procs + 1) * sizeof(*in->procs));
			if (!grown)
				return -ENOMEM;
			in->procs = grown;
			p = &in->procs[in->n_procs++];
			memset(p, 0, sizeof(*p));
			p->pid = kv->pid;
			strlcpy_safe(p->comm, kv->comm, sizeof(p->comm));
			/* the kernel's figures at the kill */
			p->rss_anon_kb = kv->anon_rss_kb;
			p->rss_file_kb = kv->file_rss_kb;
			p->rss_shmem_kb = kv->shmem_rss_kb;
		}
		p->victim = true;
	}
	return 0;
}

static struct json_object *parse_json(const struct bundle *b, const char *dir,
				      const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s%s%s", dir ? dir : "", dir ? "/" : "",
		 name);
	return bundle_get_json(b, path);
}

static uint64_t jget_u64(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, a, &v))
		return 0;
	if (b && !json_object_object_get_ex(v, b, &v))
		return 0;
	return (uint64_t)json_object_get_int64(v);
}

static bool jhas(struct json_object *o, const char *a)
{
	return o && json_object_object_get_ex(o, a, NULL);
}

static void load_jvm(const struct bundle *b, const char *dir,
		     struct diag_proc *p)
{
	char path[256];
	const char *data;
	size_t len;
	struct jvm_heap_info hi;
	struct json_object *trim;
	struct jvm_nmt *nmt = calloc(1, sizeof(*nmt));

	snprintf(path, sizeof(path), "%s/jvm/native_memory.txt", dir);
	data = bundle_get(b, path, &len);
	if (data && nmt && jvm_parse_nmt(data, len, nmt) == 0 && nmt->enabled) {
		p->jvm = p->have_nmt = true;
		p->nmt_committed_kb = nmt->committed / 1024;
		p->nmt_malloc_kb = nmt->malloc / 1024;
		for (size_t i = 0; i < nmt->n_categories && i < DIAG_MAX_NMT;
		     i++) {
			strlcpy_safe(p->nmt[i].name, nmt->categories[i].name,
				     sizeof(p->nmt[i].name));
			p->nmt[i].committed_kb =
				nmt->categories[i].committed / 1024;
			p->nmt[i].malloc_kb = nmt->categories[i].malloc / 1024;
			p->n_nmt = i + 1;
		}
	}
	free(nmt);
	snprintf(path, sizeof(path), "%s/jvm/heap_info.txt", dir);
	data = bundle_get(b, path, &len);
	if (data && jvm_parse_heap_info(data, len, &hi) == 0) {
		p->jvm = p->have_heap = true;
		p->heap_committed_kb = hi.committed / 1024;
		p->heap_used_kb = hi.used / 1024;
		p->heap_max_kb = hi.reserved / 1024;
	}
	trim = parse_json(b, dir, "jvm/trim.json");
	if (!trim) /* a glibc process trimmed through ptrace */
		trim = parse_json(b, dir, "trim.json");
	if (jhas(trim, "rss_before")) {
		p->have_trim = true;
		p->trim_before_kb = jget_u64(trim, "rss_before", NULL) / 1024;
		p->trim_after_kb = jget_u64(trim, "rss_after", NULL) / 1024;
	}
	json_object_put(trim);
}

static void load_smaps(const struct bundle *b, const char *dir,
		       struct diag_proc *p)
{
	struct json_object *ar = parse_json(b, dir, "arenas.json");
	struct json_object *cl = parse_json(b, dir, "classes.json");
	struct json_object *al = parse_json(b, dir, "allocator.json");

	if (ar) {
		p->have_smaps = true;
		p->heap_rss_kb = jget_u64(ar, "main_heap", "rss_kb");
		p->arena_rss_kb = jget_u64(ar, "arena_rss_kb", NULL);
		p->n_arenas = (size_t)jget_u64(ar, "arena_heaps", NULL);
	}
	if (cl)
		p->stack_rss_kb = jget_u64(cl, "thread_stack", "rss_kb") +
				  jget_u64(cl, "stack", "rss_kb");
	if (jhas(al, "in_use_bytes")) {
		p->have_alloc = true;
		p->alloc_inuse_bytes = jget_u64(al, "in_use_bytes", NULL);
		p->alloc_system_bytes = jget_u64(al, "system_bytes", NULL);
		p->alloc_mmap_bytes = jget_u64(al, "mmap_bytes", NULL);
		strlcpy_safe(p->alloc_source, "mallinfo2 (ptrace)",
			     sizeof(p->alloc_source));
	}
	json_object_put(ar);
	json_object_put(cl);
	json_object_put(al);
}

struct proc_scan {
	const struct bundle *b;
	struct diag_input *in;
	int err;
};

static int scan_one(const char *path, const char *data, size_t len, void *ud)
{
	struct proc_scan *s = ud;
	struct proc_status st;
	struct diag_proc *p;
	char dir[64];
	void *grown;
	int n;

	if (!startswith(path, "processes/") || !strstr(path, "/status") ||
	    strlen(path) - strlen("/status") >= sizeof(dir) ||
	    !streq(path + strlen(path) - strlen("/status"), "/status"))
		return 0;
	if (procfs_parse_status(data, len, &st) < 0)
		return 0;
	n = (int)(strlen(path) - strlen("/status"));
	snprintf(dir, sizeof(dir), "%.*s", n, path);
	grown = realloc(s->in->procs,
			(s->in->n_procs + 1) * sizeof(*s->in->procs));
	if (!grown)
		return s->err = -ENOMEM;
	s->in->procs = grown;
	p = &s->in->procs[s->in->n_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = st.pid;
	p->ppid = st.ppid;
	strlcpy_safe(p->comm, st.name, sizeof(p->comm));
	p->rss_anon_kb = st.rss_anon_kb;
	p->rss_file_kb = st.rss_file_kb;
	p->rss_shmem_kb = st.rss_shmem_kb;
	p->swap_kb = st.vm_swap_kb;
	load_smaps(s->b, dir, p);
	load_jvm(s->b, dir, p);
	s->in->have_snapshot = true;
	return 0;
}

/* Trims the sidecar did (--trim), for processes the snapshot lacks them. */
static void load_trims(struct json_object *tl, struct diag_input *in)
{
	struct json_object *trims;

	if (!json_object_object_get_ex(tl, "trims", &trims))
		return;
	for (size_t i = 0; i < json_object_array_length(trims); i++) {
		struct json_object *t = json_object_array_get_idx(trims, i);
		int pid = (int)jget_u64(t, "pid", NULL);

		for (size_t j = 0; j < in->n_procs; j++) {
			struct diag_proc *p = &in->procs[j];

			if (p->pid != pid || p->have_trim)
				continue;
			p->have_trim = true;
			p->trim_before_kb =
				jget_u64(t, "rss_before", NULL) / 1024;
			p->trim_after_kb =
				jget_u64(t, "rss_after", NULL) / 1024;
		}
	}
}

/* timeline.json (oomlens.io/timeline/v1): t_ms is wall-clock ms. */
static int load_timeline(const struct bundle *b, uint64_t kill_ms,
			 struct diag_input *in)
{
	struct json_object *o = parse_json(b, NULL, "timeline.json");
	struct json_object *samples, *snaps;
	size_t n;

	if (!o)
		return 0;
	if (!json_object_object_get_ex(o, "samples", &samples) ||
	    !(n = json_object_array_length(samples))) {
		json_object_put(o);
		return 0;
	}
	in->tl = calloc(n, sizeof(*in->tl));
	if (!in->tl) {
		json_object_put(o);
		return -ENOMEM;
	}
	if (!kill_ms)
		kill_ms = jget_u64(json_object_array_get_idx(samples, n - 1),
				   "t_ms", NULL);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(samples, i);
		struct json_object *procs = NULL;
		struct diag_sample *d = &in->tl[in->n_tl];
		uint64_t t = jget_u64(s, "t_ms", NULL);

		d->t = ((double)t - (double)kill_ms) / 1000.0;
		d->usage = jget_u64(s, "usage", NULL);
		if (json_object_object_get_ex(s, "procs", &procs))
			d->nprocs = (unsigned)json_object_array_length(procs);
		for (size_t j = 0; j < d->nprocs; j++)
			d->anon += 1024 *
				   jget_u64(json_object_array_get_idx(procs, j),
					    "anon_kb", NULL);
		if (!d->usage) /* no cgroup: the RSS sum stands in */
			d->usage = d->anon;
		if (in->limit_bytes == UINT64_MAX && jget_u64(s, "limit", NULL))
			in->limit_bytes = jget_u64(s, "limit", NULL);
		in->n_tl++;
	}
	load_trims(o, in);
	if (json_object_object_get_ex(o, "snapshots", &snaps) &&
	    (n = json_object_array_length(snaps)))
		in->snapshot_age_s =
			((double)kill_ms -
			 (double)jget_u64(
				 json_object_array_get_idx(snaps, n - 1),
				 "t_ms", NULL)) /
			1000.0;
	json_object_put(o);
	return 0;
}

int diagnosis_load_bundle(const struct bundle *b, const struct oom_report *r,
			  uint64_t kill_ms, struct diag_input *ret)
{
	struct proc_scan s = {.b = b, .in = ret};
	int q;

	diag_input_init(ret);
	if (r)
		load_report(r, ret);
	load_notification(b, ret);
	bundle_foreach(b, scan_one, &s);
	if (s.err < 0)
		return s.err;
	if (r && add_victims(r, ret) < 0)
		return -ENOMEM;
	q = load_timeline(b, kill_ms, ret);
	if (q < 0)
		return q;
	diagnosis_load_jvm_facts(b, kill_ms, ret);
	if (!ret->have_usage && ret->n_tl) {
		ret->have_usage = true;
		ret->usage_bytes = ret->tl[ret->n_tl - 1].usage;
		strlcpy_safe(ret->usage_source, "last timeline sample",
			     sizeof(ret->usage_source));
	}
	return 0;
}
