/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg_parse_buffer(): a whole file of raw records or pasted log text
 * (dmesg, journalctl, syslog; see kmsg_text.c). */
#include "kernel/kmsg.h"
#include "base/util.h"

struct buffer_ctx {
	struct kmsg_assembler *a;
	int (*fn)(struct oom_report *r, void *userdata);
	void *userdata;
	int n_reports;
	struct strbuf pending; /* a text record, continuation lines joined */
	bool pending_ts;       /* it had a timestamp */
	unsigned text_flags;   /* KMSG_TEXT_* hints for the whole paste */
	struct strbuf scratch;
};

static int deliver(struct buffer_ctx *c)
{
	struct oom_report r;

	while (kmsg_assembler_pop(c->a, &r) > 0) {
		int ret = c->fn(&r, c->userdata);

		oom_report_release(&r);
		if (ret < 0)
			return ret;
		c->n_reports++;
	}
	return 0;
}

static int feed(struct buffer_ctx *c, const struct kmsg_record *rec)
{
	int ret = kmsg_assembler_feed(c->a, rec);

	if (ret < 0)
		return ret;
	return ret > 0 ? deliver(c) : 0;
}

static int flush_pending(struct buffer_ctx *c)
{
	struct kmsg_record rec;
	int ret;

	if (c->pending.len == 0)
		return 0;
	ret = kmsg_parse_text_line(c->pending.buf, c->pending.len,
				   c->text_flags, &c->scratch, &rec);
	strbuf_reset(&c->pending);
	/* Another program's syslog line is not part of the kernel's log. */
	return ret <= 0 ? ret : feed(c, &rec);
}

/* "prio,seq,usec," at the start: a raw /dev/kmsg record. */
static bool looks_raw(const char *s, size_t len)
{
	size_t i = 0;

	for (int field = 0; field < 3; field++) {
		size_t d = i;

		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d || i >= len || s[i] != ',')
			return false;
		i++;
	}
	return memchr(s, ';', len) != NULL;
}

static int one_line(struct buffer_ctx *c, const char *s, size_t len,
		    bool *in_raw)
{
	struct kmsg_text_prefix t;
	struct kmsg_record rec;
	int ret;

	if (len && s[len - 1] == '\r')
		len--; /* CRLF: pasted from Windows, or a tty (kubectl -it) */
	if (len && (s[0] == ' ' || s[0] == '\t')) {
		if (*in_raw)
			return 0; /* " KEY=VALUE" dictionary of a record */
		if (c->pending_ts && c->pending.len) {
			/* dmesg prints a newline inside a record as a line
			 * break plus indentation. */
			while (len && (*s == ' ' || *s == '\t')) {
				s++;
				len--;
			}
			if (strbuf_addch(&c->pending, '\n') < 0 ||
			    strbuf_add(&c->pending, s, len) < 0)
				return -ENOMEM;
			return 0;
		}
	}
	ret = flush_pending(c);
	if (ret < 0)
		return ret;
	*in_raw = looks_raw(s, len);
	if (*in_raw) {
		/* A malformed record is skipped: it carries no report. */
		if (kmsg_parse_record(s, len, &c->scratch, &rec) < 0)
			return 0;
		return feed(c, &rec);
	}
	c->pending_ts =
		kmsg_parse_text_prefix(s, len, c->text_flags, &t) == 0 &&
		t.stamped && !t.foreign;
	return strbuf_add(&c->pending, s, len) < 0 ? -ENOMEM : 0;
}

/* The forms a paste's lines take decide two readings that one line alone
 * cannot: "[ts] A kernel: x" is journalctl -o short-monotonic when most
 * "[ts]" lines are, and "host kernel: [ts] x" carries a kern.log stamp
 * when most kernel lines do; else "A kernel: x" and "[ts] x" are the
 * kernel's text (a comm may read "a kernel: b" or "[1.5] b"). */
static unsigned text_hints(const char *p, const char *end)
{
	size_t mono = 0, mono_host = 0, sys = 0, inner = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		struct kmsg_text_prefix t;

		(void)kmsg_parse_text_prefix(p, (size_t)(e - p), 0, &t);
		if (t.stamped && t.usec != UINT64_MAX && !t.inner_stamp) {
			mono++;
			mono_host += t.mono_host;
		}
		if (t.syslog && !t.foreign) {
			sys++;
			inner += t.inner_stamp;
		}
		p = nl ? nl + 1 : end;
	}
	return (mono_host * 2 <= mono ? KMSG_TEXT_NO_MONO_HOST : 0) |
	       (inner * 2 <= sys ? KMSG_TEXT_NO_INNER_STAMP : 0);
}

int kmsg_parse_buffer(const char *buf, size_t len,
		      int (*fn)(struct oom_report *r, void *userdata),
		      void *userdata)
{
	struct buffer_ctx c = {.fn = fn, .userdata = userdata};
	const char *p = buf, *end = buf + len;
	bool in_raw = false;
	int ret = 0;

	c.a = kmsg_assembler_new();
	if (!c.a)
		return -ENOMEM;
	strbuf_init(&c.pending, 1u << 20);
	strbuf_init(&c.scratch, 1u << 20);
	c.text_flags = text_hints(buf, end);
	while (ret == 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		ret = one_line(&c, p, (size_t)(e - p), &in_raw);
		p = nl ? nl + 1 : end;
	}
	if (ret == 0)
		ret = flush_pending(&c);
	if (ret == 0 && kmsg_assembler_flush(c.a, true) > 0)
		ret = deliver(&c);
	kmsg_assembler_free(c.a);
	strbuf_release(&c.pending);
	strbuf_release(&c.scratch);
	return ret < 0 ? ret : c.n_reports;
}
