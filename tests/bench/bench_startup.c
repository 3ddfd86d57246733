/* SPDX-License-Identifier: Apache-2.0 */
/* bench_startup: what a program costs before it does anything, and what
 * the run modes' privilege drop costs once started.
 *   bench_startup spawn RUNS PROG [ARG...]
 *     runs PROG RUNS times (output to /dev/null): median and 90th
 *     percentile wall time from posix_spawn to wait4, and the median of
 *     the children's peak RSS (ru_maxrss); fails when a run fails.
 *   bench_startup privs RUNS
 *     in RUNS fresh children each, privs_enter() as a run mode calls it
 *     (every capability dropped, no_new_privs) without and with the
 *     seccomp allow-list: median and 90th percentile of the call (µs). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/privs.h"
#include "base/util.h"

extern char **environ;

#define MAX_RUNS 1000

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorts v). */
static double quantile(double *v, int n, double q)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(int)(q * (n - 1) + 0.5)];
}

/* One run of argv: its wall time (µs) and peak RSS (KiB), or -1. */
static int spawn_once(char **argv, double *ret_us, double *ret_kib)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	double t0 = now_us();
	pid_t pid;
	int st, r;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0 || wait4(pid, &st, 0, &ru) != pid)
		return -1;
	*ret_us = now_us() - t0;
	*ret_kib = (double)ru.ru_maxrss;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int bench_spawn(int runs, char **argv)
{
	static double us[MAX_RUNS], kib[MAX_RUNS];

	for (int i = 0; i < runs; i++)
		if (spawn_once(argv, &us[i], &kib[i]) < 0) {
			fprintf(stderr, "bench_startup: %s failed\n", argv[0]);
			return 1;
		}
	const char *name =
		strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	double med_ms = quantile(us, runs, 0.5) / 1000;
	double p90_ms = quantile(us, runs, 0.9) / 1000;
	double rss = quantile(kib, runs, 0.5);

	printf("%s", name);
	for (char **a = argv + 1; *a; a++)
		printf(" %s", *a);
	printf(": median %.2f ms, p90 %.2f ms, peak RSS %.0f KiB (median of "
	       "%d runs)\n",
	       med_ms, p90_ms, rss, runs);
	/* for scripts/bench.sh's goals (a start: no arguments but one) */
	if (argv[1] && !argv[2])
		printf("metric: startup.%s.wall_ms %.2f\n"
		       "metric: startup.%s.rss_kib %.0f\n",
		       name, med_ms, name, rss);
	return 0;
}

/* privs_enter() in a fresh child: the call's µs through a pipe, or -1. */
static double privs_once(bool no_seccomp)
{
	static const struct privs_spec spec = {.caps = 0, .seccomp = true};
	double us = -1;
	int p[2], st;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		double t0 = now_us(), d;

		d = privs_enter(&spec, no_seccomp, NULL) < 0 ? -1
							     : now_us() - t0;
		_exit(write(p[1], &d, sizeof(d)) == sizeof(d) ? 0 : 1);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &us, sizeof(us)) != sizeof(us))
		us = -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	return us;
}

static int bench_privs(int runs)
{
	static double us[MAX_RUNS];

	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < runs; i++) {
			us[i] = privs_once(s == 0);
			if (us[i] < 0) {
				fprintf(stderr, "bench_startup: privs_enter "
						"failed\n");
				return 1;
			}
		}
		printf("privs_enter %s: median %.0f us, p90 %.0f us (%d "
		       "children)\n",
		       s == 0 ? "capabilities + no_new_privs"
			      : "capabilities + no_new_privs + seccomp",
		       quantile(us, runs, 0.5), quantile(us, runs, 0.9), runs);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int runs;

	if (argc < 3 || parse_int(argv[2], &runs) < 0 || runs < 1 ||
	    runs > MAX_RUNS || (streq(argv[1], "spawn") && argc < 4)) {
		fprintf(stderr, "usage: bench_startup spawn RUNS PROG [ARG...]"
				" | privs RUNS\n");
		return 2;
	}
	if (streq(argv[1], "spawn"))
		return bench_spawn(runs, argv + 3);
	if (streq(argv[1], "privs"))
		return bench_privs(runs);
	fprintf(stderr, "bench_startup: unknown mode '%s'\n", argv[1]);
	return 2;
}
