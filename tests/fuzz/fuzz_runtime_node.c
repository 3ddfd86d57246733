/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the Node.js parser (forensics/runtimes/node.c): the
 * bytes as maps/smaps (detect, classify), as a cmdline and as an environ
 * (facts), then the heap limit and the verdict from what came out.
 * Invariants: answers in range, parts within the total, a verdict's
 * lines NUL-terminated and its kind fixed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/runtimes/node.h"
#include "kernel/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool any_symbol(const void *ctx, const char *name)
{
	(void)name;
	return ctx != NULL;
}

static void check_verdict(const struct rtproc_verdict *v)
{
	if (strcmp(v->kind, "node-heap") != 0 ||
	    (v->confidence != 60 && v->confidence != 85) || v->n_remedies < 2 ||
	    v->n_remedies > RTPROC_MAX_LINES ||
	    v->n_evidence > RTPROC_MAX_LINES ||
	    !memchr(v->summary, '\0', sizeof(v->summary)))
		abort();
	for (size_t i = 0; i < v->n_remedies; i++)
		if (!memchr(v->remedies[i], '\0', RTPROC_LINE))
			abort();
}

static void check_smaps(const char *buf, size_t len, struct node_rss *ret)
{
	struct smaps s;
	struct node_detect d;
	int r = node_detect(buf, len, any_symbol, buf, &d);

	memset(ret, 0, sizeof(*ret));
	if (r != 1 && r != 0 && r != -EBADMSG)
		abort();
	if (r == 1 && d.how != NODE_BY_LIBNODE && d.how != NODE_BY_SYMBOL)
		abort();
	smaps_init(&s);
	if (smaps_parse(buf, len, &s) < 0)
		return;
	if (node_classify(&s, ret) < 0)
		abort();
	if (ret->v8_heap_kb + ret->native_kb + ret->file_kb > ret->total_kb ||
	    ret->v8_pages > s.n)
		abort();
	smaps_release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct node_facts f;
	struct node_heap_limit h = {0};
	struct node_rss rss;
	struct rtproc_verdict v;
	struct node_figures fig;

	check_smaps(buf, size, &rss);
	if (node_parse_facts(buf, size, buf, size, &f) != 0)
		abort();
	if (f.has_max_old &&
	    (!f.max_old_mib || (strcmp(f.max_old_from, "command line") &&
				strcmp(f.max_old_from, "NODE_OPTIONS"))))
		abort();
	fig = (struct node_figures){
		.limit = size * 1024,
		.heap_rss = rss.v8_heap_kb * 1024,
		.nonheap_rss = (rss.total_kb - rss.v8_heap_kb) * 1024,
		.facts = &f,
	};
	fig.have_limit_rule =
		node_heap_limit(&f, fig.limit, UINT64_MAX / 2, 0, &h);
	if (fig.have_limit_rule && h.total != h.old_space + h.young)
		abort();
	fig.heap = h;
	if (node_verdict(&fig, &v))
		check_verdict(&v);
	return 0;
}
