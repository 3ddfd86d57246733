/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the CPython parser (forensics/runtimes/python.c): the
 * bytes as an exe name, maps/smaps (detect, classify), a cmdline and an
 * environ (facts), then the verdict. Invariants: answers in range, parts
 * within the total, PYTHONMALLOC's copy only [a-z_?], a verdict's lines
 * NUL-terminated. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
		if (python_classify(&s, minor, &f, &rss) < 0)
			abort();
		if (rss.pymalloc_kb + rss.glibc_heap_kb + rss.mmap_kb +
			    rss.other_kb + rss.file_kb >
		    rss.total_kb)
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
