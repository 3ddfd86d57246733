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

size_t fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
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
