/* SPDX-License-Identifier: Apache-2.0 */
/* .NET: detection from libcoreclr, the GC's knobs from the environment,
 * its heap limit, the GC reservations' RSS and the dotnet-heap verdict
 * (pure, dotnet.h); then its table entry, rt_dotnet: detected in the
 * sidecar, at first sight whether the GC's heap limit is unset or above
 * the container's (an event in the timeline), at each snapshot
 * processes/<pid>/dotnet/facts.json; in the diagnosis its GC
 * reservations named before glibc reads its arenas, the ".NET heap"
 * ledger row and the dotnet-heap verdict with the DOTNET_GCHeapHardLimit
 * that fits (docs/diagnosis.md, ".NET"). */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/dotnet.h"
#include "forensics/runtimes/registry.h"
#include "forensics/runtimes/rtio.h"
#include "kernel/smaps.h"

#define MIB (1ull << 20)
#define KIB 1024ull
#define MIN_RESERVATION (256ull << 20)
#define ARENA_ALIGN (64ull << 20)

int dotnet_detect(const char *maps, size_t maps_len)
{
	struct smaps s;
	int r;

	smaps_init(&s);
	r = smaps_parse(maps, maps_len, &s);
	if (r < 0)
		return r;
	r = rtproc_maps_find_lib(&s, "libcoreclr.so") >= 0;
	smaps_release(&s);
	return r;
}

/* DOTNET_<name>, else COMPlus_<name>, as hex. */
static void knob(const char *env, size_t len, const char *name,
		 struct dotnet_knob *k)
{
	static const char *const prefixes[] = {"DOTNET_", "COMPlus_"};
	char key[64];
	const char *v;
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		snprintf(key, sizeof(key), "%s%s", prefixes[i], name);
		if (rtproc_environ_get(env, len, key, &v, &n) < 0)
			continue;
		strlcpy_safe(k->from, prefixes[i], sizeof(k->from));
		k->state = rtproc_parse_u64(v, n, 16, &k->v) < 0
				   ? DOTNET_KNOB_BAD
				   : DOTNET_KNOB_SET;
		if (k->state == DOTNET_KNOB_BAD)
			k->v = 0;
		return;
	}
}

int dotnet_parse_facts(const char *env, size_t env_len,
		       struct dotnet_facts *ret)
{
	struct dotnet_facts f = {0};
	const char *v;
	size_t n;

	knob(env, env_len, "GCHeapHardLimit", &f.hard_limit);
	knob(env, env_len, "GCHeapHardLimitPercent", &f.limit_pct);
	knob(env, env_len, "GCgen0size", &f.gen0size);
	if (rtproc_environ_get(env, env_len, "DOTNET_RUNNING_IN_CONTAINER", &v,
			       &n) == 0)
		f.in_container =
			rtproc_eq(v, n, "true") || rtproc_eq(v, n, "1");
	*ret = f;
	return 0;
}

void dotnet_gc_limit(const struct dotnet_facts *f, uint64_t limit,
		     struct dotnet_gc_limit *ret)
{
	struct dotnet_gc_limit g = {0};
	bool have_limit = limit && limit != UINT64_MAX;

	if (f && f->hard_limit.state == DOTNET_KNOB_SET && f->hard_limit.v) {
		g.from = DOTNET_LIMIT_HARD;
		g.bytes = f->hard_limit.v;
	} else if (f && f->limit_pct.state == DOTNET_KNOB_SET &&
		   f->limit_pct.v > 0 && f->limit_pct.v <= 100 && have_limit) {
		g.from = DOTNET_LIMIT_PERCENT;
		g.bytes = limit / 100 * f->limit_pct.v +
			  limit % 100 * f->limit_pct.v / 100;
	} else if (have_limit) {
		g.from = DOTNET_LIMIT_DEFAULT;
		g.bytes = limit / 4 * 3 + limit % 4 * 3 / 4;
		if (g.bytes < 20 * MIB)
			g.bytes = 20 * MIB;
	}
	*ret = g;
}

/* Anonymous memory a reservation may be made of. smaps_classify takes a
 * 64 MiB-aligned rw-p start with a ---p rest ending on a 64 MiB multiple
 * for glibc arenas: so does a GC reservation's start. */
