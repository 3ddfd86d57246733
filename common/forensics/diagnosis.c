/* SPDX-License-Identifier: Apache-2.0 */
/* The ledger and the verdicts (pure): the frame of the ledger and the
 * cgroup-level verdicts (tmpfs, kernel memory, spike, steady growth,
 * limit too low, child process); each runtime's rows and verdicts come
 * from its table entry (runtimes/registry.c), called in the table's
 * order. */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/util.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/registry.h"

void diag_input_init(struct diag_input *in)
{
	memset(in, 0, sizeof(*in));
	in->limit_bytes = UINT64_MAX;
}

void diag_input_release(struct diag_input *in)
{
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (in->rt_data[i] && rt->release)
			rt->release(in->rt_data[i]);
	}
	free(in->procs);
	free(in->tl);
	diag_input_init(in);
}

/* ---- the ledger ---- */

static uint64_t kernel_bytes(const struct diag_input *in)
{
	const uint64_t v[] = {in->kernel_stack, in->pagetables, in->slab,
			      in->sock,		in->percpu,	in->vmalloc};
	uint64_t sum = 0;

	if (in->have_kernel_total)
		return in->kernel;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		sum = add_sat(sum, v[i]);
	return sum;
}

static void ledger_anon(struct diag_ledger *l, const struct diag_input *in)
{
	for (size_t i = 0; i < in->n_procs; i++) {
		const struct diag_proc *p = &in->procs[i];

		for (size_t k = 0; k < diag_runtime_count(); k++) {
			const struct diag_runtime *rt = diag_runtime_at(k);

			if (rt->ledger)
				rt->ledger(l, in, in->rt_data[k], p);
		}
		if (!p->jvm && p->have_smaps && p->stack_rss_kb)
			diag_part(l->d, p->pid, "thread stacks",
				  diag_take_anon(l, KB(p->stack_rss_kb)), false,
				  "smaps pid %d", p->pid);
	}
	diag_part(l->d, 0, "other anonymous", l->anon_left, !in->have_snapshot,
		  in->have_snapshot
			  ? "not explained by the snapshot (grew after "
			    "it, or anonymous mappings)"
			  : "no pre-kill snapshot: anonymous memory is "
			    "not broken down");
}

/* The memory classes the ledger splits: memcg statistics, or the
 * processes' RSS summed when the statistics are missing. */
struct classes {
	uint64_t anon, file, shmem, kernel;
	const char *src;
};

static void classes_of(const struct diag_input *in, struct classes *c)
{
	*c = (struct classes){in->anon, in->file, in->shmem, kernel_bytes(in),
			      "memcg stats at the kill"};
	if (in->have_stats)
		return;
	*c = (struct classes){.src = "process RSS (no memcg stats)"};
	for (size_t i = 0; i < in->n_procs; i++) {
		c->anon = add_sat(c->anon, KB(in->procs[i].rss_anon_kb));
		c->file = add_sat(c->file, KB(in->procs[i].rss_file_kb));
		c->shmem = add_sat(c->shmem, KB(in->procs[i].rss_shmem_kb));
	}
}

/* The classes, in this order, take at most what the usage leaves: the
 * parts then add up to the usage at most. They can exceed it because RSS
 * counts a page shared by several processes (fork, COW, a mapped file)
 * once per process, and because stats and usage are read apart. */
static uint64_t clip(struct diagnosis *d, uint64_t *left, uint64_t v,
		     const char *what, bool rss)
{
	if (v > *left) {
		jget_note(&d->notes,
			  "%s %s is more than the %s of usage left: counted as "
			  "%s (%s)",
			  what, H(v), H(*left), H(*left),
			  rss ? "RSS of a snapshot older than the kill, or of "
				"pages shared between processes"
			      : "statistics read apart from the usage");
		v = *left;
	}
	*left -= v;
	return v;
}

