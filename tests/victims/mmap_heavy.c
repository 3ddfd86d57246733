/* SPDX-License-Identifier: Apache-2.0 */
/* Victim: many mappings. Maps N separate anonymous regions (alternating
 * protections so the kernel cannot merge neighbours) and touches them.
 * Prints {"victim":"mmap_heavy","pid":…,"mappings_added":N,"rss_kb":…}.
 *
 * usage: mmap_heavy [--maps N] [--pages P] [--mode sleep|grow]
 *                   [--interval-ms MS]
 *   sleep: map N regions of P pages, print, sleep forever.
 *   grow:  keep adding N regions every interval until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static int map_some(int n, size_t pages)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = pages * pg;

	for (int i = 0; i < n; i++) {
		/* One spare page between regions: never adjacent. */
		char *p = mmap(NULL, len + pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		munmap(p + len, pg);
		memset(p, 0x4d, len);
		if (i % 2)
			mprotect(p, len, PROT_READ);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int maps = 2000, grow = 0, interval_ms = 200, total = 0;
	size_t pages = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--maps"))
			maps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--pages"))
			pages = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--mode"))
			grow = !strcmp(argv[i + 1], "grow");
		else if (!strcmp(argv[i], "--interval-ms"))
			interval_ms = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "mmap_heavy: unknown option %s\n",
				argv[i]);
			return 2;
		}
	}
	do {
		if (map_some(maps, pages) < 0)
			return 1;
		total += maps;
		printf("{\"victim\":\"mmap_heavy\",\"pid\":%d,"
		       "\"mappings_added\":%d,\"rss_kb\":%ld}\n",
		       (int)getpid(), total, rss_kb());
		fflush(stdout);
		if (grow)
			usleep((useconds_t)interval_ms * 1000);
	} while (grow);
	for (;;)
		pause();
}
