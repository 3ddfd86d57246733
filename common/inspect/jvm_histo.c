/* SPDX-License-Identifier: Apache-2.0 */
/* GC.class_histogram, the pure parts: the parser of its reply (every line
 * checked: a JVM's reply is its pod's), class names made safe to show,
 * their Java spelling, and the walk's estimate. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/jvm.h"
#include "base/parse.h"
#include "base/term.h"
#include "base/util.h"

/* Below this much work the walk's cost is its fixed part: the safepoint,
 * the attach round trip, the reply's printing (~20 ms measured here for
 * a 60 MiB heap of arrays). */
#define HISTO_FIXED_MS 20u

uint64_t jvm_histo_estimate_ms(uint64_t heap_used, uint64_t rate)
{
	if (!rate)
		rate = JVM_HISTO_RATE_DEFAULT;
	return HISTO_FIXED_MS + heap_used / rate;
}

/* ---- names ---- */

/* The length of the UTF-8 character at s[0..n) whose code point is one
 * to show, or 0 (invalid, overlong, a surrogate, a control, or a
 * formatting character that reorders or breaks lines). */
static size_t utf8_printable(const unsigned char *s, size_t n)
{
	uint32_t c = 0;
	size_t len = s[0] >= 0x80 ? utf8_decode(s, n, &c) : 0;

	if (!len || c < 0xa0 || c == 0x200e || c == 0x200f ||
	    (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
		return 0;
	return len;
}

/* The length of the character at s[i..n) when it is shown as it is, 0
 * when it is shown as one '?' (and skipped as one byte). */
static size_t shown_len(const unsigned char *s, size_t i, size_t n)
{
	if (s[i] >= 0x20 && s[i] < 0x7f)
		return 1;
	return s[i] >= 0x80 ? utf8_printable(s + i, n - i) : 0;
}

void jvm_histo_clean_name(const char *s, size_t n, char *ret, size_t size)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0, all = 0, room = size - 1, len;

	for (size_t k = 0; k < n; k += len ? len : 1)
		all += (len = shown_len(u, k, n)) ? len : 1;
	if (all > room)
		room = size - 4; /* "..." ends a cut name */
	for (size_t i = 0; i < n; i += len ? len : 1) {
		len = shown_len(u, i, n);
		if (o + (len ? len : 1) > room)
			break;
		if (len)
			memcpy(ret + o, s + i, len);
		else
			ret[o] = '?';
		o += len ? len : 1;
	}
	if (all > size - 1) {
		memcpy(ret + o, "...", 3);
		o += 3;
	}
	ret[o] = '\0';
}

void jvm_class_display_name(const char *name, char *ret, size_t size)
{
	static const char *const prim[][2] = {
		{"B", "byte"}, {"C", "char"}, {"D", "double"}, {"F", "float"},
		{"I", "int"},  {"J", "long"}, {"S", "short"},  {"Z", "boolean"},
	};
	const char *p = name, *elem = NULL;
	size_t dims = 0, elen = 0, n;

	while (*p == '[')
		p++, dims++;
	if (dims && p[0] == 'L' && strlen(p) > 2 && p[strlen(p) - 1] == ';') {
		elem = p + 1;
		elen = strlen(p) - 2;
	}
	for (size_t i = 0; dims && !elem && i < ARRAY_SIZE(prim); i++)
		if (streq(p, prim[i][0])) {
			elem = prim[i][1];
			elen = strlen(elem);
		}
	if (!elem) {
		strlcpy_safe(ret, name, size);
		return;
	}
	n = (size_t)snprintf(ret, size, "%.*s", (int)elen, elem);
	for (size_t i = 0; i < dims && n + 2 < size; i++, n += 2)
		memcpy(ret + n, "[]", 3);
}

/* ---- the parser ---- */

struct histo_state {
	struct jvm_histo h;
	bool header, dashes, total;
	uint64_t next_rank;
	uint64_t sum_instances, sum_bytes;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* The digits at s[*i..n): their value, *i past them. -EBADMSG when none
 * or too many. */
static int digits(const char *s, size_t n, size_t *i, uint64_t *ret)
{
	size_t b = *i;

	while (*i < n && s[*i] >= '0' && s[*i] <= '9')
		(*i)++;
	if (*i == b)
		return -EBADMSG;
	return parse_u64_n(s + b, *i - b, ret) < 0 ? -EBADMSG : 0;
}

/* At least one blank at s[*i], skipped. */
static bool blanks(const char *s, size_t n, size_t *i)
{
	size_t b = *i;

	while (*i < n && is_space(s[*i]))
		(*i)++;
	return *i > b;
}

/* Keeps c among the largest by bytes, the earlier first on a tie. */
static void keep_top(struct jvm_histo *h, const struct jvm_histo_class *c)
{
	size_t i;

	if (h->n < JVM_HISTO_TOP)
		i = h->n++;
	else if (h->top[JVM_HISTO_TOP - 1].bytes < c->bytes)
		i = JVM_HISTO_TOP - 1;
	else
		return;
	h->top[i] = *c;
	for (; i > 0 && h->top[i - 1].bytes < h->top[i].bytes; i--) {
		struct jvm_histo_class t = h->top[i - 1];

		h->top[i - 1] = h->top[i];
		h->top[i] = t;
	}
}

/* "<name>" or "<name> (<module>)": a module has neither blanks nor
 * parentheses; anything else is all name. */
static void split_name(const char *s, size_t n, struct jvm_histo_class *c)
{
	size_t open = n;

	if (n >= 4 && s[n - 1] == ')')
		for (size_t k = n - 1; k-- > 1;) {
			if (s[k] == '(' && s[k - 1] == ' ') {
				open = k;
				break;
			}
			if (s[k] == '(' || s[k] == ')' || is_space(s[k]))
				break;
		}
	if (open + 2 < n && open > 1) {
		jvm_histo_clean_name(s + open + 1, n - open - 2, c->module,
				     sizeof(c->module));
		n = open - 1;
	}
	jvm_histo_clean_name(s, n, c->name, sizeof(c->name));
}

/* "   1:          7334       67444984  [B (java.base@17.0.15)" */
static int histo_entry(struct histo_state *st, const char *s, size_t n)
{
	struct jvm_histo_class c;
	uint64_t rank;
	size_t i = 0;

	memset(&c, 0, sizeof(c));
	(void)blanks(s, n, &i);
	if (digits(s, n, &i, &rank) < 0 || i >= n || s[i++] != ':' ||
	    rank != st->next_rank || !blanks(s, n, &i) ||
	    digits(s, n, &i, &c.instances) < 0 || !blanks(s, n, &i) ||
	    digits(s, n, &i, &c.bytes) < 0 || !blanks(s, n, &i) || i >= n)
		return -EBADMSG;
	if (st->sum_instances + c.instances < st->sum_instances ||
	    st->sum_bytes + c.bytes < st->sum_bytes)
		return -EBADMSG;
	st->sum_instances += c.instances;
	st->sum_bytes += c.bytes;
	st->next_rank++;
	st->h.n_classes++;
	split_name(s + i, n - i, &c);
	if (!c.name[0])
		return -EBADMSG;
	keep_top(&st->h, &c);
	return 0;
}

/* "Total         25013       68240640": the entries' sums, exactly. */
static int histo_total(struct histo_state *st, const char *s, size_t n)
{
	uint64_t inst, bytes;
	size_t i = 5;

	if (!blanks(s, n, &i) || digits(s, n, &i, &inst) < 0 ||
	    !blanks(s, n, &i) || digits(s, n, &i, &bytes) < 0 || i != n ||
	    inst != st->sum_instances || bytes != st->sum_bytes)
		return -EBADMSG;
	st->total = true;
	return 0;
}

static bool all_dashes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '-')
			return false;
	return n >= 3;
}

