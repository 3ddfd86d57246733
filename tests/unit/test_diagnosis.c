/* SPDX-License-Identifier: Apache-2.0 */
/* The ledger arithmetic and the verdicts, on real kernel reports and
 * snapshot files (tests/fixtures) and on constructed inputs. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "base/fileio.h"
#include "kernel/kmsg.h"

#define MiB (1024ull * 1024ull)

static int keep_first(struct oom_report *r, void *ud)
{
	struct oom_report *out = ud;

	if (out->seq_first == 0 && out->n_victims == 0) {
		*out = *r;
		oom_report_init(r);
	}
	return 0;
}

static void load_report(const char *path, struct oom_report *ret)
{
	struct strbuf sb;

	strbuf_init(&sb, 0);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 1 << 20, &sb), 0, "%s", path);
	oom_report_init(ret);
	ret->seq_first = 0;
	cr_assert_gt(kmsg_parse_buffer(sb.buf, sb.len, keep_first, ret), 0);
	strbuf_release(&sb);
}

static uint64_t part(const struct diagnosis *d, const char *name)
{
	for (size_t i = 0; i < d->n_parts; i++)
		if (!strcmp(d->parts[i].name, name))
			return d->parts[i].bytes;
	return 0;
}

static uint64_t sum_parts(const struct diagnosis *d)
{
	uint64_t s = 0;

	for (size_t i = 0; i < d->n_parts; i++)
		s += d->parts[i].bytes;
	return s;
}

Test(diagnosis, v1_kernel_report_reconciles_to_usage)
{
	struct oom_report r;
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;

	load_report("tests/fixtures/kmsg/v1-6.18-single/kmsg.txt", &r);
	cr_assert_eq(bundle_new("t", &b), 0);
	cr_assert_eq(diagnosis_load_bundle(b, &r, 0, &in), 0);
	cr_assert(in.have_usage && in.have_stats);
	cr_assert_eq(in.usage_bytes, 32768 * 1024ull);
	cr_assert_eq(in.limit_bytes, 32768 * 1024ull);
	cr_assert_eq(in.anon, 33427456);     /* total_rss */
	cr_assert_eq(in.kernel, 124 * 1024); /* kmem: usage 124kB */
	diagnosis_run(&in, &d);
	cr_assert_eq(d.unreconciled, 0);
	cr_assert_eq(sum_parts(&d), d.usage_bytes);
	cr_assert_eq(part(&d, "other anonymous"), 33427456);
	cr_assert_eq(part(&d, "kernel"), 124 * 1024);
	cr_assert_eq(d.verdicts[0].kind, DIAG_UNKNOWN,
		     "no snapshot, no "
		     "timeline: no claim");
	diag_input_release(&in);
	bundle_free(b);
	oom_report_release(&r);
}

Test(diagnosis, v2_kernel_report_uses_v2_stat_names)
{
	struct oom_report r;
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;

	load_report("tests/fixtures/kmsg/v2-6.1-single/kmsg.txt", &r);
	cr_assert_eq(bundle_new("t", &b), 0);
	cr_assert_eq(diagnosis_load_bundle(b, &r, 0, &in), 0);
	cr_assert_eq(in.anon, 33427456);
	cr_assert_eq(in.shmem, 4096);
	cr_assert_eq(in.kernel, 122880);
	cr_assert(in.have_kernel_total);
	diagnosis_run(&in, &d);
	/* anon 33427456 + file-shmem 0 + shmem 4096 + kernel 122880 is
	 * 33554432 = the 32768 kB usage: nothing unreconciled */
	cr_assert_eq(sum_parts(&d), 32768 * 1024ull);
	cr_assert_eq(d.unreconciled, 0);
	diag_input_release(&in);
	bundle_free(b);
	oom_report_release(&r);
}

static struct diag_proc *one_proc(struct diag_input *in)
{
	in->procs = calloc(1, sizeof(*in->procs));
	in->n_procs = 1;
	in->procs[0].pid = 42;
	snprintf(in->procs[0].comm, sizeof(in->procs[0].comm), "app");
	in->victim_pid = 42;
	in->have_snapshot = true;
	return &in->procs[0];
}

Test(diagnosis, glibc_retention_from_allocator_figures)
{
	struct diag_input in;
	struct diagnosis d;
	struct diag_proc *p;

	diag_input_init(&in);
	in.have_usage = in.have_stats = true;
	in.usage_bytes = in.limit_bytes = 1536 * MiB;
	in.anon = 1500 * MiB;
	in.file = 20 * MiB;
	in.kernel = 16 * MiB;
	in.have_kernel_total = true;
	p = one_proc(&in);
	p->have_smaps = true;
	p->heap_rss_kb = 100 * 1024;
	p->arena_rss_kb = 1300 * 1024;
	p->n_arenas = 15;
	p->have_alloc = true;
	p->alloc_inuse_bytes = 300 * MiB;
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_GLIBC_RETENTION);
	cr_assert_eq(d.verdicts[0].bytes, 1100 * MiB);
	cr_assert_eq(part(&d, "glibc retention"), 1100 * MiB);
	cr_assert_eq(part(&d, "glibc heap in use"), 300 * MiB);
	cr_assert_eq(part(&d, "other anonymous"), 100 * MiB);
	cr_assert_eq(sum_parts(&d), d.usage_bytes);
	cr_assert(strstr(d.summary, "glibc-retention, 1.1 GiB of the 1.5 GiB"),
		  "%s", d.summary);
	cr_assert(strstr(d.verdicts[0].recommend[0], "MALLOC_ARENA_MAX=2"));
	diag_input_release(&in);
}

