/* SPDX-License-Identifier: Apache-2.0 */
/* Typed json-c accessors: a wrong type is absent, and noted. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

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

uint64_t jget_tree_cost(const char *buf, size_t len)
{
	uint64_t cost = 0;
	bool in_str = false, in_scalar = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (in_str) {
			cost++;
			if (c == '\\')
				i++, cost++;
			else if (c == '"')
				in_str = false;
			continue;
		}
		switch (c) {
		case '"':
			cost += JGET_COST_VALUE;
			in_str = true;
			in_scalar = false;
			break;
		case '{':
			cost += JGET_COST_OBJECT;
			in_scalar = false;
			break;
		case '[':
			cost += JGET_COST_ARRAY;
			in_scalar = false;
			break;
		case '}':
		case ']':
		case ',':
		case ':':
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			in_scalar = false;
			break;
		default:
			if (!in_scalar)
				cost += JGET_COST_VALUE;
			in_scalar = true;
		}
	}
	return cost;
}

/* jget_scan_str's reader: where it is in the text, how deep. */
struct jscan {
	const char *s;
	size_t n, i;
	unsigned depth;
};

#define JSCAN_MAX_DEPTH 64

static void jscan_ws(struct jscan *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' ||
			       j->s[j->i] == '\n' || j->s[j->i] == '\r'))
		j->i++;
}

/* A string at j->i (its opening quote): its bytes between the quotes, and
 * whether any was escaped. */
static int jscan_string(struct jscan *j, const char **ret, size_t *ret_len,
			bool *ret_escaped)
{
	size_t start;

	if (j->i >= j->n || j->s[j->i] != '"')
		return -EBADMSG;
	start = ++j->i;
	*ret_escaped = false;
	for (; j->i < j->n; j->i++) {
		if (j->s[j->i] == '\\') {
			*ret_escaped = true;
			j->i++;
		} else if (j->s[j->i] == '"') {
			*ret = j->s + start;
			*ret_len = j->i++ - start;
			return 0;
		}
	}
	return -EBADMSG;
}

static int jscan_skip(struct jscan *j);

/* Through an object or array at j->i; with want (objects only), stops at
 * the value of the member named want[0] and, when want has more names,
 * goes on into it. 1: found, j->i at the value; 0: not there. */
static int jscan_container(struct jscan *j, const char *const *want)
{
	char close = j->s[j->i] == '{' ? '}' : ']';
	bool first = true;
	int r;

	if (++j->depth > JSCAN_MAX_DEPTH)
		return -ELOOP;
	for (j->i++;; first = false) {
		const char *key = NULL;
		size_t klen = 0;
		bool esc;

		jscan_ws(j);
		if (j->i < j->n && j->s[j->i] == close && first)
			break;
		if (close == '}') {
			if ((r = jscan_string(j, &key, &klen, &esc)) < 0)
				return r;
			jscan_ws(j);
			if (j->i >= j->n || j->s[j->i++] != ':')
				return -EBADMSG;
			jscan_ws(j);
			if (want && *want && !esc && strlen(*want) == klen &&
			    memcmp(*want, key, klen) == 0) {
				if (!want[1])
					return 1;
				if (j->i >= j->n || j->s[j->i] != '{')
					return 0;
				return jscan_container(j, want + 1);
			}
		}
		if ((r = jscan_skip(j)) < 0)
			return r;
		jscan_ws(j);
		if (j->i < j->n && j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->i < j->n && j->s[j->i] == close)
			break;
		return -EBADMSG;
	}
	j->i++;
	j->depth--;
	return 0;
}

static int jscan_skip(struct jscan *j)
{
	const char *s;
	size_t len;
	bool esc;
	int r;

	if (j->i >= j->n)
		return -EBADMSG;
	switch (j->s[j->i]) {
	case '"':
		return jscan_string(j, &s, &len, &esc);
	case '{':
	case '[':
		r = jscan_container(j, NULL);
		return r < 0 ? r : 0;
	default:
		len = j->i;
		while (j->i < j->n && strchr(",]} \t\r\n", j->s[j->i]) == NULL)
			j->i++;
		return j->i > len ? 0 : -EBADMSG;
	}
}

struct json_object *jget_parse_object(const char *text, size_t len,
				      uint64_t max_cost)
{
	struct json_tokener *tok;
	struct json_object *o;

	if (!len || text[0] != '{' || len > INT32_MAX ||
	    jget_tree_cost(text, len) > max_cost || !(tok = json_tokener_new()))
		return NULL;
	o = json_tokener_parse_ex(tok, text, (int)len);
	json_tokener_free(tok);
	return o;
}

static const char *last_name(const char *const *path)
{
	while (path[1])
		path++;
	return *path;
}

/* The JSON type of the value starting at c, as type_name() says it. */
static const char *kind_at(char c)
{
	return c == '{'		      ? "an object"
	       : c == '"'	      ? "a string"
	       : c == 't' || c == 'f' ? "a boolean"
	       : c == 'n'	      ? "null"
	       : c == '-'	      ? "a negative number"
				      : "a number";
}

int jget_scan_each(struct jget_notes *n, const char *buf, size_t len,
		   const char *const *path,
		   int (*fn)(const char *elem, size_t elem_len, void *ud),
		   void *ud)
{
	struct jscan j = {.s = buf, .n = len};
	int r, count = 0;

	jscan_ws(&j);
	if (!path[0] || j.i >= j.n || buf[j.i] != '{')
		return j.i < j.n && path[0] ? -EBADMSG : 0;
	r = jscan_container(&j, path);
	if (r <= 0)
		return r;
	if (buf[j.i] != '[') {
		if (buf[j.i] != 'n') /* null is absent */
			jget_note(n, "\"%.40s\" is %s, not an array: ignored",
				  last_name(path), kind_at(buf[j.i]));
		return 0;
	}
	j.i++;
	for (;;) {
		size_t start;

		jscan_ws(&j);
		if (j.i < j.n && buf[j.i] == ']' && !count)
			return 0;
		start = j.i;
		if ((r = jscan_skip(&j)) < 0)
			return r;
		if ((r = fn(buf + start, j.i - start, ud)) < 0)
			return r;
		count++;
		jscan_ws(&j);
		if (j.i < j.n && buf[j.i] == ',') {
			j.i++;
			continue;
		}
		return j.i < j.n && buf[j.i] == ']' ? count : -EBADMSG;
	}
}

int jget_scan_str(const char *buf, size_t len, const char *const *path,
		  char *ret, size_t size)
{
	struct jscan j = {.s = buf, .n = len};
	const char *s;
	size_t n;
	bool esc;
	int r;

	jscan_ws(&j);
	if (!path[0] || j.i >= j.n || buf[j.i] != '{')
		return -ENOENT;
	r = jscan_container(&j, path);
	if (r < 0)
		return r;
	if (r == 0 || jscan_string(&j, &s, &n, &esc) < 0 || esc)
		return -ENOENT;
	if (n >= size || memchr(s, '\0', n))
		return -E2BIG;
	memcpy(ret, s, n);
	ret[n] = '\0';
	return 0;
}
