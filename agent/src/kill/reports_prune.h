/* SPDX-License-Identifier: Apache-2.0 */
/* Which of the node's report files to delete so that STATE/reports/ stays
 * within its limits (--reports-keep, --reports-max-bytes). Pure: a list of
 * files in, a decision out; the directory is read and the files deleted by
 * kill/reports.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One file of reports/ as the caller found it. */
struct reports_file {
	const char *name;
	int64_t mtime_ns;
	uint64_t bytes;
	bool in_use; /* the publish queue still needs it: never deleted */
};

struct reports_limits {
	unsigned keep;	    /* kills kept at most */
	uint64_t max_bytes; /* their files' bytes at most */
};

/* What a round decided: kills (all of a kill's files together) removed
 * because there were more than keep, or more bytes than max_bytes;
 * kills past a limit that were kept because they are in use. */
struct reports_pruned {
	unsigned by_count, by_bytes, spared;
	uint64_t bytes; /* freed */
};

/* The kill a file belongs to: the length of name before ".tar.gz",
 * ".html" or ".node-oom.txt", 0 for any other file (a temporary
 * ".<name>.tmp.*" of an atomic write, something not ours: never counted,
 * never deleted). */
size_t reports_kill_id_len(const char *name);

/* Groups files by kill (reports_kill_id_len), a kill's age being the
 * newest mtime of its files, and marks ret_delete[i] for every file of the
 * oldest kills (mtime, then name) until at most lim->keep kills and
 * lim->max_bytes bytes remain; a kill with a file in use is skipped, never
 * deleted. Being exactly at a limit is within it. ret_delete (n entries)
 * and *ret are written on success only. Returns 0 or -ENOMEM. */
int reports_prune_plan(const struct reports_file *files, size_t n,
		       const struct reports_limits *lim, bool *ret_delete,
		       struct reports_pruned *ret);