Test(diagnosis, arenas_without_in_use_figure_are_an_estimate)
{
	struct diag_input in;
	struct diagnosis d;
	struct diag_proc *p;

	diag_input_init(&in);
	in.have_usage = in.have_stats = true;
	in.usage_bytes = in.limit_bytes = 200 * MiB;
	in.anon = 200 * MiB;
	p = one_proc(&in);
	p->have_smaps = true;
	p->arena_rss_kb = 150 * 1024;
	p->n_arenas = 8;
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_GLIBC_RETENTION);
	cr_assert_lt(d.verdicts[0].confidence, 50);
	cr_assert(d.parts[0].estimate);
	cr_assert_str_eq(d.parts[0].name, "glibc arenas (in-use unknown)");
	diag_input_release(&in);
}

static void load_text(const char *path, struct strbuf *sb)
{
	strbuf_init(sb, 0);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 1 << 20, sb), 0, "%s", path);
}

Test(diagnosis, jvm_heap_and_nmt_from_real_jcmd_outputs)
{
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;
	struct strbuf nmt, heap;
	const struct diag_proc *p = NULL;
	static const char status[] = "Name:\tjava\nPid:\t77\nPPid:\t1\n"
				     "VmRSS:\t400000 kB\nRssAnon:\t390000 kB\n"
				     "RssFile:\t10000 kB\nRssShmem:\t0 kB\n";

	load_text("tests/fixtures/jvm/17-VM.native_memory.summary.txt", &nmt);
	load_text("tests/fixtures/jvm/17-GC.heap_info.txt", &heap);
	cr_assert_eq(bundle_new("t", &b), 0);
	bundle_add(b, "processes/77/status", status, sizeof(status) - 1, 1);
	bundle_add(b, "processes/77/jvm/native_memory.txt", nmt.buf, nmt.len,
		   1);
	bundle_add(b, "processes/77/jvm/heap_info.txt", heap.buf, heap.len, 1);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 0, &in), 0);
	cr_assert_eq(in.n_procs, 1);
	p = &in.procs[0];
	cr_assert(p->jvm && p->have_nmt && p->have_heap);
	cr_assert_eq(p->heap_committed_kb, 262144); /* total 262144K */
	cr_assert_eq(p->heap_max_kb, 262144);	    /* -Xmx256m */
	cr_assert_gt(p->n_nmt, 10);
	cr_assert_gt(p->nmt_malloc_kb, 0);
	in.have_usage = true;
	in.usage_bytes = 400 * MiB;
	in.limit_bytes = 400 * MiB;
	diagnosis_run(&in, &d);
	cr_assert_eq(part(&d, "jvm heap"), 262144 * 1024ull);
	cr_assert_eq(d.verdicts[0].kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert(strstr(d.verdicts[0].recommend[0], "MaxRAMPercentage"));
	diag_input_release(&in);
	bundle_free(b);
	strbuf_release(&nmt);
	strbuf_release(&heap);
}

Test(diagnosis, tmpfs_dominates)
{
	struct diag_input in;
	struct diagnosis d;

	diag_input_init(&in);
	in.have_usage = in.have_stats = true;
	in.usage_bytes = in.limit_bytes = 256 * MiB;
	in.anon = 40 * MiB;
	in.file = 216 * MiB;
	in.shmem = 210 * MiB;
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_TMPFS_SHMEM);
	cr_assert_eq(part(&d, "shmem/tmpfs"), 210 * MiB);
	cr_assert_eq(part(&d, "file cache"), 6 * MiB);
	cr_assert(strstr(d.verdicts[0].recommend[0], "sizeLimit"));
}

static void timeline(struct diag_input *in, size_t n, double step,
		     uint64_t (*f)(size_t i, size_t n))
{
	in->tl = calloc(n, sizeof(*in->tl));
	in->n_tl = n;
	for (size_t i = 0; i < n; i++) {
		in->tl[i].t = -(double)(n - 1 - i) * step;
		in->tl[i].usage = f(i, n);
		in->tl[i].nprocs = 1;
	}
}

static uint64_t linear(size_t i, size_t n)
{
	return 100 * MiB + (156 * MiB) * i / (n - 1);
}

static uint64_t flat_then_jump(size_t i, size_t n)
{
	return i + 3 < n ? 30 * MiB : 256 * MiB;
}