/* Whether the n bytes at s hold the word w somewhere. A loop rather
 * than memmem(): GCC 12's -Wnonnull under -O1 -fsanitize sees a NULL
 * haystack on a path that cannot run. */
static bool has_word(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= n; i++)
		if (s[i] == w[0] && !memcmp(s + i, w, k))
			return true;
	return false;
}

/* " num     #instances         #bytes  class name (module)" (17 and 25;
 * older JDKs end it at "class name"). */
static bool is_header(const char *s, size_t n)
{
	size_t i = 0;

	(void)blanks(s, n, &i);
	return n - i >= 3 && !memcmp(s + i, "num", 3) &&
	       has_word(s, n, "#instances") && has_word(s, n, "#bytes") &&
	       has_word(s, n, "class name");
}

/* "<pid>:" as jcmd prints before the reply. */
static bool is_pid_line(const char *s, size_t n)
{
	size_t i = 0;
	uint64_t v;

	return n >= 2 && s[n - 1] == ':' && digits(s, n - 1, &i, &v) == 0 &&
	       i == n - 1;
}

static int histo_line(struct histo_state *st, const char *s, size_t n,
		      bool first)
{
	while (n && (is_space(s[n - 1]) || s[n - 1] == '\r'))
		n--;
	if (n == 0)
		return st->total ? 0 : -EBADMSG; /* only trailing blanks */
	if (st->total)
		return -EBADMSG;
	if (!st->header) {
		if (first && is_pid_line(s, n))
			return 0;
		st->header = is_header(s, n);
		return st->header ? 0 : -EBADMSG;
	}
	if (!st->dashes) {
		st->dashes = all_dashes(s, n);
		return st->dashes ? 0 : -EBADMSG;
	}
	if (n >= 5 && !memcmp(s, "Total", 5))
		return histo_total(st, s, n);
	return histo_entry(st, s, n);
}

int jvm_parse_class_histogram(const char *buf, size_t len, bool truncated,
			      struct jvm_histo *ret)
{
	struct histo_state *st;
	size_t pos = 0;
	int r = 0;

	if (!buf)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->next_rank = 1;
	if (truncated) /* the last line is cut: only whole lines count */
		while (len && buf[len - 1] != '\n')
			len--;
	while (r == 0 && pos < len) {
		const char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		r = memchr(s, '\0', n) ? -EBADMSG
				       : histo_line(st, s, n, pos == 0);
		pos += n + 1;
	}
	if (r == 0 &&
	    (!st->header || !st->dashes || (!st->total && !truncated)))
		r = -EBADMSG;
	if (r == 0) {
		st->h.total_known = st->total;
		st->h.total_instances = st->sum_instances;
		st->h.total_bytes = st->sum_bytes;
		*ret = st->h;
	}
	free(st);
	return r;
}
