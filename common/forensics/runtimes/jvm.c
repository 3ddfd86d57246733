/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM: its ledger rows (the heap by GC.heap_info and smaps, the NMT
 * categories), its verdicts (java-heap, jvm-native, the limit it
 * believes), and its facts from a bundle: GC.heap_info and NMT of the
 * snapshot, and the sidecar's facts (the configuration check at first
 * sight, timeline "jvms"; the heap's RSS by address at the last snapshot,
 * jvm/heap_rss.json; the NMT history, jvm/nmt_history.json; the JVM's RSS
 * in the timeline after it): together they say whether a JVM's growth
 * was its heap, even when the last attach did not answer. With the class
 * histogram (jvm/class_histogram.json, its data: runtimes/jvm.h) the
 * java-heap verdict names the class that held the heap, and the report
 * shows the top classes.
 *
 * The attach protocol and jcmd's parsers are a protocol library in
 * inspect/ (jvm_*.c); the sidecar's half, stateful (attach retries, the
 * heap ranges, the NMT history), is in sidecar/src/run_jvm.c. The JVM's
 * facts predate the seam and stay in struct diag_input (diag_proc's
 * JVM fields, in->jvms), which the unit tests fill directly. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/jvm.h"
#include "forensics/runtimes/registry.h"
#include "inspect/jvm.h"

/* ---- the ledger ---- */

static uint64_t nmt_nonheap_kb(const struct diag_proc *p)
{
	uint64_t kb = 0;

	for (size_t i = 0; i < p->n_nmt; i++)
		if (!streq(p->nmt[i].name, "Java Heap"))
			kb = add_sat(kb, p->nmt[i].committed_kb);
	return kb;
}

/* The heap's RSS by address at the snapshot (jvm/heap_rss.json), or
 * UINT64_MAX when not measured. */
static uint64_t jvm_heap_rss(const struct diag_input *in, int pid)
{
	for (size_t i = 0; i < in->n_jvms; i++)
		if (in->jvms[i].pid == pid && in->jvms[i].have_heap_rss)
			return in->jvms[i].heap_rss;
	return UINT64_MAX;
}

static void ledger_jvm_nmt(struct diag_ledger *l, const struct diag_proc *p)
{
	struct diagnosis *d = l->d;
	uint64_t other = 0, got;

	/* The largest NMT categories by name, the rest together. */
	for (size_t i = 0; i < p->n_nmt; i++) {
		const struct diag_nmt_cat *c = &p->nmt[i];
		uint64_t b = KB(c->committed_kb);
		char name[48];

		if (streq(c->name, "Java Heap"))
			continue;
		if (b < d->usage_bytes / 50) {
			other = add_sat(other, b);
			continue;
		}
		snprintf(name, sizeof(name), "jvm %s", c->name);
		got = diag_take_anon(l, b);
		diag_part(d, p->pid, name, got, got < b,
			  "NMT pid %d: committed %s (malloc %s)", p->pid, H(b),
			  H(KB(c->malloc_kb)));
	}
	diag_part(d, p->pid, "jvm native, other categories",
		  diag_take_anon(l, other), false,
		  "NMT pid %d: categories under 2%% of usage", p->pid);
}

/* A JVM's committed memory is virtual: untouched pages are not charged.
 * Each figure takes at most the anonymous memory still unexplained; what
 * it could not take was committed but not resident. The heap first takes
 * what its address ranges held at the snapshot, the NMT categories next
 * (malloc'd memory is touched; a heap's committed pages may never be:
 * G1's 64 MiB heap under direct buffers held 1 MiB and took 64 MiB from
 * NMT "Other"), then the heap what is left of its committed size (its
 * growth after the snapshot). */
static void ledger_jvm(struct diag_ledger *l, const struct diag_input *in,
		       const struct diag_proc *p)
{
	struct diagnosis *d = l->d;
	uint64_t heap = KB(p->heap_committed_kb), rss, got = 0;

	if (!p->have_heap) {
		if (p->have_nmt)
			ledger_jvm_nmt(l, p);
		return;
	}
	rss = jvm_heap_rss(in, p->pid);
	got = diag_take_anon(l, rss < heap ? rss : heap);
	if (p->have_nmt)
		ledger_jvm_nmt(l, p);
	if (got < heap)
		got = add_sat(got, diag_take_anon(l, heap - got));
	if (heap > d->limit_bytes)
		/* A JVM that did not see its limit sizes the heap from the
		 * host's memory (1/64 of it at start): the row gives what
		 * the heap could hold, the evidence quotes the figure. */
		diag_part(d, p->pid, "jvm heap", got, true,
			  "GC.heap_info pid %d: used %s, committed beyond the "
			  "limit; not all resident",
			  p->pid, H(KB(p->heap_used_kb)));
	else
		diag_part(d, p->pid, "jvm heap", got, got < heap,
			  "GC.heap_info pid %d: committed %s, used %s%s",
			  p->pid, H(heap), H(KB(p->heap_used_kb)),
			  got < heap ? "; not all resident" : "");
}

/* A JVM the last attach did not reach: its heap's RSS by address
 * (jvm/heap_rss.json, smaps, no attach) stands in for GC.heap_info. */
static void ledger_jvm_heap_rss(struct diag_ledger *l,
				const struct diag_input *in,
				const struct diag_proc *p)
{
	for (size_t i = 0; !p->have_heap && i < in->n_jvms; i++)
		if (in->jvms[i].pid == p->pid && in->jvms[i].have_heap_rss)
			diag_part(l->d, p->pid, "jvm heap",
				  diag_take_anon(l, in->jvms[i].heap_rss),
				  false,
				  "pid %d: RSS of the heap's address ranges "
				  "(smaps)",
				  p->pid);
}

/* ---- verdicts ---- */

/* What the ledger found resident of one JVM: its heap, or its NMT
 * categories other than the heap. */
