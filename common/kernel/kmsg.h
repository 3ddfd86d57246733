/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg: the kernel's OOM report, from /dev/kmsg records or pasted text
 * (dmesg, journalctl, syslog).
 *
 * Three layers (STYLE.md "Parsers"):
 *  1. kmsg_parse_record() / kmsg_parse_text_line(): one record, pure.
 *  2. struct kmsg_assembler: fed records in order, assembles OOM reports;
 *     unrelated records interleaved with a report are ignored.
 *  3. kmsg_reader_*(): reads /dev/kmsg (through the host root) without
 *     blocking, survives overruns (EPIPE). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

struct json_object;

#define KMSG_COMM_MAX 64  /* comm is 16 on Linux; room for escapes */
#define KMSG_PATH_MAX 512 /* cgroup paths as the kernel prints them */

struct kmsg_record {
	uint64_t seq;	   /* UINT64_MAX when unknown (dmesg text) */
	uint64_t usec;	   /* CLOCK_MONOTONIC µs; UINT64_MAX when unknown */
	int prio;	   /* syslog prio+facility; -1 when unknown */
	bool continuation; /* flags field had 'c' */
	const char *text;  /* not NUL-terminated: text_len bytes, escapes
			      (\x0a) already decoded */
	size_t text_len;
};

/* Parses one raw /dev/kmsg record "prio,seq,usec,flags[,…];text\n"
 * (dictionary lines " KEY=VAL" after the first line are skipped). Decodes
 * \xNN escapes into scratch, which must stay alive as long as
 * ret->text. Returns 0, -EBADMSG (malformed; ret untouched). */
int kmsg_parse_record(const char *buf, size_t len, struct strbuf *scratch,
		      struct kmsg_record *ret);

/* What comes before the kernel's text on one line of pasted log text. */
struct kmsg_text_prefix {
	size_t skip;	  /* bytes before the kernel's text */
	uint64_t usec;	  /* kernel-monotonic µs ("[  114.184803]" of dmesg,
			     short-monotonic or kern.log); UINT64_MAX when
			     the form has only wall-clock time or none */
	int prio;	  /* "<N>" of dmesg -r, else -1 */
	bool stamped;	  /* had a timestamp of any form: indented lines
			     after it continue its record */
	bool syslog;	  /* a syslog/journal line ("HOST IDENT: ") */
	bool foreign;	  /* ... of another program than the kernel */
	bool mono_host;	  /* "[  114.18] HOST kernel: " (journalctl -o
			     short-monotonic) — or dmesg text that starts
			     with such words */
	bool inner_stamp; /* "kernel: [  114.18] " (rsyslog kern.log) */
};

/* Hints for a whole paste, from kmsg_parse_buffer()'s first look: */
#define KMSG_TEXT_NO_MONO_HOST 1u   /* "[ts] A kernel: " is dmesg text */
#define KMSG_TEXT_NO_INNER_STAMP 2u /* "kernel: [ts] x" keeps "[ts] " */

/* Recognises the prefix of one text line (without its newline): dmesg
 * ("[  114.184803] ", "-r" "<6>", "-x" "kern  :info  : ", "-T" "[Tue Dec
 *  1 08:55:47 2026] ", "--time-format iso"), journalctl -k in the short,
 * short-precise, short-monotonic, short-iso and short-iso-precise forms,
 * syslog files ("Dec  1 08:55:47 host kernel: [  114.18] ") and RFC 3339
 * stamps ("2026-12-01T08:55:47.123456+00:00 host kernel: "). A line with
 * none is kernel text as it is (dmesg -t). Pure; always returns 0. */
int kmsg_parse_text_prefix(const char *buf, size_t len, unsigned flags,
			   struct kmsg_text_prefix *ret);

/* One line of pasted text as a record: seq = UINT64_MAX, usec and prio as
 * kmsg_parse_text_prefix() found them, text without the prefix and
 * without a trailing CR/LF (copied into scratch). Returns 1, 0 for another
 * program's syslog line (*ret untouched), or -ENOMEM. */
int kmsg_parse_text_line(const char *buf, size_t len, unsigned flags,
			 struct strbuf *scratch, struct kmsg_record *ret);

/* kmsg_parse_text_line() with no hints: 0, -ENOMSG for another program's
 * line, -ENOMEM. */
int kmsg_parse_dmesg_line(const char *buf, size_t len, struct strbuf *scratch,
			  struct kmsg_record *ret);

struct kmsg_victim {
	int pid;
	uint32_t uid;
	char comm[KMSG_COMM_MAX];
	uint64_t total_vm_kb, anon_rss_kb, file_rss_kb, shmem_rss_kb;
	uint64_t pgtables_kb;
	int oom_score_adj;
	uint64_t seq, usec; /* of its "Killed process" record */
};

struct kmsg_task {
	int pid, tgid;
	uint32_t uid;
	uint64_t total_vm, rss, pgtables_bytes, swapents; /* pages / bytes as
							     printed */
	uint64_t rss_anon, rss_file, rss_shmem; /* newer kernels; else 0 */
	int oom_score_adj;
	char name[KMSG_COMM_MAX];
};

