/* SPDX-License-Identifier: Apache-2.0 */
/* retention_plan(): what to delete, decided from the listed objects alone
 * (retention_plan.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "publish/retention_plan.h"

int64_t retention_time(const char *s)
{
	struct tm tm = {0};
	const char *end;

	if (!s)
		return 0;
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	return end ? (int64_t)timegm(&tm) : 0;
}

static int newest_first(const void *pa, const void *pb)
{
	const struct retention_item *x = pa, *y = pb;
	int n = strcmp(x->namespace, y->namespace);

	if (n)
		return n;
	if (x->created_s != y->created_s)
		return x->created_s < y->created_s ? 1 : -1;
	return -strcmp(x->name, y->name);
}

const char *retention_why_name(enum retention_why w)
{
	static const char *const names[] = {"kept", "count", "bytes", "age"};

	return w < RETENTION_N_WHY ? names[w] : "?";
}

static void drop(struct retention_item *it, enum retention_why why, size_t *n)
{
	it->drop = true;
	it->why = why;
	(*n)++;
}

size_t retention_plan(struct retention_item *v, size_t n, int64_t now_s,
		      const struct retention_limits *l)
{
	size_t marked = 0, kept = 0;
	uint64_t bytes = 0;
	enum retention_why cut = RETENTION_KEPT; /* why older ones go */

	qsort(v, n, sizeof(*v), newest_first);
	for (size_t i = 0; i < n; i++) {
		struct retention_item *it = &v[i];
		uint64_t b = it->bytes ? it->bytes : l->unknown_bytes;

		it->drop = false;
		it->why = RETENTION_KEPT;
		if (!i || strcmp(it->namespace, v[i - 1].namespace)) {
			kept = 0;
			bytes = 0;
			cut = RETENTION_KEPT;
		}
		if (!cut && kept >= l->keep)
			cut = RETENTION_COUNT;
		if (!cut && kept && bytes + b > l->max_bytes)
			cut = RETENTION_BYTES;
		if (cut) {
			drop(it, cut, &marked);
			continue;
		}
		if (it->created_s &&
		    now_s - it->created_s > (int64_t)l->max_age_s) {
			drop(it, RETENTION_AGE, &marked);
			continue;
		}
		kept++;
		bytes += b;
	}
	return marked;
}
