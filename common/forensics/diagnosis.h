/* SPDX-License-Identifier: Apache-2.0 */
/* diagnosis: the memory ledger and the verdict.
 *
 * The ledger splits the container's usage at the kill into parts, each
 * with its source; the parts add up to the usage and whatever does not
 * reconcile is a part of its own ("unreconciled"), never hidden. The
 * verdicts say why, ranked (diag_verdict_rank: measured before inferred,
 * then by confidence), each with evidence lines and
 * recommendations carrying concrete values.
 *
 * Pure: diagnosis_run() takes a filled struct diag_input (no I/O). The
 * loader diagnosis_load_bundle() fills one from a bundle's files. The
 * frame (the cgroup's memory classes, the cgroup-level verdicts) is
 * diagnosis.c; each runtime's part (its facts, ledger rows, verdicts) is
 * its entry in runtimes/ (runtimes/runtime.h), called in the table's
 * order; diagnosis_frame.h is what both share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jget.h"

struct json_object;
struct bundle;
struct oom_report;

#define DIAG_MAX_NMT 40
#define DIAG_MAX_FOREIGN 16
#define DIAG_MAX_LINES 8
#define DIAG_LINE 256

struct diag_nmt_cat {
	char name[48];
	uint64_t committed_kb, malloc_kb;
};

struct diag_proc {
	int pid, ppid;
	char comm[64];
	bool victim;
	uint64_t rss_anon_kb, rss_file_kb, rss_shmem_kb, swap_kb;
	/* from smaps (heavy snapshot) */
	bool have_smaps;
	uint64_t heap_rss_kb, arena_rss_kb, stack_rss_kb;
	size_t n_arenas;
	/* its arena-shaped mappings are another runtime's heap (Go's arenas
	 * are 64 MiB-aligned rw-p + ---p, as glibc's): glibc leaves them */
	bool arenas_not_glibc;
	/* address ranges another runtime names as its own heap, set by its
	 * load_proc before glibc's (a .NET GC reservation starts as an arena
	 * heap does): glibc leaves the arena heaps that start inside */
	struct diag_range {
		uint64_t start, end;
	} foreign[DIAG_MAX_FOREIGN];
	size_t n_foreign;
	/* from the allocator itself (ptcall allocator.json, or the JVM's
	 * native_heap_info) */
	bool have_alloc;
	uint64_t alloc_inuse_bytes, alloc_system_bytes;
	uint64_t alloc_mmap_bytes; /* in-use chunks mmap'd outside arenas */
	char alloc_source[48];
	/* JVM */
	bool jvm, have_nmt, have_heap;
	uint64_t heap_committed_kb, heap_used_kb, heap_max_kb;
	uint64_t nmt_committed_kb, nmt_malloc_kb;
	struct diag_nmt_cat nmt[DIAG_MAX_NMT];
	size_t n_nmt;
	bool have_trim;
	uint64_t trim_before_kb, trim_after_kb;
};

struct diag_sample {
	double t;	 /* seconds, relative to the kill (≤ 0) */
	uint64_t usage;	 /* bytes; the container's usage or the RSS sum */
	uint64_t anon;	 /* bytes of anonymous RSS, 0 when unknown */
	unsigned nprocs; /* processes sampled (0: before the workload ran) */
};

/* One NMT category's committed bytes at two summaries. */
struct diag_nmt_growth {
	char name[48];
	uint64_t from, to; /* bytes */
};

#define DIAG_MAX_NMT_GROWTH 8

/* What the sidecar learned of a JVM while it was healthy (timeline
 * "jvms", the snapshot's jvm/heap_rss.json) and the timeline's view of
 * its RSS after that. Ages in seconds before the kill, < 0 unknown. */
