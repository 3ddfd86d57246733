/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the jcmd reply parsers: NMT summary, GC.heap_info,
 * VM.flags, malloc_info XML, VM.info's container section, and the
 * hsperfdata reader. Each sees the same bytes (not NUL-terminated); JSON
 * rendering runs on whatever parsed. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>

#include "inspect/jvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void render(int (*fn)(const void *, struct strbuf *), const void *v)
{
	struct strbuf sb;

	strbuf_init(&sb, 1u << 20);
	if (fn(v, &sb) < 0 && sb.len > sb.max)
		abort();
	strbuf_release(&sb);
}

static int nmt_json(const void *v, struct strbuf *sb)
{
	return jvm_nmt_to_json(v, sb);
}

static int heap_json(const void *v, struct strbuf *sb)
{
	return jvm_heap_info_to_json(v, sb);
}

static int flags_json(const void *v, struct strbuf *sb)
{
	return jvm_flags_to_json(v, sb);
}

static int mi_json(const void *v, struct strbuf *sb)
{
	return jvm_malloc_info_to_json(v, sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct jvm_nmt nmt;
	static struct jvm_heap_info heap;
	static struct jvm_malloc_info mi;
	static struct jvm_container ct;
	static struct jvm_flags flags;
	const char *buf = (const char *)data;
	char caps[80];

	if (jvm_parse_nmt(buf, size, &nmt) == 0)
		render(nmt_json, &nmt);
	if (jvm_parse_heap_info(buf, size, &heap) == 0)
		render(heap_json, &heap);
	if (jvm_parse_flags(buf, size, &flags) == 0) {
		if (!flags.has_max_heap)
			abort(); /* MaxHeapSize is always printed */
		render(flags_json, &flags);
	}
	if (jvm_parse_malloc_info(buf, size, &mi) == 0)
		render(mi_json, &mi);
	if (jvm_parse_container(buf, size, &ct) == 0)
		json_object_put(jvm_container_json(&ct));
	jvm_perfdata_string(data, size, "sun.rt.jvmCapabilities", caps,
			    sizeof(caps));
	return 0;
}
