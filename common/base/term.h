/* SPDX-License-Identifier: Apache-2.0 */
/* One sanitiser for text bound for a terminal: every string that came from
 * a process (comm, cmdline), a file name or a JVM goes through it before it
 * is printed, so an escape sequence planted there (an OSC title, a cursor
 * move, a C1 CSI) is shown, never obeyed. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

enum {
	TERM_KEEP_NL = 1 << 0,	/* '\n' passes */
	TERM_KEEP_TAB = 1 << 1, /* '\t' passes */
	/* Each refused byte becomes '?' (keeps columns and JSON valid, as
	 * procps pmap does) instead of "\xHH". */
	TERM_QUESTION = 1 << 2,
	/* Our own colours pass: ESC '[' params 'm' with params among 0, 1,
	 * 22, 31, 39 only (no conceal, no black on black). */
	TERM_KEEP_SGR = 1 << 3,
};

/* Appends s[0..n) to out with C0 controls (but those flags keep), DEL, C1
 * controls (U+0080..U+009F) and bytes that are not valid UTF-8 replaced
 * ("\x1b" or '?'); valid UTF-8 text passes unchanged. Pure. Returns 0 or
 * -E2BIG / -ENOMEM from out (what fitted is kept). */
int term_sanitize(const char *s, size_t n, unsigned flags, struct strbuf *out);

/* The length (1..4) of the valid UTF-8 sequence at s[0..n), its code
 * point in *ret; 0 when invalid, overlong, a surrogate, beyond U+10FFFF,
 * or cut short. Pure. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret);
