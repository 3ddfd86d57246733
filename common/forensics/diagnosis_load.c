/* SPDX-License-Identifier: Apache-2.0 */
/* Fills a diag_input from what a bundle holds: the kernel report, the
 * cgroup state in the manifest, the sidecar's timeline and snapshot. */
#include <json-c/json.h>
#include <stdio.h>

#include "base/bundle_paths.h"
#include "forensics/bundle.h"
#include "kernel/cgroup.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/registry.h"
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

static uint64_t mul_kib(uint64_t kb)
{
	return kb > UINT64_MAX / 1024 ? UINT64_MAX : kb * 1024;
}

/* limit_bytes of a cgroup state in the manifest: a number, or a string
 * ("unlimited", "absent") that means no limit to use. */
static bool state_limit(struct diag_input *in, struct json_object *st,
			uint64_t *ret)
{
	struct json_object *v = jget(st, "limit_bytes");

	if (v && json_object_is_type(v, json_type_string))
		return false;
	return jget_u64(&in->notes, st, "limit_bytes", ret);
}

static void set_usage(struct diag_input *in, uint64_t usage, const char *src)
{
	in->have_usage = true;
	in->usage_bytes = usage;
	strlcpy_safe(in->usage_source, src, sizeof(in->usage_source));
}

static void set_limit(struct diag_input *in, uint64_t limit, const char *src)
{
	in->limit_bytes = limit;
	strlcpy_safe(in->limit_source, src, sizeof(in->limit_source));
}

static void load_report(const struct oom_report *r, struct diag_input *in)
{
	struct stats_view view = {r->stats, r->n_stats, NULL};

	if (r->memcg.present) {
		set_usage(in, mul_kib(r->memcg.usage_kb),
			  "kernel report at the kill");
		/* v1 prints PAGE_COUNTER_MAX in kB for "no limit" */
		set_limit(in,
			  r->memcg.limit_kb >= (1ull << 52)
				  ? UINT64_MAX
				  : r->memcg.limit_kb * 1024,
			  "kernel report at the kill");
	}
	if (r->n_stats) {
		fill_stats(&view, in);
		if (!in->have_kernel_total && r->kmem.present) {
			in->kernel = mul_kib(r->kmem.usage_kb);
			in->have_kernel_total = true;
		}
	}
	in->group_kill = r->group_kill;
	if (r->n_victims)
		in->victim_pid = r->victims[0].pid;
}

/* The kernel rate-limits its OOM reports (10 per 5 s), a ring overrun
 * loses them, /dev/kmsg may be unreadable: a kill may come with no usage
 * and no statistics. The cgroup read the moment its OOM was notified
 * (before the kill) stands in; usage and limit are taken together, from
 * the one read of the one cgroup. */
static void load_notification(const struct bundle *b, struct diag_input *in)
{
	struct json_object *man = bundle_manifest((struct bundle *)b), *st;
	struct cgroup_stat stat = {0};
	const char *data;
	uint64_t v;
	size_t len;

	jget_where(&in->notes, BP_MANIFEST);
	st = jget_obj(&in->notes, man, "cgroup_state_at_notification");
	if (!in->have_usage && jget_u64(&in->notes, st, "usage_bytes", &v)) {
		set_usage(in, v, "cgroup at the OOM notification");
		/* "unlimited" (a string) leaves no limit */
		if (state_limit(in, st, &v))
			set_limit(in, v, "cgroup at the OOM notification");
	}
	data = bundle_get(b, "cgroup/at-notification/memory.stat", &len);
	if (!in->have_stats && data &&
	    cgroup_parse_stat(data, len, &stat) == 0) {
		struct stats_view view = {NULL, 0, &stat};

		fill_stats(&view, in);
		cgroup_stat_release(&stat);
	}
}

/* A cgroup value file of the bundle's cgroup/ (read after the kill). */
static bool raw_value(const struct bundle *b, const char *name, uint64_t *ret)
{
	char path[96];
	const char *data;
	size_t len;

	snprintf(path, sizeof(path), "cgroup/%s", name);
	data = bundle_get(b, path, &len);
	while (data && len && (data[len - 1] == '\n' || data[len - 1] == ' '))
		len--;
	return data && len && parse_u64_n(data, len, ret) == 0;
}

/* No reading at the kill nor at the notification: the cgroup's peak (v1
 * memory.max_usage_in_bytes, v2 memory.peak, read after the kill; the
 * OOM happened at it, unless the cgroup was reused since). The limit, when
 * still unknown, from the same read. */
