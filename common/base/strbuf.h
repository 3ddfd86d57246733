/* SPDX-License-Identifier: Apache-2.0 */
/* strbuf: a growable byte string with a hard maximum size (curl's dynbuf
 * idea, git's names). buf is never NULL after strbuf_init() and is always
 * NUL-terminated. Appends past max fail with -E2BIG and leave the content
 * as it was, so callers can decide to mark data as truncated. */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#include "base/util.h"

struct strbuf {
	char *buf;
	size_t len;
	size_t alloc; /* 0 while buf points at the shared empty string */
	size_t max;   /* hard cap on len */
};

#define STRBUF_DEFAULT_MAX (64u << 20)

/* The shared empty string an unused strbuf points at (never written). */
extern char strbuf_slopbuf[1];

/* A valid empty strbuf, for declarations: _cleanup_strbuf_ may then run on
 * any path, even one that returns before strbuf_init(). */
#define STRBUF_INIT                                          \
	{                                                    \
		.buf = strbuf_slopbuf, .len = 0, .alloc = 0, \
		.max = STRBUF_DEFAULT_MAX                    \
	}

void strbuf_init(struct strbuf *sb, size_t max);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
/* Shortens sb to its first len bytes (nothing when it is not longer). */
void strbuf_truncate(struct strbuf *sb, size_t len);

/* Returns 0, -ENOMEM, or -E2BIG when the result would exceed max. */
int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_adds(struct strbuf *sb, const char *s);
int strbuf_addch(struct strbuf *sb, char c);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) _printf_(2, 0);
/* Appends s as a JSON string literal, quotes included. */
int strbuf_add_json_str(struct strbuf *sb, const char *s, size_t len);
/* Ensures room for extra bytes without changing len. */
int strbuf_grow(struct strbuf *sb, size_t extra);

/* Hands the heap string to the caller (never NULL; the caller frees it) and
 * re-initialises sb empty. Returns NULL only on allocation failure. */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);

static inline void strbuf_releasep(struct strbuf *sb)
{
	strbuf_release(sb);
}
/* Declare with = STRBUF_INIT. */
#define _cleanup_strbuf_ _cleanup_(strbuf_releasep)
