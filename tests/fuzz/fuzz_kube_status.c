/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: Status bodies (any bytes) with every interesting HTTP code,
 * Retry-After values and quantities. */
#include <stdint.h>
#include <string.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long codes[] = {200, 401, 403, 404, 409, 410,
				     413, 422, 429, 500, 503};
	char s[64];
	struct kube_error e;
	uint32_t ra;
	uint64_t q;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		int r = kube_status_parse((const char *)data, size, codes[i],
					  &e);

		if (r != e.code || (codes[i] == 200) != (r == 0) ||
		    strnlen(e.message, sizeof(e.message)) >= sizeof(e.message))
			__builtin_trap();
	}
	if (size < sizeof(s)) {
		memcpy(s, data, size);
		s[size] = '\0';
		if (kube_parse_retry_after(s, 1796031074, &ra) == 0 &&
		    ra > 3600)
			__builtin_trap();
		kube_parse_quantity(s, &q);
	}
	return 0;
}
