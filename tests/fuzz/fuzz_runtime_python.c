/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the CPython parser (forensics/runtimes/python.c): the
 * bytes as an exe name, maps/smaps (detect, classify, by sizes and with
 * the bytes again as the process's memory), a cmdline and an environ
 * (facts), then the verdict. Invariants: answers in range, parts
 * within the total, PYTHONMALLOC's copy only [a-z_?], a verdict's lines
 * NUL-terminated. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/runtimes/python.h"
#include "kernel/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool any_symbol(const void *ctx, const char *name)
{
	(void)name;
	return ctx != NULL;
}

static void check_facts(const char *buf, size_t size, struct python_facts *f)
{
	if (python_parse_facts(buf, size, buf, size, f) != 0)
		abort();
	for (const char *p = f->pymalloc_env; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || *p == '_' || *p == '?'))
			abort();
	if (f->tracemalloc > 65535)
		abort();
}

struct mem {
	const uint8_t *data;
	size_t size;
};

/* The input as the process's memory, over and over; fails where the
 * address says so (a vanished mapping). */
static int peek(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct mem *m = ctx;

	if (m->size < n || addr % 4096 == 4096 - 16)
		return -EIO;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = m->data[(addr + i) % m->size];
	return 0;
}

static void check_rss(const struct python_rss *r)
{
	if (r->pymalloc_kb + r->glibc_heap_kb + r->mmap_kb + r->other_kb +
		    r->file_kb >
	    r->total_kb)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = {data, size};
	struct python_peek mem = {.fn = peek, .ctx = &m};
	const char *buf = (const char *)data;
	char name[64];
	struct python_detect d;
	struct python_facts f;
	struct python_rss rss = {0};
	struct python_figures fig;
	struct rtproc_verdict v;
	struct smaps s;
	int r, minor;

	memcpy(name, buf, size < sizeof(name) ? size : sizeof(name) - 1);
	name[size < sizeof(name) ? size : sizeof(name) - 1] = '\0';
	minor = python_minor_from_name(name);
	if (minor < -1 || minor > 999)
		abort();
	r = python_detect(name, buf, size, any_symbol, buf, &d);
	if (r != 1 && r != 0 && r != -EBADMSG)
		abort();
	check_facts(buf, size, &f);
	smaps_init(&s);
	if (smaps_parse(buf, size, &s) == 0) {
		struct python_rss by_size;

		if (python_classify(&s, minor, &f, NULL, &by_size) < 0 ||
		    python_classify(&s, minor, &f, &mem, &rss) < 0)
			abort();
		check_rss(&by_size);
		check_rss(&rss);
		/* the split moves RSS between the two, never adds any */
		if (rss.pymalloc_kb + rss.mmap_kb !=
			    by_size.pymalloc_kb + by_size.mmap_kb ||
		    rss.total_kb != by_size.total_kb ||
		    rss.arenas < by_size.arenas)
			abort();
		smaps_release(&s);
	}
	fig = (struct python_figures){
		.limit = size << 10, .rss = &rss, .facts = &f};
	if (python_verdict(&fig, &v) &&
	    (strcmp(v.kind, "python-heap") || v.n_remedies < 2 ||
	     v.n_remedies > RTPROC_MAX_LINES ||
	     !memchr(v.summary, '\0', sizeof(v.summary))))
		abort();
	return 0;
}
