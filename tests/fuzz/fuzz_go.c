/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for Go's parsers (forensics/runtimes/go.c): the same bytes
 * as an executable (.go.buildinfo), as an environment block (GOMEMLIMIT,
 * GOGC), as one GOMEMLIMIT value, and as smaps for the heap's RSS. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/runtimes/go.h"
#include "kernel/smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_buildinfo bi;
	struct go_env e;
	struct smaps s;
	uint64_t v, heap, rss;
	size_t n;
	char val[64];

	if (go_buildinfo_mem(data, size, &bi) == 0 &&
	    strnlen(bi.version, sizeof(bi.version)) == sizeof(bi.version))
		abort(); /* the version is always terminated */
	go_env_parse((const char *)data, size, &e);
	if (e.memlimit_valid && !e.memlimit_set)
		abort();
	if (e.gogc < -1)
		abort();
	n = size < sizeof(val) - 1 ? size : sizeof(val) - 1;
	memcpy(val, data, n);
	val[n] = '\0';
	(void)go_parse_memlimit(val, &v);
	smaps_init(&s);
	if (smaps_parse((const char *)data, size, &s) == 0) {
		go_heap_rss(&s, &heap, &rss, &n);
		if (heap > rss || n > s.n)
			abort();
	}
	smaps_release(&s);
	return 0;
}
