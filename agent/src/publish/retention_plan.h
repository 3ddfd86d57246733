/* SPDX-License-Identifier: Apache-2.0 */
/* Which OOMReports of a namespace to delete: a pure function over what
 * the API server listed, the time and the limits. Every agent that lists
 * the same namespace decides the same (the order is the API server's
 * creationTimestamp, then the name), so agents on many nodes converge
 * instead of fighting, and a delete already done by another is a 404. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why a report goes (RETENTION_KEPT: it stays). */
enum retention_why {
	RETENTION_KEPT,
	RETENTION_COUNT, /* beyond the newest `keep` */
	RETENTION_BYTES, /* beyond max_bytes of bundles */
	RETENTION_AGE,	 /* older than max_age_s */
	RETENTION_N_WHY,
};

/* "kept", "count", "bytes", "age". */
const char *retention_why_name(enum retention_why w);

struct retention_item {
	const char *namespace, *name;
	int64_t created_s; /* creationTimestamp, Unix seconds; 0: unknown */
	uint64_t bytes;	   /* spec.bundleSize; 0: not given */
	void *user;	   /* the caller's, carried through the sort */
	bool drop;	   /* out: delete it */
	enum retention_why why; /* out: RETENTION_KEPT unless drop */
};

struct retention_limits {
	unsigned keep;	    /* newest reports kept per namespace, ≥ 1 */
	uint64_t max_bytes; /* their bundles together */
	uint64_t max_age_s;
	/* what a report without spec.bundleSize counts as (a report
	 * written before the field: its bundle is at most this) */
	uint64_t unknown_bytes;
};

/* Sorts v by namespace, newest first within each (creationTimestamp, then
 * the name, descending), and marks what to delete: a report is kept while
 * it is among the newest `keep` of its namespace, the bundles of the kept
 * ones and its own fit in max_bytes, and it is not older than max_age_s
 * (a report without a time is never deleted for its age). The newest of a
 * namespace is kept whatever its size. Once one report is dropped for
 * count or bytes, every older one of its namespace is too. Returns the
 * number marked. */
size_t retention_plan(struct retention_item *v, size_t n, int64_t now_s,
		      const struct retention_limits *l);

/* "2026-12-03T14:31:05Z" as Unix seconds; 0 when s is NULL or malformed. */
int64_t retention_time(const char *s);
