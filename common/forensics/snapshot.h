/* SPDX-License-Identifier: Apache-2.0 */
/* snapshot: the heavy, pre-kill snapshot of one process, written as files
 * into a directory (the spool's snapshots/<time>/processes/, or the
 * bundle's processes/). Other modules add their outputs here (JVM: jvm/,
 * allocator: allocator.json) at the marked hooks in snapshot.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/host.h"

struct snapshot_opts {
	bool no_redact;	      /* keep cmdline secrets (default: redact) */
	bool pmap_json;	      /* also write pmap.json (large) */
	bool skip_jvm;	      /* do not talk to a JVM (for the jvm hook) */
	bool allocator_probe; /* allocator.json via ptrace */
};

struct snapshot_result {
	int pid;
	bool truncated;	   /* the process exited (or a file failed) mid-way */
	int smaps_err;	   /* -errno of the smaps read (-EACCES: refused), 0 */
	uint64_t rss_kb;   /* VmRSS from status */
	size_t n_mappings; /* rows in pmap.txt */
	size_t n_arena_heaps;
	uint64_t heap_rss_kb, arena_rss_kb;
	char name[64];
};

/* Writes out_dirfd/<pid>/: status, cmdline.txt (redacted), cgroup,
 * smaps_rollup, pmap.txt (pmap -X table), classes.json, arenas.json and
 * snapshot.json (what was written, what failed). Blocks on /proc reads
 * (tens of ms for thousands of mappings). Returns 0 (ret filled; with
 * ret->truncated when the process vanished part way), -ESRCH when it was
 * already gone (nothing written), or -errno on write failures. */
int snapshot_process(const struct host *h, int pid, int out_dirfd,
		     const struct snapshot_opts *o,
		     struct snapshot_result *ret);
