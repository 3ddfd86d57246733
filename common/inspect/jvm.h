/* SPDX-License-Identifier: Apache-2.0 */
/* JVM forensics without a JDK: find HotSpot JVMs, speak the attach protocol
 * (v1, and v2 where the JVM offers it), and parse the replies that matter
 * near an OOM (NMT summary, GC.heap_info, System.native_heap_info).
 *
 * Attach follows DESIGN.md "JVM attach": the socket is reached through
 * /proc/<pid>/root/tmp (the target's own /tmp, even in another mount
 * namespace), opened with openat + O_NOFOLLOW, owner-checked, and connected
 * through its O_PATH fd so a symlink planted in its place is never followed.
 * Effective uid/gid switch to the target's for the attach and back after:
 * this changes the whole process' credentials, so callers must not run
 * other threads that care about credentials meanwhile (the sidecar does the
 * attach from one thread). Every call is bounded by a deadline. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/host.h"
#include "base/strbuf.h"

/* Errors besides plain errno values. jvm_strerror() gives the text. */
#define JVM_E_NOT_JVM ENOEXEC	  /* no libjvm.so, no hsperfdata */
#define JVM_E_DISABLED EOPNOTSUPP /* -XX:+DisableAttachMechanism */
#define JVM_E_NO_SIGQUIT ENOTCONN /* -Xrs and no listener running */
#define JVM_E_STALE ECONNREFUSED  /* socket file, nobody listening */
#define JVM_E_TIMEOUT ETIMEDOUT	  /* no socket / no reply in time */
#define JVM_E_SYMLINK ELOOP	  /* symlink where socket/tmp was */
#define JVM_E_OWNER EPERM	  /* socket not owned by the JVM */
#define JVM_E_PROTO EPROTO	  /* malformed reply */
#define JVM_E_NO_COMMAND ENOSYS	  /* the JVM lacks the command */
#define JVM_E_DROPPED ECONNRESET  /* closed without a reply */

#define JVM_TIMEOUT_MS_DEFAULT 5000u
#define JVM_REPLY_TIMEOUT_MS_DEFAULT 30000u
#define JVM_REPLY_MAX_DEFAULT (8u << 20)

struct jvm_attach_opts {
	unsigned timeout_ms;	   /* listener start; 0 = 5000 */
	unsigned reply_timeout_ms; /* per command; 0 = 30000 */
	size_t reply_max;	   /* reply cap; 0 = 8 MiB */
	bool no_signal;		   /* never send SIGQUIT */
};

/* What /proc and hsperfdata tell about a process. */
struct jvm_info {
	int pid;	      /* in the host context's pid namespace */
	int nspid;	      /* the pid the JVM sees (last NSpid field) */
	uid_t uid;	      /* effective uid of the target */
	gid_t gid;	      /* effective gid of the target */
	bool libjvm;	      /* libjvm.so is mapped */
	bool hsperfdata;      /* /tmp/hsperfdata_<user>/<nspid> was read */
	int attach_capable;   /* 1 yes, 0 disabled, -1 unknown */
	bool sigquit_handled; /* SigCgt has SIGQUIT, SigIgn does not */
	/* the Java feature release (8, 17, 25) from hsperfdata's
	 * java.property.java.version; 0 unknown. The pod's to write: it
	 * only decides whether the protocol probe is needed (v1 works on
	 * every JDK, v2 exists from 24 on) */
	int java_feature;
};

/* An attached JVM: reuse it for several commands. */
struct jvm_target {
	const struct host *host;
	struct jvm_info info;
	struct jvm_attach_opts opts;
	int protocol;	    /* 1 or 2, from `getversion options` */
	bool has_streaming; /* v2 "streaming" option (sent as =0) */
	/* no probe was made (a JVM before 24): the first operation checks
	 * the listener (stale, silent) with the attach deadline */
	bool unverified;
};

struct jvm_reply {
	int status;	    /* the JVM's status: 0 ok, -1 error, ... */
	bool truncated;	    /* text was cut at opts.reply_max */
	struct strbuf text; /* the reply after the status line */
};

