/* SPDX-License-Identifier: Apache-2.0 */
/* Victim: a true leak. Allocates and touches CHUNK bytes every interval
 * and never frees them. Prints one JSON line per step:
 *   {"victim":"leak","pid":…,"allocated_bytes":…,"rss_kb":…}
 *
 * usage: leak [--chunk-kb K] [--interval-ms MS] [--total-mb M]
 *   Without --total-mb it grows until killed; with it, it stops there and
 *   sleeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			v = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	size_t chunk = 1024 << 10, total = 0, allocated = 0;
	int interval_ms = 100;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--chunk-kb"))
			chunk = strtoul(argv[i + 1], NULL, 10) << 10;
		else if (!strcmp(argv[i], "--interval-ms"))
			interval_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--total-mb"))
			total = strtoul(argv[i + 1], NULL, 10) << 20;
		else {
			fprintf(stderr, "leak: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	while (!total || allocated < total) {
		char *p = malloc(chunk);

		if (!p)
			return 1;
		memset(p, 0x6c, chunk);
		allocated += chunk;
		printf("{\"victim\":\"leak\",\"pid\":%d,\"allocated_bytes\":%zu,"
		       "\"rss_kb\":%ld}\n",
		       (int)getpid(), allocated, rss_kb());
		fflush(stdout);
		usleep((useconds_t)interval_ms * 1000);
	}
	for (;;)
		pause();
}
