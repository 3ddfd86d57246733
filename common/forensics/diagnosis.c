/* SPDX-License-Identifier: Apache-2.0 */
/* The ledger and the verdicts (pure). */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "forensics/diagnosis.h"
#include "base/util.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static const char *const kind_names[_DIAG_KIND_MAX] = {
	[DIAG_JAVA_HEAP] = "java-heap",
	[DIAG_JVM_NATIVE] = "jvm-native",
	[DIAG_GLIBC_RETENTION] = "glibc-retention",
	[DIAG_NATIVE_GROWTH] = "native-growth",
	[DIAG_TMPFS_SHMEM] = "tmpfs-shmem",
	[DIAG_KERNEL_MEMORY] = "kernel-memory",
	[DIAG_SPIKE] = "spike",
	[DIAG_LIMIT_TOO_LOW] = "limit-too-low",
	[DIAG_CHILD_PROCESS] = "child-process",
	[DIAG_UNKNOWN] = "unknown",
};

const char *diag_kind_name(enum diag_kind k)
{
	return k < _DIAG_KIND_MAX ? kind_names[k] : "unknown";
}

/* What each kind rests on when found; the glibc estimate from the arena
 * layout alone is set inferred where it is made (v_glibc). */
static const enum diag_basis kind_basis[_DIAG_KIND_MAX] = {
	[DIAG_JAVA_HEAP] = DIAG_BASIS_MEASURED,
	[DIAG_JVM_NATIVE] = DIAG_BASIS_MEASURED,
	[DIAG_GLIBC_RETENTION] = DIAG_BASIS_MEASURED,
	[DIAG_NATIVE_GROWTH] = DIAG_BASIS_INFERRED,
	[DIAG_TMPFS_SHMEM] = DIAG_BASIS_MEASURED,
	[DIAG_KERNEL_MEMORY] = DIAG_BASIS_MEASURED,
	[DIAG_SPIKE] = DIAG_BASIS_INFERRED,
	[DIAG_LIMIT_TOO_LOW] = DIAG_BASIS_INFERRED,
	[DIAG_CHILD_PROCESS] = DIAG_BASIS_INFERRED,
	[DIAG_UNKNOWN] = DIAG_BASIS_INFERRED,
};

const char *diag_basis_name(enum diag_basis b)
{
	return b == DIAG_BASIS_MEASURED ? "measured" : "inferred";
}

void diag_input_init(struct diag_input *in)
{
	memset(in, 0, sizeof(*in));
	in->limit_bytes = UINT64_MAX;
}

void diag_input_release(struct diag_input *in)
{
	free(in->procs);
	free(in->tl);
	diag_input_init(in);
}

/* "1.1 GiB", "740 MiB", "12 KiB" into buf. */
static const char *human(char *buf, size_t n, uint64_t bytes)
{
	if (bytes >= 10ull << 30)
		snprintf(buf, n, "%.0f GiB", (double)bytes / (1 << 30));
	else if (bytes >= 1ull << 30)
		snprintf(buf, n, "%.1f GiB", (double)bytes / (1 << 30));
	else if (bytes >= MiB)
		snprintf(buf, n, "%.0f MiB", (double)bytes / MiB);
	else
		snprintf(buf, n, "%.0f KiB", (double)bytes / KiB);
	return buf;
}

#define H(x) human((char[24]){0}, 24, (x))

/* Saturating arithmetic: every figure here comes from files a pod could
 * write, and one that wraps prints as 16 EiB. */
static uint64_t sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

#define KB(x) mul_sat((x), KiB)

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return add_sat(v, to - 1) / to * to;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- the ledger ---- */

struct ledger {
	struct diagnosis *d;
	uint64_t anon_left; /* anonymous bytes not yet attributed */
	int pid;	    /* the process whose parts are being added */
};

static void part(struct diagnosis *d, int pid, const char *name, uint64_t bytes,
		 bool estimate, const char *fmt, ...) _printf_(6, 7);