/* Text for a negative error from this module (falls back to strerror). */
const char *jvm_strerror(int r);

/* Parses the prologue and entries of an hsperfdata buffer and looks up a
 * string counter (e.g. "sun.rt.jvmCapabilities"). Copies it into ret
 * (NUL-terminated, cut at size). Returns 0, -ENOENT (no such counter),
 * -EBADMSG (not perfdata). Pure. */
int jvm_perfdata_string(const void *buf, size_t len, const char *name,
			char *ret, size_t size);

/* The feature release of a java.version string: "17.0.15" 17, "25" 25,
 * "24-ea" 24, "1.8.0_392" 8. Returns it, or 0 when version does not start
 * with one (1..999). Pure. */
int jvm_java_feature(const char *version);

/* Reads /proc/<pid>/{status,maps} and the target's hsperfdata (credentials
 * switched while reading it). Returns 0 and fills ret (also for non-JVMs:
 * check jvm_info_is_jvm), -ESRCH when the process is gone, -EACCES when
 * neither maps nor hsperfdata could be read, -errno. */
int jvm_detect(const struct host *h, int pid, struct jvm_info *ret);

static inline bool jvm_info_is_jvm(const struct jvm_info *i)
{
	return i->libjvm || i->hsperfdata;
}

/* Detects, starts the attach listener when needed (trigger file + SIGQUIT,
 * only if the JVM handles SIGQUIT and attach is not disabled), waits for
 * the socket up to the deadline and probes the protocol version. A stale
 * socket (nobody listening: a restarted container that kept /tmp) is
 * replaced the same way when SIGQUIT may be sent, else -JVM_E_STALE. opts
 * may be NULL. Blocks up to opts->timeout_ms. Returns 0 or -errno /
 * -JVM_E_*. ret is a plain value; there is nothing to release.
 * A JVM whose hsperfdata says it is older than 24 has no v2 to probe
 * for: no probe is made (ret->unverified), and the first jvm_execute()
 * makes the checks the probe made (stale socket replaced, a listener
 * that does not read the request within opts->timeout_ms fails with
 * -JVM_E_TIMEOUT), so those errors come from it instead. */
int jvm_attach(const struct host *h, int pid, const struct jvm_attach_opts *o,
	       struct jvm_target *ret);

/* Sends one operation with up to 8 arguments (NULL = empty) and reads the
 * reply into ret (initialised here; release with jvm_reply_release). v1
 * sends exactly three args. Returns 0 when a reply arrived (check
 * ret->status), or -errno. Blocks up to reply_timeout_ms. */
int jvm_execute(struct jvm_target *t, const char *op, const char *const *args,
		size_t nargs, struct jvm_reply *ret);

/* A diagnostic command line ("VM.native_memory summary"), as jcmd sends
 * it: op "jcmd", streaming off on v2. */
int jvm_jcmd(struct jvm_target *t, const char *cmdline, struct jvm_reply *ret);

void jvm_reply_release(struct jvm_reply *r);

/* ---- parsers: pure, on buffers; sizes in bytes ---- */

#define JVM_NMT_MAX_CATEGORIES 48

struct jvm_nmt_category {
	char name[40];
	uint64_t reserved, committed;
	bool has_malloc, has_mmap, has_arena, has_stack;
	uint64_t malloc, malloc_count;
	uint64_t mmap_reserved, mmap_committed;
	uint64_t arena, arena_count;
	uint64_t stack_reserved, stack_committed;
	int64_t threads; /* -1 when the line is absent */
};

struct jvm_nmt {
	bool enabled; /* false: "Native memory tracking is not enabled" */
	uint64_t reserved, committed;
	uint64_t malloc, malloc_count;
	uint64_t mmap_reserved, mmap_committed;
	int64_t threads; /* from the Thread category, -1 absent */
	size_t n_categories;
	struct jvm_nmt_category categories[JVM_NMT_MAX_CATEGORIES];
};