static void ledger_run(const struct diag_input *in, struct diagnosis *d)
{
	struct diag_ledger l = {.d = d};
	struct classes c;
	uint64_t sum = 0, left = d->usage_bytes, cache;

	classes_of(in, &c);
	l.anon_left =
		clip(d, &left, c.anon, "anonymous memory", !in->have_stats);
	d->cur_age_s = in->have_snapshot ? in->snapshot_age_s : 0;
	ledger_anon(&l, in);
	d->cur_age_s = in->have_stats ? 0 : d->cur_age_s;
	cache = clip(d, &left, sub_sat(c.file, c.shmem), "file cache",
		     !in->have_stats);
	diag_part(d, 0, "file cache", cache, !in->have_stats,
		  "%s: file minus shmem", c.src);
	c.shmem = clip(d, &left, c.shmem, "shmem", !in->have_stats);
	diag_part(d, 0, "shmem/tmpfs", c.shmem, !in->have_stats, "%s: shmem",
		  c.src);
	c.kernel = clip(d, &left, c.kernel, "kernel memory", !in->have_stats);
	if (in->have_stats && in->have_kernel_total)
		diag_part(d, 0, "kernel", c.kernel, false,
			  "memcg kernel: stacks %s, page tables %s, slab %s, "
			  "sockets %s",
			  H(in->kernel_stack), H(in->pagetables), H(in->slab),
			  H(in->sock));
	else
		diag_part(d, 0, "kernel", c.kernel, false,
			  "memcg stacks+pagetables+slab+sock+percpu");
	for (size_t i = 0; i < d->n_parts; i++)
		sum = add_sat(sum, d->parts[i].bytes);
	d->unreconciled = sub_sat(d->usage_bytes, sum);
	diag_part(d, 0, "unreconciled", d->unreconciled, true,
		  "usage minus the parts above");
}

/* ---- verdicts ---- */

static void v_shmem_kernel(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes, s = diag_part_bytes(d, "shmem/tmpfs");
	uint64_t k = diag_part_bytes(d, "kernel");
	struct diag_verdict *v;

	if (u && mul_sat(s, 10) >= mul_sat(u, 3)) {
		v = diag_verdict(d, DIAG_TMPFS_SHMEM, 50 + (int)(pct(s, u) / 2),
				 s);
		EVID(v, "shmem/tmpfs holds %s, %.0f%% of the %s in use", H(s),
		     pct(s, u), H(u));
		EVID(v, "files in a memory-backed emptyDir or /dev/shm count "
			"against the container's limit");
		RECO(v,
		     "give the emptyDir (medium: Memory) a sizeLimit below "
		     "the container limit, e.g. sizeLimit: %lluMi",
		     (unsigned long long)(round_up(s / 2, MiB) / MiB));
		RECO(v, "or use a disk-backed emptyDir for scratch files");
	}
	if (u && mul_sat(k, 10) >= mul_sat(u, 3) && in->have_stats) {
		v = diag_verdict(d, DIAG_KERNEL_MEMORY,
				 50 + (int)(pct(k, u) / 2), k);
		EVID(v,
		     "kernel memory %s (%.0f%%): stacks %s, page tables %s, "
		     "slab %s, sockets %s",
		     H(k), pct(k, u), H(in->kernel_stack), H(in->pagetables),
		     H(in->slab), H(in->sock));
		RECO(v,
		     "look for many threads, sockets or open files; raise the "
		     "limit to %s if this is the steady state",
		     H(diag_suggested_limit(in, d)));
	}
}

static void regress(const struct diag_input *in, double *ret_slope,
		    double *ret_r2)
{
	double n = (double)in->n_tl, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;

	for (size_t i = 0; i < in->n_tl; i++) {
		double x = in->tl[i].t, y = (double)in->tl[i].usage;

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		syy += y * y;
	}
	double vx = n * sxx - sx * sx, vy = n * syy - sy * sy;
	double cov = n * sxy - sx * sy;

	*ret_slope = vx > 0 ? cov / vx : 0;
	*ret_r2 = vx > 0 && vy > 0 ? cov * cov / (vx * vy) : 0;
}