struct diag_jvm {
	int pid;
	bool have_flags; /* VM.flags at first sight */
	uint64_t max_heap, max_direct, configured_total, native_baseline;
	uint64_t limit; /* the container's limit the check used */
	bool outgrows, heap_outgrows;
	double flags_age_s;
	bool have_heap_rss; /* smaps by heap address, at the snapshot */
	uint64_t heap_rss, native_rss;
	double heap_rss_age_s;
	bool have_rss; /* the newest timeline sample with this pid */
	uint64_t rss_last;
	double rss_last_age_s;
	uint64_t rss_at_snapshot; /* timeline sample nearest the heap RSS */
	/* VM.info at first sight (timeline "jvms" "container"): the limit
	 * the JVM believes it has, the figure its default heap is computed
	 * from: its container limit, else its physical memory */
	bool have_jvm_limit;
	uint64_t jvm_limit;
	bool jvm_limit_from_container;
	/* NMT growth from the first to the newest summary of
	 * jvm/nmt_history.json: the categories that grew, largest first */
	bool have_nmt_growth;
	double nmt_from_age_s, nmt_to_age_s;
	int64_t threads_from, threads_to; /* -1 unknown */
	uint64_t nmt_nonheap_growth;	  /* every category but Java Heap */
	uint64_t nmt_heap_growth;	  /* Java Heap */
	struct diag_nmt_growth growth[DIAG_MAX_NMT_GROWTH];
	size_t n_growth;
};

#define DIAG_MAX_JVMS 8
#define DIAG_MAX_RUNTIMES 8

struct diag_input {
	/* usage and limit at the kill, each with where it was read: the
	 * kernel's report, else the cgroup read at the OOM notification, else
	 * its peak (v1 memory.max_usage_in_bytes, v2 memory.peak), else the
	 * timeline's last sample before the kill */
	bool have_usage;
	uint64_t usage_bytes, limit_bytes; /* limit UINT64_MAX: none */
	char usage_source[64];
	char limit_source[64];
	/* memcg statistics at the kill (bytes) */
	bool have_stats;
	uint64_t anon, file, shmem, kernel_stack, pagetables, slab, sock,
		percpu, vmalloc, kernel;
	bool have_kernel_total; /* v2 "kernel" line */
	/* the processes (newest snapshot, and the kernel's victims) */
	struct diag_proc *procs;
	size_t n_procs;
	int victim_pid;
	int main_pid; /* the container's main process, 0 when unknown */
	bool group_kill;
	/* timeline up to the kill */
	struct diag_sample *tl;
	size_t n_tl;
	/* tl is the agent's 1 Hz cgroup timeline (agent/timeline.json, no
	 * sidecar): usage only, no process counts */
	bool tl_cgroup;
	bool have_snapshot;
	double snapshot_age_s;	     /* seconds before the kill */
	char emptydir_medium_memory; /* reserved */
	/* fields of the bundle's files dropped for a wrong JSON type */
	struct jget_notes notes;
	/* the sidecar's JVM facts (runtimes/jvm.c) */
	struct diag_jvm jvms[DIAG_MAX_JVMS];
	size_t n_jvms;
	/* each runtime's own facts, by its row in the table
	 * (runtimes/registry.c): set by its load hook, freed by its release
	 * hook in diag_input_release() */
	void *rt_data[DIAG_MAX_RUNTIMES];
};

void diag_input_init(struct diag_input *in);
void diag_input_release(struct diag_input *in);

enum diag_kind {
	DIAG_JAVA_HEAP,
	DIAG_JVM_NATIVE,
	DIAG_GO_HEAP,
	DIAG_NODE_HEAP,
	DIAG_PYTHON_HEAP,
	DIAG_DOTNET_HEAP,
	DIAG_GLIBC_RETENTION,
	DIAG_NATIVE_GROWTH,
	DIAG_TMPFS_SHMEM,
	DIAG_KERNEL_MEMORY,
	DIAG_SPIKE,
	DIAG_LIMIT_TOO_LOW,
	DIAG_CHILD_PROCESS,
	DIAG_UNKNOWN,
	_DIAG_KIND_MAX,
};

const char *diag_kind_name(enum diag_kind k);

/* What a verdict's figure rests on; it ranks the verdicts before their
 * confidence does (diag_verdict_rank, docs/diagnosis.md "How verdicts are
 * ranked"). */
enum diag_basis {
	/* an account of the memory measured from the process or by the
	 * kernel: the allocator's in-use bytes against its RSS, a trim that
	 * gave memory back, the JVM's heap ranges and NMT, memcg's shmem and
	 * kernel counters */
	DIAG_BASIS_MEASURED,
	/* read from the shape of the usage curve (spike, native-growth,
	 * limit-too-low), estimated from a layout (glibc arenas without an
	 * in-use figure), the process tree (child-process), or nothing */
	DIAG_BASIS_INFERRED,
};