static void part(struct diagnosis *d, int pid, const char *name, uint64_t bytes,
		 bool estimate, const char *fmt, ...)
{
	struct diag_part *p;
	va_list ap;

	if (d->n_parts == DIAG_MAX_PARTS || bytes == 0)
		return;
	p = &d->parts[d->n_parts++];
	strlcpy_safe(p->name, name, sizeof(p->name));
	va_start(ap, fmt);
	vsnprintf(p->source, sizeof(p->source), fmt, ap);
	va_end(ap);
	p->bytes = bytes;
	p->estimate = estimate;
	p->pid = pid;
	/* every line says when its data was taken */
	p->age_s = d->cur_age_s;
	if (d->cur_age_s >= 0.05 && strlen(p->source) + 32 < sizeof(p->source))
		snprintf(p->source + strlen(p->source),
			 sizeof(p->source) - strlen(p->source),
			 " (%.1f s before the kill)", d->cur_age_s);
}

/* Takes up to want bytes out of the anonymous memory left. */
static uint64_t take_anon(struct ledger *l, uint64_t want)
{
	uint64_t got = want < l->anon_left ? want : l->anon_left;

	l->anon_left -= got;
	return got;
}

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

static uint64_t nmt_nonheap_kb(const struct diag_proc *p)
{
	uint64_t kb = 0;

	for (size_t i = 0; i < p->n_nmt; i++)
		if (!streq(p->nmt[i].name, "Java Heap"))
			kb = add_sat(kb, p->nmt[i].committed_kb);
	return kb;
}

/* In-use bytes of the allocator: its own figure, else NMT malloc (JVM). */
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

/* The heap's RSS by address at the snapshot (jvm/heap_rss.json), or
 * UINT64_MAX when not measured. */
static uint64_t jvm_heap_rss(const struct diag_input *in, int pid)
{
	for (size_t i = 0; i < in->n_jvms; i++)
		if (in->jvms[i].pid == pid && in->jvms[i].have_heap_rss)
			return in->jvms[i].heap_rss;
	return UINT64_MAX;
}

static void ledger_jvm_nmt(struct ledger *l, const struct diag_proc *p)
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
		got = take_anon(l, b);
		part(d, p->pid, name, got, got < b,
		     "NMT pid %d: committed %s (malloc %s)", p->pid, H(b),
		     H(KB(c->malloc_kb)));
	}
	part(d, p->pid, "jvm native, other categories", take_anon(l, other),
	     false, "NMT pid %d: categories under 2%% of usage", p->pid);
}

/* A JVM's committed memory is virtual: untouched pages are not charged.
 * Each figure takes at most the anonymous memory still unexplained; what
 * it could not take was committed but not resident. The heap first takes
 * what its address ranges held at the snapshot, the NMT categories next
 * (malloc'd memory is touched; a heap's committed pages may never be:
 * G1's 64 MiB heap under direct buffers held 1 MiB and took 64 MiB from
 * NMT "Other"), then the heap what is left of its committed size (its
 * growth after the snapshot). */
static void ledger_jvm(struct ledger *l, const struct diag_input *in,
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
	got = take_anon(l, rss < heap ? rss : heap);
	if (p->have_nmt)
		ledger_jvm_nmt(l, p);
	if (got < heap)
		got = add_sat(got, take_anon(l, heap - got));
	if (heap > d->limit_bytes)
		/* A JVM that did not see its limit sizes the heap from the
		 * host's memory (1/64 of it at start): the row gives what
		 * the heap could hold, the evidence quotes the figure. */
		part(d, p->pid, "jvm heap", got, true,
		     "GC.heap_info pid %d: used %s, committed beyond the "
		     "limit; not all resident",
		     p->pid, H(KB(p->heap_used_kb)));
	else
		part(d, p->pid, "jvm heap", got, got < heap,
		     "GC.heap_info pid %d: committed %s, used %s%s", p->pid,
		     H(heap), H(KB(p->heap_used_kb)),
		     got < heap ? "; not all resident" : "");
}

