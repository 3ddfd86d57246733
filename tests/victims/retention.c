/* SPDX-License-Identifier: Apache-2.0 */
/* Victim: glibc allocator retention. N threads (one arena each) allocate
 * many small blocks and free most of them, keeping every Kth alive: the
 * freed memory stays in the arenas (RSS stays up) although little is in
 * use. Prints its own ground truth as one JSON line per phase:
 *   {"victim":"retention","pid":…,"phase":…,"threads":N,"arenas":A,
 *    "mallinfo2":{"arena":…,"hblkhd":…,"uordblks":…,"fordblks":…},
 *    "rss_kb":…}
 * arenas is counted from malloc_info() (<heap nr=…> elements, the main
 * arena included).
 *
 * usage: retention [--threads N] [--mb-per-thread M] [--block BYTES]
 *                  [--keep-every K] [--mode sleep|grow] [--rounds R]
 *                  [--interval-ms MS]
 *   sleep: one round, print, sleep forever (for pmap/arena tests).
 *   grow:  a round every interval, round r allocating r times as much
 *          (so the holes of the last round cannot absorb it), until
 *          killed or --rounds rounds are done. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int threads = 4, keep_every = 64, rounds = 0, interval_ms = 500;
static size_t mb_per_thread = 16, block = 256;
static pthread_barrier_t start_bar, done_bar;
static size_t scale = 1; /* grow: round r allocates r times as much */

/* Kept across rounds and only grown: a fresh array per round would be a
 * transient (mmap'd) charge of its own and make the kill come early. */
static __thread void **p;
static __thread size_t cap;

static void one_round(void)
{
	size_t n = (scale * mb_per_thread << 20) / block;

	if (n > cap) {
		void **np = realloc(p, n * sizeof(*p));

		if (!np)
			abort();
		p = np;
		cap = n;
	}

	for (size_t i = 0; i < n; i++) {
		p[i] = malloc(block);
		memset(p[i], 0x5a, block);
	}
	/* Keep every Kth block: the holes cannot be returned to the kernel. */
	for (size_t i = 0; i < n; i++)
		if (i % (size_t)keep_every != 0)
			free(p[i]);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_barrier_wait(&start_bar);
		one_round();
		pthread_barrier_wait(&done_bar);
	}
	return NULL;
}

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

static int count_arenas(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int n = 0;

	malloc_info(0, f);
	fclose(f);
	for (char *p = buf; (p = strstr(p, "<heap nr=")); p++)
		n++;
	free(buf);
	return n;
}

static void report(const char *phase)
{
	struct mallinfo2 mi = mallinfo2();

	printf("{\"victim\":\"retention\",\"pid\":%d,\"phase\":\"%s\","
	       "\"threads\":%d,\"arenas\":%d,\"mallinfo2\":{\"arena\":%zu,"
	       "\"hblkhd\":%zu,\"uordblks\":%zu,\"fordblks\":%zu,"
	       "\"keepcost\":%zu},\"rss_kb\":%ld}\n",
	       (int)getpid(), phase, threads, count_arenas(), mi.arena,
	       mi.hblkhd, mi.uordblks, mi.fordblks, mi.keepcost, rss_kb());
	fflush(stdout);
}

static void parse_args(int argc, char **argv, int *grow)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--threads"))
			threads = atoi(v);
		else if (!strcmp(k, "--mb-per-thread"))
			mb_per_thread = strtoul(v, NULL, 10);
		else if (!strcmp(k, "--block"))
			block = strtoul(v, NULL, 10);
		else if (!strcmp(k, "--keep-every"))
			keep_every = atoi(v);
		else if (!strcmp(k, "--rounds"))
			rounds = atoi(v);
		else if (!strcmp(k, "--interval-ms"))
			interval_ms = atoi(v);
		else if (!strcmp(k, "--mode"))
			*grow = !strcmp(v, "grow");
		else {
			fprintf(stderr, "retention: unknown option %s\n", k);
			exit(2);
		}
	}
	if (threads < 1 || keep_every < 1 || block < 16) {
		fprintf(stderr, "retention: bad arguments\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int grow = 0;

	parse_args(argc, argv, &grow);
	pthread_barrier_init(&start_bar, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&done_bar, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++) {
		pthread_t t;

		pthread_create(&t, NULL, worker, NULL);
	}
	for (int r = 1; !grow || rounds == 0 || r <= rounds; r++) {
		scale = (size_t)r;
		pthread_barrier_wait(&start_bar);
		pthread_barrier_wait(&done_bar);
		report(grow ? "grow" : "ready");
		if (!grow)
			break;
		usleep((useconds_t)interval_ms * 1000);
	}
	for (;;)
		pause();
}
