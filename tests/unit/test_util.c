/* SPDX-License-Identifier: Apache-2.0 */
/* util: fmt_u64 against printf's "%" PRIu64, at every length's edges and
 * over a spread of values. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>

#include "base/util.h"

static void same_as_printf(uint64_t v)
{
	char want[32], got[32];
	size_t n;

	memset(got, 'x', sizeof(got));
	snprintf(want, sizeof(want), "%" PRIu64, v);
	n = fmt_u64(got, v);
	cr_assert_str_eq(got, want);
	cr_assert_eq(n, strlen(want), "%s", want);
}

Test(util, fmt_u64_is_printfs)
{
	uint64_t tens = 1, x = 88172645463325252ull;

	same_as_printf(0);
	same_as_printf(UINT64_MAX);
	same_as_printf(UINT64_MAX - 1);
	for (int k = 1; k < 20; k++) {
		tens *= 10;
		same_as_printf(tens - 1);
		same_as_printf(tens);
		same_as_printf(tens + 1);
		same_as_printf(tens / 2 * 3);
	}
	same_as_printf(10000000000000000000ull);
	for (int i = 0; i < 100000; i++) { /* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		same_as_printf(x >> (i % 64));
	}
}