/* Where the final climb to the kill began, among the last 10 s of the
 * samples idx[0..n) name (in->tl in order when idx is NULL): walking back
 * from the newest while each earlier sample is lower by more than a step
 * of noise (1/64 of the limit, at least 1 MiB). A workload that idled
 * before a burst is told from its idle level, not from a sample taken
 * before it touched its memory. The sidecar's samples without processes
 * (before the workload ran, after it died) are skipped; the agent's
 * cgroup samples (idx given) count no processes. NULL when none, or
 * when the climb began above half the limit (no spike: the caller keeps
 * the lowest sample). */
static const struct diag_sample *climb_start(const struct diag_input *in,
					     const size_t *idx, size_t n,
					     uint64_t lim)
{
	uint64_t tol = lim / 64 > MiB ? lim / 64 : MiB;
	const struct diag_sample *r = NULL;

	for (size_t k = n; k-- > 0;) {
		const struct diag_sample *s = &in->tl[idx ? idx[k] : k];

		if (s->t < -10.0)
			break;
		if (!idx && !s->nprocs)
			continue;
		if (r && s->usage >= sub_sat(r->usage, tol))
			break;
		r = s;
	}
	return r && mul_sat(r->usage, 2) <= lim ? r : NULL;
}

/* ---- the agent's cgroup timeline (no sidecar) ---- */

/* What the agent's 1 Hz cgroup samples before the kill show: usage only,
 * no process counts, so every verdict from them says it is cgroup-level
 * and is less sure than the sidecar's. Samples after the kill, and
 * readings above the limit (another moment's), are left out or clipped. */
struct cg_view {
	size_t idx[64]; /* the newest samples at or before the kill */
	size_t n;
	uint64_t lim, end; /* the limit; the usage at the kill */
	size_t run;	   /* samples in the growth run ending at the newest */
	double rate, r2;   /* its slope (bytes/s) and fit */
};

static uint64_t cg_usage(const struct diag_input *in, const struct cg_view *v,
			 size_t k)
{
	return min_u64(in->tl[v->idx[k]].usage,
		       add_sat(v->lim, diag_slack(v->lim)));
}

static double cg_t(const struct diag_input *in, const struct cg_view *v,
		   size_t k)
{
	return in->tl[v->idx[k]].t;
}

/* The run of samples ending at the newest over which usage never fell by
 * more than noise, from where it began to rise; its least-squares slope
 * and R². */
static void cg_run(const struct diag_input *in, struct cg_view *v)
{
	uint64_t tol = v->lim / 100 > MiB ? v->lim / 100 : MiB;
	double n, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, vx, vy, cov;
	size_t k = v->n - 1;

	while (k > 0 && cg_t(in, v, k - 1) < cg_t(in, v, k) &&
	       cg_usage(in, v, k - 1) <= add_sat(cg_usage(in, v, k), tol))
		k--;
	/* it starts where usage started to rise: idle before is no growth */
	while (k + 1 < v->n &&
	       cg_usage(in, v, k + 1) <= add_sat(cg_usage(in, v, k), tol))
		k++;
	v->run = v->n - k;
	n = (double)v->run;
	for (size_t i = k; i < v->n; i++) {
		double x = cg_t(in, v, i), y = (double)cg_usage(in, v, i);

		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		syy += y * y;
	}
	vx = n * sxx - sx * sx;
	vy = n * syy - sy * sy;
	cov = n * sxy - sx * sy;
	v->rate = vx > 0 ? cov / vx : 0;
	v->r2 = vx > 0 && vy > 0 ? cov * cov / (vx * vy) : 0;
}

/* Steady growth until the limit: ≥ 3 samples over ≥ 2 s that rose by at
 * least a tenth of the limit, a straight line (R² ≥ 0.8), and the rest to
 * the limit no more than twice what the rate covers since the newest. */
static bool cg_growth(const struct diag_input *in, const struct cg_view *v,
		      struct diagnosis *d)
{
	size_t s = v->n - v->run, e = v->n - 1;
	double span = cg_t(in, v, e) - cg_t(in, v, s), age = -cg_t(in, v, e);
	uint64_t first = cg_usage(in, v, s), last = cg_usage(in, v, e);
	uint64_t gap = sub_sat(v->end, last), rise = sub_sat(v->end, first);
	struct diag_verdict *vd;
	uint64_t next;

