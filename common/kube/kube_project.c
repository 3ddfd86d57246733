/* SPDX-License-Identifier: Apache-2.0 */
/* kube: JSON text to a json-c tree of only the members a reader keeps
 * (struct kube_keep). A strict scanner (RFC 8259, json-c's depth limit)
 * validates every byte and builds what is kept itself, as json-c's
 * tokener would (strings, integers, literals, objects, arrays); json-c's
 * tokener builds the rest (fractions, exponents, long integers). What the
 * scanner does not take as plain JSON is refused, for the caller to hand
 * the whole text to json-c: the answer for such text is json-c's. */
#include <errno.h>
#include <string.h>

#include "kube_scan.h"

/* every member, whole */
const struct kube_keep kube_keep_all[] = {{NULL, NULL, false}};

/* p at a value (blanks before it allowed) inside depth open containers:
 * the end of the value, or NULL when it is not strict JSON or nests
 * deeper than json-c allows. Iterative, its states labels: a nesting bomb
 * costs one pass and no stack. Most of a skipped subtree is short keys
 * and empty objects (managedFields): each token is dispatched on its
 * first byte, blanks looked for only where a token is not. */
const char *kube_scan_skip_value(const char *p, const char *end, unsigned depth)
{
	uint64_t arrays = 0; /* bit i: level i of this value is an array */
	unsigned lvl = 0;
	bool obj = false; /* level lvl is an object */

value:
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		p = skip_string(p + 1, end, NULL);
		if (!p)
			return NULL;
		goto next;
	case '{':
	case '[':
		if (depth + ++lvl > MAX_DEPTH)
			return NULL;
		obj = *p == '{';
		arrays = obj ? arrays & ~(1ull << lvl) : arrays | 1ull << lvl;
		p = skip_ws(p + 1, end);
		if (p < end && *p == (obj ? '}' : ']'))
			goto pop;
		/* what it holds would be deeper than json-c goes */
		if (depth + lvl >= MAX_DEPTH)
			return NULL;
		if (obj)
			goto key;
		goto value;
	case ' ':
	case '\t':
	case '\n':
	case '\r':
		p = skip_ws(p, end);
		goto value;
	}
	p = skip_scalar(p, end);
	if (!p)
		return NULL;
next:
	if (lvl == 0)
		return p;
next_item:
	if (p >= end)
		return NULL;
	if (*p == ',') {
		p++;
		if (obj)
			goto key;
		goto value;
	}
	if (*p == (obj ? '}' : ']'))
		goto pop;
	if (!is_ws(*p))
		return NULL;
	p = skip_ws(p, end);
	goto next_item;
pop:
	p++;
	if (--lvl == 0)
		return p;
	obj = !(arrays >> lvl & 1);
	goto next_item;
key:
	if (p >= end)
		return NULL;
	if (*p != '"') {
		if (!is_ws(*p))
			return NULL;
		p = skip_ws(p, end);
		goto key;
	}
	p = skip_string(p + 1, end, NULL);
	if (p && p < end && *p != ':')
		p = skip_ws(p, end);
	if (!p || p >= end || *p != ':')
		return NULL;
	p++;
	/* {} (managedFields is mostly "f:name":{}) */
	if (end - p >= 2 && p[0] == '{' && p[1] == '}' &&
	    depth + lvl + 1 <= MAX_DEPTH) {
		p += 2;
		goto next_item;
	}
	goto value;
}