static bool plain_anon(const struct smaps *s, size_t i, enum smaps_class c)
{
	return (c == SMAPS_C_ANON || c == SMAPS_C_ARENA) &&
	       rtproc_is_anon(s, i);
}

/* A ---p mapping over a 64 MiB boundary: never glibc's (an arena heap's
 * reserved rest ends at its 64 MiB boundary), as a GC reservation's
 * gigabytes are. */
static bool crosses_arena_boundary(const struct smaps_mapping *m)
{
	uint64_t next = (m->start / ARENA_ALIGN + 1) * ARENA_ALIGN;

	return m->perms[0] == '-' && next < m->end;
}

/* The run of adjacent anonymous mappings from i: its end index (last+1). */
static size_t run_end(const struct smaps *s, size_t i,
		      const enum smaps_class *cls, bool *ret_reserved)
{
	size_t j = i + 1;

	*ret_reserved = crosses_arena_boundary(&s->m[i]);
	while (j < s->n && plain_anon(s, j, cls[j]) &&
	       s->m[j].start == s->m[j - 1].end) {
		*ret_reserved |= crosses_arena_boundary(&s->m[j]);
		j++;
	}
	return j;
}

static void add_run(const struct smaps *s, size_t i, size_t end, bool gc,
		    struct dotnet_rss *d)
{
	uint64_t committed = 0;

	for (size_t k = i; k < end; k++) {
		uint64_t rss = smaps_get(s, k, SMAPS_F_RSS);

		if (gc && s->m[k].perms[1] == 'w')
			committed += rss;
		else
			d->native_kb += rss;
	}
	d->gc_heap_kb += committed;
	if (gc) {
		d->reservations++;
		d->gc_reserved_kb += (s->m[end - 1].end - s->m[i].start) >> 10;
		rtproc_ranges_add(&d->reserved, s->m[i].start,
				  s->m[end - 1].end, committed);
	}
}

int dotnet_classify(const struct smaps *s, struct dotnet_rss *ret)
{
	struct smaps_summary sum;
	struct dotnet_rss d = {0};
	int r = smaps_classify(s, &sum);

	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n;) {
		enum smaps_class c = sum.class_of[i];
		bool reserved;
		size_t end;

		if (!plain_anon(s, i, c)) {
			uint64_t rss = smaps_get(s, i, SMAPS_F_RSS);

			if (rtproc_is_file_class(c))
				d.file_kb += rss;
			else if (c != SMAPS_C_KERNEL)
				d.native_kb += rss;
			d.total_kb += rss;
			i++;
			continue;
		}
		end = run_end(s, i, sum.class_of, &reserved);
		add_run(s, i, end,
			reserved && s->m[end - 1].end - s->m[i].start >=
					    MIN_RESERVATION,
			&d);
		for (size_t k = i; k < end; k++)
			d.total_kb += smaps_get(s, k, SMAPS_F_RSS);
		i = end;
	}
	smaps_summary_release(&sum);
	*ret = d;
	return 0;
}

uint64_t dotnet_recommend_limit(uint64_t limit, uint64_t nonheap)
{
	uint64_t room = limit / 10 * 9;

	if (room < nonheap || room - nonheap < 16 * MIB)
		return 0;
	return (room - nonheap) / MIB * MIB;
}

static void limit_evidence(const struct dotnet_figures *fig,
			   struct rtproc_verdict *v)
{
	const struct dotnet_facts *f = fig->facts;

	switch (fig->gc.from) {
	case DOTNET_LIMIT_HARD:
		rtproc_evidence(v, "%sGCHeapHardLimit=0x%" PRIx64 " (%.0f MiB)",
				f ? f->hard_limit.from : "", fig->gc.bytes,
				rtproc_mib(fig->gc.bytes));
		break;
	case DOTNET_LIMIT_PERCENT:
		rtproc_evidence(
			v, "%sGCHeapHardLimitPercent=0x%" PRIx64 ": %.0f MiB",
			f ? f->limit_pct.from : "", f ? f->limit_pct.v : 0,
			rtproc_mib(fig->gc.bytes));
		break;
	case DOTNET_LIMIT_DEFAULT:
		rtproc_evidence(
			v,
			"GC heap limit %.0f MiB: the runtime's default, "
			"75%% of the container's limit",
			rtproc_mib(fig->gc.bytes));
		break;
	default:
		rtproc_evidence(v, "no GC heap limit: no knob set and no "
				   "container limit known");
	}
}