struct kmsg_stat {
	char *name;
	uint64_t value;
};

struct oom_report {
	uint64_t seq_first, seq_last; /* UINT64_MAX when from dmesg text */
	uint64_t usec;		      /* of the trigger line */
	struct {
		bool present; /* the "invoked oom-killer" line was seen */
		char comm[KMSG_COMM_MAX];
		int pid; /* the allocating thread (a TID: "CPU: … PID: N
			    Comm:"); 0 when absent */
		char gfp_mask[64]; /* as printed, e.g. "0xcc0(GFP_KERNEL)" */
		int order;
		int oom_score_adj;
	} trigger;
	char constraint[32]; /* "CONSTRAINT_MEMCG", "CONSTRAINT_NONE", … */
	char oom_memcg[KMSG_PATH_MAX];	/* "" when not printed */
	char task_memcg[KMSG_PATH_MAX]; /* "" when not printed */
	bool memcg_ambiguous; /* the oom-kill line splits more than one way
				 (cgroup names or the comm hold its keys):
				 oom_memcg and task_memcg are left "" */
	bool global; /* not a memcg OOM (CONSTRAINT_NONE, "Out of memory:") */
	bool group_kill; /* "Tasks in X are going to be killed due to
			    memory.oom.group set" */
	char group_memcg[KMSG_PATH_MAX];
	struct {
		bool present;
		uint64_t usage_kb, limit_kb, failcnt;
	} memcg, memsw, swap, kmem;
	struct kmsg_stat *stats; /* "Memory cgroup stats for" name → value */
	size_t n_stats;
	char stats_memcg[KMSG_PATH_MAX];
	bool stats_truncated; /* one-record stats cut by the kernel (~1 KB) */
	struct kmsg_task *tasks;
	size_t n_tasks;
	unsigned task_columns; /* KMSG_COL_* present in the table header */
	struct kmsg_victim *victims;
	size_t n_victims;
	/* "Killed process" lines of a victim already listed: a
	 * memory.oom.group kill names its first victim again, and the
	 * kernel counts each line in memory.events oom_kill */
	unsigned kills_repeated;
	bool complete;	    /* trigger through "Killed process" all seen, no
			       sequence gap */
	struct strbuf raw;  /* the report's records, one per line, in the
			       format they came in: "prio,seq,usec,flags;text"
			       (newline and backslash re-escaped as \xNN) for
			       kmsg input, "[sec.usec] text" or "text" for
			       dmesg input; kmsg_parse_buffer() re-reads it
			       (kernel/oom.txt) */
	bool raw_truncated; /* raw hit its cap (KMSG_RAW_MAX) */
	bool ratelimited;   /* a bare "Killed process" line right after another
			       kill: the kernel suppressed this report's header
			       (no trigger, memcg, stats or tasks; complete is
			       false). Match it to a cgroup by time. */
};

#define KMSG_RAW_MAX (4u << 20)

/* Columns of the task table ("Tasks state"), as bits of task_columns. */
enum {
	KMSG_COL_UID = 1u << 0,
	KMSG_COL_TGID = 1u << 1,
	KMSG_COL_TOTAL_VM = 1u << 2,
	KMSG_COL_RSS = 1u << 3,
	KMSG_COL_RSS_ANON = 1u << 4,
	KMSG_COL_RSS_FILE = 1u << 5,
	KMSG_COL_RSS_SHMEM = 1u << 6,
	KMSG_COL_PGTABLES_BYTES = 1u << 7,
	KMSG_COL_SWAPENTS = 1u << 8,
	KMSG_COL_OOM_SCORE_ADJ = 1u << 9,
	KMSG_COL_NR_PTES = 1u << 10, /* pre-4.15: pages, kept in
					pgtables_bytes as printed */
};

void oom_report_init(struct oom_report *r);
void oom_report_release(struct oom_report *r);

/* The memcg that names the kill for a container: task_memcg when printed,
 * else oom_memcg, else the pre-5.0 "Task in X" path, else "". */
const char *oom_report_victim_memcg(const struct oom_report *r);

/* A report's task dump cut to the tasks keep(pid, arg) keeps (a global
 * OOM's dump lists every process of the node, others' included). */
struct oom_tasks_cut {
	size_t kept, left_out;
	uint64_t left_out_rss; /* pages, as printed */
};
/* r->raw without the task lines ("[  pid]  uid tgid ...", in any of
 * raw's formats) of the tasks keep() refuses, into ret_raw (initialised;
 * appended to); every other line as it was, so that kmsg_parse_buffer()
 * reads the same report with fewer tasks. -ENOMEM, -E2BIG. */
int oom_report_cut_tasks(const struct oom_report *r,
			 bool (*keep)(int pid, void *arg), void *arg,
			 struct strbuf *ret_raw, struct oom_tasks_cut *ret);

