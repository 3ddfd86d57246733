/* SPDX-License-Identifier: Apache-2.0 */
/* elf_hash: the two hash functions of ELF symbol tables, as the dynamic
 * linker computes them: DT_GNU_HASH's (Bernstein's, h * 33 + c) and
 * DT_HASH's (the System V ABI's). Pure; shared by ptcall's lookups in a
 * target's libc (inspect/ptcall_elf.c) and the runtimes' detection
 * (forensics/runtimes/rtelf.c). */
#pragma once

#include <stdint.h>

/* The .gnu.hash value of the NUL-terminated name. */
static inline uint32_t elf_gnu_hash(const char *name)
{
	uint32_t h = 5381;

	for (; *name; name++)
		h = h * 33 + (uint8_t)*name;
	return h;
}

/* The .hash (System V) value of the NUL-terminated name. */
static inline uint32_t elf_sysv_hash(const char *name)
{
	uint32_t h = 0, g;

	for (; *name; name++) {
		h = (h << 4) + (uint8_t)*name;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}