static void load_peak(const struct bundle *b, struct diag_input *in)
{
	struct json_object *man = bundle_manifest((struct bundle *)b), *st;
	bool v2 = streq(jget_str(&in->notes, man, "cgroup_mode") ?: "", "v2");
	const char *peak_file =
		v2 ? "memory.peak" : "memory.max_usage_in_bytes";
	const char *limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
	char src[64];
	uint64_t v;

	jget_where(&in->notes, BP_MANIFEST);
	st = jget_obj(&in->notes, man, "cgroup_state");
	snprintf(src, sizeof(src), "cgroup %s after the kill", peak_file);
	if (!in->have_usage && (jget_u64(&in->notes, st, "peak_bytes", &v) ||
				raw_value(b, peak_file, &v)))
		set_usage(in, v, src);
	snprintf(src, sizeof(src), "cgroup %s after the kill", limit_file);
	if (in->limit_bytes == UINT64_MAX &&
	    (state_limit(in, st, &v) || raw_value(b, limit_file, &v)) &&
	    v < (1ull << 62)) /* v1 prints "no limit" as a huge number */
		set_limit(in, v, src);
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

#define parse_json diag_bundle_json

/* The member b of the object member a, as a number ≥ 0 (0 otherwise). */
static uint64_t u64_in(struct jget_notes *n, struct json_object *o,
		       const char *a, const char *b)
{
	return jget_u64_or0(n, jget_obj(n, o, a), b);
}

/* classes.json: the thread stacks' RSS (smaps by class). */
static void load_classes(const struct bundle *b, const char *dir,
			 struct diag_proc *p, struct diag_input *in)
{
	struct jget_notes *n = &in->notes;
	char path[256];
	struct json_object *o;
	uint64_t v;

	o = parse_json(b, dir, BP_P_CLASSES, in, path, sizeof(path));
	v = u64_in(n, o, "thread_stack", "rss_kb");
	p->stack_rss_kb = u64_in(n, o, "stack", "rss_kb");
	p->stack_rss_kb = v > UINT64_MAX - p->stack_rss_kb
				  ? UINT64_MAX
				  : v + p->stack_rss_kb;
	json_object_put(o);
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

	if (!startswith(path, BP_PROCESSES) || !strstr(path, "/" BP_P_STATUS) ||
	    strlen(path) - strlen("/" BP_P_STATUS) >= sizeof(dir) ||
	    !streq(path + strlen(path) - strlen("/" BP_P_STATUS),
		   "/" BP_P_STATUS))
		return 0;
	if (procfs_parse_status(data, len, &st) < 0)
		return 0;
	n = (int)(strlen(path) - strlen("/" BP_P_STATUS));
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
	load_classes(s->b, dir, p, s->in);
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (rt->load_proc)
			rt->load_proc(s->b, dir, p, s->in);
	}
	s->in->have_snapshot = true;
	return 0;
}

/* Trims the sidecar did (--trim), for processes the snapshot lacks them. */
/* One element of timeline.json's "trims": the process it names gets its
 * RSS before and after (the first trim of each). */
static void load_trim(struct json_object *t, struct diag_input *in)
{
	uint64_t before;
	int pid;

	if (!jget_int(&in->notes, t, "pid", &pid) ||
	    !jget_u64(&in->notes, t, "rss_before", &before))
		return;
	for (size_t j = 0; j < in->n_procs; j++) {
		struct diag_proc *p = &in->procs[j];

		if (p->pid != pid || p->have_trim)
			continue;
		p->have_trim = true;
		p->trim_before_kb = before / 1024;
		p->trim_after_kb =
			jget_u64_or0(&in->notes, t, "rss_after") / 1024;
	}
}

/* One sample of timeline.json; false when it has no usable time. d->t is
 * its t_ms until the whole timeline is read (the kill's time may be its
 * last sample's). */
static bool load_sample(struct json_object *s, struct diag_input *in,
			struct diag_sample *d)
{
	struct json_object *procs = jget_array(&in->notes, s, "procs");
	uint64_t t, limit;

	if (!jget_u64(&in->notes, s, "t_ms", &t))
		return false;
	memset(d, 0, sizeof(*d));
	d->t = (double)t;
	d->usage = jget_u64_or0(&in->notes, s, "usage");
	d->nprocs = (unsigned)jget_len(procs);
	for (size_t j = 0; j < d->nprocs; j++) {
		uint64_t kb =
			jget_u64_or0(&in->notes, jget_idx(procs, j), "anon_kb");

		d->anon = kb > (UINT64_MAX - d->anon) / 1024
				  ? UINT64_MAX
				  : d->anon + kb * 1024;
	}
	if (!d->usage) /* no cgroup: the RSS sum stands in */
		d->usage = d->anon;
	if (jget_u64(&in->notes, s, "limit", &limit) && limit &&
	    limit < (1ull << 62)) {
		/* the newest sample's limit, unless a reading at the kill
		 * gave one */
		if (in->limit_bytes == UINT64_MAX ||
		    startswith(in->limit_source, "timeline"))
			set_limit(in, limit, "timeline sample");
	}
	return true;
}

