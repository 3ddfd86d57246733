/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for rtelf (forensics/runtimes/rtelf.c): the bytes as an
 * executable whose dynamic symbols detection asks for, through its
 * .gnu.hash or .hash. Invariants: an answer of 1, 0 or -errno, and the
 * same answer twice (no state). */
#include <stdint.h>
#include <stdlib.h>

#include "forensics/runtimes/rtelf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"napi_create_object", "_PyRuntime", "filler_7", "call", "",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int r = rtelf_has_symbol_mem(data, size, names[i]);

		if (r > 1 || r != rtelf_has_symbol_mem(data, size, names[i]))
			abort();
	}
	return 0;
}
