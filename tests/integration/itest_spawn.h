/* SPDX-License-Identifier: Apache-2.0 */
/* Starting a victim for a live integration test: fork, exec, and wait
 * until it prints a line with the word it says when ready. */
#pragma once

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Starts argv (envkv: one extra NAME=value, or NULL) with its stdout on a
 * pipe, and reads until a whole line holding word has come (Python may
 * write its newline apart, and a pipe closed before it kills the victim
 * with EPIPE). Fails the test, printing what came, when none does. */
static inline pid_t itest_spawn_until(char *const argv[], const char *envkv,
				      const char *word)
{
	int p[2];
	pid_t pid;
	char buf[512];
	size_t n = 0;
	const char *w = NULL;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		if (envkv)
			putenv((char *)envkv);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (n < sizeof(buf) - 1) {
		ssize_t k = read(p[0], buf + n, sizeof(buf) - 1 - n);

		if (k <= 0)
			break;
		n += (size_t)k;
		buf[n] = '\0';
		if ((w = strstr(buf, word)) && strchr(w, '\n'))
			break;
	}
	close(p[0]);
	cr_assert(n && strstr(buf, word), "%s did not say '%s': '%.*s'",
		  argv[0], word, (int)n, buf);
	return pid;
}
