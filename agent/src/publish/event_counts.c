/* SPDX-License-Identifier: Apache-2.0 */
/* The pruning rule of STATE/events.json (event_counts.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "publish/event_counts.h"
#include "base/util.h"

static int cmp_sent(const void *x, const void *y, void *entries)
{
	const struct event_count *e = entries;
	const struct event_count *a = &e[*(const size_t *)x];
	const struct event_count *b = &e[*(const size_t *)y];

	if (a->sent_ms != b->sent_ms)
		return a->sent_ms < b->sent_ms ? -1 : 1;
	return strcmp(a->key, b->key);
}

int event_counts_plan(const struct event_count *e, size_t n, int64_t now_ms,
		      int64_t ttl_ms, size_t max_bytes, bool *ret_drop,
		      struct event_counts_pruned *ret)
{
	_cleanup_free_ size_t *idx = calloc(n ? n : 1, sizeof(*idx));
	_cleanup_free_ bool *drop = calloc(n ? n : 1, sizeof(*drop));
	struct event_counts_pruned p = {0};
	size_t n_idx = 0, bytes = 0;

	if (!idx || !drop)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (e[i].sent_ms < now_ms - ttl_ms) {
			drop[i] = true;
			p.expired++;
			continue;
		}
		bytes += e[i].bytes;
		idx[n_idx++] = i;
	}
	qsort_r(idx, n_idx, sizeof(*idx), cmp_sent, (void *)e);
	for (size_t i = 0; i < n_idx && bytes > max_bytes; i++) {
		drop[idx[i]] = true;
		bytes -= e[idx[i]].bytes;
		p.over_cap++;
	}
	memcpy(ret_drop, drop, n * sizeof(*drop));
	*ret = p;
	return 0;
}

/* An entry's sent_ms, now_ms stamped into one that has none. */
static int64_t entry_sent(struct json_object *ent, int64_t now_ms)
{
	struct json_object *v;

	if (json_object_object_get_ex(ent, "sent_ms", &v) &&
	    json_object_is_type(v, json_type_int))
		return json_object_get_int64(v);
	if (json_object_is_type(ent, json_type_object))
		json_object_object_add(ent, "sent_ms",
				       json_object_new_int64(now_ms));
	return now_ms;
}

/* "key":value and its comma as json-c writes them: the key's quotes and
 * escapes ('/' is written "\/"), the colon. */
static size_t entry_bytes(const char *key, struct json_object *ent)
{
	size_t len = 0, esc = 0;

	for (const char *k = key; *k; k++)
		esc += *k == '/' || *k == '"' || *k == '\\' ? 1
		       : (unsigned char)*k < 0x20	    ? 5 /* \u00XX */
							    : 0;
	json_object_to_json_string_length(ent, JSON_C_TO_STRING_PLAIN, &len);
	return strlen(key) + esc + 3 + len + 1;
}

int event_counts_prune(struct json_object *all, int64_t now_ms,
		       size_t max_bytes, struct event_counts_pruned *ret)
{
	size_t n = (size_t)json_object_object_length(all), i = 0;
	_cleanup_free_ struct event_count *e = calloc(n ? n : 1, sizeof(*e));
	_cleanup_free_ bool *drop = calloc(n ? n : 1, sizeof(*drop));
	struct event_counts_pruned p;
	int r;

	if (!e || !drop)
		return -ENOMEM;
	json_object_object_foreach (all, key, ent) {
		e[i].key = key;
		e[i].sent_ms = entry_sent(ent, now_ms);
		e[i].bytes = entry_bytes(key, ent);
		i++;
	}
	/* the braces; the last entry has no comma */
	r = event_counts_plan(e, n, now_ms, EVENT_COUNTS_TTL_MS,
			      max_bytes > 2 ? max_bytes - 2 : 0, drop, &p);
	if (r < 0)
		return r;
	/* a key belongs to all: its own deletion frees it, and only it */
	for (i = n; i-- > 0;)
		if (drop[i])
			json_object_object_del(all, e[i].key);
	*ret = p;
	return 0;
}
