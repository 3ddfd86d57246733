/* SPDX-License-Identifier: Apache-2.0 */
#include "base/term.h"
#include "base/util.h"

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret)
{
	size_t len;
	uint32_t cp;

	if (!n)
		return 0;
	if (s[0] < 0x80) {
		*ret = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	*ret = cp;
	return len;
}

/* Length of an allowed SGR sequence at s ("\033[1m", "\033[0;31m"), else
 * 0. */
static size_t sgr_len(const char *s, size_t n)
{
	size_t i = 2;

	if (n < 3 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < n && i < 16 && s[i] != 'm') {
		size_t j = i;
		uint32_t v = 0;

		while (j < n && s[j] >= '0' && s[j] <= '9' && j - i < 3)
			v = v * 10 + (uint32_t)(s[j++] - '0');
		if (j == i ||
		    (v != 0 && v != 1 && v != 22 && v != 31 && v != 39))
			return 0;
		i = j;
		if (i < n && s[i] == ';')
			i++;
		else
			break;
	}
	return i < n && s[i] == 'm' ? i + 1 : 0;
}

static int refuse(struct strbuf *out, unsigned char c, unsigned flags)
{
	if (flags & TERM_QUESTION)
		return strbuf_addch(out, '?');
	return strbuf_addf(out, "\\x%02x", c);
}

/* Bytes from u that pass as they are: printable ASCII, and the newlines
 * and tabs flags keep. */
static size_t plain_run(const unsigned char *u, size_t n, unsigned flags)
{
	size_t i = 0;

	while (i < n && ((u[i] >= 0x20 && u[i] < 0x7f) ||
			 (u[i] == '\n' && (flags & TERM_KEEP_NL)) ||
			 (u[i] == '\t' && (flags & TERM_KEEP_TAB))))
		i++;
	return i;
}

/* A run appended at once (pmap's 1 MB table went a byte a call: a fifth
 * of its time); past out's maximum, what fits, as a byte at a time would
 * have kept. */
static int add_run(struct strbuf *out, const char *s, size_t len)
{
	size_t room = out->max > out->len ? out->max - out->len : 0;
	int r = strbuf_add(out, s, len);

	if (r == -E2BIG && room < len)
		(void)strbuf_add(out, s, room);
	return r;
}

int term_sanitize(const char *s, size_t n, unsigned flags, struct strbuf *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int r = 0;

	while (r >= 0 && i < n) {
		uint32_t cp;
		size_t len = plain_run(u + i, n - i, flags);

		if (len) {
			r = add_run(out, s + i, len);
			i += len;
			continue;
		}
		len = (flags & TERM_KEEP_SGR) ? sgr_len(s + i, n - i) : 0;
		if (len) {
			r = strbuf_add(out, s + i, len);
			i += len;
			continue;
		}
		if ((u[i] == '\n' && (flags & TERM_KEEP_NL)) ||
		    (u[i] == '\t' && (flags & TERM_KEEP_TAB))) {
			r = strbuf_addch(out, s[i++]);
			continue;
		}
		len = utf8_decode(u + i, n - i, &cp);
		/* C0, DEL and C1 (U+0080..U+009F = c2 80..c2 9f). */
		if (len == 0 || u[i] < 0x20 || u[i] == 0x7f ||
		    (len == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			for (size_t k = 0; r >= 0 && k < (len ? len : 1); k++)
				r = refuse(out, u[i + k], flags);
			i += len ? len : 1;
			continue;
		}
		r = strbuf_add(out, s + i, len);
		i += len;
	}
	return r;
}
