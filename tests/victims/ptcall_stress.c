/* SPDX-License-Identifier: Apache-2.0 */
/* Victim for ptcall tests: a busy multi-threaded allocator. Workers malloc
 * and free random sizes in bursts with SIGUSR1 blocked; the main thread
 * takes every SIGUSR1 (counted) and blocks in read() on stdin.
 * The counters live in a shared file so the test reads them at any time:
 *   u64[0] SIGUSR1 received, u64[1] worker bursts, u64[2] read() errors.
 * Usage: ptcall_stress COUNTER_FILE [WORKERS] */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t *counters;

static void on_usr1(int sig)
{
	(void)sig;
	__atomic_add_fetch(&counters[0], 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void *blocks[64];
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		struct timespec ts = { 0, 200000 };

		for (int i = 0; i < 64; i++) {
			size_t sz = 16 + (size_t)(rand_r(&seed) % 4096);

			if (rand_r(&seed) % 16 == 0)
				sz *= 64;
			blocks[i] = malloc(sz);
			memset(blocks[i], i, 16);
		}
		for (int i = 0; i < 64; i++)
			free(blocks[i]);
		__atomic_add_fetch(&counters[1], 1, __ATOMIC_RELAXED);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int workers = argc > 2 ? atoi(argv[2]) : 3;
	struct sigaction sa;
	pthread_t t;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return 1;
	counters = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counters == MAP_FAILED)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < workers; i++)
		pthread_create(&t, NULL, worker, (void *)(uintptr_t)(i + 1));
	printf("{\"ready\":true,\"pid\":%d}\n", getpid());
	fflush(stdout);
	for (;;) {
		char c;
		ssize_t n = read(0, &c, 1);

		if (n < 0) {
			__atomic_add_fetch(&counters[2], 1, __ATOMIC_SEQ_CST);
			continue;
		}
		if (n == 0 || c == 'x')
			return 0;
		printf("{\"read\":%zd,\"cmd\":\"%c\"}\n", n, c);
		fflush(stdout);
	}
}