static uint64_t jvm_resident(const struct diagnosis *d, int pid, bool heap)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n_parts; i++) {
		const struct diag_part *p = &d->parts[i];

		if (p->pid == pid && startswith(p->name, "jvm ") &&
		    streq(p->name, "jvm heap") == heap)
			sum = add_sat(sum, p->bytes);
	}
	return sum;
}

static const struct diag_nmt_cat *biggest_nmt(const struct diag_proc *p)
{
	const struct diag_nmt_cat *best = NULL;

	for (size_t i = 0; i < p->n_nmt; i++)
		if (!streq(p->nmt[i].name, "Java Heap") &&
		    (!best || p->nmt[i].committed_kb > best->committed_kb))
			best = &p->nmt[i];
	return best;
}

static void reco_nmt(struct diag_verdict *v, const struct diag_nmt_cat *c)
{
	uint64_t b = KB(c->committed_kb);

	if (streq(c->name, "Other") || streq(c->name, "Internal"))
		RECO(v,
		     "cap direct buffers: -XX:MaxDirectMemorySize=%lluM "
		     "(they are malloc'd under NMT \"%s\")",
		     (unsigned long long)(round_up(b / 2, MiB) / MiB), c->name);
	else if (streq(c->name, "Thread"))
		RECO(v, "fewer threads or smaller stacks: -Xss512k, bounded "
			"thread pools");
	else if (streq(c->name, "Class") || streq(c->name, "Metaspace"))
		RECO(v,
		     "bound class metadata: -XX:MaxMetaspaceSize=%lluM and "
		     "look for class loader leaks",
		     (unsigned long long)(round_up(b, MiB) / MiB));
	else if (streq(c->name, "Code"))
		RECO(v, "-XX:ReservedCodeCacheSize=%lluM",
		     (unsigned long long)(round_up(b, MiB) / MiB));
	else
		RECO(v, "run with -XX:NativeMemoryTracking=detail and compare "
			"VM.native_memory baseline/diff over time");
}

static void v_java_heap(const struct diag_proc *p, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes, heap = KB(p->heap_committed_kb);
	uint64_t res = jvm_resident(d, p->pid, true);
	uint64_t native = KB(nmt_nonheap_kb(p));
	uint64_t lim = d->limit_bytes != UINT64_MAX ? d->limit_bytes : u;
	struct diag_verdict *v;
	int rp;

	if (!p->have_heap || !u ||
	    (mul_sat(res, 2) < u &&
	     mul_sat(p->heap_used_kb, 10) < mul_sat(p->heap_max_kb, 9)))
		return;
	rp = (int)pct(lim > add_sat(native, 64 * MiB) ? lim - native - 64 * MiB
						      : lim / 2,
		      lim);
	/* the figure is the resident share the ledger found: a heap
	 * committed beyond the limit was never all touched */
	v = diag_verdict(d, DIAG_JAVA_HEAP, 40 + (int)(pct(res, u) / 2), res);
	EVID(v,
	     "pid %d: Java heap %s resident of %s in use (committed %s, "
	     "max %s, used %s)",
	     p->pid, H(res), H(u), H(heap), H(KB(p->heap_max_kb)),
	     H(KB(p->heap_used_kb)));
	RECO(v,
	     "size the heap to leave room for native memory: "
	     "-XX:MaxRAMPercentage=%d (heap + %s native must fit in %s)",
	     rp > 10 ? rp : 10, H(native), H(lim));
	RECO(v, "or raise the limit to %s",
	     H(round_up(add_sat(heap, add_sat(native, native / 4)), 64 * MiB)));
}

static void v_jvm(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes;

	for (size_t i = 0; i < in->n_procs; i++) {
		const struct diag_proc *p = &in->procs[i];
		uint64_t native = KB(nmt_nonheap_kb(p));
		uint64_t res = jvm_resident(d, p->pid, false);
		const struct diag_nmt_cat *c;
		struct diag_verdict *v;

		if (!p->jvm)
			continue;
		v_java_heap(p, d);
		if (!p->have_nmt || !u || mul_sat(res, 10) < mul_sat(u, 4))
			continue;
		c = biggest_nmt(p);
		v = diag_verdict(d, DIAG_JVM_NATIVE,
				 40 + (int)(pct(res, u) / 2), res);
		if (c) {
			strlcpy_safe(v->detail, c->name, sizeof(v->detail));
			EVID(v,
			     "pid %d: NMT non-heap committed %s, %s resident; "
			     "largest: %s %s",
			     p->pid, H(native), H(res), c->name,
			     H(KB(c->committed_kb)));
			reco_nmt(v, c);
		}
	}
}

/* ---- JVM facts from the sidecar ---- */

/* Whether a JVM's growth was its heap: the heap ranges held most of its
 * RSS at the last snapshot (smaps by address), or its flags let the heap
 * alone outgrow the container and the heap held a large part. *ret is
 * the JVM. A JVM whose growth is its heap is never "native-growth". */
static bool jvm_heap_grew(const struct diag_input *in,
			  const struct diag_jvm **ret)
{
	for (size_t i = 0; i < in->n_jvms; i++) {
		const struct diag_jvm *j = &in->jvms[i];
		uint64_t rss = j->heap_rss + j->native_rss;

		if (!j->have_heap_rss && !j->heap_outgrows)
			continue;
		if ((j->have_heap_rss && j->heap_rss * 2 >= rss && rss) ||
		    (j->heap_outgrows &&
		     (!j->have_heap_rss || j->heap_rss * 10 >= rss * 4))) {
			if (ret)
				*ret = j;
			return true;
		}
	}
	return false;
}

/* -Xmx that fits: the limit minus the native part measured minus 10 %
 * headroom, in 16 MiB steps (at least 32 MiB). */
static uint64_t fitting_heap(uint64_t limit, uint64_t native)
{
	uint64_t room = limit / 10, h;

	if (native + room + 32 * MiB >= limit)
		return 32 * MiB;
	h = limit - native - room;
	return h / (16 * MiB) * (16 * MiB);
}

