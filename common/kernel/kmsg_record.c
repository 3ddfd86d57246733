/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg records: one raw /dev/kmsg record or one line of dmesg text. Pure. */
#include "kernel/kmsg.h"
#include "base/parse.h"
#include "base/util.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The kernel escapes non-printable bytes (and '\' itself) as \xNN. */
static int decode_escapes(const char *s, size_t len, struct strbuf *out)
{
	int r;

	strbuf_reset(out);
	r = strbuf_grow(out, len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' &&
		    (hi = hexval(s[i + 2])) >= 0 &&
		    (lo = hexval(s[i + 3])) >= 0) {
			out->buf[out->len++] = (char)(hi << 4 | lo);
			i += 3;
		} else {
			out->buf[out->len++] = s[i];
		}
	}
	out->buf[out->len] = '\0';
	return 0;
}

/* Reads a decimal field ending in one of the bytes in stops. */
static int field_u64(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p, *e = s;

	while (e < end && *e >= '0' && *e <= '9')
		e++;
	if (e == s || e >= end || parse_u64_n(s, (size_t)(e - s), ret) < 0)
		return -EBADMSG;
	*p = e;
	return 0;
}

int kmsg_parse_record(const char *buf, size_t len, struct strbuf *scratch,
		      struct kmsg_record *ret)
{
	const char *p = buf, *end = buf + len, *semi, *text, *nl;
	uint64_t prio, seq, usec;
	bool cont;

	semi = memchr(buf, ';', len);
	if (!semi)
		return -EBADMSG;
	if (field_u64(&p, semi, &prio) < 0 || *p++ != ',' || prio > 1023 ||
	    field_u64(&p, semi, &seq) < 0 || *p++ != ',' ||
	    field_u64(&p, semi, &usec) < 0 || *p++ != ',' || p >= semi)
		return -EBADMSG;
	if (*p != '-' && *p != 'c' && *p != '+')
		return -EBADMSG;
	cont = *p == 'c';
	text = semi + 1;
	nl = memchr(text, '\n', (size_t)(end - text));
	if (!nl)
		nl = end;
	if (decode_escapes(text, (size_t)(nl - text), scratch) < 0)
		return -ENOMEM;
	*ret = (struct kmsg_record){
		.seq = seq,
		.usec = usec,
		.prio = (int)prio,
		.continuation = cont,
		.text = scratch->buf,
		.text_len = scratch->len,
	};
	return 0;
}

/* "[  114.184803] " → µs; p is left after "] ". */
static int dmesg_timestamp(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p + 1, *dot, *close;
	uint64_t sec, frac = 0;
	size_t nfrac;

	close = memchr(s, ']', (size_t)(end - s));
	if (!close)
		return -EBADMSG;
	while (s < close && *s == ' ')
		s++;
	dot = memchr(s, '.', (size_t)(close - s));
	if (!dot || parse_u64_n(s, (size_t)(dot - s), &sec) < 0)
		return -EBADMSG;
	nfrac = (size_t)(close - dot - 1);
	if (nfrac == 0 || nfrac > 9 || parse_u64_n(dot + 1, nfrac, &frac) < 0 ||
	    sec > UINT64_MAX / 2000000)
		return -EBADMSG;
	for (; nfrac < 6; nfrac++)
		frac *= 10;
	for (; nfrac > 6; nfrac--)
		frac /= 10;
	*ret = sec * 1000000 + frac;
	*p = close + 1;
	if (*p < end && **p == ' ')
		(*p)++;
	return 0;
}

/* `dmesg -x` puts "kern  :info  : " before the timestamp. */
static const char *skip_facility_level(const char *s, const char *end)
{
	const char *p = s;

	for (int field = 0; field < 2; field++) {
		const char *w = p;

		while (p < end && *p >= 'a' && *p <= 'z')
			p++;
		if (p == w)
			return s;
		while (p < end && *p == ' ')
			p++;
		if (p >= end || *p != ':')
			return s;
		p++;
	}
	if (p >= end || *p != ' ')
		return s;
	return p + 1;
}

/* `dmesg -r` starts a line with "<prio>". Returns it, or -1. */
static int raw_prio(const char **buf, const char *end)
{
	const char *p = *buf + 1;
	int v = 0;

	if (p >= end || (*buf)[0] != '<')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9' && v < 1024; p++)
		v = v * 10 + (*p - '0');
	if (p == *buf + 1 || p >= end || *p != '>' || v >= 1024)
		return -1;
	*buf = p + 1;
	return v;
}

int kmsg_parse_dmesg_line(const char *buf, size_t len, struct strbuf *scratch,
			  struct kmsg_record *ret)
{
	const char *p, *end = buf + len;
	uint64_t usec = UINT64_MAX;
	int prio;

	while (end > buf && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	prio = raw_prio(&buf, end);
	p = skip_facility_level(buf, end);
	if (p < end && *p == '[' && dmesg_timestamp(&p, end, &usec) < 0)
		usec = UINT64_MAX; /* "[" that is not a timestamp: plain text */
	if (usec == UINT64_MAX)
		p = skip_facility_level(buf, end);
	strbuf_reset(scratch);
	if (strbuf_add(scratch, p, (size_t)(end - p)) < 0)
		return -ENOMEM;
	*ret = (struct kmsg_record){
		.seq = UINT64_MAX,
		.usec = usec,
		.prio = prio,
		.text = scratch->buf,
		.text_len = scratch->len,
	};
	return 0;
}