/* Parses `VM.native_memory summary` (JDK 17 and 25 layouts; a leading
 * "<pid>:" line as jcmd prints it is skipped). Returns 0 (enabled may be
 * false), -EBADMSG when neither a Total line nor the "not enabled" text is
 * found. Categories beyond the array are dropped (still 0). */
int jvm_parse_nmt(const char *buf, size_t len, struct jvm_nmt *ret);
struct json_object;
/* Appends o printed as compact JSON (one line, '/' not escaped) to sb and
 * drops the reference to o in every case (o may be NULL: -ENOMEM).
 * Returns 0, -ENOMEM, -E2BIG. */
int jvm_json_append(struct json_object *o, struct strbuf *sb);

/* Appends the parsed summary as one JSON object. */
int jvm_nmt_to_json(const struct jvm_nmt *n, struct strbuf *sb);

#define JVM_HEAP_MAX_SPACES 8

struct jvm_heap_space {
	char name[40]; /* "garbage-first heap", "def new generation", ... */
	uint64_t committed, used, reserved;
	uint64_t start, end; /* its address range [start, end), 0 unknown */
};

struct jvm_heap_info {
	char collector[16]; /* "G1", "Serial", "Parallel", "unknown" */
	uint64_t committed, used, reserved; /* sums over spaces */
	uint64_t region_size;		    /* G1, else 0 */
	bool has_metaspace;
	uint64_t metaspace_used, metaspace_committed, metaspace_reserved;
	uint64_t class_used, class_committed, class_reserved;
	size_t n_spaces;
	struct jvm_heap_space spaces[JVM_HEAP_MAX_SPACES];
};

/* Parses GC.heap_info (G1, Serial and Parallel; JDK 17 and 25). reserved
 * comes from "total reserved" (25) or the address range [low, .., high).
 * Returns 0, -EBADMSG when no heap line is found. */
int jvm_parse_heap_info(const char *buf, size_t len, struct jvm_heap_info *ret);
int jvm_heap_info_to_json(const struct jvm_heap_info *hi, struct strbuf *sb);

/* VM.flags: the limits of a JVM's memory areas (bytes). A flag VM.flags
 * does not print keeps its default (has_* false). */
struct jvm_flags {
	uint64_t max_heap, max_direct, max_metaspace, code_cache;
	uint64_t thread_stack; /* ThreadStackSize, converted from KiB */
	uint64_t max_ram_pct;  /* MaxRAMPercentage, integer part */
	uint64_t max_ram;
	bool has_max_heap, has_max_direct, has_max_metaspace, has_code_cache,
		has_thread_stack, has_max_ram_pct, has_max_ram;
};

/* Parses the VM.flags reply ("-XX:MaxHeapSize=268435456 -XX:+UseG1GC
 * ..."). Returns 0, or -EBADMSG without MaxHeapSize (always printed). */
int jvm_parse_flags(const char *buf, size_t len, struct jvm_flags *ret);
int jvm_flags_to_json(const struct jvm_flags *f, struct strbuf *sb);

/* What a JVM believes of its container: VM.info's "container (cgroup)
 * information:" section (JDK 17 and 25; cgroup v1 and v2 share the key
 * names) and its "Memory: 4k page, physical NNNk" line, the memory the JVM
 * sizes its default heap from (MaxRAMPercentage). Values are bytes. */
enum jvm_cval_state {
	JVM_CVAL_ABSENT = 0,	/* the line was not printed */
	JVM_CVAL_VALUE,		/* bytes (or a count) in .v */
	JVM_CVAL_UNLIMITED,	/* "unlimited" / "no quota" / "no shares" */
	JVM_CVAL_NOT_SUPPORTED, /* "not supported" (the JVM could not read it)
				 */
};

struct jvm_cval {
	enum jvm_cval_state state;
	uint64_t v;
};