static void jvm_facts_evidence(struct diag_verdict *v, const struct diag_jvm *j,
			       uint64_t lim)
{
	if (j->have_flags)
		EVID(v,
		     "pid %d is configured to outgrow its container: max heap "
		     "%s + native %s %s the %s limit (VM.flags, %.0f s before "
		     "the kill)",
		     j->pid, H(j->max_heap), H(j->native_baseline),
		     j->heap_outgrows ? "exceed" : "fit in", H(lim),
		     j->flags_age_s);
	if (j->have_heap_rss)
		EVID(v,
		     "pid %d: heap RSS %s, native %s (smaps by heap address, "
		     "%.1f s before the kill)",
		     j->pid, H(j->heap_rss), H(j->native_rss),
		     j->heap_rss_age_s);
	if (j->have_rss && j->rss_at_snapshot &&
	    j->rss_last > j->rss_at_snapshot)
		EVID(v,
		     "after that the JVM's RSS grew by %s to %s (timeline, "
		     "%.1f s before the kill)",
		     H(j->rss_last - j->rss_at_snapshot), H(j->rss_last),
		     j->rss_last_age_s);
}

/* Whether the JVM's own idea of its memory limit (VM.info) is the
 * cgroup's lim, within 2 % + 1 MiB; true when it is not known. */
static bool jvm_sees_limit(const struct diag_jvm *j, uint64_t lim)
{
	uint64_t slack = lim / 50 + MiB;

	return !j->have_jvm_limit || !lim ||
	       (j->jvm_limit <= add_sat(lim, slack) &&
		add_sat(j->jvm_limit, slack) >= lim);
}

/* java-heap from the sidecar's facts: joins an existing java-heap verdict
 * (from GC.heap_info) or makes one, with the -Xmx that would fit. */
static void v_jvm_facts(const struct diag_input *in, struct diagnosis *d)
{
	const struct diag_jvm *j = NULL;
	struct diag_verdict *v = NULL;
	uint64_t lim = d->limit_bytes, native, xmx;

	if (!jvm_heap_grew(in, &j))
		return;
	if (lim == UINT64_MAX)
		lim = j->limit ? j->limit : d->usage_bytes;
	if (!lim)
		return;
	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == DIAG_JAVA_HEAP)
			v = &d->verdicts[i];
	native = j->have_heap_rss ? j->native_rss : j->native_baseline;
	if (j->have_rss && j->have_heap_rss && j->heap_rss >= j->native_rss &&
	    j->rss_last > j->heap_rss + j->native_rss)
		native = j->native_rss; /* growth after: the heap's */
	xmx = fitting_heap(lim, native);
	if (!v) {
		v = diag_verdict(d, DIAG_JAVA_HEAP, j->heap_outgrows ? 85 : 70,
				 j->have_heap_rss ? j->heap_rss : j->max_heap);
	} else {
		v->confidence = v->confidence < 85 ? 85 : v->confidence;
		v->n_recommend = 0; /* the measured fix replaces the guess */
	}
	jvm_facts_evidence(v, j, lim);
	if (jvm_sees_limit(j, lim))
		RECO(v,
		     "-Xmx%lluM or -XX:MaxRAMPercentage=%d (limit %s minus "
		     "the %s native measured minus 10%% headroom)",
		     (unsigned long long)(xmx / MiB), (int)(pct(xmx, lim)),
		     H(lim), H(native));
	else /* a percentage of what it wrongly believes would not fit */
		RECO(v,
		     "-Xmx%lluM (limit %s minus the %s native measured minus "
		     "10%% headroom; not MaxRAMPercentage: this JVM does not "
		     "see the container's limit)",
		     (unsigned long long)(xmx / MiB), H(lim), H(native));
	RECO(v, "or raise the limit to %s for the configured max heap",
	     H(round_up((j->max_heap ? j->max_heap : xmx) + native + lim / 10,
			64 * MiB)));
}

/* ---- NMT growth (jvm/nmt_history.json) ---- */

/* NMT committed outside the heap grew by at least a fifth of the usage:
 * the growth the JVM's own accounting explains. */
static bool nmt_explains(const struct diag_jvm *j, uint64_t usage)
{
	return j->have_nmt_growth && usage &&
	       mul_sat(j->nmt_nonheap_growth, 5) >= usage;
}

static bool jvm_native_grew(const struct diag_input *in, uint64_t usage)
{
	for (size_t i = 0; i < in->n_jvms; i++)
		if (nmt_explains(&in->jvms[i], usage))
			return true;
	return false;
}

/* The fix for one category that grew (bytes at the newest summary). */
static void reco_growth(struct diag_verdict *v, const struct diag_jvm *j,
			const struct diag_nmt_growth *g)
{
	unsigned long long half = round_up(g->to / 2, MiB) / MiB,
			   all = round_up(g->to, MiB) / MiB;

	if (streq(g->name, "Thread"))
		RECO(v,
		     "bound the thread count (%lld threads at the last "
		     "summary, %lld at first sight: bounded pools) or shrink "
		     "the stacks: -Xss512k",
		     (long long)j->threads_to, (long long)j->threads_from);
	else if (streq(g->name, "Other") || streq(g->name, "Internal"))
		RECO(v,
		     "cap direct buffers: -XX:MaxDirectMemorySize=%lluM (half "
		     "of the %s NMT \"%s\" reached; NIO direct ByteBuffers "
		     "are counted there) and release them when done",
		     half, H(g->to), g->name);
	else if (streq(g->name, "Class") || streq(g->name, "Metaspace"))
		RECO(v,
		     "bound class metadata: -XX:MaxMetaspaceSize=%lluM and "
		     "look for class loader leaks",
		     all);
	else if (streq(g->name, "Code"))
		RECO(v, "-XX:ReservedCodeCacheSize=%lluM", all);
	else
		RECO(v,
		     "NMT \"%s\" grew: run with "
		     "-XX:NativeMemoryTracking=detail and compare "
		     "VM.native_memory baseline/summary.diff over time",
		     g->name);
}

