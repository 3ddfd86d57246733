/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg_parse_buffer(): a whole file of raw records or dmesg text. */
#include "kernel/kmsg.h"
#include "base/util.h"

struct buffer_ctx {
	struct kmsg_assembler *a;
	int (*fn)(struct oom_report *r, void *userdata);
	void *userdata;
	int n_reports;
	struct strbuf pending; /* a dmesg record, continuation lines joined */
	bool pending_ts;       /* it had a timestamp */
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
	ret = kmsg_parse_dmesg_line(c->pending.buf, c->pending.len, &c->scratch,
				    &rec);
	strbuf_reset(&c->pending);
	return ret < 0 ? ret : feed(c, &rec);
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

/* "[  114.184803]" near the start (after "kern  :info  : " with -x); a
 * task row "[  10133]" is not one. */
static bool has_timestamp(const char *s, size_t len)
{
	const char *open = memchr(s, '[', len < 32 ? len : 32);
	bool dot = false;

	if (!open)
		return false;
	for (const char *p = open + 1; p < s + len; p++) {
		if (*p == ']')
			return dot;
		if (*p == '.')
			dot = true;
		else if (*p != ' ' && (*p < '0' || *p > '9'))
			return false;
	}
	return false;
}

static int one_line(struct buffer_ctx *c, const char *s, size_t len,
		    bool *in_raw)
{
	struct kmsg_record rec;
	int ret;

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
	c->pending_ts = has_timestamp(s, len);
	return strbuf_add(&c->pending, s, len) < 0 ? -ENOMEM : 0;
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