static void dotnet_remedies(const struct dotnet_figures *fig,
			    struct rtproc_verdict *v)
{
	uint64_t rec = fig->limit ? dotnet_recommend_limit(fig->limit,
							   fig->nonheap_rss)
				  : 0;

	if (rec)
		rtproc_remedy(v,
			      "DOTNET_GCHeapHardLimit=0x%" PRIx64
			      " (%.0f MiB: 90%% of the %.0f MiB limit less "
			      "%.1f MiB outside the GC heap), or "
			      "DOTNET_GCHeapHardLimitPercent=0x%" PRIx64,
			      rec, rtproc_mib(rec), rtproc_mib(fig->limit),
			      rtproc_mib(fig->nonheap_rss),
			      rec * 100 / fig->limit);
	else if (fig->limit)
		rtproc_remedy(v,
			      "raise the limit: the %.1f MiB outside the GC "
			      "heap leaves no room for one under %.0f MiB",
			      rtproc_mib(fig->nonheap_rss),
			      rtproc_mib(fig->limit));
	rtproc_remedy(v, "dotnet-gcdump collect -p PID writes the managed "
			 "heap's objects by type (.gcdump; dotnet-gcdump "
			 "report, PerfView or Visual Studio)");
	rtproc_remedy(v, "dotnet-counters monitor -p PID --counters "
			 "System.Runtime: GC heap size and generations live");
}

bool dotnet_verdict(const struct dotnet_figures *fig,
		    struct rtproc_verdict *ret)
{
	struct rtproc_verdict v = {.kind = "dotnet-heap", .confidence = 65};
	uint64_t base =
		fig->usage ? fig->usage : fig->gc_heap_rss + fig->nonheap_rss;
	bool outgrows =
		fig->gc.from == DOTNET_LIMIT_NONE ||
		(fig->limit && fig->gc.bytes + fig->nonheap_rss > fig->limit);

	if (!fig->gc_heap_rss || fig->gc_heap_rss < base - base / 2)
		return false;
	v.bytes = fig->gc_heap_rss;
	if (outgrows)
		v.confidence = 80;
	snprintf(
		v.summary, sizeof(v.summary),
		"the .NET GC heap (%.0f MiB) is most of the usage (%.0f MiB)%s",
		rtproc_mib(fig->gc_heap_rss), rtproc_mib(base),
		outgrows ? ": its limit leaves no room for the rest" : "");
	rtproc_evidence(&v, "GC heap: %.1f MiB RSS; outside it: %.1f MiB",
			rtproc_mib(fig->gc_heap_rss),
			rtproc_mib(fig->nonheap_rss));
	limit_evidence(fig, &v);
	dotnet_remedies(fig, &v);
	*ret = v;
	return true;
}

/* ---- the sidecar ---- */

static int dotnet_detect_hook(const struct rt_sight *s)
{
	_cleanup_strbuf_ struct strbuf own = STRBUF_INIT;
	const struct strbuf *maps;
	int r = rtio_maps(s, &own, &maps);

	if (r < 0)
		return 0;
	r = dotnet_detect(maps->buf, maps->len);
	return r == -ENOMEM ? r : r == 1;
}

static int facts_of_env(const char *env, size_t len, void *ctx)
{
	return dotnet_parse_facts(env, len, ctx);
}

static const char *knob_hex(const struct dotnet_knob *k, char *buf, size_t size)
{
	snprintf(buf, size, "%sGCHeapHardLimit=0x%" PRIx64, k->from, k->v);
	return buf;
}

/* The GC's limit is all in its environment (a runtimeconfig.json's
 * System.GC.HeapHardLimit is not read here): an event when it is unset,
 * the runtime then taking 75 % of the limit it reads from its cgroup, or
 * above the container's limit. */