/* "Other +80 MiB (0 B -> 80 MiB), Thread +18 MiB (...)": the three
 * largest non-heap growths. */
static void growth_line(const struct diag_jvm *j, char *buf, size_t size)
{
	size_t n = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < j->n_growth && shown < 3 && n < size; i++) {
		const struct diag_nmt_growth *g = &j->growth[i];
		int w;

		if (streq(g->name, "Java Heap"))
			continue;
		w = snprintf(buf + n, size - n, "%s%s +%s (%s -> %s)",
			     shown ? ", " : "", g->name, H(g->to - g->from),
			     H(g->from), H(g->to));
		n += w > 0 ? (size_t)w : 0;
		shown++;
	}
}

static void v_nmt_growth(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes;

	for (size_t i = 0; i < in->n_jvms; i++) {
		const struct diag_jvm *j = &in->jvms[i];
		const struct diag_nmt_growth *top[2] = {0};
		struct diag_verdict *v = NULL;
		char line_buf[200];
		int conf;

		if (!nmt_explains(j, u))
			continue;
		for (size_t k = 0, n = 0; k < j->n_growth && n < 2; k++)
			if (!streq(j->growth[k].name, "Java Heap") &&
			    mul_sat(j->growth[k].to - j->growth[k].from, 10) >=
				    j->nmt_nonheap_growth)
				top[n++] = &j->growth[k];
		/* a heap that grew more is the java-heap verdict's to tell */
		conf = 50 + (int)(pct(j->nmt_nonheap_growth, u) / 2);
		if (j->nmt_heap_growth > j->nmt_nonheap_growth)
			conf -= 20;
		conf = conf > 90 ? 90 : conf;
		for (size_t k = 0; k < d->n_verdicts; k++)
			if (d->verdicts[k].kind == DIAG_JVM_NATIVE)
				v = &d->verdicts[k];
		if (!v)
			v = diag_verdict(d, DIAG_JVM_NATIVE, conf,
					 j->nmt_nonheap_growth);
		v->confidence = v->confidence < conf ? conf : v->confidence;
		v->n_recommend = 0; /* the growth names the fix */
		if (top[0])
			strlcpy_safe(v->detail, top[0]->name,
				     sizeof(v->detail));
		EVID(v,
		     "pid %d: NMT committed outside the heap grew by %s "
		     "(%.0f%% of the %s in use) from %.0f s to %.1f s before "
		     "the kill",
		     j->pid, H(j->nmt_nonheap_growth),
		     pct(j->nmt_nonheap_growth, u), H(u), j->nmt_from_age_s,
		     j->nmt_to_age_s);
		growth_line(j, line_buf, sizeof(line_buf));
		EVID(v, "grew most: %s", line_buf);
		for (size_t k = 0; k < 2 && top[k]; k++)
			reco_growth(v, j, top[k]);
	}
}

/* The JVM sized its default heap from the limit it believes; when that
 * is not the cgroup's, the java-heap verdict says so with both. */
static void v_jvm_limit(const struct diag_input *in, struct diagnosis *d)
{
	struct diag_verdict *v = NULL;

	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == DIAG_JAVA_HEAP)
			v = &d->verdicts[i];
	for (size_t i = 0; v && i < in->n_jvms; i++) {
		const struct diag_jvm *j = &in->jvms[i];
		uint64_t lim = d->limit_bytes != UINT64_MAX ? d->limit_bytes
							    : j->limit;

		if (jvm_sees_limit(j, lim))
			continue;
		EVID(v,
		     "pid %d believes its memory limit is %s (%s) but the "
		     "cgroup's limit is %s: its default heap (MaxRAMPercentage,"
		     " 25%% of what it believes) is sized for memory it does "
		     "not have (VM.info, %.0f s before the kill)",
		     j->pid, H(j->jvm_limit),
		     j->jvm_limit_from_container ? "the container limit it read"
						 : "physical memory: it sees "
						   "no container limit",
		     H(lim), j->flags_age_s);
		RECO(v, "%s",
		     j->jvm_limit_from_container
			     ? "it read another cgroup's limit: set -Xmx (or "
			       "-XX:MaxRAM) explicitly from the container's "
			       "limit"
			     : "let it see the limit: keep "
			       "-XX:+UseContainerSupport "
			       "(on by default; cgroup v2 needs JDK 8u372, "
			       "11.0.16 or 15+), or set -Xmx explicitly");
	}
}

/* ---- hooks: the ledger and the verdicts ---- */

static void jvm_ledger(struct diag_ledger *l, const struct diag_input *in,
		       const void *data, const struct diag_proc *p)
{
	(void)data;
	if (p->jvm)
		ledger_jvm(l, in, p);
	ledger_jvm_heap_rss(l, in, p);
}

/* A class as a reader knows it: Java's spelling, with the JVM's beside
 * it for a primitive array ("byte[] ([B)": "[B" is what one searches
 * for); an array of objects reads well enough as "java.lang.String[]". */
static void class_label(const char *name, char *ret, size_t size)
{
	char disp[JVM_HISTO_NAME_MAX + 8];
	size_t n = strlen(name);

	jvm_class_display_name(name, disp, sizeof(disp));
	n = streq(disp, name) || (n && name[n - 1] == ';')
		    ? 0
		    : strlcpy_safe(ret, disp, size);
	if (!n)
		strlcpy_safe(ret, disp, size);
	else if (n + 3 < size)
		snprintf(ret + n, size - n, " (%s)", name);
}

/* The class histogram's top class, in the java-heap verdict: what held
 * the heap, and where to look next. */
