/* SPDX-License-Identifier: Apache-2.0 */
/* A runtime: what oomlens knows of one kind of program (the JVM, glibc's
 * malloc, Go, ...) from first sight to the report, as one table entry in
 * the way curl registers its protocol handlers. Each runtime is one file
 * in this folder, runtimes/<name>.c, defining one `const struct
 * diag_runtime`, and one row of the table in runtimes/registry.c. Every
 * hook may be NULL; the callers loop over the table in its order, which
 * is the order of each process's ledger rows (docs/diagnosis.md, "Adding
 * a runtime").
 *
 * Two halves: the sidecar's, on the live process (detect, first sight,
 * snapshot), and the diagnosis', on a bundle (load, ledger, verdicts,
 * report: its mappings' names and its own tables). The diagnosis' hooks are
 * pure but for load; each runtime's own facts live in its data pointer
 * (diag_input.rt_data[its row]), allocated by load and freed by release. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jget.h"
#include "base/strbuf.h"
#include "forensics/diagnosis.h"

struct bundle;
struct diag_ledger; /* forensics/diagnosis_frame.h */
struct host;

/* What the hooks of one look at a process share, read once by the first
 * hook that needs it (runtimes/rtio.h): its maps. Initialise with
 * RT_SIGHT_CACHE_INIT, release with rt_sight_cache_release(). */
struct rt_sight_cache {
	struct strbuf maps;
	int maps_err; /* the read's answer, once read */
	bool maps_read;
};

#define RT_SIGHT_CACHE_INIT         \
	{                           \
		.maps = STRBUF_INIT \
	}

static inline void rt_sight_cache_release(struct rt_sight_cache *c)
{
	strbuf_release(&c->maps);
	c->maps_read = false;
}

/* What the sidecar hands a runtime about a live process. */
struct rt_sight {
	const struct host *h;
	int pid;
	int proc_fd;		      /* /proc/<pid>, opened by the caller */
	uint64_t limit;		      /* the container's limit, 0 unknown */
	struct rt_sight_cache *cache; /* the caller's; NULL: none */
	/* first_sight's answer for the timeline: an event, "" for none */
	char event_kind[48];
	char event_text[400];
};

/* A row of the report's largest mappings that a runtime may name. */
struct rt_mapping {
	int pid;
	uint64_t addr; /* its start */
	char *name;    /* "" when no one named it yet */
	size_t name_size;
};

/* A table of one process that a runtime adds to the report (a JVM's
 * class histogram): report.html draws it as a card, `show` as aligned
 * lines. Cells are plain text, cut to RT_CELL - 1 bytes; the report
 * escapes them. */
#define RT_TABLE_COLS 5
#define RT_TABLE_ROWS 24
#define RT_CELL 200

struct rt_table {
	char title[160];
	char note[400]; /* a line under the title, "" for none */
	size_t n_cols;
	char head[RT_TABLE_COLS][24];
	bool numeric[RT_TABLE_COLS]; /* right-aligned */
	size_t n_rows;
	char cell[RT_TABLE_ROWS][RT_TABLE_COLS][RT_CELL];
};

struct diag_runtime {
	/* its name, and its folder under processes/<pid>/ in a bundle */
	const char *name;

	/* ---- the sidecar, on the live process ---- */
	/* 1 when pid runs this runtime, 0 when not, -errno: from what the
	 * process is (its exe, its mappings), never from its name alone */
	int (*detect)(const struct rt_sight *s);
	/* the facts at first sight that say whether it can outgrow the
	 * container: an event for the timeline in s; 0 or -errno */
	int (*first_sight)(struct rt_sight *s);
	/* what a snapshot takes of it, under pid_dirfd (the snapshot's
	 * processes/<pid>/); 0 or -errno */
	int (*snapshot)(const struct rt_sight *s, int pid_dirfd);

	/* ---- the diagnosis, from a bundle ---- */
	/* one process of the snapshot, dir its "processes/<pid>" */
	void (*load_proc)(const struct bundle *b, const char *dir,
			  struct diag_proc *p, struct diag_input *in);
	/* after the processes and the timeline: the runtime's own facts
	 * into *data (kill_ms: the kill, wall-clock ms, never 0 when the
	 * timeline has samples) */
	void (*load)(const struct bundle *b, uint64_t kill_ms,
		     struct diag_input *in, void **data);
	void (*release)(void *data);
	/* the ledger rows of one process, taken from the anonymous memory
	 * left */
	void (*ledger)(struct diag_ledger *l, const struct diag_input *in,
		       const void *data, const struct diag_proc *p);
	/* its verdicts, after the ledger */
	void (*verdicts)(const struct diag_input *in, const void *data,
			 struct diagnosis *d);
	/* whether its facts explain a steady growth of usage (the runtime's
	 * heap grew): the timeline's native-growth verdict is then not
	 * made */
	bool (*explains_growth)(const struct diag_input *in, const void *data,
				uint64_t usage);

	/* ---- report.html ---- */
	/* names the rows of the largest mappings that are its own */
	void (*label_mappings)(const struct bundle *b, const char *dir, int pid,
			       struct rt_mapping *rows, size_t n,
			       struct jget_notes *notes);
	/* its table of one process (dir: "processes/<pid>"; kill_ms: the
	 * manifest's, 0 unknown) into *ret (zeroed by the caller): 1 when
	 * it filled one, 0 when it has none */
	int (*report_table)(const struct bundle *b, const char *dir, int pid,
			    uint64_t kill_ms, struct rt_table *ret,
			    struct jget_notes *notes);
};
