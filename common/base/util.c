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
	/* Two digits a division: a full timeline is 210,000 numbers a
	 * second, and digit by digit they were a quarter of its cost. */
	static const char pairs[] = "00010203040506070809"
				    "10111213141516171819"
				    "20212223242526272829"
				    "30313233343536373839"
				    "40414243444546474849"
				    "50515253545556575859"
				    "60616263646566676869"
				    "70717273747576777879"
				    "80818283848586878889"
				    "90919293949596979899";
	uint64_t tens = 10;
	size_t n = 1;
	char *p;

	/* the digits counted first, then written in place from the end */
	while (n < 20 && v >= tens) {
		n++;
		tens = n < 20 ? tens * 10 : tens;
	}
	p = buf + n;
	*p = '\0';
	while (v >= 100) {
		p -= 2;
		memcpy(p, pairs + (v % 100) * 2, 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(p - 2, pairs + v * 2, 2);
	else
		p[-1] = (char)('0' + v);
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
