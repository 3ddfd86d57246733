/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "publish/retention_plan.h"

#define DAY 86400
#define NOW 1800000000

static const struct retention_limits lim = {
	.keep = 3,
	.max_bytes = 1000,
	.max_age_s = 30 * DAY,
	.unknown_bytes = 400,
};

static const char *why_of(const struct retention_item *v, size_t n,
			  const char *ns, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].namespace, ns) && !strcmp(v[i].name, name))
			return v[i].drop ? retention_why_name(v[i].why)
			       : v[i].why == RETENTION_KEPT ? "kept"
							    : "?";
	return "absent";
}

Test(retention_plan, count_per_namespace_newest_kept)
{
	struct retention_item v[] = {
		{.namespace = "a", .name = "oom-1", .created_s = NOW - 50},
		{.namespace = "b", .name = "oom-2", .created_s = NOW - 40},
		{.namespace = "a", .name = "oom-3", .created_s = NOW - 30},
		{.namespace = "a", .name = "oom-4", .created_s = NOW - 20},
		{.namespace = "a", .name = "oom-5", .created_s = NOW - 10},
	};
	size_t n = sizeof(v) / sizeof(v[0]);

	for (size_t i = 0; i < n; i++)
		v[i].bytes = 10;
	cr_assert_eq(retention_plan(v, n, NOW, &lim), 1);
	cr_assert_str_eq(why_of(v, n, "a", "oom-1"), "count");
	cr_assert_str_eq(why_of(v, n, "a", "oom-3"), "kept");
	cr_assert_str_eq(why_of(v, n, "a", "oom-5"), "kept");
	cr_assert_str_eq(why_of(v, n, "b", "oom-2"), "kept");
	/* sorted: namespace, newest first */
	cr_assert_str_eq(v[0].name, "oom-5");
	cr_assert_str_eq(v[4].namespace, "b");
}

/* Bytes of bundles: the newer ones first; once one does not fit, it and
 * every older one go (a small old one does not slip in behind). */
Test(retention_plan, bytes_cut_the_older_ones)
{
	struct retention_item v[] = {
		{.namespace = "a",
		 .name = "n3",
		 .created_s = NOW - 1,
		 .bytes = 600},
		{.namespace = "a",
		 .name = "n2",
		 .created_s = NOW - 2,
		 .bytes = 300},
		{.namespace = "a",
		 .name = "n1",
		 .created_s = NOW - 3,
		 .bytes = 200},
		{.namespace = "a",
		 .name = "n0",
		 .created_s = NOW - 4,
		 .bytes = 10},
	};

	cr_assert_eq(retention_plan(v, 4, NOW, &lim), 2);
	cr_assert_str_eq(why_of(v, 4, "a", "n3"), "kept");
	cr_assert_str_eq(why_of(v, 4, "a", "n2"), "kept");
	cr_assert_str_eq(why_of(v, 4, "a", "n1"), "bytes");
	cr_assert_str_eq(why_of(v, 4, "a", "n0"), "bytes");
}

/* The newest report is kept whatever its size; one without bundleSize
 * counts as unknown_bytes; exactly at the cap is kept. */
Test(retention_plan, newest_kept_unknown_size_counted_cap_inclusive)
{
	struct retention_item big[] = {
		{.namespace = "a",
		 .name = "x",
		 .created_s = NOW,
		 .bytes = 5000},
		{.namespace = "a",
		 .name = "w",
		 .created_s = NOW - 1,
		 .bytes = 1},
	};
	struct retention_item exact[] = {
		{.namespace = "a", .name = "y", .created_s = NOW, .bytes = 600},
		{.namespace = "a", .name = "old", .created_s = NOW - 1},
		{.namespace = "a", .name = "older", .created_s = NOW - 2},
	};

	cr_assert_eq(retention_plan(big, 2, NOW, &lim), 1);
	cr_assert_str_eq(why_of(big, 2, "a", "x"), "kept");
	cr_assert_str_eq(why_of(big, 2, "a", "w"), "bytes");
	/* 600 + 400 (unknown) = 1000: at the cap, kept; the next is over */
	cr_assert_eq(retention_plan(exact, 3, NOW, &lim), 1);
	cr_assert_str_eq(why_of(exact, 3, "a", "old"), "kept");
	cr_assert_str_eq(why_of(exact, 3, "a", "older"), "bytes");
}

Test(retention_plan, age_and_unknown_time)
{
	struct retention_item v[] = {
		{.namespace = "a", .name = "new", .created_s = NOW - DAY},
		{.namespace = "a", .name = "old", .created_s = NOW - 31 * DAY},
		{.namespace = "a", .name = "untimed", .created_s = 0},
	};

	cr_assert_eq(retention_plan(v, 3, NOW, &lim), 1);
	cr_assert_str_eq(why_of(v, 3, "a", "old"), "age");
	/* no time: never dropped for its age, and sorted last */
	cr_assert_str_eq(why_of(v, 3, "a", "untimed"), "kept");
	cr_assert_str_eq(v[2].name, "untimed");
}

/* Two agents list the same objects in different orders: the same plan.
 * Equal times are ordered by name, so a tie never splits them. */
Test(retention_plan, the_same_list_in_any_order_gives_the_same_plan)
{
	struct retention_item x[5], y[5];
	const char *names[] = {"oom-a", "oom-b", "oom-c", "oom-d", "oom-e"};

	for (size_t i = 0; i < 5; i++) {
		x[i] = (struct retention_item){.namespace = "ns",
					       .name = names[i],
					       .created_s = NOW - 60,
					       .bytes = 1};
		y[4 - i] = x[i];
	}
	cr_assert_eq(retention_plan(x, 5, NOW, &lim), 2);
	cr_assert_eq(retention_plan(y, 5, NOW, &lim), 2);
	for (size_t i = 0; i < 5; i++) {
		cr_assert_str_eq(x[i].name, y[i].name);
		cr_assert_eq(x[i].drop, y[i].drop);
	}
	cr_assert_str_eq(why_of(x, 5, "ns", "oom-a"), "count");
	cr_assert_str_eq(why_of(x, 5, "ns", "oom-b"), "count");
	cr_assert_str_eq(why_of(x, 5, "ns", "oom-e"), "kept");
}

Test(retention_plan, times)
{
	cr_assert_eq(retention_time("2027-01-14T08:00:00Z"), 1799913600);
	cr_assert_eq(retention_time("yesterday"), 0);
	cr_assert_eq(retention_time(NULL), 0);
}
