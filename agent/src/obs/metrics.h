/* SPDX-License-Identifier: Apache-2.0 */
/* metrics: a small Prometheus registry (counters, gauges, histograms with
 * labels) rendered in the text exposition format 0.0.4. No I/O but one
 * warning logged the first time a family refuses a series. Thread safe:
 * every call takes the registry's mutex, held only while memory is
 * touched (never across I/O), so the detector thread updating a value
 * waits at most for one in-memory render. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

/* A family holds at most this many label sets: beyond, new series are
 * refused (-ENOSPC) rather than growing without bound, and counted in the
 * registry's dropped family (metrics_add_dropped). */
#define METRICS_MAX_SERIES 4096
#define METRICS_MAX_LABELS 8
#define METRICS_MAX_BUCKETS 24

struct metrics;
struct metric;

/* A new, empty registry. Returns 0 or -ENOMEM. */
int metrics_new(struct metrics **ret);
/* Frees the registry and its families; NULL is a no-op. */
void metrics_free(struct metrics *m);

/* Registers a family. labels: NULL-terminated label names (or NULL);
 * buckets: the upper bounds of a histogram, increasing, +Inf implied.
 * A family without labels renders its one series from the start (value
 * 0). Returns the family (owned by m) or NULL (-EINVAL / -ENOMEM: bad
 * name, too many labels/buckets, out of memory). */
struct metric *metrics_add(struct metrics *m, const char *name,
			   const char *help, enum metric_type type,
			   const char *const *labels, const double *buckets,
			   size_t n_buckets);

/* The registry's count of the series it could not create: a counter
 * named name with the one label "family". Every family with labels added
 * after it has its series there from the start (value 0; a family without
 * labels cannot refuse one); a series refused by metric_inc/set/observe
 * (the cap, out of memory) adds 1 to its family's, and the family's first
 * refusal is logged at warn level, once. Add it first. Returns the family
 * or NULL (already added, -EINVAL, -ENOMEM). */
struct metric *metrics_add_dropped(struct metrics *m, const char *name,
				   const char *help);

/* values: one per label name of the family, in order (NULL when it has
 * none); NULL values count as "". Each returns 0, -EINVAL (wrong type,
 * negative counter increment), -ENOSPC (series cap) or -ENOMEM; the last
 * two are counted as dropped (metrics_add_dropped). */
int metric_inc(struct metric *f, const char *const *values, double by);
int metric_set(struct metric *f, const char *const *values, double v);
int metric_observe(struct metric *f, const char *const *values, double v);
/* Removes one series (a gauge that has no value now): the family's room
 * for it is free again. 0, -ENOENT. */
int metric_remove(struct metric *f, const char *const *values);
/* The value of a counter or gauge series, for tests and callers that
 * read back. 0 and *ret, or -ENOENT. */
int metric_get(struct metric *f, const char *const *values, double *ret);

/* Appends the whole registry in the text format: families in the order
 * they were added, series in the order they first appeared. Returns 0 or
 * the strbuf's -E2BIG/-ENOMEM. */
int metrics_render(struct metrics *m, struct strbuf *out);

/* Pure helpers, exported for tests. Label value escaping (\ " newline)
 * and HELP escaping (\ newline); numbers as Prometheus reads them
 * (shortest round-trip, +Inf, -Inf, NaN). */
int metrics_escape_label(struct strbuf *sb, const char *s);
int metrics_escape_help(struct strbuf *sb, const char *s);
int metrics_format_number(struct strbuf *sb, double v);
