/* SPDX-License-Identifier: Apache-2.0 */
/* jget: typed reads of json-c values that came from outside (a pod's
 * spool, a bundle, an uploaded OOMBundle). json-c asserts (SIGABRT) when
 * json_object_array_length() or json_object_array_get_idx() is handed
 * anything but an array; its get_int64/get_string convert silently ("12x"
 * → 12, -1 → 18446744073709551615 once cast). Every accessor here returns
 * the value only when it has the type asked for; anything else is
 * "absent", and when a struct jget_notes is given, a wrong type (not an
 * absent key, not null) is recorded there as one readable line.
 *
 * All accessors take NULL objects and NULL notes. None allocates except
 * jget_note's fixed slots; none blocks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define JGET_NOTES_MAX 8
#define JGET_NOTE_LEN 200

/* Wrong types seen while reading one input; the first JGET_NOTES_MAX are
 * kept, the rest only counted. Zero-initialise; name the file being read
 * ("timeline.json") with jget_where() before reading it. */
struct jget_notes {
	char where[96];
	char text[JGET_NOTES_MAX][JGET_NOTE_LEN];
	size_t n, more;
};

/* The member key of o, of any type; NULL when o is not an object, the key
 * is absent or its value is JSON null. */
struct json_object *jget(struct json_object *o, const char *key);

/* The member key when it is an object / an array; NULL otherwise. */
struct json_object *jget_obj(struct jget_notes *n, struct json_object *o,
			     const char *key);
struct json_object *jget_array(struct jget_notes *n, struct json_object *o,
			       const char *key);

/* The string member key (owned by o); NULL when absent or not a string. */
const char *jget_str(struct jget_notes *n, struct json_object *o,
		     const char *key);

/* Integer members. jget_u64 takes only JSON integers ≥ 0 (not doubles,
 * strings, booleans); jget_int only integers within int. Return true and
 * set *ret on success; *ret is untouched otherwise. */
bool jget_u64(struct jget_notes *n, struct json_object *o, const char *key,
	      uint64_t *ret);
bool jget_int(struct jget_notes *n, struct json_object *o, const char *key,
	      int *ret);
/* The same, 0 when absent or of a wrong type. */
uint64_t jget_u64_or0(struct jget_notes *n, struct json_object *o,
		      const char *key);

/* A finite number (integer or double). */
bool jget_double(struct jget_notes *n, struct json_object *o, const char *key,
		 double *ret);
/* A JSON boolean (not 0/1, not "true"). */
bool jget_bool(struct jget_notes *n, struct json_object *o, const char *key,
	       bool *ret);

/* Elements of an array: length 0 and NULL when a is not an array or i is
 * out of range. */
size_t jget_len(struct json_object *a);
struct json_object *jget_idx(struct json_object *a, size_t i);

/* A string element; NULL when a[i] is not a string. */
const char *jget_idx_str(struct jget_notes *n, struct json_object *a, size_t i);

/* What json-c's tree of a JSON text would take, in bytes, from a scan of
 * the text that allocates nothing: per object, array and other value its
 * cost measured with json-c 0.16 on x86_64 (an empty object 784 bytes,
 * an empty array 144, a number 64, an empty string 80), rounded up, plus
 * each string's bytes. Never below what the parse takes for the shapes
 * tests/unit/test_jget.c measures, at most about twice it. A parser of
 * untrusted text asks this first: 3 MB of "{}," is a 780 MB tree. */
#define JGET_COST_OBJECT 800u
#define JGET_COST_ARRAY 160u
#define JGET_COST_VALUE 80u
uint64_t jget_tree_cost(const char *buf, size_t len);

/* The string at path (object member names, NULL-terminated) of a JSON
 * text, read without building its tree or allocating: what a parser of
 * untrusted text still needs of a text too costly to parse (an
 * AdmissionReview's request.uid). Into ret (size bytes, NUL-terminated).
 * Members are taken in order, the first of a name wins; the text is read
 * only as far as the string. -ENOENT: not there, not a string, or
 * escaped; -E2BIG: longer than size; -EBADMSG: the text is broken before
 * it; -ELOOP: nested over 64 deep before it. */
int jget_scan_str(const char *buf, size_t len, const char *const *path,
		  char *ret, size_t size);

/* Each element of the array at path (object member names, NULL-terminated)
 * of a JSON text, without building the text's tree: fn gets the element's
 * own text (not NUL-terminated), to parse alone, so what is held at once is
 * one element's tree, not the whole file's. A value at path that is not an
 * array is noted in n as jget_array() would ("\"samples\" is an object,
 * not an array: ignored") and gives 0; a missing one 0, no note. Returns
 * the number of elements given to fn; -EBADMSG when the text is broken
 * (the elements before the break were given), -ELOOP nested over 64 deep,
 * or fn's own negative return, which stops the walk. */
int jget_scan_each(struct jget_notes *n, const char *buf, size_t len,
		   const char *const *path,
		   int (*fn)(const char *elem, size_t elem_len, void *ud),
		   void *ud);

/* One JSON object's text (an element jget_scan_each() gave, not
 * NUL-terminated) as its own tree: NULL when it is not an object, not
 * JSON, or its tree would cost over max_cost (jget_tree_cost()). */
struct json_object *jget_parse_object(const char *text, size_t len,
				      uint64_t max_cost);

/* Names the input the next notes are about ("" or NULL: none). */
void jget_where(struct jget_notes *n, const char *where);

/* Records one line "<where>: <text>" in n (NULL: nothing), once. */
void jget_note(struct jget_notes *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