/* One victim as parse-kmsg prints it: pid, comm, uid, *_kb figures,
 * oom_score_adj, seq, usec. New reference, NULL on allocation failure. */
struct json_object *kmsg_victim_to_json(const struct kmsg_victim *v);

/* Builds the JSON object of `parse-kmsg` (fields as in the issue).
 * Returns a new reference, or NULL on allocation failure. */
struct json_object *oom_report_to_json(const struct oom_report *r);

struct kmsg_assembler;

struct kmsg_assembler *kmsg_assembler_new(void);
void kmsg_assembler_free(struct kmsg_assembler *a);

/* Feeds one record. Returns 1 when a report became ready (fetch it with
 * kmsg_assembler_pop), 0 when none, -ENOMEM. A report is ready when the
 * next report starts, or when a non-report record follows its last
 * "Killed process"/oom_reaper line. */
int kmsg_assembler_feed(struct kmsg_assembler *a,
			const struct kmsg_record *rec);

/* Marks the report in progress as ready when it has at least one victim
 * (or, with force, in any state, complete=false when it was cut short).
 * Call when the input is exhausted (force=true at end of a file; force=false
 * when /dev/kmsg has no more data for now). Returns 1 if a report became
 * ready, else 0. */
int kmsg_assembler_flush(struct kmsg_assembler *a, bool force);

/* True while the report in progress may still gain lines that matter: it
 * has no victim yet, or it announced a memory.oom.group kill (one "Killed
 * process" line per task follows). When false, a non-forced flush loses
 * nothing and the report can be closed at once. */
bool kmsg_assembler_may_grow(const struct kmsg_assembler *a);

/* The report in progress, or NULL. */
const struct oom_report *kmsg_assembler_current(const struct kmsg_assembler *a);

/* Whether a memory.oom.group kill's walk of its cgroup has printed every
 * line it will, judged from the group cgroup's cgroup.procs read now
 * (procs[0..len)): true when each task still listed has its "Killed
 * process" line after the announcement (the first victim its second one);
 * false while one has none, or is listed as a pid this reader cannot name
 * (0: outside its pid namespace) or a malformed line; false for a report
 * that is not a group kill. The kernel prints the walk's lines one after
 * the other, each once the console has printed the last: a slow console
 * spaces them by milliseconds. */
bool oom_report_group_walked(const struct oom_report *r, const char *procs,
			     size_t len);

/* Moves the oldest ready report into *ret (caller releases it). Returns 1,
 * or 0 when none is ready. */
int kmsg_assembler_pop(struct kmsg_assembler *a, struct oom_report *ret);

/* Convenience for files and tests: parses a whole buffer of raw kmsg
 * records (one per line) or dmesg text (auto-detected per line) and calls
 * fn for every report, with complete=false for one cut at the end. fn may
 * take the report over (copy the struct, then oom_report_init() *r);
 * whatever is left in *r is released after fn returns. A negative return
 * from fn stops parsing and is returned. Malformed records are skipped.
 * Returns the number of reports, or -errno. */
int kmsg_parse_buffer(const char *buf, size_t len,
		      int (*fn)(struct oom_report *r, void *userdata),
		      void *userdata);

/* /dev/kmsg reading (non-blocking). */
struct kmsg_reader;

/* Opens <host root>/dev/kmsg O_RDONLY|O_NONBLOCK|O_CLOEXEC. With
 * skip_to_end, reading starts after the newest record (SEEK_END: a first
 * start reports no history); otherwise from the oldest record kept, and
 * records with seq <= after_seq are skipped when have_after (a restart
 * neither loses nor repeats). An after_seq above every record now kept (it
 * was saved before a reboot) skips nothing; finding that out reads the
 * buffer once at open. Returns 0 or -errno (-EPERM without CAP_SYSLOG). */
int kmsg_reader_open(int root_fd, bool skip_to_end, bool have_after,
		     uint64_t after_seq, struct kmsg_reader **ret);
void kmsg_reader_free(struct kmsg_reader *r);
int kmsg_reader_fd(const struct kmsg_reader *r);

/* Reads the next record. Returns 1 with *ret filled (valid until the next
 * call), 0 when no record is available now (EAGAIN), -EPIPE once after an
 * overrun (records were lost; reading continues with the oldest kept),
 * other -errno on failure. Malformed records are skipped and counted. */
int kmsg_reader_next(struct kmsg_reader *r, struct kmsg_record *ret);
uint64_t kmsg_reader_malformed(const struct kmsg_reader *r);

/* kmsg timestamps and CLOCK_MONOTONIC are not always the same clock (in a
 * VM they differ by a fixed amount per boot). Writes one marker record to
 * <root>/dev/kmsg (text in marker) and returns the CLOCK_MONOTONIC time of
 * the write; the caller's reader finds the record and takes its stamp:
 * offset = stamp − *ret_mono_us. printk_devkmsg=ratelimit may drop the
 * record (10 per 5 s): try again later. Returns 0 or -errno. */
int kmsg_clock_probe(int root_fd, char *marker, size_t size,
		     uint64_t *ret_mono_us);
