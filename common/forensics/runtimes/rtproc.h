/* SPDX-License-Identifier: Apache-2.0 */
/* rtproc: the few readings of a process's own words that every runtime's
 * parser needs (node.c, python.c, dotnet.c): one key of its environment,
 * its arguments one by one, the basename of its executable, a mapped
 * library by name, a knob's value as a size, the host's memory and a
 * resource limit, the largest mappings of a heap. Pure: buffers in, no
 * I/O, no allocation; nothing here keeps or copies the environment. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct smaps;

/* Whether the executable exports the dynamic symbol name (defined, not
 * merely needed): the caller reads the ELF (/proc/PID/exe), the parsers
 * only ask. NULL where no ELF was read: detection then rests on the
 * mappings alone. */
typedef bool (*rtproc_has_symbol_fn)(const void *ctx, const char *name);

/* The value of key in an environ buffer (NAME=value entries, each ended
 * by a NUL but perhaps the last; the first entry of that name counts, as
 * getenv's). *ret_val points into buf, *ret_len its length (no NUL at its
 * end when it is the buffer's last byte). Returns 0, -ENOENT (absent or
 * not a valid key). */
int rtproc_environ_get(const char *buf, size_t len, const char *key,
		       const char **ret_val, size_t *ret_len);

/* The next argument of a NUL-separated cmdline: *pos is the offset to
 * start at (0 first), advanced past it. Returns false at the end. *ret
 * points into buf, *ret_len its length. */
bool rtproc_arg_next(const char *buf, size_t len, size_t *pos, const char **ret,
		     size_t *ret_len);

/* Whether the n bytes of s equal the string t. */
bool rtproc_eq(const char *s, size_t n, const char *t);

/* The last component of a path ("/usr/bin/node" → "node"), with a
 * " (deleted)" suffix the kernel adds to a replaced exe not removed:
 * copies at most size - 1 bytes into ret. */
void rtproc_basename(const char *path, char *ret, size_t size);

/* The first mapping whose file's basename is prefix followed by nothing
 * but versions and ".so" ("libnode.so" matches libnode.so.108,
 * "libpython3." libpython3.11.so.1.0; " (deleted)" is ignored), -1 when
 * none. */
long rtproc_maps_find_lib(const struct smaps *s, const char *prefix);

/* Classifies s (smaps_classify) and calls fn for every mapping with its
 * class and RSS (kB), in order. Returns 0, -ENOMEM. */
typedef void (*rtproc_mapping_fn)(const struct smaps *s, size_t i, int cls,
				  uint64_t rss_kb, void *ctx);
int rtproc_classify_each(const struct smaps *s, rtproc_mapping_fn fn,
			 void *ctx);

/* Whether a smaps class (enum smaps_class) is files' memory: code, data,
 * shared memory. */
bool rtproc_is_file_class(int cls);

/* Whether mapping i is anonymous private memory (no file, no inode; a
 * "[anon:...]" name counts). */
bool rtproc_is_anon(const struct smaps *s, size_t i);

/* The n bytes of s as an unsigned number in base (10 or 16; base 16 takes
 * an optional 0x prefix, as the .NET runtime reads its knobs). Returns 0,
 * -EINVAL, -ERANGE. */
int rtproc_parse_u64(const char *s, size_t n, int base, uint64_t *ret);

/* Mappings of a runtime's heap that report.html names (runtimes' report
 * rows): the RTPROC_MAX_RANGES with the most RSS, in no order. */
#define RTPROC_MAX_RANGES 16

struct rtproc_range {
	uint64_t start, end; /* [start, end) */
	uint64_t rss_kb;
};

struct rtproc_ranges {
	struct rtproc_range r[RTPROC_MAX_RANGES];
	size_t n;
};

/* Keeps [start, end) when it is among the RTPROC_MAX_RANGES largest by
 * RSS seen so far (the smallest kept makes room). */
void rtproc_ranges_add(struct rtproc_ranges *r, uint64_t start, uint64_t end,
		       uint64_t rss_kb);

/* MemTotal of a /proc/meminfo text, in bytes. Returns 0, -ENOENT (no
 * such line), -EBADMSG (not a number of kB). */
int rtproc_parse_meminfo(const char *buf, size_t len, uint64_t *ret);

/* The soft limit of the resource named name ("Max address space") in a
 * /proc/PID/limits text (the name at a line's start, padded with two
 * blanks or more): its value, UINT64_MAX for "unlimited". Returns 0,
 * -ENOENT (no such line), -EBADMSG (neither a number nor unlimited). */
int rtproc_parse_limit(const char *buf, size_t len, const char *name,
		       uint64_t *ret);

/* A runtime's verdict as its parser words it (node.h, python.h,
 * dotnet.h): the kind's name, how sure, the figure behind it, the
 * summary line, evidence lines and remedies in the runtime's own terms.
 * Lines are cut at RTPROC_LINE - 1 bytes; lines past the arrays are
 * dropped. */
#define RTPROC_MAX_LINES 6
#define RTPROC_LINE 256

struct rtproc_verdict {
	const char *kind; /* "node-heap", "python-heap", "dotnet-heap" */
	int confidence;	  /* 0-100 */
	uint64_t bytes;	  /* the runtime heap's RSS */
	char summary[320];
	char evidence[RTPROC_MAX_LINES][RTPROC_LINE];
	size_t n_evidence;
	char remedies[RTPROC_MAX_LINES][RTPROC_LINE];
	size_t n_remedies;
};

/* Appends one printf-formatted line to v's evidence or remedies. */
void rtproc_evidence(struct rtproc_verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rtproc_remedy(struct rtproc_verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Bytes as MiB, for the lines above. */
static inline double rtproc_mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}
