/* SPDX-License-Identifier: Apache-2.0 */
/* Which entries of STATE/events.json to drop. The file holds, per (pod
 * UID, container), the count of the kill Event the agent keeps bumping
 * and the report it counted last (cluster_publish.c: the agent may not
 * read Events back). An entry lives as long as its Event: the API server
 * deletes an Event its TTL after its last write (--event-ttl, 1 h by
 * default), and the next kill then creates a new one counting from 1, so
 * an older entry says nothing. Pure: entries in, a decision out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* The API server's default --event-ttl. */
#define EVENT_COUNTS_TTL_MS (3600ll * 1000)

struct event_count {
	const char *key;
	int64_t sent_ms; /* wall ms of the Event's last create or patch */
	size_t bytes;	 /* its share of the file */
};

struct event_counts_pruned {
	unsigned expired;  /* past the Event's lifetime */
	unsigned over_cap; /* the oldest, dropped to fit max_bytes */
};

/* Marks ret_drop[i] for every entry whose Event has outlived ttl_ms at
 * now_ms (sent more than ttl_ms ago; one sent in the future, a clock set
 * back, is kept), then, while the entries left take more than max_bytes
 * together, for the oldest of them (sent_ms, then key). Exactly at
 * max_bytes fits. ret_drop (n entries) and *ret are written on success
 * only. Returns 0 or -ENOMEM. */
int event_counts_plan(const struct event_count *e, size_t n, int64_t now_ms,
		      int64_t ttl_ms, size_t max_bytes, bool *ret_drop,
		      struct event_counts_pruned *ret);

/* The file's entries as the publisher keeps them: all is the parsed
 * events.json, key "<pod uid>/<container>" → {"count", "report",
 * "sent_ms"}. Removes what event_counts_plan() drops with
 * EVENT_COUNTS_TTL_MS, each entry's bytes its share of the JSON as
 * json-c writes it plainly (JSON_C_TO_STRING_PLAIN), so that the object
 * written fits max_bytes. An entry without sent_ms (an
 * agent before it kept one wrote it) is given now_ms: it lives one lifetime
 * more. *ret written on success only. Pure; returns 0 or -ENOMEM (all
 * unchanged). */
int event_counts_prune(struct json_object *all, int64_t now_ms,
		       size_t max_bytes, struct event_counts_pruned *ret);
