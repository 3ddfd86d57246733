/* SPDX-License-Identifier: Apache-2.0 */
/* Victim for ptcall tests: N threads allocate small blocks and free most of
 * them (glibc keeps the freed memory: retention), then every thread blocks.
 * The main thread blocks in read() on stdin and answers one byte commands
 * on stdout, one JSON line each, reporting the read's own result:
 *   m  its own mallinfo2 (taken right after read() returns)
 *   p  ping
 *   x  exit
 * Usage: ptcall_reader [THREADS [MB_PER_THREAD [KEEP_EVERY]]] */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t mb_per_thread = 16;
static size_t keep_every = 64;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg)
{
	size_t n = mb_per_thread * 1024 * 1024 / 512;
	void **blocks = calloc(n, sizeof(void *));

	(void)arg;
	for (size_t i = 0; i < n; i++) {
		blocks[i] = malloc(480);
		memset(blocks[i], 0x5a, 480);
	}
	/* keep a sprinkle so the heap cannot shrink from its top */
	for (size_t i = 0; i < n; i++)
		if (i % keep_every != 0)
			free(blocks[i]);
	pthread_mutex_lock(&lock);
	ready++;
	pthread_cond_broadcast(&cond);
	for (;;)
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

static void print_mallinfo(struct mallinfo2 mi, ssize_t n, int err)
{
	printf("{\"read\":%zd,\"errno\":%d,\"cmd\":\"m\",\"mallinfo2\":{"
	       "\"arena\":%zu,\"ordblks\":%zu,\"smblks\":%zu,\"hblks\":%zu,"
	       "\"hblkhd\":%zu,\"usmblks\":%zu,\"fsmblks\":%zu,"
	       "\"uordblks\":%zu,\"fordblks\":%zu,\"keepcost\":%zu}}\n",
	       n, err, mi.arena, mi.ordblks, mi.smblks, mi.hblks, mi.hblkhd,
	       mi.usmblks, mi.fsmblks, mi.uordblks, mi.fordblks, mi.keepcost);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t;

	if (argc > 2)
		mb_per_thread = (size_t)atoi(argv[2]);
	if (argc > 3)
		keep_every = (size_t)atoi(argv[3]);
	for (int i = 0; i < threads; i++)
		pthread_create(&t, NULL, worker, NULL);
	pthread_mutex_lock(&lock);
	while (ready < threads)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	printf("{\"ready\":true,\"pid\":%d,\"threads\":%d}\n", getpid(),
	       threads);
	fflush(stdout);
	for (;;) {
		char c = 0;
		ssize_t n = read(0, &c, 1);
		int err = n < 0 ? errno : 0;
		struct mallinfo2 mi = mallinfo2();

		if (n == 0 || c == 'x')
			return 0;
		if (c == 'm') {
			print_mallinfo(mi, n, err);
			continue;
		}
		printf("{\"read\":%zd,\"errno\":%d,\"cmd\":\"%c\"}\n", n, err,
		       n == 1 && c >= ' ' && c < 127 ? c : '?');
		fflush(stdout);
	}
}
