/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg records: one raw /dev/kmsg record. Pure. (Text lines: kmsg_text.c.) */
#include "kernel/kmsg.h"
#include "base/parse.h"
#include "base/util.h"

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
		    (hi = parse_hex_digit(s[i + 2])) >= 0 &&
		    (lo = parse_hex_digit(s[i + 3])) >= 0) {
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
