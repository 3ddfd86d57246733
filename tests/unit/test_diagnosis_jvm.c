/* SPDX-License-Identifier: Apache-2.0 */
/* The verdicts from the sidecar's JVM facts: a JVM whose growth is its
 * heap is java-heap with a computed -Xmx, never native-growth; every
 * ledger line carries its data's age. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "forensics/diagnosis.h"

#define MiB (1024ull * 1024)

/* The kill: -Xmx1g in 300 MiB, growing 16 MiB/s linearly for
 * 20 s; the last snapshot 3 s before the kill saw 200 MiB of heap RSS
 * and 60 MiB native. */
static void jvm_input(struct diag_input *in, bool with_facts)
{
	size_t n = 80;

	diag_input_init(in);
	in->have_usage = true;
	in->usage_bytes = in->limit_bytes = 300 * MiB;
	in->tl = calloc(n, sizeof(*in->tl));
	in->n_tl = n;
	for (size_t i = 0; i < n; i++) {
		in->tl[i].t = -(double)(n - 1 - i) * 0.25;
		in->tl[i].usage = 60 * MiB + (240 * MiB) * i / (n - 1);
		in->tl[i].nprocs = 1;
	}
	in->have_snapshot = true;
	in->snapshot_age_s = 3.0;
	if (!with_facts)
		return;
	in->jvms[0] = (struct diag_jvm){
		.pid = 42,
		.have_flags = true,
		.max_heap = 1024 * MiB,
		.native_baseline = 55 * MiB,
		.limit = 300 * MiB,
		.outgrows = true,
		.heap_outgrows = true,
		.flags_age_s = 20.0,
		.have_heap_rss = true,
		.heap_rss = 200 * MiB,
		.native_rss = 60 * MiB,
		.heap_rss_age_s = 3.0,
		.have_rss = true,
		.rss_last = 296 * MiB,
		.rss_last_age_s = 0.1,
		.rss_at_snapshot = 260 * MiB,
	};
	in->n_jvms = 1;
}

static bool has_kind(const struct diagnosis *d, enum diag_kind k)
{
	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == k)
			return true;
	return false;
}

Test(diagnosis_jvm, without_facts_the_growth_looks_native)
{
	struct diag_input in;
	struct diagnosis d;

	jvm_input(&in, false);
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	diag_input_release(&in);
}

Test(diagnosis_jvm, heap_growth_is_java_heap_with_a_computed_xmx)
{
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;

	jvm_input(&in, true);
	diagnosis_run(&in, &d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert_not(has_kind(&d, DIAG_NATIVE_GROWTH),
		      "never heaptrack for a JVM heap");
	/* 300 MiB − 60 MiB native − 30 MiB headroom = 210 → 208 (16 MiB) */
	cr_assert(strstr(v->recommend[0], "-Xmx208M"), "%s", v->recommend[0]);
	cr_assert(strstr(v->recommend[0], "MaxRAMPercentage=69"), "%s",
		  v->recommend[0]);
	cr_assert(strstr(v->evidence[0], "configured to outgrow"), "%s",
		  v->evidence[0]);
	cr_assert(strstr(v->evidence[1], "3.0 s before the kill"), "%s",
		  v->evidence[1]);
	cr_assert(strstr(v->evidence[2], "grew by 36 MiB"), "%s",
		  v->evidence[2]);
	diag_input_release(&in);
}

Test(diagnosis_jvm, a_native_heavy_jvm_is_not_called_java_heap)
{
	struct diag_input in;
	struct diagnosis d;

	jvm_input(&in, true);
	in.jvms[0].heap_outgrows = false;
	in.jvms[0].heap_rss = 40 * MiB;
	in.jvms[0].native_rss = 220 * MiB;
	diagnosis_run(&in, &d);
	cr_assert_not(has_kind(&d, DIAG_JAVA_HEAP), "%s", d.summary);
	diag_input_release(&in);
}

Test(diagnosis_jvm, every_ledger_line_has_its_age)
{
	struct diag_input in;
	struct diagnosis d;
	bool snap_part = false;

	jvm_input(&in, true);
	in.have_stats = true;
	in.anon = 290 * MiB;
	in.file = 10 * MiB;
	diagnosis_run(&in, &d);
	for (size_t i = 0; i < d.n_parts; i++) {
		const struct diag_part *p = &d.parts[i];

		cr_assert(p->age_s >= 0, "%s", p->name);
		if (streq(p->name, "other anonymous")) {
			snap_part = true;
			cr_assert_float_eq(p->age_s, 3.0, 1e-9);
			cr_assert(strstr(p->source, "(3.0 s before the kill)"),
				  "%s", p->source);
		}
		if (streq(p->name, "file cache"))
			cr_assert_float_eq(p->age_s, 0.0, 1e-9,
					   "memcg stats: at the kill");
	}
	cr_assert(snap_part);
	diag_input_release(&in);
}

Test(diagnosis_jvm, heap_rss_stands_in_for_heap_info_in_the_ledger)
{
	struct diag_input in;
	struct diagnosis d;
	uint64_t heap = 0;

	jvm_input(&in, true);
	in.have_stats = true;
	in.anon = 290 * MiB;
	in.procs = calloc(1, sizeof(*in.procs));
	in.n_procs = 1;
	in.procs[0].pid = 42; /* no GC.heap_info: the attach did not answer */
	diagnosis_run(&in, &d);
	for (size_t i = 0; i < d.n_parts; i++)
		if (streq(d.parts[i].name, "jvm heap"))
			heap = d.parts[i].bytes;
	cr_assert_eq(heap, 200 * MiB);
	diag_input_release(&in);
}
