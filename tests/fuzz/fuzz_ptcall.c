/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: ptcall's parsers — malloc_info XML (text read back from a
 * target's memory), /proc/<pid>/maps lines, and the bytes as the target's
 * libc (ptelf through a memfd: its hash table or the whole tables) — with
 * invariants. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* A lookup answers a defined symbol or an error, never a positive value;
 * so does the malloc zone. */
static void check_elf_as(const uint8_t *data, size_t size, bool whole)
{
	static const char *const names[] = {
		"napi_create_object",
		"_PyRuntime",
		"filler_7",
		"call",
		"malloc",
	};
	struct ptelf e;
	Elf64_Sym s;
	uint64_t lo, hi;
	int fd = memfd_create("elf", MFD_CLOEXEC), r;

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size ||
	    (whole ? ptelf_load_whole(fd, &e) : ptelf_load(fd, &e)) != 0) {
		close(fd);
		return;
	}
	close(fd); /* ptelf keeps its own */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		r = ptelf_lookup(&e, names[i], &s);
		if (r > 0 ||
		    (r == 0 && (s.st_shndx == SHN_UNDEF || s.st_value == 0)))
			abort();
	}
	if (ptelf_malloc_zone(&e, &lo, &hi) > 0)
		abort();
	ptelf_release(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	check_elf_as(data, size, false);
	check_elf_as(data, size, true);
	check_info(buf, size);
	check_maps(buf, size); /* in place: last */
	free(buf);
	return 0;
}
