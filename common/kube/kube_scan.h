/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the strict JSON scanner's pieces (RFC 8259, json-c's depth limit)
 * shared by kube_project.c (text to a json-c tree of what a reader keeps)
 * and kube_pod_scan.c (a pod's text to a struct kube_pod). The few called
 * for every token are inlined. Not installed. */
#pragma once

#include <errno.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kube/kube.h"

/* json-c's default depth: every value, scalars too, at most 32 levels
 * deep (the top one is level 1), so a container at level 32 is empty */
#define MAX_DEPTH 32
/* longer numbers are left to json-c (a refusal) */
#define MAX_NUMBER 64

/* the scanner's few functions called for every token: inlined */
#define _hot_ inline __attribute__((always_inline))

static inline bool is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static _hot_ const char *skip_ws(const char *p, const char *end)
{
	/* most tokens have no blank before them */
	while (p < end && (unsigned char)*p <= ' ' && is_ws(*p))
		p++;
	return p;
}

#ifndef __SSE2__
/* The bytes of v that are '"', '\\' or below 0x20 (their top bits; above
 * the first, some may be wrong). */
static _hot_ uint64_t word_special(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7;
	uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');

	return (((q - ones) & ~q) | ((b - ones) & ~b) |
		((v - ones * 0x20) & ~v)) &
	       high;
}
#endif

/* p in a string: the first '"', '\\' or control byte at p or after, or
 * end. Most of an event's bytes are in strings: 16 at a time with SSE2
 * (x86-64), else 8 with SWAR; the last few one by one. */
static _hot_ const char *find_special(const char *p, const char *end,
				      bool *ret_quote)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1f);

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i q = _mm_cmpeq_epi8(v, quote);
		/* v <= 0x1f unsigned: max(v, 0x1f) == 0x1f */
		__m128i m =
			_mm_or_si128(_mm_or_si128(q, _mm_cmpeq_epi8(v, bs)),
				     _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
		unsigned bits = (unsigned)_mm_movemask_epi8(m), i;

		if (bits) {
			/* which byte it is from the masks, not a load */
			i = (unsigned)__builtin_ctz(bits);
			*ret_quote = (unsigned)_mm_movemask_epi8(q) >> i & 1;
			return p + i;
		}
		p += 16;
	}
#else
	while (end - p >= 8) {
		uint64_t v, m;

		memcpy(&v, p, 8);
		m = word_special(v);
		if (m) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			p += __builtin_ctzll(m) / 8;
			*ret_quote = *p == '"';
			return p;
#else
			break;
#endif
		}
		p += 8;
	}
#endif
	while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
		p++;
	*ret_quote = p < end && *p == '"';
	return p;
}

static inline bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

/* After the backslash at p: the end of the escape, or NULL. A \u of a
 * surrogate is left to json-c, which replaces the unpaired ones. */
static inline const char *skip_escape(const char *p, const char *end)
{
	if (++p >= end)
		return NULL;
	switch (*p) {
	case '"':
	case '\\':
	case '/':
	case 'b':
	case 'f':
	case 'n':
	case 'r':
	case 't':
		return p + 1;
	}
	if (*p != 'u' || end - p < 5)
		return NULL;
	for (int i = 1; i <= 4; i++)
		if (!is_hex(p[i]))
			return NULL;
	if ((p[1] == 'd' || p[1] == 'D') && strchr("89abcdefABCDEF", p[2]))
		return NULL;
	return p + 5;
}

/* p just after an opening quote: the end of the string, or NULL (no
 * closing quote, a raw control byte, a bad escape). *ret_esc says whether
 * it held an escape. Bytes from 0x80 pass unchecked, as json-c takes
 * them. */
static _hot_ const char *skip_string(const char *p, const char *end,
				     bool *ret_esc)
{
	bool esc = false, quote;

	for (;;) {
		p = find_special(p, end, &quote);
		if (quote)
			break;
		if (p >= end || (unsigned char)*p < 0x20)
			return NULL;
		p = skip_escape(p, end);
		if (!p)
			return NULL;
		esc = true;
	}
	if (ret_esc)
		*ret_esc = esc;
	return p + 1;
}

