/* SPDX-License-Identifier: Apache-2.0 */
/* smaps: /proc/<pid>/smaps parsed into a table, rendered like procps
 * `pmap -X`, classified (heap, glibc arena, stacks, files, shmem…) and
 * analysed for glibc arenas (DESIGN.md "glibc arenas from smaps alone").
 *
 * The parser streams: feed it chunks of any size (smaps of 20,000 mappings
 * is ~25 MB; it is never held whole), it keeps one row per mapping. Field
 * names are taken from the first mapping, so kernels that add fields
 * (Pss_Dirty, KSM, ProtectionKey…) are rendered like pmap renders them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

struct json_object;
struct smaps_stage;

#define SMAPS_MAX_FIELDS 48
#define SMAPS_NAME_MAX 4096

struct smaps_mapping {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5]; /* "rw-p" */
	char *name;    /* as the kernel printed it, "" when anonymous; owned */
	uint64_t *v;   /* values in field order (kB, or a count) */
};

/* Fields the analysis uses; SMAPS_F_* index into smaps.idx[]. */
enum smaps_field {
	SMAPS_F_SIZE,
	SMAPS_F_RSS,
	SMAPS_F_PSS,
	SMAPS_F_SHARED_CLEAN,
	SMAPS_F_SHARED_DIRTY,
	SMAPS_F_PRIVATE_CLEAN,
	SMAPS_F_PRIVATE_DIRTY,
	SMAPS_F_ANONYMOUS,
	SMAPS_F_SWAP,
	SMAPS_F_LOCKED,
	SMAPS_F_PSS_ANON,  /* smaps_rollup only */
	SMAPS_F_PSS_FILE,  /* smaps_rollup only */
	SMAPS_F_PSS_SHMEM, /* smaps_rollup only */
	_SMAPS_F_MAX,
};

struct smaps {
	char *fields[SMAPS_MAX_FIELDS]; /* names, in kernel order */
	size_t n_fields;
	int idx[_SMAPS_F_MAX]; /* index into fields[] or -1 */
	struct smaps_mapping *m;
	size_t n, alloc;
	size_t n_seen;	    /* mappings parsed: n, plus those handed on */
	size_t n_malformed; /* lines that were neither header nor field */
	bool truncated;	    /* the read stopped early (process exited…) */
	/* streaming state */
	struct smaps_stage *stage;
	struct strbuf line;
	size_t field_pos; /* expected index of the next field line */
	uint64_t *vals;	  /* one block per mapping, n_fields wide */
	size_t vals_alloc;
	int (*sink)(const struct smaps *s, const struct smaps_mapping *m,
		    void *ud);
	void *sink_ud;
};

void smaps_init(struct smaps *s);
void smaps_release(struct smaps *s);

/* Hands each mapping, once complete, to sink(s, m, ud) instead of keeping
 * it: m (its name and values, n_fields wide, or v NULL when there are no
 * fields) is valid during the call only, and s->fields is complete by the
 * first call. s->m then holds at most the mapping being parsed, s->n_seen
 * counts them all, and smaps_get(), smaps_classify() and smaps_to_json()
 * see none. A sink's negative return stops the parse with that error.
 * Call after smaps_init(); smaps_release() forgets the sink. */
void smaps_set_sink(struct smaps *s,
		    int (*sink)(const struct smaps *s,
				const struct smaps_mapping *m, void *ud),
		    void *ud);

/* Streaming parser: feed any chunks, then smaps_finish(). Returns 0 or
 * -ENOMEM. Malformed lines are counted (n_malformed) and skipped; a line
 * longer than SMAPS_NAME_MAX + 128 bytes is cut. */
int smaps_feed(struct smaps *s, const char *buf, size_t len);
int smaps_finish(struct smaps *s);

/* Pure: parses a whole buffer (smaps or smaps_rollup). Returns 0,
 * -EBADMSG when not a single mapping header was found, -ENOMEM. ret must
 * be initialised; on failure it is released empty. */
int smaps_parse(const char *buf, size_t len, struct smaps *ret);

/* Reads dirfd/path (e.g. a /proc/<pid> fd and "smaps") streaming in 64 KiB
 * chunks. When the process exits during the read (a read error, or smaps
 * empty on a second look after EOF) what was parsed is kept, with
 * ret->truncated set; returns 0 when at least one mapping was read, else
 * -ESRCH (gone, zombie or kernel thread) or -errno. Blocks on reads only. */
int smaps_read_at(int dirfd, const char *path, struct smaps *ret);

/* Value of a well-known field of mapping i, 0 when the kernel has none. */
uint64_t smaps_get(const struct smaps *s, size_t i, enum smaps_field f);

/* Renders the table exactly as procps `pmap -X PID` prints it (header
 * line "PID:   cmdline", all fields but the ones pmap -X hides, totals in
 * KB). Appends to out. Returns 0, -ENOMEM, -E2BIG. */
int smaps_render_pmap(const struct smaps *s, int pid, const char *cmdline,
		      struct strbuf *out);

