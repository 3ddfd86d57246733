/* SPDX-License-Identifier: Apache-2.0 */
/* Typed json-c accessors: a wrong type is absent and noted, never an
 * abort, never a silent conversion. */
#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

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

/* n copies of unit as a JSON array's elements, NUL-terminated. */
static char *repeat(const char *unit, size_t n, size_t *ret_len)
{
	size_t ul = strlen(unit), k = 0;
	char *b = malloc(n * (ul + 1) + 3);

	cr_assert(b);
	b[k++] = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(b + k, unit, ul);
		k += ul;
		b[k++] = ',';
	}
	b[k - 1] = ']';
	b[k] = '\0';
	*ret_len = k;
	return b;
}

/* The estimate against what json-c's parse really allocates (glibc's
 * count of bytes in use), shape by shape: never below, at most twice. */
Test(jget, tree_cost_bounds_what_the_parse_allocates)
{
	static const char *const units[] = {
		"{}",
		"[]",
		"0",
		"\"\"",
		"{\"a\":0}",
		"[1,2,3,4,5,6,7,8]",
		"\"with \\\"quotes\\\" and \\\\ \\u00e9\"",
		"{\"name\":\"V1\",\"value\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
		"{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":"
		"6,"
		"\"k7\":7,\"k8\":8,\"k9\":9,\"ka\":10,\"kb\":11,\"kc\":12,"
		"\"kd\":13,\"ke\":14,\"kf\":15,\"kg\":16,\"kh\":17,\"ki\":18}",
	};
#if defined(__SANITIZE_ADDRESS__)
	cr_skip_test("the sanitizer's allocator keeps no mallinfo2 count");
#endif
	for (size_t u = 0; u < sizeof(units) / sizeof(*units); u++) {
		size_t len;
		char *text = repeat(units[u], 20000, &len);
		struct mallinfo2 before = mallinfo2(), after;
		struct json_object *o = json_tokener_parse(text);
		uint64_t used, est = jget_tree_cost(text, len);

		after = mallinfo2();
		cr_assert(o, "%s", units[u]);
		used = after.uordblks - before.uordblks;
		cr_expect_geq(est, used, "%s: %lu estimated, %lu used",
			      units[u], (unsigned long)est,
			      (unsigned long)used);
		cr_expect_leq(est, 2 * used, "%s: %lu estimated, %lu used",
			      units[u], (unsigned long)est,
			      (unsigned long)used);
		json_object_put(o);
		free(text);
	}
	cr_assert_eq(jget_tree_cost("", 0), 0);
	cr_assert_eq(jget_tree_cost("{}", 2), JGET_COST_OBJECT);
	/* a quote escaped in a string does not end it */
	cr_assert_eq(jget_tree_cost("\"\\\"{\"", 5), JGET_COST_VALUE + 4);
}

static int scan(const char *text, const char *const *path, char *out, size_t n)
{
	return jget_scan_str(text, strlen(text), path, out, n);
}

/* A string read from the text without its tree: by member names level by
 * level, never fooled by a name inside a string or at another level. */
