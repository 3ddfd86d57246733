/* SPDX-License-Identifier: Apache-2.0 */
/* A report's task dump cut to some of its tasks, line by line in the
 * report's own text, so that what is left parses as the same report. */
#include <errno.h>
#include <string.h>

#include "base/strbuf.h"
#include "kernel/kmsg.h"

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Where a raw line's message starts: after a kmsg record's
 * "prio,seq,usec,flags;" or a dmesg "[sec.usec] " stamp, else at 0. */
static size_t text_start(const char *l, size_t n)
{
	size_t i = 0;

	if (n && digit(l[0])) {
		while (i < n && (digit(l[i]) || l[i] == ',' || l[i] == '-' ||
				 l[i] == '+' || (l[i] >= 'a' && l[i] <= 'z') ||
				 (l[i] >= 'A' && l[i] <= 'Z')))
			i++;
		return i < n && l[i] == ';' ? i + 1 : 0;
	}
	if (n && l[0] == '[') {
		const char *end = memchr(l, ']', n);

		if (end && memchr(l, '.', (size_t)(end - l))) {
			i = (size_t)(end - l) + 1;
			return i < n && l[i] == ' ' ? i + 1 : i;
		}
	}
	return 0;
}

/* The pid of a task line "[ 108]     0   108 ...", or -1. */
static int task_pid(const char *l, size_t n)
{
	size_t i = text_start(l, n);
	long pid = 0;
	size_t d = 0;

	if (i >= n || l[i++] != '[')
		return -1;
	while (i < n && l[i] == ' ')
		i++;
	for (; i < n && digit(l[i]) && d < 10; i++, d++)
		pid = pid * 10 + (l[i] - '0');
	if (!d || i >= n || l[i++] != ']' || i >= n || l[i] != ' ')
		return -1;
	while (i < n && l[i] == ' ')
		i++;
	return i < n && digit(l[i]) && pid <= 0x7fffffff ? (int)pid : -1;
}

static uint64_t task_rss(const struct oom_report *r, int pid)
{
	for (size_t i = 0; i < r->n_tasks; i++)
		if (r->tasks[i].pid == pid)
			return r->tasks[i].rss;
	return 0;
}

int oom_report_cut_tasks(const struct oom_report *r,
			 bool (*keep)(int pid, void *arg), void *arg,
			 struct strbuf *ret_raw, struct oom_tasks_cut *ret)
{
	const char *p = r->raw.buf, *end = r->raw.buf + r->raw.len;
	struct oom_tasks_cut cut = {0};
	int q = 0;

	while (q >= 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int pid = task_pid(p, n);

		if (pid >= 0 && !keep(pid, arg)) {
			cut.left_out++;
			cut.left_out_rss += task_rss(r, pid);
		} else {
			if (pid >= 0)
				cut.kept++;
			q = strbuf_add(ret_raw, p, nl ? n + 1 : n);
		}
		p += nl ? n + 1 : n;
	}
	*ret = cut;
	return q < 0 ? q : 0;
}
