/* SPDX-License-Identifier: Apache-2.0 */
/* The retention decision of STATE/reports/ (reports_prune.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kill/reports_prune.h"
#include "base/util.h"

/* What the kill step writes per kill: capture.c (the bundle, its
 * node-oom.txt), finish.c (the report beside it). */
static const char *const suffixes[] = {".tar.gz", ".html", ".node-oom.txt"};

size_t reports_kill_id_len(const char *name)
{
	size_t len = strlen(name);

	if (name[0] == '.')
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t s = strlen(suffixes[i]);

		if (len > s && streq(name + len - s, suffixes[i]))
			return len - s;
	}
	return 0;
}

struct kill {
	const char *id;
	size_t id_len;
	int64_t mtime_ns;
	uint64_t bytes;
	bool in_use;
	size_t first, n; /* its files in the sorted index */
};

static int cmp_id(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : (na > nb) - (na < nb);
}

static int cmp_file(const void *x, const void *y, void *files)
{
	const struct reports_file *a =
		(const struct reports_file *)files + *(const size_t *)x;
	const struct reports_file *b =
		(const struct reports_file *)files + *(const size_t *)y;

	return cmp_id(a->name, reports_kill_id_len(a->name), b->name,
		      reports_kill_id_len(b->name));
}

static int cmp_age(const void *x, const void *y)
{
	const struct kill *a = x, *b = y;

	if (a->mtime_ns != b->mtime_ns)
		return a->mtime_ns < b->mtime_ns ? -1 : 1;
	return cmp_id(a->id, a->id_len, b->id, b->id_len);
}

/* The files that belong to a kill, in idx (sorted by kill), into kills;
 * returns how many kills. */
static size_t group(const struct reports_file *f, const size_t *idx,
		    size_t n_idx, struct kill *kills)
{
	size_t nk = 0;

	for (size_t i = 0; i < n_idx; i++) {
		const struct reports_file *x = &f[idx[i]];
		size_t len = reports_kill_id_len(x->name);
		struct kill *k = nk ? &kills[nk - 1] : NULL;

		if (!k || cmp_id(k->id, k->id_len, x->name, len) != 0) {
			k = &kills[nk++];
			*k = (struct kill){.id = x->name,
					   .id_len = len,
					   .mtime_ns = x->mtime_ns,
					   .first = i};
		}
		if (x->mtime_ns > k->mtime_ns)
			k->mtime_ns = x->mtime_ns;
		k->bytes += x->bytes;
		k->in_use |= x->in_use;
		k->n++;
	}
	return nk;
}

/* Oldest first: deletes kills until both limits hold. */
static void decide(const struct kill *kills, size_t nk, const size_t *idx,
		   const struct reports_limits *lim, bool *del,
		   struct reports_pruned *ret)
{
	uint64_t bytes = 0;
	size_t count = nk;

	for (size_t i = 0; i < nk; i++)
		bytes += kills[i].bytes;
	for (size_t i = 0; i < nk; i++) {
		const struct kill *k = &kills[i];

		if (count <= lim->keep && bytes <= lim->max_bytes)
			break;
		if (k->in_use) {
			ret->spared++;
			continue;
		}
		if (count > lim->keep)
			ret->by_count++;
		else
			ret->by_bytes++;
		for (size_t j = 0; j < k->n; j++)
			del[idx[k->first + j]] = true;
		count--;
		bytes -= k->bytes;
		ret->bytes += k->bytes;
	}
}

int reports_prune_plan(const struct reports_file *files, size_t n,
		       const struct reports_limits *lim, bool *ret_delete,
		       struct reports_pruned *ret)
{
	_cleanup_free_ size_t *idx = calloc(n ? n : 1, sizeof(*idx));
	_cleanup_free_ struct kill *kills = calloc(n ? n : 1, sizeof(*kills));
	_cleanup_free_ bool *del = calloc(n ? n : 1, sizeof(*del));
	struct reports_pruned p = {0};
	size_t n_idx = 0, nk;

	if (!idx || !kills || !del)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (reports_kill_id_len(files[i].name))
			idx[n_idx++] = i;
	qsort_r(idx, n_idx, sizeof(*idx), cmp_file, (void *)files);
	nk = group(files, idx, n_idx, kills);
	/* sorting kills moves their (first, n) along: idx stays as it is */
	qsort(kills, nk, sizeof(*kills), cmp_age);
	decide(kills, nk, idx, lim, del, &p);
	memcpy(ret_delete, del, n * sizeof(*del));
	*ret = p;
	return 0;
}