/* The same table a chunk at a time: flush(out, ud) is called whenever out
 * holds SMAPS_RENDER_CHUNK bytes or more (whole lines) and once at the
 * end; it consumes them (strbuf_reset) or fails with its -errno, which
 * stops the render. A process's 5,000 mappings are ~1 MB of table: pmap
 * streams it instead of holding it. */
#define SMAPS_RENDER_CHUNK (16u << 10)
int smaps_render_pmap_each(const struct smaps *s, int pid, const char *cmdline,
			   struct strbuf *out,
			   int (*flush)(struct strbuf *out, void *ud),
			   void *ud);

/* The pmap -X table kept compact, for a caller that prints it and nothing
 * else: per mapping only what its row prints (numbers as varints, the
 * basename pmap shows rather than the whole name, the shown fields only),
 * the column widths and totals kept as rows are added. An anonymous
 * mapping takes ~35 bytes here against ~300 in a struct smaps; procps
 * reads smaps twice instead, which costs a second walk of the page
 * tables (~14 ms for 5,000 mappings) and can disagree with the first. */
struct smaps_pmap {
	char *fields[SMAPS_MAX_FIELDS]; /* names of the shown columns, owned */
	size_t col[SMAPS_MAX_FIELDS];	/* their index in smaps.fields[] */
	uint64_t total[SMAPS_MAX_FIELDS];
	size_t n_shown;
	size_t w_addr, w_off, w_dev, w_ino; /* widest value, headers aside */
	struct strbuf rows;		    /* packed, one record a row */
	size_t n;
	bool truncated; /* smaps_read_pmap_at(): see smaps_read_at() */
};

void smaps_pmap_init(struct smaps_pmap *t);
void smaps_pmap_release(struct smaps_pmap *t);

/* Appends mapping m of s (its values n_fields wide, or v NULL) as a row.
 * The first row takes the columns from s->fields: every row of one table
 * comes from one struct smaps. Returns 0, -ENOMEM or -E2BIG (more than
 * STRBUF_DEFAULT_MAX of rows). */
int smaps_pmap_add(struct smaps_pmap *t, const struct smaps *s,
		   const struct smaps_mapping *m);

/* smaps_read_at() with every mapping going to ret as a row and none kept
 * (smaps_set_sink()): the same opens, reads and answers, truncated in
 * ret->truncated. ret must be initialised; on failure it is released
 * empty. Blocks on reads only. */
int smaps_read_pmap_at(int dirfd, const char *path, struct smaps_pmap *ret);

/* Renders t exactly as smaps_render_pmap_each() renders the struct smaps
 * its rows came from (that function is this one on a table made of s),
 * with the same flush contract. */
int smaps_pmap_render_each(const struct smaps_pmap *t, int pid,
			   const char *cmdline, struct strbuf *out,
			   int (*flush)(struct strbuf *out, void *ud),
			   void *ud);

/* Classes of mappings (issue 3). */
enum smaps_class {
	SMAPS_C_HEAP,	      /* [heap]: glibc's main arena */
	SMAPS_C_ARENA,	      /* non-main glibc arena heap (+ its ---p rest) */
	SMAPS_C_ANON,	      /* other anonymous memory */
	SMAPS_C_THREAD_STACK, /* anon rw-p right above a ---p guard */
	SMAPS_C_STACK,	      /* [stack] */
	SMAPS_C_FILE_CODE,    /* file-backed, executable */
	SMAPS_C_FILE_DATA,    /* file-backed, not executable */
	SMAPS_C_SHMEM,	      /* shared anon, memfd, /dev/shm, SysV */
	SMAPS_C_KERNEL,	      /* [vdso], [vvar], [vsyscall] … */
	_SMAPS_C_MAX,
};

const char *smaps_class_name(enum smaps_class c);

struct smaps_class_sum {
	uint64_t count, size_kb, rss_kb, swap_kb;
};

struct smaps_arena_heap {
	uint64_t start, reserved_kb, size_kb, rss_kb, swap_kb;
};

struct smaps_summary {
	struct smaps_class_sum cls[_SMAPS_C_MAX];
	uint64_t total_size_kb, total_rss_kb, total_pss_kb, total_swap_kb;
	/* arenas */
	uint64_t heap_size_kb, heap_rss_kb; /* [heap] */
	size_t n_arena_heaps;		    /* 64 MiB units reserved */
	uint64_t arena_reserved_kb, arena_size_kb, arena_rss_kb, arena_swap_kb;
	struct smaps_arena_heap *heaps; /* one per arena mapping run, owned */
	size_t n_heaps;
	enum smaps_class *class_of; /* per mapping, owned */
};

/* Classifies every mapping and sums per class; finds glibc arena heaps.
 * Linear in the number of mappings. Returns 0 or -ENOMEM. */
int smaps_classify(const struct smaps *s, struct smaps_summary *ret);
void smaps_summary_release(struct smaps_summary *sum);

/* JSON views (new references, NULL on allocation failure). */
struct json_object *smaps_summary_classes_json(const struct smaps_summary *s);
struct json_object *smaps_summary_arenas_json(const struct smaps_summary *s);
/* The table as JSON: {"pid", "fields":[…], "mappings":[{…}], "totals"}. */
struct json_object *smaps_to_json(const struct smaps *s, int pid);