	if (v->run < 3 || span < 2 || v->rate <= 0 || v->r2 < 0.8 ||
	    sub_sat(last, first) < v->lim / 10 ||
	    (double)gap > 2 * v->rate * fmax(age, 1.0) + (double)(v->lim / 50))
		return false;
	vd = diag_verdict(d, DIAG_NATIVE_GROWTH,
			  35 + (int)(v->r2 * 10) + (span >= 10 ? 10 : 0) +
				  (v->run >= 10 ? 5 : 0),
			  rise);
	EVID(vd,
	     "the container grew steadily at %s/s for the last %.0f s to the "
	     "limit (agent's cgroup timeline, %zu samples, R² %.2f)",
	     H((uint64_t)fmin(v->rate, (double)v->lim)), -cg_t(in, v, s),
	     v->run, v->r2);
	EVID(vd,
	     "from %s (%.0f%% of the %s limit) to %s at the newest sample, "
	     "%.1f s before the kill",
	     H(first), pct(first, v->lim), H(v->lim), H(last), age);
	EVID(vd, "cgroup-level only: which process grew, and in what memory, "
		 "needs the sidecar");
	next = diag_suggested_limit(in, d);
	RECO(vd, "a leak, or a working set above the limit: opt the pod in "
		 "to pre-kill snapshots (oomlens.io/capture: \"true\") to see "
		 "which process and what memory");
	RECO(vd,
	     "a higher limit only delays the kill: at this rate %s lasts "
	     "%.0f s more",
	     H(next), (double)sub_sat(next, v->end) / v->rate);
	return true;
}

/* From below half the limit to the kill within 10 s without steady growth
 * (the sidecar's rule); weaker when the cgroup's timeline is young, as the
 * workload may have just started. */
static bool cg_spike(const struct diag_input *in, const struct cg_view *v,
		     struct diagnosis *d)
{
	uint64_t low = UINT64_MAX;
	double low_t = 0, t0 = cg_t(in, v, 0);
	bool young = t0 > -10.0, newest = false;
	const struct diag_sample *c;
	struct diag_verdict *vd;

	for (size_t k = 0; k < v->n; k++)
		if (cg_t(in, v, k) >= -10.0 && cg_usage(in, v, k) <= low) {
			low = cg_usage(in, v, k);
			low_t = cg_t(in, v, k);
			newest = k == v->n - 1;
		}
	if (low == UINT64_MAX || mul_sat(low, 2) > v->lim)
		return false;
	c = climb_start(in, v->idx, v->n, v->lim);
	if (c) {
		low = c->usage;
		low_t = c->t;
		newest = c == &in->tl[v->idx[v->n - 1]];
	}
	vd = diag_verdict(d, DIAG_SPIKE, young ? 40 : 55, sub_sat(v->end, low));
	EVID(vd,
	     "usage went from %s (%.0f%% of the %s limit) to the limit in "
	     "the last %.1f s (agent's cgroup timeline)",
	     H(low), pct(low, v->lim), H(v->lim), -low_t);
	if (newest)
		EVID(vd,
		     "the newest sample, %.1f s before the kill, was still "
		     "low: the burst came between two samples (1 Hz)",
		     -low_t);
	if (young)
		EVID(vd,
		     "the cgroup was sampled only from %.0f s before the kill: "
		     "the workload may have just started",
		     -t0);
	RECO(vd,
	     "find what allocates in a burst (a large request, a batch); "
	     "bound it, or raise the limit to %s",
	     H(diag_suggested_limit(in, d)));
	return true;
}

/* Flat near the limit: ≥ 8 samples over ≥ 10 s, 80 % of them at ≥ 85 %
 * of the limit. The cgroup's usage counts page cache the kernel could
 * have reclaimed: said, and less sure than the sidecar's 30 s rule. */
