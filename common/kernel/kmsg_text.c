/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel log text as users paste it: what comes before the kernel's own
 * text on a line of dmesg (plain, -r, -x, -T, --time-format iso),
 * journalctl (short, short-precise, short-monotonic, short-iso[-precise])
 * or syslog files (kern.log, messages, rsyslog RFC 3339 stamps), so that
 * every form gives the kernel's text and nothing of the prefix. Pure. */
#include "kernel/kmsg.h"
#include "base/parse.h"
#include "base/util.h"

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Takes n bytes that pass is(); advances *p only when all do. */
static bool take(const char **p, const char *end, size_t n, bool (*is)(char))
{
	if ((size_t)(end - *p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is((*p)[i]))
			return false;
	*p += n;
	return true;
}

static bool take_ch(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

/* "hh:mm:ss" */
static bool take_clock(const char **p, const char *end)
{
	return take(p, end, 2, digit) && take_ch(p, end, ':') &&
	       take(p, end, 2, digit) && take_ch(p, end, ':') &&
	       take(p, end, 2, digit);
}

/* "Mmm dd" or "Mmm  d" (syslog pads the day with a space) */
static bool take_month_day(const char **p, const char *end)
{
	if (!take(p, end, 3, letter) || !take_ch(p, end, ' '))
		return false;
	if (*p < end && **p == ' ')
		(*p)++;
	else if (!take(p, end, 1, digit))
		return false;
	return take(p, end, 1, digit);
}

/* "[  114.184803]" and one space → µs; NULL when p is not one. */
static const char *mono_stamp(const char *p, const char *end, uint64_t *ret)
{
	const char *s = p + 1, *dot, *close;
	uint64_t sec, frac = 0;
	size_t nfrac;

	if (p >= end || *p != '[')
		return NULL;
	close = memchr(s, ']', (size_t)(end - s));
	if (!close)
		return NULL;
	while (s < close && *s == ' ')
		s++;
	dot = memchr(s, '.', (size_t)(close - s));
	if (!dot || parse_u64_n(s, (size_t)(dot - s), &sec) < 0)
		return NULL;
	nfrac = (size_t)(close - dot - 1);
	if (nfrac == 0 || nfrac > 9 || parse_u64_n(dot + 1, nfrac, &frac) < 0 ||
	    sec > UINT64_MAX / 2000000)
		return NULL;
	for (; nfrac < 6; nfrac++)
		frac *= 10;
	for (; nfrac > 6; nfrac--)
		frac /= 10;
	*ret = sec * 1000000 + frac;
	p = close + 1;
	return p < end && *p == ' ' ? p + 1 : p;
}

/* dmesg -T: "[Tue Dec  1 08:55:47 2026] " */
static const char *ctime_stamp(const char *p, const char *end)
{
	if (!take_ch(&p, end, '[') || !take(&p, end, 3, letter) ||
	    !take_ch(&p, end, ' ') || !take_month_day(&p, end) ||
	    !take_ch(&p, end, ' ') || !take_clock(&p, end) ||
	    !take_ch(&p, end, ' ') || !take(&p, end, 4, digit) ||
	    !take_ch(&p, end, ']'))
		return NULL;
	return p < end && *p == ' ' ? p + 1 : p;
}

/* syslog and journalctl short[-precise]: "Dec 01 08:55:47[.123456] " */
static const char *syslog_stamp(const char *p, const char *end)
{
	if (!take_month_day(&p, end) || !take_ch(&p, end, ' ') ||
	    !take_clock(&p, end))
		return NULL;
	if (take_ch(&p, end, '.') && !take(&p, end, 1, digit))
		return NULL;
	while (p < end && digit(*p))
		p++;
	return take_ch(&p, end, ' ') ? p : NULL;
}

/* ISO 8601 "2026-12-01T08:55:47[.123456|,123456][Z|+0000|+00:00] ";
 * *ret_comma: the fraction came after ',' (dmesg --time-format iso). */
static const char *iso_stamp(const char *p, const char *end, bool *ret_comma)
{
	*ret_comma = false;
	if (!take(&p, end, 4, digit) || !take_ch(&p, end, '-') ||
	    !take(&p, end, 2, digit) || !take_ch(&p, end, '-') ||
	    !take(&p, end, 2, digit) || !take_ch(&p, end, 'T') ||
	    !take_clock(&p, end))
		return NULL;
	if (p < end && (*p == '.' || *p == ',')) {
		*ret_comma = *p++ == ',';
		if (!take(&p, end, 1, digit))
			return NULL;
		while (p < end && digit(*p))
			p++;
	}
	if (!take_ch(&p, end, 'Z') &&
	    (take_ch(&p, end, '+') || take_ch(&p, end, '-')) &&
	    (!take(&p, end, 2, digit) ||
	     (take_ch(&p, end, ':'), !take(&p, end, 2, digit))))
		return NULL;
	return take_ch(&p, end, ' ') ? p : NULL;
}

/* "[HOST ]IDENT[\[PID\]]: " of a syslog or journal line (HOST absent
 * with journalctl --no-hostname). Returns the end of it, or NULL. */
static const char *host_ident(const char *p, const char *end, bool *ret_kernel,
			      bool *ret_pid)
{
	const char *w = p, *id;

	*ret_kernel = *ret_pid = false;
	if ((size_t)(end - p) >= 8 && strncmp(p, "kernel: ", 8) == 0) {
		*ret_kernel = true;
		return p + 8;
	}
	while (p < end && *p != ' ')
		p++;
	if (p == w || !take_ch(&p, end, ' '))
		return NULL;
	id = p;
	while (p < end && *p != ' ' && *p != ':' && *p != '[')
		p++;
	if (p == id)
		return NULL;
	*ret_kernel = p - id == 6 && strncmp(id, "kernel", 6) == 0;
	if (take_ch(&p, end, '[')) {
		if (!take(&p, end, 1, digit))
			return NULL;
		while (p < end && digit(*p))
			p++;
		if (!take_ch(&p, end, ']'))
			return NULL;
		*ret_pid = true;
	}
	return take_ch(&p, end, ':') && take_ch(&p, end, ' ') ? p : NULL;
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

/* After a syslog/journal stamp: "[HOST ]kernel: " and, unless flags say
 * not, the "[  114.18] " rsyslog's kern.log may put after it. */
static const char *after_syslog_stamp(const char *p, const char *end,
				      unsigned flags,
				      struct kmsg_text_prefix *t)
{
	const char *q;
	bool kernel, pid;

	t->syslog = true;
	q = host_ident(p, end, &kernel, &pid);
	if (!q || !kernel) {
		t->foreign = true;
		return p;
	}
	if (!(flags & KMSG_TEXT_NO_INNER_STAMP) &&
	    (p = mono_stamp(q, end, &t->usec))) {
		t->inner_stamp = true;
		return p;
	}
	return q;
}

int kmsg_parse_text_prefix(const char *buf, size_t len, unsigned flags,
			   struct kmsg_text_prefix *ret)
{
	const char *p = buf, *end = buf + len, *q;
	struct kmsg_text_prefix t = {.usec = UINT64_MAX};
	bool kernel, pid, comma;

	t.prio = raw_prio(&p, end);
	p = skip_facility_level(p, end);
	if ((q = mono_stamp(p, end, &t.usec))) {
		t.stamped = true;
		p = q;
		/* journalctl -o short-monotonic: "[  114.18] HOST kernel: " */
		q = host_ident(p, end, &kernel, &pid);
		if (q && (kernel || pid)) {
			t.mono_host = true;
			if (!(flags & KMSG_TEXT_NO_MONO_HOST)) {
				t.syslog = true;
				t.foreign = !kernel;
				p = q;
			}
		}
	} else if ((q = ctime_stamp(p, end))) {
		t.stamped = true;
		p = q;
	} else if ((q = syslog_stamp(p, end)) ||
		   ((q = iso_stamp(p, end, &comma)) && !comma)) {
		t.stamped = true;
		p = after_syslog_stamp(q, end, flags, &t);
	} else if (q) {
		t.stamped = true; /* dmesg --time-format iso: no host */
		p = q;
	}
	t.skip = (size_t)(p - buf);
	*ret = t;
	return 0;
}

int kmsg_parse_text_line(const char *buf, size_t len, unsigned flags,
			 struct strbuf *scratch, struct kmsg_record *ret)
{
	struct kmsg_text_prefix t;
	const char *end = buf + len;

	while (end > buf && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	(void)kmsg_parse_text_prefix(buf, (size_t)(end - buf), flags, &t);
	if (t.foreign)
		return 0;
	strbuf_reset(scratch);
	if (strbuf_add(scratch, buf + t.skip, (size_t)(end - buf) - t.skip) < 0)
		return -ENOMEM;
	*ret = (struct kmsg_record){
		.seq = UINT64_MAX,
		.usec = t.usec,
		.prio = t.prio,
		.text = scratch->buf,
		.text_len = scratch->len,
	};
	return 1;
}

int kmsg_parse_dmesg_line(const char *buf, size_t len, struct strbuf *scratch,
			  struct kmsg_record *ret)
{
	int r = kmsg_parse_text_line(buf, len, 0, scratch, ret);

	return r < 0 ? r : r == 0 ? -ENOMSG : 0;
}
