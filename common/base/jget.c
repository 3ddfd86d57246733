/* SPDX-License-Identifier: Apache-2.0 */
/* Typed json-c accessors: a wrong type is absent, and noted. */
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>

#include "base/jget.h"
#include "base/util.h"

void jget_note(struct jget_notes *n, const char *fmt, ...)
{
	char *t;
	size_t len = 0;
	va_list ap;

	if (!n)
		return;
	if (n->n == JGET_NOTES_MAX) {
		n->more++;
		return;
	}
	t = n->text[n->n++];
	if (n->where[0]) { /* "<where>: ", where at most 64 bytes */
		len = strnlen(n->where, 64);
		memcpy(t, n->where, len);
		memcpy(t + len, ": ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(t + len, JGET_NOTE_LEN - len, fmt, ap);
	va_end(ap);
	/* keys and file names come from the input: no terminal escapes */
	for (char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	/* a field read twice (the page and the text) is one note */
	for (size_t i = 0; i + 1 < n->n; i++)
		if (streq(n->text[i], t)) {
			n->n--;
			break;
		}
}

void jget_where(struct jget_notes *n, const char *where)
{
	if (n)
		snprintf(n->where, sizeof(n->where), "%s", where ? where : "");
}

static const char *type_name(const struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
		return "a fractional number";
	case json_type_int:
		return json_object_get_int64(v) < 0 ? "a negative number"
						    : "a number";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	default:
		return "null";
	}
}

/* Notes that key held v where want was expected; returns NULL. */
static void *wrong(struct jget_notes *n, const char *key,
		   const struct json_object *v, const char *want)
{
	/* keys come from the input too: keep a note one line */
	jget_note(n, "\"%.40s\" is %s, not %s: ignored", key, type_name(v),
		  want);
	return NULL;
}

struct json_object *jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !key || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v; /* NULL for JSON null */
}

static struct json_object *typed(struct jget_notes *n, struct json_object *o,
				 const char *key, enum json_type t,
				 const char *want)
{
	struct json_object *v = jget(o, key);

	if (!v || json_object_is_type(v, t))
		return v;
	return wrong(n, key, v, want);
}

struct json_object *jget_obj(struct jget_notes *n, struct json_object *o,
			     const char *key)
{
	return typed(n, o, key, json_type_object, "an object");
}

struct json_object *jget_array(struct jget_notes *n, struct json_object *o,
			       const char *key)
{
	return typed(n, o, key, json_type_array, "an array");
}

const char *jget_str(struct jget_notes *n, struct json_object *o,
		     const char *key)
{
	struct json_object *v = typed(n, o, key, json_type_string, "a string");

	return v ? json_object_get_string(v) : NULL;
}

/* An integer ≥ 0, including json-c's unsigned values above INT64_MAX. */
static bool as_u64(struct json_object *v, uint64_t *ret)
{
	int64_t s;

	if (!json_object_is_type(v, json_type_int))
		return false;
	s = json_object_get_int64(v);
	if (s < 0)
		return false;
	*ret = s == INT64_MAX ? json_object_get_uint64(v) : (uint64_t)s;
	return true;
}

bool jget_u64(struct jget_notes *n, struct json_object *o, const char *key,
	      uint64_t *ret)
{
	struct json_object *v = jget(o, key);

	if (!v)
		return false;
	if (as_u64(v, ret))
		return true;
	wrong(n, key, v, "a number ≥ 0");
	return false;
}

uint64_t jget_u64_or0(struct jget_notes *n, struct json_object *o,
		      const char *key)
{
	uint64_t v = 0;

	return jget_u64(n, o, key, &v) ? v : 0;
}

bool jget_int(struct jget_notes *n, struct json_object *o, const char *key,
	      int *ret)
{
	struct json_object *v = jget(o, key);
	int64_t s;

	if (!v)
		return false;
	if (json_object_is_type(v, json_type_int)) {
		s = json_object_get_int64(v);
		if (s >= INT32_MIN && s <= INT32_MAX) {
			*ret = (int)s;
			return true;
		}
	}
	wrong(n, key, v, "an integer");
	return false;
}

bool jget_double(struct jget_notes *n, struct json_object *o, const char *key,
		 double *ret)
{
	struct json_object *v = jget(o, key);
	double d;

	if (!v)
		return false;
	if (json_object_is_type(v, json_type_int) ||
	    json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
		if (isfinite(d)) {
			*ret = d;
			return true;
		}
	}
	wrong(n, key, v, "a number");
	return false;
}

bool jget_bool(struct jget_notes *n, struct json_object *o, const char *key,
	       bool *ret)
{
	struct json_object *v =
		typed(n, o, key, json_type_boolean, "a boolean");

	if (!v)
		return false;
	*ret = json_object_get_boolean(v);
	return true;
}

size_t jget_len(struct json_object *a)
{
	if (!a || !json_object_is_type(a, json_type_array))
		return 0;
	return json_object_array_length(a);
}

struct json_object *jget_idx(struct json_object *a, size_t i)
{
	if (i >= jget_len(a))
		return NULL;
	return json_object_array_get_idx(a, i);
}

const char *jget_idx_str(struct jget_notes *n, struct json_object *a, size_t i)
{
	struct json_object *v = jget_idx(a, i);

	if (!v)
		return NULL;
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	jget_note(n, "an element is %s, not a string: ignored", type_name(v));
	return NULL;
}