struct jvm_container {
	/* the section was printed; false with "container information not
	 * found." (e.g. -XX:-UseContainerSupport, or no cgroup found) */
	bool found;
	bool not_found_line; /* that line itself was seen */
	char type[16];	     /* "cgroupv1", "cgroupv2", "" */
	struct jvm_cval memory_limit, memory_and_swap_limit, memory_soft_limit;
	struct jvm_cval memory_usage, memory_max_usage;
	struct jvm_cval active_processor_count, cpu_quota;
	bool has_physical;
	uint64_t physical; /* "Memory: ... physical NNNk(...)" */
};

/* Parses the reply of `jcmd <pid> VM.info` (or just its container section
 * and Memory line). Returns 0 when the container section, the "container
 * information not found." line or the physical memory line was found,
 * -EBADMSG otherwise. Pure. */
int jvm_parse_container(const char *buf, size_t len, struct jvm_container *ret);

/* The limit the JVM sizes itself from: the container's memory limit when
 * it read one, else its physical memory (the host's RAM: it saw no
 * limit). Returns false when the reply said neither. *ret_from_container
 * tells which. */
bool jvm_container_believed_limit(const struct jvm_container *c, uint64_t *ret,
				  bool *ret_from_container);

/* The parsed section as a JSON object ({"found", "type", "memory_limit":
 * bytes | "unlimited" | "not supported", ..., "physical_memory",
 * "believed_limit", "believed_from"}). New reference, NULL on ENOMEM. */
struct json_object *jvm_container_json(const struct jvm_container *c);

/* Whether a JVM is configured to outgrow its container: the sum of what
 * its flags allow (heap, direct buffers when bounded, metaspace when
 * bounded else as measured, code cache, threads x stack) and the native
 * memory measured outside the heap. Pure. */
struct jvm_budget {
	uint64_t heap, direct, metaspace, code_cache, stacks, native;
	uint64_t total;
	bool outgrows;	    /* total > limit */
	bool heap_outgrows; /* heap + native alone > limit */
};

/* threads: the JVM's thread count; metaspace_committed: from GC.heap_info
 * (used when MaxMetaspaceSize is unbounded); native: RSS outside the heap
 * ranges; limit 0: unknown (nothing outgrows). */
void jvm_budget_compute(const struct jvm_flags *f, uint64_t threads,
			uint64_t metaspace_committed, uint64_t native,
			uint64_t limit, struct jvm_budget *ret);

#define JVM_MALLOC_MAX_ARENAS 128

struct jvm_malloc_arena {
	int nr;
	uint64_t free_fast, free_rest; /* bytes free in bins */
	uint64_t free_count;
	uint64_t system_current, system_max;
};

struct jvm_malloc_info {
	uint64_t free_fast, free_rest, free_count;
	uint64_t mmap_count, mmap_bytes;
	uint64_t system_current, system_max;
	size_t n_arenas; /* arenas beyond the array are counted in totals */
	struct jvm_malloc_arena arenas[JVM_MALLOC_MAX_ARENAS];
};

/* Parses glibc malloc_info(3) XML (System.native_heap_info). Totals are
 * the document's own closing totals. Returns 0, -EBADMSG. */
int jvm_parse_malloc_info(const char *buf, size_t len,
			  struct jvm_malloc_info *ret);
int jvm_malloc_info_to_json(const struct jvm_malloc_info *m, struct strbuf *sb);

/* ---- snapshot and trim ---- */

struct jvm_snapshot_opts {
	struct jvm_attach_opts attach;
	/* CLOCK_MONOTONIC µs; 0 none. Each command gets what is left; none
	 * is sent once it has passed ("deadline" in attach.json). */
	uint64_t deadline_mono_us;
};

/* Writes, below out_dirfd: jvm/native_memory.txt + .json (or a JSON note
 * "NMT is not enabled"), jvm/heap_info.txt + .json, jvm/flags.txt + .json,
 * jvm/native_heap_info.xml + .json where the JDK has the command, and
 * jvm/attach.json describing what worked. Never runs VM.info. o may be
 * NULL. Returns 0 when the JVM answered at least one command,
 * -JVM_E_NOT_JVM, or the attach error (also recorded in attach.json). */