static void ledger_glibc(struct ledger *l, const struct diag_proc *p)
{
	uint64_t arenas = KB(add_sat(p->heap_rss_kb, p->arena_rss_kb)), inuse;
	const char *src;

	if (!p->have_smaps || !arenas)
		return;
	if (glibc_inuse(p, &inuse, &src)) {
		/* big chunks are mmap'd outside the arenas: not retained */
		uint64_t in_arenas = sub_sat(inuse, p->alloc_mmap_bytes);
		uint64_t kept = sub_sat(arenas, in_arenas);

		/* A JVM's malloc'd bytes are already in its NMT categories. */
		if (!p->jvm)
			part(l->d, p->pid, "glibc heap in use",
			     take_anon(l, inuse), false, "%s, pid %d", src,
			     p->pid);
		part(l->d, p->pid, "glibc retention", take_anon(l, kept), false,
		     "pid %d: arenas+heap RSS %s minus %s %s", p->pid,
		     H(arenas), src, H(inuse));
	} else {
		part(l->d, p->pid, "glibc arenas (in-use unknown)",
		     take_anon(l, arenas), true,
		     "pid %d: [heap] + %zu arena heaps from smaps; in-use "
		     "bytes not measured",
		     p->pid, p->n_arenas);
	}
}

/* A JVM the last attach did not reach: its heap's RSS by address
 * (jvm/heap_rss.json, smaps, no attach) stands in for GC.heap_info. */
static void ledger_jvm_heap_rss(struct ledger *l, const struct diag_input *in,
				const struct diag_proc *p)
{
	for (size_t i = 0; !p->have_heap && i < in->n_jvms; i++)
		if (in->jvms[i].pid == p->pid && in->jvms[i].have_heap_rss)
			part(l->d, p->pid, "jvm heap",
			     take_anon(l, in->jvms[i].heap_rss), false,
			     "pid %d: RSS of the heap's address ranges (smaps)",
			     p->pid);
}

static void ledger_anon(struct ledger *l, const struct diag_input *in)
{
	for (size_t i = 0; i < in->n_procs; i++) {
		const struct diag_proc *p = &in->procs[i];

		if (p->jvm)
			ledger_jvm(l, in, p);
		ledger_jvm_heap_rss(l, in, p);
		ledger_glibc(l, p);
		if (!p->jvm && p->have_smaps && p->stack_rss_kb)
			part(l->d, p->pid, "thread stacks",
			     take_anon(l, KB(p->stack_rss_kb)), false,
			     "smaps pid %d", p->pid);
	}
	part(l->d, 0, "other anonymous", l->anon_left, !in->have_snapshot,
	     in->have_snapshot ? "not explained by the snapshot (grew after "
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
	struct ledger l = {.d = d};
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
	part(d, 0, "file cache", cache, !in->have_stats, "%s: file minus shmem",
	     c.src);
	c.shmem = clip(d, &left, c.shmem, "shmem", !in->have_stats);
	part(d, 0, "shmem/tmpfs", c.shmem, !in->have_stats, "%s: shmem", c.src);
	c.kernel = clip(d, &left, c.kernel, "kernel memory", !in->have_stats);
	if (in->have_stats && in->have_kernel_total)
		part(d, 0, "kernel", c.kernel, false,
		     "memcg kernel: stacks %s, page tables %s, slab %s, "
		     "sockets %s",
		     H(in->kernel_stack), H(in->pagetables), H(in->slab),
		     H(in->sock));
	else
		part(d, 0, "kernel", c.kernel, false,
		     "memcg stacks+pagetables+slab+sock+percpu");
	for (size_t i = 0; i < d->n_parts; i++)
		sum = add_sat(sum, d->parts[i].bytes);
	d->unreconciled = sub_sat(d->usage_bytes, sum);
	part(d, 0, "unreconciled", d->unreconciled, true,
	     "usage minus the parts above");
}

/* ---- verdicts ---- */

/* One verdict per kind (the table has one slot each): a second process
 * with the same cause replaces the first only when more certain, else it
 * is written to a scratch slot and dropped. */
static struct diag_verdict *verdict(struct diagnosis *d, enum diag_kind k,
				    int confidence, uint64_t bytes)
{
	struct diag_verdict *v = NULL;

	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].kind == k)
			v = d->verdicts[i].confidence < confidence
				    ? &d->verdicts[i]
				    : &d->spare;
	if (!v)
		v = d->n_verdicts < ARRAY_SIZE(d->verdicts)
			    ? &d->verdicts[d->n_verdicts++]
			    : &d->spare;

	memset(v, 0, sizeof(*v));
	v->kind = k;
	v->basis = kind_basis[k];
	v->confidence = confidence > 99 ? 99 : confidence;
	v->bytes = bytes;
	return v;
}

