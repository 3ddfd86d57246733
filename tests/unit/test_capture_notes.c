/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <linux/capability.h>
#include <string.h>

#include "base/jget.h"
#include "base/util.h"
#include "forensics/capture.h"

Test(capture_notes, pod_security_takes_the_three_levels_only)
{
	static const char *const good[] = {"privileged", "baseline",
					   "restricted"};
	static const char *const bad[] = {"Baseline", "baseline ",
					  "restricted\n", "priv", "none"};
	const char *lvl = "untouched";

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		cr_assert_eq(capture_parse_pod_security(good[i], &lvl), 0);
		cr_assert_str_eq(lvl, good[i]);
	}
	lvl = "untouched";
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_assert_eq(capture_parse_pod_security(bad[i], &lvl), -EINVAL,
			     "%s", bad[i]);
	cr_assert_eq(capture_parse_pod_security("", &lvl), -ENOENT);
	cr_assert_eq(capture_parse_pod_security(NULL, &lvl), -ENOENT);
	cr_assert_str_eq(lvl, "untouched");
}

/* One entry per (what, pid), the first why kept; past the bound only
 * counted. */
Test(capture_notes, misses_are_deduplicated_and_bounded)
{
	struct capture_notes c;
	char what[16];

	capture_init(&c);
	cr_assert(capture_note(&c, "smaps", 12, "uid 0 differs"));
	cr_assert_not(capture_note(&c, "smaps", 12, "another why"));
	cr_assert(capture_note(&c, "smaps", 13, "uid 0 differs"));
	cr_assert(capture_note(&c, "jvm attach", 12, "x"));
	cr_assert_not(capture_note(&c, "", 1, "no what"));
	cr_assert_eq(c.n, 3);
	cr_assert_str_eq(c.miss[0].why, "uid 0 differs");
	for (int i = 0; c.n < CAPTURE_MAX_MISSES; i++) {
		snprintf(what, sizeof(what), "w%d", i);
		cr_assert(capture_note(&c, what, 0, "y"));
	}
	cr_assert_eq(c.more, 0);
	cr_assert(capture_note(&c, "one more", 0, "y"));
	cr_assert(capture_note(&c, "and another", 7, "y"));
	cr_assert_eq(c.n, CAPTURE_MAX_MISSES);
	cr_assert_eq(c.more, 2);
}

Test(capture_notes, capabilities_by_their_kubernetes_names)
{
	struct capture_notes c;

	capture_init(&c);
	capture_set_caps(&c, (UINT64_C(1) << CAP_SETUID) |
				     (UINT64_C(1) << CAP_SETGID) |
				     (UINT64_C(1) << CAP_KILL) |
				     (UINT64_C(1) << CAP_SYS_PTRACE));
	cr_assert_eq(c.n_caps, 4);
	cr_assert_str_eq(c.caps[0], "KILL");
	cr_assert_str_eq(c.caps[1], "SETGID");
	cr_assert_str_eq(c.caps[2], "SETUID");
	cr_assert_str_eq(c.caps[3], "SYS_PTRACE");
	capture_set_caps(&c, 0);
	cr_assert_eq(c.n_caps, 0);
}

/* What the sidecar writes, the agent reads back unchanged. */
Test(capture_notes, json_round_trip)
{
	struct capture_notes c, back;
	struct json_object *o;
	const char *s;

	capture_init(&c);
	strlcpy_safe(c.pod_security, "baseline", sizeof(c.pod_security));
	c.have_ids = true;
	c.uid = 1000;
	c.gid = 0;
	capture_set_caps(&c, UINT64_C(1) << CAP_KILL);
	capture_note(&c, "smaps", 12, "permission denied: gid 0 differs");
	capture_note(&c, "allocator probe", 0, "off in pod mode");
	c.more = 3;
	o = capture_to_json(&c);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	cr_assert_str_eq(s, "{\"pod_security\":\"baseline\",\"uid\":1000,"
			    "\"gid\":0,\"capabilities\":[\"KILL\"],"
			    "\"not_captured\":[{\"what\":\"smaps\",\"pid\":12,"
			    "\"why\":\"permission denied: gid 0 differs\"},"
			    "{\"what\":\"allocator probe\",\"why\":\"off in "
			    "pod mode\"}],\"not_captured_more\":3}");
	cr_assert_eq(capture_from_json(o, NULL, &back), 0);
	cr_assert_eq(memcmp(&c, &back, sizeof(c)), 0);
	json_object_put(o);
	capture_init(&c);
	o = capture_to_json(&c);
	cr_assert_str_eq(
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
		"{\"pod_security\":null,\"capabilities\":[],"
		"\"not_captured\":[],\"not_captured_more\":0}");
	json_object_put(o);
}

/* A pod's spool is untrusted: wrong types are noted and left out, an
 * unknown level and odd capability names dropped, strings cut, entries
 * bounded and the rest counted. */
Test(capture_notes, a_hostile_section_is_read_within_bounds)
{
	struct json_object *o = json_object_new_object();
	struct json_object *caps = json_object_new_array();
	struct json_object *miss = json_object_new_array();
	struct jget_notes n = {0};
	struct capture_notes c;
	char longwhy[1000];

	memset(longwhy, 'x', sizeof(longwhy) - 1);
	longwhy[sizeof(longwhy) - 1] = '\0';
	json_object_object_add(o, "pod_security",
			       json_object_new_string("root"));
	json_object_object_add(o, "uid", json_object_new_string("0"));
	json_object_object_add(o, "gid", json_object_new_int(5));
	json_object_array_add(caps, json_object_new_string("SETUID"));
	json_object_array_add(caps, json_object_new_string("<b>x</b>"));
	json_object_array_add(caps, json_object_new_int(7));
	json_object_object_add(o, "capabilities", caps);
	for (int i = 0; i < 40; i++) {
		struct json_object *e = json_object_new_object();
		char what[16];

		snprintf(what, sizeof(what), "w%d", i);
		json_object_object_add(e, "what", json_object_new_string(what));
		json_object_object_add(e, "pid", json_object_new_int(i));
		json_object_object_add(e, "why",
				       json_object_new_string(longwhy));
		json_object_array_add(miss, e);
	}
	json_object_array_add(miss, json_object_new_string("not an object"));
	json_object_object_add(o, "not_captured", miss);
	json_object_object_add(o, "not_captured_more", json_object_new_int(-4));
	cr_assert_eq(capture_from_json(o, &n, &c), 0);
	cr_assert_str_eq(c.pod_security, "");
	cr_assert_not(c.have_ids); /* uid was a string */
	cr_assert_eq(c.n_caps, 1);
	cr_assert_str_eq(c.caps[0], "SETUID");
	cr_assert_eq(c.n, CAPTURE_MAX_MISSES);
	cr_assert_eq(c.more, 40 - CAPTURE_MAX_MISSES);
	cr_assert_eq(strlen(c.miss[0].why), CAPTURE_WHY_MAX - 1);
	cr_assert_gt(n.n, 0);
	json_object_put(o);
	cr_assert_eq(capture_from_json(NULL, NULL, &c), -ENOENT);
	cr_assert_eq(c.n, 0);
}
