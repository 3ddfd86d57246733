/* SPDX-License-Identifier: Apache-2.0 */
/* Victim for ptcall tests: one thread that never leaves libc (memset over a
 * large buffer, forever), so no thread is safe to hijack. Stops by itself
 * after 20 s so a failed test cannot leave it spinning.
 * Usage: ptcall_spin */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	size_t len = 64u << 20;
	char *buf = malloc(len);
	time_t end = time(NULL) + 20;

	printf("{\"ready\":true,\"pid\":%d}\n", getpid());
	fflush(stdout);
	unsigned sum = 0;

	for (unsigned i = 0; time(NULL) < end; i++) {
		memset(buf, (int)i, len);
		sum += (unsigned char)buf[i % len]; /* keep the memset */
	}
	return (int)(sum & 1);
}