static void v_histo(const struct jvm_rt_facts *f, struct diagnosis *d)
{
	struct diag_verdict *v = NULL;

	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == DIAG_JAVA_HEAP)
			v = &d->verdicts[i];
	for (size_t i = 0; v && f && i < f->n_histo; i++) {
		const struct jvm_rt_histo *h = &f->histo[i];
		const struct jvm_rt_class *c = &h->top[0];
		char disp[JVM_HISTO_NAME_MAX + 8], both[96];

		if (!h->taken || !h->n)
			continue;
		jvm_class_display_name(c->name, disp, sizeof(disp));
		class_label(c->name, both, sizeof(both));
		EVID(v,
		     "class histogram pid %d (%s, %.1f s before the kill): the "
		     "top class is %s, %s in %llu instances, %.0f%% of the %s "
		     "of live objects (GC.class_histogram; the JVM paused %.0f "
		     "ms)",
		     h->pid, h->trigger[0] ? h->trigger : "snapshot", h->age_s,
		     both, H(c->bytes), (unsigned long long)c->instances,
		     pct(c->bytes, h->total_bytes), H(h->total_bytes),
		     (double)(h->have_pause ? h->pause_us : h->wall_us) /
			     1000.0);
		RECO(v,
		     "find what holds the %.60s instances: a heap dump (jcmd "
		     "<pid> GC.heap_dump <file>, or "
		     "-XX:+HeapDumpOnOutOfMemoryError"
		     " with -Xmx under the limit) in a heap analyser's "
		     "dominator "
		     "tree (Eclipse MAT)",
		     disp);
	}
}

static void jvm_verdicts(const struct diag_input *in, const void *data,
			 struct diagnosis *d)
{
	v_jvm(in, d);
	v_jvm_facts(in, d);
	v_nmt_growth(in, d);
	v_jvm_limit(in, d);
	v_histo(data, d);
}

/* A JVM whose growth is its heap, or NMT's account, is never
 * "native-growth". */
static bool jvm_explains_growth(const struct diag_input *in, const void *data,
				uint64_t usage)
{
	(void)data;
	return jvm_heap_grew(in, NULL) || jvm_native_grew(in, usage);
}

/* ---- from a bundle: the snapshot's jcmd replies ---- */

static void load_nmt(const struct bundle *b, const char *dir,
		     struct diag_proc *p)
{
	char path[256];
	const char *data;
	size_t len;
	struct jvm_nmt *nmt = calloc(1, sizeof(*nmt));

	snprintf(path, sizeof(path), "%s/" BP_JVM_NMT, dir);
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
}

static void jvm_load_proc(const struct bundle *b, const char *dir,
			  struct diag_proc *p, struct diag_input *in)
{
	char path[256];
	const char *data;
	size_t len;
	struct jvm_heap_info hi;

	(void)in;
	load_nmt(b, dir, p);
	snprintf(path, sizeof(path), "%s/" BP_JVM_HEAP_INFO, dir);
	data = bundle_get(b, path, &len);
	if (data && jvm_parse_heap_info(data, len, &hi) == 0) {
		p->jvm = p->have_heap = true;
		p->heap_committed_kb = hi.committed / 1024;
		p->heap_used_kb = hi.used / 1024;
		p->heap_max_kb = hi.reserved / 1024;
	}
}

/* ---- from a bundle: the sidecar's facts ---- */
static uint64_t jnum(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, k, &v))
		return 0;
	return (uint64_t)json_object_get_int64(v);
}

/* A count that may be -1 (unknown); -1 when absent. */
static int64_t jint(struct json_object *o, const char *k)
{
	struct json_object *v = jget(o, k);

	return v && json_object_is_type(v, json_type_int)
		       ? json_object_get_int64(v)
		       : -1;
}

static bool jbool(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, k, &v) &&
	       json_object_get_boolean(v);
}

static double age(uint64_t kill_ms, uint64_t t_ms)
{
	return t_ms ? ((double)kill_ms - (double)t_ms) / 1000.0 : -1;
}

static struct diag_jvm *jvm_of(struct diag_input *in, int pid, bool add)
{
	for (size_t i = 0; i < in->n_jvms; i++)
		if (in->jvms[i].pid == pid)
			return &in->jvms[i];
	if (!add || in->n_jvms == DIAG_MAX_JVMS)
		return NULL;
	in->jvms[in->n_jvms] = (struct diag_jvm){.pid = pid,
						 .flags_age_s = -1,
						 .heap_rss_age_s = -1,
						 .rss_last_age_s = -1,
						 .nmt_from_age_s = -1,
						 .nmt_to_age_s = -1,
						 .threads_from = -1,
						 .threads_to = -1};
	return &in->jvms[in->n_jvms++];
}

/* What the JVM believes its limit is: "container" {believed_limit,
 * believed_from} of its facts (VM.info at first sight). */
static void load_container(struct diag_input *in, struct json_object *facts,
			   struct diag_jvm *j)
{
	struct json_object *c = jget_obj(&in->notes, facts, "container");
	const char *from = jget_str(&in->notes, c, "believed_from");

	if (!c || !jget_u64(&in->notes, c, "believed_limit", &j->jvm_limit) ||
	    !j->jvm_limit)
		return;
	j->have_jvm_limit = true;
	j->jvm_limit_from_container = from && streq(from, "container");
}

/* A timeline read one element at a time (jget_scan_each: a sidecar's
 * full timeline of many processes is too big a tree to parse whole). */
struct tl_walk {
	struct diag_input *in;
	uint64_t kill_ms;
	double best[DIAG_MAX_JVMS]; /* load_rss: nearest to the snapshot */
};

