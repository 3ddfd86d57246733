/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <json-c/json.h>
#include <stdio.h>

#include "base/log.h"

static void capture(void)
{
	cr_redirect_stderr();
}

/* A message with quotes, a newline, a tab and a control character comes
 * out as one JSON object per line that json-c reads back whole. */
Test(log, json_line_is_one_valid_object, .init = capture)
{
	char line[1024] = "";
	struct json_object *o, *v;
	FILE *f;

	log_set_program("oomlens-test");
	log_set_json(true);
	log_set_level(LOG_INFO);
	log_emit(LOG_WARN, "cgroup \"%s\"\n\tgone\x01", "/a\\b");
	log_emit(LOG_DEBUG, "not printed");
	fflush(stderr);
	f = cr_get_redirected_stderr();
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert_null(fgets(line + strlen(line), 2, f), "one line only");
	o = json_tokener_parse(line);
	cr_assert_not_null(o, "not JSON: %s", line);
	cr_assert(json_object_object_get_ex(o, "msg", &v));
	cr_assert_str_eq(json_object_get_string(v),
			 "cgroup \"/a\\b\"\n\tgone\x01");
	cr_assert(json_object_object_get_ex(o, "level", &v));
	cr_assert_str_eq(json_object_get_string(v), "warn");
	cr_assert(json_object_object_get_ex(o, "prog", &v));
	cr_assert_str_eq(json_object_get_string(v), "oomlens-test");
	json_object_put(o);
}

Test(log, logfmt_quotes_the_message, .init = capture)
{
	char line[256] = "";
	const char *msg;
	FILE *f;

	log_set_program("p");
	log_set_json(false);
	log_set_level(LOG_DEBUG);
	log_emit(LOG_DEBUG, "a \"b\"\nc");
	fflush(stderr);
	f = cr_get_redirected_stderr();
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert_eq(strncmp(line, "ts=", 3), 0, "%s", line);
	msg = strstr(line, " level=debug prog=p msg=");
	cr_assert_not_null(msg, "%s", line);
	cr_assert_str_eq(msg, " level=debug prog=p msg=\"a \\\"b\\\"\\nc\"\n");
}

Test(log, level_names_parse_back)
{
	enum log_level got;

	cr_expect_str_eq(log_level_name(LOG_INFO), "info");
	cr_expect_str_eq(log_level_name(LOG_DEBUG), "debug");
	for (int l = LOG_ERROR; l <= LOG_DEBUG; l++) {
		cr_assert_eq(log_parse_level(log_level_name(l), &got), 0);
		cr_expect_eq(got, (enum log_level)l);
	}
}
