/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: ptcall's parsers — malloc_info XML (text read back from a
 * target's memory) and /proc/<pid>/maps lines — with invariants. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inspect/ptcall_internal.h"
#include "inspect/ptcall.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_info(const char *buf, size_t size)
{
	struct ptcall_malloc_info mi;

	if (ptcall_parse_malloc_info(buf, size, &mi) != 0)
		return;
	for (size_t i = 0; i < mi.n_arenas; i++)
		if (mi.arenas[i].nr < 0)
			abort();
	ptcall_malloc_info_release(&mi);
}

static void check_maps(char *buf, size_t size)
{
	struct ptmaps m;

	if (ptmaps_parse(buf, size, &m) != 0)
		return;
	for (size_t i = 0; i < m.n; i++) {
		if (m.v[i].end < m.v[i].start || !m.v[i].path ||
		    strlen(m.v[i].perms) != 4)
			abort();
		/* The parser accepts only sorted, disjoint mappings (its
		 * contract), so every non-empty one is found by its start. */
		if (i > 0 && m.v[i].start < m.v[i - 1].end)
			abort();
		if (m.v[i].start < m.v[i].end &&
		    ptmaps_find(&m, m.v[i].start) != &m.v[i])
			abort();
	}
	ptmaps_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	check_info(buf, size);
	check_maps(buf, size); /* in place: last */
	free(buf);
	return 0;
}