static void cg_flat(const struct diag_input *in, const struct cg_view *v,
		    struct diagnosis *d)
{
	double span = cg_t(in, v, v->n - 1) - cg_t(in, v, 0);
	struct diag_verdict *vd;
	size_t near = 0;

	for (size_t k = 0; k < v->n; k++)
		near += mul_sat(cg_usage(in, v, k), 100) >= mul_sat(v->lim, 85);
	if (v->n < 8 || span < 10 || near * 10 < v->n * 8)
		return;
	vd = diag_verdict(d, DIAG_LIMIT_TOO_LOW, span >= 30 ? 55 : 45, v->lim);
	EVID(vd,
	     "usage stayed above 85%% of the %s limit in %.0f%% of the "
	     "samples over the last %.0f s, without a growth trend (agent's "
	     "cgroup timeline)",
	     H(v->lim), pct(near, v->n), -cg_t(in, v, 0));
	EVID(vd, "cgroup-level only: the usage includes page cache the "
		 "kernel can reclaim; the ledger says what was left");
	RECO(vd, "raise the limit to %s (peak × 1.25)",
	     H(diag_suggested_limit(in, d)));
}

static void v_cgroup_timeline(const struct diag_input *in, struct diagnosis *d)
{
	struct cg_view v = {.lim = d->limit_bytes};

	if (v.lim == UINT64_MAX || !v.lim)
		return;
	for (size_t i = 0; i < in->n_tl; i++) {
		if (in->tl[i].t > 0)
			continue;
		if (v.n == ARRAY_SIZE(v.idx)) { /* keep the newest */
			memmove(v.idx, v.idx + 1,
				sizeof(v.idx) - sizeof(*v.idx));
			v.n--;
		}
		v.idx[v.n++] = i;
	}
	/* a newest sample long before the kill says nothing of its end */
	if (v.n < 3 || cg_t(in, &v, v.n - 1) < -3.0)
		return;
	v.end = min_u64(d->usage_bytes, v.lim);
	cg_run(in, &v);
	if (!cg_growth(in, &v, d) && !cg_spike(in, &v, d))
		cg_flat(in, &v, d);
}

/* Whether a runtime's own facts explain the growth (its heap grew). */
static bool runtime_explains_growth(const struct diag_input *in, uint64_t usage)
{
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (rt->explains_growth &&
		    rt->explains_growth(in, in->rt_data[i], usage))
			return true;
	}
	return false;
}

