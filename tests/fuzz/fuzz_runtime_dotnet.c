/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the .NET parser (forensics/runtimes/dotnet.c): the
 * bytes as maps/smaps (detect, classify) and as an environ (the GC's
 * knobs), then the GC limit and the verdict. Invariants: answers in
 * range, the GC heap within the total, a limit from the container's
 * limit never above it, a verdict's lines NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/runtimes/dotnet.h"
#include "kernel/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_limit(const struct dotnet_facts *f, uint64_t limit,
			struct dotnet_gc_limit *g)
{
	dotnet_gc_limit(f, limit, g);
	if (g->from == DOTNET_LIMIT_PERCENT && g->bytes > limit)
		abort();
	if (g->from == DOTNET_LIMIT_DEFAULT &&
	    g->bytes > (limit > (20u << 20) ? limit : (20u << 20)))
		abort();
	if (g->from == DOTNET_LIMIT_NONE && g->bytes)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct dotnet_facts f;
	struct dotnet_rss rss = {0};
	struct dotnet_figures fig = {0};
	struct rtproc_verdict v;
	struct smaps s;
	int r = dotnet_detect(buf, size);

	if (r != 1 && r != 0 && r != -EBADMSG)
		abort();
	if (dotnet_parse_facts(buf, size, &f) != 0)
		abort();
	if ((f.hard_limit.state == DOTNET_KNOB_BAD && f.hard_limit.v) ||
	    (f.hard_limit.state != DOTNET_KNOB_UNSET && !f.hard_limit.from[0]))
		abort();
	smaps_init(&s);
	if (smaps_parse(buf, size, &s) == 0) {
		if (dotnet_classify(&s, &rss) < 0)
			abort();
		if (rss.gc_heap_kb + rss.native_kb + rss.file_kb > rss.total_kb)
			abort();
		smaps_release(&s);
	}
	fig.limit = (uint64_t)size << 12;
	check_limit(&f, fig.limit, &fig.gc);
	fig.gc_heap_rss = rss.gc_heap_kb << 10;
	fig.nonheap_rss = (rss.total_kb - rss.gc_heap_kb) << 10;
	fig.facts = &f;
	if (dotnet_verdict(&fig, &v) &&
	    (strcmp(v.kind, "dotnet-heap") || v.n_remedies < 2 ||
	     !memchr(v.summary, '\0', sizeof(v.summary))))
		abort();
	return 0;
}