/* One element of timeline.json "jvms": that JVM's flags and limits. */
static int load_flags(const char *text, size_t len, void *ud)
{
	struct tl_walk *w = ud;
	struct json_object *o =
		jget_parse_object(text, len, BUNDLE_JSON_MAX_TREE);
	struct diag_jvm *j =
		o ? jvm_of(w->in, (int)jnum(o, "pid"), true) : NULL;

	if (j) {
		j->have_flags = true;
		j->max_heap = jnum(o, "max_heap");
		j->max_direct = jnum(o, "max_direct");
		j->configured_total = jnum(o, "configured_total");
		j->native_baseline = jnum(o, "native_baseline");
		j->limit = jnum(o, "limit");
		j->outgrows = jbool(o, "outgrows");
		j->heap_outgrows = jbool(o, "heap_outgrows");
		j->flags_age_s = age(w->kill_ms, jnum(o, "t_ms"));
		load_container(w->in, o, j);
	}
	json_object_put(o);
	return o && !j ? -ENOSPC : 0; /* DIAG_MAX_JVMS reached */
}

static void load_heap_rss(const struct bundle *b, uint64_t kill_ms,
			  struct diag_jvm *j)
{
	char path[96];
	struct json_object *o;

	snprintf(path, sizeof(path), BP_PROC_DIR_FMT "/" BP_JVM_HEAP_RSS,
		 j->pid);
	o = bundle_get_json(b, path);
	if (!o)
		return;
	j->have_heap_rss = true;
	j->heap_rss = jnum(o, "heap_rss");
	j->native_rss = jnum(o, "native_rss");
	j->heap_rss_age_s = age(kill_ms, jnum(o, "t_ms"));
	json_object_put(o);
}

/* RSS of pid in sample s (bytes), 0 when absent. */
static uint64_t rss_in(struct json_object *s, int pid)
{
	struct json_object *procs;

	if (!(procs = jget_array(NULL, s, "procs")))
		return 0;
	for (size_t k = 0; k < json_object_array_length(procs); k++) {
		struct json_object *p = json_object_array_get_idx(procs, k);

		if ((int)jnum(p, "pid") == pid)
			return jnum(p, "rss_kb") * 1024;
	}
	return 0;
}

/* One sample of timeline.json: each JVM's RSS in it, the last one before
 * the kill and the one nearest its heap_rss.json. */
static int load_rss(const char *text, size_t len, void *ud)
{
	struct tl_walk *w = ud;
	struct json_object *s =
		jget_parse_object(text, len, BUNDLE_JSON_MAX_TREE);
	uint64_t t = jnum(s, "t_ms");

	for (size_t i = 0; s && t <= w->kill_ms && i < w->in->n_jvms; i++) {
		struct diag_jvm *j = &w->in->jvms[i];
		uint64_t rss = rss_in(s, j->pid);
		double a = age(w->kill_ms, t), d;

		if (!rss)
			continue;
		j->have_rss = true;
		j->rss_last = rss;
		j->rss_last_age_s = a;
		d = a - j->heap_rss_age_s;
		if (j->have_heap_rss && (d < 0 ? -d : d) < w->best[i]) {
			w->best[i] = d < 0 ? -d : d;
			j->rss_at_snapshot = rss;
		}
	}
	json_object_put(s);
	return 0;
}

static int by_growth(const void *a, const void *b)
{
	const struct diag_nmt_growth *x = a, *y = b;
	uint64_t gx = x->to - x->from, gy = y->to - y->from;

	return gx < gy ? 1 : gx > gy ? -1 : strcmp(x->name, y->name);
}

size_t diagnosis_nmt_growth(const struct diag_nmt_cat *from, size_t n_from,
			    const struct diag_nmt_cat *to, size_t n_to,
			    struct diag_nmt_growth *ret, size_t max,
			    uint64_t *ret_nonheap, uint64_t *ret_heap)
{
	struct diag_nmt_growth all[DIAG_MAX_NMT];
	uint64_t nonheap = 0, heap = 0;
	size_t n = 0;

	memset(all, 0, sizeof(all));
	for (size_t i = 0; i < n_to && n < DIAG_MAX_NMT; i++) {
		uint64_t was = 0, now = to[i].committed_kb * 1024;

		for (size_t k = 0; k < n_from; k++)
			if (streq(from[k].name, to[i].name))
				was = from[k].committed_kb * 1024;
		if (now <= was)
			continue;
		if (streq(to[i].name, "Java Heap"))
			heap += now - was;
		else
			nonheap += now - was;
		all[n] = (struct diag_nmt_growth){.from = was, .to = now};
		strlcpy_safe(all[n++].name, to[i].name, sizeof(all[0].name));
	}
	qsort(all, n, sizeof(all[0]), by_growth);
	if (n > max)
		n = max;
	memcpy(ret, all, n * sizeof(all[0]));
	*ret_nonheap = nonheap;
	*ret_heap = heap;
	return n;
}

/* One entry of nmt_history.json into cats (committed, KiB). */
static size_t history_cats(struct diag_input *in, struct json_object *e,
			   struct diag_nmt_cat *cats)
{
	struct json_object *c = jget_obj(&in->notes, e, "committed");
	size_t n = 0;

	if (!c)
		return 0;
	json_object_object_foreach (c, k, v) {
		if (n == DIAG_MAX_NMT ||
		    !json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0)
			continue;
		strlcpy_safe(cats[n].name, k, sizeof(cats[n].name));
		cats[n].committed_kb =
			(uint64_t)json_object_get_int64(v) / 1024;
		cats[n++].malloc_kb = 0;
	}
	return n;
}

/* jvm/nmt_history.json: growth from its first entry to its newest one
 * taken before the kill. */
static void load_nmt_history(const struct bundle *b, uint64_t kill_ms,
			     struct diag_input *in, struct diag_jvm *j)
{
	struct diag_nmt_cat *from = calloc(2 * DIAG_MAX_NMT, sizeof(*from));
	struct json_object *o, *a, *first = NULL, *last = NULL;
	char path[96];
	size_t nf, nt;