int jvm_snapshot(const struct host *h, int pid, int out_dirfd,
		 const struct jvm_snapshot_opts *o);

struct jvm_trim_result {
	uint64_t rss_before, rss_after; /* bytes, VmRSS of the target */
	uint64_t duration_us;		/* the command's wall time */
	char command[32];		/* the diagnostic command used */
	char output[256];		/* the JVM's first reply line */
};

/* Runs System.trim_native_heap (VM.trim_libc_heap on older JDKs) and
 * reads VmRSS before and after. Returns 0, -JVM_E_NOT_JVM, -errno. */
int jvm_trim(const struct host *h, int pid, const struct jvm_attach_opts *o,
	     struct jvm_trim_result *ret);
int jvm_trim_to_json(const struct jvm_trim_result *t, struct strbuf *sb);

/* jvm_trim() and its result (or the attach error) written to
 * out_dirfd/jvm/trim.json, for the sidecar's --trim test|on-pressure.
 * Writes nothing for a non-JVM (-JVM_E_NOT_JVM), a vanished (-ESRCH) or
 * unreadable (-EACCES) process. ret may be NULL. */
int jvm_trim_snapshot(const struct host *h, int pid, int out_dirfd,
		      const struct jvm_attach_opts *o,
		      struct jvm_trim_result *ret);

/* VmRSS of /proc/<pid>/status in bytes. */
int jvm_read_rss(const struct host *h, int pid, uint64_t *ret);

/* ---- GC.class_histogram (jvm_histo.c, jvm_histo_take.c) ---- */

#define JVM_HISTO_TOP 20	       /* classes kept, by bytes */
#define JVM_HISTO_NAME_MAX 192	       /* a class name, cut with "..." */
#define JVM_HISTO_MODULE_MAX 64	       /* "java.base@17.0.15" */
#define JVM_HISTO_REPLY_MAX (4u << 20) /* ~50,000 classes' lines */

struct jvm_histo_class {
	uint64_t instances, bytes;
	char name[JVM_HISTO_NAME_MAX];	   /* jvm_histo_clean_name()'s */
	char module[JVM_HISTO_MODULE_MAX]; /* "" for the unnamed module */
};

struct jvm_histo {
	uint64_t n_classes; /* entry lines read, kept or not */
	bool total_known;   /* the Total line was read (and matched) */
	/* the Total line, or the sums of the entries read when the reply
	 * was cut before it */
	uint64_t total_instances, total_bytes;
	size_t n; /* top[]: the largest by bytes, largest first */
	struct jvm_histo_class top[JVM_HISTO_TOP];
};

/* Parses the reply of GC.class_histogram (JDK 17 and 25; a leading
 * "<pid>:" line as jcmd prints it is skipped). The reply is the pod's, so
 * every line is checked: the header, the dashes under it, entries
 * "<n>: <instances> <bytes>  <class name>[ (<module>)]" numbered 1, 2, …
 * in order, and the closing "Total <instances> <bytes>", which must equal
 * the entries' sums; nothing may follow it but empty lines. Any other
 * line, a number that overflows, a rank out of order is -EBADMSG. With
 * truncated (the reply was cut at its cap) the last line, partial, is
 * dropped and the Total line is not required. Class names and modules
 * are cleaned (jvm_histo_clean_name) and cut. Returns 0 or -EBADMSG;
 * ret is written only on success. Pure. */
int jvm_parse_class_histogram(const char *buf, size_t len, bool truncated,
			      struct jvm_histo *ret);

/* A class name (or module) from a JVM made safe to show: printable ASCII
 * and well-formed UTF-8 of printable code points pass ("Zoo$Bär"); C0 and
 * C1 controls, DEL, invalid UTF-8 and the bidirectional and line
 * separator controls (U+2028-202E, U+2066-2069, U+200E/F) become '?'.
 * Cut to size - 1 bytes on a character boundary, ending "..." when cut.
 * Always NUL-terminates (size > 3). Pure. */
