/* SPDX-License-Identifier: Apache-2.0 */
/* The ledger arithmetic and the verdicts, on real kernel reports and
 * snapshot files (tests/fixtures) and on constructed inputs. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>
#include <json-c/json.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/report.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/strbuf.h"
#include "kernel/kmsg.h"
#include "base/util.h"

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

/* 3 MiB as the process starts, 10 MiB held for 4 s, then a burst: the
 * 1 s sampler saw the process before it touched its base. */
static uint64_t start_idle_burst(size_t i, size_t n)
{
	if (i == 0)
		return 3 * MiB;
	if (i + 2 < n)
		return 10 * MiB + (i % 2) * 256 * 1024;
	return i + 1 < n ? 90 * MiB : 256 * MiB;
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

/* The spike is told from the idle level the burst left, not from a sample
 * taken before the workload touched its memory. */
Test(diagnosis, spike_is_measured_from_where_the_climb_began)
{
	struct diagnosis d;

	run_tl(start_idle_burst, 7, 1.0, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_SPIKE, "%s", d.summary);
	cr_assert(
		strstr(d.verdicts[0].evidence[0],
		       "usage went from 10 MiB (4% of the limit) to the limit "
		       "in the last 2.0 s"),
		"%s", d.verdicts[0].evidence[0]);
	cr_assert_eq(d.verdicts[0].bytes, 246 * MiB);
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

/* ---- a kill without the kernel's report ---------------------------- */

/* Sizes written "N KiB|MiB|GiB" in s (up to stop, when given) in bytes,
 * each checked against lo..hi. */
static void figures_within(const char *s, const char *stop, uint64_t hi)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {
		{" KiB", 1024.0}, {" MiB", 1048576.0}, {" GiB", 1073741824.0}};
	const char *end = stop ? strstr(s, stop) : NULL;

	end = end ? end : s + strlen(s);
	for (const char *q = s; q < end; q++) {
		char *after;
		double v;

		if (!(*q >= '0' && *q <= '9') ||
		    (q > s && q[-1] >= '0' && q[-1] <= '9') ||
		    (q > s && q[-1] == '.'))
			continue;
		const char *dot;
		double half = 0.5; /* what printing rounded off */

		v = strtod(q, &after);
		dot = memchr(q, '.', (size_t)(after - q));
		for (const char *x = dot ? dot + 1 : after; x < after; x++)
			half /= 10;
		for (size_t i = 0; i < ARRAY_SIZE(units); i++)
			if (!strncmp(after, units[i].unit,
				     strlen(units[i].unit)))
				cr_assert_leq((v - half) * units[i].mul,
					      (double)hi,
					      "figure \"%.*s\" in \"%s\"",
					      (int)(after - q + 4), q, s);
	}
}

/* Every figure of d is ≥ 0 (unsigned; a wrap shows as ~2^64) and, with a
 * limit, at most twice it; the parts add up to the usage at most. */
static void assert_sane(const struct diagnosis *d)
{
	uint64_t lim = d->limit_bytes;
	uint64_t hi = lim > UINT64_MAX / 2 ? UINT64_MAX : 2 * lim;
	uint64_t sum = 0;

	if (lim != UINT64_MAX)
		cr_assert_leq(d->usage_bytes, lim + diag_slack(lim) < lim
						      ? UINT64_MAX
						      : lim + diag_slack(lim));
	for (size_t i = 0; i < d->n_parts; i++) {
		cr_assert_leq(d->parts[i].bytes, d->usage_bytes, "%s",
			      d->parts[i].name);
		sum += d->parts[i].bytes;
		cr_assert_geq(sum, d->parts[i].bytes, "no wrap");
	}
	cr_assert_leq(sum, d->usage_bytes);
	cr_assert_leq(d->unreconciled, d->usage_bytes);
	for (size_t i = 0; i < d->n_verdicts; i++)
		cr_assert_leq(d->verdicts[i].bytes, hi, "%s %llu",
			      diag_kind_name(d->verdicts[i].kind),
			      (unsigned long long)d->verdicts[i].bytes);
	cr_assert_gt(d->n_verdicts, 0);
	if (lim != UINT64_MAX)
		figures_within(d->summary, ";", hi);
}

static void add_text(struct bundle *b, const char *path, const char *text)
{
	cr_assert_eq(bundle_add(b, path, text, strlen(text), 1), 0);
}

static void add_status(struct bundle *b, int pid, unsigned anon_kb)
{
	char path[64], text[256];

	snprintf(path, sizeof(path), "processes/%d/status", pid);
	snprintf(text, sizeof(text),
		 "Name:\tapp\nPid:\t%d\nPPid:\t1\nVmRSS:\t%u kB\n"
		 "RssAnon:\t%u kB\nRssFile:\t100 kB\nRssShmem:\t0 kB\n",
		 pid, anon_kb + 100, anon_kb);
	add_text(b, path, text);
}

/* A v1 kill of a 48 MiB cgroup whose kernel report was lost. */
static struct bundle *no_kernel_bundle(void)
{
	struct bundle *b;

	cr_assert_eq(bundle_new("oom-nokernel", &b), 0);
	json_object_object_add(bundle_manifest(b), "cgroup_mode",
			       json_object_new_string("v1"));
	add_status(b, 42, 40 * 1024);
	return b;
}

static void run_bundle(struct bundle *b, uint64_t kill_ms, struct diagnosis *d,
		       struct diag_input *in)
{
	cr_assert_eq(diagnosis_load_bundle(b, NULL, kill_ms, in), 0);
	diagnosis_run(in, d);
	assert_sane(d);
}

Test(diagnosis, no_kernel_dir_only_at_notification)
{
	struct bundle *b = no_kernel_bundle();
	struct json_object *st = json_object_new_object();
	struct diag_input in;
	struct diagnosis d;

	json_object_object_add(st, "usage_bytes",
			       json_object_new_int64(50331648));
	json_object_object_add(st, "limit_bytes",
			       json_object_new_int64(50331648));
	json_object_object_add(bundle_manifest(b),
			       "cgroup_state_at_notification", st);
	add_text(b, "cgroup/at-notification/memory.stat",
		 "total_rss 44040192\ntotal_cache 4194304\ntotal_shmem 0\n");
	run_bundle(b, 0, &d, &in);
	cr_assert_str_eq(d.usage_source, "cgroup at the OOM notification");
	cr_assert_str_eq(in.limit_source, "cgroup at the OOM notification");
	cr_assert_eq(d.usage_bytes, 48 * MiB);
	cr_assert_eq(d.limit_bytes, 48 * MiB);
	cr_assert_eq(part(&d, "other anonymous"), 42 * MiB);
	cr_assert_eq(part(&d, "file cache"), 4 * MiB);
	diag_input_release(&in);
	bundle_free(b);
}

Test(diagnosis, no_kernel_dir_uses_the_v1_peak)
{
	struct bundle *b = no_kernel_bundle();
	struct diag_input in;
	struct diagnosis d;

	add_text(b, "cgroup/memory.max_usage_in_bytes", "50331648\n");
	add_text(b, "cgroup/memory.limit_in_bytes", "50331648\n");
	run_bundle(b, 0, &d, &in);
	cr_assert_str_eq(d.usage_source,
			 "cgroup memory.max_usage_in_bytes after the kill");
	cr_assert_eq(d.usage_bytes, 48 * MiB);
	cr_assert_eq(d.limit_bytes, 48 * MiB);
	/* no memcg stats: the processes' RSS, 40 MiB anon + 100 kB file */
	cr_assert_eq(part(&d, "other anonymous"), 40 * MiB);
	diag_input_release(&in);
	bundle_free(b);
}

Test(diagnosis, no_kernel_dir_uses_the_v2_peak_in_the_manifest)
{
	struct bundle *b = no_kernel_bundle();
	struct json_object *st = json_object_new_object();
	struct diag_input in;
	struct diagnosis d;

	json_object_object_add(bundle_manifest(b), "cgroup_mode",
			       json_object_new_string("v2"));
	json_object_object_add(st, "usage_bytes", json_object_new_int64(4096));
	json_object_object_add(st, "peak_bytes",
			       json_object_new_int64(50331648));
	json_object_object_add(st, "limit_bytes",
			       json_object_new_int64(50331648));
	json_object_object_add(bundle_manifest(b), "cgroup_state", st);
	run_bundle(b, 0, &d, &in);
	cr_assert_str_eq(d.usage_source, "cgroup memory.peak after the kill");
	cr_assert_str_eq(in.limit_source, "cgroup memory.max after the kill");
	cr_assert_eq(d.usage_bytes, 48 * MiB);
	diag_input_release(&in);
	bundle_free(b);
}

/* Samples every 250 ms: 8 MiB idle, then a jump; the last one was taken
 * after the victim died (no processes, usage back near 0). This is how
 * "spike, 17179869184 GiB of the 48 MiB limit" came about: the usage at
 * the kill read 0 and the spike's figure was usage − low. */
static const char spike_timeline[] =
	"{\"samples\":["
	"{\"t_ms\":9000,\"usage\":8388608,\"limit\":50331648,\"procs\":"
	"[{\"pid\":42,\"anon_kb\":8192}]},"
	"{\"t_ms\":9250,\"usage\":8388608,\"limit\":50331648,\"procs\":"
	"[{\"pid\":42,\"anon_kb\":8192}]},"
	"{\"t_ms\":9500,\"usage\":8388608,\"limit\":50331648,\"procs\":"
	"[{\"pid\":42,\"anon_kb\":8192}]},"
	"{\"t_ms\":9750,\"usage\":48234496,\"limit\":50331648,\"procs\":"
	"[{\"pid\":42,\"anon_kb\":47000}]},"
	"{\"t_ms\":10000,\"usage\":262144,\"limit\":50331648,\"procs\":[]}"
	"]}";

Test(diagnosis, no_kernel_dir_only_timeline)
{
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;

	cr_assert_eq(bundle_new("oom-tl", &b), 0);
	add_text(b, "timeline.json", spike_timeline);
	run_bundle(b, 10000, &d, &in);
	cr_assert_str_eq(d.usage_source,
			 "last timeline sample, 0.2 s before the kill");
	cr_assert_eq(d.usage_bytes, 48234496);
	cr_assert_eq(d.limit_bytes, 50331648);
	cr_assert_str_eq(in.limit_source, "timeline sample");
	cr_assert_eq(d.verdicts[0].kind, DIAG_SPIKE, "%s", d.summary);
	cr_assert_eq(d.verdicts[0].bytes, 48234496 - 8388608);
	cr_assert(strstr(d.summary, "spike, 38 MiB of the 48 MiB limit"), "%s",
		  d.summary);
	diag_input_release(&in);
	bundle_free(b);
}

/* A sidecar's full timeline of many processes: 600 samples of 120
 * processes is a 6 MB file whose json-c tree (over 60 MiB) passes
 * BUNDLE_JSON_MAX_TREE; read one element at a time, every sample counts,
 * for the diagnosis and for the JVM's facts alike. */
Test(diagnosis, timeline_too_costly_to_parse_whole_is_read_by_sample)
{
	struct strbuf sb = STRBUF_INIT;
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;

	strbuf_init(&sb, 64u << 20);
	strbuf_adds(&sb, "{\"jvms\":[{\"pid\":100,\"t_ms\":1000,\"max_heap\":"
			 "268435456}],\"samples\":[");
	for (int i = 0; i < 600; i++) {
		strbuf_addf(&sb,
			    "%s{\"t_ms\":%d,\"usage\":%llu,\"limit\":"
			    "536870912,\"procs\":[",
			    i ? "," : "", 1000 + 500 * i,
			    (unsigned long long)(i + 1) << 19);
		for (int p = 0; p < 120; p++)
			strbuf_addf(
				&sb,
				"%s{\"pid\":%d,\"anon_kb\":%d,\"rss_kb\":%d}",
				p ? "," : "", 100 + p, 4 * (i + 1),
				8 * (i + 1));
		strbuf_adds(&sb, "]}");
	}
	strbuf_adds(&sb, "],\"trims\":[{\"pid\":7,\"rss_before\":"
			 "4194304,\"rss_after\":1048576}]}");
	cr_assert_gt(jget_tree_cost(sb.buf, sb.len), BUNDLE_JSON_MAX_TREE);
	cr_assert_eq(bundle_new("oom-tl", &b), 0);
	bundle_add(b, "timeline.json", sb.buf, sb.len, 1);
	add_status(b, 7, 2048);
	run_bundle(b, 0, &d, &in);
	cr_assert_eq(in.n_tl, 600);
	cr_assert_eq(in.tl[599].t, 0, "the last sample is the kill's time");
	cr_assert_eq(in.tl[0].t, -299.5);
	cr_assert_eq(in.tl[599].usage, 600ull << 19);
	cr_assert_eq(in.tl[599].nprocs, 120);
	cr_assert_eq(in.tl[599].anon, 120ull * 4 * 600 * 1024);
	cr_assert_eq(in.limit_bytes, 536870912);
	cr_assert(in.procs[0].have_trim);
	cr_assert_eq(in.procs[0].trim_before_kb, 4096);
	cr_assert_eq(in.procs[0].trim_after_kb, 1024);
	/* the JVM's facts and its RSS series come from the same timeline */
	cr_assert_eq(in.n_jvms, 1);
	cr_assert_eq(in.jvms[0].pid, 100);
	cr_assert(in.jvms[0].have_flags);
	cr_assert_eq(in.jvms[0].max_heap, 268435456);
	cr_assert(in.jvms[0].have_rss);
	cr_assert_eq(in.jvms[0].rss_last, 8ull * 600 * 1024);
	cr_assert_eq(in.notes.n, 0, "%s", in.notes.text[0]);
	/* report.html draws it: 8 processes and the others, summed */
	strbuf_reset(&sb);
	cr_assert_eq(report_render_html(b, &sb), 0);
	cr_assert(strstr(sb.buf, "Timeline: the last 300 s before the kill"),
		  "%s", sb.buf);
	cr_assert(strstr(sb.buf, "<title>pid 107 RSS</title>"));
	cr_assert_null(strstr(sb.buf, "<title>pid 108 RSS</title>"));
	cr_assert(strstr(sb.buf, "<title>other processes</title>"));
	cr_assert_null(strstr(sb.buf, "not parsed"), "%s", sb.buf);
	diag_input_release(&in);
	bundle_free(b);
	strbuf_release(&sb);
}

/* A bundle holding only timeline.json = tl, loaded with the kill at
 * t_ms 2000. */
static struct bundle *load_timeline_text(const char *tl, struct diag_input *in)
{
	struct bundle *b;

	cr_assert_eq(bundle_new("oom-tl", &b), 0);
	add_text(b, "timeline.json", tl);
	cr_assert_eq(diagnosis_load_bundle(b, NULL, 2000, in), 0);
	return b;
}

/* A timeline cut off mid-file (a sidecar killed mid-write): the samples
 * before the break are kept, and a note says where it broke. */
Test(diagnosis, broken_timeline_keeps_the_samples_before_the_break)
{
	static const char tl[] =
		"{\"samples\":[{\"t_ms\":1000,\"usage\":1048576},"
		"{\"t_ms\":2000,\"usage\":2097152},{\"t_ms\":30";
	struct diag_input in;
	struct bundle *b = load_timeline_text(tl, &in);

	cr_assert_eq(in.n_tl, 2);
	cr_assert_eq(in.tl[1].usage, 2097152);
	cr_assert_eq(in.tl[0].t, -1.0);
	cr_assert_eq(in.notes.n, 1);
	cr_assert_str_eq(in.notes.text[0], "timeline.json: not JSON after 2 "
					   "samples: the rest ignored");
	diag_input_release(&in);
	bundle_free(b);
}

/* A pod's timeline whose samples are not objects (a hostile spool's
 * millions of []): each is refused alone, the objects among them kept,
 * and one note counts the rest. */
Test(diagnosis, timeline_samples_not_objects_are_counted_and_ignored)
{
	static const char tl[] = "{\"samples\":[[],1,{\"t_ms\":1000,"
				 "\"usage\":1048576},\"x\",[[]],"
				 "{\"t_ms\":2000,\"usage\":2097152}]}";
	struct diag_input in;
	struct bundle *b = load_timeline_text(tl, &in);

	cr_assert_eq(in.n_tl, 2);
	cr_assert_eq(in.tl[0].usage, 1048576);
	cr_assert_eq(in.tl[1].t, 0.0);
	cr_assert_eq(in.notes.n, 1);
	cr_assert_str_eq(in.notes.text[0],
			 "timeline.json: 4 samples not objects or over "
			 "BUNDLE_JSON_MAX_TREE alone: ignored");
	diag_input_release(&in);
	bundle_free(b);
}

Test(diagnosis, nothing_read_at_all_sums_the_processes)
{
	struct bundle *b = no_kernel_bundle();
	struct diag_input in;
	struct diagnosis d;

	run_bundle(b, 0, &d, &in);
	cr_assert_not(in.have_usage);
	cr_assert_str_eq(d.usage_source, "sum of the processes' RSS");
	cr_assert_eq(d.usage_bytes, 40 * MiB + 100 * 1024);
	cr_assert_eq(d.limit_bytes, UINT64_MAX);
	diag_input_release(&in);
	bundle_free(b);
}

/* "java-heap, 365 MiB of the 160 MiB limit": the heap's committed size is
 * virtual (SerialGC grows it in steps; untouched pages are not charged).
 * The verdict's figure is the resident share the ledger found. */
Test(diagnosis, java_heap_committed_beyond_the_limit_counts_resident)
{
	struct diag_input in;
	struct diagnosis d;
	struct diag_proc *p;

	diag_input_init(&in);
	p = one_proc(&in);
	in.have_usage = in.have_stats = true;
	in.usage_bytes = in.limit_bytes = 160 * MiB;
	in.anon = 150 * MiB;
	p->jvm = p->have_heap = true;
	p->heap_committed_kb = 365 * 1024;
	p->heap_used_kb = 140 * 1024;
	p->heap_max_kb = 512 * 1024;
	diagnosis_run(&in, &d);
	assert_sane(&d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_JAVA_HEAP, "%s", d.summary);
	cr_assert_eq(d.verdicts[0].bytes, 150 * MiB);
	cr_assert(strstr(d.summary, "java-heap, 150 MiB of the 160 MiB limit"),
		  "%s", d.summary);
	cr_assert(strstr(d.verdicts[0].evidence[0], "committed 365 MiB"));
	cr_assert(d.parts[0].estimate, "a clipped heap is an estimate");
	/* the ledger row (report.html's table) gives no figure above the
	 * limit: "committed 365 MiB" stays in the evidence */
	cr_assert_str_eq(d.parts[0].source,
			 "GC.heap_info pid 42: used 140 MiB, committed beyond "
			 "the limit; not all resident");
	diag_input_release(&in);
}

/* G1 in a container whose limit the JVM did not see: a 64 MiB heap
 * committed, 1 MiB of it touched (smaps by address), direct buffers in
 * NMT "Other". The natives are charged before the untouched heap; the
 * heap takes what is left of its committed size after them. */
Test(diagnosis, untouched_heap_does_not_take_the_natives_share)
{
	struct diag_input in;
	struct diagnosis d;
	struct diag_proc *p;

	diag_input_init(&in);
	p = one_proc(&in);
	in.have_usage = in.have_stats = true;
	in.usage_bytes = in.limit_bytes = 256 * MiB;
	in.anon = 250 * MiB;
	p->jvm = p->have_heap = p->have_nmt = true;
	p->heap_committed_kb = p->heap_max_kb = 64 * 1024;
	p->heap_used_kb = 2 * 1024;
	p->n_nmt = 2;
	strlcpy_safe(p->nmt[0].name, "GC", sizeof(p->nmt[0].name));
	p->nmt[0].committed_kb = 38 * 1024;
	strlcpy_safe(p->nmt[1].name, "Other", sizeof(p->nmt[1].name));
	p->nmt[1].committed_kb = p->nmt[1].malloc_kb = 200 * 1024;
	in.jvms[in.n_jvms++] = (struct diag_jvm){.pid = 42,
						 .have_heap_rss = true,
						 .heap_rss = MiB,
						 .native_rss = 238 * MiB,
						 .heap_rss_age_s = 0.5,
						 .flags_age_s = -1,
						 .rss_last_age_s = -1};
	diagnosis_run(&in, &d);
	assert_sane(&d);
	cr_assert_eq(part(&d, "jvm Other"), 200 * MiB);
	cr_assert_eq(part(&d, "jvm GC"), 38 * MiB);
	/* 1 MiB by address, then 11 of the 63 MiB committed beyond it */
	cr_assert_eq(part(&d, "jvm heap"), 12 * MiB);
	cr_assert_eq(d.verdicts[0].kind, DIAG_JVM_NATIVE, "%s", d.summary);
	diag_input_release(&in);
}

/* Usage read from another cgroup or moment than the limit: noted, and the
 * limit stands in; RSS summed over processes that share pages (a fork)
 * counts them twice: clipped to the usage, noted. */
Test(diagnosis, usage_above_the_limit_is_noted_not_printed)
{
	struct diag_input in;
	struct diagnosis d;
	struct diag_proc *p;

	diag_input_init(&in);
	p = one_proc(&in);
	in.have_usage = true;
	in.usage_bytes = 365 * MiB;
	in.limit_bytes = 160 * MiB;
	strlcpy_safe(in.usage_source, "x", sizeof(in.usage_source));
	p->rss_anon_kb = 300 * 1024; /* no stats: RSS */
	diagnosis_run(&in, &d);
	assert_sane(&d);
	cr_assert_eq(d.usage_bytes, 160 * MiB);
	cr_assert_geq(d.notes.n, 2);
	cr_assert(strstr(d.notes.text[0], "above the 160 MiB limit"), "%s",
		  d.notes.text[0]);
	cr_assert(strstr(d.notes.text[1], "anonymous memory 300 MiB"), "%s",
		  d.notes.text[1]);
	diag_input_release(&in);
}

/* ---- the agent's cgroup timeline (agent/timeline.json, no sidecar) ---- */

/* agent/timeline.json with one series of n samples 1 s apart ending at
 * end_ms; usage(k) gives sample k's usage; a 64 MiB limit. */
static void add_agent_timeline(struct bundle *b, const char *role, size_t n,
			       uint64_t end_ms, uint64_t (*usage)(size_t k))
{
	struct json_object *o = json_object_new_object();
	struct json_object *cgs = json_object_new_array();
	struct json_object *c = json_object_new_object();
	struct json_object *a = json_object_new_array();

	for (size_t k = 0; k < n; k++) {
		struct json_object *s = json_object_new_object();

		json_object_object_add(
			s, "t_ms",
			json_object_new_uint64(end_ms - (n - 1 - k) * 1000));
		json_object_object_add(s, "usage",
				       json_object_new_uint64(usage(k)));
		json_object_object_add(s, "limit",
				       json_object_new_uint64(64 * MiB));
		json_object_array_add(a, s);
	}
	json_object_object_add(c, "cgroup", json_object_new_string("/app"));
	json_object_object_add(c, role, json_object_new_boolean(1));
	json_object_object_add(c, "samples", a);
	json_object_array_add(cgs, c);
	json_object_object_add(
		o, "schema",
		json_object_new_string("oomlens.io/agent-timeline/v1"));
	json_object_object_add(o, "cgroups", cgs);
	cr_assert_eq(bundle_add_json(b, "agent/timeline.json", o, 1), 0);
	json_object_put(o);
}

/* 1 MiB + 7 MiB per 1 s sample */
static uint64_t grow7(size_t k)
{
	return MiB + 7 * MiB * k;
}

static struct bundle *kernel_bundle(struct oom_report *r)
{
	struct bundle *b;

	/* the kernel's report: 32 MiB usage at a 32 MiB limit; the agent's
	 * samples below are of a 64 MiB cgroup, so the report's figures
	 * are replaced with the 64 MiB ones of this kill */
	load_report("tests/fixtures/kmsg/v2-6.1-single/kmsg.txt", r);
	r->memcg.usage_kb = r->memcg.limit_kb = 64 * 1024;
	cr_assert_eq(bundle_new("oom-agent-tl", &b), 0);
	return b;
}

Test(diagnosis, agent_timeline_steady_growth)
{
	struct oom_report r;
	struct bundle *b = kernel_bundle(&r);
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *v;

	/* 9 samples at -8.6 … -0.6 s, and one taken after the kill:
	 * ignored */
	add_agent_timeline(b, "task_memcg", 10, 100400, grow7);
	cr_assert_eq(diagnosis_load_bundle(b, &r, 100000, &in), 0);
	cr_assert(in.tl_cgroup);
	cr_assert_eq(in.n_tl, 9, "the sample after the kill is left out");
	diagnosis_run(&in, &d);
	assert_sane(&d);
	v = &d.verdicts[0];
	cr_assert_eq(v->kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	cr_assert_str_eq(v->evidence[0],
			 "the container grew steadily at 7 MiB/s for the "
			 "last 9 s to the limit (agent's cgroup timeline, 9 "
			 "samples, R² 1.00)");
	cr_assert_str_eq(v->evidence[1],
			 "from 1 MiB (2% of the 64 MiB limit) to 57 MiB at "
			 "the newest sample, 0.6 s before the kill");
	cr_assert_eq(v->bytes, 63 * MiB, "from 1 MiB to the 64 MiB limit");
	/* cgroup-level only: below the sidecar's 45 + 30 × R² */
	cr_assert_eq(v->confidence, 45);
	cr_assert_str_eq(d.usage_source, "kernel report at the kill");
	diag_input_release(&in);
	bundle_free(b);
	oom_report_release(&r);
}

Test(diagnosis, agent_timeline_gives_usage_and_limit_without_a_report)
{
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;

	cr_assert_eq(bundle_new("oom-agent-tl", &b), 0);
	add_agent_timeline(b, "oom_memcg", 9, 99000, grow7);
	run_bundle(b, 99400, &d, &in);
	cr_assert_str_eq(d.usage_source,
			 "agent's last cgroup sample, 0.4 s before the kill");
	cr_assert_eq(d.usage_bytes, 57 * MiB);
	cr_assert_str_eq(in.limit_source, "agent's cgroup timeline");
	cr_assert_eq(d.limit_bytes, 64 * MiB);
	cr_assert_eq(d.verdicts[0].kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	cr_assert_eq(d.verdicts[0].bytes, 56 * MiB);
	diag_input_release(&in);
	bundle_free(b);
}

Test(diagnosis, sidecar_timeline_is_preferred_to_the_agents)
{
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;

	cr_assert_eq(bundle_new("oom-tl", &b), 0);
	add_text(b, "timeline.json", spike_timeline);
	add_agent_timeline(b, "task_memcg", 9, 9900, grow7);
	run_bundle(b, 10000, &d, &in);
	cr_assert_not(in.tl_cgroup);
	cr_assert_eq(in.n_tl, 5);
	cr_assert_eq(d.verdicts[0].kind, DIAG_SPIKE, "%s", d.summary);
	diag_input_release(&in);
	bundle_free(b);
}

/* A cgroup-only timeline of n samples 1 s apart, the newest 0.5 s before
 * the kill, at a 64 MiB limit reached at the kill. */
static void run_cg(uint64_t (*f)(size_t i, size_t n), size_t n,
		   struct diagnosis *d)
{
	struct diag_input in;

	diag_input_init(&in);
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 64 * MiB;
	in.tl_cgroup = true;
	in.tl = calloc(n, sizeof(*in.tl));
	in.n_tl = n;
	for (size_t i = 0; i < n; i++) {
		in.tl[i].t = -0.5 - (double)(n - 1 - i);
		in.tl[i].usage = f(i, n);
	}
	diagnosis_run(&in, d);
	assert_sane(d);
	diag_input_release(&in);
}

static uint64_t idle_20(size_t i, size_t n)
{
	(void)i;
	(void)n;
	return 20 * MiB;
}

Test(diagnosis, agent_timeline_spike_in_the_last_second)
{
	struct diagnosis d;
	const struct diag_verdict *v = &d.verdicts[0];

	run_cg(idle_20, 30, &d);
	cr_assert_eq(v->kind, DIAG_SPIKE, "%s", d.summary);
	cr_assert_eq(v->bytes, 44 * MiB, "20 MiB → the 64 MiB limit");
	cr_assert_eq(v->confidence, 55);
	cr_assert_str_eq(v->evidence[0],
			 "usage went from 20 MiB (31% of the 64 MiB limit) to "
			 "the limit in the last 0.5 s (agent's cgroup "
			 "timeline)");
	cr_assert_str_eq(v->evidence[1],
			 "the newest sample, 0.5 s before the kill, was still "
			 "low: the burst came between two samples (1 Hz)");
	/* a cgroup seen for only 4 s may have just started: less sure */
	run_cg(idle_20, 4, &d);
	cr_assert_eq(v->kind, DIAG_SPIKE);
	cr_assert_eq(v->confidence, 40);
}

/* 2 MiB at the container's start, 20 MiB held 6 s, then 40 MiB on the
 * way to the limit: the burst is told from the 20 MiB it left. */
static uint64_t start_idle_climb(size_t i, size_t n)
{
	if (i == 0)
		return 2 * MiB;
	return i + 1 < n ? 20 * MiB : 40 * MiB;
}

Test(diagnosis, agent_timeline_spike_is_measured_from_the_idle_level)
{
	struct diagnosis d;
	const struct diag_verdict *v = &d.verdicts[0];

	run_cg(start_idle_climb, 8, &d);
	cr_assert_eq(v->kind, DIAG_SPIKE, "%s", d.summary);
	cr_assert_eq(v->bytes, 44 * MiB, "20 MiB → the 64 MiB limit");
	cr_assert_str_eq(v->evidence[0],
			 "usage went from 20 MiB (31% of the 64 MiB limit) to "
			 "the limit in the last 1.5 s (agent's cgroup "
			 "timeline)");
}

static uint64_t flat_at_limit(size_t i, size_t n)
{
	(void)n;
	return 58 * MiB + (i % 3) * MiB;
}

Test(diagnosis, agent_timeline_flat_at_the_limit)
{
	struct diagnosis d;
	const struct diag_verdict *v = &d.verdicts[0];

	run_cg(flat_at_limit, 40, &d);
	cr_assert_eq(v->kind, DIAG_LIMIT_TOO_LOW, "%s", d.summary);
	cr_assert_eq(v->bytes, 64 * MiB);
	cr_assert_eq(v->confidence, 55);
	cr_assert_str_eq(v->evidence[0],
			 "usage stayed above 85% of the 64 MiB limit in 100% "
			 "of the samples over the last 40 s, without a "
			 "growth trend (agent's cgroup timeline)");
	/* peak: the 64 MiB at the kill × 1.25 → 128 MiB in 64 MiB steps */
	cr_assert_str_eq(v->recommend[0],
			 "raise the limit to 128 MiB (peak × 1.25)");
	/* 5 s of it is too little to say */
	run_cg(flat_at_limit, 5, &d);
	cr_assert_eq(v->kind, DIAG_UNKNOWN, "%s", d.summary);
	cr_assert(strstr(v->evidence[0], "the agent's cgroup samples only"),
		  "%s", v->evidence[0]);
}

/* 10 idle samples at 2 MiB, then 8 MiB/s: the growth is timed from where
 * it began, not from the idle start of the timeline */
static uint64_t idle_then_grow(size_t i, size_t n)
{
	(void)n;
	return i < 10 ? 2 * MiB : 2 * MiB + 8 * MiB * (i - 9);
}

Test(diagnosis, agent_timeline_growth_after_idle_is_timed_from_its_start)
{
	struct diagnosis d;
	const struct diag_verdict *v = &d.verdicts[0];

	/* 17 samples: 10 idle (-16.5 … -7.5 s), 7 growing to 58 MiB */
	run_cg(idle_then_grow, 17, &d);
	cr_assert_eq(v->kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	cr_assert_str_eq(v->evidence[0],
			 "the container grew steadily at 8 MiB/s for the "
			 "last 8 s to the limit (agent's cgroup timeline, 8 "
			 "samples, R² 1.00)");
	cr_assert_eq(v->bytes, 62 * MiB, "from 2 MiB to the 64 MiB limit");
}

static uint64_t old_growth(size_t i, size_t n)
{
	return MiB + 7 * MiB * i / n;
}

Test(diagnosis, agent_timeline_that_ended_long_before_the_kill_says_nothing)
{
	struct diag_input in;
	struct diagnosis d;

	diag_input_init(&in);
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 64 * MiB;
	in.tl_cgroup = true;
	in.tl = calloc(20, sizeof(*in.tl));
	in.n_tl = 20;
	for (size_t i = 0; i < 20; i++) {
		in.tl[i].t = -30.0 + (double)i; /* newest 11 s before */
		in.tl[i].usage = old_growth(i, 20) * 8;
	}
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_UNKNOWN, "%s", d.summary);
	diag_input_release(&in);
}

/* A real bundle of a kill without a sidecar (tests/fixtures/bundle): its
 * files into a bundle, the kernel report from kernel/oom.txt, the kill
 * time from the manifest, as `oomlens-agent show` would diagnose it. */
static void add_fixture_file(struct bundle *b, const char *dir,
			     const char *name)
{
	char path[256];
	struct strbuf sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	strbuf_init(&sb, 0);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 1 << 20, &sb), 0, "%s", path);
	cr_assert_eq(bundle_add(b, name, sb.buf, sb.len, 1), 0);
	strbuf_release(&sb);
}

Test(diagnosis, real_bundle_without_sidecar_uses_the_agents_timeline)
{
	static const char dir[] =
		"tests/fixtures/bundle/v1-6.18-agent-timeline-growth";
	static const char *const files[] = {
		"agent/timeline.json",
		"cgroup/memory.stat",
		"cgroup/memory.limit_in_bytes",
		"cgroup/memory.max_usage_in_bytes",
	};
	char path[256];
	struct json_object *man, *v;
	struct oom_report r;
	struct bundle *b;
	struct diag_input in;
	struct diagnosis d;
	const struct diag_verdict *top = &d.verdicts[0];

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	man = json_object_from_file(path);
	cr_assert_not_null(man);
	cr_assert_eq(bundle_new("oom-e6baa8f0-88464", &b), 0);
	json_object_object_foreach (man, key, val)
		json_object_object_add(bundle_manifest(b), key,
				       json_object_get(val));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		add_fixture_file(b, dir, files[i]);
	snprintf(path, sizeof(path), "%s/kernel/oom.txt", dir);
	load_report(path, &r);
	cr_assert(json_object_object_get_ex(man, "killed_at_ms", &v));
	cr_assert_eq(
		diagnosis_load_bundle(b, &r, json_object_get_uint64(v), &in),
		0);
	cr_assert(in.tl_cgroup);
	cr_assert_eq(in.n_tl, 13, "the samples at or before the kill");
	diagnosis_run(&in, &d);
	assert_sane(&d);
	cr_assert_str_eq(d.usage_source, "kernel report at the kill");
	cr_assert_eq(d.limit_bytes, 64 * MiB);
	cr_assert_eq(top->kind, DIAG_NATIVE_GROWTH, "%s", d.summary);
	cr_assert_eq(top->confidence, 44);
	cr_assert_eq(top->bytes, 64 * MiB, "from 0 to the limit");
	cr_assert_str_eq(top->evidence[0],
			 "the container grew steadily at 7 MiB/s for the "
			 "last 9 s to the limit (agent's cgroup timeline, 9 "
			 "samples, R² 0.99)");
	cr_assert_str_eq(top->evidence[1],
			 "from 0 KiB (0% of the 64 MiB limit) to 57 MiB at the "
			 "newest sample, 0.5 s before the kill");
	diag_input_release(&in);
	bundle_free(b);
	oom_report_release(&r);
	json_object_put(man);
}

/* ---- property: random and edge ledgers ------------------------------ */

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A byte figure: edge values, or anything up to 2^(bits) */
static uint64_t rnd_fig(void)
{
	static const uint64_t edge[] = {0,
					1,
					4095,
					48 * MiB,
					160 * MiB,
					UINT64_MAX,
					UINT64_MAX - 1,
					UINT64_MAX / 1024,
					UINT64_MAX / 1024 + 1,
					1ull << 63};

	if (rnd() % 4 == 0)
		return edge[rnd() % ARRAY_SIZE(edge)];
	return rnd() >> (rnd() % 64);
}

static void rnd_proc(struct diag_proc *p, int pid)
{
	p->pid = pid;
	p->ppid = (int)(rnd() % 4);
	p->rss_anon_kb = rnd_fig();
	p->rss_file_kb = rnd_fig();
	p->rss_shmem_kb = rnd_fig();
	p->have_smaps = rnd() % 2;
	p->heap_rss_kb = rnd_fig();
	p->arena_rss_kb = rnd_fig();
	p->stack_rss_kb = rnd_fig();
	p->n_arenas = rnd() % 64;
	p->have_alloc = rnd() % 2;
	p->alloc_inuse_bytes = rnd_fig();
	p->alloc_mmap_bytes = rnd_fig();
	p->jvm = p->have_nmt = p->have_heap = rnd() % 2;
	p->heap_committed_kb = rnd_fig();
	p->heap_used_kb = rnd_fig();
	p->heap_max_kb = rnd_fig();
	p->nmt_malloc_kb = rnd_fig();
	p->n_nmt = rnd() % 4;
	for (size_t i = 0; i < p->n_nmt; i++) {
		snprintf(p->nmt[i].name, sizeof(p->nmt[i].name), "%s",
			 i ? "Other" : "Java Heap");
		p->nmt[i].committed_kb = rnd_fig();
		p->nmt[i].malloc_kb = rnd_fig();
	}
	p->have_trim = rnd() % 2;
	p->trim_before_kb = rnd_fig();
	p->trim_after_kb = rnd_fig();
}

static void rnd_input(struct diag_input *in)
{
	diag_input_init(in);
	in->have_usage = rnd() % 4 != 0;
	in->usage_bytes = rnd_fig();
	if (rnd() % 4)
		in->limit_bytes = rnd_fig();
	in->have_stats = rnd() % 2;
	in->anon = rnd_fig();
	in->file = rnd_fig();
	in->shmem = rnd_fig();
	in->slab = rnd_fig();
	in->sock = rnd_fig();
	in->have_kernel_total = rnd() % 2;
	in->kernel = rnd_fig();
	in->n_procs = rnd() % 14; /* more JVMs than verdict slots */
	in->procs = calloc(in->n_procs + 1, sizeof(*in->procs));
	for (size_t i = 0; i < in->n_procs; i++)
		rnd_proc(&in->procs[i], (int)i + 1);
	in->victim_pid = (int)(rnd() % 5);
	in->have_snapshot = in->n_procs > 0;
	in->tl_cgroup = rnd() % 2;
	in->n_tl = rnd() % (in->tl_cgroup ? 80 : 40);
	in->tl = calloc(in->n_tl + 1, sizeof(*in->tl));
	for (size_t i = 0; i < in->n_tl; i++) {
		in->tl[i].t =
			-(double)(in->n_tl - i) * 0.5 + (double)(rnd() % 3);
		in->tl[i].usage = rnd() % 2 ? rnd_fig() : in->usage_bytes / 2;
		in->tl[i].nprocs = (unsigned)(rnd() % 3);
	}
}

Test(diagnosis, property_no_figure_negative_or_beyond_twice_the_limit)
{
	for (int i = 0; i < 20000; i++) {
		struct diag_input in;
		struct diagnosis d;
		struct json_object *o;

		rnd_input(&in);
		diagnosis_run(&in, &d);
		assert_sane(&d);
		o = diagnosis_to_json(&d);
		cr_assert_not_null(o);
		json_object_put(o);
		diag_input_release(&in);
	}
}

/* ---- how verdicts are ranked (diag_verdict_rank) ----
 * Each row builds a kill's input and names the verdicts expected first,
 * in order. The usage curve of most rows is a burst from idle (the spike
 * rule's confidence 70); a measured account beside it ranks first even
 * when less confident, an estimate does not. */

/* Criterion runs each parameter in a new process image: a row names its
 * builder by index into rank_builders, never by a pointer. */
enum rank_build {
	RANK_RETENTION,
	RANK_HOG,
	RANK_JVM,
	RANK_TMPFS,
	RANK_ESTIMATE,
	RANK_TIE,
};

struct rank_case {
	char name[48];
	enum rank_build build;
	enum diag_kind want[3];
	size_t n_want;
	enum diag_basis first_basis;
};

static void rank_base(struct diag_input *in, bool burst)
{
	diag_input_init(in);
	in->have_usage = in->have_stats = true;
	in->usage_bytes = in->limit_bytes = 256 * MiB;
	in->anon = 250 * MiB;
	in->file = 6 * MiB;
	if (burst)
		timeline(in, 60, 1.0, flat_then_jump);
}

/* test_glibc_retention_c's kill: glibc keeps 64 MiB (25 % of the usage:
 * confidence 67) after a trim at the top threshold gave some back, and
 * the last seconds climbed from below half the limit (spike, 70). */
static void rank_retention(struct diag_input *in)
{
	struct diag_proc *p;

	rank_base(in, true);
	p = one_proc(in);
	p->have_smaps = true;
	p->heap_rss_kb = 16 * 1024;
	p->arena_rss_kb = 208 * 1024;
	p->n_arenas = 9;
	p->have_alloc = true;
	p->alloc_inuse_bytes = 160 * MiB;
}

/* a plain hog: one process, no allocator figures, the same burst */
static void rank_hog(struct diag_input *in)
{
	rank_base(in, true);
	one_proc(in)->have_smaps = true;
}

/* a JVM whose heap is nearly full (used 95 % of max) and holds 120 MiB
 * resident (47 % of the usage: confidence 63) */
static void rank_jvm(struct diag_input *in)
{
	struct diag_proc *p;

	rank_base(in, true);
	p = one_proc(in);
	p->jvm = p->have_heap = true;
	p->heap_committed_kb = 120 * 1024;
	p->heap_used_kb = 122 * 1024 * 95 / 100;
	p->heap_max_kb = 122 * 1024;
}

/* 80 MiB in a memory-backed emptyDir (31 %: confidence 65) */
static void rank_tmpfs(struct diag_input *in)
{
	rank_base(in, true);
	in->anon = 170 * MiB;
	in->file = 86 * MiB;
	in->shmem = 80 * MiB;
}

/* arenas without an in-use figure: an estimate (35), under the spike */
static void rank_estimate(struct diag_input *in)
{
	struct diag_proc *p;

	rank_base(in, true);
	p = one_proc(in);
	p->have_smaps = true;
	p->arena_rss_kb = 150 * 1024;
	p->n_arenas = 8;
}

/* shmem and kernel memory of the same size: equal confidences, ranked by
 * their kinds' order, never by the order they were found in */
static void rank_tie(struct diag_input *in)
{
	rank_base(in, false);
	in->anon = 96 * MiB;
	in->file = 80 * MiB;
	in->shmem = 80 * MiB;
	in->kernel = 80 * MiB;
	in->have_kernel_total = true;
}

static void (*const rank_builders[])(struct diag_input *) = {
	[RANK_RETENTION] = rank_retention,
	[RANK_HOG] = rank_hog,
	[RANK_JVM] = rank_jvm,
	[RANK_TMPFS] = rank_tmpfs,
	[RANK_ESTIMATE] = rank_estimate,
	[RANK_TIE] = rank_tie,
};

ParameterizedTestParameters(diagnosis, ranking)
{
	static struct rank_case cases[] = {
		{"retention under a spike",
		 RANK_RETENTION,
		 {DIAG_GLIBC_RETENTION, DIAG_SPIKE},
		 2,
		 DIAG_BASIS_MEASURED},
		{"hog", RANK_HOG, {DIAG_SPIKE}, 1, DIAG_BASIS_INFERRED},
		{"java heap under a spike",
		 RANK_JVM,
		 {DIAG_JAVA_HEAP, DIAG_SPIKE},
		 2,
		 DIAG_BASIS_MEASURED},
		{"tmpfs under a spike",
		 RANK_TMPFS,
		 {DIAG_TMPFS_SHMEM, DIAG_SPIKE},
		 2,
		 DIAG_BASIS_MEASURED},
		{"arena estimate",
		 RANK_ESTIMATE,
		 {DIAG_SPIKE, DIAG_GLIBC_RETENTION},
		 2,
		 DIAG_BASIS_INFERRED},
		{"equal confidences",
		 RANK_TIE,
		 {DIAG_TMPFS_SHMEM, DIAG_KERNEL_MEMORY},
		 2,
		 DIAG_BASIS_MEASURED},
	};
	return cr_make_param_array(struct rank_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct rank_case *c, diagnosis, ranking)
{
	struct diag_input in;
	struct diagnosis d;

	rank_builders[c->build](&in);
	diagnosis_run(&in, &d);
	cr_assert_geq(d.n_verdicts, c->n_want, "%s: %zu verdicts", c->name,
		      d.n_verdicts);
	for (size_t i = 0; i < c->n_want; i++)
		cr_assert_eq(d.verdicts[i].kind, c->want[i],
			     "%s: verdict %zu is %s (confidence %d), not %s",
			     c->name, i, diag_kind_name(d.verdicts[i].kind),
			     d.verdicts[i].confidence,
			     diag_kind_name(c->want[i]));
	cr_assert_eq(d.verdicts[0].basis, c->first_basis, "%s", c->name);
	for (size_t i = 1; i < d.n_verdicts; i++)
		cr_assert_leq(
			diag_verdict_rank(&d.verdicts[i - 1], &d.verdicts[i]),
			0, "%s: verdicts %zu and %zu out of order", c->name,
			i - 1, i);
	diag_input_release(&in);
}

/* The retention case above, as the reader sees it: the spike says why it
 * is second, the summary and diagnosis.json lead with the measured
 * verdict, and each verdict carries its basis. */
Test(diagnosis, retention_outranks_a_spike_and_the_spike_says_why)
{
	struct diag_input in;
	struct diagnosis d;
	struct json_object *o, *vs, *b;
	const struct diag_verdict *s;

	rank_retention(&in);
	diagnosis_run(&in, &d);
	cr_assert_eq(d.verdicts[0].kind, DIAG_GLIBC_RETENTION);
	cr_assert_lt(d.verdicts[0].confidence, d.verdicts[1].confidence,
		     "the row must test a less confident measured verdict");
	cr_assert_eq(d.verdicts[0].bytes, 64 * MiB);
	s = &d.verdicts[1];
	cr_assert_eq(s->kind, DIAG_SPIKE);
	cr_assert(strstr(s->evidence[s->n_evidence - 1],
			 "ranked after glibc-retention, a measured account of "
			 "64 MiB"),
		  "%s", s->evidence[s->n_evidence - 1]);
	cr_assert(strstr(d.summary, "glibc-retention, 64 MiB of the 256 MiB"),
		  "%s", d.summary);
	o = diagnosis_to_json(&d);
	cr_assert(json_object_object_get_ex(o, "verdicts", &vs));
	cr_assert(json_object_object_get_ex(json_object_array_get_idx(vs, 0),
					    "basis", &b));
	cr_assert_str_eq(json_object_get_string(b), "measured");
	cr_assert(json_object_object_get_ex(json_object_array_get_idx(vs, 1),
					    "basis", &b));
	cr_assert_str_eq(json_object_get_string(b), "inferred");
	json_object_put(o);
	diag_input_release(&in);
}