Test(jget, scan_str_finds_a_member_by_path_in_the_text)
{
	static const char *const uid[] = {"request", "uid", NULL};
	static const char *const top[] = {"uid", NULL};
	char out[16];

	cr_assert_eq(
		scan(" {\"apiVersion\":\"v1\",\"request\" : {\"kind\":"
		     "{\"kind\":\"Pod\",\"uid\":\"no\"},\"list\":[{\"uid\":"
		     "\"no\"},[1,2,{}],true,null,-1.5e3],\"uid\":\"u-1\"}}",
		     uid, out, sizeof(out)),
		0);
	cr_assert_str_eq(out, "u-1");
	cr_assert_eq(scan("{\"a\":\"\\\"uid\\\":\\\"x\\\"\",\"x\":{\"uid\":"
			  "\"no\"},\"uid\":\"yes\",\"uid\":\"second\"}",
			  top, out, sizeof(out)),
		     0);
	cr_assert_str_eq(out, "yes");
	/* what stops it: no such member, a number, an escape, too long */
	cr_assert_eq(scan("{\"request\":{}}", uid, out, sizeof(out)), -ENOENT);
	cr_assert_eq(scan("{\"request\":\"uid\"}", uid, out, sizeof(out)),
		     -ENOENT);
	cr_assert_eq(scan("{\"uid\":5}", top, out, sizeof(out)), -ENOENT);
	cr_assert_eq(scan("{\"uid\":\"a\\\"b\"}", top, out, sizeof(out)),
		     -ENOENT);
	cr_assert_eq(scan("[\"uid\"]", top, out, sizeof(out)), -ENOENT);
	cr_assert_eq(
		scan("{\"uid\":\"0123456789abcdef\"}", top, out, sizeof(out)),
		-E2BIG);
	/* a broken text before it, or nesting past 64 */
	cr_assert_eq(scan("{\"a\":[1,2}", top, out, sizeof(out)), -EBADMSG);
	cr_assert_eq(scan("{\"a\" 1,\"uid\":\"x\"}", top, out, sizeof(out)),
		     -EBADMSG);
	cr_assert_eq(scan("{\"a\":\"unterminated", top, out, sizeof(out)),
		     -EBADMSG);
	size_t len = 100000;
	char *text = malloc(len + 5);
	memcpy(text, "{\"a\":", 5);
	memset(text + 5, '[', len);
	cr_assert_eq(jget_scan_str(text, len + 5, top, out, sizeof(out)),
		     -ELOOP);
	free(text);
	/* only as far as the string: what follows it is not read */
	cr_assert_eq(scan("{\"uid\":\"x\", garbage", top, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "x");
}

#define EACH(n, text, ...) jget_scan_each(n, text, strlen(text), __VA_ARGS__)

struct spans {
	char text[4][32];
	int n, stop_at;
};

static int take_span(const char *elem, size_t len, void *ud)
{
	struct spans *s = ud;

	if (s->n == s->stop_at)
		return -ECANCELED;
	snprintf(s->text[s->n++ % 4], sizeof(s->text[0]), "%.*s", (int)len,
		 elem);
	return 0;
}

Test(jget, scan_each_gives_each_element_of_the_array_at_a_path)
{
	static const char t[] = "{\"a\":[9],\"x\":{\"list\": [ {\"k\":[1,2]} ,"
				"\"s]\" , 3 ,null]},\"list\":[7]}";
	static const char *const path[] = {"x", "list", NULL};
	static const char *const top[] = {"list", NULL};
	static const char *const a[] = {"a", NULL};
	struct spans s = {.stop_at = -1};
	struct jget_notes n = {0};

	cr_assert_eq(jget_scan_each(&n, t, strlen(t), path, take_span, &s), 4);
	cr_assert_str_eq(s.text[0], "{\"k\":[1,2]}");
	cr_assert_str_eq(s.text[1], "\"s]\"");
	cr_assert_str_eq(s.text[2], "3");
	cr_assert_str_eq(s.text[3], "null");
	s = (struct spans){.stop_at = -1};
	cr_assert_eq(jget_scan_each(&n, t, strlen(t), top, take_span, &s), 1);
	cr_assert_str_eq(s.text[0], "7");
	/* fn's error stops the walk */
	s = (struct spans){.stop_at = 1};
	cr_assert_eq(jget_scan_each(&n, t, strlen(t), path, take_span, &s),
		     -ECANCELED);
	cr_assert_eq(s.n, 1);
	/* empty, absent, null: 0 and no note; another type: noted */
	cr_assert_eq(EACH(&n, "{\"a\":[]}", a, take_span, &s), 0);
	cr_assert_eq(EACH(&n, "{\"b\":[1]}", a, take_span, &s), 0);
	cr_assert_eq(EACH(&n, "{\"a\":null}", a, take_span, &s), 0);
	cr_assert_eq(n.n, 0);
	jget_where(&n, "timeline.json");
	cr_assert_eq(EACH(&n, "{\"a\":{\"x\":1}}", a, take_span, &s), 0);
	cr_assert_str_eq(n.text[0], "timeline.json: \"a\" is an object, not "
				    "an array: ignored");
	/* broken: the elements before the break were given */
	s = (struct spans){.stop_at = -1};
	cr_assert_eq(EACH(&n, "{\"a\":[1,2,{\"b\"", a, take_span, &s),
		     -EBADMSG);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(EACH(&n, "{\"a\":[1 2]}", a, take_span, &s), -EBADMSG);
	cr_assert_eq(EACH(&n, "[1]", a, take_span, &s), -EBADMSG);
}
