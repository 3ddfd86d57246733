/* SPDX-License-Identifier: Apache-2.0 */
/* glibc's malloc: its ledger rows (the in-use bytes the allocator
 * reported, what its arenas keep of freed memory, or the arenas' RSS
 * when in-use is unknown), the glibc-retention verdict with the trim test
 * as its proof, and the rows of the report's mappings that are its
 * arena heaps. Every process that is not a JVM (and a JVM's own malloc)
 * goes through it. */
#include <json-c/json.h>
#include <stdio.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "base/parse.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/registry.h"

static bool glibc_inuse(const struct diag_proc *p, uint64_t *ret,
			const char **ret_src)
{
	if (p->have_alloc) {
		*ret = p->alloc_inuse_bytes;
		*ret_src = p->alloc_source[0] ? p->alloc_source : "allocator";
		return true;
	}
	if (p->jvm && p->have_nmt) {
		*ret = KB(p->nmt_malloc_kb);
		*ret_src = "NMT malloc total";
		return true;
	}
	return false;
}

static void ledger_glibc(struct diag_ledger *l, const struct diag_proc *p)
{
	uint64_t arenas = KB(add_sat(p->heap_rss_kb, p->arena_rss_kb)), inuse;
	const char *src;

	if (!p->have_smaps || !arenas || p->arenas_not_glibc)
		return;
	if (glibc_inuse(p, &inuse, &src)) {
		/* big chunks are mmap'd outside the arenas: not retained */
		uint64_t in_arenas = sub_sat(inuse, p->alloc_mmap_bytes);
		uint64_t kept = sub_sat(arenas, in_arenas);

		/* A JVM's malloc'd bytes are already in its NMT categories. */
		if (!p->jvm)
			diag_part(l->d, p->pid, "glibc heap in use",
				  diag_take_anon(l, inuse), false, "%s, pid %d",
				  src, p->pid);
		diag_part(l->d, p->pid, "glibc retention",
			  diag_take_anon(l, kept), false,
			  "pid %d: arenas+heap RSS %s minus %s %s", p->pid,
			  H(arenas), src, H(inuse));
	} else {
		diag_part(l->d, p->pid, "glibc arenas (in-use unknown)",
			  diag_take_anon(l, arenas), true,
			  "pid %d: [heap] + %zu arena heaps from smaps; in-use "
			  "bytes not measured",
			  p->pid, p->n_arenas);
	}
}

static void v_glibc(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes,
		 kept = diag_part_bytes(d, "glibc retention");
	uint64_t unknown = diag_part_bytes(d, "glibc arenas (in-use unknown)");
	struct diag_verdict *v = NULL;
	const struct diag_proc *top = NULL;
	bool jvm = false;

	for (size_t i = 0; i < in->n_procs; i++) {
		const struct diag_proc *p = &in->procs[i];

		jvm |= p->jvm;
		if (p->have_smaps && !p->arenas_not_glibc &&
		    (!top ||
		     add_sat(p->arena_rss_kb, p->heap_rss_kb) >
			     add_sat(top->arena_rss_kb, top->heap_rss_kb)))
			top = p;
	}
	if (u && mul_sat(kept, 5) >= u)
		v = diag_verdict(d, DIAG_GLIBC_RETENTION,
				 55 + (int)(pct(kept, u) / 2), kept);
	else if (u && mul_sat(unknown, 5) >= mul_sat(u, 2) && top &&
		 top->n_arenas >= 4) {
		v = diag_verdict(d, DIAG_GLIBC_RETENTION, 35, unknown);
		v->basis = DIAG_BASIS_INFERRED;
	}
	if (!v)
		return;
	if (kept)
		EVID(v,
		     "glibc keeps %s of freed memory, %.0f%% of the %s in "
		     "use",
		     H(v->bytes), pct(v->bytes, u), H(u));
	else
		EVID(v,
		     "glibc's arenas hold %s, %.0f%% of the %s in use, "
		     "spread over many arenas",
		     H(v->bytes), pct(v->bytes, u), H(u));
	if (top)
		EVID(v, "pid %d: [heap] RSS %s and %zu arena heaps with %s RSS",
		     top->pid, H(KB(top->heap_rss_kb)), top->n_arenas,
		     H(KB(top->arena_rss_kb)));
	if (!kept)
		EVID(v, "in-use bytes not measured: an estimate from the arena "
			"layout (enable the sidecar's --allocator-probe ptrace "
			"to confirm)");
	for (size_t i = 0; top && i < in->n_procs; i++)
		if (in->procs[i].have_trim) {
			const struct diag_proc *p = &in->procs[i];
			uint64_t back = KB(
				sub_sat(p->trim_before_kb, p->trim_after_kb));
			EVID(v,
			     "trim test on pid %d: RSS %s → %s, %s given "
			     "back",
			     p->pid, H(KB(p->trim_before_kb)),
			     H(KB(p->trim_after_kb)), H(back));
			if (mul_sat(back, 2) >= v->bytes)
				v->confidence = 95;
		}
	RECO(v, "MALLOC_ARENA_MAX=2 (fewer arenas keep less), or "
		"GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc."
		"trim_threshold=131072");
	if (jvm)
		RECO(v,
		     "-XX:TrimNativeHeapInterval=60000 (JDK 17.0.9+, 21.0.1+),"
		     " or jcmd PID System.trim_native_heap");
	RECO(v, "or preload jemalloc (LD_PRELOAD=libjemalloc.so.2), which "
		"returns freed memory to the kernel");
}

