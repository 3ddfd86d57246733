/* SPDX-License-Identifier: Apache-2.0 */
/* reports_prune_plan(): which of STATE/reports/'s files a retention round
 * deletes, as a table of directories and limits. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "kill/reports_prune.h"
#include "base/util.h"

#define S 1000000000ll /* ns */
#define MAX_FILES 10

/* Criterion's workers may not share the table's address space: every
 * string lives in the case itself. */
struct case_file {
	char name[40];
	int64_t mtime_ns;
	uint64_t bytes;
	bool in_use;
};

struct prune_case {
	char what[80];
	struct case_file files[MAX_FILES];
	unsigned keep;
	uint64_t max_bytes;
	/* the names deleted, space-separated, in the order of files */
	char deleted[160];
	unsigned by_count, by_bytes, spared;
};

#define F(n, t, b)                                       \
	{                                                \
		.name = n, .mtime_ns = (t)*S, .bytes = b \
	}
#define U(n, t, b)                                                       \
	{                                                                \
		.name = n, .mtime_ns = (t)*S, .bytes = b, .in_use = true \
	}

ParameterizedTestParameters(reports_prune, plan)
{
	static struct prune_case cases[] = {
		{"under both limits: nothing",
		 {F("a.tar.gz", 1, 10), F("a.html", 1, 5)},
		 2,
		 100,
		 "",
		 0,
		 0,
		 0},
		{"exactly at both caps keeps all",
		 {F("a.tar.gz", 1, 40), F("a.html", 1, 10),
		  F("b.tar.gz", 2, 40), F("b.html", 2, 10)},
		 2,
		 100,
		 "",
		 0,
		 0,
		 0},
		{"over the count: the oldest kill, its .html and .tar.gz "
		 "together",
		 {F("c.tar.gz", 3, 1), F("a.html", 1, 1), F("b.tar.gz", 2, 1),
		  F("a.tar.gz", 1, 1), F("b.html", 2, 1), F("c.html", 3, 1)},
		 2,
		 100,
		 "a.html a.tar.gz",
		 1,
		 0,
		 0},
		{"over the bytes: oldest first until it fits",
		 {F("a.tar.gz", 1, 60), F("b.tar.gz", 2, 60),
		  F("c.tar.gz", 3, 60)},
		 10,
		 100,
		 "a.tar.gz b.tar.gz",
		 0,
		 2,
		 0},
		{"one byte over the cap removes one kill",
		 {F("a.tar.gz", 1, 50), F("b.tar.gz", 2, 51)},
		 10,
		 100,
		 "a.tar.gz",
		 0,
		 1,
		 0},
		{"count first, then bytes, each counted once",
		 {F("a.tar.gz", 1, 10), F("b.tar.gz", 2, 80),
		  F("c.tar.gz", 3, 30), F("d.tar.gz", 4, 30)},
		 3,
		 60,
		 "a.tar.gz b.tar.gz",
		 1,
		 1,
		 0},
		{"in use spared even when over both caps",
		 {U("a.tar.gz", 1, 500), F("a.html", 1, 5),
		  U("b.tar.gz", 2, 500), F("c.tar.gz", 3, 500),
		  F("c.html", 3, 5)},
		 1,
		 100,
		 "c.tar.gz c.html",
		 1,
		 0,
		 2},
		{"in use: the next oldest goes instead",
		 {U("a.tar.gz", 1, 1), F("a.html", 1, 1), F("b.tar.gz", 2, 1),
		  F("b.html", 2, 1), F("c.tar.gz", 3, 1)},
		 2,
		 100,
		 "b.tar.gz b.html",
		 1,
		 0,
		 1},
		{"a .html without a .tar.gz is a kill of its own",
		 {F("a.html", 1, 5), F("b.tar.gz", 2, 5), F("b.html", 2, 5)},
		 1,
		 100,
		 "a.html",
		 1,
		 0,
		 0},
		{"node-oom.txt goes with its kill",
		 {F("a.tar.gz", 1, 5), F("a.node-oom.txt", 1, 90),
		  F("a.html", 1, 5), F("b.tar.gz", 2, 5)},
		 1,
		 1000,
		 "a.tar.gz a.node-oom.txt a.html",
		 1,
		 0,
		 0},
		{"same mtime: the name decides",
		 {F("b.tar.gz", 5, 1), F("a.tar.gz", 5, 1),
		  F("c.tar.gz", 5, 1)},
		 1,
		 100,
		 "b.tar.gz a.tar.gz",
		 2,
		 0,
		 0},
		{"a kill's age is its newest file (a bundle saved again)",
		 {F("a.tar.gz", 9, 1), F("a.html", 1, 1), F("b.tar.gz", 5, 1),
		  F("b.html", 5, 1)},
		 1,
		 100,
		 "b.tar.gz b.html",
		 1,
		 0,
		 0},
		{"temporary and foreign files neither count nor go",
		 {F(".a.tar.gz.tmp.0123456789abcdef", 1, 999),
		  F("notes.txt", 1, 999), F("a.tar.gz", 2, 10),
		  F("b.tar.gz", 3, 10)},
		 1,
		 15,
		 "a.tar.gz",
		 1,
		 0,
		 0},
		{"a suffix alone is no kill",
		 {F(".html", 1, 5), F("tar.gz", 1, 5), F("a.tar.gz", 2, 5)},
		 1,
		 100,
		 "",
		 0,
		 0,
		 0},
		{"the ids are compared whole: a and a.b are two kills",
		 {F("a.tar.gz", 1, 1), F("a.b.tar.gz", 2, 1),
		  F("a.b.html", 2, 1)},
		 1,
		 100,
		 "a.tar.gz",
		 1,
		 0,
		 0},
		{.what = "an empty directory", .keep = 1, .max_bytes = 1},
	};
	return cr_make_param_array(struct prune_case, cases, ARRAY_SIZE(cases));
}

