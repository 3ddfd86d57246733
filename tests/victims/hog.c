/* SPDX-License-Identifier: Apache-2.0 */
/* hog: the simplest OOM victim. Allocates and touches memory until the
 * kernel kills it. Prints its ground truth as JSON lines on stdout.
 *
 *   hog [--step-mb N] [--delay-ms N] [--name COMM] [--child] [--max-mb N]
 *
 * --child: the parent forks one child that does the allocating (the
 * victim is then not the main process); the parent waits and reports how
 * the child ended. --name sets the comm (prctl), for hostile-name tests.
 * --max-mb: stop growing at N MiB and sleep (a steady state).
 * --idle-ms: hold --base-mb MiB and idle that long before growing (a
 * spike after a quiet period). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long arg_long(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "hog: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void grow(long step_mb, long delay_ms, long max_mb)
{
	long total = 0;
	struct timespec ts = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };

	for (;;) {
		if (max_mb && total >= max_mb) {
			printf("{\"event\":\"steady\",\"pid\":%d,\"mb\":%ld}\n",
			       getpid(), total);
			fflush(stdout);
			pause();
		}
		char *p = malloc((size_t)step_mb << 20);

		if (!p) {
			printf("{\"event\":\"enomem\",\"mb\":%ld}\n", total);
			return;
		}
		memset(p, 0x5a, (size_t)step_mb << 20);
		total += step_mb;
		printf("{\"event\":\"grow\",\"pid\":%d,\"mb\":%ld}\n", getpid(),
		       total);
		fflush(stdout);
		if (delay_ms)
			nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	long step = 4, delay = 0, max_mb = 0, idle = 0, base = 0;
	const char *name = NULL;
	int child = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--step-mb") && i + 1 < argc)
			step = arg_long(argv[++i]);
		else if (!strcmp(argv[i], "--delay-ms") && i + 1 < argc)
			delay = arg_long(argv[++i]);
		else if (!strcmp(argv[i], "--max-mb") && i + 1 < argc)
			max_mb = arg_long(argv[++i]);
		else if (!strcmp(argv[i], "--idle-ms") && i + 1 < argc)
			idle = arg_long(argv[++i]);
		else if (!strcmp(argv[i], "--base-mb") && i + 1 < argc)
			base = arg_long(argv[++i]);
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--child"))
			child = 1;
		else {
			fprintf(stderr, "hog: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (step <= 0)
		step = 1;
	printf("{\"event\":\"start\",\"pid\":%d}\n", getpid());
	fflush(stdout);
	if (child) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			if (name)
				prctl(PR_SET_NAME, name);
			printf("{\"event\":\"child\",\"pid\":%d}\n", getpid());
			fflush(stdout);
			grow(step, delay, max_mb);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		printf("{\"event\":\"child-ended\",\"pid\":%d,\"signal\":%d}\n",
		       pid, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		return 0;
	}
	if (name)
		prctl(PR_SET_NAME, name);
	if (base) {
		char *p = malloc((size_t)base << 20);

		if (p)
			memset(p, 0x5a, (size_t)base << 20);
	}
	if (idle) {
		struct timespec ts = {idle / 1000, (idle % 1000) * 1000000L};

		printf("{\"event\":\"idle\",\"pid\":%d,\"mb\":%ld}\n",
		       getpid(), base);
		fflush(stdout);
		nanosleep(&ts, NULL);
	}
	grow(step, delay, max_mb);
	return 1;
}
