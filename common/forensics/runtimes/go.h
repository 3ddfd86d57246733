/* SPDX-License-Identifier: Apache-2.0 */
/* Go (runtimes/go.c): the pure parsers the runtime's hooks use, exported
 * for the unit tests and fuzz targets.
 *
 * - detection: the ELF section .go.buildinfo of the executable, whose
 *   first bytes are the magic "\xff Go buildinf:" (Go 1.13+), read with
 *   bounded preads (the section headers, the section name table, 64 bytes
 *   of the section), never the process's name;
 * - GOMEMLIMIT and GOGC, the only keys read from /proc/<pid>/environ (the
 *   rest of the environment is neither kept nor written);
 * - the Go heap's RSS from smaps: the anonymous mappings in the arena
 *   range the runtime's hints start at on 64-bit Linux, 0xc000000000 up
 *   to 0x10000000000 (docs/diagnosis.md, "Go"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct smaps;

#define GO_BUILDINFO_MAGIC "\xff Go buildinf:"
#define GO_ARENA_LO 0xc000000000ull
#define GO_ARENA_HI 0x10000000000ull

/* Reads len bytes at off into buf: the bytes read, or -errno. */
typedef ssize_t (*go_pread_fn)(void *ctx, void *buf, size_t len, uint64_t off);

struct go_buildinfo {
	char version[32]; /* "go1.19.8", "" when the binary does not say */
};

/* Whether the ELF file read through rd (of size bytes) is a Go binary:
 * 0 with ret filled, -ENOENT when it has no .go.buildinfo (or not its
 * magic), -ENOEXEC when it is not a 64-bit little-endian ELF, -EBADMSG
 * when its headers point outside the file or beyond the caps. */
int go_buildinfo_read(go_pread_fn rd, void *ctx, uint64_t size,
		      struct go_buildinfo *ret);
/* The same over a file in memory. */
int go_buildinfo_mem(const void *buf, size_t len, struct go_buildinfo *ret);

/* GOMEMLIMIT's value: bytes with an optional suffix B, KiB, MiB, GiB or
 * TiB (as the Go runtime reads it); "off" gives UINT64_MAX. 0 or
 * -EINVAL. */
int go_parse_memlimit(const char *s, uint64_t *ret);

struct go_env {
	bool memlimit_set;   /* GOMEMLIMIT present */
	bool memlimit_valid; /* and read */
	uint64_t memlimit;   /* bytes; UINT64_MAX for "off" */
	bool gogc_set;
	int gogc; /* percent; -1 for "off"; 100 when unset */
};

/* GOMEMLIMIT and GOGC from an environment block (NUL-separated
 * KEY=value, as /proc/<pid>/environ), the first of each counting as in
 * the Go runtime's gogetenv. Nothing else is kept. Returns 0. */
int go_env_parse(const char *buf, size_t len, struct go_env *ret);

/* The Go heap's RSS (bytes) in s: the anonymous mappings inside
 * [GO_ARENA_LO, GO_ARENA_HI); *ret_rss the RSS of every mapping,
 * *ret_n how many heap mappings were counted. A mapping overlapping one
 * before it (smaps read while the mappings changed) is not counted
 * again. */
void go_heap_rss(const struct smaps *s, uint64_t *ret_heap, uint64_t *ret_rss,
		 size_t *ret_n);

/* The facts of one Go process in a bundle (processes/<pid>/go/facts.json)
 * and what the timeline says of its RSS. */
struct go_proc {
	int pid;
	char version[32];
	struct go_env env;
	uint64_t heap_rss, rss; /* bytes, at the snapshot */
	double age_s;		/* its age before the kill, < 0 unknown */
};

#define GO_MAX_PROCS 8

struct go_facts {
	struct go_proc p[GO_MAX_PROCS];
	size_t n;
};

/* GOMEMLIMIT that fits: 90 % of the limit minus the non-heap RSS
 * measured, in MiB steps (at least 16 MiB). */
uint64_t go_fitting_memlimit(uint64_t limit, uint64_t nonheap);
