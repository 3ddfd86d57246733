/* SPDX-License-Identifier: Apache-2.0 */
/* Typed json-c accessors: a wrong type is absent and noted, never an
 * abort, never a silent conversion. */
#include <criterion/criterion.h>
#include <json-c/json.h>

#include "base/jget.h"

static struct json_object *parse(const char *s)
{
	struct json_object *o = json_tokener_parse(s);

	cr_assert_not_null(o, "%s", s);
	return o;
}

Test(jget, u64_takes_only_integers_from_zero_up)
{
	struct json_object *o = parse(
		"{\"ok\":5,\"neg\":-1,\"dbl\":1.5,\"str\":\"12\",\"bool\":true,"
		"\"nul\":null,\"big\":18446744073709551615,\"arr\":[1]}");
	struct jget_notes n = {0};
	uint64_t v = 77;

	cr_assert(jget_u64(&n, o, "ok", &v));
	cr_assert_eq(v, 5);
	cr_assert(jget_u64(&n, o, "big", &v));
	cr_assert_eq(v, UINT64_MAX);
	v = 77;
	cr_assert_not(jget_u64(&n, o, "neg", &v));
	cr_assert_not(jget_u64(&n, o, "dbl", &v));
	cr_assert_not(jget_u64(&n, o, "str", &v));
	cr_assert_not(jget_u64(&n, o, "bool", &v));
	cr_assert_not(jget_u64(&n, o, "arr", &v));
	cr_assert_eq(v, 77, "untouched on failure");
	cr_assert_eq(n.n, 5);
	/* absent and null are not wrong: no note */
	cr_assert_not(jget_u64(&n, o, "nul", &v));
	cr_assert_not(jget_u64(&n, o, "missing", &v));
	cr_assert_eq(n.n, 5);
	cr_assert_str_eq(n.text[0], "\"neg\" is a negative number, not a "
				    "number ≥ 0: ignored");
	cr_assert_str_eq(n.text[2], "\"str\" is a string, not a number ≥ 0: "
				    "ignored");
	json_object_put(o);
}

Test(jget, arrays_and_objects_are_checked_before_use)
{
	struct json_object *o =
		parse("{\"samples\":{\"x\":1},\"list\":[1,\"a\"]}");
	struct jget_notes n = {0};
	struct json_object *a;

	jget_where(&n, "timeline.json");
	cr_assert_null(jget_array(&n, o, "samples"));
	cr_assert_str_eq(n.text[0], "timeline.json: \"samples\" is an "
				    "object, not an array: ignored");
	/* a non-array is an empty one, whatever asks */
	cr_assert_eq(jget_len(jget(o, "samples")), 0);
	cr_assert_null(jget_idx(jget(o, "samples"), 0));
	a = jget_array(&n, o, "list");
	cr_assert_eq(jget_len(a), 2);
	cr_assert_null(jget_idx(a, 2));
	cr_assert_null(jget_idx_str(&n, a, 0));
	cr_assert_str_eq(jget_idx_str(&n, a, 1), "a");
	cr_assert_str_eq(n.text[1], "timeline.json: an element is a number, "
				    "not a string: ignored");
	/* members of a non-object are absent */
	cr_assert_null(jget(a, "x"));
	cr_assert_null(jget_obj(&n, NULL, "x"));
	json_object_put(o);
}

Test(jget, int_double_bool_and_string)
{
	struct json_object *o =
		parse("{\"i\":-3,\"huge\":4294967296,\"d\":2.5,\"b\":false,"
		      "\"s\":\"x\",\"one\":1}");
	int i = 0;
	double d = 0;
	bool b = true;

	cr_assert(jget_int(NULL, o, "i", &i));
	cr_assert_eq(i, -3);
	cr_assert_not(jget_int(NULL, o, "huge", &i));
	cr_assert_not(jget_int(NULL, o, "d", &i));
	cr_assert(jget_double(NULL, o, "d", &d));
	cr_assert_float_eq(d, 2.5, 1e-9);
	cr_assert(jget_double(NULL, o, "i", &d));
	cr_assert_not(jget_double(NULL, o, "s", &d));
	cr_assert(jget_bool(NULL, o, "b", &b));
	cr_assert_not(b);
	cr_assert_not(jget_bool(NULL, o, "one", &b), "1 is not true");
	cr_assert_str_eq(jget_str(NULL, o, "s"), "x");
	cr_assert_null(jget_str(NULL, o, "i"));
	cr_assert_eq(jget_u64_or0(NULL, o, "s"), 0);
	json_object_put(o);
}

Test(jget, notes_are_bounded_and_printable)
{
	struct jget_notes n = {0};

	jget_where(&n, "a\033]0;x\007.json");
	for (int i = 0; i < JGET_NOTES_MAX + 3; i++)
		jget_note(&n, "key \033[31m%d", i);
	cr_assert_eq(n.n, JGET_NOTES_MAX);
	cr_assert_eq(n.more, 3);
	cr_assert_str_eq(n.text[0], "a?]0;x?.json: key ?[31m0");
	jget_note(NULL, "no notes: nothing");
	n = (struct jget_notes){0};
	jget_note(&n, "same");
	jget_note(&n, "same");
	cr_assert_eq(n.n, 1, "a field read twice is one note");
}