static void v_timeline(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t lim = d->limit_bytes, low = UINT64_MAX, near = 0;
	double span, slope, r2, low_t = 0, start_t = 0;
	bool started = false, linear;
	struct diag_verdict *v;

	if (in->tl_cgroup) {
		v_cgroup_timeline(in, d);
		return;
	}
	if (in->n_tl < 3 || lim == UINT64_MAX)
		return;
	span = in->tl[in->n_tl - 1].t - in->tl[0].t;
	for (size_t i = 0; i < in->n_tl; i++) {
		const struct diag_sample *s = &in->tl[i];

		if (s->nprocs && !started) {
			started = true;
			start_t = s->t;
		}
		if (s->t >= -10.0 && s->usage < low && s->nprocs) {
			low = s->usage;
			low_t = s->t;
		}
		near += mul_sat(s->usage, 100) >= mul_sat(lim, 85);
	}
	regress(in, &slope, &r2);
	linear = in->n_tl >= 10 && span >= 10 && slope > 0 && r2 >= 0.8;
	if (!linear && low != UINT64_MAX && mul_sat(low, 2) <= lim) {
		const struct diag_sample *r =
			climb_start(in, NULL, in->n_tl, lim);
		bool young;

		if (r) {
			low = r->usage;
			low_t = r->t;
		}
		/* A workload that hits the limit right after it started is
		 * as likely sized too small as bursting: say which. */
		young = start_t >= -10.0 && low_t - start_t < 1.5;

		v = diag_verdict(d, DIAG_SPIKE, young ? 45 : 70,
				 sub_sat(d->usage_bytes, low));
		EVID(v,
		     "usage went from %s (%.0f%% of the limit) to the limit "
		     "in the last %.1f s",
		     H(low), pct(low, lim), -low_t);
		if (young)
			EVID(v,
			     "the workload started only %.1f s before the "
			     "kill",
			     -start_t);
		RECO(v,
		     "find what allocates in a burst (a large request, a "
		     "batch); bound it, or raise the limit to %s",
		     H(diag_suggested_limit(in, d)));
	} else if (linear && !runtime_explains_growth(in, d->usage_bytes)) {
		/* the fitted rise, at most what was in use at the end */
		double rise = fmin(slope * span, (double)d->usage_bytes);

		v = diag_verdict(d, DIAG_NATIVE_GROWTH, 45 + (int)(r2 * 30),
				 (uint64_t)rise);
		EVID(v,
		     "usage grew steadily by %s/min over %.0f s (R² %.2f) "
		     "until the limit",
		     H(slope * 60 < 1e18 ? (uint64_t)(slope * 60) : UINT64_MAX),
		     span, r2);
		RECO(v, "a leak is likely: profile allocations (heaptrack, "
			"valgrind --tool=massif, jemalloc prof) on a copy");
		RECO(v,
		     "a higher limit only delays the kill: at this rate %s "
		     "lasts %.0f more minutes",
		     H(diag_suggested_limit(in, d)),
		     (double)sub_sat(diag_suggested_limit(in, d),
				     d->usage_bytes) /
			     slope / 60);
	}
	if (span >= 30 && mul_sat(near, 10) >= mul_sat(in->n_tl, 8) &&
	    !linear) {
		v = diag_verdict(d, DIAG_LIMIT_TOO_LOW, 60, lim);
		EVID(v,
		     "usage stayed above 85%% of the %s limit for %.0f%% of "
		     "the last %.0f s",
		     H(lim), pct(near, in->n_tl), span);
		RECO(v, "raise the limit to %s (peak × 1.25)",
		     H(diag_suggested_limit(in, d)));
	}
}

static void v_child(const struct diag_input *in, struct diagnosis *d)
{
	const struct diag_proc *victim = NULL;
	struct diag_verdict *v;
	bool child = false;

	for (size_t i = 0; i < in->n_procs; i++)
		if (in->procs[i].pid == in->victim_pid)
			victim = &in->procs[i];
	if (!in->victim_pid)
		return;
	if (in->main_pid && in->victim_pid != in->main_pid)
		child = true;
	for (size_t i = 0; victim && i < in->n_procs; i++)
		if (in->procs[i].pid == victim->ppid)
			child = true;
	if (!child)
		return;
	v = diag_verdict(d, DIAG_CHILD_PROCESS, 75, 0);
	EVID(v, "the victim, pid %d%s%s, is not the container's main process%s",
	     in->victim_pid, victim ? " " : "", victim ? victim->comm : "",
	     in->main_pid ? "" : " (its parent runs in the same cgroup)");
	RECO(v, "a helper process (a fork, a shell-out, a sidecar script) used "
		"the memory: bound it or give it its own container");
}

int diag_verdict_rank(const void *a, const void *b)
{
	const struct diag_verdict *x = a, *y = b;

	if (x->basis != y->basis)
		return x->basis == DIAG_BASIS_MEASURED ? -1 : 1;
	if (x->confidence != y->confidence)
		return y->confidence - x->confidence;
	return (int)x->kind - (int)y->kind;
}

/* A verdict read from the usage curve that ranks after a measured one
 * says so, and what the measured account holds, so that a reader of a
 * spike that is really retention sees why it is second. */