static void line(char (*lines)[DIAG_LINE], size_t *n, const char *fmt, ...)
	_printf_(3, 4);

static void line(char (*lines)[DIAG_LINE], size_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n == DIAG_MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[(*n)++], DIAG_LINE, fmt, ap);
	va_end(ap);
}

#define EVID(v, ...) line((v)->evidence, &(v)->n_evidence, __VA_ARGS__)
#define RECO(v, ...) line((v)->recommend, &(v)->n_recommend, __VA_ARGS__)

static uint64_t part_bytes(const struct diagnosis *d, const char *name)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n_parts; i++)
		if (streq(d->parts[i].name, name))
			sum = add_sat(sum, d->parts[i].bytes);
	return sum;
}

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

/* Peak of the timeline (or the usage at the kill) × 1.25, in 64 MiB
 * steps: the limit that would have held. */
static uint64_t suggested_limit(const struct diag_input *in,
				const struct diagnosis *d)
{
	uint64_t peak = d->usage_bytes;

	for (size_t i = 0; i < in->n_tl; i++)
		if (in->tl[i].usage > peak && in->tl[i].t <= 0)
			peak = in->tl[i].usage;
	/* a sample above the limit is a reading error, not a need */
	if (d->limit_bytes != UINT64_MAX)
		peak = min_u64(peak, add_sat(d->limit_bytes,
					     diag_slack(d->limit_bytes)));
	return round_up(add_sat(peak, peak / 4), 64 * MiB);
}