static int hex_value(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* The string between p and e (its quotes excluded), escapes checked by
 * skip_string(), decoded into pj->text as json-c decodes it; \u of a
 * surrogate never comes here. */
int kube_scan_unescape(struct kube_scan *pj, const char *p, const char *e)
{
	char *o;

	strbuf_reset(&pj->text);
	if (strbuf_grow(&pj->text, (size_t)(e - p)) < 0)
		return -ENOMEM;
	o = pj->text.buf;
	while (p < e) {
		unsigned cp = 0;

		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		switch (p[1]) {
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			for (int i = 2; i < 6; i++)
				cp = cp << 4 | (unsigned)hex_value(p[i]);
			if (cp < 0x80) {
				*o++ = (char)cp;
			} else if (cp < 0x800) {
				*o++ = (char)(0xc0 | cp >> 6);
				*o++ = (char)(0x80 | (cp & 0x3f));
			} else {
				*o++ = (char)(0xe0 | cp >> 12);
				*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
				*o++ = (char)(0x80 | (cp & 0x3f));
			}
			p += 4;
			break;
		default: /* '"', '\\', '/' */
			*o++ = p[1];
		}
		p += 2;
	}
	*o = '\0';
	pj->text.len = (size_t)(o - pj->text.buf);
	return 0;
}

/* The string at [p, e), quotes included. */
static int string_value(struct kube_scan *pj, const char *p, const char *e,
			bool esc, struct json_object **ret)
{
	struct json_object *o;

	if (esc && kube_scan_unescape(pj, p + 1, e - 1) < 0)
		return -ENOMEM;
	o = esc ? json_object_new_string_len(pj->text.buf, (int)pj->text.len)
		: json_object_new_string_len(p + 1, (int)(e - p - 2));
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

/* The number at [p, e). An integer of up to 18 digits is json-c's int64
 * of it; for the rest (fractions and exponents, kept with their text;
 * what saturates) json-c's tokener is asked. */
static int number_value(struct kube_scan *pj, const char *p, const char *e,
			struct json_object **ret)
{
	struct json_object *o;
	size_t at, n = (size_t)(e - p);
	bool more = e < pj->end;
	int64_t v;

	if (scan_integer(p, e, &v) == 0) {
		o = json_object_new_int64(v);
		if (!o)
			return -ENOMEM;
		*ret = o;
		return 0;
	}
	/* a number ends only at the byte after it, which json-c then reads
	 * too; inside an object there is always one */
	json_tokener_reset(pj->tok);
	o = json_tokener_parse_ex(pj->tok, p, (int)(n + more));
	at = json_tokener_get_parse_end(pj->tok);
	if (!o || (at != n && !(at == n + 1 && more && is_ws(*e)))) {
		json_object_put(o);
		return -EBADMSG;
	}
	*ret = o;
	return 0;
}

static const struct kube_keep *find_keep(const struct kube_keep *keep,
					 const char *key, size_t n)
{
	for (; keep->name; keep++)
		if (keep->name[0] == *key && !strncmp(keep->name, key, n) &&
		    !keep->name[n])
			return keep;
	return NULL;
}

static int project_object(struct kube_scan *pj, const char **pp, unsigned depth,
			  const struct kube_keep *keep,
			  struct json_object **ret);
static int project_array(struct kube_scan *pj, const char **pp, unsigned depth,
			 const struct kube_keep *members,
			 struct json_object **ret);

/* The container o built (r 1) or not (r < 0: dropped). */
static int close_items(struct json_object *o, int r, const char *p,
		       const char **pp, struct json_object **ret)
{
	if (r < 0) {
		json_object_put(o);
		return r;
	}
	*pp = p;
	*ret = o;
	return 0;
}

/* The value at *pp, inside depth containers, built whole; *ret NULL for
 * null, as json-c has it. */
int kube_scan_whole(struct kube_scan *pj, const char **pp, unsigned depth,
		    struct json_object **ret)
{
	const char *p = *pp, *e;
	bool esc = false;
	int r;

	if (p >= pj->end)
		return -EBADMSG;
	if (*p == '{')
		return project_object(pj, pp, depth, kube_keep_all, ret);
	if (*p == '[')
		return project_array(pj, pp, depth, kube_keep_all, ret);
	if (*p == '"')
		e = skip_string(p + 1, pj->end, &esc);
	else
		e = skip_scalar(p, pj->end);
	if (!e)
		return -EBADMSG;
	if (*p == '"')
		r = string_value(pj, p, e, esc, ret);
	else if (*p == 't' || *p == 'f')
		r = (*ret = json_object_new_boolean(*p == 't')) ? 0 : -ENOMEM;
	else if (*p == 'n')
		r = (*ret = NULL, 0);
	else
		r = number_value(pj, p, e, ret);
	if (r == 0)
		*pp = e;
	return r;
}

/* *pp at '[': an array of its elements, each object projected to
 * members, the rest whole. */
static int project_array(struct kube_scan *pj, const char **pp, unsigned depth,
			 const struct kube_keep *members,
			 struct json_object **ret)
{
	struct json_object *a = json_object_new_array(), *v;
	const char *p = *pp;
	int r = a ? kube_scan_open(pj, &p, depth, ']') : -ENOMEM;

	while (r == 0) {
		v = NULL;
		if (p < pj->end && *p == '{')
			r = project_object(pj, &p, depth + 1, members, &v);
		else
			r = kube_scan_whole(pj, &p, depth + 1, &v);
		if (r == 0 && json_object_array_add(a, v) < 0) {
			json_object_put(v);
			r = -ENOMEM;
		}
		if (r == 0)
			r = kube_scan_next(pj, &p, ']');
	}
	return close_items(a, r, p, pp, ret);
}

/* The value at *pp as k keeps it: projected where its type is the one k
 * descends into (an object, or an array for each), else whole. */
static int project_value(struct kube_scan *pj, const char **pp, unsigned depth,
			 const struct kube_keep *k, struct json_object **ret)
{
	const char *p = *pp;

	if (p < pj->end && k->members && !k->each && *p == '{')
		return project_object(pj, pp, depth, k->members, ret);
	if (p < pj->end && k->members && k->each && *p == '[')
		return project_array(pj, pp, depth, k->members, ret);
	return kube_scan_whole(pj, pp, depth, ret);
}

/* Adds v under the key at [key, e) (its closing quote at e - 1): its own
 * copy, unescaped; cut at a NUL, as json-c's tokener cuts keys. */
static int add_copied(struct kube_scan *pj, struct json_object *o,
		      const char *key, const char *e, bool esc,
		      struct json_object *v)
{
	size_t n = (size_t)(e - 1 - key);
	char buf[128];

	if (!esc && n < sizeof(buf)) {
		memcpy(buf, key, n);
		buf[n] = '\0';
		return json_object_object_add(o, buf, v) < 0 ? -ENOMEM : 0;
	}
	if (esc ? kube_scan_unescape(pj, key, e - 1) < 0
		: (strbuf_reset(&pj->text), strbuf_add(&pj->text, key, n) < 0))
		return -ENOMEM;
	return json_object_object_add(o, pj->text.buf, v) < 0 ? -ENOMEM : 0;
}

/* One member at *pp (its key's quote): added to o when kept (keep names
 * it, or keep is kube_keep_all). Elsewhere a key with an escape may be a
 * kept one in disguise: left to json-c. */
static int project_member(struct kube_scan *pj, const char **pp, unsigned depth,
			  const struct kube_keep *keep, struct json_object *o,
			  uint64_t *seen)
{
	const char *key = *pp + 1, *p, *e;
	const struct kube_keep *k = NULL;
	struct json_object *v = NULL;
	bool all = keep == kube_keep_all, esc;
	unsigned flags = JSON_C_OBJECT_ADD_CONSTANT_KEY;
	uint64_t bit;
	int r;

	e = p = skip_string(key, pj->end, &esc);
	if (!p || (esc && !all))
		return -EBADMSG;
	if (!all)
		k = find_keep(keep, key, (size_t)(p - 1 - key));
	p = skip_ws(p, pj->end);
	if (p >= pj->end || *p != ':')
		return -EBADMSG;
	p = skip_ws(p + 1, pj->end);
	if (!k && !all) {
		*pp = kube_scan_skip_value(p, pj->end, depth);
		return *pp ? 0 : -EBADMSG;
	}
	r = k ? project_value(pj, &p, depth, k, &v)
	      : kube_scan_whole(pj, &p, depth, &v);
	if (r < 0)
		return r;
	/* a repeated key: the last one counts, as in json-c's tree; one
	 * seen the first time needs no look-up */
	bit = k && k - keep < 64 ? 1ull << (k - keep) : 0;
	if (bit && !(*seen & bit))
		flags |= JSON_C_OBJECT_ADD_KEY_IS_NEW;
	*seen |= bit;
	if (k)
		r = json_object_object_add_ex(o, k->name, v, flags);
	else
		r = add_copied(pj, o, key, e, esc, v);
	if (r < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	*pp = p;
	return 0;
}

/* *pp at '{': an object of the members keep names. */
static int project_object(struct kube_scan *pj, const char **pp, unsigned depth,
			  const struct kube_keep *keep,
			  struct json_object **ret)
{
	struct json_object *o = json_object_new_object();
	const char *p = *pp;
	int r = o ? kube_scan_open(pj, &p, depth, '}') : -ENOMEM;
	uint64_t seen = 0; /* keep's members met, the first 64 */

	while (r == 0) {
		if (p >= pj->end || *p != '"')
			r = -EBADMSG;
		else
			r = project_member(pj, &p, depth + 1, keep, o, &seen);
		if (r == 0)
			r = kube_scan_next(pj, &p, '}');
	}
	return close_items(o, r, p, pp, ret);
}

int kube_json_project(struct json_tokener *tok, const char *buf, size_t len,
		      const struct kube_keep *keep, struct json_object **ret)
{
	struct kube_scan pj = {.tok = tok, .text = STRBUF_INIT};
	struct json_object *o = NULL;
	const char *p;
	int r;

	if (!buf || len >= (1u << 30))
		return -EBADMSG;
	pj.end = buf + len;
	p = skip_ws(buf, pj.end);
	if (p >= pj.end || *p != '{')
		return -EBADMSG;
	strbuf_init(&pj.text, len);
	r = project_object(&pj, &p, 0, keep, &o);
	strbuf_release(&pj.text);
	if (r == 0 && skip_ws(p, pj.end) != pj.end)
		r = -EBADMSG;
	if (r < 0) {
		json_object_put(o);
		return r;
	}
	*ret = o;
	return 0;
}