static void say_outranked(struct diagnosis *d)
{
	const struct diag_verdict *m = &d->verdicts[0];

	if (!d->n_verdicts || m->basis != DIAG_BASIS_MEASURED)
		return;
	for (size_t i = 1; i < d->n_verdicts; i++) {
		struct diag_verdict *v = &d->verdicts[i];

		if ((v->kind != DIAG_SPIKE && v->kind != DIAG_NATIVE_GROWTH &&
		     v->kind != DIAG_LIMIT_TOO_LOW) ||
		    v->n_evidence == DIAG_MAX_LINES)
			continue;
		EVID(v,
		     "ranked after %s, a measured account of %s: what is "
		     "measured outranks the shape of the usage curve",
		     diag_kind_name(m->kind), H(m->bytes));
	}
}

static int max_confidence(const struct diagnosis *d)
{
	int c = 0;

	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].confidence > c)
			c = d->verdicts[i].confidence;
	return c;
}

static void summarize(const struct diag_input *in, struct diagnosis *d)
{
	const struct diag_verdict *v = &d->verdicts[0];
	char lim[24] = "no limit";

	if (d->limit_bytes != UINT64_MAX)
		diag_human(lim, sizeof(lim), d->limit_bytes);
	if (v->kind == DIAG_UNKNOWN || !v->bytes)
		snprintf(d->summary, sizeof(d->summary),
			 "%s%s%s at %s of %s; %.150s", diag_kind_name(v->kind),
			 v->detail[0] ? ":" : "", v->detail, H(d->usage_bytes),
			 lim,
			 v->n_recommend ? v->recommend[0] : "see the ledger");
	else
		snprintf(d->summary, sizeof(d->summary),
			 "%s%s%s, %s of the %s limit; %.150s",
			 diag_kind_name(v->kind), v->detail[0] ? ":" : "",
			 v->detail, H(v->bytes), lim,
			 v->n_recommend ? v->recommend[0] : "");
	(void)in;
}

/* The usage the ledger splits, never above the limit: the kernel kills at
 * the limit, so a higher reading was taken at another moment or of another
 * cgroup than the limit's; it is noted, and the limit stands in. */
static void usage_of(const struct diag_input *in, struct diagnosis *d)
{
	struct classes c;
	uint64_t lim = d->limit_bytes;

	strlcpy_safe(d->usage_source, in->usage_source,
		     sizeof(d->usage_source));
	if (in->have_usage) {
		d->usage_bytes = in->usage_bytes;
	} else {
		classes_of(in, &c);
		d->usage_bytes = add_sat(add_sat(c.anon, c.file),
					 add_sat(c.shmem, c.kernel));
		snprintf(d->usage_source, sizeof(d->usage_source),
			 "sum of the %s",
			 in->have_stats ? "memcg stats" : "processes' RSS");
	}
	if (lim != UINT64_MAX &&
	    d->usage_bytes > add_sat(lim, diag_slack(lim))) {
		jget_note(&d->notes,
			  "usage %s (%s) is above the %s limit (%s): the "
			  "limit stands in",
			  H(d->usage_bytes), d->usage_source, H(lim),
			  in->limit_source[0] ? in->limit_source : "?");
		d->usage_bytes = lim;
	}
}

int diagnosis_run(const struct diag_input *in, struct diagnosis *ret)
{
	struct diagnosis *d = ret;
	struct diag_verdict *v;

	memset(d, 0, sizeof(*d));
	d->notes = in->notes;
	d->notes.where[0] = '\0';
	/* a limit of 0 cannot have let anything run: unknown */
	d->limit_bytes = in->limit_bytes ? in->limit_bytes : UINT64_MAX;
	usage_of(in, d);
	ledger_run(in, d);
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (rt->verdicts)
			rt->verdicts(in, in->rt_data[i], d);
	}
	v_shmem_kernel(in, d);
	v_timeline(in, d);
	v_child(in, d);
	if (max_confidence(d) < 30) {
		v = diag_verdict(d, DIAG_UNKNOWN, 20, d->usage_bytes);
		EVID(v,
		     "no single part of the ledger dominates and the timeline "
		     "%s",
		     !in->n_tl	     ? "is missing (no sidecar)"
		     : in->tl_cgroup ? "(the agent's cgroup samples only) "
				       "shows no clear pattern"
				     : "shows no clear pattern");
		if (d->limit_bytes != UINT64_MAX)
			RECO(v,
			     "raise the limit to %s, and opt the pod in to "
			     "pre-kill snapshots (oomlens.io/capture: "
			     "\"true\")",
			     H(diag_suggested_limit(in, d)));
	}
	qsort(d->verdicts, d->n_verdicts, sizeof(*d->verdicts),
	      diag_verdict_rank);
	say_outranked(d);
	summarize(in, d);
	return 0;
}