/* The usage at the kill, when nothing read closer to it: the newest sample
 * at or before the kill that still saw the workload's processes (one taken
 * after it, or with none left, sees the victim's memory gone already). */
static void usage_from_timeline(struct diag_input *in)
{
	char src[64];

	for (int pass = 0; pass < 2 && !in->have_usage; pass++)
		for (size_t i = in->n_tl; !in->have_usage && i-- > 0;) {
			const struct diag_sample *s = &in->tl[i];

			if (s->t > 0.5 || !s->usage || (!pass && !s->nprocs))
				continue;
			snprintf(src, sizeof(src), "%s, %.1f s before the kill",
				 in->tl_cgroup ? "agent's last cgroup sample"
					       : "last timeline sample",
				 s->t < 0 ? -s->t : 0.0);
			set_usage(in, s->usage, src);
		}
}

/* An element of a JSON array as its own tree (a sample, a trim): NULL when
 * it is not an object or would cost over BUNDLE_JSON_MAX_TREE alone. */
static struct json_object *parse_element(const char *text, size_t len)
{
	return jget_parse_object(text, len, BUNDLE_JSON_MAX_TREE);
}

struct tl_walk {
	struct diag_input *in;
	size_t cap;
	size_t refused;	  /* samples not objects, or too costly alone */
	uint64_t last_ms; /* of the snapshots, or the samples */
};

static int tl_sample(const char *text, size_t len, void *ud)
{
	struct tl_walk *w = ud;
	struct diag_input *in = w->in;
	struct json_object *o = parse_element(text, len);
	void *grown;

	if (!o) {
		w->refused++;
		return 0;
	}
	if (in->n_tl == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		if (!(grown = realloc(in->tl, w->cap * sizeof(*in->tl)))) {
			json_object_put(o);
			return -ENOMEM;
		}
		in->tl = grown;
	}
	if (load_sample(o, in, &in->tl[in->n_tl]))
		in->n_tl++;
	json_object_put(o);
	return 0;
}

static int tl_trim(const char *text, size_t len, void *ud)
{
	struct tl_walk *w = ud;
	struct json_object *o = parse_element(text, len);

	load_trim(o, w->in);
	json_object_put(o);
	return 0;
}

static int tl_snapshot(const char *text, size_t len, void *ud)
{
	struct tl_walk *w = ud;
	struct json_object *o = parse_element(text, len);

	w->last_ms = 0;
	(void)jget_u64(&w->in->notes, o, "t_ms", &w->last_ms);
	json_object_put(o);
	return 0;
}

/* timeline.json (oomlens.io/timeline/v1): t_ms is wall-clock ms. Read one
 * element at a time (jget_scan_each): a sidecar's 600 samples of many
 * processes make a tree far bigger than the file, and the file is the
 * pod's. *ret_kill_ms: kill_ms, else the last sample's t_ms. */
static int load_timeline(const struct bundle *b, uint64_t kill_ms,
			 struct diag_input *in, uint64_t *ret_kill_ms)
{
	static const char *const samples[] = {"samples", NULL};
	static const char *const trims[] = {"trims", NULL};
	static const char *const snaps[] = {"snapshots", NULL};
	struct tl_walk w = {.in = in};
	size_t len;
	const char *text = bundle_get(b, BP_TIMELINE, &len);
	int r;

	*ret_kill_ms = kill_ms;
	if (!text)
		return 0;
	jget_where(&in->notes, BP_TIMELINE);
	r = jget_scan_each(&in->notes, text, len, samples, tl_sample, &w);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && in->n_tl)
		jget_note(&in->notes,
			  "not JSON after %zu samples: the rest "
			  "ignored",
			  in->n_tl);
	else if (r < 0)
		jget_note(&in->notes, "not a JSON object with samples: "
				      "ignored");
	if (w.refused)
		jget_note(&in->notes,
			  "%zu samples not objects or over "
			  "BUNDLE_JSON_MAX_TREE alone: ignored",
			  w.refused);
	if (!in->n_tl)
		return 0;
	if (!kill_ms)
		*ret_kill_ms = kill_ms = (uint64_t)in->tl[in->n_tl - 1].t;
	for (size_t i = 0; i < in->n_tl; i++)
		in->tl[i].t = (in->tl[i].t - (double)kill_ms) / 1000.0;
	(void)jget_scan_each(&in->notes, text, len, trims, tl_trim, &w);
	if (jget_scan_each(&in->notes, text, len, snaps, tl_snapshot, &w) > 0 &&
	    w.last_ms)
		in->snapshot_age_s =
			((double)kill_ms - (double)w.last_ms) / 1000.0;
	return 0;
}

/* The series of agent/timeline.json the diagnosis reads: the cgroup whose
 * limit was hit (the kill was at its limit), else the victim's. */