static int dotnet_first_sight(struct rt_sight *s)
{
	struct dotnet_facts f;
	struct dotnet_gc_limit gc;
	char k[64];
	int r = rtio_with_env(s, facts_of_env, &f);

	if (r < 0)
		return r;
	if (!s->limit)
		return 0;
	dotnet_gc_limit(&f, s->limit, &gc);
	if (gc.from == DOTNET_LIMIT_HARD && gc.bytes > s->limit) {
		strlcpy_safe(s->event_kind, "dotnet-gc-limit-above-limit",
			     sizeof(s->event_kind));
		snprintf(s->event_text, sizeof(s->event_text),
			 "pid %d (.NET): %s (%" PRIu64
			 " MiB) is above the container's limit (%" PRIu64
			 " MiB): the GC does not collect hard before the "
			 "kernel kills",
			 s->pid, knob_hex(&f.hard_limit, k, sizeof(k)),
			 gc.bytes >> 20, s->limit >> 20);
	} else if (gc.from == DOTNET_LIMIT_DEFAULT) {
		strlcpy_safe(s->event_kind, "dotnet-gc-limit-unset",
			     sizeof(s->event_kind));
		snprintf(s->event_text, sizeof(s->event_text),
			 "pid %d (.NET): no GCHeapHardLimit in its environment"
			 "%s: the GC takes the runtime's default, 75%% of the "
			 "memory limit it reads from its cgroup (%" PRIu64
			 " MiB of the %" PRIu64 " MiB limit, when it reads "
			 "this one), and the rest must hold everything outside "
			 "its heap",
			 s->pid,
			 f.hard_limit.state == DOTNET_KNOB_BAD ||
					 f.limit_pct.state == DOTNET_KNOB_BAD
				 ? " (one is set but is no hexadecimal number:"
				   " the runtime ignores it)"
				 : "",
			 gc.bytes >> 20, s->limit >> 20);
	}
	return 0;
}

static const char *limit_from_name(enum dotnet_limit_from f)
{
	static const char *const names[] = {
		[DOTNET_LIMIT_NONE] = "none",
		[DOTNET_LIMIT_HARD] = "hard",
		[DOTNET_LIMIT_PERCENT] = "percent",
		[DOTNET_LIMIT_DEFAULT] = "default",
	};

	return f < ARRAY_SIZE(names) ? names[f] : "none";
}

static void add_knob(struct json_object *o, const char *key,
		     const struct dotnet_knob *k)
{
	char name[64];

	json_object_object_add(o, key,
			       k->state == DOTNET_KNOB_SET
				       ? json_object_new_uint64(k->v)
				       : NULL);
	snprintf(name, sizeof(name), "%s_from", key);
	json_object_object_add(o, name,
			       k->state != DOTNET_KNOB_UNSET
				       ? json_object_new_string(k->from)
				       : NULL);
	snprintf(name, sizeof(name), "%s_bad", key);
	json_object_object_add(
		o, name, json_object_new_boolean(k->state == DOTNET_KNOB_BAD));
}

static struct json_object *facts_json(const struct rt_sight *s,
				      const struct dotnet_facts *f,
				      bool env_read, const struct dotnet_rss *d)
{
	struct json_object *o = json_object_new_object();
	struct dotnet_gc_limit gc;

	if (!o)
		return NULL;
	dotnet_gc_limit(f, s->limit, &gc);
#define ADD(k, v) json_object_object_add(o, k, v)
	ADD("t_ms", json_object_new_uint64(now_realtime_us() / 1000));
	ADD("pid", json_object_new_int(s->pid));
	ADD("environ_read", json_object_new_boolean(env_read));
	add_knob(o, "gc_heap_hard_limit", &f->hard_limit);
	add_knob(o, "gc_heap_hard_limit_percent", &f->limit_pct);
	add_knob(o, "gc_gen0size", &f->gen0size);
	ADD("running_in_container", json_object_new_boolean(f->in_container));
	ADD("gc_limit", gc.from != DOTNET_LIMIT_NONE
				? json_object_new_uint64(gc.bytes)
				: NULL);
	ADD("gc_limit_from", json_object_new_string(limit_from_name(gc.from)));
	ADD("gc_heap_rss", json_object_new_uint64(d->gc_heap_kb * 1024));
	ADD("gc_reserved", json_object_new_uint64(d->gc_reserved_kb * 1024));
	ADD("reservations", json_object_new_uint64(d->reservations));
	ADD("native_rss", json_object_new_uint64(d->native_kb * 1024));
	ADD("file_rss", json_object_new_uint64(d->file_kb * 1024));
	ADD("rss", json_object_new_uint64(d->total_kb * 1024));
	ADD("limit", json_object_new_uint64(s->limit));
	ADD("gc_ranges", rtio_ranges_json(&d->reserved));
#undef ADD
	return o;
}