/* Least squares over the timeline: slope (bytes/s) and R². */

/* ---- hooks ---- */

static void glibc_ledger(struct diag_ledger *l, const struct diag_input *in,
			 const void *data, const struct diag_proc *p)
{
	(void)in;
	(void)data;
	ledger_glibc(l, p);
}

static void glibc_verdicts(const struct diag_input *in, const void *data,
			   struct diagnosis *d)
{
	(void)data;
	v_glibc(in, d);
}

/* ---- from a bundle ---- */

/* Whether an arena heap's start (arenas.json "0x...") lies in a range
 * another runtime named as its heap. */
static bool foreign_start(const struct diag_proc *p, const char *start)
{
	uint64_t a;

	if (!start || !startswith(start, "0x") ||
	    parse_u64_base(start + 2, 16, &a) < 0)
		return false;
	for (size_t i = 0; i < p->n_foreign; i++)
		if (a >= p->foreign[i].start && a < p->foreign[i].end)
			return true;
	return false;
}

/* The arena heaps of arenas.json that are another runtime's heap, taken
 * out of glibc's figures. */
static void leave_foreign(struct jget_notes *n, struct json_object *o,
			  struct diag_proc *p)
{
	struct json_object *heaps = jget_array(n, o, "heaps");

	for (size_t i = 0; p->n_foreign && i < jget_len(heaps); i++) {
		struct json_object *h = jget_idx(heaps, i);
		uint64_t arenas =
			jget_u64_or0(n, h, "reserved_kb") / (64 * 1024);

		if (!foreign_start(p, jget_str(n, h, "start")))
			continue;
		p->arena_rss_kb =
			sub_sat(p->arena_rss_kb, jget_u64_or0(n, h, "rss_kb"));
		p->n_arenas = (size_t)sub_sat(p->n_arenas, arenas ? arenas : 1);
	}
}

/* arenas.json (smaps' [heap] and arena heaps, less those another
 * runtime's load_proc named its own), allocator.json (mallinfo2 through
 * ptrace) and the trim test (jvm/trim.json for a JVM, trim.json for a
 * glibc process trimmed through ptrace). */
static void glibc_load_proc(const struct bundle *b, const char *dir,
			    struct diag_proc *p, struct diag_input *in)
{
	struct jget_notes *n = &in->notes;
	char path[256];
	struct json_object *o;
	uint64_t v;

	o = diag_bundle_json(b, dir, BP_P_ARENAS, in, path, sizeof(path));
	if (jget(o, "main_heap") || jget(o, "arena_rss_kb")) {
		p->have_smaps = true;
		p->heap_rss_kb =
			jget_u64_or0(n, jget_obj(n, o, "main_heap"), "rss_kb");
		p->arena_rss_kb = jget_u64_or0(n, o, "arena_rss_kb");
		p->n_arenas = (size_t)jget_u64_or0(n, o, "arena_heaps");
		leave_foreign(n, o, p);
	}
	json_object_put(o);
	o = diag_bundle_json(b, dir, BP_P_ALLOCATOR, in, path, sizeof(path));
	if (jget_u64(n, o, "in_use_bytes", &v)) {
		p->have_alloc = true;
		p->alloc_inuse_bytes = v;
		p->alloc_system_bytes = jget_u64_or0(n, o, "system_bytes");
		p->alloc_mmap_bytes = jget_u64_or0(n, o, "mmap_bytes");
		strlcpy_safe(p->alloc_source, "mallinfo2 (ptrace)",
			     sizeof(p->alloc_source));
	}
	json_object_put(o);
	o = diag_bundle_json(b, dir, BP_JVM_TRIM, in, path, sizeof(path));
	if (!o) /* a glibc process trimmed through ptrace */
		o = diag_bundle_json(b, dir, BP_P_TRIM, in, path, sizeof(path));
	if (jget_u64(n, o, "rss_before", &v)) {
		p->have_trim = true;
		p->trim_before_kb = v / 1024;
		p->trim_after_kb = jget_u64_or0(n, o, "rss_after") / 1024;
	}
	json_object_put(o);
}

/* ---- report.html ---- */

/* Names the arena heaps arenas.json found (by start address). */
static void glibc_label_mappings(const struct bundle *b, const char *dir,
				 int pid, struct rt_mapping *rows, size_t n,
				 struct jget_notes *notes)
{
	char path[160];
	struct json_object *ar, *heaps;

	snprintf(path, sizeof(path), "%s/" BP_P_ARENAS, dir);
	ar = bundle_get_json(b, path);
	jget_where(notes, path);
	heaps = jget_array(notes, ar, "heaps");
	for (size_t i = 0; i < jget_len(heaps); i++) {
		const char *start =
			jget_str(notes, jget_idx(heaps, i), "start");
		uint64_t a;

		if (!start)
			continue;
		if (startswith(start, "0x"))
			start += 2;
		if (parse_u64_base(start, 16, &a) < 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (rows[j].pid == pid && !rows[j].name[0] &&
			    rows[j].addr == a)
				snprintf(rows[j].name, rows[j].name_size,
					 "[glibc arena heap]");
	}
	json_object_put(ar);
}

const struct diag_runtime rt_glibc = {
	.name = "glibc",
	.load_proc = glibc_load_proc,
	.ledger = glibc_ledger,
	.verdicts = glibc_verdicts,
	.label_mappings = glibc_label_mappings,
};
