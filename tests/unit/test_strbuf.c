/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "base/strbuf.h"

Test(strbuf, starts_empty_never_null)
{
	struct strbuf sb;

	strbuf_init(&sb, 0);
	cr_assert_not_null(sb.buf);
	cr_assert_eq(sb.len, 0);
	cr_assert_str_eq(sb.buf, "");
	strbuf_release(&sb);
	cr_assert_str_eq(sb.buf, "");
}

Test(strbuf, appends_and_formats)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 0);
	cr_assert_eq(strbuf_adds(&sb, "pid="), 0);
	cr_assert_eq(strbuf_addf(&sb, "%d %s", 42, "x"), 0);
	cr_assert_str_eq(sb.buf, "pid=42 x");
	cr_assert_eq(sb.len, 8);
}

Test(strbuf, hard_max_refuses_and_keeps_content)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 8);
	cr_assert_eq(strbuf_adds(&sb, "12345678"), 0);
	cr_assert_eq(strbuf_addch(&sb, '9'), -E2BIG);
	cr_assert_eq(strbuf_addf(&sb, "%s", "abc"), -E2BIG);
	cr_assert_str_eq(sb.buf, "12345678");
	cr_assert_eq(sb.len, 8);
}

Test(strbuf, json_string_escapes_hostile_names)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char name[] = "a\"b\\c\nd\x01(e)";

	strbuf_init(&sb, 0);
	cr_assert_eq(strbuf_add_json_str(&sb, name, sizeof(name) - 1), 0);
	cr_assert_str_eq(sb.buf, "\"a\\\"b\\\\c\\nd\\u0001(e)\"");
}

Test(strbuf, detach_moves_ownership)
{
	struct strbuf sb;
	size_t len = 0;
	char *s;

	strbuf_init(&sb, 0);
	strbuf_adds(&sb, "hello");
	s = strbuf_detach(&sb, &len);
	cr_assert_str_eq(s, "hello");
	cr_assert_eq(len, 5);
	cr_assert_eq(sb.len, 0);
	cr_assert_str_eq(sb.buf, "");
	free(s);
	s = strbuf_detach(&sb, NULL);
	cr_assert_str_eq(s, "");
	free(s);
}

static int early_return(bool bail)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (bail)
		return -EINVAL; /* cleanup runs on a never-initialised strbuf */
	strbuf_init(&sb, 16);
	return strbuf_adds(&sb, "0123456789abcdefX");
}

Test(strbuf, init_macro_is_safe_to_release_and_to_use)
{
	struct strbuf sb = STRBUF_INIT;

	cr_assert_eq(early_return(true), -EINVAL);
	cr_assert_eq(early_return(false), -E2BIG);
	cr_assert_str_eq(sb.buf, "");
	cr_assert_eq(strbuf_adds(&sb, "abc"), 0);
	cr_assert_str_eq(sb.buf, "abc");
	strbuf_release(&sb);
	cr_assert_str_eq(strbuf_slopbuf, "", "the shared empty string");
}
