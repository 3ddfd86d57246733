/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for GC.class_histogram's parser (whole and as a reply cut
 * at its cap), the names it keeps, their Java spelling, the JSON of
 * jvm/class_histogram.json, and hsperfdata's long counters. The bytes are
 * not NUL-terminated. What it checks: the top is by bytes, within the
 * totals, and every name kept is clean (no control byte). */
#include <stdint.h>
#include <stdlib.h>

#include "inspect/jvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	if (n == size)
		abort(); /* not terminated */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
}

static void check(const struct jvm_histo *h)
{
	uint64_t sum = 0;
	char disp[JVM_HISTO_NAME_MAX + 16];

	if (h->n > JVM_HISTO_TOP || h->n > h->n_classes)
		abort();
	for (size_t i = 0; i < h->n; i++) {
		const struct jvm_histo_class *c = &h->top[i];

		if (i && h->top[i - 1].bytes < c->bytes)
			abort();
		check_name(c->name, sizeof(c->name));
		check_name(c->module, sizeof(c->module));
		if (!c->name[0])
			abort();
		jvm_class_display_name(c->name, disp, sizeof(disp));
		check_name(disp, sizeof(disp));
		sum += c->bytes;
	}
	if (sum > h->total_bytes)
		abort();
}

static void render(const struct jvm_histo *h)
{
	static struct jvm_histo_take t;
	struct strbuf sb;

	t.taken = true;
	t.h = *h;
	strbuf_init(&sb, 1u << 20);
	if (jvm_histo_take_to_json(&t, 1, 1, "threshold-80", &sb) < 0 &&
	    sb.len > sb.max)
		abort();
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jvm_histo h;
	const char *buf = (const char *)data;
	char name[24];
	int64_t v;

	for (int cut = 0; cut < 2; cut++)
		if (jvm_parse_class_histogram(buf, size, cut, &h) == 0) {
			check(&h);
			render(&h);
		}
	jvm_histo_clean_name(buf, size, name, sizeof(name));
	check_name(name, sizeof(name));
	jvm_perfdata_long(data, size, "sun.rt.safepointTime", &v);
	return 0;
}
