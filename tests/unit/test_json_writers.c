/* SPDX-License-Identifier: Apache-2.0 */
/* Every JSON writer, fed hostile strings (quotes, backslashes, control
 * characters, DEL, invalid UTF-8, "</script>"), must print JSON that json-c
 * parses back to the same strings. */
#include <criterion/criterion.h>
#include <json-c/json.h>

#include "forensics/recorder.h"
#include "inspect/jvm.h"
#include "kernel/kmsg.h"
#include "base/strbuf.h"

/* Each fits the smallest field it is put in (39 bytes). */
static const char *const hostile[] = {
	"q\"uote\\back\\\"",
	"\x01\x02\x1f\n\r\t\b\f\x7f end",
	"bad \xff\xfe utf8 \xc3( \xe2\x82",
	"</script><!-- /slash//",
	"\"}],\"injected\":{\"x\":[\"",
	"",
};

static struct json_object *parse(const struct strbuf *sb)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	cr_assert_not_null(tok);
	o = json_tokener_parse_ex(tok, sb->buf, (int)sb->len);
	cr_assert_eq(json_tokener_get_error(tok), json_tokener_success,
		     "not JSON: %s", sb->buf);
	cr_assert_eq(json_tokener_get_parse_end(tok), sb->len,
		     "trailing text: %s", sb->buf);
	json_tokener_free(tok);
	return o;
}

static const char *str_at(struct json_object *o, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o,
						      (size_t)(key[0] - '0'));
		else
			cr_assert(json_object_object_get_ex(o, key, &o), "%s",
				  key);
		path = dot + 1;
	}
	cr_assert(json_object_object_get_ex(o, path, &o), "%s", path);
	return json_object_get_string(o);
}

Test(json_writers, jvm_nmt_category_names)
{
	static struct jvm_nmt n;

	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct json_object *o;

		memset(&n, 0, sizeof(n));
		n.enabled = true;
		n.n_categories = 1;
		n.categories[0].threads = -1;
		snprintf(n.categories[0].name, sizeof(n.categories[0].name),
			 "%s", hostile[i]);
		cr_assert_eq(jvm_nmt_to_json(&n, &sb), 0);
		o = parse(&sb);
		cr_assert_str_eq(str_at(o, "categories.0.name"), hostile[i]);
		cr_assert_null(strchr(sb.buf, '\n'), "one line");
		json_object_put(o);
	}
}

Test(json_writers, jvm_heap_and_trim_strings)
{
	static struct jvm_heap_info hi;

	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct jvm_trim_result t = {0};
		struct json_object *o;

		memset(&hi, 0, sizeof(hi));
		hi.n_spaces = 1;
		snprintf(hi.collector, sizeof(hi.collector), "%.15s",
			 hostile[i]);
		snprintf(hi.spaces[0].name, sizeof(hi.spaces[0].name), "%s",
			 hostile[i]);
		cr_assert_eq(jvm_heap_info_to_json(&hi, &sb), 0);
		o = parse(&sb);
		cr_assert_str_eq(str_at(o, "collector"), hi.collector);
		cr_assert_str_eq(str_at(o, "spaces.0.name"), hostile[i]);
		json_object_put(o);

		strbuf_reset(&sb);
		snprintf(t.command, sizeof(t.command), "%.31s", hostile[i]);
		snprintf(t.output, sizeof(t.output), "%s", hostile[i]);
		cr_assert_eq(jvm_trim_to_json(&t, &sb), 0);
		o = parse(&sb);
		cr_assert_str_eq(str_at(o, "command"), t.command);
		cr_assert_str_eq(str_at(o, "output"), hostile[i]);
		json_object_put(o);
	}
}

Test(json_writers, recorder_timeline_strings)
{
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct recorder r;
		struct rec_proc_sample p = {.pid = 7, .rss_kb = 1};
		struct rec_sample s = {.t_us = 1000,
				       .usage = 1,
				       .limit = 2,
				       .procs = &p,
				       .n_procs = 1};
		struct json_object *o, *want;

		recorder_init(&r);
		cr_assert_eq(
			recorder_proc_seen(&r, 7, hostile[i], hostile[i], 1),
			0);
		cr_assert_eq(recorder_add(&r, &s), 0);
		cr_assert_eq(recorder_note_snapshot(&r, 2000, 1, hostile[i],
						    hostile[i], 1, 2),
			     0);
		cr_assert_eq(recorder_note_trim(&r, 3000, 7, hostile[i], 5, 4),
			     0);
		cr_assert_eq(recorder_note_event(&r, 4000, hostile[i], 7,
						 hostile[i]),
			     0);
		strbuf_init(&sb, 1u << 20);
		cr_assert_eq(recorder_timeline_write(&r, hostile[i], 250, &sb),
			     0);
		o = parse(&sb);
		cr_assert_str_eq(str_at(o, "cgroup"), hostile[i]);
		cr_assert_str_eq(str_at(o, "processes.0.name"), hostile[i]);
		cr_assert_str_eq(str_at(o, "processes.0.cmdline"), hostile[i]);
		cr_assert_str_eq(str_at(o, "snapshots.0.reason"), hostile[i]);
		cr_assert_str_eq(str_at(o, "snapshots.0.dir"), hostile[i]);
		cr_assert_str_eq(str_at(o, "trims.0.command"), hostile[i]);
		cr_assert_str_eq(str_at(o, "events.0.text"), hostile[i]);
		want = recorder_timeline_json(&r, hostile[i], 250);
		cr_assert(json_object_equal(o, want));
		/* streamed, escaped byte for byte as json-c escapes */
		cr_assert_str_eq(
			sb.buf,
			json_object_to_json_string_ext(
				want, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(want);
		json_object_put(o);
		recorder_release(&r);
	}
}

/* The kernel report keeps valid UTF-8 as it is and writes other bytes as
 * "\xNN" text, as the kernel would print them. */
Test(json_writers, kmsg_victim_comm)
{
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct kmsg_victim v = {.pid = 7};
		struct json_object *jo = NULL, *o;
		const char *text;

		snprintf(v.comm, sizeof(v.comm), "%s", hostile[i]);
		jo = kmsg_victim_to_json(&v);
		cr_assert_not_null(jo);
		text = json_object_to_json_string_ext(jo,
						      JSON_C_TO_STRING_PLAIN);
		strbuf_init(&sb, 1u << 20);
		cr_assert_eq(strbuf_adds(&sb, text), 0);
		o = parse(&sb);
		if (i == 2) /* the invalid UTF-8 one */
			cr_assert(strstr(str_at(o, "comm"), "\\xff"), "%s",
				  str_at(o, "comm"));
		else
			cr_assert_str_eq(str_at(o, "comm"), v.comm);
		json_object_put(o);
		json_object_put(jo);
	}
}