static size_t to_files(const struct prune_case *c, struct reports_file *f)
{
	size_t n = 0;

	for (; n < MAX_FILES && c->files[n].name[0]; n++)
		f[n] = (struct reports_file){.name = c->files[n].name,
					     .mtime_ns = c->files[n].mtime_ns,
					     .bytes = c->files[n].bytes,
					     .in_use = c->files[n].in_use};
	return n;
}

ParameterizedTest(struct prune_case *c, reports_prune, plan)
{
	struct reports_file files[MAX_FILES];
	size_t n = to_files(c, files);
	struct reports_limits lim = {.keep = c->keep,
				     .max_bytes = c->max_bytes};
	struct reports_pruned p;
	bool del[MAX_FILES];
	char got[512] = "";
	size_t len = 0;

	memset(del, 0xff, sizeof(del));
	cr_assert_eq(reports_prune_plan(files, n, &lim, del, &p), 0);
	for (size_t i = 0; i < n; i++)
		if (del[i])
			len += (size_t)snprintf(got + len, sizeof(got) - len,
						"%s%s", len ? " " : "",
						files[i].name);
	cr_assert_str_eq(got, c->deleted, "%s", c->what);
	cr_assert_eq(p.by_count, c->by_count, "%s: by count %u", c->what,
		     p.by_count);
	cr_assert_eq(p.by_bytes, c->by_bytes, "%s: by bytes %u", c->what,
		     p.by_bytes);
	cr_assert_eq(p.spared, c->spared, "%s: spared %u", c->what, p.spared);
}

Test(reports_prune, freed_bytes_are_the_kills_files)
{
	static const struct reports_file f[] = {
		F("a.tar.gz", 1, 100), F("a.html", 1, 20), F("b.tar.gz", 2, 7)};
	struct reports_limits lim = {.keep = 1, .max_bytes = 1000};
	struct reports_pruned p;
	bool del[3];

	cr_assert_eq(reports_prune_plan(f, 3, &lim, del, &p), 0);
	cr_assert_eq(p.bytes, 120);
}

Test(reports_prune, kill_id_len)
{
	cr_assert_eq(reports_kill_id_len("oom-1-2.tar.gz"), 7);
	cr_assert_eq(reports_kill_id_len("oom-1-2.html"), 7);
	cr_assert_eq(reports_kill_id_len("oom-1-2.node-oom.txt"), 7);
	cr_assert_eq(reports_kill_id_len("oom-1-2.json"), 0);
	cr_assert_eq(reports_kill_id_len(".oom-1-2.tar.gz.tmp.00ff"), 0);
	cr_assert_eq(reports_kill_id_len(".html"), 0);
}