static struct json_object *agent_series(struct diag_input *in,
					struct json_object *cgroups)
{
	static const char *const roles[] = {"oom_memcg", "task_memcg"};

	for (size_t r = 0; r < ARRAY_SIZE(roles); r++)
		for (size_t i = 0; i < jget_len(cgroups); i++) {
			struct json_object *c = jget_idx(cgroups, i);
			bool is = false;

			if (jget_bool(&in->notes, c, roles[r], &is) && is &&
			    jget_len(jget_array(&in->notes, c, "samples")))
				return c;
		}
	return NULL;
}

/* One sample of the agent's timeline, kept when at or before the kill. */
static void load_cg_sample(struct json_object *s, uint64_t kill_ms,
			   struct diag_input *in)
{
	struct diag_sample *d = &in->tl[in->n_tl];
	uint64_t t, usage, limit;

	if (!jget_u64(&in->notes, s, "t_ms", &t) || t > kill_ms ||
	    !jget_u64(&in->notes, s, "usage", &usage))
		return;
	memset(d, 0, sizeof(*d));
	d->t = ((double)t - (double)kill_ms) / 1000.0;
	d->usage = usage;
	in->n_tl++;
	if (jget_u64(&in->notes, s, "limit", &limit) && limit &&
	    limit < (1ull << 62) &&
	    (in->limit_bytes == UINT64_MAX ||
	     startswith(in->limit_source, "agent's")))
		set_limit(in, limit, "agent's cgroup timeline");
}

/* agent/timeline.json (oomlens.io/agent-timeline/v1), when no sidecar
 * recorded the workload: the agent's own 1 Hz usage of the cgroup, with
 * no process counts (in->tl_cgroup). t_ms is wall-clock ms. */
static int load_agent_timeline(const struct bundle *b, uint64_t kill_ms,
			       struct diag_input *in)
{
	char path[32];
	struct json_object *o, *samples;
	size_t n;

	o = parse_json(b, NULL, BP_AGENT_TIMELINE, in, path, sizeof(path));
	samples = jget_array(
		&in->notes,
		agent_series(in, jget_array(&in->notes, o, "cgroups")),
		"samples");
	n = jget_len(samples);
	free(in->tl); /* a sidecar timeline none of whose samples was usable */
	in->tl = NULL;
	if (n && !(in->tl = calloc(n, sizeof(*in->tl)))) {
		json_object_put(o);
		return -ENOMEM;
	}
	if (n && !kill_ms && !jget_u64(&in->notes, o, "killed_at_ms", &kill_ms))
		kill_ms = jget_u64_or0(&in->notes, jget_idx(samples, n - 1),
				       "t_ms");
	for (size_t i = 0; i < n; i++)
		load_cg_sample(jget_idx(samples, i), kill_ms, in);
	in->tl_cgroup = in->n_tl > 0;
	json_object_put(o);
	return 0;
}

/* A number of the sidecar's files, 0 when absent (as the JVM's facts
 * have always read them). */
static uint64_t jnum(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, k, &v))
		return 0;
	return (uint64_t)json_object_get_int64(v);
}

/* The snapshot's age from spool/snapshot.json, at kill_ms (the kill's
 * time, else the timeline's last sample's). */
static void snapshot_age(const struct bundle *b, uint64_t kill_ms,
			 struct diag_input *in)
{
	struct json_object *snap = bundle_get_json(b, BP_SPOOL_SNAPSHOT);
	uint64_t t;

	if (snap && kill_ms && (t = jnum(snap, "t_ms")))
		in->snapshot_age_s = ((double)kill_ms - (double)t) / 1000.0;
	json_object_put(snap);
}

int diagnosis_load_bundle(const struct bundle *b, const struct oom_report *r,
			  uint64_t kill_ms, struct diag_input *ret)
{
	struct proc_scan s = {.b = b, .in = ret};
	uint64_t facts_ms;
	int q;

	diag_input_init(ret);
	if (r)
		load_report(r, ret);
	load_notification(b, ret);
	load_peak(b, ret);
	bundle_foreach(b, scan_one, &s);
	if (s.err < 0)
		return s.err;
	if (r && add_victims(r, ret) < 0)
		return -ENOMEM;
	q = load_timeline(b, kill_ms, ret, &facts_ms);
	/* the sidecar's timeline, when it has samples, is preferred */
	if (q == 0 && !ret->n_tl)
		q = load_agent_timeline(b, kill_ms, ret);
	if (q < 0)
		return q;
	snapshot_age(b, facts_ms, ret);
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (rt->load)
			rt->load(b, facts_ms, ret, &ret->rt_data[i]);
	}
	usage_from_timeline(ret);
	jget_where(&ret->notes, NULL);
	return 0;
}
