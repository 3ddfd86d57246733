/* hog — statically linked guest victim: grows its memory until killed.
 *
 * Usage: hog [MB [hold]]
 *   MB    allocate and touch this many MiB (0 or absent: grow forever)
 *   hold  after MB MiB, sleep forever instead of exiting
 * With HOG_COMM set, renames itself (prctl PR_SET_NAME; at most 15 bytes)
 * first, to put awkward names into the kernel's report.
 * Prints "hog: pid=N" first and "hog: MB=N" for each 8 MiB, flushed, so a
 * guest script can record the victim's pid. Touches every page (anonymous
 * memory that counts against the memory cgroup).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define CHUNK (1024 * 1024)

static long parse_mb(const char *s)
{
	long v = 0;

	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 1000000)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

int main(int argc, char **argv)
{
	long mb = argc > 1 ? parse_mb(argv[1]) : 0;
	int hold = argc > 2 && strcmp(argv[2], "hold") == 0;
	long i;

	if (mb < 0) {
		fprintf(stderr, "usage: hog [MB [hold]]\n");
		return 2;
	}
	if (getenv("HOG_COMM"))
		prctl(PR_SET_NAME, getenv("HOG_COMM"), 0, 0, 0);
	printf("hog: pid=%d\n", (int)getpid());
	fflush(stdout);
	for (i = 0; mb == 0 || i < mb; i++) {
		char *p = malloc(CHUNK);

		if (!p) {
			perror("hog: malloc");
			return 1;
		}
		memset(p, 0x5a, CHUNK);
		if (i % 8 == 7) {
			printf("hog: MB=%ld\n", i + 1);
			fflush(stdout);
		}
	}
	while (hold)
		pause();
	return 0;
}
