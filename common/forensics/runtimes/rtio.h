/* SPDX-License-Identifier: Apache-2.0 */
/* rtio: what the hooks of the runtimes that read their facts from /proc
 * (node.c, python.c, dotnet.c) share, so that each file holds only its
 * runtime's knowledge.
 *
 * On the live process (the sidecar's hooks): a file of /proc/<pid>
 * (O_NOFOLLOW, bounded), its maps once per sight (struct rt_sight_cache),
 * its environment handed to a parser and wiped (only the parser's keys
 * are kept, the buffer never leaves here), its executable's dynamic
 * symbols (rtelf), the host's memory, and a runtime's facts.json written
 * atomically under the snapshot's processes/<pid>/.
 *
 * On a bundle (the diagnosis' and the report's hooks): a process's
 * facts.json read as an object (typed reads through base/jget.h, wrong
 * types noted), a heap's mappings named in report.html, a ledger part's
 * bytes, and a parser's verdict (struct rtproc_verdict) made a verdict of
 * the diagnosis. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forensics/diagnosis.h"
#include "forensics/runtimes/rtproc.h"
#include "forensics/runtimes/runtime.h"

struct bundle;
struct json_object;
struct strbuf;

/* ---- the live process ---- */

/* /proc/<pid>/name (O_NOFOLLOW, O_NONBLOCK; another user's through
 * procfs_open_at's fsuid retry) appended to sb, at most max bytes: a
 * longer file is cut there, which is no error. 0 or -errno. */
int rtio_read(const struct rt_sight *s, const char *name, size_t max,
	      struct strbuf *sb);

/* /proc/<pid>/maps: from s->cache when an earlier hook of this sight read
 * it, else read (into the cache, or into own when there is none; own is
 * the caller's, STRBUF_INIT, released by it). *ret points at the bytes.
 * 0 or -errno (the first read's answer, also when cached). */
int rtio_maps(const struct rt_sight *s, struct strbuf *own,
	      const struct strbuf **ret);

/* Hands /proc/<pid>/environ (at most 256 KiB) to fn, then wipes it: fn is
 * a parser that keeps only the keys it names. Returns fn's answer, or the
 * read's -errno (fn not called). */
typedef int (*rtio_env_fn)(const char *env, size_t len, void *ctx);
int rtio_with_env(const struct rt_sight *s, rtio_env_fn fn, void *ctx);

/* The executable, opened through /proc/<pid>/exe (a regular file). */
struct rtio_exe {
	int fd;
	uint64_t size;
};

/* 0 with ret filled, or -errno (then nothing to close). */
int rtio_exe_open(const struct rt_sight *s, struct rtio_exe *ret);
void rtio_exe_close(struct rtio_exe *e);
/* rtproc_has_symbol_fn over an open struct rtio_exe (ctx): whether it
 * defines the dynamic symbol name (rtelf_has_symbol; false on any
 * error). */
bool rtio_exe_has_symbol(const void *ctx, const char *name);
/* The exe link's target into buf ("" when unreadable). */
void rtio_exe_path(const struct rt_sight *s, char *buf, size_t size);

/* The host's memory (its /proc/meminfo MemTotal), bytes. 0 or -errno. */
int rtio_host_mem(const struct rt_sight *s, uint64_t *ret);

/* Writes o as dir/file (file's path includes dir: "node/facts.json")
 * under pid_dirfd: the directory made, the file written atomically. o
 * stays the caller's. 0 or -errno. */
int rtio_write_facts(int pid_dirfd, const char *dir, const char *file,
		     struct json_object *o);

/* [[start, end], ...] of r, the most RSS first (new reference, NULL on
 * allocation failure). */
struct json_object *rtio_ranges_json(const struct rtproc_ranges *r);

/* ---- a bundle ---- */

/* processes/<pid>/file of b as a JSON object (new reference); NULL when
 * absent, not JSON, or not an object (noted in n, which is left naming
 * the file for the reads that follow). */
struct json_object *rtio_facts(const struct bundle *b, int pid,
			       const char *file, struct jget_notes *n);

/* The age before kill_ms (wall-clock ms) of o's "t_ms": seconds, < 0
 * when unknown. */
double rtio_age_s(struct jget_notes *n, struct json_object *o,
		  uint64_t kill_ms);

/* A runtime's own table of the processes that have its facts.json: up
 * to max items of size bytes, each with its pid (an int) first and its
 * snapshot's age at the kill (a double, rtio_age_s()) at age_off. */
struct rtio_procs {
	const char *file; /* processes/<pid>/<file>: BP_<RUNTIME>_FACTS */
	size_t size, max, age_off;
	/* one process's facts from its file into item (zeroed, pid set) */
	void (*load)(struct jget_notes *n, struct json_object *o, void *item);
};

/* Fills items (room for t->max) from the snapshot's processes in order;
 * the number filled. The notes are left naming no file. */
size_t rtio_procs_load(const struct bundle *b, struct diag_input *in,
		       uint64_t kill_ms, const struct rtio_procs *t,
		       void *items);

/* The item of pid among n of size bytes (pid first), or NULL. */
const void *rtio_procs_find(const void *items, size_t size, size_t n, int pid);

/* Names the rows of pid that lie inside one of the ranges of key
 * ([[start, end], ...]) in dir/file of b: label, on the rows no earlier
 * runtime named. */
void rtio_label_ranges(const struct bundle *b, const char *dir,
		       const char *file, const char *key, int pid,
		       struct rt_mapping *rows, size_t n,
		       struct jget_notes *notes, const char *label);

/* At most max ranges of key ([[start, end], ...], start < end) of o into
 * ret; returns how many. Entries of another shape are left out, and
 * noted in n. */
size_t rtio_ranges_load(struct jget_notes *n, struct json_object *o,
			const char *key, struct rtproc_range *ret, size_t max);

/* The bytes of the ledger parts of pid named name, summed. */
uint64_t rtio_part_of(const struct diagnosis *d, int pid, const char *name);

/* The verdict of kind k from a parser's rv: its confidence, rv->bytes as
 * its figure, detail (may be ""); evidence "pid <pid> (<who>): <rv's
 * summary> (smaps, <age_s> s before the kill)" then rv's evidence;
 * recommendations rv's remedies, then the limit that would hold
 * (diag_suggested_limit). Returns the verdict (a scratch slot when a more
 * certain one of kind k stands). */
struct diag_verdict *rtio_verdict(const struct diag_input *in,
				  struct diagnosis *d, enum diag_kind k,
				  const char *detail,
				  const struct rtproc_verdict *rv, int pid,
				  const char *who, double age_s);
