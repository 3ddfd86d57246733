/* SPDX-License-Identifier: Apache-2.0 */
/* term_sanitize: what a process, a file name or a JVM could make a terminal
 * do, and what must pass unchanged. Pure. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "base/term.h"

struct term_case {
	char in[64];
	size_t len;
	unsigned flags;
	char out[96];
};

#define TC(s, f, o)                    \
	{                              \
		s, sizeof(s) - 1, f, o \
	}
#define NT (TERM_KEEP_NL | TERM_KEEP_TAB)

ParameterizedTestParameters(term, sanitize)
{
	static struct term_case cases[] = {
		/* A comm that sets the window title (OSC 0 ... BEL). */
		TC("java\033]0;pwned\007", NT, "java\\x1b]0;pwned\\x07"),
		/* ESC/BEL in a mapped file name, pmap style. */
		TC("/tmp/a\033[2Jb\007.so", TERM_KEEP_NL | TERM_QUESTION,
		   "/tmp/a?[2Jb?.so"),
		/* C1 CSI as UTF-8 (U+009B) and as a bare byte. */
		TC("a\xc2\x9b"
		   "31mb",
		   NT, "a\\xc2\\x9b31mb"),
		TC("a\x9b"
		   "31mb",
		   NT, "a\\x9b31mb"),
		TC("x\xff\xfey", TERM_QUESTION, "x??y"),
		TC("over\xc0\xaflong", TERM_QUESTION, "over??long"),
		TC("del\x7f", NT, "del\\x7f"),
		TC("a\tb\nc\r", NT, "a\tb\nc\\x0d"),
		TC("a\tb\nc", TERM_QUESTION, "a?b?c"),
		/* Our colours pass; conceal and black do not. */
		TC("\033[1mBIG\033[0m \033[31mred\033[0m", NT | TERM_KEEP_SGR,
		   "\033[1mBIG\033[0m \033[31mred\033[0m"),
		TC("\033[8mhidden\033[30;40m", NT | TERM_KEEP_SGR,
		   "\\x1b[8mhidden\\x1b[30;40m"),
		TC("\033[1m", NT, "\\x1b[1m"),
		/* Text passes unchanged: UTF-8, NBSP (U+00A0), emoji. */
		TC("caf\xc3\xa9 \xc2\xa0 \xf0\x9f\x98\x80 [heap]", NT,
		   "caf\xc3\xa9 \xc2\xa0 \xf0\x9f\x98\x80 [heap]"),
		TC("", NT, ""),
	};

	return cr_make_param_array(struct term_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct term_case *c, term, sanitize)
{
	struct strbuf out;

	strbuf_init(&out, 4096);
	cr_assert_eq(term_sanitize(c->in, c->len, c->flags, &out), 0);
	cr_assert_str_eq(out.buf, c->out);
	strbuf_release(&out);
}

Test(term, cut_sequence_at_the_end_is_refused)
{
	struct strbuf out;

	strbuf_init(&out, 64);
	cr_assert_eq(term_sanitize("ok\xe2\x82", 4, TERM_QUESTION, &out), 0);
	cr_assert_str_eq(out.buf, "ok??");
	strbuf_reset(&out);
	cr_assert_eq(term_sanitize("\033[1", 3, TERM_KEEP_SGR, &out), 0);
	cr_assert_str_eq(out.buf, "\\x1b[1");
	strbuf_release(&out);
}

/* Past the maximum: -E2BIG with what fitted kept, also inside a run of
 * plain bytes (appended at once, not a byte at a time). */
Test(term, over_the_cap_keeps_what_fits)
{
	struct strbuf out;

	strbuf_init(&out, 5);
	cr_assert_eq(term_sanitize("abcdefgh", 8, TERM_QUESTION, &out), -E2BIG);
	cr_assert_eq(out.len, 5);
	cr_assert_str_eq(out.buf, "abcde");
	strbuf_release(&out);
	strbuf_init(&out, 6);
	cr_assert_eq(term_sanitize("ab\033cd\nefgh", 10,
				   TERM_QUESTION | TERM_KEEP_NL, &out),
		     -E2BIG);
	cr_assert_str_eq(out.buf, "ab?cd\n");
	strbuf_release(&out);
	/* a run that fits exactly is not an error */
	strbuf_init(&out, 4);
	cr_assert_eq(term_sanitize("a\nbc", 4, TERM_KEEP_NL, &out), 0);
	cr_assert_str_eq(out.buf, "a\nbc");
	strbuf_release(&out);
}