	snprintf(path, sizeof(path), BP_PROC_DIR_FMT "/" BP_JVM_NMT_HISTORY,
		 j->pid);
	o = bundle_get_json(b, path);
	jget_where(&in->notes, path);
	a = jget_array(&in->notes, o, "entries");
	for (size_t i = 0; from && a && i < jget_len(a); i++) {
		struct json_object *e = jget_idx(a, i);

		if (!jnum(e, "t_ms") || (kill_ms && jnum(e, "t_ms") > kill_ms))
			continue;
		if (!first)
			first = e;
		else
			last = e;
	}
	if (first && last && (nf = history_cats(in, first, from)) &&
	    (nt = history_cats(in, last, from + DIAG_MAX_NMT))) {
		j->n_growth = diagnosis_nmt_growth(
			from, nf, from + DIAG_MAX_NMT, nt, j->growth,
			DIAG_MAX_NMT_GROWTH, &j->nmt_nonheap_growth,
			&j->nmt_heap_growth);
		j->have_nmt_growth = true;
		j->nmt_from_age_s = age(kill_ms, jnum(first, "t_ms"));
		j->nmt_to_age_s = age(kill_ms, jnum(last, "t_ms"));
		j->threads_from = jint(first, "threads");
		j->threads_to = jint(last, "threads");
	}
	jget_where(&in->notes, "");
	free(from);
	json_object_put(o);
}

/* ---- from a bundle: the class histogram (runtimes/jvm.h) ---- */

/* A string member, cleaned, into ret ("" when absent). */
static void clean_str(struct jget_notes *notes, struct json_object *o,
		      const char *k, char *ret, size_t size)
{
	const char *s = jget_str(notes, o, k);

	ret[0] = '\0';
	if (s)
		jvm_histo_clean_name(s, strlen(s), ret, size);
}

/* One row of "top", kept when whole, within the total and in order. */
static void histo_row(struct jvm_rt_histo *h, struct json_object *e, size_t i,
		      struct jget_notes *notes)
{
	struct jvm_rt_class c = {.name = ""};

	clean_str(notes, e, "class", c.name, sizeof(c.name));
	if (!c.name[0] || !jget_u64(notes, e, "instances", &c.instances) ||
	    !jget_u64(notes, e, "bytes", &c.bytes)) {
		jget_note(notes,
			  "top[%zu] lacks its class, instances or "
			  "bytes: left out",
			  i);
		return;
	}
	if (c.bytes > h->total_bytes ||
	    (h->n && c.bytes > h->top[h->n - 1].bytes)) {
		jget_note(notes,
			  "top[%zu] holds more bytes than the total or "
			  "the row before it: left out",
			  i);
		return;
	}
	h->top[h->n++] = c;
}

int jvm_rt_histo_from_json(struct json_object *o, uint64_t kill_ms,
			   struct jget_notes *notes, struct jvm_rt_histo *ret)
{
	struct jvm_rt_histo h = {.age_s = -1};
	struct json_object *top;
	uint64_t t_ms = 0;

	memset(ret, 0, sizeof(*ret));
	ret->age_s = -1;
	if (!o || !json_object_is_type(o, json_type_object))
		return -ENOENT;
	if (!jget_bool(notes, o, "taken", &h.taken))
		return -EBADMSG;
	(void)jget_int(notes, o, "pid", &h.pid);
	clean_str(notes, o, "why", h.why, sizeof(h.why));
	clean_str(notes, o, "trigger", h.trigger, sizeof(h.trigger));
	if (jget_u64(notes, o, "t_ms", &t_ms) && t_ms && kill_ms)
		h.age_s = age(kill_ms, t_ms);
	(void)jget_u64(notes, o, "heap_used", &h.heap_used);
	(void)jget_u64(notes, o, "estimate_ms", &h.estimate_ms);
	(void)jget_u64(notes, o, "budget_ms", &h.budget_ms);
	h.have_wall = jget_u64(notes, o, "wall_us", &h.wall_us);
	h.have_pause = jget_u64(notes, o, "pause_us", &h.pause_us);
	(void)jget_u64(notes, o, "classes", &h.classes);
	(void)jget_u64(notes, o, "total_instances", &h.total_instances);
	(void)jget_u64(notes, o, "total_bytes", &h.total_bytes);
	(void)jget_bool(notes, o, "total_known", &h.total_known);
	top = h.taken ? jget_array(notes, o, "top") : NULL;
	for (size_t i = 0; i < jget_len(top) && h.n < JVM_HISTO_TOP; i++)
		histo_row(&h, jget_idx(top, i), i, notes);
	*ret = h;
	return 0;
}

/* Each process's jvm/class_histogram.json; NULL when none has one. */
static struct jvm_rt_facts *load_histos(const struct bundle *b,
					uint64_t kill_ms, struct diag_input *in)
{
	struct jvm_rt_facts *f = NULL;

	for (size_t i = 0; i < in->n_procs; i++) {
		struct json_object *o;
		char path[96];

		snprintf(path, sizeof(path),
			 BP_PROC_DIR_FMT "/" BP_JVM_CLASS_HISTO,
			 in->procs[i].pid);
		if (!(o = bundle_get_json(b, path)))
			continue;
		if (!f)
			f = calloc(1, sizeof(*f));
		jget_where(&in->notes, path);
		if (f && f->n_histo < DIAG_MAX_JVMS &&
		    jvm_rt_histo_from_json(o, kill_ms, &in->notes,
					   &f->histo[f->n_histo]) == 0)
			/* the process is the directory's, whatever it says */
			f->histo[f->n_histo++].pid = in->procs[i].pid;
		jget_where(&in->notes, "");
		json_object_put(o);
	}
	return f;
}

static void jvm_release(void *data)
{
	free(data);
}

/* timeline.json "jvms", and each JVM's files of the snapshot. */
static void jvm_load(const struct bundle *b, uint64_t kill_ms,
		     struct diag_input *in, void **data)
{
	static const char *const jvms[] = {"jvms", NULL};
	static const char *const samples[] = {"samples", NULL};
	struct tl_walk w = {.in = in, .kill_ms = kill_ms};
	size_t len;
	const char *tl = bundle_get(b, BP_TIMELINE, &len);