static void v_shmem_kernel(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes, s = part_bytes(d, "shmem/tmpfs");
	uint64_t k = part_bytes(d, "kernel");
	struct diag_verdict *v;

	if (u && mul_sat(s, 10) >= mul_sat(u, 3)) {
		v = verdict(d, DIAG_TMPFS_SHMEM, 50 + (int)(pct(s, u) / 2), s);
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
		v = verdict(d, DIAG_KERNEL_MEMORY, 50 + (int)(pct(k, u) / 2),
			    k);
		EVID(v,
		     "kernel memory %s (%.0f%%): stacks %s, page tables %s, "
		     "slab %s, sockets %s",
		     H(k), pct(k, u), H(in->kernel_stack), H(in->pagetables),
		     H(in->slab), H(in->sock));
		RECO(v,
		     "look for many threads, sockets or open files; raise the "
		     "limit to %s if this is the steady state",
		     H(suggested_limit(in, d)));
	}
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
	v = verdict(d, DIAG_JAVA_HEAP, 40 + (int)(pct(res, u) / 2), res);
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
		v = verdict(d, DIAG_JVM_NATIVE, 40 + (int)(pct(res, u) / 2),
			    res);
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

static void v_glibc(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t u = d->usage_bytes, kept = part_bytes(d, "glibc retention");
	uint64_t unknown = part_bytes(d, "glibc arenas (in-use unknown)");
	struct diag_verdict *v = NULL;
	const struct diag_proc *top = NULL;
	bool jvm = false;

	for (size_t i = 0; i < in->n_procs; i++) {
		const struct diag_proc *p = &in->procs[i];

		jvm |= p->jvm;
		if (p->have_smaps &&
		    (!top ||
		     add_sat(p->arena_rss_kb, p->heap_rss_kb) >
			     add_sat(top->arena_rss_kb, top->heap_rss_kb)))
			top = p;
	}
	if (u && mul_sat(kept, 5) >= u)
		v = verdict(d, DIAG_GLIBC_RETENTION,
			    55 + (int)(pct(kept, u) / 2), kept);
	else if (u && mul_sat(unknown, 5) >= mul_sat(u, 2) && top &&
		 top->n_arenas >= 4) {
		v = verdict(d, DIAG_GLIBC_RETENTION, 35, unknown);
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
	vd = verdict(d, DIAG_NATIVE_GROWTH,
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
	next = suggested_limit(in, d);
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
	vd = verdict(d, DIAG_SPIKE, young ? 40 : 55, sub_sat(v->end, low));
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
	     H(suggested_limit(in, d)));
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
	vd = verdict(d, DIAG_LIMIT_TOO_LOW, span >= 30 ? 55 : 45, v->lim);
	EVID(vd,
	     "usage stayed above 85%% of the %s limit in %.0f%% of the "
	     "samples over the last %.0f s, without a growth trend (agent's "
	     "cgroup timeline)",
	     H(v->lim), pct(near, v->n), -cg_t(in, v, 0));
	EVID(vd, "cgroup-level only: the usage includes page cache the "
		 "kernel can reclaim; the ledger says what was left");
	RECO(vd, "raise the limit to %s (peak × 1.25)",
	     H(suggested_limit(in, d)));
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

static bool jvm_heap_grew(const struct diag_input *in,
			  const struct diag_jvm **ret);
static bool jvm_native_grew(const struct diag_input *in, uint64_t usage);

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

		v = verdict(d, DIAG_SPIKE, young ? 45 : 70,
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
		     H(suggested_limit(in, d)));
	} else if (linear && !jvm_heap_grew(in, NULL) &&
		   !jvm_native_grew(in, d->usage_bytes)) {
		/* the fitted rise, at most what was in use at the end */
		double rise = fmin(slope * span, (double)d->usage_bytes);

		v = verdict(d, DIAG_NATIVE_GROWTH, 45 + (int)(r2 * 30),
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
		     H(suggested_limit(in, d)),
		     (double)sub_sat(suggested_limit(in, d), d->usage_bytes) /
			     slope / 60);
	}
	if (span >= 30 && mul_sat(near, 10) >= mul_sat(in->n_tl, 8) &&
	    !linear) {
		v = verdict(d, DIAG_LIMIT_TOO_LOW, 60, lim);
		EVID(v,
		     "usage stayed above 85%% of the %s limit for %.0f%% of "
		     "the last %.0f s",
		     H(lim), pct(near, in->n_tl), span);
		RECO(v, "raise the limit to %s (peak × 1.25)",
		     H(suggested_limit(in, d)));
	}
}

/* ---- JVM facts from the sidecar (diagnosis_jvm.c) ---- */

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
		v = verdict(d, DIAG_JAVA_HEAP, j->heap_outgrows ? 85 : 70,
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
			v = verdict(d, DIAG_JVM_NATIVE, conf,
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
	v = verdict(d, DIAG_CHILD_PROCESS, 75, 0);
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
		human(lim, sizeof(lim), d->limit_bytes);
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
	v_jvm(in, d);
	v_jvm_facts(in, d);
	v_nmt_growth(in, d);
	v_jvm_limit(in, d);
	v_glibc(in, d);
	v_shmem_kernel(in, d);
	v_timeline(in, d);
	v_child(in, d);
	if (max_confidence(d) < 30) {
		v = verdict(d, DIAG_UNKNOWN, 20, d->usage_bytes);
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
			     H(suggested_limit(in, d)));
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
