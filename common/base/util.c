/* SPDX-License-Identifier: Apache-2.0 */
#include <time.h>

#include "base/util.h"

size_t strlcpy_safe(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

static uint64_t clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t now_monotonic_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

uint64_t now_realtime_us(void)
{
	return clock_us(CLOCK_REALTIME);
}