void jvm_histo_clean_name(const char *s, size_t n, char *ret, size_t size);

/* The Java spelling of a JVM array descriptor: "[B" → "byte[]",
 * "[[Ljava.lang.String;" → "java.lang.String[][]"; any other name is
 * copied. Pure. */
void jvm_class_display_name(const char *name, char *ret, size_t size);

/* The heap walk's expected time (ms) for heap_used bytes at rate bytes
 * per ms (0: JVM_HISTO_RATE_DEFAULT), a fixed cost included. Pure. */
uint64_t jvm_histo_estimate_ms(uint64_t heap_used, uint64_t rate);

/* Bytes of used heap walked per ms, under what was measured here
 * (docs/diagnosis.md, "Class histogram"). */
#define JVM_HISTO_RATE_DEFAULT (256ull * 1024)
#define JVM_HISTO_BUDGET_MS_DEFAULT 1000u

/* A long counter of an hsperfdata buffer ("sun.rt.safepointTime").
 * Returns 0, -ENOENT (no such counter), -EBADMSG (not perfdata, or the
 * counter is not a long). Pure. */
int jvm_perfdata_long(const void *buf, size_t len, const char *name,
		      int64_t *ret);

struct jvm_histo_opts {
	struct jvm_attach_opts attach;
	/* the longest pause accepted: the walk is skipped when its estimate
	 * is longer, and the command's hard deadline; 0 = 1000 */
	unsigned budget_ms;
	const char *budget_what; /* what sets it, for the reason given */
	uint64_t rate;		 /* bytes/ms; 0 = JVM_HISTO_RATE_DEFAULT */
	/* CLOCK_MONOTONIC µs; 0 none: the attach, GC.heap_info and the
	 * walk all end by then (the snapshot's deadline), whatever the
	 * budget */
	uint64_t deadline_mono_us;
};

/* One histogram taken, or why not. */
struct jvm_histo_take {
	bool taken;
	char why[200];	    /* when not taken: skipped, or what failed */
	uint64_t heap_used; /* GC.heap_info just before, bytes; 0 unknown */
	uint64_t estimate_ms, budget_ms;
	uint64_t wall_us; /* the command's wall time */
	/* the JVM's own account of its pause: sun.rt.safepointTime and
	 * sun.rt.safepoints of hsperfdata read around the command */
	bool have_pause;
	uint64_t pause_us, safepoints;
	size_t reply_bytes;
	bool truncated; /* the reply was cut at JVM_HISTO_REPLY_MAX */
	struct jvm_histo h;
};

/* Attaches, reads the heap's used size (GC.heap_info, at most 2 s), and
 * runs GC.class_histogram (a full collection, then the walk, at one
 * safepoint: the application is stopped meanwhile) unless the walk's
 * estimate exceeds the budget or the heap's size is unknown. Blocks up
 * to the attach timeout, then at most budget_ms for the command, never
 * past deadline_mono_us; a JVM still walking then is left to it
 * (ret->why says so). Returns 0 with
 * ret telling what happened (taken, or why not, the attach's or the
 * reply's error included), or -JVM_E_NOT_JVM, -ESRCH, -EACCES, -ENOMEM
 * when there is nothing to tell of a JVM. */
int jvm_histo_take(const struct host *h, int pid,
		   const struct jvm_histo_opts *o, struct jvm_histo_take *ret);

/* jvm/class_histogram.json as one line: {pid, t_ms, trigger, taken,
 * why | (wall_ms, pause_ms, safepoints, classes, total_instances,
 * total_bytes, total_known, top: [{class, module, instances, bytes}]),
 * heap_used, estimate_ms, budget_ms, reply_bytes, truncated} (docs/
 * timeline.md). trigger: the snapshot's reason. Returns 0, -ENOMEM,
 * -E2BIG. */
int jvm_histo_take_to_json(const struct jvm_histo_take *t, int pid,
			   uint64_t t_ms, const char *trigger,
			   struct strbuf *sb);