	*data = load_histos(b, kill_ms, in);
	if (!tl)
		return;
	(void)jget_scan_each(NULL, tl, len, jvms, load_flags, &w);
	/* a JVM seen only in a snapshot (no facts at first sight) */
	for (size_t i = 0; i < in->n_procs; i++)
		if (in->procs[i].jvm)
			(void)jvm_of(in, in->procs[i].pid, true);
	for (size_t i = 0; i < in->n_jvms; i++) {
		load_heap_rss(b, kill_ms, &in->jvms[i]);
		load_nmt_history(b, kill_ms, in, &in->jvms[i]);
		w.best[i] = 1e9;
	}
	(void)jget_scan_each(NULL, tl, len, samples, load_rss, &w);
}

/* ---- report.html ---- */

/* Names the rows inside a JVM's heap ranges (jvm/heap_rss.json, written
 * by the sidecar from GC.heap_info): "java heap (tenured generation)". */
static void jvm_label_mappings(const struct bundle *b, const char *dir, int pid,
			       struct rt_mapping *rows, size_t n,
			       struct jget_notes *notes)
{
	char path[160];
	struct json_object *o, *ranges;

	snprintf(path, sizeof(path), "%s/" BP_JVM_HEAP_RSS, dir);
	o = bundle_get_json(b, path);
	ranges = jget_array(notes, o, "ranges");
	for (size_t i = 0; ranges && i < json_object_array_length(ranges);
	     i++) {
		struct json_object *r = json_object_array_get_idx(ranges, i);
		uint64_t lo = jget_u64_or0(notes, r, "start");
		uint64_t hi = jget_u64_or0(notes, r, "end");
		const char *name = jget_str(notes, r, "name");

		for (size_t j = 0; j < n; j++)
			if (rows[j].pid == pid && !rows[j].name[0] &&
			    rows[j].addr >= lo && rows[j].addr < hi)
				snprintf(rows[j].name, rows[j].name_size,
					 "java heap (%.60s)", name ? name : "");
	}
	json_object_put(o);
}

/* The class histogram's note: when, what it cost, what it covers. */
static void histo_note(const struct jvm_rt_histo *h, struct rt_table *t)
{
	char when[96], pause[64] = "";

	if (h->age_s >= 0)
		snprintf(when, sizeof(when), "%s, %.1f s before the kill",
			 h->trigger[0] ? h->trigger : "snapshot", h->age_s);
	else
		snprintf(when, sizeof(when), "%s",
			 h->trigger[0] ? h->trigger : "snapshot");
	if (!h->taken) {
		snprintf(t->note, sizeof(t->note), "not taken (%s): %s", when,
			 h->why[0] ? h->why : "no reason given");
		return;
	}
	if (h->have_pause)
		snprintf(pause, sizeof(pause), "the JVM paused %.1f ms, ",
			 (double)h->pause_us / 1000.0);
	snprintf(
		t->note, sizeof(t->note),
		"GC.class_histogram at %s: %s%.1f ms wall; %llu classes, %s "
		"of live objects in %llu instances%s; the %zu largest by bytes",
		when, pause, (double)h->wall_us / 1000.0,
		(unsigned long long)h->classes, H(h->total_bytes),
		(unsigned long long)h->total_instances,
		h->total_known ? "" : " (its reply was cut: what was read)",
		h->n);
}

static void histo_rows(const struct jvm_rt_histo *h, struct rt_table *t)
{
	static const char *const head[] = {"#", "class", "instances", "bytes",
					   "of live"};

	t->n_cols = ARRAY_SIZE(head);
	for (size_t c = 0; c < t->n_cols; c++) {
		strlcpy_safe(t->head[c], head[c], sizeof(t->head[c]));
		t->numeric[c] = c != 1;
	}
	for (size_t i = 0; i < h->n && i < RT_TABLE_ROWS; i++) {
		const struct jvm_rt_class *c = &h->top[i];

		snprintf(t->cell[i][0], RT_CELL, "%zu", i + 1);
		class_label(c->name, t->cell[i][1], RT_CELL);
		snprintf(t->cell[i][2], RT_CELL, "%llu",
			 (unsigned long long)c->instances);
		snprintf(t->cell[i][3], RT_CELL, "%s", H(c->bytes));
		snprintf(t->cell[i][4], RT_CELL, "%.1f%%",
			 pct(c->bytes, h->total_bytes));
		t->n_rows = i + 1;
	}
}

/* report.html's and show's table of a JVM's class histogram. */
static int jvm_report_table(const struct bundle *b, const char *dir, int pid,
			    uint64_t kill_ms, struct rt_table *t,
			    struct jget_notes *notes)
{
	struct jvm_rt_histo *h;
	struct json_object *o;
	char path[160];
	int r;

	snprintf(path, sizeof(path), "%s/" BP_JVM_CLASS_HISTO, dir);
	if (!(o = bundle_get_json(b, path)))
		return 0;
	h = calloc(1, sizeof(*h));
	jget_where(notes, path);
	r = h ? jvm_rt_histo_from_json(o, kill_ms, notes, h) : -ENOMEM;
	json_object_put(o);
	if (r == 0) {
		snprintf(t->title, sizeof(t->title),
			 "Class histogram of pid %d", pid);
		histo_note(h, t);
		if (h->taken)
			histo_rows(h, t);
	}
	free(h);
	return r == 0;
}

const struct diag_runtime rt_jvm = {
	.name = "jvm",
	.load_proc = jvm_load_proc,
	.load = jvm_load,
	.release = jvm_release,
	.ledger = jvm_ledger,
	.verdicts = jvm_verdicts,
	.explains_growth = jvm_explains_growth,
	.label_mappings = jvm_label_mappings,
	.report_table = jvm_report_table,
};
