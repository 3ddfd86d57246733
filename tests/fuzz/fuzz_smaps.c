/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the smaps parser, the pmap -X renderer and the
 * classifier, on bytes that are not NUL-terminated. Invariants: feeding
 * the same bytes in two pieces gives the same table; every mapping gets
 * one class and the class sums add up to the totals; the compact table
 * filled through the parser's sink renders the bytes the struct smaps
 * renders. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_split(const char *buf, size_t len, const struct smaps *a)
{
	struct smaps b;
	size_t half = len / 2;

	smaps_init(&b);
	if (smaps_feed(&b, buf, half) < 0 ||
	    smaps_feed(&b, buf + half, len - half) < 0 || smaps_finish(&b) < 0)
		abort();
	if (b.n != a->n || b.n_fields != a->n_fields)
		abort();
	for (size_t i = 0; i < a->n; i++)
		if (smaps_get(a, i, SMAPS_F_RSS) !=
			    smaps_get(&b, i, SMAPS_F_RSS) ||
		    a->m[i].start != b.m[i].start ||
		    strcmp(a->m[i].name, b.m[i].name) != 0)
			abort();
	smaps_release(&b);
}

static void check_classes(const struct smaps *s)
{
	struct smaps_summary sum;
	uint64_t count = 0, rss = 0;

	if (smaps_classify(s, &sum) < 0)
		abort();
	for (size_t c = 0; c < _SMAPS_C_MAX; c++) {
		count += sum.cls[c].count;
		rss += sum.cls[c].rss_kb;
	}
	if (count != s->n || rss != sum.total_rss_kb)
		abort();
	if (sum.arena_reserved_kb < sum.arena_size_kb)
		abort();
	smaps_summary_release(&sum);
}

static int add_row(const struct smaps *s, const struct smaps_mapping *m,
		   void *ud)
{
	return smaps_pmap_add(ud, s, m);
}

static void check_sink_table(const char *buf, size_t len,
			     const struct strbuf *want)
{
	struct smaps_pmap t;
	struct strbuf out;
	struct smaps s;

	smaps_pmap_init(&t);
	smaps_init(&s);
	smaps_set_sink(&s, add_row, &t);
	if (smaps_parse(buf, len, &s) < 0)
		abort();
	strbuf_init(&out, 1u << 26);
	if (smaps_pmap_render_each(&t, 1, "fuzz", &out, NULL, NULL) < 0 ||
	    out.len != want->len || memcmp(out.buf, want->buf, out.len) != 0)
		abort();
	strbuf_release(&out);
	smaps_release(&s);
	smaps_pmap_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct strbuf out;
	struct smaps s;

	smaps_init(&s);
	if (smaps_parse(buf, size, &s) < 0) {
		if (s.n || s.m)
			abort(); /* released on failure */
		return 0;
	}
	check_split(buf, size, &s);
	check_classes(&s);
	strbuf_init(&out, 1u << 26);
	if (smaps_render_pmap(&s, 1, "fuzz", &out) < 0)
		abort();
	if (out.len && out.buf[out.len - 1] != '\n')
		abort();
	check_sink_table(buf, size, &out);
	strbuf_release(&out);
	smaps_release(&s);
	return 0;
}