static int dotnet_snapshot(const struct rt_sight *s, int pid_dirfd)
{
	struct dotnet_facts f = {0};
	struct dotnet_rss d = {0};
	struct smaps sm;
	struct json_object *o;
	bool env_read = rtio_with_env(s, facts_of_env, &f) == 0;
	int r;

	if (!env_read)
		f = (struct dotnet_facts){0};
	smaps_init(&sm);
	r = smaps_read_at(s->proc_fd, "smaps", &sm);
	if (r >= 0)
		r = dotnet_classify(&sm, &d);
	smaps_release(&sm);
	if (r < 0)
		return r;
	o = facts_json(s, &f, env_read, &d);
	if (!o)
		return -ENOMEM;
	r = rtio_write_facts(pid_dirfd, BP_DOTNET_DIR, BP_DOTNET_FACTS, o);
	json_object_put(o);
	return r;
}

/* ---- from a bundle ---- */

static void load_knob(struct jget_notes *n, struct json_object *o,
		      const char *key, struct dotnet_knob *k)
{
	char name[64];
	const char *from;
	bool bad = false;

	*k = (struct dotnet_knob){0};
	snprintf(name, sizeof(name), "%s_from", key);
	from = jget_str(n, o, name);
	strlcpy_safe(k->from,
		     from && (streq(from, "DOTNET_") || streq(from, "COMPlus_"))
			     ? from
			     : "DOTNET_",
		     sizeof(k->from));
	snprintf(name, sizeof(name), "%s_bad", key);
	if (jget_u64(n, o, key, &k->v))
		k->state = DOTNET_KNOB_SET;
	else if (jget_bool(n, o, name, &bad) && bad)
		k->state = DOTNET_KNOB_BAD;
}

static void load_facts(struct jget_notes *n, struct json_object *o, void *item)
{
	struct dotnet_proc *p = item;
	load_knob(n, o, "gc_heap_hard_limit", &p->facts.hard_limit);
	load_knob(n, o, "gc_heap_hard_limit_percent", &p->facts.limit_pct);
	load_knob(n, o, "gc_gen0size", &p->facts.gen0size);
	jget_bool(n, o, "running_in_container", &p->facts.in_container);
	p->gc_heap_rss = jget_u64_or0(n, o, "gc_heap_rss");
	p->rss = jget_u64_or0(n, o, "rss");
}

/* The GC's reservations start as glibc's arena heaps do (64 MiB-aligned
 * rw-p with a ---p rest): named here, glibc's load_proc (after this one
 * in the table) leaves them. */
static void dotnet_load_proc(const struct bundle *b, const char *dir,
			     struct diag_proc *p, struct diag_input *in)
{
	struct rtproc_range r[DIAG_MAX_FOREIGN];
	char path[160];
	struct json_object *o;
	size_t k;

	snprintf(path, sizeof(path), "%s/" BP_DOTNET_FACTS, dir);
	o = bundle_get_json(b, path);
	if (!o)
		return;
	jget_where(&in->notes, path);
	k = rtio_ranges_load(&in->notes, o, "gc_ranges", r, ARRAY_SIZE(r));
	json_object_put(o);
	for (size_t i = 0; i < k && p->n_foreign < DIAG_MAX_FOREIGN; i++)
		p->foreign[p->n_foreign++] =
			(struct diag_range){r[i].start, r[i].end};
}

static const struct rtio_procs dotnet_table = {
	.file = BP_DOTNET_FACTS,
	.size = sizeof(struct dotnet_proc),
	.max = DOTNET_MAX_PROCS,
	.age_off = offsetof(struct dotnet_proc, age_s),
	.load = load_facts,
};
_Static_assert(offsetof(struct dotnet_proc, pid) == 0, "rtio_procs: pid first");

static void dotnet_load(const struct bundle *b, uint64_t kill_ms,
			struct diag_input *in, void **data)
{
	struct dotnet_procs *f = calloc(1, sizeof(*f));