static inline const char *skip_digits(const char *p, const char *end)
{
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static inline const char *skip_number(const char *p, const char *end)
{
	const char *s = p, *d;

	if (p < end && *p == '-')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return NULL;
	p = *p == '0' ? p + 1 : skip_digits(p, end);
	if (p < end && *p == '.') {
		d = ++p;
		p = skip_digits(p, end);
		if (p == d)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		if (++p < end && (*p == '+' || *p == '-'))
			p++;
		d = p;
		p = skip_digits(p, end);
		if (p == d)
			return NULL;
	}
	return p - s > MAX_NUMBER ? NULL : p;
}

/* The number [p, e) that skip_number() passed: 0 and *ret when it is an
 * integer of up to 18 digits (json-c's int64 of it, never saturated),
 * -EDOM for a fraction or an exponent (json-c's double), -ERANGE for a
 * longer integer. */
static inline int scan_integer(const char *p, const char *e, int64_t *ret)
{
	const char *d = p + (*p == '-');
	int64_t v = 0;

	for (const char *q = d; q < e; q++)
		if (*q < '0' || *q > '9')
			return -EDOM;
	if (e - d > 18)
		return -ERANGE;
	for (; d < e; d++)
		v = v * 10 + (*d - '0');
	*ret = *p == '-' ? -v : v;
	return 0;
}

static _hot_ const char *skip_literal(const char *p, const char *end,
				      const char *lit, size_t n)
{
	return (size_t)(end - p) >= n && !memcmp(p, lit, n) ? p + n : NULL;
}

static inline const char *skip_scalar(const char *p, const char *end)
{
	switch (*p) {
	case '"':
		return skip_string(p + 1, end, NULL);
	case 't':
		return skip_literal(p, end, "true", 4);
	case 'f':
		return skip_literal(p, end, "false", 5);
	case 'n':
		return skip_literal(p, end, "null", 4);
	default:
		return skip_number(p, end);
	}
}

/* What a scan carries: the text's end, json-c's tokener for the numbers
 * the scanner leaves to it, a buffer for an unescaped string or key. */
struct kube_scan {
	const char *end;
	struct json_tokener *tok;
	struct strbuf text;
};

/* p at a value (blanks before it allowed) inside depth open containers:
 * the end of the value, or NULL when it is not strict JSON or nests
 * deeper than json-c allows. */
const char *kube_scan_skip_value(const char *p, const char *end,
				 unsigned depth);

/* The string between p and e (its quotes excluded), escapes checked by
 * skip_string(), decoded into s->text as json-c decodes it. 0, -ENOMEM. */
int kube_scan_unescape(struct kube_scan *s, const char *p, const char *e);

/* The value at *pp, inside depth containers, built whole as json-c's
 * tokener builds it; *ret NULL for null. 0 and *pp past it, -EBADMSG
 * (not plain JSON to the scanner), -ENOMEM. */
int kube_scan_whole(struct kube_scan *s, const char **pp, unsigned depth,
		    struct json_object **ret);

/* *pp at the '{' or '[' of a container inside depth others: 1 and *pp
 * past close when it is empty, 0 and *pp at its first item, -EBADMSG when
 * it lies, or its items would lie, deeper than json-c goes. */
static inline int kube_scan_open(const struct kube_scan *s, const char **pp,
				 unsigned depth, char close)
{
	const char *p = skip_ws(*pp + 1, s->end);

	if (depth + 1 > MAX_DEPTH)
		return -EBADMSG;
	if (p < s->end && *p == close) {
		*pp = p + 1;
		return 1;
	}
	if (depth + 1 >= MAX_DEPTH)
		return -EBADMSG;
	*pp = p;
	return 0;
}

/* *pp after an item: 0 and *pp at the next one past the ',', 1 and *pp
 * past close, or -EBADMSG. */
static inline int kube_scan_next(const struct kube_scan *s, const char **pp,
				 char close)
{
	const char *p = skip_ws(*pp, s->end);

	if (p >= s->end || (*p != ',' && *p != close))
		return -EBADMSG;
	*pp = *p == close ? p + 1 : skip_ws(p + 1, s->end);
	return *p == close;
}

/* The event type named by the n bytes at s. 0, or -EINVAL (unknown). */
int kube_event_type_parse(const char *s, size_t n, enum kube_event_type *ret);

/* kube_proto.c's decoder of watch lines, which kube_pod_scan.c reads
 * straight into pods with the same tokener */
struct kube_event_decoder {
	struct json_tokener *tok; /* json-c's default depth */
	struct kube_keep top[3];  /* type, object as keep says, end */
};
