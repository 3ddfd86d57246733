/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <stdarg.h>
#include <time.h>

#include "base/log.h"
#include "base/strbuf.h"

static enum log_level log_max = LOG_INFO;
static bool log_json;
static const char *log_prog = "oomlens";

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_level(enum log_level level)
{
	log_max = level;
}

void log_set_json(bool json)
{
	log_json = json;
}

void log_set_program(const char *name)
{
	log_prog = name;
}

int log_parse_level(const char *s, enum log_level *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (streq(s, level_names[i])) {
			*ret = (enum log_level)i;
			return 0;
		}
	return -EINVAL;
}

const char *log_level_name(enum log_level level)
{
	return level_names[level];
}

void log_emit(enum log_level level, const char *fmt, ...)
{
	struct strbuf msg, line;
	char ts[40];
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (level > log_max)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);

	strbuf_init(&msg, 16384);
	strbuf_init(&line, 32768);
	va_start(ap, fmt);
	(void)strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	if (log_json) {
		struct json_object *o = json_object_new_object();
		char stamp[sizeof(ts) + 24];

		snprintf(stamp, sizeof(stamp), "%s.%03ldZ", ts,
			 now.tv_nsec / 1000000);
		json_object_object_add(o, "ts", json_object_new_string(stamp));
		json_object_object_add(
			o, "level", json_object_new_string(level_names[level]));
		json_object_object_add(o, "prog",
				       json_object_new_string(log_prog));
		json_object_object_add(
			o, "msg",
			json_object_new_string_len(msg.buf, (int)msg.len));
		(void)strbuf_adds(
			&line,
			json_object_to_json_string_ext(
				o, JSON_C_TO_STRING_PLAIN |
					   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		/* logfmt: the message quoted as a JSON string is a valid
		 * logfmt value */
		(void)strbuf_addf(
			&line, "ts=%s.%03ldZ level=%s prog=%s msg=", ts,
			now.tv_nsec / 1000000, level_names[level], log_prog);
		(void)strbuf_add_json_str(&line, msg.buf, msg.len);
	}
	(void)strbuf_adds(&line, "\n");
	fputs(line.buf, stderr);
	strbuf_release(&msg);
	strbuf_release(&line);
}