	if (f)
		f->n = rtio_procs_load(b, in, kill_ms, &dotnet_table, f->p);
	if (f && !f->n) {
		free(f);
		f = NULL;
	}
	*data = f;
}

static void dotnet_release(void *data)
{
	free(data);
}

static const struct dotnet_proc *dotnet_of(const void *data, int pid)
{
	const struct dotnet_procs *f = data;

	return f ? rtio_procs_find(f->p, sizeof(f->p[0]), f->n, pid) : NULL;
}

/* ---- the ledger and the verdict ---- */

static void dotnet_ledger(struct diag_ledger *l, const struct diag_input *in,
			  const void *data, const struct diag_proc *p)
{
	const struct dotnet_proc *dp = dotnet_of(data, p->pid);

	(void)in;
	if (dp)
		diag_part(l->d, p->pid, ".NET heap",
			  diag_take_anon(l, dp->gc_heap_rss), false,
			  "smaps pid %d: committed rw-p mappings inside the "
			  "GC's reservations",
			  p->pid);
}

static bool dotnet_explains_growth(const struct diag_input *in,
				   const void *data, uint64_t usage)
{
	const struct dotnet_procs *f = data;

	(void)in;
	(void)usage;
	for (size_t i = 0; f && i < f->n; i++)
		if (f->p[i].rss &&
		    mul_sat(f->p[i].gc_heap_rss, 2) >= f->p[i].rss)
			return true;
	return false;
}

static const char *detail_of(const struct dotnet_figures *fig)
{
	bool outgrows =
		fig->gc.from == DOTNET_LIMIT_NONE ||
		(fig->limit && fig->gc.bytes + fig->nonheap_rss > fig->limit);

	if (!outgrows)
		return "";
	switch (fig->gc.from) {
	case DOTNET_LIMIT_HARD:
		return "GCHeapHardLimit above the limit";
	case DOTNET_LIMIT_PERCENT:
		return "GCHeapHardLimitPercent above the limit";
	case DOTNET_LIMIT_DEFAULT:
		return "GCHeapHardLimit unset";
	default:
		return "no GC heap limit";
	}
}

static void dotnet_one(const struct diag_input *in,
		       const struct dotnet_proc *dp, struct diagnosis *d)
{
	uint64_t lim = d->limit_bytes != UINT64_MAX ? d->limit_bytes : 0;
	struct dotnet_figures fig = {
		.limit = lim,
		.usage = d->usage_bytes,
		.gc_heap_rss = rtio_part_of(d, dp->pid, ".NET heap"),
		.nonheap_rss = sub_sat(dp->rss, dp->gc_heap_rss),
		.facts = &dp->facts,
	};
	struct rtproc_verdict rv;

	dotnet_gc_limit(&dp->facts, lim, &fig.gc);
	if (dotnet_verdict(&fig, &rv))
		rtio_verdict(in, d, DIAG_DOTNET_HEAP, detail_of(&fig), &rv,
			     dp->pid, ".NET", dp->age_s);
}

static void dotnet_verdicts(const struct diag_input *in, const void *data,
			    struct diagnosis *d)
{
	const struct dotnet_procs *f = data;

	for (size_t i = 0; f && i < f->n; i++)
		dotnet_one(in, &f->p[i], d);
}

/* ---- report.html ---- */

static void dotnet_label_mappings(const struct bundle *b, const char *dir,
				  int pid, struct rt_mapping *rows, size_t n,
				  struct jget_notes *notes)
{
	rtio_label_ranges(b, dir, BP_DOTNET_FACTS, "gc_ranges", pid, rows, n,
			  notes, ".NET GC heap");
}

const struct diag_runtime rt_dotnet = {
	.name = "dotnet",
	.detect = dotnet_detect_hook,
	.first_sight = dotnet_first_sight,
	.snapshot = dotnet_snapshot,
	.load_proc = dotnet_load_proc,
	.load = dotnet_load,
	.release = dotnet_release,
	.ledger = dotnet_ledger,
	.verdicts = dotnet_verdicts,
	.explains_growth = dotnet_explains_growth,
	.label_mappings = dotnet_label_mappings,
};
