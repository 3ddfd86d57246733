/* SPDX-License-Identifier: Apache-2.0 */
/* CPython: is a process a CPython interpreter, which allocator serves its
 * objects, how its RSS splits between pymalloc's arenas, the glibc heap
 * and large mmap'd buffers, and what to say when it outgrew its
 * container. The parsers below are pure; python.c's table entry,
 * rt_python, reads /proc/PID/{exe,maps,smaps,cmdline,limits} and
 * PYTHONMALLOC, PYTHONTRACEMALLOC alone of its environ in the sidecar,
 * writes processes/<pid>/python/facts.json, and makes the "python heap"
 * and "python buffers" ledger rows and the python-heap verdict from it
 * (docs/diagnosis.md, "Python").
 *
 * pymalloc serves objects of up to 512 bytes from arenas it mmaps itself:
 * 1 MiB each from 3.10 (with its radix tree, 64-bit), 256 KiB before.
 * Larger objects go to glibc's malloc: its heap ([heap], arenas) under
 * the mmap threshold (128 KiB by default, dynamic up to 32 MiB), their
 * own mappings above it. Adjacent anonymous mappings merge in the
 * kernel into one of a size that is no multiple of an arena: given the
 * process's memory to read (struct python_peek), python_classify splits
 * such a mapping at glibc's headers of its mmap'd chunks; without, by
 * size alone, an arena run next to a buffer is counted as a buffer. The
 * split is an estimate either way and says so. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forensics/runtimes/rtproc.h"

struct smaps;

/* Defined by every CPython 3.7+ interpreter binary and libpython. */
#define PYTHON_SYMBOL "_PyRuntime"

enum python_how {
	PYTHON_NOT = 0,
	PYTHON_BY_LIBPYTHON, /* libpython3.X.so is mapped */
	PYTHON_BY_SYMBOL,    /* the exe defines PYTHON_SYMBOL */
};

struct python_detect {
	enum python_how how;
	int minor; /* 3.<minor> from libpython's or the exe's name, -1 */
};

/* Whether the process runs CPython 3: libpython3.X mapped (maps or smaps
 * text), or the exe defining PYTHON_SYMBOL (has_symbol may be NULL). exe
 * (the link /proc/PID/exe, may be NULL) gives the version when the name
 * says it ("python3.11"). Returns 1, 0, -EBADMSG (no mapping), -ENOMEM. */
int python_detect(const char *exe, const char *maps, size_t maps_len,
		  rtproc_has_symbol_fn has_symbol, const void *ctx,
		  struct python_detect *ret);

/* The 3.<minor> of a name "python3.11", "libpython3.9.so.1.0", or -1. */
int python_minor_from_name(const char *name);

struct python_facts {
	char pymalloc_env[24]; /* PYTHONMALLOC's value ("" unset; cut, and
				  anything but [a-z_] as '?') */
	bool pymalloc;	       /* objects <= 512 bytes come from arenas */
	unsigned tracemalloc;  /* frames traced (PYTHONTRACEMALLOC or
				  -X tracemalloc[=N]), 0 off */
};

/* From cmdline (NUL-separated; the interpreter's own options before the
 * script, -c or -m) and PYTHONMALLOC and PYTHONTRACEMALLOC, the only keys
 * read from env (an environ buffer, may be NULL). Returns 0. */
int python_parse_facts(const char *cmdline, size_t cmdline_len, const char *env,
		       size_t env_len, struct python_facts *ret);

/* kB, as smaps counts. */
struct python_rss {
	uint64_t pymalloc_kb;	/* anonymous runs of whole arenas */
	uint64_t arenas;	/* how many arenas those runs hold */
	uint64_t glibc_heap_kb; /* [heap] and glibc's other arenas */
	uint64_t mmap_kb;	/* other anonymous mappings >= 128 KiB */
	uint64_t other_kb;	/* smaller anonymous memory, stacks */
	uint64_t file_kb;	/* files' code and data, shmem */
	uint64_t total_kb;
	unsigned split; /* mappings split at glibc's chunk headers */
	bool peeked;	/* the process's memory was read (python_peek) */
	/* the mappings with the most RSS of each kind */
	struct rtproc_ranges arena_runs, buffers;
};

/* Reads n bytes of the process's memory at addr into buf: 0, or a
 * negative errno (then the size rule decides). */
struct python_peek {
	int (*fn)(void *ctx, uint64_t addr, void *buf, size_t n);
	void *ctx;
};

/* Reads of python_peek a classification makes at most: a header each
 * arena or chunk of a mapping to split; past that, sizes decide. */
#define PYTHON_PEEK_MAX 16384

/* Splits smaps (parsed) of a CPython 3.<minor> process (-1: unknown, then
 * 256 KiB arenas) whose objects come from pymalloc or not (facts may be
 * NULL: pymalloc). peek (may be NULL) reads the process's memory: an
 * anonymous writable mapping of at least an arena that is not whole
 * arenas is walked from its start, a glibc mmap'd chunk's header (prev
 * size 0, IS_MMAPPED alone of the flags, a page-multiple size that fits)
 * making that many bytes a buffer, anything else an arena while one
 * fits; its RSS is split in proportion, its range kept with the larger
 * part. Returns 0, -ENOMEM. */
int python_classify(const struct smaps *s, int minor,
		    const struct python_facts *facts,
		    const struct python_peek *peek, struct python_rss *ret);

struct python_figures {
	uint64_t limit; /* the container's, bytes; 0 unknown */
	uint64_t usage; /* the container's usage at the kill; 0 unknown */
	const struct python_rss *rss;
	const struct python_facts *facts; /* may be NULL */
};

/* The python-heap verdict: the interpreter's heap (arenas, glibc heap,
 * buffers) is at least half of the usage (of the RSS when the usage is
 * unknown). Confidence 70, 60 when the split is mostly mmap'd buffers
 * (their owner is not known). Remedies: tracemalloc, memray; when the
 * glibc heap is the larger part of that heap, glibc's advice
 * (MALLOC_ARENA_MAX, malloc_trim). Returns true and fills ret when it
 * holds. */
bool python_verdict(const struct python_figures *fig,
		    struct rtproc_verdict *ret);

/* The facts of one CPython process in a bundle
 * (processes/<pid>/python/facts.json). */
struct python_proc {
	int pid;
	int minor; /* 3.<minor>, -1 unknown */
	struct python_facts facts;
	uint64_t pymalloc_rss, arenas, glibc_heap_rss, mmap_rss,
		rss;	       /* bytes */
	bool split_by_headers; /* "split": "headers" (python_peek read) */
	double age_s;	       /* the snapshot's age at the kill, < 0 unknown */
};

#define PYTHON_MAX_PROCS 8

struct python_procs {
	struct python_proc p[PYTHON_MAX_PROCS];
	size_t n;
};