static uint64_t near_limit(size_t i, size_t n)
{
	(void)n;
	return 235 * MiB + (i % 3) * MiB;
}

static void run_tl(uint64_t (*f)(size_t, size_t), size_t n, double step,
		   struct diagnosis *d)
{
	struct diag_input in;

	diag_input_init(&in);
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 256 * MiB;
	timeline(&in, n, step, f);
	diagnosis_run(&in, d);
	diag_input_release(&in);
}

Test(diagnosis, steady_growth_is_native_growth)
{
	struct diagnosis d;

	run_tl(linear, 120, 1.0, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	cr_assert(strstr(d.verdicts[0].evidence[0], "R² 1.00"), "%s",
		  d.verdicts[0].evidence[0]);
}

Test(diagnosis, jump_from_idle_is_a_spike)
{
	struct diagnosis d;

	run_tl(flat_then_jump, 60, 1.0, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_SPIKE, "%s", d.summary);
}

Test(diagnosis, plateau_near_the_limit_is_limit_too_low)
{
	struct diagnosis d;

	run_tl(near_limit, 300, 1.0, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_LIMIT_TOO_LOW, "%s", d.summary);
	/* peak 237 MiB × 1.25 = 296 MiB → 320 MiB in 64 MiB steps */
	cr_assert(strstr(d.verdicts[0].recommend[0], "320 MiB"), "%s",
		  d.verdicts[0].recommend[0]);
}

Test(diagnosis, child_victim_is_named)
{
	struct diag_input in;
	struct diagnosis d;

	diag_input_init(&in);
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 64 * MiB;
	in.procs = calloc(2, sizeof(*in.procs));
	in.n_procs = 2;
	in.procs[0].pid = 10;
	in.procs[1].pid = 11;
	in.procs[1].ppid = 10;
	in.victim_pid = 11;
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_CHILD_PROCESS);
	diag_input_release(&in);
}

Test(diagnosis, json_has_ledger_and_ordered_verdicts)
{
	struct diag_input in;
	struct diagnosis d;
	struct json_object *o, *v;

	diag_input_init(&in);
	in.have_usage = in.have_stats = true;
	in.usage_bytes = in.limit_bytes = 100 * MiB;
	in.anon = 10 * MiB;
	in.file = 90 * MiB;
	in.shmem = 90 * MiB;
	diagnosis_run(&in, &d);
	o = diagnosis_to_json(&d);
	cr_assert(json_object_object_get_ex(o, "verdict", &v));
	cr_assert_str_eq(json_object_get_string(v), "tmpfs-shmem");
	cr_assert(json_object_object_get_ex(o, "ledger", &v));
	cr_assert_eq(json_object_array_length(v), 2);
	cr_assert(json_object_object_get_ex(o, "unreconciled_bytes", &v));
	cr_assert_eq(json_object_get_int64(v), 0);
	json_object_put(o);
}

Test(diagnosis, rate_limited_report_uses_the_cgroup_at_notification)
{
	static const char bare[] =
		"3,900,5000000,-;Memory cgroup out of memory: Killed process "
		"42 (app) total-vm:300000kB, anon-rss:250000kB, "
		"file-rss:1000kB, shmem-rss:0kB, UID:0 pgtables:600kB "
		"oom_score_adj:0\n";
	static const char stat[] = "anon 262144000\nfile 4194304\n"
				   "shmem 0\nkernel 2097152\n";
	struct oom_report r;
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;
	struct json_object *st = json_object_new_object();

	oom_report_init(&r);
	r.seq_first = 0;
	cr_assert_eq(kmsg_parse_buffer(bare, sizeof(bare) - 1, keep_first, &r),
		     1);
	cr_assert_not(r.memcg.present, "the kernel printed no usage");
	cr_assert_eq(r.n_stats, 0);
	cr_assert_eq(bundle_new("t", &b), 0);
	json_object_object_add(st, "usage_bytes",
			       json_object_new_int64(268435456));
	json_object_object_add(st, "limit_bytes",
			       json_object_new_int64(268435456));
	json_object_object_add(bundle_manifest(b),
			       "cgroup_state_at_notification", st);
	bundle_add(b, "cgroup/at-notification/memory.stat", stat,
		   sizeof(stat) - 1, 1);
	cr_assert_eq(diagnosis_load_bundle(b, &r, 0, &in), 0);
	cr_assert(in.have_usage && in.have_stats);
	cr_assert_str_eq(in.usage_source, "cgroup at the OOM notification");
	cr_assert_eq(in.limit_bytes, 268435456);
	cr_assert_eq(in.anon, 262144000);
	cr_assert_eq(in.kernel, 2097152);
	cr_assert_eq(in.victim_pid, 42);
	diagnosis_run(&in, &d);
	cr_assert_eq(d.usage_bytes, 268435456);
	cr_assert_eq(part(&d, "kernel"), 2097152);
	diag_input_release(&in);
	bundle_free(b);
	oom_report_release(&r);
}