const char *diag_basis_name(enum diag_basis b);

struct diag_part {
	char name[48];
	char source[160]; /* ends with its age: "(3.2 s before the kill)" */
	uint64_t bytes;
	bool estimate;
	int pid;      /* the process it belongs to, 0: the whole cgroup */
	double age_s; /* its data's age before the kill; < 0 unknown */
};

struct diag_verdict {
	enum diag_kind kind;
	char detail[64]; /* e.g. the NMT category for jvm-native */
	int confidence;	 /* 0–100 */
	enum diag_basis basis;
	uint64_t bytes; /* the figure behind it */
	char evidence[DIAG_MAX_LINES][DIAG_LINE];
	size_t n_evidence;
	char recommend[DIAG_MAX_LINES][DIAG_LINE];
	size_t n_recommend;
};

#define DIAG_MAX_PARTS 24

/* Every figure of a diagnosis is ≥ 0 and, when the limit is known, at most
 * the limit plus DIAG_SLACK: the ledger's parts add up to the usage, and a
 * usage above the limit (sources read at different moments) is noted and
 * taken as the limit. */
struct diagnosis {
	uint64_t usage_bytes, limit_bytes;
	char usage_source[64];
	struct diag_part parts[DIAG_MAX_PARTS];
	size_t n_parts;
	uint64_t unreconciled; /* usage − Σ parts before the closing part */
	struct diag_verdict verdicts[_DIAG_KIND_MAX];
	size_t n_verdicts;
	struct diag_verdict spare; /* internal: where a dropped verdict goes */
	char summary[320];
	/* what the input lacked or had wrong (wrong JSON types, clipped
	 * figures), one line each */
	struct jget_notes notes;
	double cur_age_s; /* the age part() gives the parts it adds */
};

/* Usage above the limit by at most this much is rounding (v1 charges in
 * per-CPU batches; kB in the kernel's report); never more than the limit
 * itself, so that no figure exceeds twice the limit. */
static inline uint64_t diag_slack(uint64_t limit)
{
	uint64_t s = limit / 50 + (4ull << 20);

	return s < limit ? s : limit;
}

/* The order of two verdicts, as qsort's comparator: < 0 when a ranks
 * first. The one rule (docs/diagnosis.md, "How verdicts are ranked"): a
 * measured verdict comes before an inferred one whatever their
 * confidences, so that the shape of the usage curve never outranks an
 * account of the memory measured from the process; within a basis the
 * more confident first; then the kinds' order, so that the ranking of
 * equal verdicts never depends on the order they were found in. */
int diag_verdict_rank(const void *a, const void *b);

/* Computes the ledger and the verdicts, ranked by diag_verdict_rank. Never
 * fails on missing data: what is absent lowers confidence and shows as an
 * estimate. Returns 0. */
int diagnosis_run(const struct diag_input *in, struct diagnosis *ret);

/* diagnosis.json (new reference; NULL on allocation failure). */
struct json_object *diagnosis_to_json(const struct diagnosis *d);

/* Fills ret (initialised here) from a bundle under construction: the
 * kernel report r (may be NULL), timeline.json (sample times made relative
 * to kill_ms, wall-clock ms; 0 = the last sample) and processes/<pid>/… .
 * Returns 0 or -ENOMEM; release ret with diag_input_release(). */
int diagnosis_load_bundle(const struct bundle *b, const struct oom_report *r,
			  uint64_t kill_ms, struct diag_input *ret);

/* Per-category growth of committed memory between two NMT summaries
 * (runtimes/jvm.c)
 * (the same category may sit at another index; one absent from `from`
 * grew from 0). Fills ret with the categories that grew, largest growth
 * first, at most max; *ret_nonheap is the growth summed over every
 * category but "Java Heap" (also those beyond max), *ret_heap that of
 * "Java Heap". Returns how many ret holds. Pure. */
size_t diagnosis_nmt_growth(const struct diag_nmt_cat *from, size_t n_from,
			    const struct diag_nmt_cat *to, size_t n_to,
			    struct diag_nmt_growth *ret, size_t max,
			    uint64_t *ret_nonheap, uint64_t *ret_heap);