/* ---- diagnosis.json ---- */

static struct json_object *lines_json(char (*lines)[DIAG_LINE], size_t n)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_string(lines[i]));
	return a;
}

static struct json_object *verdict_json(const struct diag_verdict *v)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "verdict",
			       json_object_new_string(diag_kind_name(v->kind)));
	if (v->detail[0])
		json_object_object_add(o, "detail",
				       json_object_new_string(v->detail));
	json_object_object_add(o, "confidence",
			       json_object_new_int(v->confidence));
	json_object_object_add(
		o, "basis", json_object_new_string(diag_basis_name(v->basis)));
	json_object_object_add(o, "bytes", json_object_new_uint64(v->bytes));
	json_object_object_add(
		o, "evidence",
		lines_json((char(*)[DIAG_LINE])v->evidence, v->n_evidence));
	json_object_object_add(
		o, "recommendations",
		lines_json((char(*)[DIAG_LINE])v->recommend, v->n_recommend));
	return o;
}

static struct json_object *notes_json(const struct jget_notes *n)
{
	struct json_object *a = json_object_new_array();
	char more[64];

	for (size_t i = 0; a && i < n->n; i++)
		json_object_array_add(a, json_object_new_string(n->text[i]));
	if (a && n->more) {
		snprintf(more, sizeof(more), "and %zu more", n->more);
		json_object_array_add(a, json_object_new_string(more));
	}
	return a;
}

struct json_object *diagnosis_to_json(const struct diagnosis *d)
{
	struct json_object *o = json_object_new_object();
	struct json_object *parts = json_object_new_array();
	struct json_object *vs = json_object_new_array();

	if (!o || !parts || !vs) {
		json_object_put(o);
		json_object_put(parts);
		json_object_put(vs);
		return NULL;
	}
	json_object_object_add(
		o, "schema", json_object_new_string("oomlens.io/diagnosis/v1"));
	json_object_object_add(
		o, "verdict",
		json_object_new_string(diag_kind_name(d->verdicts[0].kind)));
	json_object_object_add(o, "summary",
			       json_object_new_string(d->summary));
	json_object_object_add(o, "usage_bytes",
			       json_object_new_uint64(d->usage_bytes));
	json_object_object_add(o, "usage_source",
			       json_object_new_string(d->usage_source));
	json_object_object_add(
		o, "limit_bytes",
		d->limit_bytes == UINT64_MAX
			? NULL
			: json_object_new_uint64(d->limit_bytes));
	for (size_t i = 0; i < d->n_parts; i++) {
		const struct diag_part *p = &d->parts[i];
		struct json_object *e = json_object_new_object();

		json_object_object_add(e, "name",
				       json_object_new_string(p->name));
		json_object_object_add(e, "bytes",
				       json_object_new_uint64(p->bytes));
		json_object_object_add(e, "source",
				       json_object_new_string(p->source));
		json_object_object_add(e, "estimate",
				       json_object_new_boolean(p->estimate));
		json_object_object_add(
			e, "age_s",
			p->age_s >= 0 ? json_object_new_double(p->age_s)
				      : NULL);
		json_object_array_add(parts, e);
	}
	json_object_object_add(o, "ledger", parts);
	json_object_object_add(o, "unreconciled_bytes",
			       json_object_new_uint64(d->unreconciled));
	json_object_object_add(o, "notes", notes_json(&d->notes));
	for (size_t i = 0; i < d->n_verdicts; i++)
		json_object_array_add(vs, verdict_json(&d->verdicts[i]));
	json_object_object_add(o, "verdicts", vs);
	return o;
}
