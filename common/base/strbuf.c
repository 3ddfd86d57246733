/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>

#include "base/strbuf.h"

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t max)
{
	sb->buf = strbuf_slopbuf;
	sb->len = 0;
	sb->alloc = 0;
	sb->max = max ? max : STRBUF_DEFAULT_MAX;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, sb->max);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->buf[0] = '\0';
}

void strbuf_truncate(struct strbuf *sb, size_t len)
{
	if (len >= sb->len)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need, n;
	char *p;

	if (extra > sb->max || sb->len > sb->max - extra)
		return -E2BIG;
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	if (n > sb->max + 1)
		n = sb->max + 1;
	p = sb->alloc ? realloc(sb->buf, n) : malloc(n);
	if (!p)
		return -ENOMEM;
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = n;
	return 0;
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	int r = strbuf_grow(sb, len);

	if (r < 0)
		return r;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_adds(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addch(struct strbuf *sb, char c)
{
	return strbuf_add(sb, &c, 1);
}

int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n, r;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	r = strbuf_grow(sb, (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
	return 0;
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

int strbuf_add_json_str(struct strbuf *sb, const char *s, size_t len)
{
	size_t old = sb->len;
	int r = strbuf_addch(sb, '"');

	for (size_t i = 0; r >= 0 && i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			r = strbuf_addf(sb, "\\%c", c);
		else if (c == '\n')
			r = strbuf_adds(sb, "\\n");
		else if (c == '\t')
			r = strbuf_adds(sb, "\\t");
		else if (c < 0x20 || c == 0x7f)
			r = strbuf_addf(sb, "\\u%04x", c);
		else
			r = strbuf_addch(sb, (char)c);
	}
	if (r >= 0)
		r = strbuf_addch(sb, '"');
	if (r < 0) {
		sb->len = old;
		sb->buf[old] = '\0';
	}
	return r;
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
	char *p;

	if (!sb->alloc) {
		p = strdup("");
		if (!p)
			return NULL;
	} else {
		p = sb->buf;
	}
	if (ret_len)
		*ret_len = sb->len;
	sb->alloc = 0;
	strbuf_init(sb, sb->max);
	return p;
}
